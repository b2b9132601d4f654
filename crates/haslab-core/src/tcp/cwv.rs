//! Congestion-window validation: what happens to cwnd when the sender is idle or
//! application-limited. This is the hook point that RFC 7661 (newCWV) plugs into; the three
//! restart-after-idle behaviours of `TcpConfig::idle_restart` are its first implementations.
//!
//! The sender calls [`CwndValidation::on_restart_after_idle`] before sending new data when
//! nothing is in flight, with the time since the last transmission; the policy decides
//! whether the idle period counts (compared with the current RTO) and what happens to cwnd.
//! [`CwndValidation::on_data_sent`] and [`CwndValidation::on_ack`] let a policy track
//! pipeACK-style measurements; [`CwndValidation::allow_cwnd_growth`] lets it freeze cwnd.

use super::cc::{CaEvent, CcState, CongestionControl};
use super::config::IdleRestart;

/// A congestion event as seen by a [`CwndValidation`] policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Congestion {
    /// Fast retransmit: recovery starts with `flight_pkts` packets in flight (FlightSize).
    FastRetransmit { flight_pkts: u32 },
    /// Retransmission timeout.
    Rto,
}

pub trait CwndValidation: Send {
    fn name(&self) -> &'static str;
    /// Before sending new data with nothing in flight, `idle_ns` after the last transmission.
    fn on_restart_after_idle(
        &mut self,
        tp: &mut CcState,
        cc: &mut dyn CongestionControl,
        idle_ns: u64,
    );
    /// After a data segment is sent.
    fn on_data_sent(&mut self, _tp: &mut CcState, _bytes: u32) {}
    /// After an ACK of new data has been processed.
    fn on_ack(&mut self, _tp: &mut CcState, _bytes_acked: u64) {}
    /// After a congestion event (fast retransmit or RTO) reduced cwnd.
    fn on_congestion(&mut self, _tp: &mut CcState, _event: Congestion) {}
    /// Fast recovery ended (the cumulative ACK reached the recovery point) and cwnd was set to
    /// ssthresh; `retransmitted_pkts` segments were retransmitted during the episode.
    fn on_recovery_end(&mut self, _tp: &mut CcState, _retransmitted_pkts: u32) {}
    /// Whether the congestion control may grow cwnd on this ACK.
    fn allow_cwnd_growth(&self, _tp: &CcState) -> bool {
        true
    }
}

/// Builds the policy selected by `idle_restart`.
pub fn from_config(mode: IdleRestart, nvp_ns: u64) -> Box<dyn CwndValidation> {
    match mode {
        IdleRestart::Off => Box::new(NoRestart),
        IdleRestart::Rfc5681 => Box::new(Rfc5681Restart),
        IdleRestart::Linux => Box::new(LinuxRestart),
        IdleRestart::Newcwv => Box::new(super::newcwv::NewCwv::new(nvp_ns)),
    }
}

/// cwnd is kept across idle periods (ns-3's TcpSocketBase; Linux with
/// `tcp_slow_start_after_idle = 0`).
pub struct NoRestart;

impl CwndValidation for NoRestart {
    fn name(&self) -> &'static str {
        "off"
    }
    fn on_restart_after_idle(&mut self, _: &mut CcState, _: &mut dyn CongestionControl, _: u64) {}
}

/// RFC 5681 §4.1: if the sender has been idle for more than one RTO, cwnd = min(IW, cwnd)
/// (the restart window); ssthresh is unchanged.
pub struct Rfc5681Restart;

impl CwndValidation for Rfc5681Restart {
    fn name(&self) -> &'static str {
        "rfc5681"
    }
    fn on_restart_after_idle(
        &mut self,
        tp: &mut CcState,
        _: &mut dyn CongestionControl,
        idle_ns: u64,
    ) {
        if idle_ns > tp.rto_ns {
            tp.cwnd_pkts = tp.cwnd_pkts.min(tp.initial_cwnd_pkts);
            tp.cwnd_cnt = 0;
        }
    }
}

/// Linux `tcp_cwnd_restart` (net/ipv4/tcp_output.c), applied when
/// `now − lsndtime > icsk_rto` and nothing is in flight:
/// 1. `cwnd_event(CA_EVENT_CWND_RESTART)`;
/// 2. ssthresh = `tcp_current_ssthresh` = max(ssthresh, ¾·cwnd) outside a reduction state;
/// 3. restart = min(IW, cwnd); `while ((idle -= rto) > 0 && cwnd > restart) cwnd >>= 1;`
///    i.e. ⌈idle/RTO⌉ − 1 halvings; cwnd = max(cwnd, restart);
/// 4. the additive-increase count `snd_cwnd_cnt` is kept (the function does not touch it).
pub struct LinuxRestart;

