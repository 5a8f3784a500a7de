/* tm_reno: Reno (RFC 5681) written out as a BPF congestion control, the
 * reference that proves the harness: it must behave like the kernel's "reno". */
#include "tm_bpf.h"

SEC("struct_ops/tm_reno_ssthresh")
__u32 BPF_PROG(tm_reno_ssthresh, struct sock *sk)
{
	return tm_reno_ssthresh_of(tm_tcp_sk(sk));
}

SEC("struct_ops/tm_reno_cong_avoid")
void BPF_PROG(tm_reno_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tm_tcp_sk(sk);

	if (!tm_cwnd_limited(tp))
		return;
	tm_reno_grow(tp, acked);
}

SEC("struct_ops/tm_reno_undo_cwnd")
__u32 BPF_PROG(tm_reno_undo_cwnd, struct sock *sk)
{
	return tm_reno_undo_of(tm_tcp_sk(sk));
}

SEC(".struct_ops")
struct tcp_congestion_ops tm_reno = {
	.ssthresh = (void *)tm_reno_ssthresh,
	.cong_avoid = (void *)tm_reno_cong_avoid,
	.undo_cwnd = (void *)tm_reno_undo_cwnd,
	.name = "tm_reno",
};
