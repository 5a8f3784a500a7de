"""Campaign of paper P3 (Kozu, Yamaguchi): one Reno and one CUBIC flow sharing a bottleneck, per RTT pair.

Three engines measure the same grid, Reno RTT in {1, 4, 16} ms x CUBIC RTT in
{1, 4, 16, 64} ms (paper Figs. 3-5), at the same bottleneck rate and buffer:

``kernel``
    The real Linux stack in network namespaces
    (:func:`~tcpmodels.testbed.topologies.dumbbell`): sender ``s0`` runs
    ``reno``, sender ``s1`` ``cubic`` (``TCP_CONGESTION`` per socket, read back
    from the kernel), both upload to one receiver ``d`` through a shared ``tbf``
    bottleneck; each sender's RTT is set by the delay element on its access
    link. The receiver's ``tcp_rmem`` maximum is 10 MB (the paper's receive
    window); ``tcp_no_metrics_save`` is on so no sample inherits the ssthresh
    cached by the previous one. Throughput comes from ``tcpi_bytes_acked``
    sampled every ``sample_interval_s`` on each sender, over the common interval
    from ``warmup_s`` after the later start to the earlier end (>= ``measure_s``).
    The host lock is taken per sample (one RTT pair, one repetition).
``ns3``
    The same dumbbell in ns-3 (:class:`tcpmodels.sim.config.Dumbbell`):
    ``TcpLinuxReno`` against ``TcpCubic`` (standard) and against
    ``TcpCubicX`` with K scaled by x(RTT) in each reading of eq. (4)
    (``multiply``/``divide``, :mod:`tcpmodels.sim.cc`), x(RTT) a power law
    through (1 s, 1) with exponent ``x_exponent`` (default -1/3: the line through
    (1 ms, 10) and (1000 ms, 1) read off Fig. 2, an assumption). HyStart is off
    in both CUBICs so they differ only in K. Runs go through
    :func:`tcpmodels.sweep.sweep` (cached, resumable) with one worker, in
    phases of decreasing priority (:data:`NS3_PHASES`).
``fluid``
    :func:`tcpmodels.models.bottleneck.reno_cubic_bottleneck` for the same pairs
    and readings, the explanatory third column (cheap: computed by ``dataset``).

Every flow starts at a random offset in ``[0, start_jitter_s]`` (drawn per
sample and seed) so that repetitions do not replay one phase of the two
sawtooths.

Scaling (:meth:`P3Config.scaling`): 100 Mbit/s instead of the paper's 1 Gbit/s
(the plots' axes reach 600-800 Mbit/s) because ns-3 needs about 1.5 wall
seconds per simulated second at this rate and the delay element shares two
cores with other campaigns; the buffer is one BDP at the largest Reno RTT
(16 ms: 200 kB). Windows are 10 times smaller than at 1 Gbit/s for the same
RTTs, so K = cbrt(W_max (1 - beta_cubic) / C) is about 10^(1/3) = 2.2 times
smaller, and more of the grid lies in CUBIC's Reno-friendly region (which takes
over when the Reno-equivalent window grows faster than the cubic curve, i.e.
for small W_max and small RTT).

Measured here (2 shared cores, load 7-25): a kernel sample takes about 40 s
(36 samples in 35 min); an ns-3 run of 20 simulated seconds took 3-5 wall
minutes (1-2 of them loading ns-3 under contention; about 15 s load and
1.5 s per simulated second on an idle core), so the ns-3 grid runs in order of
priority (``--phases``, ``--kinds``, ``--reno-rtts-ms`` select a part) and the
dataset holds whatever the cache has.

Command line (``kernel`` needs root)::

    python -m tcpmodels.experiments.p3 kernel --records runs/p3/kernel.jsonl
    python -m tcpmodels.experiments.p3 ns3 --cache runs/p3/ns3_cache --phases main0 slider0 main1
    python -m tcpmodels.experiments.p3 ns3 --cache runs/p3/ns3_cache --phases main1 --kinds standard divide --reno-rtts-ms 1
    python -m tcpmodels.experiments.p3 fluid --out runs/p3/fluid.parquet
    python -m tcpmodels.experiments.p3 dataset --records runs/p3/kernel.jsonl --cache runs/p3/ns3_cache \
        --fluid runs/p3/fluid.parquet --out data/datasets

References
----------
.. [1] T. Kozu, S. Yamaguchi, "Improvement of TCP Fairness with Controlling Congestion Windows Size
   Recovery Time", FIT2013, L-033, Figs. 1-5 (seed 002).
.. [2] RFC 9438, "CUBIC for Fast and Long-Distance Networks".
.. [3] R. Jain, D. Chiu, W. Hawe, "A Quantitative Measure of Fairness and Discrimination for Resource
   Allocation in Shared Computer Systems", DEC-TR-301, 1984.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from tcpmodels.experiments.campaign import ServerTestbed
from tcpmodels.models.cubic import x_power_law_params
from tcpmodels.models.fairness import jain_index

__all__ = ["P3Config", "DEFAULT_CONFIG", "NS3_PHASES", "kernel_plan", "KernelSession", "run_kernel_campaign",
           "summarize_flow_samples", "kernel_frame", "ns3_plan", "ns3_config", "run_ns3", "ns3_frame",
           "fluid_frame", "build_dataset", "jain_index", "main"]

REPO = Path(__file__).resolve().parents[2]
MB = 1024 * 1024
SCHEMA = 1
#: ns-3 phases in run order: the main grid for seed 0, the x(RTT)-exponent grid, more seeds
NS3_PHASES = ("main0", "slider0", "main1", "slider1", "main2")
#: CUBIC variants of the ns-3 grid: standard ns-3 TcpCubic, and TcpCubicX in each reading of eq. (4)
NS3_KINDS = ("standard", "multiply", "divide")


@dataclass(frozen=True, kw_only=True)
class P3Config:
    """Scaled setting of the P3 campaign (all engines).

    Parameters
    ----------
    rate_bps : float
        Bottleneck rate, both engines (paper: about 1 Gbit/s). [bit/s]
    buffer_bdp_fraction : float
        Drop-tail buffer as a fraction of the BDP at ``buffer_ref_rtt_s``. [-]
    buffer_ref_rtt_s : float
        RTT whose BDP sizes the buffer. [s]
    reno_rtts_ms, cubic_rtts_ms : tuple of float
        The grid (paper: {1, 4, 16} x {1, 4, 16, 64}). [ms]
    rwnd_bytes : int
        Receive-buffer maximum (paper: receive window 10 MB). [bytes]
    mss_bytes : int
        Segment size (1448: Ethernet MTU with timestamps). [bytes]
    warmup_s, measure_s : float
        Kernel: time after the later start that is discarded, and the measured span. [s]
    reps : int
        Kernel repetitions of every pair.
    sample_interval_s : float
        Kernel TCP_INFO sampling interval. [s]
    start_jitter_s : float
        Each flow starts at a uniform random offset in [0, start_jitter_s]. [s]
    window_s : float
        Length of the sub-windows whose throughputs give the within-run spread. [s]
    ns3_duration_s, ns3_warmup_s : float
        ns-3 simulated time and the discarded start. [s]
    ns3_seeds : tuple of int
        Seeds of phases ``main0``, ``main1``, ``main2`` (one each).
    x_exponent : float
        Default exponent of x(RTT) (:func:`x_power_law_params`). [-]
    slider_exponents : tuple of float
        Further exponents simulated (seed ``ns3_seeds[0]``) for the notebook's slider. [-]
    seed : int
        Shuffles the kernel sample order and draws the kernel start offsets.
    ns3_jitter_packets : float
        ns-3 only: each access link adds a uniform, order-preserving extra delay
        of up to this many 1500-byte packet times at ``rate_bps``
        (:mod:`tcpmodels.sim.jitter`). Exact delays phase-lock a drop-tail
        dumbbell (see :mod:`tcpmodels.experiments.sim_vs_kernel`, where one
        packet time brought ns-3 within 0.08 of the kernel's shares); 0 gives
        the exact-delay simulator of the first campaign. [-]
    """

    rate_bps: float = 100e6
    buffer_bdp_fraction: float = 1.0
    buffer_ref_rtt_s: float = 0.016
    reno_rtts_ms: tuple = (1.0, 4.0, 16.0)
    cubic_rtts_ms: tuple = (1.0, 4.0, 16.0, 64.0)
    rwnd_bytes: int = 10 * MB
    mss_bytes: int = 1448
    warmup_s: float = 5.0
    measure_s: float = 30.0
    reps: int = 3
    sample_interval_s: float = 0.1
    start_jitter_s: float = 0.5
    window_s: float = 5.0
    ns3_duration_s: float = 20.0
    ns3_warmup_s: float = 5.0
    ns3_seeds: tuple = (0, 1, 2)
    x_exponent: float = -1.0 / 3.0
    slider_exponents: tuple = (-2.0 / 3.0, -1.0 / 6.0)
    seed: int = 3
    ns3_jitter_packets: float = 1.0

    def __post_init__(self):
        if not 1e6 <= self.rate_bps <= 2e9:
            raise ValueError(f"rate_bps [bit/s] must be in [1e6, 2e9]; got {self.rate_bps}")
        if not 0.05 <= self.buffer_bdp_fraction <= 20:
            raise ValueError(f"buffer_bdp_fraction [-] must be in [0.05, 20]; got {self.buffer_bdp_fraction}")
        if not 0 < self.buffer_ref_rtt_s <= 1:
            raise ValueError(f"buffer_ref_rtt_s [s] must be in (0, 1]; got {self.buffer_ref_rtt_s}")
        if not 0 <= self.ns3_jitter_packets <= 100:
            raise ValueError(f"ns3_jitter_packets [-] must be in [0, 100]; got {self.ns3_jitter_packets}")
        for name in ("reno_rtts_ms", "cubic_rtts_ms"):
            v = getattr(self, name)
            if not v or any(not 0.1 <= r <= 1000 for r in v):
                raise ValueError(f"{name} [ms] must be a non-empty list of values in [0.1, 1000]; got {v}")
        if not 1 <= self.reps <= 20:
            raise ValueError(f"reps [-] must be in [1, 20]; got {self.reps}")
        for name in ("warmup_s", "measure_s", "ns3_duration_s", "window_s", "sample_interval_s"):
            if not 0 < getattr(self, name) <= 3600:
                raise ValueError(f"{name} [s] must be in (0, 3600]; got {getattr(self, name)}")
        if not 0 <= self.ns3_warmup_s < self.ns3_duration_s:
            raise ValueError(f"ns3_warmup_s [s] must be in [0, ns3_duration_s={self.ns3_duration_s}); "
                             f"got {self.ns3_warmup_s}")
        if not 0 <= self.start_jitter_s <= 10:
            raise ValueError(f"start_jitter_s [s] must be in [0, 10]; got {self.start_jitter_s}")
        x_power_law_params(self.x_exponent)
        for k in self.slider_exponents:
            x_power_law_params(k)

    @property
    def buffer_bytes(self) -> int:
        """Bottleneck buffer: ``buffer_bdp_fraction`` x rate x ``buffer_ref_rtt_s`` / 8. [bytes]"""
        return int(round(self.buffer_bdp_fraction * self.rate_bps * self.buffer_ref_rtt_s / 8))

    @property
    def pairs_ms(self) -> list[tuple[float, float]]:
        """(Reno RTT, CUBIC RTT) pairs of the grid, Reno-major. [ms]"""
        return [(float(a), float(b)) for a in self.reno_rtts_ms for b in self.cubic_rtts_ms]

    def to_dict(self) -> dict:
        d = asdict(self)
        d["buffer_bytes"] = self.buffer_bytes
        return d

    def hash(self) -> str:
        import hashlib

        return hashlib.sha256(json.dumps(self.to_dict(), sort_keys=True).encode()).hexdigest()[:16]

    def scaling(self) -> dict:
        """How this setting relates to the paper's: rates, BDPs, and K at the largest window."""
        from tcpmodels.models.cubic import cubic_k_s

        seg = self.mss_bytes
        rows = {}
        for rtt_ms in sorted(set(self.reno_rtts_ms) | set(self.cubic_rtts_ms)):
            bdp_ours = self.rate_bps * rtt_ms / 1e3 / 8
            bdp_paper = 1e9 * rtt_ms / 1e3 / 8
            w_ours = (bdp_ours + self.buffer_bytes) / seg
            w_paper = (bdp_paper + 1e9 / self.rate_bps * self.buffer_bytes) / seg
            rows[f"{rtt_ms:g}ms"] = {
                "bdp_bytes": bdp_ours, "paper_bdp_bytes": bdp_paper,
                "w_max_alone_segments": w_ours, "paper_w_max_alone_segments": w_paper,
                "k_alone_s": float(cubic_k_s(w_ours)), "paper_k_alone_s": float(cubic_k_s(w_paper)),
            }
        return {"paper_rate_bps": 1e9, "rate_bps": self.rate_bps, "rate_scale": self.rate_bps / 1e9,
                "buffer_bytes": self.buffer_bytes, "buffer_packets": self.buffer_bytes / (seg + 52),
                "buffer_definition": f"{self.buffer_bdp_fraction:g} x BDP at {self.buffer_ref_rtt_s * 1e3:g} ms "
                                     "(the paper states no buffer)",
                "paper_rwnd": "10 MB", "rwnd_bytes": self.rwnd_bytes,
                "k_scale_same_rtt": (self.rate_bps / 1e9) ** (1 / 3),
                "per_rtt": rows,
                "note": "W_max alone = (BDP + buffer) / MSS, the window of a single flow filling link and buffer; "
                        "the paper column scales the buffer with the rate (same buffer in time)."}


DEFAULT_CONFIG = P3Config()


# ---------------------------------------------------------------- kernel plan
def kernel_plan(config: P3Config) -> list[dict]:
    """Every kernel sample in run order: repetition 0 of all pairs (shuffled), then 1, ...

    Each sample carries the two flows' start offsets [s], drawn here so a rerun
    repeats them.
    """
    import numpy as np

    rng = np.random.default_rng(config.seed)
    pairs = config.pairs_ms
    plan = []
    for rep in range(config.reps):
        for i in rng.permutation(len(pairs)):
            reno, cubic = pairs[int(i)]
            off = rng.uniform(0.0, config.start_jitter_s, 2) if config.start_jitter_s > 0 else np.zeros(2)
            plan.append({"campaign": "p3_kernel", "rep": rep, "reno_rtt_ms": reno, "cubic_rtt_ms": cubic,
                         "order": len(plan), "reno_start_s": round(float(off[0]), 4),
                         "cubic_start_s": round(float(off[1]), 4)})
    return plan


def _kernel_topology(config: P3Config, reno_rtt_ms: float, cubic_rtt_ms: float):
    from tcpmodels.testbed.topologies import dumbbell

    topo = dumbbell(access_rtts_s=(reno_rtt_ms * 1e-3, cubic_rtt_ms * 1e-3), bottleneck_rate_bps=config.rate_bps,
                    bottleneck_buffer_bytes=config.buffer_bytes)
    common = (("net.ipv4.tcp_no_metrics_save", "1"),)
    rcv = (("net.ipv4.tcp_rmem", f"4096 131072 {config.rwnd_bytes}"),)
    snd = (("net.ipv4.tcp_wmem", f"4096 16384 {4 * config.rwnd_bytes}"),)
    nodes = []
    for n in topo.nodes:
        extra = common + (rcv if n.name == "d" else snd if n.name.startswith("s") else ())
        nodes.append(replace(n, sysctls=n.sysctls + extra))
    return replace(topo, nodes=tuple(nodes))


#: TCP_INFO fields kept per kernel sample
_KEEP = ("t_s", "bytes_acked", "cwnd_segments", "ssthresh_segments", "srtt_s", "min_rtt_s", "total_retrans",
         "ca_state")


class KernelSession(ServerTestbed):
    """A running dumbbell testbed with a traffic server on the receiver, reused across samples.

    Between samples only the two access links' delay elements change
    (:meth:`set_rtts`). Use as a context manager.
    """

    server_node = "d"
    port = 5301

    def __init__(self, config: P3Config, reno_rtt_ms: float, cubic_rtt_ms: float):
        self.config = config
        self.rtts_ms = (float(reno_rtt_ms), float(cubic_rtt_ms))

    def topology(self):
        return _kernel_topology(self.config, *self.rtts_ms)

    def set_rtts(self, reno_rtt_ms: float, cubic_rtt_ms: float) -> None:
        """Change the two senders' round-trip delays [ms] (restarts their delay elements)."""
        new = (float(reno_rtt_ms), float(cubic_rtt_ms))
        for i, (old_ms, new_ms) in enumerate(zip(self.rtts_ms, new)):
            if old_ms != new_ms:
                self.tb.set_link_delay(f"a{i}", new_ms * 1e-3 / 2)
        self.rtts_ms = new

    def run(self, reno_start_s: float = 0.0, cubic_start_s: float = 0.0) -> dict:
        """One sample at the current RTTs: Reno from ``s0`` and CUBIC from ``s1``, both for the same duration.

        Returns
        -------
        dict
            ``run_id``, ``ping_rtt_ms`` (median ICMP RTT of each sender to the receiver before the
            transfers), and ``flows``: per flow its record from the traffic client (``cc_effective``,
            ``start_mono_s``, ``bytes``, ``error``) with ``samples`` reduced to the fields in ``_KEEP``.
        """
        import numpy as np

        from tcpmodels.testbed import TestbedError
        from tcpmodels.testbed import workload as wl

        cfg, tb = self.config, self.tb
        if self.server.popen.poll() is not None:
            raise TestbedError("the traffic server has exited")
        dst = tb.topology.meta["receiver_addr"]
        pings = [float(np.median(wl.ping_rtt(tb, s, dst, count=5, interval_s=0.05))) * 1e3 for s in ("s0", "s1")]
        duration_s = cfg.warmup_s + cfg.measure_s + cfg.start_jitter_s
        procs = []
        for i, (node, cc, start) in enumerate((("s0", "reno", reno_start_s), ("s1", "cubic", cubic_start_s))):
            flow = wl.bulk_flow(flow_id=i + 1, dst=dst, port=self.port, duration_s=duration_s, cc=cc,
                                direction="upload", sample_interval_s=cfg.sample_interval_s, start_s=float(start))
            procs.append(wl.launch_flows(tb, node, [flow]))
        recs = [wl.collect_flows(p, timeout_s=duration_s + 120)[0] for p in procs]
        flows = []
        for cc, rec in zip(("reno", "cubic"), recs):
            samples = [{k: s.get(k) for k in _KEEP} for s in rec.pop("samples", [])]
            flows.append({**rec, "cc_requested": cc, "samples": samples})
        return {"run_id": tb.run_id, "ping_rtt_ms": pings, "flows": flows}


def _progress(total: int, initial: int, desc: str, enabled: bool, unit: str = "sample"):
    from tqdm import tqdm

    return tqdm(total=total, initial=initial, desc=desc, unit=unit, disable=not enabled, file=sys.stderr,
                mininterval=5.0, dynamic_ncols=False, ncols=100)


_KERNEL_KEY = ("campaign", "rep", "reno_rtt_ms", "cubic_rtt_ms")


def run_kernel_campaign(records_path: str | Path, config: P3Config = DEFAULT_CONFIG, *, limit: int | None = None,
                        progress: bool = True, lock_timeout_s: float = 1800.0, plan: list[dict] | None = None,
                        yield_s: float = 0.5) -> int:
    """Run (or resume) the kernel grid; return the number of samples measured in this call.

    Parameters
    ----------
    records_path : str or Path
        JSONL file, one line per sample; samples already on file (same repetition and RTT pair) are skipped.
    config : P3Config
    limit : int, optional
        Stop after this many new samples (to time a sample; used by tests).
    progress : bool
        tqdm bar on stderr.
    lock_timeout_s : float
        Longest wait for the host lock per sample. [s]
    plan : list of dict, optional
        Samples to run instead of :func:`kernel_plan` (tests use one).
    yield_s : float
        Pause after releasing the lock so a waiting campaign can take it. [s]
    """
    from tcpmodels.records import JsonlRecords, Stopwatch, load_average, utc_now
    from tcpmodels.testbed import TestbedError
    from tcpmodels.testbed.hostlock import host_lock

    plan = kernel_plan(config) if plan is None else plan
    records = JsonlRecords(records_path, _KERNEL_KEY)
    pending = records.pending(plan)
    todo = pending if limit is None else pending[:limit]
    bar = _progress(len(plan), len(plan) - len(pending), "p3 kernel", progress)
    session, failures, n = None, 0, 0
    try:
        for s in todo:
            with host_lock(timeout_s=lock_timeout_s, holder=f"p3 kernel {s['order']} pid {os.getpid()}") as waited_s:
                watch = Stopwatch()
                started, load = utc_now(), load_average()
                try:
                    if session is None:
                        session = KernelSession(config, s["reno_rtt_ms"], s["cubic_rtt_ms"]).__enter__()
                    else:
                        session.set_rtts(s["reno_rtt_ms"], s["cubic_rtt_ms"])
                    res = session.run(s["reno_start_s"], s["cubic_start_s"])
                except TestbedError as exc:
                    failures += 1
                    print(f"p3 kernel: sample {s['order']} failed ({exc}); rebuilding the testbed", file=sys.stderr)
                    if session is not None:
                        session.__exit__(None, None, None)
                        session = None
                    if failures >= 3:
                        raise
                    continue
                wall_s = watch.elapsed_s
            failures = 0
            rec = {**s, "schema": SCHEMA, "load_avg": load, "load_avg_after": load_average(),
                   "lock_wait_s": round(waited_s, 3), "wall_s": round(wall_s, 3), "started_utc": started,
                   "config_hash": config.hash(), **res}
            records.append(rec)
            n += 1
            bar.update(1)
            bar.set_postfix_str(f"last {wall_s:.1f} s, load {load[0]:.1f}")
            time.sleep(yield_s)  # flock is not fair: give a waiting campaign its turn
    finally:
        if session is not None:
            session.__exit__(None, None, None)
        bar.close()
    return n


def summarize_flow_samples(samples_by_flow: list[list[dict]], starts_mono_s: list[float], *, warmup_s: float,
                           window_s: float, measure_s: float | None = None) -> dict:
    """Throughputs of two concurrent flows over their common measured interval, from TCP_INFO samples.

    Parameters
    ----------
    samples_by_flow : list of two lists of dict
        Each flow's samples with ``t_s`` (since its own start) and ``bytes_acked``. [s], [bytes]
    starts_mono_s : list of two float
        Each flow's start on the shared monotonic clock. [s]
    warmup_s : float
        Discarded after the later start. [s]
    window_s : float
        Length of the sub-windows for the within-run spread. [s]
    measure_s : float, optional
        Cap on the measured span. [s]

    Returns
    -------
    dict
        ``span_s``, ``throughput_bps`` (list of two), ``window_throughput_bps`` (list of two lists, one
        value per whole sub-window), ``t0_mono_s``.
    """
    import numpy as np

    if len(samples_by_flow) != 2 or len(starts_mono_s) != 2:
        raise ValueError("samples_by_flow and starts_mono_s must describe two flows")
    series = []
    for samples, t0 in zip(samples_by_flow, starts_mono_s):
        t = np.array([s["t_s"] for s in samples if s.get("bytes_acked") is not None], float) + t0
        b = np.array([s["bytes_acked"] for s in samples if s.get("bytes_acked") is not None], float)
        if len(t) < 3:
            raise ValueError(f"a flow has {len(t)} TCP_INFO samples; need at least 3")
        series.append((t, b))
    lo = max(starts_mono_s) + warmup_s
    hi = min(t[-1] for t, _ in series)
    if measure_s is not None:
        hi = min(hi, lo + measure_s)
    if hi - lo < window_s:
        raise ValueError(f"measured span {hi - lo:.2f} s is shorter than window_s = {window_s} s "
                         "(flows too short or warmup_s too long)")
    edges = np.arange(lo, hi + 1e-9, window_s)
    out_tp, out_win = [], []
    for t, b in series:
        at = np.interp([lo, hi], t, b)
        out_tp.append(float((at[1] - at[0]) * 8 / (hi - lo)))
        w = np.interp(edges, t, b)
        out_win.append([float(x) for x in np.diff(w) * 8 / window_s])
    return {"span_s": float(hi - lo), "throughput_bps": out_tp, "window_throughput_bps": out_win, "t0_mono_s": lo}


def _median_after(samples: list[dict], t_from_s: float, key: str) -> float:
    import numpy as np

    vals = [s[key] for s in samples if s.get(key) is not None and s["t_s"] >= t_from_s]
    return float(np.median(vals)) if vals else math.nan


def kernel_frame(records: list[dict], config: P3Config = DEFAULT_CONFIG):
    """One row per kernel sample: RTTs, both throughputs, Jain's index, window spread, W_max estimates.

    ``*_wmax_segments`` estimates each flow's window at loss from its median
    ssthresh after warm-up (Linux sets ssthresh = beta cwnd at a loss: 0.5 for
    Reno, 0.7 for CUBIC); ``cubic_k_s`` is CUBIC's K for that W_max.
    """
    import numpy as np
    import pandas as pd

    from tcpmodels.models.cubic import cubic_k_s

    rows = []
    for r in records:
        flows = r["flows"]
        row = {"rep": r["rep"], "reno_rtt_ms": r["reno_rtt_ms"], "cubic_rtt_ms": r["cubic_rtt_ms"],
               "order": r["order"], "reno_start_s": r["reno_start_s"], "cubic_start_s": r["cubic_start_s"],
               "reno_ping_ms": r["ping_rtt_ms"][0], "cubic_ping_ms": r["ping_rtt_ms"][1],
               "load_avg_1m": r["load_avg"][0], "wall_s": r["wall_s"], "started_utc": r["started_utc"],
               "error": "; ".join(str(f.get("error")) for f in flows if f.get("error")) or None}
        for name, f in zip(("reno", "cubic"), flows):
            row[f"{name}_cc"] = f.get("cc_effective")
        try:
            s = summarize_flow_samples([f["samples"] for f in flows], [f["start_mono_s"] for f in flows],
                                       warmup_s=config.warmup_s, window_s=config.window_s, measure_s=config.measure_s)
        except (ValueError, KeyError) as exc:
            row["error"] = (row["error"] or "") + f" summary: {exc}"
            rows.append(row)
            continue
        row["span_s"] = s["span_s"]
        for i, name in enumerate(("reno", "cubic")):
            f = flows[i]
            t_from = s["t0_mono_s"] - f["start_mono_s"]
            row[f"{name}_bps"] = s["throughput_bps"][i]
            win = np.asarray(s["window_throughput_bps"][i])
            row[f"{name}_window_sd_bps"] = float(np.std(win, ddof=1)) if len(win) > 1 else math.nan
            row[f"{name}_srtt_ms"] = _median_after(f["samples"], t_from, "srtt_s") * 1e3
            row[f"{name}_cwnd_segments"] = _median_after(f["samples"], t_from, "cwnd_segments")
            ssth = _median_after(f["samples"], t_from, "ssthresh_segments")
            row[f"{name}_wmax_segments"] = ssth / (0.5 if name == "reno" else 0.7) if ssth < 1e8 else math.nan
            sm = [x for x in f["samples"] if x.get("total_retrans") is not None]
            row[f"{name}_retrans"] = int(sm[-1]["total_retrans"]) if sm else None
        wins = [np.asarray(w) for w in s["window_throughput_bps"]]
        jw = jain_index(wins[0], wins[1])
        row["n_windows"] = len(wins[0])
        row["jain_window_sd"] = float(np.std(jw, ddof=1)) if len(jw) > 1 else math.nan
        row["jain"] = jain_index(row["reno_bps"], row["cubic_bps"])
        row["total_bps"] = row["reno_bps"] + row["cubic_bps"]
        row["cubic_share"] = row["cubic_bps"] / row["total_bps"] if row["total_bps"] > 0 else math.nan
        w = row["cubic_wmax_segments"]
        row["cubic_k_s"] = float(cubic_k_s(w)) if w == w else math.nan
        rows.append(row)
    df = pd.DataFrame(rows)
    return df.sort_values(["reno_rtt_ms", "cubic_rtt_ms", "rep"]).reset_index(drop=True) if len(df) else df


# -------------------------------------------------------------------- ns-3
def ns3_plan(config: P3Config, phases=NS3_PHASES) -> list[dict]:
    """The ns-3 runs of ``phases`` as dicts (``phase, kind, x_exponent, seed, reno_rtt_ms, cubic_rtt_ms,
    reno_start_s, cubic_start_s``), in phase order.

    ``main<i>``: the three :data:`NS3_KINDS` x every pair at seed ``ns3_seeds[i]``, default exponent.
    ``slider<i>``: ``multiply`` and ``divide`` x every pair at ``slider_exponents[i]``, seed ``ns3_seeds[0]``.
    Start offsets are drawn from the seed and the pair, so the kinds of one seed share them.
    """
    import numpy as np

    plan = []
    for phase in phases:
        if phase.startswith("main"):
            i = int(phase[4:])
            if i >= len(config.ns3_seeds):
                raise ValueError(f"phase {phase!r} needs ns3_seeds[{i}]; ns3_seeds = {config.ns3_seeds}")
            seed = int(config.ns3_seeds[i])
            combos = [(k, config.x_exponent) for k in NS3_KINDS]
        elif phase.startswith("slider"):
            i = int(phase[6:])
            if i >= len(config.slider_exponents):
                raise ValueError(f"phase {phase!r} needs slider_exponents[{i}]; got {config.slider_exponents}")
            seed = int(config.ns3_seeds[0])
            combos = [(k, float(config.slider_exponents[i])) for k in ("multiply", "divide")]
        else:
            raise ValueError(f"phases must be among {NS3_PHASES}; got {phase!r}")
        # Reno-RTT-major (then CUBIC RTT, then kind): a phase cut short still has whole rows of Figs. 3-5
        for j, (reno, cubic) in enumerate(config.pairs_ms):
            for kind, expo in combos:
                rng = np.random.default_rng([seed, j, 7])
                off = rng.uniform(0.0, config.start_jitter_s, 2)
                plan.append({"phase": phase, "kind": kind, "x_exponent": float(expo) if kind != "standard" else 0.0,
                             "seed": seed, "reno_rtt_ms": reno, "cubic_rtt_ms": cubic,
                             "reno_start_s": round(float(off[0]), 4), "cubic_start_s": round(float(off[1]), 4)})
    return plan


def ns3_config(config: P3Config, run: dict):
    """The :class:`tcpmodels.sim.config.Dumbbell` of one planned ns-3 run (see :func:`ns3_plan`)."""
    from tcpmodels.sim.config import BulkApp, Dumbbell, Link, Sender, TcpOptions

    jitter_s = config.ns3_jitter_packets * 1500 * 8 / config.rate_bps

    def access(rtt_ms):
        return Link(rate_bps=10e9, delay_s=rtt_ms * 1e-3 / 2, queue_packets=10000, jitter_s=jitter_s)

    if run["kind"] == "standard":
        cubic = Sender(access=access(run["cubic_rtt_ms"]), variant="TcpCubic",
                       apps=(BulkApp(start_s=run["cubic_start_s"]),))
    elif run["kind"] in ("multiply", "divide"):
        cubic = Sender(access=access(run["cubic_rtt_ms"]), variant="TcpCubicX",
                       apps=(BulkApp(start_s=run["cubic_start_s"]),),
                       cc_params={"reading": run["kind"], "x_power_law": x_power_law_params(run["x_exponent"])})
    else:
        raise ValueError(f"kind must be one of {NS3_KINDS}; got {run['kind']!r}")
    reno = Sender(access=access(run["reno_rtt_ms"]), variant="TcpLinuxReno",
                  apps=(BulkApp(start_s=run["reno_start_s"]),))
    return Dumbbell(senders=(reno, cubic), bottleneck=Link(rate_bps=config.rate_bps, delay_s=0.0,
                                                           queue_bytes=config.buffer_bytes),
                    duration_s=config.ns3_duration_s, seed=int(run["seed"]), queue_bin_s=1.0,
                    tcp=TcpOptions(mss_bytes=config.mss_bytes, sndbuf_bytes=4 * config.rwnd_bytes,
                                   rcvbuf_bytes=config.rwnd_bytes, cubic_hystart=False))


def _ns3_summary(config: P3Config, run: dict, result) -> dict:
    """Throughputs of one ns-3 run after warm-up, its window spread and losses (what the dataset keeps)."""
    import numpy as np

    apps = result.apps.sort_values("flow_index")
    tp = result.throughput_bps(config.ns3_warmup_s, config.ns3_duration_s)
    idx = apps["flow_index"].to_list()
    reno_bps, cubic_bps = float(tp.loc[idx[0]]), float(tp.loc[idx[1]])
    edges = np.arange(config.ns3_warmup_s, config.ns3_duration_s + 1e-9, config.window_s)
    wins = [[float(result.throughput_bps(a, b).loc[i]) for a, b in zip(edges[:-1], edges[1:])] for i in idx[:2]]
    jw = jain_index(np.asarray(wins[0]), np.asarray(wins[1]))
    flows = result.flows
    lost = {}
    if "flow_index" in flows.columns and "lost_packets" in flows.columns:
        data = flows[flows["direction"] == "data"] if "direction" in flows.columns else flows
        lost = data.groupby("flow_index")["lost_packets"].sum().to_dict()
    rec = result.record
    return {**run, "reno_bps": reno_bps, "cubic_bps": cubic_bps, "jain": jain_index(reno_bps, cubic_bps),
            "total_bps": reno_bps + cubic_bps,
            "cubic_share": cubic_bps / (reno_bps + cubic_bps) if reno_bps + cubic_bps > 0 else math.nan,
            "reno_window_sd_bps": float(np.std(wins[0], ddof=1)), "cubic_window_sd_bps": float(np.std(wins[1], ddof=1)),
            "jain_window_sd": float(np.std(jw, ddof=1)), "n_windows": len(wins[0]),
            "reno_lost_packets": float(lost.get(idx[0], math.nan)),
            "cubic_lost_packets": float(lost.get(idx[1], math.nan)),
            "wall_s": float(rec.get("run_wall_s", math.nan)) + float(rec.get("ns3_load_wall_s", 0.0)),
            "date_utc": rec.get("date_utc"),
            "ns3_version": rec.get("ns3_version"),
            "duration_s": config.ns3_duration_s, "warmup_s": config.ns3_warmup_s}


def run_ns3(cache_dir: str | Path, config: P3Config = DEFAULT_CONFIG, *, phases=NS3_PHASES, progress: bool = True,
            on_failure: str = "collect", plan: list[dict] | None = None, processes: bool = True, client=None,
            n_workers: int = 1):
    """Run (or resume from the cache) the ns-3 runs of ``phases``; return their summaries.

    Each phase is one :func:`tcpmodels.sweep.sweep` call on a local cluster of
    ``n_workers`` (default one: leave a core to whoever else shares the host),
    so a campaign cut short keeps every finished phase and every finished run
    of the current one.

    Returns
    -------
    pandas.DataFrame
        One row per finished run (:func:`ns3_frame`).
    """
    from tcpmodels.sweep import run_sim, sweep

    plan = ns3_plan(config, phases) if plan is None else plan
    by_phase: dict[str, list[dict]] = {}
    for r in plan:
        by_phase.setdefault(r["phase"], []).append(r)
    for phase, runs in by_phase.items():
        sweep([ns3_config(config, r) for r in runs], run_sim, cache_dir=cache_dir, n_workers=n_workers, processes=processes,
              client=client, progress=progress, on_failure=on_failure, desc=f"p3 ns-3 {phase}")
    return ns3_frame(cache_dir, config, plan=plan)


def ns3_frame(cache_dir: str | Path, config: P3Config = DEFAULT_CONFIG, *, plan: list[dict] | None = None):
    """Summaries of every run of ``plan`` (default: all phases) already in the sweep cache; others are skipped.

    Entries are matched on their stored ``config.json`` (the scenario), not on
    the cache key: the key also hashes the sources of ``tcpmodels.sim``, which
    other work edits while a campaign runs (additions that leave the dumbbell
    unchanged). Where several entries hold one scenario the newest is used;
    ``cache_key`` names the entry read.
    """
    import pandas as pd

    from tcpmodels.sweep import canonical_json, read_cached

    plan = ns3_plan(config) if plan is None else plan
    cache = Path(cache_dir)
    entries: dict[str, tuple[float, str]] = {}
    for cfg_path in cache.glob("*/config.json"):
        key = cfg_path.parent.name
        if not (cfg_path.parent / "value.pkl").exists():
            continue
        try:
            text = canonical_json(json.loads(cfg_path.read_text()))
        except ValueError:
            continue
        mtime = cfg_path.stat().st_mtime
        if text not in entries or entries[text][0] < mtime:
            entries[text] = (mtime, key)
    rows = []
    for r in plan:
        hit_entry = entries.get(canonical_json(ns3_config(config, r)))
        if hit_entry is None:
            continue
        hit, value = read_cached(cache, hit_entry[1])
        if hit:
            rows.append({**_ns3_summary(config, r, value), "cache_key": hit_entry[1]})
    return pd.DataFrame(rows)


# ------------------------------------------------------------------- fluid
def fluid_frame(config: P3Config = DEFAULT_CONFIG, *, exponents=None, loss_sharings=("proportional",),
                duration_s: float = 30.0, warmup_s: float = 5.0, steps_per_rtt: float = 5.0,
                progress: bool = False):
    """The fluid model (:func:`~tcpmodels.models.bottleneck.reno_cubic_bottleneck`) over the grid.

    One row per (pair, reading ``none``/``multiply``/``divide``, x exponent,
    loss sharing): both throughputs, Jain's index, losses, mean queueing delay,
    and the K of the CUBIC flow at the model's mean W_max before a loss (the
    K values that drive each case; :func:`~tcpmodels.models.cubic.kozu_k_s`).
    """
    import numpy as np
    import pandas as pd
    from tqdm import tqdm

    from tcpmodels.models.bottleneck import reno_cubic_bottleneck
    from tcpmodels.models.cubic import PowerLawX, kozu_k_s, kozu_x, x_power_law_params

    exponents = (config.x_exponent, *config.slider_exponents) if exponents is None else tuple(exponents)
    combos = [("none", 0.0)] + [(rd, e) for e in exponents for rd in ("multiply", "divide")]
    jobs = [(pair, rd, e, ls) for pair in config.pairs_ms for rd, e in combos for ls in loss_sharings]
    rows = []
    for (reno, cubic), rd, expo, ls in tqdm(jobs, desc="p3 fluid", disable=not progress, file=sys.stderr):
        xfn = PowerLawX(**x_power_law_params(expo)) if rd != "none" else None
        res = reno_cubic_bottleneck(capacity_bps=config.rate_bps, buffer_bytes=config.buffer_bytes,
                                    reno_rtt_s=reno * 1e-3, cubic_rtt_s=cubic * 1e-3, mss_bytes=config.mss_bytes + 52,
                                    duration_s=duration_s, warmup_s=warmup_s, max_window_bytes=config.rwnd_bytes,
                                    x_reading=rd, x_of_rtt=xfn, loss_sharing=ls,
                                    dt_s=min(reno, cubic) * 1e-3 / steps_per_rtt)
        tr = res.trace
        tr = tr[tr["t_s"] >= warmup_s]
        # window just before each loss sample: the previous sample's window
        prev = tr["cubic_cwnd_segments"].shift(1)
        drops = tr["cubic_cwnd_segments"] < 0.95 * prev
        w_max = float(prev[drops].mean()) if drops.any() else float(tr["cubic_cwnd_segments"].max())
        prev_r = tr["reno_cwnd_segments"].shift(1)
        drops_r = tr["reno_cwnd_segments"] < 0.95 * prev_r
        rows.append({"reno_rtt_ms": reno, "cubic_rtt_ms": cubic, "reading": rd, "x_exponent": expo,
                     "loss_sharing": ls, "reno_bps": res.reno_throughput_bps, "cubic_bps": res.cubic_throughput_bps,
                     "jain": res.jain_index, "cubic_share": res.cubic_share, "utilization": res.utilization,
                     "reno_loss_events": res.reno_loss_events, "cubic_loss_events": res.cubic_loss_events,
                     "mean_queue_delay_ms": res.mean_queue_delay_s * 1e3,
                     "cubic_wmax_segments": w_max,
                     "reno_wmax_segments": float(prev_r[drops_r].mean()) if drops_r.any() else math.nan,
                     "x": float(kozu_x(cubic * 1e-3, xfn)) if xfn else 1.0,
                     "cubic_k_s": float(kozu_k_s(w_max, cubic * 1e-3, reading=rd, x_of_rtt=xfn))
                     if np.isfinite(w_max) else math.nan,
                     "duration_s": duration_s, "warmup_s": warmup_s,
                     "dt_s": min(reno, cubic) * 1e-3 / steps_per_rtt})
    return pd.DataFrame(rows)


# ----------------------------------------------------------------- dataset
def build_dataset(records_path: str | Path | None, cache_dir: str | Path | None, out_dir: str | Path,
                  config: P3Config = DEFAULT_CONFIG, *, note: str = "", fluid: bool = True,
                  fluid_path: str | Path | None = None) -> dict:
    """Write ``p3_kernel.parquet``, ``p3_ns3.parquet``, ``p3_fluid.parquet`` and ``p3_provenance.json``.

    The fluid table is computed (:func:`fluid_frame`, a few minutes) unless
    ``fluid_path`` names one written earlier by the ``fluid`` command. Without
    ``records_path`` the kernel table already in ``out_dir`` is kept and the
    ``kernel`` section of its provenance is carried over, marked with the build
    it came from (to rebuild the ns-3 part where the kernel records are gone).
    """
    from datetime import datetime

    from tcpmodels.records import JsonlRecords, git_state, host_facts, load_average, utc_now

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    prov: dict = {"dataset": "p3", "written_utc": utc_now(), "generator": "tcpmodels.experiments.p3 dataset",
                  "command": " ".join(["python -m tcpmodels.experiments.p3", *sys.argv[1:]])
                  if sys.argv and sys.argv[0].endswith("p3.py") else None,
                  "config": config.to_dict(), "config_hash": config.hash(), "scaling": config.scaling(),
                  "files": []}
    if records_path is not None:
        recs = JsonlRecords(records_path, _KERNEL_KEY).read()
        if not recs:
            raise ValueError(f"no kernel records in {records_path}")
        kf = kernel_frame(recs, config)
        kf.to_parquet(out_dir / "p3_kernel.parquet", index=False, compression="zstd")
        kf.to_csv(out_dir / "p3_kernel.csv", index=False, float_format="%.6g")
        starts = sorted(r["started_utc"] for r in recs)
        walls = [r["wall_s"] for r in recs]
        last = max(recs, key=lambda r: r["started_utc"])
        prov["kernel"] = {
            "records": str(records_path), "n_samples": len(recs),
            "n_planned": len(config.pairs_ms) * config.reps, "reps_present": sorted({r["rep"] for r in recs}),
            "first_sample_utc": starts[0], "last_sample_utc": starts[-1],
            "sample_wall_s": {"sum": round(sum(walls), 1), "median": round(sorted(walls)[len(walls) // 2], 2),
                              "max": round(max(walls), 2)},
            "elapsed_first_to_last_s": round((datetime.fromisoformat(starts[-1])
                                              - datetime.fromisoformat(starts[0])).total_seconds() + last["wall_s"], 1),
            "lock_wait_s_sum": round(sum(r.get("lock_wait_s", 0.0) for r in recs), 1),
            "load_avg_1m": {"min": min(r["load_avg"][0] for r in recs), "max": max(r["load_avg"][0] for r in recs),
                            "median": sorted(r["load_avg"][0] for r in recs)[len(recs) // 2]},
            "errors": int(kf["error"].notna().sum()),
            "record_config_hashes": sorted({r.get("config_hash") for r in recs}),
            "config_hash_note": "records carry the hash of the whole P3Config when the campaign started; "
                                "ns3_duration_s changed 25 -> 20 s afterwards, no kernel parameter changed",
            "congestion_control_effective": sorted({str(x) for c in ("reno_cc", "cubic_cc") for x in kf[c]}),
            "throughput_definition": "tcpi_bytes_acked of each sender, sampled every sample_interval_s, over the "
                                     "common interval [later start + warmup_s, earlier end], at most measure_s",
        }
        from tcpmodels.testbed._system import tool_versions

        prov["tools"] = tool_versions()
        prov["files"] += ["p3_kernel.parquet", "p3_kernel.csv"]
    elif (out_dir / "p3_kernel.parquet").exists() and (out_dir / "p3_provenance.json").exists():
        previous = json.loads((out_dir / "p3_provenance.json").read_text())
        if "kernel" in previous:
            origin = previous["kernel"].get("carried_over_from_build_utc", previous.get("written_utc"))
            prov["kernel"] = {**previous["kernel"], "carried_over_from_build_utc": origin}  # the build that ran them
            prov["tools"] = previous.get("tools")
            prov["files"] += [f for f in ("p3_kernel.parquet", "p3_kernel.csv") if (out_dir / f).exists()]
    if cache_dir is not None:
        nf = ns3_frame(cache_dir, config)
        if len(nf):
            nf.to_parquet(out_dir / "p3_ns3.parquet", index=False, compression="zstd")
            nf.to_csv(out_dir / "p3_ns3.csv", index=False, float_format="%.6g")
            prov["ns3"] = {"cache_dir": str(cache_dir), "n_runs": len(nf), "n_planned": len(ns3_plan(config)),
                           "phases_complete": [p for p in NS3_PHASES
                                               if len(nf[nf["phase"] == p]) == len(ns3_plan(config, (p,)))],
                           "runs_per_phase": nf.groupby("phase").size().to_dict(),
                           "wall_s_sum": round(float(nf["wall_s"].sum()), 1),
                           "first_run_utc": str(nf["date_utc"].min()), "last_run_utc": str(nf["date_utc"].max()),
                           "load_avg_1m_at_build": load_average()[0],
                           "matching": "cache entries matched on their scenario config.json (see ns3_frame)",
                           "wall_s_median": round(float(nf["wall_s"].median()), 1),
                           "ns3_version": sorted({str(v) for v in nf["ns3_version"]}),
                           "throughput_definition": "bytes received by each sink in [ns3_warmup_s, ns3_duration_s]",
                           "x_of_rtt": "power law through (1 s, 1) with exponent x_exponent; -1/3 gives 10 at 1 ms "
                                       "(assumption read off Fig. 2)"}
            prov["files"] += ["p3_ns3.parquet", "p3_ns3.csv"]
    if fluid:
        import pandas as pd

        ff = pd.read_parquet(fluid_path) if fluid_path is not None else fluid_frame(config)
        ff.to_parquet(out_dir / "p3_fluid.parquet", index=False, compression="zstd")
        prov["fluid"] = {"n_rows": len(ff), "model": "tcpmodels.models.bottleneck.reno_cubic_bottleneck",
                         "source": str(fluid_path) if fluid_path is not None else "computed by dataset",
                         "duration_s": float(ff["duration_s"].iloc[0]), "warmup_s": float(ff["warmup_s"].iloc[0]),
                         "loss_sharing": sorted(ff["loss_sharing"].unique())}
        prov["files"] += ["p3_fluid.parquet"]
    prov.update({"host": host_facts(), "git": git_state(REPO), "load_avg_at_write": load_average(),
                 "dataset_build_wall_s": round(time.monotonic() - t0, 1), "note": note})
    (out_dir / "p3_provenance.json").write_text(json.dumps(prov, indent=1, default=str) + "\n")
    return prov


# --------------------------------------------------------------------- CLI
def main(argv: list[str] | None = None) -> int:
    """Command line: ``kernel``, ``ns3``, ``fluid``, ``dataset`` (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m tcpmodels.experiments.p3", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("kernel", help="run or resume the kernel grid (root; host lock per sample)")
    p.add_argument("--records", required=True)
    p.add_argument("--limit", type=int)
    p.add_argument("--reps", type=int)
    p.add_argument("--no-progress", action="store_true")
    p = sub.add_parser("ns3", help="run or resume the ns-3 grid (cached sweep, one worker)")
    p.add_argument("--cache", required=True)
    p.add_argument("--phases", nargs="+", default=list(NS3_PHASES), choices=NS3_PHASES)
    p.add_argument("--kinds", nargs="+", choices=NS3_KINDS, help="only these CUBIC variants")
    p.add_argument("--reno-rtts-ms", nargs="+", type=float, help="only these Reno RTTs [ms]")
    p.add_argument("--workers", type=int, default=1, help="ns-3 processes at once (default 1)")
    p.add_argument("--no-progress", action="store_true")
    p = sub.add_parser("fluid", help="the fluid model over the grid -> one Parquet file")
    p.add_argument("--out", required=True)
    p.add_argument("--no-progress", action="store_true")
    p = sub.add_parser("dataset", help="records + ns-3 cache + fluid model -> Parquet + provenance")
    p.add_argument("--records")
    p.add_argument("--cache")
    p.add_argument("--fluid", help="fluid table written by the fluid command (else computed)")
    p.add_argument("--out", required=True)
    p.add_argument("--note", default="")
    args = parser.parse_args(argv)
    config = DEFAULT_CONFIG
    from tcpmodels.experiments.campaign import campaign_errors

    with campaign_errors("p3"):
        if args.cmd == "kernel":
            if args.reps:
                config = replace(config, reps=args.reps)
            n = run_kernel_campaign(args.records, config, limit=args.limit, progress=not args.no_progress)
            print(json.dumps({"measured": n, "records": args.records}))
        elif args.cmd == "ns3":
            plan = [r for r in ns3_plan(config, tuple(args.phases))
                    if (not args.kinds or r["kind"] in args.kinds)
                    and (not args.reno_rtts_ms or r["reno_rtt_ms"] in args.reno_rtts_ms)]
            df = run_ns3(args.cache, config, plan=plan, progress=not args.no_progress, n_workers=args.workers)
            print(json.dumps({"runs_cached": len(df), "cache": args.cache}))
        elif args.cmd == "fluid":
            Path(args.out).parent.mkdir(parents=True, exist_ok=True)
            df = fluid_frame(config, progress=not args.no_progress)
            df.to_parquet(args.out, index=False, compression="zstd")
            print(json.dumps({"rows": len(df), "out": args.out}))
        else:
            prov = build_dataset(args.records, args.cache, args.out, config, note=args.note, fluid_path=args.fluid)
            print(json.dumps({k: prov.get(k, {}).get("n_samples" if k == "kernel" else "n_runs")
                              for k in ("kernel", "ns3")}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
