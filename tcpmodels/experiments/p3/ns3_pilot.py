"""P3 in ns-3: the pilot of a run length, counting the CUBIC flow's congestion epochs in traced runs.

A campaign run does not trace windows (a traced 115 s run writes ~1 M window, RTT and state changes,
16 MB, and holds 1 GB while it runs). The pilot runs chosen runs of a setting once more with
``trace_cwnd`` (tracing reads the socket's state and changes nothing in the simulation: the summary of a
traced run equals the campaign's run of the same scenario) and counts, for the CUBIC flow, the
congestion events (ssthresh set below the window: a reduction) inside the measured span
``[ns3_warmup_s, ns3_duration_s]``; an *epoch* is the time between two consecutive events, so the
span holds ``events - 1`` whole epochs. The setting is long enough when the longest-K flow has at
least 10 whole epochs.
"""

from __future__ import annotations

import json
import math
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from tcpmodels.experiments.p3.config import REPO, P3Config
from tcpmodels.experiments.p3.ns3 import ns3_config, ns3_record, ns3_run_id, ns3_summary

__all__ = ["cubic_epochs", "run_ns3_pilot", "MIN_EPOCHS"]

#: whole CUBIC epochs the measured span must hold for the longest-K flow (issue 17)
MIN_EPOCHS = 10


def cubic_epochs(cwnd: pd.DataFrame, flow_index: int, start_s: float, end_s: float, mss_bytes: int) -> dict:
    """Congestion epochs of one connection from its traced window (``SimResult.cwnd``).

    A congestion event is an ssthresh change to a value below the window just before it (the
    window's reduction; the initial ssthresh of 2^32 - 1 bytes is not one). W_max of the event is
    that window; the observed K is the time from the event until the window is back at W_max after
    the recovery (CA_OPEN again: PRR moves the window around W_max while it recovers), if that happens
    before the next event.

    Parameters
    ----------
    cwnd : pandas.DataFrame
        ``t_s`` [s], ``flow_index``, ``what`` (``cwnd_bytes``, ``ssthresh_bytes``, ``cong_state``, ...),
        ``value``, in the order the changes happened.
    flow_index : int
        The connection.
    start_s, end_s : float
        The measured span. [s]
    mss_bytes : int
        Segment size. [bytes]

    Returns
    -------
    dict
        ``events_s`` (times of the events in the span) [s], ``n_events``, ``n_epochs`` (whole epochs in
        the span: ``n_events - 1``, at least 0), ``epoch_s`` (their lengths) [s], ``w_max_segments``
        (per event) [segments], ``k_observed_s`` (per epoch, NaN where the window did not recover
        before the next event) [s] and ``ca_loss_entries`` (entries into CA_LOSS, i.e. RTOs, in the span).
    """
    f = cwnd[cwnd["flow_index"] == flow_index]
    what = f["what"].astype(str).to_numpy()
    t = f["t_s"].to_numpy(float)
    v = f["value"].to_numpy(float)
    last_cwnd = math.nan
    events, wmax = [], []
    cw_t, cw_v = [], []
    for ti, wi, vi in zip(t, what, v):
        if wi == "cwnd_bytes":
            last_cwnd = vi
            cw_t.append(ti)
            cw_v.append(vi)
        elif wi == "ssthresh_bytes" and last_cwnd == last_cwnd and vi < last_cwnd:
            if start_s <= ti <= end_s:
                events.append(ti)
                wmax.append(last_cwnd / mss_bytes)
    cw_t, cw_v = np.asarray(cw_t), np.asarray(cw_v) / mss_bytes
    open_t = t[(what == "cong_state") & (v == 0.0)]  # back in CA_OPEN: the recovery is over
    k_obs = []
    for i in range(len(events) - 1):
        ends = open_t[(open_t > events[i]) & (open_t < events[i + 1])]
        back = (cw_t >= ends[0]) & (cw_t < events[i + 1]) & (cw_v >= wmax[i]) if len(ends) else np.zeros(0, bool)
        k_obs.append(float(cw_t[back][0] - events[i]) if back.any() else math.nan)
    state = (what == "cong_state") & (v == 4.0) & (t >= start_s) & (t <= end_s)
    return {"events_s": [round(float(x), 4) for x in events], "n_events": len(events),
            "n_epochs": max(len(events) - 1, 0), "epoch_s": [round(float(x), 4) for x in np.diff(events)],
            "w_max_segments": [round(float(x), 2) for x in wmax], "k_observed_s": k_obs,
            "ca_loss_entries": int(state.sum())}


def _stats(values: list) -> dict:
    a = np.asarray([x for x in values if x == x], dtype=float)
    if not len(a):
        return {"n": 0}
    return {"n": int(len(a)), "min": round(float(a.min()), 3), "median": round(float(np.median(a)), 3),
            "mean": round(float(a.mean()), 3), "max": round(float(a.max()), 3)}


