"""The P5 sweep cache -> the ``p5_*`` Parquet files and their provenance."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np
import pandas as pd

from tcpmodels.experiments.p5.config import BELLCORE_PATH, CASES, DEFAULT_CONFIG, REPO, P5Config
from tcpmodels.experiments.p5.counts import bellcore_counts
from tcpmodels.experiments.p5.plan import plan
from tcpmodels.experiments.p5.runs import run_p5
from tcpmodels.records import host_facts, load_average, shipped_git_state, utc_now

__all__ = ["build_dataset"]


def _run_id(item: dict) -> str:
    return f"{item['case']}-a{item['alpha']:.2f}-n{item['n_clients']}-b{item['backbone_bps'] / 1e6:g}-s{item['seed']}"


def _ship_capture(pcap: Path, capture_dir: Path, run_id: str) -> None:
    """Gzip one run's bottleneck pcap into ``capture_dir`` with a JSON note (what, where, how)."""
    import gzip  # noqa: PLC0415
    import shutil  # noqa: PLC0415

    capture_dir.mkdir(parents=True, exist_ok=True)
    out = capture_dir / f"p5_bottleneck_{run_id}.pcap.gz"
    with pcap.open("rb") as src, gzip.open(out, "wb", compresslevel=9) as dst:
        shutil.copyfileobj(src, dst)
    note = {"capture": out.name, "what": f"P5 ns-3 caterpillar run {run_id}: the G1 -> G2 bottleneck device",
            "capture_point": "ns-3 PointToPointNetDevice of G1 towards G2 (both directions: data from S, ACKs back)",
            "snaplen_bytes": 96, "link_type": "raw IPv4", "tool": "ns-3 PcapHelper (tcpmodels.sim)",
            "compressed": "gzip -9", "bytes_gz": out.stat().st_size,
            "sha256_gz": hashlib.sha256(out.read_bytes()).hexdigest()}
    (capture_dir / f"p5_bottleneck_{run_id}.json").write_text(json.dumps(note, indent=1) + "\n")


