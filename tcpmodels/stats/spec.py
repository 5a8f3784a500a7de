"""The claim and verdict records, the shared helpers of the tests, and the claims table.

See :mod:`tcpmodels.stats.claims` for the verdict rules.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from scipy import stats as sps

from tcpmodels._docstrings import SharedEntries
from tcpmodels.stats.outcomes import (
    CONTRADICTED,
    DIRECTION_OPEN,
    INCONCLUSIVE,
    NOT_TESTABLE_HERE,
    SMALLER_THAN_CLAIMED,
    SUPPORTED,
    VERDICTS,
    holm,
    interval_outcome,
)

__all__ = [
    "VERDICTS", "VERDICT_COLUMNS", "POWER", "ClaimSpec", "Verdict", "ConfidenceInterval", "claims_table",
    "verdict_counts", "finite_values", "fmt_number", "fmt_runs_needed", "ttest_runs_needed", "ttest_ind_runs_needed", "verdict_row", "decide",
    "label_test", "ttest_1samp", "percentile_pvalue", "DECIDED",
]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    effect : float
        The effect to detect (> 0), in the quantity's unit.
""")

#: Columns of :func:`claims_table`, in order.
VERDICT_COLUMNS = (
    "claim", "part", "paper_says", "we_measured", "effect", "ci_low", "ci_high", "n_runs", "test",
    "method", "statistic", "df", "pvalue", "family", "pvalue_holm", "verdict", "runs_needed", "why",
)
#: Power aimed at by ``runs_needed``.
POWER = 0.8


