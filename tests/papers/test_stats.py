"""tcpmodels.stats: known answers from scipy / statsmodels, the verdict rules, and power by simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps
from statsmodels.stats.power import NormalIndPower, TTestPower
from statsmodels.stats.proportion import proportion_effectsize
from statsmodels.stats.weightstats import DescrStatsW

from tcpmodels.stats import (
    VERDICT_COLUMNS,
    VERDICTS,
    ClaimSpec,
    Verdict,
    arithmetic,
    claims_table,
    difference,
    direction_count,
    distribution,
    equivalence,
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
    assert difference(spec(1.0), [2.1, 2.3, 1.9, 2.2]).verdict == "supported"
    # the paper's direction, surely, but short of the size that matters
    assert difference(spec(1.0), [0.1, 0.2, 0.15, 0.12]).verdict == "smaller than claimed"
    assert difference(spec(1.0), [-1.0, -1.2, -0.9]).verdict == "contradicted"  # opposite sign
    assert difference(spec(1.0), [-0.1, 0.2, 0.05, 0.1]).verdict == "contradicted"  # no effect, delta excluded
    assert difference(spec(1.0, direction=-1), [-2.0, -2.2, -1.9]).verdict == "supported"
    v = difference(spec(1.0), [-0.5, 1.5, 0.2])
    assert v.verdict == "inconclusive" and v.runs_needed >= 3
    opened = difference(spec(1.0), [1.1, 1.3, 0.9, 1.2])  # above 0, but the CI holds delta: size open
    assert opened.verdict == "inconclusive" and "size is open" in opened.why
    one = difference(spec(1.0), [2.0])
    assert one.verdict == "inconclusive" and math.isnan(one.runs_needed)


def test_difference_carries_scipys_test_at_the_boundary_of_its_label():
    x = np.array([2.1, 2.3, 1.9, 2.2])
    v = difference(spec(1.0), x)
    ref = sps.ttest_1samp(x, 1.0)
    assert (v.statistic, v.pvalue, v.df) == pytest.approx((ref.statistic, ref.pvalue, 3))
    assert v.confidence_interval() == (v.ci_low, v.ci_high) and "ttest_1samp" in v.method
    small = difference(spec(1.0), [0.1, 0.2, 0.15, 0.12])  # smaller than claimed: the larger of the two p-values
    p0, pd_ = sps.ttest_1samp([0.1, 0.2, 0.15, 0.12], 0.0).pvalue, sps.ttest_1samp([0.1, 0.2, 0.15, 0.12], 1.0).pvalue
    assert small.pvalue == pytest.approx(max(p0, pd_))


def test_runs_needed_is_statsmodels_power_at_the_distance_to_delta():
    x = np.array([-0.5, 1.5, 0.2, 0.9])
    v = difference(spec(0.5), x)
    n = TTestPower().solve_power(effect_size=abs(x.mean() - 0.5) / x.std(ddof=1), alpha=0.05, power=0.8,
                                 alternative="two-sided")
    assert v.verdict == "inconclusive" and v.runs_needed == math.ceil(n)


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
    assert v.pvalue == pytest.approx(sps.binomtest(8, 8, 0.5).pvalue) and v.statistic == 8
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
    assert distribution(spec(0.95), far_a, far_b).verdict == "smaller than claimed"  # differ, but by less
    # two runs per side: 6 splits, the smallest p is 1/3 however many flows each run has
    few = distribution(spec(0.1), far_a[:2], far_b[:2])
    assert few.verdict == "inconclusive" and few.runs_needed == 4
    same = distribution(spec(0.5), [rng.normal(0, 1, 300) for _ in range(4)], [rng.normal(0, 1, 300) for _ in range(4)])
    # D's CI stays below 0.5: the claimed distance is excluded; a permutation p below alpha (these draws: p = 0.029
    # of 70 splits) shows a difference all the same, so it is smaller than claimed rather than contradicted
    assert same.ci_high < 0.5
    assert same.verdict == ("smaller than claimed" if "< 0.05" in same.why else "contradicted")


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
    assert v.verdict == "not testable here" and math.isnan(v.effect) and math.isnan(v.pvalue)


def test_spec_and_verdict_validation():
    with pytest.raises(ValueError, match="direction"):
        spec(direction=0)
    with pytest.raises(ValueError, match="smallest_effect"):
        spec(delta=0.0)
    with pytest.raises(ValueError, match="verdict"):
        Verdict(claim="c", part="p", paper_says="s", we_measured="m", effect=0, ci_low=0, ci_high=0, n_runs=1,
                test="t", verdict="holds", runs_needed=math.nan, why="w")


def test_claims_table_columns_and_counts():
    t = claims_table([difference(spec(), [2.1, 2.2, 2.3]), not_testable(spec(), we_measured="m", why="w")])
    assert tuple(t.columns) == VERDICT_COLUMNS
    assert set(t["verdict"]) <= set(VERDICTS)
    assert verdict_counts(t) == {"supported": 1, "smaller than claimed": 0, "contradicted": 0, "inconclusive": 0,
                                 "not testable here": 1}


def test_welch_two_sample_is_scipys():
    a, b = np.array([0.52, 0.55, 0.50]), np.array([0.41, 0.44, 0.38, 0.40])
    v = difference(spec(0.05), a, baseline=b)
    ci = sps.ttest_ind(a, b, equal_var=False).confidence_interval(0.95)
    assert (v.ci_low, v.ci_high) == pytest.approx((ci.low, ci.high))
    assert v.verdict == "supported" and v.n_runs == 7
    ref = sps.ttest_ind(a - 0.05, b, equal_var=False)  # the test at delta, the boundary of "supported"
    assert (v.statistic, v.pvalue, v.df) == pytest.approx((ref.statistic, ref.pvalue, ref.df))
    w = difference(spec(0.05), [0.5, 0.6], baseline=[0.45, 0.62])
    sd = math.sqrt((np.var([0.5, 0.6], ddof=1) + np.var([0.45, 0.62], ddof=1)) / 2)
    from statsmodels.stats.power import TTestIndPower
    assert w.verdict == "inconclusive"
    dist = abs(np.mean([0.5, 0.6]) - np.mean([0.45, 0.62]) - 0.05)
    assert w.runs_needed == math.ceil(TTestIndPower().solve_power(effect_size=dist / sd, alpha=0.05, power=0.8))


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
    assert v.verdict == "supported" and v.ci_low > 0.2 and v.n_runs == 200 and v.pvalue < 0.05
    big = ClaimSpec(claim="Cx", part="drop", paper_says="rho falls", quantity="rho drop", smallest_effect=0.9,
                    effect_source="test")
    assert bootstrap_statistic(big, [x, strong, weak], drop, n_resamples=499).verdict == "smaller than claimed"
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


# ------------------------------------------------------------------ the outcomes, one known answer each
@pytest.mark.parametrize("lo, hi, delta, null, outcome", [
    (0.12, 0.30, 0.10, 0.0, "supported"),             # the whole CI beyond delta: the claimed size
    (0.02, 0.08, 0.10, 0.0, "smaller than claimed"),  # the paper's side of 0, short of delta
    (-0.30, -0.10, 0.10, 0.0, "contradicted"),        # the opposite side
    (-0.02, 0.08, 0.10, 0.0, "contradicted"),         # no direction, delta excluded
    (-0.02, 0.20, 0.10, 0.0, "inconclusive"),         # holds 0 and delta
    (0.02, 0.20, 0.10, 0.0, "inconclusive"),          # direction shows, size open
    (0.55, 0.70, 0.50, 0.5, "supported"),             # a share: above one half ("most")
    (0.30, 0.45, 0.50, 0.5, "contradicted"),
    (0.55, 0.70, 0.75, 0.5, "smaller than claimed"),  # most, but not the three in four claimed
    (math.nan, math.nan, 0.1, 0.0, "inconclusive"),
])
def test_interval_outcome_known_answers(lo, hi, delta, null, outcome):
    from tcpmodels.stats import interval_outcome

    assert interval_outcome(lo, hi, delta, null=null) == outcome


def test_interval_outcome_rejects_bad_input():
    from tcpmodels.stats import interval_outcome

    with pytest.raises(ValueError, match="delta"):
        interval_outcome(0.0, 1.0, 0.0)
    with pytest.raises(ValueError, match="lo <= hi"):
        interval_outcome(1.0, 0.0, 0.5)
    with pytest.raises(ValueError, match="null"):
        interval_outcome(0.0, 1.0, 0.3, null=0.5)


@pytest.mark.parametrize("ci90, ci95, outcome", [
    ((-0.02, 0.03), (-0.03, 0.04), "supported"),
    ((0.06, 0.08), (0.055, 0.09), "contradicted"),
    ((0.02, 0.07), (0.01, 0.08), "inconclusive"),
])
def test_equivalence_outcome_known_answers(ci90, ci95, outcome):
    from tcpmodels.stats import equivalence_outcome

    assert equivalence_outcome(*ci90, *ci95, 0.05) == outcome


def saturated(delta=0.264):
    # P2's Fraction of RPE: a predictor that uses no probe at all already scores 96.7 %, so no probe can add more
    # than 3.3 points; the paper's smallest gain is 26.4 points
    return spec(delta, attainable_effect=1 - 0.967, attainable_source="headroom above the constant predictor",
                testable_when="where a predictor without probe scores below 73.6 %")


def test_each_outcome_is_reachable_through_the_tests():
    """Every outcome of VERDICTS comes out of the public tests on suitable data (and only these)."""
    got = {
        difference(spec(1.0), [2.1, 2.3, 1.9, 2.2]).verdict,
        difference(spec(1.0), [0.1, 0.2, 0.15, 0.12]).verdict,
        difference(spec(1.0), [-1.0, -1.2, -0.9]).verdict,
        difference(spec(1.0), [-0.5, 1.5, 0.2]).verdict,
        difference(saturated(), [0.04, 0.03, 0.05]).verdict,
    }
    assert got == set(VERDICTS)


def test_a_saturated_part_is_not_testable_before_any_data():
    from tcpmodels.stats import attainable_outcome, bootstrap_statistic, equivalence_ind

    s = saturated()
    assert not s.testable and attainable_outcome(s.attainable_effect, s.smallest_effect) == "not testable here"
    for v in (difference(s, []), difference(s, [0.9, 0.95, 0.99]), equivalence(s, [0.0, 0.01, -0.01]),
              equivalence_ind(s, [], []), direction_count(s, [])):
        assert v.verdict == "not testable here" and math.isnan(v.runs_needed)
        assert "not testable here: this setting allows at most 0.033" in v.why and "testable where" in v.why
    assert bootstrap_statistic(s, [[1.0, 2.0, 3.0]], np.mean).verdict == "not testable here"
    with pytest.raises(ValueError, match="attainable_source"):
        spec(0.2, attainable_effect=0.1)
    assert spec(0.2, attainable_effect=0.3, attainable_source="x", testable_when="y").testable


def test_holm_within_families_known_answer():
    from statsmodels.stats.multitest import multipletests

    from tcpmodels.stats import holm

    p = [0.001, 0.02, 0.03, 0.2]
    assert holm(p).tolist() == pytest.approx(multipletests(p, method="holm")[1].tolist())
    assert holm(p).round(3).tolist() == [0.004, 0.06, 0.06, 0.2]  # 4 * 0.001, max(3 * 0.02, 2 * 0.03), 0.2


def test_claims_table_applies_holm_within_each_family_and_keeps_the_interval():
    """Two clear parts, a supported one with p = 0.027 and an inconclusive one on one engine: alone the weak part
    stands, in the family of four it is third in Holm's order (threshold 0.05 / 2) and falls to inconclusive,
    its interval unchanged; in a family of its own it stands."""
    rng = np.random.default_rng(5)
    parts = [difference(spec(0.1), rng.normal(1.0, 0.5, 40)) for _ in range(2)]
    weak = difference(spec(0.1), [0.05, 0.6, 0.35, 0.9, 0.5, 0.1, 0.45])
    open_ = difference(spec(0.1), [-0.2, 0.5, 0.1, 0.3])
    assert weak.verdict == "supported" and 0.025 < weak.pvalue < 0.05 and open_.verdict == "inconclusive"
    t = claims_table([*parts, weak, open_], family="kernel")
    assert t["verdict"].tolist() == ["supported", "supported", "inconclusive", "inconclusive"]
    assert (t.loc[2, "ci_low"], t.loc[2, "ci_high"]) == (weak.ci_low, weak.ci_high)
    assert t.loc[2, "pvalue_holm"] >= 0.05 > t.loc[2, "pvalue"] == weak.pvalue
    assert "after Holm's adjustment" in t.loc[2, "why"] and t.loc[2, "runs_needed"] > 7
    by_engine = claims_table([*parts, weak, open_], family=lambda v: "ns3" if v is weak else "kernel")
    assert by_engine["verdict"].tolist()[:3] == ["supported"] * 3
    assert set(by_engine["family"]) == {"kernel", "ns3"}


def test_slope_equivalence_is_tost_on_statsmodels_ols_slope():
    """H on alpha with slope -0.5 plus noise: within a 0.11 margin; with slope -0.3 the 95 % CI lies outside it;
    the one-sided tests are those of the OLS slope's t (n - 2 df)."""
    import statsmodels.api as sm

    from tcpmodels.stats import slope_equivalence

    rng = np.random.default_rng(4)
    alpha = np.repeat([1.05, 1.35, 1.65, 1.95], 3)
    s = spec(0.11)
    good = slope_equivalence(s, alpha, (3 - alpha) / 2 + rng.normal(0, 0.01, 12), target=-0.5)
    fit = sm.OLS((3 - alpha) / 2 + np.random.default_rng(4).normal(0, 0.01, 12), sm.add_constant(alpha)).fit()
    assert good.effect == pytest.approx(fit.params[1] + 0.5) and good.df == 10
    assert (good.ci_low, good.ci_high) == pytest.approx(tuple(fit.conf_int(alpha=0.10)[1] + 0.5))
    t_low, t_upp = (good.effect + 0.11) / fit.bse[1], (good.effect - 0.11) / fit.bse[1]
    assert good.pvalue == pytest.approx(max(sps.t.sf(t_low, 10), sps.t.cdf(t_upp, 10)))
    assert good.verdict == "supported"
    flat = slope_equivalence(s, alpha, 1.3 - 0.3 * alpha + rng.normal(0, 0.01, 12), target=-0.5)
    assert flat.verdict == "contradicted" and flat.effect == pytest.approx(0.2, abs=0.02)
    noisy = slope_equivalence(s, alpha, (3 - alpha) / 2 + rng.normal(0, 0.3, 12), target=-0.5)
    assert noisy.verdict == "inconclusive" and noisy.runs_needed > 12
    assert slope_equivalence(s, [1.0, 1.0, 1.0], [0.5, 0.6, 0.7], target=-0.5).verdict == "inconclusive"
    with pytest.raises(ValueError, match="one value per run"):
        slope_equivalence(s, [1.0, 2.0], [0.5], target=-0.5)


