"""P1's ACK-every-segment swap on the kernel toward ns-3 (issue 57, item 2, second session): arms, tables, schema.

:mod:`tcpmodels.experiments.p1.delack` writes it, :mod:`tcpmodels.papers.p1_datacenter_fct.swaps` reads it
beside the first session's swaps (:mod:`tcpmodels.datasets.p1_swaps`). The tables are those of the alternated
campaign (:mod:`tcpmodels.datasets.p1_abab`: flows and runs, the run's variant in ``engine``) under the prefix
``p1_delack``. A seed is complete with :data:`RUNS_PER_SEED` runs: both arms with the TCP and the ``tm_lia``
MPTCP background.
"""

from __future__ import annotations

from dataclasses import replace

from tcpmodels.datasets import p1_abab
from tcpmodels.datasets.p1_swaps import BASELINE, COUPLED_CC

__all__ = ["SCHEMA", "KEY", "CAMPAIGN", "BASELINE", "ACK_EVERY", "ARMS", "COUPLED_CC", "RUNS_PER_SEED"]

#: what identifies a run (the alternated campaign's key)
KEY = p1_abab.KEY
#: its ``campaign`` label
CAMPAIGN = "p1_delack"
#: the shipped kernel testbed sending one segment a packet and acknowledging each at once (no TSO/GSO/GRO on the
#: host links, ``quickack 1`` on every host route), as ns-3 does (``DelAckCount`` 1, no offloads)
ACK_EVERY = "kernel_ack_every"
#: the arms (``engine`` of a run): the shipped testbed (:data:`~tcpmodels.datasets.p1_swaps.BASELINE`) and
#: :data:`ACK_EVERY`
ARMS = (BASELINE, ACK_EVERY)
#: the runs of a complete seed: both arms with both backgrounds
RUNS_PER_SEED = 2 * len(ARMS)

#: the dataset: the tables of :data:`tcpmodels.datasets.p1_abab.SCHEMA` under the prefix ``p1_delack``
SCHEMA = replace(p1_abab.SCHEMA, prefix=CAMPAIGN,
                 command="python -m tcpmodels.experiments.p1.delack dataset --records runs/p1/delack.jsonl --out data")
