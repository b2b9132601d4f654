//! The receive half: its state ([`RecvHalf`]), reassembly, delayed ACKs, SACK and D-SACK
//! blocks.

use super::{Endpoint, Notice, NoticeKind, Output, RecvMark, TimerKind};
use crate::net::packet::{flags, TcpHeader};
use crate::sim::events::Timer;
use crate::tcp::config::DelayedAckMode;
use crate::tcp::delack::LinuxDelAck;
use crate::tcp::rcvbuf::LinuxRcvBuf;
use crate::tcp::seq::{from_wire, to_wire};
use std::collections::VecDeque;

/// SACK blocks that fit beside the timestamps option (40 option bytes: 12 for TS, 2 + 8·n for
/// SACK; Linux `TCP_NUM_SACKS` = 4 without timestamps, our header holds at most 3).
const MAX_SACK_BLOCKS: usize = 3;

/// The receive half (RFC 793 §3.2's receive sequence variables IRS and RCV.NXT, with RFC 7323
/// §2.3's window scale and §4.3's TS.Recent): reassembly of out-of-order data, the SACK and
/// D-SACK blocks to report (RFC 2018, RFC 2883), delayed ACKs (RFC 5681 §4.2), the advertised
/// window, and the marks that turn the peer's writes into notices.
pub(super) struct RecvHalf {
    pub(super) irs: u32,
    pub(super) nxt: u64,
    /// out-of-order ranges above rcv_nxt, sorted, disjoint
    pub(super) ooo: Vec<(u64, u64)>,
    /// SACK blocks to report, most recent first (RFC 2018 §4)
    pub(super) sack_recent: Vec<(u64, u64)>,
    /// the peer's SYN carried timestamps and so do we
    pub(super) peer_ts_ok: bool,
    /// a duplicate segment to report as D-SACK in the next ACK (RFC 2883)
    pub(super) dsack: Option<(u64, u64)>,
    pub(super) peer_fin_at: Option<u64>,
    pub(super) peer_closed: bool,
    /// shift we apply to the windows we advertise
    pub(super) wscale: u8,
    /// Linux's receive-buffer autotuning (`rcvbuf = "linux"`); None: the window is `rwnd`
    pub(super) rcvbuf: Option<LinuxRcvBuf>,
    /// Linux's delayed-ACK engine (`delayed_ack = "linux"`)
    pub(super) delack: Option<LinuxDelAck>,
    /// With `rcvbuf = "linux"`: the in-order bytes of the segment being processed, and the
    /// stream offset they end at, which the application has not read yet. Linux queues a
    /// segment, grows the window, decides on and sends its ACK in the softirq
    /// (`tcp_rcv_established`: `tcp_queue_rcv`, `tcp_event_data_recv`, `tcp_ack_snd_check`),
    /// all with the segment counted in `sk_rmem_alloc`; the woken reader copies it afterwards
    /// (`tcp_recvmsg`, which runs `tcp_rcv_space_adjust`). The application here reads each
    /// segment as soon as that processing ends (`Endpoint::app_read`).
    pub(super) unread: Option<(u64, u64)>,
    /// TS.Recent: the TSval we echo (RFC 7323 §4.3)
    pub(super) ts_recent: u32,
    /// Last.ACK.sent (RFC 7323 §4.3; Linux `rcv_wup`): rcv_nxt when we last sent an ACK
    pub(super) last_ack_sent: u64,
    pub(super) delack_timer: Timer,
    /// bytes received in order since the last ACK we sent (RFC 5681 §4.2's every second
    /// full-sized segment)
    pub(super) unacked_bytes: u64,
    /// marks of the peer's writes, for FirstByte / Progress / Received notices
    pub(super) marks: VecDeque<RecvMark>,
    /// Progress notices: at most one per this interval (None: none)
    pub(super) progress_every_ns: Option<u64>,
    pub(super) last_progress_ns: Option<u64>,
}

