// SPDX-License-Identifier: GPL-2.0
/*
 * haslab's congestion controls for live mode, as BPF struct_ops (tcp_congestion_ops) on the
 * running kernel. Built by bpf/Makefile; registered and unregistered by python/haslab/live/bpf.py
 * with bpftool. Each algorithm mirrors the simulator's file named below; docs/live.md lists the
 * differences.
 *
 * - haslab_tcphas   TcpHas (Ben Ameur, Mory, Cousin, "TcpHas: TCP for HTTP Adaptive Streaming",
 *                   §III, Algorithms 3-7; parameters §IV-B), crates/haslab-core/src/tcp/cc/tcphas.rs.
 *                   The encoding ladder comes from the server through the socket-storage map
 *                   haslab_ladder (key: the accepted socket), read lazily in the callbacks because
 *                   the accepted socket inherits the algorithm from the listener (init runs before
 *                   the server can fill the map).
 * - haslab_tibet    TIBET estimator (TcpHas paper §II-C, Algorithm 2, γ = e^(-T_k)) with the adaptive
 *                   decrease of Algorithm 1, tcp/cc/tibet.rs.
 * - haslab_westwood Westwood+ (Grieco & Mascolo 2004), Linux net/ipv4/tcp_westwood.c (not built into
 *                   this kernel), tcp/cc/westwood.rs.
 * - haslab_newcwv   NewReno + RFC 7661 (newCWV) cwnd validation, tcp/newcwv.rs. The kernel's restart
 *                   after idle is turned off for such flows (tcp_slow_start_after_idle = 0 in the
 *                   sender's namespace), as RFC 7661 replaces it.
 *
 * No floating point in BPF: the filters are integer fixed point (constants below). Times come from
 * tp->tcp_mstamp (µs, the time the ACK is processed) instead of jiffies, except the idle test of
 * Algorithm 5, which compares jiffies with jiffies as the kernel's restart after idle does.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "haslab_cc.h"

char _license[] SEC("license") = "GPL";

extern void tcp_reno_cong_avoid(struct sock *sk, __u32 ack, __u32 acked) __ksym;
extern __u32 tcp_reno_ssthresh(struct sock *sk) __ksym;
extern __u32 tcp_reno_undo_cwnd(struct sock *sk) __ksym;

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

#define USEC_PER_SEC 1000000ULL
#define NSEC_PER_USEC 1000ULL
/* TIBET's filters keep L̄ and T̄ scaled by 8 to keep the fractions of α = 0.8 = 4/5 */
#define EST_SCALE 8
/* Q16 fixed point for TIBET's γ = e^(-T_k) */
#define Q16 65536ULL
/* e^-1 in Q16 */
#define EXP_M1_Q16 24109ULL

static __always_inline struct tcp_sock *tcp_sk(const struct sock *sk)
{
	return (struct tcp_sock *)sk;
}

static __always_inline struct inet_connection_sock *inet_csk(const struct sock *sk)
{
	return (struct inet_connection_sock *)sk;
}

static __always_inline void *ca_priv(const struct sock *sk)
{
	return (void *)inet_csk(sk)->icsk_ca_priv;
}

static __always_inline __u32 min_rtt_us(const struct tcp_sock *tp)
{
	__u32 m = tp->rtt_min.s[0].v;
	return (m == ~0U || m == 0) ? (tp->srtt_us >> 3) : m;
}

static __always_inline __u32 max_u32(__u32 a, __u32 b) { return a > b ? a : b; }
static __always_inline __u32 min_u32(__u32 a, __u32 b) { return a < b ? a : b; }

/* rate (bit/s) × rtt (µs) in segments of mss bytes, rounded down */
static __always_inline __u64 rate_rtt_pkts(__u64 rate_bps, __u64 rtt_us, __u32 mss)
{
	if (!mss)
		mss = 1;
	return rate_bps * rtt_us / (8 * USEC_PER_SEC * mss);
}

