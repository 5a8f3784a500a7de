/* tm_lia: the Linked Increases Algorithm of RFC 6356 for MPTCP subflows.
 * Each subflow publishes its window and smoothed RTT in the state of its MPTCP
 * connection (a hash map keyed by the connection token); on every ACK in
 * congestion avoidance alpha is recomputed from all subflows of the connection
 * (RFC 6356 Sec. 3) and the window grows by
 *   min(alpha * acked / cwnd_total, acked / cwnd_i)  segments,
 * i.e. the Reno increase with the window max(cwnd_total / alpha, cwnd_i).
 * Loss halves the window (Reno). Slow start is Reno's. A plain TCP socket
 * (no MPTCP token) is Reno. The map (name "tm_lia_conn") is read from user
 * space by tcpmodels.testbed.kernel_cc (dump_connections, mapread.read_connections):
 * per slot the published window and RTT, loss and timeout counters, and the last
 * alpha the slot computed with the windows and RTTs it was computed from (tm_calc).
 * A window above TM_WINDOW_MAX (65535 segments, tm_math.h) or an acked count above TM_ACKED_MAX,
 * which no link here produces, is reset / ignored, and counted in the array map "tm_lia_diag"
 * (with how each release found its connection; tcpmodels.testbed.kernel_cc.read_diag). */
#include "tm_bpf.h"

struct tm_conn {
	TM_CONN_SLOTS(TM_MAX_SUBFLOWS);
	TM_CONN_COUNTERS(TM_MAX_SUBFLOWS);
	__u32 alpha_q16;                 /* last alpha computed (by any slot), * 2^16 */
	__u32 cwnd_total;                /* [segments] at that computation */
	__u64 updated_ns;                /* bpf_ktime_get_ns() of that computation */
	__u64 acks;                      /* ACKs that grew a window in congestion avoidance */
	struct tm_calc calc[TM_MAX_SUBFLOWS];
};

TM_CONN_MAP(tm_lia_conn, struct tm_conn, tm_lia_zero);

TM_DIAG_MAP(tm_lia_diag);

/* per socket (icsk_ca_priv) */
struct tm_lia {
	struct tm_sf_id id;  /* first: tm_remember / tm_conn_release */
};

SEC("struct_ops/tm_lia_init")
void BPF_PROG(tm_lia_init, struct sock *sk)
{
	struct tm_lia *ca = tm_ca(sk);

	ca->id.token = 0;
	ca->id.subflow_id = 0;
}

/* Publish this subflow's window and RTT; returns the connection's state (0: plain TCP). */
static inline struct tm_conn *tm_publish(struct sock *sk, __u32 *slot_out)
{
	struct tcp_sock *tp = tm_tcp_sk(sk);
	struct tm_conn *c;
	__u32 id, token, slot;

	token = tm_mptcp_token(sk, &id);
	if (!token)
		return 0;
	c = tm_conn_get(&tm_lia_conn, &token, &tm_lia_zero);
	if (!c)
		return 0;
	slot = tm_slot_of(id, TM_MAX_SUBFLOWS);
	TM_CONN_PUBLISH(c, slot, tp, id);
	tm_remember(sk, c->cwnd, TM_MAX_SUBFLOWS, token, id, &tm_lia_diag);
	*slot_out = slot;
	return c;
}

SEC("struct_ops/tm_lia_cong_avoid")
void BPF_PROG(tm_lia_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tm_tcp_sk(sk);
	struct tm_conn *c;
	__u32 slot = 0, total = 0, w[TM_MAX_SUBFLOWS], r[TM_MAX_SUBFLOWS], alpha, i;
	__u64 now;

	/* a window or an acked count no link here can produce comes from elsewhere: reset / ignored,
	 * counted (tm_lia_diag) */
	tm_fix_cwnd(tp, &tm_lia_diag, TM_DIAG_CWND_BIG);
	c = tm_publish(sk, &slot);
	if (c) {
		/* alpha from the slots as they are now (copied once: another subflow may
		 * republish meanwhile), stored with exactly these inputs in this slot's record */
#pragma unroll
		for (i = 0; i < TM_MAX_SUBFLOWS; i++) {
			w[i] = c->cwnd[i];
			r[i] = c->srtt_us[i];
			total += w[i] && r[i] ? w[i] : 0;
		}
		alpha = tm_lia_alpha_q16(w, r);
		now = bpf_ktime_get_ns();
		c->alpha_q16 = alpha;
		c->cwnd_total = total;
		c->updated_ns = now;
		tm_calc_store(&c->calc[slot & (TM_MAX_SUBFLOWS - 1)], w, r, 0, alpha, 0, slot, now);
	}
	acked = tm_coupled_acked(tp, acked, c != 0, &tm_lia_diag);
	if (!acked || !c)  /* never 0 with a connection entry; !c for the verifier */
		return;
	c->acks++;
	tcp_cong_avoid_ai(tp, tm_lia_ai_window(tp->snd_cwnd, total, alpha), acked);
}

SEC("struct_ops/tm_lia_ssthresh")
__u32 BPF_PROG(tm_lia_ssthresh, struct sock *sk)
{
	struct tcp_sock *tp = tm_tcp_sk(sk);
	struct tm_conn *c;
	__u32 slot;

	c = tm_conn_lookup(sk, &tm_lia_conn, TM_MAX_SUBFLOWS, &slot);
	if (c)
		TM_CONN_LOSS(c, slot & (TM_MAX_SUBFLOWS - 1), tp);
	return tm_coupled_ssthresh(tp, &tm_lia_diag);
}

TM_COUPLED_OPS(tm_lia, struct tm_conn, tm_lia_conn, TM_MAX_SUBFLOWS, tm_lia_diag);
