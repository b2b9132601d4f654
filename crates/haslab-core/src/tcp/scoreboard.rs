//! The sender's retransmission queue and SACK scoreboard: every segment from `snd_una` to
//! `snd_max`, in sequence order, with Linux's per-skb `sacked` flags and the counters
//! `sacked_out`, `lost_out`, `retrans_out` kept in step (include/net/tcp.h, tcp_input.c).
//!
//! - **pipe** (RFC 6675 §4, Linux `tcp_packets_in_flight`): `packets_out − sacked_out −
//!   lost_out + retrans_out`, i.e. a segment counts 1 unless SACKed or marked lost, plus 1 more
//!   while a retransmission of it is in flight.
//! - **IsLost** (RFC 6675 §4, DupThresh = 3): a segment is lost when at least 3 SACKed segments,
//!   or more than (DupThresh − 1)·SMSS SACKed bytes, lie above it.
//! - **RACK** (RFC 8985 §6.2): a segment sent before the most recently delivered one is lost once
//!   `now ≥ xmit_ts + RACK.rtt + reo_wnd`.
//!
//! A SACKed segment stays in the queue until the cumulative ACK passes it (no reneging is
//! modelled: a receiver here never discards out-of-order data).

use std::collections::VecDeque;

/// Per-segment flags (Linux `TCPCB_SACKED_ACKED`, `TCPCB_LOST`, `TCPCB_SACKED_RETRANS`,
/// `TCPCB_EVER_RETRANS`).
pub mod segflags {
    pub const SACKED: u8 = 1 << 0;
    pub const LOST: u8 = 1 << 1;
    /// A retransmission of this segment is in flight.
    pub const RETRANS: u8 = 1 << 2;
    /// The segment was retransmitted at least once (Karn's rule).
    pub const EVER_RETRANS: u8 = 1 << 3;
}
use segflags::*;

/// Delivery-rate state recorded when a segment is (re)sent (Linux `tcp_skb_cb.tx`).
#[derive(Clone, Copy, Debug)]
pub struct TxState {
    /// `tp.delivered_pkts` at send time.
    pub delivered_pkts: u64,
    /// `tp.delivered_ns` at send time; [`TxState::COUNTED`] once the segment has been counted
    /// as delivered (a sentinel rather than an `Option`: 8 bytes less per segment in flight).
    delivered_ns: u64,
    /// Send time of the first segment of the flight this one belongs to.
    pub first_tx_ns: u64,
    /// Sent while application-limited.
    pub app_limited: bool,
}

/// No delivery-rate state (`delivered_ns` None), as a segment that is never sampled holds.
impl Default for TxState {
    fn default() -> Self {
        TxState {
            delivered_pkts: 0,
            delivered_ns: Self::COUNTED,
            first_tx_ns: 0,
            app_limited: false,
        }
    }
}

impl TxState {
    /// `delivered_ns` of a segment already counted as delivered (no time reaches it: times are
    /// bounded by the longest duration).
    const COUNTED: u64 = u64::MAX;

    pub fn new(
        delivered_pkts: u64,
        delivered_ns: u64,
        first_tx_ns: u64,
        app_limited: bool,
    ) -> Self {
        debug_assert!(delivered_ns != Self::COUNTED);
        TxState {
            delivered_pkts,
            delivered_ns,
            first_tx_ns,
            app_limited,
        }
    }

    /// `tp.delivered_ns` at send time, or None once the segment has been counted as delivered.
    pub fn delivered_ns(&self) -> Option<u64> {
        (self.delivered_ns != Self::COUNTED).then_some(self.delivered_ns)
    }

    /// Marks the segment as counted as delivered.
    pub fn set_counted(&mut self) {
        self.delivered_ns = Self::COUNTED;
    }
}

/// A transmitted, not yet cumulatively acknowledged segment: stream offsets [start, end)
/// (end includes the FIN's sequence number when it carries one).
#[derive(Clone, Copy, Debug)]
pub struct Seg {
    pub start: u64,
    pub end: u64,
    /// Time of the latest (re)transmission.
    pub sent_ns: u64,
    pub flags: u8,
    pub tx: TxState,
}

impl Seg {
    #[inline]
    pub fn has(&self, f: u8) -> bool {
        self.flags & f != 0
    }
}

