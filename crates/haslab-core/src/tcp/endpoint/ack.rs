//! ACK processing (RFC 5681 §3.2, RFC 6675 §5, Linux `tcp_ack`): the cumulative ACK and SACK
//! blocks on the scoreboard, RTT samples, duplicate-ACK counting, and what the ACK starts or
//! ends (fast recovery, RTO restart, cwnd growth).

use super::rack_tlp::rack_candidate;
use super::{Endpoint, Output};
use crate::net::packet::{flags, TcpHeader};
use crate::tcp::cc::{AckSample, CaState, CA_ACK_SLOWPATH, CA_ACK_WIN_UPDATE};
use crate::tcp::config::{
    CaSample, GrowthCount, PartialAckRto, RecoverCovers, RecoveryEnd, RecoveryMode, RttSampling,
};
use crate::tcp::scoreboard::{segflags, Acked, Seg, DUP_THRESH};
use crate::tcp::seq::from_wire;

/// What one ACK did, gathered while processing it.
#[derive(Default)]
pub(super) struct AckInfo {
    pub(super) advanced: bool,
    /// Segments the cumulative ACK removed, SACKed before or not (Linux `pkts_acked`).
    pub(super) pkts_acked: u32,
    /// Of those, the ones not SACKed before (each segment is delivered once: when first
    /// SACKed, or else when cumulatively acknowledged).
    pub(super) pkts_newly_acked: u32,
    pub(super) bytes_acked: u64,
    pub(super) newly_sacked: u32,
    /// The cumulative ACK covered a segment not SACKed before that had been retransmitted
    /// (ns-3 `TcpTxBuffer::IsRetransmittedDataAcked`: `!m_sacked && m_retrans`, which the
    /// ns-3 flavour of PRR reads). Linux's `FLAG_RETRANS_DATA_ACKED` also counts SACKed
    /// segments: [`crate::tcp::scoreboard::Acked::retrans`].
    pub(super) retrans_acked: bool,
    /// The RTT of the newest segment this ACK newly SACKed that was never retransmitted
    /// (Linux `last_sackt`; Linux sorts the blocks, so the highest such segment, the last
    /// sent): the congestion control's sample with `ca_sample = "linux"`.
    pub(super) sack_rtt_ns: Option<u64>,
    /// The RTT of the oldest segment this ACK newly SACKed that was never retransmitted
    /// (Linux `first_sackt`): the RTO estimator's sample when the cumulative ACK gives none,
    /// with `rtt_sampling = "send-time"` (Linux `tcp_ack_update_rtt`).
    pub(super) sack_first_rtt_ns: Option<u64>,
    /// While F-RTO runs: the ACK newly acknowledged or SACKed a segment at or below the
    /// recovery point that was never retransmitted (Linux `FLAG_ORIG_SACK_ACKED`; without
    /// SACK cleared when the cumulative ACK also covered retransmitted data).
    pub(super) orig_acked: bool,
}

impl AckInfo {
    /// Packets this ACK delivered, each counted once (RFC 6937 §3 `DeliveredData` in
    /// packets; Linux `tcp_newly_delivered`, the `acked_sacked` that `tcp_cong_avoid` and
    /// `tcp_cwnd_reduction` receive).
    pub(super) fn delivered(&self) -> u32 {
        self.pkts_newly_acked + self.newly_sacked
    }
}

