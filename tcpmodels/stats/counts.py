"""Tests that are no mean: :func:`direction_count` (sign test), :func:`distribution` (KS, run permutation),
:func:`arithmetic` and :func:`inequality` (exact), :func:`not_testable`."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from itertools import combinations

import numpy as np
from scipy import stats as sps

from tcpmodels.stats.outcomes import (
    CONTRADICTED,
    INCONCLUSIVE,
    NOT_TESTABLE_HERE,
    SMALLER_THAN_CLAIMED,
    SUPPORTED,
    interval_outcome,
)
from tcpmodels.stats.spec import POWER, ClaimSpec, Verdict, finite_values, fmt_number, percentile_pvalue, verdict_row

__all__ = ["direction_count", "distribution", "arithmetic", "inequality", "not_testable"]


def _units_needed(share: float, alpha: float) -> float:
    """Units a two-sided one-sample proportion test of ``share`` against 1/2 needs with :data:`POWER` (NaN at 1/2)."""
    from statsmodels.stats.power import NormalIndPower
    from statsmodels.stats.proportion import proportion_effectsize

    share = min(max(share, 0.05), 0.95)  # a share of 0 or 1 has no finite effect size
    if share == 0.5:
        return math.nan
    es = abs(proportion_effectsize(share, 0.5))
    return float(math.ceil(NormalIndPower().solve_power(effect_size=es, alpha=alpha, power=POWER, ratio=0,
                                                        alternative="two-sided")))


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
        (Clopper-Pearson) CI of scipy's ``binomtest``; the outcome is
        :func:`tcpmodels.stats.outcomes.interval_outcome` with null 1/2 and ``smallest_effect`` the share
        the claim needs (0.5 for "most": supported once the sign test rejects "no preferred direction";
        contradicted if the CI lies below it); ``statistic`` is k and ``pvalue`` the binomial test's at the
        boundary the label rests on; else inconclusive
        with ``runs_needed`` the number of *units* a one-sample proportion test
        (statsmodels ``NormalIndPower``, ``ratio=0``) needs for 80 % power at the observed share, or at
        ``power_share`` when the observed share is below it. If the units at hand already reach that
        figure (the clear majority planned for would most likely have shown), it is the figure at the
        observed share (toward "contradicted" below 1/2; NaN at exactly 1/2).
    """
    x = finite_values(per_unit)
    x = x[x != 0]
    n = len(x)
    k = int((np.sign(x) == spec.direction).sum())
    need = spec.smallest_effect
    null = min(0.5, need)
    if n:
        res = sps.binomtest(k, n, 0.5, alternative="two-sided")
        ci = res.proportion_ci(confidence_level=spec.confidence_level, method="exact")
        share, lo, hi, p = k / n, float(ci.low), float(ci.high), float(res.pvalue)
        p_need = p if need == 0.5 else float(sps.binomtest(k, n, need, alternative="two-sided").pvalue)
        verdict = interval_outcome(lo, hi, need, null=null)
    else:
        share, lo, hi, p, p_need, verdict = math.nan, 0.0, 1.0, math.nan, math.nan, INCONCLUSIVE
    if verdict == SUPPORTED:
        reason = f"sign test p = {p:.3g}: the CI of the share lies above {need:g}"
    elif verdict == SMALLER_THAN_CLAIMED:
        reason = f"sign test p = {p:.3g}: more than half move the paper's way, but the CI of the share lies below {need:g}"
    elif verdict == CONTRADICTED:
        reason = f"the CI of the share lies below {need:g}" + ("" if lo > 0.5 else " and holds 0.5" if hi >= 0.5 else
                                                               ": most move the other way")
    else:
        reason = (f"sign test p = {p:.3g}: the CI of the share holds {need:g}" if n
                  else "no units with a non-zero change")
    label_p = max(p, p_need) if verdict == SMALLER_THAN_CLAIMED else p if verdict == SUPPORTED and need == 0.5 \
        else p_need
    needed = math.nan
    if verdict == INCONCLUSIVE and n:
        needed = _units_needed(max(share, power_share, spec.smallest_effect), spec.alpha)
        if needed <= n:
            # the planned clear majority would most likely have shown by now and did not: plan at the share
            # observed instead (NaN at exactly 1/2, where no number of units decides)
            needed = _units_needed(share, spec.alpha)
            if math.isnan(needed):
                reason += (f"; {n} units were enough to show a share of {power_share:g} ({POWER:.0%} power) and "
                           "they split evenly: no number of units decides at this share")
    test = (f"sign test over {n} units, {spec.confidence_level:.0%} Clopper-Pearson CI of the share; "
            f"claimed share >= {spec.smallest_effect:g} ({spec.effect_source})")
    return verdict_row(spec, we_measured=we_measured or f"{k} of {n} units move the paper's way ({spec.quantity})",
                effect=share, ci_low=lo, ci_high=hi, n_runs=int(n if n_runs is None else n_runs), test=test,
                method="sign test (scipy.stats.binomtest), Clopper-Pearson CI", statistic=float(k), pvalue=label_p,
                verdict=verdict, runs_needed=needed, why=(why + "; " if why else "") + reason)


