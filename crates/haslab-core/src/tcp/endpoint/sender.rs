//! The send half: its state ([`SendHalf`]), the transmission loop (window, pacing, new data
//! and retransmissions), cwnd growth, the cwnd clamp, and the calls of the sender hooks
//! ([`crate::tcp::sender_hook`]). ACK processing is in [`super::ack`], loss recovery and the
//! RTO in [`super::recovery`], RACK and the tail loss probe in [`super::rack_tlp`].

use super::{Endpoint, Notice, NoticeKind, Output, TimerKind};
use crate::net::packet::flags;
use crate::sim::events::Timer;
use crate::tcp::cc::{CaEvent, CaState};
use crate::tcp::config::{CwndGrowth, CwndLimited, RecoveryMode, TxStartEvent, WindowAccounting};
use crate::tcp::pacing;
use crate::tcp::scoreboard::Scoreboard;
use crate::tcp::scoreboard::Seg;
use crate::tcp::sender_hook::ChunkView;
use std::collections::VecDeque;

/// The send half (RFC 793 §3.2's send sequence variables SND.UNA, SND.NXT, SND.WND, ISS, with
/// RFC 7323 §2.3's window scale): the byte stream the application wrote, the retransmission
/// queue ([`Scoreboard`]) and the RFC 6298 retransmission timer, pacing, the current chunk the
/// sender hooks see, and the marks that turn acknowledged writes into notices. Offsets count
/// from the ISS: the SYN is offset 0, the first data byte 1.
pub(super) struct SendHalf {
    pub(super) iss: u32,
    pub(super) una: u64,
    /// next new byte to send; retransmissions never move it (so it is also SND.MAX)
    pub(super) nxt: u64,
    /// offset just past the last written byte (1 + bytes written)
    pub(super) write_end: u64,
    pub(super) fin_requested: bool,
    pub(super) sb: Scoreboard,
    /// the peer's advertised window, scaled
    pub(super) wnd_bytes: u64,
    /// shift applied to windows received from the peer
    pub(super) wscale: u8,
    pub(super) rto_timer: Timer,
    pub(super) has_sent_data: bool,
    pub(super) pacing_next_ns: u64,
    pub(super) pace_timer: Timer,
    /// Linux `cwnd_usage_seq` (3.x: `max_packets_seq`), `tcp_cwnd_validate`: snd_nxt at the
    /// last update; the window ends when snd_una reaches it
    pub(super) cwnd_usage_seq: u64,
    /// application-set cwnd clamp rate (Trickle), bits per second
    pub(super) clamp_rate_bps: Option<u64>,
    /// the current chunk (Enhancing-TCP): [chunk_start, chunk_end) of the stream, a chunk
    /// being the data written while the sender was idle, plus what was appended before it
    /// was all acknowledged
    pub(super) chunk_start: u64,
    pub(super) chunk_end: u64,
    /// a chunk was written while idle and its first segment is not sent yet
    pub(super) chunk_pending: bool,
    /// marks (end offset, tag) of writes, for Acked notices
    pub(super) marks: VecDeque<(u64, u64)>,
    pub(super) idle_notified: bool,
    /// (start offset, payload bytes) of the segments shorter than one MSS not yet cumulatively
    /// acknowledged, for `window_accounting = "bytes"` (a short segment in flight counts its
    /// own bytes); empty otherwise
    pub(super) short_segs: VecDeque<(u64, u32)>,
}

impl SendHalf {
    pub(super) fn new(iss: u32, clamp_rate_bps: Option<u64>) -> SendHalf {
        SendHalf {
            iss,
            una: 0,
            nxt: 0,
            write_end: 1,
            fin_requested: false,
            sb: Scoreboard::default(),
            wnd_bytes: 65_535,
            wscale: 0,
            rto_timer: Timer::default(),
            has_sent_data: false,
            pacing_next_ns: 0,
            pace_timer: Timer::default(),
            cwnd_usage_seq: 0,
            clamp_rate_bps,
            chunk_start: 1,
            chunk_end: 1,
            chunk_pending: false,
            marks: VecDeque::new(),
            idle_notified: true,
            short_segs: VecDeque::new(),
        }
    }

