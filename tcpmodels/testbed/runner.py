"""Run a whole testbed experiment from a TOML config: topology, traffic phases, captures, run record.

Config (all quantities carry units in their keys; see ``examples/two_path.toml``)::

    [run]        name, seed, out_dir
    [topology]   kind = "single_link" | "two_path" | "dumbbell" | "fat_tree", plus its parameters
    [capture]    points = ["node:interface", ...], snaplen_bytes
    [[traffic]]  kind = "bulk" | "probe" | "poisson"; from, to, dst, cc, mptcp, direction, phase, ...

Traffic items with the same ``phase`` run concurrently; phases run in order
(default: each item its own phase). The result is a directory
``<out_dir>/<name>-<run id>/`` holding ``run.json`` (the run record),
``flows.jsonl`` (one record per transfer, with the sender's TCP_INFO samples)
and the captures, each with a copy of the run record beside it (``X.pcap.json``).
"""

from __future__ import annotations

import json
import sys
import time
import tomllib
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from tcpmodels.testbed import workload as wl
from tcpmodels.testbed._system import require_privileges, tool_versions
from tcpmodels.testbed.capture import start_capture
from tcpmodels.testbed.netns import Testbed
from tcpmodels.testbed.topologies import PathSpec, dumbbell, fat_tree, single_link, two_path
from tcpmodels.testbed.topology import Topology

__all__ = ["RunResult", "load_config", "topology_from_config", "run_config"]

_MBIT = 1e6
_MS = 1e-3
_PORT = 5201


@dataclass
class RunResult:
    """What :func:`run_config` produced."""

    run_dir: Path
    record: dict
    capture_paths: list[Path] = field(default_factory=list)
    flows: list[dict] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"run_dir": str(self.run_dir), "capture_paths": [str(p) for p in self.capture_paths],
                "record": self.record}


