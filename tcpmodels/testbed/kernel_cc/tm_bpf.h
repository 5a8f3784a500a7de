/* Common declarations of the tm_* BPF congestion controls (struct_ops
 * tcp_congestion_ops). Compiled with: clang -O2 -g -target bpf -I<build dir>
 * where the build directory holds vmlinux.h (from the running kernel's BTF)
 * and tm_params.h (this load's parameters, written by tcpmodels.kernel_cc). */
#ifndef TM_BPF_H
#define TM_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#define TM_MATH_TYPES_DEFINED 1
#include "tm_math.h"
#include "tm_params.h"

char _license[] SEC("license") = "GPL";

/* kfuncs exported to BPF congestion controls (net/ipv4/bpf_tcp_ca.c) */
extern __u32 tcp_slow_start(struct tcp_sock *tp, __u32 acked) __ksym;
extern void tcp_cong_avoid_ai(struct tcp_sock *tp, __u32 w, __u32 acked) __ksym;
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym;

#define TM_MIN(a, b) ((a) < (b) ? (a) : (b))
#define TM_MAX(a, b) ((a) > (b) ? (a) : (b))

static inline struct tcp_sock *tm_tcp_sk(struct sock *sk)
{
	return (struct tcp_sock *)sk;
}

static inline void *tm_ca(struct sock *sk)
{
	return (void *)((struct inet_connection_sock *)sk)->icsk_ca_priv;
}

static inline int tm_in_slow_start(const struct tcp_sock *tp)
{
	return tp->snd_cwnd < tp->snd_ssthresh;
}

/* include/net/tcp.h tcp_is_cwnd_limited(): grow only when the window was the limit
 * (in slow start: while cwnd < 2 * packets out). */
static inline int tm_cwnd_limited(const struct tcp_sock *tp)
{
	if (tp->is_cwnd_limited)
		return 1;
	if (tm_in_slow_start(tp))
		return tp->snd_cwnd < 2 * tp->max_packets_out;
	return 0;
}

/* Reno's halving, never below 2 segments (RFC 5681 eq. (4)). */
static inline __u32 tm_reno_ssthresh_of(const struct tcp_sock *tp)
{
	return TM_MAX(tp->snd_cwnd >> 1U, 2U);
}

/* Reno's per-ACK growth: slow start, then 1/cwnd per acked segment. */
static inline void tm_reno_grow(struct tcp_sock *tp, __u32 acked)
{
	if (tm_in_slow_start(tp)) {
		acked = tcp_slow_start(tp, acked);
		if (!acked)
			return;
	}
	tcp_cong_avoid_ai(tp, tp->snd_cwnd, acked);
}

/* The MPTCP connection token of a subflow (0 for a plain TCP socket), and the
 * subflow's id within its connection. */
static inline __u32 tm_mptcp_token(struct sock *sk, __u32 *subflow_id)
{
	struct tcp_sock *tp = tm_tcp_sk(sk);
	struct inet_connection_sock *icsk = (struct inet_connection_sock *)sk;
	struct mptcp_subflow_context *ctx;

	*subflow_id = 0;
	if (!tp->is_mptcp || !icsk->icsk_ulp_data)
		return 0;
	ctx = bpf_rdonly_cast(icsk->icsk_ulp_data,
			      bpf_core_type_id_kernel(struct mptcp_subflow_context));
	*subflow_id = ctx->subflow_id;
	return ctx->token;
}

/* Reno's undo (tcp_reno_undo_cwnd): the window before the reduction that proved spurious. */
static inline __u32 tm_reno_undo_of(const struct tcp_sock *tp)
{
	return TM_MAX(tp->snd_cwnd, tp->prior_cwnd);
}

/* ---- per-connection state of the coupled controls (tm_lia, tm_olia) ----
 * Each keeps one map entry per MPTCP connection, keyed by the token; its value
 * starts with TM_CONN_SLOTS(n): per subflow slot the window, smoothed RTT and
 * subflow id as the subflow last published them (cwnd 0: the slot is free). The
 * slot is the subflow id mod n (n a power of two). User space reads the arrays
 * by these names (tcpmodels.testbed.kernel_cc.dump_connections). */
#define TM_CONN_SLOTS(n)                                                   \
	__u32 cwnd[n];       /* [segments], at most 0xffff; 0: slot free */ \
	__u32 srtt_us[n];    /* smoothed RTT [us], in [1, 2^22) */          \
	__u32 subflow_id[n]