impl Endpoint {
    pub(super) fn on_ack(&mut self, h: &TcpHeader, now_ns: u64, out: &mut Output) {
        let ack = from_wire(self.snd.iss, h.ack, self.snd.una);
        if ack > self.snd.nxt {
            return; // acknowledges data never sent
        }
        let prev_wnd = self.snd.wnd_bytes;
        self.snd.wnd_bytes = (h.window as u64) << self.snd.wscale;
        // an old ACK (Linux tcp_ack `old_ack`) reaches no congestion-control hook
        let old_ack = ack < self.snd.una;
        if ack == self.snd.una && self.snd.sb.is_empty() && self.quiet_ack_applies(h) {
            self.quiet_ack(h, prev_wnd);
            return;
        }
        let prior_in_flight = self.window_pipe();
        // ns-3.17's BytesInFlight at a full ACK: everything sent and not yet acknowledged
        let prior_packets_out = self.snd.sb.len();
        let prior_state = self.tp.ca_state;
        let prior_dupacks = self.recovery.dupacks;
        let mut info = AckInfo::default();
        // (xmit, end, rtt); tracked only when RACK runs, the one reader of `recovery.rack`
        let mut rack_newest: Option<(u64, u64, u64)> = None;

        if self.sack_ok && h.sack_len > 0 {
            self.process_sack_blocks(h, ack, now_ns, &mut info, &mut rack_newest);
        }
        if ack > self.snd.una {
            self.clean_acked(ack, h, now_ns, &mut info, &mut rack_newest);
        } else if ack == self.snd.una && !self.snd.sb.is_empty() {
            // Linux tcp_clean_rtx_queue runs for every ACK that finds data outstanding: its
            // tcp_ack_update_rtt takes the oldest newly SACKed segment's RTT
            if self.cfg.rtt_sampling == RttSampling::SendTime {
                if let Some(r) = info.sack_first_rtt_ns {
                    self.take_rtt_sample(r);
                }
            }
            // and it calls pkts_acked
            if self.cfg.ca_sample == CaSample::Linux {
                let sample = AckSample {
                    pkts_acked: 0,
                    bytes_acked: 0,
                    rtt_ns: info.sack_rtt_ns,
                    in_flight_pkts: self.snd.sb.len(),
                };
                self.cc.pkts_acked(&mut self.tp, &sample);
            }
        }
        // a hook's echo (RTL: the duplicate ACK a dummy draws once its chunk is wholly
        // acknowledged, what a D-SACK would report) is not a sign of loss in the next chunk
        let echo = !info.advanced
            && ack == self.snd.una
            && h.payload_bytes == 0
            && self.hooks.iter_mut().any(|hook| hook.is_echo(ack));
        // RFC 5681 §2 (same window), or with SACK RFC 6675 §2: only an ACK whose SACK blocks
        // name octets not SACKed before counts (an ACK carrying just a D-SACK of a duplicate,
        // as the go-back-N after an RTO draws, does not; Linux counts SACKed segments, not
        // duplicate ACKs, and ns-3 counts scoreboard updates)
        let duplicate = !info.advanced
            && !echo
            && ack == self.snd.una
            && h.payload_bytes == 0
            && !h.has(flags::FIN)
            && !self.snd.sb.is_empty();
        let same_window = self.snd.wnd_bytes == prev_wnd;
        let is_dupack = duplicate
            && if self.sack_ok {
                info.newly_sacked > 0
            } else {
                same_window
            };
        // nothing new at all (Linux: no FLAG_SND_UNA_ADVANCED, FLAG_NOT_DUP, FLAG_DATA_SACKED)
        let pure_dupack = duplicate && same_window && info.newly_sacked == 0;
        if is_dupack {
            self.recovery.dupacks += 1;
            // (in Loss with `frto`, only once data above the recovery point is out: loss_ack)
            let in_loss = prior_state == CaState::Loss && self.cfg.frto;
            let before_new_data = in_loss && self.snd.nxt <= self.recovery.recover;
            if !self.sack_ok && !before_new_data {
                // Linux tcp_add_reno_sack: a duplicate ACK means a segment left the network,
                // at most as many as are not marked lost (`tcp_limit_reno_sacked`: packets_out
                // − max(lost_out, 1)); outside Loss all but one, Linux's cap when only the head
                // is marked lost (its fast recovery without SACK)
                let marked = if in_loss {
                    self.snd.sb.lost_out.max(1)
                } else {
                    1
                };
                self.recovery.reno_sacked =
                    (self.recovery.reno_sacked + 1).min(self.snd.sb.len().saturating_sub(marked));
            }
        }
        if info.advanced && !self.sack_ok && info.pkts_acked > 0 {
            self.recovery.remove_reno_sacks(&mut info);
        }
        if let Some((xmit, end, rtt)) = rack_newest {
            self.recovery.rack.update(xmit, end, rtt);
        }
        // Linux tcp_ack (since 6.15, "tcp: reorganize tcp_in_ack_event() and
        // tcp_count_delivered()"): in_ack_event after tcp_clean_rtx_queue (pkts_acked) and
        // before tcp_process_tlp_ack, tcp_fastretrans_alert (loss detection, entering and
        // leaving recovery, the ssthresh hook) and tcp_cong_control (cong_avoid); before
        // 6.15 it ran before pkts_acked, and also before all of those
        if !old_ack {
            self.ack_event(h, info.advanced, prev_wnd);
        }
        if self.cfg.growth_count == GrowthCount::Linux319 {
            // Linux 3.19 tcp_ack: `if (tcp_may_raise_cwnd(sk, flag)) tcp_cong_avoid(sk, ack,
            // acked)` with the segments tcp_clean_rtx_queue removed, before
            // tcp_fastretrans_alert and tcp_process_tlp_ack; not in Recovery (nor CWR)
            if prior_state != CaState::Recovery {
                self.grow(info.pkts_acked);
            }
        }
        self.process_tlp_ack(ack, pure_dupack);

        // loss detection
        let mut newly_lost = 0;
        if self.sack_ok {
            if info.newly_sacked > 0 {
                newly_lost += self.snd.sb.mark_lost_rfc6675(self.cfg.mss);
            }
            if self.cfg.rack_on() {
                newly_lost += self.rack_mark_lost(now_ns, out);
            }
        }
        self.tp.lost_pkts += newly_lost as u64;

        debug_assert_eq!(self.snd.sb.check(), Ok(()));
        let cc_controls = self.cc_controls;
        let acked_sacked = info.delivered();
        // whether this ACK starts a fast recovery (Open and Disorder)
        // (an ACK of new data clears the duplicate-ACK count first, below)
        let dupacks_seen = !info.advanced && self.recovery.dupacks >= DUP_THRESH;
        // `recover_guard`: three duplicate ACKs start a fast recovery only once the cumulative
        // ACK covers `recover` (one past the highest sequence number sent when the last recovery
        // or RTO began, as Linux's high_seq); without SACK, `recover_covers` says whether it
        // must cover more than that (RFC 6582 §3.2 step 1, Linux) or only reach it (ns-3.37)
        let guard_passed = !self.cfg.recover_guard
            || ack > self.recovery.recover
            || (ack == self.recovery.recover
                && (self.sack_ok || self.cfg.recover_covers == RecoverCovers::Reach));
        let starts_recovery = prior_state <= CaState::Disorder
            && (dupacks_seen || (self.sack_ok && self.snd.sb.lost_out > 0))
            && guard_passed;
        // ns-3's count of the segments this ACK newly covers, when an option asks for it
        let ns3_segs = if self.cfg.growth_count == GrowthCount::Cumulative
            || self.cfg.ca_sample == CaSample::Ns3
        {
            self.ns3_segs_acked(&info)
        } else {
            0
        };
        // what the ACK counts for in cwnd growth
        let grow_pkts = match self.cfg.growth_count {
            GrowthCount::Delivered => acked_sacked,
            GrowthCount::Cumulative => self.ns3_growth_pkts(&info, ack, prior_state, ns3_segs),
            // it grew above, before the state machine
            GrowthCount::Linux319 => 0,
        };
        // ns-3 calls PktsAcked for an ACK of new data, and for one that is not older than
        // snd_una while data is outstanding
        if self.cfg.ca_sample == CaSample::Ns3
            && (info.advanced || (!old_ack && !self.snd.sb.is_empty()))
        {
            self.ns3_pkts_acked(
                &info,
                ack,
                prior_state,
                prior_dupacks,
                starts_recovery,
                ns3_segs,
            );
        }
        match prior_state {
            // CWR is entered and left on one ACK (a tail-loss probe's reduction): never prior
            CaState::Open | CaState::Disorder | CaState::Cwr => {
                if info.advanced {
                    // Linux tcp_fastretrans_alert (default state): tcp_reset_reno_sack
                    self.recovery.dupacks = 0;
                    self.recovery.reno_sacked = 0;
                }
                if starts_recovery {
                    self.enter_recovery(prior_in_flight, None, now_ns, out);
                    if !cc_controls && self.cfg.recovery == RecoveryMode::Prr {
                        self.prr_update(acked_sacked.max(1), false, false);
                    }
                    self.retransmit_first_lost(now_ns, out);
                } else {
                    let disorder = self.recovery.dupacks > 0 || self.snd.sb.sacked_out > 0;
                    self.set_ca_state(if disorder {
                        CaState::Disorder
                    } else {
                        CaState::Open
                    });
                    if info.advanced {
                        self.grow(grow_pkts);
                    }
                }
            }
            CaState::Recovery => {
                // RFC 6582 §3.2 step 3 (NewReno), or with `recovery_end = "new-ack"` RFC 5681
                // §3.2 step 6 (Reno): the first ACK of new data ends the recovery
                if ack >= self.recovery.recover
                    || (info.advanced && self.cfg.recovery_end == RecoveryEnd::NewAck)
                {
                    self.exit_recovery(prior_packets_out, grow_pkts);
                } else if !cc_controls {
                    self.recovery_ack(&info, is_dupack, newly_lost, now_ns, out);
                } else if info.advanced && !self.sack_ok {
                    self.snd.sb.mark_head_lost();
                    self.retransmit_first_lost(now_ns, out);
                }
            }
            CaState::Loss => {
                self.loss_ack(h, &info, is_dupack);
                if self.cfg.recover_guard || info.advanced {
                    self.recovery.dupacks = 0;
                    if !self.cfg.frto {
                        self.recovery.reno_sacked = 0;
                    }
                }
                if info.advanced {
                    self.grow(grow_pkts);
                }
                if !self.cfg.recover_guard
                    && is_dupack
                    && self.recovery.dupacks == DUP_THRESH
                    && self.tp.ca_state == CaState::Loss
                    && !cc_controls
                {
                    // ns-3.17 TcpNewReno::DupAck: the third duplicate ACK of the go-back-N
                    // starts a fast recovery; ssthresh halves BytesInFlight() = everything
                    // outstanding, and DoRetransmit resends the first unacknowledged segment
                    let outstanding = self.snd.sb.len();
                    self.enter_recovery(prior_in_flight, Some(outstanding), now_ns, out);
                    self.retransmit(0, now_ns, out);
                }
            }
        }

        if cc_controls {
            let rs = self.rate.finish(&mut self.tp, newly_lost, prior_in_flight);
            self.cc.cong_control(&mut self.tp, &rs);
        } else {
            self.rate.finish_unsampled(&mut self.tp);
        }
        if info.advanced {
            self.cwv.on_ack(&mut self.tp, info.bytes_acked);
        }
        if self.snd.una > self.snd.chunk_start && self.chunk_head_acked() {
            // the first packet of the chunk is acknowledged: the initial burst is over, and the
            // flow's own pacing (if any) applies again
            if !self.cc_controls {
                self.tp.pacing_rate_bps = None;
            }
        }
        self.update_pacing_rate();
        self.apply_clamp();
        self.send_extra_packets(now_ns, out);

        if info.advanced {
            if self.snd.sb.is_empty() {
                self.snd.rto_timer.cancel();
                self.recovery.tlp_timer.cancel();
            } else if self.restarts_rto_on_new_ack(prior_state, info.newly_sacked) {
                self.arm_rto(now_ns, out);
            }
            self.ack_notices(now_ns, out);
        }
        if !self.snd.sb.is_empty() {
            self.schedule_loss_probe(now_ns, out);
        }
    }

