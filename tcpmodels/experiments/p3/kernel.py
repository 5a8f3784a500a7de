"""P3 on the real Linux stack: the plan of samples, the runner and the per-sample table.

The testbed a sample runs on is :class:`~tcpmodels.experiments.p3.kernel_session.KernelSession`; what the
host lost outside the bottleneck queue, :mod:`tcpmodels.experiments.p3.cpu_loss`.
"""

from __future__ import annotations

import math

import pandas as pd

from tcpmodels.datasets import KERNEL_TESTBEDS
from tcpmodels.experiments.campaign import KernelGrid
from tcpmodels.experiments.campaign_testbed import kernel_testbed_of
from tcpmodels.experiments.p3.config import DEFAULT_CONFIG, SCHEMA, P3Config, kernel_campaign_label
from tcpmodels.experiments.p3.cpu_loss import (
    CPU_TIME_COLUMNS,
    TCP_EXT_COLUMNS,
    queue_drops_once,
    record_cpu_drops,
    record_cpu_time_s,
)
from tcpmodels.experiments.p3.kernel_session import KernelSession
from tcpmodels.models.fairness import jain_index
from tcpmodels.records.series import as_sample_list

__all__ = ["TESTBEDS", "KERNEL_KEY", "kernel_plan", "run_kernel_campaign", "summarize_flow_samples", "kernel_frame"]


# ---------------------------------------------------------------- kernel plan
#: the testbeds a kernel sample can have run on (:func:`tcpmodels.experiments.campaign_testbed.kernel_testbed_of`)
TESTBEDS = KERNEL_TESTBEDS


