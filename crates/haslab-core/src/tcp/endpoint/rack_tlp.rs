//! RACK loss detection and the tail loss probe (RFC 8985; Linux `tcp_rack_*`,
//! `tcp_schedule_loss_probe`).

use super::{Endpoint, Output, TimerKind};
use crate::tcp::cc::CaState;
use crate::tcp::config::{CwndLimited, RecoveryMode, TlpVariant};
use crate::tcp::cwv::Congestion;
use crate::tcp::scoreboard::{segflags, Seg, DUP_THRESH};

/// Linux `TCP_TIMEOUT_MIN_US` (2 ms, include/net/tcp.h): added to 2·SRTT in the PTO when more
/// than one packet is out (`tcp_schedule_loss_probe`), and to the reordering timer's wait
/// (`tcp_rack_mark_lost`, net/ipv4/tcp_recovery.c).
const TCP_TIMEOUT_MIN_NS: u64 = 2_000_000;
/// PTO without an RTT sample (RFC 8985 §7.2, Linux `TCP_TIMEOUT_INIT`).
const TLP_NO_RTT_NS: u64 = 1_000_000_000;

/// RACK state (RFC 8985 §6.1): the most recently sent segment among those delivered.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Rack {
    pub(super) xmit_ns: u64,
    pub(super) end: u64,
    pub(super) rtt_ns: u64,
    pub(super) valid: bool,
    /// Linux `tp->rack.advanced`: an ACK delivered a segment RACK may time (set by
    /// `tcp_rack_advance`); loss detection on an ACK runs only then, and clears it
    /// (`tcp_rack_mark_lost`).
    pub(super) advanced: bool,
}

impl Rack {
    /// RFC 8985 §6.2 step 2 (RACK_update) with the newest delivered segment of this ACK.
    pub(super) fn update(&mut self, xmit_ns: u64, end: u64, rtt_ns: u64) {
        if !self.valid || xmit_ns > self.xmit_ns || (xmit_ns == self.xmit_ns && end > self.end) {
            (self.xmit_ns, self.end, self.rtt_ns, self.valid) = (xmit_ns, end, rtt_ns, true);
        }
        self.advanced = true;
    }
}

/// A tail-loss-probe episode (RFC 8985 §7.3: TLP.end_seq, TLP.is_retrans).
#[derive(Clone, Copy, Debug)]
pub(super) struct TlpEpisode {
    pub(super) end_seq: u64,
    /// the probe retransmitted this range (None: the probe was new data)
    pub(super) retransmitted: Option<(u64, u64)>,
    pub(super) dsacked: bool,
}

impl Endpoint {
    /// RFC 8985 §6.2 step 4–5 on an ACK (Linux `tcp_rack_mark_lost`): when the ACK advanced
    /// RACK, marks lost what RACK says is lost and arms the reordering timer for the rest, at
    /// the latest of their deadlines plus `TCP_TIMEOUT_MIN_US` (Linux; RFC 8985 adds nothing).
    pub(super) fn rack_mark_lost(&mut self, now_ns: u64, out: &mut Output) -> u32 {
        if !std::mem::take(&mut self.recovery.rack.advanced) {
            return 0;
        }
        let (lost, wait_until) = self.rack_detect_loss(now_ns);
        if let Some(t) = wait_until {
            let at = self.timer_fires_at(now_ns, t + TCP_TIMEOUT_MIN_NS - now_ns);
            let (c, s) = (self.conn, self.side);
            Self::arm(
                &mut self.recovery.reorder_timer,
                at,
                c,
                s,
                TimerKind::Reorder,
                out,
            );
        }
        lost
    }

