"""The dataset of P5's kernel campaign: Hurst estimates and packet-count series as Parquet, the records, the provenance.

Reads the runs folder of :func:`tcpmodels.experiments.p5.kernel.run_kernel_campaign` and writes through the
schema :mod:`tcpmodels.datasets.p5_testbed` (``p5_testbed_hurst.parquet``, ``p5_testbed_counts.parquet``,
``p5_testbed_records.jsonl.gz``, ``p5_testbed_provenance.json``), keeping the shipped rows of runs the
folder lacks.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from tcpmodels.datasets import REPO_ROOT, write_provenance, write_tables
from tcpmodels.datasets.p5_testbed import SCHEMA
from tcpmodels.experiments.p5.kernel_config import (
    DEFAULT_KERNEL_CONFIG,
    TestbedP5Config,
    counts_name,
    read_kernel_records,
)
from tcpmodels.records import shipped_git_state, utc_now

__all__ = ["build_kernel_dataset", "shipped_kernel_keys"]


def shipped_kernel_keys(out_dir: str | Path) -> set:
    """``(alpha, seed)`` of the runs in ``out_dir/p5_testbed_hurst.parquet`` (no ``seed`` column: 0); empty if absent.

    Parameters
    ----------
    out_dir : str or Path
        Folder of the shipped dataset.

    Returns
    -------
    set of tuple
        ``(alpha [-], seed)`` pairs.
    """
    path = Path(out_dir) / "p5_testbed_hurst.parquet"
    if not path.exists():
        return set()
    h = pd.read_parquet(path)
    seeds = h["seed"] if "seed" in h.columns else pd.Series(0, index=h.index)
    return {(float(a), int(s)) for a, s in zip(h["alpha"], seeds)}


def build_kernel_dataset(runs_dir: str | Path, out_dir: str | Path, config: TestbedP5Config = DEFAULT_KERNEL_CONFIG,
                  *, note: str = "", allow_dirty: bool = False, merge: bool = True) -> dict:
    """Write ``p5_testbed_hurst.parquet``, ``p5_testbed_counts.parquet``, the records and the provenance.

    ``p5_testbed_hurst``: one row per (alpha, seed) and estimator (H, 95 % interval,
    predicted ``(3 - alpha) / 2``, whether the interval covers it).
    ``p5_testbed_counts``: the packet-count series (alpha, seed, t_s, packets).
    ``p5_testbed_records.jsonl.gz``: the run records. With ``merge`` the runs of the
    dataset already in ``out_dir`` that ``runs_dir`` lacks keep their rows (keyed by
    alpha and seed; a shipped table without ``seed`` is run 0) and their provenance entries.

    Parameters
    ----------
    runs_dir : str or Path
        Campaign folder of :func:`tcpmodels.experiments.p5.kernel.run_kernel_campaign`.
    out_dir : str or Path
        Where the three files go (created if missing).
    config : TestbedP5Config
        Written to the provenance; only records of its ``alphas`` are used.
    note : str
        Free text for the provenance.
    allow_dirty : bool
        Write a shipped dataset from a tree with uncommitted changes (the provenance says so).
    merge : bool
        Keep the rows of the dataset in ``out_dir`` for runs ``runs_dir`` lacks.

    Returns
    -------
    dict
        The provenance written to ``p5_testbed_provenance.json`` (config, git state,
        one entry per run, the runs kept from the earlier dataset, host, files).

    Raises
    ------
    ValueError
        If neither ``runs_dir`` nor (with ``merge``) the dataset in ``out_dir`` holds a
        result of any of ``config.alphas``.
    """
    runs_dir, out_dir = Path(runs_dir), Path(out_dir)
    git = shipped_git_state(REPO_ROOT, out_dir, allow_dirty=allow_dirty)  # before anything is written
    wanted = {float(a) for a in config.alphas}
    recs = [r for r in read_kernel_records(runs_dir) if r["alpha"] in wanted]
    new_keys = {(float(r["alpha"]), int(r["seed"])) for r in recs}
    old_h = old_c = None
    old_prov, old_recs = {}, []
    if merge and (out_dir / "p5_testbed_hurst.parquet").exists():
        import gzip

        old_h = pd.read_parquet(out_dir / "p5_testbed_hurst.parquet")
        old_c = pd.read_parquet(out_dir / "p5_testbed_counts.parquet")
        for df in (old_h, old_c):
            if "seed" not in df.columns:
                df.insert(1, "seed", 0)
        if (out_dir / "p5_testbed_provenance.json").exists():
            old_prov = json.loads((out_dir / "p5_testbed_provenance.json").read_text())
        if (out_dir / "p5_testbed_records.jsonl.gz").exists():
            with gzip.open(out_dir / "p5_testbed_records.jsonl.gz", "rt") as fh:
                old_recs = [json.loads(x) for x in fh if x.strip()]

        def fresh(df):
            keys = pd.Series(list(zip(df["alpha"].astype(float), df["seed"].astype(int))), index=df.index)
            return df[~keys.isin(new_keys) & df["alpha"].isin(wanted)]

        old_h, old_c = fresh(old_h), fresh(old_c)
    kept = sorted({(float(a), int(s)) for a, s in zip(old_h["alpha"], old_h["seed"])}) if old_h is not None else []
    if not recs and not kept:
        raise ValueError(f"no p5 testbed results in {runs_dir} (run `python -m tcpmodels.experiments.p5 kernel`)")
    hurst, counts = [] if old_h is None else [old_h], [] if old_c is None else [old_c]
    for r in recs:
        h = pd.DataFrame(r["hurst"]).assign(alpha=r["alpha"], seed=r["seed"], predicted=r["predicted_hurst"])
        h["covers"] = (h["ci95_low"] <= h["predicted"]) & (h["predicted"] <= h["ci95_high"])
        hurst.append(h)
        c = np.load(runs_dir / counts_name(r["alpha"], r["seed"]))
        counts.append(pd.DataFrame({"alpha": r["alpha"], "seed": r["seed"],
                                    "t_s": np.arange(len(c)) * r["config"]["bin_s"], "packets": c.astype(np.int32)}))
    out_dir.mkdir(parents=True, exist_ok=True)
    cols = ["alpha", "seed", "method", "hurst", "stderr", "stderr_kind", "ci95_low", "ci95_high", "n", "predicted",
            "covers"]
    hurst = pd.concat(hurst, ignore_index=True)[cols].sort_values(["alpha", "seed"], kind="stable", ignore_index=True)
    hurst = hurst.astype({"seed": np.int64})
    counts = pd.concat(counts, ignore_index=True)[["alpha", "seed", "t_s", "packets"]].sort_values(
        ["alpha", "seed", "t_s"], kind="stable", ignore_index=True)
    write_tables(SCHEMA, out_dir, {"hurst": hurst, "counts": counts.astype({"seed": np.int64})})
    from tcpmodels.records import reproducible_gzip_writer

    all_recs = [r for r in old_recs if (float(r["alpha"]), int(r.get("seed", 0))) not in new_keys] + recs
    with reproducible_gzip_writer(out_dir / "p5_testbed_records.jsonl.gz", text=True) as fh:
        for r in all_recs:
            fh.write(json.dumps(r, default=str) + "\n")
    run_fields = ("alpha", "seed", "started_utc", "finished_utc", "wall_s", "n_flows_planned", "planned_bytes", "flows",
                  "capture", "read_accounting", "packets_in_series", "utilisation", "load_avg_before", "testbed_run_id")
    old_runs = [{**r, "seed": r.get("seed", 0), "from_dataset": {"git": old_prov.get("git"),
                                                                 "written_utc": old_prov.get("written_utc")}}
                for r in old_prov.get("runs", []) if (float(r["alpha"]), int(r.get("seed", 0))) in set(kept)]
    prov = {
        "dataset": "p5_testbed", "written_utc": utc_now(), "generator": "tcpmodels.experiments.p5 kernel-dataset",
        "command": "python -m tcpmodels.experiments.p5 kernel && python -m tcpmodels.experiments.p5 kernel-dataset",
        "config": config.to_dict(), "git": git, "note": note,
        "engine": "Linux kernel TCP in network namespaces (tbf bottleneck, AF_PACKET delay element, tcpdump)",
        "series": "packets sent by the server per bin, captured on the server side of the bottleneck (egress, "
                  "after the qdisc), bins from the launch of the flow schedule",
        "runs": sorted(old_runs + [{k: r.get(k) for k in run_fields} for r in recs],
                       key=lambda r: (r["seed"], r["alpha"])),
        "kept_from_shipped": {"runs": [list(k) for k in kept],
                              "note": "(alpha, seed) rows kept from the dataset this one replaced; their raw "
                                      "records were not in the runs folder (entries marked from_dataset)"},
        "sum_wall_s_new": float(sum(r["wall_s"] for r in recs)),
        "host": recs[-1]["host"] if recs else old_prov.get("host"),
        "files": ["p5_testbed_hurst.parquet", "p5_testbed_counts.parquet", "p5_testbed_records.jsonl.gz"],
    }
    write_provenance(SCHEMA, out_dir, prov)
    return prov