/* ------------------------------------------------------------------------------------------ */
/* TIBET's bandwidth estimator (TcpHas paper Algorithm 2), shared by haslab_tibet and haslab_tcphas.
 * On each ACK of new data: sample_length = acked × MSS × 8 bits, sample_interval = time since the
 * previous ACK; L̄ = αL̄ + (1-α)·length, T̄ = αT̄ + (1-α)·interval with α = 0.8; Bwe = L̄/T̄;
 * B̂we = γB̂we + (1-γ)Bwe. The filters start from zero; the first ACK only starts the clock. */

struct tibet_est {
	__u64 avg_len;     /* L̄, bits × EST_SCALE */
	__u64 avg_int;     /* T̄, ns × EST_SCALE */
	__u64 bwe_hat;     /* B̂we, bit/s; 0 before the first estimate */
	__u64 last_ack_us; /* tcp_mstamp of the previous ACK; 0 before the first */
};

/* e^(-x) in Q16 for x = us microseconds (TIBET's γ = e^(-T_k), T_k in seconds). Unsigned only
 * (the BPF backend has no signed division): e^-x = (e^-1)^k · e^-f, the latter by its Taylor
 * series to the 6th term (error < 2e-4 for f < 1; its partial sums stay positive). */
static __always_inline __u64 exp_neg_q16(__u64 us)
{
	__u64 k = us / USEC_PER_SEC;
	__u64 f, r, term;
	int i;

	if (k >= 12)
		return 0;
	f = (us % USEC_PER_SEC) * Q16 / USEC_PER_SEC; /* fractional part in Q16 */
	r = Q16;
	term = Q16;
	for (i = 1; i <= 6; i++) {
		term = term * f / Q16 / i;
		if (i & 1)
			r = r > term ? r - term : 0;
		else
			r += term;
	}
	for (i = 0; i < 12; i++) {
		if ((__u64)i >= k)
			break;
		r = r * EXP_M1_Q16 / Q16;
	}
	return r;
}

/* gamma_pct: constant γ in percent (TcpHas: 99), or 0 for TIBET's e^(-T_k) */
static __always_inline void tibet_update(struct tibet_est *e, const struct sock *sk, __u32 acked, __u32 gamma_pct)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	__u64 now = tp->tcp_mstamp, dt_us, len, bwe;

	if (!acked)
		return;
	if (!e->last_ack_us) {
		e->last_ack_us = now;
		return;
	}
	dt_us = now > e->last_ack_us ? now - e->last_ack_us : 0;
	e->last_ack_us = now;
	len = (__u64)acked * tp->mss_cache * 8;
	/* α = 4/5 */
	e->avg_len = (4 * e->avg_len + len * EST_SCALE) / 5;
	e->avg_int = (4 * e->avg_int + dt_us * NSEC_PER_USEC * EST_SCALE) / 5;
	if (!e->avg_int)
		return;
	bwe = e->avg_len * 1000000000ULL / e->avg_int;
	if (!e->bwe_hat) {
		e->bwe_hat = bwe;
	} else if (gamma_pct) {
		e->bwe_hat = (gamma_pct * e->bwe_hat + (100 - gamma_pct) * bwe) / 100;
	} else {
		__u64 g = exp_neg_q16(dt_us);
		e->bwe_hat = (g * e->bwe_hat + (Q16 - g) * bwe) / Q16;
	}
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

/* Algorithm 1 (TIBET, as TcpHas's Algorithm 4 uses it): cwnd = min(cwnd, ssthresh) after a fast
 * retransmit. The kernel sets cwnd = ssthresh when recovery ends (tcp_end_cwnd_reduction) and then
 * raises CA_EVENT_COMPLETE_CWR, where this keeps a loss from raising cwnd above its prior value. */
