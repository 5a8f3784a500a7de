"""Bad input to the formula models: an error that names the parameter, never a numpy or pandas traceback."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tcpmodels.models.heavytail import Pareto, fgn, onoff_aggregate_rate
from tcpmodels.models.throughput import mathis_throughput_bps


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