    /// With `growth_count = "cumulative"`, what this ACK counts for in cwnd growth, as ns-3's
    /// `TcpSocketBase::ProcessAck` passes it to `IncreaseWindow` ([`GrowthCount`]): `segs`,
    /// its `segsAcked` ([`Self::ns3_segs_acked`]: SACKed before or not); 0 for an ACK that
    /// also SACKs new data outside recovery (a duplicate ACK to ns-3: Disorder, no increase);
    /// [`Self::ns3_episode_end_segs`] on the ACK that ends a fast recovery or a Loss episode.
    #[inline(never)]
    fn ns3_growth_pkts(&self, info: &AckInfo, ack: u64, prior_state: CaState, segs: u32) -> u32 {
        if !info.advanced {
            return 0;
        }
        match prior_state {
            CaState::Open | CaState::Disorder if info.newly_sacked > 0 => 0,
            CaState::Recovery | CaState::Loss if ack >= self.recovery.recover => {
                self.ns3_episode_end_segs(info, ack, prior_state)
            }
            _ => segs,
        }
    }

    /// ns-3's `segsAcked` for an ACK of new data: the bytes it newly acknowledges in whole
    /// segments, the remainder carried to the next ACK (`m_bytesAckedNotProcessed`,
    /// `TcpSocketBase::ProcessAck`); 0 for an ACK that advances nothing.
    #[inline(never)]
    fn ns3_segs_acked(&mut self, info: &AckInfo) -> u32 {
        if !info.advanced {
            return 0;
        }
        let mss = self.cfg.mss as u64;
        let bytes = info.bytes_acked + self.recovery.growth_carry_bytes;
        self.recovery.growth_carry_bytes = bytes % mss;
        (bytes / mss) as u32
    }

