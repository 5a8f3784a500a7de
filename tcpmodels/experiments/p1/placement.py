"""P1's steered testbed with RPS on one CPU against both: the stated test of the CPU-placement lead (issue 57, item 1).

In the alternated campaign's idle session the steered testbed's 70 KB flows beside the TCP background took
14-67 ms on average from seed to seed, and exploring the runs' CPU times afterwards found the slow seeds to be
those whose veth work spread evenly over the host's two CPUs and left neither idle (Spearman rho -0.92 with how
unevenly it fell; :mod:`tcpmodels.papers.p1_datacenter_fct.cpu`). That lead was found after the results were
read; this campaign tests it by fixing the placement by design, on the same seeds and schedules:

* ``kernel_steered``: the shipped steered testbed, RPS steering every veth's received packets over both CPUs
  (the flow's hash picks the CPU);
* ``kernel_steered_cpu0``: RPS steering every veth's received packets to CPU 0, leaving CPU 1 to the
  applications and the senders (:class:`tcpmodels.testbed.Testbed` ``steer_cpus``). Still no reordering: a
  flow's packets are processed on one CPU.

**Plan** (:func:`placement_plan`): seeds 0-11 (the shipped schedules), experiment ``s4`` with the TCP
background, both arms per seed, the arm that starts alternating from seed to seed: 24 runs of about 1 min plus
a testbed rebuild per run (about 30 min). The claim and the rule for reading it:
:mod:`tcpmodels.papers.p1_datacenter_fct.placement`.

Command line::

    python -m tcpmodels.experiments.p1.placement run --records runs/p1/placement.jsonl
    python -m tcpmodels.experiments.p1.placement dataset --records runs/p1/placement.jsonl --out data
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from tcpmodels.datasets.p1_placement import ARMS, BASELINE, CAMPAIGN, KEY, ONE_CPU, RUNS_PER_SEED, SCHEMA
from tcpmodels.experiments.campaign_dataset import CampaignCli, CampaignDataset
from tcpmodels.experiments.p1.abab import SEEDS
from tcpmodels.experiments.p1.arms import TestbedArm
from tcpmodels.experiments.p1.config import DEFAULT_CONFIG, UNCOUPLED, P1Config

__all__ = ["TESTBED_ARMS", "placement_plan", "run_placement", "build_placement_dataset", "main"]

#: what each arm sets: both steer with RPS, over both CPUs or onto CPU 0
TESTBED_ARMS = {
    BASELINE: TestbedArm(config={"keep_flow_order": True, "delay_element": False}),
    ONE_CPU: TestbedArm(config={"keep_flow_order": True, "delay_element": False}, steer_cpus=(0,)),
}


def placement_plan(seeds: Sequence[int] = SEEDS) -> list[dict]:
    """The runs in order: per seed both arms with the TCP background, the first arm alternating from seed to seed.

    Parameters
    ----------
    seeds : sequence of int
        Schedule seeds, run in this order (default: the alternated campaign's, the shipped schedules).

    Returns
    -------
    list of dict
        The fields of :data:`~tcpmodels.datasets.p1_placement.KEY`, ``order`` and ``arm_position`` (0 first, 1
        second in its seed).

    Raises
    ------
    ValueError
        If ``seeds`` is empty or repeats a seed.
    """
    seeds = [int(s) for s in seeds]
    if not seeds or len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds must be a non-empty list without repeats; got {seeds}")
    out = []
    for k, seed in enumerate(seeds):
        for pos in range(len(ARMS)):
            out.append({"campaign": CAMPAIGN, "engine": ARMS[(k + pos) % len(ARMS)], "experiment": "s4",
                        "protocol": "tcp", "cc": UNCOUPLED, "seed": seed, "arm_position": pos, "order": len(out)})
    return out


def run_placement(records_path: str | Path, *, seeds: Sequence[int] = SEEDS, config: P1Config = DEFAULT_CONFIG,
                  limit: int | None = None, progress: bool = True, lock_timeout_s: float = 7200.0) -> int:
    """Run (or resume) the placement test on the kernel (:func:`tcpmodels.experiments.p1.arms.run_arms`).

    Parameters
    ----------
    records_path : str or Path
        JSONL, one record per run; runs already there are skipped.
    seeds : sequence of int
        :func:`placement_plan`'s seeds.
    config : P1Config
        The P1 setting both arms share.
    limit : int, optional
        Stop after this many new runs.
    progress : bool
        tqdm bar on stderr.
    lock_timeout_s : float
        Longest wait for the host lock per run. [s]

    Returns
    -------
    int
        Runs measured and recorded by this call.
    """
    from tcpmodels.experiments.p1.arms import run_arms

    return run_arms(records_path, placement_plan(seeds), TESTBED_ARMS, key=KEY, desc="p1 placement", seeds=seeds,
                    config=config, limit=limit, progress=progress, lock_timeout_s=lock_timeout_s)


def _placement_tables(recs: list[dict]) -> tuple[dict, dict]:
    """The alternated campaign's two tables; the provenance's facts: complete seeds, plan, times, loads."""
    from tcpmodels.experiments.p1.abab import arms_tables

    return arms_tables(recs, runs_per_seed=RUNS_PER_SEED, plan={
        "seeds": list(SEEDS), "runs_planned": len(placement_plan(SEEDS)), "arms": list(ARMS),
        "steer_cpus": {arm: a.steer_cpus for arm, a in TESTBED_ARMS.items()}})


#: records -> ``p1_placement_flows.parquet``, ``p1_placement_runs.parquet`` and ``p1_placement_provenance.json``:
#: ``build_placement_dataset(records_path, data_dir, *, allow_dirty=False) -> provenance``
build_placement_dataset = CampaignDataset(SCHEMA, KEY, _placement_tables, "p1 placement")


def _options(run: argparse.ArgumentParser, dataset: argparse.ArgumentParser) -> None:
    """``run``: the seeds."""
    run.add_argument("--seeds", nargs="+", type=int, default=list(SEEDS))


def _run(a: argparse.Namespace) -> dict:
    """Run or resume the placement test."""
    return {"measured": run_placement(a.records, seeds=a.seeds, limit=a.limit, progress=not a.no_progress),
            "records": a.records}


def _dataset(a: argparse.Namespace) -> dict:
    """Build the dataset; its runs and complete seeds."""
    prov = build_placement_dataset(a.records, a.out, allow_dirty=a.allow_dirty)
    return {"runs": prov["runs"], "seeds_complete": prov["seeds_complete"]}


#: ``python -m tcpmodels.experiments.p1.placement run|dataset ...``: ``main(argv=None) -> exit status``
main = CampaignCli("p1.placement", __doc__, "p1 placement", run=_run, dataset=_dataset,
                   run_help="run or resume the CPU-placement test on the steered kernel testbed", options=_options)


if __name__ == "__main__":
    raise SystemExit(main())