impl CwndValidation for LinuxRestart {
    fn name(&self) -> &'static str {
        "linux"
    }
    fn on_restart_after_idle(
        &mut self,
        tp: &mut CcState,
        cc: &mut dyn CongestionControl,
        idle_ns: u64,
    ) {
        let rto = tp.rto_ns.max(1);
        if idle_ns <= rto {
            return;
        }
        cc.cwnd_event(tp, CaEvent::CwndRestart);
        tp.ssthresh_pkts = tp.current_ssthresh();
        let restart = tp.initial_cwnd_pkts.min(tp.cwnd_pkts);
        let mut cwnd = tp.cwnd_pkts;
        let mut delta = idle_ns;
        loop {
            delta = delta.saturating_sub(rto);
            if delta == 0 || cwnd <= restart {
                break;
            }
            cwnd >>= 1;
        }
        // `snd_cwnd_cnt` is left as it was (3.19 and 6.18 alike): a credit above the new w
        // becomes at most one packet at the next increase (`tcp_cong_avoid_ai`)
        tp.cwnd_pkts = cwnd.max(restart);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::cc::newreno::NewReno;

    fn tp(cwnd: u32) -> CcState {
        let mut t = CcState::new(10, 1448);
        t.cwnd_pkts = cwnd;
        t.ssthresh_pkts = 40;
        t.rto_ns = 300_000_000;
        t
    }

    #[test]
    fn linux_halves_once_per_rto_beyond_the_first() {
        let mut cc = NewReno::new(Default::default());
        // Linux tcp_cwnd_restart: cwnd 80, idle 3.5·RTO → three halvings → 10
        let mut t = tp(80);
        LinuxRestart.on_restart_after_idle(&mut t, &mut cc, 1_050_000_000);
        assert_eq!(t.cwnd_pkts, 10);
        assert_eq!(t.ssthresh_pkts, 60, "ssthresh = max(40, 3/4·80)");
        // 1.5·RTO → ⌈1.5⌉ − 1 = one halving; 2.5·RTO → two
        let mut t = tp(80);
        LinuxRestart.on_restart_after_idle(&mut t, &mut cc, 450_000_000);
        assert_eq!(t.cwnd_pkts, 40);
        let mut t = tp(80);
        LinuxRestart.on_restart_after_idle(&mut t, &mut cc, 750_000_000);
        assert_eq!(t.cwnd_pkts, 20);
        // shorter than one RTO: nothing happens, not even the ssthresh update
        let mut t = tp(80);
        LinuxRestart.on_restart_after_idle(&mut t, &mut cc, 200_000_000);
        assert_eq!((t.cwnd_pkts, t.ssthresh_pkts), (80, 40));
    }

    /// `tcp_cwnd_restart` (3.19 and 6.18) does not touch `snd_cwnd_cnt`: the credit of the
    /// last ON period survives the restart, and `tcp_cong_avoid_ai` turns a credit at or above
    /// the new w into one packet at the next increase.
    #[test]
    fn linux_keeps_the_additive_increase_credit_across_a_restart() {
        let mut cc = NewReno::new(Default::default());
        let mut t = tp(80);
        t.ssthresh_pkts = 20;
        t.cwnd_cnt = 70;
        LinuxRestart.on_restart_after_idle(&mut t, &mut cc, 450_000_000);
        assert_eq!((t.cwnd_pkts, t.cwnd_cnt), (40, 70));
        t.ssthresh_pkts = 20; // congestion avoidance at 40
        t.reno_grow(1);
        assert_eq!(
            (t.cwnd_pkts, t.cwnd_cnt),
            (41, 1),
            "the old credit: one packet"
        );
    }

    #[test]
    fn rfc5681_resets_to_the_restart_window() {
        let mut cc = NewReno::new(Default::default());
        let mut t = tp(80);
        Rfc5681Restart.on_restart_after_idle(&mut t, &mut cc, 400_000_000);
        assert_eq!((t.cwnd_pkts, t.ssthresh_pkts), (10, 40));
        let mut t = tp(6);
        Rfc5681Restart.on_restart_after_idle(&mut t, &mut cc, 400_000_000);
        assert_eq!(t.cwnd_pkts, 6, "min(IW, cwnd)");
    }

    #[test]
    fn off_keeps_cwnd() {
        let mut cc = NewReno::new(Default::default());
        let mut t = tp(80);
        NoRestart.on_restart_after_idle(&mut t, &mut cc, 100_000_000_000);
        assert_eq!(t.cwnd_pkts, 80);
    }
}
