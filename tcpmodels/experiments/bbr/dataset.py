"""Records of the kernel, ns-3 and pilot runs -> the ``bbr_*`` Parquet tables and their provenance.

``bbr_runs.parquet``
    One row per run and engine: the grid point, BBR's share in the measurement window and the
    model's (:func:`tcpmodels.models.bbr.ware_bbr_share` at the run's buffer), the link's use,
    the mean ProbeRTT episode of the BBR flows and the model's (q/c + 0.2 + l), the median
    queueing delay and the standing queue the model gives for BBR alone, drops, timing and load.
``bbr_flows.parquet``
    One row per flow: role, congestion control, throughput in the window.
``bbr_series.parquet``
    BBR's share in consecutive 5 s windows and since the start, per run (where it settles).
``bbr_probertt.parquet``
    One row per ProbeRTT episode of a BBR flow inside the window: a stretch at cwnd <= 4 packets
    lasting at least 200 ms (the kernel's and ns-3's ProbeRTT holds 4 packets that long; shorter
    stretches are loss recovery, which ns-3's TcpBbr enters hundreds of times a run). ns-3's cwnd trace
    flickers above 4 packets for single ACKs inside ProbeRTT, so its stretches less than
    :data:`NS3_EPISODE_GAP_S` apart are one episode.
``bbr_provenance.json``
    What ran, where, with which code, how long it took; the pilot's choice of run length.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from tcpmodels.datasets import write_provenance, write_tables
from tcpmodels.datasets.bbr import SCHEMA
from tcpmodels.experiments.bbr import metrics
from tcpmodels.experiments.bbr.config import DEFAULT_CONFIG, KEY, PILOT_CONFIG, REPO
from tcpmodels.models.bbr import (
    BBR_PROBE_RTT_DURATION_S,
    bbr_standing_queue_packets,
    rate_pps,
    ware_bbr_share,
    ware_loss_based_share,
)

__all__ = ["FILES", "SERIES_WINDOW_S", "NS3_EPISODE_GAP_S", "merge_episodes", "run_rows", "build_dataset"]

#: the files :func:`build_dataset` writes
FILES = ("bbr_runs.parquet", "bbr_flows.parquet", "bbr_series.parquet", "bbr_probertt.parquet", "bbr_provenance.json")
#: ns-3 stretches at cwnd <= 4 packets closer than this are one ProbeRTT episode. [s]
NS3_EPISODE_GAP_S = 0.1
#: window of the share series. [s]
SERIES_WINDOW_S = 5.0
_POINT = ("group", "competitor", "n_loss", "queue_bdp", "n_bbr", "buffer_packets")


def merge_episodes(stretches: list[list[float]], gap_s: float = NS3_EPISODE_GAP_S) -> list[list[float]]:
    """Join ``[start, end]`` stretches less than ``gap_s`` apart into one. [s]

    Parameters
    ----------
    stretches : list of [float, float]
        Sorted by start. [s]
    gap_s : float
        Largest gap inside one episode. [s]

    Returns
    -------
    list of [float, float]
        The merged stretches.

    Examples
    --------
    >>> merge_episodes([[1.0, 1.05], [1.1, 1.3], [5.0, 5.2]])
    [[1.0, 1.3], [5.0, 5.2]]
    """
    out: list[list[float]] = []
    for a, b in stretches:
        if out and a - out[-1][1] < gap_s:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def _ns3_flow_bytes(flow: dict, t0: float, t1: float) -> float:
    ends = np.asarray(flow["bin_end_s"], dtype=float)
    rx = np.asarray(flow["rx_bytes"], dtype=float)
    return float(rx[(ends > t0 + 1e-9) & (ends <= t1 + 1e-9)].sum())


def _ns3_share(flows: list[dict], t0: float, t1: float) -> tuple[float, dict]:
    got = {"bbr": 0.0, "loss": 0.0}
    for f in flows:
        got[f["role"]] += _ns3_flow_bytes(f, t0, t1)
    total = got["bbr"] + got["loss"]
    return (got["bbr"] / total if total > 0 else float("nan")), got


def run_rows(record: dict, engine: str) -> tuple[dict, list[dict], list[dict], list[dict]]:
    """One record's rows of the runs, flows, series and ProbeRTT tables.

    Parameters
    ----------
    record : dict
        A record of :func:`~tcpmodels.experiments.bbr.kernel.run_kernel_campaign` (``engine`` ``kernel``)
        or :func:`~tcpmodels.experiments.bbr.ns3.run_ns3_campaign` (``ns3``).
    engine : {"kernel", "ns3"}
        Which.

    Returns
    -------
    tuple
        ``(run, flows, series, episodes)``: a dict and three lists of dicts.
    """
    cfg = record["config"]
    c = float(rate_pps(cfg["rate_bps"], cfg["packet_bytes"]))
    l_s = float(cfg["base_rtt_s"])
    t0, t1 = float(cfg["warmup_s"]), float(cfg["warmup_s"]) + float(cfg["measure_s"])
    q = float(record["buffer_packets"])
    key = {k: record[k] for k in KEY}
    run = {"engine": engine, **key, **{k: record[k] for k in _POINT}, "order": record["order"],
           "rate_bps": cfg["rate_bps"], "base_rtt_s": l_s, "packet_bytes": cfg["packet_bytes"],
           "warmup_s": t0, "measure_s": t1 - t0}
    flows_out, series, episodes = [], [], []
    if engine == "kernel":
        flows = record["flows"]
        share = metrics.bbr_share(flows, t0, t1)
        delivered = {f_i: metrics.delivered_bytes(f, t0, t1) for f_i, f in enumerate(flows)}
        for f_i, f in enumerate(flows):
            flows_out.append({"engine": engine, **key, "flow": f_i, "role": f["role"], "cc": f["cc_effective"],
                              "throughput_bps": delivered[f_i] * 8 / (t1 - t0)})
        for w in metrics.share_series(flows, t1, SERIES_WINDOW_S):
            series.append({"engine": engine, **key, **w})
        interval = float(cfg.get("sample_interval_s", 0.02))
        for f_i, f in enumerate(flows):
            if f["role"] == "bbr":
                for d in metrics.probe_rtt_episodes_s(f, t0, t1, interval):
                    if d >= BBR_PROBE_RTT_DURATION_S:
                        episodes.append({"engine": engine, **key, "flow": f_i, "duration_s": d})
        base = float(record["ping_rtt_ms"]) / 1e3
        queue_delay = metrics.standing_queue_s(flows, t0, t1, base)
        run.update(ping_rtt_ms=record["ping_rtt_ms"], queue_drops=record["drops"]["queue_drops"],
                   cpu_drops=record["drops"]["cpu_drops"], load_avg_1m=record["load_avg"][0],
                   wall_s=record["wall_s"], started_utc=record["started_utc"])
    else:
        flows = record["flows"]
        share, _ = _ns3_share(flows, t0, t1)
        for f_i, f in enumerate(flows):
            flows_out.append({"engine": engine, **key, "flow": f_i, "role": f["role"], "cc": f["cc"],
                              "throughput_bps": _ns3_flow_bytes(f, t0, t1) * 8 / (t1 - t0)})
        t = SERIES_WINDOW_S
        while t <= t1 + 1e-9:
            series.append({"engine": engine, **key, "t_end_s": round(t, 3),
                           "share": _ns3_share(flows, t - SERIES_WINDOW_S, t)[0],
                           "share_since_start": _ns3_share(flows, 0.0, t)[0]})
            t += SERIES_WINDOW_S
        for f_i, f in enumerate(flows):
            for a, b in merge_episodes(f["probe_rtt"]):
                if a > t0 and b < t1 and b - a >= BBR_PROBE_RTT_DURATION_S:
                    episodes.append({"engine": engine, **key, "flow": f_i, "duration_s": b - a})
        qe = np.asarray(record["queue_bin_end_s"], dtype=float)
        qp = np.asarray(record["queue_packets"], dtype=float)
        sel = qp[(qe > t0) & (qe <= t1)]
        queue_delay = float(np.median(sel)) / c if sel.size else float("nan")
        run.update(ping_rtt_ms=float("nan"), queue_drops=np.nan, cpu_drops=np.nan, load_avg_1m=record["load_avg"][0],
                   wall_s=record["wall_s"], started_utc=record["started_utc"], seed=record.get("seed"))
    total_bps = sum(f["throughput_bps"] for f in flows_out)
    ep = [e["duration_s"] for e in episodes]
    n = int(record["n_bbr"])
    alone = record["competitor"] == "none"
    run.update(
        share_bbr=share if not alone else float("nan"),
        utilization=total_bps / cfg["rate_bps"],
        model_loss_share=float(ware_loss_based_share(c, l_s, q, n)) if not alone else float("nan"),
        model_share_bbr=float(ware_bbr_share(c, l_s, q, n)) if not alone else float("nan"),
        probe_rtt_episodes=len(ep), probe_rtt_mean_s=float(np.mean(ep)) if ep else float("nan"),
        model_probe_rtt_s=q / c + BBR_PROBE_RTT_DURATION_S + l_s, queue_delay_s=queue_delay,
        standing_queue_bdp=queue_delay / l_s,
        model_standing_queue_bdp=float(bbr_standing_queue_packets(c, l_s, n, q)) / (c * l_s) if alone else float("nan"))
    run["model_error"] = run["share_bbr"] - run["model_share_bbr"]
    return run, flows_out, series, episodes


def _read(paths: Sequence[str | Path]) -> list[dict]:
    """Records from JSONL files (``runs/...jsonl``) or shipped stems (``data/datasets/bbr_kernel_records``)."""
    import json

    from tcpmodels.records import JsonlRecords
    from tcpmodels.records.parts import shipped_record_lines

    recs = []
    for p in paths:
        if str(p).endswith(".jsonl"):
            recs += JsonlRecords(p, KEY).read()
        else:
            lines = shipped_record_lines(p)
            if not lines:
                raise ValueError(f"no records shipped under {p} (expected {p}.jsonl.gz)")
            recs += [json.loads(line) for line in lines]
    return recs


def build_dataset(*, kernel_records: Sequence[str | Path] = (), ns3_records: Sequence[str | Path] = (),
                  pilot_records: Sequence[str | Path] = (), out_dir: str | Path, note: str = "",
                  allow_dirty: bool = False) -> dict:
    """Write the tables of :data:`FILES` into ``out_dir`` from the records; return the provenance.

    Parameters
    ----------
    kernel_records, ns3_records, pilot_records : sequence of path
        Records of the kernel grid, the ns-3 grid and the pilot (engine ``kernel``): JSONL files, or the
        stems of shipped records (``data/datasets/bbr_kernel_records``, read part by part).
    out_dir : str or Path
        Where the files go (created if missing).
    note : str
        Free text for the provenance.
    allow_dirty : bool
        Write a shipped dataset (under the repository's ``data/``) from a tree with uncommitted changes.

    Returns
    -------
    dict
        The provenance written to ``bbr_provenance.json``.

    Raises
    ------
    ValueError
        If no record is given, or a shipped dataset would be written from a dirty tree.
    """
    from tcpmodels.records import host_facts, records_git_summary, shipped_git_state, utc_now

    git = shipped_git_state(REPO, out_dir, allow_dirty=allow_dirty)
    t_start = time.monotonic()
    sources = {"kernel": _read(kernel_records), "ns3": _read(ns3_records), "pilot": _read(pilot_records)}
    if not any(sources.values()):
        raise ValueError("no records given (--kernel-records, --ns3-records, --pilot-records)")
    runs, flows, series, episodes = [], [], [], []
    for source, recs in sources.items():
        for r in recs:
            row, fl, se, ep = run_rows(r, "ns3" if source == "ns3" else "kernel")
            runs.append(row)
            flows += fl
            series += se
            episodes += ep
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    write_tables(SCHEMA, out, {"runs": pd.DataFrame(runs), "flows": pd.DataFrame(flows),
                               "series": pd.DataFrame(series), "probertt": pd.DataFrame(episodes)})
    all_recs = [r for recs in sources.values() for r in recs]
    prov = {
        "dataset": "bbr", "written_utc": utc_now(), "generator": "tcpmodels.experiments.bbr dataset",
        "command": " ".join(["python -m tcpmodels.experiments.bbr", *sys.argv[1:]]), "note": note,
        "git": git, "records_git": records_git_summary(all_recs), "host": host_facts(),
        "counts": {k: len(v) for k, v in sources.items()},
        "config": {"grid": {k: v for k, v in DEFAULT_CONFIG.__dict__.items() if k != "grid"},
                   "pilot": {k: v for k, v in PILOT_CONFIG.__dict__.items() if k != "grid"},
                   "grid_points": [p.__dict__ for p in DEFAULT_CONFIG.grid]},
        "records": {"kernel": [str(p) for p in kernel_records], "ns3": [str(p) for p in ns3_records],
                    "pilot": [str(p) for p in pilot_records]},
        "runs": {k: {"n": len(v), "wall_s_total": round(sum(r["wall_s"] for r in v), 1),
                     "load_avg_1m_median": float(np.median([r["load_avg"][0] for r in v])) if v else None,
                     "first_utc": min((r["started_utc"] for r in v), default=None),
                     "last_utc": max((r["started_utc"] for r in v), default=None)} for k, v in sources.items()},
        "ns3_versions": sorted({str(r.get("sim", {}).get("ns3_version")) for r in sources["ns3"]}),
        "files": list(FILES), "build_s": round(time.monotonic() - t_start, 2),
    }
    write_provenance(SCHEMA, out, prov)
    return prov
