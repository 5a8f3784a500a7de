"""Claims judged by statistics: a test stated up front, a verdict a reviewer would accept.

Every claim of a paper (or each part of a composite claim) is written as a
:class:`ClaimSpec` *before* looking at the data: the quantity, the direction
the paper states, the smallest effect that matters (from the paper's own
numbers where it prints them, else argued in ``effect_source``) and the test.
One evaluation function per kind of test turns the spec and the per-run values
into a :class:`Verdict`:

========================  ==========================================  ===========================
function                  paper's wording                             test
========================  ==========================================  ===========================
:func:`difference`        "X is larger / better / shorter"            CI of the mean over runs (t
                                                                      or bootstrap)
:func:`equivalence`       "X does not change"                         TOST with margin +-delta
:func:`equivalence_ind`   "A and B agree" (independent runs)          TOST on Welch's t
:func:`direction_count`   "improves in most pairs"                    sign test, Clopper-Pearson
:func:`distribution`      "the CDFs differ"                           two-sample KS, run-level
                                                                      permutation
:func:`arithmetic`        a printed number the formulas must give     exact computation, printing
                                                                      tolerance
:func:`inequality`        "needs more than", "exceeds"                exact comparison
:func:`not_testable`      a part our data cannot reach                none (inconclusive)
========================  ==========================================  ===========================

:func:`bootstrap_statistic` judges a statistic that is no mean over units (a
Spearman correlation, a difference of two correlations on the same units) by a
paired percentile bootstrap over the units, with the same verdict rule as
:func:`difference`.

The unit of replication is the run (seed or repetition), never the flow:
callers pass one value per run (e.g. the mean FCT of each run, or a paired
difference per seed).

Verdicts
--------
``supported``
    The confidence interval excludes "no effect" on the side the paper states
    (equivalence: the TOST rejects both one-sided nulls).
``contradicted``
    The confidence interval excludes the effect the paper claims: the whole CI
    lies below the smallest effect that matters (equivalence: the whole CI lies
    outside the margin).
``inconclusive``
    Neither; ``runs_needed`` is the number of runs a test of the smallest effect
    that matters would need for 80 % power (statsmodels), at the spread we measured.

Examples
--------
>>> spec = ClaimSpec(claim="C0", part="mean rises", paper_says="X rises by 10 ms",
...                  quantity="X(after) - X(before) [ms]", direction=+1, smallest_effect=10.0,
...                  effect_source="the paper's 10 ms")
>>> difference(spec, [12.0, 14.0, 11.0, 13.0]).verdict
'supported'
>>> difference(spec, [1.0, 2.0, 0.5, 1.5]).verdict
'contradicted'
"""

from tcpmodels.stats.counts import arithmetic, direction_count, distribution, inequality, not_testable
from tcpmodels.stats.means import bootstrap_statistic, difference, equivalence, equivalence_ind
from tcpmodels.stats.spec import (
    CLAIM_COLUMNS,
    POWER,
    VERDICTS,
    ClaimSpec,
    Verdict,
    claims_table,
    holds_to_verdict,
    verdict_counts,
)

__all__ = [
    "VERDICTS", "CLAIM_COLUMNS", "POWER", "ClaimSpec", "Verdict", "difference", "equivalence", "equivalence_ind",
    "bootstrap_statistic", "direction_count", "distribution", "arithmetic", "inequality", "not_testable",
    "claims_table", "verdict_counts", "holds_to_verdict",
]