    /// End of the sendable stream: written data, plus the FIN when the app closed.
    #[inline]
    pub(super) fn stream_end(&self) -> u64 {
        self.write_end + self.fin_requested as u64
    }

    /// Payload bytes of a queued segment (without the FIN's sequence number).
    pub(super) fn seg_payload(&self, seg: &Seg) -> u32 {
        let fin = self.fin_requested && seg.end == self.write_end + 1;
        (seg.end - seg.start - fin as u64) as u32
    }

    /// Bytes written by the application and not yet acknowledged.
    pub(super) fn unacked_written_bytes(&self) -> u64 {
        self.write_end - self.una.clamp(1, self.write_end)
    }
}

impl Endpoint {
    /// What cwnd is compared with before sending: RFC 6675 pipe (Linux
    /// `tcp_packets_in_flight`). Without SACK: `classic` recovery counts every outstanding
    /// packet (cwnd is inflated instead), less up to two during the first duplicate ACKs
    /// (limited transmit, RFC 3042); `prr` counts duplicate ACKs as packets that left the
    /// network, as Linux's "reno sacks" do.
    pub(super) fn window_pipe(&self) -> u32 {
        let pipe = self.snd.sb.pipe();
        if self.sack_ok {
            return pipe;
        }
        match self.cfg.recovery {
            RecoveryMode::Prr => pipe.saturating_sub(self.recovery.reno_sacked),
            RecoveryMode::Classic
                if self.tp.ca_state == CaState::Disorder && self.cfg.limited_transmit =>
            {
                pipe.saturating_sub(self.recovery.dupacks.min(2))
            }
            // a Loss episode with `frto` counts duplicate ACKs as delivered segments once new
            // data is out (Endpoint::loss_ack): Linux's pipe, whatever the recovery
            RecoveryMode::Classic if self.tp.ca_state == CaState::Loss && self.cfg.frto => {
                pipe.saturating_sub(self.recovery.reno_sacked)
            }
            RecoveryMode::Classic => pipe,
        }
    }

    /// `window_accounting = "bytes"`: whether ns-3's `TcpSocketBase::SendPendingData` would
    /// send the segment starting at `start` (ns-3.37 src/internet/model/tcp-socket-base.cc;
    /// the same rule in ns-3.17): the available window, cwnd − BytesInFlight in bytes
    /// (`AvailableWindow`), must be positive, and at least one MSS unless all the data left
    /// from `start` fits in it (the silly-window check). cwnd is its whole segments plus the
    /// per-ACK growth's bytes ([`crate::tcp::cc::CcState::window_credit_bytes`]); in flight is
    /// the pipe of [`Self::window_pipe`] in MSS-sized packets, less what its short segments lack.
    pub(super) fn byte_window_allows(&self, start: u64) -> bool {
        let mss = self.cfg.mss as u64;
        let cwnd_bytes = self.tp.cwnd_pkts as u64 * mss + self.tp.window_credit_bytes() as u64;
        let pipe_bytes = self.window_pipe() as u64 * mss;
        // (no short segment in flight, the usual case: nothing to subtract)
        let in_flight_bytes = if self.snd.short_segs.is_empty() {
            pipe_bytes
        } else {
            let short_deficit: u64 = self
                .snd
                .short_segs
                .iter()
                .filter_map(|&(seg_start, len)| {
                    let i = self.snd.sb.index_of(seg_start)?;
                    Some(self.snd.sb.pipe_count(i) as u64 * mss.saturating_sub(len as u64))
                })
                .sum();
            pipe_bytes.saturating_sub(short_deficit)
        };
        let available = cwnd_bytes.saturating_sub(in_flight_bytes);
        let data_left = self.snd.write_end.saturating_sub(start);
        available > 0 && (available >= mss || data_left <= available)
    }