    /// RFC 8985 §6.2 step 4: marks lost what RACK says is lost; returns that count and the
    /// latest deadline of the segments still waiting. reo_wnd = min(min_RTT/4, SRTT), or 0 in
    /// recovery or once DupThresh segments are SACKed, since a simulated FIFO path never
    /// reorders (§6.2 step 4 with RACK.reordering_seen = false).
    fn rack_detect_loss(&mut self, now_ns: u64) -> (u32, Option<u64>) {
        if !self.recovery.rack.valid {
            return (0, None);
        }
        let reo_wnd =
            if self.tp.ca_state >= CaState::Recovery || self.snd.sb.sacked_out >= DUP_THRESH {
                0
            } else {
                (self.tp.min_rtt_ns / 4).min(self.tp.srtt_ns)
            };
        self.snd.sb.mark_lost_rack(
            now_ns,
            self.recovery.rack.xmit_ns,
            self.recovery.rack.end,
            self.recovery.rack.rtt_ns + reo_wnd,
        )
    }

    /// The RACK reordering timer expired (Linux `tcp_rack_reo_timeout`, RFC 8985 §6.2
    /// RACK_detect_loss_and_arm_timer): loss detection whether or not an ACK advanced RACK.
    /// Linux does not arm the reordering timer again here (its `timeout` is dropped; the
    /// timer it shares becomes the RTO again): a candidate still waiting waits for the next ACK
    /// or the RTO.
    pub(super) fn on_reorder_timeout(&mut self, now_ns: u64, out: &mut Output) {
        if !self.state.is_synchronized() || self.snd.sb.is_empty() {
            return;
        }
        let (lost, _) = self.rack_detect_loss(now_ns);
        if lost > 0 {
            self.tp.lost_pkts += lost as u64;
            if self.tp.ca_state < CaState::Recovery && self.snd.una >= self.recovery.recover {
                self.enter_recovery(self.window_pipe(), None, now_ns, out);
                if !self.cc_controls && self.cfg.recovery == RecoveryMode::Prr {
                    self.prr_update(1, false, false);
                }
                self.retransmit_first_lost(now_ns, out);
            }
            self.try_send(now_ns, out);
        }
    }

    /// Linux `tcp_schedule_loss_probe` / RFC 8985 §7.2: PTO = 2·SRTT (+ min_rto with a single
    /// packet out, else + 2 ms), at most the time left until the RTO; only in the Open state,
    /// with SACK, and once per episode. The conditions are checked inline (most calls, every
    /// send round and every ACK, stop there); the timer is computed and armed by
    /// [`Self::arm_loss_probe`].
    #[inline]
    pub(super) fn schedule_loss_probe(&mut self, now_ns: u64, out: &mut Output) {
        if !self.cfg.tlp
            || !self.sack_ok
            || self.tp.ca_state != CaState::Open
            || self.snd.sb.is_empty()
            || !self.state.is_synchronized()
        {
            return;
        }
        let linux319 = self.cfg.tlp_variant == TlpVariant::Linux319;
        // 6.18 (and RFC 8985): one episode at a time; 3.19 schedules regardless of
        // `tlp_high_seq` (only its retransmission waits for it, `on_loss_probe`), but never
        // before an RTT sample, nor "if (tp->snd_cwnd > tcp_packets_in_flight(tp)) &&
        // tcp_send_head(sk)"
        if (!linux319 && self.recovery.tlp.is_some())
            || (linux319
                && (self.tp.srtt_ns == 0
                    || (self.snd.nxt < self.snd.stream_end() && !self.window_full(self.snd.nxt))))
        {
            return;
        }
        self.arm_loss_probe(now_ns, out);
    }

    /// The PTO computation and the arming of [`Self::schedule_loss_probe`], once its
    /// conditions hold.
    #[inline(never)]
    fn arm_loss_probe(&mut self, now_ns: u64, out: &mut Output) {
        let mut pto = if self.cfg.tlp_variant == TlpVariant::Linux319 {
            self.pto_319()
        } else if self.tp.srtt_ns > 0 {
            2 * self.tp.srtt_ns
                + if self.snd.sb.len() == 1 {
                    self.cfg.min_rto.0
                } else {
                    TCP_TIMEOUT_MIN_NS
                }
        } else {
            TLP_NO_RTT_NS
        };
        if let Some(rto_at) = self.snd.rto_timer.deadline_ns() {
            pto = pto.min(rto_at.saturating_sub(now_ns));
        }
        // a probe due at the same time as the RTO is pointless: let the RTO fire
        if pto == 0 {
            return;
        }
        let at = self.timer_fires_at(now_ns, pto);
        let (c, s) = (self.conn, self.side);
        Self::arm(
            &mut self.recovery.tlp_timer,
            at,
            c,
            s,
            TimerKind::LossProbe,
            out,
        );
    }