    /// ns-3's count on the ACK that ends a recovery episode: `(ackNumber - oldHeadSequence) /
    /// segmentSize` for a fast recovery, `(ackNumber - m_recover) / segmentSize` for a Loss
    /// episode (`TcpSocketBase::ProcessAck`).
    fn ns3_episode_end_segs(&self, info: &AckInfo, ack: u64, prior_state: CaState) -> u32 {
        let mss = self.cfg.mss as u64;
        let pkts = if prior_state == CaState::Loss {
            ack.min(self.snd.write_end)
                .saturating_sub(self.recovery.recover)
                / mss
        } else {
            info.bytes_acked / mss
        };
        pkts as u32
    }

    /// `ca_sample = "ns3"`: the congestion control's `pkts_acked` where ns-3.37's
    /// `TcpSocketBase::ProcessAck` calls `PktsAcked`, with its count and the smoothed RTT
    /// ([`CaSample::Ns3`]). `segs`: ns-3's `segsAcked` for this ACK; `starts_recovery`: this
    /// ACK starts a fast recovery (in ns-3, `DupAck` has entered it before the call, so the
    /// ACK is a partial ACK of it).
    #[inline(never)]
    fn ns3_pkts_acked(
        &mut self,
        info: &AckInfo,
        ack: u64,
        prior_state: CaState,
        prior_dupacks: u32,
        starts_recovery: bool,
        segs: u32,
    ) {
        let ends_episode = ack >= self.recovery.recover;
        let count = if !info.advanced || starts_recovery {
            Some(1)
        } else {
            match prior_state {
                CaState::Recovery if !ends_episode => Some(1),
                CaState::Recovery | CaState::Loss if ends_episode => {
                    Some(self.ns3_episode_end_segs(info, ack, prior_state))
                }
                CaState::Loss => Some(segs),
                // an ACK that also SACKs new data is a duplicate ACK to ns-3: Disorder
                _ if prior_state == CaState::Disorder || info.newly_sacked > 0 => {
                    segs.checked_sub(prior_dupacks)
                }
                _ => Some(segs),
            }
        };
        let Some(pkts_acked) = count else {
            return;
        };
        let sample = AckSample {
            pkts_acked,
            bytes_acked: pkts_acked as u64 * self.cfg.mss as u64,
            rtt_ns: (self.tp.srtt_ns > 0).then_some(self.tp.srtt_ns),
            in_flight_pkts: self.snd.sb.len(),
        };
        self.cc.pkts_acked(&mut self.tp, &sample);
    }

