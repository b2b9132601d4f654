//! Trickle adapted to HAS, as the TcpHas paper compares it (§IV-C: "we added to it the
//! estimator of optimal quality level of TcpHas, the adaptive decrease mechanism of Westwood+
//! (the same as TIBET), and applied the Trickle traffic shaping based on the estimated optimal
//! quality level"). Trickle itself: Ghobadi, Cheng, Jain, Mathis, USENIX ATC 2012
//! (Ghobadi, Cheng, Jain, Mathis, USENIX ATC 2012).
//!
//! - **Shaping**: cwnd ≤ clamp = EncodingRate\[QLevel\] × 1.2 × SRTT / MSS, recomputed on every
//!   ACK (Trickle recomputes at each application write; an ACK-driven clamp is the same bound
//!   at a finer time grain). Below the clamp, cwnd grows as Reno does.
//! - **QLevel**: TcpHas's QLevelEstimator (Algorithm 3) on TcpHas's bandwidth estimate (TIBET
//!   Algorithm 2 with γ = 0.99, α = 0.8, starting at the highest level), updated after each
//!   congestion event and after each OFF period longer than the RTO.
//! - **Adaptive decrease** (Algorithm 1, Westwood+/TIBET): on a loss ssthresh = B̂we × RTT_min;
//!   after a fast retransmit cwnd = min(cwnd, ssthresh).
//! - **Restart after idle is left to the sender** (the scenario's `idle_restart`): unlike
//!   TcpHas, cwnd is reduced after an OFF period, which is what the paper's Fig. 3 attributes
//!   Trickle's instability to.
//!
//! Without a ladder there is nothing to shape: the algorithm is the adaptive decrease alone
//! (TIBET with γ = 0.99).

use super::tcphas::{check_filter_pole, check_shaping_factor, ladder_of, qlevel, rate_rtt_pkts};
use super::tibet::{Tibet, TibetConfig, TibetSamples};
use super::{AckSample, AppData, CaEvent, CaState, CcState, CongestionControl};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Parameters of Trickle-HAS (defaults: the TcpHas paper's, §IV-B).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct TrickleConfig {
    /// Pole of the estimator's two low-pass filters (0.8).
    pub alpha: f64,
    /// Constant gain of the second filter (0.99).
    pub gamma: f64,
    /// Shaping rate as a multiple of the encoding bitrate (1.2, Trickle's 20 % headroom).
    pub shaping_factor: f64,
    /// Which ACKs are samples of the estimator: `every-ack` (default), `westwood` or
    /// `new-data` ([`super::tibet`]).
    pub samples: TibetSamples,
}

impl Default for TrickleConfig {
    fn default() -> Self {
        TrickleConfig {
            alpha: 0.8,
            gamma: 0.99,
            shaping_factor: 1.2,
            samples: TibetSamples::EveryAck,
        }
    }
}

impl TrickleConfig {
    pub fn check(&self) -> Result<(), (String, String)> {
        check_filter_pole("alpha", self.alpha)?;
        check_filter_pole("gamma", self.gamma)?;
        check_shaping_factor(self.shaping_factor)
    }
}

pub struct Trickle {
    cfg: TrickleConfig,
    estimator: Tibet,
    ladder_bps: Vec<u64>,
    qlevel: usize,
}

impl Trickle {
    pub fn new(cfg: TrickleConfig) -> Self {
        let estimator = Tibet::new(TibetConfig {
            alpha: cfg.alpha,
            gamma: Some(cfg.gamma),
            samples: cfg.samples,
        });
        Trickle {
            cfg,
            estimator,
            ladder_bps: Vec::new(),
            qlevel: 0,
        }
    }

    pub fn qlevel(&self) -> usize {
        self.qlevel
    }

    fn update_qlevel(&mut self) {
        if !self.ladder_bps.is_empty() {
            self.qlevel = qlevel(&self.ladder_bps, self.estimator.bwe_bps());
        }
    }

    /// The Trickle bound in packets (None without a ladder or an RTT).
    fn clamp_pkts(&self, tp: &CcState) -> Option<u32> {
        let rate = *self.ladder_bps.get(self.qlevel)? as f64 * self.cfg.shaping_factor;
        (tp.srtt_ns > 0).then(|| (rate_rtt_pkts(rate, tp.srtt_ns, tp.mss_bytes) as u32).max(1))
    }
}

