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

#endif /* TM_BPF_H */
