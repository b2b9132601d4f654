//! The event list: a binary min-heap of `(time_ns, class, tie key, event)`.
//!
//! Events are small `Copy` values (component indices), never boxed closures, so scheduling
//! allocates nothing once the heap has grown (htsim's lesson).
//!
//! **Ties.** Events of the same nanosecond run in three classes, in this order:
//!
//! 1. departures ([`EventQueue::schedule_departure`]): a link direction's end of
//!    serialisation, which starts the next packet — so a packet reaching a queue at the very
//!    nanosecond a transmission ends finds the transmitter's next packet already gone ("departures
//!    before arrivals", the usual queueing convention);
//! 2. arrivals at the far end of a link direction ([`EventQueue::schedule_arrival`]): first the
//!    packet that has been the next to arrive on its link the longest — for the time since
//!    the previous packet on its link arrived, or since it left the transmitter if that is
//!    later (at most the propagation delay) — then by when the packets entered their link
//!    directions (the packet's `stamp`, a run-wide count of enqueues);
//! 3. every other event ([`EventQueue::schedule`]: timers, applications, generators, ticks), in
//!    insertion order.
//!
//! Why these classes. Two things of one nanosecond have no physical order, so the rule is a
//! model choice, made once here and stated, rather than left to the order in which the code
//! happens to schedule events (insertion order, which ns-3's scheduler uses, changes whenever
//! the number or placement of events changes). The rule depends only on the model's state:
//!
//! - departures before arrivals is the usual convention of discrete-time queueing (a packet
//!   reaching a queue at the nanosecond a transmission ends sees the next packet gone);
//! - arrivals before the timers of their nanosecond: a receiver's delayed-ACK timer that
//!   expires at the nanosecond a segment arrives sees the segment (`tests/sender_options.rs`'s
//!   multi-hole recovery test meets this 12 times in 60 s; putting the timer first instead takes
//!   its PRR run from 192 drops to 641, so such knife-edge runs depend on this choice);
//! - among arrivals, the one that has been the next to arrive on its link the longest — a packet
//!   at the head of a link since the previous packet on it arrived, or since it left an empty
//!   transmitter — then the one that entered its link first. This decides which of several
//!   packets reaching a full drop-tail queue at one nanosecond is dropped, and it matters on
//!   dumbbells whose access links have identical rates and delays, where such ties recur: on
//!   `haslab bench`'s case (b), ordering them by enqueue count alone (which favours a packet
//!   that waited in its access queue over the head of a new burst, such as a retransmission)
//!   gave ten times the RTOs (51 against 5 per run) and 0.8 % less goodput; a permutation of the
//!   link index that changed with the nanosecond made `examples/has.toml`'s players change with
//!   every few-microsecond shift of a start time. docs/performance.md has the measurements.
//!
//! Departures are keyed by their link direction (at most one is pending per direction) and
//! arrivals by what their packets did, not by when the event was scheduled. So the order of a
//! run's events is the same whether a link direction computes its departures at enqueue (one
//! event per packet, `net::link`'s scheduled form) or with an end-of-serialisation event
//! (`tests/link_forms.rs` checks that both give the same bytes).
//!
//! The key `(time_ns, class, tie)` is packed into one `u128` (time in the high 64 bits, the
//! class in the next 2, the sequence number, link index or an arrival's two keys in the low 62),
//! so a comparison is one 128-bit compare, and every key is distinct: any correct heap pops the
//! events in exactly one order, whatever its arity. The heap is `dary_heap`'s with two children
//! per node: a replaced top entry sinks through more levels than in a 4-ary heap but makes two
//! comparisons per level instead of four, which takes fewer instructions on the small heaps of
//! a few flows and took no more time on `haslab bench`'s case (b), with thousands of entries
//! (docs/performance.md; only a synthetic loop whose new entries land anywhere in the heap is
//! slower with it).
//!
//! Cancellation is lazy: a component that re-arms a timer keeps its own deadline in a
//! [`Timer`]; a heap entry whose deadline was moved or cancelled is ignored when it pops. A
//! timer that only moves later (the RTO, re-armed on every ACK) therefore costs no heap
//! operation per re-arm.

use dary_heap::BinaryHeap;
use std::cmp::Ordering;

struct Entry<E> {
    /// `time_ns << 64 | sequence`
    key: u128,
    event: E,
}

impl<E> Entry<E> {
    #[inline]
    fn at_ns(&self) -> u64 {
        (self.key >> 64) as u64
    }
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    fn cmp(&self, other: &Self) -> Ordering {
        // reversed: the heap is a max-heap
        other.key.cmp(&self.key)
    }
}

