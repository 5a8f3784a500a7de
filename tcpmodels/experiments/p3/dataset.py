"""Records + ns-3 cache + fluid model -> the ``p3_*`` Parquet files and their provenance."""

from __future__ import annotations

import gzip
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from tcpmodels.datasets import write_provenance, write_tables
from tcpmodels.datasets.p3 import LEGACY_NS3_RATE_BPS, REPEAT_SUFFIX, SCHEMA, fluid_rate_bps, kernel_filled, ns3_filled
from tcpmodels.experiments.p3.config import (
    DEFAULT_CONFIG,
    NS3_SETTINGS,
    REPO,
    P3Config,
    ns3_phases,
    ns3_setting,
    ns3_setting_phases,
)
from tcpmodels.experiments.p3.fluid import fluid_frame
from tcpmodels.experiments.p3.kernel import KERNEL_KEY, kernel_frame
from tcpmodels.experiments.p3.ns3 import ns3_plan, ns3_records, ns3_row_run_id, ns3_run_id, ns3_summary

__all__ = ["build_dataset", "fluid_rates_bps", "merge_ns3", "read_ns3_records", "write_ns3_records", "NS3_RECORDS",
           "NS3_PILOT", "SHIPPED_NS3_RECORDS"]

#: the ns-3 runs' raw records in a dataset folder (one JSON line per run, :func:`ns3_record`)
NS3_RECORDS = "p3_ns3_records.jsonl.gz"
#: the shipped records, read by ``p3 ns3`` to skip the runs already made (on any machine)
SHIPPED_NS3_RECORDS = REPO / "data" / "datasets" / NS3_RECORDS
#: the ns-3 run-length pilot (``p3 ns3-pilot``) in a dataset folder
NS3_PILOT = "p3_ns3_pilot.json"


