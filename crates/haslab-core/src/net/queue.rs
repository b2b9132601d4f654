//! Output queues. Drop-tail, limited in packets or in bytes (the packet being serialised is
//! not in the queue, as with ns-3's queue discs and Linux qdiscs). Room is left for RED /
//! CoDel: a discipline is a variant of the scenario's `QueuePlan` and a match arm here.

use super::packet::Frame;
use std::collections::VecDeque;

/// The capacity of an output queue: a count of packets or of bytes (the scenario's
/// `queue = "67p"` or `queue = "30KB"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueLimit {
    Packets(u32),
    Bytes(u64),
}

/// Log-spaced histogram of sojourn times for percentiles without storing every sample:
/// 1 µs .. ~1100 s in 16 buckets per octave (relative error < 4.5 %).
///
/// The first bucket (under 1,024 ns: a packet that found the transmitter idle) is a field of
/// its own, so recording it touches no other memory; the vector of the other buckets grows only
/// up to the largest bucket used: an access link whose packets never wait allocates nothing
/// instead of 656 counters (5 kB per link direction, 20 kB per flow of a dumbbell), which is
/// what lets 100,000 flows fit in memory.
#[derive(Clone, Debug, Default)]
pub struct SojournStats {
    pub count: u64,
    pub sum_ns: u128,
    pub max_ns: u64,
    /// the count of bucket 0
    under_1024_ns: u64,
    /// the counts of buckets 1.. (index b - 1)
    buckets: Vec<u64>,
}

const SUB: u32 = 16;

impl SojournStats {
    fn bucket(ns: u64) -> usize {
        if ns < 1024 {
            return 0;
        }
        let octave = 63 - ns.leading_zeros(); // ≥ 10
        let frac = ((ns >> (octave - 4)) & 0xF) as u32;
        (((octave - 10) * SUB + frac + 1) as usize).min(41 * SUB as usize - 1)
    }
    fn bucket_upper(b: usize) -> u64 {
        if b == 0 {
            return 1023;
        }
        let b = b as u32 - 1;
        let octave = b / SUB + 10;
        let frac = (b % SUB) as u64;
        ((16 + frac + 1) << (octave - 4)) - 1
    }
    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.count += 1;
        self.sum_ns += ns as u128;
        self.max_ns = self.max_ns.max(ns);
        let b = Self::bucket(ns);
        if b == 0 {
            self.under_1024_ns += 1;
            return;
        }
        if b > self.buckets.len() {
            self.buckets.resize(b, 0);
        }
        self.buckets[b - 1] += 1;
    }
    pub fn mean_ns(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum_ns as f64 / self.count as f64
        }
    }
    /// The q-quantile (0..=1), as the upper edge of its bucket (capped at the maximum seen).
    pub fn quantile_ns(&self, q: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0;
        let counts = std::iter::once(&self.under_1024_ns).chain(self.buckets.iter());
        for (b, &n) in counts.enumerate() {
            seen += n;
            if seen >= rank {
                return Self::bucket_upper(b).min(self.max_ns);
            }
        }
        self.max_ns
    }
}

/// A drop-tail FIFO.
#[derive(Debug)]
pub struct DropTail {
    limit: QueueLimit,
    /// the packets waiting, with the time each entered the queue (for its sojourn time)
    pkts: VecDeque<(u64, Frame)>,
    bytes: u64,
    pub enqueued: u64,
    pub dropped: u64,
    pub dropped_bytes: u64,
    pub max_pkts: u32,
    pub max_bytes: u64,
    pub sojourn: SojournStats,
}

