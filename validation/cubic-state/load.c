// SPDX-License-Identifier: GPL-2.0
/*
 * Registers cubic_state.bpf.o's congestion control ("cubic_state") until SIGINT or SIGTERM,
 * then prints its records, one line each: t_ns kind snd_una snd_nxt cwnd ssthresh rtt_us
 * end_seq delay_min_us curr_rtt_us sample_cnt found epoch_start.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

struct rec {
	unsigned long long t_ns;
	unsigned kind, snd_una, snd_nxt, cwnd, ssthresh;
	int rtt_us;
	unsigned end_seq, delay_min_us, curr_rtt_us, sample_cnt, found, epoch_start;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	struct bpf_object *obj;
	struct bpf_link *link;
	unsigned zero = 0, n = 0;
	int recs, count;

	if (argc != 2) {
		fprintf(stderr, "usage: %s cubic_state.bpf.o\n", argv[0]);
		return 2;
	}
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj || bpf_object__load(obj)) {
		fprintf(stderr, "cannot load %s\n", argv[1]);
		return 1;
	}
	link = bpf_map__attach_struct_ops(bpf_object__find_map_by_name(obj, "cubic_state"));
	if (!link) {
		fprintf(stderr, "cannot register the congestion control\n");
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	fprintf(stderr, "cubic_state registered\n");
	while (!stop)
		pause();
	recs = bpf_object__find_map_fd_by_name(obj, "recs");
	count = bpf_object__find_map_fd_by_name(obj, "count");
	bpf_map_lookup_elem(count, &zero, &n);
	for (unsigned i = 0; i < n; i++) {
		struct rec r;

		if (bpf_map_lookup_elem(recs, &i, &r))
			break;
		printf("%llu %u %u %u %u %u %d %u %u %u %u %u %u\n", r.t_ns, r.kind, r.snd_una,
		       r.snd_nxt, r.cwnd, r.ssthresh, r.rtt_us, r.end_seq, r.delay_min_us,
		       r.curr_rtt_us, r.sample_cnt, r.found, r.epoch_start);
	}
	bpf_link__destroy(link);
	return 0;
}
