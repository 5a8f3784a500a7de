"""P1's two kernel testbeds in one session, alternated per seed: the steering factor without the day (issue 57, item 1).

The shipped steered runs (engine ``kernel_steered``) ran on another day than the unsteered ones
(``kernel``), at a higher load, and a same-session check found a +30 % day effect on queries; so
the shipped difference between the testbeds (C1.3's uncoupled mean +0.226 unsteered, +0.006
steered) mixes steering with the day. This campaign removes the day by design: for every seed the
Section 4 experiment runs on both testbeds one after the other in the same sitting, the TCP and
the uncoupled MPTCP background on each, and the order of the testbeds alternates from seed to seed
(even seeds unsteered first, odd seeds steered first: A A B B, B B A A, ...), so a drift over the
session falls on both testbeds alike. Each run records what the P1 runner records (flows, background
subflows, the TcpExt counters that moved, summed over the 16 hosts: reordering events, DSACKs, RTOs,
fast retransmissions, data segments sent) plus the host's CPU time by kind over the run (``steal``:
the hypervisor's; ``softirq``: the veth hops) and the load before and after.

Plan, claims and the rule for reading them are stated in code before the run:
:data:`SEEDS` (:mod:`~tcpmodels.experiments.p1.arms`'s) and :func:`abab_plan` here, the claims in
:mod:`tcpmodels.papers.p1_datacenter_fct.abab` (``ABAB_SPECS``, ``Abab.verdicts``, ``Abab.paragraph``).

Command line::

    python -m tcpmodels.experiments.p1.abab run --records runs/p1/abab.jsonl --captures runs/p1/captures_abab
    python -m tcpmodels.experiments.p1.abab dataset --records runs/p1/abab.jsonl --out data

``run`` resumes (the key is :data:`ABAB_KEY`); ``dataset`` writes ``p1_abab_flows.parquet``,
``p1_abab_runs.parquet`` and ``p1_abab_provenance.json``. The second session (the same plan with nothing
else on the host, :mod:`tcpmodels.datasets.p1_abab_idle`) keeps its own records and dataset::

    python -m tcpmodels.experiments.p1.abab run --records runs/p1/abab_idle.jsonl --captures runs/p1/captures_abab_idle
    python -m tcpmodels.experiments.p1.abab dataset --session idle --records runs/p1/abab_idle.jsonl --out data
"""

from __future__ import annotations

import argparse

import pandas as pd

from tcpmodels.datasets.p1_abab import CAMPAIGN, TCP_EXT_KEPT, complete_seeds, tcp_ext_column
from tcpmodels.datasets.p1_abab import KEY as ABAB_KEY
from tcpmodels.datasets.p1_abab import SCHEMA as DATASET
from tcpmodels.datasets.p1_abab_idle import SCHEMA as IDLE_DATASET
from tcpmodels.experiments.campaign_dataset import CampaignCli, CampaignDataset
from tcpmodels.experiments.p1.arms import SEEDS, ArmsRun, TestbedArm
from tcpmodels.experiments.p1.config import UNCOUPLED, engine_label

__all__ = ["SEEDS", "ABAB_KEY", "CAMPAIGN", "TCP_EXT_KEPT", "TESTBED_ARMS", "ABAB", "abab_plan", "run_abab", "abab_frames", "arms_tables", "build_abab_dataset",
           "build_abab_idle_dataset", "SESSIONS", "main"]

# the run key (ABAB_KEY), the campaign label and the TcpExt counters kept are the dataset's: tcpmodels.datasets.p1_abab
#: the two testbeds the runs name (``engine``): unsteered and steered (RPS, :class:`tcpmodels.testbed.Testbed`
#: ``keep_flow_order``)
TESTBED_ARMS = {engine_label("kernel", steered): TestbedArm(config={"keep_flow_order": steered})
                for steered in (False, True)}


#: the campaign's plan and run (:class:`~tcpmodels.experiments.p1.arms.ArmsRun`): per seed both testbeds, their
#: order alternating from seed to seed, on each the TCP-background run then the MPTCP-background run (``uncoupled``)
ABAB = ArmsRun(what="p1 abab", campaign=CAMPAIGN, arms=TESTBED_ARMS,
               backgrounds=(("tcp", UNCOUPLED), ("mptcp", UNCOUPLED)), key=ABAB_KEY)