def run_ns3_pilot(config: P3Config, runs: list[dict], *, out: str | Path | None = None,
                  work_dir: str | Path | None = None) -> dict:
    """Run ``runs`` of a setting with window tracing, one after another; count the CUBIC flow's epochs.

    Parameters
    ----------
    config : P3Config
        The setting (duration, warm-up, rate, x(RTT)).
    runs : list of dict
        Entries of :func:`~tcpmodels.experiments.p3.ns3.ns3_plan`.
    out : str or Path, optional
        JSON file for the result. Under the repository's ``data/`` it is shipped: a working tree with
        uncommitted changes is refused before anything runs (:func:`tcpmodels.records.shipped_git_state`).
    work_dir : str or Path, optional
        Where the simulator writes (default a temporary folder, removed after each run).

    Returns
    -------
    dict
        ``setting`` (duration, warm-up [s], rate [bit/s], seeds), ``rule`` (``config.scaling()["ns3"]``:
        the longest K of a flow alone [s] and the span it asks for), ``min_epochs``, and per run
        ``runs``: ``run_id``, the plan entry, ``wall_s`` (process wall time) [s], ``sim_s_per_wall_s``,
        ``load_avg`` before and after, the run's table row (:func:`ns3_summary`), and per flow (``cubic``,
        ``reno``) the epochs of :func:`cubic_epochs` with their statistics, the model K at each observed
        W_max (CUBIC: in the run's reading) [s], and ``enough`` (CUBIC has at least :data:`MIN_EPOCHS`);
        ``git`` (the commit that ran) and ``host``.

    Raises
    ------
    tcpmodels.records.DirtyTreeError
        If ``out`` is shipped and the working tree is dirty.
    """
    import os

    from tcpmodels.models.cubic import PowerLawX, cubic_k_s, kozu_k_s, x_power_law_params
    from tcpmodels.records import git_state, host_facts, load_average, shipped_git_state, utc_now
    from tcpmodels.sim.run import run_config

    git = shipped_git_state(REPO, Path(out).parent) if out is not None else git_state(REPO)
    sc = config.scaling()["ns3"]
    res = {"written_utc": utc_now(), "git": git, "host": host_facts(), "setting": {"duration_s": config.ns3_duration_s,
                                                 "warmup_s": config.ns3_warmup_s,
                                                 "measure_s": config.ns3_duration_s - config.ns3_warmup_s,
                                                 "rate_bps": config.ns3_rate_bps, "seeds": list(config.ns3_seeds)},
           "rule": {k: sc[k] for k in ("longest_k", "measure_s_for_10_epochs", "duration_s_for_10_epochs")},
           "min_epochs": MIN_EPOCHS, "nice": os.nice(0),
           "definition": "congestion event: ssthresh set below the window just before it; epoch: time between two "
                         "consecutive events inside [ns3_warmup_s, ns3_duration_s]; traced with trace_cwnd "
                         "(the campaign's scenario otherwise)",
           "runs": []}
    for run in runs:
        scenario = ns3_config(config, run)
        traced = replace(scenario, trace_cwnd=True)
        load0 = load_average()
        with tempfile.TemporaryDirectory(dir=work_dir) as tmp:
            t0 = time.monotonic()
            result = run_config(traced, Path(tmp) / "run")
            wall = time.monotonic() - t0
            flows = {}
            for name, idx in (("reno", 0), ("cubic", 1)):
                ep = cubic_epochs(result.cwnd, idx, config.ns3_warmup_s, config.ns3_duration_s, config.mss_bytes)
                flows[name] = {**ep, "epoch_stats_s": _stats(ep["epoch_s"]),
                               "w_max_stats_segments": _stats(ep["w_max_segments"]),
                               "k_observed_stats_s": _stats(ep["k_observed_s"])}
            row = ns3_summary(ns3_record(config, run, result))
        xfn = PowerLawX(**x_power_law_params(run["x_exponent"] if run["kind"] != "standard" else config.x_exponent))
        w = np.asarray(flows["cubic"]["w_max_segments"], dtype=float)
        if run["kind"] == "standard":
            k_model = cubic_k_s(w) if len(w) else w
        else:
            k_model = kozu_k_s(w, run["cubic_rtt_ms"] / 1e3, reading=run["kind"], x_of_rtt=xfn) if len(w) else w
        flows["cubic"]["k_model_stats_s"] = _stats(list(np.atleast_1d(k_model)))
        flows["cubic"]["enough"] = flows["cubic"]["n_epochs"] >= MIN_EPOCHS
        res["runs"].append({"run_id": ns3_run_id(run, config), **run, "wall_s": round(wall, 1),
                            "sim_s_per_wall_s": result.record.get("sim_s_per_wall_s"),
                            "run_wall_s": result.record.get("run_wall_s"),
                            "load_avg_before": load0, "load_avg_after": load_average(),
                            "summary": row, "flows": flows})
        if out is not None:
            Path(out).parent.mkdir(parents=True, exist_ok=True)
            Path(out).write_text(json.dumps(res, indent=1, default=str) + "\n")
    return res
