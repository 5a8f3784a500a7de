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
:func:`direction_count`   "improves in most pairs"                    sign test, Clopper-Pearson
:func:`distribution`      "the CDFs differ"                           two-sample KS, run-level
                                                                      permutation
:func:`arithmetic`        a printed number the formulas must give     exact computation, printing
                                                                      tolerance
:func:`inequality`        "needs more than", "exceeds"                exact comparison
:func:`not_testable`      a part our data cannot reach                none (inconclusive)
========================  ==========================================  ===========================

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

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields
from itertools import combinations

import numpy as np
import pandas as pd
from scipy import stats as sps

__all__ = [
    "VERDICTS",
    "CLAIM_COLUMNS",
    "POWER",
    "ClaimSpec",
    "Verdict",
    "difference",
    "equivalence",
    "direction_count",
    "distribution",
    "arithmetic",
    "inequality",
    "not_testable",
    "claims_table",
    "verdict_counts",
    "holds_to_verdict",
]

#: The three outcomes, in the order tables show them.
VERDICTS = ("supported", "contradicted", "inconclusive")
#: Columns of :func:`claims_table`, in order.
CLAIM_COLUMNS = (
    "claim", "part", "paper_says", "we_measured", "effect", "ci_low", "ci_high",
    "n_runs", "test", "verdict", "runs_needed", "why",
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
    """

    claim: str
    part: str
    paper_says: str
    quantity: str
    direction: int = 1
    smallest_effect: float
    effect_source: str
    confidence_level: float = 0.95

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

    @property
    def alpha(self) -> float:
        """``1 - confidence_level``. [-]"""
        return 1.0 - self.confidence_level


@dataclass(frozen=True, kw_only=True)
class Verdict:
    """One row of a claims table (fields in :data:`CLAIM_COLUMNS` order)."""

    claim: str
    part: str
    paper_says: str
    we_measured: str
    effect: float
    ci_low: float
    ci_high: float
    n_runs: int
    test: str
    verdict: str
    runs_needed: float
    why: str

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}; got {self.verdict!r}")
        if self.verdict != "inconclusive" and not math.isnan(self.runs_needed):
            raise ValueError("runs_needed is only given for inconclusive verdicts")

    def to_dict(self) -> dict[str, object]:
        """The row as a dict with keys in :data:`CLAIM_COLUMNS` order."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


# ------------------------------------------------------------------ helpers
def _values(values: Iterable[float]) -> np.ndarray:
    x = np.asarray(list(values), dtype=float)
    return x[np.isfinite(x)]


def _fmt(x: float) -> str:
    return "nan" if x != x else f"{x:.4g}"


def _ttest_runs_needed(effect: float, sd: float, alpha: float, *, alternative: str = "two-sided") -> float:
    """Runs a one-sample t test needs to detect ``effect`` at ``sd`` with :data:`POWER` (NaN if undefined)."""
    from statsmodels.stats.power import TTestPower

    if not (sd > 0 and effect > 0) or not math.isfinite(sd):
        return math.nan
    try:
        n = TTestPower().solve_power(effect_size=effect / sd, alpha=alpha, power=POWER, alternative=alternative)
    except (ValueError, RuntimeError):  # statsmodels' root finder fails for absurd sizes
        return math.nan
    n = float(np.atleast_1d(n)[0])
    return float(math.ceil(max(n, 2.0))) if math.isfinite(n) else math.nan


def _row(spec: ClaimSpec, **kw) -> Verdict:
    return Verdict(claim=spec.claim, part=spec.part, paper_says=spec.paper_says, **kw)


def _mean_ci(x: np.ndarray, level: float, method: str, seed: int) -> tuple[float, float]:
    if len(x) < 2:
        return -math.inf, math.inf
    if np.ptp(x) == 0:
        return float(x[0]), float(x[0])
    if method == "t":
        return tuple(float(v) for v in sps.t.interval(level, len(x) - 1, loc=x.mean(), scale=sps.sem(x)))
    if method == "bootstrap":
        res = sps.bootstrap((x,), np.mean, confidence_level=level, method="percentile", n_resamples=9999,
                            random_state=np.random.default_rng(seed))
        return float(res.confidence_interval.low), float(res.confidence_interval.high)
    raise ValueError(f"method must be 't' or 'bootstrap'; got {method!r}")


# --------------------------------------------------------------- the tests
def difference(spec: ClaimSpec, per_run: Iterable[float], *, baseline: Iterable[float] | None = None,
               method: str = "t", seed: int = 0, we_measured: str | None = None, why: str = "") -> Verdict:
    """Judge "the quantity is positive (``direction=+1``) or negative (``-1``)" from one value per run.

    Parameters
    ----------
    spec : ClaimSpec
    per_run : iterable of float
        The quantity for each run (e.g. a paired difference per seed). NaN are dropped.
    baseline : iterable of float, optional
        Independent runs of the other condition: the effect is then ``mean(per_run) - mean(baseline)``
        with Welch's t interval (``method="t"`` only), and ``runs_needed`` is per group
        (statsmodels ``TTestIndPower``, pooled sd).
    method : {"t", "bootstrap"}
        Student-t interval of the mean, or the percentile bootstrap (scipy.stats.bootstrap, seeded).
    seed : int
        Seed of the bootstrap.
    we_measured, why : str
        Text for the row; a default is built from the numbers.

    Returns
    -------
    Verdict
        ``effect`` is the mean over runs and ``[ci_low, ci_high]`` its CI (natural sign). With
        ``s = direction``: contradicted if the CI of ``s * mean`` lies wholly below
        ``smallest_effect``; else supported if it lies wholly above 0; else inconclusive with
        ``runs_needed`` from a t-test power analysis at ``smallest_effect / sd``.
    """
    x = _values(per_run)
    s = spec.direction
    delta = spec.smallest_effect
    if baseline is not None:
        return _welch(spec, x, _values(baseline), we_measured=we_measured, why=why)
    n = len(x)
    mean = float(x.mean()) if n else math.nan
    lo, hi = _mean_ci(x, spec.confidence_level, method, seed) if n else (math.nan, math.nan)
    sd = float(x.std(ddof=1)) if n > 1 else math.nan
    verdict, reason = _decide(spec, lo, hi, n > 1)
    needed = _ttest_runs_needed(delta, sd, spec.alpha) if verdict == "inconclusive" else math.nan
    label = "t" if method == "t" else "percentile bootstrap"
    test = (f"mean over runs, {spec.confidence_level:.0%} {label} CI; claimed {spec.quantity} "
            f"{'>' if s > 0 else '<'} 0, smallest effect {_fmt(delta)} ({spec.effect_source})")
    return _row(spec, we_measured=we_measured or f"{spec.quantity}: mean {_fmt(mean)} over {n} runs "
                f"(sd {_fmt(sd)})", effect=mean, ci_low=lo, ci_high=hi, n_runs=n, test=test, verdict=verdict,
                runs_needed=needed, why=(why + "; " if why else "") + reason)


def _decide(spec: ClaimSpec, lo: float, hi: float, enough: bool) -> tuple[str, str]:
    s, delta = spec.direction, spec.smallest_effect
    lo_s, hi_s = sorted((s * lo, s * hi))
    if enough and hi_s < delta:
        return "contradicted", f"the CI excludes the claimed effect ({'+' if s > 0 else '-'}{_fmt(delta)} or beyond)"
    if enough and lo_s > 0:
        return "supported", f"the CI excludes 0 on the side the paper states ({'>' if s > 0 else '<'} 0)"
    return "inconclusive", "the CI holds both 0 and the claimed effect" if enough else "fewer than 2 runs: no interval"


def _welch(spec: ClaimSpec, x: np.ndarray, y: np.ndarray, *, we_measured: str | None, why: str) -> Verdict:
    from statsmodels.stats.power import TTestIndPower

    enough = len(x) >= 2 and len(y) >= 2
    effect = float(x.mean() - y.mean()) if len(x) and len(y) else math.nan
    if enough and (x.std() > 0 or y.std() > 0):
        ci = sps.ttest_ind(x, y, equal_var=False).confidence_interval(spec.confidence_level)
        lo, hi = float(ci.low), float(ci.high)
    elif enough:
        lo = hi = effect
    else:
        lo, hi = -math.inf, math.inf
    verdict, reason = _decide(spec, lo, hi, enough)
    sd = math.sqrt((x.var(ddof=1) + y.var(ddof=1)) / 2) if enough else math.nan
    needed = math.nan
    if verdict == "inconclusive" and sd > 0:
        n = TTestIndPower().solve_power(effect_size=spec.smallest_effect / sd, alpha=spec.alpha, power=POWER)
        needed = float(math.ceil(max(float(np.atleast_1d(n)[0]), 2.0)))
    test = (f"difference of means over independent runs, {spec.confidence_level:.0%} Welch t CI; claimed "
            f"{spec.quantity} {'>' if spec.direction > 0 else '<'} 0, smallest effect {_fmt(spec.smallest_effect)} "
            f"({spec.effect_source}); runs_needed is per group")
    return _row(spec, we_measured=we_measured or f"{spec.quantity}: {_fmt(effect)} ({len(x)} vs {len(y)} runs)",
                effect=effect, ci_low=lo, ci_high=hi, n_runs=len(x) + len(y), test=test, verdict=verdict,
                runs_needed=needed, why=(why + "; " if why else "") + reason)


def equivalence(spec: ClaimSpec, per_run: Iterable[float], *, we_measured: str | None = None,
                why: str = "") -> Verdict:
    """Judge "the quantity does not change" by two one-sided t tests (TOST) with margin ``±smallest_effect``.

    ``effect`` is the mean over runs; ``[ci_low, ci_high]`` is the ``1 - 2 alpha`` interval
    (90 % for alpha 0.05), the one that matches TOST. Supported if TOST's p-value is below
    alpha (the interval lies inside the margin); contradicted if the ``1 - alpha`` interval
    lies wholly outside the margin; else inconclusive, with ``runs_needed`` for each one-sided
    test to have 80 % power at the distance from the observed mean to the margin (or, when the
    observed mean lies outside the margin, for a t test to exclude the margin).
    """
    from statsmodels.stats.weightstats import DescrStatsW

    x = _values(per_run)
    n = len(x)
    m = spec.smallest_effect
    mean = float(x.mean()) if n else math.nan
    sd = float(x.std(ddof=1)) if n > 1 else math.nan
    if n >= 2 and sd > 0:
        d = DescrStatsW(x)
        p_tost = float(d.ttost_mean(-m, m)[0])
        lo, hi = (float(v) for v in d.tconfint_mean(alpha=2 * spec.alpha))
        lo95, hi95 = (float(v) for v in d.tconfint_mean(alpha=spec.alpha))
    elif n >= 2:  # all equal: no spread, exact
        p_tost = 0.0 if abs(mean) < m else 1.0
        lo = hi = lo95 = hi95 = mean
    else:
        p_tost, lo, hi, lo95, hi95 = math.nan, -math.inf, math.inf, -math.inf, math.inf
    if n and (lo95 > m or hi95 < -m):
        verdict, reason = "contradicted", f"the {spec.confidence_level:.0%} CI lies outside the margin ±{_fmt(m)}"
    elif p_tost == p_tost and p_tost < spec.alpha:
        verdict, reason = "supported", f"TOST p = {p_tost:.3g} < {spec.alpha:g}: within ±{_fmt(m)}"
    else:
        verdict = "inconclusive"
        reason = (f"TOST p = {p_tost:.3g}: cannot exclude a change of {_fmt(m)}" if n > 1
                  else "fewer than 2 runs: no interval")
    needed = math.nan
    if verdict == "inconclusive" and n > 1 and abs(mean) < m:
        needed = _ttest_runs_needed(m - abs(mean), sd, spec.alpha, alternative="larger")
    elif verdict == "inconclusive" and n > 1:  # the mean is outside the margin: runs to show the change instead
        needed = _ttest_runs_needed(abs(mean) - m, sd, spec.alpha)
        reason += f"; the mean lies outside the margin, runs_needed is for the CI to exclude ±{_fmt(m)}"
    test = (f"TOST (two one-sided t tests) over runs, margin ±{_fmt(m)} ({spec.effect_source}); "
            f"CI is the {1 - 2 * spec.alpha:.0%} interval")
    return _row(spec, we_measured=we_measured or f"{spec.quantity}: mean {_fmt(mean)} over {n} runs (sd {_fmt(sd)})",
                effect=mean, ci_low=lo, ci_high=hi, n_runs=n, test=test, verdict=verdict, runs_needed=needed,
                why=(why + "; " if why else "") + reason)


def direction_count(spec: ClaimSpec, per_unit: Iterable[float], *, n_runs: int | None = None,
                    power_share: float = 0.75, we_measured: str | None = None, why: str = "") -> Verdict:
    """Judge "the quantity moves the paper's way in most units" (units: RTT pairs, sizes, ...).

    Parameters
    ----------
    per_unit : iterable of float
        The signed quantity per unit (e.g. mean dJ of each RTT pair over its seeds); zeros and NaN are dropped.
    n_runs : int, optional
        Runs behind the units, for the ``n_runs`` column (default: the number of units).
    power_share : float, default 0.75
        The share at which ``runs_needed`` is computed when the observed share is lower: a clear
        (3 to 1) majority, the smallest one a reader would call "most" without a test.

    Returns
    -------
    Verdict
        ``effect`` is the share k/n of units moving in ``direction``, with the exact
        (Clopper-Pearson) CI of scipy's ``binomtest``. Supported if the CI lies above 0.5 (the
        sign test rejects "no preferred direction"); contradicted if it lies below
        ``smallest_effect`` (the share the claim needs, e.g. 0.5 for "most"); else inconclusive
        with ``runs_needed`` the number of *units* a one-sample proportion test
        (statsmodels ``NormalIndPower``, ``ratio=0``) needs at the observed share, or at
        ``power_share`` when the observed share is below it.
    """
    from statsmodels.stats.power import NormalIndPower
    from statsmodels.stats.proportion import proportion_effectsize

    x = _values(per_unit)
    x = x[x != 0]
    n = len(x)
    k = int((np.sign(x) == spec.direction).sum())
    if n:
        res = sps.binomtest(k, n, 0.5, alternative="two-sided")
        ci = res.proportion_ci(confidence_level=spec.confidence_level, method="exact")
        share, lo, hi, p = k / n, float(ci.low), float(ci.high), float(res.pvalue)
    else:
        share, lo, hi, p = math.nan, 0.0, 1.0, math.nan
    if n and hi < spec.smallest_effect:
        verdict, reason = "contradicted", f"the CI of the share lies below {spec.smallest_effect:g}"
    elif n and lo > 0.5:
        verdict, reason = "supported", f"sign test p = {p:.3g}: more than half move the paper's way"
    else:
        verdict, reason = "inconclusive", (f"sign test p = {p:.3g}: the CI of the share holds 0.5" if n
                                           else "no units with a non-zero change")
    needed = math.nan
    if verdict == "inconclusive" and n:
        target = min(max(share, power_share, spec.smallest_effect), 0.95)  # a share of 1 has no finite effect size
        if target > 0.5:
            es = proportion_effectsize(target, 0.5)
            needed = float(math.ceil(NormalIndPower().solve_power(effect_size=es, alpha=spec.alpha, power=POWER,
                                                                   ratio=0, alternative="two-sided")))
    test = (f"sign test over {n} units, {spec.confidence_level:.0%} Clopper-Pearson CI of the share; "
            f"claimed share >= {spec.smallest_effect:g} ({spec.effect_source})")
    return _row(spec, we_measured=we_measured or f"{k} of {n} units move the paper's way ({spec.quantity})",
                effect=share, ci_low=lo, ci_high=hi, n_runs=int(n if n_runs is None else n_runs), test=test,
                verdict=verdict, runs_needed=needed, why=(why + "; " if why else "") + reason)


def _ks(a: Sequence[np.ndarray], b: Sequence[np.ndarray]) -> float:
    return float(sps.ks_2samp(np.concatenate(a), np.concatenate(b)).statistic)


def distribution(spec: ClaimSpec, runs_a: Sequence[Iterable[float]], runs_b: Sequence[Iterable[float]], *,
                 seed: int = 0, max_permutations: int = 2000, we_measured: str | None = None,
                 why: str = "") -> Verdict:
    """Judge "the distributions of A and B differ" (CDF claims) with the run as the unit.

    The statistic is the two-sample Kolmogorov-Smirnov distance D between the pooled
    samples of A and B (scipy ``ks_2samp``). Its null distribution comes from
    reassigning whole runs to A and B (every split when there are at most
    ``max_permutations``, else that many seeded random splits), so flows of one run
    are never treated as independent. The CI of D is a percentile bootstrap over
    runs within each group. Contradicted if the CI lies below ``smallest_effect``
    (a distance that matters); supported if the permutation p < alpha; else
    inconclusive, with ``runs_needed`` the smallest number of runs per group for
    which a permutation p below alpha is possible at all (a lower bound: the
    permutation test has no closed-form power). The flow-level KS p-value is
    given in ``why`` for comparison only.
    """
    a = [_values(r) for r in runs_a]
    b = [_values(r) for r in runs_b]
    a = [r for r in a if len(r)]
    b = [r for r in b if len(r)]
    na, nb = len(a), len(b)
    if not na or not nb:
        return not_testable(spec, we_measured=we_measured or "no runs in one of the groups",
                            why=why or "no data for one of the two distributions")
    rng = np.random.default_rng(seed)
    d_obs = _ks(a, b)
    runs = a + b
    n = na + nb
    if math.comb(n, na) <= max_permutations:
        splits = [set(c) for c in combinations(range(n), na)]
    else:
        splits = [set(rng.choice(n, na, replace=False).tolist()) for _ in range(max_permutations)]
    null = np.array([_ks([runs[i] for i in s], [runs[i] for i in range(n) if i not in s]) for s in splits])
    p = float((null >= d_obs - 1e-12).mean())
    boot = np.array([_ks([a[i] for i in rng.integers(0, na, na)], [b[i] for i in rng.integers(0, nb, nb)])
                     for _ in range(500)])
    lo, hi = (float(v) for v in np.quantile(boot, [spec.alpha / 2, 1 - spec.alpha / 2]))
    p_flows = float(sps.ks_2samp(np.concatenate(a), np.concatenate(b)).pvalue)
    if hi < spec.smallest_effect:
        verdict, reason = "contradicted", f"the CI of D lies below {_fmt(spec.smallest_effect)}"
    elif p < spec.alpha:
        verdict, reason = "supported", f"run-permutation p = {p:.3g} < {spec.alpha:g}"
    else:
        verdict = "inconclusive"
        reason = f"run-permutation p = {p:.3g} (smallest possible with {na}+{nb} runs: {1 / math.comb(n, na):.3g})"
    needed = math.nan
    if verdict == "inconclusive":
        k = 1
        while 2 / math.comb(2 * k, k) >= spec.alpha:  # two identical-size groups, two-sided
            k += 1
        needed = float(max(k, na, nb))
    test = (f"two-sample KS distance D, null from reassigning whole runs ({len(splits)} splits), "
            f"bootstrap CI over runs; smallest D {_fmt(spec.smallest_effect)} ({spec.effect_source})")
    return _row(spec, we_measured=we_measured or f"D = {d_obs:.3f} ({na} vs {nb} runs, "
                f"{sum(map(len, a))} vs {sum(map(len, b))} samples)", effect=d_obs, ci_low=lo, ci_high=hi,
                n_runs=n, test=test, verdict=verdict, runs_needed=needed,
                why=(why + "; " if why else "") + reason + f"; flow-level KS p = {p_flows:.2g} (pseudo-replicated, "
                "not used)")


def arithmetic(spec: ClaimSpec, ours: float, paper: float, *, we_measured: str,
               ours_range: tuple[float, float] | None = None, why: str = "") -> Verdict:
    """Judge a number the paper prints against the one its formulas give (no sampling).

    Parameters
    ----------
    ours, paper : float
        Our computed value and the paper's printed one, in the same unit.
    ours_range : (float, float), optional
        The range ``ours`` spans when the paper's own inputs vary within their printing
        precision (e.g. 28.5-29.5 Gbit/s for a printed "29"); default: the point.

    Returns
    -------
    Verdict
        ``effect = ours - paper`` and ``[ci_low, ci_high]`` the range minus ``paper``. Supported
        if the range comes within ``smallest_effect`` (the printing tolerance of the paper's
        number) of ``paper``, else contradicted. ``n_runs`` is 0.
    """
    lo, hi = (float(ours), float(ours)) if ours_range is None else sorted(map(float, ours_range))
    diff = float(ours) - float(paper)
    gap = max(lo - float(paper), float(paper) - hi, 0.0)
    ok = gap <= spec.smallest_effect
    verdict = "supported" if ok else "contradicted"
    reason = (f"distance from the printed value {_fmt(gap)} {'<=' if ok else '>'} tolerance "
              f"{_fmt(spec.smallest_effect)} ({spec.effect_source})")
    return _row(spec, we_measured=we_measured, effect=diff, ci_low=lo - float(paper), ci_high=hi - float(paper),
                n_runs=0, test="arithmetic from the printed numbers (no sampling); range from their printing "
                "precision", verdict=verdict, runs_needed=math.nan, why=(why + "; " if why else "") + reason)


def inequality(spec: ClaimSpec, value: float, bound: float, *, we_measured: str, why: str = "") -> Verdict:
    """Judge "value exceeds bound" (``direction=+1``) or "value is below bound" (``-1``), computed exactly.

    ``effect`` is ``value`` (the CI is the point); supported if ``direction * (value - bound) > 0``,
    else contradicted; ``smallest_effect`` is not used by the rule (put a margin into ``bound``).
    """
    value, bound = float(value), float(bound)
    diff = value - bound
    ok = spec.direction * diff > 0
    reason = f"{_fmt(value)} {'>' if diff > 0 else '<=' if diff <= 0 else '?'} {_fmt(bound)}"
    return _row(spec, we_measured=we_measured, effect=value, ci_low=value, ci_high=value, n_runs=0,
                test=f"exact comparison ({spec.quantity} {'>' if spec.direction > 0 else '<'} {_fmt(bound)}), "
                     "no sampling", verdict="supported" if ok else "contradicted", runs_needed=math.nan,
                why=(why + "; " if why else "") + reason)


def not_testable(spec: ClaimSpec, *, we_measured: str, why: str, n_runs: int = 0) -> Verdict:
    """A part our data cannot reach: inconclusive, with ``runs_needed`` NaN and the reason in ``why``."""
    return _row(spec, we_measured=we_measured, effect=math.nan, ci_low=math.nan, ci_high=math.nan,
                n_runs=int(n_runs), test="not testable with this data", verdict="inconclusive",
                runs_needed=math.nan, why=why)


# ------------------------------------------------------------------ tables
def claims_table(verdicts: Iterable[Verdict]) -> pd.DataFrame:
    """The claims table: one row per (claim, part), columns :data:`CLAIM_COLUMNS`.

    ``n_runs`` is an integer column, ``runs_needed`` a float one (NaN unless inconclusive).
    """
    rows = list(verdicts)
    for r in rows:
        if not isinstance(r, Verdict):
            raise TypeError(f"verdicts must be Verdict instances; got {type(r).__name__}")
    frame = pd.DataFrame([r.to_dict() for r in rows], columns=list(CLAIM_COLUMNS))
    frame["n_runs"] = frame["n_runs"].astype("int64")
    for col in ("effect", "ci_low", "ci_high", "runs_needed"):
        frame[col] = frame[col].astype(float)
    return frame


def verdict_counts(table: pd.DataFrame) -> dict[str, int]:
    """``{"supported": k, "contradicted": k, "inconclusive": k}`` over the rows of a claims table."""
    counts = table["verdict"].value_counts() if len(table) else pd.Series(dtype=int)
    return {v: int(counts.get(v, 0)) for v in VERDICTS}


def holds_to_verdict(holds) -> str:
    """The old ``holds`` column (True / False / NA) as a verdict, for before/after comparisons."""
    if holds is None or holds is pd.NA or (isinstance(holds, float) and math.isnan(holds)):
        return "inconclusive"
    return "supported" if bool(holds) else "contradicted"
