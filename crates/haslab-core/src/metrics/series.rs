//! Time-series recorders. Each appends rows to columns that become a [`super::Table`]:
//! - `cwnd`: time_ns, flow, cwnd_pkts, ssthresh_pkts, srtt_ns — the flow's sender, on each
//!   change of cwnd or ssthresh, at most once per `min_interval_ns` (0: every change);
//! - `goodput`: time_ns (end of window), flow, bytes, goodput_bps — bytes delivered in order
//!   to the receiving application in each window;
//! - `queue`: time_ns, link, packets, bytes — a traced queue's occupancy on change, at most
//!   once per `min_interval_ns`.

use super::{ColumnData, Table};

#[derive(Default, Debug)]
pub struct CwndSeries {
    pub min_interval_ns: u64,
    time_ns: Vec<u64>,
    flow: Vec<u32>,
    cwnd: Vec<u32>,
    ssthresh: Vec<u32>,
    srtt_ns: Vec<u64>,
    /// per flow: last (time, cwnd, ssthresh) recorded
    last: Vec<Option<(u64, u32, u32)>>,
}

impl CwndSeries {
    pub fn new(flows: usize, min_interval_ns: u64) -> Self {
        CwndSeries {
            min_interval_ns,
            last: vec![None; flows],
            ..Default::default()
        }
    }
    /// Adds a flow (a connection opened at run time).
    pub fn add_flow(&mut self) {
        self.last.push(None);
    }
    #[inline]
    pub fn observe(&mut self, now_ns: u64, flow: u32, cwnd: u32, ssthresh: u32, srtt_ns: u64) {
        let last = &mut self.last[flow as usize];
        if let Some((t, c, s)) = *last {
            if (c, s) == (cwnd, ssthresh) || now_ns < t + self.min_interval_ns {
                return;
            }
        }
        *last = Some((now_ns, cwnd, ssthresh));
        self.time_ns.push(now_ns);
        self.flow.push(flow);
        self.cwnd.push(cwnd);
        self.ssthresh.push(ssthresh);
        self.srtt_ns.push(srtt_ns);
    }
    pub fn into_table(self) -> Table {
        Table {
            name: "cwnd".into(),
            columns: vec![
                ("time_ns".into(), ColumnData::U64(self.time_ns)),
                ("flow".into(), ColumnData::U32(self.flow)),
                ("cwnd_pkts".into(), ColumnData::U32(self.cwnd)),
                ("ssthresh_pkts".into(), ColumnData::U32(self.ssthresh)),
                ("srtt_ns".into(), ColumnData::U64(self.srtt_ns)),
            ],
        }
    }
}

#[derive(Default, Debug)]
pub struct GoodputSeries {
    pub window_ns: u64,
    time_ns: Vec<u64>,
    flow: Vec<u32>,
    bytes: Vec<u64>,
    bps: Vec<f64>,
    sent: Vec<u64>,
    retx: Vec<u64>,
    drops: Vec<u64>,
    last_total: Vec<WindowTotals>,
}

/// A flow's running totals, differenced per window by [`GoodputSeries`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WindowTotals {
    /// payload bytes delivered in order to the receiver
    pub received: u64,
    /// payload bytes the sender put on the wire (retransmissions included)
    pub sent: u64,
    /// segments the sender retransmitted (each repairs one loss, or a spurious one)
    pub retransmits: u64,
    /// the sender's packets dropped by drop-tail queues on the path
    pub queue_drops: u64,
}

impl GoodputSeries {
    pub fn new(flows: usize, window_ns: u64) -> Self {
        GoodputSeries {
            window_ns,
            last_total: vec![WindowTotals::default(); flows],
            ..Default::default()
        }
    }
    /// Adds a flow (a connection opened at run time); its bytes count from zero.
    pub fn add_flow(&mut self) {
        self.last_total.push(WindowTotals::default());
    }
    /// Closes the window ending at `now_ns` (of length `len_ns`) with each flow's totals.
    pub fn close_window(
        &mut self,
        now_ns: u64,
        len_ns: u64,
        totals: impl Iterator<Item = WindowTotals>,
    ) {
        for (f, total) in totals.enumerate() {
            let last = self.last_total[f];
            let b = total.received - last.received;
            self.last_total[f] = total;
            self.time_ns.push(now_ns);
            self.flow.push(f as u32);
            self.sent.push(total.sent - last.sent);
            self.retx.push(total.retransmits - last.retransmits);
            self.drops.push(total.queue_drops - last.queue_drops);
            self.bytes.push(b);
            self.bps.push(if len_ns == 0 {
                0.0
            } else {
                b as f64 * 8.0 * 1e9 / len_ns as f64
            });
        }
    }
    pub fn into_table(self) -> Table {
        Table {
            name: "goodput".into(),
            columns: vec![
                ("time_ns".into(), ColumnData::U64(self.time_ns)),
                ("flow".into(), ColumnData::U32(self.flow)),
                ("bytes".into(), ColumnData::U64(self.bytes)),
                ("goodput_bps".into(), ColumnData::F64(self.bps)),
                ("sent_bytes".into(), ColumnData::U64(self.sent)),
                ("retransmits".into(), ColumnData::U64(self.retx)),
                ("queue_drops".into(), ColumnData::U64(self.drops)),
            ],
        }
    }
}