    /// cwnd lets no segment starting at `start` leave (Linux `tcp_cwnd_test` gives no quota;
    /// with `window_accounting = "bytes"`, [`Self::byte_window_allows`] says no).
    pub(super) fn window_full(&self, start: u64) -> bool {
        match self.cfg.window_accounting {
            WindowAccounting::Packets => self.window_pipe() >= self.tp.cwnd_pkts,
            WindowAccounting::Bytes => !self.byte_window_allows(start),
        }
    }

    /// Sends what the windows allow: lost segments first, then new data.
    ///
    /// Fast path: with no lost segment to resend, no new data or FIN to send, and RFC 6675
    /// NextSeg rule (3) not applying, the loop of `send_loop` would stop at once,
    /// before the window check, having changed nothing (its `next_lost` and
    /// `next_unsacked_not_retransmitted` only read the scoreboard); what is left is its
    /// ending, `end_send_round`, with nothing sent and the window not found full. So
    /// the fast path calls just that, and the state, the timers and the statistics end up as
    /// after the full path.
    pub fn try_send(&mut self, now_ns: u64, out: &mut Output) {
        if !self.state.is_synchronized() {
            return;
        }
        self.tp.now_ns = now_ns;
        if self.snd.nxt >= self.snd.stream_end()
            && self.snd.sb.next_lost().is_none()
            && !self.nextseg_rule3_applies()
        {
            self.end_send_round(false, false, false, now_ns, out);
            return;
        }
        self.send_loop(now_ns, out);
    }

    /// RFC 6675 NextSeg rule (3) applies (with `nextseg_rule3`, ns-3 3.37): SACK is on and the
    /// sender is in recovery.
    #[inline]
    fn nextseg_rule3_applies(&self) -> bool {
        self.cfg.nextseg_rule3 && self.sack_ok && self.tp.ca_state == CaState::Recovery
    }

    /// The transmission loop of [`Self::try_send`]: lost segments first, then new data, while
    /// the windows and pacing allow. After F-RTO's step 2.b (`frto_send_new`, Linux
    /// `REXMIT_NEW` in `tcp_xmit_recovery`) new data only; if none could go, F-RTO ends.
    #[inline(never)]
    fn send_loop(&mut self, now_ns: u64, out: &mut Output) {
        let mut cwnd_limited = false;
        let mut sent_new = false;
        // Linux runs `tcp_write_xmit` (and so `tcp_cwnd_validate`) only with unsent data
        let had_unsent = self.snd.nxt < self.snd.stream_end();
        let new_only = std::mem::take(&mut self.recovery.frto_send_new);
        loop {
            let mut lost = if new_only {
                None
            } else {
                self.snd.sb.next_lost()
            };
            if lost.is_none() && self.snd.nxt >= self.snd.stream_end() {
                // RFC 6675 NextSeg rule (3), with `nextseg_rule3` (ns-3 3.37): in recovery and
                // with nothing lost nor new to send, resend the first segment not SACKed
                lost = self
                    .nextseg_rule3_applies()
                    .then(|| self.snd.sb.next_unsacked_not_retransmitted())
                    .flatten();
                if lost.is_none() {
                    break;
                }
            }
            if lost.is_none() && self.snd.sb.is_empty() {
                // sending new data with nothing in flight: restart after idle, TX start
                let cwnd_before = self.tp.cwnd_pkts;
                if self.snd.has_sent_data && !self.cc_controls {
                    let idle_ns = now_ns.saturating_sub(self.tp.last_send_ns);
                    self.tp.now_ns = now_ns;
                    self.tp.rto_ns = self.rtt.rto_ns();
                    self.cwv
                        .on_restart_after_idle(&mut self.tp, self.cc.as_mut(), idle_ns);
                }
                self.tp.in_flight_pkts = 0;
                self.cc.cwnd_event(&mut self.tp, CaEvent::TxStart);
                if self.snd.chunk_pending {
                    self.snd.chunk_pending = false;
                    self.chunk_first_send(self.tp.cwnd_pkts < cwnd_before);
                }
            }
            if self.window_full(lost.map_or(self.snd.nxt, |i| self.snd.sb.get(i).start)) {
                cwnd_limited = true;
                break;
            }
            let len = match lost {
                Some(i) => self.snd.seg_payload(self.snd.sb.get(i)),
                None => {
                    let len = (self.snd.write_end.saturating_sub(self.snd.nxt))
                        .min(self.cfg.mss as u64) as u32;
                    if self.snd.nxt + len as u64 - self.snd.una > self.snd.wnd_bytes
                        && !self.snd.sb.is_empty()
                    {
                        break; // receive window full (zero-window probing is not modelled)
                    }
                    len
                }
            };
            if !self.pacing_allows(len, now_ns, out) {
                break;
            }
            match lost {
                Some(i) => self.retransmit(i, now_ns, out),
                None => {
                    self.send_new(len, now_ns, out);
                    sent_new = true;
                }
            }
        }
        if new_only && !sent_new {
            self.recovery.frto = false;
        }
        self.end_send_round(cwnd_limited, sent_new, had_unsent, now_ns, out);
    }

