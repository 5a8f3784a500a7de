"""P2 records -> the ``p2_*`` Parquet files and their provenance."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from tcpmodels.experiments.p2.config import DEFAULT_CONFIG, REPO, P2Config

__all__ = ["samples_frame", "sweep_frame", "build_dataset"]


# ----------------------------------------------------------------- dataset
def _share(t: dict) -> float | None:
    a, b = t.get("tx_bytes_p0"), t.get("tx_bytes_p1")
    if a is None or b is None or a + b <= 0:
        return None
    return a / (a + b)


def samples_frame(records: list[dict]) -> pd.DataFrame:
    """One row per sample: RTTs, load, and per transfer ``<name>_Bps`` (throughput [bytes/s]),
    for MPTCP transfers ``<name>_share1`` (path-1 share of the bytes [-]) and, for MPTCP transfers and the
    TCP data transfer, ``<name>_loss`` (retransmitted / sent segments of the client's namespace [-]).

    Parameters
    ----------
    records : list of dict
        Sample records of :func:`run_campaign`.

    Returns
    -------
    pandas.DataFrame
        Sorted by ``rep, rtt1_ms, rtt2_ms``; also ``order``, measured RTTs [ms],
        ``load_avg_1m``, ``wall_s`` [s], ``started_utc`` and ``n_errors``. Path probes are
        named ``<name>_path1`` / ``_path2``; failed transfers are NaN.
    """
    rows = []
    for r in records:
        row = {"rep": r["rep"], "rtt1_ms": r["rtt1_ms"], "rtt2_ms": r["rtt2_ms"], "order": r["order"],
               "rtt1_measured_ms": (r.get("rtt_measured_ms") or [None, None])[0],
               "rtt2_measured_ms": (r.get("rtt_measured_ms") or [None, None])[1],
               "load_avg_1m": r["load_avg"][0], "wall_s": r["wall_s"], "started_utc": r["started_utc"],
               "n_errors": sum(1 for t in r["transfers"] if t.get("error"))}
        for t in r["transfers"]:
            name = t["name"] if t["path"] is None or t["kind"] != "path_probe" else f"{t['name']}_path{t['path'] + 1}"
            rate = t.get("rate_bps")
            row[f"{name}_Bps"] = rate / 8 if rate and not t.get("error") else float("nan")
            if t["mptcp"]:
                sh = _share(t)
                row[f"{name}_share1"] = sh if sh is not None else float("nan")
            if t["kind"] in ("mptcp_data", "tcp_data", "mptcp_probe"):
                out, re_ = t.get("out_segs"), t.get("retrans_segs")
                row[f"{name}_loss"] = re_ / out if out and re_ is not None else float("nan")
        rows.append(row)
    return pd.DataFrame(rows).sort_values(["rep", "rtt1_ms", "rtt2_ms"]).reset_index(drop=True)


def sweep_frame(records: list[dict]) -> pd.DataFrame:
    """One row per Fig. 4 transfer: RTT pair, repetition, size, path-1 share, throughput.

    Parameters
    ----------
    records : list of dict
        Records of :func:`run_sweep`.

    Returns
    -------
    pandas.DataFrame
        ``rep``, ``rtt1_ms``, ``rtt2_ms`` [ms], ``label``, ``size_bytes`` [bytes], ``share1``
        (path-1 share of the bytes sent; None when unknown) [-], ``Bps`` (NaN for a failed
        transfer) [bytes/s] and ``load_avg_1m``.
    """
    rows = []
    for r in records:
        for t in r["transfers"]:
            rows.append({"rep": r["rep"], "rtt1_ms": r["rtt1_ms"], "rtt2_ms": r["rtt2_ms"], "label": t["label"],
                         "size_bytes": t["size_bytes"], "share1": _share(t),
                         "Bps": t["rate_bps"] / 8 if t.get("rate_bps") and not t.get("error") else float("nan"),
                         "load_avg_1m": r["load_avg"][0]})
    return pd.DataFrame(rows)


def build_dataset(records_path: str | Path, sweep_path: str | Path | None, out_dir: str | Path,
                  config: P2Config = DEFAULT_CONFIG, *, note: str = "", allow_dirty: bool = False) -> dict:
    """Write ``p2_samples.parquet``, ``p2_fig4.parquet`` and ``p2_provenance.json`` to ``out_dir``.

    A shipped dataset (``out_dir`` under the repository's ``data/``) is refused from a dirty tree
    unless ``allow_dirty`` (:func:`tcpmodels.records.shipped_git_state`).

    Parameters
    ----------
    records_path : str or Path
        JSONL file of :func:`run_campaign`.
    sweep_path : str or Path or None
        JSONL file of :func:`run_sweep`; None (or no records): no ``p2_fig4.parquet``.
    out_dir : str or Path
        Where the files go (created if missing).
    config : P2Config
        Written to the provenance (with its hash and :meth:`P2Config.scaling`).
    note : str
        Free text for the provenance.
    allow_dirty : bool
        Write a shipped dataset (under the repository's ``data/``) even from a working tree with
        uncommitted changes (:func:`tcpmodels.records.shipped_git_state`; the provenance says so).

    Returns
    -------
    dict
        The provenance written to ``p2_provenance.json``: sample counts, times [s],
        load averages, transfer errors, config, definitions, host, tools, git state, files.

    Raises
    ------
    ValueError
        If ``records_path`` holds no sample record.
    """
    from datetime import datetime

    from tcpmodels.records import JsonlRecords, host_facts, shipped_git_state, utc_now

    git = shipped_git_state(REPO, out_dir, allow_dirty=allow_dirty)  # before anything is written
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    recs = JsonlRecords(records_path, ("campaign", "rep", "rtt1_ms", "rtt2_ms")).read()
    if not recs:
        raise ValueError(f"no sample records in {records_path}")
    samples = samples_frame(recs)
    samples.to_parquet(out_dir / "p2_samples.parquet", index=False, compression="zstd")
    sweep_recs = JsonlRecords(sweep_path, ("campaign", "rep", "rtt1_ms", "rtt2_ms")).read() if sweep_path else []
    if sweep_recs:
        sweep_frame(sweep_recs).to_parquet(out_dir / "p2_fig4.parquet", index=False, compression="zstd")
    walls = [r["wall_s"] for r in recs]
    starts = sorted(r["started_utc"] for r in recs)
    from tcpmodels.testbed import tool_versions

    prov = {
        "dataset": "p2", "written_utc": utc_now(), "generator": "tcpmodels.experiments.p2 dataset",
        "records": str(records_path), "sweep_records": str(sweep_path) if sweep_path else None,
        "n_samples": len(recs), "n_planned": len(config.rtts_ms) ** 2 * config.reps,
        "reps_present": sorted({r["rep"] for r in recs}),
        "n_fig4_records": len(sweep_recs),
        "campaign_first_sample_utc": starts[0], "campaign_last_sample_utc": starts[-1],
        "sample_wall_s": {"sum": round(sum(walls), 1), "median": round(sorted(walls)[len(walls) // 2], 2),
                          "max": round(max(walls), 2)},
        "lock_wait_s_sum": round(sum(r.get("lock_wait_s", 0.0) for r in recs), 1),
        "elapsed_first_to_last_sample_s": round(
            (datetime.fromisoformat(starts[-1]) - datetime.fromisoformat(starts[0])).total_seconds()
            + recs[[r["started_utc"] for r in recs].index(starts[-1])]["wall_s"], 1),
        "fig4_wall_s": round(sum(r["wall_s"] for r in sweep_recs), 1),
        "load_avg_1m": {"min": min(r["load_avg"][0] for r in recs), "max": max(r["load_avg"][0] for r in recs),
                        "median": sorted(r["load_avg"][0] for r in recs)[len(recs) // 2]},
        "transfer_errors": int(samples["n_errors"].sum()),
        "config": config.to_dict(), "config_hash": config.hash(), "scaling": config.scaling(),
        "throughput_definition": "size / (last byte read by the server - connect() returned on the client), "
                                 "client -> server (upload), the same for probes and data",
        "share_definition": "path-1 share of the client's transmitted interface bytes during the transfer",
        "congestion_control": config.cc, "mptcp": "Linux kernel MPTCP v1, in-kernel path manager, default scheduler, "
                                                   "uncoupled per-subflow congestion control",
        "host": host_facts(), "tools": tool_versions(), "git": git, "note": note,
        "files": sorted(p.name for p in out_dir.glob("p2_*.parquet")),
    }
    (out_dir / "p2_provenance.json").write_text(json.dumps(prov, indent=1) + "\n")
    return prov