def test_percentile_interval_decides_like_difference_on_a_given_bootstrap():
    from tcpmodels.stats import percentile_interval

    boot = np.random.default_rng(0).normal(0.03, 0.005, 4000)
    v = percentile_interval(spec(0.01), 0.03, boot, n_runs=16, what="runs", we_measured="m")
    assert v.verdict == "supported" and (v.ci_low, v.ci_high) == pytest.approx(tuple(np.quantile(boot, [0.025, 0.975])))
    assert v.pvalue == 0.0  # no resample at or below 0.01
    small = percentile_interval(spec(0.05), 0.03, boot, n_runs=16, what="runs", we_measured="m")
    assert small.verdict == "smaller than claimed"
    assert percentile_interval(spec(0.05), 0.0, boot - 0.03, n_runs=16, what="runs", we_measured="m").verdict == \
        "contradicted"


def test_two_sample_runs_needed_is_two_when_two_runs_already_have_the_power():
    # statsmodels finds no group size above 2 for a large effect (it warns and returns NaN), which reached
    # math.ceil inside equivalence_ind; the answer is 2, and the planned size really has the power
    from statsmodels.stats.power import TTestIndPower

    from tcpmodels.stats.spec import POWER, ttest_ind_runs_needed

    assert ttest_ind_runs_needed(5.0, 1.0, 0.05, alternative="larger") == 2.0
    n = ttest_ind_runs_needed(1.0, 1.0, 0.05)
    assert TTestIndPower().power(effect_size=1.0, nobs1=n, alpha=0.05) >= POWER
    assert TTestIndPower().power(effect_size=1.0, nobs1=n - 1, alpha=0.05) < POWER
    assert math.isnan(ttest_ind_runs_needed(0.0, 1.0, 0.05)) and math.isnan(ttest_ind_runs_needed(1.0, 0.0, 0.05))