    /// The end of a [`Self::try_send`] round: the app-limited mark when all was sent and the
    /// window is not full, cwnd validation, and the tail loss probe after new data.
    /// `had_unsent`: the round began with new data (or the FIN) not yet sent, the condition
    /// under which Linux's transmit path calls `tcp_write_xmit` (`tcp_push_pending_frames`
    /// tests `tcp_send_head`); `cwnd_limited`: the loop stopped on a full window.
    #[inline]
    fn end_send_round(
        &mut self,
        cwnd_limited: bool,
        sent_new: bool,
        had_unsent: bool,
        now_ns: u64,
        out: &mut Output,
    ) {
        if self.snd.nxt >= self.snd.stream_end() && self.snd.sb.lost_out <= self.snd.sb.retrans_out
        {
            let pipe = self.window_pipe();
            if pipe < self.tp.cwnd_pkts {
                self.rate.mark_app_limited(&self.tp, pipe);
            }
        }
        self.tp.in_flight_pkts = self.snd.sb.len();
        match self.cfg.cwnd_limited {
            CwndLimited::Linux if had_unsent => {
                // Linux 5.11+ `tcp_write_xmit`: `is_cwnd_limited |= (tcp_packets_in_flight(tp)
                // >= tcp_snd_cwnd(tp)); if (likely(sent_pkts || is_cwnd_limited))
                // tcp_cwnd_validate(..)`: also when the data ran out with cwnd just filled
                let limited = cwnd_limited || self.window_full(self.snd.nxt);
                if sent_new || limited {
                    self.cwnd_validate(limited);
                }
            }
            CwndLimited::Linux319 if sent_new => self.cwnd_validate_319(cwnd_limited),
            CwndLimited::Linux | CwndLimited::Linux319 => {}
        }
        if sent_new {
            self.schedule_loss_probe(now_ns, out);
        }
    }

    /// Whether pacing lets a packet of `len` payload bytes leave now; if so, books its slot,
    /// otherwise arms the pacing timer.
    pub(super) fn pacing_allows(&mut self, len: u32, now_ns: u64, out: &mut Output) -> bool {
        let Some(rate) = self.tp.pacing_rate_bps else {
            return true;
        };
        if now_ns < self.snd.pacing_next_ns {
            let (c, s) = (self.conn, self.side);
            Self::arm(
                &mut self.snd.pace_timer,
                self.snd.pacing_next_ns,
                c,
                s,
                TimerKind::Pacing,
                out,
            );
            return false;
        }
        let wire = len as u64 + 40 + if self.cfg.timestamps { 12 } else { 0 };
        self.snd.pacing_next_ns = now_ns + crate::sim::time::tx_time_ns(wire, rate.max(1));
        true
    }