impl RecvHalf {
    pub(super) fn new(
        wscale: u8,
        rcvbuf: Option<LinuxRcvBuf>,
        delack: Option<LinuxDelAck>,
    ) -> RecvHalf {
        RecvHalf {
            irs: 0,
            nxt: 0,
            ooo: Vec::new(),
            sack_recent: Vec::new(),
            peer_ts_ok: false,
            dsack: None,
            peer_fin_at: None,
            peer_closed: false,
            wscale,
            rcvbuf,
            delack,
            unread: None,
            ts_recent: 0,
            last_ack_sent: 0,
            delack_timer: Timer::default(),
            unacked_bytes: 0,
            marks: VecDeque::new(),
            progress_every_ns: None,
            last_progress_ns: None,
        }
    }

    /// The window last offered (Linux `tp->rcv_wnd`): the autotuned one, or `rwnd`.
    pub(super) fn offered_window(&self, rwnd: u64) -> u64 {
        self.rcvbuf.as_ref().map_or(rwnd, |b| b.rcv_wnd)
    }

    /// Bytes held out of order above rcv_nxt.
    pub(super) fn ooo_held(&self) -> u64 {
        self.ooo.iter().map(|&(s, e)| e - s).sum()
    }

    /// Bytes the receive buffer holds: out of order, and in order not yet read (Linux
    /// `sk_rmem_alloc`, in window units).
    pub(super) fn buffered(&self) -> u64 {
        self.ooo_held() + self.unread.map_or(0, |(n, _)| n)
    }

    /// From rcv_nxt to the end of the out-of-order data (0 without any).
    pub(super) fn ooo_span(&self) -> u64 {
        self.ooo.last().map_or(0, |&(_, e)| e - self.nxt)
    }

    /// RFC 2018 §4: the block holding the segment just received goes first, then the blocks
    /// reported most recently.
    pub(super) fn note_sack_block(&mut self, seg_start: u64) {
        if self.sack_recent.first().map(|b| b.0) != Some(seg_start) {
            self.sack_recent.insert(0, (seg_start, seg_start));
            self.sack_recent.truncate(MAX_SACK_BLOCKS + 1);
        }
    }

    /// Writes the D-SACK block (if any) and the current SACK blocks into an outgoing ACK.
    ///
    /// Without allocating: the remembered blocks are refreshed in place (each kept one is
    /// written at or before the index it was read from), and the blocks to send are gathered
    /// in an array, in the same order and with the same exclusions as a list would. A kept
    /// block is recognised by its start alone: the out-of-order ranges are disjoint and a
    /// range found holding a start is not empty, so two such ranges with the same start are
    /// the same range.
    pub(super) fn fill_sack_blocks(&mut self, h: &mut TcpHeader) {
        let mut blocks = [(0u64, 0u64); MAX_SACK_BLOCKS];
        let mut n = 0;
        if let Some(d) = self.dsack.take() {
            blocks[0] = d;
            n = 1;
        }
        // refresh the remembered blocks against the out-of-order queue: each becomes the range
        // now holding its start (they grow by merging); those now below rcv_nxt are gone.
        // Each kept range, most recent first, is also reported unless the blocks are full or
        // it is reported already (as the D-SACK block)
        let mut kept = 0;
        for i in 0..self.sack_recent.len() {
            let s = self.sack_recent[i].0;
            if let Some(&r) = self.ooo.iter().find(|&&(a, b)| a <= s && s < b) {
                if !self.sack_recent[..kept].iter().any(|&(a, _)| a == r.0) {
                    self.sack_recent[kept] = (r.0, r.0);
                    kept += 1;
                    if n < MAX_SACK_BLOCKS && !blocks[..n].contains(&r) {
                        blocks[n] = r;
                        n += 1;
                    }
                }
            }
        }
        self.sack_recent.truncate(kept);
        for (i, &(s, e)) in blocks[..n].iter().enumerate() {
            h.sack[i] = (to_wire(self.irs, s), to_wire(self.irs, e));
        }
        h.sack_len = n as u8;
    }
}

