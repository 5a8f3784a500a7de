"""Tests on means over runs: :func:`difference` (t / bootstrap / Welch), :func:`equivalence` (TOST), and
:func:`bootstrap_statistic` for a statistic that is no mean (a correlation, a ratio of RMSEs)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

import numpy as np
from scipy import stats as sps

from tcpmodels._docstrings import SharedEntries
from tcpmodels.stats.outcomes import CONTRADICTED, INCONCLUSIVE, SUPPORTED, equivalence_outcome
from tcpmodels.stats.spec import (
    POWER,
    ClaimSpec,
    Verdict,
    decide,
    finite_values,
    fmt_number,
    label_test,
    percentile_pvalue,
    ttest_1samp,
    ttest_ind_runs_needed,
    ttest_runs_needed,
    verdict_row,
)

__all__ = ["difference", "equivalence", "equivalence_ind", "bootstrap_statistic", "slope_equivalence", "percentile_interval",
           "welch"]

#: Parameters documented once for the docstrings of this module that share them.
_PARAMETERS = SharedEntries("""
    spec : ClaimSpec
    we_measured, why : str
        Text for the row; a default ``we_measured`` is built from the numbers, ``why`` is put
        before the reason of the verdict.
""")


def welch(x: np.ndarray, y: np.ndarray, value: float, level: float) -> tuple[float, float, float, float, float]:
    """Welch's t test of ``mean(x) - mean(y) = value`` and its interval, by statsmodels ``CompareMeans``.

    Both groups constant: exact (the interval is the point; p is 0 unless the point is ``value``).

    Parameters
    ----------
    x, y : numpy.ndarray
        Finite values of the two independent groups (at least 2 each), in the same unit.
    value : float
        The difference under the null, in the unit of ``x``.
    level : float
        Confidence level of the interval, e.g. 0.95. [-]

    Returns
    -------
    tuple of float
        t statistic, two-sided p-value, Welch-Satterthwaite degrees of freedom, interval low and high.
    """
    from statsmodels.stats.weightstats import CompareMeans, DescrStatsW

    diff = float(x.mean() - y.mean())
    if not x.var(ddof=1) + y.var(ddof=1) > 0:
        return (math.copysign(math.inf, diff - value) if diff != value else 0.0), float(diff == value), \
            float(len(x) + len(y) - 2), diff, diff
    cm = CompareMeans(DescrStatsW(x), DescrStatsW(y))
    t, p, df = cm.ttest_ind(usevar="unequal", value=value)
    lo, hi = cm.tconfint_diff(alpha=1 - level, usevar="unequal")
    return float(t), float(p), float(df), float(lo), float(hi)


def _text(why: str, reason: str) -> str:
    return (why + "; " if why else "") + reason


@_PARAMETERS.fill
def difference(spec: ClaimSpec, per_run: Iterable[float], *, baseline: Iterable[float] | None = None,
               method: str = "t", seed: int = 0, we_measured: str | None = None, why: str = "") -> Verdict:
    """Judge "the quantity is positive (``direction=+1``) or negative (``-1``)", at the size that matters, from one value per run.

    Parameters
    ----------
    {spec}
    per_run : iterable of float
        The quantity for each run (e.g. a paired difference per seed). NaN are dropped.
    baseline : iterable of float, optional
        Independent runs of the other condition: the effect is then ``mean(per_run) - mean(baseline)``
        with Welch's t test and interval (statsmodels; ``method="t"`` only), and ``runs_needed`` is per
        group (statsmodels ``TTestIndPower``, pooled sd).
    method : {"t", "bootstrap"}
        One-sample t test and interval (scipy ``ttest_1samp``), or the percentile bootstrap of the mean
        (scipy ``bootstrap``, 9999 resamples, seeded; p-values by inverting it).
    seed : int
        Seed of the bootstrap.
    we_measured, why : str
        Text for the row; a default is built from the numbers.

    Returns
    -------
    Verdict
        ``effect`` is the mean over runs and ``[ci_low, ci_high]`` its CI (natural sign); the outcome is
        :func:`tcpmodels.stats.outcomes.interval_outcome` of the CI of ``direction * mean`` at
        ``smallest_effect``. ``statistic``, ``pvalue`` and ``df`` are those of the two-sided test at the
        boundary the label rests on (see :func:`tcpmodels.stats.spec.label_test`). ``runs_needed``
        (inconclusive only) is the number of runs for the CI to exclude ``smallest_effect`` with 80 %
        power if the true mean is the one observed (t-test power at ``|mean - delta| / sd``).

    Raises
    ------
    ValueError
        If ``method`` is neither ``"t"`` nor ``"bootstrap"``.
    """
    if method not in ("t", "bootstrap"):
        raise ValueError(f"method must be 't' or 'bootstrap'; got {method!r}")
    x = finite_values(per_run)
    s = spec.direction
    delta = spec.smallest_effect
    if baseline is not None:
        return _welch(spec, x, finite_values(baseline), we_measured=we_measured, why=why)
    n = len(x)
    mean = float(x.mean()) if n else math.nan
    sd = float(x.std(ddof=1)) if n > 1 else math.nan
    at_delta = at_null = (math.nan, math.nan)
    df = math.nan
    if n < 2:
        lo, hi = (-math.inf, math.inf) if n else (math.nan, math.nan)
        name = "one-sample t test (scipy.stats.ttest_1samp)" if method == "t" else "percentile bootstrap of the mean"
    elif method == "t" or np.ptp(x) == 0:
        t_d, p_d, df, lo, hi = ttest_1samp(x, s * delta, spec.confidence_level)
        t_0, p_0, *_ = ttest_1samp(x, 0.0, spec.confidence_level)
        at_delta, at_null = (p_d, t_d), (p_0, t_0)
        name = "one-sample t test (scipy.stats.ttest_1samp)"
    else:
        res = sps.bootstrap((x,), np.mean, confidence_level=spec.confidence_level, method="percentile",
                            n_resamples=9999, random_state=np.random.default_rng(seed))
        lo, hi = float(res.confidence_interval.low), float(res.confidence_interval.high)
        boot = res.bootstrap_distribution
        at_delta, at_null = (percentile_pvalue(boot, s * delta), mean), (percentile_pvalue(boot, 0.0), mean)
        name = "percentile bootstrap of the mean (scipy.stats.bootstrap, 9999 resamples), p by inversion"
    verdict, reason = decide(spec, lo, hi, n > 1)
    p, stat = label_test(verdict, at_delta, at_null)
    needed = ttest_runs_needed(abs(s * mean - delta), sd, spec.alpha) if verdict == INCONCLUSIVE else math.nan
    label = "t" if method == "t" else "percentile bootstrap"
    test = (f"mean over runs, {spec.confidence_level:.0%} {label} CI; claimed {spec.quantity} "
            f"{'>' if s > 0 else '<'} 0, smallest effect {fmt_number(delta)} ({spec.effect_source})")
    return verdict_row(spec, we_measured=we_measured or f"{spec.quantity}: mean {fmt_number(mean)} over {n} runs "
                f"(sd {fmt_number(sd)})", effect=mean, ci_low=lo, ci_high=hi, n_runs=n, test=test, method=name,
                statistic=stat, df=df, pvalue=p, verdict=verdict, runs_needed=needed, why=_text(why, reason))


def _welch(spec: ClaimSpec, x: np.ndarray, y: np.ndarray, *, we_measured: str | None, why: str) -> Verdict:
    s, delta = spec.direction, spec.smallest_effect
    enough = len(x) >= 2 and len(y) >= 2
    effect = float(x.mean() - y.mean()) if len(x) and len(y) else math.nan
    at_delta = at_null = (math.nan, math.nan)
    df = math.nan
    if enough:
        t_d, p_d, df, lo, hi = welch(x, y, s * delta, spec.confidence_level)
        t_0, p_0, *_ = welch(x, y, 0.0, spec.confidence_level)
        at_delta, at_null = (p_d, t_d), (p_0, t_0)
    else:
        lo, hi = -math.inf, math.inf
    verdict, reason = decide(spec, lo, hi, enough)
    p, stat = label_test(verdict, at_delta, at_null)
    sd = math.sqrt((x.var(ddof=1) + y.var(ddof=1)) / 2) if enough else math.nan
    needed = math.nan
    dist = abs(s * effect - delta)
    if verdict == INCONCLUSIVE:
        needed = ttest_ind_runs_needed(dist, sd, spec.alpha)
    test = (f"difference of means over independent runs, {spec.confidence_level:.0%} Welch t CI; claimed "
            f"{spec.quantity} {'>' if s > 0 else '<'} 0, smallest effect {fmt_number(delta)} "
            f"({spec.effect_source}); runs_needed is per group")
    return verdict_row(spec, we_measured=we_measured or f"{spec.quantity}: {fmt_number(effect)} ({len(x)} vs {len(y)} runs)",
                effect=effect, ci_low=lo, ci_high=hi, n_runs=len(x) + len(y), test=test,
                method="Welch's t test (statsmodels CompareMeans, unequal variances)", statistic=stat, df=df, pvalue=p,
                verdict=verdict, runs_needed=needed, why=_text(why, reason))


def _tost_text(verdict: str, spec: ClaimSpec, p_tost: float, n: int, enough: bool) -> str:
    m = fmt_number(spec.smallest_effect)
    if verdict == CONTRADICTED:
        return f"the {spec.confidence_level:.0%} CI lies outside the margin ±{m}"
    if verdict == SUPPORTED:
        return f"TOST p = {p_tost:.3g} < {spec.alpha:g}: within ±{m}"
    return f"TOST p = {p_tost:.3g}: cannot exclude a change of {m}" if enough else "fewer than 2 runs: no interval"


@_PARAMETERS.fill
def equivalence(spec: ClaimSpec, per_run: Iterable[float], *, we_measured: str | None = None,
                why: str = "") -> Verdict:
    """Judge "the quantity does not change" by two one-sided t tests (TOST) with margin ``±smallest_effect``.

    ``effect`` is the mean over runs; ``[ci_low, ci_high]`` is the ``1 - 2 alpha`` interval
    (90 % for alpha 0.05), the one that matches TOST. The outcome is
    :func:`tcpmodels.stats.outcomes.equivalence_outcome`: supported if the interval lies inside the
    margin (TOST's p-value below alpha); contradicted if the ``1 - alpha`` interval lies wholly outside
    it; else inconclusive, with ``runs_needed`` for each one-sided test to have 80 % power at the
    distance from the observed mean to the margin (or, when the observed mean lies outside the margin,
    for a t test to exclude the margin). ``pvalue`` is TOST's (statsmodels ``ttost_mean``), or for a
    contradicted part that of the two-sided t test at the nearer margin; ``statistic`` and ``df`` go with it.

    Parameters
    ----------
    spec : ClaimSpec
        The claim; ``smallest_effect`` is the equivalence margin, ``direction`` is ignored.
    per_run : iterable of float
        The change for each run, in the unit of ``spec.quantity``. NaN are dropped.
    {we_measured, why}

    Returns
    -------
    Verdict
        The row, with ``n_runs`` the number of finite values.
    """
    from statsmodels.stats.weightstats import DescrStatsW

    x = finite_values(per_run)
    n = len(x)
    m = spec.smallest_effect
    mean = float(x.mean()) if n else math.nan
    sd = float(x.std(ddof=1)) if n > 1 else math.nan
    stat = df = math.nan
    if n >= 2 and sd > 0:
        d = DescrStatsW(x)
        p_tost, low_test, upp_test = d.ttost_mean(-m, m)
        p_tost = float(p_tost)
        stat, _, df = (float(v) for v in (low_test if low_test[1] >= upp_test[1] else upp_test))
        lo, hi = (float(v) for v in d.tconfint_mean(alpha=2 * spec.alpha))
        lo95, hi95 = (float(v) for v in d.tconfint_mean(alpha=spec.alpha))
    elif n >= 2:  # all equal: no spread, exact
        p_tost = 0.0 if abs(mean) < m else 1.0
        lo = hi = lo95 = hi95 = mean
        df = n - 1.0
    else:
        p_tost, lo, hi, lo95, hi95 = math.nan, -math.inf, math.inf, -math.inf, math.inf
    verdict = equivalence_outcome(lo, hi, lo95, hi95, m) if n >= 2 else INCONCLUSIVE
    reason = _tost_text(verdict, spec, p_tost, n, n > 1)
    p = p_tost
    if verdict == CONTRADICTED:
        stat, p, df, *_ = ttest_1samp(x, math.copysign(m, mean), spec.confidence_level)
    needed = math.nan
    if verdict == INCONCLUSIVE and n > 1 and abs(mean) < m:
        needed = ttest_runs_needed(m - abs(mean), sd, spec.alpha, alternative="larger")
    elif verdict == INCONCLUSIVE and n > 1:  # the mean is outside the margin: runs to show the change instead
        needed = ttest_runs_needed(abs(mean) - m, sd, spec.alpha)
        reason += f"; the mean lies outside the margin, runs_needed is for the CI to exclude ±{fmt_number(m)}"
    test = (f"TOST (two one-sided t tests) over runs, margin ±{fmt_number(m)} ({spec.effect_source}); "
            f"CI is the {1 - 2 * spec.alpha:.0%} interval")
    return verdict_row(spec, we_measured=we_measured or f"{spec.quantity}: mean {fmt_number(mean)} over {n} runs (sd {fmt_number(sd)})",
                effect=mean, ci_low=lo, ci_high=hi, n_runs=n, test=test,
                method="TOST, two one-sided t tests (statsmodels DescrStatsW.ttost_mean)", statistic=stat, df=df,
                pvalue=p, verdict=verdict, runs_needed=needed, why=_text(why, reason))


@_PARAMETERS.fill
def equivalence_ind(spec: ClaimSpec, runs_a: Iterable[float], runs_b: Iterable[float], *,
                    we_measured: str | None = None, why: str = "") -> Verdict:
    """Judge "A and B do not differ" from independent runs of each, by TOST on Welch's t (margin ``±smallest_effect``).

    ``effect`` is ``mean(A) - mean(B)``; ``[ci_low, ci_high]`` the ``1 - 2 alpha`` Welch interval (the
    one that matches TOST). The outcome is :func:`tcpmodels.stats.outcomes.equivalence_outcome`
    (supported inside the margin, contradicted if the ``1 - alpha`` interval lies wholly outside it,
    else inconclusive, with ``runs_needed`` *per group* for each one-sided test to have 80 % power
    (statsmodels ``TTestIndPower``, pooled sd) at the distance from the observed difference to the
    margin, or, beyond the margin, for a Welch test to exclude it). ``pvalue`` is TOST's (statsmodels
    ``CompareMeans.ttost_ind``, unequal variances), or for a contradicted part Welch's at the nearer margin.

    Parameters
    ----------
    spec : ClaimSpec
        The claim; ``smallest_effect`` is the equivalence margin, ``direction`` is ignored.
    runs_a, runs_b : iterable of float
        One value per independent run of A and of B, in the unit of ``spec.quantity``. NaN are dropped.
    {we_measured, why}

    Returns
    -------
    Verdict
        The row, with ``n_runs`` the runs of A and B together.
    """
    from statsmodels.stats.weightstats import CompareMeans, DescrStatsW

    x, y = finite_values(runs_a), finite_values(runs_b)
    m = spec.smallest_effect
    enough = len(x) >= 2 and len(y) >= 2
    diff = float(x.mean() - y.mean()) if len(x) and len(y) else math.nan
    stat = df = p = math.nan
    if enough and x.var(ddof=1) + y.var(ddof=1) > 0:
        cm = CompareMeans(DescrStatsW(x), DescrStatsW(y))
        res = cm.ttost_ind(-m, m, usevar="unequal")  # (p, (low, upp)): each (t, p, df)
        p, (low_test, upp_test) = float(res[0]), (res[1] if len(res) == 2 else res[1:])
        stat, _, df = (float(v) for v in (low_test if low_test[1] >= upp_test[1] else upp_test))
        lo, hi = (float(v) for v in cm.tconfint_diff(alpha=2 * spec.alpha, usevar="unequal"))
        lo95, hi95 = (float(v) for v in cm.tconfint_diff(alpha=spec.alpha, usevar="unequal"))
    elif enough:  # both constant: exact
        lo = hi = lo95 = hi95 = diff
        p = 0.0 if abs(diff) < m else 1.0
    else:
        lo, hi, lo95, hi95 = -math.inf, math.inf, -math.inf, math.inf
    verdict = equivalence_outcome(lo, hi, lo95, hi95, m) if enough else INCONCLUSIVE
    if verdict == CONTRADICTED:
        stat, p, df, *_ = welch(x, y, math.copysign(m, diff), spec.confidence_level)
        reason = f"the {spec.confidence_level:.0%} CI lies outside the margin ±{fmt_number(m)}"
    elif verdict == SUPPORTED:
        reason = f"the {1 - 2 * spec.alpha:.0%} CI lies inside ±{fmt_number(m)} (TOST at {spec.alpha:g})"
    else:
        reason = (f"the {1 - 2 * spec.alpha:.0%} CI reaches beyond ±{fmt_number(m)}" if enough
                  else "fewer than 2 runs in a group: no interval")
    sd = math.sqrt((x.var(ddof=1) + y.var(ddof=1)) / 2) if enough else math.nan
    needed = math.nan
    if verdict == INCONCLUSIVE and sd > 0:
        dist = m - abs(diff) if abs(diff) < m else abs(diff) - m
        if dist > 0:
            needed = ttest_ind_runs_needed(dist, sd, spec.alpha, alternative="larger" if abs(diff) < m else "two-sided")
    test = (f"TOST on Welch's t over independent runs ({len(x)} vs {len(y)}), margin ±{fmt_number(m)} "
            f"({spec.effect_source}); CI is the {1 - 2 * spec.alpha:.0%} interval; runs_needed is per group")
    return verdict_row(spec, we_measured=we_measured or f"{spec.quantity}: {fmt_number(diff)} ({len(x)} vs {len(y)} "
                       "runs)", effect=diff, ci_low=lo, ci_high=hi, n_runs=len(x) + len(y), test=test,
                       method="TOST on Welch's t (statsmodels CompareMeans.ttost_ind, unequal variances)",
                       statistic=stat, df=df, pvalue=p, verdict=verdict, runs_needed=needed, why=_text(why, reason))


@_PARAMETERS.fill
def bootstrap_statistic(spec: ClaimSpec, data: Iterable[Iterable[float]], statistic: Callable[..., float], *,
                        unit: str = "run", n_resamples: int = 2999, seed: int = 0, we_measured: str | None = None,
                        why: str = "", vectorized: bool = False, clusters: Iterable | None = None) -> Verdict:
    """Judge "the statistic is positive (``direction=+1``) or negative (``-1``)" by a paired bootstrap over units.

    Parameters
    ----------
    {spec}
    data : sequence of arrays of equal length
        One array per variable, one element per unit (resampled together, so pairing is kept).
        Units with a NaN in any variable are dropped.
    statistic : callable
        ``statistic(*arrays) -> float`` (e.g. the difference of two Spearman correlations).
    unit : str
        What one element is (for the texts), e.g. ``"RTT pair"``.
    n_resamples, seed : int
        Bootstrap resamples (scipy ``bootstrap``, percentile method) and their seed.
    vectorized : bool
        ``statistic`` also takes 2-d arrays and an ``axis`` keyword and returns one value per resample
        (scipy's ``vectorized``): all resamples in one call instead of one call each. The resamples are
        the same either way.
    clusters : sequence, optional
        One label per element: elements with the same label are one unit (e.g. the repetitions of one
        RTT pair), resampled together (cluster bootstrap: each resample draws as many labels as there
        are, with replacement, and takes every element of each). ``n`` in the texts and the power
        analysis is then the number of clusters. Without it, or when every cluster holds one element,
        every element is a unit (scipy's bootstrap, as without ``clusters``).

    Returns
    -------
    Verdict
        ``effect`` is the statistic on all units, ``[ci_low, ci_high]`` its percentile bootstrap CI;
        verdict by the rule of :func:`difference`; ``pvalue`` by inverting the percentile interval
        (:func:`tcpmodels.stats.spec.percentile_pvalue`) at the boundary the label rests on, ``statistic``
        the effect. ``runs_needed`` (inconclusive only) is the number of *units* a one-sample z test
        (statsmodels ``NormalIndPower``, ``ratio=0``) needs to tell the observed effect from
        ``smallest_effect`` at the per-unit spread implied by the bootstrap standard error (``se * sqrt(n)``).
    """
    from statsmodels.stats.power import NormalIndPower

    arrays = [np.asarray(list(a), dtype=float) for a in data]
    if not arrays or len({len(a) for a in arrays}) != 1:
        raise ValueError("data must be one or more arrays of equal length")
    ok = np.all([np.isfinite(a) for a in arrays], axis=0)
    arrays = [a[ok] for a in arrays]
    members = None
    if clusters is not None:
        labels = np.asarray(list(clusters), dtype=object)
        if len(labels) != len(ok):
            raise ValueError(f"clusters must hold one label per element ({len(ok)}); got {len(labels)}")
        _, inv = np.unique(labels[ok].astype(str), return_inverse=True)
        members = [np.flatnonzero(inv == c) for c in range(int(inv.max()) + 1)] if len(inv) else []
        if all(len(m) == 1 for m in members):
            members = None  # every element its own unit: the plain paired bootstrap below
    n = len(arrays[0]) if members is None else len(members)
    effect = float(statistic(*arrays)) if len(arrays[0]) else math.nan
    enough = n >= 3
    if enough and members is None:
        res = sps.bootstrap(tuple(arrays), statistic, paired=True, vectorized=vectorized,
                            confidence_level=spec.confidence_level,
                            method="percentile", n_resamples=n_resamples, random_state=np.random.default_rng(seed))
        lo, hi, se = float(res.confidence_interval.low), float(res.confidence_interval.high), float(res.standard_error)
        boot = np.asarray(res.bootstrap_distribution, dtype=float)
    elif enough:
        draws = np.random.default_rng(seed).integers(0, n, size=(n_resamples, n))
        if vectorized and len({len(m) for m in members}) == 1:
            idx = np.stack(members)[draws].reshape(n_resamples, -1)  # every resample the same length
            boot = np.asarray(statistic(*[a[idx] for a in arrays], axis=-1), dtype=float)
        else:
            boot = np.array([statistic(*[a[np.concatenate([members[j] for j in d])] for a in arrays]) for d in draws],
                            dtype=float)
        tail = (1 - spec.confidence_level) / 2
        lo, hi = (float(q) for q in np.quantile(boot, [tail, 1 - tail]))
        se = float(np.std(boot, ddof=1))
    else:
        lo, hi, se, boot = -math.inf, math.inf, math.nan, np.array([])
    s, delta = spec.direction, spec.smallest_effect
    verdict, reason = decide(spec, lo, hi, enough)
    p, stat = label_test(verdict, (percentile_pvalue(boot, s * delta), effect), (percentile_pvalue(boot, 0.0), effect))
    needed = math.nan
    dist = abs(s * effect - delta)
    if verdict == INCONCLUSIVE and se > 0 and dist > 0:
        es = dist / (se * math.sqrt(n))
        k = NormalIndPower().solve_power(effect_size=es, alpha=spec.alpha, power=POWER, ratio=0)
        needed = float(math.ceil(max(float(np.atleast_1d(k)[0]), 3.0)))
    kind = "paired percentile bootstrap" if members is None else \
        f"cluster percentile bootstrap (a {unit}'s {len(arrays[0]) / max(n, 1):.3g} elements on average resampled together)"
    test = (f"statistic on all {unit}s, {spec.confidence_level:.0%} {kind} CI over {unit}s "
            f"({n_resamples} resamples); claimed {spec.quantity} {'>' if spec.direction > 0 else '<'} 0, smallest "
            f"effect {fmt_number(spec.smallest_effect)} ({spec.effect_source})")
    return verdict_row(spec, we_measured=we_measured or f"{spec.quantity}: {fmt_number(effect)} over {n} {unit}s",
                       effect=effect, ci_low=lo, ci_high=hi, n_runs=n, test=test,
                       method=f"{kind} (scipy.stats.bootstrap), p by inverting the percentile interval", statistic=stat,
                       pvalue=p, verdict=verdict, runs_needed=needed, why=_text(why, reason))


def slope_equivalence(spec: ClaimSpec, x: Iterable[float], y: Iterable[float], *, target: float,
                      unit: str = "run", we_measured: str | None = None, why: str = "") -> Verdict:
    """Judge "y changes with x at the slope ``target``" by TOST on the least-squares slope (margin ``±smallest_effect``).

    One point per unit (e.g. per run: its x and its measured y); the slope of the ordinary least-squares
    line (statsmodels ``OLS``, t distribution with ``n - 2`` degrees of freedom). ``effect`` is
    ``slope - target`` and ``[ci_low, ci_high]`` its ``1 - 2 alpha`` interval (the one TOST at alpha
    matches); the outcome is :func:`tcpmodels.stats.outcomes.equivalence_outcome` (supported inside the
    margin, contradicted if the ``1 - alpha`` interval lies wholly outside it, else inconclusive with
    ``runs_needed`` the units at which the interval's half-width would reach the distance from the
    observed slope to the margin, at the same spread of x and of the residuals).

    Parameters
    ----------
    spec : ClaimSpec
        The claim; ``smallest_effect`` is the margin on the slope (unit of y per unit of x), ``direction``
        is ignored.
    x, y : iterable of float
        One pair per unit; pairs with a NaN are dropped.
    target : float
        The slope the claim states (e.g. -0.5 for H = (3 - alpha) / 2).
    unit : str
        What one pair is, for the texts.
    we_measured, why : str
        Text for the row; defaults are built from the numbers.

    Returns
    -------
    Verdict
        The row; ``statistic``, ``pvalue`` and ``df`` of the binding one-sided test of TOST (or, when
        contradicted, of the two-sided t test at the nearer margin).

    Raises
    ------
    ValueError
        If ``x`` and ``y`` differ in length.
    """
    import statsmodels.api as sm

    xa, ya = np.asarray(list(x), dtype=float), np.asarray(list(y), dtype=float)
    if xa.shape != ya.shape:
        raise ValueError(f"x and y must have one value per {unit}; got {xa.size} and {ya.size}")
    ok = np.isfinite(xa) & np.isfinite(ya)
    xa, ya = xa[ok], ya[ok]
    n, m = len(xa), spec.smallest_effect
    enough = n >= 3 and np.ptp(xa) > 0
    slope = stat = df = p = se = math.nan
    lo = hi = lo95 = hi95 = math.nan
    if enough:
        fit = sm.OLS(ya, sm.add_constant(xa)).fit()
        slope, se, df = float(fit.params[1]), float(fit.bse[1]), float(fit.df_resid)
        lo, hi = (float(v) - target for v in fit.conf_int(alpha=2 * spec.alpha)[1])
        lo95, hi95 = (float(v) - target for v in fit.conf_int(alpha=spec.alpha)[1])
        d = slope - target
        if se > 0:
            t_low, t_upp = (d + m) / se, (d - m) / se
            p_low, p_upp = float(sps.t.sf(t_low, df)), float(sps.t.cdf(t_upp, df))
            stat, p = (t_low, p_low) if p_low >= p_upp else (t_upp, p_upp)
        else:
            stat, p = (math.inf, 0.0) if abs(d) < m else (math.nan, 1.0)
    effect = slope - target
    verdict = equivalence_outcome(lo, hi, lo95, hi95, m) if enough else INCONCLUSIVE
    if verdict == CONTRADICTED and se > 0:
        edge = math.copysign(m, effect)
        stat = (effect - edge) / se
        p = float(2 * sps.t.sf(abs(stat), df))
    reason = {SUPPORTED: f"TOST p = {p:.3g} < {spec.alpha:g}: the slope lies within {target:+g} ± {fmt_number(m)}",
              CONTRADICTED: f"the {spec.confidence_level:.0%} CI of the slope lies outside {target:+g} ± {fmt_number(m)}",
              INCONCLUSIVE: (f"TOST p = {p:.3g}: the {1 - 2 * spec.alpha:.0%} CI of the slope reaches beyond "
                               f"{target:+g} ± {fmt_number(m)}" if enough else
                               f"fewer than 3 {unit}s or one value of x: no slope")}[verdict]
    needed = math.nan
    if verdict == INCONCLUSIVE and enough and se > 0:
        dist = m - abs(effect) if abs(effect) < m else abs(effect) - m
        if dist > 0:  # se shrinks as 1/sqrt(n) at the same spreads; z quantiles for the target
            z = float(sps.norm.isf(spec.alpha)) + float(sps.norm.ppf(POWER))
            needed = float(max(n + 1, math.ceil(n * (z * se / dist) ** 2)))
    test = (f"least-squares slope over {n} {unit}s (statsmodels OLS), TOST against {target:+g} with margin "
            f"±{fmt_number(m)} ({spec.effect_source}); effect and CI are slope - ({target:+g}), the CI the "
            f"{1 - 2 * spec.alpha:.0%} interval")
    return verdict_row(spec, we_measured=we_measured or f"slope {fmt_number(slope)} (se {fmt_number(se)}) over {n} {unit}s",
                       effect=effect, ci_low=lo, ci_high=hi, n_runs=n, test=test,
                       method="TOST on the OLS slope (statsmodels OLS, t with n - 2 df)", statistic=stat, df=df,
                       pvalue=p, verdict=verdict, runs_needed=needed, why=_text(why, reason))


@_PARAMETERS.fill
def percentile_interval(spec: ClaimSpec, effect: float, boot: Iterable[float], *, n_runs: int, what: str,
                        we_measured: str, why: str = "") -> Verdict:
    """Judge a signed effect from a bootstrap distribution made elsewhere (e.g. two groups resampled independently).

    The interval is the percentile interval of ``boot`` at ``spec.confidence_level``; the outcome is
    that of :func:`difference` (:func:`tcpmodels.stats.outcomes.interval_outcome` at
    ``smallest_effect``), ``pvalue`` by inverting the percentile interval at the boundary the label
    rests on, ``statistic`` the effect.

    Parameters
    ----------
    {spec}
    effect : float
        The statistic on the data, in the unit of ``spec.quantity``.
    boot : iterable of float
        The statistic on each resample (NaN ignored; fewer than 2 finite: no interval).
    n_runs : int
        Units behind the statistic, for the row.
    what : str
        How the resamples were drawn, for ``test`` and ``method``.
    we_measured, why : str
        Text for the row.

    Returns
    -------
    Verdict
        The row; ``runs_needed`` is NaN (no power analysis for a resampled statistic of two groups).
    """
    b = np.asarray(list(boot), dtype=float)
    b = b[np.isfinite(b)]
    enough = len(b) >= 2
    tail = spec.alpha / 2
    lo, hi = (float(q) for q in np.quantile(b, [tail, 1 - tail])) if enough else (-math.inf, math.inf)
    s, delta = spec.direction, spec.smallest_effect
    verdict, reason = decide(spec, lo, hi, enough)
    p, stat = label_test(verdict, (percentile_pvalue(b, s * delta), effect), (percentile_pvalue(b, 0.0), effect))
    test = (f"{spec.confidence_level:.0%} percentile interval of {what} ({len(b)} resamples); claimed {spec.quantity} "
            f"{'>' if s > 0 else '<'} 0, smallest effect {fmt_number(delta)} ({spec.effect_source})")
    return verdict_row(spec, we_measured=we_measured, effect=float(effect), ci_low=lo, ci_high=hi, n_runs=int(n_runs),
                       test=test, method=f"percentile bootstrap ({what}), p by inverting the interval", statistic=stat,
                       pvalue=p, verdict=verdict, runs_needed=math.nan, why=_text(why, reason))
