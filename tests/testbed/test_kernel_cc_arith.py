"""The BPF congestion controls' integer arithmetic (tm_math.h) against tcpmodels.models.

No root needed: ``harness.c`` includes the same ``tm_math.h`` as the BPF programs and is
compiled with gcc. Each test prints the largest error it measured; the bounds are the
quantisation of the fixed-point formats (derived in each docstring), not tuned numbers.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from tcpmodels.models.cubic import PowerLawX, cubic_k_s, kozu_k_s, x_power_law_params
from tcpmodels.models.mptcp import lia_alpha
from tcpmodels.testbed.kernel_cc import loader
from tcpmodels.testbed.kernel_cc.arithmetic import OLIA_SLOTS, Harness, olia_increase_segments

pytestmark = pytest.mark.skipif(not (shutil.which("gcc") or shutil.which("cc")), reason="no C compiler (gcc)")


@pytest.fixture(scope="module")
def harness():
    with Harness() as h:
        yield h


def test_cube_root_is_exact(harness):
    rng = np.random.default_rng(1)
    xs = [0, 1, 7, 8, 26, 27, 2**63, 2**64 - 1] + [int(v) for v in rng.integers(0, 2**63, 300, dtype=np.int64)]
    xs += [int(v) ** 3 for v in rng.integers(1, 2_642_245, 100)] + [int(v) ** 3 - 1 for v in rng.integers(2, 2_642_245, 100)]
    for x in xs:
        r = harness.cbrt(x)
        assert r**3 <= x < (r + 1) ** 3, x


def test_cubic_k_against_model(harness):
    """x == 1: K from the integer window reduction. Against the exact cube root of the same integers
    the error is the floor to 1/1024 s; against ``cubic_k_s(w_max)`` it adds the integer window
    (d = w_max - floor(0.7002 w_max) vs 0.3 w_max: at most 1/(0.3 w_max) in d, a third of that in K)
    and C = 410/1024, beta = 717/1024 (0.04 % in K)."""
    worst_exact, worst_model = 0.0, 0.0
    for w_max in np.unique(np.geomspace(10, 20000, 300).astype(int)):
        cwnd = (int(w_max) * 717) >> 10
        k_s = harness.cubic_k_hz(int(w_max), cwnd, 410, 1 << 16) / 1024
        exact_s = ((w_max - cwnd) / (410 / 1024)) ** (1 / 3)
        model_s = cubic_k_s(float(w_max))
        assert exact_s - 1 / 1024 - 1e-9 <= k_s <= exact_s + 1e-9
        worst_exact = max(worst_exact, abs(k_s - exact_s))
        rel = abs(k_s / model_s - 1)
        assert rel <= 1 / (3 * 0.3 * w_max) + 0.0005 + 1 / (1024 * model_s), (w_max, k_s, model_s)
        if w_max >= 100:
            worst_model = max(worst_model, rel)
    print(f"K: max |K_int - K_exact| = {worst_exact * 1e3:.3f} ms; max rel. error vs cubic_k_s (w_max >= 100) "
          f"= {worst_model:.4%}")


@pytest.mark.parametrize("reading", ["multiply", "divide"])
@pytest.mark.parametrize("x_exponent", [-1 / 3, -1.0])
def test_x_table_and_k_against_kozu(harness, reading, x_exponent):
    """x(RTT) by linear interpolation on 8 points per octave: for x ~ RTT^k the relative error is
    at most about |k (k - 1)| / 8 * (1/8)^2 (0.1 % for k = -1/3, 0.4 % for k = -1); K takes a third.
    The table holds xf in [2^-16, 256] (Q16 in 24 bits): RTTs whose factor lies outside are
    clamped (checked separately), the others compared."""
    params = {"reading": reading, "x_exponent": x_exponent}
    harness.set_xtab(loader.xtab_q16(reading, x_exponent))
    x_of = PowerLawX(**x_power_law_params(x_exponent))
    bound_x = abs(x_exponent * (x_exponent - 1)) / 8 / 64 + 2e-5
    rng = np.random.default_rng(2)
    worst_x, worst_k = 0.0, 0.0
    for rtt_us in np.unique(np.geomspace(100, 5e6, 400).astype(int)).tolist() + rng.integers(100, 5_000_000, 100).tolist():
        x = float(x_of(rtt_us * 1e-6))
        xf = x if reading == "multiply" else 1 / x
        got = harness.xtab(int(rtt_us)) / 65536
        if xf > 200:  # at or next to the clamp: bounded, not interpolated
            assert 200 / 1.1 <= got <= 256.0
            continue
        rel_x = abs(got / xf - 1)
        quant = 2.0 / 65536 / xf  # Q16: entries rounded (0.5 LSB), interpolation floored (1 LSB)
        assert rel_x <= bound_x + quant, (rtt_us, got, xf)
        if xf >= 0.01:
            worst_x = max(worst_x, rel_x)
        w_max = 1000
        cwnd = (w_max * 717) >> 10
        k_s = harness.cubic_k_hz(w_max, cwnd, 410, harness.xtab(int(rtt_us))) / 1024
        model = float(kozu_k_s(float(w_max), rtt_us * 1e-6, reading=reading, x_of_rtt=x_of))
        rel_k = abs(k_s / model - 1)
        assert rel_k <= (bound_x + quant) / 3 + 1 / (3 * 0.3 * w_max) + 0.0005 + 1 / (1024 * model), (rtt_us, k_s, model)
        if xf >= 0.01:
            worst_k = max(worst_k, rel_k)
    print(f"x(RTT) {reading} k={x_exponent:.3f} (xf >= 0.01): max rel. error x {worst_x:.4%}, K vs kozu_k_s {worst_k:.4%} "
          f"(w_max = 1000)")
    assert params  # the table was built from these parameters


def test_lia_alpha_against_model(harness):
    """alpha * 2^16 from integer windows and RTTs [us]: the two truncating divisions lose at most
    about 2^-12 relative (u >= 2^12 W w_j / T) plus the final 2^-16."""
    rng = np.random.default_rng(3)
    worst = 0.0
    for _ in range(2000):
        n = int(rng.integers(2, 9))
        w = rng.integers(1, 5000, n)
        r_us = rng.integers(200, 1_000_000, n)
        got = harness.lia_alpha_q16(w, r_us) / 65536
        want = lia_alpha(w.astype(float), r_us * 1e-6)
        rel = abs(got / want - 1)
        worst = max(worst, rel)
        assert rel <= 2**-11 + 2**-16 / want, (w, r_us, got, want)
    assert harness.lia_alpha_q16([10], [1000]) == 1 << 16
    print(f"LIA alpha: max rel. error vs lia_alpha {worst:.2e} over 2000 random connections")


def test_lia_increase_window(harness):
    for w_i, total, alpha in ((10, 20, 32768), (30, 40, 65536), (5, 100, 6553), (7, 7, 65536)):
        want = max(w_i, -(-(total << 16) // alpha))
        assert harness.lia_ai_window(w_i, total, alpha) == want


def test_olia_against_reference(harness):
    """OLIA's increase * 2^32: the first term loses about 2^-24 relative (u >= 2^24 w_i / T), alpha_r is
    exact but for the final floor; the set logic (M, B) must agree exactly with the float reference."""
    rng = np.random.default_rng(4)
    worst = 0.0
    for trial in range(1500):
        n = int(rng.integers(2, OLIA_SLOTS + 1))
        w = rng.integers(2, 3000, n)
        r_us = rng.integers(500, 500_000, n)
        ell = rng.integers(1, 100_000, n)
        if trial % 3 == 0:  # ties, as equal windows and equal l/rtt happen in practice
            w[1] = w[0]
            ell[1], r_us[1] = ell[0], r_us[0]
        want = olia_increase_segments(w, r_us * 1e-6, ell)
        scale = (w / (r_us * 1e-6) ** 2) / np.sum(w / (r_us * 1e-6)) ** 2 + 1.0 / w
        for i in range(n):
            got = harness.olia_incr_q32(w, r_us, ell, i) / 2**32
            err = abs(got - want[i]) / scale[i]
            worst = max(worst, err)
            assert err <= 1e-6, (w, r_us, ell, i, got, want[i])
    print(f"OLIA increase: max error {worst:.2e} of the magnitude of its terms over 1500 random connections")


def test_olia_formula_exceeds_one_segment_per_acked_segment_on_a_tiny_window(harness):
    """The inputs of a starved subflow (w_i = 1, the smallest window, best l/r^2) beside a path whose
    w/r is small: the formula's first term is near 1 and a_i adds 1/(|P| |B\\M|) = 1/2. This is what
    tm_olia's window update must bound (next test): above 1 segment per acked segment the window
    would grow faster than slow start. (T = sum_p w_p r_i / r_p is held in 1/2^16 segments: here
    T = 1.1 loses up to 2^-16, i.e. 1.4e-5 relative, twice that in 1/T^2.)"""
    incr = harness.olia_incr_q32([1, 10], [1000, 100_000], [100, 100], 0) / 2**32
    want = olia_increase_segments([1, 10], [1e-3, 0.1], [100, 100])[0]
    assert incr == pytest.approx(want, rel=3e-5) and incr > 1.3


def test_olia_window_moves_at_most_one_segment_per_acked_segment(harness):
    """tm_olia_window (tm_math.h) applies an increase per acked segment: over random windows,
    increases (within and far beyond [-1, 1] segment, as the formula gives on stale or tiny inputs)
    and acked counts, the window moves by at most ``acked`` segments, stays in [1, min(clamp, 65535)],
    and the carried fraction stays below one segment. Before the fix the update (inline in
    tm_olia.bpf.c) added incr * acked unbounded, capped only by snd_cwnd_clamp (~2^32)."""
    rng = np.random.default_rng(5)
    one = 2**32
    for _ in range(3000):
        cwnd = int(rng.integers(1, 5000))
        clamp = int(rng.choice([2**32 - 1, 10_000, 3000]))
        acc = int(rng.integers(-one + 1, one))
        incr = int(rng.choice([rng.integers(-one, one), rng.integers(-2**40, 2**40), 3 * one // 2]))
        acked = int(rng.integers(0, 200))
        new, acc2 = harness.olia_window(cwnd, clamp, acc, incr, acked)
        top = min(clamp, 0xFFFF)
        assert abs(new - cwnd) <= acked or (new == top and cwnd > top), (cwnd, clamp, acc, incr, acked, new)
        assert 1 <= new <= max(top, cwnd) and abs(acc2) < one, (cwnd, clamp, acc, incr, acked, new, acc2)
        if -one <= incr <= one:   # within the bound: exactly the accumulated whole segments
            total = acc + incr * acked
            steps = total // one if total >= 0 else -((-total) // one)
            want = (cwnd if cwnd > top else min(cwnd + steps, top)) if steps >= 0 else max(cwnd + steps, 1)
            assert (new, acc2) == (want, total - steps * one), (cwnd, clamp, acc, incr, acked)
    # the worst case of the previous test's inputs: 3 acked segments move the window by 3, not 4
    incr = harness.olia_incr_q32([1, 10], [1000, 100_000], [100, 100], 0)
    assert harness.olia_window(1, 2**32 - 1, 0, incr, 3) == (4, 0)


def test_olia_window_ignores_a_wrapped_acked_count(harness):
    """An ``acked`` above 65535 segments is a wrapped (negative) count, not data: the window and the
    carried fraction stay as they were (the BPF program counts it in tm_olia_diag). With the inline
    update before the fix, acked = 2^32 - 5 at the largest increase grew a window of 4 by ~2^32 segments
    (cut to snd_cwnd_clamp): the implausible windows of issue 15."""
    for acked in (2**32 - 5, 2**31, 65536):
        assert harness.olia_window(4, 2**32 - 1, 123, 2**32, acked) == (4, 123)
    assert harness.olia_window(4, 2**32 - 1, 0, 2**32, 65535) == (0xFFFF, 0)
