//! One direction of a point-to-point link: an output queue, a transmitter that serialises one
//! packet at a time at `rate_bps`, and a pipe of constant propagation delay.
//!
//! A direction may instead be served by a Mahimahi trace ([`super::mahimahi`]): then no
//! packet is "in transmission" at a rate; packets leave the queue at the trace's delivery
//! opportunities, byte by byte ([`LinkDir::serve_opportunity`]). The fixed-rate path does not
//! look at the trace beyond one branch in [`LinkDir::enqueue`].
//!
//! Because the delay is constant, packets leave the pipe in the order they entered it, so the
//! pipe is a FIFO and at most one arrival event per link direction is ever pending (htsim's
//! trick). Random loss (Bernoulli, per packet) is applied at the receiving end, after the
//! packet has used the link's capacity — as ns-3's receive error model does.
//!
//! **Two forms of the fixed-rate transmitter.** The event form serialises with an
//! end-of-serialisation event per packet ([`LinkDir::tx_done`]), which dequeues the next packet.
//! The scheduled form ([`LinkDir::scheduled`], chosen by the world for directions whose rate
//! never changes and whose queue is neither traced nor captured) computes a packet's departure
//! when it is enqueued: a drop-tail FIFO at a constant rate starts packet k at
//! `s_k = max(a_k, e_{k-1})` and ends it at `e_k = s_k + d_k` (Lindley's recursion, as
//! [`super::closed_form`]), so the packet goes into the pipe at once with its arrival time
//! `e_k + delay`, and only the arrival costs an event. The queue then holds the packets accepted
//! whose serialisation has not started (`s > now`); the drop-tail rule, the maximum occupancy, the
//! sojourn times (`s_k - a_k`), the busy time and the transmission counters are those of the event
//! form — the counters are settled lazily ([`LinkDir::settle`]): a packet counts as transmitted
//! once `e_k <= now`, and its sojourn and busy time once `s_k <= now`, as the event form counts
//! them when its events run. Both forms see a packet arriving at the nanosecond a transmission
//! ends after that transmission's next packet has started (the event list runs departures
//! first: `sim::events`), so they take the same drop decisions.

use super::mahimahi::{MahimahiTrace, OPPORTUNITY_BYTES};
use super::packet::Frame;
use super::queue::{DropTail, SojournStats};
use crate::sim::rng::Stream;
use crate::sim::time::{tx_time_ns, NS_PER_MS, NS_PER_SEC};
use std::collections::VecDeque;
use std::sync::Arc;

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
    pub in_tx: Option<Frame>,
    /// packets propagating, with their arrival times
    pub pipe: VecDeque<(u64, Frame)>,
    /// packets and bytes whose serialisation has ended
    pub tx_packets: u64,
    pub tx_bytes: u64,
    /// time spent serialising (including a packet still being serialised)
    pub busy_ns: u64,
    pub lost_packets: u64,
    /// Mahimahi service replacing the fixed-rate transmitter (None: fixed rate).
    pub trace: Option<Box<TraceService>>,
    /// The scheduled form of the fixed-rate transmitter (departures computed at enqueue); None:
    /// the event form.
    pub scheduled: Option<Schedule>,
}

/// The scheduled form's state: the packets accepted whose serialisation had not ended when
/// the counters were last settled, with their computed start and end.
#[derive(Debug, Default)]
pub struct Schedule {
    /// when the transmitter is free again (the end of the last packet accepted)
    free_at_ns: u64,
    /// accepted packets not yet counted as transmitted, in order
    pending: VecDeque<Scheduled>,
    /// whether the first of `pending` has started (its sojourn and busy time are counted)
    head_started: bool,
    /// bytes of the packets of `pending` that have not started (the queue's occupancy)
    waiting_bytes: u64,
    /// the serialisation time of the last packet size seen (`tx_time`; 0 bytes: none yet):
    /// a link carries few sizes (full segments, ACKs), and the rate never changes
    last_size_bytes: u32,
    last_tx_ns: u64,
}

impl Schedule {
    /// The serialisation time of `size_bytes` at `rate_bps` ([`tx_time_ns`], remembered for the
    /// last size).
    #[inline]
    fn tx_time(&mut self, size_bytes: u32, rate_bps: u64) -> u64 {
        if size_bytes != self.last_size_bytes {
            self.last_size_bytes = size_bytes;
            self.last_tx_ns = tx_time_ns(size_bytes as u64, rate_bps);
        }
        self.last_tx_ns
    }
}