static __always_inline void cwnd_not_above_prior(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);

	if (inet_csk(sk)->icsk_ca_state != TCP_CA_Recovery && inet_csk(sk)->icsk_ca_state != TCP_CA_Open)
		return;
	if (tp->prior_cwnd)
		tp->snd_cwnd = max_u32(min_u32(tp->snd_ssthresh, tp->prior_cwnd), 1);
}

/* ------------------------------------------------------------------------------------------ */
/* haslab_tcphas */

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
	if (ev != CA_EVENT_TX_START || !tp->lsndtime || !tp->srtt_us)
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
	__u32 acked = sample->pkts_acked;
	__s32 rtt = sample->rtt_us;
	__u64 pkts;

	tibet_update(&ca->est, sk, acked, HAS_GAMMA_PCT);
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
	.undo_cwnd = (void *)has_undo_cwnd,
	.name = "haslab_tcphas",
};

/* ------------------------------------------------------------------------------------------ */
/* haslab_tibet: TIBET's estimator with γ = e^(-T_k); Algorithm 1's adaptive decrease; Reno growth */

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

SEC("struct_ops/tibet_pkts_acked")
void BPF_PROG(tibet_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct tibet_ca *ca = ca_priv(sk);

	tibet_update(&ca->est, sk, sample->pkts_acked, 0);
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
	.pkts_acked = (void *)tibet_pkts_acked,
	.undo_cwnd = (void *)tibet_undo_cwnd,
	.name = "haslab_tibet",
};

/* ------------------------------------------------------------------------------------------ */
/* haslab_westwood: Linux net/ipv4/tcp_westwood.c (Westwood+), with µs from tcp_mstamp instead
 * of jiffies and the rate in bytes per second instead of bytes per jiffy. Constants:
 * TCP_WESTWOOD_RTT_MIN = 50 ms (shortest estimation window), TCP_WESTWOOD_INIT_RTT = 20 s. */

#define WW_RTT_MIN_US 50000
#define WW_INIT_RTT_US 20000000

struct westwood {
	__u64 bw_ns_est;   /* first filter, bytes/s */
	__u64 bw_est;      /* second filter, bytes/s */
	__u64 win_start_us;
	__u64 bk;          /* bytes acknowledged in the current window */
	__u32 snd_una;
	__u32 cumul_ack;
	__u32 accounted;
	__u32 rtt_us;
	__u32 rtt_min_us;
	__u8 first_ack;
	__u8 reset_rtt_min;
};

SEC("struct_ops/ww_init")
void BPF_PROG(ww_init, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct westwood *w = ca_priv(sk);

	__builtin_memset(w, 0, sizeof(*w));
	w->rtt_min_us = w->rtt_us = WW_INIT_RTT_US;
	w->reset_rtt_min = 1;
	w->win_start_us = tp->tcp_mstamp;
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
	__u64 now = tp->tcp_mstamp;
	__u64 delta = now > w->win_start_us ? now - w->win_start_us : 0;
	__u64 win = w->rtt_us > WW_RTT_MIN_US ? w->rtt_us : WW_RTT_MIN_US;
	__u64 sample;

	if (w->first_ack) {
		w->snd_una = tp->snd_una;
		w->first_ack = 0;
	}
	if (w->rtt_us && delta > win) {
		sample = w->bk * USEC_PER_SEC / delta;
		if (w->bw_ns_est == 0 && w->bw_est == 0) {
			w->bw_ns_est = sample;
			w->bw_est = sample;
		} else {
			w->bw_ns_est = ww_filter(w->bw_ns_est, sample);
			w->bw_est = ww_filter(w->bw_est, w->bw_ns_est);
		}
		w->bk = 0;
		w->win_start_us = now;
	}
}

