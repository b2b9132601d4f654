//! The receive half: reassembly, delayed ACKs, SACK and D-SACK blocks.

use super::{Endpoint, Notice, NoticeKind, Output, TimerKind};
use crate::net::packet::{flags, TcpHeader};
use crate::tcp::config::DelayedAckMode;
use crate::tcp::seq::{from_wire, to_wire};

/// SACK blocks that fit beside the timestamps option (40 option bytes: 12 for TS, 2 + 8·n for
/// SACK; Linux `TCP_NUM_SACKS` = 4 without timestamps, our header holds at most 3).
const MAX_SACK_BLOCKS: usize = 3;

impl Endpoint {
    /// Processes the data / FIN part of a segment; returns whether an ACK must go out now.
    pub(super) fn on_data(&mut self, h: &TcpHeader, now_ns: u64, out: &mut Output) -> bool {
        let fin = h.has(flags::FIN);
        if h.payload_bytes == 0 && !fin {
            return false;
        }
        let start = from_wire(self.irs, h.seq, self.rcv_nxt);
        let end = start + h.payload_bytes as u64;
        if fin {
            self.peer_fin_at = Some(end);
        }
        if h.payload_bytes > 0 {
            if let Some(b) = self.rcvbuf.as_mut() {
                // tcp_rcv_rtt_measure_ts runs for every data segment before it is queued
                b.on_segment_ts(
                    h.payload_bytes as u64,
                    h.ts.map(|(_, ecr)| ecr),
                    super::ts_now(now_ns),
                );
            }
        }
        let occupied_end = end + fin as u64;
        if occupied_end <= self.rcv_nxt {
            // entirely old: a duplicate, ACK at once (with a D-SACK block, RFC 2883 §4)
            if end > start {
                self.dsack = Some((start, end));
            }
            return true;
        }
        if start > self.rcv_nxt {
            // out of order: keep it, duplicate ACK at once
            if self
                .ooo
                .iter()
                .any(|&(s, e)| s <= start && end <= e && end > start)
            {
                self.dsack = Some((start, end));
            }
            let held_before = self.ooo_held();
            insert_range(&mut self.ooo, start, end);
            self.note_sack_block(start);
            let span = self.ooo_span();
            if let Some(b) = self.rcvbuf.as_mut() {
                b.on_data_out_of_order(end - start, held_before, span);
            }
            return true;
        }
        let filled_hole = !self.ooo.is_empty();
        let before = self.rcv_nxt;
        self.rcv_nxt = self.rcv_nxt.max(end);
        while let Some(&(s, e)) = self.ooo.first() {
            if s > self.rcv_nxt {
                break;
            }
            self.rcv_nxt = self.rcv_nxt.max(e);
            self.ooo.remove(0);
        }
        // RFC 7323 §4.3 (1): TS.Recent takes the TSval of a segment that starts at or before
        // Last.ACK.sent, so that a delayed ACK echoes the earliest segment it acknowledges and
        // the sender's RTT sample covers the delay (Linux `tcp_replace_ts_recent`, rcv_wup;
        // ns-3 `TcpSocketBase::ProcessOptionTimestamp`, m_highTxAck)
        if let Some((val, _)) = h.ts {
            if start <= self.last_ack_sent && !super::ts_before(val, self.ts_recent) {
                self.ts_recent = val;
            }
        }
        let mut ack_now = filled_hole;
        if let Some(f) = self.peer_fin_at {
            if self.rcv_nxt == f && !self.peer_closed {
                self.rcv_nxt += 1;
                self.peer_closed = true;
                self.state = self.state.on_peer_fin();
                ack_now = true;
            }
        }
        let delivered_end = self
            .peer_fin_at
            .map_or(self.rcv_nxt, |f| self.rcv_nxt.min(f));
        let new_bytes = delivered_end.saturating_sub(before);
        self.stats.bytes_received += new_bytes;
        let (held, span, rcv_nxt) = (self.ooo_held(), self.ooo_span(), self.rcv_nxt);
        if let Some(b) = self.rcvbuf.as_mut().filter(|_| h.payload_bytes > 0) {
            // tcp_event_data_recv, then the application reads at once (tcp_rcv_space_adjust)
            b.on_data_in_order(h.payload_bytes as u64, rcv_nxt, now_ns, held);
            if new_bytes > 0 {
                b.on_read(delivered_end, now_ns, span);
            }
        }
        if new_bytes > 0 {
            self.notify_messages(delivered_end, now_ns, out);
        }
        if self.peer_closed && ack_now {
            out.notices.push(Notice {
                conn: self.conn,
                side: self.side,
                kind: NoticeKind::PeerClosed,
            });
        }
        if ack_now {
            return true;
        }
        self.unacked_bytes += new_bytes;
        match self.cfg.delayed_ack {
            DelayedAckMode::Off => true,
            DelayedAckMode::On => {
                if self.unacked_bytes >= 2 * self.cfg.mss as u64 {
                    true
                } else {
                    let at = now_ns + self.cfg.delayed_ack_timeout.0;
                    if !self.delack_timer.is_armed() {
                        Self::arm(
                            &mut self.delack_timer,
                            at,
                            self.conn,
                            self.side,
                            TimerKind::DelAck,
                            out,
                        );
                    }
                    false
                }
            }
        }
    }

