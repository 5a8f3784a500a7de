"""Records + ns-3 cache + fluid model -> the ``p3_*`` Parquet files and their provenance."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pandas as pd

from tcpmodels.experiments.p3.config import DEFAULT_CONFIG, LEGACY_NS3_RATE_BPS, NS3_PHASES, REPO, P3Config
from tcpmodels.experiments.p3.fluid import fluid_frame
from tcpmodels.experiments.p3.kernel import KERNEL_KEY, kernel_frame
from tcpmodels.experiments.p3.ns3 import ns3_frame, ns3_plan

__all__ = ["build_dataset", "fluid_rates_bps"]


# ----------------------------------------------------------------- dataset
def build_dataset(records_path: str | Path | None, cache_dir: str | Path | None, out_dir: str | Path,
                  config: P3Config = DEFAULT_CONFIG, *, note: str = "", fluid: bool = True,
                  fluid_path: str | Path | None = None, allow_dirty: bool = False) -> dict:
    """Write ``p3_kernel.parquet``, ``p3_ns3.parquet``, ``p3_fluid.parquet`` and ``p3_provenance.json``.

    The fluid table is computed (:func:`fluid_frame`, a few minutes) unless
    ``fluid_path`` names one written earlier by the ``fluid`` command. Without
    ``records_path`` the kernel table already in ``out_dir`` is kept and the
    ``kernel`` section of its provenance is carried over, marked with the build
    it came from (to rebuild the ns-3 part where the kernel records are gone); likewise the
    ns-3 table and its ``ns3`` section without ``cache_dir``. With ``records_path`` the kernel
    rows already in ``out_dir`` whose sample (``started_utc``) is not in the records are kept
    (their raw records may be gone: the first campaign's 36 ``standard`` samples), rows without
    a ``kind`` (written before the kernel ran ``tm_cubic_x``) become ``standard`` with the
    setting of the provenance they came with; ``source`` says which rows came from the records
    (``records``) and which were carried (``carried from <build>``). A shipped dataset
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
        counts, times [s] and load averages, definitions, host, git state, files, and
        ``engine_rates_bps``: the bottleneck rate(s) of each engine's table (kernel, ``ns3``
        -- also in the ``ns3`` section -- and the fluid model's) [bit/s].

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
    previous = (json.loads((out_dir / "p3_provenance.json").read_text())
                if (out_dir / "p3_provenance.json").exists() else {})
    if records_path is not None:
        recs = JsonlRecords(records_path, KERNEL_KEY).read()
        if not recs:
            raise ValueError(f"no kernel records in {records_path}")
        kf = kernel_frame(recs, config).assign(source="records")
        carried = _shipped_kernel_rows(out_dir, previous, set(kf["started_utc"]))
        if len(carried):
            kf = pd.concat([carried, kf], ignore_index=True, sort=False)
            kf = kf.sort_values(["kind", "rate_bps", "reno_rtt_ms", "cubic_rtt_ms", "started_utc"]).reset_index(drop=True)
        kf.to_parquet(out_dir / "p3_kernel.parquet", index=False, compression="zstd")
        kf.to_csv(out_dir / "p3_kernel.csv", index=False, float_format="%.6g")
        starts = sorted(r["started_utc"] for r in recs)
        walls = [r["wall_s"] for r in recs]
        last = max(recs, key=lambda r: r["started_utc"])
        new = kf[kf["source"] == "records"]
        prov["kernel"] = {
            "records": str(records_path), "n_samples": len(kf), "n_samples_from_records": len(recs),
            "n_samples_carried": int(len(carried)),
            "n_planned": len(config.pairs_ms) * config.reps * len(config.kernel_kinds),
            "kinds_planned": list(config.kernel_kinds),
            "samples_per_kind_from_records": new.groupby("kind").size().to_dict(),
            "reps_present": sorted({r["rep"] for r in recs}),
            "first_sample_utc": starts[0], "last_sample_utc": starts[-1],
            "sample_wall_s": {"sum": round(sum(walls), 1), "median": round(sorted(walls)[len(walls) // 2], 2),
                              "max": round(max(walls), 2)},
            "elapsed_first_to_last_s": round((datetime.fromisoformat(starts[-1])
                                              - datetime.fromisoformat(starts[0])).total_seconds() + last["wall_s"], 1),
            "lock_wait_s_sum": round(sum(r.get("lock_wait_s", 0.0) for r in recs), 1),
            "load_avg_1m": {"min": min(r["load_avg"][0] for r in recs), "max": max(r["load_avg"][0] for r in recs),
                            "median": sorted(r["load_avg"][0] for r in recs)[len(recs) // 2]},
            "errors": int(new["error"].notna().sum()),
            "record_config_hashes": sorted({r.get("config_hash") for r in recs}),
            "settings_from_records": sorted({(float(r.get("rate_bps", config.rate_bps)),
                                              float(r.get("measure_s", config.measure_s))) for r in recs}),
            "congestion_control_effective": sorted({str(f.get("cc_effective")) for r in recs for f in r["flows"]}),
            "tm_cubic_x_params": sorted({json.dumps(r["cubic_cc_params"], sort_keys=True)
                                         for r in recs if r.get("cubic_cc_params")}),
            "throughput_definition": "tcpi_bytes_acked of each sender, sampled every sample_interval_s, over the "
                                     "common interval [later start + warmup_s, earlier end], at most measure_s",
        }
        if len(carried):
            prov["kernel"]["carried_from"] = previous.get("kernel", {}).get("carried_from", previous.get("kernel"))
        from tcpmodels.testbed import tool_versions

        prov["tools"] = tool_versions()
        prov["files"] += ["p3_kernel.parquet", "p3_kernel.csv"]
    elif (out_dir / "p3_kernel.parquet").exists() and "kernel" in previous:
        origin = previous["kernel"].get("carried_over_from_build_utc", previous.get("written_utc"))
        prov["kernel"] = {**previous["kernel"], "carried_over_from_build_utc": origin}  # the build that ran them
        prov["tools"] = previous.get("tools")
        prov["files"] += [f for f in ("p3_kernel.parquet", "p3_kernel.csv") if (out_dir / f).exists()]
    if cache_dir is not None:
        nf = ns3_frame(cache_dir, config)
        if len(nf):
            nf.to_parquet(out_dir / "p3_ns3.parquet", index=False, compression="zstd")
            nf.to_csv(out_dir / "p3_ns3.csv", index=False, float_format="%.6g")
            prov["ns3"] = {"cache_dir": str(cache_dir), "rate_bps": config.ns3_rate_bps,
                           "buffer_bytes": config.ns3_buffer_bytes,
                           "n_runs": len(nf), "n_planned": len(ns3_plan(config)),
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
    elif (out_dir / "p3_ns3.parquet").exists() and "ns3" in previous:
        origin = previous["ns3"].get("carried_over_from_build_utc", previous.get("written_utc"))
        prov["ns3"] = {**previous["ns3"], "carried_over_from_build_utc": origin}
        if "rate_bps" not in prov["ns3"]:  # built before the ns-3 rate was its own field
            prov["ns3"]["rate_bps"] = _rates(pd.read_parquet(out_dir / "p3_ns3.parquet"), LEGACY_NS3_RATE_BPS)
        prov["files"] += [f for f in ("p3_ns3.parquet", "p3_ns3.csv") if (out_dir / f).exists()]
    if fluid:
        ff = pd.read_parquet(fluid_path) if fluid_path is not None else fluid_frame(config)
        ff.to_parquet(out_dir / "p3_fluid.parquet", index=False, compression="zstd")
        prov["fluid"] = {"n_rows": len(ff), "model": "tcpmodels.models.bottleneck.reno_cubic_bottleneck",
                         "rates_bps": sorted({float(r) for r in fluid_rates_bps(ff)}),
                         "source": str(fluid_path) if fluid_path is not None else "computed by dataset",
                         "duration_s": float(ff["duration_s"].iloc[0]), "warmup_s": float(ff["warmup_s"].iloc[0]),
                         "loss_sharing": sorted(ff["loss_sharing"].unique())}
        prov["files"] += ["p3_fluid.parquet"]
    pilot = out_dir / "p3_bottleneck_pilot.json"
    if pilot.exists():  # the measurement behind rate_bps (python -m tcpmodels.experiments.p3 pilot)
        prov["bottleneck_pilot"] = json.loads(pilot.read_text())
        prov["files"] += ["p3_bottleneck_pilot.json"]
    if "run_notes" in previous:
        prov["run_notes"] = previous["run_notes"]
    prov["engine_rates_bps"] = _engine_rates(out_dir, prov)
    prov.update({"host": host_facts(), "git": git, "load_avg_at_write": load_average(),
                 "dataset_build_wall_s": round(time.monotonic() - t0, 1), "note": note})
    (out_dir / "p3_provenance.json").write_text(json.dumps(prov, indent=1, default=str) + "\n")
    return prov


def fluid_rates_bps(fluid: pd.DataFrame) -> pd.Series:
    """The bottleneck rate of each fluid-model row: its ``rate_bps``, or for tables written before
    that column, the total throughput over the utilisation (the model's capacity). [bit/s]

    Parameters
    ----------
    fluid : pandas.DataFrame
        A fluid table (:func:`fluid_frame`).

    Returns
    -------
    pandas.Series
        One rate per row, rounded to 1 bit/s. [bit/s]
    """
    inferred = (fluid["reno_bps"] + fluid["cubic_bps"]) / fluid["utilization"]
    rate = fluid["rate_bps"].fillna(inferred) if "rate_bps" in fluid else inferred
    return rate.round()


def _rates(table: pd.DataFrame, legacy_bps: float) -> float | list[float]:
    """The distinct ``rate_bps`` of a table (one value if single), ``legacy_bps`` without the column. [bit/s]"""
    if "rate_bps" not in table or table["rate_bps"].isna().all():
        return float(legacy_bps)
    rates = sorted({float(r) for r in table["rate_bps"].dropna()})
    return rates[0] if len(rates) == 1 else rates


def _engine_rates(out_dir: Path, prov: dict) -> dict:
    """The bottleneck rate(s) of every engine's table in ``out_dir``, as the provenance states them. [bit/s]"""
    out = {}
    if (out_dir / "p3_kernel.parquet").exists():
        k = pd.read_parquet(out_dir / "p3_kernel.parquet")
        kr = k["rate_bps"] if "rate_bps" in k else pd.Series(dtype=float)
        out["kernel"] = sorted({float(r) for r in kr.fillna(prov["config"]["rate_bps"])})
    if "ns3" in prov and (out_dir / "p3_ns3.parquet").exists():
        out["ns3"] = prov["ns3"].get("rate_bps")
    if (out_dir / "p3_fluid.parquet").exists():
        out["fluid"] = sorted({float(r) for r in fluid_rates_bps(pd.read_parquet(out_dir / "p3_fluid.parquet"))})
    out["note"] = ("each engine at its own rate: the tables compare each engine with the fluid model at that "
                   "engine's rate and state the rates (tcpmodels.papers.p3_cubic_fairness.engine_table)")
    return out


def _shipped_kernel_rows(out_dir: Path, previous: dict, rebuilt_starts: set) -> pd.DataFrame:
    """Kernel rows of the table in ``out_dir`` that the records do not rebuild (matched on ``started_utc``).

    Rows without ``kind`` are the first campaign's (kernel ``cubic`` only): ``kind`` becomes
    ``standard`` and the setting columns come from ``previous``'s config.

    Parameters
    ----------
    out_dir : Path
        The dataset folder (its ``p3_kernel.parquet``, if any).
    previous : dict
        The provenance in ``out_dir`` (``{}`` if none).
    rebuilt_starts : set of str
        ``started_utc`` of the samples the records rebuild.

    Returns
    -------
    pandas.DataFrame
        The rows kept, with ``kind``, the setting columns and ``source``; empty without a table.
    """
    path = out_dir / "p3_kernel.parquet"
    if not path.exists():
        return pd.DataFrame()
    old = pd.read_parquet(path)
    old = old[~old["started_utc"].isin(rebuilt_starts)].copy()
    if not len(old):
        return old
    cfg = previous.get("config", {})
    origin = previous.get("kernel", {}).get("carried_over_from_build_utc", previous.get("written_utc", "?"))
    defaults = {"kind": "standard", "cubic_cc_reading": None, "rate_bps": cfg.get("rate_bps"),
                "buffer_bytes": cfg.get("buffer_bytes"), "measure_s": cfg.get("measure_s"),
                "source": f"carried from {origin}"}
    for col, val in defaults.items():
        if col not in old.columns:
            old[col] = val
        elif val is not None:
            old[col] = old[col].fillna(val)
    # rows an earlier build made from records no longer at hand: carried from that build
    return old.assign(source=old["source"].where(old["source"] != "records",
                                                 f"carried from {previous.get('written_utc', '?')}"))