# ----------------------------------------------------------------- dataset
def build_dataset(records_path: str | Path | None, cache_dir: str | Path | None, out_dir: str | Path,
                  config: P3Config = DEFAULT_CONFIG, *, note: str = "", fluid: bool = True,
                  fluid_path: str | Path | None = None, allow_dirty: bool = False,
                  ns3_configs: Sequence[P3Config] | None = None, drop_superseded_kernel: bool = False) -> dict:
    """Write ``p3_kernel.parquet``, ``p3_ns3.parquet``, ``p3_fluid.parquet`` and ``p3_provenance.json``.

    The fluid table is computed (:func:`fluid_frame`, a few minutes) unless
    ``fluid_path`` names one written earlier by the ``fluid`` command. Without
    ``records_path`` the kernel table already in ``out_dir`` is kept and the
    ``kernel`` section of its provenance is carried over, marked with the build
    it came from (to rebuild the ns-3 part where the kernel records are gone). The ns-3 table is
    merged by run id (:func:`~tcpmodels.experiments.p3.ns3.ns3_run_id`, :func:`merge_ns3`): the runs
    of ``cache_dir`` (every setting of ``ns3_configs``), then the shipped records
    (``p3_ns3_records.jsonl.gz`` in ``out_dir``) of runs not in the cache, then the rows of the
    shipped table whose run has no record (the 20 s grid of 2026-11-24, its raw runs gone); the
    records of every run are written back, so a campaign resumes on a fresh machine from them.
    Without ``cache_dir`` and without shipped records the ns-3 table and its ``ns3`` section are
    carried as they are. Without ``fluid`` a fluid table already in ``out_dir`` is kept with its
    provenance section. With ``records_path`` the kernel
    rows already in ``out_dir`` whose sample (``started_utc``) is not in the records are kept
    (their raw records may be gone: the first campaign's 36 ``standard`` samples), rows without
    a ``kind`` (written before the kernel ran ``tm_cubic_x``) become ``standard`` with the
    setting of the provenance they came with; ``source`` says which rows came from the records
    (``records``) and which were carried (``carried from <build>``); with ``drop_superseded_kernel``
    the rows the previous build made from records (its ``source`` ``records``) that ``records_path``
    does not rebuild are left out instead (a grid restarted into a new records file). A shipped dataset
    (``out_dir`` under the repository's ``data/``) is refused from a dirty tree unless ``allow_dirty``
    (:func:`tcpmodels.records.shipped_git_state`).

    Parameters
    ----------
    records_path : str or Path or None
        JSONL file of :func:`run_kernel_campaign`; None: keep the kernel table in ``out_dir``.
    cache_dir : str or Path or None
        Sweep cache of :func:`run_ns3`; None: the ns-3 runs of the shipped records and table only.
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
    ns3_configs : sequence of P3Config, optional
        ns-3 settings whose runs are looked up in ``cache_dir`` (every phase); default the named
        settings of ``config`` (:func:`~tcpmodels.experiments.p3.config.ns3_setting`) and ``config`` itself.
    drop_superseded_kernel : bool
        Leave out the kernel rows an earlier build made from records that ``records_path`` does not
        hold (``--drop-superseded-kernel``); the provenance counts them (``n_samples_superseded``) and
        lists their ``started_utc``. Rows carried from before (their records gone) are kept.

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

    from tcpmodels.records import (
        JsonlRecords,
        host_facts,
        load_average,
        records_git_summary,
        shipped_git_state,
        utc_now,
    )

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
        carried, superseded = _shipped_kernel_rows(out_dir, previous, set(kf["started_utc"]),
                                                   drop_from_records=drop_superseded_kernel)
        if len(carried):
            kf = pd.concat([carried, kf], ignore_index=True, sort=False)
            kf = kf.sort_values(["kind", "rate_bps", "reno_rtt_ms", "cubic_rtt_ms", "started_utc"]).reset_index(drop=True)
        write_tables(SCHEMA, out_dir, {"kernel": kf})
        starts = sorted(r["started_utc"] for r in recs)
        walls = [r["wall_s"] for r in recs]
        last = max(recs, key=lambda r: r["started_utc"])
        new = kf[kf["source"] == "records"]
        prov["kernel"] = {
            "records": str(records_path), "n_samples": len(kf), "n_samples_from_records": len(recs),
            "n_samples_carried": int(len(carried)),
            "n_samples_superseded": len(superseded), "superseded_started_utc": superseded,
            "n_planned": len(config.pairs_ms) * config.reps * len(config.kernel_kinds),
            "kinds_planned": list(config.kernel_kinds),
            "samples_per_kind_from_records": new.groupby("kind").size().to_dict(),
            "samples_per_testbed_from_records": new.groupby("testbed").size().to_dict(),
            "repeats_of_cpu_loss_from_records": int(new["campaign"].str.endswith(REPEAT_SUFFIX).sum()),
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
            **records_git_summary(recs),
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
    shipped_recs = read_ns3_records(out_dir / NS3_RECORDS)
    if cache_dir is not None or shipped_recs:
        prov["ns3"] = _build_ns3(out_dir, cache_dir, config, previous, shipped_recs, ns3_configs)
        if prov["ns3"]:
            prov["files"] += [f for f in ("p3_ns3.parquet", "p3_ns3.csv", NS3_RECORDS) if (out_dir / f).exists()]
        else:
            del prov["ns3"]
    elif (out_dir / "p3_ns3.parquet").exists() and "ns3" in previous:
        origin = previous["ns3"].get("carried_over_from_build_utc", previous.get("written_utc"))
        prov["ns3"] = {**previous["ns3"], "carried_over_from_build_utc": origin}
        if "rate_bps" not in prov["ns3"]:  # built before the ns-3 rate was its own field
            prov["ns3"]["rate_bps"] = _rates(pd.read_parquet(out_dir / "p3_ns3.parquet"), LEGACY_NS3_RATE_BPS)
        prov["files"] += [f for f in ("p3_ns3.parquet", "p3_ns3.csv") if (out_dir / f).exists()]
    if fluid:
        ff = pd.read_parquet(fluid_path) if fluid_path is not None else fluid_frame(config)
        write_tables(SCHEMA, out_dir, {"fluid": ff})
        prov["fluid"] = {"n_rows": len(ff), "model": "tcpmodels.models.bottleneck.reno_cubic_bottleneck",
                         "rates_bps": sorted({float(r) for r in fluid_rates_bps(ff)}),
                         "source": str(fluid_path) if fluid_path is not None else "computed by dataset",
                         "duration_s": float(ff["duration_s"].iloc[0]), "warmup_s": float(ff["warmup_s"].iloc[0]),
                         "loss_sharing": sorted(ff["loss_sharing"].unique())}
        prov["files"] += ["p3_fluid.parquet"]
    elif (out_dir / "p3_fluid.parquet").exists() and "fluid" in previous:  # kept as it is, with its provenance
        origin = previous["fluid"].get("carried_over_from_build_utc", previous.get("written_utc"))
        prov["fluid"] = {**previous["fluid"], "carried_over_from_build_utc": origin}
        prov["files"] += ["p3_fluid.parquet"]
    pilot = out_dir / "p3_bottleneck_pilot.json"
    if pilot.exists():  # the measurement behind rate_bps (python -m tcpmodels.experiments.p3 pilot)
        prov["bottleneck_pilot"] = json.loads(pilot.read_text())
        prov["files"] += ["p3_bottleneck_pilot.json"]
    for testbed in ("steered", "pinned"):  # the same pilot on the rerun testbeds
        found = sorted(out_dir.glob(f"p3_bottleneck_pilot_{testbed}_*.json"))
        if found:
            prov[f"bottleneck_pilot_{testbed}"] = {f.name: json.loads(f.read_text()) for f in found}
            prov["files"] += [f.name for f in found]
    ns3_pilot = out_dir / NS3_PILOT
    if ns3_pilot.exists():  # the measurement behind the long ns-3 setting (python -m tcpmodels.experiments.p3 ns3-pilot)
        prov["ns3_pilot"] = _pilot_digest(json.loads(ns3_pilot.read_text()))
        prov["files"] += [NS3_PILOT]
    if "run_notes" in previous:
        prov["run_notes"] = previous["run_notes"]
    prov["engine_rates_bps"] = _engine_rates(out_dir, prov)
    prov.update({"host": host_facts(), "git": git, "load_avg_at_write": load_average(),
                 "dataset_build_wall_s": round(time.monotonic() - t0, 1), "note": note})
    write_provenance(SCHEMA, out_dir, prov)
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
    return fluid_rate_bps(fluid, {}).round()


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


def _shipped_kernel_rows(out_dir: Path, previous: dict, rebuilt_starts: set, *,
                         drop_from_records: bool = False) -> tuple[pd.DataFrame, list[str]]:
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
    drop_from_records : bool
        Leave out the rows the previous build made from records (``source`` ``records``): samples
        superseded by the records at hand.

    Returns
    -------
    pandas.DataFrame
        The rows kept, with ``kind``, the setting columns and ``source``; empty without a table.
    list of str
        ``started_utc`` of the rows left out (sorted; empty unless ``drop_from_records``).
    """
    path = out_dir / "p3_kernel.parquet"
    if not path.exists():
        return pd.DataFrame(), []
    old = pd.read_parquet(path)
    old = old[~old["started_utc"].isin(rebuilt_starts)].copy()
    superseded: list[str] = []
    if drop_from_records and "source" in old.columns:
        from_records = old["source"] == "records"
        superseded = sorted(old.loc[from_records, "started_utc"])
        old = old[~from_records].copy()
    if not len(old):
        return old, superseded
    origin = previous.get("kernel", {}).get("carried_over_from_build_utc", previous.get("written_utc", "?"))
    old = kernel_filled(old, previous.get("config", {}),
                        ("kind", "cubic_cc_reading", "rate_bps", "buffer_bytes", "measure_s"))
    old["source"] = old["source"].fillna(f"carried from {origin}") if "source" in old else f"carried from {origin}"
    # rows an earlier build made from records no longer at hand: carried from that build
    return old.assign(source=old["source"].where(old["source"] != "records",
                                                 f"carried from {previous.get('written_utc', '?')}")), superseded