impl Endpoint {
    /// Processes the data / FIN part of a segment; returns whether an ACK must go out now.
    pub(super) fn on_data(&mut self, h: &TcpHeader, now_ns: u64, out: &mut Output) -> bool {
        let fin = h.has(flags::FIN);
        if h.payload_bytes == 0 && !fin {
            return false;
        }
        let start = from_wire(self.rcv.irs, h.seq, self.rcv.nxt);
        let end = start + h.payload_bytes as u64;
        if fin {
            self.rcv.peer_fin_at = Some(end);
        }
        if h.payload_bytes > 0 {
            if let Some(b) = self.rcv.rcvbuf.as_mut() {
                // tcp_rcv_rtt_measure_ts runs for every data segment before it is queued
                b.on_segment_ts(
                    h.payload_bytes as u64,
                    h.ts.map(|(_, ecr)| ecr),
                    super::ts_now(now_ns),
                );
            }
        }
        let occupied_end = end + fin as u64;
        if occupied_end <= self.rcv.nxt {
            // entirely old: a duplicate, ACK at once (with a D-SACK block, RFC 2883 §4)
            if end > start {
                self.rcv.dsack = Some((start, end));
            }
            let wnd = self.rcv.offered_window(self.cfg.rwnd.0);
            if let Some(d) = self.rcv.delack.as_mut() {
                // Linux tcp_data_queue: "A retransmit ... Force an immediate ack"
                d.enter_quickack(wnd);
            }
            return true;
        }
        if start > self.rcv.nxt {
            // out of order: keep it, duplicate ACK at once
            if self
                .rcv
                .ooo
                .iter()
                .any(|&(s, e)| s <= start && end <= e && end > start)
            {
                self.rcv.dsack = Some((start, end));
            }
            if let Some(d) = self.rcv.delack.as_mut() {
                d.pending = true;
            }
            let held_before = self.rcv.ooo_held();
            insert_range(&mut self.rcv.ooo, start, end);
            self.rcv.note_sack_block(start);
            let span = self.rcv.ooo_span();
            if let Some(b) = self.rcv.rcvbuf.as_mut() {
                b.on_data_out_of_order(end - start, held_before, span);
            }
            return true;
        }
        let filled_hole = !self.rcv.ooo.is_empty();
        let before = self.rcv.nxt;
        self.rcv.nxt = self.rcv.nxt.max(end);
        while let Some(&(s, e)) = self.rcv.ooo.first() {
            if s > self.rcv.nxt {
                break;
            }
            self.rcv.nxt = self.rcv.nxt.max(e);
            self.rcv.ooo.remove(0);
        }
        let mut ack_now = filled_hole;
        let mut grew = false;
        if let Some(f) = self.rcv.peer_fin_at {
            if self.rcv.nxt == f && !self.rcv.peer_closed {
                self.rcv.nxt += 1;
                self.rcv.peer_closed = true;
                self.state = self.state.on_peer_fin();
                ack_now = true;
            }
        }
        let delivered_end = self
            .rcv
            .peer_fin_at
            .map_or(self.rcv.nxt, |f| self.rcv.nxt.min(f));
        let new_bytes = delivered_end.saturating_sub(before);
        self.stats.transfer.bytes_received += new_bytes;
        let (held, rcv_nxt) = (self.rcv.ooo_held(), self.rcv.nxt);
        if let Some(b) = self.rcv.rcvbuf.as_mut().filter(|_| h.payload_bytes > 0) {
            // tcp_event_data_recv with the segment queued and unread; the application reads it
            // (tcp_rcv_space_adjust) once the segment's ACK is decided: `app_read`
            grew = b.on_data_in_order(h.payload_bytes as u64, rcv_nxt, now_ns, held + new_bytes);
            if new_bytes > 0 {
                self.rcv.unread = Some((new_bytes, delivered_end));
            }
        }
        if new_bytes > 0 {
            self.notify_messages(delivered_end, now_ns, out);
        }
        if self.rcv.peer_closed && ack_now {
            out.notices.push(Notice {
                conn: self.conn,
                side: self.side,
                kind: NoticeKind::PeerClosed,
            });
        }
        if h.payload_bytes > 0 && self.rcv.delack.is_some() {
            let (wnd, rto) = (self.rcv.offered_window(self.cfg.rwnd.0), self.rtt.rto_ns());
            let measured = self.rcv.rcvbuf.as_ref().map(|b| b.rcv_mss);
            if let Some(d) = self.rcv.delack.as_mut() {
                d.on_data(h.payload_bytes as u64, now_ns, wnd, rto, grew, measured);
            }
        }
        if ack_now {
            return true;
        }
        if let Some(ack_now) = self.linux_ack_check(now_ns, out) {
            return ack_now;
        }
        self.rcv.unacked_bytes += new_bytes;
        if self.cfg.delayed_ack == DelayedAckMode::Off
            || self.rcv.unacked_bytes >= 2 * self.cfg.mss as u64
        {
            return true;
        }
        if !self.rcv.delack_timer.is_armed() {
            let at = self.timer_fires_at(now_ns, self.cfg.delayed_ack_timeout.0);
            self.arm_delack(at, out);
        }
        false
    }

