"""tcpmodels.stats: known answers from scipy / statsmodels, the verdict rules, and power by simulation."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from statsmodels.stats.power import NormalIndPower, TTestPower
from statsmodels.stats.proportion import proportion_effectsize
from statsmodels.stats.weightstats import DescrStatsW

from tcpmodels.stats import (
    CLAIM_COLUMNS,
    VERDICTS,
    ClaimSpec,
    Verdict,
    arithmetic,
    claims_table,
    difference,
    direction_count,
    distribution,
    equivalence,
    holds_to_verdict,
    not_testable,
    verdict_counts,
)


def spec(delta=1.0, direction=1, **kw):
    return ClaimSpec(claim="Cx", part="p", paper_says="says", quantity="q", direction=direction,
                     smallest_effect=delta, effect_source="test", **kw)


def test_difference_t_interval_is_scipys():
    x = np.array([0.3, 1.9, 1.2, 0.8, 2.2])
    v = difference(spec(), x)
    ci = sps.ttest_1samp(x, 0).confidence_interval(0.95)
    assert (v.ci_low, v.ci_high) == pytest.approx((ci.low, ci.high))
    assert v.effect == pytest.approx(x.mean()) and v.n_runs == 5


def test_difference_verdicts():
    assert difference(spec(1.0), [1.1, 1.3, 0.9, 1.2]).verdict == "supported"
    assert difference(spec(1.0), [0.1, 0.2, 0.15, 0.12]).verdict == "contradicted"  # real but too small
    assert difference(spec(1.0), [-1.0, -1.2, -0.9]).verdict == "contradicted"  # opposite sign
    assert difference(spec(1.0, direction=-1), [-1.0, -1.2, -0.9]).verdict == "supported"
    v = difference(spec(1.0), [-0.5, 1.5, 0.2])
    assert v.verdict == "inconclusive" and v.runs_needed >= 3
    one = difference(spec(1.0), [2.0])
    assert one.verdict == "inconclusive" and math.isnan(one.runs_needed)


def test_runs_needed_is_statsmodels_power():
    x = np.array([-0.5, 1.5, 0.2, 0.9])
    v = difference(spec(0.5), x)
    n = TTestPower().solve_power(effect_size=0.5 / x.std(ddof=1), alpha=0.05, power=0.8, alternative="two-sided")
    assert v.runs_needed == math.ceil(n)


def test_runs_needed_gives_80_percent_power():
    """At runs_needed runs, a two-sided t test detects the smallest effect about 80 % of the time."""
    sd, delta = 1.0, 0.8
    n = int(TTestPower().solve_power(effect_size=delta / sd, alpha=0.05, power=0.8, alternative="two-sided") + 0.999)
    rng = np.random.default_rng(1)
    hits = [difference(spec(delta), rng.normal(delta, sd, n)).ci_low > 0 for _ in range(1500)]
    assert np.mean(hits) == pytest.approx(0.8, abs=0.04)


def test_fmt_runs_needed_prints_plans_not_margins():
    from tcpmodels.stats.spec import RUNS_NEEDED_SHOWN_MAX, fmt_runs_needed

    assert fmt_runs_needed(math.nan) == ""
    assert fmt_runs_needed(25.0) == "25"
    assert fmt_runs_needed(1203.0) == "1,203"
    assert fmt_runs_needed(float(RUNS_NEEDED_SHOWN_MAX)) == "10,000"
    assert fmt_runs_needed(19_231_041.0) == "more than 10,000"


def test_bootstrap_is_seeded_and_matches_scipy():
    x = np.array([0.3, 1.9, 1.2, 0.8, 2.2, 1.4])
    v1 = difference(spec(), x, method="bootstrap", seed=3)
    v2 = difference(spec(), x, method="bootstrap", seed=3)
    res = sps.bootstrap((x,), np.mean, method="percentile", n_resamples=9999, random_state=np.random.default_rng(3))
    assert (v1.ci_low, v1.ci_high) == (v2.ci_low, v2.ci_high)
    assert v1.ci_low == pytest.approx(res.confidence_interval.low)
    with pytest.raises(ValueError, match="method"):
        difference(spec(), x, method="jackknife")


def test_equivalence_is_statsmodels_tost():
    x = np.array([0.1, -0.05, 0.02, 0.03, -0.02])
    v = equivalence(spec(0.2), x)
    p = DescrStatsW(x).ttost_mean(-0.2, 0.2)[0]
    assert p < 0.05 and v.verdict == "supported"
    assert (v.ci_low, v.ci_high) == pytest.approx(DescrStatsW(x).tconfint_mean(alpha=0.10))
    assert equivalence(spec(0.2), [1.0, 1.1, 0.9, 1.05]).verdict == "contradicted"
    w = equivalence(spec(0.2), [0.3, -0.2, 0.1])
    assert w.verdict == "inconclusive" and w.runs_needed > 3


def test_direction_count_clopper_pearson():
    v = direction_count(spec(0.5), [0.1] * 8)
    assert v.effect == 1.0 and v.verdict == "supported"
    assert v.ci_low == pytest.approx(0.025 ** (1 / 8))  # exact lower bound when k = n
    w = direction_count(spec(0.5), [0.1, -0.1, 0.2, -0.3, 0.1, 0.2])
    assert w.verdict == "inconclusive"
    es = proportion_effectsize(0.75, 0.5)  # observed 4 / 6 is below the default power_share
    assert w.runs_needed == math.ceil(NormalIndPower().solve_power(effect_size=es, alpha=0.05, power=0.8, ratio=0))
    assert direction_count(spec(0.5), [-1.0] * 10).verdict == "contradicted"
    assert direction_count(spec(0.5, direction=-1), [-1.0] * 10).verdict == "supported"
    assert direction_count(spec(0.5), [0.0, np.nan]).verdict == "inconclusive"  # zeros carry no direction


def test_direction_count_plans_at_the_observed_share_once_the_planned_units_are_in():
    """29 units reach the 3-to-1 plan (29); at 19 of 29 (0.655) still inconclusive, the runs needed are those
    at 0.655, more than the units at hand, not the 29 already there; at exactly 1/2 no number decides."""
    planned = math.ceil(NormalIndPower().solve_power(effect_size=proportion_effectsize(0.75, 0.5), alpha=0.05,
                                                     power=0.8, ratio=0))
    assert planned == 29
    v = direction_count(spec(0.5), [1.0] * 19 + [-1.0] * 10)
    assert v.verdict == "inconclusive" and v.n_runs == 29
    at_share = math.ceil(NormalIndPower().solve_power(effect_size=proportion_effectsize(19 / 29, 0.5), alpha=0.05,
                                                      power=0.8, ratio=0))
    assert v.runs_needed == at_share and at_share > 29
    below = direction_count(spec(0.5), [1.0] * 13 + [-1.0] * 17)  # 0.433: more units would contradict "most"
    assert below.verdict == "inconclusive" and below.runs_needed > 30
    even = direction_count(spec(0.5), [1.0] * 15 + [-1.0] * 15)
    assert math.isnan(even.runs_needed) and "split evenly" in even.why
    assert direction_count(spec(0.5), [1.0] * 4 + [-1.0] * 2).runs_needed == planned  # fewer units: the plan


def test_distribution_uses_runs_not_flows():
    rng = np.random.default_rng(0)
    far_a = [rng.normal(0, 1, 200) for _ in range(4)]
    far_b = [rng.normal(3, 1, 200) for _ in range(4)]
    v = distribution(spec(0.1), far_a, far_b)
    assert v.verdict == "supported" and v.effect > 0.8 and v.n_runs == 8
    # two runs per side: 6 splits, the smallest p is 1/3 however many flows each run has
    few = distribution(spec(0.1), far_a[:2], far_b[:2])
    assert few.verdict == "inconclusive" and few.runs_needed == 4
    same = distribution(spec(0.5), [rng.normal(0, 1, 300) for _ in range(4)], [rng.normal(0, 1, 300) for _ in range(4)])
    assert same.verdict == "contradicted"  # D's CI stays below 0.5


@pytest.mark.parametrize("sizes_a, sizes_b, ties, n_large", [
    ((40, 55, 61), (50, 47), False, 0),  # unequal pooled sizes: scipy's exact mode puts D on the 1/lcm lattice
    ((30, 30), (30, 30), True, 0),  # equal sizes and ties
    ((7000, 4000), (6000, 5000), False, 1),  # more than 10000 per side: scipy's asymptotic mode, D as computed
])
def test_distribution_ks_distance_is_scipys(monkeypatch, sizes_a, sizes_b, ties, n_large):
    rng = np.random.default_rng(len(sizes_a) + 10 * n_large)
    draw = (lambda n: np.round(rng.exponential(3.0, n))) if ties else (lambda n: rng.lognormal(0.0, 1.0, n))
    a, b = [draw(n) for n in sizes_a], [draw(n) * 1.3 for n in sizes_b]
    ours = distribution(spec(0.1), a, b, max_permutations=40)
    monkeypatch.setattr("tcpmodels.stats.counts._ks", lambda x, y: float(
        sps.ks_2samp(np.concatenate(x), np.concatenate(y)).statistic))
    ref = distribution(spec(0.1), a, b, max_permutations=40)
    assert (ours.effect, ours.ci_low, ours.ci_high, ours.verdict, ours.why) == (
        ref.effect, ref.ci_low, ref.ci_high, ref.verdict, ref.why)


def test_arithmetic_and_not_testable():
    assert arithmetic(spec(0.5), 29.02, 29, we_measured="x").verdict == "supported"
    assert arithmetic(spec(0.5), 30.0, 29, we_measured="x").verdict == "contradicted"
    v = not_testable(spec(), we_measured="nothing", why="no data")
    assert v.verdict == "inconclusive" and math.isnan(v.effect)


def test_spec_and_verdict_validation():
    with pytest.raises(ValueError, match="direction"):
        spec(direction=0)
    with pytest.raises(ValueError, match="smallest_effect"):
        spec(delta=0.0)
    with pytest.raises(ValueError, match="verdict"):
        Verdict(claim="c", part="p", paper_says="s", we_measured="m", effect=0, ci_low=0, ci_high=0, n_runs=1,
                test="t", verdict="holds", runs_needed=math.nan, why="w")


def test_claims_table_columns_and_counts():
    t = claims_table([difference(spec(), [1.1, 1.2, 1.3]), not_testable(spec(), we_measured="m", why="w")])
    assert tuple(t.columns) == CLAIM_COLUMNS
    assert set(t["verdict"]) <= set(VERDICTS)
    assert verdict_counts(t) == {"supported": 1, "contradicted": 0, "inconclusive": 1}
    assert [holds_to_verdict(h) for h in (True, False, pd.NA, None)] == [
        "supported", "contradicted", "inconclusive", "inconclusive"]


def test_welch_two_sample_is_scipys():
    a, b = np.array([0.52, 0.55, 0.50]), np.array([0.41, 0.44, 0.38, 0.40])
    v = difference(spec(0.05), a, baseline=b)
    ci = sps.ttest_ind(a, b, equal_var=False).confidence_interval(0.95)
    assert (v.ci_low, v.ci_high) == pytest.approx((ci.low, ci.high))
    assert v.verdict == "supported" and v.n_runs == 7
    w = difference(spec(0.05), [0.5, 0.6], baseline=[0.45, 0.62])
    sd = math.sqrt((np.var([0.5, 0.6], ddof=1) + np.var([0.45, 0.62], ddof=1)) / 2)
    from statsmodels.stats.power import TTestIndPower
    assert w.verdict == "inconclusive"
    assert w.runs_needed == math.ceil(TTestIndPower().solve_power(effect_size=0.05 / sd, alpha=0.05, power=0.8))


def test_doctests():
    import doctest

    import tcpmodels.stats.claims as module

    assert doctest.testmod(module).failed == 0


def test_bootstrap_statistic_judges_a_difference_of_correlations():
    """Paired bootstrap over units: a clear drop of correlation is supported, a tiny one against a large
    claimed effect is contradicted, and a noisy one is inconclusive with units needed."""
    from scipy.stats import spearmanr

    from tcpmodels.stats import ClaimSpec, bootstrap_statistic

    rng = np.random.default_rng(1)
    x = rng.normal(size=200)
    strong = x + 0.2 * rng.normal(size=200)
    weak = x + 3.0 * rng.normal(size=200)

    def drop(a, b, c):
        return spearmanr(a, b)[0] - spearmanr(a, c)[0]

    spec = ClaimSpec(claim="Cx", part="drop", paper_says="rho falls", quantity="rho drop", smallest_effect=0.2,
                     effect_source="test")
    v = bootstrap_statistic(spec, [x, strong, weak], drop, unit="unit", n_resamples=499)
    assert v.verdict == "supported" and v.ci_low > 0 and v.n_runs == 200
    big = ClaimSpec(claim="Cx", part="drop", paper_says="rho falls", quantity="rho drop", smallest_effect=0.9,
                    effect_source="test")
    assert bootstrap_statistic(big, [x, strong, weak], drop, n_resamples=499).verdict == "contradicted"
    few = bootstrap_statistic(spec, [x[:8], strong[:8], (x + 0.5 * rng.normal(size=200))[:8]], drop, n_resamples=499)
    assert few.verdict == "inconclusive" and few.runs_needed > 8
    with pytest.raises(ValueError, match="equal length"):
        bootstrap_statistic(spec, [x, x[:5]], drop)


def test_bootstrap_statistic_resamples_clusters_as_units():
    """Repetitions of a unit are one cluster: a data set whose every unit was measured twice identically gets
    the CI of the units (not one sqrt(2) narrower, as the element bootstrap gives), n counts clusters,
    singleton clusters reproduce the plain bootstrap exactly, and the vectorized and the looped cluster
    resamples give the same CI."""
    from tcpmodels.stats import ClaimSpec, bootstrap_statistic

    rng = np.random.default_rng(2)
    x = rng.normal(1.0, 1.0, 300)

    def mean(a, axis=-1):
        return np.mean(a, axis=axis)

    spec = ClaimSpec(claim="Cx", part="mean", paper_says="positive", quantity="mean", smallest_effect=0.1,
                     effect_source="test")
    single = bootstrap_statistic(spec, [x], mean, n_resamples=1999)
    assert bootstrap_statistic(spec, [x], mean, n_resamples=1999, clusters=range(300)) == single
    twice = np.concatenate([x, x])
    labels = np.concatenate([np.arange(300), np.arange(300)])
    flat = bootstrap_statistic(spec, [twice], mean, n_resamples=1999)
    clustered = bootstrap_statistic(spec, [twice], mean, n_resamples=1999, clusters=labels, vectorized=True)
    looped = bootstrap_statistic(spec, [twice], mean, n_resamples=1999, clusters=labels)
    width = single.ci_high - single.ci_low
    assert clustered.n_runs == 300 and flat.n_runs == 600
    assert abs((clustered.ci_high - clustered.ci_low) / width - 1) < 0.15
    assert abs((flat.ci_high - flat.ci_low) / width - 2 ** -0.5) < 0.15
    assert (clustered.ci_low, clustered.ci_high) == pytest.approx((looped.ci_low, looped.ci_high), rel=1e-12)
    assert "cluster percentile bootstrap" in clustered.test
    with pytest.raises(ValueError, match="one label per element"):
        bootstrap_statistic(spec, [twice], mean, clusters=labels[:10])


def test_equivalence_ind_matches_statsmodels_tost_and_decides_by_the_margin():
    from statsmodels.stats.weightstats import ttost_ind

    from tcpmodels.stats import ClaimSpec, equivalence_ind

    spec = ClaimSpec(claim="Cx", part="agree", paper_says="A = B", quantity="A - B", smallest_effect=0.1,
                     effect_source="test")
    a, b = [0.50, 0.52, 0.49, 0.51], [0.48, 0.50, 0.47, 0.52]
    v = equivalence_ind(spec, a, b)
    p = ttost_ind(np.array(a), np.array(b), -0.1, 0.1, usevar="unequal")[0]
    assert v.verdict == "supported" and p < 0.05 and v.ci_low > -0.1 and v.ci_high < 0.1
    assert v.effect == pytest.approx(np.mean(a) - np.mean(b)) and v.n_runs == 8
    far = equivalence_ind(spec, [0.8, 0.82, 0.79], [0.5, 0.51, 0.49])
    assert far.verdict == "contradicted"
    noisy = equivalence_ind(spec, [0.3, 0.7, 0.5], [0.5, 0.2, 0.6])
    assert noisy.verdict == "inconclusive" and noisy.runs_needed > 3
    assert equivalence_ind(spec, [0.5, 0.5], [0.5, 0.5]).verdict == "supported"  # constant: exact, no warning
    assert equivalence_ind(spec, [0.5], [0.5, 0.4]).verdict == "inconclusive"
