"""Probe-to-data SVR predictors: function recovery, the paper's mechanism (C2.3), kernlab defaults."""

import numpy as np
import pandas as pd
import pytest

from tcpmodels.predict import (
    DEFAULT_PARAM_GRID,
    PerPathProbeSVR,
    SingleProbeSVR,
    TunedSVR,
    fraction_rpe_scorer,
    fraction_rpe_within,
    kernlab_sigest_gamma,
    make_svr_pipeline,
    probe_feature_names,
    rmse,
    tune_svr,
)


def _concave(x_bps):
    return 4e6 + 3e6 * np.sqrt(x_bps / 1e6)


def _mptcp_like(seed: int = 1):
    """The paper's design: RTT of each path 120..180 ms in 4 ms steps, 16 x 16 x 2 = 512 samples.

    Each path's 64 KB probe is a separate TCP connection whose throughput is set by
    its own RTT (slow start: about five round trips); the 256 MB MPTCP transfer
    sums both paths' window-limited rates. Noise: 5 % on probes, 2 % on data.
    """
    rng = np.random.default_rng(seed)
    rtt = np.arange(120, 181, 4) / 1e3
    r1, r2 = (np.repeat(a.ravel(), 2) for a in np.meshgrid(rtt, rtt))
    n = r1.size
    probe = np.column_stack([64e3 * 8 / (5 * r) * rng.lognormal(0, 0.05, n) for r in (r1, r2)])
    data = (2e6 * 8 / r1 + 2e6 * 8 / r2) * rng.lognormal(0, 0.02, n)
    order = rng.permutation(n)
    return probe, data, order[:384], order[384:]


def test_defaults_are_kernlab_ksvm_defaults():
    # ksvm(x, y): eps-svr, C = 1, epsilon = 0.1, tol = 0.001, rbfdot with kpar = "automatic" (sigest)
    for est in (SingleProbeSVR(), PerPathProbeSVR()):
        params = est.get_params()
        assert (params["C"], params["epsilon"], params["gamma"], params["tol"]) == (1.0, 0.1, "sigest", 1e-3)
        assert params["log_throughput"] is False


def test_sigest_hand_example_and_agreement_with_kernlab_sampling():
    # squared distances 1, 4, 9; type-7 quantiles q0.9 = 8, q0.1 = 1.6 -> (1/8 + 1/1.6) / 2
    assert kernlab_sigest_gamma([[0.0], [1.0], [3.0]]) == pytest.approx(0.375, rel=1e-15)
    # kernlab draws floor(n/2) random pairs; over many draws its median sits near our all-pairs value
    rng = np.random.default_rng(3)
    x = rng.standard_normal((400, 2))
    ours = kernlab_sigest_gamma(x)
    draws = []
    for _ in range(300):
        i, j = rng.integers(0, 400, 200), rng.integers(0, 400, 200)
        d2 = np.sum((x[i] - x[j]) ** 2, axis=1)
        d2 = d2[d2 != 0]
        q90, q10 = np.quantile(d2, [0.9, 0.1])
        draws.append((1 / q90 + 1 / q10) / 2)
    assert np.median(draws) == pytest.approx(ours, rel=0.05)
    assert kernlab_sigest_gamma(np.ones((5, 3))) == pytest.approx(1 / 3)  # no spread: 1 / n_features


def test_single_probe_svr_recovers_a_known_function():
    rng = np.random.default_rng(1)
    x = rng.uniform(1e6, 1e7, 300)
    x_test = np.linspace(1.2e6, 9.8e6, 200)
    truth = _concave(x_test)
    spread = np.std(truth)
    # kernlab defaults: the tube is 0.1 standard deviations wide, so the error is of that order
    default = SingleProbeSVR().fit(x[:, None], _concave(x))
    assert rmse(truth, default.predict(x_test[:, None])) < 0.15 * spread  # measured 0.095
    # a narrow tube and weak regularisation fit it closely
    tight = SingleProbeSVR(C=64.0, epsilon=0.01).fit(x[:, None], _concave(x))
    assert rmse(truth, tight.predict(x_test[:, None])) < 0.02 * spread  # measured 0.009
    logged = SingleProbeSVR(C=64.0, epsilon=0.01, log_throughput=True).fit(x[:, None], _concave(x))
    assert rmse(truth, logged.predict(x_test[:, None])) < 0.02 * spread
    assert fraction_rpe_within(truth, tight.predict(x_test[:, None])) == 1.0