    /// Whether an ACK that acknowledges nothing new, with nothing outstanding (what every data
    /// segment brings a receiver that sends no data), can take [`Self::quiet_ack`]: no SACK
    /// blocks to read, no hooks to ask, no congestion control taking rate samples, the Open
    /// state with no duplicate ACKs counted and no tail-loss-probe episode. Such an ACK is no
    /// duplicate (nothing is outstanding), finds nothing lost and changes no state.
    #[inline]
    fn quiet_ack_applies(&self, h: &TcpHeader) -> bool {
        !(self.sack_ok && h.sack_len > 0)
            && self.hooks.is_empty()
            && !self.cc_controls
            && self.tp.ca_state == CaState::Open
            && self.recovery.dupacks == 0
            && self.recovery.tlp.is_none()
    }

    /// What [`Self::on_ack`] does for an ACK of which [`Self::quiet_ack_applies`] holds, after
    /// the window update: the per-ACK bookkeeping only (rate sampler, pacing rate, cwnd clamp,
    /// the values the congestion control reads).
    fn quiet_ack(&mut self, h: &TcpHeader, prev_wnd: u64) {
        self.rate.finish_unsampled(&mut self.tp);
        self.update_pacing_rate();
        self.apply_clamp();
        self.ack_event(h, false, prev_wnd);
    }

    /// The `in_ack_event` flags of ACK `h` (the window before it `prev_wnd`), as Linux 6.15 and
    /// later compute them (`tcp_in_ack_event(sk, flag)`). `CA_ACK_SLOWPATH` when
    /// `tcp_rcv_established`'s header prediction fails and `tcp_ack` gets `FLAG_SLOWPATH`: SACK
    /// blocks (the option changes the header length), a window other than the last one
    /// (`pred_flags` holds it), a FIN; not the CA state, nor whether snd_una advanced (before
    /// 6.15 every ACK that did not advance snd_una got it). `CA_ACK_WIN_UPDATE` when snd_una
    /// advanced or the window grew (`tcp_may_update_window` for a peer that sends no data).
    fn ack_flags(&self, h: &TcpHeader, advanced: bool, prev_wnd: u64) -> u32 {
        let slow_path = h.sack_len > 0 || self.snd.wnd_bytes != prev_wnd || h.has(flags::FIN);
        let win_update = advanced || self.snd.wnd_bytes > prev_wnd;
        (if win_update { CA_ACK_WIN_UPDATE } else { 0 })
            | if slow_path { CA_ACK_SLOWPATH } else { 0 }
    }

