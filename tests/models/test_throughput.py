"""Mathis, PFTK (full and approximate) and window-limited throughput.

Reference values: RFC 8312 Tables 1 and 3 and the RFC 3649 example (Mathis with
C = 1.2), the RFC 5348 TFRC equation (independent formula for the PFTK
approximation), hand arithmetic, and an independent scalar re-implementation of
PFTK eq. (31) with the ``math`` module.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcpmodels.models.throughput import (
    mathis_loss_rate,
    mathis_throughput_bps,
    padhye_approx_throughput_bps,
    padhye_throughput_bps,
    window_limited_throughput_bps,
)

PUBLISHED = Path(__file__).resolve().parents[1] / "data" / "published"
PROPERTY = settings(derandomize=True, deadline=None, max_examples=60)

loss = st.floats(1e-7, 0.5)
rtt = st.floats(1e-4, 2.0)
mss = st.floats(100.0, 9000.0)


# --- published and hand-computed values -------------------------------------------------------

def test_mathis_hand_value():
    # 1460 B * 8 / 0.1 s = 116,800 bit/s per segment per RTT; sqrt(3/2) / sqrt(0.01) = 12.2474487...
    assert mathis_throughput_bps(1460, 0.1, 0.01) == pytest.approx(116_800 * 12.247448713915890, rel=1e-12)
    assert mathis_throughput_bps(1460, 0.1, 0.01) == pytest.approx(1_430_502.0098, rel=1e-10)
    # b = 2: C = sqrt(3/4) = 0.8660254...
    assert mathis_throughput_bps(1460, 0.1, 0.01, b=2) == pytest.approx(116_800 * 8.660254037844386, rel=1e-12)
    # C overridden: 116,800 * 1.2 / 0.1
    assert mathis_throughput_bps(1460, 0.1, 0.01, c=1.2) == pytest.approx(1_401_600.0, rel=1e-12)


@pytest.mark.parametrize("row", pd.read_csv(PUBLISHED / "rfc8312_tcp_response.csv").to_dict("records"))
def test_mathis_window_matches_rfc8312_table1(row):
    # Average window = B * RTT / MSS; RFC 3649/8312 use C = 1.2. Printed as integers: +-0.5.
    rate = mathis_throughput_bps(1500, 0.1, row["loss_rate"], c=1.2)
    window = rate * 0.1 / (1500 * 8)
    assert abs(window - row["window_segments"]) <= 0.5, row["source"]


@pytest.mark.parametrize("row", pd.read_csv(PUBLISHED / "rfc8312_tcp_loss_for_rate.csv").to_dict("records"))
def test_mathis_loss_rate_matches_rfc8312_table3(row):
    p = mathis_loss_rate(row["rate_bps"], row["packet_bytes"], row["rtt_s"], c=1.2)
    window = row["rate_bps"] * row["rtt_s"] / (row["packet_bytes"] * 8)
    assert abs(window - row["window_segments"]) <= 0.05
    # The RFC prints 2.0e-x where 1.44 / W^2 = 2.07e-x (it truncates): 5 % tolerance for that.
    assert p == pytest.approx(row["loss_rate"], rel=0.05), row["source"]
    # and the inverse is exact
    assert mathis_throughput_bps(row["packet_bytes"], row["rtt_s"], p, c=1.2) == pytest.approx(row["rate_bps"], rel=1e-12)


def test_rfc3649_ten_gigabit_example():
    # RFC 3649 Sec. 1: 10 Gbit/s, 1500-byte packets, 100 ms -> 83,333 segments, one loss per 5e9 packets.
    p = mathis_loss_rate(10e9, 1500, 0.1, c=1.2)
    assert 10e9 * 0.1 / (1500 * 8) == pytest.approx(83_333, abs=0.5)
    assert 1 / p == pytest.approx(5e9, abs=0.5e9)  # printed with one significant digit


def test_rfc8312_rate_example():
    # RFC 8312 Sec. 5.1: RTT 0.01 s, p = 1e-6, W = 1200 packets of 1500 B -> 1.44 Gbps.
    assert mathis_throughput_bps(1500, 0.01, 1e-6, c=1.2) == pytest.approx(1.44e9, rel=0.0035)
    assert window_limited_throughput_bps(1200 * 1500, 0.01) == pytest.approx(1.44e9, rel=1e-12)


def _rfc5348_bytes_per_s(s, rtt, p, t_rto, b):
    """RFC 5348 Sec. 3.1, written out independently: X = s / (R sqrt(2bp/3) + t_RTO 3 sqrt(3bp/8) p (1 + 32 p^2))."""
    return s / (rtt * math.sqrt(2 * b * p / 3) + t_rto * (3 * math.sqrt(3 * b * p / 8) * p * (1 + 32 * p**2)))


# RFC 5348 has no min(1, .), so the two coincide where 3 sqrt(3bp/8) <= 1 (p <= 8/(27b)).
_COINCIDE = [(p, b) for p in (1e-6, 1e-4, 1e-3, 0.01, 0.05, 0.1, 0.2) for b in (1, 2) if 27 * b * p <= 8]


@pytest.mark.parametrize("p, b", _COINCIDE)
def test_padhye_approx_equals_rfc5348(p, b):
    # RFC 5348 recommends t_RTO = 4 R and b = 1.
    rtt_s, s = 0.08, 1460
    ours = padhye_approx_throughput_bps(s, rtt_s, p, 4 * rtt_s, np.inf, b=b)
    assert ours == pytest.approx(8 * _rfc5348_bytes_per_s(s, rtt_s, p, 4 * rtt_s, b), rel=1e-12)


def test_padhye_approx_caps_timeout_term_where_rfc5348_does_not():
    # p = 0.2, b = 2: 3 sqrt(3bp/8) = 1.16 > 1, so PFTK's min(1, .) makes its rate higher.
    ours = padhye_approx_throughput_bps(1460, 0.08, 0.2, 0.32, np.inf, b=2)
    assert ours > 8 * _rfc5348_bytes_per_s(1460, 0.08, 0.2, 0.32, 2) * 1.05


def _pftk_full_reference(rtt, p, t0, w_max, b):
    """PFTK ToN 2000 eq. (31) with eqs. (13), (24), (28), plain scalar arithmetic (segments/s)."""
    q = 1 - p
    ew = (2 + b) / (3 * b) + math.sqrt(8 * q / (3 * b * p) + ((2 + b) / (3 * b)) ** 2)

    def qhat(w):
        return min(1.0, (1 - q**3) * (1 + q**3 * (1 - q ** (w - 3))) / (1 - q**w))

    f = 1 + p + 2 * p**2 + 4 * p**3 + 8 * p**4 + 16 * p**5 + 32 * p**6
    if ew < w_max:
        return (q / p + ew + qhat(ew) / q) / (rtt * (b / 2 * ew + 1) + qhat(ew) * t0 * f / q)
    return (q / p + w_max + qhat(w_max) / q) / (rtt * (b / 8 * w_max + q / (p * w_max) + 2) + qhat(w_max) * t0 * f / q)


@pytest.mark.parametrize("p", [1e-4, 1e-3, 0.01, 0.05, 0.2, 0.5])
@pytest.mark.parametrize("w_max", [6.0, 20.0, 64.0, math.inf])
@pytest.mark.parametrize("b", [1, 2])
def test_padhye_full_matches_independent_reference(p, w_max, b):
    ours = padhye_throughput_bps(1000, 0.2, p, 1.0, w_max, b=b)
    assert ours == pytest.approx(8000 * _pftk_full_reference(0.2, p, 1.0, w_max, b), rel=1e-9)


def test_padhye_full_and_approx_agree_without_window_limit_at_low_loss():
    # Without a window limit and for p <= 0.02 the closed form tracks the full model
    # within 3 % (measured: 2.6 % at most) for T0 from 1 to 10 RTTs; at p = 0.05 and
    # T0 = 10 RTT the gap is already 6 %.
    p = np.geomspace(1e-6, 0.02, 200)
    for t0 in (0.1, 0.2, 0.4, 1.0):
        full = padhye_throughput_bps(1460, 0.1, p, t0, np.inf)
        approx = padhye_approx_throughput_bps(1460, 0.1, p, t0, np.inf)
        assert np.max(np.abs(approx / full - 1)) < 0.03


def test_padhye_full_and_approx_diverge_at_high_loss():
    # At p = 0.2 the timeout terms differ: the approximation is >25 % lower. A test that the
    # models are not trivially the same.
    full = padhye_throughput_bps(1460, 0.1, 0.2, 0.4, np.inf)
    approx = padhye_approx_throughput_bps(1460, 0.1, 0.2, 0.4, np.inf)
    assert approx / full < 0.75


def test_padhye_tends_to_window_over_rtt_at_vanishing_loss():
    rate = padhye_throughput_bps(1, 0.1, 1e-10, 0.4, 10.0)
    assert rate / 8 == pytest.approx(10 / 0.1, rel=1e-6)


def test_padhye_full_branch_jump_for_b1_is_as_documented():
    # PFTK eq. (31) is discontinuous at E[W_u] = W_max unless b = 2: for b = 1, W_max = 10 the
    # rate rises by ~3.2 % as p crosses the switch at p* = 1/31 (where E[W_u] = 10).
    p_star = 1 / 31
    before = padhye_throughput_bps(1, 0.1, p_star * (1 - 1e-9), 0.4, 10.0, b=1)
    after = padhye_throughput_bps(1, 0.1, p_star * (1 + 1e-9), 0.4, 10.0, b=1)
    assert 0.030 < after / before - 1 < 0.035
    before2 = padhye_throughput_bps(1, 0.1, 1 / 66 * (1 - 1e-9), 0.4, 10.0, b=2)
    after2 = padhye_throughput_bps(1, 0.1, 1 / 66 * (1 + 1e-9), 0.4, 10.0, b=2)
    assert after2 / before2 - 1 == pytest.approx(0.0, abs=1e-6)


# --- properties -------------------------------------------------------------------------------

@PROPERTY
@given(mss=mss, rtt=rtt, p=loss, k=st.floats(0.1, 10.0))
def test_mathis_inverse_in_rtt_and_sqrt_p(mss, rtt, p, k):
    base = mathis_throughput_bps(mss, rtt, p)
    assert mathis_throughput_bps(mss, rtt * k, p) == pytest.approx(base / k, rel=1e-12)
    if p * k <= 1:
        assert mathis_throughput_bps(mss, rtt, p * k) == pytest.approx(base / math.sqrt(k), rel=1e-12)


def test_padhye_full_can_exceed_window_over_rtt_when_t0_below_rtt():
    # Documented limitation of eq. (31): packets sent during timeouts cost T0, so with
    # T0 = 0, W_max = 1, p = 0.5, b = 1 the formula gives 10.24 bit/s per byte of MSS > 8 / RTT.
    assert padhye_throughput_bps(1, 1.0, 0.5, 0.0, 1.0, b=1) == pytest.approx(10.24, rel=1e-12)


@PROPERTY
@given(rtt=rtt, p=loss, t0_rtts=st.floats(1.0, 20.0), w=st.floats(1.0, 1e5), b=st.sampled_from([1, 2, 3]))
def test_padhye_never_above_window_over_rtt(rtt, p, t0_rtts, w, b):
    # T0 >= RTT as for any real retransmission timer (RFC 6298 RTO = SRTT + 4 RTTVAR).
    ceiling = w / rtt * 8
    assert padhye_throughput_bps(1, rtt, p, t0_rtts * rtt, w, b=b) <= ceiling * (1 + 1e-12)
    assert padhye_approx_throughput_bps(1, rtt, p, t0_rtts * rtt, w, b=b) <= ceiling * (1 + 1e-12)


@PROPERTY
@given(rtt=rtt, p1=loss, p2=loss, t0_rtts=st.floats(1.0, 20.0), w=st.one_of(st.floats(4.0, 1e4), st.just(math.inf)))
def test_padhye_non_increasing_in_p(rtt, p1, p2, t0_rtts, w):
    lo, hi = sorted((p1, p2))
    # b = 2 (the paper's case): both models are continuous and fall as p rises.
    full = padhye_throughput_bps(1, rtt, [lo, hi], t0_rtts * rtt, w, b=2)
    approx = padhye_approx_throughput_bps(1, rtt, [lo, hi], t0_rtts * rtt, w, b=2)
    assert full[1] <= full[0] * (1 + 1e-9)
    assert approx[1] <= approx[0] * (1 + 1e-12)


@PROPERTY
@given(window=st.floats(0.0, 1e10), rtt=rtt, k=st.floats(0.1, 10.0))
def test_window_limited_linear(window, rtt, k):
    rate = window_limited_throughput_bps(window, rtt)
    assert rate == pytest.approx(8 * window / rtt, rel=1e-12)
    assert window_limited_throughput_bps(window * k, rtt) == pytest.approx(rate * k, rel=1e-12)


FUNCTIONS = {
    "mathis": lambda m, r, p: mathis_throughput_bps(m, r, p),
    "mathis_loss": lambda m, r, p: mathis_loss_rate(p * 1e9, m, r),
    "padhye": lambda m, r, p: padhye_throughput_bps(m, r, p, 4 * r, 50.0),
    "padhye_approx": lambda m, r, p: padhye_approx_throughput_bps(m, r, p, 4 * r, 50.0),
    "window": lambda m, r, p: window_limited_throughput_bps(m * p * 1e3, r),
}


@pytest.mark.parametrize("name", FUNCTIONS)
def test_scalar_array_series_agree(name):
    fn = FUNCTIONS[name]
    m = np.array([536.0, 1460.0, 8948.0])
    r = np.array([0.001, 0.05, 0.3])
    p = np.array([1e-5, 1e-3, 0.1])
    scalars = [fn(float(a), float(b), float(c)) for a, b, c in zip(m, r, p)]
    assert all(isinstance(x, float) for x in scalars)
    array = fn(m, r, p)
    assert isinstance(array, np.ndarray) and array.shape == (3,)
    index = pd.Index(["a", "b", "c"], name="flow")
    series = fn(pd.Series(m, index=index), r, pd.Series(p, index=index))
    assert isinstance(series, pd.Series) and series.index.equals(index)
    np.testing.assert_allclose(array, scalars, rtol=1e-14)
    np.testing.assert_allclose(series.to_numpy(), scalars, rtol=1e-14)


# --- errors and NaN -----------------------------------------------------------------------------

@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: mathis_throughput_bps(1460, 0.1, 0), r"loss_rate \[-\] must be in \(0, 1\]; got 0"),
        (lambda: mathis_throughput_bps(1460, 0.1, 1.5), r"loss_rate \[-\] must be in \(0, 1\]; got 1.5"),
        (lambda: mathis_throughput_bps(1460, -0.1, 0.01), r"rtt_s \[s\] must be in \(0, inf\]; got -0.1"),
        (lambda: mathis_throughput_bps(0, 0.1, 0.01), r"mss_bytes \[bytes\] must be in \(0, inf\]; got 0"),
        (lambda: mathis_throughput_bps(1460, 0.1, 0.01, b=0.5), r"b \[segments\] must be in \[1, inf\]; got 0.5"),
        (lambda: mathis_throughput_bps(1460, 0.1, 0.01, c=-1), r"c \[-\] must be in \(0, inf\]; got -1"),
        (lambda: mathis_loss_rate(0, 1460, 0.1), r"rate_bps \[bit/s\] must be in \(0, inf\]; got 0"),
        (lambda: padhye_throughput_bps(1460, 0.1, 1.0, 0.4, 10), r"loss_rate \[-\] must be in \(0, 1\); got 1"),
        (lambda: padhye_throughput_bps(1460, 0.1, 0.01, -1, 10), r"t0_s \[s\] must be in \[0, inf\]; got -1"),
        (lambda: padhye_throughput_bps(1460, 0.1, 0.01, 0.4, 0.5), r"w_max_segments \[segments\] must be in \[1, inf\]; got 0.5"),
        (lambda: padhye_approx_throughput_bps(1460, 0.1, 0, 0.4, 10), r"loss_rate \[-\] must be in \(0, 1\]; got 0"),
        (lambda: window_limited_throughput_bps(-5, 0.1), r"window_bytes \[bytes\] must be in \[0, inf\]; got -5"),
        (lambda: window_limited_throughput_bps(5, 0), r"rtt_s \[s\] must be in \(0, inf\]; got 0"),
    ],
)
def test_out_of_domain_raises_clear_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_error_names_first_bad_element_of_array():
    with pytest.raises(ValueError, match=r"loss_rate \[-\] must be in \(0, 1\]; got -0.2 \(2 values out of range\)"):
        mathis_throughput_bps(1460, 0.1, [0.01, -0.2, 2.0])


def test_padhye_approx_accepts_p_equal_one():
    assert np.isfinite(padhye_approx_throughput_bps(1460, 0.1, 1.0, 0.4, 10))


@pytest.mark.parametrize("name", FUNCTIONS)
def test_nan_propagates(name):
    fn = FUNCTIONS[name]
    out = fn(np.array([1460.0, np.nan, 1460.0]), np.array([0.1, 0.1, np.nan]), np.array([0.01, 0.01, 0.01]))
    assert np.isfinite(out[0]) and np.isnan(out[1]) and np.isnan(out[2])
    assert math.isnan(fn(1460.0, 0.1, float("nan")))


def test_padhye_nan_in_w_max_and_t0_propagates():
    out = padhye_throughput_bps(1460, 0.1, 0.01, [0.4, np.nan, 0.4], [10.0, 10.0, np.nan])
    assert np.isfinite(out[0]) and np.isnan(out[1:]).all()
