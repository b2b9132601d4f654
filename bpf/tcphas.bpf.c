// SPDX-License-Identifier: GPL-2.0
/*
 * haslab_tcphas: TcpHas as a BPF struct_ops (tcp_congestion_ops) for live mode, mirroring the
 * simulator's crates/haslab-core/src/tcp/cc/tcphas.rs; docs/live.md lists the differences.
 * Source: Ben Ameur, Mory, Cousin, "TcpHas: TCP for HTTP Adaptive Streaming", §III,
 * Algorithms 3-7; parameters §IV-B.
 *
 * - Bandwidth estimator: TIBET's Algorithm 2 (haslab_common.h) with a constant γ = 0.99
 *   (HAS_GAMMA_PCT, §IV-B) and α = 0.8.
 * - Shaping factor 1.2 (HAS_SHAPING_NUM / HAS_SHAPING_DEN = 6/5): the sending rate is shaped to
 *   1.2 × EncodingRate[QLevel].
 * - RTT̂ = ψ·RTT̂ + (1 - ψ)·RTT with ψ = 0.99 (HAS_PSI_PCT, §III-D and §IV-B).
 *
 * The encoding ladder comes from the server through the socket-storage map haslab_ladder (key: the
 * accepted socket), read lazily in the callbacks because the accepted socket inherits the
 * algorithm from the listener (init runs before the server can fill the map). Without a ladder
 * TcpHas is NewReno (the paper's rule). The algorithm's own view of the connection goes to the
 * socket-storage map haslab_stats on every ACK (struct haslab_ca_stats, haslab_cc.h).
 *
 * Times come from tp->tcp_mstamp (µs), except the idle test of Algorithm 5, which compares jiffies
 * with jiffies as the kernel's restart after idle does.
 */
#include "haslab_common.h"
#include "haslab_cc.h"

char _license[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct haslab_ladder);
} haslab_ladder SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct haslab_ca_stats);
} haslab_stats SEC(".maps");

#define HAS_F_LADDER 1 /* the ladder was seen and QLevel/B̂we initialised from it */
#define HAS_F_INIT6 2  /* Algorithm 6 applied (first RTT sample with a ladder) */
#define HAS_SHAPING_NUM 6 /* shaping factor 1.2 = 6/5 */
#define HAS_SHAPING_DEN 5
#define HAS_GAMMA_PCT 99 /* §IV-B */
#define HAS_PSI_PCT 99   /* ψ, §III-D and §IV-B */

struct has_ca {
	struct tibet_est est;
	__u64 rtt_hat_us16; /* RTT̂ × 16, µs; 0 before the first sample */
	__u64 shaping_bps;  /* EncodingRate[QLevel] × 1.2 */
	__u32 qlevel;
	__u32 flags;
};

/* RTT_min (µs): the kernel's windowed minimum, SRTT before its first sample */
static __always_inline __u32 min_rtt_us(const struct tcp_sock *tp)
{
	__u32 m = tp->rtt_min.s[0].v;
	return (m == ~0U || m == 0) ? (tp->srtt_us >> 3) : m;
}

static __always_inline void write_stats(struct sock *sk, __u32 qlevel, __u32 flags, __u64 bwe, __u64 shaping,
					__u64 rtt_hat_us)
{
	struct haslab_ca_stats *s = bpf_sk_storage_get(&haslab_stats, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);

	if (!s)
		return;
	s->qlevel = qlevel;
	s->flags = flags;
	s->bwe_bps = bwe;
	s->shaping_bps = shaping;
	s->rtt_hat_us = rtt_hat_us;
	s->updates++;
}

static __always_inline __u64 ladder_rate(const struct haslab_ladder *l, __u32 i)
{
	/* keep the mask: the compiler would drop it where it proves i < n ≤ 16, the verifier cannot */
	asm volatile("" : "+r"(i));
	return l->rates_bps[i & (HASLAB_LADDER_MAX - 1)];
}

/* The ladder of this socket, initialising QLevel and B̂we the first time it is seen (Algorithm 6,
 * §IV-B: both start at the highest level). NULL without a ladder: TcpHas is then NewReno. */
static __always_inline struct haslab_ladder *has_ladder(struct sock *sk, struct has_ca *ca)
{
	struct haslab_ladder *l = bpf_sk_storage_get(&haslab_ladder, sk, 0, 0);
	__u64 top;

	if (!l || l->n == 0 || l->n > HASLAB_LADDER_MAX)
		return 0;
	if (!(ca->flags & HAS_F_LADDER)) {
		top = ladder_rate(l, l->n - 1);
		ca->flags = HAS_F_LADDER;
		ca->qlevel = l->n - 1;
		ca->est.bwe_hat = top;
		ca->shaping_bps = top * HAS_SHAPING_NUM / HAS_SHAPING_DEN;
	}
	return l;
}

/* Algorithm 3: the highest level whose encoding bitrate is ≤ B̂we (0 if none) */
static __always_inline __u32 has_qlevel(const struct haslab_ladder *l, __u64 bwe)
{
	__u32 q = 0, i;

	for (i = 0; i < HASLAB_LADDER_MAX; i++) {
		if (i >= l->n)
			break;
		if (ladder_rate(l, i) <= bwe)
			q = i;
	}
	return q;
}

/* Algorithm 3 then ssthresh = EncodingRate[QLevel] × 1.2 × RTT_min (Algorithm 4), at least 2 */
static __always_inline __u32 has_shaped_ssthresh(struct sock *sk, struct has_ca *ca, const struct haslab_ladder *l)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u64 pkts;

	ca->qlevel = has_qlevel(l, ca->est.bwe_hat);
	ca->shaping_bps = ladder_rate(l, ca->qlevel) * HAS_SHAPING_NUM / HAS_SHAPING_DEN;
	pkts = rate_rtt_pkts(ca->shaping_bps, min_rtt_us(tp), tp->mss_cache);
	if (pkts > 0x7fffffff)
		pkts = 0x7fffffff;
	return max_u32((__u32)pkts, 2);
}