def _ks(a: Sequence[np.ndarray], b: Sequence[np.ndarray]) -> float:
    # scipy's ks_2samp(x, y).statistic, bit for bit, without the exact p-value it also computes (90 % of
    # the time of P1's claims, called ~1000 times per claim): the largest gap between the two empirical
    # CDFs at the pooled points, put on the 1/lcm(n1, n2) lattice as scipy's exact mode (n <= 10000) does
    x, y = np.sort(np.concatenate(a)), np.sort(np.concatenate(b))
    n1, n2 = len(x), len(y)
    pooled = np.concatenate([x, y])
    gaps = np.searchsorted(x, pooled, side="right") / n1 - np.searchsorted(y, pooled, side="right") / n2
    d = max(float(np.clip(-gaps.min(), 0, 1)), float(gaps.max()))
    g = math.gcd(n1, n2)
    if max(n1, n2) <= 10000 and n1 // g < np.iinfo(np.int32).max / (n2 // g):
        lcm = (n1 // g) * n2
        d = int(np.round(d * lcm)) * 1.0 / lcm
    return d


def distribution(spec: ClaimSpec, runs_a: Sequence[Iterable[float]], runs_b: Sequence[Iterable[float]], *,
                 seed: int = 0, max_permutations: int = 2000, we_measured: str | None = None,
                 why: str = "") -> Verdict:
    """Judge "the distributions of A and B differ" (CDF claims) with the run as the unit.

    The statistic is the two-sample Kolmogorov-Smirnov distance D between the pooled
    samples of A and B (scipy ``ks_2samp``). Its null distribution comes from
    reassigning whole runs to A and B (every split when there are at most
    ``max_permutations``, else that many seeded random splits), so flows of one run
    are never treated as independent. The CI of D is a percentile bootstrap over
    runs within each group. Supported if the permutation p < alpha and the CI lies above
    ``smallest_effect`` (a distance that matters); smaller than claimed if p < alpha but the CI lies
    below it; contradicted if the CI lies below it and p >= alpha; else inconclusive, with ``runs_needed`` the smallest number of runs per group for
    which a permutation p below alpha is possible at all (a lower bound: the
    permutation test has no closed-form power). The flow-level KS p-value is
    given in ``why`` for comparison only.

    Parameters
    ----------
    spec : ClaimSpec
        The claim; ``smallest_effect`` is the KS distance that matters, in (0, 1]. [-]
    runs_a, runs_b : sequence of iterable of float
        One sample per run of A and of B (e.g. the flow completion times of one run). NaN
        are dropped, and runs left empty.
    seed : int
        Seed of the random splits and of the bootstrap.
    max_permutations : int
        Every split of runs is enumerated up to this many; above, this many random splits.
    we_measured, why : str
        Text for the row; a default ``we_measured`` is built from the numbers, ``why`` is put
        before the reason of the verdict.

    Returns
    -------
    Verdict
        ``effect`` is D, ``[ci_low, ci_high]`` its bootstrap CI, ``n_runs`` the runs of A and B
        together; the row of :func:`not_testable` when a group has no run.
    """
    a = [finite_values(r) for r in runs_a]
    b = [finite_values(r) for r in runs_b]
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
    delta = spec.smallest_effect
    p_delta = percentile_pvalue(boot, delta)
    if p < spec.alpha and lo > delta:
        verdict, reason = SUPPORTED, f"run-permutation p = {p:.3g} < {spec.alpha:g} and the CI of D lies above {fmt_number(delta)}"
    elif hi < delta:
        verdict = SMALLER_THAN_CLAIMED if p < spec.alpha else CONTRADICTED
        reason = (f"run-permutation p = {p:.3g} < {spec.alpha:g} but " if p < spec.alpha else "") + \
            f"the CI of D lies below {fmt_number(delta)}"
    else:
        verdict = INCONCLUSIVE
        reason = (f"run-permutation p = {p:.3g} (smallest possible with {na}+{nb} runs: {1 / math.comb(n, na):.3g}); "
                  f"the CI of D holds {fmt_number(delta)}")
    label_p = max(p, p_delta) if verdict in (SUPPORTED, SMALLER_THAN_CLAIMED) else p_delta
    needed = math.nan
    if verdict == INCONCLUSIVE:
        k = 1
        while 2 / math.comb(2 * k, k) >= spec.alpha:  # two identical-size groups, two-sided
            k += 1
        needed = float(max(k, na, nb))
    test = (f"two-sample KS distance D, null from reassigning whole runs ({len(splits)} splits), "
            f"bootstrap CI over runs; smallest D {fmt_number(spec.smallest_effect)} ({spec.effect_source})")
    return verdict_row(spec, we_measured=we_measured or f"D = {d_obs:.3f} ({na} vs {nb} runs, "
                f"{sum(map(len, a))} vs {sum(map(len, b))} samples)", effect=d_obs, ci_low=lo, ci_high=hi,
                n_runs=n, test=test, method="two-sample KS distance, run-permutation test and run bootstrap",
                statistic=d_obs, pvalue=label_p, verdict=verdict, runs_needed=needed,
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
    verdict = SUPPORTED if ok else CONTRADICTED
    reason = (f"distance from the printed value {fmt_number(gap)} {'<=' if ok else '>'} tolerance "
              f"{fmt_number(spec.smallest_effect)} ({spec.effect_source})")
    return verdict_row(spec, we_measured=we_measured, effect=diff, ci_low=lo - float(paper), ci_high=hi - float(paper),
                n_runs=0, test="arithmetic from the printed numbers (no sampling); range from their printing "
                "precision", method="exact computation", verdict=verdict, runs_needed=math.nan, why=(why + "; " if why else "") + reason)


def inequality(spec: ClaimSpec, value: float, bound: float, *, we_measured: str, why: str = "",
               null: float | None = None) -> Verdict:
    """Judge "value exceeds bound" (``direction=+1``) or "value is below bound" (``-1``), computed exactly.

    ``effect`` is ``value`` (the CI is the point); supported if ``direction * (value - bound) > 0``,
    else contradicted, or, with ``null`` given (the value of "no effect"), *smaller than claimed* when
    the value lies on the claimed side of ``null`` but not beyond ``bound`` (the rule of
    :func:`tcpmodels.stats.outcomes.interval_outcome` on a point). ``smallest_effect`` is not used by
    the rule (put a margin into ``bound``).

    Parameters
    ----------
    spec : ClaimSpec
        The claim; its ``direction`` says which side of ``bound`` the paper claims.
    value : float
        The computed value, in the unit of ``spec.quantity``.
    bound : float
        The bound it is compared with, in the same unit.
    we_measured : str
        What we computed, for the row.
    why : str
        Put before the comparison in the row's ``why``.
    null : float, optional
        "No effect", between the claimed side and ``bound`` excluded (e.g. 0 for a change claimed to
        exceed +0.05).

    Returns
    -------
    Verdict
        ``effect = ci_low = ci_high = value``, ``n_runs`` 0, no p-value (exact).
    """
    value, bound = float(value), float(bound)
    diff = value - bound
    s = spec.direction
    if s * diff > 0:
        verdict = SUPPORTED
    elif null is not None and s * (value - float(null)) > 0:
        verdict = SMALLER_THAN_CLAIMED
    else:
        verdict = CONTRADICTED
    reason = f"{fmt_number(value)} {'>' if diff > 0 else '<=' if diff <= 0 else '?'} {fmt_number(bound)}"
    if verdict == SMALLER_THAN_CLAIMED:
        reason += f", on the claimed side of {fmt_number(float(null))}"
    return verdict_row(spec, we_measured=we_measured, effect=value, ci_low=value, ci_high=value, n_runs=0,
                test=f"exact comparison ({spec.quantity} {'>' if s > 0 else '<'} {fmt_number(bound)}), "
                     "no sampling", method="exact comparison", verdict=verdict, runs_needed=math.nan,
                why=(why + "; " if why else "") + reason)


def not_testable(spec: ClaimSpec, *, we_measured: str, why: str, n_runs: int = 0) -> Verdict:
    """A part this setting cannot reach (no data of its kind here): *not testable here*, the reason in ``why``.

    For a part whose setting is known before the data to leave too little room for the claimed
    effect, give the spec an ``attainable_effect`` instead: every test then says *not testable here*.

    Parameters
    ----------
    spec : ClaimSpec
        The claim (or part) that cannot be judged.
    we_measured : str
        What data we do have, for the row.
    why : str
        Why the data cannot reach the claim (and what setting would).
    n_runs : int
        Runs that exist, for the row.

    Returns
    -------
    Verdict
        A *not testable here* row with NaN effect, interval, p-value and ``runs_needed``.
    """
    return verdict_row(spec, we_measured=we_measured, effect=math.nan, ci_low=math.nan, ci_high=math.nan,
                n_runs=int(n_runs), test="not testable with this data", method="none",
                verdict=NOT_TESTABLE_HERE, runs_needed=math.nan, why=why)