static inline __u32 tm_slot_of(__u32 subflow_id, __u32 n_slots)
{
	return subflow_id & (n_slots - 1);
}

/* Per slot: the loss events of the subflow (calls of ssthresh: fast recovery or RTO), its
 * retransmission timeouts (set_state to TCP_CA_Loss: every expiry of the RTO timer, backoffs
 * included), tp->delivered at the last loss event and now [segments]. */
#define TM_CONN_COUNTERS(n)                                                  \
	__u32 loss_events[n];                                                \
	__u32 rto_events[n];                                                 \
	__u32 delivered_at_loss[n];                                          \
	__u32 delivered[n]

/* One computation of the coupled increase with the exact inputs it was computed from (the
 * windows, RTTs and l of every slot as that ACK read them), one record per slot, written by
 * that slot's subflow only. seq_begin is incremented (atomically: a full barrier) before the
 * record is written and seq_end after: seq_begin != seq_end while a write is in progress.
 * User space (tcpmodels.testbed.kernel_cc.mapread) copies the entry three times in a row and
 * takes the middle copy's record as consistent iff seq_begin == seq_end, equal in the first
 * and the third copy (no write started or in progress during the middle copy); else it is
 * counted as a torn read. */
struct tm_calc {
	__u32 seq_begin;
	__u32 cwnd[TM_MAX_SUBFLOWS];     /* [segments] as used; 0: slot empty */
	__u32 srtt_us[TM_MAX_SUBFLOWS];  /* [us] as used */
	__u32 ell[TM_MAX_SUBFLOWS];      /* tm_olia: l_p [segments] as used; tm_lia: 0 */
	__s64 incr_q32;                  /* tm_olia: the increase per acked segment * 2^32; tm_lia: 0 */
	__u32 alpha_q16;                 /* tm_lia: alpha * 2^16 (tm_olia: LIA's alpha on the same inputs) */
	__u32 slot;                      /* the slot that computed it */
	__u64 updated_ns;                /* bpf_ktime_get_ns() */
	__u32 seq_end;
	__u32 pad;
};

static inline void tm_calc_open(struct tm_calc *k)
{
	__sync_fetch_and_add(&k->seq_begin, 1);
}

static inline void tm_calc_close(struct tm_calc *k)
{
	__sync_fetch_and_add(&k->seq_end, 1);
}

/* The entry of connection *token in map, created zeroed (from *zero) if absent;
 * 0 if the map is full of live entries (LRU: only when 4096 connections are live). */
static inline void *tm_conn_get(void *map, __u32 *token, const void *zero)
{
	void *c = bpf_map_lookup_elem(map, token);

	if (!c) {
		bpf_map_update_elem(map, token, zero, BPF_NOEXIST);
		c = bpf_map_lookup_elem(map, token);
	}
	return c;
}

/* Publish this subflow's window and RTT in slot `slot` of the TM_CONN_SLOTS arrays (and
 * tp->delivered in TM_CONN_COUNTERS'). */
#define TM_CONN_PUBLISH(c, slot, tp, id)                                                    \
	do {                                                                                 \
		(c)->cwnd[slot] = TM_MIN((tp)->snd_cwnd, 0xffffU);                            \
		(c)->srtt_us[slot] = TM_MIN(TM_MAX((tp)->srtt_us >> 3, 1U), (1U << 22) - 1);  \
		(c)->subflow_id[slot] = (id);                                                 \
		(c)->delivered[slot] = (tp)->delivered;                                       \
	} while (0)

/* Count a loss event of slot `slot` (from ssthresh) with tp->delivered at it. */
#define TM_CONN_LOSS(c, slot, tp)                                                          \
	do {                                                                                 \
		(c)->loss_events[slot]++;                                                     \
		(c)->delivered_at_loss[slot] = (tp)->delivered;                               \
	} while (0)

/* The per-connection map of a coupled control (an LRU hash keyed by the MPTCP token, read from user space
 * by tcpmodels.testbed.kernel_cc: dump_connections, mapread.read_connections) with entries of type
 * conn_type, and zero, the all-zero entry a new connection starts from (tm_conn_get). */
#define TM_CONN_MAP(map, conn_type, zero)                  \
	struct {                                           \
		__uint(type, BPF_MAP_TYPE_LRU_HASH);       \
		__uint(max_entries, 4096);                 \
		__type(key, __u32);                        \
		__type(value, conn_type);                  \
	} map SEC(".maps");                                \
	static const conn_type zero