/// One packet of the scheduled form: when it was enqueued, starts and ends serialisation.
#[derive(Clone, Copy, Debug)]
struct Scheduled {
    enqueued_ns: u64,
    start_ns: u64,
    end_ns: u64,
    size_bytes: u32,
}

impl Schedule {
    /// Walks the pending packets in order, as far as `now_ns`: `on_start` for each packet whose
    /// serialisation has started by then and was not yet counted as started, `on_end` for each
    /// that has ended. Returns whether the first packet left pending has started. Changes
    /// nothing: [`LinkDir::settle`] applies the walk, [`LinkDir::counters_at`] only reads it.
    #[inline]
    fn progress(
        &self,
        now_ns: u64,
        mut on_start: impl FnMut(&Scheduled),
        mut on_end: impl FnMut(&Scheduled),
    ) -> bool {
        let mut head_started = self.head_started;
        for f in &self.pending {
            if !head_started {
                if f.start_ns > now_ns {
                    break;
                }
                on_start(f);
                head_started = true;
            }
            if f.end_ns > now_ns {
                break;
            }
            on_end(f);
            head_started = false;
        }
        head_started
    }
}

/// A link direction's counters as of a given time (see [`LinkDir::counters_at`]).
#[derive(Debug)]
pub struct LinkCounters<'a> {
    pub tx_packets: u64,
    pub tx_bytes: u64,
    pub busy_ns: u64,
    pub sojourn: std::borrow::Cow<'a, SojournStats>,
}

/// The state of a direction served by a Mahimahi trace.
#[derive(Debug)]
pub struct TraceService {
    pub trace: Arc<MahimahiTrace>,
    /// bytes of the packet in service (`in_tx`) still to send
    head_left_bytes: u32,
    /// the opportunity event scheduled, if any: its number of opportunities
    pending: Option<u32>,
}

