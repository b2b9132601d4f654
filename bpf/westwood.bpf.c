// SPDX-License-Identifier: GPL-2.0
/*
 * haslab_westwood: Westwood+ as a BPF struct_ops (tcp_congestion_ops) for live mode, mirroring the
 * simulator's crates/haslab-core/src/tcp/cc/westwood.rs (its Linux estimator with its default
 * clock = "jiffies"); docs/live.md lists the differences. Source: Grieco & Mascolo, CCR 2004, as
 * Linux net/ipv4/tcp_westwood.c (not built into this kernel), in the kernel's own units: times in
 * jiffies (bpf_jiffies64() for tcp_jiffies32, the ACK sample's rtt_us rounded up to whole jiffies
 * as usecs_to_jiffies does) and the rate in bytes per jiffy. HZ is the running kernel's CONFIG_HZ
 * (read by libbpf from its config; live mode checks it equals the scenario's hz). Constants:
 * TCP_WESTWOOD_RTT_MIN = HZ/20 jiffies (shortest estimation window, 50 ms), TCP_WESTWOOD_INIT_RTT
 * = 20·HZ jiffies (20 s); the two cascaded filters weigh the old value 7/8.
 */
#include "haslab_common.h"

char _license[] SEC("license") = "GPL";

extern unsigned int CONFIG_HZ __kconfig;

#define WW_RTT_MIN (CONFIG_HZ / 20)
#define WW_INIT_RTT (20 * CONFIG_HZ)

struct westwood {
	__u64 bw_ns_est;   /* first filter, bytes per jiffy */
	__u64 bw_est;      /* second filter, bytes per jiffy */
	__u32 win_start;   /* jiffies */
	__u64 bk;          /* bytes acknowledged in the current window */
	__u32 snd_una;
	__u32 cumul_ack;
	__u32 accounted;
	__u32 rtt;         /* jiffies */
	__u32 rtt_min;     /* jiffies */
	__u8 first_ack;
	__u8 reset_rtt_min;
};

/* tcp_jiffies32 */
static __always_inline __u32 ww_jiffies32(void)
{
	return (__u32)bpf_jiffies64();
}

SEC("struct_ops/ww_init")
void BPF_PROG(ww_init, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct westwood *w = ca_priv(sk);

	__builtin_memset(w, 0, sizeof(*w));
	w->rtt_min = w->rtt = WW_INIT_RTT;
	w->reset_rtt_min = 1;
	w->win_start = ww_jiffies32();
	w->snd_una = tp->snd_una;
	w->first_ack = 1;
}

static __always_inline __u64 ww_filter(__u64 a, __u64 b)
{
	return (7 * a + b) >> 3;
}

static __always_inline void ww_update_window(struct sock *sk, struct westwood *w)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u32 now = ww_jiffies32();
	__s32 delta = (__s32)(now - w->win_start);
	__u32 win = max_u32(w->rtt, WW_RTT_MIN);
	__u64 sample;

	if (w->first_ack) {
		w->snd_una = tp->snd_una;
		w->first_ack = 0;
	}
	if (w->rtt && delta > 0 && (__u32)delta > win) {
		sample = w->bk / (__u32)delta;
		if (w->bw_ns_est == 0 && w->bw_est == 0) {
			w->bw_ns_est = sample;
			w->bw_est = sample;
		} else {
			w->bw_ns_est = ww_filter(w->bw_ns_est, sample);
			w->bw_est = ww_filter(w->bw_est, w->bw_ns_est);
		}
		w->bk = 0;
		w->win_start = now;
	}
}

static __always_inline void ww_update_rtt_min(struct westwood *w)
{
	if (w->reset_rtt_min) {
		w->rtt_min = w->rtt;
		w->reset_rtt_min = 0;
	} else {
		w->rtt_min = min_u32(w->rtt, w->rtt_min);
	}
}

static __always_inline __u32 ww_acked_count(struct sock *sk, struct westwood *w)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u32 mss = tp->mss_cache;

	w->cumul_ack = tp->snd_una - w->snd_una;
	/* a duplicate ACK: count one MSS and remember it */
	if (!w->cumul_ack) {
		w->accounted += mss;
		w->cumul_ack = mss;
	}
	if (w->cumul_ack > mss) {
		/* a delayed or partial ACK after duplicates: only what was not counted */
		if (w->accounted >= w->cumul_ack) {
			w->accounted -= w->cumul_ack;
			w->cumul_ack = mss;
		} else {
			w->cumul_ack -= w->accounted;
			w->accounted = 0;
		}
	}
	w->snd_una = tp->snd_una;
	return w->cumul_ack;
}

static __always_inline __u32 ww_bw_rttmin(struct sock *sk, struct westwood *w)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u64 pkts = w->bw_est * w->rtt_min / (tp->mss_cache ? tp->mss_cache : 1);

	if (pkts > 0x3fffffff)
		pkts = 0x3fffffff;
	return max_u32((__u32)pkts, 2);
}

SEC("struct_ops/ww_pkts_acked")
void BPF_PROG(ww_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct westwood *w = ca_priv(sk);

	/* usecs_to_jiffies: rounded up to whole jiffies */
	if (sample->rtt_us > 0)
		w->rtt = ((__u64)sample->rtt_us * CONFIG_HZ + USEC_PER_SEC - 1) / USEC_PER_SEC;
}

SEC("struct_ops/ww_in_ack_event")
void BPF_PROG(ww_in_ack_event, struct sock *sk, __u32 flags)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct westwood *w = ca_priv(sk);

	if (flags & CA_ACK_SLOWPATH) {
		ww_update_window(sk, w);
		w->bk += ww_acked_count(sk, w);
		ww_update_rtt_min(w);
		return;
	}
	/* fast path: an in-order ACK */
	ww_update_window(sk, w);
	w->bk += tp->snd_una - w->snd_una;
	w->snd_una = tp->snd_una;
	ww_update_rtt_min(w);
}

SEC("struct_ops/ww_cwnd_event")
void BPF_PROG(ww_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct westwood *w = ca_priv(sk);

	if (ev == CA_EVENT_COMPLETE_CWR) {
		tp->snd_ssthresh = ww_bw_rttmin(sk, w);
		tp->snd_cwnd = tp->snd_ssthresh;
	} else if (ev == CA_EVENT_LOSS) {
		tp->snd_ssthresh = ww_bw_rttmin(sk, w);
		w->reset_rtt_min = 1;
	}
}

SEC("struct_ops/ww_ssthresh")
__u32 BPF_PROG(ww_ssthresh, struct sock *sk)
{
	return tcp_reno_ssthresh(sk);
}

SEC("struct_ops/ww_cong_avoid")
void BPF_PROG(ww_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	tcp_reno_cong_avoid(sk, ack, acked);
}

SEC("struct_ops/ww_undo_cwnd")
__u32 BPF_PROG(ww_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops haslab_westwood = {
	.init = (void *)ww_init,
	.ssthresh = (void *)ww_ssthresh,
	.cong_avoid = (void *)ww_cong_avoid,
	.cwnd_event = (void *)ww_cwnd_event,
	.in_ack_event = (void *)ww_in_ack_event,
	.pkts_acked = (void *)ww_pkts_acked,
	.undo_cwnd = (void *)ww_undo_cwnd,
	.name = "haslab_westwood",
};
