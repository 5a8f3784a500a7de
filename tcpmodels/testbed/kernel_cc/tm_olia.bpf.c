/* tm_olia: OLIA, the Opportunistic Linked Increases Algorithm for MPTCP
 * (Khalili, Gast, Popovic, Le Boudec, IEEE/ACM ToN 21(5), 2013). On each ACK in
 * congestion avoidance the window of subflow i changes by
 *   (w_i / r_i^2) / (sum_p w_p / r_p)^2 + a_i / w_i   segments per acked segment
 * (tm_olia_incr_q32 in tm_math.h, from all subflows of the connection, keyed by
 * the MPTCP token as in tm_lia); a loss halves the window (Reno). l_i, the
 * segments delivered between losses, is counted in tp->delivered. The fraction
 * of a segment is accumulated per subflow (signed: a_i may be negative).
 * At most TM_OLIA_SLOTS (4) subflows per connection take part (slot = subflow
 * id mod 4; the kernel numbers a connection's subflows 1, 2, 3, ... in the order they
 * are created, so two or three subflows never share a slot; a fifth subflow, or one
 * re-created after others closed, lands on the slot of an earlier one and the two
 * overwrite each other's entry). A plain TCP socket is Reno. Map "tm_olia_conn" for user space:
 * per slot the published window, RTT and l, loss and timeout counters, and the slot's last
 * increase with the inputs it was computed from (struct tm_calc, tm_bpf.h).
 * The window moves by at most one segment per acked segment (tm_olia_window: the formula exceeds that
 * on a window of 1-2 segments), never above TM_WINDOW_MAX (65535 segments); an implausible window or
 * acked count (tm_math.h) is reset / ignored and counted in the array map "tm_olia_diag". */
#include "tm_bpf.h"

struct tm_olia_conn {
	TM_CONN_SLOTS(TM_MAX_SUBFLOWS);  /* only the first TM_OLIA_SLOTS are used */
	TM_CONN_COUNTERS(TM_MAX_SUBFLOWS);
	__u32 ell[TM_MAX_SUBFLOWS];      /* l_i [segments] */
	__u32 alpha_q16;                 /* LIA's alpha on the windows of the last computation, for comparison */
	__u32 cwnd_total;
	__u64 updated_ns;
	__u64 acks;
	/* per slot: its last increase with the windows, RTTs and l it was computed from */
	struct tm_calc calc[TM_OLIA_SLOTS];
};

TM_CONN_MAP(tm_olia_conn, struct tm_olia_conn, tm_olia_zero);

TM_DIAG_MAP(tm_olia_diag);

struct tm_olia {
	struct tm_sf_id id;  /* first: tm_remember / tm_conn_release */
	__u32 loss_prev;     /* tp->delivered at the loss before the last */
	__u32 loss_last;     /* tp->delivered at the last loss */
	__s64 acc_q32;       /* accumulated fraction of a segment */
};

SEC("struct_ops/tm_olia_init")
void BPF_PROG(tm_olia_init, struct sock *sk)
{
	struct tm_olia *ca = tm_ca(sk);
	struct tcp_sock *tp = tm_tcp_sk(sk);

	ca->loss_prev = tp->delivered;
	ca->loss_last = tp->delivered;
	ca->acc_q32 = 0;
	ca->id.token = 0;
	ca->id.subflow_id = 0;
}

SEC("struct_ops/tm_olia_cong_avoid")
void BPF_PROG(tm_olia_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tm_tcp_sk(sk);
	struct tm_olia *ca = tm_ca(sk);
	struct tm_olia_conn *c;
	__u32 id, token, slot, i, total = 0, alpha;
	__u32 w[TM_MAX_SUBFLOWS], r[TM_MAX_SUBFLOWS], l[TM_MAX_SUBFLOWS];
	__u64 l1, l2, now;
	__s64 incr, acc;

	/* a window or an acked count no link here can produce comes from elsewhere: reset / ignored,
	 * counted (tm_olia_diag) */
	tm_fix_cwnd(tp, &tm_olia_diag, TM_DIAG_CWND_BIG);
	token = tm_mptcp_token(sk, &id);
	c = 0;
	if (token)
		c = tm_conn_get(&tm_olia_conn, &token, &tm_olia_zero);
	slot = tm_slot_of(id, TM_OLIA_SLOTS);
	if (c) {
		l1 = ca->loss_last - ca->loss_prev;
		l2 = tp->delivered - ca->loss_last;
		TM_CONN_PUBLISH(c, slot, tp, id);
		c->ell[slot] = (__u32)TM_MIN(TM_MAX(l1, l2), 1U << 24);   /* tm_olia_incr_q32 takes l < 2^24 */
		tm_remember(sk, c->cwnd, TM_OLIA_SLOTS, token, id, &tm_olia_diag);
	}
	acked = tm_coupled_acked(tp, acked, c != 0, &tm_olia_diag);
	if (!acked || !c)  /* never 0 with a connection entry; !c for the verifier */
		return;
	/* the inputs copied once (other subflows republish theirs meanwhile), the increase
	 * computed from the copies and stored with exactly them in this slot's record */
#pragma unroll
	for (i = 0; i < TM_MAX_SUBFLOWS; i++) {
		w[i] = i < TM_OLIA_SLOTS ? c->cwnd[i] : 0;
		r[i] = i < TM_OLIA_SLOTS ? c->srtt_us[i] : 0;
		l[i] = i < TM_OLIA_SLOTS ? c->ell[i] : 0;
		total += w[i] && r[i] ? w[i] : 0;
	}
	incr = tm_olia_incr_q32(w, r, l, (int)slot);
	alpha = tm_lia_alpha_q16(w, r);
	now = bpf_ktime_get_ns();
	tm_calc_store(&c->calc[slot & (TM_OLIA_SLOTS - 1)], w, r, l, alpha, incr, slot, now);
	c->alpha_q16 = alpha;
	c->cwnd_total = total;
	c->updated_ns = now;
	c->acks++;

	if (incr > TM_ONE_Q32 || incr < -TM_ONE_Q32)
		tm_diag_inc(&tm_olia_diag, TM_DIAG_INCR_CLAMPED);
	acc = ca->acc_q32;
	tp->snd_cwnd = tm_olia_window(tp->snd_cwnd, tp->snd_cwnd_clamp, &acc, incr, acked);
	ca->acc_q32 = acc;
}

SEC("struct_ops/tm_olia_ssthresh")
__u32 BPF_PROG(tm_olia_ssthresh, struct sock *sk)
{
	struct tm_olia *ca = tm_ca(sk);
	struct tcp_sock *tp = tm_tcp_sk(sk);
	struct tm_olia_conn *c;
	__u32 slot;

	ca->loss_prev = ca->loss_last;
	ca->loss_last = tp->delivered;
	ca->acc_q32 = 0;
	c = tm_conn_lookup(sk, &tm_olia_conn, TM_OLIA_SLOTS, &slot);
	if (c)
		TM_CONN_LOSS(c, slot & (TM_OLIA_SLOTS - 1), tp);
	return tm_coupled_ssthresh(tp, &tm_olia_diag);
}

TM_COUPLED_OPS(tm_olia, struct tm_olia_conn, tm_olia_conn, TM_OLIA_SLOTS, tm_olia_diag);
