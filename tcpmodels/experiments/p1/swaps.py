"""P1's engines: the kernel with one factor at a time swapped toward ns-3 (issue 57, item 2).

C1.3's coupled headline (the 70 KB flows' mean FCT beside LIA-coupled MPTCP against beside TCP, in log) is
+0.111 [+0.064, +0.159] on ns-3 and -0.030 [-0.092, +0.031] on the kernel's ``tm_lia`` (contradicted). ns-3's and the kernel's
TCP already agree on the minimum RTO (0.2 s), the initial window (10) and the loss recovery (PRR)
(:class:`tcpmodels.sim.config.TcpOptions`); what still differs, and can be swapped on the kernel, is one
factor per variant (:data:`~tcpmodels.datasets.p1_swaps.ARMS`, :data:`TESTBED_ARMS`):

* ``kernel_norack``: RACK and tail loss probes off in every host (``net.ipv4.tcp_recovery`` 0,
  ``net.ipv4.tcp_early_retrans`` 0; ns-3 has neither);
* ``kernel_rtt05``: the 0.5 ms base RTT ns-3 runs at, by the delay element on the 16 host links (the
  kernel testbed otherwise has the namespaces' own tens of microseconds);
* ``kernel_steered``: no reordering (RPS steering; ns-3 does not reorder).

Not swapped, and why: delayed ACKs (ns-3 acknowledges every segment, ``DelAckCount`` 1, because 2 locks
flows out after an RTO, :mod:`tcpmodels.sim`; the kernel has no sysctl for it, only a per-route ``quickack``
the fat-tree's multipath routes do not carry yet).

**Plan** (:func:`swaps_plan`): seeds 0-11 (the shipped schedules), experiment ``s4``; per seed every
variant with the TCP and the ``tm_lia`` background (8 runs), the variants' order rotated from seed to seed
(seed k starts at variant k mod 4), so a drift over the session falls on every variant alike: 96 runs, about
1 min each plus a testbed rebuild per variant (about 2 h). The claims and the rule for reading them:
:mod:`tcpmodels.papers.p1_datacenter_fct.swaps`.

Command line::

    python -m tcpmodels.experiments.p1.swaps run --records runs/p1/swaps.jsonl
    python -m tcpmodels.experiments.p1.swaps dataset --records runs/p1/swaps.jsonl --out data
"""

from __future__ import annotations

from tcpmodels.datasets.p1_swaps import BASELINE, CAMPAIGN, COUPLED_CC, KEY, RUNS_PER_SEED, SCHEMA
from tcpmodels.experiments.p1.arms import TestbedArm
from tcpmodels.experiments.p1.arms_campaign import ArmsCampaign
from tcpmodels.experiments.p1.config import UNCOUPLED

__all__ = ["SEEDS", "TESTBED_ARMS", "swaps_plan", "SWAPS", "run_swaps", "build_swaps_dataset", "main"]

#: the seeds, in run order (the alternated campaign's: the shipped schedules)
SEEDS = tuple(range(12))
#: what each variant changes on the shipped kernel testbed
TESTBED_ARMS = {
    BASELINE: TestbedArm(config={"keep_flow_order": False, "delay_element": False}),
    "kernel_norack": TestbedArm(config={"keep_flow_order": False, "delay_element": False},
                                host_sysctls=(("net.ipv4.tcp_recovery", "0"), ("net.ipv4.tcp_early_retrans", "0"))),
    "kernel_rtt05": TestbedArm(config={"keep_flow_order": False, "delay_element": True}),
    "kernel_steered": TestbedArm(config={"keep_flow_order": True, "delay_element": False}),
}


#: the campaign whole (:class:`~tcpmodels.experiments.p1.arms_campaign.ArmsCampaign`); its provenance also says
#: which sysctls each variant sets in every host
SWAPS = ArmsCampaign(
    what="p1 swaps", module="p1.swaps", doc=__doc__,
    campaign=CAMPAIGN, arms=TESTBED_ARMS, backgrounds=(("tcp", UNCOUPLED), ("mptcp", COUPLED_CC)), schema=SCHEMA,
    key=KEY, runs_per_seed=RUNS_PER_SEED, plan_facts={},
    facts={"host_sysctls": {arm: [list(kv) for kv in a.host_sysctls] for arm, a in TESTBED_ARMS.items()}},
    run_help="run or resume the factor swaps on the kernel", captures=True,
)
#: the runs in order, per seed every arm (the first rotating from seed to seed) with each background:
#: ``swaps_plan(seeds=SEEDS) -> list of dict`` (:meth:`~tcpmodels.experiments.p1.arms_campaign.ArmsCampaign.plan`)
swaps_plan = SWAPS.plan
#: run (or resume) the swaps on the kernel (:meth:`~tcpmodels.experiments.p1.arms_campaign.ArmsCampaign.run`,
#: through :func:`tcpmodels.experiments.p1.arms.run_arms`)
run_swaps = SWAPS.run
#: records -> ``p1_swaps_flows.parquet``, ``p1_swaps_runs.parquet`` and ``p1_swaps_provenance.json`` through the
#: dataset's schema: ``build_swaps_dataset(records_path, data_dir, *, allow_dirty=False) -> provenance``
build_swaps_dataset = SWAPS.build_dataset
#: ``python -m tcpmodels.experiments.p1.swaps run|dataset ...``: ``main(argv=None) -> exit status``
main = SWAPS.main


if __name__ == "__main__":
    raise SystemExit(main())
