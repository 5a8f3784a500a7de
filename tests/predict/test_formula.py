"""FormulaThroughputRegressor against the model functions of tcpmodels.models.throughput."""

import numpy as np
import pandas as pd
import pytest

from tcpmodels.models.throughput import mathis_throughput_bps, padhye_throughput_bps
from tcpmodels.predict import FormulaThroughputRegressor

RTT_S = np.array([0.01, 0.05, 0.1, 0.2, 0.3])
LOSS = np.array([1e-4, 1e-3, 0.01, 0.02, 0.05])


def test_mathis_equals_the_model_function():
    X = np.column_stack([RTT_S, LOSS])
    model = FormulaThroughputRegressor().fit(X)
    np.testing.assert_array_equal(model.predict(X), mathis_throughput_bps(1460.0, RTT_S, LOSS))
    delayed = FormulaThroughputRegressor(mss_bytes=1448, b=2, c=None).fit(X)
    np.testing.assert_array_equal(delayed.predict(X), mathis_throughput_bps(1448.0, RTT_S, LOSS, b=2))
    # the docstring value: 1460 B, 100 ms, 1 % -> 1.4305 Mbit/s
    assert model.predict([[0.1, 0.01]])[0] / 1e6 == pytest.approx(1.4305, abs=5e-5)


def test_padhye_equals_the_model_function_with_four_columns():
    t0 = 4 * RTT_S
    w_max = np.array([20.0, 50.0, 100.0, 64.0, 1000.0])
    X = np.column_stack([RTT_S, LOSS, t0, w_max])
    model = FormulaThroughputRegressor(model="padhye").fit(X)
    expected = padhye_throughput_bps(1460.0, RTT_S, LOSS, t0, w_max)
    assert np.all(expected <= w_max * 1460 * 8 / RTT_S)  # so the window ceiling does not bind
    np.testing.assert_array_equal(model.predict(X), expected)
    two_columns = FormulaThroughputRegressor(model="padhye", t0_s=0.4, w_max_segments=100).fit(X[:, :2])
    np.testing.assert_array_equal(
        two_columns.predict(X[:, :2]), padhye_throughput_bps(1460.0, RTT_S, LOSS, 0.4, 100.0)
    )


def test_zero_loss_predicts_the_window_or_capacity_ceiling():
    X = np.array([[0.1, 0.0], [0.05, 0.0], [0.1, 0.01]])
    windowed = FormulaThroughputRegressor(w_max_segments=100).fit(X)
    ceiling = 100 * 1460 * 8 / np.array([0.1, 0.05, 0.1])
    pred = windowed.predict(X)
    np.testing.assert_allclose(pred[:2], ceiling[:2], rtol=1e-15)
    assert pred[2] == mathis_throughput_bps(1460.0, 0.1, 0.01)  # below the ceiling: the formula
    capped = FormulaThroughputRegressor(w_max_segments=100, capacity_bps=10e6).fit(X)
    np.testing.assert_allclose(capped.predict(X), [10e6, 10e6, pred[2]], rtol=1e-15)
    # PFTK tends to W_max / RTT as p -> 0, the value used at p = 0
    pftk = FormulaThroughputRegressor(model="padhye", t0_s=0.4, w_max_segments=100).fit(X)
    assert pftk.predict(X)[0] == pytest.approx(ceiling[0], rel=1e-15)
    assert padhye_throughput_bps(1460.0, 0.1, 1e-9, 0.4, 100.0) == pytest.approx(ceiling[0], rel=1e-3)
    with pytest.raises(ValueError, match=r"loss_rate is 0 in row 0 \(2 rows\).*unbounded.*w_max_segments"):
        FormulaThroughputRegressor().fit(X).predict(X)


def test_mathis_above_the_window_is_capped():
    X = np.array([[0.01, 1e-6]])  # Mathis: 1.43 Gbit/s; window 10 segments: 11.68 Mbit/s
    pred = FormulaThroughputRegressor(w_max_segments=10).fit(X).predict(X)
    assert pred[0] == pytest.approx(10 * 1460 * 8 / 0.01, rel=1e-15)