#[derive(Default, Debug)]
pub struct QueueSeries {
    pub min_interval_ns: u64,
    time_ns: Vec<u64>,
    link: Vec<u32>,
    pkts: Vec<u32>,
    bytes: Vec<u64>,
    /// per link direction: traced? and last (time, packets)
    traced: Vec<bool>,
    last: Vec<Option<(u64, u32)>>,
}

impl QueueSeries {
    pub fn new(link_dirs: usize, traced: &[usize], min_interval_ns: u64) -> Self {
        let mut t = vec![false; link_dirs];
        for &i in traced {
            t[i] = true;
        }
        QueueSeries {
            min_interval_ns,
            traced: t,
            last: vec![None; link_dirs],
            ..Default::default()
        }
    }
    #[inline]
    pub fn is_traced(&self, link_dir: usize) -> bool {
        self.traced[link_dir]
    }
    #[inline]
    pub fn observe(&mut self, now_ns: u64, link_dir: usize, pkts: u32, bytes: u64) {
        if let Some((t, p)) = self.last[link_dir] {
            if p == pkts || now_ns < t + self.min_interval_ns {
                return;
            }
        }
        self.last[link_dir] = Some((now_ns, pkts));
        self.time_ns.push(now_ns);
        self.link.push(link_dir as u32);
        self.pkts.push(pkts);
        self.bytes.push(bytes);
    }
    pub fn into_table(self) -> Table {
        Table {
            name: "queue".into(),
            columns: vec![
                ("time_ns".into(), ColumnData::U64(self.time_ns)),
                ("link".into(), ColumnData::U32(self.link)),
                ("packets".into(), ColumnData::U32(self.pkts)),
                ("bytes".into(), ColumnData::U64(self.bytes)),
            ],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cwnd_series_records_changes_only_and_respects_the_interval() {
        let mut s = CwndSeries::new(1, 10);
        s.observe(0, 0, 10, 100, 0);
        s.observe(1, 0, 10, 100, 0); // no change
        s.observe(5, 0, 12, 100, 0); // too soon
        s.observe(12, 0, 14, 100, 0);
        let t = s.into_table();
        assert_eq!(t.column("time_ns"), Some(&ColumnData::U64(vec![0, 12])));
        assert_eq!(t.column("cwnd_pkts"), Some(&ColumnData::U32(vec![10, 14])));
    }

    #[test]
    fn goodput_windows_difference_the_totals() {
        let mut g = GoodputSeries::new(2, 1_000_000_000);
        let w = |received, sent, retransmits| WindowTotals {
            received,
            sent,
            retransmits,
            queue_drops: retransmits / 2,
        };
        g.close_window(
            1_000_000_000,
            1_000_000_000,
            [w(1000, 1448, 0), w(0, 0, 0)].into_iter(),
        );
        g.close_window(
            2_000_000_000,
            1_000_000_000,
            [w(3000, 4000, 2), w(500, 500, 0)].into_iter(),
        );
        let t = g.into_table();
        assert_eq!(
            t.column("sent_bytes"),
            Some(&ColumnData::U64(vec![1448, 0, 2552, 500]))
        );
        assert_eq!(
            t.column("retransmits"),
            Some(&ColumnData::U64(vec![0, 0, 2, 0]))
        );
        assert_eq!(
            t.column("queue_drops"),
            Some(&ColumnData::U64(vec![0, 0, 1, 0]))
        );
        assert_eq!(
            t.column("bytes"),
            Some(&ColumnData::U64(vec![1000, 0, 2000, 500]))
        );
        assert_eq!(
            t.column("goodput_bps"),
            Some(&ColumnData::F64(vec![8000.0, 0.0, 16000.0, 4000.0]))
        );
    }
}
