"""Mathis C fit, loss exponent, predictions, regimes and error tables on data with known answers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tcpmodels.fit.throughput import (
    MODELS,
    REGIMES,
    add_predictions,
    classify_regime,
    error_table,
    fit_loss_exponent,
    fit_mathis_c,
)
from tcpmodels.models.throughput import mathis_throughput_bps, padhye_throughput_bps


def _synthetic(c=1.1, n=400, sd=0.15, seed=3):
    rng = np.random.default_rng(seed)
    p = 10 ** rng.uniform(-4, -1.5, n)
    rtt = rng.uniform(0.005, 0.2, n)
    rate = mathis_throughput_bps(1448, rtt, p, c=c) * np.exp(rng.normal(0, sd, n))
    return rate, rtt, p


def test_mathis_c_recovered_with_a_covering_interval():
    rate, rtt, p = _synthetic(c=1.1)
    fit = fit_mathis_c(rate, 1448, rtt, p)
    assert fit.ci[0] < 1.1 < fit.ci[1]
    assert fit.c == pytest.approx(1.1, rel=0.03)
    assert fit.log_residual_sd == pytest.approx(0.15, rel=0.15)
    # interval width ~ 2 * 1.96 * sd / sqrt(n) on the log scale
    assert np.log(fit.ci[1] / fit.ci[0]) == pytest.approx(2 * 1.966 * 0.15 / np.sqrt(400), rel=0.15)
    wide = fit.confidence_interval(0.99)
    assert wide[0] < fit.ci[0] and wide[1] > fit.ci[1]
    assert fit.c_se == pytest.approx(fit.c * 0.15 / np.sqrt(400), rel=0.15)


def test_exact_data_give_c_exactly():
    p = np.array([1e-3, 1e-2, 3e-2])
    rate = mathis_throughput_bps(1448, 0.05, p)  # C = sqrt(3/2)
    fit = fit_mathis_c(rate, 1448, 0.05, p)
    assert fit.c == pytest.approx(np.sqrt(1.5), rel=1e-12)
    ex = fit_loss_exponent(rate, 1448, 0.05, p)
    assert ex.exponent == pytest.approx(-0.5, abs=1e-9) and ex.c_at_fit == pytest.approx(np.sqrt(1.5))


def test_loss_exponent_recovers_minus_one_half_and_detects_another():
    rate, rtt, p = _synthetic()
    ex = fit_loss_exponent(rate, 1448, rtt, p)
    assert ex.exponent_ci[0] < -0.5 < ex.exponent_ci[1]
    # a CUBIC-like law W ~ p^-3/4 is told apart
    rate34 = 1448 * 8 / rtt * 0.5 * p ** -0.75
    ex34 = fit_loss_exponent(rate34, 1448, rtt, p)
    assert ex34.exponent == pytest.approx(-0.75)


def test_bad_input():
    with pytest.raises(ValueError, match=r"loss_rate \[-\] must be in \(0, 1\]"):
        fit_mathis_c([1e6, 1e6], 1448, 0.1, [0.0, 0.01])
    with pytest.raises(ValueError, match="at least two flows"):
        fit_mathis_c([1e6], 1448, 0.1, 0.01)
    with pytest.raises(ValueError, match="at least three flows"):
        fit_loss_exponent([1e6, 2e6], 1448, 0.1, [0.01, 0.02])


def _flows():
    base = dict(mss_bytes=1448.0, b=2.0, t0_s=np.nan, t0_fallback_s=0.25, w_max_segments=1000.0, capacity_bps=19e6)
    rows = [
        dict(name="ca", loss_event_rate=1e-3, rtt_mean_s=0.05, flight_mean_segments=30, loss_events=20, timeouts=0,
             throughput_bps=8e6),
        dict(name="noloss", loss_event_rate=0.0, rtt_mean_s=0.05, flight_mean_segments=30, loss_events=0, timeouts=0,
             throughput_bps=8e6),
        dict(name="rwnd", loss_event_rate=1e-3, rtt_mean_s=0.1, flight_mean_segments=28, loss_events=3, timeouts=0,
             throughput_bps=3.3e6, w_max_segments=30.0),
        dict(name="to", loss_event_rate=0.03, rtt_mean_s=0.2, flight_mean_segments=5, loss_events=10, timeouts=4,
             throughput_bps=2e5, t0_s=0.45),
        dict(name="small", loss_event_rate=0.02, rtt_mean_s=0.02, flight_mean_segments=6, loss_events=50, timeouts=0,
             throughput_bps=3e6),
        dict(name="link", loss_event_rate=2e-4, rtt_mean_s=0.05, flight_mean_segments=90, loss_events=5, timeouts=0,
             throughput_bps=18.5e6),
        dict(name="few", loss_event_rate=5e-5, rtt_mean_s=0.2, flight_mean_segments=300, loss_events=2, timeouts=0,
             throughput_bps=17e6),
    ]
    return pd.DataFrame([{**base, **r} for r in rows]).set_index("name")


def test_regimes():
    f = _flows()
    reg = classify_regime(f)
    assert reg.to_dict() == {"ca": "congestion avoidance", "noloss": "no loss", "rwnd": "window-limited",
                             "to": "timeouts", "small": "small window", "link": "link-limited",
                             "few": "few loss events"}
    assert list(reg.cat.categories) == list(REGIMES)


def test_predictions_use_each_flows_inputs():
    f = add_predictions(_flows())
    assert set(MODELS) <= set(f.columns)
    r = f.loc["ca"]
    assert r["mathis_bps"] == pytest.approx(mathis_throughput_bps(1448, 0.05, 1e-3))
    assert r["mathis_b_bps"] == pytest.approx(mathis_throughput_bps(1448, 0.05, 1e-3, b=2))
    assert r["t0_used_s"] == 0.25  # no observed timeout: the Linux floor
    assert r["pftk_bps"] == pytest.approx(padhye_throughput_bps(1448, 0.05, 1e-3, 0.25, 1000.0, b=2))
    assert f.loc["to", "t0_used_s"] == 0.45
    assert np.isnan(f.loc["noloss", "mathis_bps"])  # no p, no prediction
    # PFTK respects the receiver window; Mathis does not
    assert f.loc["rwnd", "pftk_bps"] <= f.loc["rwnd", "window_ceiling_bps"] * 1.0001
    assert f.loc["rwnd", "mathis_bps"] > f.loc["rwnd", "window_ceiling_bps"]
    assert r["ratio_mathis_bps"] == pytest.approx(r["mathis_bps"] / 8e6)


def test_error_table():
    f = add_predictions(_flows())
    f["regime"] = classify_regime(f)
    f["cc"] = "reno"
    tab = error_table(f, models=["mathis_bps", "pftk_bps"])
    row = tab[(tab["regime"] == "congestion avoidance") & (tab["model"] == "mathis_bps")].iloc[0]
    ratio = f.loc["ca", "mathis_bps"] / 8e6
    assert row["n"] == 1 and row["median_ratio"] == pytest.approx(ratio)
    assert row["median_abs_error"] == pytest.approx(abs(ratio - 1))
    assert "no loss" not in set(tab["regime"])  # no predictions there