/// What the caller must schedule after an operation on a link direction.
#[derive(Debug, PartialEq, Eq)]
pub enum LinkAction {
    None,
    /// serialisation of the head packet ends at this time
    TxDoneAt(u64),
    /// (trace-served direction) the next delivery opportunity is at this time
    OpportunityAt(u64),
    /// (scheduled form) the packet entered an empty pipe: its arrival at the far end is at this
    /// time
    ArriveAt(u64),
    /// the queue dropped the packet (counted there): its slot is the caller's to free
    Dropped,
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
            trace: None,
            scheduled: None,
        }
    }

    /// Serves this direction in the scheduled form from now on (before the run starts; not for
    /// a trace-served direction nor one whose rate changes).
    pub fn use_scheduled_form(&mut self) {
        debug_assert!(self.trace.is_none() && self.in_tx.is_none() && self.pipe.is_empty());
        self.scheduled = Some(Schedule::default());
    }

    /// Scheduled form: a packet arrives at the output queue at `now_ns`. It is dropped if the
    /// packets not yet started leave no room for it; otherwise it goes into the pipe with its
    /// arrival time.
    #[inline]
    fn enqueue_scheduled(&mut self, pkt: Frame, now_ns: u64) -> LinkAction {
        self.settle(now_ns);
        let sch = self.scheduled.as_mut().expect("the scheduled form");
        let q = &mut self.queue;
        let waiting = sch.pending.len() - sch.head_started as usize;
        if !q.fits(waiting, sch.waiting_bytes, pkt.size_bytes) {
            q.refuse(&pkt);
            return LinkAction::Dropped;
        }
        q.enqueued += 1;
        let d = sch.tx_time(pkt.size_bytes, self.rate_bps);
        let start_ns = now_ns.max(sch.free_at_ns);
        let end_ns = start_ns + d;
        sch.free_at_ns = end_ns;
        sch.pending.push_back(Scheduled {
            enqueued_ns: now_ns,
            start_ns,
            end_ns,
            size_bytes: pkt.size_bytes,
        });
        if start_ns == now_ns {
            // idle transmitter: the packet starts at once (zero sojourn); every earlier packet
            // has ended, so it is the only one pending
            debug_assert_eq!(sch.pending.len(), 1);
            sch.head_started = true;
            q.sojourn.record(0);
            self.busy_ns += d;
        } else {
            sch.waiting_bytes += pkt.size_bytes as u64;
            q.max_pkts = q.max_pkts.max(waiting as u32 + 1);
            q.max_bytes = q.max_bytes.max(sch.waiting_bytes);
        }
        let arrive_ns = end_ns + self.delay_ns;
        let was_empty = self.pipe.is_empty();
        self.pipe.push_back((arrive_ns, pkt));
        if was_empty {
            LinkAction::ArriveAt(arrive_ns)
        } else {
            LinkAction::None
        }
    }

    /// Scheduled form: counts what has happened by `now_ns` — the sojourn and busy time of the
    /// packets that started serialisation, the packets and bytes of those that ended — as the
    /// event form counts them when its events run. Idempotent; a no-op in the event form.
    #[inline]
    pub fn settle(&mut self, now_ns: u64) {
        let Some(sch) = self.scheduled.as_mut() else {
            return;
        };
        // nothing pending, or the first pending packet's next step is still ahead
        let Some(first) = sch.pending.front() else {
            return;
        };
        let next_step_ns = if sch.head_started {
            first.end_ns
        } else {
            first.start_ns
        };
        if now_ns < next_step_ns {
            return;
        }
        if sch.head_started && sch.pending.len() == 1 {
            // the usual case of an uncongested link: its one pending packet, in transmission
            // when last settled, has ended
            let size_bytes = first.size_bytes as u64;
            self.tx_packets += 1;
            self.tx_bytes += size_bytes;
            sch.pending.clear();
            sch.head_started = false;
            return;
        }
        self.settle_walk(now_ns);
    }

    /// [`LinkDir::settle`]'s general case, out of line: walks the pending packets as far as
    /// `now_ns`, counting those that started and those that ended.
    #[inline(never)]
    fn settle_walk(&mut self, now_ns: u64) {
        let Some(sch) = self.scheduled.as_mut() else {
            return;
        };
        let (queue, busy_ns) = (&mut self.queue, &mut self.busy_ns);
        let (mut ended, mut started_bytes) = (0usize, 0u64);
        let (tx_packets, tx_bytes) = (&mut self.tx_packets, &mut self.tx_bytes);
        let head_started = sch.progress(
            now_ns,
            |f| {
                queue.sojourn.record(f.start_ns - f.enqueued_ns);
                *busy_ns += f.end_ns - f.start_ns;
                started_bytes += f.size_bytes as u64;
            },
            |f| {
                *tx_packets += 1;
                *tx_bytes += f.size_bytes as u64;
                ended += 1;
            },
        );
        sch.pending.drain(..ended);
        sch.waiting_bytes -= started_bytes;
        sch.head_started = head_started;
    }

    /// The transmission counters, busy time and sojourn statistics as of `now_ns` (no earlier
    /// than the last event run), without settling: what [`LinkDir::settle`] would make them.
    pub fn counters_at(&self, now_ns: u64) -> LinkCounters<'_> {
        let mut c = LinkCounters {
            tx_packets: self.tx_packets,
            tx_bytes: self.tx_bytes,
            busy_ns: self.busy_ns,
            sojourn: std::borrow::Cow::Borrowed(&self.queue.sojourn),
        };
        if let Some(sch) = &self.scheduled {
            let (sojourn, busy_ns) = (&mut c.sojourn, &mut c.busy_ns);
            let (tx_packets, tx_bytes) = (&mut c.tx_packets, &mut c.tx_bytes);
            sch.progress(
                now_ns,
                |f| {
                    sojourn.to_mut().record(f.start_ns - f.enqueued_ns);
                    *busy_ns += f.end_ns - f.start_ns;
                },
                |f| {
                    *tx_packets += 1;
                    *tx_bytes += f.size_bytes as u64;
                },
            );
        }
        c
    }

    /// Serves this direction with a Mahimahi trace from now on (before the run starts); its
    /// `rate_bps` becomes the trace's mean rate (for summaries only).
    pub fn set_trace(&mut self, trace: Arc<MahimahiTrace>) {
        self.rate_bps = trace.mean_rate_bps().max(1);
        self.trace = Some(Box::new(TraceService {
            trace,
            head_left_bytes: 0,
            pending: None,
        }));
    }

    fn start_tx(&mut self, pkt: Frame, now_ns: u64) -> LinkAction {
        let d = tx_time_ns(pkt.size_bytes as u64, self.rate_bps);
        self.busy_ns += d;
        self.in_tx = Some(pkt);
        LinkAction::TxDoneAt(now_ns + d)
    }

    /// A packet arrives at the output queue. Returns what to schedule: the end of a
    /// transmission that starts now (event form), a delivery opportunity (trace-served), or
    /// the packet's arrival at the far end if it entered an empty pipe (scheduled form); `None`
    /// if nothing (queued); `Dropped` if the queue dropped it (and counted the drop).
    #[inline]
    pub fn enqueue(&mut self, pkt: Frame, now_ns: u64) -> LinkAction {
        if self.scheduled.is_some() {
            return self.enqueue_scheduled(pkt, now_ns);
        }
        self.enqueue_unscheduled(pkt, now_ns)
    }

    /// [`LinkDir::enqueue`] for a direction not in the scheduled form (trace-served, or with an
    /// end-of-serialisation event), out of line.
    #[inline(never)]
    fn enqueue_unscheduled(&mut self, pkt: Frame, now_ns: u64) -> LinkAction {
        if self.trace.is_some() {
            return self.trace_enqueue(pkt, now_ns);
        }
        if self.in_tx.is_none() {
            // idle link: the packet goes straight to the transmitter (zero sojourn)
            self.queue.enqueued += 1;
            self.queue.sojourn.record(0);
            return self.start_tx(pkt, now_ns);
        }
        if !self.queue.enqueue(pkt, now_ns) {
            return LinkAction::Dropped;
        }
        LinkAction::None
    }

    /// Serialisation of the head packet ended: it enters the pipe. Returns the packet (for
    /// pcap), whether the pipe was empty (the caller then schedules an arrival at
    /// `now + delay`), and the next transmission if the queue is not empty.
    #[inline]
    pub fn tx_done(&mut self, now_ns: u64) -> (Frame, bool, LinkAction) {
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

    /// Mahimahi: queue the packet; if no opportunity is scheduled, schedule the first one of a
    /// later millisecond (a packet is never served in the millisecond it arrives).
    fn trace_enqueue(&mut self, pkt: Frame, now_ns: u64) -> LinkAction {
        if pkt.size_bytes > OPPORTUNITY_BYTES {
            // Mahimahi refuses packets larger than one opportunity
            self.queue.refuse(&pkt);
            return LinkAction::Dropped;
        }
        if !self.queue.enqueue(pkt, now_ns) {
            return LinkAction::Dropped;
        }
        let svc = self.trace.as_mut().expect("a trace-served direction");
        if svc.pending.is_some() {
            return LinkAction::None;
        }
        match svc.trace.next_after(now_ns / NS_PER_MS) {
            Some((t_ms, count)) => {
                svc.pending = Some(count);
                LinkAction::OpportunityAt(t_ms * NS_PER_MS)
            }
            None => LinkAction::None, // a `once` trace has ended: nothing is delivered
        }
    }

    /// Mahimahi: uses the delivery opportunities of the current millisecond (scheduled by
    /// [`LinkAction::OpportunityAt`]). Up to 1500 bytes per opportunity leave the queue, per
    /// byte; packets that arrived in this millisecond wait; unused bytes are lost. Returns the
    /// number of packets that finished (the last ones pushed into `pipe`, for pcap), whether
    /// the pipe was empty before (the caller then schedules an arrival at `now + delay`), and
    /// the next opportunity if packets remain.
    pub fn serve_opportunity(&mut self, now_ns: u64) -> (usize, bool, LinkAction) {
        let t_ms = now_ns / NS_PER_MS;
        let svc = self.trace.as_mut().expect("a trace-served direction");
        let count = svc.pending.take().unwrap_or(0);
        let mut budget = count as u64 * OPPORTUNITY_BYTES as u64;
        let was_empty = self.pipe.is_empty();
        let mut departed = 0;
        let mut used = 0u64;
        while budget > 0 {
            if self.in_tx.is_none() {
                match self.queue.head() {
                    // only packets that arrived in an earlier millisecond
                    Some((enqueued_ns, _)) if enqueued_ns < t_ms * NS_PER_MS => {
                        let p = self.queue.dequeue(now_ns).expect("a head packet");
                        svc.head_left_bytes = p.size_bytes;
                        self.in_tx = Some(p);
                    }
                    _ => break,
                }
            }
            let send = budget.min(svc.head_left_bytes as u64);
            budget -= send;
            used += send;
            svc.head_left_bytes -= send as u32;
            if svc.head_left_bytes == 0 {
                let pkt = self.in_tx.take().expect("a packet in service");
                self.tx_packets += 1;
                self.tx_bytes += pkt.size_bytes as u64;
                self.pipe.push_back((now_ns + self.delay_ns, pkt));
                departed += 1;
            }
        }
        // busy time: the bits sent at the trace's mean rate
        self.busy_ns += (used as u128 * 8 * NS_PER_SEC as u128 / self.rate_bps as u128) as u64;
        let mut next = LinkAction::None;
        if self.in_tx.is_some() || self.queue.len_pkts() > 0 {
            if let Some((t, c)) = svc.trace.next_after(t_ms) {
                svc.pending = Some(c);
                next = LinkAction::OpportunityAt(t * NS_PER_MS);
            }
        }
        (departed, was_empty, next)
    }

    /// The head of the pipe arrives at `to`. Returns it, whether it is delivered (false: random
    /// loss took it), and the time and stamp of the next arrival if any.
    #[inline]
    pub fn arrive(&mut self) -> (Frame, bool, Option<(u64, u32)>) {
        let (_, pkt) = self.pipe.pop_front().expect("arrival from an empty pipe");
        let next = self.pipe.front().map(|(t, p)| (*t, p.stamp));
        if let Some(later) = self.pipe.get(PREFETCH_AHEAD) {
            prefetch(later);
        }
        let delivered = !self.rng.bernoulli(self.loss);
        if !delivered {
            self.lost_packets += 1;
        }
        (pkt, delivered, next)
    }
}