impl DropTail {
    pub fn new(limit: QueueLimit) -> Self {
        DropTail {
            limit,
            pkts: VecDeque::new(),
            bytes: 0,
            enqueued: 0,
            dropped: 0,
            dropped_bytes: 0,
            max_pkts: 0,
            max_bytes: 0,
            sojourn: SojournStats::default(),
        }
    }
    #[inline]
    pub fn len_pkts(&self) -> u32 {
        self.pkts.len() as u32
    }
    #[inline]
    pub fn len_bytes(&self) -> u64 {
        self.bytes
    }
    /// Whether a packet of `size_bytes` fits a queue holding `len_pkts` packets of `len_bytes`.
    #[inline]
    pub fn fits(&self, len_pkts: usize, len_bytes: u64, size_bytes: u32) -> bool {
        match self.limit {
            QueueLimit::Packets(n) => (len_pkts as u64) < n as u64,
            QueueLimit::Bytes(b) => len_bytes + size_bytes as u64 <= b,
        }
    }
    /// Enqueues `pkt` at `now_ns`, or drops it (returns false) if it does not fit.
    #[inline]
    pub fn enqueue(&mut self, pkt: Frame, now_ns: u64) -> bool {
        let fits = self.fits(self.pkts.len(), self.bytes, pkt.size_bytes);
        if !fits {
            self.dropped += 1;
            self.dropped_bytes += pkt.size_bytes as u64;
            return false;
        }
        self.bytes += pkt.size_bytes as u64;
        self.pkts.push_back((now_ns, pkt));
        self.enqueued += 1;
        self.max_pkts = self.max_pkts.max(self.pkts.len() as u32);
        self.max_bytes = self.max_bytes.max(self.bytes);
        true
    }
    /// The packet at the head, if any, and when it entered the queue.
    #[inline]
    pub fn head(&self) -> Option<(u64, &Frame)> {
        self.pkts.front().map(|(t, p)| (*t, p))
    }
    /// Counts a packet refused before it reached the queue (too large for the link).
    pub fn refuse(&mut self, pkt: &Frame) {
        self.dropped += 1;
        self.dropped_bytes += pkt.size_bytes as u64;
    }
    /// Dequeues the head for transmission at `now_ns`, recording its sojourn time.
    #[inline]
    pub fn dequeue(&mut self, now_ns: u64) -> Option<Frame> {
        let (enqueued_ns, pkt) = self.pkts.pop_front()?;
        self.bytes -= pkt.size_bytes as u64;
        self.sojourn.record(now_ns - enqueued_ns);
        Some(pkt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::{Packet, TcpHeader};

    fn pkt(payload: u32) -> Frame {
        let p = Packet::tcp(
            0,
            1,
            0,
            true,
            TcpHeader {
                payload_bytes: payload,
                ..Default::default()
            },
        );
        Frame::of(&p, 0)
    }

    #[test]
    fn packet_limit_drops_the_arrival_that_does_not_fit() {
        let mut q = DropTail::new(QueueLimit::Packets(2));
        assert!(q.enqueue(pkt(100), 0));
        assert!(q.enqueue(pkt(100), 0));
        assert!(!q.enqueue(pkt(100), 0));
        assert_eq!((q.enqueued, q.dropped, q.len_pkts()), (2, 1, 2));
        q.dequeue(5);
        assert!(q.enqueue(pkt(100), 5));
    }

    #[test]
    fn byte_limit_counts_wire_bytes() {
        let mut q = DropTail::new(QueueLimit::Bytes(3000));
        assert!(q.enqueue(pkt(1460), 0)); // 1500 B
        assert!(q.enqueue(pkt(1460), 0)); // 3000 B
        assert!(!q.enqueue(pkt(0), 0));
        assert_eq!(q.len_bytes(), 3000);
        assert_eq!(q.dequeue(10).unwrap().size_bytes, 1500);
        assert_eq!(q.len_bytes(), 1500);
    }

    #[test]
    fn sojourn_quantiles_are_within_bucket_error() {
        let mut s = SojournStats::default();
        for i in 1..=10_000u64 {
            s.record(i * 1_000); // 1 µs .. 10 ms uniformly
        }
        for (q, exact) in [(0.5, 5_000_000.0), (0.95, 9_500_000.0), (0.99, 9_900_000.0)] {
            let got = s.quantile_ns(q) as f64;
            assert!((got - exact).abs() / exact < 0.07, "q{q}: {got} vs {exact}");
        }
        assert_eq!(s.max_ns, 10_000_000);
        assert!((s.mean_ns() - 5_000_500.0).abs() < 1.0);
    }

    #[test]
    fn sojourns_under_a_microsecond_rank_below_the_others() {
        let mut s = SojournStats::default();
        for i in 0..1_000u64 {
            s.record(if i % 10 < 7 { i % 1_000 } else { 1_000_000 }); // 70 % under 1 µs
        }
        assert_eq!(s.count, 1_000);
        assert!(s.quantile_ns(0.7) <= 1_023, "{}", s.quantile_ns(0.7));
        let q = s.quantile_ns(0.71) as f64;
        assert!((q - 1e6).abs() / 1e6 < 0.07, "{q}");
        // only zeros: the quantile is the largest seen
        let mut z = SojournStats::default();
        z.record(0);
        assert_eq!(z.quantile_ns(0.99), 0);
    }
}
