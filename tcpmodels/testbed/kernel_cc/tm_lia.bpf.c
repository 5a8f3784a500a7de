/* tm_lia: the Linked Increases Algorithm of RFC 6356 for MPTCP subflows.
 * Each subflow publishes its window and smoothed RTT in the state of its MPTCP
 * connection (a hash map keyed by the connection token); on every ACK in
 * congestion avoidance alpha is recomputed from all subflows of the connection
 * (RFC 6356 Sec. 3) and the window grows by
 *   min(alpha * acked / cwnd_total, acked / cwnd_i)  segments,
 * i.e. the Reno increase with the window max(cwnd_total / alpha, cwnd_i).
 * Loss halves the window (Reno). Slow start is Reno's. A plain TCP socket
 * (no MPTCP token) is Reno. The map (name "tm_lia_conn") is read from user
 * space by tcpmodels.kernel_cc.dump_connections(). */
#include "tm_bpf.h"

struct tm_conn {
	TM_CONN_SLOTS(TM_MAX_SUBFLOWS);
	__u32 alpha_q16;                 /* last alpha computed, * 2^16 */
	__u32 cwnd_total;                /* [segments] at that computation */
	__u64 updated_ns;                /* bpf_ktime_get_ns() of that computation */
	__u64 acks;                      /* ACKs that grew a window in congestion avoidance */
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct tm_conn);
} tm_lia_conn SEC(".maps");

static const struct tm_conn tm_lia_zero;

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
	*slot_out = slot;
	return c;
}

SEC("struct_ops/tm_lia_cong_avoid")
void BPF_PROG(tm_lia_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tm_tcp_sk(sk);
	struct tm_conn *c;
	__u32 slot = 0, total = 0, w[TM_MAX_SUBFLOWS], r[TM_MAX_SUBFLOWS], alpha, i;

	c = tm_publish(sk, &slot);
	if (c) {
		/* alpha from the slots as they are now, stored with them: a dump of the
		 * map shows alpha beside the windows and RTTs it was computed from */
#pragma unroll
		for (i = 0; i < TM_MAX_SUBFLOWS; i++) {
			w[i] = c->cwnd[i];
			r[i] = c->srtt_us[i];
			total += w[i] && r[i] ? w[i] : 0;
		}
		alpha = tm_lia_alpha_q16(w, r);
		c->alpha_q16 = alpha;
		c->cwnd_total = total;
		c->updated_ns = bpf_ktime_get_ns();
	}
	if (!tm_cwnd_limited(tp))
		return;
	if (tm_in_slow_start(tp)) {
		acked = tcp_slow_start(tp, acked);
		if (!acked)
			return;
	}
	if (!c) {
		tcp_cong_avoid_ai(tp, tp->snd_cwnd, acked);
		return;
	}
	c->acks++;
	tcp_cong_avoid_ai(tp, tm_lia_ai_window(tp->snd_cwnd, total, alpha), acked);
}

SEC("struct_ops/tm_lia_ssthresh")
__u32 BPF_PROG(tm_lia_ssthresh, struct sock *sk)
{
	return tm_reno_ssthresh_of(tm_tcp_sk(sk));
}

SEC("struct_ops/tm_lia_undo_cwnd")
__u32 BPF_PROG(tm_lia_undo_cwnd, struct sock *sk)
{
	return tm_reno_undo_of(tm_tcp_sk(sk));
}

SEC("struct_ops/tm_lia_release")
void BPF_PROG(tm_lia_release, struct sock *sk)
{
	tm_conn_release(sk, &tm_lia_conn, TM_MAX_SUBFLOWS);
}

SEC(".struct_ops")
struct tcp_congestion_ops tm_lia = {
	.ssthresh = (void *)tm_lia_ssthresh,
	.cong_avoid = (void *)tm_lia_cong_avoid,
	.undo_cwnd = (void *)tm_lia_undo_cwnd,
	.release = (void *)tm_lia_release,
	.name = "tm_lia",
};