@dataclass(frozen=True, kw_only=True)
class ClaimSpec:
    """One claim (or one part of a composite claim) and its test, stated before the data is seen.

    Parameters
    ----------
    claim : str
        Id and wording, e.g. ``"C3.1 With Reno at 1 ms the proposal greatly improves RTT fairness"``.
    part : str
        Which part of the claim this row judges (``"whole claim"`` when not composite).
    paper_says : str
        The paper's statement, with its numbers as printed.
    quantity : str
        What ``effect`` is, with its unit, e.g. ``"J(proposal) - J(standard) per seed [-]"``.
    direction : {+1, -1}
        +1 if the paper claims the quantity is positive (or larger than the
        margin), -1 if negative. Ignored by :func:`equivalence` and :func:`arithmetic`.
    smallest_effect : float
        The smallest effect that matters, > 0, in the unit of ``quantity``
        (for :func:`direction_count`: the smallest share of pairs, in (0, 1);
        for :func:`equivalence`: the margin; for :func:`arithmetic`: the tolerance).
    effect_source : str
        Where ``smallest_effect`` comes from (the paper's numbers, or the argument).
    confidence_level : float, default 0.95
        Level of the reported confidence interval.
    attainable_effect : float, default inf
        The largest effect this setting allows, in the unit of ``quantity``, computed from the
        setting before the outcome is looked at (e.g. the headroom a predictor that uses no probe
        at all leaves). Below ``smallest_effect`` the part is *not testable here*: no data from this
        setting can show the claimed effect (or, for an equivalence, fail to show it).
    attainable_source : str
        How ``attainable_effect`` was computed; required when it is finite.
    testable_when : str
        What setting would make the part testable; required when ``attainable_effect`` is finite.
    """

    claim: str
    part: str
    paper_says: str
    quantity: str
    direction: int = 1
    smallest_effect: float
    effect_source: str
    confidence_level: float = 0.95
    attainable_effect: float = math.inf
    attainable_source: str = ""
    testable_when: str = ""

    def __post_init__(self) -> None:
        for name in ("claim", "part", "paper_says", "quantity", "effect_source"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip():
                raise ValueError(f"{name} must be a non-empty string; got {value!r}")
        if self.direction not in (1, -1):
            raise ValueError(f"direction must be +1 or -1; got {self.direction!r}")
        if not (self.smallest_effect > 0 and math.isfinite(self.smallest_effect)):
            raise ValueError(f"smallest_effect must be finite and > 0; got {self.smallest_effect!r}")
        if not 0.5 < self.confidence_level < 1:
            raise ValueError(f"confidence_level must be in (0.5, 1); got {self.confidence_level!r}")
        if not self.attainable_effect >= 0:
            raise ValueError(f"attainable_effect must be >= 0 (inf: no limit), in the unit of quantity; "
                             f"got {self.attainable_effect!r}")
        if math.isfinite(self.attainable_effect):
            for name in ("attainable_source", "testable_when"):
                if not getattr(self, name).strip():
                    raise ValueError(f"{name} must say how, when attainable_effect is finite "
                                     f"({self.attainable_effect!r}); got {getattr(self, name)!r}")

    @property
    def alpha(self) -> float:
        """``1 - confidence_level``. [-]"""
        return 1.0 - self.confidence_level

    @property
    def testable(self) -> bool:
        """Whether this setting can show the smallest effect that matters (``attainable_effect >= smallest_effect``)."""
        return self.attainable_effect >= self.smallest_effect


class ConfidenceInterval(NamedTuple):
    """``(low, high)`` of a confidence interval, as scipy.stats results return it."""

    low: float
    high: float


@dataclass(frozen=True, kw_only=True)
class Verdict:
    """One row of a claims table (fields in :data:`VERDICT_COLUMNS` order), read like a scipy.stats result.

    ``statistic``, ``pvalue`` and ``df`` are those of the test the label rests on (the two-sided test
    at the boundary the interval was compared with, see :func:`label_test`), ``method`` names it;
    ``pvalue_holm`` is ``pvalue`` adjusted by Holm's method within ``family`` (set by
    :func:`claims_table`). Exact parts (no sampling) have NaN there.
    """

    claim: str
    part: str
    paper_says: str
    we_measured: str
    effect: float
    ci_low: float
    ci_high: float
    n_runs: int
    test: str
    method: str = ""
    statistic: float = math.nan
    df: float = math.nan
    pvalue: float = math.nan
    family: str = ""
    pvalue_holm: float = math.nan
    verdict: str
    runs_needed: float
    why: str

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}; got {self.verdict!r}")
        if self.verdict != INCONCLUSIVE and not math.isnan(self.runs_needed):
            raise ValueError("runs_needed is only given for inconclusive verdicts")
        if not (math.isnan(self.pvalue) or 0 <= self.pvalue <= 1):
            raise ValueError(f"pvalue must be in [0, 1] or NaN; got {self.pvalue!r}")

    def confidence_interval(self) -> ConfidenceInterval:
        """The (unadjusted) confidence interval of ``effect``, as scipy.stats results give it.

        Returns
        -------
        ConfidenceInterval
            ``(low, high)`` in the unit of the quantity.
        """
        return ConfidenceInterval(self.ci_low, self.ci_high)

    def to_dict(self) -> dict[str, object]:
        """The row as a dict with keys in :data:`VERDICT_COLUMNS` order.

        Returns
        -------
        dict of str to object
            One entry per field, in :data:`VERDICT_COLUMNS` order (the row of :func:`claims_table`).
        """
        return {name: getattr(self, name) for name in VERDICT_COLUMNS}


# ------------------------------------------------------------------ helpers
def finite_values(values: Iterable[float]) -> np.ndarray:
    """The finite values of ``values`` as a float array (NaN and ±inf dropped, order kept).

    Parameters
    ----------
    values : iterable of float
        One value per run or unit, in the quantity's unit.

    Returns
    -------
    numpy.ndarray
        1-d float array of the finite values.
    """
    x = np.asarray(list(values), dtype=float)
    return x[np.isfinite(x)]


