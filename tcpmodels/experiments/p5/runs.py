"""One P5 run in ns-3 (the sweep's run function) and the resumable sweep over the plan."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from tcpmodels.experiments.p5.config import CASES, DEFAULT_CONFIG, REPO, SERVER_ADDR, P5Config
from tcpmodels.experiments.p5.counts import packet_counts
from tcpmodels.experiments.p5.plan import plan, run_id
from tcpmodels.records import load_average, utc_now

__all__ = ["run_p5", "run_campaign"]


def run_p5(item: dict, out_dir: str) -> dict:
    """Sweep run function: simulate one plan item and reduce it to the P5 measurements.

    Parameters
    ----------
    item : dict
        One entry of :func:`plan` (its ``caterpillar`` config and ``hurst_bin_s``).
    out_dir : str
        The run's folder in the sweep cache (the simulator's tables and the bottleneck pcap).

    Returns
    -------
    dict
        ``bins`` (DataFrame per ``bin_s``: ``t_end_s``; ``drop_pkts_s``, ``drop_bytes_s``,
        ``enq_bytes_s``, ``loss_s`` at S and the same ``_g1`` at G1 -- loss = dropped
        bytes / (dropped + accepted bytes) of the device queue; ``thr_g1_bps`` from the
        pcap's G1 -> G2 wire bytes; ``completed`` sessions finishing in the bin),
        ``flows`` (one row per download), ``counts`` (G1 -> G2 packets per
        ``hurst_bin_s``), ``hurst`` (the six estimators on ``counts``), ``record``
        (the simulator's run record), ``pcap_packets`` (server packets in the capture).

    Raises
    ------
    tcpmodels.sim.run.SimulationError
        If the simulation fails or runs longer than an hour.
    """
    from tcpmodels.models.hurst import estimate_all
    from tcpmodels.sim.config import config_from_dict
    from tcpmodels.sim.run import run_config
    from tcpmodels.traces import read_pcap

    cat = config_from_dict(item["caterpillar"])
    res = run_config(cat, out_dir, timeout_s=3600)
    q = res.queues
    bins = None
    for dev, tag in (("server", "s"), ("bottleneck", "g1")):
        d = q[q["device"] == dev].set_index("t_end_s")
        part = pd.DataFrame({f"drop_pkts_{tag}": d["dropped_packets"], f"drop_bytes_{tag}": d["dropped_bytes"],
                             f"enq_bytes_{tag}": d["enqueued_bytes"], f"queue_pkts_{tag}": d["queue_packets"]})
        offered = part[f"drop_bytes_{tag}"] + part[f"enq_bytes_{tag}"]
        part[f"loss_{tag}"] = np.where(offered > 0, part[f"drop_bytes_{tag}"] / offered.where(offered > 0, 1), 0.0)
        bins = part if bins is None else bins.join(part)
    bins = bins.reset_index()
    edges = np.concatenate([[0.0], bins["t_end_s"].to_numpy()])
    pcap = Path(out_dir) / "bottleneck.pcap"
    packets = read_pcap(pcap)
    down = packets[(packets["src_addr"].astype(str) == SERVER_ADDR).to_numpy()]
    wire, _ = np.histogram(down["timestamp_s"].to_numpy(), bins=edges, weights=down["wire_bytes"].to_numpy())
    bins["thr_g1_bps"] = wire * 8.0 / np.diff(edges)
    apps = res.apps
    done_t = (apps["start_s"] + apps["fct_s"])[apps["completed"]].to_numpy()
    bins["completed"] = np.histogram(done_t, bins=edges)[0].astype(np.int64)
    flows = pd.DataFrame({
        "client": apps["sender"].astype(np.int64), "start_s": apps["start_s"], "size_bytes": apps["size_bytes"],
        "rx_bytes": apps["rx_bytes"].astype(np.int64), "fct_s": apps["fct_s"], "completed": apps["completed"],
    })
    counts = packet_counts(packets, bin_s=item["hurst_bin_s"], duration_s=cat.duration_s)
    try:
        hurst = estimate_all(counts.astype(float)).reset_index()
    except ValueError as exc:  # e.g. a constant series
        hurst = pd.DataFrame({"method": ["error"], "note": [str(exc)]})
    return {"bins": bins, "flows": flows, "counts": counts, "hurst": hurst, "record": res.record,
            "pcap_packets": int(len(down))}


def run_campaign(config: P5Config = DEFAULT_CONFIG, *, cases: tuple = CASES, seeds: tuple | None = None,
                 cache_dir: str | os.PathLike = REPO / "runs" / "p5" / "cache", n_workers: int = 1,
                 processes: bool = True, progress: bool = True, limit: int | None = None,
                 skip: set | frozenset = frozenset()) -> dict:
    """Run (or resume) the plan through :func:`tcpmodels.sweep.sweep`; return wall time and counts.

    Each simulation runs in its own process whatever ``processes`` says (the Dask
    workers only wait for it). The wall time of each invocation is appended to
    ``cache_dir/../campaign_log.jsonl``. Failed runs are listed on stderr, not raised.

    Parameters
    ----------
    config : P5Config
        The campaign's setting.
    cases : tuple of str
        Cases of :func:`plan` to run.
    seeds : tuple of int, optional
        Seeds of the ``main`` runs instead of ``config.seeds``.
    cache_dir : str or path-like
        Sweep cache.
    n_workers : int
        Workers of the local Dask cluster.
    processes : bool
        Workers as processes (else threads).
    progress : bool
        tqdm bar on stderr.
    limit : int, optional
        Only the first ``limit`` items of the plan (after ``skip``).
    skip : set of str
        Run ids (``<case>-a<alpha>-n<clients>-b<Mbit/s>-s<seed>``) left out of the plan, e.g.
        the runs of the shipped dataset (:func:`~tcpmodels.experiments.p5.dataset.shipped_run_ids`),
        which the dataset builder keeps.

    Returns
    -------
    dict
        The log entry: ``date_utc``, ``n_items``, ``n_run``, ``n_cached``, ``n_failed``,
        ``wall_s`` [s], ``n_workers``, ``interrupted``, load averages at start and end,
        ``cases``, ``seeds``, ``altq_seeds`` and ``n_skipped``.
    """
    from tcpmodels.sweep import sweep

    items = plan(config, cases, seeds)
    n_all = len(items)
    items = [i for i in items if run_id(i) not in skip]
    n_skipped = n_all - len(items)
    if limit is not None:
        items = items[:limit]
    t0 = time.monotonic()
    load0 = load_average()
    res = None
    try:
        res = sweep(items, run_p5, cache_dir=cache_dir, n_workers=n_workers, processes=processes,
                    progress=progress, on_failure="collect", desc="p5")
    finally:  # an interrupted invocation is logged too (its finished runs are cached)
        entry = {"date_utc": utc_now(), "n_items": len(items), "n_run": None if res is None else res.n_run,
                 "n_cached": None if res is None else res.n_cached,
                 "n_failed": None if res is None else len(res.failures),
                 "wall_s": round(time.monotonic() - t0, 1), "n_workers": n_workers, "interrupted": res is None,
                 "load_average_start": load0, "load_average_end": load_average(), "cases": list(cases),
                 "seeds": list(seeds) if seeds is not None else list(config.seeds),
                 "altq_seeds": list(config.altq_seeds), "n_skipped": n_skipped}
        log = Path(cache_dir).parent / "campaign_log.jsonl"
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("a") as fh:
            fh.write(json.dumps(entry) + "\n")
    for f in res.failures:
        print(f"p5: failed {f.config['case']} alpha={f.config['alpha']} n={f.config['n_clients']}: {f.error}",
              file=sys.stderr)
    return entry
