"""Loss-throughput campaign on the real-kernel testbed, for fitting the formula models (issue 11).

One *run* is one bulk TCP flow (Reno or CUBIC, set per socket with ``TCP_CONGESTION``)
through one bottleneck, captured at the sender, with the sender's ``TCP_INFO`` sampled
as ground truth; or one two-path MPTCP connection (the LIA counterfactual). The grid
sweeps the round-trip propagation delay and the loss process:

========  ===============================================================  ==============
setting   loss process                                                      buffer
========  ===============================================================  ==============
``buf``   none added: losses only where the drop-tail buffer overflows      BDP / 2
``r0.1``  random frame loss 0.1 % in the delay element (both directions)    1 BDP
``r0.5``  random loss 0.5 %                                                 1 BDP
``r2``    random loss 2 %                                                   1 BDP
``rwnd``  random loss 0.1 %, receiver buffer capped (``tcp_rmem`` max       1 BDP
          64 KiB in the receiver's namespace): the window-limited regime
``r5``    random loss 5 % (RTT 20 and 100 ms only): tiny windows, timeouts  1 BDP
========  ===============================================================  ==============

(buffers at least 8 full frames). Topology of a single-flow run::

    snd --pa (delay RTT/2 each way, random loss)-- r --pb (tbf rate, drop-tail buffer)-- rcv

The capture is on ``snd:pa``, the sender's own interface, ahead of the delay element
and the bottleneck queue, so every transmission (including those later dropped) is
seen and the RTT samples include the queueing delay the sender experiences.

Records: one JSON line per run in ``<out_dir>/records.jsonl`` (key ``kind, cc,
rtt_ms, setting, rep``), written after the run, so a killed campaign resumes where
it stopped (``resume`` skips every key on file). Captures go to
``<out_dir>/captures/<run>.pcap.gz``. Each run holds the host-wide testbed lock
(:func:`tcpmodels.testbed.hostlock.host_lock`, served in arrival order, so that
campaigns alternate) for exactly its own duration; the load average before
and after and the time waited for the lock are in every record.

``build`` turns records and captures into the dataset ``data/datasets/fit_*``
(per-run estimates from :mod:`tcpmodels.fit`, the TCP_INFO series, CUBIC epochs,
MPTCP subflows) with a provenance JSON.

Command line::

    python -m tcpmodels.experiments.fit run   [--out-dir runs/fit] [--grid full|tiny]
    python -m tcpmodels.experiments.fit resume [--out-dir runs/fit]
    python -m tcpmodels.experiments.fit build [--out-dir runs/fit] [--data-dir data]
"""

from __future__ import annotations

import gzip
import json
import shutil
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from tcpmodels.datasets import REPO_ROOT
from tcpmodels.experiments.campaign import run_samples
from tcpmodels.records import JsonlRecords, git_state, host_facts, load_average, utc_now

__all__ = ["FitRun", "grid", "run_one", "run_campaign", "SETTINGS", "KEY_FIELDS", "main"]

KEY_FIELDS = ("kind", "cc", "rtt_ms", "setting", "rep")
_MSS_WIRE = 1514  # full frame with timestamps: 1448 payload + 32 TCP + 20 IP + 14 Ethernet [bytes]
#: loss settings: random loss rate [-], buffer in BDPs, receiver tcp_rmem max [bytes] (None: default)
SETTINGS = {
    "buf": {"loss_rate": 0.0, "buffer_bdp": 0.5, "rmem_max_bytes": None},
    "r0.1": {"loss_rate": 0.001, "buffer_bdp": 1.0, "rmem_max_bytes": None},
    "r0.5": {"loss_rate": 0.005, "buffer_bdp": 1.0, "rmem_max_bytes": None},
    "r2": {"loss_rate": 0.02, "buffer_bdp": 1.0, "rmem_max_bytes": None},
    "rwnd": {"loss_rate": 0.001, "buffer_bdp": 1.0, "rmem_max_bytes": 65536},
    "r5": {"loss_rate": 0.05, "buffer_bdp": 1.0, "rmem_max_bytes": None},
}
#: two-path MPTCP runs: per path (rtt [s], random loss [-]); no rate limit, so loss is independent of the flow
MPTCP_PATHS = ((0.020, 0.005), (0.060, 0.01))


