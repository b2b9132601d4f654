/* Values shared between the haslab BPF congestion controls (the *.bpf.c files beside it) and
 * user space (python/haslab/live/bpfsys.py reads and writes them with the same layout). */
#ifndef HASLAB_CC_H
#define HASLAB_CC_H

#define HASLAB_LADDER_MAX 16

/* The encoding ladder of one connection, written by the server for the accepted socket into
 * the socket-storage map haslab_ladder. rates_bps[0..n) ascending, bits per second. */
struct haslab_ladder {
	__u32 n;
	__u32 pad;
	__u64 rates_bps[HASLAB_LADDER_MAX];
};

/* The algorithm's own view of a connection, in the socket-storage map haslab_stats (written by
 * haslab_tcphas on every ACK, tcphas.bpf.c; read back by the server for its results). */
struct haslab_ca_stats {
	__u32 qlevel;
	__u32 flags;
	__u64 bwe_bps;
	__u64 shaping_bps;
	__u64 rtt_hat_us;
	__u64 updates;
};

#endif
