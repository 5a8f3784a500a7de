"""Metrics of Hamazaki, Abe, Kato (P2), checked on hand-computed examples."""

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.dummy import DummyRegressor

from tcpmodels.predict.metrics import (
    fraction_rpe_scorer,
    fraction_rpe_within,
    make_fraction_rpe_scorer,
    rmse,
    rpe,
    spearman_rho,
)

rates = st.floats(min_value=1e3, max_value=1e10, allow_nan=False, allow_infinity=False)


def test_rmse_hand_computed():
    # errors 0, 0, 2, -1 -> mean square (0 + 0 + 4 + 1) / 4 = 1.25
    assert rmse([1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 5.0, 3.0]) == pytest.approx(math.sqrt(1.25), rel=1e-15)
    assert rmse(pd.Series([5.0]), np.array([5.0])) == 0.0


def test_rpe_is_asymmetric_as_printed():
    # RPE = (R_hat - R) / min(R_hat, R): R_hat=2, R=1 -> 1.0; R_hat=1, R=2 -> -1.0
    np.testing.assert_array_equal(rpe(y_true=[1.0, 2.0], y_pred=[2.0, 1.0]), [1.0, -1.0])
    # 10 % over: (1.1 - 1) / 1; 10 % under the truth 1.1: (1 - 1.1) / 1
    np.testing.assert_allclose(rpe([1.0, 1.1], [1.1, 1.0]), [0.1, -0.1], rtol=1e-12)
    # a relative error of r/(1+r) from below is -r, not -r/(1+r)
    assert rpe([4.0], [3.0])[0] == pytest.approx(-1.0 / 3.0)


def test_fraction_of_rpe_open_interval_and_threshold():
    y_true = np.ones(5)
    # RPE = 0, 0.0625, 0.125 (edge), -0.125 (edge: 1/1.125 -> (1/1.125 - 1)/(1/1.125) = -0.125), 1.0
    y_pred = np.array([1.0, 1.0625, 1.125, 1.0 / 1.125, 2.0])
    assert rpe(y_true, y_pred)[3] == pytest.approx(-0.125, rel=1e-14)
    assert fraction_rpe_within(y_true, y_pred, threshold=0.125) == pytest.approx(2 / 5)
    assert fraction_rpe_within(y_true, y_pred, threshold=0.13) == pytest.approx(4 / 5)
    # default threshold 0.1 (the paper's): only the exact and the 6.25 % predictions count
    assert fraction_rpe_within(y_true, y_pred) == pytest.approx(2 / 5)
    assert fraction_rpe_within(y_true, y_pred, threshold=1.0) == pytest.approx(4 / 5)  # RPE 1.0 is on the edge


@pytest.mark.parametrize(
    ("func", "args", "match"),
    [
        (rmse, ([1.0, 2.0], [1.0]), "same length"),
        (rmse, ([], []), "empty"),
        (rmse, ([1.0, np.nan], [1.0, 1.0]), r"y_true must be finite; got nan at position 1"),
        (rmse, ([1.0, 1.0], [1.0, np.inf]), r"y_pred must be finite"),
        (rmse, (np.ones((2, 2)), np.ones((2, 2))), "one-dimensional"),
        (rpe, ([1.0, 0.0], [1.0, 1.0]), r"y_true \[rate\] must be > 0.*got 0 at position 1"),
        (rpe, ([1.0, 1.0], [1.0, -3.0]), r"y_pred \[rate\] must be > 0.*got -3"),
        (fraction_rpe_within, ([1.0], [1.0], 0.0), r"threshold \[-\] must be in \(0, inf\)"),
        (fraction_rpe_within, ([1.0], [-1.0]), "must be > 0"),
        (spearman_rho, ([1.0, 2.0], [1.0]), "same length"),
        (spearman_rho, ([1.0], [1.0]), "at least 2"),
        (spearman_rho, ([1.0, np.nan], [1.0, 2.0]), "x must be finite"),
    ],
)
def test_bad_input_is_a_clear_valueerror(func, args, match):
    with pytest.raises(ValueError, match=match):
        func(*args)


def test_non_numeric_is_a_typeerror():
    with pytest.raises(TypeError, match="y_true must be numeric"):
        rmse(["a", "b"], [1.0, 2.0])


def test_spearman_matches_hand_ranked_pearson():
    x = [10.0, 20.0, 30.0, 40.0, 50.0]
    y = [5.0, 6.0, 7.0, 8.0, 7.0]
    # ranks of y with the tie averaged: 1, 2, 3.5, 5, 3.5
    rx, ry = np.array([1, 2, 3, 4, 5.0]), np.array([1, 2, 3.5, 5, 3.5])
    expected = np.sum((rx - rx.mean()) * (ry - ry.mean())) / np.sqrt(
        np.sum((rx - rx.mean()) ** 2) * np.sum((ry - ry.mean()) ** 2)
    )
    res = spearman_rho(x, y)
    assert res.rho == pytest.approx(expected, rel=1e-12)
    assert res.n == 5 and 0 < res.pvalue < 1
    assert res.to_dict()["rho"] == res.rho
    assert spearman_rho([1, 2, 3], [30, 20, 10]).rho == pytest.approx(-1.0)


def test_spearman_constant_input_is_nan_without_warning():
    res = spearman_rho([1.0, 1.0, 1.0], [1.0, 2.0, 3.0])
    assert math.isnan(res.rho) and math.isnan(res.pvalue)


def test_scorer_equals_metric_on_predictions():
    X = np.zeros((4, 1))
    y = np.array([1.0, 1.05, 1.5, 0.98])
    model = DummyRegressor(strategy="constant", constant=1.0).fit(X, y)
    # RPE of prediction 1.0: 0, -0.05, -0.5, 0.0204 -> 3 of 4 inside
    assert fraction_rpe_scorer(model, X, y) == pytest.approx(0.75)
    assert make_fraction_rpe_scorer(0.01)(model, X, y) == pytest.approx(0.25)
    with pytest.raises(ValueError, match="threshold"):
        make_fraction_rpe_scorer(-0.1)


@settings(derandomize=True, max_examples=100, deadline=None)
@given(st.lists(st.tuples(rates, rates), min_size=1, max_size=20))
def test_rpe_antisymmetric_and_fraction_symmetric(pairs):
    a = np.array([p[0] for p in pairs])
    b = np.array([p[1] for p in pairs])
    np.testing.assert_allclose(rpe(a, b), -rpe(b, a), rtol=1e-12, atol=0)
    assert fraction_rpe_within(a, b) == fraction_rpe_within(b, a)
    assert rmse(a, b) == pytest.approx(rmse(b, a), rel=1e-12)
    # sign: over-prediction is positive
    assert np.all(np.sign(rpe(a, b)) == np.sign(b - a))
