//! The send half: the transmission loop, ACK processing, loss recovery, RTO, RACK-TLP,
//! pacing and the cwnd clamp.

use super::{Endpoint, Notice, NoticeKind, Output, Rack, State, TimerKind, TlpEpisode};
use crate::net::packet::{flags, TcpHeader};
use crate::tcp::cc::{AckSample, CaEvent, CaState, CA_ACK_SLOWPATH, CA_ACK_WIN_UPDATE};
use crate::tcp::config::{
    CwndGrowth, FullAckExit, PartialAckRto, PrrVariant, RecoveryMode, RtoSsthresh, RttSampling,
};
use crate::tcp::cwv::Congestion;
use crate::tcp::pacing;
use crate::tcp::scoreboard::{segflags, Seg, DUP_THRESH};
use crate::tcp::seq::from_wire;

/// Linux `TCP_TIMEOUT_MIN` (2 jiffies at HZ = 1000), added to 2·SRTT in the PTO when more
/// than one packet is out.
const TLP_MIN_EXTRA_NS: u64 = 2_000_000;
/// PTO without an RTT sample (RFC 8985 §7.2, Linux `TCP_TIMEOUT_INIT`).
const TLP_NO_RTT_NS: u64 = 1_000_000_000;

/// What one ACK did, gathered while processing it.
#[derive(Default)]
struct AckInfo {
    advanced: bool,
    /// Segments the cumulative ACK removed, SACKed before or not (Linux `pkts_acked`).
    pkts_acked: u32,
    /// Of those, the ones not SACKed before (each segment is delivered once: when first
    /// SACKed, or else when cumulatively acknowledged).
    pkts_newly_acked: u32,
    bytes_acked: u64,
    newly_sacked: u32,
    /// The cumulative ACK covered a segment that had been retransmitted (ns-3
    /// `m_isRetransDataAcked`; Linux `FLAG_RETRANS_DATA_ACKED`).
    retrans_acked: bool,
}

impl AckInfo {
    /// Packets this ACK delivered, each counted once (RFC 6937 §3 `DeliveredData` in
    /// packets; Linux `tcp_newly_delivered`, the `acked_sacked` that `tcp_cong_avoid` and
    /// `tcp_cwnd_reduction` receive).
    fn delivered(&self) -> u32 {
        self.pkts_newly_acked + self.newly_sacked
    }
}

impl Endpoint {
    /// End of the sendable stream: written data, plus the FIN when the app closed.
    #[inline]
    fn stream_end(&self) -> u64 {
        self.write_end + self.fin_requested as u64
    }

    /// What cwnd is compared with before sending: RFC 6675 pipe (Linux
    /// `tcp_packets_in_flight`). Without SACK: `classic` recovery counts every outstanding
    /// packet (cwnd is inflated instead), less up to two during the first duplicate ACKs
    /// (limited transmit, RFC 3042); `prr` counts duplicate ACKs as packets that left the
    /// network, as Linux's "reno sacks" do.
    fn window_pipe(&self) -> u32 {
        let pipe = self.sb.pipe();
        if self.sack_ok {
            return pipe;
        }
        match self.cfg.recovery {
            RecoveryMode::Prr => pipe.saturating_sub(self.reno_sacked),
            RecoveryMode::Classic
                if self.tp.ca_state == CaState::Disorder && self.cfg.limited_transmit =>
            {
                pipe.saturating_sub(self.dupacks.min(2))
            }
            RecoveryMode::Classic => pipe,
        }
    }