def fmt_number(x: float) -> str:
    """``x`` with four significant digits (``"nan"`` for NaN), as the verdict texts print numbers.

    Parameters
    ----------
    x : float
        The number to print.

    Returns
    -------
    str
        ``f"{x:.4g}"``, or ``"nan"``.
    """
    return "nan" if x != x else f"{x:.4g}"


RUNS_NEEDED_SHOWN_MAX = 10_000
"""Above this many runs, :func:`fmt_runs_needed` stops printing the figure: the estimate then sits on
the margin of the smallest effect that matters, and no campaign will decide it."""


def fmt_runs_needed(n: float) -> str:
    """A ``runs_needed`` as the verdict texts print it.

    Parameters
    ----------
    n : float
        Runs (or seeds, units) a power analysis asks for; NaN when not computed.

    Returns
    -------
    str
        ``""`` for NaN; the whole number with thousands separators (``"1,203"``); above
        :data:`RUNS_NEEDED_SHOWN_MAX`, ``"more than 10,000"`` rather than a figure such as
        19,231,041 that reads like a plan when it says the estimate sits on the margin.
    """
    if n != n:
        return ""
    if n > RUNS_NEEDED_SHOWN_MAX:
        return f"more than {RUNS_NEEDED_SHOWN_MAX:,}"
    return f"{math.ceil(n):,}"


def _runs_needed(power: Any, effect: float, sd: float, alpha: float, alternative: str) -> float:
    """Group size at which ``power`` (a statsmodels t-test power class) reaches :data:`POWER`; 2 if two runs
    already do (statsmodels' solver searches above 2, warns and returns NaN there); NaN if undefined."""
    if not (sd > 0 and effect > 0) or not math.isfinite(sd):
        return math.nan
    if power.power(effect / sd, 2, alpha, alternative=alternative) >= POWER:  # (effect_size, nobs[1], alpha)
        return 2.0
    try:
        n = power.solve_power(effect_size=effect / sd, alpha=alpha, power=POWER, alternative=alternative)
    except (ValueError, RuntimeError):  # statsmodels' root finder fails for absurd sizes
        return math.nan
    n = float(np.atleast_1d(n)[0])
    return float(math.ceil(max(n, 2.0))) if math.isfinite(n) else math.nan


@_PARAMETERS.fill
def ttest_runs_needed(effect: float, sd: float, alpha: float, *, alternative: str = "two-sided") -> float:
    """Runs a one-sample t test needs to detect ``effect`` at ``sd`` with :data:`POWER` (NaN if undefined).

    Parameters
    ----------
    {effect}
    sd : float
        Standard deviation of one run, in the quantity's unit.
    alpha : float
        Significance level of the test. [-]
    alternative : {"two-sided", "larger", "smaller"}
        Alternative of the t test (statsmodels ``TTestPower``).

    Returns
    -------
    float
        The number of runs, rounded up and at least 2 (2 when two runs already reach the power); NaN
        when ``effect`` or ``sd`` is not positive, ``sd`` is not finite, or statsmodels' solver fails.
    """
    from statsmodels.stats.power import TTestPower

    return _runs_needed(TTestPower(), effect, sd, alpha, alternative)


@_PARAMETERS.fill
def ttest_ind_runs_needed(effect: float, sd: float, alpha: float, *, alternative: str = "two-sided") -> float:
    """Runs per group a two-sample t test needs to detect ``effect`` at ``sd`` with :data:`POWER` (NaN if undefined).

    Parameters
    ----------
    {effect}
    sd : float
        Pooled standard deviation of one run, in the quantity's unit.
    alpha : float
        Significance level of the test (of each one-sided test of a TOST). [-]
    alternative : {"two-sided", "larger", "smaller"}
        Alternative of the t test (statsmodels ``TTestIndPower``).

    Returns
    -------
    float
        The number of runs per group, rounded up and at least 2 (2 when two runs a group already reach
        the power); NaN when ``effect`` or ``sd`` is not positive, ``sd`` is not finite, or the solver fails.
    """
    from statsmodels.stats.power import TTestIndPower

    return _runs_needed(TTestIndPower(), effect, sd, alpha, alternative)