def load_config(path: str | Path) -> dict:
    """Read a TOML config; errors name the file and the problem."""
    path = Path(path)
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError as exc:
        raise ValueError(f"config file not found: {path}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"config file {path} is not valid TOML: {exc}") from exc


def _known(section: str, table: dict, allowed: set[str]) -> None:
    unknown = set(table) - allowed
    if unknown:
        raise ValueError(f"[{section}]: unknown key(s) {sorted(unknown)}; allowed: {sorted(allowed)}")


def _path_spec(i: int, p: dict) -> PathSpec:
    _known(f"topology.paths[{i}]", p, {"rate_mbps", "rtt_ms", "buffer_bytes", "buffer_packets", "loss", "qdisc"})
    return PathSpec(rate_bps=p["rate_mbps"] * _MBIT if p.get("rate_mbps") is not None else None,
                    rtt_s=p.get("rtt_ms", 0.0) * _MS, buffer_bytes=p.get("buffer_bytes"),
                    buffer_packets=p.get("buffer_packets"), loss_rate=p.get("loss", 0.0), qdisc=p.get("qdisc", "tbf"))


def topology_from_config(cfg: dict) -> Topology:
    """Build the :class:`Topology` described by the ``[topology]`` table."""
    kind = cfg.get("kind")
    if kind in ("single_link", "two_path"):
        _known("topology", cfg, {"kind", "paths"})
        paths = [_path_spec(i, p) for i, p in enumerate(cfg.get("paths", []))]
        if kind == "single_link":
            if len(paths) != 1:
                raise ValueError(f"[topology] single_link needs exactly one [[topology.paths]]; got {len(paths)}")
            return single_link(paths[0])
        if len(paths) < 2:
            raise ValueError(f"[topology] two_path needs at least two [[topology.paths]]; got {len(paths)}")
        return two_path(paths)
    if kind == "dumbbell":
        _known("topology", cfg, {"kind", "access_rtts_ms", "bottleneck_rate_mbps", "bottleneck_buffer_bytes",
                                 "bottleneck_buffer_packets", "bottleneck_rtt_ms", "access_rate_mbps", "qdisc"})
        return dumbbell(access_rtts_s=[x * _MS for x in cfg["access_rtts_ms"]],
                        bottleneck_rate_bps=cfg["bottleneck_rate_mbps"] * _MBIT,
                        bottleneck_buffer_bytes=cfg.get("bottleneck_buffer_bytes"),
                        bottleneck_buffer_packets=cfg.get("bottleneck_buffer_packets"),
                        bottleneck_rtt_s=cfg.get("bottleneck_rtt_ms", 0.0) * _MS,
                        access_rate_bps=cfg["access_rate_mbps"] * _MBIT if cfg.get("access_rate_mbps") else None,
                        qdisc=cfg.get("qdisc", "tbf"))
    if kind == "fat_tree":
        _known("topology", cfg, {"kind", "host_rate_mbps", "edge_agg_rate_mbps", "agg_core_rate_mbps",
                                 "buffer_bytes", "link_delay_ms"})
        return fat_tree(host_rate_bps=cfg.get("host_rate_mbps", 100) * _MBIT,
                        edge_agg_rate_bps=cfg.get("edge_agg_rate_mbps", 200) * _MBIT,
                        agg_core_rate_bps=cfg.get("agg_core_rate_mbps", 400) * _MBIT,
                        buffer_bytes=cfg.get("buffer_bytes", 100_000), link_delay_s=cfg.get("link_delay_ms", 0.0) * _MS)
    raise ValueError(f"[topology] kind must be 'single_link', 'two_path', 'dumbbell' or 'fat_tree'; got {kind!r}")


def _default_endpoints(topo: Topology) -> tuple[str | None, str | None]:
    meta = topo.meta
    if "client" in meta:
        return meta["client"], meta["server"]
    if "senders" in meta:  # dumbbell: the receiver downloads from sender 0 unless told otherwise
        return meta["receiver"], meta["senders"][0]
    return None, None


def _node_addr(topo: Topology, node: str) -> str:
    meta = topo.meta
    if node == meta.get("server"):
        return meta["server_addr"]
    if "host_addrs" in meta and node in meta["host_addrs"]:
        return meta["host_addrs"][node][0]
    if "senders" in meta and node in meta["senders"]:
        return meta["sender_addrs"][meta["senders"].index(node)]
    if node == meta.get("receiver"):
        return meta["receiver_addr"]
    for lk in topo.links:
        if node in (lk.a, lk.b) and lk.addrs(node):
            return lk.addrs(node)[0].split("/")[0]
    raise ValueError(f"node {node!r} has no address")


_TRAFFIC_KEYS = {"kind", "from", "to", "dst", "cc", "mptcp", "direction", "phase", "size_bytes", "duration_s",
                 "sample_interval_ms", "parallel", "paths", "gap_s", "arrival_rate_per_s", "size"}


def _expand_traffic(items: list[dict], topo: Topology, rng: np.random.Generator) -> list[tuple[int, str, str, list]]:
    """Turn ``[[traffic]]`` items into (phase, client node, server node, flows)."""
    out, next_id = [], 1
    default_client, default_server = _default_endpoints(topo)
    for i, item in enumerate(items):
        _known(f"traffic[{i}]", item, _TRAFFIC_KEYS)
        kind = item.get("kind")
        client = item.get("from", default_client)
        server = item.get("to", default_server)
        if client is None or server is None:
            raise ValueError(f"traffic[{i}]: give 'from' and 'to' nodes for topology {topo.name}")
        for node in (client, server):
            topo.node(node)
        dst = item.get("dst") or _node_addr(topo, server)
        common = dict(cc=item.get("cc", "cubic"), direction=item.get("direction", "download"))
        phase = int(item.get("phase", i))
        if kind == "bulk":
            flows = []
            for _ in range(int(item.get("parallel", 1))):
                flows.append(wl.bulk_flow(flow_id=next_id, dst=dst, port=_PORT, size_bytes=item.get("size_bytes"),
                                          duration_s=item.get("duration_s"), mptcp=bool(item.get("mptcp", False)),
                                          sample_interval_s=item.get("sample_interval_ms", 100) * _MS, **common))
                next_id += 1
        elif kind == "probe":
            meta = topo.meta
            if "client_addrs" not in meta:
                raise ValueError(f"traffic[{i}]: probes per path need a single_link or two_path topology")
            pairs = list(zip(meta["client_addrs"], meta["server_addrs"]))
            which = item.get("paths", "each")
            chosen = range(len(pairs)) if which == "each" else [int(x) for x in np.atleast_1d(which)]
            for p in chosen:
                if not 0 <= p < len(pairs):
                    raise ValueError(f"traffic[{i}]: path {p} does not exist (0..{len(pairs) - 1})")
            flows = wl.probe_flows(first_id=next_id, size_bytes=int(item["size_bytes"]),
                                   paths=[pairs[p] for p in chosen], port=_PORT, cc=common["cc"],
                                   gap_s=item.get("gap_s", 0.5), direction=common["direction"])
            for f, p in zip(flows, chosen):
                f["path"] = p
            next_id += len(flows)
        elif kind == "poisson":
            flows = wl.poisson_flows(rng=rng, first_id=next_id, arrival_rate_per_s=float(item["arrival_rate_per_s"]),
                                     duration_s=float(item["duration_s"]), size_dist=dict(item["size"]), dst=dst,
                                     port=_PORT, mptcp=bool(item.get("mptcp", False)), **common)
            next_id += len(flows)
        else:
            raise ValueError(f"traffic[{i}]: kind must be 'bulk', 'probe' or 'poisson'; got {kind!r}")
        out.append((phase, client, server, flows))
    return out


def _expected_s(flows: list[dict]) -> float:
    return max((f.get("start_s", 0) + (f.get("duration_s") or 0) for f in flows), default=0.0)


def run_config(config: dict | str | Path, *, out_dir: str | Path | None = None, progress: bool = True,
               run_id: str | None = None) -> RunResult:
    """Run the experiment described by ``config`` (a dict or a TOML path) and return its record.

    Raises
    ------
    PrivilegeError
        Without root, before anything is created.
    ValueError
        A config error, naming the table and key.
    """
    config_path = None
    if not isinstance(config, dict):
        config_path = str(Path(config).resolve())
        config = load_config(config)
    _known("top level", config, {"run", "topology", "capture", "traffic"})
    run_cfg = dict(config.get("run", {}))
    _known("run", run_cfg, {"name", "seed", "out_dir"})
    name = run_cfg.get("name", "run")
    seed = int(run_cfg.get("seed", 0))
    topo = topology_from_config(dict(config.get("topology", {})))
    rng = np.random.default_rng(seed)
    phases_raw = _expand_traffic(list(config.get("traffic", [])), topo, rng)
    cap_cfg = dict(config.get("capture", {}))
    _known("capture", cap_cfg, {"points", "snaplen_bytes"})
    points = []
    for point in cap_cfg.get("points", []):
        node, _, iface = point.partition(":")
        if not iface:
            raise ValueError(f"[capture] points must be 'node:interface'; got {point!r}")
        topo.node(node)
        points.append((node, iface))
    snaplen = int(cap_cfg.get("snaplen_bytes", 128))
    require_privileges()

    tb = Testbed(topo, run_id=run_id, seed=seed)
    base = Path(out_dir or run_cfg.get("out_dir", "runs"))
    run_dir = (base / f"{name}-{tb.run_id}").resolve()
    run_dir.mkdir(parents=True, exist_ok=True)
    record = {
        "run_id": tb.run_id, "name": name, "seed": seed, "config": config, "config_path": config_path,
        "topology": topo.to_dict(), "host": tool_versions(),
        "started_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
    phases: dict[int, list] = {}
    for phase, client, server, flows in phases_raw:
        phases.setdefault(phase, []).append((client, server, flows))
    all_records: list[dict] = []
    captures = []
    bar = None
    with tb:
        record["sysctls"] = {k: tb.exec(topo.nodes[0].name, ["sysctl", "-n", k]).stdout.strip()
                             for k in ("net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem", "net.ipv4.tcp_congestion_control",
                                       "net.mptcp.enabled")}
        servers = {}
        for _, _, server, flows in phases_raw:
            mptcp = any(f.get("mptcp") for f in flows)
            if server not in servers or (mptcp and not servers[server].mptcp):
                if server in servers:
                    servers[server].stop()
                servers[server] = wl.start_server(tb, server, port=_PORT, mptcp=mptcp)
        for node, iface in points:
            captures.append(start_capture(tb, node, iface, run_dir / f"{node}-{iface}.pcap", snaplen_bytes=snaplen))
        record["counters_before"] = tb.counters()
        if progress:
            from tqdm import tqdm
            total = sum(max(_expected_s(fl) for _, _, fl in group) for group in phases.values())
            bar = tqdm(total=round(total, 1), desc=f"testbed {name}", file=sys.stderr,
                       bar_format="{l_bar}{bar}| {n:.1f}/{total:.1f} s of traffic [{elapsed}{postfix}]")
        t_run = time.monotonic()
        for phase in sorted(phases):
            group = phases[phase]
            procs = [wl.launch_flows(tb, client, flows) for client, _, flows in group]
            timeout = 120 + 3 * max(_expected_s(fl) for _, _, fl in group)
            for proc in procs:
                all_records += wl.collect_flows(proc, timeout)
            if bar is not None:
                bar.set_postfix(phase=phase, flows=len(all_records), refresh=False)
                bar.update(round(max(_expected_s(fl) for _, _, fl in group), 1))
        record["traffic_wall_s"] = time.monotonic() - t_run
        time.sleep(0.2)  # let the last ACKs reach the capture
        record["counters_after"] = tb.counters()
        record["captures"] = [c.stop() for c in captures]
        server_records = []
        for srv in servers.values():
            server_records += srv.stop()
    if bar is not None:
        bar.close()
    record["delay_elements"] = tb.delay_stats
    record["finished_utc"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
    by_id = {r.get("flow_id"): r for r in server_records if "flow_id" in r}
    for rec in all_records:
        srec = by_id.get(rec.get("flow_id"), {})
        if "samples" in srec:
            rec["samples"] = srec["samples"]
    all_records.sort(key=lambda r: r.get("flow_id", 0))
    record["flows"] = {"file": "flows.jsonl", "count": len(all_records),
                       "errors": sum(1 for r in all_records if r.get("error"))}
    with (run_dir / "flows.jsonl").open("w") as fh:
        for rec in all_records:
            fh.write(json.dumps(rec) + "\n")
    (run_dir / "run.json").write_text(json.dumps(record, indent=1, default=str))
    capture_paths = []
    for cap in record["captures"]:
        path = Path(cap["path"])
        Path(str(path) + ".json").write_text(json.dumps({**record, "capture": cap}, indent=1, default=str))
        capture_paths.append(path)
    return RunResult(run_dir=run_dir, record=record, capture_paths=capture_paths, flows=all_records)