/// What a cumulative ACK removed from the queue ([`Scoreboard::ack_to`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Acked {
    /// Segments removed (Linux `pkts_acked`, what `pkts_acked` hooks see).
    pub removed: u32,
    /// Of those, the segments not SACKed before: delivered by this ACK.
    pub newly_delivered: u32,
    /// Whether a removed segment, SACKed before or not, was ever retransmitted (Linux
    /// `tcp_clean_rtx_queue` sets `FLAG_RETRANS_DATA_ACKED` for any skb with `TCPCB_RETRANS`).
    pub retrans: bool,
    /// The send time of the last removed segment (in sequence order) that was never
    /// retransmitted, SACKed before or not (Linux 3.19 `tcp_clean_rtx_queue`'s `last_ackt`).
    pub newest_orig_sent_ns: Option<u64>,
}

/// RFC 6675 DupThresh.
pub const DUP_THRESH: u32 = 3;

#[derive(Default)]
pub struct Scoreboard {
    segs: VecDeque<Seg>,
    pub sacked_out: u32,
    pub lost_out: u32,
    pub retrans_out: u32,
    /// Lost segments whose retransmission is not in flight (to skip the search when zero).
    lost_pending: u32,
}

impl Scoreboard {
    pub fn len(&self) -> u32 {
        self.segs.len() as u32
    }
    pub fn is_empty(&self) -> bool {
        self.segs.is_empty()
    }
    pub fn front(&self) -> Option<&Seg> {
        self.segs.front()
    }
    /// The first segment, to update its send time (SYN retransmission). Changing its flags
    /// here would desynchronise the counters.
    pub fn front_mut(&mut self) -> Option<&mut Seg> {
        self.segs.front_mut()
    }
    pub fn get(&self, i: usize) -> &Seg {
        &self.segs[i]
    }

    /// The index of the segment that starts at `start`, if one is queued.
    pub fn index_of(&self, start: u64) -> Option<usize> {
        let i = self.segs.partition_point(|s| s.start < start);
        (i < self.segs.len() && self.segs[i].start == start).then_some(i)
    }

    /// What segment `i` adds to [`Scoreboard::pipe`]: 1 unless SACKed or marked lost, plus 1
    /// while a retransmission of it is in flight.
    pub fn pipe_count(&self, i: usize) -> u32 {
        let f = self.segs[i].flags;
        (f & (SACKED | LOST) == 0) as u32 + (f & RETRANS != 0) as u32
    }

    /// RFC 6675 pipe / Linux `tcp_packets_in_flight`.
    #[inline]
    pub fn pipe(&self) -> u32 {
        (self.len() + self.retrans_out).saturating_sub(self.sacked_out + self.lost_out)
    }

    pub fn clear(&mut self) {
        *self = Scoreboard::default();
    }

    /// Records a newly sent segment (above every segment in the queue).
    pub fn push(&mut self, seg: Seg) {
        debug_assert!(self.segs.back().is_none_or(|b| b.end <= seg.start));
        self.segs.push_back(seg);
    }

    /// Removes the segments the cumulative ACK `ack` covers and trims a partly covered one.
    /// `delivered` is called for each removed segment that had not been SACKed before (in
    /// sequence order). Returns the number of segments removed and, of those, how many are
    /// delivered now: a segment SACKed earlier was counted as delivered when its SACK
    /// arrived, and is not counted again (Linux `tcp_clean_rtx_queue` counts `tp->delivered`
    /// only for segments without `TCPCB_SACKED_ACKED`; RFC 6937 §3 `DeliveredData`).
    pub fn ack_to(&mut self, ack: u64, mut delivered: impl FnMut(&Seg)) -> Acked {
        let mut n = Acked::default();
        while let Some(seg) = self.segs.front_mut() {
            if seg.end <= ack {
                let seg = self.segs.pop_front().unwrap();
                self.forget(&seg);
                if seg.has(EVER_RETRANS) {
                    n.retrans = true;
                } else {
                    n.newest_orig_sent_ns = Some(seg.sent_ns);
                }
                if !seg.has(SACKED) {
                    delivered(&seg);
                    n.newly_delivered += 1;
                }
                n.removed += 1;
            } else {
                if seg.start < ack {
                    seg.start = ack;
                }
                break;
            }
        }
        n
    }

    fn forget(&mut self, seg: &Seg) {
        if seg.has(SACKED) {
            self.sacked_out -= 1;
        }
        if seg.has(LOST) {
            self.lost_out -= 1;
            if !seg.has(RETRANS) {
                self.lost_pending -= 1;
            }
        }
        if seg.has(RETRANS) {
            self.retrans_out -= 1;
        }
    }

