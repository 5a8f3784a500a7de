"""P1 records -> the ``p1_*`` Parquet files and their provenance, merged with the rows already shipped.

The raw records of earlier campaign stages may be gone (only the shipped Parquet tables
remain), so :func:`build_dataset` keeps every shipped run whose key (engine, experiment,
protocol, cc, seed) no new record has, and replaces those that a new record re-measures.
Tables of schema 1 (no ``cc`` column) are read with ``cc`` = ``uncoupled`` (kernel) and
``lia`` (ns-3), :func:`~tcpmodels.experiments.p1.config.record_cc`.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from tcpmodels.datasets import write_provenance, write_tables
from tcpmodels.datasets.p1 import SCHEMA, cc_of
from tcpmodels.experiments.p1.config import (
    DEFAULT_CONFIG,
    FLOW_PORT,
    KEY,
    REPO,
    P1Config,
    engine_family,
    record_cc,
)

__all__ = ["build_dataset", "merge_shipped", "workload_mismatch", "TABLES"]

#: the Parquet tables of the dataset (``p1_<name>.parquet``)
TABLES = ("flows", "subflows", "tcpinfo", "runs")


# ----------------------------------------------------------------- dataset
def _frames(recs: list[dict]):
    import pandas as pd

    flow_rows, sub_rows, info_rows, run_rows = [], [], [], []
    for r in recs:
        key = {k: r[k] for k in KEY if k != "cc"} | {"cc": record_cc(r)}
        key = {k: key[k] for k in KEY}
        flow_rows += [{**key, **f} for f in r["flows"]]
        sub_rows += [{**key, **f} for f in r.get("subflows", [])]
        info_rows += [{**key, **f} for f in r.get("tcpinfo", [])]
        run_rows.append({**key, "wall_s": r["wall_s"], "setup_s": r.get("setup_s"), "started_utc": r["started_utc"],
                         "load_avg_1m": r["load_avg"][0], "lock_wait_s": r.get("lock_wait_s", 0.0),
                         "n_connections": r["n_connections"],
                         "n_errors": sum(1 for f in r["flows"] if f.get("error")),
                         "capture_drops": sum(int(c.get("dropped") or 0) for c in r.get("captures", [])),
                         "git_commit": (r.get("git") or {}).get("commit"), "git_dirty": (r.get("git") or {}).get("dirty"),
                         "cc_map_connections": (r.get("cc_map") or {}).get("connections_seen"),
                         "cc_map_max_subflows": (r.get("cc_map") or {}).get("max_subflows")})
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
    if "cc_effective" not in flows:
        flows["cc_effective"] = None
    flows["cc_effective"] = flows["cc_effective"].astype("string")
    return flows, pd.DataFrame(sub_rows), pd.DataFrame(info_rows), pd.DataFrame(run_rows)


#: flow columns kept to 1 microsecond: the shortest FCT is 0.1 ms and the captures' timestamps are microseconds [s]
_TIME_COLUMNS = ("start_s", "fct_s", "connect_s", "fct_capture_s", "timeout_gap_s")


def _rounded(flows):
    """The flows table at the precision that carries information (times to 1 us, rates to 1 bit/s).

    The clocks' nanosecond digits are noise and made ``p1_flows.parquet`` 40 % larger (14 MiB).
    """
    return flows.round({**dict.fromkeys(_TIME_COLUMNS, 6), "rate_bps": 0})


def _with_cc(frame, git: dict | None = None):
    """A shipped table with the ``cc`` column in key order (schema 1 had none) and, for runs, the git columns."""
    if frame.empty:
        return frame
    out = frame.copy()
    if "cc" not in out:
        out["cc"] = [cc_of(e) for e in out["engine"]]
    if git is not None and "git_commit" not in out:
        out["git_commit"] = git.get("commit")
        out["git_dirty"] = git.get("dirty")
    cols = [*KEY, *[c for c in out.columns if c not in KEY]]
    return out[cols]


#: config fields that may differ between runs that are compared (they choose runs or the testbed, not the
#: workload; the testbed is also in the run's ``engine`` label)
_FREE_FIELDS = ("seeds", "experiments", "keep_flow_order")


def workload_mismatch(configs: dict, recs: list[dict]) -> str | None:
    """Why records cannot join the runs already there: a workload setting differs (else None).

    Runs are paired by seed across backgrounds, congestion controls and testbeds, which is valid only
    when every run of an engine drew its schedule from the same configuration (e.g. the Section 4
    arrival window ``duration_s4_s``: another value gives other arrivals and destinations). The
    kernel's testbeds (``kernel``, ``kernel_steered``) count as one engine here
    (:func:`~tcpmodels.experiments.p1.config.engine_family`).

    Parameters
    ----------
    configs : dict
        Engine label -> the configuration of the runs already there (the shipped provenance's ``configs``).
    recs : list of dict
        The new records (each with ``engine`` and ``config``).

    Returns
    -------
    str or None
        One line naming the engine and the differing fields with both values.
    """
    seen = {engine_family(e): c for e, c in configs.items()}
    for r in recs:
        cfg = r.get("config")
        if not cfg:
            continue
        ref = seen.setdefault(engine_family(r["engine"]), cfg)
        diff = {k: (ref.get(k), cfg.get(k)) for k in set(ref) | set(cfg)
                if k not in _FREE_FIELDS and json.dumps(ref.get(k)) != json.dumps(cfg.get(k))}
        if diff:
            what = ", ".join(f"{k} {a!r} there, {b!r} in the record" for k, (a, b) in sorted(diff.items()))
            return (f"{r['engine']} run {r['experiment']}/{r['protocol']}/{r.get('cc')}/seed {r['seed']} was configured "
                    f"differently from the {r['engine']} runs it would be paired with ({what}): its schedule differs; "
                    "rerun it with the same settings (e.g. --duration-s4-s), or build without the shipped runs")
    return None


def merge_shipped(shipped: dict, new: dict) -> tuple[dict, dict]:
    """Merge the tables of a new build into the shipped ones: new runs replace shipped runs of the same key.

    Parameters
    ----------
    shipped : dict of str to pandas.DataFrame
        The shipped tables (:data:`TABLES`; missing or empty ones are fine), already carrying ``cc``.
    new : dict of str to pandas.DataFrame
        The tables built from the records.

    Returns
    -------
    (tables, counts) : tuple of dict
        The merged tables (shipped rows whose run key is not among the new runs, then the new
        rows) and ``{"kept_runs", "replaced_runs", "new_runs"}``.
    """
    import pandas as pd

    new_keys = set(map(tuple, new["runs"][list(KEY)].itertuples(index=False))) if len(new["runs"]) else set()
    old_runs = shipped.get("runs")
    old_keys = set(map(tuple, old_runs[list(KEY)].itertuples(index=False))) if old_runs is not None and len(old_runs) \
        else set()
    out = {}
    for name in TABLES:
        old, fresh = shipped.get(name), new[name]
        if old is None or old.empty:
            out[name] = fresh
            continue
        keep = ~pd.Series([tuple(k) in new_keys for k in old[list(KEY)].itertuples(index=False)], index=old.index,
                          dtype=bool)
        parts = [f for f in (old[keep], fresh) if len(f)]
        out[name] = pd.concat(parts, ignore_index=True) if parts else fresh
    counts = {"kept_runs": len(old_keys - new_keys), "replaced_runs": len(old_keys & new_keys),
              "new_runs": len(new_keys - old_keys)}
    return out, counts


def _group_stats(g) -> dict:
    from datetime import datetime

    starts = sorted(g["started_utc"])
    return {
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
        "git": sorted({f"{c} (dirty {d})" for c, d in zip(g.get("git_commit", [None] * len(g)),
                                                           g.get("git_dirty", [None] * len(g)))}, key=str),
    }


def build_dataset(records_paths: Sequence[str | Path], data_dir: str | Path, config: P1Config = DEFAULT_CONFIG, *,
                  note: str = "", ship_capture: str | Path | None = None, ship_capture_s: float = 6.0,
                  ns3_status: str = "", allow_dirty: bool = False, keep_shipped: bool = True) -> dict:
    """Write ``p1_flows``, ``p1_subflows``, ``p1_tcpinfo``, ``p1_runs`` (Parquet) and ``p1_provenance.json``.

    The runs already in ``data_dir`` (the shipped tables) are kept unless a record re-measures
    them (:func:`merge_shipped`); the provenance says how many of each, and carries the
    provenance of the kept runs' earlier builds under ``earlier_builds`` (empty once every run comes
    from the records given).

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
    keep_shipped : bool
        Merge with the tables already in ``data_dir`` (default); False: write only the records' runs.

    Returns
    -------
    dict
        The provenance written to ``p1_provenance.json``: per-engine and per-(engine, cc) run
        counts (``engines``, ``by_cc``), wall times [s] and load averages, the configs, the
        kernel's median base RTT [ms], the settings of both engines, the shipped capture, host,
        tools, git state, the merge counts (``merge``), the earlier builds and files.

    Raises
    ------
    ValueError
        If the files hold no record, or a record's workload settings differ from those of the runs
        of its engine it joins (:func:`workload_mismatch`).
    """
    import pandas as pd

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
    old_prov_path = out_dir / "p1_provenance.json"
    old_prov = json.loads(old_prov_path.read_text()) if keep_shipped and old_prov_path.exists() else {}
    shipped_tables = {}
    if keep_shipped:
        for name in TABLES:
            path = out_dir / f"p1_{name}.parquet"
            if path.exists():
                shipped_tables[name] = _with_cc(pd.read_parquet(path), old_prov.get("git", {}) if name == "runs" else None)
    # the settings the new runs must share: those of each engine whose shipped runs stay
    new_keys = {tuple(record_cc(r) if k == "cc" else r[k] for k in KEY) for r in recs}
    old_runs = shipped_tables.get("runs")
    staying = ({engine_family(k[0]) for k in map(tuple, old_runs[list(KEY)].itertuples(index=False))
                if tuple(k) not in new_keys} if old_runs is not None and len(old_runs) else set())
    why = workload_mismatch({e: c for e, c in old_prov.get("configs", {}).items() if engine_family(e) in staying},
                            recs)
    if why:
        raise ValueError(why)
    built = dict(zip(TABLES, _frames(recs)))
    merged, merge_counts = merge_shipped(shipped_tables, built)
    flows, subflows, tcpinfo, runs = (merged[n] for n in TABLES)
    if "cc_effective" in flows:
        flows["cc_effective"] = flows["cc_effective"].astype("string")
    flows = _rounded(flows)
    write_tables(SCHEMA, out_dir, {"flows": flows, "subflows": subflows, "tcpinfo": tcpinfo, "runs": runs})
    shipped = old_prov.get("shipped_capture")
    if ship_capture is not None:
        from tcpmodels.traces.trim import trim_capture

        cap_dir = data_dir / "captures"
        cap_dir.mkdir(parents=True, exist_ok=True)
        shipped = trim_capture(Path(ship_capture), cap_dir / "p1_s4_sample.pcap.gz", seconds=ship_capture_s)
        shipped = {"source": str(ship_capture), "seconds": ship_capture_s, **(shipped or {}),
                   "what": "first seconds of one Section 4 sender's host-link capture (70 KB flows, port "
                           f"{FLOW_PORT}, snap length 96), kernel engine", "written_utc": utc_now()}
        (cap_dir / "p1_s4_sample.json").write_text(json.dumps(shipped, indent=1) + "\n")
    engines = {eng: _group_stats(g) for eng, g in runs.groupby("engine")}
    by_cc = {}
    for (eng, cc), g in runs.groupby(["engine", "cc"]):
        by_cc.setdefault(eng, {})[cc] = {**_group_stats(g), "by_protocol": {p: int(n) for p, n in
                                                                            g["protocol"].value_counts().items()}}
    this_build = {f"{eng}/{cc}": _group_stats(g) for (eng, cc), g in built["runs"].groupby(["engine", "cc"])}
    configs = dict(old_prov.get("configs", {}))
    for r in recs:
        configs[r["engine"]] = r.get("config", config.to_dict())
    rtts = [v for r in recs if r.get("base_rtt_s") for v in r["base_rtt_s"].values() if v is not None]
    # history only while a row still comes from an earlier build: rebuilt wholly from records, it has none
    earlier = list(old_prov.get("earlier_builds", [])) if merge_counts["kept_runs"] else []
    if old_prov and merge_counts["kept_runs"]:
        earlier.append({k: old_prov.get(k) for k in ("written_utc", "command", "records", "git", "note", "engines",
                                                     "kernel_base_rtt_ms", "tools")})
    kcfg = configs.get("kernel", config.to_dict())
    prov = {
        "dataset": "p1", "written_utc": utc_now(), "generator": "tcpmodels.experiments.p1 dataset",
        "command": " ".join(["python -m tcpmodels.experiments.p1", *sys.argv[1:]]) if sys.argv else "",
        "records": [str(p) for p in records_paths], "engines": engines, "by_cc": by_cc,
        "this_build": this_build, "merge": merge_counts,
        "config": configs.get("kernel", next(iter(configs.values()))), "configs": configs,
        "kernel_base_rtt_ms": round(float(np.median(rtts)) * 1e3, 4) if rtts else old_prov.get("kernel_base_rtt_ms"),
        "kernel_setting": {
            "topology": "tcpmodels.testbed.topologies.fat_tree (k=4, 36 namespaces), "
                        + (f"delay element on the 16 host links ({kcfg['rtt_s'] / 4 * 1e3:g} ms each way each)"
                           if kcfg.get("delay_element") else "no delay element (namespace round trip only)")
                        + f", tbf + drop-tail {kcfg['buffer_bytes']} B at every link end",
            "mptcp": "Linux kernel MPTCP v1, in-kernel path manager, one subflow per core (planes 1-3 signalled); "
                     f"cc 'uncoupled': per-subflow {kcfg['cc']}; 'tm_lia' / 'tm_olia': the BPF controls of "
                     "tcpmodels.testbed.kernel_cc on every MPTCP socket (so on each subflow), coupled per connection; "
                     f"single-path sockets {kcfg['cc']}",
            "cc": {"uncoupled": f"per-subflow {kcfg['cc']} (the TCP-background runs are in this group)",
                   "tm_lia": "RFC 6356 LIA in BPF (tcpmodels/testbed/kernel_cc/tm_lia.bpf.c)",
                   "tm_olia": "OLIA in BPF (tcpmodels/testbed/kernel_cc/tm_olia.bpf.c)"},
            "ecmp": "per-flow: the schedule draws a core per single-path connection, the connection uses that "
                    "plane's addresses",
            "testbeds": {"kernel": "no RPS steering: a veth's received packets are processed on the CPU that sent "
                                   "them, so segments of one flow can be reordered",
                         "kernel_steered": "RPS steering on every veth (Testbed keep_flow_order): no reordering"},
            "sysctls": {"net.ipv4.tcp_no_metrics_save": 1},
            "fct_definition": "upload: just before connect() on the sender to the last byte read by the receiver",
        },
        "ns3_setting": {"status": ns3_status or ("run" if "ns3" in engines else "not run"),
                        "mptcp": "RFC 6356 LIA-coupled NewReno subflows, one per core (tcpmodels.sim)"},
        "shipped_capture": shipped,
        "host": host_facts(), "tools": tool_versions(), "git": git, "note": note, "earlier_builds": earlier,
        "files": sorted(p.name for p in out_dir.glob("p1_*")),
    }
    from importlib.metadata import PackageNotFoundError, version

    try:
        prov["tools"]["ns3"] = version("ns3")
    except PackageNotFoundError:
        prov["tools"]["ns3"] = None
    write_provenance(SCHEMA, out_dir, prov)
    return prov