def verdict_row(spec: ClaimSpec, **kw: object) -> Verdict:
    """A :class:`Verdict` carrying the ``claim``, ``part`` and ``paper_says`` of ``spec``.

    When ``spec`` is not testable in this setting (``attainable_effect < smallest_effect``), the
    verdict is ``"not testable here"`` whatever the data say (the measured numbers stay in the row),
    ``runs_needed`` is NaN and ``why`` ends with the attainable effect and the setting that would
    make the part testable.

    Parameters
    ----------
    spec : ClaimSpec
        The claim the row judges.
    **kw
        The other fields of :class:`Verdict` (``we_measured``, ``effect``, ``ci_low``, ``ci_high``,
        ``n_runs``, ``test``, ``verdict``, ``runs_needed``, ``why``; ``method``, ``statistic``,
        ``df``, ``pvalue`` for sampled tests).

    Returns
    -------
    Verdict
        The row.

    Raises
    ------
    ValueError
        If ``verdict`` is not one of :data:`VERDICTS`, or ``runs_needed`` is given for a verdict
        that is not inconclusive.
    """
    if not spec.testable:
        measured, why = kw.get("verdict"), kw.get("why")
        kw["why"] = ((f"{why}; the data alone would say {measured}; " if why else "")
                     + f"not testable here: this setting allows at most {fmt_number(spec.attainable_effect)} "
                     f"({spec.attainable_source}), below the smallest effect that matters "
                     f"{fmt_number(spec.smallest_effect)}, testable {spec.testable_when}")
        kw["verdict"], kw["runs_needed"] = NOT_TESTABLE_HERE, math.nan
    return Verdict(claim=spec.claim, part=spec.part, paper_says=spec.paper_says, **kw)


def decide(spec: ClaimSpec, lo: float, hi: float, enough: bool, *, null: float = 0.0) -> tuple[str, str]:
    """The verdict rule shared by the tests on a signed effect, applied to its confidence interval.

    With ``s = spec.direction`` and ``[lo_s, hi_s]`` the interval of ``s * effect``, the outcome of
    :func:`tcpmodels.stats.outcomes.interval_outcome` at ``delta = smallest_effect``.

    Parameters
    ----------
    spec : ClaimSpec
        The claim (its ``direction`` and ``smallest_effect``).
    lo, hi : float
        The confidence interval of the effect, in the quantity's unit.
    enough : bool
        Whether there was data enough for an interval; if not, the verdict is inconclusive.
    null : float, default 0
        "No effect" on the paper's side (1/2 for a share).

    Returns
    -------
    tuple of str
        ``(verdict, reason)``: one of :data:`VERDICTS` and the sentence saying why.
    """
    if not enough:
        return INCONCLUSIVE, "fewer than 2 runs: no interval"
    s, delta = spec.direction, spec.smallest_effect
    lo_s, hi_s = sorted((s * lo, s * hi))
    side = ">" if s > 0 else "<"
    d = ("+" if s > 0 else "-") + fmt_number(delta)
    z = fmt_number(s * null)
    verdict = interval_outcome(lo_s, hi_s, delta, null=null)
    if verdict == SUPPORTED:
        reason = f"the CI lies beyond the smallest effect that matters ({side} {d})"
    elif verdict == SMALLER_THAN_CLAIMED:
        reason = f"the CI lies on the paper's side of {z} but short of the smallest effect that matters ({d})"
    elif verdict == CONTRADICTED:
        reason = (f"the CI lies on the opposite side of {z}" if hi_s < null else
                  f"the CI excludes the claimed effect ({d} or beyond) and holds {z}")
    elif lo_s > null:
        reason = f"{DIRECTION_OPEN}: the CI excludes {z} but holds {d}"
    else:
        reason = f"the CI holds both {z} and the claimed effect {d}"
    return verdict, reason


