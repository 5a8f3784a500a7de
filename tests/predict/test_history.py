"""History baselines (He, Dovrolis, Ammar): hand-computed series, grouping, no look-ahead."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcpmodels.predict import ewma_forecast, holt_winters_forecast, moving_average_forecast


def test_moving_average_window_3_by_hand():
    x = [2.0, 4.0, 9.0, 1.0, 5.0, 6.0]
    # i=1: 2; i=2: (2+4)/2; i=3: (2+4+9)/3; i=4: (4+9+1)/3; i=5: (9+1+5)/3
    expected = [np.nan, 2.0, 3.0, 5.0, 14.0 / 3.0, 5.0]
    np.testing.assert_allclose(moving_average_forecast(x, 3), expected, rtol=1e-15)


def test_ewma_alpha_half_by_hand():
    x = [2.0, 6.0, 4.0, 10.0, 0.0]
    # p1 = 2; p2 = 0.5*6 + 0.5*2 = 4; p3 = 0.5*4 + 0.5*4 = 4; p4 = 0.5*10 + 0.5*4 = 7
    np.testing.assert_array_equal(ewma_forecast(x, 0.5), [np.nan, 2.0, 4.0, 4.0, 7.0])
    np.testing.assert_array_equal(ewma_forecast(x, 1.0)[1:], x[:-1])  # alpha = 1: last value


def _holt_by_hand(x, alpha, beta):
    level, trend, out = x[0], 0.0, [np.nan]
    for value in x[:-1]:
        new_level = alpha * value + (1 - alpha) * (level + trend)
        trend = beta * (new_level - level) + (1 - beta) * trend
        level = new_level
        out.append(level + trend)
    return np.array(out)


def test_holt_winters_matches_the_recursion():
    x = np.array([1.0, 2.0, 4.0, 3.0, 5.0, 6.0, 8.0])
    np.testing.assert_allclose(holt_winters_forecast(x, 0.5, 0.3), _holt_by_hand(x, 0.5, 0.3), rtol=1e-13)
    # by hand: p1 = 1; l1 = 1, b1 = 0 -> p2 = 1 + ... : l2 = 0.5*2 + 0.5*1 = 1.5, b2 = 0.3*0.5 = 0.15 -> p2 = 1.65
    assert holt_winters_forecast(x, 0.5, 0.3)[2] == pytest.approx(1.65, rel=1e-14)
    # beta = 0 keeps the trend at 0: simple exponential smoothing = EWMA
    np.testing.assert_allclose(holt_winters_forecast(x, 0.3, 0.0), ewma_forecast(x, 0.3), rtol=1e-13)
    # a linear series is predicted ever better: the trend term catches up
    line = np.arange(1.0, 41.0)
    errors = np.abs(holt_winters_forecast(line, 0.8, 0.5) - line)
    assert errors[-1] < 1e-3 < errors[2]


@pytest.mark.parametrize(
    "forecast",
    [lambda s, by=None: moving_average_forecast(s, 3, by=by),
     lambda s, by=None: ewma_forecast(s, 0.5, by=by),
     lambda s, by=None: holt_winters_forecast(s, 0.5, 0.3, by=by)],
    ids=["ma", "ewma", "hw"],
)
def test_grouped_by_path_equals_each_path_alone(forecast):
    x = np.array([10.0, 100.0, 12.0, 90.0, 11.0, 95.0, 13.0, 120.0])
    path = np.array(["a", "b", "a", "b", "a", "b", "a", "b"])
    grouped = forecast(x, by=path)
    for p in ("a", "b"):
        alone = forecast(x[path == p])
        np.testing.assert_allclose(grouped[path == p], alone, rtol=1e-15)
        assert np.isnan(grouped[path == p][0])
    series = pd.Series(x, index=pd.RangeIndex(100, 108), name="rate_bps")
    out = forecast(series, by=pd.Series(path, index=series.index))
    assert isinstance(out, pd.Series) and out.index.equals(series.index) and out.name == "rate_bps"


finite_rates = st.lists(st.floats(min_value=0, max_value=1e9, allow_nan=False), min_size=2, max_size=30)


@settings(derandomize=True, max_examples=40, deadline=None)
@given(finite_rates, st.data())
def test_no_look_ahead(values, data):
    """Changing sample k (and later ones) never changes the predictions for samples <= k."""
    x = np.array(values)
    k = data.draw(st.integers(min_value=0, max_value=len(x) - 1))
    y = x.copy()
    y[k:] = y[k:] * 3.0 + 7.0
    for f in (lambda s: moving_average_forecast(s, 4), lambda s: ewma_forecast(s, 0.3),
              lambda s: holt_winters_forecast(s, 0.6, 0.2)):
        np.testing.assert_array_equal(f(x)[: k + 1], f(y)[: k + 1])


def test_short_series():
    assert np.isnan(holt_winters_forecast([3.0], 0.5, 0.2)).all()
    np.testing.assert_array_equal(holt_winters_forecast([3.0, 5.0], 0.5, 0.2), [np.nan, 3.0])
    assert moving_average_forecast([], 3).shape == (0,)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: moving_average_forecast([1.0, np.nan, 2.0], 2), r"must be finite; got nan at position 1"),
        (lambda: ewma_forecast([1.0, -2.0], 0.5), r"series \[bit/s\] must be in \[0, inf\]; got -2"),
        (lambda: moving_average_forecast([1.0, 2.0], 0), r"window \[samples\] must be an integer >= 1"),
        (lambda: ewma_forecast([1.0, 2.0], 0.0), r"alpha \[-\] must be in \(0, 1\]; got 0"),
        (lambda: ewma_forecast([1.0, 2.0], 1.5), r"alpha \[-\] must be in \(0, 1\]"),
        (lambda: holt_winters_forecast([1.0, 2.0], 0.5, -0.1), r"beta \[-\] must be in \[0, 1\]"),
        (lambda: ewma_forecast([1.0, 2.0], 0.5, by=[1]), "one path id per sample"),
        (lambda: ewma_forecast([1.0, 2.0], 0.5, by=[1, None]), "must not contain missing"),
        (lambda: ewma_forecast(np.ones((2, 2)), 0.5), "one-dimensional"),
    ],
)
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()