#: the runs in the order they run: ``abab_plan(seeds=SEEDS) -> list of dict`` with the keys of :data:`ABAB_KEY`,
#: ``order`` and ``arm_position`` (:meth:`~tcpmodels.experiments.p1.arms.ArmsRun.plan`)
abab_plan = ABAB.plan
#: run (or resume) the alternated campaign on the kernel, the fat-tree rebuilt whenever the next run is on the other
#: testbed: ``run_abab(records_path, *, seeds=SEEDS, config=DEFAULT_CONFIG, capture_dir=None, limit=None,
#: progress=True, lock_timeout_s=7200.0) -> runs measured`` (:meth:`~tcpmodels.experiments.p1.arms.ArmsRun.run`)
run_abab = ABAB.run


def abab_frames(recs: list[dict]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The campaign's tables from its records: the Section 4 flows and one row per run.

    Parameters
    ----------
    recs : list of dict
        Records of :func:`run_abab`.

    Returns
    -------
    (flows, runs) : tuple of pandas.DataFrame
        ``flows``: one row per connection with the run key (:data:`ABAB_KEY`), ``order``,
        ``arm_position`` and the P1 flow columns (``kind``, ``fct_s`` [s], ``rate_bps`` [bit/s],
        ``retransmitted_packets``, ``pattern``, ``error``). ``runs``: the run key, ``order``, ``arm_position``,
        ``started_utc``, ``wall_s`` [s], ``load_avg_1m`` / ``load_avg_1m_after``, ``cpu_steal_s``,
        ``cpu_softirq_s``, ``cpu_idle_s`` (summed over the CPUs over the run) [s], ``rps_cpus``, ``n_errors``,
        ``git_commit``, ``git_dirty``, the background's mean rate ``bg_rate_bps`` [bit/s] and every counter of
        :data:`TCP_EXT_KEPT` (``tcp_<name>``; 0 where it did not move).

    Raises
    ------
    ValueError
        If a record lacks the run key.
    """
    flow_rows, run_rows = [], []
    for r in recs:
        missing = [k for k in ABAB_KEY if k not in r]
        if missing:
            raise ValueError(f"a p1 abab record lacks {missing} (order {r.get('order')}): not a record of this campaign")
        key = {k: r[k] for k in ABAB_KEY} | {"order": r["order"], "arm_position": r["arm_position"]}
        flow_rows += [{**key, **{k: f.get(k) for k in ("conn_id", "kind", "src", "dst", "start_s", "size_bytes",
                                                       "fct_s", "rate_bps", "retransmitted_packets", "pattern",
                                                       "error")}} for f in r["flows"]]
        cpu = r.get("cpu_time_s") or {}
        bg = [f["rate_bps"] for f in r["flows"] if f.get("kind") == "background" and f.get("rate_bps") is not None]
        ext = r.get("tcp_ext") or {}
        run_rows.append({**key, "started_utc": r["started_utc"], "wall_s": r["wall_s"], "setup_s": r.get("setup_s"),
                         "load_avg_1m": r["load_avg"][0], "load_avg_1m_after": (r.get("load_avg_after") or [None])[0],
                         "lock_wait_s": r.get("lock_wait_s", 0.0),
                         **{f"cpu_{k}_s": sum(v.get(k, 0.0) for v in cpu.values()) if cpu else None
                            for k in ("steal", "softirq", "idle")},
                         "rps_cpus": r.get("rps_cpus"), "n_errors": sum(1 for f in r["flows"] if f.get("error")),
                         "bg_rate_bps": sum(bg) / len(bg) if bg else None,
                         "git_commit": (r.get("git") or {}).get("commit"), "git_dirty": (r.get("git") or {}).get("dirty"),
                         **{tcp_ext_column(k): int(ext.get(k, 0)) for k in TCP_EXT_KEPT}})
    flows = pd.DataFrame(flow_rows)
    if len(flows):
        for col in ("fct_s", "rate_bps", "start_s"):
            flows[col] = pd.to_numeric(flows[col], errors="coerce").astype(float)
        flows["retransmitted_packets"] = pd.to_numeric(flows["retransmitted_packets"], errors="coerce").astype("Int64")
        flows["size_bytes"] = pd.to_numeric(flows["size_bytes"], errors="coerce").astype("Int64")
        for col in ("pattern", "error", "kind"):
            flows[col] = flows[col].astype("string")
        flows = flows.round({"fct_s": 6, "start_s": 6, "rate_bps": 0})
    return flows, pd.DataFrame(run_rows)


def _abab_tables(recs: list[dict]) -> tuple[dict, dict]:
    """The two tables (:func:`abab_frames`) and the provenance's facts: seeds complete, plan, times, loads."""
    flows, runs = abab_frames(recs)
    load = runs["load_avg_1m"]
    return {"flows": flows, "runs": runs}, {
        "runs": int(len(runs)), "seeds_complete": complete_seeds(runs),
        "plan": {"seeds": list(SEEDS), "runs_planned": len(abab_plan(SEEDS))},
        "first_run_utc": min(runs["started_utc"]), "last_run_utc": max(runs["started_utc"]),
        "wall_s_median": round(float(runs["wall_s"].median()), 1),
        "lock_wait_s_sum": round(float(runs["lock_wait_s"].sum()), 1),
        "load_avg_1m": {"min": float(load.min()), "median": float(load.median()), "max": float(load.max())},
        "cpu_steal_s_sum": None if runs["cpu_steal_s"].isna().all() else round(float(runs["cpu_steal_s"].sum()), 2),
        "flow_errors": int(runs["n_errors"].sum()), "config": recs[0].get("config")}


def arms_tables(recs: list[dict], *, runs_per_seed: int, plan: dict) -> tuple[dict, dict]:
    """A campaign of :func:`~tcpmodels.experiments.p1.arms.run_arms`: its two tables and its provenance's facts.

    Parameters
    ----------
    recs : list of dict
        The campaign's records.
    runs_per_seed : int
        The runs of a complete seed.
    plan : dict
        The plan's facts for the provenance (seeds, runs planned, arms...).

    Returns
    -------
    tuple of (dict, dict)
        ``{"flows", "runs"}`` (:func:`abab_frames`) and the facts.
    """
    flows, runs = abab_frames(recs)
    load = runs["load_avg_1m"]
    return {"flows": flows, "runs": runs}, {
        "runs": int(len(runs)), "seeds_complete": complete_seeds(runs, runs_per_seed), "plan": plan,
        "first_run_utc": min(runs["started_utc"]), "last_run_utc": max(runs["started_utc"]),
        "load_avg_1m": {"min": float(load.min()), "median": float(load.median()), "max": float(load.max())},
        "flow_errors": int(runs["n_errors"].sum())}


#: records -> ``p1_abab_flows.parquet``, ``p1_abab_runs.parquet`` and ``p1_abab_provenance.json`` through the
#: dataset's schema: ``build_abab_dataset(records_path, data_dir, *, allow_dirty=False) -> provenance``
#: (:class:`~tcpmodels.experiments.campaign_dataset.CampaignDataset`; the files go to ``data_dir/datasets``)
build_abab_dataset = CampaignDataset(DATASET, ABAB_KEY, _abab_tables, "p1 abab")
#: the second session's records -> ``p1_abab_idle_*`` (the same tables, :mod:`tcpmodels.datasets.p1_abab_idle`)
build_abab_idle_dataset = CampaignDataset(IDLE_DATASET, ABAB_KEY, _abab_tables, "p1 abab idle")
#: ``dataset --session NAME`` -> the builder of that session's dataset
SESSIONS = {"loaded": build_abab_dataset, "idle": build_abab_idle_dataset}


def _options(run: argparse.ArgumentParser, dataset: argparse.ArgumentParser) -> None:
    """``run``: the seeds and where to capture."""
    run.add_argument("--seeds", nargs="+", type=int, default=list(SEEDS))
    run.add_argument("--captures", help="capture the 70 KB flows here (their loss)")
    dataset.add_argument("--session", choices=sorted(SESSIONS), default="loaded",
                         help="which session's dataset the records make: loaded (p1_abab, the first) or idle "
                              "(p1_abab_idle, the second)")


def _run(a: argparse.Namespace) -> dict:
    """Run or resume the campaign."""
    n = run_abab(a.records, seeds=a.seeds, capture_dir=a.captures, limit=a.limit, progress=not a.no_progress)
    return {"measured": n, "records": a.records}


def _dataset(a: argparse.Namespace) -> dict:
    """Build the dataset; its runs and complete seeds."""
    prov = SESSIONS[a.session](a.records, a.out, allow_dirty=a.allow_dirty)
    return {"session": a.session, "runs": prov["runs"], "seeds_complete": prov["seeds_complete"]}


#: ``python -m tcpmodels.experiments.p1.abab run|dataset ...``: ``main(argv=None) -> exit status``
main = CampaignCli("p1.abab", __doc__, "p1 abab", run=_run, dataset=_dataset,
                  run_help="run or resume the alternated campaign", options=_options)


if __name__ == "__main__":
    raise SystemExit(main())
