"""Records of both engines -> the ``sim_vs_kernel`` Parquet/CSV files and their provenance, and back."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from tcpmodels.datasets import write_provenance, write_tables
from tcpmodels.datasets.sim_vs_kernel import SCHEMA
from tcpmodels.experiments.sim_vs_kernel.compare import agreement, flow_frame
from tcpmodels.experiments.sim_vs_kernel.config import KEY, REPO, SvkConfig, config_from_record

__all__ = ["build_dataset", "load_dataset", "engine_versions"]


def build_dataset(records_paths: str | Path | Iterable[str | Path], out_dir: str | Path, *, note: str = "",
                  allow_dirty: bool = False) -> dict:
    """Write ``sim_vs_kernel.parquet`` (+ ``.csv``) and ``sim_vs_kernel_provenance.json``; return the provenance.

    Parameters
    ----------
    records_paths : path or list of paths
        JSONL files, one per scenario (each file holds one configuration).
    out_dir : path
        Where the three files go (created if missing).
    note : str
        Free text kept in the provenance.
    allow_dirty : bool
        Write a shipped dataset (under the repository's ``data/``) even from a working tree with
        uncommitted changes (:func:`tcpmodels.records.shipped_git_state`; the provenance says so).

    Returns
    -------
    dict
        The provenance: per scenario its config, per-engine sample counts, times [s] and
        loads, the kernel's effective congestion controls and ping RTTs [ms], the criterion,
        the :func:`agreement` table (the verdicts are the papers layer's,
        :func:`tcpmodels.papers.sim_vs_kernel.claims`); tool versions, host, git state.

    Raises
    ------
    ValueError
        If a file holds no record or records of several configurations, or two files
        hold the same scenario.
    """
    from tcpmodels.records import JsonlRecords, host_facts, load_average, shipped_git_state, utc_now

    git = shipped_git_state(REPO, out_dir, allow_dirty=allow_dirty)  # before anything is written

    t0 = time.monotonic()
    paths = [records_paths] if isinstance(records_paths, (str, Path)) else list(records_paths)
    frames, scenarios, all_recs = [], {}, []
    for path in paths:
        recs = JsonlRecords(path, KEY).read()
        if not recs:
            raise ValueError(f"no records in {path}")
        hashes = {r["config_hash"] for r in recs}
        if len(hashes) != 1:
            raise ValueError(f"records of several configs in {path}: {sorted(hashes)}")
        config = config_from_record(recs[0]["config"])
        if config.name in scenarios:
            raise ValueError(f"scenario {config.name!r} appears in two records files")
        frame = flow_frame(recs)
        frames.append(frame)
        all_recs += recs
        table = agreement(frame, config)
        by_engine = {}
        for e in ("kernel", "ns3"):
            rs = [r for r in recs if r["engine"] == e]
            if rs:
                by_engine[e] = {"n_samples": len(rs), "wall_s_sum": round(sum(r["wall_s"] for r in rs), 1),
                                "lock_wait_s_sum": round(sum(r.get("lock_wait_s", 0.0) for r in rs), 1),
                                "load_avg_1m": [min(r["load_avg"][0] for r in rs), max(r["load_avg"][0] for r in rs)],
                                "first_utc": min(r["started_utc"] for r in rs),
                                "last_utc": max(r["started_utc"] for r in rs)}
        kern = [r for r in recs if r["engine"] == "kernel"]
        ns3 = [r for r in recs if r["engine"] == "ns3"]
        scenarios[config.name] = {
            "records": str(path), "config": config.to_dict(), "records_config_hash": recs[0]["config_hash"],
            "engines": by_engine,
            "kernel_cc_effective": sorted({str(c) for r in kern for c in r.get("cc_effective", [])}),
            "kernel_ping_rtt_ms_median": ([round(float(np.median(x)), 3)
                                           for x in zip(*[r["ping_rtt_ms"] for r in kern])] if kern else None),
            "ns3_variants": ns3[0]["variants"] if ns3 else None,
            "criterion": f"|mean share(ns-3) - mean share(kernel)| <= {config.tolerance_share} per flow, "
                         f"aggregate utilisation within {config.tolerance_utilisation}",
            "agreement": json.loads(table.to_json(orient="records")),
        }
    frame = pd.concat(frames, ignore_index=True)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    write_tables(SCHEMA, out_dir, {"": frame})
    prov = {
        "dataset": "sim_vs_kernel", "written_utc": utc_now(), "generator": "tcpmodels.experiments.sim_vs_kernel dataset",
        "command": " ".join(["python -m tcpmodels.experiments.sim_vs_kernel", *sys.argv[1:]]),
        "scenarios": scenarios,
        "ns3_version": sorted({r["ns3_version"] for r in all_recs if r["engine"] == "ns3"}),
        "throughput_definition": "kernel: tcpi_bytes_acked of each sender; ns-3: bytes received by each sink; "
                                 "both over [latest start + warmup_s, end]",
        "wall_s_sum": round(sum(r["wall_s"] for r in all_recs), 1),
        "tools": engine_versions(), "host": host_facts(), "git": git, "load_avg_at_write": load_average(),
        "dataset_build_wall_s": round(time.monotonic() - t0, 2), "note": note,
        "files": ["sim_vs_kernel.parquet", "sim_vs_kernel.csv"],
    }
    write_provenance(SCHEMA, out_dir, prov)
    return prov


def load_dataset(data_dir: str | Path = "data") -> tuple[pd.DataFrame, dict[str, SvkConfig], dict]:
    """Read the shipped dataset: ``(frame, configs, provenance)`` from ``data_dir/datasets/`` (no root, no ns-3).

    ``configs`` maps each scenario name to its :class:`SvkConfig`.

    Parameters
    ----------
    data_dir : str or Path
        The data folder holding ``datasets/``.

    Returns
    -------
    tuple of (pandas.DataFrame, dict, dict)
        The :func:`flow_frame` of every scenario, scenario name -> :class:`SvkConfig`,
        and the provenance.

    Raises
    ------
    FileNotFoundError
        If ``sim_vs_kernel.parquet`` or its provenance is missing (build them with ``dataset``).
    """
    d = Path(data_dir) / "datasets"
    frame = pd.read_parquet(d / "sim_vs_kernel.parquet")
    prov = json.loads((d / "sim_vs_kernel_provenance.json").read_text())
    configs = {name: config_from_record(sc["config"]) for name, sc in prov["scenarios"].items()}
    return frame, configs, prov


def engine_versions() -> dict:
    """Versions of the testbed's tools and of the ns-3 wheel, for the provenance.

    Returns
    -------
    dict
        Kernel release, Python, iproute2, tcpdump, ethtool and compiler versions (None for a
        tool that is missing), the delay element's source hash, and ``ns3_wheel`` (the ns3
        package version, or ``"not installed"``).
    """
    from tcpmodels.sim import ns3_version
    from tcpmodels.testbed import tool_versions

    return {**tool_versions(), "ns3_wheel": ns3_version()}
