"""The P5 sweep cache -> the ``p5_*`` Parquet files and their provenance."""

from __future__ import annotations

import hashlib
import json
import os
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from tcpmodels.datasets import write_provenance, write_tables
from tcpmodels.datasets.p5 import SCHEMA
from tcpmodels.experiments.p5.config import BELLCORE_PATH, CASES, DEFAULT_CONFIG, REPO, P5Config
from tcpmodels.experiments.p5.counts import bellcore_counts
from tcpmodels.experiments.p5.plan import plan, run_id
from tcpmodels.experiments.p5.runs import run_p5
from tcpmodels.records import host_facts, load_average, shipped_git_state, utc_now

__all__ = ["build_dataset", "read_shipped", "merge_tables", "shipped_run_ids", "TABLES"]

#: The tables of the P5 dataset (``p5_<name>.parquet``); each has a ``run_id`` column.
TABLES = ("runs", "bins", "flows", "hurst", "counts")
#: columns of a table written empty (see :func:`build_dataset`)
_EMPTY_COLUMNS = {"counts": ["run_id", "source", "alpha", "t_s", "packets"]}




def _ship_capture(pcap: Path, capture_dir: Path, run_id: str) -> None:
    """Gzip one run's bottleneck pcap into ``capture_dir`` with a JSON note (what, where, how)."""
    from tcpmodels.records import gzip_reproducibly

    capture_dir.mkdir(parents=True, exist_ok=True)
    out = capture_dir / f"p5_bottleneck_{run_id}.pcap.gz"
    gzip_reproducibly(pcap, out)
    note = {"capture": out.name, "what": f"P5 ns-3 caterpillar run {run_id}: the G1 -> G2 bottleneck device",
            "capture_point": "ns-3 PointToPointNetDevice of G1 towards G2 (both directions: data from S, ACKs back)",
            "snaplen_bytes": 96, "link_type": "raw IPv4", "tool": "ns-3 PcapHelper (tcpmodels.sim)",
            "compressed": "gzip -9", "bytes_gz": out.stat().st_size,
            "sha256_gz": hashlib.sha256(out.read_bytes()).hexdigest()}
    (capture_dir / f"p5_bottleneck_{run_id}.json").write_text(json.dumps(note, indent=1) + "\n")


def shipped_run_ids(out_dir: str | os.PathLike) -> set:
    """Run ids (``<case>-a<alpha>-n<clients>-b<Mbit/s>-s<seed>``) in ``out_dir/p5_runs.parquet``; empty if absent.

    Parameters
    ----------
    out_dir : str or path-like
        Folder of a P5 dataset.

    Returns
    -------
    set of str
        The ``run_id`` column of ``p5_runs.parquet``.
    """
    path = Path(out_dir) / "p5_runs.parquet"
    return set(pd.read_parquet(path, columns=["run_id"])["run_id"]) if path.exists() else set()


def read_shipped(out_dir: str | os.PathLike) -> tuple[dict, dict | None, list]:
    """The tables, provenance and run records of the P5 dataset in ``out_dir`` (what a rebuild must keep).

    Parameters
    ----------
    out_dir : str or path-like
        Folder of a P5 dataset (``p5_*.parquet``, ``p5_provenance.json``, ``p5_records.jsonl.gz``).

    Returns
    -------
    tuple
        ``(tables, provenance, records)``: table name -> DataFrame for the tables of
        :data:`TABLES` present (none if ``p5_runs.parquet`` is missing), the provenance
        dict (None if missing) and the list of per-run records (empty if missing).
    """
    import gzip

    out = Path(out_dir)
    if not (out / "p5_runs.parquet").exists():
        return {}, None, []
    tables = {n: pd.read_parquet(out / f"p5_{n}.parquet") for n in TABLES if (out / f"p5_{n}.parquet").exists()}
    prov_path = out / "p5_provenance.json"
    prov = json.loads(prov_path.read_text()) if prov_path.exists() else None
    rec_path = out / "p5_records.jsonl.gz"
    records = []
    if rec_path.exists():
        with gzip.open(rec_path, "rt") as fh:
            records = [json.loads(x) for x in fh if x.strip()]
    return tables, prov, records


