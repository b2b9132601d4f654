//! Loss recovery: entering, running and leaving fast recovery (RFC 6582, RFC 6675, PRR RFC
//! 6937), the retransmission timeout (RFC 6298, Linux `tcp_enter_loss`) and its undo (Eifel,
//! RFC 3522 / Linux `tcp_try_undo_loss`).

use super::ack::AckInfo;
use super::rack_tlp::{Rack, TlpEpisode};
use super::{Endpoint, Output, State};
use crate::net::packet::TcpHeader;
use crate::sim::events::Timer;
use crate::tcp::cc::{CaEvent, CaState};
use crate::tcp::config::{
    FullAckExit, PartialAckRetransmit, PriorSsthresh, PrrVariant, RecoveryEntryCwnd, RecoveryMode,
    RtoSsthresh,
};
use crate::tcp::cwv::Congestion;
use crate::tcp::scoreboard::segflags;

/// Loss-recovery state: the duplicate-ACK count (RFC 5681 §3.2) and, without SACK, Linux's
/// "reno sacks"; the recovery point `recover` (RFC 6582 §3.2, RFC 6675 RecoveryPoint); PRR's
/// counters (RFC 6937 §3); RACK and the tail loss probe with their timers (RFC 8985); and the
/// Eifel undo stamp of an RTO episode (RFC 3522).
#[derive(Default)]
pub(super) struct LossRecovery {
    pub(super) dupacks: u32,
    /// Linux's `sacked_out` without SACK ("reno sacks"): duplicate ACKs counted as segments
    /// that have left the network (PRR's pipe without SACK)
    pub(super) reno_sacked: u32,
    /// with `growth_count = "cumulative"`, the acknowledged bytes short of a whole segment
    /// carried to the next ACK (ns-3's `m_bytesAckedNotProcessed`)
    pub(super) growth_carry_bytes: u64,
    /// PRR state (RFC 6937): delivered and sent since recovery began, RecoverFS
    pub(super) prr_delivered: u32,
    pub(super) prr_out: u32,
    pub(super) recover_fs: u32,
    /// segments retransmitted during the current recovery (newCWV's R)
    pub(super) retrans: u32,
    /// a partial ACK of the current fast recovery has already restarted the RTO timer
    pub(super) partial_ack_restarted_rto: bool,
    pub(super) recover: u64,
    pub(super) rack: Rack,
    pub(super) reorder_timer: Timer,
    pub(super) tlp: Option<TlpEpisode>,
    pub(super) tlp_timer: Timer,
    /// TSval of the first retransmission of the current RTO episode (Linux `retrans_stamp`):
    /// an ACK echoing an older TSval was sent for an original transmission (Eifel, RFC 3522)
    pub(super) undo_ts: Option<u32>,
    /// RTOs since the cumulative ACK last advanced (Linux `icsk_retransmits`)
    pub(super) rto_repeats: u32,
    /// F-RTO is running in this Loss episode (Linux `tp->frto`; RFC 5682 §3.1); see
    /// [`Endpoint::loss_ack`]
    pub(super) frto: bool,
    /// F-RTO step 2.b: the next send round sends new data only (Linux `REXMIT_NEW`)
    pub(super) frto_send_new: bool,
    /// the current RTO episode was undone (Linux: `undo_marker` cleared); a second undo of the
    /// same episode (F-RTO's, after Eifel's kept a sender without SACK in Loss) counts no
    /// second spurious RTO
    pub(super) rto_undone: bool,
}

impl LossRecovery {
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
    pub(super) fn remove_reno_sacks(&mut self, info: &mut AckInfo) {
        let acked = info.pkts_acked;
        info.pkts_newly_acked = acked.saturating_sub(self.reno_sacked).max(1);
        self.reno_sacked -= acked.saturating_sub(1).min(self.reno_sacked);
    }
}

