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
from typing import Any

import numpy as np

from tcpmodels.testbed import workload as wl
from tcpmodels.testbed._system import require_privileges, tool_versions
from tcpmodels.testbed.capture import start_capture
from tcpmodels.testbed.config_schema import ConfigError, Table, confined_run_dir, safe_run_name
from tcpmodels.testbed.netns import Testbed
from tcpmodels.testbed.topologies import PathSpec, dumbbell, fat_tree, single_link, two_path
from tcpmodels.testbed.topology import QDISCS, Topology

__all__ = ["RunResult", "load_config", "topology_from_config", "capture_points", "run_config"]

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
        """The run directory, capture paths (as strings) and run record; the flow records are left out.

        Returns
        -------
        dict
            ``run_dir``, ``capture_paths`` and ``record``.
        """
        return {"run_dir": str(self.run_dir), "capture_paths": [str(p) for p in self.capture_paths],
                "record": self.record}


def load_config(path: str | Path) -> dict:
    """Read a TOML config; errors name the file and the problem.

    Parameters
    ----------
    path : str or Path
        The TOML file.

    Returns
    -------
    dict
        The parsed tables (not validated; :func:`run_config` does that).

    Raises
    ------
    ValueError
        If the file does not exist or is not valid TOML.
    """
    path = Path(path)
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError as exc:
        raise ValueError(f"config file not found: {path}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"config file {path} is not valid TOML: {exc}") from exc


def _path_spec(i: int, p: dict) -> PathSpec:
    t = Table(f"topology.paths[{i}]", p, {"rate_mbps", "rtt_ms", "buffer_bytes", "buffer_packets", "loss", "qdisc"})
    rate = t.number("rate_mbps", unit="Mbit/s", default=None, low=0.001, high=1e5)
    return PathSpec(rate_bps=rate * _MBIT if rate is not None else None,
                    rtt_s=t.number("rtt_ms", unit="ms", default=0.0, low=0.0, high=20_000.0) * _MS,
                    buffer_bytes=t.integer("buffer_bytes", unit="bytes", default=None, low=1514),
                    buffer_packets=t.integer("buffer_packets", unit="packets", default=None, low=1),
                    loss_rate=t.number("loss", unit="-", default=0.0, low=0.0, high=0.999),
                    qdisc=t.string("qdisc", default="tbf", choices=QDISCS))


def topology_from_config(cfg: dict) -> Topology:
    """Build the :class:`Topology` described by the ``[topology]`` table.

    Parameters
    ----------
    cfg : dict
        The ``[topology]`` table: ``kind`` (``single_link``, ``two_path``, ``dumbbell`` or
        ``fat_tree``) and that kind's keys, in the config's units (``rate_mbps`` [Mbit/s],
        ``rtt_ms`` [ms], ...).

    Returns
    -------
    Topology
        Built by :mod:`tcpmodels.testbed.topologies`, quantities converted to bit/s and s.

    Raises
    ------
    ConfigError
        (a ``ValueError``) naming the table, the key, the value and what was expected.
    """
    kind = Table("topology", cfg, set(cfg) if isinstance(cfg, dict) else ()).string(
        "kind", choices=("single_link", "two_path", "dumbbell", "fat_tree"), default=None)
    if kind in ("single_link", "two_path"):
        t = Table("topology", cfg, {"kind", "paths"})
        paths = [_path_spec(i, p) for i, p in enumerate(t.tables("paths"))]
        if kind == "single_link":
            if len(paths) != 1:
                raise ConfigError(f"[topology] single_link needs exactly one [[topology.paths]]; got {len(paths)}")
            return single_link(paths[0])
        if not 2 <= len(paths) <= 8:
            raise ConfigError(f"[topology] two_path needs 2 to 8 [[topology.paths]]; got {len(paths)}")
        return two_path(paths)
    if kind == "dumbbell":
        t = Table("topology", cfg, {"kind", "access_rtts_ms", "bottleneck_rate_mbps", "bottleneck_buffer_bytes",
                                    "bottleneck_buffer_packets", "bottleneck_rtt_ms", "access_rate_mbps", "qdisc"})
        access = t.number("access_rate_mbps", unit="Mbit/s", default=None, low=0.001, high=1e5)
        return dumbbell(access_rtts_s=[x * _MS for x in t.numbers("access_rtts_ms", unit="ms", low=0.0)],
                        bottleneck_rate_bps=t.number("bottleneck_rate_mbps", unit="Mbit/s", low=0.001,
                                                     high=1e5) * _MBIT,
                        bottleneck_buffer_bytes=t.integer("bottleneck_buffer_bytes", unit="bytes", default=None,
                                                          low=1514),
                        bottleneck_buffer_packets=t.integer("bottleneck_buffer_packets", unit="packets",
                                                            default=None, low=1),
                        bottleneck_rtt_s=t.number("bottleneck_rtt_ms", unit="ms", default=0.0, low=0.0) * _MS,
                        access_rate_bps=access * _MBIT if access else None,
                        qdisc=t.string("qdisc", default="tbf", choices=QDISCS))
    if kind == "fat_tree":
        t = Table("topology", cfg, {"kind", "host_rate_mbps", "edge_agg_rate_mbps", "agg_core_rate_mbps",
                                    "buffer_bytes", "link_delay_ms"})
        rate = {k: t.number(k, unit="Mbit/s", default=d, low=0.001, high=1e5) * _MBIT
                for k, d in (("host_rate_mbps", 100), ("edge_agg_rate_mbps", 200), ("agg_core_rate_mbps", 400))}
        return fat_tree(host_rate_bps=rate["host_rate_mbps"], edge_agg_rate_bps=rate["edge_agg_rate_mbps"],
                        agg_core_rate_bps=rate["agg_core_rate_mbps"],
                        buffer_bytes=t.integer("buffer_bytes", unit="bytes", default=100_000, low=1514),
                        link_delay_s=t.number("link_delay_ms", unit="ms", default=0.0, low=0.0) * _MS)
    raise ConfigError(f"[topology] kind must be 'single_link', 'two_path', 'dumbbell' or 'fat_tree'; got {kind!r}")


def _node(topo: Topology, section: str, key: str, name) -> str:
    names = [n.name for n in topo.nodes]
    if not isinstance(name, str) or name not in names:
        raise ConfigError(f"[{section}] {key} must name a node of topology {topo.name} "
                          f"({', '.join(names[:12])}{', ...' if len(names) > 12 else ''}); got {name!r}")
    return name


def capture_points(points: Any, topo: Topology) -> list[tuple[str, str]]:
    """``["node:interface", ...]`` -> (node, interface) pairs, each checked against the topology.

    Parameters
    ----------
    points : Any
        ``[capture] points`` as read from the config; must be a list of ``"node:interface"``
        strings (interfaces are named after their links).
    topo : Topology
        The run's topology.

    Returns
    -------
    list of tuple of (str, str)
        ``(node, interface)`` per point, in order.

    Raises
    ------
    ConfigError
        If ``points`` is not a list, a point is not ``"node:interface"``, or names a node
        or interface the topology lacks.
    """
    if not isinstance(points, list):
        raise ConfigError(f"[capture] points must be a list of 'node:interface' strings; got {points!r}")
    out = []
    for i, point in enumerate(points):
        if not isinstance(point, str) or ":" not in point:
            raise ConfigError(f"[capture] points[{i}] must be 'node:interface'; got {point!r}")
        node, _, iface = point.partition(":")
        _node(topo, "capture", f"points[{i}] node", node)
        here = sorted(lk.name for lk in topo.links if node in (lk.a, lk.b))
        if iface not in here:
            raise ConfigError(f"[capture] points[{i}] {point!r}: node {node} has no interface {iface!r}; "
                              f"its interfaces: {here}")
        out.append((node, iface))
    return out


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
        sec = f"traffic[{i}]"
        t = Table(sec, item, _TRAFFIC_KEYS)
        kind = t.string("kind", choices=("bulk", "probe", "poisson"))
        client = item.get("from", default_client)
        server = item.get("to", default_server)
        if client is None or server is None:
            raise ConfigError(f"[{sec}] give 'from' and 'to' nodes for topology {topo.name}")
        _node(topo, sec, "from", client)
        _node(topo, sec, "to", server)
        dst = t.string("dst", default=None) or _node_addr(topo, server)
        common = dict(cc=t.string("cc", default="cubic"),
                      direction=t.string("direction", default="download", choices=("download", "upload")))
        phase = t.integer("phase", unit="-", default=i, low=0)
        mptcp = t.boolean("mptcp", default=False)
        if kind == "bulk":
            flows = []
            size = t.integer("size_bytes", unit="bytes", default=None, low=1)
            duration = t.number("duration_s", unit="s", default=None, low=0.0, low_open=True, high=86_400)
            interval = t.number("sample_interval_ms", unit="ms", default=100, low=1.0)
            for _ in range(t.integer("parallel", unit="flows", default=1, low=1, high=1000)):
                flows.append(wl.bulk_flow(flow_id=next_id, dst=dst, port=_PORT, size_bytes=size,
                                          duration_s=duration, mptcp=mptcp,
                                          sample_interval_s=interval * _MS, **common))
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
            flows = wl.probe_flows(first_id=next_id, size_bytes=t.integer("size_bytes", unit="bytes", low=1),
                                   paths=[pairs[p] for p in chosen], port=_PORT, cc=common["cc"],
                                   gap_s=t.number("gap_s", unit="s", default=0.5, low=0.0),
                                   direction=common["direction"])
            for f, p in zip(flows, chosen):
                f["path"] = p
            next_id += len(flows)
        elif kind == "poisson":
            if not isinstance(item.get("size"), dict):
                raise ConfigError(f"[{sec}] size must be a table describing the flow size distribution; "
                                  f"got {item.get('size')!r}")
            flows = wl.poisson_flows(rng=rng, first_id=next_id,
                                     arrival_rate_per_s=t.number("arrival_rate_per_s", unit="1/s", low=0.0,
                                                                 low_open=True, high=1e5),
                                     duration_s=t.number("duration_s", unit="s", low=0.0, low_open=True,
                                                         high=86_400),
                                     size_dist=dict(item["size"]), dst=dst, port=_PORT, mptcp=mptcp, **common)
            next_id += len(flows)
        out.append((phase, client, server, flows))
    return out


def _expected_s(flows: list[dict]) -> float:
    return max((f.get("start_s", 0) + (f.get("duration_s") or 0) for f in flows), default=0.0)


def run_config(config: dict | str | Path, *, out_dir: str | Path | None = None, progress: bool = True,
               run_id: str | None = None) -> RunResult:
    """Run the experiment described by ``config`` (a dict or a TOML path) and return its record.

    Parameters
    ----------
    config : dict or str or Path
        The config tables (``[run]``, ``[topology]``, ``[capture]``, ``[[traffic]]``), or a
        TOML file holding them.
    out_dir : str or Path, optional
        Folder of the run's directory ``<name>-<run id>``; default ``[run] out_dir``, else ``./runs``.
    progress : bool
        Show a progress bar (seconds of traffic) on stderr.
    run_id : str, optional
        Testbed run id (6 hex digits); random if omitted.

    Returns
    -------
    RunResult
        The run directory (holding ``run.json``, ``flows.jsonl`` and one pcap with a
        ``.json`` sidecar per capture point), the record, the capture paths and the flow
        records (sorted by flow id, with the server's TCP_INFO samples of downloads).

    Raises
    ------
    PrivilegeError
        Without root, before anything is created.
    ConfigError
        (a ``ValueError``) a config error, naming the table, the key, the value and what was expected;
        raised before any namespace exists.
    TestbedError
        If building the testbed, a traffic process or a capture fails.
    """
    config_path = None
    if not isinstance(config, dict):
        config_path = str(Path(config).resolve())
        config = load_config(config)
    Table("top level", config, {"run", "topology", "capture", "traffic"})
    run_cfg = Table("run", config.get("run", {}), {"name", "seed", "out_dir"})
    name = safe_run_name(run_cfg.string("name", default="run"))
    seed = run_cfg.integer("seed", unit="-", default=0, low=0, high=2**63 - 1)
    base = Path(out_dir or run_cfg.string("out_dir", default="runs"))
    topo = topology_from_config(config.get("topology", {}))
    rng = np.random.default_rng(seed)
    traffic = config.get("traffic", [])
    if not isinstance(traffic, list):
        raise ConfigError(f"[[traffic]] must be an array of tables; got {traffic!r}")
    phases_raw = _expand_traffic(traffic, topo, rng)
    cap_cfg = Table("capture", config.get("capture", {}), {"points", "snaplen_bytes"})
    points = capture_points(cap_cfg.table.get("points", []), topo)
    snaplen = cap_cfg.integer("snaplen_bytes", unit="bytes", default=128, low=64, high=262144)
    wanted_cc = {f.get("cc") for _, _, _, flows in phases_raw for f in flows}
    if any(str(cc or "").startswith("tm_") for cc in wanted_cc):   # BPF controls: say why not, before any namespace
        from tcpmodels.testbed import kernel_cc

        problem = kernel_cc.requested_problem(wanted_cc)
        if problem:
            raise kernel_cc.KernelCcUnavailable(problem)
    require_privileges()

    tb = Testbed(topo, run_id=run_id, seed=seed)
    run_dir = confined_run_dir(base, f"{name}-{tb.run_id}")
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
