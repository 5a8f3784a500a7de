"""Tests for tcpmodels.models.cubic: closed forms, RFC 9438 published tables, Kozu–Yamaguchi K, trajectories, bottleneck."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tcpmodels.models.bottleneck import BottleneckShare, reno_cubic_bottleneck
from tcpmodels.models.cubic import (
    X_READINGS,
    PowerLawX,
    beta_cubic_from_reduction,
    cubic_alpha_reno_friendly,
    cubic_average_window_segments,
    cubic_k_s,
    cubic_loss_rate_for_window,
    cubic_reno_friendly_window_segments,
    cubic_window_segments,
    kozu_k_s,
    kozu_x,
    reduction_from_beta_cubic,
    reno_window_segments,
)
from tcpmodels.models.window_dynamics import cubic_window_trajectory, reno_window_trajectory

# deterministic hypothesis settings for this module (no global profile change)
DET = settings(derandomize=True, deadline=None, max_examples=60)
PUBLISHED = Path(__file__).resolve().parents[1] / "data" / "published"

w_max_st = st.floats(2.0, 1e6)
c_st = st.floats(0.01, 10.0)
beta_st = st.floats(0.05, 0.95)
rtt_st = st.floats(1e-4, 2.0)


# ---------------------------------------------------------------- K and W(t)
def test_k_rfc_example_is_cbrt_75():
    # W_max = 100, C = 0.4, beta_cubic = 0.7: K = cbrt(100 * 0.3 / 0.4) = cbrt(75)
    assert cubic_k_s(100.0) == pytest.approx(75 ** (1 / 3), rel=1e-12)
    assert round(cubic_k_s(100.0), 3) == 4.217


def test_k_paper_convention_beta_reduction():
    # P3 / Ha-Rhee-Xu 2008: K = cbrt(W_max * beta / C) with beta = 0.2 removed
    beta_cubic = beta_cubic_from_reduction(0.2)
    assert beta_cubic == pytest.approx(0.8)
    assert cubic_k_s(100.0, c=0.4, beta_cubic=beta_cubic) == pytest.approx((100 * 0.2 / 0.4) ** (1 / 3), rel=1e-12)
    assert reduction_from_beta_cubic(0.7) == pytest.approx(0.3)


@DET
@given(w_max_st, c_st, beta_st)
def test_window_starts_at_beta_wmax_and_returns_to_wmax_at_k(w_max, c, beta):
    k = cubic_k_s(w_max, c, beta)
    assert cubic_window_segments(0.0, w_max, c, beta) == pytest.approx(beta * w_max, rel=1e-9)
    assert cubic_window_segments(k, w_max, c, beta) == pytest.approx(w_max, rel=1e-12)
    # concave before K, convex after: W(K - d) < W_max < W(K + d)
    d = 0.5 * k
    assert cubic_window_segments(k - d, w_max, c, beta) < w_max < cubic_window_segments(k + d, w_max, c, beta)


def test_k_does_not_depend_on_rtt_but_reno_recovery_does():
    # Reno needs (1 - 0.5) W_max RTT to regain W_max; CUBIC needs K whatever the RTT
    for rtt in (0.001, 0.1):
        t_reno = 0.5 * 100 * rtt
        assert reno_window_segments(t_reno, 100.0, rtt) == pytest.approx(100.0)


def test_vectorised_kinds_agree():
    w = np.array([10.0, 100.0, 1000.0])
    arr = cubic_k_s(w)
    ser = cubic_k_s(pd.Series(w, index=["a", "b", "c"]))
    assert isinstance(arr, np.ndarray) and isinstance(ser, pd.Series)
    assert list(ser.index) == ["a", "b", "c"]
    np.testing.assert_allclose(arr, [cubic_k_s(float(v)) for v in w], rtol=1e-15)
    np.testing.assert_allclose(ser.to_numpy(), arr, rtol=1e-15)
    assert isinstance(cubic_k_s(100.0), float)


def test_nan_propagates():
    out = cubic_k_s(np.array([100.0, np.nan]))
    assert np.isnan(out[1]) and not np.isnan(out[0])
    assert math.isnan(cubic_window_segments(np.nan, 100.0))
    assert math.isnan(cubic_reno_friendly_window_segments(1.0, np.nan, 0.1))
    assert math.isnan(cubic_average_window_segments(np.nan, 0.1))


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: cubic_k_s(-1.0), r"w_max_segments \[segments\] must be in \[0, inf\]; got -1"),
        (lambda: cubic_k_s(100.0, c=0.0), r"c \[segments/s\^3\] must be in \(0, inf\]; got 0"),
        (lambda: cubic_k_s(100.0, beta_cubic=1.0), r"beta_cubic \[-\] must be in \(0, 1\); got 1"),
        (lambda: beta_cubic_from_reduction(1.2), r"beta_reduction \[-\] must be in \(0, 1\); got 1.2"),
        (lambda: cubic_window_segments(-0.1, 100.0), r"t_s \[s\] must be in \[0, inf\]"),
        (lambda: reno_window_segments(1.0, 100.0, 0.0), r"rtt_s \[s\] must be in \(0, inf\]; got 0"),
        (lambda: cubic_average_window_segments(0.0, 0.1), r"loss_rate \[-\] must be in \(0, 1\]; got 0"),
        (lambda: kozu_k_s(100.0, 0.01, reading="sideways"), r"reading must be one of"),
        (lambda: kozu_x(0.01, x_of_rtt=lambda r: -r), r"x_of_rtt\(rtt_s\) \[-\] must be in \(0, inf\]"),
        (lambda: PowerLawX(rtt1_s=0.1, rtt2_s=0.1), r"rtt1_s and rtt2_s \[s\] must differ"),
    ],
)
def test_out_of_domain_raises_clear_valueerror(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# ---------------------------------------------------------------- Reno-friendly region (RFC 9438 Sec. 4.3)
def test_alpha_cubic_value():
    assert cubic_alpha_reno_friendly(0.7) == pytest.approx(3 * 0.3 / 1.7)


@DET
@given(beta_st)
def test_aimd_alpha_cubic_has_renos_average_window(beta):
    # AIMD(alpha, beta) under deterministic loss: avg window sqrt(alpha (1+beta) / (2 (1-beta) p));
    # with alpha_cubic it must equal Reno's sqrt(3 / (2 p)) for every beta.
    a = cubic_alpha_reno_friendly(beta)
    assert a * (1 + beta) / (2 * (1 - beta)) == pytest.approx(1.5, rel=1e-12)


def test_reno_friendly_window_piecewise():
    w_max, rtt, beta = 100.0, 0.1, 0.7
    a = cubic_alpha_reno_friendly(beta)
    t1 = (1 - beta) * w_max * rtt / a
    assert cubic_reno_friendly_window_segments(0.0, w_max, rtt) == pytest.approx(70.0)
    assert cubic_reno_friendly_window_segments(t1, w_max, rtt) == pytest.approx(w_max)
    # slope alpha_cubic / RTT before t1, 1 / RTT after
    assert cubic_reno_friendly_window_segments(0.5 * t1, w_max, rtt) == pytest.approx(70.0 + a * 0.5 * t1 / rtt)
    assert cubic_reno_friendly_window_segments(t1 + 1.0, w_max, rtt) == pytest.approx(w_max + 1.0 / rtt)


# ---------------------------------------------------------------- published: RFC 9438 Tables 1-3
def test_response_function_matches_rfc9438_tables_1_and_2():
    table = pd.read_csv(PUBLISHED / "cubic_rfc9438_response.csv")
    assert table["source"].str.contains("RFC 9438").all()
    cubic = table[table.algorithm == "cubic"]
    ours = cubic_average_window_segments(cubic.loss_rate.to_numpy(), cubic.rtt_s.to_numpy(), c=cubic.c.to_numpy())
    # printed as integers: half a unit in the last digit (+ float slack)
    np.testing.assert_array_less(np.abs(ours - cubic.avg_window_segments.to_numpy()), 0.5 + 1e-6)
    reno = table[table.algorithm == "reno"]
    np.testing.assert_array_less(np.abs(1.2 / np.sqrt(reno.loss_rate.to_numpy()) - reno.avg_window_segments.to_numpy()), 0.5 + 1e-6)
    assert len(cubic) == 42 and len(reno) == 14


def test_required_loss_rate_matches_rfc9438_table_3():
    table = pd.read_csv(PUBLISHED / "cubic_rfc9438_required_loss.csv")
    assert table["source"].str.contains("Table 3").all()
    w = table.throughput_mbps * 1e6 * table.rtt_s / (8 * table.packet_bytes)
    np.testing.assert_allclose(w, table.avg_window_segments, atol=0.05)  # printed to 0.1
    ours = cubic_loss_rate_for_window(w.to_numpy(), table.rtt_s.to_numpy())
    reno = (1.2 / w.to_numpy()) ** 2
    for p_ours, p_reno, printed in zip(ours, reno, table.cubic_loss_rate):
        exp10 = math.floor(math.log10(printed))
        if p_ours > p_reno * (1 + 1e-12):  # cubic term binds: printed rounded to 2 significant digits
            assert abs(p_ours - printed) <= 0.5 * 10 ** (exp10 - 1) + 1e-18
        else:  # Reno-friendly floor binds: the RFC copies its Reno column, which is truncated (1.44/W^2 = 2.07e-2 -> 2.0e-2)
            assert math.floor(p_ours / 10 ** (exp10 - 1)) * 10 ** (exp10 - 1) == pytest.approx(printed)
    for p_reno, printed in zip(reno, table.reno_loss_rate):
        exp10 = math.floor(math.log10(printed))
        assert math.floor(p_reno / 10 ** (exp10 - 1)) * 10 ** (exp10 - 1) == pytest.approx(printed)


@DET
@given(st.floats(1e-8, 0.5), rtt_st, c_st)
def test_loss_rate_for_window_inverts_response(p, rtt, c):
    w = cubic_average_window_segments(p, rtt, c=c)
    assert cubic_loss_rate_for_window(w, rtt, c=c) == pytest.approx(p, rel=1e-9)


# ---------------------------------------------------------------- Kozu & Yamaguchi x(RTT)
def test_default_x_power_law_through_fig2_corners():
    x = PowerLawX()
    assert x(0.001) == pytest.approx(10.0)
    assert x(1.0) == pytest.approx(1.0)
    assert x(0.1) == pytest.approx(10 * 100 ** (-1 / 3))
    assert x.exponent == pytest.approx(-1 / 3)
    assert kozu_x(np.array([0.001, 1.0])) == pytest.approx([10.0, 1.0])


@DET
@given(w_max_st, st.floats(1e-3, 1.0))
def test_kozu_readings_scale_k_by_cube_root_of_x(w_max, rtt):
    k = cubic_k_s(w_max)
    x = PowerLawX()(rtt)
    assert kozu_k_s(w_max, rtt, reading="none") == pytest.approx(k)
    assert kozu_k_s(w_max, rtt, reading="multiply") == pytest.approx(k * x ** (1 / 3), rel=1e-12)
    assert kozu_k_s(w_max, rtt, reading="divide") == pytest.approx(k / x ** (1 / 3), rel=1e-12)
    # "larger x for smaller RTT": multiply slows small-RTT flows, divide speeds them up
    assert kozu_k_s(w_max, rtt, reading="multiply") >= k * (1 - 1e-12) >= kozu_k_s(w_max, rtt, reading="divide") * (1 - 1e-12)


def test_kozu_custom_callable_and_paper_beta():
    k = kozu_k_s(100.0, 0.004, reading="multiply", x_of_rtt=lambda r: 8.0, beta_cubic=beta_cubic_from_reduction(0.2))
    assert k == pytest.approx((8.0 * 100.0 * 0.2 / 0.4) ** (1 / 3))
    custom = PowerLawX(rtt1_s=0.001, x1=4.0, rtt2_s=0.1, x2=1.0)
    assert kozu_k_s(100.0, 0.01, reading="divide", x_of_rtt=custom) == pytest.approx(cubic_k_s(100.0) / 2.0 ** (1 / 3))


# ---------------------------------------------------------------- trajectories
def test_reno_sawtooth_with_cap_matches_closed_form():
    # cap W: window W/2 -> W in (W/2) RTT, mean 3W/4
    rtt, cap = 0.05, 80.0
    df = reno_window_trajectory(rtt_s=rtt, duration_s=40.0, w_max_segments=cap, cap_segments=cap, dt_s=rtt / 20)
    loss_t = df.t_s[df.loss].to_numpy()[1:]
    np.testing.assert_allclose(np.diff(loss_t), cap / 2 * rtt, rtol=0.01)
    assert df.cwnd_segments.mean() == pytest.approx(0.75 * cap, rel=0.01)
    assert set(df.columns) >= {"t_s", "cwnd_segments", "loss"}


def test_reno_periodic_losses_reach_fixed_point():
    # periodic loss every T: W_max/2 + T/RTT = W_max  ->  W_max = 2 T / RTT
    rtt, interval = 0.1, 2.0
    df = reno_window_trajectory(rtt_s=rtt, duration_s=60.0, w_max_segments=200.0, loss_interval_s=interval, dt_s=0.01)
    peaks = df.cwnd_segments[df.loss].to_numpy()[1:]
    assert peaks[-1] == pytest.approx(2 * interval / rtt, rel=0.01)
    np.testing.assert_allclose(np.diff(df.t_s[df.loss].to_numpy()), interval, atol=1e-9)


def test_cubic_cycle_with_cap_at_wmax_has_period_k_and_rfc_average():
    # large RTT keeps CUBIC out of the Reno-friendly region; cap = W_max gives period K and
    # mean window W_max (3 + beta) / 4 (the concave profile behind RFC 9438 eq. (5))
    w_max, rtt = 1000.0, 0.2
    k = cubic_k_s(w_max)
    df = cubic_window_trajectory(rtt_s=rtt, duration_s=6 * k, w_max_segments=w_max, cap_segments=w_max, dt_s=0.01)
    loss_t = df.t_s[df.loss].to_numpy()
    np.testing.assert_allclose(np.diff(loss_t), k, rtol=0.03)
    one = df[(df.t_s >= loss_t[1]) & (df.t_s < loss_t[2])]
    assert one.cwnd_segments.mean() == pytest.approx(w_max * (3 + 0.7) / 4, rel=0.01)
    assert not one.reno_friendly.any()


def test_cubic_trajectory_follows_closed_forms_before_first_loss():
    w_max, rtt = 100.0, 0.1
    df = cubic_window_trajectory(rtt_s=rtt, duration_s=8.0, w_max_segments=w_max, loss_interval_s=100.0, dt_s=0.005)
    np.testing.assert_allclose(df.w_cubic_segments, cubic_window_segments(df.t_s.to_numpy(), w_max), rtol=1e-9)
    np.testing.assert_allclose(df.w_est_segments, cubic_reno_friendly_window_segments(df.t_s.to_numpy(), w_max, rtt), rtol=2e-3)
    # in the Reno-friendly region the window used is W_est (RFC 9438 Sec. 4.3), and never below it elsewhere
    friendly = df[df.reno_friendly]
    assert len(friendly) > 0
    np.testing.assert_allclose(friendly.cwnd_segments, friendly.w_est_segments, rtol=1e-12)
    assert (df.cwnd_segments >= df.w_est_segments - 1e-9).all()
    # W_est (0.53 segment per RTT) regains W_max at t1 = 0.3 * 100 * 0.1 / 0.53 = 5.67 s > K = 4.22 s,
    # then grows 1 per RTT and overtakes the flat part of the cubic curve shortly after
    t1 = 0.3 * w_max * rtt / cubic_alpha_reno_friendly(0.7)
    assert t1 < friendly.t_s.min() < t1 + 0.5
    assert not df[df.t_s < t1].reno_friendly.any()


def test_cubic_small_rtt_is_reno_friendly():
    # RTT 1 ms, W_max 100: W_est regains W_max in 0.3*100/0.53 RTTs = 57 ms << K = 4.2 s
    df = cubic_window_trajectory(rtt_s=0.001, duration_s=2.0, w_max_segments=100.0, cap_segments=100.0)
    assert df.reno_friendly.mean() > 0.9
    loss_t = df.t_s[df.loss].to_numpy()
    t1 = 0.3 * 100.0 * 0.001 / cubic_alpha_reno_friendly(0.7)
    np.testing.assert_allclose(np.diff(loss_t[1:]), t1, rtol=0.05)


def test_kozu_readings_change_recovery_time_in_trajectory():
    w_max, rtt = 1000.0, 0.2  # x(0.2 s) = 1.71
    first = {}
    for reading in X_READINGS:
        df = cubic_window_trajectory(rtt_s=rtt, duration_s=30.0, w_max_segments=w_max, cap_segments=w_max, x_reading=reading, dt_s=0.01)
        first[reading] = df.t_s[df.loss].to_numpy()[1]
    assert first["divide"] < first["none"] < first["multiply"]
    x = PowerLawX()(rtt)
    assert first["multiply"] == pytest.approx(cubic_k_s(w_max) * x ** (1 / 3), rel=0.03)


def test_trajectory_needs_a_loss_process():
    with pytest.raises(ValueError, match="loss_interval_s"):
        reno_window_trajectory(rtt_s=0.1, duration_s=1.0, w_max_segments=10.0)
    with pytest.raises(ValueError, match="x_reading must be one of"):
        cubic_window_trajectory(rtt_s=0.1, duration_s=1.0, w_max_segments=10.0, cap_segments=20.0, x_reading="both")


# ---------------------------------------------------------------- shared bottleneck
def test_bottleneck_small_bdp_cubic_behaves_like_reno():
    # 1 Gbit/s, both RTT 1 ms: BDP 83 packets, CUBIC is in its Reno-friendly region -> about even
    res = reno_cubic_bottleneck(capacity_bps=1e9, buffer_bytes=125_000, reno_rtt_s=0.001, cubic_rtt_s=0.001, duration_s=6.0, warmup_s=1.0)
    assert isinstance(res, BottleneckShare)
    assert res.cubic_share == pytest.approx(0.5, abs=0.05)
    assert res.utilization == pytest.approx(1.0, abs=0.02)
    assert res.reno_loss_events > 10 and res.cubic_loss_events > 10
    d = res.to_dict()
    assert "trace" not in d and d["params"]["reno_rtt_s"] == 0.001
    assert list(res.trace.columns) == ["t_s", "reno_cwnd_segments", "cubic_cwnd_segments", "queue_segments", "reno_rate_bps", "cubic_rate_bps", "loss"]


def test_bottleneck_large_bdp_cubic_beats_reno_and_conserves_capacity():
    # 100 Mbit/s, both RTT 100 ms (BDP 833 packets): CUBIC's cubic growth outpaces Reno's 1/RTT
    res = reno_cubic_bottleneck(capacity_bps=100e6, buffer_bytes=1.25e6, reno_rtt_s=0.1, cubic_rtt_s=0.1, duration_s=120.0, warmup_s=20.0, dt_s=0.005)
    assert res.cubic_share > 0.6
    assert res.total_throughput_bps <= 100e6 * (1 + 1e-9)
    assert res.utilization > 0.9  # buffer = one BDP keeps the link busy
    assert 0.5 <= res.jain_index <= 1.0


def test_bottleneck_is_deterministic_and_converged_in_dt():
    kw = dict(capacity_bps=1e9, buffer_bytes=500_000, reno_rtt_s=0.004, cubic_rtt_s=0.016, duration_s=8.0, warmup_s=2.0)
    a = reno_cubic_bottleneck(**kw)
    b = reno_cubic_bottleneck(**kw)
    assert a.to_dict() == b.to_dict()
    fine = reno_cubic_bottleneck(**kw, dt_s=0.0002)
    assert fine.cubic_throughput_bps == pytest.approx(a.cubic_throughput_bps, rel=0.05)


def test_bottleneck_rejects_bad_input():
    for bad in (0.0, float("inf")):  # an infinite link returned 9.6e22 bit/s (issue 50)
        with pytest.raises(ValueError, match=rf"capacity_bps \[bit/s\] must be in \[1, 1e\+15\]; got {bad:g}"):
            reno_cubic_bottleneck(capacity_bps=bad, buffer_bytes=1e5, reno_rtt_s=0.01, cubic_rtt_s=0.01)
    with pytest.raises(ValueError, match=r"warmup_s \[s\]"):
        reno_cubic_bottleneck(capacity_bps=1e9, buffer_bytes=1e5, reno_rtt_s=0.01, cubic_rtt_s=0.01, duration_s=1.0, warmup_s=2.0)
    with pytest.raises(TypeError, match="reno_rtt_s"):
        reno_cubic_bottleneck(capacity_bps=1e9, buffer_bytes=1e5, reno_rtt_s=[0.01, 0.02], cubic_rtt_s=0.01)


def test_bottleneck_proportional_losses_spare_the_small_flow():
    # under synchronised losses the small (long-RTT) flow is cut at every overflow; charging drops
    # in proportion to the arrival rates (equal per-packet loss probability) spares it
    kw = dict(capacity_bps=100e6, buffer_bytes=250e3, reno_rtt_s=0.001, cubic_rtt_s=0.016, duration_s=20.0, warmup_s=4.0)
    sync = reno_cubic_bottleneck(**kw)
    prop = reno_cubic_bottleneck(**kw, loss_sharing="proportional")
    assert prop.params["loss_sharing"] == "proportional"
    assert sync.cubic_loss_events == sync.reno_loss_events  # synchronised: same count
    assert prop.cubic_loss_events < prop.reno_loss_events
    assert prop.cubic_share > sync.cubic_share
    assert prop.utilization == pytest.approx(1.0, abs=0.03)
    with pytest.raises(ValueError, match="loss_sharing must be"):
        reno_cubic_bottleneck(**kw, loss_sharing="random")