/// A deterministic event list.
///
/// The entry of the event being handled stays on top of the heap until the handler schedules
/// its first event, which takes its place (one sift down instead of a pop's sift and a push's),
/// or until the next pop: a link's arrival usually schedules the link's next arrival, a timer
/// its next expiry. Since every key is distinct, the events pop in the same order either way.
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    /// whether the top entry is the event last popped, not yet removed
    top_spent: bool,
    next_seq: u64,
    now_ns: u64,
    processed: u64,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue {
            heap: BinaryHeap::with_capacity(1024),
            top_spent: false,
            next_seq: 0,
            now_ns: 0,
            processed: 0,
        }
    }
    /// Current simulated time.
    #[inline]
    pub fn now_ns(&self) -> u64 {
        self.now_ns
    }
    /// Number of events popped so far.
    pub fn processed(&self) -> u64 {
        self.processed
    }
    /// Number of events pending.
    pub fn len(&self) -> usize {
        self.heap.len() - self.top_spent as usize
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Schedules `event` at absolute time `at_ns` (clamped to now: the past cannot be scheduled),
    /// after the departures and the arrivals of that nanosecond, in insertion order among the
    /// other events.
    #[inline]
    pub fn schedule(&mut self, at_ns: u64, event: E) {
        debug_assert!(self.next_seq < 1 << CLASS_SHIFT);
        self.push(at_ns, CLASS_OTHER | self.next_seq as u128, event);
        self.next_seq += 1;
    }
    /// Schedules a link direction's end of serialisation: before every other event of its
    /// nanosecond. `link_key` (the direction's index) must not have another departure pending
    /// at the same time.
    #[inline]
    pub fn schedule_departure(&mut self, at_ns: u64, link_key: u32, event: E) {
        self.push(at_ns, CLASS_DEPARTURE | link_key as u128, event);
    }
    /// Schedules an arrival at the far end of a link direction: after the departures and before
    /// the other events of its nanosecond; among the arrivals of that nanosecond, the largest
    /// `alone_ns` first (how long the packet has been the next to arrive on its link: the time
    /// since the previous packet on the link arrived or since it left the transmitter, whichever
    /// is shorter; counted up to [`ALONE_MAX_NS`]), then the smallest `stamp` (the packet's
    /// enqueue count, distinct among the arrivals pending at one time).
    #[inline]
    pub fn schedule_arrival(&mut self, at_ns: u64, alone_ns: u64, stamp: u32, event: E) {
        let waited = ALONE_MAX_NS - alone_ns.min(ALONE_MAX_NS);
        self.push(
            at_ns,
            CLASS_ARRIVAL | (waited as u128) << 32 | stamp as u128,
            event,
        );
    }
    #[inline]
    fn push(&mut self, at_ns: u64, low: u128, event: E) {
        let at_ns = at_ns.max(self.now_ns);
        let entry = Entry {
            key: (at_ns as u128) << 64 | low,
            event,
        };
        if self.top_spent {
            self.top_spent = false;
            *self.heap.peek_mut().expect("the spent entry") = entry;
        } else {
            self.heap.push(entry);
        }
    }
    /// Removes the entry of the event last popped if no new event has taken its place.
    #[inline]
    fn drop_spent(&mut self) {
        if self.top_spent {
            self.top_spent = false;
            self.heap.pop();
        }
    }
    /// Time of the next event, if any.
    pub fn peek_time_ns(&mut self) -> Option<u64> {
        self.drop_spent();
        self.heap.peek().map(|e| e.at_ns())
    }
    /// Pops the next event if it is due no later than `until_ns`, advancing the clock.
    #[inline]
    pub fn pop_until(&mut self, until_ns: u64) -> Option<E> {
        self.drop_spent();
        let e = self.heap.peek()?;
        if e.at_ns() > until_ns {
            return None;
        }
        self.now_ns = e.at_ns();
        self.processed += 1;
        self.top_spent = true;
        Some(e.event)
    }
    /// Advances the clock to `t_ns` without an event (end of run).
    pub fn advance_to(&mut self, t_ns: u64) {
        self.now_ns = self.now_ns.max(t_ns);
    }
}

/// The low 64 bits of a key: the class in bits 62–63, then the sequence number or link key.
const CLASS_SHIFT: u32 = 62;
const CLASS_DEPARTURE: u128 = 0;
const CLASS_ARRIVAL: u128 = 1 << CLASS_SHIFT;
const CLASS_OTHER: u128 = 2 << CLASS_SHIFT;
/// The longest `alone_ns` an arrival's tie key tells apart (30 bits beside the 32 of the stamp,
/// 1.07 s): longer waits tie, and the stamp orders them.
pub const ALONE_MAX_NS: u64 = (1 << 30) - 1;