impl CongestionControl for Trickle {
    fn name(&self) -> &'static str {
        "trickle"
    }

    fn ssthresh(&mut self, tp: &CcState) -> u32 {
        self.update_qlevel();
        // Algorithm 1 (Westwood+ / TIBET adaptive decrease)
        let bwe = self.estimator.bwe_bps();
        if bwe <= 0.0 || tp.min_rtt_ns == u64::MAX {
            return (tp.cwnd_pkts / 2).max(2);
        }
        (rate_rtt_pkts(bwe, tp.min_rtt_ns, tp.mss_bytes) as u32).max(2)
    }

    fn cong_avoid(&mut self, tp: &mut CcState, acked_pkts: u32) {
        if tp.is_cwnd_limited() {
            tp.reno_grow(acked_pkts);
        }
        if let Some(clamp) = self.clamp_pkts(tp) {
            tp.cwnd_pkts = tp.cwnd_pkts.min(clamp);
        }
    }

    fn set_state(&mut self, tp: &mut CcState, new_state: CaState) {
        if tp.ca_state.completes_cwr(new_state) {
            tp.cwnd_pkts = tp.ssthresh_pkts.min(tp.prior_cwnd_pkts).max(1);
            tp.cwnd_cnt = 0;
        }
    }

    fn cwnd_event(&mut self, tp: &mut CcState, event: CaEvent) {
        // the level follows the estimate after an OFF period longer than the RTO (TcpHas's
        // timing: new data with nothing outstanding, not an RTO's retransmission); cwnd
        // itself is left to the sender's restart after idle
        if event == CaEvent::TxStart && tp.off_period_longer_than_rto() {
            self.update_qlevel();
        }
    }

    fn in_ack_event(&mut self, tp: &mut CcState, _flags: u32) {
        self.estimator.on_ack(tp);
    }

    fn in_data_segment(&mut self, tp: &mut CcState) {
        self.estimator.on_ack(tp);
    }

    fn pkts_acked(&mut self, tp: &mut CcState, sample: &AckSample) {
        self.estimator.on_pkts_acked(tp, sample.pkts_acked);
        if let Some(clamp) = self.clamp_pkts(tp) {
            tp.cwnd_pkts = tp.cwnd_pkts.min(clamp);
        }
    }

    fn set_app_data(&mut self, _tp: &mut CcState, data: &AppData) {
        self.ladder_bps = ladder_of(data);
        if let Some(&top) = self.ladder_bps.last() {
            self.qlevel = self.ladder_bps.len() - 1;
            self.estimator.set_estimate_bps(top as f64);
        }
    }
}

impl crate::sim::registry::Algorithm for TrickleConfig {
    type Config = TrickleConfig;
    const NAME: &'static str = "trickle";
    const ALIASES: &'static [&'static str] = &["trickle-has"];
    const SOURCE: &'static str =
        "TcpHas paper §IV-C adaptation of Trickle (Ghobadi et al., USENIX ATC 2012)";
    const SUMMARY: &'static str =
        "Trickle adapted to HAS (TcpHas paper §IV-C): cwnd clamp at the shaping rate × RTT.";
    fn check(config: &TrickleConfig) -> Result<(), (String, String)> {
        config.check()
    }
}

impl super::CcAlgorithm for TrickleConfig {
    fn build(config: &TrickleConfig, _rng: crate::sim::rng::Stream) -> Box<dyn CongestionControl> {
        Box::new(Trickle::new(config.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;
    const MSS: u32 = 1000;

    fn ack(cc: &mut Trickle, tp: &mut CcState, now_ns: u64, rtt_ns: u64) {
        tp.now_ns = now_ns;
        tp.min_rtt_ns = tp.min_rtt_ns.min(rtt_ns);
        tp.srtt_ns = rtt_ns;
        cc.pkts_acked(
            tp,
            &AckSample {
                pkts_acked: 1,
                bytes_acked: MSS as u64,
                rtt_ns: Some(rtt_ns),
                in_flight_pkts: 10,
            },
        );
        cc.in_ack_event(tp, 0);
    }

    #[test]
    fn cwnd_never_exceeds_the_shaping_rate_times_rtt() {
        let mut cc = Trickle::new(Default::default());
        let mut tp = CcState::new(10, MSS);
        cc.set_app_data(
            &mut tp,
            &AppData {
                encoding_bitrates_bps: vec![248_000, 456_000, 928_000, 1_632_000, 4_256_000],
            },
        );
        tp.is_cwnd_limited = true;
        // an estimate of 1 Mbps (1000-byte ACKs every 8 ms), then a loss: level 2
        for k in 1..2000 {
            ack(&mut cc, &mut tp, k * 8 * MS, 100 * MS);
        }
        tp.ssthresh_pkts = cc.ssthresh(&tp);
        assert_eq!(cc.qlevel(), 2);
        // adaptive decrease: ssthresh ≈ B̂we × RTT_min ≈ 1 Mbps × 100 ms = 12.5 packets
        assert!(
            (11..=13).contains(&tp.ssthresh_pkts),
            "{}",
            tp.ssthresh_pkts
        );
        for _ in 0..1000 {
            tp.max_packets_out = tp.cwnd_pkts;
            cc.cong_avoid(&mut tp, 2);
        }
        // clamp: 928 kbps × 1.2 × 100 ms / 8000 bits = 13.9 → 13
        assert_eq!(tp.cwnd_pkts, 13);
    }
}
