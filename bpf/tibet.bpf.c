// SPDX-License-Identifier: GPL-2.0
/*
 * haslab_tibet: TIBET as a BPF struct_ops (tcp_congestion_ops) for live mode, mirroring the
 * simulator's crates/haslab-core/src/tcp/cc/tibet.rs; docs/live.md lists the differences.
 * Source: TIBET (Capone, Fratta, Martignon, IEEE TMC 3(2), 2004) as the TcpHas paper describes
 * it (Ben Ameur, Mory, Cousin, Dedu, IEEE ICC 2017, §II-C):
 *
 * - Algorithm 2, the bandwidth estimator (haslab_common.h), on every ACK tcp_ack processes
 *   (in_ack_event), with α = 0.8 (4/5) and the second filter's γ = e^(-T_k), T_k the time since
 *   the previous ACK in seconds (e^(-x) in Q16).
 * - Algorithm 1, the adaptive decrease: ssthresh = B̂we × RTT_min (segments, at least 2) on
 *   3 dupACKs and on RTO; after a fast retransmit cwnd is not raised above its prior value.
 * - Growth: Reno (the kernel's tcp_reno_cong_avoid).
 */
#include "haslab_common.h"

char _license[] SEC("license") = "GPL";

struct tibet_ca {
	struct tibet_est est;
};

SEC("struct_ops/tibet_init")
void BPF_PROG(tibet_init, struct sock *sk)
{
	struct tibet_ca *ca = ca_priv(sk);

	__builtin_memset(ca, 0, sizeof(*ca));
}

/* ssthresh = B̂we × RTT_min (segments, at least 2), on 3 dupACKs and on RTO; Reno's before an estimate */
SEC("struct_ops/tibet_ssthresh")
__u32 BPF_PROG(tibet_ssthresh, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct tibet_ca *ca = ca_priv(sk);
	__u64 pkts;

	if (!ca->est.bwe_hat || tp->rtt_min.s[0].v == ~0U)
		return tcp_reno_ssthresh(sk);
	pkts = rate_rtt_pkts(ca->est.bwe_hat, tp->rtt_min.s[0].v, tp->mss_cache);
	if (pkts > 0x3fffffff)
		pkts = 0x3fffffff;
	return max_u32((__u32)pkts, 2);
}

SEC("struct_ops/tibet_cong_avoid")
void BPF_PROG(tibet_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	tcp_reno_cong_avoid(sk, ack, acked);
}

SEC("struct_ops/tibet_cwnd_event")
void BPF_PROG(tibet_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
	if (ev == CA_EVENT_COMPLETE_CWR)
		cwnd_not_above_prior(sk);
}

SEC("struct_ops/tibet_in_ack_event")
void BPF_PROG(tibet_in_ack_event, struct sock *sk, __u32 flags)
{
	struct tibet_ca *ca = ca_priv(sk);

	tibet_update(&ca->est, sk, 0);
}

SEC("struct_ops/tibet_undo_cwnd")
__u32 BPF_PROG(tibet_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops haslab_tibet = {
	.init = (void *)tibet_init,
	.ssthresh = (void *)tibet_ssthresh,
	.cong_avoid = (void *)tibet_cong_avoid,
	.cwnd_event = (void *)tibet_cwnd_event,
	.in_ack_event = (void *)tibet_in_ack_event,
	.undo_cwnd = (void *)tibet_undo_cwnd,
	.name = "haslab_tibet",
};