    /// Marks the segments wholly inside the SACK block [start, end) as SACKed; `delivered` is
    /// called for each newly SACKed one. Returns how many were newly SACKed.
    pub fn sack(&mut self, start: u64, end: u64, mut delivered: impl FnMut(&mut Seg)) -> u32 {
        // blocks are made of whole segments as sent (retransmissions keep the boundaries)
        let mut i = self.segs.partition_point(|s| s.start < start);
        let mut n = 0;
        while i < self.segs.len() && self.segs[i].end <= end {
            let seg = &mut self.segs[i];
            if !seg.has(SACKED) {
                if seg.has(LOST) {
                    self.lost_out -= 1;
                    if !seg.has(RETRANS) {
                        self.lost_pending -= 1;
                    }
                }
                if seg.has(RETRANS) {
                    self.retrans_out -= 1;
                }
                seg.flags = (seg.flags & !(LOST | RETRANS)) | SACKED;
                self.sacked_out += 1;
                delivered(seg);
                n += 1;
            }
            i += 1;
        }
        n
    }

    fn mark_lost_at(&mut self, i: usize) -> bool {
        let seg = &mut self.segs[i];
        if seg.has(SACKED) || seg.has(LOST) {
            return false;
        }
        seg.flags |= LOST;
        self.lost_out += 1;
        if seg.has(RETRANS) {
            // the retransmission itself is deemed lost; send it again
            seg.flags &= !RETRANS;
            self.retrans_out -= 1;
        }
        self.lost_pending += 1;
        true
    }

    /// RACK's marking (Linux `tcp_mark_skb_lost`, RFC 8985 §6.2): as [`Self::mark_lost_at`],
    /// and a segment already lost whose retransmission is outstanding has lost that
    /// retransmission too: it is to be sent again (`retrans_out` falls, `lost_out` stays).
    fn mark_lost_rack_at(&mut self, i: usize) -> bool {
        let seg = &mut self.segs[i];
        if seg.has(LOST) && seg.has(RETRANS) && !seg.has(SACKED) {
            seg.flags &= !RETRANS;
            self.retrans_out -= 1;
            self.lost_pending += 1;
            return true;
        }
        self.mark_lost_at(i)
    }

    /// Marks the first segment lost (NewReno without SACK: the hole a duplicate-ACK run or a
    /// partial ACK points at, Linux `tcp_mark_head_lost`). Returns whether it changed.
    pub fn mark_head_lost(&mut self) -> bool {
        !self.segs.is_empty() && self.mark_lost_at(0)
    }

    /// RFC 6675 IsLost for every segment; returns the number newly marked lost.
    pub fn mark_lost_rfc6675(&mut self, mss: u32) -> u32 {
        if self.sacked_out == 0 {
            return 0;
        }
        let byte_thresh = (DUP_THRESH as u64 - 1) * mss as u64;
        let (mut sacked_segs, mut sacked_bytes, mut marked) = (0u32, 0u64, 0u32);
        for i in (0..self.segs.len()).rev() {
            let s = self.segs[i];
            if s.has(SACKED) {
                sacked_segs += 1;
                sacked_bytes += s.end - s.start;
                continue;
            }
            if sacked_segs >= DUP_THRESH || sacked_bytes > byte_thresh {
                if s.has(LOST) {
                    // everything below was judged with at least as many SACKs above
                    break;
                }
                marked += self.mark_lost_at(i) as u32;
            }
        }
        marked
    }

    /// RFC 8985 §6.2 RACK_DetectLoss: marks lost every segment sent before the most recently
    /// delivered one (`rack_xmit_ns`, `rack_end`) for which `now ≥ sent + rack_rtt + reo_wnd`.
    /// Returns (newly lost, the **latest** time a not-yet-lost candidate times out): RFC 8985's
    /// `timeout = max(remaining, timeout)` and Linux's `tcp_rack_detect_loss` ("Record maximum
    /// wait time", net/ipv4/tcp_recovery.c) wait for the last candidate, so that one timer
    /// marks them all.
    pub fn mark_lost_rack(
        &mut self,
        now_ns: u64,
        rack_xmit_ns: u64,
        rack_end: u64,
        timeout_ns: u64,
    ) -> (u32, Option<u64>) {
        let (mut marked, mut next) = (0, None::<u64>);
        for i in 0..self.segs.len() {
            let s = self.segs[i];
            if s.has(SACKED) || (s.has(LOST) && !s.has(RETRANS)) {
                continue;
            }
            let sent_before =
                s.sent_ns < rack_xmit_ns || (s.sent_ns == rack_xmit_ns && s.end <= rack_end);
            if !sent_before {
                continue;
            }
            let deadline = s.sent_ns + timeout_ns;
            if now_ns >= deadline {
                marked += self.mark_lost_rack_at(i) as u32;
            } else {
                next = Some(next.map_or(deadline, |n| n.max(deadline)));
            }
        }
        (marked, next)
    }

