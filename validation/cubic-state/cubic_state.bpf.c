// SPDX-License-Identifier: GPL-2.0
/*
 * haslab_cubic_state: the kernel's own CUBIC, observed. A struct_ops congestion control whose
 * every operation calls the kernel's cubictcp_* function (net/ipv4/tcp_cubic.c exports them as
 * BPF kfuncs for struct_ops programs), and which records, after each pkts_acked call, the
 * socket's snd_una / snd_nxt / cwnd / ssthresh, the ACK's RTT sample and CUBIC's HyStart state
 * (struct bictcp: delay_min, epoch_start, sample_cnt, found, end_seq, curr_rtt). Used to check
 * haslab's CUBIC against the kernel's where tracing programs (fentry, kprobes) are not allowed.
 * README.md says how to build and run it.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

extern void cubictcp_init(struct sock *sk) __ksym;
extern u32 cubictcp_recalc_ssthresh(struct sock *sk) __ksym;
extern void cubictcp_cong_avoid(struct sock *sk, u32 ack, u32 acked) __ksym;
extern void cubictcp_state(struct sock *sk, u8 new_state) __ksym;
extern void cubictcp_cwnd_event(struct sock *sk, enum tcp_ca_event event) __ksym;
extern void cubictcp_acked(struct sock *sk, const struct ack_sample *sample) __ksym;
extern u32 tcp_reno_undo_cwnd(struct sock *sk) __ksym;

/* struct bictcp comes from the kernel's BTF (vmlinux.h) */

/* one record per event; kind 1 = init, 2 = pkts_acked */
struct rec {
	u64 t_ns;
	u32 kind, snd_una, snd_nxt, cwnd, ssthresh;
	s32 rtt_us;
	u32 end_seq, delay_min_us, curr_rtt_us, sample_cnt, found, epoch_start;
};

#define MAX_RECS 8192
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_RECS);
	__type(key, u32);
	__type(value, struct rec);
} recs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u32);
} count SEC(".maps");

static void record(struct sock *sk, u32 kind, s32 rtt_us)
{
	u32 zero = 0, i;
	u32 *n = bpf_map_lookup_elem(&count, &zero);
	struct rec *r;
	struct tcp_sock *tp = (struct tcp_sock *)sk;
	struct bictcp *ca = (struct bictcp *)((struct inet_connection_sock *)sk)->icsk_ca_priv;

	if (!n || *n >= MAX_RECS)
		return;
	i = *n;
	*n = i + 1;
	r = bpf_map_lookup_elem(&recs, &i);
	if (!r)
		return;
	r->t_ns = bpf_ktime_get_ns();
	r->kind = kind;
	r->snd_una = tp->snd_una;
	r->snd_nxt = tp->snd_nxt;
	r->cwnd = tp->snd_cwnd;
	r->ssthresh = tp->snd_ssthresh;
	r->rtt_us = rtt_us;
	r->end_seq = ca->end_seq;
	r->delay_min_us = ca->delay_min;
	r->curr_rtt_us = ca->curr_rtt;
	r->sample_cnt = ca->sample_cnt;
	r->found = ca->found;
	r->epoch_start = ca->epoch_start;
}

SEC("struct_ops/cs_init")
void BPF_PROG(cs_init, struct sock *sk)
{
	cubictcp_init(sk);
	record(sk, 1, 0);
}

SEC("struct_ops/cs_ssthresh")
u32 BPF_PROG(cs_ssthresh, struct sock *sk)
{
	return cubictcp_recalc_ssthresh(sk);
}

SEC("struct_ops/cs_cong_avoid")
void BPF_PROG(cs_cong_avoid, struct sock *sk, u32 ack, u32 acked)
{
	cubictcp_cong_avoid(sk, ack, acked);
}

SEC("struct_ops/cs_set_state")
void BPF_PROG(cs_set_state, struct sock *sk, u8 new_state)
{
	cubictcp_state(sk, new_state);
}

SEC("struct_ops/cs_cwnd_event")
void BPF_PROG(cs_cwnd_event, struct sock *sk, enum tcp_ca_event event)
{
	cubictcp_cwnd_event(sk, event);
}

SEC("struct_ops/cs_pkts_acked")
void BPF_PROG(cs_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	s32 rtt_us = sample->rtt_us;

	cubictcp_acked(sk, sample);
	record(sk, 2, rtt_us);
}

SEC("struct_ops/cs_undo_cwnd")
u32 BPF_PROG(cs_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops cubic_state = {
	.init = (void *)cs_init,
	.ssthresh = (void *)cs_ssthresh,
	.cong_avoid = (void *)cs_cong_avoid,
	.set_state = (void *)cs_set_state,
	.cwnd_event = (void *)cs_cwnd_event,
	.pkts_acked = (void *)cs_pkts_acked,
	.undo_cwnd = (void *)cs_undo_cwnd,
	.name = "cubic_state",
};