    /// The congestion control's view of an acceptable ACK (not older than snd_una). Linux
    /// `tcp_ack` calls `in_ack_event` for each ACK it processes: an ACK of new data, a
    /// duplicate, a window update, one with nothing outstanding. A data segment that
    /// acknowledges nothing new, in order with no options but timestamps and no FIN (a
    /// client's next request), takes `tcp_rcv_established`'s header-predicted path, which
    /// calls `tcp_ack` only when the ACK advances: the algorithm hears of it through
    /// `in_data_segment` instead. (Linux takes the slow path, and calls `tcp_ack`, also when
    /// the advertised window changes or out-of-order data waits; not modelled.) `prev_wnd`: the
    /// send window before this ACK (for [`Self::ack_flags`]). The algorithm reads snd_una,
    /// snd_nxt and the packets in flight as this ACK left them.
    fn ack_event(&mut self, h: &TcpHeader, advanced: bool, prev_wnd: u64) {
        self.tp.snd_una_bytes = self.snd.una;
        self.tp.snd_nxt_bytes = self.snd.nxt;
        self.tp.in_flight_pkts = self.snd.sb.len();
        if !advanced && h.payload_bytes > 0 && h.sack_len == 0 && !h.has(flags::FIN) {
            self.cc.in_data_segment(&mut self.tp);
        } else {
            let flags = self.ack_flags(h, advanced, prev_wnd);
            self.cc.in_ack_event(&mut self.tp, flags);
        }
    }