    /// RTO (Linux `tcp_timeout_mark_lost`): every segment not SACKed is lost and its
    /// retransmission no longer in flight (`rack_rtt_ns = 0`). With RACK (since Linux 4.18,
    /// "don't mark recently sent packets lost on RTO"), only the head and the segments sent at
    /// least `rack_rtt_ns` before `now_ns` (`tcp_rack_skb_timeout(tp, skb, 0) <= 0`); a segment
    /// sent more recently is left as it was, still in flight.
    pub fn mark_lost_on_rto(&mut self, now_ns: u64, rack_rtt_ns: u64) {
        self.retrans_out = 0;
        self.lost_out = 0;
        self.lost_pending = 0;
        for (i, s) in self.segs.iter_mut().enumerate() {
            if i > 0 && !s.has(SACKED) && now_ns.saturating_sub(s.sent_ns) < rack_rtt_ns {
                // spared: its flags stay, a retransmission of it stays in flight
                if s.has(LOST) {
                    self.lost_out += 1;
                    if !s.has(RETRANS) {
                        self.lost_pending += 1;
                    }
                }
                if s.has(RETRANS) {
                    self.retrans_out += 1;
                }
                continue;
            }
            s.flags &= !RETRANS;
            if !s.has(SACKED) {
                s.flags |= LOST;
                self.lost_out += 1;
                self.lost_pending += 1;
            }
        }
    }

    /// Undo of a spurious RTO (Linux `tcp_undo_cwnd_reduction` with `unmark_loss`): no segment
    /// is lost any more; retransmissions in flight stay counted.
    pub fn unmark_lost(&mut self) {
        self.lost_out = 0;
        self.lost_pending = 0;
        for s in self.segs.iter_mut() {
            s.flags &= !LOST;
        }
    }

    /// Index of the first lost segment whose retransmission is not in flight (RFC 6675
    /// NextSeg rule 1).
    pub fn next_lost(&self) -> Option<usize> {
        if self.lost_pending == 0 {
            return None;
        }
        self.segs
            .iter()
            .position(|s| s.has(LOST) && !s.has(RETRANS))
    }

    /// Index of the first segment neither SACKed nor retransmitted (RFC 6675 NextSeg rule 3
    /// without its condition (1.b), as ns-3 3.37's `TcpTxBuffer::NextSeg`).
    pub fn next_unsacked_not_retransmitted(&self) -> Option<usize> {
        self.segs
            .iter()
            .position(|s| !s.has(SACKED) && !s.has(RETRANS))
    }

    /// Records the retransmission of segment `i` at `now_ns`.
    pub fn on_retransmit(&mut self, i: usize, now_ns: u64, tx: TxState) {
        let seg = &mut self.segs[i];
        if seg.has(LOST) && !seg.has(RETRANS) {
            self.lost_pending -= 1;
        }
        if !seg.has(RETRANS) {
            self.retrans_out += 1;
        }
        seg.flags |= RETRANS | EVER_RETRANS;
        seg.sent_ns = now_ns;
        seg.tx = tx;
    }

