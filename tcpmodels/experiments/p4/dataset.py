"""Records -> ``p4_kernel.parquet``, the raw records compressed, and ``p4_provenance.json``."""

from __future__ import annotations

import gzip
import json
import shutil
import sys
import time
from datetime import datetime
from pathlib import Path

from tcpmodels.datasets import write_provenance, write_tables
from tcpmodels.datasets.p4 import SCHEMA
from tcpmodels.experiments.p4.config import DEFAULT_CONFIG, REPO, P4Config
from tcpmodels.experiments.p4.kernel import KERNEL_KEY, kernel_frame

__all__ = ["build_dataset"]


#: what runs a sample: the testbed, the campaign loop, the P4 session (the analysis runs at dataset time)
MEASURING_CODE = ("tcpmodels/testbed", "tcpmodels/experiments/campaign.py", "tcpmodels/experiments/p4/kernel.py")


def _measuring_code_changes(recs: list[dict]) -> dict:
    """Files of the measuring code that differ between the commit the campaign started from and HEAD."""
    import subprocess

    starts = sorted({(r.get("git_at_start") or {}).get("commit") or (r.get("git") or {}).get("commit")
                     for r in sorted(recs, key=lambda r: r["started_utc"])[:1]} - {None})
    out = {"start_commits": starts, "paths": list(MEASURING_CODE), "changed_files": None}
    if starts:
        proc = subprocess.run(["git", "-C", str(REPO), "diff", "--name-only", starts[0], "HEAD", "--", *MEASURING_CODE],
                              capture_output=True, text=True)
        if proc.returncode == 0:
            out["changed_files"] = proc.stdout.split()
    return out


def build_dataset(records_path: str | Path, out_dir: str | Path, config: P4Config = DEFAULT_CONFIG, *,
                  note: str = "", allow_dirty: bool = False) -> dict:
    """Write ``p4_kernel.parquet``, ``p4_records.jsonl.gz`` (the raw records) and ``p4_provenance.json``.

    Parameters
    ----------
    records_path : str or Path
        The campaign's JSONL records.
    out_dir : str or Path
        Output folder (``data/datasets`` for the shipped dataset).
    config : P4Config
        The setting the records were made with.
    note : str
        Free text kept in the provenance.
    allow_dirty : bool
        Write a shipped dataset even from a dirty tree (:func:`tcpmodels.records.shipped_git_state`).

    Returns
    -------
    dict
        The provenance written.
    """
    from tcpmodels.records import JsonlRecords, host_facts, load_average, shipped_git_state, utc_now

    t0 = time.monotonic()
    git = shipped_git_state(REPO, out_dir, allow_dirty=allow_dirty)
    recs = JsonlRecords(records_path, KERNEL_KEY).read()
    if not recs:
        raise ValueError(f"no records in {records_path}")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    df = kernel_frame(recs, config)
    write_tables(SCHEMA, out_dir, {"kernel": df})
    with open(records_path, "rb") as src, gzip.open(out_dir / "p4_records.jsonl.gz", "wb", compresslevel=9) as dst:
        shutil.copyfileobj(src, dst)
    starts = sorted(r["started_utc"] for r in recs)
    walls = sorted(r["wall_s"] for r in recs)
    last = max(recs, key=lambda r: r["started_utc"])
    ok = df[df["error"].isna()] if "error" in df else df
    from tcpmodels.testbed import tool_versions

    prov = {
        "dataset": "p4", "written_utc": utc_now(), "generator": "tcpmodels.experiments.p4 dataset",
        "command": " ".join(["python -m tcpmodels.experiments.p4", *sys.argv[1:]])
        if sys.argv and sys.argv[0].endswith(("p4/__main__.py",)) else None,
        "config": config.to_dict(), "config_hash": config.hash(), "scaling": config.scaling(),
        "engine": "Linux kernel TCP (cubic) in network namespaces: one link c -- s, AF_PACKET delay element, tbf",
        "kernel": {
            "records": str(records_path), "n_samples": len(recs), "n_planned": len(config.cells) * config.reps,
            "n_ok": len(ok), "reps_present": sorted({r["rep"] for r in recs}),
            "samples_per_testbed": df.groupby("testbed").size().to_dict(),
            "first_sample_utc": starts[0], "last_sample_utc": starts[-1],
            "sample_wall_s": {"sum": round(sum(walls), 1), "median": round(walls[len(walls) // 2], 2),
                              "max": round(walls[-1], 2)},
            "elapsed_first_to_last_s": round((datetime.fromisoformat(starts[-1])
                                              - datetime.fromisoformat(starts[0])).total_seconds() + last["wall_s"], 1),
            "lock_wait_s_sum": round(sum(r.get("lock_wait_s", 0.0) for r in recs), 1),
            "load_avg_1m": {"min": min(r["load_avg"][0] for r in recs), "max": max(r["load_avg"][0] for r in recs)},
            "record_config_hashes": sorted({r.get("config_hash") for r in recs}),
            "record_git": sorted({json.dumps(r.get("git"), sort_keys=True) for r in recs}),
            "record_git_note": "git is the working tree's state when the sample was recorded; git_at_start (newer "
                               "records) or the first record's commit is the code the campaign process imported",
            "measuring_code_changes": _measuring_code_changes(recs),
            "rate_definition": "least-squares slope of the sender's tcpi_bytes_acked (sampled every sample_interval_s) "
                               "against time over the span from max(warm-up, window plateau + 2 RTT) to the end of "
                               "the transfer (rate_endpoints_bps: the difference between the span's ends, off by up "
                               "to one window because the ACKs of a window arrive together)",
            "window_definition": "tcpi_snd_wnd of the sender (the receiver's advertised window, scaled), median "
                                 "over the span; the cap is the receiver's tcp_rmem maximum",
            "model": "tcpmodels.models.throughput.window_limited_throughput_bps(snd_wnd, min_rtt)",
        },
        "files": ["p4_kernel.parquet", "p4_records.jsonl.gz"],
        "tools": tool_versions(), "host": host_facts(), "git": git, "load_avg_at_write": load_average(),
        "dataset_build_wall_s": round(time.monotonic() - t0, 1), "note": note,
    }
    write_provenance(SCHEMA, out_dir, prov)
    return prov