    /// With `tx_start = "linux"`: `CA_EVENT_TX_START` before a data segment that leaves with
    /// nothing in flight (Linux 3.19 `tcp_transmit_skb`, 6.18 `tcp_event_data_sent`:
    /// `tcp_packets_in_flight(tp) == 0`, counted before the segment). New data with nothing
    /// outstanding has already raised it in [`Self::send_loop`] (both rules).
    fn tx_start_if_nothing_in_flight(&mut self) {
        if self.cfg.tx_start == TxStartEvent::Linux
            && !self.snd.sb.is_empty()
            && self.window_pipe() == 0
        {
            self.tp.in_flight_pkts = self.snd.sb.len();
            self.cc.cwnd_event(&mut self.tp, CaEvent::TxStart);
        }
    }

    /// Sends `len` new bytes at snd_nxt (+ the FIN if they end the stream).
    pub(super) fn send_new(&mut self, len: u32, now_ns: u64, out: &mut Output) {
        self.tx_start_if_nothing_in_flight();
        let off = self.snd.nxt;
        let fin = self.snd.fin_requested && off + len as u64 == self.snd.write_end;
        let mut fl = flags::ACK;
        if fin {
            fl |= flags::FIN;
        }
        if len > 0 && off + len as u64 == self.snd.write_end {
            fl |= flags::PSH;
        }
        let h = self.header(now_ns, off, fl, len);
        self.emit(h, out);
        if self.cfg.window_accounting == WindowAccounting::Bytes && len > 0 && len < self.cfg.mss {
            self.snd.short_segs.push_back((off, len));
        }
        let tx = self.rate.on_send(&mut self.tp, self.snd.sb.len(), now_ns);
        self.snd.sb.push(Seg {
            start: off,
            end: off + len as u64 + fin as u64,
            sent_ns: now_ns,
            flags: 0,
            tx,
        });
        self.snd.nxt += len as u64 + fin as u64;
        self.tp.snd_nxt_bytes = self.snd.nxt;
        self.on_segment_sent(len, false, now_ns, out);
    }

    /// Retransmits queued segment `i`.
    pub(super) fn retransmit(&mut self, i: usize, now_ns: u64, out: &mut Output) {
        self.tx_start_if_nothing_in_flight();
        let seg = *self.snd.sb.get(i);
        let len = self.snd.seg_payload(&seg);
        let fin = seg.end - seg.start > len as u64;
        let mut fl = flags::ACK;
        if fin {
            fl |= flags::FIN;
        }
        let h = self.header(now_ns, seg.start, fl, len);
        self.emit(h, out);
        let tx = self.rate.on_send(&mut self.tp, self.snd.sb.len(), now_ns);
        self.snd.sb.on_retransmit(i, now_ns, tx);
        for hook in &mut self.hooks {
            hook.on_retransmission();
        }
        if self.tp.ca_state == CaState::Recovery {
            self.recovery.retrans += 1;
        }
        self.on_segment_sent(len, true, now_ns, out);
        if i == 0 && self.cfg.rto_restart_on_retransmit && self.snd.rto_timer.is_armed() {
            // Linux tcp_xmit_retransmit_queue rearms the RTO when it resends the head of the
            // retransmission queue, so that the fast retransmission gets a whole RTO to be
            // acknowledged (net/ipv4/tcp_output.c); ns-3 keeps the running timer
            self.arm_rto(now_ns, out);
        }
    }

    /// Retransmits the first lost segment now, whatever the window (the fast retransmit,
    /// RFC 5681 §3.2 step 2 / RFC 6675 §5 step 4.3, and NewReno's partial-ACK retransmission).
    pub(super) fn retransmit_first_lost(&mut self, now_ns: u64, out: &mut Output) {
        if let Some(i) = self.snd.sb.next_lost() {
            self.retransmit(i, now_ns, out);
        }
    }