static __always_inline void ww_update_rtt_min(struct westwood *w)
{
	if (w->reset_rtt_min) {
		w->rtt_min_us = w->rtt_us;
		w->reset_rtt_min = 0;
	} else {
		w->rtt_min_us = min_u32(w->rtt_us, w->rtt_min_us);
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
	__u64 pkts = w->bw_est * w->rtt_min_us / USEC_PER_SEC / (tp->mss_cache ? tp->mss_cache : 1);

	if (pkts > 0x3fffffff)
		pkts = 0x3fffffff;
	return max_u32((__u32)pkts, 2);
}

SEC("struct_ops/ww_pkts_acked")
void BPF_PROG(ww_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct westwood *w = ca_priv(sk);

	if (sample->rtt_us > 0)
		w->rtt_us = sample->rtt_us;
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

/* ------------------------------------------------------------------------------------------ */
/* haslab_newcwv: NewReno with RFC 7661 cwnd validation (tcp/newcwv.rs).
 * - pipeACK sample: bytes acknowledged from an ACK (snapshot of snd_una, snd_nxt) until snd_una
 *   passes that snd_nxt; pipeACK = the largest sample within max(3·SRTT, 1 s); undefined at the
 *   start and after recovery (then the flow counts as validated); 0 with no sample in the period.
 * - validated: pipeACK undefined or pipeACK ≥ cwnd/2. cwnd grows only when validated or when
 *   the sender is cwnd-limited (the kernel's is_cwnd_limited).
 * - for every NVP (300 s) non-validated: ssthresh = max(ssthresh, ¾cwnd), cwnd = max(cwnd/2, IW).
 * - loss while non-validated: at the end of recovery cwnd = (max(pipeACK, LossFlightSize) − R)/2,
 *   ssthresh = cwnd (R: bytes retransmitted during recovery); pipeACK undefined again.
 * - RTO: state re-initialised. */

#define CWV_SAMPLES 8
#define CWV_NVP_US (300ULL * USEC_PER_SEC)
#define CWV_MIN_PERIOD_US USEC_PER_SEC
#define CWV_F_DEFINED 1
#define CWV_F_SAMPLING 2
#define CWV_F_LOSS_NV 4

struct newcwv {
	__u64 t_us[CWV_SAMPLES];
	__u32 bytes[CWV_SAMPLES];
	__u64 last_validated_us;
	__u32 flags;
	__u32 next;
	__u32 s_una;
	__u32 s_nxt;
	__u32 loss_flight;
	__u32 retrans_base;
	__u32 iw;
	__u32 validated;
};

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct newcwv);
} haslab_cwv SEC(".maps");

static __always_inline struct newcwv *cwv_of(struct sock *sk)
{
	return bpf_sk_storage_get(&haslab_cwv, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
}

static __always_inline void cwv_reset(struct sock *sk, struct newcwv *c)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u32 iw = c->iw;
	int i;

	for (i = 0; i < CWV_SAMPLES; i++) {
		c->t_us[i] = 0;
		c->bytes[i] = 0;
	}
	c->flags = 0;
	c->next = 0;
	c->loss_flight = 0;
	c->retrans_base = 0;
	c->validated = 1;
	c->last_validated_us = tp->tcp_mstamp;
	c->iw = iw ? iw : tp->snd_cwnd;
}

static __always_inline __u32 cwv_pipeack(struct sock *sk, struct newcwv *c)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u64 period = 3ULL * (tp->srtt_us >> 3), now = tp->tcp_mstamp;
	__u32 best = 0;
	int i;

	if (period < CWV_MIN_PERIOD_US)
		period = CWV_MIN_PERIOD_US;
	for (i = 0; i < CWV_SAMPLES; i++) {
		if (c->t_us[i] && c->t_us[i] + period >= now && c->bytes[i] > best)
			best = c->bytes[i];
	}
	return best;
}

SEC("struct_ops/cwv_init")
void BPF_PROG(cwv_init, struct sock *sk)
{
	struct newcwv *c = cwv_of(sk);

	if (c) {
		c->iw = 0;
		cwv_reset(sk, c);
	}
}

