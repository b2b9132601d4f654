//! A link direction crossed in closed form: for a FIFO at a constant rate fed by a single source
//! whose packets arrive in time order, the schedule needs no events. Packet k, arriving at `a_k`,
//! starts its serialisation at `s_k = max(a_k, s_{k-1} + d_{k-1})` (Lindley's recursion), leaves
//! at `s_k + d_k` and arrives at the far end `delay` later. The drop-tail rule sees the packets
//! that arrived and have not started (those with `s > a_k`); random loss is drawn from the
//! link's own stream in packet order, as the event form draws it.
//!
//! Used for the link directions of a datagram generator's path that no other traffic crosses
//! (`[[traffic]].private_links = "closed-form"`): the datagram reaches the first shared link at
//! the time the event form would deliver it there.

use super::link::LinkDir;
use crate::sim::time::tx_time_ns;
use std::collections::VecDeque;

/// The state of one link direction crossed in closed form.
#[derive(Debug, Default)]
pub struct ClosedFormHop {
    /// when the transmitter is free again
    free_at_ns: u64,
    /// packets accepted and not yet started: (start time, size)
    waiting: VecDeque<(u64, u32)>,
    waiting_bytes: u64,
}

impl ClosedFormHop {
    /// A packet of `size_bytes` arrives at the link's queue at `at_ns` (no earlier than the
    /// previous one). Updates the link's counters as the event form would (at this moment rather
    /// than when serialisation ends) and returns when the packet reaches the far end, or None
    /// if the queue dropped it or random loss took it.
    pub fn cross(&mut self, link: &mut LinkDir, size_bytes: u32, at_ns: u64) -> Option<u64> {
        while self.waiting.front().is_some_and(|&(s, _)| s <= at_ns) {
            let (_, b) = self.waiting.pop_front().expect("a waiting packet");
            self.waiting_bytes -= b as u64;
        }
        let q = &mut link.queue;
        if !q.fits(self.waiting.len(), self.waiting_bytes, size_bytes) {
            q.dropped += 1;
            q.dropped_bytes += size_bytes as u64;
            return None;
        }
        let start = at_ns.max(self.free_at_ns);
        let d = tx_time_ns(size_bytes as u64, link.rate_bps);
        self.free_at_ns = start + d;
        if start > at_ns {
            self.waiting.push_back((start, size_bytes));
            self.waiting_bytes += size_bytes as u64;
        }
        q.enqueued += 1;
        q.sojourn.record(start - at_ns);
        q.max_pkts = q.max_pkts.max(self.waiting.len() as u32);
        q.max_bytes = q.max_bytes.max(self.waiting_bytes);
        link.tx_packets += 1;
        link.tx_bytes += size_bytes as u64;
        link.busy_ns += d;
        if link.rng.bernoulli(link.loss) {
            link.lost_packets += 1;
            return None;
        }
        Some(start + d + link.delay_ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::queue::DropTail;
    use crate::net::queue::QueueLimit;
    use crate::sim::rng::Stream;

    fn link(limit: u32) -> LinkDir {
        // 12 Mbps: 1500 B in 1 ms; 5 ms of delay
        LinkDir::new(
            0,
            1,
            12_000_000,
            5_000_000,
            0.0,
            DropTail::new(QueueLimit::Packets(limit)),
            Stream::new(1, "t"),
        )
    }

    #[test]
    fn a_burst_is_serialised_back_to_back_and_the_queue_limit_holds() {
        let mut l = link(2);
        let mut h = ClosedFormHop::default();
        // four packets at once: one in service, two queued, the fourth dropped
        let out: Vec<_> = (0..4).map(|_| h.cross(&mut l, 1500, 0)).collect();
        assert_eq!(
            out,
            [Some(6_000_000), Some(7_000_000), Some(8_000_000), None]
        );
        assert_eq!(
            (l.queue.enqueued, l.queue.dropped, l.queue.max_pkts),
            (3, 1, 2)
        );
        // at 1 ms the second packet has started: one waits, so one more fits
        assert_eq!(h.cross(&mut l, 1500, 1_000_000), Some(9_000_000));
        // after an idle period the link starts at once
        assert_eq!(h.cross(&mut l, 1500, 50_000_000), Some(56_000_000));
        assert_eq!(l.tx_packets, 5);
        assert_eq!(l.busy_ns, 5_000_000);
        assert_eq!(l.queue.sojourn.max_ns, 2_000_000);
    }
}