def test_per_path_probes_beat_a_single_probe_on_mptcp_like_data():
    """C2.3's mechanism: a probe that sees only path 1 cannot tell how fast path 2 is."""
    probe, data, train, test = _mptcp_like()
    single = SingleProbeSVR().fit(probe[train, :1], data[train])
    per_path = PerPathProbeSVR().fit(probe[train], data[train])
    rmse_single = rmse(data[test], single.predict(probe[test, :1]))
    rmse_per_path = rmse(data[test], per_path.predict(probe[test]))
    frac_single = fraction_rpe_within(data[test], single.predict(probe[test, :1]))
    frac_per_path = fraction_rpe_within(data[test], per_path.predict(probe[test]))
    # measured: RMSE 14.4 vs 8.7 Mbit/s (-39 %), Fraction of RPE 0.86 vs 0.98
    assert rmse_per_path < 0.75 * rmse_single
    assert frac_per_path > frac_single + 0.05


@pytest.mark.parametrize("log_throughput", [False, True])
def test_numpy_prediction_matches_the_sklearn_pipeline(log_throughput):
    probe, data, train, test = _mptcp_like(seed=2)
    model = PerPathProbeSVR(log_throughput=log_throughput).fit(probe[train], data[train])
    pipeline = make_svr_pipeline(gamma=model.gamma_, log_throughput=log_throughput).fit(probe[train], data[train])
    ours, libsvm = model.predict(probe[test]), pipeline.predict(probe[test])
    # same model, different summation order: equal to float64 rounding (measured <= 5e-15)
    np.testing.assert_allclose(ours, libsvm, rtol=1e-12, atol=0)
    svr = pipeline.regressor_.named_steps["svr"]
    np.testing.assert_array_equal(model.support_vectors_, svr.support_vectors_)
    assert model.intercept_ == svr.intercept_[0]


def test_log_throughput_predictions_are_positive():
    probe, data, train, _ = _mptcp_like()
    model = PerPathProbeSVR(log_throughput=True).fit(probe[train], data[train])
    far = np.array([[1.0, 1.0], [1e12, 1e12]])  # far outside the training range
    assert np.all(model.predict(far) > 0)


def test_column_names_and_path_count():
    probe, data, train, _ = _mptcp_like()
    assert probe_feature_names(3) == ["probe_path1_bps", "probe_path2_bps", "probe_path3_bps"]
    model = PerPathProbeSVR().fit(probe[train], data[train])
    assert model.probe_names_ == ["probe_path1_bps", "probe_path2_bps"] and model.n_paths_ == 2
    frame = pd.DataFrame(probe[train], columns=["wifi_bps", "lte_bps"])
    named = PerPathProbeSVR(n_paths=2).fit(frame, data[train])
    assert named.probe_names_ == ["wifi_bps", "lte_bps"]
    assert SingleProbeSVR().fit(probe[train, :1], data[train]).probe_names_ == ["probe_bps"]
    one_path = PerPathProbeSVR().fit(probe[train, :1], data[train])  # m = 1 is allowed
    assert one_path.n_paths_ == 1