def merge_tables(shipped: dict, new: dict) -> tuple[dict, list]:
    """Shipped rows of the runs ``new`` does not hold, then every row of ``new``, table by table.

    A run is identified by its ``run_id`` (case, alpha, clients, rate, seed): a run
    present in both comes from ``new`` only; a shipped run absent from ``new`` (its
    raw records are gone) keeps its rows. Rows with a ``run_id`` not in ``new["runs"]``
    but in another new table (the Bellcore trace, ``run_id`` ``bellcore``) replace
    the shipped ones too. Columns missing on one side are filled with NaN.

    Parameters
    ----------
    shipped : dict
        Table name -> DataFrame of the dataset already shipped (may be empty).
    new : dict
        Table name -> DataFrame built from the sweep cache; must hold ``runs``.

    Returns
    -------
    tuple
        ``(tables, kept)``: table name -> merged DataFrame, and the sorted run ids
        kept from ``shipped``.

    Raises
    ------
    ValueError
        If a table of either side has no ``run_id`` column.
    """
    for side, tables in (("shipped", shipped), ("new", new)):
        for name, df in tables.items():
            if "run_id" not in df.columns:
                raise ValueError(f"{side} table {name!r} has no run_id column")
    new_ids = set(new["runs"]["run_id"])
    kept = sorted(set(shipped["runs"]["run_id"]) - new_ids) if "runs" in shipped else []
    merged = {}
    for name in dict.fromkeys([*new, *shipped]):
        n = new.get(name)
        s = shipped.get(name)
        if s is None:
            merged[name] = n
            continue
        replaced = new_ids | (set(n["run_id"]) if n is not None else set())
        s = s[~s["run_id"].isin(replaced)]
        parts = [df for df in (s, n) if df is not None and len(df)]
        merged[name] = pd.concat(parts, ignore_index=True) if parts else s.iloc[:0]
    return merged, kept



