"""P1's CPU-placement test on the steered kernel testbed (issue 57, item 1, stated test): arms, tables, schema.

:mod:`tcpmodels.experiments.p1.placement` writes it, :mod:`tcpmodels.papers.p1_datacenter_fct.placement` reads
it. The tables are those of the alternated campaign (:mod:`tcpmodels.datasets.p1_abab`: flows and runs, the
run's arm in ``engine``, the RPS mask it ran with in ``rps_cpus``) under the prefix ``p1_placement``. A seed is
complete with :data:`RUNS_PER_SEED` runs: both arms with the TCP background.
"""

from __future__ import annotations

from dataclasses import replace

from tcpmodels.datasets import p1_abab

__all__ = ["SCHEMA", "KEY", "CAMPAIGN", "BASELINE", "ONE_CPU", "ARMS", "RUNS_PER_SEED"]

#: what identifies a run (the alternated campaign's key)
KEY = p1_abab.KEY
#: its ``campaign`` label
CAMPAIGN = "p1_placement"
#: the steered testbed as shipped: RPS steers each veth's received packets over both of the host's CPUs
BASELINE = "kernel_steered"
#: the same testbed with RPS steering every veth's received packets to CPU 0 alone
ONE_CPU = "kernel_steered_cpu0"
#: the arms (``engine`` of a run)
ARMS = (BASELINE, ONE_CPU)
#: the runs of a complete seed: both arms with the TCP background
RUNS_PER_SEED = len(ARMS)

#: the dataset: the tables of :data:`tcpmodels.datasets.p1_abab.SCHEMA` under the prefix ``p1_placement``
SCHEMA = replace(p1_abab.SCHEMA, prefix=CAMPAIGN,
                 command="python -m tcpmodels.experiments.p1.placement dataset --records runs/p1/placement.jsonl "
                         "--out data")