    /// Bytes held out of order above rcv_nxt.
    pub(super) fn ooo_held(&self) -> u64 {
        self.ooo.iter().map(|&(s, e)| e - s).sum()
    }

    /// From rcv_nxt to the end of the out-of-order data (0 without any).
    fn ooo_span(&self) -> u64 {
        self.ooo.last().map_or(0, |&(_, e)| e - self.rcv_nxt)
    }

    /// FirstByte, Progress and Received notices for the peer's messages, now that the stream is
    /// delivered in order up to `delivered_end`.
    fn notify_messages(&mut self, delivered_end: u64, now_ns: u64, out: &mut Output) {
        let (conn, side) = (self.conn, self.side);
        while let Some(m) = self.recv_marks.front_mut() {
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
                if let Some(every) = self.progress_every_ns {
                    if self
                        .last_progress_ns
                        .is_none_or(|t| now_ns >= t.saturating_add(every))
                    {
                        self.last_progress_ns = Some(now_ns);
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
            self.recv_marks.pop_front();
            self.stats.messages_received += 1;
            out.notices.push(Notice {
                conn,
                side,
                kind: NoticeKind::Received { tag },
            });
        }
    }

    /// RFC 2018 §4: the block holding the segment just received goes first, then the blocks
    /// reported most recently.
    fn note_sack_block(&mut self, seg_start: u64) {
        if self.sack_recent.first().map(|b| b.0) != Some(seg_start) {
            self.sack_recent.insert(0, (seg_start, seg_start));
            self.sack_recent.truncate(MAX_SACK_BLOCKS + 1);
        }
    }

    /// Writes the D-SACK block (if any) and the current SACK blocks into an outgoing ACK.
    pub(super) fn fill_sack_blocks(&mut self, h: &mut TcpHeader) {
        let mut blocks: Vec<(u64, u64)> = Vec::with_capacity(MAX_SACK_BLOCKS);
        if let Some(d) = self.dsack.take() {
            blocks.push(d);
        }
        // refresh the remembered blocks against the out-of-order queue: each becomes the range
        // now holding its start (they grow by merging); those now below rcv_nxt are gone
        let mut kept: Vec<(u64, u64)> = Vec::with_capacity(self.sack_recent.len());
        for &(s, _) in &self.sack_recent {
            if let Some(&r) = self.ooo.iter().find(|&&(a, b)| a <= s && s < b) {
                if !kept.contains(&r) {
                    kept.push(r);
                }
            }
        }
        self.sack_recent = kept.iter().map(|&(a, _)| (a, a)).collect();
        for r in kept {
            if blocks.len() == MAX_SACK_BLOCKS {
                break;
            }
            if !blocks.contains(&r) {
                blocks.push(r);
            }
        }
        for (i, &(s, e)) in blocks.iter().enumerate() {
            h.sack[i] = (to_wire(self.irs, s), to_wire(self.irs, e));
        }
        h.sack_len = blocks.len() as u8;
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