def build_dataset(config: P5Config = DEFAULT_CONFIG, *, cache_dir: str | os.PathLike = REPO / "runs" / "p5" / "cache",
                  out_dir: str | os.PathLike = REPO / "data" / "datasets", seeds: tuple | None = None,
                  bellcore_path: str | os.PathLike = BELLCORE_PATH, note: str = "",
                  capture_run: str | None = "main-a1.65-n32-b5-s0",
                  capture_dir: str | os.PathLike | None = REPO / "data" / "captures", allow_dirty: bool = False,
                  merge: bool = True) -> dict:
    """Collect the cached runs of the plan into ``p5_*.parquet`` and ``p5_provenance.json``.

    Tables: ``p5_runs`` (one row per run: parameters, totals, wall time),
    ``p5_bins`` (per run and 0.1 s bin), ``p5_flows`` (per download),
    ``p5_hurst`` (per run or trace and estimator: H, 95% interval, predicted
    (3 - alpha)/2), ``p5_counts`` (packet-count series of the ``long`` runs and
    of the Bellcore excerpt, 10 ms bins). Runs not in the cache are listed in the
    provenance as missing. The bottleneck pcap of ``capture_run`` is copied,
    gzipped, to ``capture_dir/p5_bottleneck_<run>.pcap.gz`` with a JSON note beside it.
    ``p5_records.jsonl.gz`` holds one JSON line per run: its plan item and the
    simulator's run record.

    With ``merge`` (the default) the dataset already in ``out_dir`` is kept for every
    run the cache does not hold (:func:`merge_tables`, keyed by run id: case, alpha,
    clients, rate, seed): the raw records of earlier sessions may be gone, so a
    campaign that adds runs never loses the shipped ones; a run in both comes from
    the cache. The provenance lists the kept run ids and the earlier provenance.

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
        The Bellcore excerpt; when the file is missing (outside the machine that holds ``../shared``)
        a warning names it and its rows are not rebuilt (with ``merge`` the shipped ones stay).
    note : str
        Free text for the provenance.
    capture_run : str, optional
        Run id (``<case>-a<alpha>-n<clients>-b<Mbit/s>-s<seed>``) whose capture is shipped; None: none.
    capture_dir : str or path-like, optional
        Where the shipped capture goes; None: none is shipped.
    allow_dirty : bool
        Write a shipped dataset from a tree with uncommitted changes (the provenance says so).
    merge : bool
        Keep the rows of the dataset in ``out_dir`` for runs the cache does not hold.

    Returns
    -------
    dict
        The provenance written to ``p5_provenance.json``: command, git, host, ns-3 version,
        parameters, run counts and missing runs, wall times [s], the campaign log, the
        Bellcore source and the files.

    Raises
    ------
    ValueError
        If neither the cache nor (with ``merge``) the dataset in ``out_dir`` holds a run of the plan.
    """
    git = shipped_git_state(REPO, out_dir, allow_dirty=allow_dirty)  # before anything is written (captures too)
    from tcpmodels.models.heavytail import hurst_from_alpha
    from tcpmodels.models.hurst import estimate_all
    from tcpmodels.sweep import cache_key, read_cached

    items = plan(config, CASES, seeds)
    cache = Path(cache_dir)
    shipped, shipped_prov, shipped_records = read_shipped(out_dir) if merge else ({}, None, [])
    runs, bins, flows, hurst, counts, records = [], [], [], [], [], []
    for item in items:
        hit, v = read_cached(cache, cache_key(item, run_p5))
        rid = run_id(item)
        if not hit:
            continue
        if rid == capture_run and capture_dir is not None:
            _ship_capture(cache / cache_key(item, run_p5) / "out" / "bottleneck.pcap", Path(capture_dir), rid)
        meta = {"run_id": rid, "case": item["case"], "alpha": item["alpha"], "n_clients": item["n_clients"],
                "backbone_mbps": item["backbone_bps"] / 1e6, "seed": item["seed"]}
        rec, b, f = v["record"], v["bins"], v["flows"]
        records.append({"run_id": rid, "item": item, "record": rec})
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
    if not runs and "runs" not in shipped:
        raise ValueError(f"no cached P5 runs in {cache}; run `python -m tcpmodels.experiments.p5 run` first")
    bell_path = Path(bellcore_path)
    if not bell_path.exists():
        kept = "the shipped bellcore rows are kept" if merge else "the tables have no bellcore rows"
        warnings.warn(f"Bellcore excerpt not found: {bell_path} (the Internet Traffic Archive's BC-pAug89, first "
                      f"10,000 packets, as text: time [s], length [bytes]); its series and Hurst estimates are not "
                      f"rebuilt ({kept}); put the file there or pass bellcore_path", stacklevel=2)
    else:
        bc = bellcore_counts(bell_path, bin_s=config.hurst_bin_s)
        counts.append(pd.DataFrame({"run_id": "bellcore", "source": "bellcore", "alpha": np.nan,
                                    "t_s": bc["t_s"], "packets": bc["packets"]}))
        h = estimate_all(bc["packets"].astype(float)).reset_index()
        hurst.append(h[["method", "hurst", "stderr", "stderr_kind", "ci95_low", "ci95_high", "n"]].assign(
            run_id="bellcore", case="bellcore", alpha=np.nan, n_clients=0, backbone_mbps=10.0, seed=0,
            source="bellcore", series_bin_s=config.hurst_bin_s, predicted=np.nan))
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    new = {"runs": pd.DataFrame(runs, columns=None if runs else ["run_id"])}
    for name, parts in (("bins", bins), ("flows", flows), ("hurst", hurst), ("counts", counts)):
        if parts:
            new[name] = pd.concat(parts, ignore_index=True)
    if "bins" in new:
        new["bins"] = new["bins"].drop(columns=["queue_pkts_s", "queue_pkts_g1"]).astype(
            {c: "float32" for c in ("loss_s", "loss_g1", "thr_g1_bps")})
    if "flows" in new:
        new["flows"] = new["flows"].astype({"start_s": "float32", "fct_s": "float32"})
    tables, kept = merge_tables(shipped, new)
    # every table is written, empty when nothing fills it (counts: no long run and no Bellcore trace at
    # ../shared, as in a clone without it), so the dataset always loads
    for name in TABLES:
        if name not in tables:
            tables[name] = pd.DataFrame(columns=_EMPTY_COLUMNS.get(name, ["run_id"]))
    order = {run_id(item): k for k, item in enumerate(items)}
    tables["runs"] = tables["runs"].sort_values("run_id", key=lambda c: c.map(order).fillna(len(order)),
                                                kind="stable", ignore_index=True)
    have = set(tables["runs"]["run_id"])
    missing = [run_id(item) for item in items if run_id(item) not in have]
    new_ids = {r["run_id"] for r in records}
    records = [r for r in shipped_records if r["run_id"] not in new_ids] + records
    write_tables(SCHEMA, out, tables)
    from tcpmodels.records import reproducible_gzip_writer

    with reproducible_gzip_writer(out / "p5_records.jsonl.gz", text=True) as fh:
        for r in records:
            fh.write(json.dumps(r, default=str) + "\n")
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
        "n_runs": len(tables["runs"]),
        "n_runs_from_cache": len(runs),
        "missing_runs": missing,
        "kept_from_shipped": {
            "n_runs": len(kept), "run_ids": kept,
            "note": "rows of runs the cache did not hold, kept from the dataset this one replaced (their raw "
                    "records were not on this machine); their provenance is `previous` below",
            "previous": None if shipped_prov is None else {
                k: shipped_prov.get(k) for k in ("date_utc", "git_commit", "git_dirty", "n_runs", "campaign_wall_s",
                                                 "sum_run_wall_s", "first_run_utc", "last_run_utc",
                                                 "kept_from_shipped", "note")},
        },
        "runs_by_case": tables["runs"]["case"].value_counts().to_dict(),
        "sum_run_wall_s": float(tables["runs"]["run_wall_s"].sum()),
        "sum_run_wall_s_from_cache": float(sum(r["run_wall_s"] for r in runs)),
        "sum_ns3_load_wall_s": float(tables["runs"]["ns3_load_wall_s"].sum()),
        "first_run_utc": str(tables["runs"]["date_utc"].min()),
        "last_run_utc": str(tables["runs"]["date_utc"].max()),
        "campaign_invocations": log_entries,
        "campaign_wall_s": float(sum(e["wall_s"] for e in log_entries if e.get("n_run") != 0)),
        "load_average_at_dataset": load_average(),
        "bellcore": {"path": str(bell_path), "present": bell_path.exists(),
                     "source": "Internet Traffic Archive BC-pAug89, first 10,000 packets"},
        "files": sorted([*(f"p5_{n}.parquet" for n in tables), "p5_records.jsonl.gz"]),
        "note": note,
    }
    write_provenance(SCHEMA, out, prov)
    return prov