def build_dataset(config: P5Config = DEFAULT_CONFIG, *, cache_dir: str | os.PathLike = REPO / "runs" / "p5" / "cache",
                  out_dir: str | os.PathLike = REPO / "data" / "datasets", seeds: tuple | None = None,
                  bellcore_path: str | os.PathLike = BELLCORE_PATH, note: str = "",
                  capture_run: str | None = "main-a1.65-n32-b5-s0",
                  capture_dir: str | os.PathLike | None = REPO / "data" / "captures", allow_dirty: bool = False) -> dict:
    """Collect the cached runs of the plan into ``p5_*.parquet`` and ``p5_provenance.json``.

    Tables: ``p5_runs`` (one row per run: parameters, totals, wall time),
    ``p5_bins`` (per run and 0.1 s bin), ``p5_flows`` (per download),
    ``p5_hurst`` (per run or trace and estimator: H, 95% interval, predicted
    (3 - alpha)/2), ``p5_counts`` (packet-count series of the ``long`` runs and
    of the Bellcore excerpt, 10 ms bins). Runs not in the cache are listed in the
    provenance as missing. The bottleneck pcap of ``capture_run`` is copied,
    gzipped, to ``capture_dir/p5_bottleneck_<run>.pcap.gz`` with a JSON note beside it.

    Parameters
    ----------
    config : P5Config
        The campaign's setting (the plan, the Hurst bin).
    cache_dir : str or path-like
        Sweep cache of :func:`run_campaign`.
    out_dir : str or path-like
        Where the tables and the provenance go (created if missing).
    seeds : tuple of int, optional
        Seeds of the ``main`` runs instead of ``config.seeds``.
    bellcore_path : str or path-like
        The Bellcore excerpt; left out of the tables when the file is missing.
    note : str
        Free text for the provenance.
    capture_run : str, optional
        Run id (``<case>-a<alpha>-n<clients>-b<Mbit/s>-s<seed>``) whose capture is shipped; None: none.
    capture_dir : str or path-like, optional
        Where the shipped capture goes; None: none is shipped.

    Returns
    -------
    dict
        The provenance written to ``p5_provenance.json``: command, git, host, ns-3 version,
        parameters, run counts and missing runs, wall times [s], the campaign log, the
        Bellcore source and the files.

    Raises
    ------
    ValueError
        If the cache holds no run of the plan.
    """
    git = shipped_git_state(REPO, out_dir, allow_dirty=allow_dirty)  # before anything is written (captures too)
    from tcpmodels.models.heavytail import hurst_from_alpha  # noqa: PLC0415
    from tcpmodels.models.hurst import estimate_all  # noqa: PLC0415
    from tcpmodels.sweep import read_cached, cache_key  # noqa: PLC0415

    items = plan(config, CASES, seeds)
    cache = Path(cache_dir)
    runs, bins, flows, hurst, counts, missing = [], [], [], [], [], []
    for item in items:
        hit, v = read_cached(cache, cache_key(item, run_p5))
        rid = _run_id(item)
        if not hit:
            missing.append(rid)
            continue
        if rid == capture_run and capture_dir is not None:
            _ship_capture(cache / cache_key(item, run_p5) / "out" / "bottleneck.pcap", Path(capture_dir), rid)
        meta = {"run_id": rid, "case": item["case"], "alpha": item["alpha"], "n_clients": item["n_clients"],
                "backbone_mbps": item["backbone_bps"] / 1e6, "seed": item["seed"]}
        rec, b, f = v["record"], v["bins"], v["flows"]
        runs.append({**meta, "duration_s": rec["duration_s"], "n_flows": len(f),
                     "n_completed": int(f["completed"].sum()), "offered_bytes": float(f["size_bytes"].sum()),
                     "rx_bytes": int(f["rx_bytes"].sum()), "max_size_bytes": float(f["size_bytes"].max()),
                     "drop_pkts_s": int(b["drop_pkts_s"].sum()), "drop_pkts_g1": int(b["drop_pkts_g1"].sum()),
                     "loss_s": float(b["drop_bytes_s"].sum() / max(1, (b["drop_bytes_s"] + b["enq_bytes_s"]).sum())),
                     "loss_g1": float(b["drop_bytes_g1"].sum()
                                      / max(1, (b["drop_bytes_g1"] + b["enq_bytes_g1"]).sum())),
                     "pcap_packets": v["pcap_packets"], "run_wall_s": rec["run_wall_s"],
                     "ns3_load_wall_s": rec["ns3_load_wall_s"], "ns3_version": rec["ns3_version"],
                     "date_utc": rec["date_utc"]})
        bins.append(b.assign(**meta))
        flows.append(f.assign(run_id=rid))
        h = v["hurst"]
        if "hurst" in h.columns:
            hurst.append(h[["method", "hurst", "stderr", "stderr_kind", "ci95_low", "ci95_high", "n"]].assign(
                **meta, source="ns-3", series_bin_s=item["hurst_bin_s"],
                predicted=float(hurst_from_alpha(item["alpha"]))))
        if item["case"] == "long":
            c = v["counts"]
            counts.append(pd.DataFrame({"run_id": rid, "source": "ns-3", "alpha": item["alpha"],
                                        "t_s": np.arange(len(c)) * item["hurst_bin_s"], "packets": c}))
    if not runs:
        raise ValueError(f"no cached P5 runs in {cache}; run `python -m tcpmodels.experiments.p5 run` first")
    bell_path = Path(bellcore_path)
    if bell_path.exists():
        bc = bellcore_counts(bell_path, bin_s=config.hurst_bin_s)
        counts.append(pd.DataFrame({"run_id": "bellcore", "source": "bellcore", "alpha": np.nan,
                                    "t_s": bc["t_s"], "packets": bc["packets"]}))
        h = estimate_all(bc["packets"].astype(float)).reset_index()
        hurst.append(h[["method", "hurst", "stderr", "stderr_kind", "ci95_low", "ci95_high", "n"]].assign(
            run_id="bellcore", case="bellcore", alpha=np.nan, n_clients=0, backbone_mbps=10.0, seed=0,
            source="bellcore", series_bin_s=config.hurst_bin_s, predicted=np.nan))
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tables = {"runs": pd.DataFrame(runs), "bins": pd.concat(bins, ignore_index=True),
              "flows": pd.concat(flows, ignore_index=True), "hurst": pd.concat(hurst, ignore_index=True),
              "counts": pd.concat(counts, ignore_index=True)}
    tables["bins"] = tables["bins"].drop(columns=["queue_pkts_s", "queue_pkts_g1"]).astype(
        {c: "float32" for c in ("loss_s", "loss_g1", "thr_g1_bps")})
    tables["flows"] = tables["flows"].astype({"start_s": "float32", "fct_s": "float32"})
    for name, df in tables.items():
        df.to_parquet(out / f"p5_{name}.parquet", index=False, compression="zstd")
    log = cache.parent / "campaign_log.jsonl"
    log_entries = [json.loads(x) for x in log.read_text().splitlines() if x.strip()] if log.exists() else []
    try:
        ns3_version = str(tables["runs"]["ns3_version"].iloc[0])
    except (KeyError, IndexError):
        ns3_version = None
    prov = {
        "dataset": "p5",
        "command": "python -m tcpmodels.experiments.p5 run && python -m tcpmodels.experiments.p5 dataset",
        "date_utc": utc_now(),
        "git_commit": git["commit"],
        "git_dirty": git["dirty"],
        "host": host_facts(),
        "kernel": os.uname().release,
        "ns3_version": ns3_version,
        "engine": "ns-3 (TcpNewReno, SACK, PRR; package TcpOptions defaults)",
        "parameters": config.to_dict(),
        "n_runs": len(runs),
        "missing_runs": missing,
        "runs_by_case": tables["runs"]["case"].value_counts().to_dict(),
        "sum_run_wall_s": float(tables["runs"]["run_wall_s"].sum()),
        "sum_ns3_load_wall_s": float(tables["runs"]["ns3_load_wall_s"].sum()),
        "first_run_utc": str(tables["runs"]["date_utc"].min()),
        "last_run_utc": str(tables["runs"]["date_utc"].max()),
        "campaign_invocations": log_entries,
        "campaign_wall_s": float(sum(e["wall_s"] for e in log_entries if e.get("n_run") != 0)),
        "load_average_at_dataset": load_average(),
        "bellcore": {"path": str(bell_path), "present": bell_path.exists(),
                     "source": "Internet Traffic Archive BC-pAug89, first 10,000 packets"},
        "files": sorted(f"p5_{n}.parquet" for n in tables),
        "note": note,
    }
    (out / "p5_provenance.json").write_text(json.dumps(prov, indent=1, default=str) + "\n")
    return prov
