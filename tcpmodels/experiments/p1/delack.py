"""P1's engines: the kernel acknowledging every segment as ns-3 does, the factor the first swaps left (issue 57, item 2).

The first swaps session (:mod:`tcpmodels.experiments.p1.swaps`) excluded reordering, left RACK/TLP open and
could not test the 0.5 ms base RTT; delayed ACKs were not swapped because Linux has no sysctl for them. ns-3
sends one segment a packet and acknowledges every one (``DelAckCount`` 1, no offloads; :mod:`tcpmodels.sim`).
The shipped kernel testbed acknowledges far fewer: with TSO/GSO on the veths a host sends several segments as one
packet and the receiver acknowledges the packet, so its senders saw 0.2-0.3 ACKs per data segment sent (the
``p1_swaps`` records' TcpExt ``TCPPureAcks + TCPHPAcks`` over ``TCPOrigDataSent``), and a delayed-ACK timer fired
only 10-100 times a run. The swap is therefore both halves of ns-3's ACK clock:

* ``kernel``: the shipped kernel testbed (unsteered, no delay element);
* ``kernel_ack_every``: no TSO, GSO or GRO on the host links and ``quickack 1`` on every host route
  (:class:`tcpmodels.testbed.topology.Route`). The swap took if its ACKs per data segment approach 1.

**Plan** (:func:`delack_plan`): seeds 0-11 (the shipped schedules), experiment ``s4``; per seed both arms with
the TCP and the ``tm_lia`` background (4 runs), the first arm alternating from seed to seed: 48 runs of about
1 min. The claim is the swaps' (the variant's coupled headline minus the shipped testbed's, same seed, at least
half the engines' gap toward ns-3), judged with the first session's rule and the base-RTT variant's validity rule
(a packet per segment loads the CPUs: judged only while the TCP background keeps 90 % of its rate):
:mod:`tcpmodels.papers.p1_datacenter_fct.swaps`.

Command line::

    python -m tcpmodels.experiments.p1.delack run --records runs/p1/delack.jsonl
    python -m tcpmodels.experiments.p1.delack dataset --records runs/p1/delack.jsonl --out data
"""

from __future__ import annotations

from tcpmodels.datasets.p1_delack import ACK_EVERY, BASELINE, CAMPAIGN, COUPLED_CC, KEY, RUNS_PER_SEED, SCHEMA
from tcpmodels.experiments.p1.arms import TestbedArm
from tcpmodels.experiments.p1.arms_campaign import ArmsCampaign
from tcpmodels.experiments.p1.config import UNCOUPLED

__all__ = ["TESTBED_ARMS", "delack_plan", "DELACK", "run_delack", "build_delack_dataset", "main"]

#: what each arm sets on the shipped kernel testbed
TESTBED_ARMS = {
    BASELINE: TestbedArm(config={"keep_flow_order": False, "delay_element": False}),
    ACK_EVERY: TestbedArm(config={"keep_flow_order": False, "delay_element": False}, ack_every_segment=True),
}


#: the campaign whole (:class:`~tcpmodels.experiments.p1.arms_campaign.ArmsCampaign`)
DELACK = ArmsCampaign(
    what="p1 delack", module="p1.delack", doc=__doc__,
    campaign=CAMPAIGN, arms=TESTBED_ARMS, backgrounds=(("tcp", UNCOUPLED), ("mptcp", COUPLED_CC)), schema=SCHEMA,
    key=KEY, runs_per_seed=RUNS_PER_SEED,
    plan_facts={"ack_every_segment": {arm: a.ack_every_segment for arm, a in TESTBED_ARMS.items()}},
    run_help="run or resume the ACK-every-segment swap on the kernel",
)
#: the runs in order, per seed every arm (the first rotating from seed to seed) with each background:
#: ``delack_plan(seeds=SEEDS) -> list of dict`` (:meth:`~tcpmodels.experiments.p1.arms_campaign.ArmsCampaign.plan`)
delack_plan = DELACK.plan
#: run (or resume) the campaign on the kernel (:meth:`~tcpmodels.experiments.p1.arms_campaign.ArmsCampaign.run`)
run_delack = DELACK.run
#: records -> ``p1_delack_flows.parquet``, ``p1_delack_runs.parquet`` and ``p1_delack_provenance.json``:
#: ``build_delack_dataset(records_path, data_dir, *, allow_dirty=False) -> provenance``
build_delack_dataset = DELACK.build_dataset
#: ``python -m tcpmodels.experiments.p1.delack run|dataset ...``: ``main(argv=None) -> exit status``
main = DELACK.main


if __name__ == "__main__":
    raise SystemExit(main())