    /// Linux 3.19's probe timeout (`tcp_schedule_loss_probe` in the 3.19 tree), in jiffies of
    /// `hz`: rtt = `usecs_to_jiffies(srtt_us)`; 2·rtt, with one packet out at least rtt +
    /// rtt/2 + `TCP_DELACK_MAX` (HZ/5), and at least `msecs_to_jiffies(10)`.
    fn pto_319(&self) -> u64 {
        use crate::tcp::cc::jiffies::usecs_to_jiffies;
        let hz = self.cfg.hz;
        let rtt = usecs_to_jiffies(self.tp.srtt_ns / 1000, hz);
        let mut timeout = rtt << 1;
        if self.snd.sb.len() == 1 {
            timeout = timeout.max(rtt + (rtt >> 1) + hz as u64 / 5);
        }
        timeout = timeout.max(usecs_to_jiffies(10_000, hz));
        // truncated, so that the timer reads it back as `timeout` jiffies (at HZ = 300 too)
        (timeout as u128 * 1_000_000_000 / hz as u128) as u64
    }

    /// RFC 8985 §7.3 / Linux `tcp_send_loss_probe`: one new segment if there is one, else a
    /// retransmission of the last outstanding segment; cwnd is not changed. With `tlp_variant =
    /// "linux-3.19"` a probe of new data opens no episode, data waiting behind the receive
    /// window sends nothing ("if (tcp_send_head(sk) != NULL) { err = tcp_write_xmit(..); goto
    /// rearm_timer; }"), and a retransmission waits for the open episode ("At most one
    /// outstanding TLP retransmission").
    pub(super) fn on_loss_probe(&mut self, now_ns: u64, out: &mut Output) {
        let linux319 = self.cfg.tlp_variant == TlpVariant::Linux319;
        if !self.state.is_synchronized()
            || self.snd.sb.is_empty()
            || (!linux319 && self.recovery.tlp.is_some())
            || self.tp.ca_state != CaState::Open
        {
            return;
        }
        let len = (self.snd.write_end.saturating_sub(self.snd.nxt)).min(self.cfg.mss as u64) as u32;
        let unsent = self.snd.nxt < self.snd.stream_end();
        let new_data = unsent && self.snd.nxt + len as u64 - self.snd.una <= self.snd.wnd_bytes;
        if linux319 && ((unsent && !new_data) || (!unsent && self.recovery.tlp.is_some())) {
            self.snd.rto_timer.cancel();
            self.arm_rto(now_ns, out);
            return;
        }
        let retransmitted = if new_data {
            // `tcp_send_loss_probe` sends it through `tcp_write_xmit(sk, mss, TCP_NAGLE_OFF, 2,
            // ..)`, which forces it out when cwnd has no room and validates cwnd after it;
            // `cwnd_limited = "linux-3.19"`: 3.16-3.19 count the round cwnd-limited when cwnd
            // had no room before the probe
            let linux319_cwnd_limited = (self.cfg.cwnd_limited == CwndLimited::Linux319)
                .then(|| self.window_full(self.snd.nxt));
            self.send_new(len, now_ns, out);
            match linux319_cwnd_limited {
                Some(cwnd_limited) => self.cwnd_validate_319(cwnd_limited),
                // Linux 5.11+: the same call validates after the send, cwnd-limited when the
                // probe left cwnd full (`is_cwnd_limited |= in_flight >= snd_cwnd`)
                None => self.cwnd_validate(self.window_full(self.snd.nxt)),
            }
            None
        } else {
            // the highest segment not SACKed
            let Some(i) = (0..self.snd.sb.len() as usize)
                .rev()
                .find(|&i| !self.snd.sb.get(i).has(segflags::SACKED))
            else {
                return;
            };
            let seg = *self.snd.sb.get(i);
            self.retransmit(i, now_ns, out);
            Some((seg.start, seg.end))
        };
        self.stats.loss.tlp_probes += 1;
        if !(linux319 && retransmitted.is_none()) {
            self.recovery.tlp = Some(TlpEpisode {
                end_seq: self.snd.nxt,
                retransmitted,
                dsacked: false,
            });
        }
        self.snd.rto_timer.cancel();
        self.arm_rto(now_ns, out);
    }