def label_test(verdict: str, at_delta: tuple[float, float], at_null: tuple[float, float]) -> tuple[float, float]:
    """``(pvalue, statistic)`` of the test a label rests on, from the two-sided tests at ``delta`` and at "no effect".

    *supported*, *contradicted* and *inconclusive* rest on the test at the smallest effect that matters;
    *smaller than claimed* rejects both (an intersection-union test: the larger p-value).

    Parameters
    ----------
    verdict : str
        The label.
    at_delta, at_null : tuple of float
        ``(pvalue, statistic)`` of the two-sided test of "the effect equals delta" and of "it is null".

    Returns
    -------
    tuple of float
        The p-value and statistic of the label's test.
    """
    if verdict == SMALLER_THAN_CLAIMED and at_null[0] > at_delta[0]:
        return at_null
    return at_delta


def ttest_1samp(x: np.ndarray, popmean: float, level: float) -> tuple[float, float, float, float, float]:
    """``(statistic, pvalue, df, low, high)`` of scipy's one-sample t test of ``mean(x) = popmean`` and its CI.

    A constant sample (no spread, or a spread below 1e-12 of its largest value: rounding) is exact: the CI is
    the point, p is 0 unless the point is ``popmean`` (1).

    Parameters
    ----------
    x : numpy.ndarray
        Finite values, at least 2, one per run.
    popmean : float
        The mean under the null, in the unit of ``x``.
    level : float
        Confidence level of the interval. [-]

    Returns
    -------
    tuple of float
        t statistic [-], two-sided p-value [-], degrees of freedom, interval low and high [unit of ``x``].
    """
    n = len(x)
    if np.ptp(x) <= 1e-12 * float(np.abs(x).max()):  # equal up to rounding: scipy would warn of precision loss
        m = float(x.mean())
        return (math.copysign(math.inf, m - popmean) if m != popmean else 0.0), float(m == popmean), n - 1.0, m, m
    res = sps.ttest_1samp(x, popmean)
    ci = res.confidence_interval(level)
    return float(res.statistic), float(res.pvalue), float(res.df), float(ci.low), float(ci.high)


def percentile_pvalue(boot: np.ndarray, value: float) -> float:
    """Two-sided p-value of "the statistic equals ``value``" from a bootstrap distribution (percentile inversion).

    ``2 * min(share of resamples <= value, share >= value)``, capped at 1: below alpha exactly when the
    percentile interval at ``1 - alpha`` excludes ``value`` (up to the quantiles' interpolation). 0 means
    below ``1 / len(boot)``.

    Parameters
    ----------
    boot : numpy.ndarray
        The statistic on each resample (NaN ignored).
    value : float
        The value tested.

    Returns
    -------
    float
        The p-value; NaN without a finite resample.
    """
    b = np.asarray(boot, dtype=float)
    b = b[np.isfinite(b)]
    if not len(b):
        return math.nan
    return float(min(1.0, 2 * min(np.mean(b <= value), np.mean(b >= value))))


# ------------------------------------------------------------------ tables
#: Labels that rest on a rejected null, and so must survive Holm's adjustment.
DECIDED = (SUPPORTED, SMALLER_THAN_CLAIMED, CONTRADICTED)


def _holm_units(n: float, pvalue: float, alpha: float) -> float:
    """Units for the label's test to reach ``alpha`` (the Holm level of its rank) with :data:`POWER` at the
    standardized effect its p-value implies (normal approximation), at least ``n + 1``."""
    if not (n > 0 and 0 < pvalue < 1):
        return math.nan
    z_obs = float(sps.norm.isf(pvalue / 2))
    if z_obs <= 0:
        return math.nan
    need = n * ((float(sps.norm.isf(alpha / 2)) + float(sps.norm.ppf(POWER))) / z_obs) ** 2
    return float(max(math.ceil(need), n + 1))