# --------------------------------------------------------------------- ns-3
def read_ns3_records(path: str | Path) -> list[dict]:
    """The ns-3 run records of a gzipped JSON-lines file (:func:`~tcpmodels.experiments.p3.ns3.ns3_record`).

    Parameters
    ----------
    path : str or Path
        The file (``p3_ns3_records.jsonl.gz``); missing: no records.

    Returns
    -------
    list of dict
        One record per line, in file order.
    """
    path = Path(path)
    if not path.exists():
        return []
    with gzip.open(path, "rt") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def write_ns3_records(path: str | Path, records: list[dict]) -> None:
    """Write ns-3 run records as gzipped JSON lines, sorted by run id (the same records give the same file).

    Parameters
    ----------
    path : str or Path
        The file to write.
    records : list of dict
        Records of :func:`~tcpmodels.experiments.p3.ns3.ns3_record` (each with ``run_id``).
    """
    with open(path, "wb") as raw, gzip.GzipFile(filename="", mode="wb", compresslevel=9, fileobj=raw, mtime=0) as fh:
        for r in sorted(records, key=lambda r: r["run_id"]):
            fh.write((json.dumps(r, sort_keys=True, default=str) + "\n").encode())


def merge_ns3(shipped: pd.DataFrame, records: list[dict], *, carried_from: str) -> pd.DataFrame:
    """The ns-3 table: a row per record, then the shipped rows of the runs no record holds.

    Parameters
    ----------
    shipped : pandas.DataFrame
        The ns-3 table already shipped (may be empty, or lack ``run_id`` and ``rate_bps``: rows of the
        grid shipped before them ran at :data:`LEGACY_NS3_RATE_BPS`).
    records : list of dict
        Run records (:func:`~tcpmodels.experiments.p3.ns3.ns3_record`), each with a ``source``
        (``cache`` or ``records``), one per run id.
    carried_from : str
        Build the shipped rows came from, for their ``source`` (``carried from <build>``).

    Returns
    -------
    pandas.DataFrame
        Rows of :func:`~tcpmodels.experiments.p3.ns3.ns3_summary` with ``source``, then the carried rows
        (with ``run_id``, ``rate_bps`` filled, and their ``source`` kept if they had one), ordered by
        ``duration_s``, ``seed``, main before slider phases, ``phase``, ``reno_rtt_ms``, ``cubic_rtt_ms``,
        ``kind`` (standard, multiply, divide).
    """
    new = pd.DataFrame([{**ns3_summary(r), "source": r["source"], "cache_key": r.get("cache_key")} for r in records])
    if len(shipped):
        old = shipped.copy()
        old["rate_bps"] = ns3_filled(old, {})["rate_bps"]  # the grid shipped before the column ran at the legacy rate
        old["run_id"] = [ns3_row_run_id(r) for r in old.to_dict("records")]
        old = old[~old["run_id"].isin(set(new["run_id"]) if len(new) else set())]
        label = f"carried from {carried_from}"
        old["source"] = old["source"].where(old["source"].str.startswith("carried"), label) if "source" in old \
            else label
        parts = [df for df in (new, old) if len(df)]
        new = pd.concat(parts, ignore_index=True, sort=False) if parts else new
    if not len(new):
        return new
    order = {k: i for i, k in enumerate(("standard", "multiply", "divide"))}
    key = new.assign(_k=new["kind"].map(order), _p=new["phase"].str.startswith("slider").astype(int))
    key = key.sort_values(["duration_s", "seed", "_p", "phase", "reno_rtt_ms", "cubic_rtt_ms", "_k"], kind="stable")
    cols = ["run_id", *[c for c in new.columns if c != "run_id"]]
    return new.loc[key.index, cols].reset_index(drop=True)


