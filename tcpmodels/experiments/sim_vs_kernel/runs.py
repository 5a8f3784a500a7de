"""One sample on each engine (the kernel dumbbell, its ns-3 twin) and the campaign on the one runner."""

from __future__ import annotations

import math
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np

from tcpmodels._docstrings import SharedEntries
from tcpmodels.experiments.sim_vs_kernel.config import DEFAULT_CONFIG, KEY, NS3_VARIANT, SCHEMA, SvkConfig
from tcpmodels.sim.config import Dumbbell

__all__ = ["plan", "ns3_config", "summarize_flows", "run_kernel_sample", "run_ns3_sample", "run_campaign",
           "fresh_folder"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    config : SvkConfig
        The scenario.
""")


def plan(config: SvkConfig = DEFAULT_CONFIG, engines: tuple = ("kernel", "ns3")) -> list[dict]:
    """Every sample in run order: repetition 0 on each engine, then 1, ...; start offsets drawn per repetition.

    Both engines get the same offsets [s] in a repetition; a rerun draws them again identically.

    Parameters
    ----------
    config : SvkConfig
        ``reps``, ``start_jitter_s``, the senders' RTTs and the ``seed`` of the offsets.
    engines : tuple of str
        ``"kernel"`` and/or ``"ns3"``, in the order they run within a repetition.

    Returns
    -------
    list of dict
        One per sample: ``campaign``, ``engine``, ``rep`` and ``starts_s`` (one offset per sender) [s].

    Raises
    ------
    ValueError
        If ``engines`` names another engine.
    """
    for e in engines:
        if e not in ("kernel", "ns3"):
            raise ValueError(f"engines entries must be 'kernel' or 'ns3'; got {e!r}")
    rng = np.random.default_rng(config.seed)
    out = []
    for rep in range(config.reps):
        starts = [round(float(x), 4) for x in rng.uniform(0.0, config.start_jitter_s, len(config.rtts_ms))]
        for e in engines:
            out.append({"campaign": "sim_vs_kernel", "engine": e, "rep": rep, "starts_s": starts})
    return out


def ns3_config(config: SvkConfig, sample: dict) -> Dumbbell:
    """The :class:`tcpmodels.sim.config.Dumbbell` of one ns-3 sample.

    Parameters
    ----------
    config : SvkConfig
        RTTs, congestion controls, bottleneck, buffers and ``ns3_jitter_packets``.
    sample : dict
        One ns-3 entry of :func:`plan` (``rep`` seeds the simulation, ``starts_s``).

    Returns
    -------
    tcpmodels.sim.config.Dumbbell
        One sender per flow with the variant of :data:`NS3_VARIANT`, on a 10 Gbit/s access
        link of half its RTT one way, jittered by up to ``ns3_jitter_packets`` packet times;
        queues sampled every ``sample_interval_s``.
    """
    from tcpmodels.sim.config import BulkApp, Link, Sender, TcpOptions

    jitter_s = config.ns3_jitter_packets * 1500 * 8 / config.rate_bps
    senders = tuple(
        Sender(access=Link(rate_bps=10e9, delay_s=rtt * 1e-3 / 2, queue_packets=10000, jitter_s=jitter_s),
               variant=NS3_VARIANT[cc], apps=(BulkApp(start_s=float(start)),))
        for rtt, cc, start in zip(config.rtts_ms, config.ccs, sample["starts_s"])
    )
    return Dumbbell(senders=senders, bottleneck=Link(rate_bps=config.rate_bps, delay_s=0.0,
                                                     queue_bytes=config.buffer_bytes),
                    duration_s=config.end_s, seed=int(sample["rep"]), queue_bin_s=config.sample_interval_s,
                    tcp=TcpOptions(sndbuf_bytes=4 * config.rwnd_bytes, rcvbuf_bytes=config.rwnd_bytes))


def summarize_flows(series: list[tuple[list[float], list[float]]], *, lo_s: float, hi_s: float) -> list[float]:
    """Throughput of each flow between ``lo_s`` and ``hi_s`` from cumulative byte counts. [bit/s]

    Parameters
    ----------
    series : list of (times, bytes)
        Per flow, sample times on a common clock [s] and cumulative bytes acknowledged [bytes].
    lo_s, hi_s : float
        The interval, on the same clock. [s]

    Returns
    -------
    list of float
        ``(bytes(hi) - bytes(lo)) * 8 / (hi - lo)`` per flow, bytes linearly interpolated.

    Raises
    ------
    ValueError
        If the interval is empty or a flow's samples do not cover it.
    """
    if not hi_s > lo_s:
        raise ValueError(f"hi_s [s] must be > lo_s = {lo_s}; got {hi_s}")
    out = []
    for i, (t, b) in enumerate(series):
        t, b = np.asarray(t, float), np.asarray(b, float)
        if len(t) < 2 or t[0] > lo_s + 1e-9 or t[-1] < hi_s - 1e-9:
            raise ValueError(f"flow {i}: samples [{t[0] if len(t) else math.nan:.3f}, "
                             f"{t[-1] if len(t) else math.nan:.3f}] s do not cover [{lo_s:.3f}, {hi_s:.3f}] s")
        at = np.interp([lo_s, hi_s], t, b)
        out.append(float((at[1] - at[0]) * 8.0 / (hi_s - lo_s)))
    return out


def _kernel_topology(config: SvkConfig):
    from tcpmodels.testbed.topologies import dumbbell

    topo = dumbbell(access_rtts_s=tuple(r * 1e-3 for r in config.rtts_ms), bottleneck_rate_bps=config.rate_bps,
                    bottleneck_buffer_bytes=config.buffer_bytes)
    common = (("net.ipv4.tcp_no_metrics_save", "1"),)
    rcv = (("net.ipv4.tcp_rmem", f"4096 131072 {config.rwnd_bytes}"),)
    snd = (("net.ipv4.tcp_wmem", f"4096 16384 {4 * config.rwnd_bytes}"),)
    nodes = [replace(n, sysctls=n.sysctls + common + (rcv if n.name == "d" else snd if n.name.startswith("s") else ()))
             for n in topo.nodes]
    return replace(topo, nodes=tuple(nodes))


@_PARAMETERS.fill
def run_kernel_sample(config: SvkConfig, sample: dict, *, port: int = 5401) -> dict:
    """One repetition on the kernel testbed (root; the caller holds the host lock).

    Parameters
    ----------
    {config}
    sample : dict
        One kernel entry of :func:`plan` (``starts_s``).
    port : int
        Port of the traffic server on the receiver.

    Returns
    -------
    dict
        ``run_id``, ``ping_rtt_ms`` per sender, ``throughput_bps`` per flow, ``interval_s`` (lo, hi
        relative to the first start), ``retrans_segs`` per flow, ``cc_effective`` per flow,
        ``start_offsets_actual_s`` per flow.

    Raises
    ------
    tcpmodels.testbed.PrivilegeError
        Without root.
    tcpmodels.testbed.TestbedError
        If a flow fails.
    ValueError
        If a flow's TCP_INFO samples do not cover the measured interval.
    """
    from tcpmodels.testbed import Testbed, TestbedError
    from tcpmodels.testbed import workload as wl

    with Testbed(_kernel_topology(config)) as tb:
        server = wl.start_server(tb, "d", port=port)
        try:
            dst = tb.topology.meta["receiver_addr"]
            senders = tb.topology.meta["senders"]
            pings = [float(np.median(wl.ping_rtt(tb, s, dst, count=5, interval_s=0.05))) * 1e3 for s in senders]
            procs = []
            for i, (node, cc, start) in enumerate(zip(senders, config.ccs, sample["starts_s"])):
                flow = wl.bulk_flow(flow_id=i + 1, dst=dst, port=port, duration_s=config.end_s - float(start),
                                    cc=cc, direction="upload", sample_interval_s=config.sample_interval_s,
                                    start_s=float(start))
                procs.append(wl.launch_flows(tb, node, [flow]))
            recs = [wl.collect_flows(p, timeout_s=config.end_s + 120)[0] for p in procs]
        finally:
            server.stop()
        errors = [r.get("error") for r in recs if r.get("error")]
        if errors:
            raise TestbedError(f"kernel flow failed: {errors}")
        series = []
        for r in recs:
            s = [x for x in r.get("samples", []) if x.get("bytes_acked") is not None]
            series.append(([r["start_mono_s"] + x["t_s"] for x in s], [x["bytes_acked"] for x in s]))
        t_first = min(r["start_mono_s"] for r in recs)
        lo = max(r["start_mono_s"] for r in recs) + config.warmup_s
        hi = min(t[-1] for t, _ in series)
        tp = summarize_flows(series, lo_s=lo, hi_s=hi)
        retrans = [max((x.get("total_retrans") or 0) for x in r.get("samples", [{}]) or [{}]) for r in recs]
        return {"run_id": tb.run_id, "ping_rtt_ms": pings, "throughput_bps": tp,
                "interval_s": [round(lo - t_first, 4), round(hi - t_first, 4)], "retrans_segs": retrans,
                "cc_effective": [r.get("cc_effective") for r in recs],
                "start_offsets_actual_s": [round(r["start_mono_s"] - t_first, 4) for r in recs]}


@_PARAMETERS.fill
def run_ns3_sample(config: SvkConfig, sample: dict, out_dir: str | Path) -> dict:
    """One repetition in ns-3 (a fresh process); throughputs over the same interval as the kernel's.

    Parameters
    ----------
    {config}
    sample : dict
        One ns-3 entry of :func:`plan`.
    out_dir : str or Path
        Folder of the simulation's tables.

    Returns
    -------
    dict
        ``throughput_bps`` per flow over ``interval_s`` = [latest start + warmup_s, end] [s],
        ``lost_packets`` per flow, ``variants``, ``ns3_version``, wall times [s] and
        ``config_hash_ns3``.

    Raises
    ------
    tcpmodels.sim.run.SimulationError
        If the simulation fails.
    """
    from tcpmodels.sim.run import run_config

    res = run_config(ns3_config(config, sample), out_dir)
    lo, hi = max(sample["starts_s"]) + config.warmup_s, config.end_s
    tp = res.throughput_bps(lo, hi).sort_index()
    data = res.flows[res.flows["direction"] == "data"].groupby("flow_index")["lost_packets"].sum()
    rec = res.record
    return {"throughput_bps": [float(x) for x in tp.to_numpy()], "interval_s": [lo, hi],
            "lost_packets": [int(data.get(i, 0)) for i in tp.index],
            "variants": [NS3_VARIANT[c] for c in config.ccs], "ns3_version": rec["ns3_version"],
            "sim_run_wall_s": rec["run_wall_s"], "ns3_load_wall_s": rec["ns3_load_wall_s"],
            "config_hash_ns3": rec["config_hash"]}


def fresh_folder(path: str | Path) -> Path:
    """``path`` if it does not exist or is empty, else the first of ``<path>.1``, ``<path>.2`` ... that is.

    An ns-3 run writes its tables into a folder; a sample run again (a killed campaign resumed, or two
    campaigns sharing ``ns3_dir``) gets a fresh one rather than overwriting the tables of the first.

    Parameters
    ----------
    path : str or Path
        The folder a run would write into.

    Returns
    -------
    Path
        A folder that does not exist or holds nothing (not created here).
    """
    path = Path(path)
    candidate, n = path, 0
    while candidate.exists() and any(candidate.iterdir()):
        n += 1
        candidate = path.with_name(f"{path.name}.{n}")
    return candidate


@_PARAMETERS.fill
def run_campaign(records_path: str | Path, config: SvkConfig = DEFAULT_CONFIG, *, engines: tuple = ("kernel", "ns3"),
                 limit: int | None = None, progress: bool = True, lock_timeout_s: float = 1800.0,
                 samples: list[dict] | None = None, ns3_dir: str | Path | None = None) -> int:
    """Run (or resume) the samples of :func:`plan`; return how many were measured in this call.

    Parameters
    ----------
    records_path : str or Path
        JSONL file, one line per sample; samples on file are skipped.
    {config}
    engines : tuple of str
        ``"kernel"`` (root) and/or ``"ns3"``.
    limit : int, optional
        Stop after this many new samples.
    progress : bool
        tqdm bar on stderr.
    lock_timeout_s : float
        Longest wait for the host lock per kernel sample. [s]
    samples : list of dict, optional
        Samples to run instead of :func:`plan` (tests).
    ns3_dir : path, optional
        Where ns-3 runs write their tables, in ``<config hash>/rep<r>`` so that two scenarios never
        overwrite each other's, and a repetition run again in the next :func:`fresh_folder`
        (``rep<r>.1`` ...) so that no run overwrites another's (default: a temporary directory per run).

    Returns
    -------
    int
        Samples measured and recorded by this call.

    Raises
    ------
    tcpmodels.testbed.PrivilegeError
        Kernel samples without root.
    tcpmodels.testbed.TestbedError
        After three failed samples in a row.
    """
    from tcpmodels.experiments.campaign import run_samples
    from tcpmodels.records import JsonlRecords

    def measure(s, session):
        if s["engine"] == "kernel":
            res = run_kernel_sample(config, s)
        elif ns3_dir is None:
            with tempfile.TemporaryDirectory(prefix="svk_ns3_") as tmp:
                res = run_ns3_sample(config, s, tmp)
        else:
            res = run_ns3_sample(config, s, fresh_folder(Path(ns3_dir) / config.hash()[:12] / f"rep{s['rep']}"))
        return {"schema": SCHEMA, "config": config.to_dict(), "config_hash": config.hash(), **res}

    todo_all = plan(config, engines) if samples is None else samples
    return run_samples(JsonlRecords(records_path, KEY), todo_all, measure, desc="sim_vs_kernel",
                       on_host=lambda s: s["engine"] == "kernel", limit=limit, progress=progress,
                       lock_timeout_s=lock_timeout_s, yield_s=0.0)
