"""P1 records -> the ``p1_*`` Parquet files and their provenance."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from tcpmodels.experiments.p1.config import DEFAULT_CONFIG, FLOW_PORT, KEY, REPO, P1Config

__all__ = ["build_dataset"]


# ----------------------------------------------------------------- dataset
def _frames(recs: list[dict]):
    import pandas as pd

    flow_rows, sub_rows, info_rows, run_rows = [], [], [], []
    for r in recs:
        key = {k: r[k] for k in KEY}
        flow_rows += [{**key, **f} for f in r["flows"]]
        sub_rows += [{**key, **f} for f in r.get("subflows", [])]
        info_rows += [{**key, **f} for f in r.get("tcpinfo", [])]
        run_rows.append({**key, "wall_s": r["wall_s"], "setup_s": r.get("setup_s"), "started_utc": r["started_utc"],
                         "load_avg_1m": r["load_avg"][0], "lock_wait_s": r.get("lock_wait_s", 0.0),
                         "n_connections": r["n_connections"],
                         "n_errors": sum(1 for f in r["flows"] if f.get("error")),
                         "capture_drops": sum(int(c.get("dropped") or 0) for c in r.get("captures", []))})
    flows = pd.DataFrame(flow_rows)
    for col in ("pattern", "fct_capture_s", "retransmitted_packets", "timeout_gap_s", "lost_packets"):
        if col not in flows:
            flows[col] = None
    flows["size_bytes"] = flows["size_bytes"].astype("Int64")
    for col in ("fct_s", "fct_capture_s", "rate_bps", "connect_s", "timeout_gap_s", "bytes"):
        flows[col] = pd.to_numeric(flows[col], errors="coerce").astype(float)
    for col in ("retransmitted_packets", "lost_packets"):
        flows[col] = pd.to_numeric(flows[col], errors="coerce").astype("Int64")
    flows["mptcp_subflows"] = pd.to_numeric(flows["mptcp_subflows"], errors="coerce").astype("Int64")
    flows["pattern"] = flows["pattern"].astype("string")
    flows["error"] = flows["error"].astype("string")
    return flows, pd.DataFrame(sub_rows), pd.DataFrame(info_rows), pd.DataFrame(run_rows)


def build_dataset(records_paths: Sequence[str | Path], data_dir: str | Path, config: P1Config = DEFAULT_CONFIG, *,
                  note: str = "", ship_capture: str | Path | None = None, ship_capture_s: float = 6.0,
                  ns3_status: str = "", allow_dirty: bool = False) -> dict:
    """Write ``p1_flows``, ``p1_subflows``, ``p1_tcpinfo``, ``p1_runs`` (Parquet) and ``p1_provenance.json``.

    Parameters
    ----------
    records_paths : list of str or Path
        JSONL files of :func:`run_campaign` (any engines); missing files are skipped.
    data_dir : str or Path
        ``data/``: tables go to ``datasets/``, a trimmed capture to ``captures/``.
    config : P1Config
        The configuration written to the provenance when a record carries none.
    note : str
        Free text for the provenance.
    ship_capture : str or Path, optional
        A Section 4 capture whose first ``ship_capture_s`` seconds are kept as
        ``captures/p1_s4_sample.pcap.gz`` for the notebook to classify live.
    ship_capture_s : float
        Seconds of ``ship_capture`` to keep. [s]
    ns3_status : str
        Why the ns-3 column is missing, when it is.
    allow_dirty : bool
        Write a shipped dataset (under the repository's ``data/``) even from a working tree with
        uncommitted changes (:func:`tcpmodels.records.shipped_git_state`; the provenance says so).

    Returns
    -------
    dict
        The provenance written to ``p1_provenance.json``: per-engine run counts, wall
        times [s] and load averages, the configs, the kernel's median base RTT [ms], the
        settings of both engines, the shipped capture, host, tools, git state and files.

    Raises
    ------
    ValueError
        If the files hold no record.
    """
    from datetime import datetime

    from tcpmodels.records import JsonlRecords, host_facts, shipped_git_state, utc_now
    from tcpmodels.testbed import tool_versions

    data_dir = Path(data_dir)
    out_dir = data_dir / "datasets"
    git = shipped_git_state(REPO, out_dir, allow_dirty=allow_dirty)  # before anything is written
    out_dir.mkdir(parents=True, exist_ok=True)
    recs = []
    for p in records_paths:
        recs += JsonlRecords(p, KEY).read()
    if not recs:
        raise ValueError(f"no run records in {list(map(str, records_paths))}")
    flows, subflows, tcpinfo, runs = _frames(recs)
    flows.to_parquet(out_dir / "p1_flows.parquet", index=False, compression="zstd")
    subflows.to_parquet(out_dir / "p1_subflows.parquet", index=False, compression="zstd")
    subflows.to_csv(out_dir / "p1_subflows.csv", index=False)
    tcpinfo.to_parquet(out_dir / "p1_tcpinfo.parquet", index=False, compression="zstd")
    runs.to_parquet(out_dir / "p1_runs.parquet", index=False, compression="zstd")
    runs.to_csv(out_dir / "p1_runs.csv", index=False)
    shipped = None
    if ship_capture is not None:
        from tcpmodels.traces.trim import trim_capture

        cap_dir = data_dir / "captures"
        cap_dir.mkdir(parents=True, exist_ok=True)
        shipped = trim_capture(Path(ship_capture), cap_dir / "p1_s4_sample.pcap.gz", seconds=ship_capture_s)
        shipped = {"source": str(ship_capture), "seconds": ship_capture_s, **(shipped or {}),
                   "what": "first seconds of one Section 4 sender's host-link capture (70 KB flows, port "
                           f"{FLOW_PORT}, snap length 96), kernel engine", "written_utc": utc_now()}
        (cap_dir / "p1_s4_sample.json").write_text(json.dumps(shipped, indent=1) + "\n")
    engines = {}
    for eng, g in runs.groupby("engine"):
        starts = sorted(g["started_utc"])
        engines[eng] = {
            "runs": int(len(g)), "wall_s_sum": round(float(g["wall_s"].sum()), 1),
            "wall_s_median": round(float(g["wall_s"].median()), 1),
            "setup_s": None if g["setup_s"].isna().all() else round(float(g["setup_s"].dropna().sum()), 1),
            "lock_wait_s_sum": round(float(g["lock_wait_s"].sum()), 1),
            "first_run_utc": starts[0], "last_run_utc": starts[-1],
            "elapsed_s": round((datetime.fromisoformat(starts[-1]) - datetime.fromisoformat(starts[0])).total_seconds()
                               + float(g.sort_values("started_utc")["wall_s"].iloc[-1]), 1),
            "load_avg_1m": {"min": float(g["load_avg_1m"].min()), "median": round(float(g["load_avg_1m"].median()), 2),
                            "max": float(g["load_avg_1m"].max())},
            "seeds": sorted(int(x) for x in g["seed"].unique()),
            "flow_errors": int(g["n_errors"].sum()),
        }
    configs = {}
    for r in recs:
        configs.setdefault(r["engine"], r.get("config", config.to_dict()))
    rtts = [v for r in recs if r.get("base_rtt_s") for v in r["base_rtt_s"].values() if v is not None]
    kcfg = configs.get("kernel", config.to_dict())
    prov = {
        "dataset": "p1", "written_utc": utc_now(), "generator": "tcpmodels.experiments.p1 dataset",
        "command": " ".join(["python -m tcpmodels.experiments.p1", *sys.argv[1:]]) if sys.argv else "",
        "records": [str(p) for p in records_paths], "engines": engines,
        "config": configs.get("kernel", next(iter(configs.values()))), "configs": configs,
        "kernel_base_rtt_ms": round(float(np.median(rtts)) * 1e3, 4) if rtts else None,
        "kernel_setting": {
            "topology": "tcpmodels.testbed.topologies.fat_tree (k=4, 36 namespaces), "
                        + (f"delay element on the 16 host links ({kcfg['rtt_s'] / 4 * 1e3:g} ms each way each)"
                           if kcfg.get("delay_element") else "no delay element (namespace round trip only)")
                        + f", tbf + drop-tail {kcfg['buffer_bytes']} B at every link end",
            "mptcp": "Linux kernel MPTCP v1, in-kernel path manager, one subflow per core (planes 1-3 signalled), "
                     f"uncoupled per-subflow {kcfg['cc']}",
            "ecmp": "per-flow: the schedule draws a core per single-path connection, the connection uses that "
                    "plane's addresses",
            "sysctls": {"net.ipv4.tcp_no_metrics_save": 1},
            "fct_definition": "upload: just before connect() on the sender to the last byte read by the receiver",
        },
        "ns3_setting": {"status": ns3_status or ("run" if "ns3" in engines else "not run"),
                        "mptcp": "RFC 6356 LIA-coupled NewReno subflows, one per core (tcpmodels.sim)"},
        "shipped_capture": shipped,
        "host": host_facts(), "tools": tool_versions(), "git": git, "note": note,
        "files": sorted(p.name for p in out_dir.glob("p1_*")),
    }
    from importlib.metadata import PackageNotFoundError, version

    try:
        prov["tools"]["ns3"] = version("ns3")
    except PackageNotFoundError:
        prov["tools"]["ns3"] = None
    (out_dir / "p1_provenance.json").write_text(json.dumps(prov, indent=1, default=str) + "\n")
    return prov