SEC("struct_ops/cwv_in_ack_event")
void BPF_PROG(cwv_in_ack_event, struct sock *sk, __u32 flags)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct newcwv *c = cwv_of(sk);
	__u64 now = tp->tcp_mstamp;
	__u32 pipeack, cwnd_bytes, slot;

	if (!c)
		return;
	/* pipeACK sampling */
	if (!(c->flags & CWV_F_SAMPLING)) {
		c->s_una = tp->snd_una;
		c->s_nxt = tp->snd_nxt;
		c->flags |= CWV_F_SAMPLING;
	} else if ((__s32)(tp->snd_una - c->s_nxt) >= 0) {
		slot = c->next % CWV_SAMPLES;
		c->t_us[slot & (CWV_SAMPLES - 1)] = now;
		c->bytes[slot & (CWV_SAMPLES - 1)] = tp->snd_una - c->s_una;
		c->next = slot + 1;
		c->flags |= CWV_F_DEFINED;
		c->s_una = tp->snd_una;
		c->s_nxt = tp->snd_nxt;
	}
	/* validation */
	cwnd_bytes = tp->snd_cwnd * tp->mss_cache;
	pipeack = cwv_pipeack(sk, c);
	c->validated = !(c->flags & CWV_F_DEFINED) || pipeack >= cwnd_bytes / 2;
	if (c->validated) {
		c->last_validated_us = now;
	} else if (now - c->last_validated_us >= CWV_NVP_US) {
		tp->snd_ssthresh = max_u32(tp->snd_ssthresh, tp->snd_cwnd * 3 / 4);
		tp->snd_cwnd = max_u32(tp->snd_cwnd / 2, c->iw);
		c->last_validated_us = now;
	}
}

SEC("struct_ops/cwv_cong_avoid")
void BPF_PROG(cwv_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct newcwv *c = cwv_of(sk);

	if (c && !c->validated && !BPF_CORE_READ_BITFIELD(tp, is_cwnd_limited))
		return; /* frozen while non-validated */
	tcp_reno_cong_avoid(sk, ack, acked);
}

SEC("struct_ops/cwv_ssthresh")
__u32 BPF_PROG(cwv_ssthresh, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct newcwv *c = cwv_of(sk);

	if (c && !c->validated && inet_csk(sk)->icsk_ca_state < TCP_CA_Recovery) {
		c->loss_flight = tp->packets_out * tp->mss_cache;
		c->retrans_base = tp->total_retrans;
		c->flags |= CWV_F_LOSS_NV;
	}
	return tcp_reno_ssthresh(sk);
}

SEC("struct_ops/cwv_cwnd_event")
void BPF_PROG(cwv_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct newcwv *c = cwv_of(sk);
	__u32 pipeack, w, r, mss = tp->mss_cache ? tp->mss_cache : 1;

	if (!c)
		return;
	if (ev == CA_EVENT_LOSS) {
		cwv_reset(sk, c);
	} else if (ev == CA_EVENT_COMPLETE_CWR && (c->flags & CWV_F_LOSS_NV)) {
		pipeack = cwv_pipeack(sk, c);
		w = pipeack > c->loss_flight ? pipeack : c->loss_flight;
		r = (tp->total_retrans - c->retrans_base) * mss;
		w = w > r ? (w - r) / 2 / mss : 0;
		tp->snd_cwnd = max_u32(w, 1);
		tp->snd_ssthresh = tp->snd_cwnd;
		cwv_reset(sk, c);
	}
}

SEC("struct_ops/cwv_undo_cwnd")
__u32 BPF_PROG(cwv_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops haslab_newcwv = {
	.init = (void *)cwv_init,
	.ssthresh = (void *)cwv_ssthresh,
	.cong_avoid = (void *)cwv_cong_avoid,
	.cwnd_event = (void *)cwv_cwnd_event,
	.in_ack_event = (void *)cwv_in_ack_event,
	.undo_cwnd = (void *)cwv_undo_cwnd,
	.name = "haslab_newcwv",
};
