// SPDX-License-Identifier: GPL-2.0
/*
 * haslab_newcwv: NewReno with RFC 7661 (newCWV) cwnd validation as a BPF struct_ops
 * (tcp_congestion_ops) for live mode, mirroring the simulator's
 * crates/haslab-core/src/tcp/newcwv.rs; docs/live.md lists the differences. Source: RFC 7661,
 * "Updating TCP to Support Rate-Limited Traffic". The kernel's restart after idle is turned off
 * for such flows (tcp_slow_start_after_idle = 0 in the sender's namespace), as RFC 7661
 * replaces it.
 *
 * - pipeACK sample: bytes acknowledged from an ACK (snapshot of snd_una, snd_nxt) until snd_una
 *   passes that snd_nxt; pipeACK = the largest sample within max(3·SRTT, 1 s); undefined at the
 *   start and after recovery (then the flow counts as validated); 0 with no sample in the period.
 *   The last CWV_SAMPLES = 8 samples are kept; the 1 s floor is CWV_MIN_PERIOD_US.
 * - validated: pipeACK undefined or pipeACK ≥ cwnd/2. cwnd grows only when validated or when
 *   the sender is cwnd-limited (the kernel's is_cwnd_limited).
 * - for every NVP (CWV_NVP_US = 300 s) non-validated: ssthresh = max(ssthresh, ¾cwnd),
 *   cwnd = max(cwnd/2, IW).
 * - loss while non-validated: at the end of recovery cwnd = (max(pipeACK, LossFlightSize) − R)/2,
 *   ssthresh = cwnd (R: bytes retransmitted during recovery); pipeACK undefined again.
 * - RTO: state re-initialised.
 *
 * The state is in the socket-storage map haslab_cwv (too big for icsk_ca_priv).
 */
#include "haslab_common.h"

char _license[] SEC("license") = "GPL";

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