SEC("struct_ops/has_init")
void BPF_PROG(has_init, struct sock *sk)
{
	struct has_ca *ca = ca_priv(sk);

	__builtin_memset(ca, 0, sizeof(*ca));
	has_ladder(sk, ca);
}

SEC("struct_ops/has_ssthresh")
__u32 BPF_PROG(has_ssthresh, struct sock *sk)
{
	struct has_ca *ca = ca_priv(sk);
	struct haslab_ladder *l = has_ladder(sk, ca);

	if (!l)
		return tcp_reno_ssthresh(sk);
	return has_shaped_ssthresh(sk, ca, l);
}

SEC("struct_ops/has_cong_avoid")
void BPF_PROG(has_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct has_ca *ca = ca_priv(sk);
	struct haslab_ladder *l = has_ladder(sk, ca);
	__u64 pkts;

	if (!l || tp->snd_cwnd < tp->snd_ssthresh) {
		tcp_reno_cong_avoid(sk, ack, acked);
		return;
	}
	/* Algorithm 7: cwnd = EncodingRate[QLevel] × 1.2 × RTT̂ */
	if (!ca->rtt_hat_us16)
		return;
	pkts = rate_rtt_pkts(ca->shaping_bps, ca->rtt_hat_us16 / 16, tp->mss_cache);
	if (pkts < 1)
		pkts = 1;
	if (pkts > tp->snd_cwnd_clamp)
		pkts = tp->snd_cwnd_clamp;
	tp->snd_cwnd = (__u32)pkts;
	tp->snd_cwnd_cnt = 0;
}

SEC("struct_ops/has_cwnd_event")
void BPF_PROG(has_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct has_ca *ca = ca_priv(sk);
	struct haslab_ladder *l = has_ladder(sk, ca);
	__u32 idle, ss;

	if (!l)
		return;
	if (ev == CA_EVENT_COMPLETE_CWR) {
		cwnd_not_above_prior(sk);
		return;
	}
	/* Algorithm 5 is for OFF periods, where the kernel's restart after idle acts: new data
	 * with nothing outstanding (tcp_slow_start_after_idle_check: packets_out == 0; this
	 * segment is counted after the event). The kernel also raises TX_START for an RTO's
	 * retransmission (nothing in flight, segments outstanding): Algorithm 4's, not this. */
	if (ev != CA_EVENT_TX_START || !tp->lsndtime || !tp->srtt_us || tp->packets_out)
		return;
	/* Algorithm 5: after an OFF period longer than the RTO (jiffies since the last send, as the
	 * kernel's restart after idle measures it, which ran just before and is overridden here):
	 * update QLevel and ssthresh, cwnd = ssthresh */
	idle = (__u32)bpf_jiffies64() - tp->lsndtime;
	if (idle <= inet_csk(sk)->icsk_rto)
		return;
	ss = has_shaped_ssthresh(sk, ca, l);
	tp->snd_ssthresh = ss;
	tp->snd_cwnd = min_u32(ss, tp->snd_cwnd_clamp);
	tp->snd_cwnd_cnt = 0;
}

SEC("struct_ops/has_pkts_acked")
void BPF_PROG(has_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct has_ca *ca = ca_priv(sk);
	struct haslab_ladder *l = has_ladder(sk, ca);
	__s32 rtt = sample->rtt_us;
	__u64 pkts;

	if (rtt > 0) {
		/* RTT̂ = ψ·RTT̂ + (1 - ψ)·RTT, starting at the first sample */
		if (!ca->rtt_hat_us16)
			ca->rtt_hat_us16 = (__u64)rtt * 16;
		else
			ca->rtt_hat_us16 = (HAS_PSI_PCT * ca->rtt_hat_us16 + (100 - HAS_PSI_PCT) * (__u64)rtt * 16) / 100;
		/* Algorithm 6: at the first RTT sample, ssthresh for the highest level */
		if (l && !(ca->flags & HAS_F_INIT6)) {
			ca->flags |= HAS_F_INIT6;
			pkts = rate_rtt_pkts(ladder_rate(l, l->n - 1) * HAS_SHAPING_NUM / HAS_SHAPING_DEN, rtt,
					     tp->mss_cache);
			tp->snd_ssthresh = max_u32((__u32)pkts, 2);
		}
	}
	if (l)
		write_stats(sk, ca->qlevel, ca->flags, ca->est.bwe_hat, ca->shaping_bps, ca->rtt_hat_us16 / 16);
}

/* the TIBET estimator (§III-A) on every ACK tcp_ack processes; the ladder is looked up first, so
 * that the first ACK that finds it starts B̂we at the top level before its own sample */
SEC("struct_ops/has_in_ack_event")
void BPF_PROG(has_in_ack_event, struct sock *sk, __u32 flags)
{
	struct has_ca *ca = ca_priv(sk);

	has_ladder(sk, ca);
	tibet_update(&ca->est, sk, HAS_GAMMA_PCT);
}

SEC("struct_ops/has_undo_cwnd")
__u32 BPF_PROG(has_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops haslab_tcphas = {
	.init = (void *)has_init,
	.ssthresh = (void *)has_ssthresh,
	.cong_avoid = (void *)has_cong_avoid,
	.cwnd_event = (void *)has_cwnd_event,
	.pkts_acked = (void *)has_pkts_acked,
	.in_ack_event = (void *)has_in_ack_event,
	.undo_cwnd = (void *)has_undo_cwnd,
	.name = "haslab_tcphas",
};