    /// Whether an ACK of new data restarts the RTO timer (RFC 6298 §5.3: yes), with ns-3's
    /// exceptions where the configuration asks for them: an ACK that also SACKs new data
    /// outside recovery (`rto_restart_on_sack_advance = false`), and partial ACKs
    /// ([`Self::restarts_rto_on_partial_ack`]).
    pub(super) fn restarts_rto_on_new_ack(
        &mut self,
        prior_state: CaState,
        newly_sacked: u32,
    ) -> bool {
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
    pub(super) fn restarts_rto_on_partial_ack(&mut self, prior_state: CaState) -> bool {
        let partial = prior_state == CaState::Recovery && self.tp.ca_state == CaState::Recovery;
        if !partial || self.cfg.partial_ack_rto == PartialAckRto::SlowButSteady {
            return true;
        }
        !std::mem::replace(&mut self.recovery.partial_ack_restarted_rto, true)
    }

    /// Applies the SACK blocks of an ACK (RFC 2018) and recognises D-SACK (RFC 2883 §4: a
    /// first block below the cumulative ACK, or inside the second block).
    pub(super) fn process_sack_blocks(
        &mut self,
        h: &TcpHeader,
        ack: u64,
        now_ns: u64,
        info: &mut AckInfo,
        rack_newest: &mut Option<(u64, u64, u64)>,
    ) {
        let n = (h.sack_len as usize).min(h.sack.len());
        // the blocks as stream offsets, in a buffer the size of the header's
        let mut buf = [(0u64, 0u64); 3];
        for (b, &(l, r)) in buf.iter_mut().zip(&h.sack[..n]) {
            let s = from_wire(self.snd.iss, l, self.snd.una);
            *b = (s, from_wire(self.snd.iss, r, s));
        }
        let blocks = &buf[..n];
        for (k, &(s, e)) in blocks.iter().enumerate() {
            if e <= s {
                continue;
            }
            let is_dsack =
                k == 0 && (e <= ack || blocks.get(1).is_some_and(|&(s1, e1)| s1 <= s && e <= e1));
            if is_dsack {
                self.stats.loss.dsacks_received += 1;
                if let Some(ep) = self.recovery.tlp.as_mut() {
                    if ep.retransmitted.is_some_and(|(ps, pe)| s <= ps && pe <= e) {
                        ep.dsacked = true;
                    }
                }
                continue;
            }
            // F-RTO's FLAG_ORIG_SACK_ACKED (Linux `tcp_sacktag_one`)
            let orig_below = self.frto_orig_below();
            let (sampled, rack) = (self.cc_controls, self.cfg.rack_on());
            let (tp, rate) = (&mut self.tp, &mut self.rate);
            let min_rtt = tp.min_rtt_ns;
            let (newest, oldest) = (&mut info.sack_rtt_ns, &mut info.sack_first_rtt_ns);
            let orig = &mut info.orig_acked;
            let newly_sacked = self.snd.sb.sack(s.max(ack), e.min(self.snd.nxt), |seg| {
                // never-retransmitted segments leave in sequence order: the blocks' order
                // does not matter (Linux sorts them)
                if !seg.has(segflags::EVER_RETRANS) {
                    let rtt = now_ns - seg.sent_ns;
                    *newest = Some(newest.map_or(rtt, |r| r.min(rtt)));
                    *oldest = Some(oldest.map_or(rtt, |r| r.max(rtt)));
                    *orig |= seg.end <= orig_below;
                }
                if sampled {
                    rate.on_delivered(tp, seg, now_ns);
                }
                if rack {
                    rack_candidate(rack_newest, seg, now_ns, min_rtt);
                }
                seg.tx.set_counted();
            });
            if !sampled {
                rate.count_delivered(tp, newly_sacked);
            }
            info.newly_sacked += newly_sacked;
        }
    }

    /// The RTO estimator's sample from an ACK that removed `acked` segments, `first` the
    /// oldest of them, with `info` its SACK samples (see [`RttSampling`]).
    pub(super) fn rtt_sample(
        &self,
        first: Option<Seg>,
        acked: &Acked,
        info: &AckInfo,
        h: &TcpHeader,
        now_ns: u64,
    ) -> Option<u64> {
        let first = first.filter(|_| acked.removed > 0);
        match self.cfg.rtt_sampling {
            // Linux tcp_clean_rtx_queue and tcp_ack_update_rtt (Karn, RFC 6298 §3): the
            // oldest acknowledged segment's send time unless a segment this ACK removes was
            // ever retransmitted (FLAG_RETRANS_DATA_ACKED, SACKed ones included); else the
            // oldest newly SACKed segment's; else the timestamp echo (RFC 7323 §4)
            RttSampling::SendTime => first
                .filter(|_| !acked.retrans)
                .map(|f| now_ns - f.sent_ns)
                .or(info.sack_first_rtt_ns)
                .or_else(|| first.and_then(|_| self.ts_echo_rtt(h, now_ns))),
            // ns-3: only from a never-retransmitted oldest segment; with timestamps the echo's
            // age in whole milliseconds, 1 µs when not positive
            RttSampling::TsEcho => {
                let first = first.filter(|f| !f.has(segflags::EVER_RETRANS))?;
                match (self.cfg.timestamps, h.ts) {
                    (true, Some((_, ecr))) => {
                        let ms = super::ts_now(now_ns).wrapping_sub(ecr);
                        Some(if ms == 0 || ms > i32::MAX as u32 {
                            1_000
                        } else {
                            ms as u64 * 1_000_000
                        })
                    }
                    (false, _) => Some(now_ns - first.sent_ns),
                    (true, None) => None,
                }
            }
        }
    }

    /// The RTT from the timestamp echo of `h`, if timestamps are on and it carries one (at the
    /// timestamp clock's 1 ms resolution).
    fn ts_echo_rtt(&self, h: &TcpHeader, now_ns: u64) -> Option<u64> {
        match (self.cfg.timestamps, h.ts) {
            (true, Some((_, ecr))) => Some(super::ts_rtt(now_ns, ecr)),
            _ => None,
        }
    }

    /// Removes what the cumulative ACK covers; RTT sample, delivery accounting, pkts_acked.
    pub(super) fn clean_acked(
        &mut self,
        ack: u64,
        h: &TcpHeader,
        now_ns: u64,
        info: &mut AckInfo,
        rack_newest: &mut Option<(u64, u64, u64)>,
    ) {
        let in_flight_before = self.snd.sb.len();
        let first = self.snd.sb.front().copied();
        // F-RTO's FLAG_ORIG_SACK_ACKED (Linux `tcp_clean_rtx_queue`): a segment never
        // retransmitted nor SACKed before (the closure sees only those), at or below the
        // recovery point
        let orig_below = self.frto_orig_below();
        // the rate sample is built only for an algorithm that takes it (`cong_control`)
        let (sampled, rack) = (self.cc_controls, self.cfg.rack_on());
        let (tp, rate) = (&mut self.tp, &mut self.rate);
        let min_rtt = tp.min_rtt_ns;
        let mut retrans_acked = false;
        let mut last_acked_rtt = None;
        // the newest acknowledged segment's RTT is only `ca_sample = "linux"`'s
        let linux_sample = self.cfg.ca_sample == CaSample::Linux;
        let mut orig_acked = info.orig_acked;
        let acked = self.snd.sb.ack_to(ack, |seg| {
            retrans_acked |= seg.has(segflags::EVER_RETRANS);
            orig_acked |= seg.end <= orig_below && !seg.has(segflags::EVER_RETRANS);
            if linux_sample && !seg.has(segflags::EVER_RETRANS) {
                last_acked_rtt = Some(now_ns - seg.sent_ns);
            }
            if sampled {
                rate.on_delivered(tp, seg, now_ns);
            }
            if rack {
                rack_candidate(rack_newest, seg, now_ns, min_rtt);
            }
        });
        if !sampled {
            // the segments the closure saw
            rate.count_delivered(tp, acked.newly_delivered);
        }
        let pkts_acked = acked.removed;
        let rtt_ns = self.rtt_sample(first, &acked, info, h, now_ns);
        let data_end = self.snd.write_end;
        let bytes_acked = ack.min(data_end) - self.snd.una.clamp(1, data_end);
        self.snd.una = ack;
        // Linux `tcp_ack` zeroes `icsk_retransmits` on an ACK that advances snd_una
        self.recovery.rto_repeats = 0;
        while self
            .snd
            .short_segs
            .front()
            .is_some_and(|&(start, len)| start + len as u64 <= ack)
        {
            self.snd.short_segs.pop_front();
        }
        if self.snd.fin_requested && ack > self.snd.write_end {
            // the cumulative ACK covers our FIN
            self.state = self.state.on_fin_acked();
        }
        self.stats.transfer.bytes_acked += bytes_acked;
        if let Some(r) = rtt_ns {
            self.take_rtt_sample(r);
        }
        self.tp.delivered_bytes += bytes_acked;
        self.tp.snd_una_bytes = self.snd.una;
        self.tp.snd_nxt_bytes = self.snd.nxt;
        self.tp.in_flight_pkts = self.snd.sb.len();
        let ca_rtt_ns = match self.cfg.ca_sample {
            CaSample::NewAck => rtt_ns,
            // Linux 3.19 tcp_clean_rtx_queue: `ca_seq_rtt_us` from `last_ackt`, the newest
            // removed segment never retransmitted (SACKed before or not), else none
            CaSample::Linux319 => acked.newest_orig_sent_ns.map(|t| now_ns - t),
            // on_ack calls it with ns-3's count (ns3_pkts_acked)
            CaSample::Ns3 => None,
            // Linux tcp_clean_rtx_queue / tcp_ack_update_rtt: a SACK sample first, then the
            // cumulative one unless retransmitted data was covered, then the timestamp echo
            CaSample::Linux => info
                .sack_rtt_ns
                .or(last_acked_rtt.filter(|_| !acked.retrans))
                .or_else(|| self.ts_echo_rtt(h, now_ns)),
        };
        // (3.19 calls pkts_acked only `if (flag & FLAG_ACKED)`: a segment was removed)
        let calls = match self.cfg.ca_sample {
            CaSample::Ns3 => false,
            CaSample::Linux319 => pkts_acked > 0,
            CaSample::NewAck | CaSample::Linux => true,
        };
        if calls {
            let sample = AckSample {
                pkts_acked,
                bytes_acked,
                rtt_ns: ca_rtt_ns,
                in_flight_pkts: in_flight_before,
            };
            self.cc.pkts_acked(&mut self.tp, &sample);
        }
        *info = AckInfo {
            advanced: true,
            pkts_acked,
            pkts_newly_acked: acked.newly_delivered,
            bytes_acked,
            retrans_acked,
            // without SACK, a cumulative ACK that also covers retransmitted data cannot tell
            // whether an original arrived (Linux clears the flag on FLAG_RETRANS_DATA_ACKED)
            orig_acked: orig_acked && (self.sack_ok || !acked.retrans),
            ..*info
        };
    }
}