/* The connection entry of a subflow in map (0 for plain TCP or an absent entry), and its slot. */
static inline void *tm_conn_lookup(struct sock *sk, void *map, __u32 n_slots, __u32 *slot)
{
	__u32 id, token;

	token = tm_mptcp_token(sk, &id);
	*slot = tm_slot_of(id, n_slots);
	return token ? bpf_map_lookup_elem(map, &token) : 0;
}

/* ---- diagnostics of the coupled controls: one array map of counters per program ----
 * (user space: tcpmodels.testbed.kernel_cc.mapread.read_diag, names in mapread.DIAG_COUNTERS, same order) */
#define TM_DIAG_ACKED_BIG 0         /* cong_avoid with acked > TM_ACKED_MAX: ignored */
#define TM_DIAG_CWND_BIG 1          /* cong_avoid found snd_cwnd > TM_WINDOW_MAX: reset */
#define TM_DIAG_SSTHRESH_BIG 2      /* ssthresh found snd_cwnd > TM_WINDOW_MAX: halved a plausible one */
#define TM_DIAG_UNDO_BIG 3          /* undo would restore a window > TM_WINDOW_MAX */
#define TM_DIAG_INCR_CLAMPED 4      /* OLIA: |increase| > 1 segment per acked segment, bounded */
#define TM_DIAG_SEEN 5              /* subflows whose token was remembered (first publish) */
#define TM_DIAG_RELEASE 6           /* release calls */
#define TM_DIAG_RELEASE_NO_TOKEN 7  /* ... that found no token at release, nor a remembered one */
#define TM_DIAG_RELEASE_REMEMBERED 8 /* ... that found no token at release and used the remembered one */
#define TM_DIAG_RELEASE_NO_ENTRY 9  /* ... with a token whose entry was gone */
#define TM_DIAG_RELEASE_DELETED 10  /* ... that deleted the entry (the connection's last subflow) */
#define TM_DIAG_TOKEN_CHANGED 11    /* ... whose token differed from the remembered one */
#define TM_DIAG_CWND_BIG_STATE 12   /* a change of CA state found snd_cwnd > TM_WINDOW_MAX: reset */
#define TM_DIAG_ID_CHANGED 13       /* a subflow published under another subflow id than before */
#define TM_DIAG_N 14

#define TM_DIAG_MAP(name)                                  \
	struct {                                           \
		__uint(type, BPF_MAP_TYPE_ARRAY);          \
		__uint(max_entries, TM_DIAG_N);            \
		__type(key, __u32);                        \
		__type(value, __u64);                      \
	} name SEC(".maps")

static inline void tm_diag_inc(void *diag, __u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(diag, &idx);

	if (v)
		__sync_fetch_and_add(v, 1);
}

/* The window to reason from: snd_cwnd, or, above TM_WINDOW_MAX (a window no link here can hold,
 * handed over by the kernel: counted in diag[idx]), the most segments recently in flight
 * (max_packets_out) within [2, TM_WINDOW_MAX]. */
static inline __u32 tm_plausible_cwnd(const struct tcp_sock *tp, void *diag, __u32 idx)
{
	__u32 c = tp->snd_cwnd;

	if (c <= TM_WINDOW_MAX)
		return c;
	tm_diag_inc(diag, idx);
	return TM_MIN(TM_MAX(tp->max_packets_out, 2U), TM_WINDOW_MAX);
}

/* Reset an implausible window (tm_plausible_cwnd) in place: a window the kernel set (e.g. at the end
 * of a recovery, from ssthresh) is seen at the next change of CA state or ACK. */
static inline void tm_fix_cwnd(struct tcp_sock *tp, void *diag, __u32 idx)
{
	__u32 c = tm_plausible_cwnd(tp, diag, idx);

	if (c != tp->snd_cwnd)
		tp->snd_cwnd = c;
}

/* The ssthresh of a coupled control: Reno's halving of a plausible window. */
static inline __u32 tm_coupled_ssthresh(const struct tcp_sock *tp, void *diag)
{
	return TM_MAX(tm_plausible_cwnd(tp, diag, TM_DIAG_SSTHRESH_BIG) >> 1U, 2U);
}