def test_calibration_learns_one_multiplicative_constant():
    X = np.column_stack([RTT_S, LOSS])
    truth = 0.6 * mathis_throughput_bps(1460.0, RTT_S, LOSS)
    model = FormulaThroughputRegressor(calibrate=True).fit(X, truth)
    assert model.scale_ == pytest.approx(0.6, rel=1e-12)
    np.testing.assert_allclose(model.predict(X), truth, rtol=1e-12)
    # geometric mean of the ratios 0.5 and 2 is 1
    y = mathis_throughput_bps(1460.0, RTT_S[:2], LOSS[:2]) * np.array([0.5, 2.0])
    assert FormulaThroughputRegressor(calibrate=True).fit(X[:2], y).scale_ == pytest.approx(1.0, rel=1e-12)
    assert FormulaThroughputRegressor().fit(X, truth).scale_ == 1.0  # calibrate=False learns nothing


@pytest.mark.parametrize(
    ("est", "X", "y", "match"),
    [
        (FormulaThroughputRegressor(), [[0.0, 0.01]], None, r"rtt_s \[s\] must be in \(0, inf\]; got 0"),
        (FormulaThroughputRegressor(), [[0.1, 1.5]], None, r"loss_rate \[-\] must be in \[0, 1\]; got 1.5"),
        (FormulaThroughputRegressor(model="padhye", t0_s=1.0), [[0.1, 1.0]], None,
         r"loss_rate \[-\] must be in \[0, 1\); got 1"),
        (FormulaThroughputRegressor(model="padhye"), [[0.1, 0.01]], None, "needs T0"),
        (FormulaThroughputRegressor(), [[0.1, 0.01, 1.0]], None, r"\(rtt_s, loss_rate\).*got 3 feature"),
        (FormulaThroughputRegressor(w_max_segments=10), [[0.1, 0.01, 1.0, 10.0]], None,
         "X has a t0_s column|X has a w_max_segments column"),
        (FormulaThroughputRegressor(), [[0.1, 0.01, -1.0, 10.0]], None, r"t0_s \[s\] must be in \[0, inf\]"),
        (FormulaThroughputRegressor(), [[0.1, 0.01, 1.0, 0.5]], None, r"w_max_segments \[segments\] must be in \[1"),
        (FormulaThroughputRegressor(model="reno"), [[0.1, 0.01]], None, "model must be one of"),
        (FormulaThroughputRegressor(model="padhye", c=1.2), [[0.1, 0.01]], None, "only applies to model='mathis'"),
        (FormulaThroughputRegressor(mss_bytes=0), [[0.1, 0.01]], None, r"mss_bytes \[bytes\] must be in \(0"),
        (FormulaThroughputRegressor(calibrate=True), [[0.1, 0.01]], None, "needs the measured throughput"),
        (FormulaThroughputRegressor(calibrate=True), [[0.1, 0.01]], [0.0], r"y \[bit/s\] must be in \(0"),
        (FormulaThroughputRegressor(calibrate=True, w_max_segments=5), [[0.1, 0.0]], [1e6], "loss_rate > 0"),
    ],
)
def test_out_of_domain_raises_naming_the_column(est, X, y, match):
    with pytest.raises(ValueError, match=match):
        est.fit(np.asarray(X, dtype=float), y)


def test_dataframe_columns_must_be_named_in_order():
    good = pd.DataFrame({"rtt_s": RTT_S, "loss_rate": LOSS})
    model = FormulaThroughputRegressor().fit(good)
    np.testing.assert_array_equal(model.predict(good), mathis_throughput_bps(1460.0, RTT_S, LOSS))
    with pytest.raises(ValueError, match=r"columns must be \['rtt_s', 'loss_rate'\] in this order"):
        FormulaThroughputRegressor().fit(good[["loss_rate", "rtt_s"]])


def test_predict_checks_the_domain_too():
    model = FormulaThroughputRegressor().fit([[0.1, 0.01]])
    with pytest.raises(ValueError, match=r"rtt_s \[s\] must be in \(0, inf\]; got -0.1"):
        model.predict([[-0.1, 0.01]])
