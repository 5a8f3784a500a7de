/* Integer arithmetic shared by the tm_* BPF congestion controls and by the
 * user-space test harness (harness.c, compiled with gcc by the tests), so the
 * numbers the tests check are the numbers the kernel computes.
 *
 * Fixed-point conventions (names carry the scale):
 *   *_q16   value * 2^16
 *   *_q10   value * 2^10
 *   *_hz    time in units of 1/1024 s (the kernel CUBIC's BICTCP_HZ = 10)
 * No floating point, no 128-bit division: only u64 arithmetic that the BPF
 * instruction set has.
 */
#ifndef TM_MATH_H
#define TM_MATH_H

#ifndef TM_MATH_TYPES_DEFINED
#include <stdint.h>
typedef uint64_t tm_u64;
typedef uint32_t tm_u32;
#else
typedef __u64 tm_u64;
typedef __u32 tm_u32;
#endif

#define TM_MAX_SUBFLOWS 8

#if defined(__clang__)
#define TM_UNROLL _Pragma("unroll")
#else
#define TM_UNROLL
#endif

/* floor(cbrt(x)) for any 64-bit x: the bit-by-bit method (three result bits of
 * the radicand per step, 22 steps). Exact: the result r satisfies
 * r^3 <= x < (r+1)^3. */
static inline tm_u64 tm_cbrt_u64(tm_u64 x)
{
	tm_u64 y = 0;
	int s;
TM_UNROLL
	for (s = 63; s >= 0; s -= 3) {
		tm_u64 b;
		y <<= 1;
		b = 3 * y * (y + 1) + 1;
		if ((x >> s) >= b) {
			x -= b << s;
			y++;
		}
	}
	return y;
}

/* CUBIC's K [1/1024 s] after a reduction from w_max to cwnd [segments]:
 *   K^3 = xf * (w_max - cwnd) / C
 * with C = c_q10 / 1024 [segments/s^3] and the x(RTT) factor xf = xf_q16 / 2^16
 * (1 for plain CUBIC, x for the "multiply" reading, 1/x for "divide").
 * In 1/1024 s units: K_hz^3 = xf_q16 * d * 2^30 / (c_q10 * 2^6)
 *                           = (xf_q16 * d) << 24 / c_q10  (d < 2^20, xf_q16 < 2^24). */
static inline tm_u32 tm_cubic_k_hz(tm_u32 w_max, tm_u32 cwnd, tm_u32 c_q10, tm_u32 xf_q16)
{
	tm_u64 d, num;
	if (w_max <= cwnd || c_q10 == 0)
		return 0;
	d = (tm_u64)(w_max - cwnd);
	if (d > (1u << 20))
		d = 1u << 20;
	if (xf_q16 > (1u << 24))
		xf_q16 = 1u << 24;
	num = d * xf_q16;                 /* < 2^44 */
	/* (num << 24) / c_q10 overflows above 2^40: divide first when large. */
	if (num < (1ULL << 39))
		num = (num << 24) / c_q10;
	else
		num = (num / c_q10) << 24;
	return (tm_u32)tm_cbrt_u64(num);
}

/* The cubic curve's distance from the origin point [segments]:
 * C * |t - K|^3 with offs_hz = |t - K| [1/1024 s]: c_q10 * offs^3 / 2^40. */
static inline tm_u64 tm_cubic_delta_segments(tm_u64 offs_hz, tm_u32 c_q10)
{
	if (offs_hz > (1u << 18))        /* 256 s: beyond any window we can hold */
		offs_hz = 1u << 18;
	return (c_q10 * offs_hz * offs_hz * offs_hz) >> 40;
}

/* x(RTT) from a table of xf_q16 on a log grid: 8 points per octave of RTT [us],
 * from 2^TM_XTAB_MIN_LOG2 us up; linear interpolation between points.
 * index(rtt) = (msb - MIN)*8 + next three bits; clamped at both ends. */
#define TM_XTAB_MIN_LOG2 6
#define TM_XTAB_OCTAVES 20
#define TM_XTAB_LEN (TM_XTAB_OCTAVES * 8 + 1)

static inline int tm_msb_u32(tm_u32 v)
{
	int n = 0;
	if (v >> 16) { v >>= 16; n += 16; }
	if (v >> 8) { v >>= 8; n += 8; }
	if (v >> 4) { v >>= 4; n += 4; }
	if (v >> 2) { v >>= 2; n += 2; }
	if (v >> 1) { n += 1; }
	return n;
}