/// How many packets ahead of the head of a pipe [`LinkDir::arrive`] asks the processor to
/// fetch: on a long pipe (a bottleneck's holds thousands) an entry was written long before it
/// arrives and has left the caches, and its arrival is read as soon as the packets before it
/// have arrived.
const PREFETCH_AHEAD: usize = 2;

/// Asks the processor to bring `value`'s cache lines closer (a hint; no effect on results).
#[inline(always)]
fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let p = value as *const T as *const i8;
        let lines = std::mem::size_of::<T>().div_ceil(64);
        for i in 0..lines {
            // SAFETY: a prefetch never faults and does not change memory; the addresses lie
            // within `value` (i · 64 < its size).
            unsafe { _mm_prefetch(p.wrapping_add(i * 64), _MM_HINT_T0) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::queue::QueueLimit;

    const MS: u64 = NS_PER_MS;

    fn udp(size: u32) -> Frame {
        Frame {
            dst: 1,
            size_bytes: size,
            stamp: 0,
            slot: 0,
        }
    }

    fn trace_link(text: &str) -> LinkDir {
        let mut l = LinkDir::new(
            0,
            1,
            1,
            0,
            0.0,
            DropTail::new(QueueLimit::Packets(100)),
            Stream::new(1, "t"),
        );
        l.set_trace(Arc::new(
            MahimahiTrace::parse(text.as_bytes(), false).unwrap(),
        ));
        l
    }

    /// Serves every opportunity up to `until_ns`, returning (departure time, size) of each
    /// packet that finished.
    fn run(l: &mut LinkDir, mut next: LinkAction, until_ns: u64) -> Vec<(u64, u32)> {
        let mut out = Vec::new();
        while let LinkAction::OpportunityAt(t) = next {
            if t > until_ns {
                break;
            }
            let (n, _, nx) = l.serve_opportunity(t);
            let len = l.pipe.len();
            out.extend(l.pipe.iter().skip(len - n).map(|(_, p)| (t, p.size_bytes)));
            next = nx;
        }
        out
    }

    /// One fixed-rate direction (12 Mbps: 1500 B in 1 ms; 3 ms of delay) fed with `arrivals`
    /// (time, size; sorted by time), in the event form driven by an event list — ends of
    /// serialisation as departures, enqueues as ordinary events, in the order `sim::events` runs
    /// them — or in the scheduled form. Returns the link after `until_ns` and the pipe's content
    /// (arrival time at the far end, index of the packet): the departures.
    fn drive(
        arrivals: &[(u64, u32)],
        limit: QueueLimit,
        scheduled: bool,
        until_ns: u64,
    ) -> (LinkDir, Vec<(u64, u64)>) {
        use crate::sim::events::EventQueue;
        let mut l = LinkDir::new(
            0,
            1,
            12_000_000,
            3 * MS,
            0.0,
            DropTail::new(limit),
            Stream::new(1, "t"),
        );
        let pkt = |i: usize, size: u32| Frame {
            slot: i as u32, // the packet's index
            ..udp(size)
        };
        if scheduled {
            l.use_scheduled_form();
            for (i, &(t, size)) in arrivals.iter().enumerate() {
                if t <= until_ns {
                    l.enqueue(pkt(i, size), t);
                }
            }
            l.settle(until_ns);
        } else {
            #[derive(Clone, Copy)]
            enum Ev {
                Enqueue(usize),
                TxDone,
            }
            let mut q = EventQueue::new();
            for (i, &(t, _)) in arrivals.iter().enumerate() {
                q.schedule(t, Ev::Enqueue(i));
            }
            while let Some(ev) = q.pop_until(until_ns) {
                let now = q.now_ns();
                let next = match ev {
                    Ev::Enqueue(i) => l.enqueue(pkt(i, arrivals[i].1), now),
                    Ev::TxDone => l.tx_done(now).2,
                };
                if let LinkAction::TxDoneAt(t) = next {
                    q.schedule_departure(t, 0, Ev::TxDone);
                }
            }
        }
        let pipe = l.pipe.iter().map(|(t, p)| (*t, p.slot as u64)).collect();
        (l, pipe)
    }

    /// The scheduled form gives the event form's departures, drops and counters: at the end and
    /// at times inside serialisations and queueing.
    fn assert_forms_agree(arrivals: &[(u64, u32)], limit: QueueLimit) {
        let end = arrivals.last().unwrap().0 + 1000 * MS;
        let mut dropped_any = false;
        for until in [end / 7, end / 3 + 1, end / 2 + 499_999, end] {
            let (e, e_pipe) = drive(arrivals, limit, false, until);
            let (s, s_pipe) = drive(arrivals, limit, true, until);
            // departures: the same packets leave at the same times (the scheduled form also has
            // those still queued or being serialised in its pipe)
            let departed_by = |pipe: &[(u64, u64)]| {
                pipe.iter()
                    .filter(|(t, _)| t - 3 * MS <= until)
                    .copied()
                    .collect::<Vec<_>>()
            };
            assert_eq!(departed_by(&e_pipe), departed_by(&s_pipe), "until {until}");
            if until == end {
                assert_eq!(e_pipe, s_pipe);
            }
            let (eq, sq) = (&e.queue, &s.queue);
            assert_eq!(
                (
                    eq.enqueued,
                    eq.dropped,
                    eq.dropped_bytes,
                    eq.max_pkts,
                    eq.max_bytes
                ),
                (
                    sq.enqueued,
                    sq.dropped,
                    sq.dropped_bytes,
                    sq.max_pkts,
                    sq.max_bytes
                ),
                "until {until}"
            );
            dropped_any |= eq.dropped > 0;
            let c = s.counters_at(until);
            for (tx_packets, tx_bytes, busy_ns, soj) in [
                (s.tx_packets, s.tx_bytes, s.busy_ns, &s.queue.sojourn),
                (c.tx_packets, c.tx_bytes, c.busy_ns, &*c.sojourn),
            ] {
                assert_eq!(
                    (e.tx_packets, e.tx_bytes, e.busy_ns),
                    (tx_packets, tx_bytes, busy_ns),
                    "until {until}"
                );
                let stats = |x: &SojournStats| {
                    (
                        x.count,
                        x.sum_ns,
                        x.max_ns,
                        x.quantile_ns(0.5),
                        x.quantile_ns(0.99),
                    )
                };
                assert_eq!(stats(&e.queue.sojourn), stats(soj), "until {until}");
            }
        }
        assert!(dropped_any, "the case should overflow the queue");
    }

    #[test]
    fn scheduled_form_matches_the_event_form_without_ties() {
        // one source: bursts of packets of mixed sizes at random (nanosecond) times
        let mut rng = Stream::new(7, "arrivals");
        let mut t = 0u64;
        let mut arrivals = Vec::new();
        for _ in 0..400 {
            t += (rng.exponential(2.0e6) as u64).max(1);
            for _ in 0..1 + rng.next_u32() % 6 {
                arrivals.push((t, [40, 52, 576, 1500][rng.next_u32() as usize % 4]));
                t += 1 + rng.next_u32() as u64 % 1000;
            }
        }
        assert_forms_agree(&arrivals, QueueLimit::Packets(8));
        assert_forms_agree(&arrivals, QueueLimit::Bytes(6000));
    }

    #[test]
    fn scheduled_form_matches_the_event_form_with_ties() {
        // packets of 1500 B (1 ms each) arriving on whole milliseconds, several per
        // millisecond: arrivals at the nanosecond a serialisation ends, on a full queue
        let mut rng = Stream::new(9, "arrivals");
        let arrivals: Vec<(u64, u32)> = (0..300u64)
            .flat_map(|ms| {
                let n = rng.next_u32() % 3;
                (0..n).map(move |_| (ms * MS, 1500))
            })
            .collect();
        assert_forms_agree(&arrivals, QueueLimit::Packets(4));
        assert_forms_agree(&arrivals, QueueLimit::Bytes(4500));
    }

    #[test]
    fn a_packet_is_not_served_in_the_millisecond_it_arrives() {
        let mut l = trace_link("1\n"); // an opportunity every ms
                                       // arrives at 0.3 ms: first opportunity is at 1 ms
        assert_eq!(l.enqueue(udp(1500), 300_000), LinkAction::OpportunityAt(MS));
        // arrives exactly at 1 ms: the opportunity at 1 ms is used up before it is queued
        assert_eq!(l.enqueue(udp(1500), MS), LinkAction::None);
        let done = run(&mut l, LinkAction::OpportunityAt(MS), 10 * MS);
        assert_eq!(done, [(MS, 1500), (2 * MS, 1500)]);
    }

    #[test]
    fn service_is_per_byte_and_unused_bytes_are_lost() {
        let mut l = trace_link("1\n");
        // three 1000-byte packets at 0.1 ms: 1500 bytes per ms finish the first at 1 ms and
        // half of the second, which leaves at 2 ms with the third
        let first = l.enqueue(udp(1000), 100_000);
        l.enqueue(udp(1000), 100_000);
        l.enqueue(udp(1000), 100_000);
        let done = run(&mut l, first, 10 * MS);
        assert_eq!(done, [(MS, 1000), (2 * MS, 1000), (2 * MS, 1000)]);
        // one 1000-byte packet at 5.1 ms leaves 500 bytes of the 6 ms opportunity unused; they
        // are lost, so of two 1000-byte packets arriving at 6.5 ms only one fits at 7 ms
        let next = l.enqueue(udp(1000), 5_100_000);
        assert_eq!(run(&mut l, next, 6 * MS), [(6 * MS, 1000)]);
        let next = l.enqueue(udp(1000), 6_500_000);
        l.enqueue(udp(1000), 6_500_000);
        assert_eq!(next, LinkAction::OpportunityAt(7 * MS));
        assert_eq!(run(&mut l, next, 10 * MS), [(7 * MS, 1000), (8 * MS, 1000)]);
        assert_eq!(l.tx_packets, 6);
    }

    #[test]
    fn small_packets_share_an_opportunity_and_large_ones_are_refused() {
        let mut l = trace_link("2\n2\n"); // period 2 ms: 2 opportunities every 2 ms
        let first = l.enqueue(udp(100), 0);
        for _ in 0..39 {
            l.enqueue(udp(100), 0);
        }
        // 40 × 100 bytes = 4000 bytes: 3000 at 2 ms (two opportunities), the rest at 4 ms
        let done = run(&mut l, first, 20 * MS);
        assert_eq!(done.iter().filter(|d| d.0 == 2 * MS).count(), 30);
        assert_eq!(done.iter().filter(|d| d.0 == 4 * MS).count(), 10);
        assert_eq!(l.enqueue(udp(1501), 30 * MS), LinkAction::Dropped);
        assert_eq!(l.queue.dropped, 1);
    }
}