    #[inline]
    pub(super) fn on_segment_sent(
        &mut self,
        len: u32,
        retransmission: bool,
        now_ns: u64,
        out: &mut Output,
    ) {
        self.stats.transfer.segments_sent += 1;
        if self.tp.ca_state == CaState::Recovery {
            self.recovery.prr_out += 1;
        }
        self.stats.transfer.bytes_sent += len as u64;
        if retransmission {
            self.stats.transfer.retransmitted_segments += 1;
        }
        self.snd.has_sent_data = true;
        if let Some(d) = self.rcv.delack.as_mut() {
            // tcp_event_data_sent: a reply within ato makes the connection interactive
            d.on_data_sent(now_ns);
        }
        self.tp.last_send_ns = now_ns;
        self.tp.in_flight_pkts = self.snd.sb.len();
        self.cwv.on_data_sent(&mut self.tp, len);
        // the ACK rides on this segment
        self.rcv.delack_timer.cancel();
        self.rcv.unacked_bytes = 0;
        if !self.snd.rto_timer.is_armed() {
            self.arm_rto(now_ns, out);
        }
    }

    /// Linux 5.18+ `tcp_cwnd_validate` (`cwnd_limited = "linux"`): tracks whether the window
    /// was fully used in this flight.
    pub(super) fn cwnd_validate(&mut self, cwnd_limited: bool) {
        let out_pkts = self.snd.sb.len();
        if self.snd.una >= self.snd.cwnd_usage_seq
            || cwnd_limited
            || (!self.tp.is_cwnd_limited && out_pkts > self.tp.max_packets_out)
        {
            self.tp.is_cwnd_limited = cwnd_limited;
            self.tp.max_packets_out = out_pkts;
            self.snd.cwnd_usage_seq = self.snd.nxt;
        }
    }

    /// Linux 3.16-3.19 `tcp_cwnd_validate` (net/ipv4/tcp_output.c; `cwnd_limited =
    /// "linux-3.19"`), after a round that sent new data: a new window, or a flight larger than
    /// `max_packets_out`, overwrites the flag with this round's (`if (!before(tp->snd_una,
    /// tp->max_packets_seq) || tp->packets_out > tp->max_packets_out)`), cwnd-limited or not.
    pub(super) fn cwnd_validate_319(&mut self, cwnd_limited: bool) {
        let out_pkts = self.snd.sb.len();
        if self.snd.una >= self.snd.cwnd_usage_seq || out_pkts > self.tp.max_packets_out {
            self.tp.max_packets_out = out_pkts;
            self.snd.cwnd_usage_seq = self.snd.nxt;
            self.tp.is_cwnd_limited = cwnd_limited;
        }
    }

    pub(super) fn set_ca_state(&mut self, new_state: CaState) {
        if self.tp.ca_state != new_state {
            self.cc.set_state(&mut self.tp, new_state);
            self.tp.ca_state = new_state;
        }
    }

    /// cwnd growth on an ACK that delivered `acked_pkts` packets (see
    /// [`crate::tcp::config::CwndGrowth`] for what the ACK counts for).
    pub(super) fn grow(&mut self, acked_pkts: u32) {
        if acked_pkts > 0 && !self.cc_controls && self.cwv.allow_cwnd_growth(&self.tp) {
            let counted = match self.cfg.cwnd_growth {
                CwndGrowth::PerPacket | CwndGrowth::Linux3 | CwndGrowth::Linux319 => acked_pkts,
                CwndGrowth::PerAck => 1,
            };
            self.cc.cong_avoid(&mut self.tp, counted);
        }
    }

    /// Acked-tag and idle notices after snd_una moved.
    pub(super) fn ack_notices(&mut self, now_ns: u64, out: &mut Output) {
        while let Some(&(end, tag)) = self.snd.marks.front() {
            if end > self.snd.una {
                break;
            }
            self.snd.marks.pop_front();
            out.notices.push(Notice {
                conn: self.conn,
                side: self.side,
                kind: NoticeKind::Acked { tag },
            });
        }
        if !self.snd.idle_notified && self.snd.una >= self.snd.write_end {
            self.snd.idle_notified = true;
            self.stats.completed_ns = Some(now_ns);
            out.notices.push(Notice {
                conn: self.conn,
                side: self.side,
                kind: NoticeKind::SendIdle,
            });
        }
    }

