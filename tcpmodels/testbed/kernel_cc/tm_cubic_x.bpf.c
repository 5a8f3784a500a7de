/* tm_cubic_x: CUBIC (RFC 9438) whose K is scaled by an RTT-dependent factor,
 * the proposal of Kozu & Yamaguchi (paper P3, eq. (4)):
 *   K = cbrt(xf(RTT) * (W_max - cwnd) / C),  xf = 1 | x(RTT) | 1/x(RTT)
 * for the readings none / multiply / divide. xf comes from a table on a log grid
 * of the flow's minimum RTT, written per load by tcpmodels.kernel_cc into
 * tm_params.h (TM_XTAB), with C (TM_C_Q10) and beta_cubic (TM_BETA_Q10).
 *
 * With xf == 1 it follows the kernel's net/ipv4/tcp_cubic.c (read from a 6.x
 * mainline copy, v2.3 with __bpf_kfunc; the kernel here is 6.18) in:
 *   - the cubic and Reno-friendly regions, fast convergence, ssthresh = beta * cwnd;
 *   - the cubic target recomputed at most once per jiffy, the Reno-friendly
 *     estimate on every ACK (bictcp_update), its "while (ack_cnt > delta)" counting;
 *   - restart after idle (cubictcp_cwnd_event, CA_EVENT_TX_START): the epoch start
 *     moves forward by the idle time (now - lsndtime), never past now, so idle time
 *     is not counted as growth;
 *   - delay samples discarded for TM_DELAY_DISCARD_US after an epoch starts
 *     ("right after fast recovery", cubictcp_acked);
 *   - HyStart's delay half (hystart_update): a new round when snd_una passes the
 *     round's end, the round's minimum RTT lowered by every sample (not only the
 *     first TM_HYSTART_MIN_SAMPLES), exit once TM_HYSTART_MIN_SAMPLES were seen if
 *     it exceeds delay_min + clamp(delay_min / 8, TM_HYSTART_DELAY_MIN_US,
 *     TM_HYSTART_DELAY_MAX_US), only while cwnd >= TM_HYSTART_LOW_WINDOW;
 *   - after an RTO (TCP_CA_Loss) everything restarts, delay_min included.
 * Differences that remain (each a choice, not an oversight):
 *   1. HyStart's ACK-train half is left out (the kernel's hystart_detect = 3 runs
 *      both); with ACKs spaced more than hystart_ack_delta_us = 2 ms apart (a
 *      bottleneck below ~6 Mbit/s with 1500-byte packets) the kernel's never fires.
 *   2. Time runs on the microsecond clock (tcp_mstamp); the kernel's epoch and K
 *      run on jiffies (CONFIG_HZ, TM_USEC_PER_JIFFY below): t - K differs by less
 *      than one jiffy.
 *   3. K comes from tm_math.h's cube root with the x(RTT) factor, not the
 *      kernel's cube_factor table (error measured by kernel_cc.arithmetic).
 *   4. No initial_ssthresh (the kernel's default is 0: none either). */
#include "tm_bpf.h"

#ifndef TM_C_Q10
#define TM_C_Q10 410            /* 0.4 segments/s^3, as the kernel's bic_scale 41 */
#endif
#ifndef TM_BETA_Q10
#define TM_BETA_Q10 717         /* fraction of the window kept, as the kernel */
#endif
#ifndef TM_FAST_CONVERGENCE
#define TM_FAST_CONVERGENCE 1
#endif
#ifndef TM_HYSTART
#define TM_HYSTART 1
#endif
#ifndef TM_XTAB_VALUES
#define TM_XTAB_VALUES { [0 ... TM_XTAB_LEN - 1] = 1u << 16 }
#endif

#define TM_HYSTART_LOW_WINDOW 16          /* hystart_low_window [segments] */
#define TM_HYSTART_MIN_SAMPLES 8          /* HYSTART_MIN_SAMPLES */
#define TM_HYSTART_DELAY_MIN_US 4000      /* HYSTART_DELAY_MIN [us] */
#define TM_HYSTART_DELAY_MAX_US 16000     /* HYSTART_DELAY_MAX [us] */
#define TM_USEC_PER_SEC 1000000
#define TM_DELAY_DISCARD_US TM_USEC_PER_SEC   /* cubictcp_acked: HZ jiffies = 1 s */
#define TM_USEC_PER_JIFFY ((__u32)TM_USEC_PER_SEC / (__u32)CONFIG_HZ)

extern int CONFIG_HZ __kconfig;

const volatile __u32 tm_xtab[TM_XTAB_LEN] = TM_XTAB_VALUES;

struct tm_cubic {
	__u32 cnt;              /* grow cwnd by one every cnt acked segments */
	__u32 last_max_cwnd;    /* W_max [segments] */
	__u32 last_cwnd;
	__u32 last_jiffies;     /* jiffy of the last cubic recomputation */
	__u32 origin_point;     /* [segments] */
	__u32 k_hz;             /* K [1/1024 s] of the current epoch */
	__u32 delay_min_us;     /* minimum RTT seen [us] */
	__u32 epoch_start_us;   /* 0: no epoch */
	__u32 ack_cnt;
	__u32 tcp_cwnd;         /* Reno-friendly estimate [segments] */
	__u32 xf_q16;           /* the x(RTT) factor of the current epoch */
	__u32 found;            /* HyStart left slow start */
	__u32 end_seq;          /* end of the current HyStart round */
	__u32 curr_rtt_us;
	__u32 sample_cnt;
};

