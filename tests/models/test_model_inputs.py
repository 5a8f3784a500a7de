"""Model inputs checked at the door (issue 50, finding 5): each case of the battery, made small.

RenoFlow/CubicFlow took NaN, negative or string windows, beta=1.5, c=-1; reno_cubic_bottleneck(capacity_bps=inf)
returned 9.6e22 bit/s; hurst_exponent of an fGn series with one 1e308 sample returned H = 1.499 with only a
numpy warning; mathis_throughput_bps(10**400, ...) raised OverflowError.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from tcpmodels._arrays import broadcast, check_flag, check_scalar
from tcpmodels.models.bottleneck import reno_cubic_bottleneck
from tcpmodels.models.fairness import jain_index
from tcpmodels.models.heavytail import fgn, pareto_mean
from tcpmodels.models.hurst import hurst_exponent
from tcpmodels.models.throughput import mathis_throughput_bps, padhye_throughput_bps
from tcpmodels.models.window_dynamics import CubicFlow, RenoFlow

CUBIC = dict(c=0.4, beta=0.7, k_factor=1.0, fast_convergence=True)


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(cwnd=math.nan, ssthresh=10.0, max_cwnd=100.0), ValueError, r"cwnd \[segments\] must be a number, not NaN"),
    (dict(cwnd=-5.0, ssthresh=10.0, max_cwnd=100.0), ValueError, r"cwnd \[segments\] must be in \(0, inf\); got -5"),
    (dict(cwnd="10", ssthresh=10.0, max_cwnd=100.0), TypeError, r"cwnd \[segments\] must be a single number; got '10'"),
    (dict(cwnd=math.inf, ssthresh=10.0, max_cwnd=100.0), ValueError, r"cwnd \[segments\] must be in \(0, inf\)"),
    (dict(cwnd=10.0, ssthresh=0.0, max_cwnd=100.0), ValueError, r"ssthresh \[segments\] must be in \(0, inf\]"),
    (dict(cwnd=10.0, ssthresh=10.0, max_cwnd=-1.0), ValueError, r"max_cwnd \[segments\] must be in \(0, inf\]"),
])
def test_fluid_flows_check_their_windows(kwargs, error, match):
    for cls, extra in ((RenoFlow, {}), (CubicFlow, CUBIC)):
        with pytest.raises(error, match=match):
            cls(**kwargs, **extra)


@pytest.mark.parametrize("extra, error, match", [
    (dict(beta=1.5), ValueError, r"beta \[-\] must be in \(0, 1\); got 1.5"),
    (dict(c=-1.0), ValueError, r"c \[segments/s\^3\] must be in \(0, inf\); got -1"),
    (dict(k_factor=math.nan), ValueError, r"k_factor \[-\] must be a number, not NaN"),
    (dict(fast_convergence="no"), TypeError, r"fast_convergence must be True or False; got 'no'"),
    (dict(w_max=-3.0), ValueError, r"w_max \[segments\] must be in \(0, inf\)"),
])
def test_cubic_flow_checks_its_constants(extra, error, match):
    with pytest.raises(error, match=match):
        CubicFlow(10.0, math.inf, 100.0, **{**CUBIC, **extra})


def test_valid_flows_still_run():
    flow = CubicFlow(10.0, math.inf, 100.0, **CUBIC)
    for i in range(100):
        flow.advance(i * 0.01, 0.01, 0.05)
    assert 10.0 < flow.cwnd <= 100.0


@pytest.mark.parametrize("kwargs, match", [
    (dict(capacity_bps=math.inf), r"capacity_bps \[bit/s\] must be in \[1, 1e\+15\]; got inf"),
    (dict(capacity_bps=1e-300), r"capacity_bps \[bit/s\] must be in \[1, 1e\+15\]"),
    (dict(buffer_bytes=math.inf), r"buffer_bytes \[bytes\] must be in \[0, 1e\+15\]; got inf"),
    (dict(c=math.inf), r"c \[segments/s\^3\] must be in \(0, inf\); got inf"),
])
def test_bottleneck_refuses_infinite_links_and_buffers(kwargs, match):
    base = dict(capacity_bps=1e7, buffer_bytes=5e4, reno_rtt_s=0.02, cubic_rtt_s=0.04, duration_s=2.0, warmup_s=0.5)
    with pytest.raises(ValueError, match=match):
        reno_cubic_bottleneck(**{**base, **kwargs})
    with pytest.raises(TypeError, match="fast_convergence must be True or False"):
        reno_cubic_bottleneck(**base, fast_convergence="yes")


def test_hurst_refuses_a_sample_whose_square_overflows():
    x = fgn(4096, 0.7, np.random.default_rng(0))
    x[100] = 1e308
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no numpy overflow warning on the way to the error
        with pytest.raises(ValueError, match=r"x must be at most 2.44e\+146 in magnitude here .* got 1e\+308 at "
                                             r"index 100"):
            hurst_exponent(x)
        big = fgn(4096, 0.7, np.random.default_rng(0)) * 1e140  # large but summable: the same estimate
        assert hurst_exponent(big).hurst == pytest.approx(hurst_exponent(big / 1e140).hurst, abs=1e-6)


def test_integers_no_float_holds_are_named():
    with pytest.raises(ValueError, match=r"mss_bytes must be a number a 64-bit float holds .* an integer of 401 "
                                         r"digits"):
        mathis_throughput_bps(10**400, 0.1, 0.01)
    with pytest.raises(ValueError, match=r"rtt_s \[s\] must be a number a 64-bit float holds"):
        check_scalar("rtt_s", -(10**400), "s")


def test_strings_and_booleans_are_not_numbers():
    with pytest.raises(TypeError, match=r"loss_rate must be numeric .* got '0.01'"):
        mathis_throughput_bps(1460, 0.1, "0.01")
    with pytest.raises(TypeError, match=r"rtt_s must be numeric .* not a boolean; got True"):
        mathis_throughput_bps(1460, True, 0.01)
    with pytest.raises(TypeError, match=r"rtt_s must be numeric .* not a boolean"):
        broadcast(rtt_s=np.array([True, False]))
    with pytest.raises(TypeError, match=r"dt_s \[s\] must be a single number; got '0.1'"):
        check_scalar("dt_s", "0.1", "s")
    assert check_flag("x", np.bool_(True)) is True


def test_results_that_overflow_are_errors_not_infinities():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=r"mathis_throughput_bps: the result is inf for finite inputs "
                                             r"\(mss_bytes=1e\+308, rtt_s=0.1, loss_rate=0.01, b=1\)"):
            mathis_throughput_bps(1e308, 0.1, 0.01)
        with pytest.raises(ValueError, match=r"at index 1 \(mss_bytes=1e\+308"):
            mathis_throughput_bps([1460, 1e308], 0.1, 0.01)
        # an infinite input that means something still gives its answer: no receive-window limit
        assert math.isfinite(padhye_throughput_bps(1460, 0.1, 0.01, 0.4, math.inf))
        assert math.isnan(mathis_throughput_bps(1460, math.nan, 0.01))  # NaN propagates, as documented
        assert pareto_mean(1.0, 0.5) == math.inf  # documented: the mean does not exist
        with pytest.raises(ValueError, match="pareto_mean: the mean overflows"):
            pareto_mean(1e308, 1.5)
        assert jain_index(1e308, 1e308) == 1.0 and jain_index(1e308, 0.0) == 0.5  # no square overflows