    /// Checks the counters against the flags (tests and debug builds).
    pub fn check(&self) -> Result<(), String> {
        let count = |f: u8| self.segs.iter().filter(|s| s.has(f)).count() as u32;
        let pending = self
            .segs
            .iter()
            .filter(|s| s.has(LOST) && !s.has(RETRANS))
            .count() as u32;
        let got = (
            self.sacked_out,
            self.lost_out,
            self.retrans_out,
            self.lost_pending,
        );
        let want = (count(SACKED), count(LOST), count(RETRANS), pending);
        if got != want {
            return Err(format!(
                "counters (sacked, lost, retrans, pending) {got:?} but flags say {want:?}"
            ));
        }
        if self
            .segs
            .iter()
            .any(|s| s.has(SACKED) && s.has(LOST | RETRANS))
        {
            return Err("a SACKed segment is also lost or in retransmission".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A segment in flight costs 64 bytes of the retransmission queue (the delivery time's
    /// "already counted" is a sentinel, not an `Option`), and the sentinel reads back as None.
    #[test]
    fn a_segment_takes_64_bytes() {
        assert_eq!(std::mem::size_of::<Seg>(), 64);
        let mut t = TxState::new(3, 5, 1, false);
        assert_eq!(t.delivered_ns(), Some(5));
        t.set_counted();
        assert_eq!(t.delivered_ns(), None);
        assert_eq!(TxState::default().delivered_ns(), None);
    }

    fn board(n: u64) -> Scoreboard {
        let mut b = Scoreboard::default();
        for i in 0..n {
            b.push(Seg {
                start: 1 + i * 100,
                end: 1 + (i + 1) * 100,
                sent_ns: i,
                flags: 0,
                tx: TxState::default(),
            });
        }
        b
    }

    #[test]
    fn is_lost_needs_three_sacked_segments_above() {
        // segments 0..10 of 100 bytes; SACK 2 and 3: nothing lost yet (mss 100 → 2 segs = 200
        // bytes is not more than (3-1)·100)
        let mut b = board(10);
        b.sack(201, 401, |_| {});
        assert_eq!(b.mark_lost_rfc6675(100), 0);
        b.sack(401, 501, |_| {});
        // three SACKed above segments 0 and 1
        assert_eq!(b.mark_lost_rfc6675(100), 2);
        assert_eq!(b.lost_out, 2);
        // pipe: 10 out − 3 sacked − 2 lost = 5
        assert_eq!(b.pipe(), 5);
        assert_eq!(b.next_lost(), Some(0));
        b.on_retransmit(0, 50, TxState::default());
        assert_eq!(b.pipe(), 6);
        assert_eq!(b.next_lost(), Some(1));
        b.check().unwrap();
    }

    #[test]
    fn cumulative_ack_removes_and_trims() {
        let mut b = board(5);
        b.sack(301, 401, |_| {});
        let mut delivered = vec![];
        let acked = b.ack_to(250, |s| delivered.push(s.start));
        assert_eq!((acked.removed, acked.newly_delivered), (2, 2));
        assert_eq!(delivered, vec![1, 101]);
        assert_eq!(b.front().unwrap().start, 250);
        // the SACKed segment is not delivered twice: removed, but not counted again
        delivered.clear();
        let acked = b.ack_to(401, |s| delivered.push(s.start));
        assert_eq!(delivered, vec![250]);
        assert_eq!((acked.removed, acked.newly_delivered), (2, 1));
        assert_eq!(b.sacked_out, 0);
        b.check().unwrap();
    }

    #[test]
    fn rto_marks_every_unsacked_segment_lost() {
        let mut b = board(6);
        b.sack(401, 501, |_| {});
        b.mark_head_lost();
        b.on_retransmit(0, 9, TxState::default());
        b.mark_lost_on_rto(0, 0);
        assert_eq!((b.lost_out, b.retrans_out, b.sacked_out), (5, 0, 1));
        assert_eq!(b.pipe(), 0);
        b.check().unwrap();
    }

    /// Linux `tcp_timeout_mark_lost` with RACK: six segments sent at t = 0..5, segment 4
    /// SACKed, segment 3 resent at t = 9 (lost before). An RTO at t = 10 with a RACK RTT of 7
    /// spares what was sent after t = 3, i.e. segment 5 (t = 5) and segment 3's retransmission
    /// (t = 9), which stays in flight; the head (t = 0) is marked whatever its age. Lost: 0, 1
    /// and 2; in flight (pipe): segment 5 and the retransmission of 3.
    #[test]
    fn an_rto_with_rack_spares_what_was_sent_within_the_rack_rtt() {
        let mut b = board(6);
        b.sack(401, 501, |_| {});
        b.mark_lost_at(3);
        b.on_retransmit(3, 9, TxState::default());
        b.mark_lost_on_rto(10, 7);
        b.check().unwrap();
        assert_eq!((b.lost_out, b.retrans_out, b.sacked_out), (4, 1, 1));
        assert_eq!(b.pipe(), 2);
        assert_eq!(b.next_lost(), Some(0));
        // a RACK RTT longer than everything's age still marks the head
        let mut b = board(6);
        b.mark_lost_on_rto(10, 100);
        assert_eq!((b.lost_out, b.pipe()), (1, 5));
        b.check().unwrap();
    }

    #[test]
    fn rack_marks_only_segments_sent_before_the_delivered_one_after_the_window() {
        let mut b = board(6); // sent at t = 0..5
        b.sack(401, 501, |_| {}); // segment 4, sent at t = 4
        let (lost, next) = b.mark_lost_rack(10, 4, 501, 7);
        // segments 0..=3 were sent before; t ≥ sent + 7 holds for sent ≤ 3
        assert_eq!(lost, 4);
        assert_eq!(next, None);
        let mut b = board(6);
        b.sack(401, 501, |_| {});
        let (lost, next) = b.mark_lost_rack(8, 4, 501, 7);
        assert_eq!(lost, 2); // sent at 0 and 1
                             // segments sent at 2 and 3 wait; the timer is for the later, 3 + 7 (RFC 8985 §6.2's
                             // `max(remaining, timeout)`), not the earlier's 9
        assert_eq!(next, Some(10));
        b.check().unwrap();
    }
}