    /// RFC 7323 §4.3 (2), for every segment before its acknowledgment is processed: TS.Recent
    /// takes the TSval of a segment that starts at or before Last.ACK.sent (`rcv_wup`), ends at
    /// or after it and is not older than TS.Recent. So a delayed ACK echoes the earliest
    /// segment it acknowledges and the sender's RTT sample covers the delay (§4.3 (1)), a data
    /// sender echoes its peer's latest pure ACK, and the ACK of a duplicate of the last data
    /// acknowledged echoes the duplicate. Linux: `tcp_replace_ts_recent` (seq not after
    /// rcv_wup) ahead of `tcp_ack`'s processing (FLAG_UPDATE_TS_RECENT), `tcp_store_ts_recent`
    /// on the fast path; a segment wholly below rcv_wup fails `tcp_sequence` first. ns-3.37's
    /// `TcpSocketBase::ProcessOptionTimestamp` takes only a segment that starts at rcv_nxt
    /// (and at or below m_highTxAck), so not such duplicates (docs/tcp.md).
    pub(super) fn note_ts_recent(&mut self, h: &TcpHeader) {
        if let Some((val, _)) = h.ts {
            let start = from_wire(self.rcv.irs, h.seq, self.rcv.nxt);
            let wup = self.rcv.last_ack_sent;
            // (the end is looked at only for a segment that starts below rcv_wup)
            if start <= wup
                && !super::ts_before(val, self.rcv.ts_recent)
                && (start == wup
                    || start + h.payload_bytes as u64 + h.has(flags::FIN) as u64 >= wup)
            {
                self.rcv.ts_recent = val;
            }
        }
    }

    /// Linux `__tcp_ack_snd_check` for in-order data (tcp/delack.rs) when the receiver follows
    /// Linux's rules (`delayed_ack = "linux"`; None otherwise): whether to ACK now; if not, the
    /// delayed-ACK timer is armed as `tcp_send_delayed_ack` does.
    fn linux_ack_check(&mut self, now_ns: u64, out: &mut Output) -> Option<bool> {
        let d = self.rcv.delack.as_ref()?;
        let held = self.rcv.buffered();
        let advances = self
            .rcv
            .rcvbuf
            .as_ref()
            .is_none_or(|b| b.window_advances(held));
        let unacked = self.rcv.nxt.saturating_sub(self.rcv.last_ack_sent);
        if (unacked > d.rcv_mss && advances) || d.in_quickack() {
            return Some(true);
        }
        let ato = d.timeout_ns(self.rtt.srtt_ns);
        let mut at = self.timer_fires_at(now_ns, ato);
        if let Some(old) = self.rcv.delack_timer.deadline_ns() {
            // an armed timer about to expire: ACK now; else keep the earlier deadline
            if old <= now_ns + ato / 4 {
                return Some(true);
            }
            at = at.min(old);
        }
        self.arm_delack(at, out);
        Some(false)
    }