impl Endpoint {
    /// RFC 6937 §3: on each ACK in recovery that delivered `delivered` packets, cwnd = pipe +
    /// sndcnt, where sndcnt keeps the sending rate proportional to ssthresh / RecoverFS while
    /// pipe > ssthresh, and otherwise brings pipe back up to ssthresh (PRR-SSRB), in the
    /// flavour `prr_variant` names ([`PrrVariant`]). `una_advanced_no_loss`: the ACK advanced
    /// snd_una and marked nothing newly lost; `retrans_acked`: it covered retransmitted data.
    pub(super) fn prr_update(
        &mut self,
        delivered: u32,
        una_advanced_no_loss: bool,
        retrans_acked: bool,
    ) {
        if delivered == 0 {
            return;
        }
        let pipe = self.window_pipe() as i64;
        let ssthresh = self.tp.ssthresh_pkts as i64;
        self.recovery.prr_delivered += delivered;
        let (prr_delivered, prr_out) = (
            self.recovery.prr_delivered as i64,
            self.recovery.prr_out as i64,
        );
        let catch_up = (prr_delivered - prr_out).max(delivered as i64);
        let mut sndcnt = if pipe > ssthresh {
            let fs = self.recovery.recover_fs.max(1) as i64;
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

    /// Saves the ssthresh an undo restores at least, before a reduction (Linux `prior_ssthresh`,
    /// set by `tcp_enter_recovery` and, when it reduces, `tcp_enter_loss`): the current ssthresh,
    /// or with `prior_ssthresh = "linux"` `tcp_current_ssthresh` (see [`PriorSsthresh`]).
    fn save_prior_ssthresh(&mut self) {
        self.tp.prior_ssthresh_pkts = match self.cfg.prior_ssthresh {
            PriorSsthresh::Ssthresh => self.tp.ssthresh_pkts,
            PriorSsthresh::Linux => self.tp.current_ssthresh(),
        };
    }

    /// Enters fast recovery (RFC 6582 §3.2 step 2, RFC 6675 §5 step 4).
    pub(super) fn enter_recovery(
        &mut self,
        flight_pkts: u32,
        ssthresh_flight_pkts: Option<u32>,
        _now_ns: u64,
        _out: &mut Output,
    ) {
        self.stats.loss.fast_recovery_count += 1;
        if self.snd.sb.lost_out == 0 {
            // entered on the duplicate-ACK count: the hole at snd_una is lost
            self.snd.sb.mark_head_lost();
        }
        // the flight an ssthresh rule may halve: pipe with the head marked lost (without SACK
        // this equals ns-3's BytesInFlight() + 1 segment in TcpSocketBase::EnterRecovery,
        // where one duplicate ACK counts as SACKed)
        self.tp.pipe_pkts = ssthresh_flight_pkts.unwrap_or_else(|| self.snd.sb.pipe());
        self.tp.prior_cwnd_pkts = self.tp.cwnd_pkts;
        self.save_prior_ssthresh();
        self.tp.ssthresh_pkts = self.cc.ssthresh(&self.tp).max(2);
        self.recovery.recover = self.snd.nxt;
        self.recovery.retrans = 0;
        self.recovery.partial_ack_restarted_rto = false;
        self.recovery.frto = false;
        self.recovery.tlp = None; // Linux tcp_init_cwnd_reduction ends a TLP episode
        self.recovery.tlp_timer.cancel();
        self.set_ca_state(CaState::Recovery);
        self.tp.cwnd_cnt = 0;
        if !self.cc_controls {
            match (self.cfg.recovery, self.sack_ok) {
                (RecoveryMode::Classic, false) => {
                    self.tp.cwnd_pkts = match self.cfg.recovery_entry_cwnd {
                        RecoveryEntryCwnd::Rfc => self.tp.ssthresh_pkts + 3,
                        RecoveryEntryCwnd::Min => {
                            self.tp.prior_cwnd_pkts.min(self.tp.ssthresh_pkts)
                        }
                    }
                }
                (RecoveryMode::Classic, true) => self.tp.cwnd_pkts = self.tp.ssthresh_pkts,
                (RecoveryMode::Prr, _) => {
                    // Linux tcp_init_cwnd_reduction
                    self.recovery.prr_delivered = 0;
                    self.recovery.prr_out = 0;
                    self.recovery.recover_fs = match self.cfg.prr_variant {
                        PrrVariant::Linux | PrrVariant::Linux3 => self.tp.prior_cwnd_pkts,
                        // ns-3's UnAckDataCount: everything outstanding, SACKed included
                        PrrVariant::Ns3 => self.snd.sb.len(),
                    };
                }
            }
        }
        self.cwv
            .on_congestion(&mut self.tp, Congestion::FastRetransmit { flight_pkts });
    }

    /// An ACK below `recover` during fast recovery.
    pub(super) fn recovery_ack(
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
                    RecoveryMode::Prr
                        if self.cfg.partial_ack_retransmit == PartialAckRetransmit::Window =>
                    {
                        // Linux: the new head is marked lost (`tcp_newreno_mark_lost`) before
                        // PRR runs, so PRR counts it out of the pipe and as a new loss (no
                        // +1); `tcp_xmit_retransmit_queue` resends it only if the window
                        // allows. In PRR's proportional phase that can be nothing: the head
                        // then waits for the next ACK, or for the RTO if none comes
                        self.snd.sb.mark_head_lost();
                        self.prr_update(info.delivered(), false, info.retrans_acked);
                        return;
                    }
                    // ns-3 3.37 `TcpSocketBase::ProcessAck`: DoRecovery, then DoRetransmit
                    // of the head whatever the window
                    RecoveryMode::Prr => {
                        self.prr_update(info.delivered(), false, info.retrans_acked)
                    }
                }
                self.snd.sb.mark_head_lost();
                if self.cfg.recover_guard {
                    // RFC 6582 §3.2 step 4: retransmit the first unacknowledged segment
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
            if info.advanced && self.cfg.partial_ack_retransmit == PartialAckRetransmit::Forced {
                self.forced_partial_ack_send(now_ns, out);
            }
        }
    }

    /// ns-3 3.37's send on a partial ACK with SACK (`partial_ack_retransmit = "forced"`;
    /// `TcpSocketBase::ProcessAck` and `DoRetransmit`, src/internet/model/tcp-socket-base.cc):
    /// nothing if the new head is a full segment whose retransmission is in flight
    /// (`TcpTxBuffer::IsRetransmittedDataAcked` compares the item's end with ACK + one
    /// segment, so a short head never counts as retransmitted); otherwise one segment whatever
    /// the window: the first segment marked lost and not retransmitted, else one new segment if
    /// the receive window allows it (`NextSeg` rules (1) and (2), its rule (3) off), else the
    /// head again.
    fn forced_partial_ack_send(&mut self, now_ns: u64, out: &mut Output) {
        let Some(head) = self.snd.sb.front().copied() else {
            return;
        };
        if head.has(segflags::RETRANS)
            && !head.has(segflags::SACKED)
            && self.snd.seg_payload(&head) == self.cfg.mss
        {
            return;
        }
        if let Some(i) = self.snd.sb.next_lost() {
            self.retransmit(i, now_ns, out);
            return;
        }
        let snd = &self.snd;
        let len = snd
            .write_end
            .saturating_sub(snd.nxt)
            .min(self.cfg.mss as u64) as u32;
        if len > 0 && snd.nxt + len as u64 - snd.una <= snd.wnd_bytes {
            self.send_new(len, now_ns, out);
        } else {
            self.retransmit(0, now_ns, out);
        }
    }

    /// The cumulative ACK reached `recover` (RFC 6582 §3.2 step 3), with `prior_packets_out`
    /// outstanding before it and `acked_pkts` delivered by it: cwnd = ssthresh (Linux
    /// `tcp_end_cwnd_reduction`, which a `cong_control` algorithm skips), or with
    /// `full_ack_exit = "flight"` ns-3.17's `TcpNewReno::NewAck`: min(ssthresh, BytesInFlight +
    /// SMSS); then, in the Open state, the ACK's ordinary increase: Linux 6.18's `tcp_ack`
    /// calls `tcp_cong_control` after `tcp_fastretrans_alert` has left recovery, and it calls
    /// `tcp_cong_avoid` with the ACK's delivered count (`tcp_may_raise_cwnd`: data was
    /// acknowledged); ns-3.37's `TcpSocketBase::ProcessAck` calls `IncreaseWindow` on the same
    /// ACK (with its cumulatively acknowledged segments: `growth_count = "cumulative"`, which
    /// `acked_pkts` then is); ns-3.17's `NewAck` falls through to
    /// its per-ACK increase. With `growth_count = "linux-3.19"` `acked_pkts` is 0: Linux 3.19's
    /// `tcp_ack` ran `tcp_cong_avoid` before `tcp_fastretrans_alert`, while the state was still
    /// Recovery (`tcp_may_raise_cwnd`: no growth), so cwnd = ssthresh is all this ACK gets.
    /// With `recovery_end = "new-ack"` (Reno) any ACK of new data ends the recovery here.
    pub(super) fn exit_recovery(&mut self, prior_packets_out: u32, acked_pkts: u32) {
        let cc_controls = self.cc_controls;
        if !cc_controls {
            self.tp.cwnd_pkts = match self.cfg.full_ack_exit {
                FullAckExit::Ssthresh => self.tp.ssthresh_pkts,
                FullAckExit::Flight => self.tp.ssthresh_pkts.min(prior_packets_out + 1),
            }
            .max(1);
        }
        self.tp.cwnd_cnt = 0;
        self.recovery.dupacks = 0;
        self.set_ca_state(CaState::Open);
        self.cwv
            .on_recovery_end(&mut self.tp, self.recovery.retrans);
        if !cc_controls {
            self.grow(acked_pkts);
        }
    }

    pub(super) fn on_rto(&mut self, now_ns: u64, out: &mut Output) {
        match self.state {
            State::SynSent | State::SynRcvd => {
                self.rtt.back_off();
                self.send_syn(now_ns, out, true);
                return;
            }
            s if s.is_synchronized() => {}
            _ => return,
        }
        if self.snd.sb.is_empty() {
            return;
        }
        self.stats.loss.rto_count += 1;
        if !self.snd.sb.get(0).has(segflags::EVER_RETRANS) {
            self.stats.loss.tail_rto_count += 1;
        }
        if self.snd.nxt >= self.snd.chunk_end {
            // an RTO in the trailing-ACKs phase (the whole chunk was sent)
            for hook in &mut self.hooks {
                hook.on_trailing_rto(&self.tp);
            }
        }
        // F-RTO (Linux `tcp_enter_loss`, RFC 5682 §3.1 step 1 and §3.2): unless a fast
        // recovery or a Loss episode is under way, or this RTO repeats one on the same
        // snd_una (`new_recovery || icsk_retransmits`)
        self.recovery.frto = self.cfg.frto
            && (self.tp.ca_state < CaState::Recovery || self.recovery.rto_repeats > 0);
        self.recovery.frto_send_new = false;
        self.recovery.rto_undone = false;
        // a new loss episode reduces ssthresh (see RtoSsthresh for Linux's and ns-3's rules)
        let reduce = match self.cfg.rto_ssthresh {
            RtoSsthresh::OncePerEpisode => {
                self.tp.ca_state <= CaState::Disorder
                    || self.recovery.recover <= self.snd.una
                    || (self.tp.ca_state == CaState::Loss && self.recovery.rto_repeats == 0)
            }
            RtoSsthresh::EveryInFlight | RtoSsthresh::Every => true,
        };
        self.recovery.rto_repeats += 1;
        if reduce {
            self.tp.pipe_pkts = match self.cfg.rto_ssthresh {
                // ns-3.17's BytesInFlight(): everything sent and not yet acknowledged (after an
                // RTO the pipe no longer counts the segments marked lost)
                RtoSsthresh::Every => self.snd.sb.len(),
                _ => self.window_pipe(),
            };
            self.tp.prior_cwnd_pkts = self.tp.cwnd_pkts;
            self.save_prior_ssthresh();
            self.tp.ssthresh_pkts = self.cc.ssthresh(&self.tp).max(2);
            // the first retransmission of this episode goes out now, stamped with this TSval
            self.recovery.undo_ts =
                (self.cfg.timestamps && self.cfg.rto_undo).then(|| super::ts_now(now_ns));
        }
        // Linux `tcp_timeout_mark_lost`: with RACK, the segments sent within the last RACK RTT
        // are not marked lost (they may still arrive); cwnd is what is then in flight + 1
        // (`tcp_enter_loss`), i.e. 1 when everything is marked
        let lost_before = self.snd.sb.lost_out;
        let spare_ns = if self.cfg.sack && self.cfg.rack_on() && self.recovery.rack.valid {
            self.recovery.rack.rtt_ns
        } else {
            0
        };
        self.snd.sb.mark_lost_on_rto(now_ns, spare_ns);
        self.tp.lost_pkts += self.snd.sb.lost_out.saturating_sub(lost_before) as u64;
        self.tp.cwnd_pkts = self.snd.sb.pipe() + 1;
        self.tp.cwnd_cnt = 0;
        if reduce {
            // Linux raises CA_EVENT_LOSS with the reduction only (`tcp_enter_loss`); the newCWV
            // module resets on that event, so the window validation hears the RTO with it
            self.cc.cwnd_event(&mut self.tp, CaEvent::Loss);
            self.cwv.on_congestion(&mut self.tp, Congestion::Rto);
        }
        // announced on every RTO, a repeat in Loss too (Linux `tcp_set_ca_state`, ns-3.37
        // `CongestionStateSet`): CUBIC, Illinois and BBR reset their state each time
        self.cc.set_state(&mut self.tp, CaState::Loss);
        self.tp.ca_state = CaState::Loss;
        self.recovery.recover = self.snd.nxt;
        self.recovery.dupacks = 0;
        self.recovery.reno_sacked = 0;
        self.recovery.tlp = None;
        self.recovery.tlp_timer.cancel();
        self.recovery.reorder_timer.cancel();
        self.tp.in_flight_pkts = self.snd.sb.len();
        self.rtt.back_off();
        self.tp.rto_ns = self.rtt.rto_ns();
        self.snd.pacing_next_ns = 0;
        self.try_send(now_ns, out);
        if !self.snd.rto_timer.is_armed() {
            self.arm_rto(now_ns, out);
        }
    }

    /// An ACK in the Loss state (Linux `tcp_process_loss`), after the cumulative ACK and SACK
    /// blocks were applied: undo if the RTO was spurious, Eifel first (RFC 3522, with
    /// `rto_undo`), then F-RTO (RFC 5682 §3.1, its SACK-enhanced form, with `frto`); leave the
    /// Loss state once snd_una reaches the recovery point. `orig_acked` is Linux's
    /// `FLAG_ORIG_SACK_ACKED`: the ACK newly acknowledged or SACKed a segment at or below the
    /// recovery point that was never retransmitted (without SACK, not if the cumulative ACK
    /// also covered a retransmitted one: it cannot tell which copy arrived).
    ///
    /// F-RTO, as Linux runs it:
    /// - step 3.b: an ACK with `orig_acked` shows that not all was lost: the RTO is undone;
    /// - once new data was sent after the RTO (snd_nxt above the recovery point), a duplicate
    ///   ACK or a SACK of new data shows the loss real (step 3.a): F-RTO ends, the
    ///   retransmissions go on in slow start;
    /// - step 2.b: the first ACK that advances snd_una below the recovery point (which is
    ///   still snd_nxt, Linux's high_seq = snd_nxt) makes, if there is unsent data and the
    ///   receive window allows it, the next send round send new data instead of
    ///   retransmissions (Linux `REXMIT_NEW`, see [`Self::send_loop`]); otherwise F-RTO ends.
    ///
    /// Without SACK, once data above the recovery point is out, a duplicate ACK counts as a
    /// delivered segment ("reno sacks", lowering the pipe so that retransmissions are clocked
    /// out) and an ACK that advances clears the count (Linux: "A Reno DUPACK means new data
    /// in F-RTO step 2.b above are delivered"). haslab applies that rule with `frto`, the
    /// setting the kernel's comment ties it to; without `frto` (the ns-3 senders, which have
    /// no F-RTO) the Loss state keeps the rule of [`Self::on_ack`]'s Loss arm.
    pub(super) fn loss_ack(&mut self, h: &TcpHeader, info: &AckInfo, is_dupack: bool) {
        let recovered = self.snd.una >= self.recovery.recover;
        let eifel = info.advanced && self.rto_was_spurious(h);
        if eifel || (self.recovery.frto && info.orig_acked) {
            self.undo_rto(!eifel);
            if self.tp.ca_state == CaState::Loss {
                // held in Loss (a sender without SACK after Eifel's undo): Linux's
                // `tcp_process_loss` returns at once, and so does `tcp_fastretrans_alert`
                return;
            }
        } else {
            if self.recovery.frto {
                if self.snd.nxt > self.recovery.recover {
                    if info.newly_sacked > 0 || is_dupack {
                        self.recovery.frto = false;
                    }
                } else if info.advanced && !recovered {
                    // (Linux's high_seq = snd_nxt: nothing new was sent since the RTO set
                    // `recover` to snd_nxt, so they are already equal)
                    let snd = &self.snd;
                    if snd.nxt < snd.stream_end() && snd.una + snd.wnd_bytes > snd.nxt {
                        self.recovery.frto_send_new = true;
                        return;
                    }
                    self.recovery.frto = false;
                }
            }
            if recovered {
                self.recovery.frto = false;
                self.set_ca_state(CaState::Open);
                self.recovery.undo_ts = None;
            }
        }
        // (Linux: an ACK that advances snd_una clears the count, in Loss and when it ends it)
        if self.cfg.frto && info.advanced {
            self.recovery.reno_sacked = 0;
        }
    }

    /// While F-RTO runs, the recovery point at or below which a newly (S)ACKed segment never
    /// retransmitted sets `orig_acked` (Linux's high_seq for `FLAG_ORIG_SACK_ACKED`); 0 (no
    /// segment) otherwise.
    pub(super) fn frto_orig_below(&self) -> u64 {
        if self.recovery.frto {
            self.recovery.recover
        } else {
            0
        }
    }

    /// Eifel detection (RFC 3522 §3.2; Linux `tcp_packet_delayed`): an ACK that advances
    /// snd_una during an RTO episode and echoes a TSval older than the first retransmission's
    /// acknowledges an original transmission: the data was delayed, not lost.
    pub(super) fn rto_was_spurious(&self, h: &TcpHeader) -> bool {
        match (self.recovery.undo_ts, h.ts) {
            (Some(retrans_ts), Some((_, ecr))) => super::ts_before(ecr, retrans_ts),
            _ => false,
        }
    }

    /// Undo of a spurious RTO (Linux `tcp_try_undo_loss` → `tcp_undo_cwnd_reduction`, the
    /// response of RFC 4015 §3 restoring the window): cwnd from the congestion control's
    /// `undo_cwnd` (with ssthresh still the reduced one, which Linux 3.19's fallback doubles:
    /// `undo_cwnd = "linux-3.19"`), then ssthresh = max(ssthresh, the `prior_ssthresh` saved at
    /// the reduction), as `tcp_undo_cwnd_reduction` orders them; no segment lost any more (the outstanding
    /// originals are not resent). The backed-off RTO stays until the next RTT sample, as in
    /// Linux.
    ///
    /// The state: with SACK, or for F-RTO's undo (`frto_undo`), Open. Without SACK, Eifel's undo
    /// keeps the Loss state, its recovery point and F-RTO as they were (Linux
    /// `tcp_try_undo_loss(sk, false)` reopens only `if (frto_undo || tcp_is_sack(tp))`): until
    /// snd_una passes the recovery point or F-RTO's own undo comes, duplicate ACKs start no
    /// fast recovery. (Linux also holds a sender without SACK in Loss when F-RTO's undo comes
    /// with snd_una exactly at the recovery point, `tcp_is_non_sack_preventing_reopen`; haslab
    /// approximates that hold as it does at the end of every recovery, by `recover_covers`.)
    pub(super) fn undo_rto(&mut self, frto_undo: bool) {
        self.recovery.undo_ts = None;
        // Linux `tcp_try_undo_loss` zeroes `icsk_retransmits`
        self.recovery.rto_repeats = 0;
        if !self.recovery.rto_undone {
            self.stats.loss.spurious_rtos += 1;
            self.recovery.rto_undone = true;
        }
        self.tp.cwnd_pkts = self.cc.undo_cwnd(&self.tp).max(1);
        self.tp.cwnd_cnt = 0;
        self.tp.ssthresh_pkts = self.tp.ssthresh_pkts.max(self.tp.prior_ssthresh_pkts);
        self.snd.sb.unmark_lost();
        if frto_undo || self.cfg.sack {
            self.recovery.frto = false;
            // Linux keeps high_seq, but in Open it refuses no duplicate ACKs; the one hold it
            // keeps (without SACK, undone with snd_una exactly at high_seq) is what
            // `recover_guard`'s rule at equality stands for. So the recovery point moves to
            // snd_una there and just below it otherwise, where no duplicate ACK of snd_una is
            // then refused.
            self.recovery.recover = if self.snd.una == self.recovery.recover {
                self.snd.una
            } else {
                self.snd.una.saturating_sub(1)
            };
            self.set_ca_state(CaState::Open);
        }
    }

    // ------------------------------------------------------------------ RACK-TLP (RFC 8985)
}