static inline __u32 tm_now_us(struct tcp_sock *tp)
{
	__u32 now = (__u32)tp->tcp_mstamp;
	return now ? now : 1;
}

static inline void tm_cubic_reset(struct tm_cubic *ca)
{
	ca->cnt = 0;
	ca->last_max_cwnd = 0;
	ca->last_cwnd = 0;
	ca->last_jiffies = 0;
	ca->origin_point = 0;
	ca->k_hz = 0;
	ca->epoch_start_us = 0;
	ca->ack_cnt = 0;
	ca->tcp_cwnd = 0;
	ca->delay_min_us = 0;   /* the kernel's bictcp_reset clears delay_min too */
	ca->found = 0;
}

static inline void tm_hystart_round(struct tcp_sock *tp, struct tm_cubic *ca)
{
	ca->end_seq = tp->snd_nxt;
	ca->curr_rtt_us = ~0U;
	ca->sample_cnt = 0;
}

SEC("struct_ops/tm_cubic_x_init")
void BPF_PROG(tm_cubic_x_init, struct sock *sk)
{
	struct tm_cubic *ca = tm_ca(sk);

	tm_cubic_reset(ca);
	ca->xf_q16 = 1u << 16;
	tm_hystart_round(tm_tcp_sk(sk), ca);
}

static inline void tm_cubic_update(struct tcp_sock *tp, struct tm_cubic *ca, __u32 acked)
{
	__u32 cwnd = tp->snd_cwnd, now = tm_now_us(tp), jiffies = (__u32)bpf_jiffies64(), cnt, max_cnt;
	__u64 t_us, t_hz, offs, delta, target, reno_step;

	ca->ack_cnt += acked;
	/* the cubic target at most once per jiffy; the Reno-friendly part on every ACK */
	if (ca->epoch_start_us && jiffies == ca->last_jiffies)
		goto reno_friendly;
	ca->last_cwnd = cwnd;
	ca->last_jiffies = jiffies;

	if (ca->epoch_start_us == 0) {
		ca->epoch_start_us = now;
		ca->ack_cnt = acked;
		ca->tcp_cwnd = cwnd;
		ca->xf_q16 = ca->delay_min_us ? tm_xtab_lookup((const __u32 *)tm_xtab, ca->delay_min_us)
					      : (1u << 16);
		if (ca->last_max_cwnd <= cwnd) {
			ca->k_hz = 0;
			ca->origin_point = cwnd;
		} else {
			ca->k_hz = tm_cubic_k_hz(ca->last_max_cwnd, cwnd, TM_C_Q10, ca->xf_q16);
			ca->origin_point = ca->last_max_cwnd;
		}
	}

	/* time since the epoch, one minimum RTT ahead (the window acts one RTT later) */
	t_us = (__u64)(now - ca->epoch_start_us) + ca->delay_min_us;
	t_hz = (t_us << 10) / 1000000;
	if (t_hz < ca->k_hz) {
		offs = ca->k_hz - t_hz;
		delta = tm_cubic_delta_segments(offs, TM_C_Q10);
		target = delta < ca->origin_point ? ca->origin_point - delta : 0;
	} else {
		offs = t_hz - ca->k_hz;
		delta = tm_cubic_delta_segments(offs, TM_C_Q10);
		target = ca->origin_point + delta;
	}
	if (target > cwnd)
		cnt = cwnd / (__u32)(target - cwnd);
	else
		cnt = 100 * cwnd;        /* very slow growth at the plateau */
	if (ca->last_max_cwnd == 0 && cnt > 20)
		cnt = 20;                /* no loss yet: at least 5% per RTT */
	ca->cnt = cnt;

reno_friendly:
	/* Reno-friendly region (RFC 9438 Sec. 4.3): the window an AIMD flow with
	 * alpha = 3(1-beta)/(1+beta) would have; reno_step acked segments per segment
	 * of that window, in the kernel's 1/8 units; "while (ack_cnt > reno_step)". */
	reno_step = ((__u64)cwnd * ((8u * (1024 + TM_BETA_Q10)) / 3 / (1024 - TM_BETA_Q10))) >> 3;
	if (reno_step && ca->ack_cnt > reno_step) {
		__u32 n = (ca->ack_cnt - 1) / (__u32)reno_step;
		ca->ack_cnt -= n * (__u32)reno_step;
		ca->tcp_cwnd += n;
	}
	cnt = ca->cnt;
	if (ca->tcp_cwnd > cwnd) {
		max_cnt = cwnd / (ca->tcp_cwnd - cwnd);
		if (cnt > max_cnt)
			cnt = max_cnt;
	}
	ca->cnt = cnt < 2 ? 2 : cnt;     /* at most 1.5 cwnd per RTT */
}