@dataclass(frozen=True, kw_only=True)
class FitRun:
    """One run of the campaign (one flow, or one MPTCP connection).

    Parameters
    ----------
    kind : {"single", "mptcp"}
    cc : {"reno", "cubic"}
        Congestion control set on the sending socket.
    rtt_ms : float
        Round-trip propagation delay added by the delay element (single: the path;
        mptcp: path 0's). [ms]
    setting : str
        Key of :data:`SETTINGS` (single) or ``"2path"`` (mptcp).
    rep : int
        Repetition number (also seeds the delay element's loss generator).
    duration_s : float
        Length of the bulk transfer. [s]
    rate_bps : float
        Bottleneck rate (single runs). [bit/s]
    sample_interval_s : float
        TCP_INFO sampling interval on the sender. [s]
    """

    kind: str
    cc: str
    rtt_ms: float
    setting: str
    rep: int
    duration_s: float
    rate_bps: float = 20e6
    sample_interval_s: float = 0.01

    @property
    def name(self) -> str:
        return f"{self.kind}-{self.cc}-{self.rtt_ms:g}ms-{self.setting}-r{self.rep}"

    def key(self) -> tuple:
        """The run's record key.

        Returns
        -------
        tuple
            ``(kind, cc, rtt_ms, setting, rep)``, the values of :data:`KEY_FIELDS`.
        """
        return (self.kind, self.cc, self.rtt_ms, self.setting, self.rep)

    @property
    def bdp_bytes(self) -> float:
        return self.rate_bps * self.rtt_ms * 1e-3 / 8.0

    def buffer_bytes(self) -> int:
        """Drop-tail buffer of the bottleneck: ``buffer_bdp`` BDPs, at least 8 full frames. [bytes]

        Returns
        -------
        int
            ``max(buffer_bdp * bdp_bytes, 8 * 1514)`` for this run's setting, rounded down. [bytes]
        """
        return int(max(SETTINGS[self.setting]["buffer_bdp"] * self.bdp_bytes, 8 * _MSS_WIRE))


def grid(which: str = "full") -> list[FitRun]:
    """The campaign's runs in execution order (repetition 0 of every cell first).

    ``"full"``: reno and cubic x RTT {5, 20, 50, 100, 200} ms x settings (``rwnd`` only
    at RTT >= 50 ms) x 2 repetitions, plus two 20 s MPTCP runs (reno, cubic subflows), then
    ``r5`` at RTT 20 and 100 ms x 2 repetitions (added after the first pass, so last).
    ``"tiny"``: two short runs for the testbed test.

    Parameters
    ----------
    which : {"full", "tiny"}
        Which grid.

    Returns
    -------
    list of FitRun
        The runs, in the order the campaign executes them.

    Raises
    ------
    ValueError
        For any other ``which``.
    """
    if which == "tiny":
        return [FitRun(kind="single", cc="cubic", rtt_ms=20.0, setting="r0.5", rep=0, duration_s=3.0),
                FitRun(kind="single", cc="reno", rtt_ms=5.0, setting="buf", rep=0, duration_s=3.0)]
    if which != "full":
        raise ValueError(f"grid must be 'full' or 'tiny'; got {which!r}")
    durations = {"buf": 16.0, "r0.1": 10.0, "r0.5": 8.0, "r2": 8.0, "rwnd": 10.0}
    runs: list[FitRun] = []
    for rep in (0, 1):
        for setting in ("buf", "r0.1", "r0.5", "r2", "rwnd"):
            for rtt_ms in (5.0, 20.0, 50.0, 100.0, 200.0):
                if setting == "rwnd" and rtt_ms < 50:
                    continue
                for cc in ("reno", "cubic"):
                    runs.append(FitRun(kind="single", cc=cc, rtt_ms=rtt_ms, setting=setting, rep=rep,
                                       duration_s=durations[setting]))
        if rep == 0:
            for cc in ("reno", "cubic"):
                runs.append(FitRun(kind="mptcp", cc=cc, rtt_ms=MPTCP_PATHS[0][0] * 1e3, setting="2path", rep=0,
                                   duration_s=20.0, rate_bps=0.0))
    for rep in (0, 1):
        for rtt_ms in (20.0, 100.0):
            for cc in ("reno", "cubic"):
                runs.append(FitRun(kind="single", cc=cc, rtt_ms=rtt_ms, setting="r5", rep=rep, duration_s=10.0))
    return runs