static inline tm_u32 tm_xtab_lookup(const tm_u32 *tab, tm_u32 rtt_us)
{
	int msb, idx;
	tm_u32 frac, lo_us, width_us, pos_us;
	tm_u64 a, b;
	if (rtt_us < (1u << TM_XTAB_MIN_LOG2))
		return tab[0];
	msb = tm_msb_u32(rtt_us);
	if (msb >= TM_XTAB_MIN_LOG2 + TM_XTAB_OCTAVES)
		return tab[TM_XTAB_LEN - 1];
	frac = (rtt_us >> (msb - 3)) & 7;
	idx = (msb - TM_XTAB_MIN_LOG2) * 8 + frac;
	if (idx < 0 || idx >= TM_XTAB_LEN - 1)
		return tab[TM_XTAB_LEN - 1];
	width_us = 1u << (msb - 3);
	lo_us = (8 + frac) << (msb - 3);
	pos_us = rtt_us - lo_us;
	a = tab[idx];
	b = tab[idx + 1];
	if (b >= a)
		return (tm_u32)(a + (b - a) * pos_us / width_us);
	return (tm_u32)(a - (a - b) * pos_us / width_us);
}

/* RFC 6356 alpha * 2^16 from per-subflow windows [segments] and RTTs [us]
 * (entries with w == 0 or r == 0 are absent subflows; callers clamp w < 2^16
 * and r < 2^22 so every product below stays under 2^64):
 *   alpha = W * max_i(w_i/r_i^2) / (sum_i w_i/r_i)^2
 * With j the argmax of w/r^2 (cross-multiplied, no division), write
 *   alpha = W * w_j / T^2,  T = sum_i w_i * r_j / r_i,
 * T in 1/2^16 segments; then two divisions by T keep everything in 64 bits:
 *   u = (W w_j << 28) / T16;  alpha_q16 = (u << 20) / T16
 * (W w_j < 2^35 with 8 subflows; T16 >= w_j << 16 bounds u by W << 12). */
static inline tm_u32 tm_lia_alpha_q16(const tm_u32 *w, const tm_u32 *r)
{
	tm_u64 total = 0, t16 = 0, u, wj = 0, rj = 0;
	int i, n = 0;
TM_UNROLL
	for (i = 0; i < TM_MAX_SUBFLOWS; i++) {
		if (!w[i] || !r[i])
			continue;
		n++;
		total += w[i];
		/* w_i / r_i^2 > w_j / r_j^2  <=>  w_i r_j^2 > w_j r_i^2 */
		if (!wj || (tm_u64)w[i] * rj * rj > wj * r[i] * r[i]) {
			wj = w[i];
			rj = r[i];
		}
	}
	if (n <= 1)
		return 1u << 16;
TM_UNROLL
	for (i = 0; i < TM_MAX_SUBFLOWS; i++) {
		if (!w[i] || !r[i])
			continue;
		t16 += (((tm_u64)w[i] * rj) << 16) / r[i];
	}
	if (!t16)
		return 1u << 16;
	u = ((total * wj) << 28) / t16;
	u = (u << 20) / t16;
	return u > 0xffffffffu ? 0xffffffffu : (tm_u32)u;
}

/* Window that a per-ACK increase of 1/w segments per acked segment amounts to
 * for LIA: min(alpha/W, 1/w_i) = 1 / max(W/alpha, w_i). */
static inline tm_u32 tm_lia_ai_window(tm_u32 w_i, tm_u32 total, tm_u32 alpha_q16)
{
	tm_u64 v;
	if (!alpha_q16)
		return w_i;
	v = (((tm_u64)total << 16) + alpha_q16 - 1) / alpha_q16;
	if (v < w_i)
		v = w_i;
	if (v > 0xffffffffu)
		v = 0xffffffffu;
	return (tm_u32)v;
}

#define TM_OLIA_SLOTS 4

/* OLIA (Khalili, Gast, Popovic, Le Boudec, IEEE/ACM ToN 2013): the increase of
 * the window of path i per acked segment, * 2^32 (signed):
 *   (w_i / r_i^2) / (sum_p w_p / r_p)^2  +  a_i / w_i
 * with the first term computed as w_i / T^2, T = sum_p w_p r_i / r_p, and
 *   a_i = +1 / (|P| |B\M|)  for i in B\M (best paths that do not have the largest window),
 *   a_i = -1 / (|P| |M|)    for i in M when B\M is not empty,
 *   a_i = 0                 otherwise;
 * M: paths of the largest window; B: paths with the largest l_p / r_p^2, where
 * l_p is the larger of the segments delivered between the last two losses and
 * since the last loss. l_p / r_p^2 is the square of a Reno-like rate estimate
 * (rate ~ sqrt(2 / p) / r with l ~ 1 / p), as in the authors' Linux OLIA
 * (mptcp_olia.c compares l_p * r_q^2 with l_q * r_p^2). A former version compared
 * l_p / r_p (no effect with equal RTTs). Here the key is
 * floor(l * 2^38 / r^2) (r^2 < 2^44).
 * w < 2^16 segments, r in [1, 2^22) us, l < 2^24 segments (callers clamp). Only the first
 * TM_OLIA_SLOTS (4) slots count: more would exceed what the BPF verifier
 * explores (the set logic branches on every slot). */
