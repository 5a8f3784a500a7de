"""P1's alternated-testbeds campaign, its second session: the same plan with nothing else on the host (issue 57, item 1).

The first session (:mod:`tcpmodels.datasets.p1_abab`, 2026-12-06 15:46-16:41 UTC) ran while four other
engineers' jobs held the host's 1-min load at 11.7-12.5, against 1.35-2.01 for the shipped runs whose
difference it is to explain. This session runs the same plan (:func:`tcpmodels.experiments.p1.abab.abab_plan`,
same seeds, same code path, same records) with nothing else running; its tables are those of the first
session, under the prefix ``p1_abab_idle``. How the two sessions are read:
:mod:`tcpmodels.papers.p1_datacenter_fct.abab`.
"""

from __future__ import annotations

from dataclasses import replace

from tcpmodels.datasets import p1_abab

__all__ = ["SCHEMA"]

#: the dataset: the tables of :data:`tcpmodels.datasets.p1_abab.SCHEMA` under the prefix ``p1_abab_idle``
SCHEMA = replace(p1_abab.SCHEMA, prefix="p1_abab_idle",
                 command="python -m tcpmodels.experiments.p1.abab dataset --session idle "
                         "--records runs/p1/abab_idle.jsonl --out data")