def _ns3_settings(config: P3Config, ns3_configs: Sequence[P3Config] | None) -> list[tuple[P3Config, tuple]]:
    """Settings to look up in the cache and to count as planned: (config, its planned phases)."""
    if ns3_configs is not None:
        return [(c, ns3_phases(c)) for c in ns3_configs]
    out = [(ns3_setting(n, config), ns3_setting_phases(n, config)) for n in NS3_SETTINGS]
    if all((c.ns3_duration_s, c.ns3_seeds) != (config.ns3_duration_s, config.ns3_seeds) for c, _ in out):
        out.append((config, ns3_phases(config, sliders=False)))
    return out


def _build_ns3(out_dir: Path, cache_dir, config: P3Config, previous: dict, shipped_recs: list[dict],
               ns3_configs: Sequence[P3Config] | None) -> dict:
    """Merge the cache, the shipped records and the shipped table; write the ns-3 table and records; its provenance."""
    from tcpmodels.records import load_average

    settings = _ns3_settings(config, ns3_configs)
    from_cache: dict[str, dict] = {}
    if cache_dir is not None:
        for cfg, _ in settings:
            for r in ns3_records(cache_dir, cfg, plan=ns3_plan(cfg, ns3_phases(cfg))):
                from_cache.setdefault(r["run_id"], {**r, "source": "cache"})
    recs = {r["run_id"]: {**r, "source": "records"} for r in shipped_recs}
    recs.update(from_cache)
    path = out_dir / "p3_ns3.parquet"
    shipped = pd.read_parquet(path) if path.exists() else pd.DataFrame()
    prev_ns3 = previous.get("ns3", {})
    origin = prev_ns3.get("carried_over_from_build_utc", previous.get("written_utc", "?"))
    table = merge_ns3(shipped, list(recs.values()), carried_from=origin)
    if not len(table):
        return {}
    write_tables(SCHEMA, out_dir, {"ns3": table})
    if recs:
        write_ns3_records(out_dir / NS3_RECORDS, [{k: v for k, v in r.items() if k != "source"} for r in recs.values()])
    have = set(table["run_id"])
    per_setting = {}
    for dur, g in table.groupby("duration_s", sort=True):
        planned = [(c, ph) for c, ph in settings if np.isclose(c.ns3_duration_s, dur)]
        entry = {"duration_s": float(dur), "warmup_s": float(g["warmup_s"].iloc[0]), "n_runs": len(g),
                 "runs_by_source": g["source"].value_counts().sort_index().to_dict(),
                 "runs_per_kind": g.groupby("kind").size().to_dict(),
                 "seeds_present": sorted(int(x) for x in g["seed"].unique())}
        if planned:
            cfg, phases = planned[0]
            entry["n_planned"] = len(ns3_plan(cfg, phases))
            entry["phases_planned"] = list(phases)
            entry["phases_complete"] = [p for p in phases
                                        if all(ns3_run_id(r, cfg) in have for r in ns3_plan(cfg, (p,)))]
        walls = g["wall_s"].dropna()
        if len(walls):
            entry["wall_s"] = {"n": len(walls), "sum": round(float(walls.sum()), 1),
                               "median": round(float(walls.median()), 1), "max": round(float(walls.max()), 1)}
        entry["first_run_utc"], entry["last_run_utc"] = str(g["date_utc"].min()), str(g["date_utc"].max())
        per_setting[f"{float(dur):g}s"] = entry
    out = {"rate_bps": _rates(table, LEGACY_NS3_RATE_BPS), "buffer_bytes": config.ns3_buffer_bytes,
           "cache_dir": None if cache_dir is None else str(cache_dir), "records_file": NS3_RECORDS,
           "n_runs": len(table), "n_runs_from_cache": int((table["source"] == "cache").sum()),
           "n_runs_from_records": int((table["source"] == "records").sum()),
           "n_runs_carried": int(table["source"].str.startswith("carried").sum()),
           "n_planned": sum(len(ns3_plan(c, ph)) for c, ph in settings),
           "settings": per_setting,
           "phases_complete": [f"{e['duration_s']:g} s: {p}" for e in per_setting.values()
                               for p in e.get("phases_complete", [])],
           "runs_per_phase": {f"{d:g} s {ph}": int(n) for (d, ph), n in table.groupby(["duration_s", "phase"]).size().items()},
           "wall_s_sum": round(float(table["wall_s"].sum()), 1),
           "ns3_version": sorted({str(v) for v in table["ns3_version"]}),
           "load_avg_1m_at_build": load_average()[0],
           "matching": "run id (ns3_run_id: duration, rate, kind, exponent, RTT pair, seed); cache entries matched on "
                       "their scenario config.json (see ns3_records)",
           "throughput_definition": "bytes received by each sink in [ns3_warmup_s, ns3_duration_s]",
           "x_of_rtt": "power law through (1 s, 1) with exponent x_exponent; -1/3 gives 10 at 1 ms "
                       "(assumption read off Fig. 2)",
           "tables_use": "one setting: the one with most complete seeds in its least-covered RTT pair, the longer "
                         "at a tie (tcpmodels.papers.p3_cubic_fairness.ns3_settings)"}
    if out["n_runs_carried"]:
        out["carried_from"] = prev_ns3.get("carried_from", prev_ns3) if prev_ns3.get("settings") else prev_ns3
    return out


def _pilot_digest(pilot: dict) -> dict:
    """The ns-3 run-length pilot without its per-event lists (they stay in the shipped JSON)."""
    runs = []
    for r in pilot.get("runs", []):
        flows = {name: {k: v for k, v in f.items() if not isinstance(v, list)} for name, f in r.get("flows", {}).items()}
        runs.append({k: v for k, v in r.items() if k not in ("flows", "summary")} | {"flows": flows})
    return {**{k: v for k, v in pilot.items() if k != "runs"}, "runs": runs, "file": NS3_PILOT}