    /// Sends what the windows allow: lost segments first, then new data.
    pub fn try_send(&mut self, now_ns: u64, out: &mut Output) {
        if self.state != State::Established {
            return;
        }
        self.tp.now_ns = now_ns;
        let mut cwnd_limited = false;
        let mut sent_new = false;
        loop {
            let lost = self.sb.next_lost();
            if lost.is_none() && self.snd_nxt >= self.stream_end() {
                break;
            }
            if lost.is_none() && self.sb.is_empty() {
                // sending new data with nothing in flight: restart after idle, TX start
                let cwnd_before = self.tp.cwnd_pkts;
                if self.has_sent_data && !self.cc.has_cong_control() {
                    let idle_ns = now_ns.saturating_sub(self.tp.last_send_ns);
                    self.tp.now_ns = now_ns;
                    self.tp.rto_ns = self.rtt.rto_ns();
                    self.cwv
                        .on_restart_after_idle(&mut self.tp, self.cc.as_mut(), idle_ns);
                }
                self.cc.cwnd_event(&mut self.tp, CaEvent::TxStart);
                if self.chunk_pending {
                    self.chunk_pending = false;
                    self.start_novel_pacing(self.tp.cwnd_pkts < cwnd_before);
                }
            }
            if self.window_pipe() >= self.tp.cwnd_pkts {
                cwnd_limited = true;
                break;
            }
            let len = match lost {
                Some(i) => self.seg_payload(self.sb.get(i)),
                None => {
                    let len = (self.write_end.saturating_sub(self.snd_nxt)).min(self.cfg.mss as u64)
                        as u32;
                    if self.snd_nxt + len as u64 - self.snd_una > self.snd_wnd_bytes
                        && !self.sb.is_empty()
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
        if self.snd_nxt >= self.stream_end()
            && self.sb.lost_out <= self.sb.retrans_out
            && self.window_pipe() < self.tp.cwnd_pkts
        {
            self.rate.mark_app_limited(&self.tp, self.window_pipe());
        }
        self.cwnd_validate(cwnd_limited);
        if sent_new {
            self.schedule_loss_probe(now_ns, out);
        }
    }

    /// Payload bytes of a queued segment (without the FIN's sequence number).
    fn seg_payload(&self, seg: &Seg) -> u32 {
        let fin = self.fin_requested && seg.end == self.write_end + 1;
        (seg.end - seg.start - fin as u64) as u32
    }

    /// Whether pacing lets a packet of `len` payload bytes leave now; if so, books its slot,
    /// otherwise arms the pacing timer.
    fn pacing_allows(&mut self, len: u32, now_ns: u64, out: &mut Output) -> bool {
        let Some(rate) = self.tp.pacing_rate_bps else {
            return true;
        };
        if now_ns < self.pacing_next_ns {
            let (c, s) = (self.conn, self.side);
            Self::arm(
                &mut self.pace_timer,
                self.pacing_next_ns,
                c,
                s,
                TimerKind::Pacing,
                out,
            );
            return false;
        }
        let wire = len as u64 + 40 + if self.cfg.timestamps { 12 } else { 0 };
        self.pacing_next_ns = now_ns + crate::sim::time::tx_time_ns(wire, rate.max(1));
        true
    }

    /// Sends `len` new bytes at snd_nxt (+ the FIN if they end the stream).
    fn send_new(&mut self, len: u32, now_ns: u64, out: &mut Output) {
        let off = self.snd_nxt;
        let fin = self.fin_requested && off + len as u64 == self.write_end;
        let mut fl = flags::ACK;
        if fin {
            fl |= flags::FIN;
        }
        if len > 0 && off + len as u64 == self.write_end {
            fl |= flags::PSH;
        }
        let h = self.header(now_ns, off, fl, len);
        self.emit(h, out);
        let tx = self.rate.on_send(&mut self.tp, self.sb.len(), now_ns);
        self.sb.push(Seg {
            start: off,
            end: off + len as u64 + fin as u64,
            sent_ns: now_ns,
            flags: 0,
            tx,
        });
        self.snd_nxt += len as u64 + fin as u64;
        self.tp.snd_nxt_bytes = self.snd_nxt;
        self.on_segment_sent(len, false, now_ns, out);
    }

    /// Retransmits queued segment `i`.
    fn retransmit(&mut self, i: usize, now_ns: u64, out: &mut Output) {
        let seg = *self.sb.get(i);
        let len = self.seg_payload(&seg);
        let fin = seg.end - seg.start > len as u64;
        let mut fl = flags::ACK;
        if fin {
            fl |= flags::FIN;
        }
        let h = self.header(now_ns, seg.start, fl, len);
        self.emit(h, out);
        let tx = self.rate.on_send(&mut self.tp, self.sb.len(), now_ns);
        self.sb.on_retransmit(i, now_ns, tx);
        // RTL: a dummy sent before this retransmission reaches the receiver before it (one
        // FIFO path), while the hole is still open: its duplicate ACK is a loss signal, not an
        // echo of a complete chunk. Only dummies sent after the last retransmission can echo.
        self.rtl_echoes = 0;
        if self.tp.ca_state == CaState::Recovery {
            self.recovery_retrans += 1;
        }
        self.on_segment_sent(len, true, now_ns, out);
        if i == 0 && self.cfg.rto_restart_on_retransmit && self.rto_timer.is_armed() {
            // Linux tcp_xmit_retransmit_queue rearms the RTO when it resends the head of the
            // retransmission queue, so that the fast retransmission gets a whole RTO to be
            // acknowledged (net/ipv4/tcp_output.c); ns-3 keeps the running timer
            self.arm_rto(now_ns, out);
        }
    }

    /// Retransmits the first lost segment now, whatever the window (the fast retransmit,
    /// RFC 5681 §3.2 step 2 / RFC 6675 §5 step 4.3, and NewReno's partial-ACK retransmission).
    fn retransmit_first_lost(&mut self, now_ns: u64, out: &mut Output) {
        if let Some(i) = self.sb.next_lost() {
            self.retransmit(i, now_ns, out);
        }
    }

    fn on_segment_sent(&mut self, len: u32, retransmission: bool, now_ns: u64, out: &mut Output) {
        self.stats.segments_sent += 1;
        if self.tp.ca_state == CaState::Recovery {
            self.prr_out += 1;
        }
        self.stats.bytes_sent += len as u64;
        if retransmission {
            self.stats.retransmitted_segments += 1;
        }
        self.has_sent_data = true;
        self.tp.last_send_ns = now_ns;
        self.tp.in_flight_pkts = self.sb.len();
        self.cwv.on_data_sent(&mut self.tp, len);
        // the ACK rides on this segment
        self.delack_timer.cancel();
        self.unacked_bytes = 0;
        if !self.rto_timer.is_armed() {
            self.arm_rto(now_ns, out);
        }
    }

    /// Linux `tcp_cwnd_validate`: tracks whether the window was fully used in this flight.
    fn cwnd_validate(&mut self, cwnd_limited: bool) {
        let out_pkts = self.sb.len();
        self.tp.in_flight_pkts = out_pkts;
        if self.snd_una >= self.cwnd_usage_seq
            || cwnd_limited
            || (!self.tp.is_cwnd_limited && out_pkts > self.tp.max_packets_out)
        {
            self.tp.is_cwnd_limited = cwnd_limited;
            self.tp.max_packets_out = out_pkts;
            self.cwnd_usage_seq = self.snd_nxt;
        }
    }

    fn set_ca_state(&mut self, new_state: CaState) {
        if self.tp.ca_state != new_state {
            self.cc.set_state(&mut self.tp, new_state);
            self.tp.ca_state = new_state;
        }
    }

    /// RFC 6937 §3: on each ACK in recovery that delivered `delivered` packets, cwnd = pipe +
    /// sndcnt, where sndcnt keeps the sending rate proportional to ssthresh / RecoverFS while
    /// pipe > ssthresh, and otherwise brings pipe back up to ssthresh (PRR-SSRB), in the
    /// flavour `prr_variant` names ([`PrrVariant`]). `una_advanced_no_loss`: the ACK advanced
    /// snd_una and marked nothing newly lost; `retrans_acked`: it covered retransmitted data.
    fn prr_update(&mut self, delivered: u32, una_advanced_no_loss: bool, retrans_acked: bool) {
        if delivered == 0 {
            return;
        }
        let pipe = self.window_pipe() as i64;
        let ssthresh = self.tp.ssthresh_pkts as i64;
        self.prr_delivered += delivered;
        let (prr_delivered, prr_out) = (self.prr_delivered as i64, self.prr_out as i64);
        let catch_up = (prr_delivered - prr_out).max(delivered as i64);
        let mut sndcnt = if pipe > ssthresh {
            let fs = self.recover_fs.max(1) as i64;
            (ssthresh * prr_delivered + fs - 1) / fs - prr_out
        } else {
            match self.cfg.prr_variant {
                PrrVariant::Linux => catch_up + una_advanced_no_loss as i64,
                PrrVariant::Linux3 => catch_up + 1,
                PrrVariant::Ns3 if retrans_acked => catch_up + 1,
                PrrVariant::Ns3 => delivered as i64,
            }
            .min(ssthresh - pipe)
        };
        // the fast retransmission itself is always allowed
        sndcnt = sndcnt.max(if prr_out == 0 { 1 } else { 0 });
        self.tp.cwnd_pkts = (pipe + sndcnt).max(1) as u32;
    }

    // ------------------------------------------------------------------ ACK processing

    pub(super) fn on_ack(&mut self, h: &TcpHeader, now_ns: u64, out: &mut Output) {
        let ack = from_wire(self.iss, h.ack, self.snd_una);
        if ack > self.snd_nxt {
            return; // acknowledges data never sent
        }
        let prev_wnd = self.snd_wnd_bytes;
        self.snd_wnd_bytes = (h.window as u64) << self.snd_wscale;
        let prior_in_flight = self.window_pipe();
        // ns-3.17's BytesInFlight at a full ACK: everything sent and not yet acknowledged
        let prior_packets_out = self.sb.len();
        let prior_state = self.tp.ca_state;
        let mut info = AckInfo::default();
        let mut rack_newest: Option<(u64, u64, u64)> = None; // (xmit, end, rtt)

        if self.sack_ok && h.sack_len > 0 {
            self.process_sack_blocks(h, ack, now_ns, &mut info, &mut rack_newest);
        }
        if ack > self.snd_una {
            self.clean_acked(ack, h, now_ns, &mut info, &mut rack_newest);
        }
        // RTL: the duplicate ACK a dummy draws once its chunk is wholly acknowledged is an echo
        // (what a D-SACK would report), not a sign of loss in the next chunk
        let rtl_echo = !info.advanced
            && ack == self.snd_una
            && ack == self.rtl_echo_end
            && self.rtl_echoes > 0
            && h.payload_bytes == 0;
        if rtl_echo {
            self.rtl_echoes -= 1;
        }
        // RFC 5681 §2 (same window), or with SACK RFC 6675 §2: only an ACK whose SACK blocks
        // name octets not SACKed before counts (an ACK carrying just a D-SACK of a duplicate,
        // as the go-back-N after an RTO draws, does not; Linux counts SACKed segments, not
        // duplicate ACKs, and ns-3 counts scoreboard updates)
        let duplicate = !info.advanced
            && !rtl_echo
            && ack == self.snd_una
            && h.payload_bytes == 0
            && !h.has(flags::FIN)
            && !self.sb.is_empty();
        let same_window = self.snd_wnd_bytes == prev_wnd;
        let is_dupack = duplicate
            && if self.sack_ok {
                info.newly_sacked > 0
            } else {
                same_window
            };
        // nothing new at all (Linux: no FLAG_SND_UNA_ADVANCED, FLAG_NOT_DUP, FLAG_DATA_SACKED)
        let pure_dupack = duplicate && same_window && info.newly_sacked == 0;
        if is_dupack {
            self.dupacks += 1;
            if !self.sack_ok {
                // Linux tcp_add_reno_sack: a duplicate ACK means a segment left the network
                self.reno_sacked = (self.reno_sacked + 1).min(self.sb.len().saturating_sub(1));
            }
        }
        if info.advanced && !self.sack_ok && info.pkts_acked > 0 {
            self.remove_reno_sacks(&mut info);
        }
        if let Some((xmit, end, rtt)) = rack_newest {
            self.rack_update(xmit, end, rtt);
        }
        self.process_tlp_ack(ack, pure_dupack);

        // loss detection
        let mut newly_lost = 0;
        if self.sack_ok {
            if info.newly_sacked > 0 {
                newly_lost += self.sb.mark_lost_rfc6675(self.cfg.mss);
            }
            if self.cfg.tlp {
                newly_lost += self.rack_detect_loss(now_ns, out);
            }
        }
        self.tp.lost_pkts += newly_lost as u64;

        debug_assert_eq!(self.sb.check(), Ok(()));
        let cc_controls = self.cc.has_cong_control();
        let acked_sacked = info.delivered();
        match prior_state {
            CaState::Open | CaState::Disorder => {
                if info.advanced {
                    // Linux tcp_fastretrans_alert (default state): tcp_reset_reno_sack
                    self.dupacks = 0;
                    self.reno_sacked = 0;
                }
                let loss_seen =
                    self.dupacks >= DUP_THRESH || (self.sack_ok && self.sb.lost_out > 0);
                if loss_seen && (ack >= self.recover || !self.cfg.recover_guard) {
                    self.enter_recovery(prior_in_flight, None, now_ns, out);
                    if !cc_controls && self.cfg.recovery == RecoveryMode::Prr {
                        self.prr_update(acked_sacked.max(1), false, false);
                    }
                    self.retransmit_first_lost(now_ns, out);
                } else {
                    let disorder = self.dupacks > 0 || self.sb.sacked_out > 0;
                    self.set_ca_state(if disorder {
                        CaState::Disorder
                    } else {
                        CaState::Open
                    });
                    if info.advanced {
                        self.grow(acked_sacked);
                    }
                }
            }
            CaState::Recovery => {
                if ack >= self.recover {
                    self.exit_recovery(prior_packets_out, acked_sacked);
                } else if !cc_controls {
                    self.recovery_ack(&info, is_dupack, newly_lost, now_ns, out);
                } else if info.advanced && !self.sack_ok {
                    self.sb.mark_head_lost();
                    self.retransmit_first_lost(now_ns, out);
                }
            }
            CaState::Loss => {
                if info.advanced && self.rto_was_spurious(h) {
                    self.undo_rto();
                } else if ack >= self.recover {
                    self.set_ca_state(CaState::Open);
                    self.undo_ts = None;
                }
                if self.cfg.recover_guard || info.advanced {
                    self.dupacks = 0;
                    self.reno_sacked = 0;
                }
                if info.advanced {
                    self.grow(acked_sacked);
                }
                if !self.cfg.recover_guard
                    && is_dupack
                    && self.dupacks == DUP_THRESH
                    && self.tp.ca_state == CaState::Loss
                    && !cc_controls
                {
                    // ns-3.17 TcpNewReno::DupAck: the third duplicate ACK of the go-back-N
                    // starts a fast recovery; ssthresh halves BytesInFlight() = everything
                    // outstanding, and DoRetransmit resends the first unacknowledged segment
                    let outstanding = self.sb.len();
                    self.enter_recovery(prior_in_flight, Some(outstanding), now_ns, out);
                    self.retransmit(0, now_ns, out);
                }
            }
        }

        let rs = self.rate.finish(&mut self.tp, newly_lost, prior_in_flight);
        if cc_controls {
            self.cc.cong_control(&mut self.tp, &rs);
        }
        if info.advanced {
            self.cwv.on_ack(&mut self.tp, info.bytes_acked);
        }
        if self.novel_pacing_bps.is_some() && self.snd_una > self.chunk_start {
            // the first packet of the chunk is acknowledged: the initial burst is over, and the
            // flow's own pacing (if any) applies again
            self.novel_pacing_bps = None;
            if !self.cc.has_cong_control() {
                self.tp.pacing_rate_bps = None;
            }
        }
        self.update_pacing_rate();
        self.apply_clamp();
        if self.cfg.rtl {
            self.reduce_tail_loss(now_ns, out);
        }

        let slow_path = prior_state != CaState::Open || !info.advanced || h.sack_len > 0;
        let fl = if info.advanced { CA_ACK_WIN_UPDATE } else { 0 }
            | if slow_path { CA_ACK_SLOWPATH } else { 0 };
        self.tp.snd_una_bytes = self.snd_una;
        self.tp.snd_nxt_bytes = self.snd_nxt;
        self.tp.in_flight_pkts = self.sb.len();
        // every ACK that tells something (Linux calls in_ack_event from tcp_ack)
        if info.advanced || (duplicate && (same_window || info.newly_sacked > 0)) {
            self.cc.in_ack_event(&mut self.tp, fl);
        }

        if info.advanced {
            if self.sb.is_empty() {
                self.rto_timer.cancel();
                self.tlp_timer.cancel();
            } else if self.restarts_rto_on_new_ack(prior_state, info.newly_sacked) {
                self.arm_rto(now_ns, out);
            }
            self.ack_notices(now_ns, out);
        }
        if !self.sb.is_empty() {
            self.schedule_loss_probe(now_ns, out);
        }
    }

    /// Without SACK, duplicate ACKs stand for segments delivered above snd_una ("reno sacks",
    /// Linux `tcp_add_reno_sack`). An ACK that advances snd_una over `pkts_acked` segments
    /// delivered only one of them now, the hole, if duplicate ACKs had already counted the
    /// others (Linux `tcp_remove_reno_sacks`), so it counts max(pkts_acked − reno_sacked, 1)
    /// as delivered and the duplicate-ACK count keeps what lies above the new snd_una.
    ///
    /// In the Open and Disorder states an advancing ACK then clears the count, as Linux does.
    /// The count is kept when fast recovery ends, as a SACK scoreboard is (RFC 6675 §5 (A):
    /// information above the new cumulative ACK "SHOULD NOT be cleared when leaving the loss
    /// recovery phase"). Linux zeroes it there (`tcp_reset_reno_sack`); after a long recovery
    /// with thousands of segments held out of order at the receiver above a hole sent during
    /// it, zeroing counts all of them a second time when the next recovery's partial ACK
    /// covers them: PRR then releases thousands of packets at once (see docs/tcp.md).
    fn remove_reno_sacks(&mut self, info: &mut AckInfo) {
        let acked = info.pkts_acked;
        info.pkts_newly_acked = acked.saturating_sub(self.reno_sacked).max(1);
        self.reno_sacked -= acked.saturating_sub(1).min(self.reno_sacked);
    }

    /// Whether an ACK of new data restarts the RTO timer (RFC 6298 §5.3: yes), with ns-3's
    /// exceptions where the configuration asks for them: an ACK that also SACKs new data
    /// outside recovery (`rto_restart_on_sack_advance = false`), and partial ACKs
    /// ([`Self::restarts_rto_on_partial_ack`]).
    fn restarts_rto_on_new_ack(&mut self, prior_state: CaState, newly_sacked: u32) -> bool {
        // ns-3 3.37 ProcessAck: an ACK that SACKs new data is a duplicate ACK even when it
        // advances (RFC 6675 §5); DupAck moves Open to Disorder, and NewAck (which restarts
        // the timer) is called only if the state is still Open
        if !self.cfg.rto_restart_on_sack_advance
            && prior_state <= CaState::Disorder
            && self.tp.ca_state == CaState::Disorder
            && newly_sacked > 0
        {
            return false;
        }
        self.restarts_rto_on_partial_ack(prior_state)
    }

    /// A partial ACK in fast recovery restarts the timer every time (RFC 6582 §4's
    /// "Slow-but-Steady"; Linux rearms on every ACK that acknowledges data), or only the first
    /// time with `partial_ack_rto = "impatient"` (ns-3's `TcpSocketBase::ProcessAck` passes
    /// `m_isFirstPartialAck` to `NewAck`), so that a recovery with many holes ends in an RTO.
    fn restarts_rto_on_partial_ack(&mut self, prior_state: CaState) -> bool {
        let partial = prior_state == CaState::Recovery && self.tp.ca_state == CaState::Recovery;
        if !partial || self.cfg.partial_ack_rto == PartialAckRto::SlowButSteady {
            return true;
        }
        !std::mem::replace(&mut self.partial_ack_restarted_rto, true)
    }

    /// Applies the SACK blocks of an ACK (RFC 2018) and recognises D-SACK (RFC 2883 §4: a
    /// first block below the cumulative ACK, or inside the second block).
    fn process_sack_blocks(
        &mut self,
        h: &TcpHeader,
        ack: u64,
        now_ns: u64,
        info: &mut AckInfo,
        rack_newest: &mut Option<(u64, u64, u64)>,
    ) {
        let n = (h.sack_len as usize).min(h.sack.len());
        let blocks: Vec<(u64, u64)> = h.sack[..n]
            .iter()
            .map(|&(l, r)| {
                let s = from_wire(self.iss, l, self.snd_una);
                (s, from_wire(self.iss, r, s))
            })
            .collect();
        for (k, &(s, e)) in blocks.iter().enumerate() {
            if e <= s {
                continue;
            }
            let is_dsack =
                k == 0 && (e <= ack || blocks.get(1).is_some_and(|&(s1, e1)| s1 <= s && e <= e1));
            if is_dsack {
                self.stats.dsacks_received += 1;
                if let Some(ep) = self.tlp.as_mut() {
                    if ep.retransmitted.is_some_and(|(ps, pe)| s <= ps && pe <= e) {
                        ep.dsacked = true;
                    }
                }
                continue;
            }
            let (tp, rate) = (&mut self.tp, &mut self.rate);
            let min_rtt = tp.min_rtt_ns;
            info.newly_sacked += self.sb.sack(s.max(ack), e.min(self.snd_nxt), |seg| {
                rate.on_delivered(tp, seg, now_ns);
                rack_candidate(rack_newest, seg, now_ns, min_rtt);
                seg.tx.delivered_ns = None;
            });
        }
    }

    /// The RTT sample of an ACK that removed `pkts_acked` segments, `first` the oldest of
    /// them (see [`RttSampling`]).
    fn rtt_sample(
        &self,
        first: Option<Seg>,
        pkts_acked: u32,
        h: &TcpHeader,
        now_ns: u64,
    ) -> Option<u64> {
        let first = first.filter(|_| pkts_acked > 0)?;
        let never_retransmitted = !first.has(segflags::EVER_RETRANS);
        match (self.cfg.rtt_sampling, self.cfg.timestamps, h.ts) {
            // Karn: the send-time sample only from a never-retransmitted segment; otherwise
            // the timestamp echo disambiguates (RFC 7323 §4)
            (RttSampling::SendTime, _, _) if never_retransmitted => Some(now_ns - first.sent_ns),
            (RttSampling::SendTime, true, Some((_, ecr))) => Some(super::ts_rtt(now_ns, ecr)),
            (RttSampling::SendTime, _, _) => None,
            // ns-3: the echo's age in whole milliseconds, 1 µs when not positive
            (RttSampling::TsEcho, true, Some((_, ecr))) if never_retransmitted => {
                let ms = super::ts_now(now_ns).wrapping_sub(ecr);
                Some(if ms == 0 || ms > i32::MAX as u32 {
                    1_000
                } else {
                    ms as u64 * 1_000_000
                })
            }
            (RttSampling::TsEcho, false, _) if never_retransmitted => Some(now_ns - first.sent_ns),
            (RttSampling::TsEcho, _, _) => None,
        }
    }

    /// Removes what the cumulative ACK covers; RTT sample, delivery accounting, pkts_acked.
    fn clean_acked(
        &mut self,
        ack: u64,
        h: &TcpHeader,
        now_ns: u64,
        info: &mut AckInfo,
        rack_newest: &mut Option<(u64, u64, u64)>,
    ) {
        let in_flight_before = self.sb.len();
        let first = self.sb.front().copied();
        let (tp, rate) = (&mut self.tp, &mut self.rate);
        let min_rtt = tp.min_rtt_ns;
        let mut retrans_acked = false;
        let acked = self.sb.ack_to(ack, |seg| {
            retrans_acked |= seg.has(segflags::EVER_RETRANS);
            rate.on_delivered(tp, seg, now_ns);
            rack_candidate(rack_newest, seg, now_ns, min_rtt);
        });
        let pkts_acked = acked.removed;
        let rtt_ns = self.rtt_sample(first, pkts_acked, h, now_ns);
        let data_end = self.write_end;
        let bytes_acked = ack.min(data_end) - self.snd_una.clamp(1, data_end);
        self.snd_una = ack;
        self.stats.bytes_acked += bytes_acked;
        if let Some(r) = rtt_ns {
            self.take_rtt_sample(r);
        }
        self.tp.delivered_bytes += bytes_acked;
        self.tp.snd_una_bytes = self.snd_una;
        self.tp.snd_nxt_bytes = self.snd_nxt;
        self.tp.in_flight_pkts = self.sb.len();
        let sample = AckSample {
            pkts_acked,
            bytes_acked,
            rtt_ns,
            in_flight_pkts: in_flight_before,
        };
        self.cc.pkts_acked(&mut self.tp, &sample);
        *info = AckInfo {
            advanced: true,
            pkts_acked,
            pkts_newly_acked: acked.newly_delivered,
            bytes_acked,
            retrans_acked,
            ..*info
        };
    }

    /// Enters fast recovery (RFC 6582 §3.2 step 2, RFC 6675 §5 step 4).
    fn enter_recovery(
        &mut self,
        flight_pkts: u32,
        ssthresh_flight_pkts: Option<u32>,
        _now_ns: u64,
        _out: &mut Output,
    ) {
        self.stats.fast_recovery_count += 1;
        if self.sb.lost_out == 0 {
            // entered on the duplicate-ACK count: the hole at snd_una is lost
            self.sb.mark_head_lost();
        }
        // the flight an ssthresh rule may halve: pipe with the head marked lost (without SACK
        // this equals ns-3's BytesInFlight() + 1 segment in TcpSocketBase::EnterRecovery,
        // where one duplicate ACK counts as SACKed)
        self.tp.pipe_pkts = ssthresh_flight_pkts.unwrap_or_else(|| self.sb.pipe());
        self.tp.prior_cwnd_pkts = self.tp.cwnd_pkts;
        self.tp.prior_ssthresh_pkts = self.tp.ssthresh_pkts;
        self.tp.ssthresh_pkts = self.cc.ssthresh(&self.tp).max(2);
        self.recover = self.snd_nxt;
        self.recovery_retrans = 0;
        self.partial_ack_restarted_rto = false;
        self.tlp = None; // Linux tcp_init_cwnd_reduction ends a TLP episode
        self.tlp_timer.cancel();
        self.set_ca_state(CaState::Recovery);
        self.tp.cwnd_cnt = 0;
        if !self.cc.has_cong_control() {
            match (self.cfg.recovery, self.sack_ok) {
                (RecoveryMode::Classic, false) => self.tp.cwnd_pkts = self.tp.ssthresh_pkts + 3,
                (RecoveryMode::Classic, true) => self.tp.cwnd_pkts = self.tp.ssthresh_pkts,
                (RecoveryMode::Prr, _) => {
                    // Linux tcp_init_cwnd_reduction
                    self.prr_delivered = 0;
                    self.prr_out = 0;
                    self.recover_fs = match self.cfg.prr_variant {
                        PrrVariant::Linux | PrrVariant::Linux3 => self.tp.prior_cwnd_pkts,
                        // ns-3's UnAckDataCount: everything outstanding, SACKed included
                        PrrVariant::Ns3 => self.sb.len(),
                    };
                }
            }
        }
        self.cwv
            .on_congestion(&mut self.tp, Congestion::FastRetransmit { flight_pkts });
    }

    /// An ACK below `recover` during fast recovery.
    fn recovery_ack(
        &mut self,
        info: &AckInfo,
        is_dupack: bool,
        newly_lost: u32,
        now_ns: u64,
        out: &mut Output,
    ) {
        if !self.sack_ok {
            if info.advanced {
                // partial ACK: the next hole is lost (RFC 6582 §3.2 step 4)
                match self.cfg.recovery {
                    RecoveryMode::Classic => {
                        // deflate by the packets acked, add back one if ≥ 1 MSS was acked
                        let add_back = (info.bytes_acked >= self.cfg.mss as u64) as u32;
                        self.tp.cwnd_pkts =
                            (self.tp.cwnd_pkts.saturating_sub(info.pkts_acked) + add_back).max(1);
                    }
                    // the partial ACK marks the new head lost (Linux
                    // `tcp_newreno_mark_lost`), so no extra segment
                    RecoveryMode::Prr => {
                        self.prr_update(info.delivered(), false, info.retrans_acked)
                    }
                }
                self.sb.mark_head_lost();
                if self.cfg.recover_guard {
                    self.retransmit_first_lost(now_ns, out);
                } else {
                    // ns-3.17 TcpNewReno::NewAck: DoRetransmit resends the first
                    // unacknowledged segment, also one the go-back-N after an RTO resent
                    self.retransmit(0, now_ns, out);
                }
            } else if is_dupack {
                match self.cfg.recovery {
                    // inflation: a segment has left the network
                    RecoveryMode::Classic => self.tp.cwnd_pkts += 1,
                    RecoveryMode::Prr => self.prr_update(1, false, false),
                }
            }
            return;
        }
        // SACK: RFC 6675 keeps cwnd = ssthresh and lets pipe pace the retransmissions; PRR
        // follows the delivered packets
        if self.cfg.recovery == RecoveryMode::Prr {
            self.prr_update(
                info.delivered(),
                info.advanced && newly_lost == 0,
                info.retrans_acked,
            );
        }
    }

    /// The cumulative ACK reached `recover` (RFC 6582 §3.2 step 3), with `prior_packets_out`
    /// outstanding before it and `acked_pkts` delivered by it: cwnd = ssthresh (Linux
    /// `tcp_end_cwnd_reduction`, which a `cong_control` algorithm skips), or with
    /// `full_ack_exit = "flight"` ns-3.17's `TcpNewReno::NewAck`: min(ssthresh, BytesInFlight +
    /// SMSS), then the ACK's ordinary increase.
    fn exit_recovery(&mut self, prior_packets_out: u32, acked_pkts: u32) {
        let cc_controls = self.cc.has_cong_control();
        if !cc_controls {
            self.tp.cwnd_pkts = match self.cfg.full_ack_exit {
                FullAckExit::Ssthresh => self.tp.ssthresh_pkts,
                FullAckExit::Flight => self.tp.ssthresh_pkts.min(prior_packets_out + 1),
            }
            .max(1);
        }
        self.tp.cwnd_cnt = 0;
        self.dupacks = 0;
        self.set_ca_state(CaState::Open);
        self.cwv
            .on_recovery_end(&mut self.tp, self.recovery_retrans);
        if self.cfg.full_ack_exit == FullAckExit::Flight && !cc_controls {
            self.grow(acked_pkts);
        }
    }

    /// cwnd growth on an ACK that delivered `acked_pkts` packets (see
    /// [`crate::tcp::config::CwndGrowth`] for what the ACK counts for).
    fn grow(&mut self, acked_pkts: u32) {
        if acked_pkts > 0 && !self.cc.has_cong_control() && self.cwv.allow_cwnd_growth(&self.tp) {
            let counted = match self.cfg.cwnd_growth {
                CwndGrowth::PerPacket => acked_pkts,
                CwndGrowth::PerAck => 1,
            };
            self.cc.cong_avoid(&mut self.tp, counted);
        }
    }

    /// Acked-tag and idle notices after snd_una moved.
    fn ack_notices(&mut self, now_ns: u64, out: &mut Output) {
        while let Some(&(end, tag)) = self.send_marks.front() {
            if end > self.snd_una {
                break;
            }
            self.send_marks.pop_front();
            out.notices.push(Notice {
                conn: self.conn,
                side: self.side,
                kind: NoticeKind::Acked { tag },
            });
        }
        if !self.idle_notified && self.snd_una >= self.write_end {
            self.idle_notified = true;
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
        if let Some(r) = self.novel_pacing_bps {
            self.tp.pacing_rate_bps = Some(max.map_or(r, |m| r.min(m)));
            return;
        }
        let own_rule = self.cfg.pacing != crate::tcp::config::PacingMode::Off || max.is_some();
        if self.cc.has_cong_control() || !own_rule {
            // the algorithm's own rate (BBR, or a custom algorithm), capped by the maximum
            if let (Some(r), Some(m)) = (self.tp.pacing_rate_bps, max) {
                self.tp.pacing_rate_bps = Some(r.min(m));
            }
            return;
        }
        self.tp.pacing_rate_bps =
            pacing::pacing_rate_bps(self.cfg.pacing, max, &self.tp, self.sb.len());
    }

    /// cwnd ≤ clamp rate × SRTT / MSS (Trickle; nothing before the first RTT sample).
    pub(super) fn apply_clamp(&mut self) {
        let Some(rate) = self.clamp_rate_bps else {
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

    // ------------------------------------------------------------------ Enhancing-TCP (§3)

    /// Novel pacing (Enhancing-TCP §3.1, Fig. 2), decided when a chunk's first segment goes
    /// out: no pacing if restart after idle decayed cwnd or for the connection's first chunk
    /// (its slow start is left alone); after an RTO in the previous chunk's trailing ACKs,
    /// cwnd = cwnd' (before that RTO: slow start is skipped) paced at 2·RTT/cwnd' per packet;
    /// otherwise paced at RTT/cwnd per packet. Pacing ends when the chunk's first packet is
    /// acknowledged (see `on_ack`).
    fn start_novel_pacing(&mut self, decayed: bool) {
        let rto_cwnd = self.rto_trailing_cwnd.take();
        if !self.cfg.novel_pacing || decayed || self.tp.srtt_ns == 0 || self.chunk_start <= 1 {
            return;
        }
        let (pkts, rtts) = match rto_cwnd {
            Some(prev) => {
                self.tp.cwnd_pkts = self.tp.cwnd_pkts.max(prev);
                (prev, 2)
            }
            None => (self.tp.cwnd_pkts, 1),
        };
        let bits = pkts as u128 * self.cfg.mss as u128 * 8 * 1_000_000_000;
        let rate = (bits / (rtts * self.tp.srtt_ns as u128)).max(1) as u64;
        self.novel_pacing_bps = Some(rate);
        self.stats.novel_paced_chunks += 1;
        self.update_pacing_rate();
    }

    /// Reducing Tail Loss (Enhancing-TCP §3.2): in the trailing-ACKs phase (the chunk is all
    /// sent, not all acknowledged), one dummy packet per ACK until m are sent. The dummy is a
    /// 1-byte retransmission of the chunk's last byte: any receiver answers it with a
    /// duplicate ACK (out of order if that byte is missing, a duplicate otherwise), so it
    /// needs no receiver change and costs 53 bytes on the wire. The loss rate in m's equations
    /// is estimated as (packets marked lost + 1) / (segments sent + 100): a 1 % prior that
    /// the connection's own losses take over.
    fn reduce_tail_loss(&mut self, now_ns: u64, out: &mut Output) {
        let trailing = self.snd_nxt >= self.chunk_end
            && self.snd_una < self.chunk_end
            && self.chunk_end > self.chunk_start
            && self.tp.ca_state <= CaState::Disorder;
        if !trailing {
            return;
        }
        let quota = *self.rtl_quota.get_or_insert_with(|| {
            let p = (self.tp.lost_pkts + 1) as f64 / (self.stats.segments_sent + 100) as f64;
            crate::tcp::rtl::dummy_count(p, self.cfg.rtl_epsilon)
        });
        if quota == 0 {
            return;
        }
        self.rtl_quota = Some(quota - 1);
        let last = self.chunk_end - 1;
        let h = self.header(now_ns, last, flags::ACK | flags::PSH, 1);
        self.emit(h, out);
        if self.rtl_echo_end != self.chunk_end {
            self.rtl_echo_end = self.chunk_end;
            self.rtl_echoes = 0;
        }
        self.rtl_echoes += 1;
        self.stats.rtl_dummies += 1;
        self.stats.segments_sent += 1;
        self.stats.bytes_sent += 1;
        self.delack_timer.cancel();
        self.unacked_bytes = 0;
    }

    // ------------------------------------------------------------------ RTO

    pub(super) fn on_rto(&mut self, now_ns: u64, out: &mut Output) {
        match self.state {
            State::SynSent | State::SynRcvd => {
                self.rtt.back_off();
                self.send_syn(now_ns, out, true);
                return;
            }
            State::Established => {}
            _ => return,
        }
        if self.sb.is_empty() {
            return;
        }
        self.stats.rto_count += 1;
        if !self.sb.get(0).has(segflags::EVER_RETRANS) {
            self.stats.tail_rto_count += 1;
        }
        if self.snd_nxt >= self.chunk_end && self.rto_trailing_cwnd.is_none() {
            // an RTO in the trailing-ACKs phase (the whole chunk was sent): remembered for
            // the novel pacing of the next chunk. In fast recovery the window is ssthresh: a
            // cwnd inflated by duplicate ACKs (RFC 6582) is not a window to restore
            let window = if self.tp.ca_state == CaState::Recovery {
                self.tp.cwnd_pkts.min(self.tp.ssthresh_pkts)
            } else {
                self.tp.cwnd_pkts
            };
            self.rto_trailing_cwnd = Some(window);
        }
        // a new loss episode reduces ssthresh (see RtoSsthresh for Linux's and ns-3's rules)
        let episode_over = self.recover <= self.snd_una;
        let reduce = match self.cfg.rto_ssthresh {
            RtoSsthresh::OncePerEpisode => self.tp.ca_state <= CaState::Disorder || episode_over,
            RtoSsthresh::UnlessRepeated => self.tp.ca_state != CaState::Loss || episode_over,
        };
        if reduce {
            self.tp.pipe_pkts = self.window_pipe();
            self.tp.prior_cwnd_pkts = self.tp.cwnd_pkts;
            self.tp.prior_ssthresh_pkts = self.tp.ssthresh_pkts;
            self.tp.ssthresh_pkts = self.cc.ssthresh(&self.tp).max(2);
            // the first retransmission of this episode goes out now, stamped with this TSval
            self.undo_ts =
                (self.cfg.timestamps && self.cfg.rto_undo).then(|| super::ts_now(now_ns));
        }
        self.tp.cwnd_pkts = 1;
        self.tp.cwnd_cnt = 0;
        self.cc.cwnd_event(&mut self.tp, CaEvent::Loss);
        self.set_ca_state(CaState::Loss);
        self.cwv.on_congestion(&mut self.tp, Congestion::Rto);
        self.recover = self.snd_nxt;
        self.dupacks = 0;
        self.reno_sacked = 0;
        self.tlp = None;
        self.tlp_timer.cancel();
        self.reorder_timer.cancel();
        let lost_before = self.sb.lost_out;
        self.sb.mark_all_lost();
        self.tp.lost_pkts += self.sb.lost_out.saturating_sub(lost_before) as u64;
        self.tp.in_flight_pkts = self.sb.len();
        self.rtt.back_off();
        self.tp.rto_ns = self.rtt.rto_ns();
        self.pacing_next_ns = 0;
        self.try_send(now_ns, out);
        if !self.rto_timer.is_armed() {
            self.arm_rto(now_ns, out);
        }
    }

    /// Eifel detection (RFC 3522 §3.2; Linux `tcp_packet_delayed`): an ACK that advances
    /// snd_una during an RTO episode and echoes a TSval older than the first retransmission's
    /// acknowledges an original transmission: the data was delayed, not lost.
    fn rto_was_spurious(&self, h: &TcpHeader) -> bool {
        match (self.undo_ts, h.ts) {
            (Some(retrans_ts), Some((_, ecr))) => super::ts_before(ecr, retrans_ts),
            _ => false,
        }
    }

    /// Undo of a spurious RTO (Linux `tcp_try_undo_loss` → `tcp_undo_cwnd_reduction`, the
    /// response of RFC 4015 §3 restoring the window): the congestion control's `undo_cwnd`,
    /// ssthresh back to its value before the RTO, no segment lost any more (the outstanding
    /// originals are not resent), and the Open state. The backed-off RTO stays until the next
    /// RTT sample, as in Linux.
    fn undo_rto(&mut self) {
        self.undo_ts = None;
        self.stats.spurious_rtos += 1;
        self.tp.cwnd_pkts = self.cc.undo_cwnd(&self.tp).max(1);
        self.tp.cwnd_cnt = 0;
        self.tp.ssthresh_pkts = self.tp.ssthresh_pkts.max(self.tp.prior_ssthresh_pkts);
        self.sb.unmark_lost();
        self.recover = self.snd_una;
        self.set_ca_state(CaState::Open);
    }

    // ------------------------------------------------------------------ RACK-TLP (RFC 8985)

    /// RFC 8985 §6.2 step 2 (RACK_update) with the newest delivered segment of this ACK.
    fn rack_update(&mut self, xmit_ns: u64, end: u64, rtt_ns: u64) {
        let r = &mut self.rack;
        if !r.valid || xmit_ns > r.xmit_ns || (xmit_ns == r.xmit_ns && end > r.end) {
            *r = Rack {
                xmit_ns,
                end,
                rtt_ns,
                valid: true,
            };
        }
    }

    /// RFC 8985 §6.2 step 4–5: marks lost what RACK says is lost, arms the reordering timer for
    /// the rest. reo_wnd = min(min_RTT/4, SRTT), or 0 in recovery or once DupThresh segments are
    /// SACKed, since a simulated FIFO path never reorders (§6.2 step 4 with
    /// RACK.reordering_seen = false).
    fn rack_detect_loss(&mut self, now_ns: u64, out: &mut Output) -> u32 {
        if !self.rack.valid {
            return 0;
        }
        let reo_wnd = if self.tp.ca_state >= CaState::Recovery || self.sb.sacked_out >= DUP_THRESH {
            0
        } else {
            (self.tp.min_rtt_ns / 4).min(self.tp.srtt_ns)
        };
        let (lost, next) = self.sb.mark_lost_rack(
            now_ns,
            self.rack.xmit_ns,
            self.rack.end,
            self.rack.rtt_ns + reo_wnd,
        );
        if let Some(t) = next {
            let (c, s) = (self.conn, self.side);
            Self::arm(&mut self.reorder_timer, t, c, s, TimerKind::Reorder, out);
        }
        lost
    }

    /// The RACK reordering timer expired (Linux `tcp_rack_reo_timeout`).
    pub(super) fn on_reorder_timeout(&mut self, now_ns: u64, out: &mut Output) {
        if self.state != State::Established || self.sb.is_empty() {
            return;
        }
        let lost = self.rack_detect_loss(now_ns, out);
        if lost > 0 {
            self.tp.lost_pkts += lost as u64;
            if self.tp.ca_state < CaState::Recovery && self.snd_una >= self.recover {
                self.enter_recovery(self.window_pipe(), None, now_ns, out);
                if !self.cc.has_cong_control() && self.cfg.recovery == RecoveryMode::Prr {
                    self.prr_update(1, false, false);
                }
                self.retransmit_first_lost(now_ns, out);
            }
            self.try_send(now_ns, out);
        }
    }

    /// Linux `tcp_schedule_loss_probe` / RFC 8985 §7.2: PTO = 2·SRTT (+ min_rto with a single
    /// packet out, else + 2 ms), at most the time left until the RTO; only in the Open state,
    /// with SACK, and once per episode.
    pub(super) fn schedule_loss_probe(&mut self, now_ns: u64, out: &mut Output) {
        if !self.cfg.tlp
            || !self.sack_ok
            || self.tlp.is_some()
            || self.tp.ca_state != CaState::Open
            || self.sb.is_empty()
            || self.state != State::Established
        {
            return;
        }
        let mut pto = if self.tp.srtt_ns > 0 {
            2 * self.tp.srtt_ns
                + if self.sb.len() == 1 {
                    self.cfg.min_rto.0
                } else {
                    TLP_MIN_EXTRA_NS
                }
        } else {
            TLP_NO_RTT_NS
        };
        if let Some(rto_at) = self.rto_timer.deadline_ns() {
            pto = pto.min(rto_at.saturating_sub(now_ns));
        }
        // a probe due at the same time as the RTO is pointless: let the RTO fire
        if pto == 0 {
            return;
        }
        let (c, s) = (self.conn, self.side);
        Self::arm(
            &mut self.tlp_timer,
            now_ns + pto,
            c,
            s,
            TimerKind::LossProbe,
            out,
        );
    }

    /// RFC 8985 §7.3 / Linux `tcp_send_loss_probe`: one new segment if there is one, else a
    /// retransmission of the last outstanding segment; cwnd is not changed.
    pub(super) fn on_loss_probe(&mut self, now_ns: u64, out: &mut Output) {
        if self.state != State::Established
            || self.sb.is_empty()
            || self.tlp.is_some()
            || self.tp.ca_state != CaState::Open
        {
            return;
        }
        let len = (self.write_end.saturating_sub(self.snd_nxt)).min(self.cfg.mss as u64) as u32;
        let new_data = self.snd_nxt < self.stream_end()
            && self.snd_nxt + len as u64 - self.snd_una <= self.snd_wnd_bytes;
        let retransmitted = if new_data {
            self.send_new(len, now_ns, out);
            None
        } else {
            // the highest segment not SACKed
            let Some(i) = (0..self.sb.len() as usize)
                .rev()
                .find(|&i| !self.sb.get(i).has(segflags::SACKED))
            else {
                return;
            };
            let seg = *self.sb.get(i);
            self.retransmit(i, now_ns, out);
            Some((seg.start, seg.end))
        };
        self.stats.tlp_probes += 1;
        self.tlp = Some(TlpEpisode {
            end_seq: self.snd_nxt,
            retransmitted,
            dsacked: false,
        });
        self.rto_timer.cancel();
        self.arm_rto(now_ns, out);
    }

    /// RFC 8985 §7.4 (Linux `tcp_process_tlp_ack`): ends the episode, and if the probe repaired
    /// a loss (its ACK went beyond the probe without a D-SACK for it), reduces cwnd once.
    fn process_tlp_ack(&mut self, ack: u64, pure_dupack: bool) {
        let Some(ep) = self.tlp else {
            return;
        };
        if ack < ep.end_seq {
            return;
        }
        if ep.retransmitted.is_none() || ep.dsacked {
            self.tlp = None;
        } else if ack > ep.end_seq {
            self.tlp = None;
            self.stats.tlp_recoveries += 1;
            // a reduction as on entering and leaving recovery at once (Linux: CWR)
            if !self.cc.has_cong_control() {
                self.tp.pipe_pkts = self.window_pipe();
                self.tp.prior_cwnd_pkts = self.tp.cwnd_pkts;
                self.tp.prior_ssthresh_pkts = self.tp.ssthresh_pkts;
                self.tp.ssthresh_pkts = self.cc.ssthresh(&self.tp).max(2);
                self.tp.cwnd_pkts = self.tp.cwnd_pkts.min(self.tp.ssthresh_pkts);
                self.tp.cwnd_cnt = 0;
            }
        } else if pure_dupack {
            // original and probe both arrived
            self.tlp = None;
        }
    }
}

/// Keeps the most recently sent delivered segment for RACK (RFC 8985 §6.2 step 2): a
/// retransmitted segment whose ACK came sooner than min_RTT after the retransmission was
/// probably delivered by its original transmission and is skipped.
fn rack_candidate(newest: &mut Option<(u64, u64, u64)>, seg: &Seg, now_ns: u64, min_rtt_ns: u64) {
    let rtt = now_ns.saturating_sub(seg.sent_ns);
    if seg.has(segflags::EVER_RETRANS) && rtt < min_rtt_ns {
        return;
    }
    match newest {
        Some((x, e, _)) if seg.sent_ns < *x || (seg.sent_ns == *x && seg.end <= *e) => {}
        _ => *newest = Some((seg.sent_ns, seg.end, rtt)),
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Endpoint, Output, TimerKind};
    use crate::net::packet::{TcpHeader, Transport};
    use crate::tcp::cc::{CaState, CcConfig};
    use crate::tcp::config::{
        CwndGrowth, DelayedAckMode, FullAckExit, RecoveryMode, RttSampling, TcpConfig,
    };

    const MS: u64 = 1_000_000;
    const MSS: u64 = 1448;

    fn headers(out: &mut Output) -> Vec<TcpHeader> {
        out.packets
            .drain(..)
            .map(|p| match p.transport {
                Transport::Tcp(h) => h,
                Transport::Udp { .. } => unreachable!(),
            })
            .collect()
    }

    /// A client/server pair after a handshake with a 50 ms RTT, at t = 75 ms.
    fn pair(cfg: TcpConfig) -> (Endpoint, Endpoint) {
        let cc = || CcConfig::default().build();
        let mut c = Endpoint::new(0, 0, 0, 1, 32768, 5201, cfg.clone(), cc(), 1000);
        let mut s = Endpoint::new(0, 1, 1, 0, 5201, 32768, cfg, cc(), 900_000);
        let mut out = Output::default();
        c.connect(0, &mut out);
        for h in headers(&mut out) {
            s.on_segment(&h, 25 * MS, &mut out);
        }
        for h in headers(&mut out) {
            c.on_segment(&h, 50 * MS, &mut out);
        }
        for h in headers(&mut out) {
            s.on_segment(&h, 75 * MS, &mut out);
        }
        assert!(c.is_established() && s.is_established());
        assert_eq!(c.sack_enabled(), c.cfg.sack);
        (c, s)
    }

    /// Delivers `hs` to `to` at `now_ns` and returns what it sends back.
    fn deliver(to: &mut Endpoint, hs: &[TcpHeader], now_ns: u64) -> Vec<TcpHeader> {
        let mut out = Output::default();
        for h in hs {
            to.on_segment(h, now_ns, &mut out);
        }
        headers(&mut out)
    }

    /// RFC 6298 (5.3): an ACK of new data restarts the RTO timer, also when it SACKs new data
    /// (the first ACK after a hole, with delayed ACKs, does both); ns-3 3.37 does not restart it
    /// for such an ACK (`rto_restart_on_sack_advance = false`).
    #[test]
    fn an_ack_that_advances_and_sacks_restarts_the_rto_unless_ns3_rules_ask() {
        for restart in [true, false] {
            let cfg = TcpConfig {
                sack: true,
                delayed_ack: DelayedAckMode::On,
                rto_restart_on_sack_advance: restart,
                ..TcpConfig::default()
            };
            let (mut c, mut s) = pair(cfg);
            let mut out = Output::default();
            c.write(4 * MSS, 1, 100 * MS, &mut out);
            let data = headers(&mut out);
            assert_eq!(data.len(), 4);
            let armed_at_send = c.rto_timer.deadline_ns().expect("RTO armed");
            // the first segment arrives (its ACK is delayed), the second is lost, the third
            // arrives out of order: one ACK that acknowledges the first and SACKs the third
            let ack = deliver(&mut s, &[data[0], data[2]], 125 * MS);
            assert_eq!(ack.len(), 1);
            assert_eq!(ack[0].ack, data[1].seq);
            assert_eq!(ack[0].sack_len, 1);
            deliver(&mut c, &ack, 150 * MS);
            assert_eq!(c.stats.fast_recovery_count, 0);
            let after = c.rto_timer.deadline_ns().expect("RTO armed");
            if restart {
                assert_eq!(
                    after,
                    150 * MS + c.tp.rto_ns,
                    "restarted by the ACK of new data"
                );
            } else {
                assert_eq!(after, armed_at_send, "ns-3 keeps the timer running");
            }
        }
    }

    /// RFC 7323 §4.3 (1): a delayed ACK echoes the TSval of the earliest segment it
    /// acknowledges (the one that started at Last.ACK.sent), not the latest, so that the
    /// sender's RTT sample includes the receiver's delay; an out-of-order segment is not echoed.
    #[test]
    fn a_delayed_ack_echoes_the_earliest_segment_it_acknowledges() {
        let cfg = TcpConfig {
            delayed_ack: DelayedAckMode::On,
            ..TcpConfig::default()
        };
        let (mut c, mut s) = pair(cfg);
        let mut out = Output::default();
        let mut segs = Vec::new();
        for (i, t_ms) in [100u64, 103, 106, 109, 112, 115].into_iter().enumerate() {
            c.write(MSS, i as u64, t_ms * MS, &mut out);
            segs.extend(headers(&mut out));
        }
        assert_eq!(segs.len(), 6);
        let tsval = |h: &TcpHeader| h.ts.unwrap().0;
        // two in order: one ACK, echoing the first
        let ack = deliver(&mut s, &segs[..2], 150 * MS);
        assert_eq!(ack.len(), 1);
        assert_eq!(ack[0].ts.unwrap().1, tsval(&segs[0]));
        // the third lost, the other three out of order: their duplicate ACKs keep the old
        // echo, and the retransmission that fills the hole is the one echoed
        let dups = deliver(&mut s, &segs[3..6], 160 * MS);
        assert_eq!(dups.len(), 3);
        assert!(dups.iter().all(|d| d.ts.unwrap().1 == tsval(&segs[0])));
        let mut resent = segs[2];
        resent.ts = Some((170, resent.ts.unwrap().1));
        let ack = deliver(&mut s, &[resent], 175 * MS);
        assert_eq!(ack.len(), 1, "a segment that fills a hole is ACKed at once");
        assert_eq!(ack[0].ts.unwrap().1, 170);
        // then two pairs in order again
        let mut more = Vec::new();
        for (i, t_ms) in [180u64, 183, 186, 189].into_iter().enumerate() {
            c.write(MSS, 6 + i as u64, t_ms * MS, &mut out);
            more.extend(headers(&mut out));
        }
        let more: Vec<_> = more.into_iter().filter(|h| h.payload_bytes > 0).collect();
        assert_eq!(more.len(), 4);
        let ack = deliver(&mut s, &more, 230 * MS);
        assert_eq!(ack.len(), 2);
        assert_eq!(ack[0].ts.unwrap().1, 180);
        assert_eq!(ack[1].ts.unwrap().1, 186);
    }

    /// RTT samples (`rtt_sampling`): Linux measures from the send time at full resolution and
    /// falls back to the timestamp echo for a retransmitted segment; ns-3 3.37's EstimateRtt
    /// takes the echo's age in whole milliseconds and nothing from a retransmitted segment.
    #[test]
    fn rtt_samples_follow_linux_or_ns3_rules() {
        for sampling in [RttSampling::SendTime, RttSampling::TsEcho] {
            let cfg = TcpConfig {
                delayed_ack: DelayedAckMode::Off,
                rtt_sampling: sampling,
                tlp: false,
                ..TcpConfig::default()
            };
            let (mut c, mut s) = pair(cfg.clone());
            let mut out = Output::default();
            // sent at 100.7 ms (TSval 100), acknowledged at 151.2 ms (timestamp clock 151)
            let sent_ns = 100 * MS + 700_000;
            c.write(MSS, 1, sent_ns, &mut out);
            let data = headers(&mut out);
            let ack = deliver(&mut s, &data, 125 * MS);
            assert_eq!(
                ack[0].ts.map(|t| t.1),
                Some(100),
                "the receiver echoes TSval 100"
            );
            let before = c.rtt.samples;
            deliver(&mut c, &ack, 151 * MS + 200_000);
            assert_eq!(c.rtt.samples, before + 1);
            let expected = match sampling {
                RttSampling::SendTime => 50 * MS + 500_000,
                RttSampling::TsEcho => 51 * MS,
            };
            assert_eq!(c.rtt.latest_ns, expected, "{sampling:?}");

            // a segment acknowledged after its RTO retransmission
            let (mut c, mut s, data, rto_at, resent) = rto_with_everything_outstanding(cfg);
            let mut acks = Vec::new();
            for h in data[1..].iter().chain([&resent]) {
                acks = deliver(&mut s, std::slice::from_ref(h), rto_at + 10 * MS);
            }
            let before = c.rtt.samples;
            deliver(&mut c, &acks, rto_at + 60 * MS);
            assert_eq!(c.unacked_written_bytes(), 0);
            match sampling {
                // the echo of the retransmission's TSval: 60 ms on the 1 ms clock
                RttSampling::SendTime => {
                    assert_eq!(c.rtt.samples, before + 1);
                    let rto_ms = rto_at / MS;
                    assert_eq!(c.rtt.latest_ns, ((rto_at + 60 * MS) / MS - rto_ms) * MS);
                }
                RttSampling::TsEcho => assert_eq!(c.rtt.samples, before, "no sample (Karn)"),
            }
        }
    }

    /// RTL (Enhancing-TCP §3.2): a dummy's duplicate ACK is an echo only if it reports the
    /// chunk complete. Dummies sent before a fast retransmission reach the receiver while the
    /// hole is still open (one FIFO path) and draw ordinary duplicate ACKs, so none of them is
    /// left to echo once the retransmission completes the chunk; the next chunk's duplicate ACKs
    /// must all count (RFC 5681 §3.2: the third one triggers the fast retransmission).
    #[test]
    fn rtl_dummies_sent_before_a_fast_retransmission_leave_no_echoes_to_swallow() {
        let cfg = TcpConfig {
            sack: false,
            tlp: false,
            rtl: true,
            delayed_ack: DelayedAckMode::Off,
            ..TcpConfig::default()
        };
        let (mut c, mut s) = pair(cfg);
        let mut out = Output::default();
        // chunk A: ten segments at 100 ms, the eighth lost
        c.write(10 * MSS, 1, 100 * MS, &mut out);
        let a = headers(&mut out);
        assert_eq!(a.len(), 10);
        let delivered: Vec<_> = a
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != 7)
            .map(|(_, h)| *h)
            .collect();
        let acks = deliver(&mut s, &delivered, 125 * MS);
        // seven ACKs advance into the trailing-ACKs phase (one dummy each, up to m), two are
        // duplicates of the hole
        let from_c = deliver(&mut c, &acks, 150 * MS);
        let dummies: Vec<_> = from_c
            .iter()
            .filter(|h| h.payload_bytes == 1)
            .copied()
            .collect();
        assert!(
            !dummies.is_empty(),
            "RTL sends dummies in the trailing-ACKs phase"
        );
        assert_eq!(c.stats.fast_recovery_count, 0, "two duplicate ACKs only");
        // the dummies reach the receiver before any retransmission: duplicate ACKs of the hole
        let dup = deliver(&mut s, &dummies, 175 * MS);
        assert!(dup.iter().all(|h| h.ack == a[7].seq));
        let from_c = deliver(&mut c, &dup, 200 * MS);
        assert_eq!(c.stats.fast_recovery_count, 1, "the third duplicate ACK");
        let retx: Vec<_> = from_c
            .iter()
            .filter(|h| h.seq == a[7].seq && h.payload_bytes > 1)
            .copied()
            .collect();
        assert_eq!(retx.len(), 1);
        // the retransmission completes chunk A
        let full = deliver(&mut s, &retx, 225 * MS);
        deliver(&mut c, &full, 250 * MS);
        assert_eq!(c.stats.bytes_acked, 10 * MSS);
        // chunk B: four segments, the first lost; the other three draw three duplicate ACKs of
        // chunk A's end, which none of A's dummies can have produced
        c.write(4 * MSS, 2, 300 * MS, &mut out);
        let b = headers(&mut out);
        assert_eq!(b.len(), 4);
        let dup = deliver(&mut s, &b[1..], 325 * MS);
        assert_eq!(dup.len(), 3);
        assert!(dup.iter().all(|h| h.ack == b[0].seq));
        let from_c = deliver(&mut c, &dup, 350 * MS);
        assert_eq!(
            c.stats.fast_recovery_count, 2,
            "the third duplicate ACK of chunk B must start a fast recovery"
        );
        assert!(from_c
            .iter()
            .any(|h| h.seq == b[0].seq && h.payload_bytes > 1));
    }

    fn sack_cfg() -> TcpConfig {
        TcpConfig {
            sack: true,
            tlp: true,
            delayed_ack: DelayedAckMode::Off,
            ..TcpConfig::default()
        }
    }

    #[test]
    fn a_tail_loss_is_probed_at_the_pto_and_repaired_by_fast_recovery() {
        let (mut c, mut s) = pair(sack_cfg());
        let mut out = Output::default();
        // ten segments at t = 100 ms; the last two are lost
        c.write(10 * MSS, 1, 100 * MS, &mut out);
        let data = headers(&mut out);
        assert_eq!(data.len(), 10);
        for h in &data[..8] {
            s.on_segment(h, 125 * MS, &mut out);
        }
        let acks = headers(&mut out);
        assert_eq!(acks.len(), 8, "delayed ACKs are off");
        for h in &acks {
            c.on_segment(h, 150 * MS, &mut out);
        }
        assert!(headers(&mut out).is_empty(), "nothing more to send");
        // RFC 8985 §7.2 / Linux: PTO = 2·SRTT + 2 ms with more than one packet out
        let pto_at = c.tlp_timer.deadline_ns().expect("probe timer armed");
        assert_eq!(c.tp.srtt_ns, 50 * MS);
        assert_eq!(pto_at, 150 * MS + 2 * 50 * MS + 2 * MS);
        assert!(
            c.rto_timer.deadline_ns().unwrap() > pto_at,
            "PTO fires before the RTO"
        );
        // the probe retransmits the last segment
        c.on_timer_entry(TimerKind::LossProbe, pto_at, &mut out);
        let probe = headers(&mut out);
        assert_eq!(probe.len(), 1);
        assert_eq!(
            probe[0].seq, data[9].seq,
            "the probe is the highest segment"
        );
        assert_eq!(c.stats.tlp_probes, 1);
        // the receiver SACKs it; RACK marks segment 8 lost and fast recovery resends it
        s.on_segment(&probe[0], pto_at + 25 * MS, &mut out);
        let sack = headers(&mut out);
        assert_eq!(sack[0].sack_len, 1);
        c.on_segment(&sack[0], pto_at + 50 * MS, &mut out);
        let resent = headers(&mut out);
        assert_eq!(resent.len(), 1);
        assert_eq!(resent[0].seq, data[8].seq);
        assert_eq!((c.stats.fast_recovery_count, c.stats.rto_count), (1, 0));
        s.on_segment(&resent[0], pto_at + 75 * MS, &mut out);
        for h in headers(&mut out) {
            c.on_segment(&h, pto_at + 100 * MS, &mut out);
        }
        assert_eq!(c.unacked_written_bytes(), 0);
        assert_eq!(s.stats.bytes_received, 10 * MSS);
    }

    /// Ten segments go out at 100 ms; their ACKs are held past the RTO. Returns the pair, the
    /// data segments, the RTO time and the segment the RTO retransmitted.
    fn rto_with_everything_outstanding(
        cfg: TcpConfig,
    ) -> (Endpoint, Endpoint, Vec<TcpHeader>, u64, TcpHeader) {
        let (mut c, s) = pair(cfg);
        let mut out = Output::default();
        c.write(10 * MSS, 1, 100 * MS, &mut out);
        let data = headers(&mut out);
        assert_eq!(data.len(), 10);
        let rto_at = c.rto_timer.deadline_ns().expect("RTO armed");
        let cwnd_before = c.tp.cwnd_pkts;
        c.on_timer_entry(TimerKind::Rto, rto_at, &mut out);
        let resent = headers(&mut out);
        assert_eq!(resent.len(), 1, "an RTO resends the head segment");
        assert_eq!(resent[0].seq, data[0].seq);
        assert_eq!(c.tp.cwnd_pkts, 1);
        assert!(cwnd_before >= 10);
        (c, s, data, rto_at, resent[0])
    }

    /// RFC 3522 / Linux `tcp_try_undo_loss`: the originals were only delayed; the first ACK
    /// echoes their TSval (older than the retransmission's), so the RTO is undone: cwnd and
    /// ssthresh come back, nothing is marked lost, and the rest is not resent.
    #[test]
    fn a_spurious_rto_is_detected_by_its_timestamp_and_undone() {
        let cfg = TcpConfig {
            tlp: false,
            ..sack_cfg()
        };
        let (mut c, mut s, data, rto_at, _) = rto_with_everything_outstanding(cfg);
        let prior_cwnd = c.tp.prior_cwnd_pkts;
        let prior_ssthresh = c.tp.prior_ssthresh_pkts;
        let mut out = Output::default();
        // the delayed originals arrive; the retransmission is still on its way
        for h in &data {
            s.on_segment(h, rto_at + 10 * MS, &mut out);
        }
        let acks = headers(&mut out);
        assert!(acks.iter().all(|a| a.ts.unwrap().1 < (rto_at / MS) as u32));
        c.on_segment(&acks[0], rto_at + 30 * MS, &mut out);
        assert_eq!(c.stats.spurious_rtos, 1);
        assert!(
            c.tp.cwnd_pkts >= prior_cwnd,
            "cwnd restored: {}",
            c.tp.cwnd_pkts
        );
        assert_eq!(c.tp.ssthresh_pkts, c.tp.ssthresh_pkts.max(prior_ssthresh));
        assert_eq!(c.sb.lost_out, 0);
        let before = c.stats.retransmitted_segments;
        for h in &acks[1..] {
            c.on_segment(h, rto_at + 30 * MS, &mut out);
        }
        assert_eq!(
            c.stats.retransmitted_segments, before,
            "the delayed originals are not resent"
        );
        assert_eq!(c.unacked_written_bytes(), 0);
        c.sb.check().unwrap();
    }

    /// The same RTO with the head segment really lost: the ACK that the retransmission
    /// triggers echoes the retransmission's TSval, so nothing is undone. Without timestamps
    /// there is no detection at all.
    #[test]
    fn a_genuine_rto_is_not_undone() {
        let cfg = TcpConfig {
            tlp: false,
            ..sack_cfg()
        };
        let (mut c, mut s, data, rto_at, resent) = rto_with_everything_outstanding(cfg.clone());
        let prior_cwnd = c.tp.prior_cwnd_pkts;
        let mut out = Output::default();
        for h in &data[1..] {
            s.on_segment(h, rto_at + 10 * MS, &mut out);
        }
        s.on_segment(&resent, rto_at + 25 * MS, &mut out);
        let acks = headers(&mut out);
        let last = acks.last().unwrap();
        c.on_segment(last, rto_at + 50 * MS, &mut out);
        assert_eq!(c.stats.spurious_rtos, 0);
        assert!(
            c.tp.ssthresh_pkts < prior_cwnd && c.tp.cwnd_pkts < prior_cwnd,
            "the reduction stays: cwnd {} ssthresh {} (before the RTO {prior_cwnd})",
            c.tp.cwnd_pkts,
            c.tp.ssthresh_pkts
        );

        let (mut c, mut s, data, rto_at, _) = rto_with_everything_outstanding(TcpConfig {
            timestamps: false,
            ..cfg
        });
        for h in &data {
            s.on_segment(h, rto_at + 10 * MS, &mut out);
        }
        for h in headers(&mut out) {
            c.on_segment(&h, rto_at + 30 * MS, &mut out);
        }
        assert_eq!(c.stats.spurious_rtos, 0);
    }

    #[test]
    fn three_losses_in_a_window_are_repaired_in_one_round_trip_with_sack() {
        let (mut c, mut s) = pair(TcpConfig {
            tlp: false,
            ..sack_cfg()
        });
        let mut out = Output::default();
        c.write(10 * MSS, 1, 100 * MS, &mut out);
        let data = headers(&mut out);
        // segments 1, 4 and 6 are lost
        for (i, h) in data.iter().enumerate() {
            if ![1, 4, 6].contains(&i) {
                s.on_segment(h, 125 * MS, &mut out);
            }
        }
        let acks = headers(&mut out);
        // every ACK after the first hole carries the newest block first (RFC 2018 §4)
        assert!(acks[1..].iter().all(|a| a.sack_len > 0));
        for h in &acks {
            c.on_segment(h, 150 * MS, &mut out);
        }
        let resent: Vec<u32> = headers(&mut out).iter().map(|h| h.seq).collect();
        // all three holes go out in this round trip (RFC 6675 IsLost + pipe)
        assert_eq!(resent, vec![data[1].seq, data[4].seq, data[6].seq]);
        assert_eq!(c.stats.fast_recovery_count, 1);
        c.sb.check().unwrap();
    }

    /// RFC 8985 §6.2 (Linux `tcp_mark_skb_lost`): RACK also detects a lost retransmission —
    /// once a segment sent after it is SACKed and a RACK RTT has passed, it is sent again,
    /// without waiting for the RTO.
    #[test]
    fn rack_detects_a_lost_retransmission() {
        let (mut c, mut s) = pair(sack_cfg());
        let mut out = Output::default();
        c.write(30 * MSS, 1, 100 * MS, &mut out);
        let data = headers(&mut out);
        // segment 1 is lost; the others draw SACKs, the sender enters recovery and resends it
        for h in data
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != 1)
            .map(|(_, h)| h)
        {
            s.on_segment(h, 125 * MS, &mut out);
        }
        let acks = headers(&mut out);
        let mut t = 150 * MS;
        let mut sent = Vec::new();
        for a in &acks {
            sent.extend(deliver(&mut c, std::slice::from_ref(a), t));
        }
        let first: Vec<_> = sent.iter().filter(|h| h.seq == data[1].seq).collect();
        assert_eq!(first.len(), 1, "the fast retransmission");
        assert_eq!(c.tp.ca_state, CaState::Recovery);
        // the retransmission is lost too; the new segments sent with it arrive and are SACKed
        let later: Vec<_> = sent
            .iter()
            .filter(|h| h.seq != data[1].seq)
            .copied()
            .collect();
        assert!(!later.is_empty());
        let acks = deliver(&mut s, &later, 175 * MS);
        let before = c.stats.retransmitted_segments;
        let mut again = Vec::new();
        for a in &acks {
            t += MS;
            again.extend(deliver(
                &mut c,
                std::slice::from_ref(a),
                200 * MS + t - 150 * MS,
            ));
        }
        // the reordering window is 0 in recovery: RACK marks it at once, or its timer fires
        if let Some(at) = c.reorder_timer.deadline_ns() {
            c.on_timer_entry(TimerKind::Reorder, at, &mut out);
            again.extend(headers(&mut out));
        }
        assert!(
            again.iter().any(|h| h.seq == data[1].seq),
            "the lost retransmission is sent again"
        );
        assert!(c.stats.retransmitted_segments > before);
        assert_eq!(c.stats.rto_count, 0);
        c.sb.check().unwrap();
    }

    #[test]
    fn without_sack_newreno_repairs_one_hole_per_round_trip() {
        let cfg = TcpConfig {
            delayed_ack: DelayedAckMode::Off,
            ..TcpConfig::default()
        };
        let cc = || CcConfig::default().build();
        let mut c = Endpoint::new(0, 0, 0, 1, 32768, 5201, cfg.clone(), cc(), 1);
        let mut s = Endpoint::new(0, 1, 1, 0, 5201, 32768, cfg, cc(), 2);
        let mut out = Output::default();
        c.connect(0, &mut out);
        for (t, to_server) in [(25, true), (50, false), (75, true)] {
            for h in headers(&mut out) {
                let ep = if to_server { &mut s } else { &mut c };
                ep.on_segment(&h, t * MS, &mut out);
            }
        }
        c.write(10 * MSS, 1, 100 * MS, &mut out);
        let data = headers(&mut out);
        let mut t = 125 * MS;
        for (i, h) in data.iter().enumerate() {
            if ![1, 4, 6].contains(&i) {
                s.on_segment(h, t, &mut out);
            }
        }
        // one round trip per hole: each partial ACK reveals only the next one
        let mut rounds = 0;
        while c.unacked_written_bytes() > 0 && rounds < 10 {
            t += 25 * MS;
            for h in headers(&mut out) {
                c.on_segment(&h, t, &mut out);
            }
            t += 25 * MS;
            let sent = headers(&mut out);
            assert!(sent.len() <= 1, "one hole per round trip");
            for h in &sent {
                s.on_segment(h, t, &mut out);
            }
            rounds += !sent.is_empty() as u32;
        }
        assert_eq!(rounds, 3, "three holes, three round trips");
        assert_eq!(c.stats.rto_count, 0);
        assert_eq!(s.stats.bytes_received, 10 * MSS);
    }

    /// `full_ack_exit`, worked by hand: IW 40, five segments written (application-limited), the
    /// first lost. Three duplicate ACKs start a classic fast recovery with ssthresh = 40/2 = 20;
    /// the retransmission's ACK is the full ACK, with 5 packets in flight before it. Linux /
    /// ns-3.37 (`ssthresh`): cwnd = 20. ns-3.17 (`flight`): min(20, 5 + 1) = 6, then the ACK's
    /// ordinary increase: 6 < ssthresh, slow start, per-ACK growth: 7.
    #[test]
    fn a_full_ack_sets_cwnd_to_ssthresh_or_to_the_flight_as_ns3_17() {
        for (exit, want) in [(FullAckExit::Ssthresh, 20), (FullAckExit::Flight, 7)] {
            let cfg = TcpConfig {
                delayed_ack: DelayedAckMode::Off,
                initial_cwnd: 40,
                cwnd_growth: CwndGrowth::PerAck,
                full_ack_exit: exit,
                ..TcpConfig::default()
            };
            let (mut c, mut s) = pair(cfg);
            let mut out = Output::default();
            c.write(5 * MSS, 1, 100 * MS, &mut out);
            let data = headers(&mut out);
            assert_eq!(data.len(), 5);
            let dupacks = deliver(&mut s, &data[1..], 125 * MS);
            let rtx = deliver(&mut c, &dupacks, 150 * MS);
            assert_eq!(c.tp.ca_state, CaState::Recovery, "{exit:?}");
            assert_eq!(c.tp.ssthresh_pkts, 20);
            let full = deliver(&mut s, &rtx, 175 * MS);
            deliver(&mut c, &full, 200 * MS);
            assert_eq!(c.unacked_written_bytes(), 0);
            assert_eq!(c.tp.ca_state, CaState::Open);
            assert_eq!(c.tp.cwnd_pkts, want, "{exit:?}");
        }
    }

    /// PRR-SSRB once pipe ≤ ssthresh (`prr_variant`), worked by hand with pipe 0, ssthresh
    /// 10, prr_delivered 5 → 7 (this ACK delivers 2), prr_out 4: Linux 6.x sends
    /// max(7 − 4, 2) = 3, +1 when the ACK advanced snd_una without a new loss (Linux 3.x: +1
    /// on every ACK); ns-3's
    /// TcpPrrRecovery sends 3 + 1 only when the ACK covered retransmitted data, else the 2
    /// delivered.
    #[test]
    fn prr_ssrb_follows_linux_or_ns3() {
        use crate::tcp::config::PrrVariant;
        let cases = [
            (PrrVariant::Linux, true, false, 4),
            (PrrVariant::Linux, false, false, 3),
            (PrrVariant::Linux, false, true, 3),
            (PrrVariant::Ns3, true, false, 2),
            (PrrVariant::Ns3, false, true, 4),
            (PrrVariant::Ns3, true, true, 4),
            (PrrVariant::Linux3, false, false, 4),
        ];
        for (variant, advanced_no_loss, retrans_acked, cwnd) in cases {
            let cfg = TcpConfig {
                recovery: RecoveryMode::Prr,
                prr_variant: variant,
                ..TcpConfig::default()
            };
            let (mut c, _s) = pair(cfg);
            assert_eq!(c.window_pipe(), 0);
            c.tp.ca_state = CaState::Recovery;
            c.tp.ssthresh_pkts = 10;
            c.recover_fs = 20;
            c.prr_delivered = 5;
            c.prr_out = 4;
            c.prr_update(2, advanced_no_loss, retrans_acked);
            assert_eq!(
                c.tp.cwnd_pkts, cwnd,
                "{variant:?} advanced_no_loss {advanced_no_loss} retrans_acked {retrans_acked}"
            );
        }
    }

    /// PRR's RecoverFS: Linux takes cwnd when recovery begins (`prior_cwnd`), ns-3 every
    /// outstanding segment (`UnAckDataCount`), which includes the two limited-transmit
    /// segments sent on the first duplicate ACKs.
    #[test]
    fn prr_recover_fs_is_cwnd_in_linux_and_the_outstanding_data_in_ns3() {
        use crate::tcp::config::PrrVariant;
        for variant in [PrrVariant::Linux, PrrVariant::Ns3] {
            let cfg = TcpConfig {
                sack: true,
                tlp: false,
                delayed_ack: DelayedAckMode::Off,
                recovery: RecoveryMode::Prr,
                prr_variant: variant,
                ..TcpConfig::default()
            };
            let (mut c, mut s) = pair(cfg);
            let mut out = Output::default();
            c.write(30 * MSS, 1, 100 * MS, &mut out);
            let data = headers(&mut out);
            let iw = data.len() as u32;
            let mut sent = Vec::new();
            for (k, h) in data[1..4].iter().enumerate() {
                let dup = deliver(&mut s, std::slice::from_ref(h), 150 * MS);
                sent.extend(deliver(&mut c, &dup, 200 * MS + k as u64 * MS));
            }
            assert_eq!(c.tp.ca_state, CaState::Recovery);
            let outstanding = c.sb.len();
            assert!(outstanding > iw, "limited transmit sent new segments");
            let expected = match variant {
                PrrVariant::Linux | PrrVariant::Linux3 => iw,
                PrrVariant::Ns3 => outstanding,
            };
            assert_eq!(c.recover_fs, expected, "{variant:?}");
        }
    }

    /// RFC 6582 §3.2 step 1 (`recover_guard`): after an RTO the go-back-N's duplicate ACKs
    /// do not start a fast recovery (Linux's Loss state); ns-3.17's `TcpNewReno::DupAck` enters
    /// one on the third, with ssthresh = max(2, outstanding / 2), cwnd = ssthresh + 3, and
    /// resends the first unacknowledged segment (`DoRetransmit`).
    #[test]
    fn after_an_rto_three_duplicate_acks_start_fast_recovery_only_without_the_recover_guard() {
        for guard in [true, false] {
            let cfg = TcpConfig {
                sack: false,
                tlp: false,
                timestamps: false,
                rto_undo: false,
                recovery: RecoveryMode::Classic,
                delayed_ack: DelayedAckMode::Off,
                recover_guard: guard,
                ..TcpConfig::default()
            };
            let (mut c, mut s, data, rto_at, resent) = rto_with_everything_outstanding(cfg);
            assert_eq!(c.tp.ca_state, CaState::Loss);
            // ns-3's NewReno: ssthresh halves the flight, not cwnd
            c.cc = CcConfig::NewReno(crate::tcp::cc::newreno::NewRenoConfig {
                ssthresh: crate::tcp::cc::newreno::SsthreshBase::Flight,
                ..Default::default()
            })
            .build();
            let mut out = Output::default();
            // the head was lost; the receiver holds segments 3.. (1 and 2 lost too): the
            // resent head draws a partial ACK up to 1, then the go-back-N's segments above the
            // holes (the receiver has them) draw duplicate ACKs
            for h in &data[3..] {
                s.on_segment(h, rto_at + 10 * MS, &mut out);
            }
            headers(&mut out);
            let ack = deliver(&mut s, &[resent], rto_at + 20 * MS);
            deliver(&mut c, &ack, rto_at + 40 * MS);
            let before = c.stats.fast_recovery_count;
            let retrans_before = c.stats.retransmitted_segments;
            let outstanding = c.sb.len();
            let dup = deliver(&mut s, &data[4..7], rto_at + 45 * MS);
            assert_eq!(dup.len(), 3);
            assert!(
                dup.iter().all(|d| d.ack == data[1].seq),
                "three duplicate ACKs"
            );
            let sent = deliver(&mut c, &dup, rto_at + 60 * MS);
            if guard {
                assert_eq!(c.stats.fast_recovery_count, before);
                assert_eq!(c.tp.ca_state, CaState::Loss);
            } else {
                assert_eq!(c.stats.fast_recovery_count, before + 1);
                assert_eq!(c.tp.ca_state, CaState::Recovery);
                let ssthresh = (outstanding / 2).max(2);
                assert_eq!(c.tp.ssthresh_pkts, ssthresh);
                assert!(c.stats.retransmitted_segments > retrans_before);
                assert_eq!(
                    sent.iter().find(|h| h.payload_bytes > 0).map(|h| h.seq),
                    Some(data[1].seq),
                    "DoRetransmit resends the first unacknowledged segment"
                );
            }
        }
    }

    /// RFC 3042 (`limited_transmit`): without SACK, in classic recovery, each of the first two
    /// duplicate ACKs lets one new segment out; ns-3.17 sends none.
    #[test]
    fn limited_transmit_sends_one_new_segment_per_early_duplicate_ack() {
        for limited in [true, false] {
            let cfg = TcpConfig {
                sack: false,
                tlp: false,
                recovery: RecoveryMode::Classic,
                delayed_ack: DelayedAckMode::Off,
                limited_transmit: limited,
                ..TcpConfig::default()
            };
            let (mut c, mut s) = pair(cfg);
            let mut out = Output::default();
            // more written than the initial window: the window is full
            c.write(30 * MSS, 1, 100 * MS, &mut out);
            let data = headers(&mut out);
            let iw = data.len();
            assert!(iw < 30);
            // the first segment arrives, the second is lost, the next two draw duplicate ACKs
            let first = deliver(&mut s, &data[..1], 150 * MS);
            let more = deliver(&mut c, &first, 200 * MS);
            let dups = deliver(&mut s, &data[2..4], 150 * MS);
            assert_eq!(dups.len(), 2);
            assert!(dups.iter().all(|d| d.ack == data[1].seq));
            let sent = deliver(&mut c, &dups, 200 * MS);
            assert!(
                !more.is_empty(),
                "the ACK of the first segment opened the window"
            );
            let new = sent.iter().filter(|h| h.payload_bytes > 0).count();
            assert_eq!(
                new,
                if limited { 2 } else { 0 },
                "limited_transmit = {limited}"
            );
        }
    }

    /// RFC 6937 §3 counts each delivered segment once (DeliveredData), as Linux does with
    /// `tp->delivered`: a segment SACKed during recovery and later covered by the cumulative
    /// ACK is not delivered a second time. Two holes in 20 segments; the 18 others are
    /// SACKed, then the retransmissions fill the holes.
    #[test]
    fn prr_counts_a_sacked_segment_once_when_the_cumulative_ack_covers_it() {
        let (mut c, mut s) = pair(TcpConfig {
            tlp: false,
            recovery: crate::tcp::config::RecoveryMode::Prr,
            initial_cwnd: 20,
            ..sack_cfg()
        });
        let mut out = Output::default();
        c.write(20 * MSS, 1, 100 * MS, &mut out);
        let data = headers(&mut out);
        assert_eq!(data.len(), 20);
        let mut t = 125 * MS;
        for (i, h) in data.iter().enumerate() {
            if i != 0 && i != 10 {
                s.on_segment(h, t, &mut out);
            }
        }
        let mut sacked_before_recovery = 0;
        let mut in_recovery = false;
        let mut rounds = 0;
        while c.unacked_written_bytes() > 0 && rounds < 10 {
            rounds += 1;
            t += 25 * MS;
            for h in headers(&mut out) {
                let sacked_before = c.sb.sacked_out;
                c.on_segment(&h, t, &mut out);
                if !in_recovery && c.tp.ca_state == crate::tcp::cc::CaState::Recovery {
                    in_recovery = true;
                    sacked_before_recovery = sacked_before;
                }
                if c.tp.ca_state == crate::tcp::cc::CaState::Recovery {
                    // RFC 6937: what recovery sends is bounded by ssthresh/RecoverFS of what
                    // was delivered (proportional part) or by what was delivered plus one
                    // segment (slow-start reduction bound), plus the fast retransmission
                    let fs = c.recover_fs.max(1) as u64;
                    let prop = (c.tp.ssthresh_pkts as u64 * c.prr_delivered as u64).div_ceil(fs);
                    let bound = prop.max(c.prr_delivered as u64) + 1;
                    assert!(
                        c.prr_out as u64 <= bound,
                        "prr_out {} > bound {bound} (delivered {})",
                        c.prr_out,
                        c.prr_delivered
                    );
                    assert!(c.prr_delivered <= 20, "delivered {}", c.prr_delivered);
                }
            }
            t += 25 * MS;
            for h in headers(&mut out) {
                s.on_segment(&h, t, &mut out);
            }
        }
        assert!(in_recovery);
        assert_eq!(c.unacked_written_bytes(), 0);
        assert_eq!(c.stats.rto_count, 0);
        // every segment delivered after recovery began is counted exactly once, except the
        // second hole, whose ACK ends the recovery (it is not passed to PRR)
        assert_eq!(c.prr_delivered, 20 - sacked_before_recovery - 1);
        c.sb.check().unwrap();
    }

    /// RFC 6675 §2: with SACK, a duplicate ACK counts toward DupThresh only if its SACK blocks
    /// name octets not SACKed before. Three ACKs that carry only a D-SACK of a duplicated
    /// segment (what the go-back-N after an RTO draws from a receiver that held the data) do
    /// not start a fast recovery; three that SACK new segments do.
    #[test]
    fn with_sack_only_acks_that_sack_new_data_are_duplicate_acks() {
        let (mut c, mut s) = pair(TcpConfig {
            tlp: false,
            ..sack_cfg()
        });
        let mut out = Output::default();
        c.write(10 * MSS, 1, 100 * MS, &mut out);
        let data = headers(&mut out);
        for h in &data[..5] {
            s.on_segment(h, 125 * MS, &mut out);
        }
        for h in headers(&mut out) {
            c.on_segment(&h, 150 * MS, &mut out);
        }
        headers(&mut out); // new data the ACKs released
                           // segment 2 arrives three more times: three ACKs of 5 carrying a D-SACK block only
        for k in 0..3 {
            s.on_segment(&data[2], (160 + k) * MS, &mut out);
        }
        let dsack_acks = headers(&mut out);
        assert_eq!(dsack_acks.len(), 3);
        for h in &dsack_acks {
            c.on_segment(h, 185 * MS, &mut out);
        }
        assert_eq!(c.stats.dsacks_received, 3);
        assert_eq!(
            c.stats.fast_recovery_count, 0,
            "D-SACKs are not duplicate ACKs"
        );
        assert_eq!(c.dupacks, 0);
        // segment 5 is lost; 6, 7 and 8 arrive: three ACKs that SACK new data
        for h in &data[6..9] {
            s.on_segment(h, 190 * MS, &mut out);
        }
        for h in headers(&mut out) {
            c.on_segment(&h, 215 * MS, &mut out);
        }
        assert_eq!(c.stats.fast_recovery_count, 1);
        let resent = headers(&mut out);
        assert_eq!(resent[0].seq, data[5].seq, "the hole is retransmitted");
    }

    #[test]
    fn a_duplicate_segment_is_reported_as_dsack() {
        let (mut c, mut s) = pair(sack_cfg());
        let mut out = Output::default();
        c.write(2 * MSS, 1, 100 * MS, &mut out);
        let data = headers(&mut out);
        for h in &data {
            s.on_segment(h, 125 * MS, &mut out);
        }
        headers(&mut out);
        s.on_segment(&data[0], 130 * MS, &mut out);
        let dup_ack = headers(&mut out);
        assert_eq!(dup_ack.len(), 1);
        assert_eq!(dup_ack[0].sack_len, 1);
        assert_eq!(
            dup_ack[0].sack[0].0, data[0].seq,
            "D-SACK names the duplicate"
        );
        c.on_segment(&dup_ack[0], 155 * MS, &mut out);
        assert_eq!(c.stats.dsacks_received, 1);
    }
}