/* Reno's undo, never to a window above TM_WINDOW_MAX. */
static inline __u32 tm_coupled_undo(const struct tcp_sock *tp, void *diag)
{
	__u32 c = tm_reno_undo_of(tp);

	if (c <= TM_WINDOW_MAX)
		return c;
	tm_diag_inc(diag, TM_DIAG_UNDO_BIG);
	return TM_MIN(TM_MAX(tp->max_packets_out, 2U), TM_WINDOW_MAX);
}

/* The start of a coupled control's cong_avoid, after it has published its subflow: an acked count
 * above TM_ACKED_MAX is ignored (counted in diag), a window that was not the limit does not grow,
 * slow start is Reno's, and a plain TCP socket (coupled 0: no connection entry) grows as Reno in
 * congestion avoidance. Returns the acked segments left for the coupled increase (0: none). */
static __always_inline __u32 tm_coupled_acked(struct tcp_sock *tp, __u32 acked, int coupled, void *diag)
{
	if (acked > TM_ACKED_MAX) {
		tm_diag_inc(diag, TM_DIAG_ACKED_BIG);
		return 0;
	}
	if (!tm_cwnd_limited(tp))
		return 0;
	if (tm_in_slow_start(tp)) {
		acked = tcp_slow_start(tp, acked);
		if (!acked)
			return 0;
	}
	if (!coupled) {
		tcp_cong_avoid_ai(tp, tp->snd_cwnd, acked);
		return 0;
	}
	return acked;
}

/* Record one computation of the coupled increase in k (struct tm_calc) with the inputs it used:
 * the windows w, RTTs r and (tm_olia) l of every slot, l 0 for tm_lia (its records hold 0). */
static __always_inline void tm_calc_store(struct tm_calc *k, const __u32 *w, const __u32 *r, const __u32 *l,
					  __u32 alpha_q16, __s64 incr_q32, __u32 slot, __u64 now)
{
	__u32 i;

	tm_calc_open(k);
#pragma unroll
	for (i = 0; i < TM_MAX_SUBFLOWS; i++) {
		k->cwnd[i] = w[i];
		k->srtt_us[i] = r[i];
		k->ell[i] = l ? l[i] : 0;
	}
	k->alpha_q16 = alpha_q16;
	k->incr_q32 = incr_q32;
	k->slot = slot;
	k->updated_ns = now;
	tm_calc_close(k);
}

/* What a coupled control remembers per subflow socket (first in its icsk_ca_priv state): the
 * connection token and subflow id it last published under, for release, when the kernel may
 * have detached the subflow's MPTCP context already. */
struct tm_sf_id {
	__u32 token;
	__u32 subflow_id;
};

/* Remember (token, id) of this subflow, which has just published in slot tm_slot_of(id) of the
 * connection entry whose cwnd array is `cwnd`; a slot it published in under an earlier id is freed
 * (else only the new slot would be freed at release and the entry would outlive the connection). */
static inline void tm_remember(struct sock *sk, __u32 *cwnd, __u32 n_slots, __u32 token, __u32 id, void *diag)
{
	struct tm_sf_id *m = tm_ca(sk);
	__u32 old;

	if (!m->token) {
		tm_diag_inc(diag, TM_DIAG_SEEN);
	} else if (m->token == token && m->subflow_id != id) {
		tm_diag_inc(diag, TM_DIAG_ID_CHANGED);
		old = tm_slot_of(m->subflow_id, n_slots);
		if (old != tm_slot_of(id, n_slots))
			cwnd[old & (TM_MAX_SUBFLOWS - 1)] = 0;
	}
	m->token = token;
	m->subflow_id = id;
}

/* A closing subflow leaves its connection (the `release` callback: when the kernel destroys or
 * disconnects the subflow socket): its slot is freed, and the entry goes with the last subflow.
 * The token is the subflow context's, or, if that is gone, the one remembered at the last publish.
 * Needs the cwnd array first in the map value (TM_CONN_SLOTS at the start of the struct). */
