"""Records + ns-3 cache + fluid model -> the ``p3_*`` Parquet files and their provenance."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from tcpmodels.experiments.p3.config import DEFAULT_CONFIG, NS3_PHASES, REPO, P3Config
from tcpmodels.experiments.p3.fluid import fluid_frame
from tcpmodels.experiments.p3.kernel import KERNEL_KEY, kernel_frame
from tcpmodels.experiments.p3.ns3 import ns3_frame, ns3_plan

__all__ = ["build_dataset"]


# ----------------------------------------------------------------- dataset
def build_dataset(records_path: str | Path | None, cache_dir: str | Path | None, out_dir: str | Path,
                  config: P3Config = DEFAULT_CONFIG, *, note: str = "", fluid: bool = True,
                  fluid_path: str | Path | None = None, allow_dirty: bool = False) -> dict:
    """Write ``p3_kernel.parquet``, ``p3_ns3.parquet``, ``p3_fluid.parquet`` and ``p3_provenance.json``.

    The fluid table is computed (:func:`fluid_frame`, a few minutes) unless
    ``fluid_path`` names one written earlier by the ``fluid`` command. Without
    ``records_path`` the kernel table already in ``out_dir`` is kept and the
    ``kernel`` section of its provenance is carried over, marked with the build
    it came from (to rebuild the ns-3 part where the kernel records are gone). A shipped dataset
    (``out_dir`` under the repository's ``data/``) is refused from a dirty tree unless ``allow_dirty``
    (:func:`tcpmodels.records.shipped_git_state`).

    Parameters
    ----------
    records_path : str or Path or None
        JSONL file of :func:`run_kernel_campaign`; None: keep the kernel table in ``out_dir``.
    cache_dir : str or Path or None
        Sweep cache of :func:`run_ns3`; None: no ns-3 table.
    out_dir : str or Path
        Where the files go (created if missing); CSV copies of the kernel and ns-3 tables too.
    config : P3Config
        The campaign's setting (written to the provenance with its scaling).
    note : str
        Free text for the provenance.
    fluid : bool
        Write the fluid table.
    fluid_path : str or Path, optional
        A fluid table written earlier, used instead of computing it.
    allow_dirty : bool
        Write a shipped dataset (under the repository's ``data/``) even from a working tree with
        uncommitted changes (:func:`tcpmodels.records.shipped_git_state`; the provenance says so).

    Returns
    -------
    dict
        The provenance written to ``p3_provenance.json``: config, scaling, per-engine
        counts, times [s] and load averages, definitions, host, git state, files.

    Raises
    ------
    ValueError
        If ``records_path`` holds no record.
    """
    from datetime import datetime

    from tcpmodels.records import JsonlRecords, host_facts, load_average, shipped_git_state, utc_now

    git = shipped_git_state(REPO, out_dir, allow_dirty=allow_dirty)  # before anything is written
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    prov: dict = {"dataset": "p3", "written_utc": utc_now(), "generator": "tcpmodels.experiments.p3 dataset",
                  "command": " ".join(["python -m tcpmodels.experiments.p3", *sys.argv[1:]])
                  if sys.argv and sys.argv[0].endswith(("p3.py", "p3/__main__.py")) else None,
                  "config": config.to_dict(), "config_hash": config.hash(), "scaling": config.scaling(),
                  "files": []}
    if records_path is not None:
        recs = JsonlRecords(records_path, KERNEL_KEY).read()
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
        from tcpmodels.testbed import tool_versions

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
    prov.update({"host": host_facts(), "git": git, "load_avg_at_write": load_average(),
                 "dataset_build_wall_s": round(time.monotonic() - t0, 1), "note": note})
    (out_dir / "p3_provenance.json").write_text(json.dumps(prov, indent=1, default=str) + "\n")
    return prov
