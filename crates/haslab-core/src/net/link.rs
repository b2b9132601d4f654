//! One direction of a point-to-point link: an output queue, a transmitter that serialises one
//! packet at a time at `rate_bps`, and a pipe of constant propagation delay.
//!
//! Because the delay is constant, packets leave the pipe in the order they entered it, so the
//! pipe is a FIFO and at most one arrival event per link direction is ever pending (htsim's
//! trick). Random loss (Bernoulli, per packet) is applied at the receiving end, after the
//! packet has used the link's capacity — as ns-3's receive error model does.

use super::packet::Packet;
use super::queue::DropTail;
use crate::sim::rng::Stream;
use crate::sim::time::tx_time_ns;
use std::collections::VecDeque;

#[derive(Debug)]
pub struct LinkDir {
    pub from: u32,
    pub to: u32,
    pub rate_bps: u64,
    pub delay_ns: u64,
    pub loss: f64,
    pub rng: Stream,
    pub queue: DropTail,
    /// packet being serialised
    pub in_tx: Option<Packet>,
    /// packets propagating, with their arrival times
    pub pipe: VecDeque<(u64, Packet)>,
    /// packets and bytes whose serialisation has ended
    pub tx_packets: u64,
    pub tx_bytes: u64,
    /// time spent serialising (including a packet still being serialised)
    pub busy_ns: u64,
    pub lost_packets: u64,
}

/// What the caller must schedule after an operation on a link direction.
#[derive(Debug, PartialEq, Eq)]
pub enum LinkAction {
    None,
    /// serialisation of the head packet ends at this time
    TxDoneAt(u64),
}

impl LinkDir {
    pub fn new(
        from: u32,
        to: u32,
        rate_bps: u64,
        delay_ns: u64,
        loss: f64,
        queue: DropTail,
        rng: Stream,
    ) -> Self {
        LinkDir {
            from,
            to,
            rate_bps,
            delay_ns,
            loss,
            rng,
            queue,
            in_tx: None,
            pipe: VecDeque::new(),
            tx_packets: 0,
            tx_bytes: 0,
            busy_ns: 0,
            lost_packets: 0,
        }
    }

    fn start_tx(&mut self, pkt: Packet, now_ns: u64) -> LinkAction {
        let d = tx_time_ns(pkt.size_bytes as u64, self.rate_bps);
        self.busy_ns += d;
        self.in_tx = Some(pkt);
        LinkAction::TxDoneAt(now_ns + d)
    }

    /// A packet arrives at the output queue. Returns whether a transmission starts (or
    /// `None` if it was queued or dropped; drops are counted by the queue).
    #[inline]
    pub fn enqueue(&mut self, pkt: Packet, now_ns: u64) -> LinkAction {
        if self.in_tx.is_none() {
            // idle link: the packet goes straight to the transmitter (zero sojourn)
            self.queue.enqueued += 1;
            self.queue.sojourn.record(0);
            return self.start_tx(pkt, now_ns);
        }
        self.queue.enqueue(pkt, now_ns);
        LinkAction::None
    }

    /// Serialisation of the head packet ended: it enters the pipe. Returns the packet (for
    /// pcap), whether the pipe was empty (the caller then schedules an arrival at
    /// `now + delay`), and the next transmission if the queue is not empty.
    #[inline]
    pub fn tx_done(&mut self, now_ns: u64) -> (Packet, bool, LinkAction) {
        let pkt = self
            .in_tx
            .take()
            .expect("tx_done without a packet in transmission");
        // counted when serialisation ends, as a capture at this point sees it
        self.tx_packets += 1;
        self.tx_bytes += pkt.size_bytes as u64;
        let was_empty = self.pipe.is_empty();
        self.pipe.push_back((now_ns + self.delay_ns, pkt));
        let next = match self.queue.dequeue(now_ns) {
            Some(p) => self.start_tx(p, now_ns),
            None => LinkAction::None,
        };
        (pkt, was_empty, next)
    }

    /// The head of the pipe arrives at `to`. Returns it unless random loss took it, and the
    /// time of the next arrival if any.
    #[inline]
    pub fn arrive(&mut self) -> (Option<Packet>, Option<u64>) {
        let (_, pkt) = self.pipe.pop_front().expect("arrival from an empty pipe");
        let next = self.pipe.front().map(|(t, _)| *t);
        if self.rng.bernoulli(self.loss) {
            self.lost_packets += 1;
            return (None, next);
        }
        (Some(pkt), next)
    }
}
