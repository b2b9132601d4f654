//! newCWV: RFC 7661, "Updating TCP to Support Rate-Limited Traffic", as a
//! [`CwndValidation`] policy selected by `idle_restart = "newcwv"`. It replaces restart after
//! idle: cwnd survives idle and rate-limited periods instead of collapsing.
//!
//! - **pipeACK sample**: the bytes acknowledged in one RTT, measured from an ACK (snapshot of
//!   snd_una and snd_nxt) until snd_una passes that snd_nxt.
//! - **pipeACK**: the maximum sample within the sampling period max(3·SRTT, 1 s); undefined at
//!   the start and after recovery; 0 when no sample lies within the period (after idle).
//! - **Validated phase**: pipeACK undefined or pipeACK ≥ cwnd/2; otherwise non-validated.
//! - cwnd grows only when validated or when the sender is actually cwnd-limited.
//! - **Non-validated period** (NVP, 300 s by default, `newcwv_nvp`): for every NVP spent
//!   non-validated, ssthresh = max(ssthresh, ¾·cwnd) and cwnd = max(cwnd/2, IW).
//! - **Loss while non-validated**: recovery runs as usual; when it ends,
//!   cwnd = (max(pipeACK, LossFlightSize) − R)/2 (R: data retransmitted in recovery),
//!   ssthresh = cwnd, at least one segment, and pipeACK becomes undefined again.
//! - **RTO**: the state is re-initialised (Aberdeen module: `CA_EVENT_LOSS` → init).
//!
//! Not modelled: the Aberdeen module also sets cwnd = max(pipeACK, prior in flight)/2 at the
//! start of recovery; here the configured recovery (classic or PRR) runs unchanged until the
//! end-of-recovery rule applies, as RFC 7661 §4.4 describes.

use super::cc::{CcState, CongestionControl};
use super::cwv::{Congestion, CwndValidation};
use std::collections::VecDeque;

/// The sampling period's floor (RFC 7661: max(3·SRTT, 1 s)).
const MIN_SAMPLING_PERIOD_NS: u64 = 1_000_000_000;

pub struct NewCwv {
    nvp_ns: u64,
    /// completed samples (time, bytes)
    samples: VecDeque<(u64, u64)>,
    /// pipeACK is defined (false at start and after recovery / RTO)
    defined: bool,
    /// sample in progress: (snd_una at start, snd_nxt at start)
    current: Option<(u64, u64)>,
    validated: bool,
    last_validated_ns: u64,
    /// LossFlightSize in bytes when a loss was detected in the non-validated phase
    loss_flight_bytes: Option<u64>,
}

impl NewCwv {
    pub fn new(nvp_ns: u64) -> NewCwv {
        NewCwv {
            nvp_ns,
            samples: VecDeque::new(),
            defined: false,
            current: None,
            validated: true,
            last_validated_ns: 0,
            loss_flight_bytes: None,
        }
    }

    fn reset(&mut self, now_ns: u64) {
        self.samples.clear();
        self.defined = false;
        self.current = None;
        self.validated = true;
        self.last_validated_ns = now_ns;
    }

    /// pipeACK in bytes (None: undefined).
    pub fn pipeack_bytes(&self) -> Option<u64> {
        self.defined
            .then(|| self.samples.iter().map(|&(_, b)| b).max().unwrap_or(0))
    }

    pub fn is_validated(&self) -> bool {
        self.validated
    }

    fn expire_samples(&mut self, tp: &CcState) {
        let period = (3 * tp.srtt_ns).max(MIN_SAMPLING_PERIOD_NS);
        while let Some(&(t, _)) = self.samples.front() {
            if tp.now_ns.saturating_sub(t) > period {
                self.samples.pop_front();
            } else {
                break;
            }
        }
    }

    /// Re-evaluates the phase and applies the NVP expiry rule.
    fn update_phase(&mut self, tp: &mut CcState) {
        self.expire_samples(tp);
        let cwnd_bytes = tp.cwnd_pkts as u64 * tp.mss_bytes as u64;
        self.validated = self.pipeack_bytes().is_none_or(|p| 2 * p >= cwnd_bytes);
        if self.validated {
            self.last_validated_ns = tp.now_ns;
            return;
        }
        while tp.now_ns.saturating_sub(self.last_validated_ns) >= self.nvp_ns {
            tp.ssthresh_pkts = tp
                .ssthresh_pkts
                .max((tp.cwnd_pkts >> 1) + (tp.cwnd_pkts >> 2));
            tp.cwnd_pkts = (tp.cwnd_pkts / 2).max(tp.initial_cwnd_pkts);
            tp.cwnd_cnt = 0;
            self.last_validated_ns += self.nvp_ns;
        }
    }
}