    /// RFC 8985 §7.4 (Linux `tcp_process_tlp_ack`): ends the episode, and if the probe repaired
    /// a loss (its ACK went beyond the probe without a D-SACK for it), reduces cwnd once.
    pub(super) fn process_tlp_ack(&mut self, ack: u64, pure_dupack: bool) {
        let Some(ep) = self.recovery.tlp else {
            return;
        };
        if ack < ep.end_seq {
            return;
        }
        if ep.retransmitted.is_none() || ep.dsacked {
            self.recovery.tlp = None;
        } else if ack > ep.end_seq {
            self.recovery.tlp = None;
            self.stats.loss.tlp_recoveries += 1;
            // Linux tcp_process_tlp_ack (net/ipv4/tcp_input.c, 3.19 and 6.18), a reduction
            // entered and completed on this ACK: tcp_init_cwnd_reduction (prior cwnd, the
            // ssthresh hook), tcp_set_ca_state(CWR), tcp_end_cwnd_reduction (cwnd = ssthresh,
            // then CA_EVENT_COMPLETE_CWR, which the algorithms here take as leaving CWR: see
            // `CaState::completes_cwr`; 6.x skips both for a `cong_control` algorithm),
            // tcp_try_keep_open (Disorder while segments are SACKed, lost or retransmitted)
            if !self.cc_controls {
                self.tp.pipe_pkts = self.window_pipe();
                self.tp.prior_cwnd_pkts = self.tp.cwnd_pkts;
                self.tp.prior_ssthresh_pkts = self.tp.ssthresh_pkts;
                self.tp.ssthresh_pkts = self.cc.ssthresh(&self.tp).max(2);
                self.tp.cwnd_cnt = 0;
                // newCWV (RFC 7661 §5): a loss in the non-validated phase, as at a fast
                // retransmit, with the flight of the reduction's start
                let flight_pkts = self.snd.sb.len();
                self.cwv
                    .on_congestion(&mut self.tp, Congestion::FastRetransmit { flight_pkts });
            }
            // an episode ends when a recovery or an RTO begins, so the state is Open or Disorder
            debug_assert!(self.tp.ca_state <= CaState::Disorder);
            self.set_ca_state(CaState::Cwr);
            if !self.cc_controls {
                self.tp.cwnd_pkts = self.tp.ssthresh_pkts;
            }
            let sb = &self.snd.sb;
            let keep_open = if sb.sacked_out + sb.lost_out + sb.retrans_out > 0 {
                CaState::Disorder
            } else {
                CaState::Open
            };
            self.set_ca_state(keep_open);
            if !self.cc_controls {
                // the end of the reduction for newCWV: no retransmission since its start
                self.cwv.on_recovery_end(&mut self.tp, 0);
            }
        } else if pure_dupack {
            // original and probe both arrived
            self.recovery.tlp = None;
        }
    }
}

/// Keeps the most recently sent delivered segment for RACK (RFC 8985 §6.2 step 2): a
/// retransmitted segment whose ACK came sooner than min_RTT after the retransmission was
/// probably delivered by its original transmission and is skipped.
pub(super) fn rack_candidate(
    newest: &mut Option<(u64, u64, u64)>,
    seg: &Seg,
    now_ns: u64,
    min_rtt_ns: u64,
) {
    let rtt = now_ns.saturating_sub(seg.sent_ns);
    if seg.has(segflags::EVER_RETRANS) && rtt < min_rtt_ns {
        return;
    }
    match newest {
        Some((x, e, _)) if seg.sent_ns < *x || (seg.sent_ns == *x && seg.end <= *e) => {}
        _ => *newest = Some((seg.sent_ns, seg.end, rtt)),
    }
}