    /// Recomputes the pacing rate (the mode's rule; a `cong_control` algorithm sets its own,
    /// which the maximum still caps).
    pub(super) fn update_pacing_rate(&mut self) {
        let max = self.cfg.max_pacing_rate.map(|r| r.0);
        if let Some(r) = self.hooks.iter().find_map(|hook| hook.pacing_rate_bps()) {
            self.tp.pacing_rate_bps = Some(max.map_or(r, |m| r.min(m)));
            return;
        }
        let own_rule = self.cfg.pacing != crate::tcp::config::PacingMode::Off || max.is_some();
        if self.cc_controls || !own_rule {
            // the algorithm's own rate (BBR, or a custom algorithm), capped by the maximum
            if let (Some(r), Some(m)) = (self.tp.pacing_rate_bps, max) {
                self.tp.pacing_rate_bps = Some(r.min(m));
            }
            return;
        }
        self.tp.pacing_rate_bps =
            pacing::pacing_rate_bps(self.cfg.pacing, max, &self.tp, self.snd.sb.len());
    }

    /// cwnd ≤ clamp rate × SRTT / MSS (Trickle; nothing before the first RTT sample).
    pub(super) fn apply_clamp(&mut self) {
        let Some(rate) = self.snd.clamp_rate_bps else {
            return;
        };
        if self.tp.srtt_ns == 0 {
            return;
        }
        let bytes = rate as u128 * self.tp.srtt_ns as u128 / 8_000_000_000;
        let clamp = ((bytes / self.cfg.mss as u128) as u32).max(1);
        self.tp.cwnd_clamp_pkts = clamp;
        self.tp.cwnd_pkts = self.tp.cwnd_pkts.min(clamp);
    }

    // ------------------------------------------------------------------ sender hooks

    /// The current chunk's first segment goes out (Enhancing-TCP §3.1's decision point);
    /// `decayed`: restart after idle just reduced cwnd.
    pub(super) fn chunk_first_send(&mut self, decayed: bool) {
        let first_chunk = self.snd.chunk_start <= 1;
        let mut paced = false;
        for hook in &mut self.hooks {
            paced |= hook.on_chunk_first_send(&mut self.tp, first_chunk, decayed, self.cfg.mss);
        }
        if paced {
            self.stats.loss.novel_paced_chunks += 1;
            self.update_pacing_rate();
        }
    }

    /// snd_una is beyond the chunk's first byte; whether that ends a hook's pacing.
    pub(super) fn chunk_head_acked(&mut self) -> bool {
        let mut ended = false;
        for hook in &mut self.hooks {
            ended |= hook.on_chunk_head_acked();
        }
        ended
    }

    /// After an ACK: the packets the hooks ask for (Reducing Tail Loss's dummies, Enhancing-TCP
    /// §3.2, counted in `rtl_dummies`), sent at once, outside the window, and never queued for
    /// retransmission.
    pub(super) fn send_extra_packets(&mut self, now_ns: u64, out: &mut Output) {
        let chunk = ChunkView {
            start: self.snd.chunk_start,
            end: self.snd.chunk_end,
            snd_una: self.snd.una,
            snd_nxt: self.snd.nxt,
        };
        for k in 0..self.hooks.len() {
            let sent = self.stats.transfer.segments_sent;
            let Some(p) = self.hooks[k].extra_packet(chunk, &self.tp, sent) else {
                continue;
            };
            let h = self.header(now_ns, p.offset, flags::ACK | flags::PSH, p.len);
            self.emit(h, out);
            self.stats.loss.rtl_dummies += 1;
            self.stats.transfer.segments_sent += 1;
            self.stats.transfer.bytes_sent += p.len as u64;
            self.rcv.delack_timer.cancel();
            self.rcv.unacked_bytes = 0;
        }
    }
}