# ------------------------------------------------------------------------------ one run
def _single_topology(run: FitRun):
    from tcpmodels.testbed import Link, Node, Route, Topology

    spec = SETTINGS[run.setting]
    rcv_sysctls = ()
    if spec["rmem_max_bytes"]:
        m = int(spec["rmem_max_bytes"])
        rcv_sysctls = (("net.ipv4.tcp_rmem", f"4096 {min(m, 131072)} {m}"),)
    links = (
        Link(name="pa", a="snd", b="r", a_addrs=("10.0.1.1/24",), b_addrs=("10.0.1.2/24",),
             delay_s=run.rtt_ms * 1e-3 / 2, loss_rate=spec["loss_rate"], offloads=False),
        Link(name="pb", a="r", b="rcv", a_addrs=("10.0.2.1/24",), b_addrs=("10.0.2.2/24",), rate_bps=run.rate_bps,
             buffer_bytes=run.buffer_bytes(), offloads=False),
    )
    nodes = (Node(name="snd"), Node(name="r", forwarding=True), Node(name="rcv", sysctls=rcv_sysctls))
    routes = (Route(node="snd", dst="default", via="10.0.1.2"), Route(node="rcv", dst="default", via="10.0.2.1"))
    return Topology(name="fit_single", nodes=nodes, links=links, routes=routes,
                    meta={"sender": "snd", "receiver": "rcv", "receiver_addr": "10.0.2.2", "capture": "snd:pa"})


def _netstat(tb, node: str) -> dict:
    """TcpExt and Tcp MIB counters of a namespace (``/proc/net/netstat`` and ``/proc/net/snmp``)."""
    out = {}
    for path in ("/proc/net/netstat", "/proc/net/snmp"):
        lines = tb.exec(node, ["cat", path]).stdout.splitlines()
        for head, vals in zip(lines[0::2], lines[1::2]):
            names, values = head.split(), vals.split()
            if names[0] in ("TcpExt:", "Tcp:") and names[0] == values[0]:
                prefix = names[0].rstrip(":")
                for n, v in zip(names[1:], values[1:]):
                    try:
                        out[f"{prefix}.{n}"] = int(v)
                    except ValueError:
                        pass
    return out


_NETSTAT_KEYS = ("TcpExt.TCPTimeouts", "TcpExt.TCPLossProbes", "TcpExt.TCPLossProbeRecovery",
                 "TcpExt.TCPFastRetrans", "TcpExt.TCPSlowStartRetrans", "TcpExt.TCPLostRetransmit",
                 "TcpExt.TCPDSACKRecv", "TcpExt.TCPSACKReorder", "TcpExt.TCPSpuriousRTOs", "TcpExt.DelayedACKs",
                 "TcpExt.TCPHystartTrainDetect", "TcpExt.TCPHystartDelayDetect", "TcpExt.TCPLossUndo",
                 "TcpExt.TCPSackRecovery", "TcpExt.TCPRenoRecovery", "Tcp.RetransSegs", "Tcp.OutSegs")


def _netstat_delta(before: dict, after: dict) -> dict:
    return {k: after.get(k, 0) - before.get(k, 0) for k in _NETSTAT_KEYS if k in after}


