//! What the cross-traffic generators did: a summary per generator and the `traffic` table of
//! bytes received per window.

use super::{ColumnData, Table};
use serde::Serialize;

/// Counters of one `[[traffic]]` generator. For datagram generators (ppbp, onoff, cbr) bytes
/// are IP bytes of the datagrams; for `web`, TCP payload bytes of the transfers.
#[derive(Clone, Debug, Default, Serialize)]
pub struct TrafficSummary {
    pub name: String,
    pub kind: String,
    pub src: String,
    pub dst: String,
    pub start_ns: u64,
    /// End of the generator's activity within the run (its stop, or the end of the run).
    pub end_ns: u64,
    /// The model's long-run mean rate.
    pub target_mean_bps: f64,
    /// Datagrams sent (web: transfers started).
    pub sent_packets: u64,
    /// Bytes sent (web: bytes of the transfers started).
    pub sent_bytes: u64,
    /// Datagrams received by the sink (web: transfers completed).
    pub received_packets: u64,
    /// Bytes received by the sink (web: payload delivered to the client).
    pub received_bytes: u64,
    /// sent_bytes × 8 / (end − start).
    pub sent_mean_bps: f64,
    /// received_bytes × 8 / (end − start).
    pub received_mean_bps: f64,
    /// web only: mean time from a transfer's start to the acknowledgement of its last byte,
    /// over completed transfers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mean_transfer_ns: Option<u64>,
}

/// `traffic` table: time_ns (end of window), source (index into the summaries), bytes received
/// by the source's sink in the window.
#[derive(Default, Debug)]
pub struct TrafficSeries {
    time_ns: Vec<u64>,
    source: Vec<u32>,
    bytes: Vec<u64>,
    last_total: Vec<u64>,
}

impl TrafficSeries {
    pub fn new(sources: usize) -> Self {
        TrafficSeries {
            last_total: vec![0; sources],
            ..Default::default()
        }
    }
    /// Closes the window ending at `now_ns` with each source's total bytes received so far.
    pub fn close_window(&mut self, now_ns: u64, totals: impl Iterator<Item = u64>) {
        for (s, total) in totals.enumerate() {
            self.time_ns.push(now_ns);
            self.source.push(s as u32);
            self.bytes.push(total - self.last_total[s]);
            self.last_total[s] = total;
        }
    }
    pub fn into_table(self) -> Table {
        Table {
            name: "traffic".into(),
            columns: vec![
                ("time_ns".into(), ColumnData::U64(self.time_ns)),
                ("source".into(), ColumnData::U32(self.source)),
                ("bytes".into(), ColumnData::U64(self.bytes)),
            ],
        }
    }
}