impl CwndValidation for NewCwv {
    fn name(&self) -> &'static str {
        "newcwv"
    }

    fn on_restart_after_idle(
        &mut self,
        tp: &mut CcState,
        _cc: &mut dyn CongestionControl,
        _idle_ns: u64,
    ) {
        // no RFC 5681 restart: only the NVP rule may reduce cwnd
        self.update_phase(tp);
    }

    fn on_ack(&mut self, tp: &mut CcState, _bytes_acked: u64) {
        match self.current {
            None => self.current = Some((tp.snd_una_bytes, tp.snd_nxt_bytes)),
            Some((una0, nxt0)) if tp.snd_una_bytes >= nxt0 => {
                self.samples.push_back((tp.now_ns, tp.snd_una_bytes - una0));
                self.defined = true;
                self.current = Some((tp.snd_una_bytes, tp.snd_nxt_bytes));
            }
            Some(_) => {}
        }
        self.update_phase(tp);
    }

    fn allow_cwnd_growth(&self, tp: &CcState) -> bool {
        self.validated || tp.is_cwnd_limited
    }

    fn on_congestion(&mut self, tp: &mut CcState, event: Congestion) {
        match event {
            Congestion::FastRetransmit { flight_pkts } => {
                if !self.validated {
                    self.loss_flight_bytes = Some(flight_pkts as u64 * tp.mss_bytes as u64);
                }
            }
            Congestion::Rto => {
                self.loss_flight_bytes = None;
                self.reset(tp.now_ns);
            }
        }
    }

    fn on_recovery_end(&mut self, tp: &mut CcState, retransmitted_pkts: u32) {
        if let Some(lfs) = self.loss_flight_bytes.take() {
            let mss = tp.mss_bytes as u64;
            let base = self.pipeack_bytes().unwrap_or(0).max(lfs);
            let cwnd_bytes = base.saturating_sub(retransmitted_pkts as u64 * mss) / 2;
            tp.cwnd_pkts = ((cwnd_bytes / mss) as u32).max(1);
            tp.ssthresh_pkts = tp.cwnd_pkts;
            tp.cwnd_cnt = 0;
        }
        self.reset(tp.now_ns);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::cc::newreno::NewReno;

    const MSS: u64 = 1000;

    /// An ACK at `t_ms` with snd_una / snd_nxt in segments.
    fn ack(p: &mut NewCwv, tp: &mut CcState, t_ms: u64, una: u64, nxt: u64) {
        tp.now_ns = t_ms * 1_000_000;
        tp.snd_una_bytes = una * MSS;
        tp.snd_nxt_bytes = nxt * MSS;
        p.on_ack(tp, MSS);
    }

    fn setup(cwnd: u32) -> (NewCwv, CcState) {
        let mut tp = CcState::new(10, MSS as u32);
        tp.cwnd_pkts = cwnd;
        tp.ssthresh_pkts = 100;
        tp.srtt_ns = 100_000_000;
        (NewCwv::new(300_000_000_000), tp)
    }

    #[test]
    fn freezes_cwnd_when_pipeack_is_below_half_of_cwnd() {
        let (mut p, mut tp) = setup(40);
        assert!(p.allow_cwnd_growth(&tp), "pipeACK undefined: validated");
        // an application sending 10 segments per 100 ms RTT, far below cwnd/2 = 20
        let mut una = 0;
        for rtt in 0..5 {
            ack(&mut p, &mut tp, rtt * 100, una, una + 10);
            una += 10;
        }
        assert_eq!(p.pipeack_bytes(), Some(10 * MSS));
        assert!(!p.is_validated());
        tp.is_cwnd_limited = false;
        assert!(
            !p.allow_cwnd_growth(&tp),
            "non-validated and not cwnd-limited"
        );
        tp.is_cwnd_limited = true;
        assert!(p.allow_cwnd_growth(&tp), "cwnd-limited senders may grow");
        // 25 segments per RTT ≥ cwnd/2: validated again
        for rtt in 5..8 {
            ack(&mut p, &mut tp, rtt * 100, una, una + 25);
            una += 25;
        }
        assert!(p.is_validated());
    }

    #[test]
    fn halves_cwnd_when_the_non_validated_period_expires() {
        let (mut p, mut tp) = setup(40);
        let mut una = 0;
        for rtt in 0..3 {
            ack(&mut p, &mut tp, rtt * 100, una, una + 4);
            una += 4;
        }
        assert!(!p.is_validated());
        let entered_ms = 200;
        // idle, still within the NVP: cwnd preserved across the restart
        let mut cc = NewReno::new(Default::default());
        tp.now_ns = (entered_ms + 250_000) * 1_000_000;
        p.on_restart_after_idle(&mut tp, &mut cc, 250_000_000_000);
        assert_eq!(tp.cwnd_pkts, 40);
        // past one NVP (300 s): one halving, ssthresh ≥ ¾·cwnd
        tp.now_ns = (entered_ms + 300_001) * 1_000_000;
        p.on_restart_after_idle(&mut tp, &mut cc, 300_000_000_000);
        assert_eq!((tp.cwnd_pkts, tp.ssthresh_pkts), (20, 100));
        // two more NVPs: 10 (IW floor), not 5
        tp.now_ns = (entered_ms + 900_002) * 1_000_000;
        p.on_restart_after_idle(&mut tp, &mut cc, 600_000_000_000);
        assert_eq!(tp.cwnd_pkts, 10);
    }

    #[test]
    fn loss_in_the_non_validated_phase_sets_cwnd_from_pipeack_and_lossflightsize() {
        let (mut p, mut tp) = setup(40);
        let mut una = 0;
        for rtt in 0..3 {
            ack(&mut p, &mut tp, rtt * 100, una, una + 12);
            una += 12;
        }
        assert!(!p.is_validated());
        p.on_congestion(&mut tp, Congestion::FastRetransmit { flight_pkts: 16 });
        tp.cwnd_pkts = 8; // whatever recovery did
        p.on_recovery_end(&mut tp, 2);
        // (max(12, 16) − 2) / 2 = 7 segments
        assert_eq!((tp.cwnd_pkts, tp.ssthresh_pkts), (7, 7));
        assert_eq!(p.pipeack_bytes(), None, "pipeACK undefined after recovery");
    }

    #[test]
    fn loss_in_the_validated_phase_keeps_the_standard_response() {
        let (mut p, mut tp) = setup(20);
        p.on_congestion(&mut tp, Congestion::FastRetransmit { flight_pkts: 20 });
        tp.cwnd_pkts = 10;
        tp.ssthresh_pkts = 10;
        p.on_recovery_end(&mut tp, 1);
        assert_eq!((tp.cwnd_pkts, tp.ssthresh_pkts), (10, 10));
    }
}
