"""P2 records -> the ``p2_*`` Parquet files and their provenance."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pandas as pd

from tcpmodels.datasets import write_provenance, write_tables
from tcpmodels.datasets.p2 import SCHEMA
from tcpmodels.experiments.p2.config import CONDITION_LIMITS, DEFAULT_CONFIG, REPO, SAMPLE_KEY, P2Config

__all__ = ["samples_frame", "sweep_frame", "build_dataset", "add_conditions", "conditions_summary", "path1_share",
           "SHIPPED_SETTING", "ROW_KEY"]

#: the setting of the 256 samples shipped before the ``cc`` column existed (their raw records are gone;
#: provenance config hash 966907e879d18b40): uncoupled CUBIC subflows, 4 MiB data, 20 Mbit/s paths
SHIPPED_SETTING = {"cc": "cubic", "data_size_bytes": 4 * 1024 * 1024, "path_rate_bps": 20e6}
#: columns that identify a row of ``p2_samples.parquet``
ROW_KEY = ("cc", "data_size_bytes", "path_rate_bps", "rep", "rtt1_ms", "rtt2_ms")


def add_conditions(df: pd.DataFrame) -> pd.DataFrame:
    """Add the three regime conditions of issue 17 to every sample row (a copy), from what was measured.

    * ``data_over_bdp``: data size / BDP of the larger-RTT path, BDP = path rate × the larger of the two
      RTTs measured by UDP echo (the configured RTT where none was measured) [-]; must be >= 10.
    * ``mptcp_over_path_rate``: MPTCP data throughput / the path rate (both paths have the same rate, so
      this is the faster single path's rate; the goodput a single path reaches is below it) [-]; must be > 1.
      ``mptcp_over_tcp_data`` beside it: over the single-path TCP data transfer measured on path 1 [-].
    * ``probe64_share2``: share of the 64 KB MPTCP probe's transmitted bytes on path 2 (subflow 2) [-];
      must be < 0.05.

    ``conditions_hold`` is True where all three hold (False where one is unknown).

    Parameters
    ----------
    df : pandas.DataFrame
        Rows of :func:`samples_frame` (``data_size_bytes`` [bytes], ``path_rate_bps`` [bit/s], RTTs [ms],
        ``mptcp_data_Bps``, ``tcp_data_Bps`` [bytes/s], ``mptcp_probe_64KB_share1`` [-]).

    Returns
    -------
    pandas.DataFrame
        ``df`` with ``data_over_bdp``, ``mptcp_over_path_rate``, ``mptcp_over_tcp_data``,
        ``probe64_share2`` and ``conditions_hold``.
    """
    import numpy as np

    out = df.copy()
    r1 = out["rtt1_measured_ms"].astype(float).fillna(out["rtt1_ms"].astype(float))
    r2 = out["rtt2_measured_ms"].astype(float).fillna(out["rtt2_ms"].astype(float))
    bdp = out["path_rate_bps"].astype(float) / 8 * np.maximum(r1, r2) * 1e-3
    out["data_over_bdp"] = out["data_size_bytes"].astype(float) / bdp
    out["mptcp_over_path_rate"] = out["mptcp_data_Bps"].astype(float) * 8 / out["path_rate_bps"].astype(float)
    out["mptcp_over_tcp_data"] = out["mptcp_data_Bps"].astype(float) / out["tcp_data_Bps"].astype(float)
    out["probe64_share2"] = 1.0 - out["mptcp_probe_64KB_share1"].astype(float)
    lim = CONDITION_LIMITS
    out["conditions_hold"] = ((out["data_over_bdp"] >= lim["data_over_bdp_min"])
                              & (out["mptcp_over_path_rate"] > lim["mptcp_over_path_rate_min"])
                              & (out["probe64_share2"] < lim["probe_share2_max"]))
    return out


def conditions_summary(df: pd.DataFrame) -> dict:
    """The three conditions over some samples: min / median / max of each and how many samples meet it.

    Parameters
    ----------
    df : pandas.DataFrame
        Rows with the columns of :func:`add_conditions`.

    Returns
    -------
    dict
        ``limits`` (:data:`~tcpmodels.experiments.p2.config.CONDITION_LIMITS`), ``n_samples``, per
        condition ``{min, median, max, n_met}`` and ``n_all_met``.
    """
    lim = CONDITION_LIMITS
    tests = {"data_over_bdp": lambda v: v >= lim["data_over_bdp_min"],
             "mptcp_over_path_rate": lambda v: v > lim["mptcp_over_path_rate_min"],
             "mptcp_over_tcp_data": None,
             "probe64_share2": lambda v: v < lim["probe_share2_max"]}
    out: dict = {"limits": dict(lim), "n_samples": int(len(df))}
    for col, test in tests.items():
        v = df[col].astype(float).dropna()
        out[col] = {"min": round(float(v.min()), 4) if len(v) else None,
                    "median": round(float(v.median()), 4) if len(v) else None,
                    "max": round(float(v.max()), 4) if len(v) else None}
        if test is not None:
            out[col]["n_met"] = int(test(v).sum())
    out["n_all_met"] = int(df["conditions_hold"].sum())
    return out


# ----------------------------------------------------------------- dataset
def path1_share(t: dict) -> float | None:
    """Path-1 share of the bytes one transfer sent (the client's interface counters, headers included).

    Parameters
    ----------
    t : dict
        A transfer of a sample or sweep record (``tx_bytes_p0``, ``tx_bytes_p1`` [bytes]).

    Returns
    -------
    float or None
        ``tx_bytes_p0 / (tx_bytes_p0 + tx_bytes_p1)`` [-]; None when a counter is missing or both are 0.
    """
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
        Sorted by :data:`ROW_KEY` (``cc, data_size_bytes, path_rate_bps`` [bit/s], ``rep, rtt1_ms,
        rtt2_ms``); also ``subflow_cc`` (the congestion controls ``ss`` showed on the data
        transfer's MPTCP subflows, comma-joined; None when none was seen), ``n_subflows_seen`` (local
        addresses, i.e. paths, with an MPTCP subflow seen), ``order``,
        measured RTTs [ms], ``load_avg_1m``, ``wall_s`` [s], ``started_utc``, ``n_errors`` and the
        conditions of :func:`add_conditions`. Path probes are named ``<name>_path1`` / ``_path2``;
        failed transfers are NaN.
    """
    rows = []
    for r in records:
        subflows = next((t.get("subflow_cc") for t in r["transfers"] if t["kind"] == "mptcp_data"), None) or []
        row = {"cc": r.get("cc", SHIPPED_SETTING["cc"]),
               "data_size_bytes": r.get("data_size_bytes", SHIPPED_SETTING["data_size_bytes"]),
               "path_rate_bps": r.get("path_rate_bps", SHIPPED_SETTING["path_rate_bps"]),
               "subflow_cc": ",".join(sorted({f["cc"] for f in subflows if f.get("mptcp_subflow")})) or None,
               "n_subflows_seen": len({f["local"].rsplit(":", 1)[0] for f in subflows if f.get("mptcp_subflow")}),
               "rep": r["rep"], "rtt1_ms": r["rtt1_ms"], "rtt2_ms": r["rtt2_ms"], "order": r["order"],
               "rtt1_measured_ms": (r.get("rtt_measured_ms") or [None, None])[0],
               "rtt2_measured_ms": (r.get("rtt_measured_ms") or [None, None])[1],
               "load_avg_1m": r["load_avg"][0], "wall_s": r["wall_s"], "started_utc": r["started_utc"],
               "n_errors": sum(1 for t in r["transfers"] if t.get("error"))}
        for t in r["transfers"]:
            name = t["name"] if t["path"] is None or t["kind"] != "path_probe" else f"{t['name']}_path{t['path'] + 1}"
            rate = t.get("rate_bps")
            row[f"{name}_Bps"] = rate / 8 if rate and not t.get("error") else float("nan")
            if t["mptcp"]:
                sh = path1_share(t)
                row[f"{name}_share1"] = sh if sh is not None else float("nan")
            if t["kind"] in ("mptcp_data", "tcp_data", "mptcp_probe"):
                out, re_ = t.get("out_segs"), t.get("retrans_segs")
                row[f"{name}_loss"] = re_ / out if out and re_ is not None else float("nan")
        rows.append(row)
    return add_conditions(pd.DataFrame(rows)).sort_values(list(ROW_KEY)).reset_index(drop=True)


def sweep_frame(records: list[dict]) -> pd.DataFrame:
    """One row per Fig. 4 transfer: RTT pair, repetition, size, path-1 share, throughput.

    Parameters
    ----------
    records : list of dict
        Records of :func:`run_sweep`.

    Returns
    -------
    pandas.DataFrame
        ``cc``, ``path_rate_bps`` [bit/s] (a record without it: the shipped setting's), ``rep``, ``rtt1_ms``,
        ``rtt2_ms`` [ms], ``label``, ``size_bytes`` [bytes], ``share1`` (path-1 share of the bytes
        sent; None when unknown) [-], ``Bps`` (NaN for a failed transfer) [bytes/s] and ``load_avg_1m``.
    """
    rows = []
    for r in records:
        for t in r["transfers"]:
            rows.append({"cc": r.get("cc", SHIPPED_SETTING["cc"]),
                         "path_rate_bps": float(r.get("path_rate_bps", SHIPPED_SETTING["path_rate_bps"])),
                         "rep": r["rep"], "rtt1_ms": r["rtt1_ms"], "rtt2_ms": r["rtt2_ms"], "label": t["label"],
                         "size_bytes": t["size_bytes"], "share1": path1_share(t),
                         "Bps": t["rate_bps"] / 8 if t.get("rate_bps") and not t.get("error") else float("nan"),
                         "load_avg_1m": r["load_avg"][0]})
    return pd.DataFrame(rows)


def _part(recs: list[dict], sweep_recs: list[dict], samples: pd.DataFrame, config: P2Config, records_path,
          sweep_path, git: dict, host: dict, tools: dict) -> dict:
    """Provenance of the samples of one setting, in the keys the notebook reads. ``config`` is the setting's
    with the most repetitions planned; ``record_config_hashes`` the hashes the records carry (a repetition
    run with ``--reps 2`` after one run with ``--reps 1`` carries another)."""
    from datetime import datetime

    from tcpmodels.records import records_git_summary

    walls = [r["wall_s"] for r in recs]
    starts = sorted(r["started_utc"] for r in recs)
    return {
        "cc": config.cc, "data_size_bytes": config.data_size_bytes, "kept_from_earlier_dataset": False,
        "records": str(records_path), "sweep_records": str(sweep_path) if sweep_path and sweep_recs else None,
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
        "subflow_cc_seen": sorted({c for v in samples["subflow_cc"].dropna() for c in str(v).split(",")}),
        "samples_with_two_subflows_seen": int((samples["n_subflows_seen"] >= 2).sum()),
        "conditions": conditions_summary(samples),
        "config": config.to_dict(), "config_hash": config.hash(), "scaling": config.scaling(),
        "record_config_hashes": sorted({r["config_hash"] for r in recs if r.get("config_hash")}),
        "throughput_definition": "size / (last byte read by the server - connect() returned on the client), "
                                 "client -> server (upload), the same for probes and data",
        "share_definition": "path-1 share of the client's transmitted interface bytes during the transfer",
        "congestion_control": config.cc,
        "mptcp": "Linux kernel MPTCP v1, in-kernel path manager, default scheduler, "
                 + ("uncoupled per-subflow congestion control (cubic)" if config.cc == "cubic" else
                    f"subflows coupled by {config.cc} (BPF struct_ops, tcpmodels.testbed.kernel_cc)"),
        "host": host, "tools": tools, "git": git,
        **records_git_summary(recs + sweep_recs),
    }


def _kept_parts(old_prov: dict, old: pd.DataFrame) -> list[dict]:
    """Parts of an earlier provenance for the rows kept from it (a provenance without ``parts`` is one)."""
    parts = old_prov.get("parts")
    if parts is None and old_prov:
        part = {k: v for k, v in old_prov.items() if k not in ("dataset", "written_utc", "generator", "files")}
        cfg = part.get("config", {})
        parts = [{**part, "cc": cfg.get("cc", SHIPPED_SETTING["cc"]),
                  "data_size_bytes": cfg.get("data_size_bytes", SHIPPED_SETTING["data_size_bytes"])}]
    kept = []
    for part in parts or []:
        rate = part.get("config", {}).get("rate_bps", SHIPPED_SETTING["path_rate_bps"])
        rows = old[(old["cc"] == part["cc"]) & (old["data_size_bytes"] == part["data_size_bytes"])
                   & (old["path_rate_bps"] == rate)]
        if len(rows):
            kept.append({**part, "kept_from_earlier_dataset": True, "n_samples_kept": int(len(rows)),
                         "conditions": conditions_summary(rows)})
    return kept


def _with_shipped_setting(df: pd.DataFrame) -> pd.DataFrame:
    """Rows of a dataset written before the ``cc`` column: fill the setting they were measured in."""
    df = df.copy()
    for col, value in SHIPPED_SETTING.items():
        if col not in df.columns:
            df[col] = value
    return df


def build_dataset(records_path: str | Path, sweep_path: str | Path | None, out_dir: str | Path,
                  config: P2Config = DEFAULT_CONFIG, *, note: str = "", allow_dirty: bool = False,
                  keep_existing: bool = True) -> dict:
    """Write ``p2_samples.parquet``, ``p2_fig4.parquet`` and ``p2_provenance.json`` to ``out_dir``.

    The rows already in ``out_dir`` are kept (their raw records may be gone: the 256 uncoupled samples
    shipped first have no records left), except those the new records measure again (same
    :data:`ROW_KEY`); rows written before the ``cc`` column get :data:`SHIPPED_SETTING`. The
    provenance holds one *part* per setting (``cc``, data size): the part of the kept rows is carried
    over, each setting of the new records gets a new part. A shipped dataset (``out_dir`` under the
    repository's ``data/``) is refused from a dirty tree unless ``allow_dirty``
    (:func:`tcpmodels.records.shipped_git_state`).

    Parameters
    ----------
    records_path : str or Path or None
        JSONL file of :func:`run_campaign`; None: only rewrite the rows already in ``out_dir`` (adds the
        ``cc`` column, the conditions and the provenance parts to a dataset written before them).
    sweep_path : str or Path or None
        JSONL file of :func:`run_sweep`; None (or no records): the Fig. 4 rows already in ``out_dir`` stay.
    out_dir : str or Path
        Where the files go (created if missing).
    config : P2Config
        The setting of records that do not carry their own ``config`` (schema 1).
    note : str
        Free text for the provenance.
    allow_dirty : bool
        Write a shipped dataset (under the repository's ``data/``) even from a working tree with
        uncommitted changes (:func:`tcpmodels.records.shipped_git_state`; the provenance says so).
    keep_existing : bool
        Keep the rows already in ``out_dir`` (False: the new records only).

    Returns
    -------
    dict
        The provenance written to ``p2_provenance.json``: ``n_samples`` (all rows), ``n_samples_by_cc``,
        ``sample_wall_s`` (of the new records), ``parts`` (per setting: sample counts, times [s], load
        averages, transfer errors, the conditions, config, host, tools, git state), ``condition_limits``.

    Raises
    ------
    ValueError
        If ``records_path`` holds no sample record and there are no rows in ``out_dir`` to keep.
    """
    from tcpmodels.records import JsonlRecords, host_facts, shipped_git_state, utc_now
    from tcpmodels.testbed import tool_versions

    git = shipped_git_state(REPO, out_dir, allow_dirty=allow_dirty)  # before anything is written
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    recs = JsonlRecords(records_path, SAMPLE_KEY).read() if records_path else []
    if not recs and not (keep_existing and (out_dir / "p2_samples.parquet").exists()):
        raise ValueError(f"no sample records in {records_path} and no dataset in {out_dir} to keep")
    sweep_recs = JsonlRecords(sweep_path, ("campaign", "cc", "rep", "rtt1_ms", "rtt2_ms")).read() if sweep_path else []
    host, tools = host_facts(), tool_versions()

    def config_of(r):
        return P2Config(**{k: tuple(v) if isinstance(v, list) else v for k, v in r["config"].items()}) \
            if "config" in r else config

    groups: dict[str, list[dict]] = {}
    for r in recs:  # one part per setting: how many repetitions a run planned (reps) does not split it
        groups.setdefault(replace(config_of(r), reps=1, fig4_reps=1).hash(), []).append(r)
    new = samples_frame(recs) if recs else pd.DataFrame(columns=list(ROW_KEY))
    parts = []
    for recs_g in groups.values():
        cfg = max((config_of(r) for r in recs_g), key=lambda c: c.reps)  # the plan that covers them all
        rows = new[(new["cc"] == cfg.cc) & (new["data_size_bytes"] == cfg.data_size_bytes)
                   & (new["path_rate_bps"] == cfg.rate_bps)]
        sw = [r for r in sweep_recs if r.get("cc", SHIPPED_SETTING["cc"]) == cfg.cc
              and r.get("path_rate_bps", SHIPPED_SETTING["path_rate_bps"]) == cfg.rate_bps]  # its sweep: same rate
        parts.append(_part(recs_g, sw, rows, cfg, records_path, sweep_path, git, host, tools))

    old_path, prov_path = out_dir / "p2_samples.parquet", out_dir / "p2_provenance.json"
    kept = pd.DataFrame()
    if keep_existing and old_path.exists():
        old = _with_shipped_setting(pd.read_parquet(old_path))
        new_keys = set(map(tuple, new[list(ROW_KEY)].itertuples(index=False, name=None)))
        mask = [k not in new_keys for k in old[list(ROW_KEY)].itertuples(index=False, name=None)]
        kept = add_conditions(old[mask])
        old_prov = json.loads(prov_path.read_text()) if prov_path.exists() else {}
        parts = _kept_parts(old_prov, kept) + parts
    samples = new if not len(kept) else kept if not len(new) else pd.concat([kept, new], ignore_index=True)
    samples = samples.sort_values(list(ROW_KEY)).reset_index(drop=True)
    write_tables(SCHEMA, out_dir, {"samples": samples})

    fig4_path = out_dir / "p2_fig4.parquet"
    if sweep_recs:
        fig4 = sweep_frame(sweep_recs)
        if keep_existing and fig4_path.exists():
            old4 = _with_shipped_setting(pd.read_parquet(fig4_path)).reindex(columns=fig4.columns)
            # a sweep replaces the old rows of its own setting only: (cc, path rate), never another rate's
            swept = set(zip(fig4["cc"], fig4["path_rate_bps"]))
            old4 = old4[[k not in swept for k in zip(old4["cc"], old4["path_rate_bps"])]]
            fig4 = pd.concat([old4, fig4], ignore_index=True)
        write_tables(SCHEMA, out_dir, {"fig4": fig4})
    elif fig4_path.exists() and "cc" not in pd.read_parquet(fig4_path).columns:
        write_tables(SCHEMA, out_dir, {"fig4": _with_shipped_setting(pd.read_parquet(fig4_path))
                                       .drop(columns=["data_size_bytes", "path_rate_bps"])})

    walls = [r["wall_s"] for r in recs] or [0.0]
    prov = {
        "dataset": "p2", "written_utc": utc_now(), "generator": "tcpmodels.experiments.p2 dataset",
        "records": str(records_path), "sweep_records": str(sweep_path) if sweep_path else None,
        "n_samples": int(len(samples)),
        "n_samples_by_cc": {str(k): int(v) for k, v in samples.groupby("cc").size().items()},
        "n_new_samples": len(recs), "n_fig4_records": len(sweep_recs),
        "sample_wall_s": {"sum": round(sum(walls), 1), "median": round(sorted(walls)[len(walls) // 2], 2),
                          "max": round(max(walls), 2)},
        "condition_limits": dict(CONDITION_LIMITS),
        "condition_definitions": {
            "data_over_bdp": "data size / (path rate x larger of the two RTTs measured by UDP echo)",
            "mptcp_over_path_rate": "MPTCP data throughput / the path rate (both paths have the same rate)",
            "probe64_share2": "share of the 64 KB MPTCP probe's transmitted interface bytes on path 2"},
        "parts": parts, "git": git, "host": host, "tools": tools, "note": note,
        "files": sorted(p.name for p in out_dir.glob("p2_*.parquet")),
    }
    write_provenance(SCHEMA, out_dir, prov, default=None)
    return prov