def kernel_plan(config: P3Config) -> list[dict]:
    """Every kernel sample in run order: repetition 0 of all pairs (shuffled), then 1, ...

    Each pair runs its kinds (``config.kernel_kinds``) back to back, the order reversed
    every other pair so that consecutive samples share a kind: ``tm_cubic_x`` is loaded
    once for each block of samples of one reading, and a campaign stopped part-way leaves
    whole matched sets (every kind of a pair). Each sample carries the two flows' start
    offsets [s], drawn here per repetition and pair and shared by the kinds (the kinds of
    one pair and repetition differ only in the CUBIC variant), so a rerun repeats them.

    Parameters
    ----------
    config : P3Config
        The grid (``pairs_ms``), ``reps``, ``kernel_kinds``, ``start_jitter_s`` and the ``seed``
        of the order and offsets.

    Returns
    -------
    list of dict
        One per sample: ``campaign`` (:func:`~tcpmodels.experiments.p3.config.kernel_campaign_label`: ``"p3_kernel"``, or
        ``"p3_kernel_steered"`` with ``config.kernel_keep_flow_order``, ``"p3_kernel_pinned"`` with
        ``config.kernel_pin_delay_elements`` too, so that the testbeds' samples of
        one repetition and pair are kept apart in one records file), ``rep``, ``kind``, ``reno_rtt_ms``,
        ``cubic_rtt_ms`` [ms], ``order``, ``reno_start_s``, ``cubic_start_s`` [s]. The order and offsets
        do not depend on the testbed: a steered sample repeats the unsteered one's offsets (a paired comparison).
    """
    import numpy as np

    rng = np.random.default_rng(config.seed)
    label = kernel_campaign_label(config.kernel_keep_flow_order, config.kernel_pin_delay_elements)
    pairs = config.pairs_ms
    plan = []
    for rep in range(config.reps):
        for i in rng.permutation(len(pairs)):
            reno, cubic = pairs[int(i)]
            off = rng.uniform(0.0, config.start_jitter_s, 2) if config.start_jitter_s > 0 else np.zeros(2)
            kinds = config.kernel_kinds if (len(plan) // len(config.kernel_kinds)) % 2 == 0 \
                else config.kernel_kinds[::-1]
            for kind in kinds:
                plan.append({"campaign": label, "rep": rep, "kind": kind, "reno_rtt_ms": reno,
                             "cubic_rtt_ms": cubic, "order": len(plan),
                             "reno_start_s": round(float(off[0]), 4), "cubic_start_s": round(float(off[1]), 4)})
    return plan


KERNEL_KEY = ("campaign", "rep", "kind", "reno_rtt_ms", "cubic_rtt_ms")


def _session_for(config: P3Config, s: dict, session: KernelSession | None) -> KernelSession:
    if session is None:
        return KernelSession(config, s["reno_rtt_ms"], s["cubic_rtt_ms"], s.get("kind", "standard")).__enter__()
    session.set_kind(s.get("kind", "standard"))
    session.set_rtts(s["reno_rtt_ms"], s["cubic_rtt_ms"])
    return session


def _record(config: P3Config, s: dict, session: KernelSession, git: dict) -> dict:
    return {"schema": SCHEMA, "config_hash": config.hash(), "rate_bps": config.rate_bps,
            "buffer_bytes": config.buffer_bytes, "warmup_s": config.warmup_s, "measure_s": config.measure_s,
            "git": git, **session.run(s["reno_start_s"], s["cubic_start_s"])}


#: Run (or resume) the kernel grid, a :class:`~tcpmodels.experiments.campaign.KernelGrid`:
#: ``run_kernel_campaign(records_path, config=DEFAULT_CONFIG, *, limit, progress, lock_timeout_s, plan, yield_s)``
#: returns the samples measured by the call; samples on file (same repetition, kind and RTT pair,
#: :data:`KERNEL_KEY`) are skipped; ``plan`` replaces :func:`kernel_plan`:
#: :func:`~tcpmodels.experiments.p3.cpu_loss.cpu_loss_repeat_plan`'s, or a test's. One testbed, its delays and
#: CUBIC variant set per sample.
run_kernel_campaign = KernelGrid(key=KERNEL_KEY, plan_of=kernel_plan, session_for=_session_for, measure=_record,
                                 desc="p3 kernel", default_config=DEFAULT_CONFIG)


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


def kernel_frame(records: list[dict], config: P3Config = DEFAULT_CONFIG) -> pd.DataFrame:
    """One row per kernel sample: RTTs, both throughputs, Jain's index, window spread, W_max estimates.

    ``*_wmax_segments`` estimates each flow's window at loss from its median
    ssthresh after warm-up (Linux sets ssthresh = beta cwnd at a loss: 0.5 for
    Reno, 0.7 for CUBIC); ``cubic_k_s`` is CUBIC's K for that W_max.

    Parameters
    ----------
    records : list of dict
        Records of :func:`run_kernel_campaign`.
    config : P3Config
        ``warmup_s``, ``window_s`` and ``measure_s`` of :func:`summarize_flow_samples`.

    Returns
    -------
    pandas.DataFrame
        Sorted by ``kind, reno_rtt_ms, cubic_rtt_ms, rep``: ``kind``, ``cubic_cc_reading``,
        ``rate_bps`` [bit/s], ``buffer_bytes`` [bytes], ``measure_s`` [s], ping RTTs [ms], ``reno_bps``,
        ``cubic_bps``, ``total_bps``, window standard deviations [bit/s], ``jain``,
        ``jain_window_sd``, ``cubic_share`` [-], median srtt [ms] and cwnd [segments],
        ``*_wmax_segments``, ``cubic_k_s``, ``cubic_k_observed_s`` [s], ``cubic_k_epochs``,
        ``queue_drops`` (each drop of the bottleneck queue once, :func:`~tcpmodels.experiments.p3.cpu_loss.queue_drops_once`),
        ``delay_element_drops`` (frames the delay elements lost during the transfers; None in records
        before 2026-11-28, which did not read them) and ``cpu_drops`` (drops outside the bottleneck
        queue: other qdiscs', the interfaces' and, where read, the delay elements'; None in older
        records) [packets], the columns of :data:`~tcpmodels.experiments.p3.cpu_loss.TCP_EXT_COLUMNS` (None in records before
        2026-11-28), the columns of :data:`~tcpmodels.experiments.p3.cpu_loss.CPU_TIME_COLUMNS` (seconds the host's CPUs spent so during the
        transfers, summed over the CPUs; None in records before 2026-12-03), retransmissions, load,
        ``wall_s`` [s], ``campaign`` (the record's label,
        :func:`~tcpmodels.experiments.p3.config.kernel_campaign_label`, + :data:`~tcpmodels.experiments.p3.cpu_loss.REPEAT_SUFFIX` for a repeat of :func:`~tcpmodels.experiments.p3.cpu_loss.cpu_loss_repeat_plan`),
        ``repeats_started_utc`` (a repeat: when the sample it repeats started; else None), ``testbed`` (one of
        :data:`TESTBEDS`,
        :func:`~tcpmodels.experiments.campaign_testbed.kernel_testbed_of`: ``pinned`` if the record names pinned delay
        elements, ``steered`` if it has an RPS mask, else ``reordering``) and
        ``error`` (a sample whose samples cannot be summarised has only its key columns and ``error``).
    """
    import numpy as np

    from tcpmodels.experiments.kernel_coupled_cc import observed_k
    from tcpmodels.models.cubic import cubic_k_s

    rows = []
    for r in records:
        flows = [{**f, "samples": as_sample_list(f["samples"])} if "samples" in f else f for f in r["flows"]]
        warmup_s, measure_s = r.get("warmup_s", config.warmup_s), r.get("measure_s", config.measure_s)
        params = r.get("cubic_cc_params") or {}
        row = {"kind": r.get("kind", "standard"), "cubic_cc_reading": params.get("reading"),
               "rate_bps": r.get("rate_bps", config.rate_bps), "buffer_bytes": r.get("buffer_bytes", config.buffer_bytes),
               "measure_s": measure_s, "rep": r["rep"], "reno_rtt_ms": r["reno_rtt_ms"], "cubic_rtt_ms": r["cubic_rtt_ms"],
               "order": r["order"], "reno_start_s": r["reno_start_s"], "cubic_start_s": r["cubic_start_s"],
               "reno_ping_ms": r["ping_rtt_ms"][0], "cubic_ping_ms": r["ping_rtt_ms"][1],
               "load_avg_1m": r["load_avg"][0], "wall_s": r["wall_s"], "started_utc": r["started_utc"],
               "error": "; ".join(str(f.get("error")) for f in flows if f.get("error")) or None,
               "campaign": r.get("campaign", "p3_kernel"), "testbed": kernel_testbed_of(r),
               "repeats_started_utc": r.get("repeats_started_utc")}
        d = r.get("drops") or {}
        row["queue_drops"] = queue_drops_once(d)
        elem = d.get("delay_element_drops")
        row["delay_element_drops"] = sum(elem.values()) if elem is not None else None
        row["cpu_drops"] = record_cpu_drops(r)
        for col, field in CPU_TIME_COLUMNS.items():
            row[col] = record_cpu_time_s(r, field)
        tcp_ext = r.get("tcp_ext")
        for col, (nodes, names) in TCP_EXT_COLUMNS.items():
            row[col] = sum(tcp_ext.get(n, {}).get(k, 0) for n in nodes for k in names) if tcp_ext is not None else None
        for name, f in zip(("reno", "cubic"), flows):
            row[f"{name}_cc"] = f.get("cc_effective")
        try:
            s = summarize_flow_samples([f["samples"] for f in flows], [f["start_mono_s"] for f in flows],
                                       warmup_s=warmup_s, window_s=config.window_s, measure_s=measure_s)
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
        t_from = s["t0_mono_s"] - flows[1]["start_mono_s"]
        cs = [x for x in flows[1]["samples"] if x.get("cwnd_segments") is not None and x.get("ca_state") is not None
              and x["t_s"] >= t_from]
        ks = observed_k(cs) if len(cs) > 20 else []
        row["cubic_k_observed_s"] = float(np.median([k["k_observed_s"] for k in ks])) if ks else math.nan
        row["cubic_k_epochs"] = len(ks)
        rows.append(row)
    df = pd.DataFrame(rows)
    return df.sort_values(["kind", "reno_rtt_ms", "cubic_rtt_ms", "rep"]).reset_index(drop=True) if len(df) else df
