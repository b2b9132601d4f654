//! What a run measures: per-flow and per-link-direction summaries, and time series as
//! columnar tables (one row per sample) that Python turns into pandas DataFrames and Parquet.

pub mod delay;
pub mod hurst;
pub mod qoe;
pub mod series;
pub mod traffic;

use crate::tcp::endpoint::{LossCounters, TransferCounters};
use serde::Serialize;

/// The result of a run.
#[derive(Clone, Debug, Serialize)]
pub struct SimResult {
    pub seed: u64,
    pub duration_ns: u64,
    /// Events processed by the event loop.
    pub events: u64,
    /// Packets serialised onto links (one per packet per hop).
    pub link_transmissions: u64,
    /// Packets dropped at a node that had no route to their destination.
    pub unroutable_packets: u64,
    pub flows: Vec<FlowSummary>,
    /// One entry per link direction.
    pub links: Vec<LinkDirSummary>,
    /// QoE metrics of each HAS player (`[[player]]`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub players: Vec<qoe::PlayerSummary>,
    /// Metrics across players (None without players).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub has: Option<qoe::HasSummary>,
    /// One entry per `[[traffic]]` generator.
    pub traffic: Vec<traffic::TrafficSummary>,
    /// What the inputs had that haslab forgave (e.g. duplicate Representation ids in an MPD),
    /// each naming the scenario field; absent when there is none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Time series, by name: `cwnd`, `goodput`, `queue` (see [`series`]); with players also
    /// `segments` and `players` (see [`qoe`]); `traffic` (see [`traffic`]) when the scenario
    /// has traffic generators.
    #[serde(skip)]
    pub tables: Vec<Table>,
}

/// Per-flow counters (a flow is one TCP connection; data goes from `src` to `dst`).
#[derive(Clone, Debug, Default, Serialize)]
pub struct FlowSummary {
    pub name: String,
    pub src: String,
    pub dst: String,
    pub cc: String,
    /// The sender's bytes and segments, except `bytes_received` and `messages_received`:
    /// the receiver's.
    #[serde(flatten)]
    pub transfer: TransferCounters,
    /// The sender's data segments dropped by a drop-tail queue anywhere on the path (the links'
    /// `dropped_packets` split by flow; random loss and pure ACKs not included).
    pub queue_dropped_packets: u64,
    /// The sender's loss detection and repair.
    #[serde(flatten)]
    pub loss: LossCounters,
    /// Time the connection was established (SYN-ACK received), if it was.
    pub established_ns: Option<u64>,
    /// Time the last written byte was acknowledged, if all were.
    pub completed_ns: Option<u64>,
    /// bytes_received × 8 / (end − established), end = completion or end of run.
    pub goodput_bps: f64,
    pub final_cwnd_pkts: u32,
    pub final_ssthresh_pkts: u32,
    pub min_rtt_ns: Option<u64>,
    pub mean_srtt_ns: Option<u64>,
    /// One-way delay, jitter and loss of the data packets (FlowMonitor's statistics; see
    /// [`delay`]), flattened into the flow's record.
    #[serde(flatten)]
    pub delay: delay::DelaySummary,
}

/// Per-link-direction counters: the output queue and the link it feeds.
#[derive(Clone, Debug, Default, Serialize)]
pub struct LinkDirSummary {
    /// `"from->to"` with node names.
    pub name: String,
    /// The link's name in the scenario (e.g. `"bottleneck"`).
    pub link: String,
    pub rate_bps: u64,
    pub delay_ns: u64,
    /// Packets and bytes whose serialisation ended (what a pcap of this direction holds).
    pub tx_packets: u64,
    pub tx_bytes: u64,
    /// Busy time / run duration.
    pub utilization: f64,
    pub enqueued_packets: u64,
    pub dropped_packets: u64,
    pub dropped_bytes: u64,
    /// Packets lost to the link's random loss.
    pub lost_packets: u64,
    pub max_queue_packets: u32,
    pub max_queue_bytes: u64,
    /// Queuing delay (enqueue → start of transmission) over packets that were transmitted.
    pub sojourn_mean_ns: f64,
    pub sojourn_p50_ns: u64,
    pub sojourn_p95_ns: u64,
    pub sojourn_p99_ns: u64,
    pub sojourn_max_ns: u64,
}

/// A column of a [`Table`].
#[derive(Clone, Debug, PartialEq)]
pub enum ColumnData {
    U64(Vec<u64>),
    U32(Vec<u32>),
    F64(Vec<f64>),
}

impl ColumnData {
    pub fn len(&self) -> usize {
        match self {
            ColumnData::U64(v) => v.len(),
            ColumnData::U32(v) => v.len(),
            ColumnData::F64(v) => v.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A named columnar table; all columns have the same length.
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    pub name: String,
    pub columns: Vec<(String, ColumnData)>,
}

impl Table {
    pub fn column(&self, name: &str) -> Option<&ColumnData> {
        self.columns.iter().find(|(n, _)| n == name).map(|(_, c)| c)
    }
    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, |(_, c)| c.len())
    }
}

impl SimResult {
    pub fn table(&self, name: &str) -> Option<&Table> {
        self.tables.iter().find(|t| t.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flow_summary_keeps_its_keys_in_order_with_the_endpoint_counters_flattened() {
        let v = serde_json::to_value(FlowSummary::default()).unwrap();
        let json = serde_json::to_string(&FlowSummary::default()).unwrap();
        let keys: Vec<&str> = json
            .trim_matches(|c| c == '{' || c == '}')
            .split(',')
            .map(|kv| kv.split(':').next().unwrap().trim_matches('"'))
            .collect();
        assert_eq!(keys.len(), v.as_object().unwrap().len());
        assert_eq!(
            keys[..23],
            [
                "name",
                "src",
                "dst",
                "cc",
                "bytes_written",
                "bytes_sent",
                "bytes_acked",
                "bytes_received",
                "messages_received",
                "segments_sent",
                "retransmitted_segments",
                "queue_dropped_packets",
                "rto_count",
                "tail_rto_count",
                "fast_recovery_count",
                "tlp_probes",
                "tlp_recoveries",
                "spurious_rtos",
                "dsacks_received",
                "rtl_dummies",
                "novel_paced_chunks",
                "established_ns",
                "completed_ns",
            ]
        );
    }
}
