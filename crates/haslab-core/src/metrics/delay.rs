//! Per-flow one-way delay, jitter and loss of the data packets, the statistics of ns-3's
//! FlowMonitor (`src/flow-monitor/model/flow-monitor.cc`, `FlowMonitor::ReportLastRx`):
//!
//! - delay of a packet = arrival at the destination node − the time the sender's TCP put it on
//!   the network (FlowMonitor: `now − firstSeenTime`, first seen by the sender's IP layer);
//!   mean one-way delay = `delaySum / rxPackets`;
//! - jitter = |delay_i − delay_{i−1}| over consecutive *received* packets (in arrival order),
//!   summed in `jitterSum`; the mean jitter is `jitterSum / (rxPackets − 1)`. This is the
//!   difference RFC 3550 §6.4.1 uses, without its 1/16 exponential smoothing;
//! - every data packet counts, retransmissions and duplicates included (FlowMonitor counts IP
//!   packets, `txPackets` and `rxPackets`).
//!
//! Where haslab differs from FlowMonitor:
//!
//! - a flow is the data direction of one TCP connection, and only packets carrying payload
//!   count; FlowMonitor classifies by 5-tuple, so its forward flow also holds the SYN, FIN and
//!   pure ACKs of that direction, and the ACKs form a second flow;
//! - lost packets are those dropped on the path (a full drop-tail queue or a link's random
//!   loss), counted where they are dropped. FlowMonitor's `lostPackets` counts packets not seen
//!   for `MaxPerHopDelay` (10 s) and reports queue drops separately in `packetsDropped`;
//!   packets still in flight at the end of the run are neither received nor lost in both;
//! - delays are integer nanoseconds and their sums are exact (u128).

use serde::Serialize;

/// Running sums of one flow's data packets.
#[derive(Clone, Debug, Default)]
pub struct DelayStats {
    pub sent_pkts: u64,
    pub received_pkts: u64,
    pub lost_pkts: u64,
    delay_sum_ns: u128,
    jitter_sum_ns: u128,
    last_delay_ns: Option<u64>,
    min_delay_ns: Option<u64>,
    max_delay_ns: u64,
}

/// What a flow summary reports of [`DelayStats`].
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct DelaySummary {
    /// Data packets the sender put on the network (retransmissions included).
    pub data_packets_sent: u64,
    /// Data packets that reached the receiver's node (duplicates included).
    pub data_packets_received: u64,
    /// Data packets dropped on the path: full queues and random loss.
    pub data_packets_lost: u64,
    /// data_packets_lost / data_packets_sent (0 when nothing was sent).
    pub data_loss_fraction: f64,
    /// Mean, minimum and maximum one-way delay of the received data packets.
    pub mean_one_way_delay_ns: Option<f64>,
    pub min_one_way_delay_ns: Option<u64>,
    pub max_one_way_delay_ns: Option<u64>,
    /// Mean |delay_i − delay_{i−1}| over consecutive received data packets.
    pub mean_jitter_ns: Option<f64>,
}

impl DelayStats {
    pub fn on_sent(&mut self) {
        self.sent_pkts += 1;
    }

    pub fn on_lost(&mut self) {
        self.lost_pkts += 1;
    }

    /// A data packet arrived at the destination `delay_ns` after it was sent.
    pub fn on_received(&mut self, delay_ns: u64) {
        self.received_pkts += 1;
        self.delay_sum_ns += u128::from(delay_ns);
        if let Some(last) = self.last_delay_ns {
            self.jitter_sum_ns += u128::from(last.abs_diff(delay_ns));
        }
        self.last_delay_ns = Some(delay_ns);
        self.min_delay_ns = Some(self.min_delay_ns.map_or(delay_ns, |m| m.min(delay_ns)));
        self.max_delay_ns = self.max_delay_ns.max(delay_ns);
    }

    pub fn summary(&self) -> DelaySummary {
        let n = self.received_pkts;
        DelaySummary {
            data_packets_sent: self.sent_pkts,
            data_packets_received: n,
            data_packets_lost: self.lost_pkts,
            data_loss_fraction: if self.sent_pkts == 0 {
                0.0
            } else {
                self.lost_pkts as f64 / self.sent_pkts as f64
            },
            mean_one_way_delay_ns: (n > 0).then(|| self.delay_sum_ns as f64 / n as f64),
            min_one_way_delay_ns: self.min_delay_ns,
            max_one_way_delay_ns: (n > 0).then_some(self.max_delay_ns),
            mean_jitter_ns: (n > 1).then(|| self.jitter_sum_ns as f64 / (n - 1) as f64),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jitter_is_the_mean_absolute_difference_of_consecutive_delays() {
        let mut s = DelayStats::default();
        for d in [10, 14, 11, 11, 20] {
            s.on_sent();
            s.on_received(d);
        }
        s.on_sent();
        s.on_lost();
        let m = s.summary();
        // |14-10| + |11-14| + |11-11| + |20-11| = 16 over 4 differences
        assert_eq!(m.mean_jitter_ns, Some(4.0));
        assert_eq!(m.mean_one_way_delay_ns, Some(66.0 / 5.0));
        assert_eq!(
            (m.min_one_way_delay_ns, m.max_one_way_delay_ns),
            (Some(10), Some(20))
        );
        assert_eq!(m.data_loss_fraction, 1.0 / 6.0);
    }

    #[test]
    fn nothing_received_reports_no_delay() {
        let m = DelayStats::default().summary();
        assert_eq!(m.mean_one_way_delay_ns, None);
        assert_eq!(m.mean_jitter_ns, None);
        assert_eq!(m.data_loss_fraction, 0.0);
    }
}