/// A cancellable, re-armable timer with lazy heap cancellation.
///
/// `deadline_ns` is the time the timer should fire (None: not armed); `queued_ns` is the time
/// of the earliest heap entry already scheduled for it. [`Timer::arm`] returns the time at
/// which the caller must schedule a heap entry, or `None` when an earlier entry already covers
/// it. When an entry pops, [`Timer::on_pop`] says whether the timer is really due; if the
/// deadline moved later it returns the time to schedule again.
#[derive(Clone, Copy, Debug, Default)]
pub struct Timer {
    deadline_ns: Option<u64>,
    queued_ns: Option<u64>,
}

/// What to do with a popped timer entry.
#[derive(Debug, PartialEq, Eq)]
pub enum TimerPop {
    /// The timer fires now.
    Fire,
    /// Stale entry, the timer is now due later: schedule an entry at this time.
    Reschedule(u64),
    /// Stale entry; nothing to do.
    Ignore,
}

impl Timer {
    pub fn deadline_ns(&self) -> Option<u64> {
        self.deadline_ns
    }
    pub fn is_armed(&self) -> bool {
        self.deadline_ns.is_some()
    }
    /// Arms (or re-arms) the timer for `at_ns`. Returns `Some(t)` if a heap entry must be
    /// scheduled at `t`.
    #[must_use]
    pub fn arm(&mut self, at_ns: u64) -> Option<u64> {
        self.deadline_ns = Some(at_ns);
        match self.queued_ns {
            Some(q) if q <= at_ns => None,
            _ => {
                self.queued_ns = Some(at_ns);
                Some(at_ns)
            }
        }
    }
    pub fn cancel(&mut self) {
        self.deadline_ns = None;
    }
    /// Called when a heap entry for this timer pops at `now_ns`.
    pub fn on_pop(&mut self, now_ns: u64) -> TimerPop {
        if self.queued_ns == Some(now_ns) {
            self.queued_ns = None;
        } else if self.queued_ns.is_some_and(|q| q < now_ns) {
            // cannot happen: entries pop in time order
            self.queued_ns = None;
        } else {
            // an older, superseded entry (a later one is still queued)
            return match self.deadline_ns {
                Some(d) if d <= now_ns => {
                    self.deadline_ns = None;
                    TimerPop::Fire
                }
                _ => TimerPop::Ignore,
            };
        }
        match self.deadline_ns {
            None => TimerPop::Ignore,
            Some(d) if d <= now_ns => {
                self.deadline_ns = None;
                TimerPop::Fire
            }
            Some(d) => {
                self.queued_ns = Some(d);
                TimerPop::Reschedule(d)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_pop_in_time_then_insertion_order() {
        let mut q = EventQueue::new();
        q.schedule(30, 'c');
        q.schedule(10, 'a');
        q.schedule(30, 'd');
        q.schedule(10, 'b');
        let mut out = vec![];
        while let Some(e) = q.pop_until(u64::MAX) {
            out.push((q.now_ns(), e));
        }
        assert_eq!(out, vec![(10, 'a'), (10, 'b'), (30, 'c'), (30, 'd')]);
    }

    #[test]
    fn departures_then_arrivals_then_other_events_within_a_nanosecond() {
        let mut q = EventQueue::new();
        q.schedule_arrival(10, 5, 2, "arrival 4");
        q.schedule_arrival(10, 5, 1, "arrival 3");
        q.schedule_arrival(10, 2, 0, "arrival 5");
        q.schedule(10, "other 1");
        q.schedule_departure(10, 7, "departure 7");
        q.schedule_arrival(5, 1, 9, "earlier arrival");
        q.schedule(10, "other 2");
        q.schedule_departure(10, 2, "departure 2");
        let mut out = vec![];
        while let Some(e) = q.pop_until(u64::MAX) {
            out.push(e);
        }
        assert_eq!(out[0], "earlier arrival");
        let mut departures = out[1..3].to_vec();
        departures.sort();
        assert_eq!(departures, ["departure 2", "departure 7"]);
        // the arrivals alone on their link the longest first, then by stamp
        assert_eq!(out[3..6], ["arrival 3", "arrival 4", "arrival 5"]);
        assert_eq!(out[6..8], ["other 1", "other 2"]);
    }

    /// The popped entry replaced in place by the handler's first event (or popped before the
    /// next event) gives the order of a plain sorted list: random handlers that schedule none,
    /// one or several events of every class, interleaved with horizons and length checks.
    #[test]
    fn replacing_the_popped_entry_keeps_the_order_of_a_sorted_list() {
        let mut rng = crate::sim::rng::Stream::new(7, "events-test");
        let mut q = EventQueue::new();
        // the reference: (time, class, tie) of every pending event, and its event id
        let mut reference: Vec<((u64, u8, u64), u32)> = Vec::new();
        let (mut seq, mut next_id, mut popped) = (0u64, 0u32, 0usize);
        let mut schedule = |q: &mut EventQueue<u32>,
                            reference: &mut Vec<_>,
                            now: u64,
                            rng: &mut crate::sim::rng::Stream| {
            let at = now + rng.next_u64() % 50;
            let id = next_id;
            next_id += 1;
            match rng.next_u32() % 3 {
                0 => {
                    // departures are keyed by a link; one pending per link and time is the
                    // caller's rule, so give each its own key
                    q.schedule_departure(at, id, id);
                    reference.push(((at, 0, id as u64), id));
                }
                1 => {
                    let alone = rng.next_u64() % 4;
                    q.schedule_arrival(at, alone, id, id);
                    let waited = ALONE_MAX_NS - alone;
                    reference.push(((at, 1, waited << 32 | id as u64), id));
                }
                _ => {
                    q.schedule(at, id);
                    reference.push(((at, 2, seq), id));
                    seq += 1;
                }
            }
        };
        for _ in 0..20 {
            schedule(&mut q, &mut reference, 0, &mut rng);
        }
        let mut until = 0;
        while popped < 5_000 {
            until += rng.next_u64() % 30;
            reference.sort();
            match q.pop_until(until) {
                Some(id) => {
                    let (key, expected) = reference.remove(0);
                    assert_eq!((q.now_ns(), id), (key.0, expected), "pop {popped}");
                    assert!(key.0 <= until);
                    popped += 1;
                    let now = q.now_ns();
                    for _ in 0..rng.next_u32() % 4 {
                        schedule(&mut q, &mut reference, now, &mut rng);
                    }
                }
                None => assert!(reference.first().is_none_or(|(k, _)| k.0 > until)),
            }
            assert_eq!(q.len(), reference.len());
            if reference.is_empty() {
                let now = q.now_ns();
                schedule(&mut q, &mut reference, now, &mut rng);
            }
        }
    }

    #[test]
    fn pop_until_respects_horizon() {
        let mut q = EventQueue::new();
        q.schedule(5, 1);
        q.schedule(50, 2);
        assert_eq!(q.pop_until(10), Some(1));
        assert_eq!(q.pop_until(10), None);
        assert_eq!(q.now_ns(), 5);
    }

    /// Drives a Timer with a queue the way components do, returning the times it fired.
    fn fire_times(ops: &[(u64, Option<u64>)], end: u64) -> Vec<u64> {
        // ops: at time t, arm(Some(d)) or cancel(None)
        let mut q = EventQueue::new();
        let mut timer = Timer::default();
        for (i, (t, _)) in ops.iter().enumerate() {
            q.schedule(*t, (false, i));
        }
        let mut fired = vec![];
        while let Some((is_timer, i)) = q.pop_until(end) {
            if is_timer {
                match timer.on_pop(q.now_ns()) {
                    TimerPop::Fire => fired.push(q.now_ns()),
                    TimerPop::Reschedule(t) => q.schedule(t, (true, 0)),
                    TimerPop::Ignore => {}
                }
            } else {
                match ops[i].1 {
                    Some(d) => {
                        if let Some(t) = timer.arm(d) {
                            q.schedule(t, (true, 0))
                        }
                    }
                    None => timer.cancel(),
                }
            }
        }
        fired
    }

    #[test]
    fn timer_rearmed_later_fires_once_at_last_deadline() {
        assert_eq!(
            fire_times(&[(0, Some(100)), (50, Some(150)), (120, Some(300))], 1000),
            vec![300]
        );
    }

    #[test]
    fn timer_rearmed_earlier_fires_at_the_earlier_deadline_only() {
        assert_eq!(
            fire_times(&[(0, Some(100)), (10, Some(40))], 1000),
            vec![40]
        );
    }

    #[test]
    fn cancelled_timer_never_fires_and_can_be_rearmed() {
        assert_eq!(
            fire_times(&[(0, Some(100)), (10, None)], 1000),
            Vec::<u64>::new()
        );
        assert_eq!(
            fire_times(&[(0, Some(100)), (10, None), (20, Some(200))], 1000),
            vec![200]
        );
    }
}