SEC("struct_ops/tm_cubic_x_cong_avoid")
void BPF_PROG(tm_cubic_x_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tm_tcp_sk(sk);
	struct tm_cubic *ca = tm_ca(sk);

	if (!tm_cwnd_limited(tp))
		return;
	if (tm_in_slow_start(tp)) {
		acked = tcp_slow_start(tp, acked);
		if (!acked)
			return;
	}
	tm_cubic_update(tp, ca, acked);
	tcp_cong_avoid_ai(tp, ca->cnt, acked);
}

SEC("struct_ops/tm_cubic_x_ssthresh")
__u32 BPF_PROG(tm_cubic_x_ssthresh, struct sock *sk)
{
	struct tcp_sock *tp = tm_tcp_sk(sk);
	struct tm_cubic *ca = tm_ca(sk);
	__u32 cwnd = tp->snd_cwnd;

	ca->epoch_start_us = 0;
	if (TM_FAST_CONVERGENCE && cwnd < ca->last_max_cwnd)
		ca->last_max_cwnd = (cwnd * (1024 + TM_BETA_Q10)) / (2 * 1024);
	else
		ca->last_max_cwnd = cwnd;
	return TM_MAX((cwnd * TM_BETA_Q10) >> 10, 2U);
}

SEC("struct_ops/tm_cubic_x_set_state")
void BPF_PROG(tm_cubic_x_set_state, struct sock *sk, __u8 new_state)
{
	struct tm_cubic *ca = tm_ca(sk);

	if (new_state == TCP_CA_Loss) {
		tm_cubic_reset(ca);
		tm_hystart_round(tm_tcp_sk(sk), ca);
	}
}

SEC("struct_ops/tm_cubic_x_pkts_acked")
void BPF_PROG(tm_cubic_x_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct tcp_sock *tp = tm_tcp_sk(sk);
	struct tm_cubic *ca = tm_ca(sk);
	__u32 delay, thresh;

	if (sample->rtt_us < 0)
		return;
	/* discard delay samples right after fast recovery */
	if (ca->epoch_start_us && (__s32)(tm_now_us(tp) - ca->epoch_start_us) < TM_DELAY_DISCARD_US)
		return;
	delay = sample->rtt_us ? sample->rtt_us : 1;
	if (ca->delay_min_us == 0 || ca->delay_min_us > delay)
		ca->delay_min_us = delay;
	if (!TM_HYSTART || ca->found || !tm_in_slow_start(tp) || tp->snd_cwnd < TM_HYSTART_LOW_WINDOW)
		return;
	if ((__s32)(tp->snd_una - ca->end_seq) > 0)
		tm_hystart_round(tp, ca);
	if (delay < ca->curr_rtt_us)
		ca->curr_rtt_us = delay;
	if (ca->sample_cnt < TM_HYSTART_MIN_SAMPLES) {
		ca->sample_cnt++;
		return;
	}
	thresh = ca->delay_min_us >> 3;
	thresh = thresh < TM_HYSTART_DELAY_MIN_US ? TM_HYSTART_DELAY_MIN_US
		 : (thresh > TM_HYSTART_DELAY_MAX_US ? TM_HYSTART_DELAY_MAX_US : thresh);
	if (ca->curr_rtt_us > ca->delay_min_us + thresh) {
		ca->found = 1;
		tp->snd_ssthresh = tp->snd_cwnd;
	}
}

SEC("struct_ops/tm_cubic_x_cwnd_event")
void BPF_PROG(tm_cubic_x_cwnd_event, struct sock *sk, enum tcp_ca_event event)
{
	struct tcp_sock *tp = tm_tcp_sk(sk);
	struct tm_cubic *ca = tm_ca(sk);
	__u32 now;
	__s32 idle_jiffies;

	if (event != CA_EVENT_TX_START || !ca->epoch_start_us)
		return;
	/* application limited (idle) for a while: shift the epoch so that cwnd keeps to the curve */
	idle_jiffies = (__s32)((__u32)bpf_jiffies64() - tp->lsndtime);
	if (idle_jiffies <= 0)
		return;
	now = tm_now_us(tp);
	ca->epoch_start_us += (__u32)idle_jiffies * TM_USEC_PER_JIFFY;
	if ((__s32)(ca->epoch_start_us - now) > 0)
		ca->epoch_start_us = now;
}

SEC("struct_ops/tm_cubic_x_undo_cwnd")
__u32 BPF_PROG(tm_cubic_x_undo_cwnd, struct sock *sk)
{
	return tm_reno_undo_of(tm_tcp_sk(sk));
}

SEC(".struct_ops")
struct tcp_congestion_ops tm_cubic_x = {
	.init = (void *)tm_cubic_x_init,
	.ssthresh = (void *)tm_cubic_x_ssthresh,
	.cong_avoid = (void *)tm_cubic_x_cong_avoid,
	.set_state = (void *)tm_cubic_x_set_state,
	.pkts_acked = (void *)tm_cubic_x_pkts_acked,
	.cwnd_event = (void *)tm_cubic_x_cwnd_event,
	.undo_cwnd = (void *)tm_cubic_x_undo_cwnd,
	.name = "tm_cubic_x",
};