#define TM_OLIA_KEY(l, r) ((((tm_u64)(l)) << 38) / ((tm_u64)(r) * (r)))
static inline long long tm_olia_incr_q32(const tm_u32 *w, const tm_u32 *r, const tm_u32 *l, int i)
{
	tm_u64 t16 = 0, u, wmax = 0, best = 0, term;
	long long a = 0;
	int p, n = 0, n_max = 0, n_collected = 0, i_in_m = 0, i_in_c = 0;

	if (i < 0 || i >= TM_OLIA_SLOTS || !w[i] || !r[i])
		return 0;
TM_UNROLL
	for (p = 0; p < TM_OLIA_SLOTS; p++) {
		if (!w[p] || !r[p])
			continue;
		n++;
		t16 += (((tm_u64)w[p] * r[i]) << 16) / r[p];
		if (w[p] > wmax)
			wmax = w[p];
		if (TM_OLIA_KEY(l[p], r[p]) > best)
			best = TM_OLIA_KEY(l[p], r[p]);
	}
	if (!t16)
		return 0;
	u = ((tm_u64)w[i] << 40) / t16;            /* w_i 2^24 / T */
	term = (u << 24) / t16;                     /* w_i 2^32 / T^2 */
TM_UNROLL
	for (p = 0; p < TM_OLIA_SLOTS; p++) {
		int in_m, in_b;
		if (!w[p] || !r[p])
			continue;
		in_m = w[p] == wmax;
		in_b = TM_OLIA_KEY(l[p], r[p]) == best;
		n_max += in_m;
		n_collected += in_b && !in_m;
		if (p == i) {
			i_in_m = in_m;
			i_in_c = in_b && !in_m;
		}
	}
	if (n_collected) {
		if (i_in_c)
			a = (long long)((1ULL << 32) / ((tm_u64)n * n_collected * w[i]));
		else if (i_in_m)
			a = -(long long)((1ULL << 32) / ((tm_u64)n * n_max * w[i]));
	}
	return (long long)term + a;
}

/* ---- plausibility bounds of the coupled controls' window updates ----
 * TM_WINDOW_MAX [segments]: the largest window a tm_* coupled control keeps (the slots publish
 * windows in 16 bits). 65535 segments of 1448 bytes are 95 MB: a hundred times the bandwidth-delay
 * product plus queue of any link the testbed builds (1 Gbit/s x 100 ms is 8634 segments).
 * TM_ACKED_MAX [segments]: the most segments one ACK can newly deliver; no more than a window can be
 * in flight. A larger `acked` is a wrapped (negative) count, not data. */
#define TM_WINDOW_MAX 0xffffU
#define TM_ACKED_MAX TM_WINDOW_MAX

/* One segment * 2^32: the largest increase (and decrease) per acked segment an update may apply.
 * RFC 6356 Sec. 3 bounds LIA's by 1/w_i <= 1; OLIA's formula gives up to 1 + 1/(|P||B\M|) at w_i = 1
 * (its first term alone reaches 1 when the other paths' w_p/r_p are negligible), i.e. faster than
 * slow start: the authors' Linux OLIA grows a window by at most one segment per ACK. */
#define TM_ONE_Q32 (1LL << 32)

/* OLIA's window after an ACK of `acked` segments in congestion avoidance: the increase incr_q32
 * per acked segment (tm_olia_incr_q32), bounded to [-1, 1] segment per acked segment, accumulates in
 * *acc_q32 (the fraction of a segment carried between ACKs, |*acc_q32| < 2^32 on return); whole
 * segments move the window, never below 1 nor above min(clamp, TM_WINDOW_MAX). An `acked` above
 * TM_ACKED_MAX leaves window and accumulator unchanged (the caller counts it). The window changes by
 * at most `acked` segments. */
static inline tm_u32 tm_olia_window(tm_u32 cwnd, tm_u32 clamp, long long *acc_q32, long long incr_q32,
				    tm_u32 acked)
{
	long long acc = *acc_q32, steps;
	tm_u32 top = clamp < TM_WINDOW_MAX ? clamp : TM_WINDOW_MAX;

	if (acked > TM_ACKED_MAX)
		return cwnd;
	if (incr_q32 > TM_ONE_Q32)
		incr_q32 = TM_ONE_Q32;
	if (incr_q32 < -TM_ONE_Q32)
		incr_q32 = -TM_ONE_Q32;
	if (acc >= TM_ONE_Q32 || acc <= -TM_ONE_Q32)   /* never on return; a corrupted carry is dropped */
		acc = 0;
	acc += incr_q32 * (long long)acked;           /* |acc| < 2^32 (1 + 2^16): no overflow */
	if (acc >= TM_ONE_Q32) {
		steps = acc >> 32;
		acc -= steps << 32;
		cwnd = (tm_u64)cwnd + (tm_u64)steps < top ? cwnd + (tm_u32)steps : (cwnd > top ? cwnd : top);
	} else if (acc <= -TM_ONE_Q32) {
		steps = (-acc) >> 32;
		acc += steps << 32;
		cwnd = cwnd > (tm_u64)steps + 1 ? cwnd - (tm_u32)steps : 1;
	}
	*acc_q32 = acc;
	return cwnd;
}

#endif /* TM_MATH_H */