def claims_table(verdicts: Iterable[Verdict], *, family: str | Callable[[Verdict], str] = "",
                 alpha: float = 0.05) -> pd.DataFrame:
    """The claims table, one row per (claim, part), with Holm's adjustment within each family applied to the labels.

    Holm's step-down method [1]_ adjusts the p-values of the parts of one family (one paper's parts
    on one engine); parts without a p-value (exact arithmetic, not testable here) are left out of it.
    A part labelled *supported*, *smaller than claimed* or *contradicted* keeps its label only if its
    adjusted p-value is below ``alpha``; otherwise it becomes *inconclusive*, its ``why`` saying so and
    ``runs_needed`` the units its test would need at the Holm level of its rank (normal approximation).
    The unadjusted interval stays in ``ci_low`` / ``ci_high``.

    Parameters
    ----------
    verdicts : iterable of Verdict
        The rows, in the order the table shows them.
    family : str or callable, default ""
        The family of every row, or a function of a row giving it (e.g. the engine in the claim's name).
    alpha : float, default 0.05
        Family-wise error rate. [-]

    Returns
    -------
    pandas.DataFrame
        One row per verdict, columns :data:`VERDICT_COLUMNS` (empty with those columns if there is none);
        ``n_runs`` an integer column, the numbers float.

    Raises
    ------
    TypeError
        If an element is not a :class:`Verdict`.

    References
    ----------
    .. [1] S. Holm, "A simple sequentially rejective multiple test procedure", Scand. J. Statist. 6 (1979) 65-70.
    """
    rows = list(verdicts)
    for r in rows:
        if not isinstance(r, Verdict):
            raise TypeError(f"verdicts must be Verdict instances; got {type(r).__name__}")
    rows = [replace(r, family=family(r) if callable(family) else family) for r in rows]
    for fam in dict.fromkeys(r.family for r in rows):
        idx = [i for i, r in enumerate(rows) if r.family == fam and r.verdict != NOT_TESTABLE_HERE
               and math.isfinite(r.pvalue)]
        adjusted = holm(rows[i].pvalue for i in idx)
        ranks = np.argsort(np.argsort([rows[i].pvalue for i in idx], kind="stable"), kind="stable")
        for i, p_adj, rank in zip(idx, adjusted, ranks):
            r = rows[i]
            if r.verdict in DECIDED and not p_adj < alpha:
                level = alpha / (len(idx) - rank)
                r = replace(r, verdict=INCONCLUSIVE, runs_needed=_holm_units(r.n_runs, r.pvalue, level),
                            why=f"{r.why}; after Holm's adjustment over the {len(idx)} parts of family "
                                f"'{fam}' p = {p_adj:.3g} >= {alpha:g} (unadjusted: {r.verdict}, p = {r.pvalue:.3g})")
            rows[i] = replace(r, pvalue_holm=float(p_adj))
    frame = pd.DataFrame([r.to_dict() for r in rows], columns=list(VERDICT_COLUMNS))
    frame["n_runs"] = frame["n_runs"].astype("int64")
    for col in ("effect", "ci_low", "ci_high", "statistic", "df", "pvalue", "pvalue_holm", "runs_needed"):
        frame[col] = frame[col].astype(float)
    return frame


def verdict_counts(table: pd.DataFrame) -> dict[str, int]:
    """The number of rows of each outcome of a claims table, keys in :data:`VERDICTS` order.

    Parameters
    ----------
    table : pandas.DataFrame
        A claims table (at least a ``verdict`` column), as from :func:`claims_table`.

    Returns
    -------
    dict of str to int
        The number of rows of each verdict (0 for an absent one).
    """
    counts = table["verdict"].value_counts() if len(table) else pd.Series(dtype=int)
    return {v: int(counts.get(v, 0)) for v in VERDICTS}