@pytest.mark.parametrize(
    ("est", "X", "match"),
    [
        (SingleProbeSVR(), np.ones((10, 2)), r"SingleProbeSVR takes exactly one column.*got 2 feature"),
        (SingleProbeSVR(), np.ones((10, 0)), r"exactly one column.*got 0 feature"),
        (PerPathProbeSVR(), np.ones((10, 0)), r"one probe-throughput column per path \(m >= 1 paths\)"),
        (PerPathProbeSVR(n_paths=2), np.ones((10, 3)), r"n_paths=2.*got X with 3 columns"),
        (PerPathProbeSVR(n_paths=0), np.ones((10, 1)), r"n_paths must be None or an integer >= 1"),
        (PerPathProbeSVR(log_throughput=True), np.r_[np.ones(9), 0.0][:, None],
         r"log_throughput=True.*probe throughput X \[bit/s\] must be > 0.*got 0"),
        (PerPathProbeSVR(gamma="auto"), np.ones((10, 1)), r"gamma must be 'sigest', 'scale' or a number"),
        (PerPathProbeSVR(gamma=-1.0), np.ones((10, 1)), r"gamma \[-\] must be"),
        (PerPathProbeSVR(C=0.0), np.ones((10, 1)), r"C \[-\] must be a number in \(0, inf\)"),
        (PerPathProbeSVR(epsilon=-0.1), np.ones((10, 1)), r"epsilon \[-\] must be a number in \[0, inf\)"),
    ],
)
def test_bad_input_raises_a_clear_valueerror(est, X, match):
    y = np.linspace(1.0, 2.0, X.shape[0])
    with pytest.raises(ValueError, match=match):
        est.fit(X, y)


def test_log_throughput_rejects_non_positive_target():
    with pytest.raises(ValueError, match=r"data throughput y \[bit/s\] must be > 0"):
        SingleProbeSVR(log_throughput=True).fit(np.linspace(1, 2, 5)[:, None], [1.0, 2.0, -1.0, 3.0, 4.0])


def test_tune_svr_reports_the_grid_and_refits_the_best():
    probe, data, train, test = _mptcp_like()
    grid = {"C": [1.0, 16.0], "epsilon": [0.1], "gamma": ["sigest", 0.5]}
    result = tune_svr(probe[train], data[train], param_grid=grid)
    assert isinstance(result, TunedSVR)
    est, table = result  # unpacks as (estimator, cv_results)
    assert len(table) == 4 and {"param_C", "param_gamma", "mean_test_score", "rank_test_score"} <= set(table)
    best = table.loc[table["rank_test_score"] == 1].iloc[0]
    assert result.best_params == best["params"]
    assert result.best_score == pytest.approx(best["mean_test_score"])
    assert {k: est.get_params()[k] for k in grid} == result.best_params
    assert isinstance(est, PerPathProbeSVR) and hasattr(est, "support_vectors_")
    # the tuned model is at least as good on held-out data as kernlab's defaults, within noise
    default = PerPathProbeSVR().fit(probe[train], data[train])
    assert rmse(data[test], est.predict(probe[test])) <= 1.1 * rmse(data[test], default.predict(probe[test]))


def test_tune_svr_with_the_fraction_of_rpe_scorer():
    probe, data, train, _ = _mptcp_like()
    result = tune_svr(
        probe[train, :1], data[train], estimator=SingleProbeSVR(log_throughput=True),
        param_grid={"C": [1.0, 4.0], "epsilon": [0.1]}, scoring=fraction_rpe_scorer, cv=3,
    )
    assert isinstance(result.estimator, SingleProbeSVR) and result.estimator.log_throughput
    assert 0.0 <= result.best_score <= 1.0
    assert result.cv_results["mean_test_score"].max() == result.best_score


def test_default_grid_contains_the_kernlab_defaults():
    assert 1.0 in DEFAULT_PARAM_GRID["C"] and 0.1 in DEFAULT_PARAM_GRID["epsilon"]
    assert "sigest" in DEFAULT_PARAM_GRID["gamma"]
    with pytest.raises(TypeError, match="SingleProbeSVR or PerPathProbeSVR"):
        tune_svr(np.ones((10, 1)), np.ones(10), estimator=object())
