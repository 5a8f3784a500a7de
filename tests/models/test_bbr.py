"""Tests for tcpmodels.models.bbr: BBR v1 constants, Ware et al.'s model (IMC 2019), the standing queue.

Reference values: ``tests/data/published/bbr_v1_constants.csv`` (the kernel's tcp_bbr.c) and
``bbr_ware2019.csv`` (what the authors published in text: the simple model's p = 1/2, the median
errors). The paper's Figures 6-8 are not available here as numbers (the paper PDF was not found
in the stored sources), so the model curves are checked against independent computations: hand-worked
cases, a numerical solution of the in-flight-cap equation (8) for p, limits and monotonicity.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import brentq

from tcpmodels.models import bbr
from tcpmodels.models.bbr import (
    bbr_standing_queue_packets,
    queue_packets_for_bdp,
    rate_pps,
    ware_bbr_share,
    ware_inflight_cap_packets,
    ware_loss_based_share,
    ware_probe_rtt_time_s,
    ware_rtt_estimate_alone_s,
    ware_rtt_estimate_s,
    ware_simple_inflight_cap_packets,
)

DET = settings(derandomize=True, deadline=None, max_examples=80)
PUBLISHED = Path(__file__).resolve().parents[1] / "data" / "published"

# Fig. 8 (a) setting of the paper: 10 Mbit/s x 40 ms, 1500-byte packets
C_10 = 10e6 / (8 * 1500)          # 833.33 packets/s
L_40 = 0.040                      # BDP 33.33 packets


@pytest.mark.parametrize("row", pd.read_csv(PUBLISHED / "bbr_v1_constants.csv").to_dict("records"),
                         ids=lambda r: r["constant"])
def test_constants_are_the_kernels(row):
    ours = getattr(bbr, row["constant"])
    published = [float(v) for v in str(row["value"]).split()]
    if len(published) > 1:
        assert tuple(ours) == tuple(published)
    else:
        decimals = len(str(row["value"]).partition(".")[2])
        assert ours == pytest.approx(published[0], abs=0.5 * 10 ** -decimals)


def test_pacing_cycle_averages_to_one():
    # independent: the gain cycle neither builds nor drains a queue on average
    assert np.mean(bbr.BBR_PACING_GAIN_CYCLE) == pytest.approx(1.0)
    assert bbr.BBR_HIGH_GAIN * bbr.BBR_DRAIN_GAIN == pytest.approx(1.0)


def test_hand_worked_fig8a_point():
    # 10 Mbit/s x 40 ms, X = 64, N = 1, worked by hand:
    # q = 64 * 33.333 = 2133.33; p = 1/2 - 1/128 - 4/2133.33 = 0.5 - 0.0078125 - 0.001875 = 0.4903125
    # one ProbeRTT: q/c + 0.2 + l = 2.56 + 0.2 + 0.04 = 2.8 s; share = 0.5096875 * (1 - 0.28) = 0.366975
    q = queue_packets_for_bdp(64, C_10, L_40)
    assert q == pytest.approx(2133.333, abs=1e-3)
    assert ware_loss_based_share(C_10, L_40, q, 1) == pytest.approx(0.4903125, abs=1e-9)
    assert ware_probe_rtt_time_s(C_10, L_40, q, 400.0) == pytest.approx(2.8 * 40, abs=1e-9)
    assert ware_bbr_share(C_10, L_40, q, 1) == pytest.approx(0.366975, abs=1e-9)
    # eq. (7): RTT_est = (0.4903125 * 2133.33 + 4)/833.33 + 0.04 = (1046.0 + 4)/833.33 + 0.04 = 1.300 s
    assert ware_rtt_estimate_s(C_10, L_40, q, 1) == pytest.approx((1046.0 + 4) / C_10 + 0.04, abs=1e-6)


def test_hand_worked_small_buffer_bbr_takes_the_link():
    # X = 1: q = 33.33 < cl + 8N = 41.33, so p = 0 and only ProbeRTT costs BBR:
    # share = 1 - (0.04 + 0.2 + 0.04)/10 = 0.972
    q = queue_packets_for_bdp(1, C_10, L_40)
    assert ware_loss_based_share(C_10, L_40, q, 1) == 0.0
    assert ware_bbr_share(C_10, L_40, q, 1) == pytest.approx(0.972, abs=1e-12)


def test_p_is_zero_exactly_up_to_bdp_plus_8n():
    # from eq. (9): p <= 0  <=>  q <= c l + 8 N
    c, l_s, n = 1000.0, 0.05, 3
    edge = c * l_s + 8 * n          # 74 packets
    assert ware_loss_based_share(c, l_s, edge, n) == pytest.approx(0.0, abs=1e-12)
    assert ware_loss_based_share(c, l_s, edge - 1, n) == 0.0
    assert ware_loss_based_share(c, l_s, edge + 1, n) > 0.0


def test_simple_model_limit_is_the_published_half():
    published = pd.read_csv(PUBLISHED / "bbr_ware2019.csv").set_index("quantity")
    half = published.loc["simple_model_loss_based_share", "value"]
    # eq. (5): 2 q p (1 - p) = (1 - p) q has the roots p = 1/2 and p = 1 (BBR starved)
    roots = np.roots([-2.0, 3.0, -1.0])          # 2p - 2p^2 - 1 + p = 0
    assert sorted(roots) == pytest.approx([half, 1.0])
    assert ware_simple_inflight_cap_packets(1000.0, half) == pytest.approx((1 - half) * 1000.0)
    # the extended model tends to it as the buffer grows without bound (1 - 1/(2X) - 4N/q -> 1)
    p = ware_loss_based_share(C_10, L_40, queue_packets_for_bdp(np.array([1e3, 1e6]), C_10, L_40), 1)
    assert p[-1] == pytest.approx(half, abs=1e-5)
    assert p[0] < p[-1] < half


@DET
@given(c=st.floats(50.0, 1e5), l_s=st.floats(1e-3, 0.3), x=st.floats(0.1, 100.0), n=st.integers(1, 32))
def test_p_solves_the_inflight_cap_equation(c, l_s, x, n):
    # independent: solve eq. (8) = data in flight numerically for p, compare with the closed form (9)
    q = x * c * l_s
    p_closed = ware_loss_based_share(c, l_s, q, n)

    def excess(p):   # cap / (1 - p) minus in-flight / (1 - p)
        return 2.0 * c * ((p * q + 4 * n) / c + l_s) - (q + c * l_s)

    if excess(0.0) >= 0:        # the cap already covers BDP + queue at p = 0: BBR takes everything
        assert p_closed == 0.0
    else:
        assert p_closed == pytest.approx(brentq(excess, 0.0, 1.0, xtol=1e-14), abs=1e-9)
        cap = ware_inflight_cap_packets(c, l_s, q, n)
        assert cap == pytest.approx((1 - p_closed) * (q + c * l_s), rel=1e-9)


def test_monotone_in_buffer_and_in_bbr_flows():
    x = np.geomspace(0.5, 64, 40)
    q = queue_packets_for_bdp(x, C_10, L_40)
    p1 = ware_loss_based_share(C_10, L_40, q, 1)
    p8 = ware_loss_based_share(C_10, L_40, q, 8)
    assert np.all(np.diff(p1) >= 0) and np.all(np.diff(p8) >= 0)   # deeper buffer: loss-based flows keep more
    assert np.all(p8 <= p1) and np.all(p1 < 0.5)                   # more BBR flows: they take more
    n = np.arange(1, 33)
    p_n = ware_loss_based_share(C_10, L_40, queue_packets_for_bdp(16, C_10, L_40), n)
    assert np.all(np.diff(p_n) <= 0)


def test_probe_rtt_time_is_linear_in_the_queue():
    q = np.linspace(0, 3000, 7)
    t = ware_probe_rtt_time_s(C_10, L_40, q, 200.0)
    assert np.allclose(np.diff(t, 2), 0.0, atol=1e-12)
    # slope: d/10 seconds of ProbeRTT per q/c second of queue; intercept (0.2 + l) d/10
    assert (t[1] - t[0]) / (q[1] - q[0]) == pytest.approx(20.0 / C_10)
    assert t[0] == pytest.approx((0.2 + 0.04) * 20.0)


def test_rtt_estimate_alone_eq6():
    # 4N <= c l: ProbeRTT drains the queue, RTT_est = l; above: 4N/c
    assert ware_rtt_estimate_alone_s(C_10, L_40, 8) == L_40           # 32 <= 33.3
    assert ware_rtt_estimate_alone_s(C_10, L_40, 9) == pytest.approx(36 / C_10)
    assert ware_rtt_estimate_alone_s(1000.0, 0.01, 5) == pytest.approx(0.02)


def test_standing_queue_is_one_bdp_then_grows_with_n():
    bdp = C_10 * L_40
    assert bbr_standing_queue_packets(C_10, L_40, 2) == pytest.approx(bdp)            # Hock et al.
    assert bbr_standing_queue_packets(C_10, L_40, 16) == pytest.approx(8 * 16 - bdp)  # 4N > BDP
    assert bbr_standing_queue_packets(C_10, L_40, 16, buffer_packets=50) == 50.0      # buffer caps it


def test_rate_and_queue_conversions():
    assert rate_pps(10e6) == pytest.approx(C_10)
    assert rate_pps(50e6, 1500) * 0.030 == pytest.approx(125.0)    # Fig. 8 (b): BDP 125 packets


def test_kinds_and_nan():
    s = pd.Series([1.0, 8.0, 64.0], index=list("abc"), name="X")
    q = queue_packets_for_bdp(s, C_10, L_40)
    share = ware_bbr_share(C_10, L_40, q, 1)
    assert isinstance(share, pd.Series) and list(share.index) == list("abc")
    assert isinstance(ware_bbr_share(C_10, L_40, 100.0, 1), float)
    out = ware_loss_based_share(C_10, L_40, np.array([100.0, np.nan]), 1)
    assert np.isnan(out[1]) and not np.isnan(out[0])
    assert math.isnan(ware_bbr_share(C_10, L_40, float("nan"), 1))


@pytest.mark.parametrize("call, message", [
    (lambda: ware_loss_based_share(C_10, L_40, 100, 0), r"n_bbr_flows \[-\] must be in \[1, inf\); got 0"),
    (lambda: ware_loss_based_share(C_10, L_40, 100, 1.5), r"n_bbr_flows \[-\] must be a whole number .* got 1.5"),
    (lambda: ware_loss_based_share(0, L_40, 100, 1), r"bottleneck_rate_pps \[packets/s\] must be in \(0, inf\); got 0"),
    (lambda: ware_loss_based_share(C_10, 0, 100, 1), r"base_rtt_s \[s\] must be in \(0, 3600\]; got 0"),
    (lambda: ware_loss_based_share(C_10, L_40, -1, 1), r"queue_packets \[packets\] must be in \[0, inf\); got -1"),
    (lambda: ware_probe_rtt_time_s(C_10, L_40, 100, 0), r"duration_s \[s\] must be in \(0, inf\); got 0"),
    (lambda: ware_simple_inflight_cap_packets(100, 1.2), r"loss_based_share \[-\] must be in \[0, 1\]; got 1.2"),
    (lambda: ware_bbr_share(C_10, L_40, 10 * C_10, 1), r"must be < 10 \(one ProbeRTT per 10 s window\); got 10.24"),
    (lambda: rate_pps(10e6, 0), r"packet_bytes \[bytes\] must be in \(0, 65535\]; got 0"),
    (lambda: bbr_standing_queue_packets(C_10, L_40, 2, buffer_packets=-5), r"buffer_packets \[packets\] must be in"),
], ids=["n0", "n-fraction", "rate0", "rtt0", "queue-neg", "d0", "p-range", "probe-too-long", "packet0", "buffer-neg"])
def test_bad_input_names_the_parameter(call, message):
    with pytest.raises(ValueError, match=message):
        call()
