/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What more than one of haslab's BPF congestion controls (tcphas.bpf.c, tibet.bpf.c,
 * westwood.bpf.c, newcwv.bpf.c) uses: the kernel's Reno functions (kfuncs), the casts from a
 * struct sock, min/max, the rate × RTT conversion to segments, TIBET's bandwidth estimator
 * (haslab_tibet with γ = e^(-T_k), haslab_tcphas with a constant γ) and Algorithm 1's
 * "cwnd not above its prior value" after a loss (both of them). Everything here is
 * static __always_inline: each algorithm's object carries its own copy.
 *
 * No floating point in BPF: the filters are integer fixed point (constants below). Times come from
 * tp->tcp_mstamp (µs, the time the ACK is processed) instead of jiffies.
 */
#ifndef HASLAB_COMMON_H
#define HASLAB_COMMON_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

extern void tcp_reno_cong_avoid(struct sock *sk, __u32 ack, __u32 acked) __ksym;
extern __u32 tcp_reno_ssthresh(struct sock *sk) __ksym;
extern __u32 tcp_reno_undo_cwnd(struct sock *sk) __ksym;

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
	__u32 prev_una;    /* snd_una after the previous ACK */
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

/* Algorithm 2 on one ACK, called from in_ack_event: every ACK the kernel's tcp_ack processes is a
 * sample (the simulator's `samples = "every-ack"`), a duplicate acknowledging 0 segments. A data
 * segment acknowledging nothing new (the client's next request) takes tcp_rcv_established's
 * fast path, which does not call tcp_ack, so it is no sample here (the simulator's
 * in_data_segment makes it one). gamma_pct: constant γ in percent (TcpHas: 99), or 0 for
 * TIBET's e^(-T_k). */
static __always_inline void tibet_update(struct tibet_est *e, const struct sock *sk, __u32 gamma_pct)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	__u64 now = tp->tcp_mstamp, dt_us, len, bwe;
	__u32 mss = tp->mss_cache ? tp->mss_cache : 1;
	/* segments this ACK newly acknowledged (0 for a duplicate), from snd_una's advance, which
	 * tcp_ack has made before in_ack_event */
	__u32 acked = (tp->snd_una - e->prev_una + mss - 1) / mss;

	e->prev_una = tp->snd_una;
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

#endif
