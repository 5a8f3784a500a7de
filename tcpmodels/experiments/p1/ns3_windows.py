"""ns-3's background subflow windows and losses in P1's Section 4, measured as the kernel's are (issue 57, item 2).

The shipped ns-3 runs (``p1_ns3_lia_records``) keep each background subflow's delivered bytes only,
so P1's mechanism table (:func:`tcpmodels.papers.p1_datacenter_fct.background_table`) has no ns-3
windows or losses. This runner repeats ns-3 Section 4 runs of the shipped schedules with the
congestion window traced (:attr:`tcpmodels.sim.config.FatTree.trace_cwnd`) and summarises every
background subflow as :func:`tcpmodels.experiments.p1.kernel.subflow_stats` summarises the kernel's
TCP_INFO samples: the trace is sampled every 0.1 s (the kernel's TCP_INFO interval), and the loss
events are the window reductions :func:`tcpmodels.fit.cubic.cwnd_epochs` finds in those samples (a
lower bound, as on the kernel); ``reductions`` counts every ssthresh setting in the full trace besides.
Segments sent are FlowMonitor's data packets of the subflow.

The runs are those of the shipped ns-3 seeds (same schedule, same seed, same ns-3 configuration
apart from the tracing), so their FCTs must equal the shipped ones: :func:`ns3_window_rows` records
the mean 70 KB FCT of each run to check it.

Command line::

    python -m tcpmodels.experiments.p1.ns3_windows run --records runs/p1/ns3_windows.jsonl --seeds 0 1 2
    python -m tcpmodels.experiments.p1.ns3_windows dataset --records runs/p1/ns3_windows.jsonl --out data
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from tcpmodels.datasets.p1 import NS3_CC
from tcpmodels.datasets.p1_ns3_windows import SAMPLE_INTERVAL_S
from tcpmodels.datasets.p1_ns3_windows import SCHEMA as DATASET
from tcpmodels.experiments.campaign_dataset import CampaignCli, CampaignDataset
from tcpmodels.experiments.p1.config import DEFAULT_CONFIG, N_CORES, REPO, P1Config

__all__ = ["WINDOWS_KEY", "SAMPLE_INTERVAL_S", "ns3_window_rows", "run_ns3_windows", "build_windows_dataset", "main"]

WINDOWS_KEY = ("campaign", "experiment", "protocol", "seed")
# SAMPLE_INTERVAL_S (the kernel's TCP_INFO interval, :func:`tcpmodels.experiments.p1.kernel.kernel_flows`) is the
# dataset's (tcpmodels.datasets.p1_ns3_windows). ns-3 ``TcpSocketState::TcpCongState_t`` equals Linux
# ``tcpi_ca_state`` numbering (0 Open ... 4 Loss).


def _sampled(ev: pd.DataFrame, what: str, grid: np.ndarray) -> np.ndarray:
    """The last value of ``what`` at or before each grid time (NaN before the first)."""
    e = ev[ev["what"] == what].sort_values("t_s")
    if e.empty:
        return np.full(len(grid), np.nan)
    idx = np.searchsorted(e["t_s"].to_numpy(), grid, side="right") - 1
    vals = e["value"].to_numpy(float)
    return np.where(idx >= 0, vals[np.clip(idx, 0, None)], np.nan)


def ns3_window_rows(conns: list[dict], cwnd: pd.DataFrame, fm: pd.DataFrame, *, mss_bytes: float = 1448.0,
                    sample_interval_s: float = SAMPLE_INTERVAL_S) -> list[dict]:
    """One row per background subflow of an ns-3 run: mean window, loss events, segments sent.

    Parameters
    ----------
    conns : list of dict
        The run's connections (:func:`tcpmodels.experiments.p1.schedule`), in the order the
        scenario got them (``flow_index`` of the trace = 4 x connection + subflow).
    cwnd : pandas.DataFrame
        The run's ``cwnd`` table (``t_s``, ``flow_index``, ``what``, ``value``; bytes and seconds).
    fm : pandas.DataFrame
        The run's FlowMonitor table (``flow_index`` = connection, ``direction``, ``dst``,
        ``tx_packets``).
    mss_bytes : float
        Segment size the windows are divided by. [bytes]
    sample_interval_s : float
        Sampling interval of the trace (the kernel's TCP_INFO interval). [s]

    Returns
    -------
    list of dict
        ``conn_id``, ``src``, ``dst``, ``mptcp``, ``subflow`` (core), ``duration_s`` [s],
        ``cwnd_mean_segments``, ``loss_events`` (:func:`tcpmodels.fit.cubic.cwnd_epochs` on the samples),
        ``reductions`` (ssthresh settings in the full trace), ``segments_sent``, ``loss_event_rate`` [-].
    """
    from tcpmodels.fit.cubic import cwnd_epochs
    from tcpmodels.sim.fattree import plane_of_address

    data = fm[fm["direction"] == "data"] if "direction" in fm else fm
    sent = {}
    for r in data.itertuples():
        sent[(int(r.flow_index), int(plane_of_address(r.dst)))] = float(r.tx_packets)
    out = []
    for k, c in enumerate(conns):
        if c["size_bytes"] is not None:
            continue
        cores = range(N_CORES) if c["mptcp"] else (c["plane"],)
        for j, core in enumerate(cores):
            ev = cwnd[cwnd["flow_index"] == 4 * k + j]
            if ev.empty:
                continue
            grid = np.arange(c["start_s"] + sample_interval_s, c["end_s"], sample_interval_s)
            w = _sampled(ev, "cwnd_bytes", grid) / mss_bytes
            ss = _sampled(ev, "ssthresh_bytes", grid) / mss_bytes
            st = _sampled(ev, "cong_state", grid)
            ok = np.isfinite(w) & (w > 0)
            ss = np.where(np.isfinite(ss) & (ss < 2**31 / mss_bytes), ss, 2**31 - 1)
            st = np.where(np.isfinite(st), st, 0).astype(int)
            ep = cwnd_epochs(grid[ok], w[ok], ss[ok], st[ok]) if ok.sum() >= 3 else []
            n_sent = sent.get((k, int(core)), np.nan)
            out.append({"conn_id": c["conn_id"], "src": c["src"], "dst": c["dst"], "mptcp": c["mptcp"],
                        "subflow": int(core), "remote": f"core{core}", "duration_s": float(c["end_s"] - c["start_s"]),
                        "cwnd_mean_segments": float(np.mean(w[ok])) if ok.any() else np.nan,
                        "loss_events": int(len(ep)),
                        "reductions": int(max((ev["what"] == "ssthresh_bytes").sum() - 1, 0)),
                        "segments_sent": n_sent,
                        "loss_event_rate": len(ep) / n_sent if n_sent and np.isfinite(n_sent) else np.nan})
    return out


def run_ns3_windows(records_path: str | Path, *, seeds: Sequence[int] = (0, 1, 2),
                    protocols: Sequence[str] = ("mptcp", "tcp"), config: P1Config = DEFAULT_CONFIG,
                    progress: bool = True, limit: int | None = None) -> int:
    """Run (or resume) the traced ns-3 Section 4 runs; one record each; return how many ran.

    Parameters
    ----------
    records_path : str or Path
        JSONL records (key :data:`WINDOWS_KEY`); the run's ns-3 tables go under ``<folder>/ns3_windows/``.
    seeds, protocols : sequence
        Runs to make, seed by seed (each seed's protocols in the order given).
    config : P1Config
        The P1 setting of the shipped ns-3 runs.
    progress : bool
        tqdm bar.
    limit : int, optional
        Stop after this many new runs.

    Returns
    -------
    int
        Runs measured by this call.
    """
    from tcpmodels.experiments.campaign import run_samples
    from tcpmodels.experiments.p1.ns3 import ns3_config
    from tcpmodels.experiments.p1.schedule import schedule
    from tcpmodels.records import JsonlRecords, git_state
    from tcpmodels.sim.run import run_config

    code = git_state(REPO)
    plan = [{"campaign": "p1_ns3_windows", "experiment": "s4", "protocol": p, "seed": int(s), "order": i}
            for i, (s, p) in enumerate((s, p) for s in seeds for p in protocols)]

    def measure(s: dict, session) -> dict:
        conns = schedule(config, "s4", s["protocol"], s["seed"])
        cfg = replace(ns3_config(conns, config, seed=s["seed"]), trace_cwnd=True)
        res = run_config(cfg, Path(records_path).parent / "ns3_windows" / f"s4_{s['protocol']}_seed{s['seed']}")
        apps = res.apps.set_index("tag")
        short = [apps.loc[f"short:{c['conn_id']}", "fct_s"] for c in conns if c["kind"] == "short"
                 and f"short:{c['conn_id']}" in apps.index]
        rows = ns3_window_rows(conns, res.cwnd if res.cwnd is not None else pd.DataFrame(
            columns=["t_s", "flow_index", "what", "value"]), res.flows)
        return {"git": code, "config": config.to_dict(), "subflows": rows,
                "short_fct_mean_s": float(np.nanmean(np.asarray(short, float))) if short else None,
                "sim_record": {k: v for k, v in res.record.items() if isinstance(v, (int, float, str))}}

    return run_samples(JsonlRecords(records_path, WINDOWS_KEY), plan, measure, desc="p1 ns3 windows",
                       on_host=lambda s: False, limit=limit, progress=progress, unit="run")


def _window_tables(recs: list[dict]) -> tuple[dict, dict]:
    """One row per background subflow, under its P1 run key; the provenance's facts: each run's times and FCT.

    Every ns-3 run of P1 carries ``cc`` :data:`~tcpmodels.datasets.p1.NS3_CC`, the TCP-background runs too (their
    rows in ``p1_subflows``), so the rows here do, or the TCP-background rows would never match.
    """
    rows = [{"engine": "ns3", "experiment": r["experiment"], "protocol": r["protocol"], "cc": NS3_CC, "seed": r["seed"],
             **sf} for r in recs for sf in r["subflows"]]
    return {"": pd.DataFrame(rows)}, {
        "runs": [{k: r.get(k) for k in ("protocol", "seed", "wall_s", "started_utc", "load_avg", "short_fct_mean_s")}
                 for r in recs], "config": recs[0]["config"], "sample_interval_s": SAMPLE_INTERVAL_S}


#: records -> ``p1_ns3_windows.parquet`` (one row per background subflow) and ``p1_ns3_windows_provenance.json``
#: through the dataset's schema: ``build_windows_dataset(records_path, data_dir, *, allow_dirty=False) -> provenance``
#: (:class:`~tcpmodels.experiments.campaign_dataset.CampaignDataset`)
build_windows_dataset = CampaignDataset(DATASET, WINDOWS_KEY, _window_tables, "p1 ns-3 windows")


def _options(run: argparse.ArgumentParser, dataset: argparse.ArgumentParser) -> None:
    """``run``: seeds and protocols."""
    run.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    run.add_argument("--protocols", nargs="+", choices=("mptcp", "tcp"), default=["mptcp", "tcp"])


def _run(a: argparse.Namespace) -> dict:
    """Run or resume the traced runs."""
    return {"measured": run_ns3_windows(a.records, seeds=a.seeds, protocols=a.protocols, limit=a.limit,
                                        progress=not a.no_progress)}


def _dataset(a: argparse.Namespace) -> dict:
    """Build the dataset; its runs."""
    return {"runs": len(build_windows_dataset(a.records, a.out, allow_dirty=a.allow_dirty)["runs"])}


#: ``python -m tcpmodels.experiments.p1.ns3_windows run|dataset ...``: ``main(argv=None) -> exit status``
main = CampaignCli("p1.ns3_windows", __doc__, "p1 ns3 windows", run=_run, dataset=_dataset,
                  run_help="run or resume the traced ns-3 runs", options=_options)


if __name__ == "__main__":
    raise SystemExit(main())
