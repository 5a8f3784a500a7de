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

from tcpmodels.datasets.p1_placement import BASELINE, CAMPAIGN, KEY, ONE_CPU, RUNS_PER_SEED, SCHEMA
from tcpmodels.experiments.p1.arms import TestbedArm
from tcpmodels.experiments.p1.arms_campaign import ArmsCampaign
from tcpmodels.experiments.p1.config import UNCOUPLED

__all__ = ["TESTBED_ARMS", "placement_plan", "PLACEMENT", "run_placement", "build_placement_dataset", "main"]

#: what each arm sets: both steer with RPS, over both CPUs or onto CPU 0
TESTBED_ARMS = {
    BASELINE: TestbedArm(config={"keep_flow_order": True, "delay_element": False}),
    ONE_CPU: TestbedArm(config={"keep_flow_order": True, "delay_element": False}, steer_cpus=(0,)),
}


#: the campaign whole (:class:`~tcpmodels.experiments.p1.arms_campaign.ArmsCampaign`)
PLACEMENT = ArmsCampaign(
    what="p1 placement", module="p1.placement", doc=__doc__,
    campaign=CAMPAIGN, arms=TESTBED_ARMS, backgrounds=(("tcp", UNCOUPLED),), schema=SCHEMA,
    key=KEY, runs_per_seed=RUNS_PER_SEED,
    plan_facts={"steer_cpus": {arm: a.steer_cpus for arm, a in TESTBED_ARMS.items()}},
    run_help="run or resume the CPU-placement test on the steered kernel testbed",
)
#: the runs in order, per seed every arm (the first rotating from seed to seed) with each background:
#: ``placement_plan(seeds=SEEDS) -> list of dict`` (:meth:`~tcpmodels.experiments.p1.arms_campaign.ArmsCampaign.plan`)
placement_plan = PLACEMENT.plan
#: run (or resume) the campaign on the kernel (:meth:`~tcpmodels.experiments.p1.arms_campaign.ArmsCampaign.run`)
run_placement = PLACEMENT.run
#: records -> ``p1_placement_flows.parquet``, ``p1_placement_runs.parquet`` and ``p1_placement_provenance.json``:
#: ``build_placement_dataset(records_path, data_dir, *, allow_dirty=False) -> provenance``
build_placement_dataset = PLACEMENT.build_dataset
#: ``python -m tcpmodels.experiments.p1.placement run|dataset ...``: ``main(argv=None) -> exit status``
main = PLACEMENT.main


if __name__ == "__main__":
    raise SystemExit(main())