static inline void tm_conn_release(struct sock *sk, void *map, __u32 n_slots, void *diag)
{
	struct tm_sf_id *m = tm_ca(sk);
	__u32 *cwnd, id, token, i, left = 0;

	tm_diag_inc(diag, TM_DIAG_RELEASE);
	token = tm_mptcp_token(sk, &id);
	if (!token) {
		if (!m->token) {
			tm_diag_inc(diag, TM_DIAG_RELEASE_NO_TOKEN);
			return;
		}
		tm_diag_inc(diag, TM_DIAG_RELEASE_REMEMBERED);
		token = m->token;
		id = m->subflow_id;
	} else if (m->token && m->token != token) {
		tm_diag_inc(diag, TM_DIAG_TOKEN_CHANGED);
	}
	m->token = 0;
	cwnd = bpf_map_lookup_elem(map, &token);
	if (!cwnd) {
		tm_diag_inc(diag, TM_DIAG_RELEASE_NO_ENTRY);
		return;
	}
	/* Free the slot with an atomic add (BPF XADD: `lock add` in the x86 JIT, a full barrier), not a
	 * plain store. Two subflows of a connection can be released at once on two CPUs, each freeing
	 * its slot and then reading the other's: with plain stores each store can wait in its CPU's
	 * store buffer while that CPU reads the other slot, both read the other as still in use, and
	 * neither deletes the entry, which then outlives the connection with every slot free (seen:
	 * 2 such entries among about 640 tm_lia connections of the P2 campaign, 2026-11-27). With the
	 * store drained before the reads, at least one of the two sees both slots free. Only this
	 * subflow writes its slot, so adding minus its value leaves 0. (A JIT without a barrier in a
	 * non-fetching atomic add, e.g. arm64 with LSE, would need an atomic exchange: -mcpu=v3.) */
	{
		__u32 *mine = &cwnd[tm_slot_of(id, n_slots) & (TM_MAX_SUBFLOWS - 1)];

		__sync_fetch_and_add(mine, -*mine);
	}
#pragma unroll
	for (i = 0; i < TM_MAX_SUBFLOWS; i++)
		left += i < n_slots ? cwnd[i] : 0;
	if (!left) {
		bpf_map_delete_elem(map, &token);
		tm_diag_inc(diag, TM_DIAG_RELEASE_DELETED);
	}
}

/* The callbacks the coupled controls (tm_lia, tm_olia) share, and their struct_ops table; prog##_init,
 * prog##_ssthresh and prog##_cong_avoid are the program's own. The connection map `map` has entries of
 * conn_type of which the first n_slots slots are used; diag is the program's TM_DIAG_MAP.
 * set_state: a retransmission timeout (tcp_enter_loss sets TCP_CA_Loss on every expiry of the RTO timer)
 * is counted in the slot; undo_cwnd: tm_coupled_undo; release: tm_conn_release. */
#define TM_COUPLED_OPS(prog, conn_type, map, n_slots, diag)                                  \
	SEC("struct_ops/" #prog "_set_state")                                                 \
	void BPF_PROG(prog##_set_state, struct sock *sk, __u8 new_state)                      \
	{                                                                                     \
		conn_type *c;                                                                 \
		__u32 slot;                                                                   \
                                                                                              \
		tm_fix_cwnd(tm_tcp_sk(sk), &diag, TM_DIAG_CWND_BIG_STATE);                    \
		if (new_state != TCP_CA_Loss)                                                 \
			return;                                                               \
		c = tm_conn_lookup(sk, &map, n_slots, &slot);                                 \
		if (c)                                                                        \
			c->rto_events[slot & (n_slots - 1)]++;                                \
	}                                                                                     \
                                                                                              \
	SEC("struct_ops/" #prog "_undo_cwnd")                                                 \
	__u32 BPF_PROG(prog##_undo_cwnd, struct sock *sk)                                     \
	{                                                                                     \
		return tm_coupled_undo(tm_tcp_sk(sk), &diag);                                 \
	}                                                                                     \
                                                                                              \
	SEC("struct_ops/" #prog "_release")                                                   \
	void BPF_PROG(prog##_release, struct sock *sk)                                        \
	{                                                                                     \
		tm_conn_release(sk, &map, n_slots, &diag);                                    \
	}                                                                                     \
                                                                                              \
	SEC(".struct_ops")                                                                    \
	struct tcp_congestion_ops prog = {                                                    \
		.init = (void *)prog##_init,                                                  \
		.ssthresh = (void *)prog##_ssthresh,                                          \
		.cong_avoid = (void *)prog##_cong_avoid,                                      \
		.set_state = (void *)prog##_set_state,                                        \
		.undo_cwnd = (void *)prog##_undo_cwnd,                                        \
		.release = (void *)prog##_release,                                            \
		.name = #prog,                                                                \
	}

#endif /* TM_BPF_H */
