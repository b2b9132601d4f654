//! NewReno congestion control: Reno AIMD (RFC 5681 §3.1) as Linux `tcp_reno_cong_avoid`,
//! `tcp_reno_ssthresh` and `tcp_reno_undo_cwnd` (net/ipv4/tcp_cong.c). The NewReno part —
//! fast recovery with partial ACKs (RFC 6582) — is the sender's loss recovery, which every
//! algorithm shares.
//!
//! Rules and constants:
//! - Slow start (cwnd < ssthresh): cwnd += packets newly acked, capped at ssthresh (Linux
//!   `tcp_slow_start`; with ACKs every 2 segments this is RFC 3465 byte counting with L = 2).
//! - Congestion avoidance: +1 packet per cwnd packets acked (RFC 5681 byte counting,
//!   Linux `tcp_cong_avoid_ai`).
//! - Growth only when cwnd-limited (Linux `tcp_is_cwnd_limited`); `grow_when_app_limited`
//!   turns the gate off to model ns-3's TcpNewReno, which grows regardless
//!   (`TcpSocketBase::ProcessAck` calls `IncreaseWindow` on every new ACK).
//! - On loss: ssthresh = max(cwnd / 2, 2) packets (Linux `tcp_reno_ssthresh`; β = 1/2), or,
//!   with `ssthresh = "flight"`, max(pipe / 2, 2) packets: ns-3's `TcpNewReno::GetSsThresh`
//!   (`max(2·MSS, bytesInFlight / 2)`, src/internet/model/tcp-congestion-ops.cc) and RFC 5681
//!   §3.1 equation (4) (FlightSize / 2).

use super::{CcState, CongestionControl};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Parameters of NewReno.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct NewRenoConfig {
    /// Grow cwnd even when the sender is application-limited (ns-3 TcpNewReno). Default false
    /// (Linux).
    pub grow_when_app_limited: bool,
    /// What ssthresh halves on a loss: `cwnd` (default, Linux) or `flight` (the packets in
    /// flight, RFC 5681 / ns-3).
    pub ssthresh: SsthreshBase,
}

/// The quantity NewReno's ssthresh rule halves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SsthreshBase {
    /// cwnd (Linux `tcp_reno_ssthresh`).
    #[default]
    Cwnd,
    /// The RFC 6675 pipe when the loss is detected (RFC 5681 §3.1 FlightSize; ns-3).
    Flight,
}

pub struct NewReno {
    cfg: NewRenoConfig,
}

impl NewReno {
    pub fn new(cfg: NewRenoConfig) -> Self {
        NewReno { cfg }
    }
}

impl CongestionControl for NewReno {
    fn name(&self) -> &'static str {
        "newreno"
    }

    fn ssthresh(&mut self, tp: &CcState) -> u32 {
        let base = match self.cfg.ssthresh {
            SsthreshBase::Cwnd => tp.cwnd_pkts,
            SsthreshBase::Flight => tp.pipe_pkts,
        };
        (base / 2).max(2)
    }

    fn cong_avoid(&mut self, tp: &mut CcState, acked_pkts: u32) {
        if self.cfg.grow_when_app_limited || tp.is_cwnd_limited() {
            tp.reno_grow(acked_pkts);
        }
    }
}

impl crate::sim::registry::Algorithm for NewRenoConfig {
    type Config = NewRenoConfig;
    const NAME: &'static str = "newreno";
    const ALIASES: &'static [&'static str] = &["reno"];
    const SOURCE: &'static str = "RFC 5681 + RFC 6582; Linux net/ipv4/tcp_cong.c (tcp_reno_*)";
    const SUMMARY: &'static str = "NewReno (RFC 5681 + RFC 6582), Linux `tcp_reno_*` rules.";
}

impl super::CcAlgorithm for NewRenoConfig {
    fn build(config: &NewRenoConfig, _rng: crate::sim::rng::Stream) -> Box<dyn CongestionControl> {
        Box::new(NewReno::new(config.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limited(cwnd: u32, ssthresh: u32) -> CcState {
        let mut tp = CcState::new(cwnd, 1448);
        tp.ssthresh_pkts = ssthresh;
        tp.is_cwnd_limited = true;
        tp.max_packets_out = cwnd;
        tp
    }

    #[test]
    fn slow_start_doubles_per_window_of_acks() {
        let mut cc = NewReno::new(Default::default());
        let mut tp = limited(10, 1000);
        // a window of 10 packets acked two at a time (delayed ACKs)
        for _ in 0..5 {
            cc.cong_avoid(&mut tp, 2);
            tp.max_packets_out = tp.cwnd_pkts;
        }
        assert_eq!(tp.cwnd_pkts, 20);
    }

    #[test]
    fn congestion_avoidance_adds_one_packet_per_rtt() {
        let mut cc = NewReno::new(Default::default());
        let mut tp = limited(40, 40);
        for _ in 0..40 {
            cc.cong_avoid(&mut tp, 1);
        }
        assert_eq!(tp.cwnd_pkts, 41);
    }

    #[test]
    fn no_growth_when_application_limited_unless_configured() {
        let mut tp = limited(40, 20);
        tp.is_cwnd_limited = false;
        let mut linux = NewReno::new(Default::default());
        for _ in 0..100 {
            linux.cong_avoid(&mut tp, 1);
        }
        assert_eq!(tp.cwnd_pkts, 40);
        let mut ns3 = NewReno::new(NewRenoConfig {
            grow_when_app_limited: true,
            ..Default::default()
        });
        for _ in 0..100 {
            ns3.cong_avoid(&mut tp, 1);
        }
        assert!(tp.cwnd_pkts > 40);
    }

    #[test]
    fn ssthresh_halves_with_floor_of_two() {
        let mut cc = NewReno::new(Default::default());
        assert_eq!(cc.ssthresh(&limited(41, 100)), 20);
        assert_eq!(cc.ssthresh(&limited(3, 100)), 2);
    }

    #[test]
    fn flight_based_ssthresh_halves_the_pipe_not_cwnd() {
        // an application-limited sender: cwnd 40 but only 12 packets in the pipe
        let mut tp = limited(40, 100);
        tp.pipe_pkts = 12;
        let mut linux = NewReno::new(Default::default());
        assert_eq!(linux.ssthresh(&tp), 20);
        let mut rfc = NewReno::new(NewRenoConfig {
            ssthresh: SsthreshBase::Flight,
            ..Default::default()
        });
        assert_eq!(rfc.ssthresh(&tp), 6);
        tp.pipe_pkts = 1;
        assert_eq!(rfc.ssthresh(&tp), 2);
    }
}
