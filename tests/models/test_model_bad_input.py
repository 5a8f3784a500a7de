"""Bad input to the formula models: an error that names the parameter, never a numpy or pandas traceback."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tcpmodels.models.bottleneck import reno_cubic_bottleneck
from tcpmodels.models.cubic import PowerLawX
from tcpmodels.models.heavytail import Pareto, fgn, onoff_aggregate_rate
from tcpmodels.models.throughput import mathis_throughput_bps
from tcpmodels.models.window_dynamics import cubic_window_trajectory


def test_none_is_an_error_not_nan():
    with pytest.raises(TypeError, match=r"loss_rate must be numeric .* got None \(use float\('nan'\)"):
        mathis_throughput_bps(1460, 0.1, None)
    with pytest.raises(TypeError, match=r"rtt_s must be numeric .* got None inside list"):
        mathis_throughput_bps(1460, [0.1, None], 0.01)
    # a missing value that says so is NaN and propagates, as documented
    assert np.isnan(mathis_throughput_bps(1460, [0.1, np.nan], 0.01)[1])


@pytest.mark.parametrize("make", [
    lambda s: Pareto(scale=s, alpha=1.5),
    lambda s: fgn(64, s, np.random.default_rng(0)),
    lambda s: onoff_aggregate_rate(n_sources=2, alpha_on=s, alpha_off=1.5, mean_on_s=1.0, mean_off_s=1.0,
                                   bin_s=0.1, n_bins=10, rng=np.random.default_rng(0)),
], ids=["Pareto", "fgn", "onoff_aggregate_rate"])
def test_a_series_where_one_number_is_expected_is_named(make):
    with pytest.raises(TypeError, match=r"must be a single number; got 0 "):
        make(pd.Series([0.5, 0.6]))


def test_onoff_horizon_beyond_memory_is_refused_before_drawing():
    with pytest.raises(ValueError, match=r"holds about .* periods .* at most 2e\+08 fit in memory"):
        onoff_aggregate_rate(n_sources=2, alpha_on=1.5, alpha_off=1.5, mean_on_s=1.0, mean_off_s=1.0,
                             bin_s=1e308, n_bins=10, rng=np.random.default_rng(0))


def test_pareto_keeps_floats():
    p = Pareto(scale=np.float32(2.0), alpha=3)
    assert type(p.scale) is float and type(p.alpha) is float and p.mean == pytest.approx(3.0)


@pytest.mark.parametrize("call, message", [
    (lambda: cubic_window_trajectory(rtt_s=1e308, duration_s=10, w_max_segments=100, loss_interval_s=5),
     r"rtt_s \[s\] must be in \(0, 3600\]; got 1e\+308"),
    (lambda: cubic_window_trajectory(rtt_s=0.1, duration_s=10, w_max_segments=100, loss_interval_s=5, dt_s=1e308),
     r"dt_s \[s\] must be in \(0, 0.1\]"),
    (lambda: reno_cubic_bottleneck(capacity_bps=1e7, buffer_bytes=1e5, reno_rtt_s=0.01, cubic_rtt_s=1e308),
     r"cubic_rtt_s \[s\] must be in \(0, 3600\]"),
    (lambda: reno_cubic_bottleneck(capacity_bps=1e7, buffer_bytes=1e5, reno_rtt_s=0.01, cubic_rtt_s=0.02,
                                   mss_bytes=1e308), r"mss_bytes \[bytes\] must be in \(0, 65535\]"),
    (lambda: reno_cubic_bottleneck(capacity_bps=1e7, buffer_bytes=1e5, reno_rtt_s=0.01, cubic_rtt_s=0.02,
                                   duration_s=2, warmup_s=0.5, trace_interval_s=1e308),
     r"trace_interval_s \[s\] must be in \(0, 2\]"),
    (lambda: PowerLawX(rtt1_s=pd.Series([0.001, 0.002]), x1=10, rtt2_s=1, x2=1), r"rtt1_s \[s\] must be a single number"),
], ids=["trajectory-rtt", "trajectory-dt", "bottleneck-rtt", "bottleneck-mss", "bottleneck-trace", "PowerLawX"])
def test_huge_or_array_inputs_to_the_window_models_are_named(call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        call()
