"""Claims judged by statistics: a test stated up front, a verdict a reviewer would accept.

Every claim of a paper (or each part of a composite claim) is written as a
:class:`ClaimSpec` *before* looking at the data: the quantity, the direction
the paper states, the smallest effect that matters (from the paper's own
numbers where it prints them, else argued in ``effect_source``) and the test.
One evaluation function per kind of test turns the spec and the per-run values
into a :class:`Verdict`:

==========================  ==========================================  ===========================
function                    paper's wording                             test
==========================  ==========================================  ===========================
:func:`difference`          "X is larger / better / shorter"            CI of the mean over runs (t
                                                                        or bootstrap)
:func:`equivalence`         "X does not change"                         TOST with margin +-delta
:func:`equivalence_ind`     "A and B agree" (independent runs)          TOST on Welch's t
:func:`slope_equivalence`   "Y changes with X at slope b"               TOST on the OLS slope
:func:`direction_count`     "improves in most pairs"                    sign test, Clopper-Pearson
:func:`distribution`        "the CDFs differ"                           two-sample KS, run-level
                                                                        permutation
:func:`arithmetic`          a printed number the formulas must give     exact computation, printing
                                                                        tolerance
:func:`inequality`          "needs more than", "exceeds"                exact comparison
:func:`not_testable`        a part our data cannot reach                none (not testable here)
==========================  ==========================================  ===========================

:func:`bootstrap_statistic` judges a statistic that is no mean over units (a
Spearman correlation, a difference of two correlations on the same units) by a
paired percentile bootstrap over the units, with the same verdict rule as
:func:`difference`.

The unit of replication is the run (seed or repetition), never the flow:
callers pass one value per run (e.g. the mean FCT of each run, or a paired
difference per seed).

Verdicts
--------
Five outcomes (:data:`VERDICTS`; the rules in :mod:`tcpmodels.stats.outcomes`, one function each,
with known-answer tests):

``supported``
    The claimed effect at the size that matters: the confidence interval lies beyond the smallest
    effect that matters (equivalence: TOST rejects both one-sided nulls).
``smaller than claimed``
    The paper's direction, but the interval lies below the smallest effect that matters.
``contradicted``
    The interval excludes the claimed effect and does not show its direction either (it may lie
    wholly on the opposite side); equivalence: the interval lies outside the margin.
``inconclusive``
    Neither; ``runs_needed`` is the number of runs (units) a test would need for 80 % power
    (statsmodels) to decide, at the spread and effect we measured.
``not testable here``
    Decided before the data: the largest effect the setting allows (``ClaimSpec.attainable_effect``)
    lies below the smallest effect that matters, or the setting has no data of the kind the claim
    needs (:func:`not_testable`); ``why`` says what setting would make it testable.

Every sampled row carries, as scipy.stats results do, the ``statistic``, ``pvalue`` and ``df`` of the
test its label rests on and the ``method``; :func:`claims_table` adjusts the p-values within each
family (one paper's parts on one engine, read from a row by a :class:`Family`) by Holm's method and keeps a decided label only when the
adjusted p-value stays below alpha (``pvalue_holm``); the intervals stay unadjusted.

Examples
--------
>>> spec = ClaimSpec(claim="C0", part="mean rises", paper_says="X rises by 10 ms",
...                  quantity="X(after) - X(before) [ms]", direction=+1, smallest_effect=10.0,
...                  effect_source="the paper's 10 ms")
>>> difference(spec, [22.0, 24.0, 21.0, 23.0]).verdict
'supported'
>>> difference(spec, [1.0, 2.0, 0.5, 1.5]).verdict
'smaller than claimed'
>>> difference(spec, [-1.0, 2.0, -0.5, 1.5]).verdict
'contradicted'
"""

from tcpmodels.stats.counts import arithmetic, direction_count, distribution, inequality, not_testable
from tcpmodels.stats.family import Family
from tcpmodels.stats.headline import Headline
from tcpmodels.stats.means import (
    bootstrap_statistic,
    difference,
    equivalence,
    equivalence_ind,
    percentile_interval,
    slope_equivalence,
)
from tcpmodels.stats.outcomes import (
    CONTRADICTED,
    INCONCLUSIVE,
    NOT_TESTABLE_HERE,
    SMALLER_THAN_CLAIMED,
    SUPPORTED,
    attainable_outcome,
    equivalence_outcome,
    holm,
    interval_outcome,
)
from tcpmodels.stats.spec import (
    POWER,
    VERDICT_COLUMNS,
    VERDICTS,
    ClaimSpec,
    Verdict,
    claims_table,
    verdict_counts,
)

__all__ = [
    "SUPPORTED", "SMALLER_THAN_CLAIMED", "CONTRADICTED", "INCONCLUSIVE", "NOT_TESTABLE_HERE", "VERDICTS", "VERDICT_COLUMNS", "POWER", "ClaimSpec", "Verdict", "difference", "equivalence", "equivalence_ind",
    "bootstrap_statistic", "slope_equivalence", "percentile_interval", "direction_count", "distribution", "arithmetic", "inequality", "not_testable",
    "claims_table", "verdict_counts", "interval_outcome", "equivalence_outcome", "attainable_outcome", "holm",
    "Family", "Headline",
]
