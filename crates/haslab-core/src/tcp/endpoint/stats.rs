//! An endpoint's counters. They are declared once: [`EndpointStats`] holds them, and a flow's
//! summary ([`crate::metrics::FlowSummary`]) embeds the same two groups, flattened, with the
//! world's `queue_dropped_packets` between them.

use serde::Serialize;

/// Bytes and segments (payload bytes, i.e. without SYN/FIN).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TransferCounters {
    /// Bytes the sending application wrote.
    pub bytes_written: u64,
    /// Payload bytes put on the wire by the sender, retransmissions included.
    pub bytes_sent: u64,
    /// Payload bytes cumulatively acknowledged.
    pub bytes_acked: u64,
    /// Payload bytes delivered in order to the receiving application.
    pub bytes_received: u64,
    /// Tagged application messages (writes) of the peer received whole and in order.
    pub messages_received: u64,
    pub segments_sent: u64,
    pub retransmitted_segments: u64,
}

/// Loss detection and repair: RTOs, fast recoveries, tail-loss probes, D-SACKs, and the
/// Enhancing-TCP mechanisms against tail loss.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LossCounters {
    pub rto_count: u64,
    /// RTOs whose head segment had never been retransmitted: a loss that duplicate ACKs or
    /// SACK never reported (a tail loss, or a flight whose ACKs were all lost). The other RTOs
    /// follow a lost retransmission, which neither TLP nor RTL can prevent.
    pub tail_rto_count: u64,
    pub fast_recovery_count: u64,
    /// Tail-loss probes sent (RFC 8985 §7).
    pub tlp_probes: u64,
    /// TLP episodes that ended with the probe having repaired a loss (a cwnd reduction).
    pub tlp_recoveries: u64,
    /// RTOs found spurious by their timestamps and undone (RFC 3522 detection, Linux
    /// `tcp_try_undo_loss`).
    pub spurious_rtos: u64,
    /// D-SACK blocks received (RFC 2883): the peer got a segment twice.
    pub dsacks_received: u64,
    /// Reducing Tail Loss dummy packets sent (Enhancing-TCP §3.2).
    pub rtl_dummies: u64,
    /// Chunks whose first RTT was paced by the novel pacing algorithm (Enhancing-TCP §3.1).
    pub novel_paced_chunks: u64,
}

/// Counters and milestones of one endpoint.
#[derive(Clone, Debug, Default)]
pub struct EndpointStats {
    pub transfer: TransferCounters,
    pub loss: LossCounters,
    /// Time the handshake completed.
    pub established_ns: Option<u64>,
    /// Time the last written byte was acknowledged (updated at each idle point).
    pub completed_ns: Option<u64>,
}