def _gzip_to(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    with src.open("rb") as fin, gzip.open(dst, "wb", compresslevel=6) as fout:
        shutil.copyfileobj(fin, fout)
    src.unlink()


def run_one(run: FitRun, out_dir: str | Path, *, seed_base: int = 1100) -> dict:
    """Build the topology, run one flow with capture and TCP_INFO sampling, tear down; return the record.

    The caller holds the host lock. Captures are gzipped to
    ``<out_dir>/captures/<run>-<interface>.pcap.gz``.

    Parameters
    ----------
    run : FitRun
        The run: a single flow through the delay/loss element and the bottleneck, or a
        two-path MPTCP download over :data:`MPTCP_PATHS`.
    out_dir : str or Path
        Campaign folder (``tmp/`` and ``captures/`` are created in it).
    seed_base : int
        Base of the testbed seed (the delay elements' loss generators);
        the run's seed is ``seed_base + 17 * rep + int(rtt_ms)``.

    Returns
    -------
    dict
        The record: the key fields, settings, seed, sysctls, the flow and server records,
        ``tcp_info_samples``, MIB counter deltas (``netstat_delta``), interface counters,
        delay-element statistics, the captures (paths relative to ``out_dir``), host facts,
        load averages, ``wall_s`` [s] and ``error`` (None when the flow succeeded).

    Raises
    ------
    tcpmodels.testbed.PrivilegeError
        Without root (or network namespaces).
    ValueError
        If ``run.kind`` is neither ``"single"`` nor ``"mptcp"``.
    """
    from tcpmodels.testbed import PathSpec, Testbed, tool_versions, two_path
    from tcpmodels.testbed import workload as wl
    from tcpmodels.testbed.capture import start_capture

    out_dir = Path(out_dir)
    tmp = out_dir / "tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    seed = seed_base + 17 * run.rep + int(run.rtt_ms)
    rec: dict = {"kind": run.kind, "cc": run.cc, "rtt_ms": run.rtt_ms, "setting": run.setting, "rep": run.rep,
                 "name": run.name, "run": asdict(run), "seed": seed, "started_utc": utc_now(),
                 "load_avg_before": load_average()}
    if run.kind == "single":
        topo = _single_topology(run)
        rec["buffer_bytes"] = run.buffer_bytes()
        rec["bdp_bytes"] = run.bdp_bytes
        rec.update({k: v for k, v in SETTINGS[run.setting].items()})
        sender, receiver, dst = "snd", "rcv", "10.0.2.2"
        cap_points = [("snd", "pa")]
    elif run.kind == "mptcp":
        topo = two_path([PathSpec(rate_bps=None, rtt_s=r, loss_rate=p) for r, p in MPTCP_PATHS])
        rec["paths"] = [{"rtt_ms": r * 1e3, "loss_rate": p} for r, p in MPTCP_PATHS]
        sender, receiver, dst = "s", "c", "10.0.1.2"  # download: the server sends
        cap_points = [("s", "p0"), ("s", "p1")]
    else:
        raise ValueError(f"run kind must be 'single' or 'mptcp'; got {run.kind!r}")
    t0 = time.monotonic()
    with Testbed(topo, seed=seed) as tb:
        rec["testbed_run_id"] = tb.run_id
        rec["sysctls"] = {k: tb.exec(sender, ["sysctl", "-n", k]).stdout.strip()
                          for k in ("net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem", "net.ipv4.tcp_congestion_control",
                                    "net.ipv4.tcp_sack", "net.ipv4.tcp_timestamps", "net.ipv4.tcp_no_metrics_save")}
        rec["receiver_tcp_rmem"] = tb.exec(receiver, ["sysctl", "-n", "net.ipv4.tcp_rmem"]).stdout.strip()
        if run.kind == "single":
            server = wl.start_server(tb, receiver)
            wl.ping_rtt(tb, sender, dst, count=3, interval_s=0.01)  # ARP resolved before the flow
            flow = wl.bulk_flow(flow_id=1, dst=dst, duration_s=run.duration_s, cc=run.cc, direction="upload",
                                sample_interval_s=run.sample_interval_s)
        else:
            server = wl.start_server(tb, sender, mptcp=True)
            for i in (1, 2):
                wl.ping_rtt(tb, receiver, f"10.0.{i}.2", count=3, interval_s=0.01)
            flow = wl.bulk_flow(flow_id=1, dst=dst, duration_s=run.duration_s, cc=run.cc, mptcp=True,
                                direction="download", sample_interval_s=run.sample_interval_s)
        caps = [start_capture(tb, node, iface, tmp / f"{run.name}-{iface}.pcap", snaplen_bytes=128)
                for node, iface in cap_points]
        ns_before = {n: _netstat(tb, n) for n in (sender, receiver)}
        counters_before = tb.counters()
        client_node = sender if run.kind == "single" else receiver
        (frec,) = wl.run_flows(tb, client_node, [flow], timeout_s=120 + 3 * run.duration_s)
        time.sleep(0.3)  # last ACKs reach the capture
        counters_after = tb.counters()
        ns_after = {n: _netstat(tb, n) for n in (sender, receiver)}
        cap_stats = [c.stop() for c in caps]
        srecs = server.stop()
    rec["wall_s"] = time.monotonic() - t0
    rec["delay_elements"] = tb.delay_stats
    rec["netstat_delta"] = {n: _netstat_delta(ns_before[n], ns_after[n]) for n in ns_before}
    rec["counters_before"], rec["counters_after"] = counters_before, counters_after
    samples = frec.pop("samples", None)
    srec = next((s for s in srecs if s.get("flow_id") == 1), {})
    if samples is None:
        samples = srec.pop("samples", [])
    rec["flow"] = frec
    rec["server"] = {k: v for k, v in srec.items() if k != "samples"}
    rec["tcp_info_samples"] = samples
    rec["error"] = frec.get("error") or srec.get("error")
    rec["captures"] = []
    for cs in cap_stats:
        src = Path(cs["path"])
        dst_path = out_dir / "captures" / (src.name + ".gz")
        _gzip_to(src, dst_path)
        rec["captures"].append({**cs, "path": str(dst_path.relative_to(out_dir))})
    rec["host"] = {**host_facts(), **tool_versions()}
    rec["load_avg_after"] = load_average()
    rec["finished_utc"] = utc_now()
    return rec


# ------------------------------------------------------------------------------ campaign
def run_campaign(out_dir: str | Path = "runs/fit", *, which: str = "full", progress: bool = True,
                 max_runs: int | None = None) -> list[dict]:
    """Run every run of :func:`grid` not yet on file through the one campaign loop; return the new records.

    :func:`tcpmodels.experiments.campaign.run_samples` holds the host lock for each run,
    skips what is recorded, appends each record durably and shows the progress bar. A
    run that fails is not recorded (a rerun retries it); three failures in a row stop
    the campaign with the last error.

    Parameters
    ----------
    out_dir : str or Path
        Campaign folder: ``records.jsonl``, ``campaign.json`` and ``captures/``.
    which : {"full", "tiny"}
        The grid (:func:`grid`).
    progress : bool
        tqdm bar on stderr.
    max_runs : int, optional
        Stop after this many new runs.

    Returns
    -------
    list of dict
        The records appended by this call (see :func:`run_one`).

    Raises
    ------
    tcpmodels.testbed.PrivilegeError
        Without root.
    tcpmodels.testbed.TestbedError
        After three failed runs in a row.
    """
    from tcpmodels.testbed import PrivilegeError, TestbedError

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    records = JsonlRecords(out_dir / "records.jsonl", KEY_FIELDS)
    runs = {r.key(): r for r in grid(which)}
    plan = [{**dict(zip(KEY_FIELDS, key)), "name": run.name} for key, run in runs.items()]
    (out_dir / "campaign.json").write_text(json.dumps({
        "campaign": "fit (issue 11)", "grid": which, "settings": SETTINGS, "mptcp_paths": MPTCP_PATHS,
        "runs_total": len(plan), "started_utc": utc_now(), "git": git_state(REPO_ROOT),
        "host": host_facts()}, indent=1))

    def measure(sample: dict, _session: object) -> dict:
        run = runs[tuple(sample[k] for k in KEY_FIELDS)]
        try:
            return run_one(run, out_dir)
        except (PrivilegeError, KeyboardInterrupt):
            raise
        except Exception as exc:
            raise TestbedError(f"run {run.name}: {type(exc).__name__}: {exc}") from exc

    already = len(records.read())
    run_samples(records, plan, measure, desc="fit campaign", limit=max_runs, progress=progress,
                lock_timeout_s=3600.0, unit="run")
    return records.read()[already:]


def main(argv: list[str] | None = None) -> int:
    """``python -m tcpmodels.experiments.fit {run,resume,build} ...`` (see the module docstring).

    Parameters
    ----------
    argv : list of str, optional
        The arguments; None: ``sys.argv[1:]``.

    Returns
    -------
    int
        0; ``run``/``resume`` print the number of new runs as JSON, ``build`` the summary
        of :func:`tcpmodels.fit.dataset.write_dataset`. Expected failures exit through
        :func:`~tcpmodels.experiments.campaign_cli.campaign_errors`.
    """
    from tcpmodels.experiments.campaign_cli import campaign_parser

    parser, sub = campaign_parser("fit", __doc__)
    for name in ("run", "resume"):
        p = sub.add_parser(name, help="run the campaign (both skip runs already on file)")
        p.add_argument("--out-dir", default="runs/fit")
        p.add_argument("--grid", default="full", choices=("full", "tiny"))
        p.add_argument("--max-runs", type=int)
        p.add_argument("--no-progress", action="store_true")
    b = sub.add_parser("build", help="analyse the records and write data/datasets/fit_*")
    b.add_argument("--out-dir", default="runs/fit")
    b.add_argument("--data-dir", default="data")
    b.add_argument("--ship", nargs="*", default=[],
                   help="runs whose capture goes, trimmed, to data/captures: NAME or NAME:SECONDS (default 6 s)")
    b.add_argument("--allow-dirty", action="store_true",
                   help="write the shipped dataset (under data/) from a tree with uncommitted changes")
    args = parser.parse_args(argv)
    if args.cmd in ("run", "resume"):
        from tcpmodels.experiments.campaign_cli import campaign_errors

        with campaign_errors("fit campaign"):
            new = run_campaign(args.out_dir, which=args.grid, progress=not args.no_progress, max_runs=args.max_runs)
        print(json.dumps({"new_runs": len(new)}))
        return 0
    from tcpmodels.fit.dataset import write_dataset
    from tcpmodels.records import DirtyTreeError

    try:
        info = write_dataset(args.out_dir, args.data_dir, captures_to_ship=tuple(args.ship), allow_dirty=args.allow_dirty)
    except DirtyTreeError as exc:
        print(f"fit: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(info, indent=1, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
