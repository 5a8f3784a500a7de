"""Bandwidth-delay product, largest advertisable window, window-scale shift, sizing table.

Reference values in tests/data/published/tcp_window_limits.csv (RFC 9293, RFC 7323,
RFC 8312, the University of Tokyo 2015 press release), plus exact integer arithmetic.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcpmodels.models import bdp
from tcpmodels.models.bdp import (
    bdp_bytes,
    max_window_bytes,
    max_window_ceiling_bps,
    min_wscale_shift,
    sizing_table,
    window_needed_bytes,
)
from tcpmodels.models.throughput import window_limited_throughput_bps

PUBLISHED = Path(__file__).resolve().parents[1] / "data" / "published"
PROPERTY = settings(derandomize=True, deadline=None, max_examples=60)

FUNCTIONS = {
    "max_window_bytes": lambda row: max_window_bytes(row["wscale_shift"]),
    "max_window_ceiling_bps": lambda row: max_window_ceiling_bps(row["wscale_shift"], row["rtt_s"]),
    "bdp_bytes": lambda row: bdp_bytes(row["rate_bps"], row["rtt_s"]),
    "window_limited_throughput_bps": lambda row: window_limited_throughput_bps(1200 * 1500, row["rtt_s"]),
}


@pytest.mark.parametrize("row", pd.read_csv(PUBLISHED / "tcp_window_limits.csv").to_dict("records"))
def test_published_values(row):
    ours = FUNCTIONS[row["quantity"]](row)
    assert ours == pytest.approx(row["value"], rel=row["rel_tol"], abs=0), row["source"]


def test_ceiling_at_296_ms_and_bdp_exact():
    # 65535 * 2^14 = 1,073,725,440 B; * 8 / 0.296 s = 29.0196 Gbit/s; 100e9 * 0.296 / 8 = 3.7e9 B.
    assert max_window_ceiling_bps(14, 0.296) == pytest.approx(1_073_725_440 * 8 / 0.296, rel=1e-15)
    assert max_window_ceiling_bps(14, 0.296) / 1e9 == pytest.approx(29.0196, abs=5e-5)
    assert bdp_bytes(100e9, 0.296) == pytest.approx(3.7e9, rel=1e-15)


def test_max_window_every_shift_is_exact():
    shifts = np.arange(15)
    assert np.array_equal(max_window_bytes(shifts), np.array([65535 * 2**int(s) for s in shifts], dtype=float))
    assert bdp.WSCALE_SHIFT_MAX == 14 and bdp.WINDOW_FIELD_MAX_BYTES == 65535


def test_ceiling_reuses_window_limited_rate():
    rtts = np.array([0.001, 0.05, 0.296, 1.0])
    for shift in (0, 7, 14):
        np.testing.assert_array_equal(
            max_window_ceiling_bps(shift, rtts), window_limited_throughput_bps(max_window_bytes(shift), rtts)
        )


@pytest.mark.parametrize(
    "shift, message",
    [
        (15, r"wscale_shift \[-\] must be in \[0, 14\]; got 15"),
        (-1, r"wscale_shift \[-\] must be in \[0, 14\]; got -1"),
        (2.5, r"wscale_shift \[-\] must be an integer in \[0, 14\]; got 2.5"),
    ],
)
def test_invalid_shift(shift, message):
    with pytest.raises(ValueError, match=message):
        max_window_bytes(shift)
    with pytest.raises(ValueError, match=message):
        max_window_ceiling_bps(shift, 0.1)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: bdp_bytes(-1, 0.1), r"rate_bps \[bit/s\] must be in \[0, inf\]; got -1"),
        (lambda: bdp_bytes(1e9, -0.1), r"rtt_s \[s\] must be in \[0, inf\]; got -0.1"),
        (lambda: max_window_ceiling_bps(14, 0), r"rtt_s \[s\] must be in \(0, inf\]; got 0"),
        (lambda: min_wscale_shift(-5, 0.1), r"rate_bps \[bit/s\] must be in \[0, inf\]; got -5"),
        (lambda: sizing_table([1e9], [0.0]), r"rtts_s \[s\] must be in \(0, inf\]; got 0"),
        (lambda: sizing_table([0.0], [0.1]), r"rates_bps \[bit/s\] must be in \(0, inf\]; got 0"),
    ],
)
def test_out_of_domain_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.parametrize(
    "need_bytes, shift",
    [
        (0, 0),
        (1, 0),
        (65_535, 0),
        (65_536, 1),
        (131_070, 1),
        (131_071, 2),
        (65_535 * 2**14, 14),
        (65_535 * 2**14 + 1, 15),
        (3.7e9, 16),  # 100 Gbit/s x 296 ms
    ],
)
def test_min_wscale_shift_boundaries(need_bytes, shift):
    # rate = 8 * bytes at RTT 1 s gives BDP = bytes exactly.
    assert min_wscale_shift(8.0 * need_bytes, 1.0) == shift


@PROPERTY
@given(need=st.floats(1.0, 1e13))
def test_min_wscale_shift_brackets_bdp(need):
    s = min_wscale_shift(8.0 * need, 1.0)
    assert s == int(s) and s >= 0
    assert 65_535 * 2.0**s >= need
    if s > 0:
        assert 65_535 * 2.0 ** (s - 1) < need


@PROPERTY
@given(rate=st.floats(0.0, 1e12), rtt=st.floats(0.0, 10.0), k=st.floats(0.1, 10.0))
def test_bdp_linear_and_window_needed_is_bdp(rate, rtt, k):
    base = bdp_bytes(rate, rtt)
    assert base == pytest.approx(rate * rtt / 8, rel=1e-12)
    assert bdp_bytes(rate * k, rtt) == pytest.approx(base * k, rel=1e-12)
    assert bdp_bytes(rate, rtt * k) == pytest.approx(base * k, rel=1e-12)
    assert window_needed_bytes(rate, rtt) == base


@PROPERTY
@given(rtt=st.floats(1e-5, 10.0), shift=st.integers(0, 14))
def test_window_at_ceiling_is_exactly_bdp(rtt, shift):
    # A connection at its ceiling has exactly its largest window in flight.
    assert bdp_bytes(max_window_ceiling_bps(shift, rtt), rtt) == pytest.approx(max_window_bytes(shift), rel=1e-12)


def test_scalar_array_series_agree():
    rates = np.array([1e9, 10e9, 100e9])
    rtts = np.array([0.001, 0.05, 0.296])
    index = pd.Index([3, 1, 2])
    for fn in (bdp_bytes, min_wscale_shift, window_needed_bytes):
        scalars = [fn(float(r), float(t)) for r, t in zip(rates, rtts)]
        assert all(isinstance(x, float) for x in scalars)
        np.testing.assert_array_equal(fn(rates, rtts), scalars)
        series = fn(pd.Series(rates, index=index), rtts)
        assert series.index.equals(index)
        np.testing.assert_array_equal(series.to_numpy(), scalars)
    shifts = pd.Series([0.0, 7.0, 14.0], index=index)
    assert max_window_bytes(shifts).index.equals(index)
    assert isinstance(max_window_bytes(14), float)


def test_nan_propagates():
    assert math.isnan(bdp_bytes(np.nan, 0.1))
    out = min_wscale_shift([1e9, np.nan], [0.1, 0.1])
    assert out[0] == 8 and np.isnan(out[1])  # 12.5e6 B: 65535 * 2^7 = 8.4e6 < 12.5e6 <= 65535 * 2^8 = 16.8e6
    w = max_window_bytes([14, np.nan])
    assert w[0] == 65535 * 2**14 and np.isnan(w[1])
    c = max_window_ceiling_bps(14, [0.1, np.nan])
    assert np.isfinite(c[0]) and np.isnan(c[1])


def test_sizing_table_shape_and_values():
    rates = [1e9, 10e9, 40e9, 100e9]
    rtts = [0.001, 0.01, 0.1, 0.296]
    table = sizing_table(rates, rtts)
    assert list(table.columns) == [
        "rate_bps", "rtt_s", "bdp_bytes", "min_wscale_shift", "wscale_sufficient",
        "max_window_bytes", "ceiling_bps", "achievable_fraction", "window_limited",
    ]
    assert len(table) == 16
    assert not table.duplicated(["rate_bps", "rtt_s"]).any()
    row = table[(table.rate_bps == 100e9) & (table.rtt_s == 0.296)].iloc[0]
    assert row.bdp_bytes == pytest.approx(3.7e9)
    assert row.min_wscale_shift == 16 and not row.wscale_sufficient
    assert row.ceiling_bps == pytest.approx(29.0196e9, rel=2e-6)
    assert row.achievable_fraction == pytest.approx(29.0196 / 100, rel=2e-6)
    assert row.window_limited
    small = table[(table.rate_bps == 1e9) & (table.rtt_s == 0.001)].iloc[0]
    assert small.bdp_bytes == 125_000 and small.min_wscale_shift == 1
    assert small.achievable_fraction == 1.0 and not small.window_limited
    # consistency: the window is limiting exactly when the BDP exceeds the largest window
    assert (table.window_limited == (table.bdp_bytes > table.max_window_bytes)).all()
    assert (table.wscale_sufficient == ~table.window_limited).all()


def test_sizing_table_without_window_scaling():
    table = sizing_table([10e6], [0.1], wscale_shift=0)
    # 65,535 B over 100 ms = 5.2428 Mbit/s, 52 % of 10 Mbit/s
    assert table.ceiling_bps.iloc[0] == pytest.approx(5.2428e6)
    assert table.achievable_fraction.iloc[0] == pytest.approx(0.52428)