    /// The application reads what the segment just processed delivered in order
    /// (`tcp_recvmsg` → `tcp_rcv_space_adjust`), after the stack has sent what it sends for it.
    pub(super) fn app_read(&mut self, now_ns: u64) {
        if let Some((_, copied_seq)) = self.rcv.unread.take() {
            let span = self.rcv.ooo_span();
            if let Some(b) = self.rcv.rcvbuf.as_mut() {
                b.on_read(copied_seq, now_ns, span);
            }
        }
    }

    /// Arms (or re-arms) the delayed-ACK timer for `at_ns`.
    fn arm_delack(&mut self, at_ns: u64, out: &mut Output) {
        Self::arm(
            &mut self.rcv.delack_timer,
            at_ns,
            self.conn,
            self.side,
            TimerKind::DelAck,
            out,
        );
    }

    /// FirstByte, Progress and Received notices for the peer's messages, now that the stream is
    /// delivered in order up to `delivered_end`.
    fn notify_messages(&mut self, delivered_end: u64, now_ns: u64, out: &mut Output) {
        let (conn, side) = (self.conn, self.side);
        while let Some(m) = self.rcv.marks.front_mut() {
            if m.start >= delivered_end {
                break;
            }
            if !m.first_byte {
                m.first_byte = true;
                out.notices.push(Notice {
                    conn,
                    side,
                    kind: NoticeKind::FirstByte { tag: m.tag },
                });
            }
            if m.end > delivered_end {
                if let Some(every) = self.rcv.progress_every_ns {
                    if self
                        .rcv
                        .last_progress_ns
                        .is_none_or(|t| now_ns >= t.saturating_add(every))
                    {
                        self.rcv.last_progress_ns = Some(now_ns);
                        out.notices.push(Notice {
                            conn,
                            side,
                            kind: NoticeKind::Progress {
                                tag: m.tag,
                                bytes: delivered_end - m.start,
                            },
                        });
                    }
                }
                break;
            }
            let tag = m.tag;
            self.rcv.marks.pop_front();
            self.stats.transfer.messages_received += 1;
            out.notices.push(Notice {
                conn,
                side,
                kind: NoticeKind::Received { tag },
            });
        }
    }
}

/// Inserts [s, e) into sorted disjoint ranges, merging overlaps and adjacency.
pub(super) fn insert_range(ranges: &mut Vec<(u64, u64)>, s: u64, e: u64) {
    let i = ranges.partition_point(|&(_, re)| re < s);
    let mut ns = s;
    let mut ne = e;
    let mut j = i;
    while j < ranges.len() && ranges[j].0 <= ne {
        ns = ns.min(ranges[j].0);
        ne = ne.max(ranges[j].1);
        j += 1;
    }
    ranges.splice(i..j, std::iter::once((ns, ne)));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_merge() {
        let mut r = vec![];
        insert_range(&mut r, 10, 20);
        insert_range(&mut r, 30, 40);
        assert_eq!(r, vec![(10, 20), (30, 40)]);
        insert_range(&mut r, 20, 30);
        assert_eq!(r, vec![(10, 40)]);
        insert_range(&mut r, 5, 8);
        insert_range(&mut r, 50, 60);
        insert_range(&mut r, 7, 55);
        assert_eq!(r, vec![(5, 60)]);
    }
}
