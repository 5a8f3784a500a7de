"""P1's factor swaps on the kernel toward ns-3 (issue 57, item 2): the variants, tables and schema version.

:mod:`tcpmodels.experiments.p1.swaps` writes it, :mod:`tcpmodels.papers.p1_datacenter_fct.swaps` reads it.
The tables are those of the alternated campaign (:mod:`tcpmodels.datasets.p1_abab`: flows and runs, the run's
testbed variant in ``engine``) under the prefix ``p1_swaps``. A seed is complete with :data:`RUNS_PER_SEED`
runs: every variant of :data:`ARMS` with the TCP and the ``tm_lia`` MPTCP background.
"""

from __future__ import annotations

from dataclasses import replace

from tcpmodels.datasets import p1_abab

__all__ = ["SCHEMA", "KEY", "CAMPAIGN", "BASELINE", "ARMS", "COUPLED_CC", "RUNS_PER_SEED"]

#: what identifies a run (the alternated campaign's key)
KEY = p1_abab.KEY
#: its ``campaign`` label
CAMPAIGN = "p1_swaps"
#: the kernel testbed as shipped (unsteered, no delay element, the kernel's loss recovery)
BASELINE = "kernel"
#: the variants, each one factor swapped toward ns-3 (``engine`` of a run): RACK and tail loss probes off
#: (ns-3 has neither), the 0.5 ms base RTT ns-3 runs at (the delay element), no reordering (RPS steering)
ARMS = (BASELINE, "kernel_norack", "kernel_rtt05", "kernel_steered")
#: the coupled control whose headline differs between the engines (ns-3 LIA +0.111 against ``tm_lia`` -0.030)
COUPLED_CC = "tm_lia"
#: the runs of a complete seed: every variant with both backgrounds
RUNS_PER_SEED = 2 * len(ARMS)

#: the dataset: the tables of :data:`tcpmodels.datasets.p1_abab.SCHEMA` under the prefix ``p1_swaps``
SCHEMA = replace(p1_abab.SCHEMA, prefix=CAMPAIGN,
                 command="python -m tcpmodels.experiments.p1.swaps dataset --records runs/p1/swaps.jsonl --out data")
