//! TcpHas: HAS-aware congestion control (Ben Ameur, Mory, Cousin, Dedu, "TcpHas: TCP for HTTP
//! Adaptive Streaming", IEEE ICC 2017, §III).
//! It shapes the server's sending rate to 1.2 × the encoding bitrate of an estimated optimal
//! quality level, learnt from the encoding ladder the server application passes down
//! ([`AppData`]).
//!
//! Submodules, each a paper algorithm:
//! - **Bandwidth estimator** (§III-A): TIBET's Algorithm 2 ([`super::tibet`]) with a constant
//!   second-filter gain γ = 0.99 and α = 0.8 (§IV-B); B̂we starts at the highest encoding
//!   bitrate (§IV-B). Every received ACK is a sample by default (`samples`, whose readings
//!   [`super::tibet`] argues).
//! - **QLevelEstimator** (Algorithm 3, [`qlevel`]): the highest level whose encoding bitrate is
//!   ≤ B̂we (level 0 if none); run after each congestion event and each OFF period > RTO.
//! - **Congestion events** (Algorithm 4): ssthresh = EncodingRate\[QLevel\] × RTT_min × 1.2; cwnd
//!   as in Algorithm 1 (3 dupACKs: cwnd = min(cwnd, ssthresh) when recovery ends; RTO:
//!   cwnd = initial_cwnd, "i.e. 2 × MSS", [`RTO_CWND_PKTS`]).
//! - **OFF periods** (Algorithm 5): when sending resumes after an idle period longer than the
//!   RTO, QLevel and ssthresh are updated and cwnd = ssthresh — replacing whatever restart
//!   after idle did (no idle reduction). The paper puts the rule where the restart after idle
//!   reduces cwnd ("the idle period coincides with the OFF period", §III-C2, citing the
//!   reduction and ssthresh = max(ssthresh, 3/4 × cwnd) of Linux's `tcp_cwnd_restart`), and
//!   that restart applies only with nothing outstanding (Linux
//!   `tcp_slow_start_after_idle_check`: `packets_out == 0`). So the rule runs on a
//!   `TxStart` with nothing outstanding, not on the one Linux also raises for an RTO's
//!   retransmission (`tx_start = "linux"`: nothing in flight, but the window's segments still
//!   outstanding), which Algorithm 4 handles.
//! - **Initialisation** (Algorithm 6): QLevel = highest level; at the first RTT sample,
//!   ssthresh = EncodingRate\[QLevel\] × RTT × 1.2.
//! - **Congestion avoidance** (Algorithm 7): on each new ACK with cwnd ≥ ssthresh,
//!   cwnd = EncodingRate\[QLevel\] × RTT̂ × 1.2, with RTT̂ = ψ·RTT̂ + (1 − ψ)·RTT (ψ = 0.99, §III-D,
//!   §IV-B). Slow start below ssthresh is Reno's.
//!
//! Without a ladder (an ordinary application) TcpHas is classical TCP (NewReno), the paper's
//! rule. Choices the paper leaves open, made here: rates are converted to packets with the
//! sender's MSS and rounded down (at least 2 for ssthresh, 1 for cwnd); RTT̂ starts at the first
//! RTT sample; the OFF-period test uses the current RTO and the time since the last
//! transmission, as Linux's restart after idle does.

use super::tibet::{Tibet, TibetConfig, TibetSamples};
use super::{AckSample, AppData, CaEvent, CaState, CcState, CongestionControl};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// cwnd after a retransmission timeout: Algorithm 4 line 11 (and Algorithm 1 line 9),
/// "cwnd = initial_cwnd ▷ i.e. 2 × MSS".
pub const RTO_CWND_PKTS: u32 = 2;

/// Parameters of TcpHas (defaults: the paper's §IV-B).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct TcpHasConfig {
    /// Pole of TIBET's two low-pass filters (0.8).
    pub alpha: f64,
    /// Constant gain of the second low-pass filter on the bandwidth estimate (0.99).
    pub gamma: f64,
    /// RTT smoothing for Algorithm 7 (ψ = 0.99).
    pub psi: f64,
    /// Shaping rate as a multiple of the encoding bitrate (1.2, from Trickle).
    pub shaping_factor: f64,
    /// Which ACKs are samples of the TIBET estimator: `every-ack` (default), `westwood` or
    /// `new-data` (the readings and their arguments: [`super::tibet`]).
    pub samples: TibetSamples,
}

impl Default for TcpHasConfig {
    fn default() -> Self {
        TcpHasConfig {
            alpha: 0.8,
            gamma: 0.99,
            psi: 0.99,
            shaping_factor: 1.2,
            samples: TibetSamples::EveryAck,
        }
    }
}

impl TcpHasConfig {
    pub fn check(&self) -> Result<(), (String, String)> {
        check_filter_pole("alpha", self.alpha)?;
        check_filter_pole("gamma", self.gamma)?;
        check_filter_pole("psi", self.psi)?;
        check_shaping_factor(self.shaping_factor)
    }
}

/// A low-pass filter pole must lie in [0, 1).
pub(super) fn check_filter_pole(field: &str, v: f64) -> Result<(), (String, String)> {
    if (0.0..1.0).contains(&v) {
        Ok(())
    } else {
        Err((field.into(), "must be at least 0 and less than 1".into()))
    }
}

/// The shaping rate's multiple of the encoding bitrate must lie in (0, 10].
pub(super) fn check_shaping_factor(v: f64) -> Result<(), (String, String)> {
    if v > 0.0 && v <= 10.0 {
        Ok(())
    } else {
        Err((
            "shaping_factor".into(),
            "must be greater than 0 and at most 10".into(),
        ))
    }
}

/// The encoding ladder as the algorithms use it: ascending, without zeros or duplicates.
pub(super) fn ladder_of(data: &AppData) -> Vec<u64> {
    let mut ladder = data.encoding_bitrates_bps.clone();
    ladder.retain(|&r| r > 0);
    ladder.sort_unstable();
    ladder.dedup();
    ladder
}

/// Algorithm 3: the highest level whose encoding bitrate is ≤ `bwe_bps` (0 if none).
/// `ladder_bps` is ascending.
pub fn qlevel(ladder_bps: &[u64], bwe_bps: f64) -> usize {
    ladder_bps
        .iter()
        .rposition(|&r| r as f64 <= bwe_bps)
        .unwrap_or(0)
}

/// `rate_bps × rtt_ns` in packets of `mss` bytes.
pub fn rate_rtt_pkts(rate_bps: f64, rtt_ns: u64, mss: u32) -> f64 {
    rate_bps * rtt_ns as f64 / 8e9 / mss.max(1) as f64
}

pub struct TcpHas {
    cfg: TcpHasConfig,
    estimator: Tibet,
    ladder_bps: Vec<u64>,
    qlevel: usize,
    /// RTT̂ of Algorithm 7, ns (None before the first sample)
    rtt_hat_ns: Option<f64>,
    /// Algorithm 6 applied (the first RTT sample was seen with a ladder)
    initialised: bool,
}

impl TcpHas {
    pub fn new(cfg: TcpHasConfig) -> Self {
        let estimator = Tibet::new(TibetConfig {
            alpha: cfg.alpha,
            gamma: Some(cfg.gamma),
            samples: cfg.samples,
        });
        TcpHas {
            cfg,
            estimator,
            ladder_bps: Vec::new(),
            qlevel: 0,
            rtt_hat_ns: None,
            initialised: false,
        }
    }

    /// The current optimal-level estimate (Algorithm 3's output).
    pub fn qlevel(&self) -> usize {
        self.qlevel
    }

    /// The shaping rate EncodingRate\[QLevel\] × 1.2, bits per second.
    pub fn shaping_rate_bps(&self) -> f64 {
        self.ladder_bps[self.qlevel] as f64 * self.cfg.shaping_factor
    }

    fn has_ladder(&self) -> bool {
        !self.ladder_bps.is_empty()
    }

    /// Algorithm 3 on the current estimate, then ssthresh = shaping rate × RTT_min (eq. 1).
    fn shaped_ssthresh(&mut self, tp: &CcState) -> u32 {
        self.qlevel = qlevel(&self.ladder_bps, self.estimator.bwe_bps());
        let rtt = if tp.min_rtt_ns == u64::MAX {
            tp.srtt_ns
        } else {
            tp.min_rtt_ns
        };
        (rate_rtt_pkts(self.shaping_rate_bps(), rtt, tp.mss_bytes) as u32).max(2)
    }
}

impl CongestionControl for TcpHas {
    fn name(&self) -> &'static str {
        "tcphas"
    }

    fn ssthresh(&mut self, tp: &CcState) -> u32 {
        if !self.has_ladder() {
            return (tp.cwnd_pkts / 2).max(2);
        }
        // Algorithm 4
        self.shaped_ssthresh(tp)
    }

    fn cong_avoid(&mut self, tp: &mut CcState, acked_pkts: u32) {
        if !self.has_ladder() || tp.in_slow_start() {
            if tp.is_cwnd_limited() {
                tp.reno_grow(acked_pkts);
            }
            return;
        }
        // Algorithm 7: cwnd follows the shaping rate × RTT̂
        if let Some(rtt_hat) = self.rtt_hat_ns {
            let pkts = rate_rtt_pkts(self.shaping_rate_bps(), rtt_hat as u64, tp.mss_bytes);
            tp.cwnd_pkts = (pkts as u32).clamp(1, tp.cwnd_clamp_pkts);
            tp.cwnd_cnt = 0;
        }
    }

    fn set_state(&mut self, tp: &mut CcState, new_state: CaState) {
        // Algorithm 1 (as Algorithm 4 uses it): cwnd = min(cwnd, ssthresh) after a fast
        // retransmit, applied when recovery (or a tail-loss probe's CWR reduction) ends
        if self.has_ladder() && tp.ca_state.completes_cwr(new_state) {
            tp.cwnd_pkts = tp.ssthresh_pkts.min(tp.prior_cwnd_pkts).max(1);
            tp.cwnd_cnt = 0;
        }
    }

    fn cwnd_event(&mut self, tp: &mut CcState, event: CaEvent) {
        // Algorithm 4: after an RTO, cwnd = initial_cwnd (2 × MSS); ssthresh was set by
        // `ssthresh` (the shaped value)
        if event == CaEvent::Loss && self.has_ladder() {
            tp.cwnd_pkts = RTO_CWND_PKTS.min(tp.cwnd_clamp_pkts);
            tp.cwnd_cnt = 0;
            return;
        }
        // Algorithm 5: after an OFF period longer than the RTO, no idle reduction: update the
        // level and ssthresh, and cwnd = ssthresh
        if event == CaEvent::TxStart
            && self.has_ladder()
            && tp.off_period_longer_than_rto()
            && tp.srtt_ns > 0
        {
            tp.ssthresh_pkts = self.shaped_ssthresh(tp);
            tp.cwnd_pkts = tp.ssthresh_pkts.min(tp.cwnd_clamp_pkts);
            tp.cwnd_cnt = 0;
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
        if let Some(rtt) = sample.rtt_ns {
            let psi = self.cfg.psi;
            self.rtt_hat_ns = Some(match self.rtt_hat_ns {
                None => rtt as f64,
                Some(r) => psi * r + (1.0 - psi) * rtt as f64,
            });
            // Algorithm 6: the first RTT sample sets ssthresh for the highest level
            if self.has_ladder() && !self.initialised {
                self.initialised = true;
                let top = self.ladder_bps.len() - 1;
                let pkts = rate_rtt_pkts(
                    self.ladder_bps[top] as f64 * self.cfg.shaping_factor,
                    rtt,
                    tp.mss_bytes,
                );
                tp.ssthresh_pkts = (pkts as u32).max(2);
            }
        }
    }

    fn set_app_data(&mut self, _tp: &mut CcState, data: &AppData) {
        self.ladder_bps = ladder_of(data);
        if let Some(&top) = self.ladder_bps.last() {
            // Algorithm 6 and §IV-B: QLevel and B̂we start at the highest level
            self.qlevel = self.ladder_bps.len() - 1;
            self.estimator.set_estimate_bps(top as f64);
            self.initialised = false;
        }
    }
}

impl crate::sim::registry::Algorithm for TcpHasConfig {
    type Config = TcpHasConfig;
    const NAME: &'static str = "tcphas";
    const SOURCE: &'static str = "TcpHas paper (Ben Ameur, Mory, Cousin), §III, Algorithms 2-7";
    const SUMMARY: &'static str =
        "TcpHas (TcpHas paper §III): shapes to 1.2 × the estimated optimal encoding bitrate.";
    fn check(config: &TcpHasConfig) -> Result<(), (String, String)> {
        config.check()
    }
}

impl super::CcAlgorithm for TcpHasConfig {
    fn build(config: &TcpHasConfig, _rng: crate::sim::rng::Stream) -> Box<dyn CongestionControl> {
        Box::new(TcpHas::new(config.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::cc::newreno::NewReno;

    const MS: u64 = 1_000_000;
    const MSS: u32 = 1000;
    /// The paper's ladder (Table I), kbps.
    const LADDER: [u64; 5] = [248_000, 456_000, 928_000, 1_632_000, 4_256_000];

    fn with_ladder() -> (TcpHas, CcState) {
        let mut cc = TcpHas::new(Default::default());
        let mut tp = CcState::new(10, MSS);
        cc.set_app_data(
            &mut tp,
            &AppData {
                encoding_bitrates_bps: LADDER.to_vec(),
            },
        );
        (cc, tp)
    }

    fn ack(cc: &mut TcpHas, tp: &mut CcState, now_ns: u64, pkts: u32, rtt_ns: u64) {
        tp.now_ns = now_ns;
        tp.min_rtt_ns = tp.min_rtt_ns.min(rtt_ns);
        tp.srtt_ns = rtt_ns;
        cc.pkts_acked(
            tp,
            &AckSample {
                pkts_acked: pkts,
                bytes_acked: pkts as u64 * MSS as u64,
                rtt_ns: Some(rtt_ns),
                in_flight_pkts: 10,
            },
        );
        cc.in_ack_event(tp, 0);
    }

    #[test]
    fn qlevel_is_the_highest_level_not_above_the_estimate() {
        assert_eq!(qlevel(&LADDER, 1_000_000.0), 2);
        assert_eq!(qlevel(&LADDER, 928_000.0), 2);
        assert_eq!(qlevel(&LADDER, 100_000.0), 0);
        assert_eq!(qlevel(&LADDER, 1e9), 4);
    }

    #[test]
    fn first_rtt_sets_ssthresh_for_the_highest_level() {
        let (mut cc, mut tp) = with_ladder();
        assert_eq!(cc.qlevel(), 4);
        ack(&mut cc, &mut tp, 100 * MS, 1, 100 * MS);
        // 4.256 Mbps × 1.2 × 100 ms / (8 × 1000 B) = 63.84 → 63 packets
        assert_eq!(tp.ssthresh_pkts, 63);
    }

    #[test]
    fn a_congestion_event_shapes_ssthresh_to_the_estimated_level() {
        let (mut cc, mut tp) = with_ladder();
        // ACKs of one 1000-byte packet every 8 ms: 1 Mbps, estimate converges towards it
        for k in 1..2000 {
            ack(&mut cc, &mut tp, k * 8 * MS, 1, 100 * MS);
        }
        let s = cc.ssthresh(&tp);
        assert_eq!(cc.qlevel(), 2, "1 Mbps estimate → level 2 (928 kbps)");
        // 928 kbps × 1.2 × 100 ms (RTT_min) / 8000 bits = 13.9 → 13
        assert_eq!(s, 13);
    }

    #[test]
    fn after_an_off_period_longer_than_the_rto_cwnd_equals_ssthresh() {
        let (mut cc, mut tp) = with_ladder();
        for k in 1..2000 {
            ack(&mut cc, &mut tp, k * 8 * MS, 1, 100 * MS);
        }
        tp.cwnd_pkts = 40;
        tp.rto_ns = 300 * MS;
        tp.last_send_ns = 16 * 1000 * MS;
        tp.now_ns = tp.last_send_ns + 2000 * MS;
        // an RTO's retransmission (`tx_start = "linux"`): nothing in flight, but segments
        // outstanding; not an OFF period
        tp.in_flight_pkts = 5;
        cc.cwnd_event(&mut tp, CaEvent::TxStart);
        assert_eq!((tp.cwnd_pkts, cc.qlevel()), (40, 4));
        // new data with nothing outstanding
        tp.in_flight_pkts = 0;
        cc.cwnd_event(&mut tp, CaEvent::TxStart);
        // Algorithm 5: QLevel 2, ssthresh = 928 kbps × 1.2 × RTT_min, cwnd = ssthresh
        assert_eq!(cc.qlevel(), 2);
        assert_eq!((tp.cwnd_pkts, tp.ssthresh_pkts), (13, 13));
        // a short OFF period (< RTO) changes nothing
        tp.cwnd_pkts = 40;
        tp.now_ns = tp.last_send_ns + 100 * MS;
        cc.cwnd_event(&mut tp, CaEvent::TxStart);
        assert_eq!(tp.cwnd_pkts, 40);
    }

    #[test]
    fn congestion_avoidance_tracks_the_shaping_rate() {
        let (mut cc, mut tp) = with_ladder();
        for k in 1..2000 {
            ack(&mut cc, &mut tp, k * 8 * MS, 1, 100 * MS);
        }
        tp.ssthresh_pkts = cc.ssthresh(&tp);
        tp.cwnd_pkts = tp.ssthresh_pkts;
        // the RTT grows to 200 ms: RTT̂ follows slowly (ψ = 0.99) and cwnd with it
        for k in 0..500 {
            ack(&mut cc, &mut tp, 16_000 * MS + k * MS, 1, 200 * MS);
            cc.cong_avoid(&mut tp, 1);
        }
        let rtt_hat = cc.rtt_hat_ns.unwrap();
        let want = (928_000.0 * 1.2 * rtt_hat / 8e9 / MSS as f64) as u32;
        assert_eq!(tp.cwnd_pkts, want);
        assert!(rtt_hat > 190.0 * MS as f64, "ψ = 0.99 over 500 samples");
        assert!(
            tp.cwnd_pkts > 20,
            "cwnd ≈ 928 kbps × 1.2 × 200 ms = 27.8 packets"
        );
    }

    #[test]
    fn an_rto_sets_cwnd_to_two_segments_and_ssthresh_to_the_shaped_value() {
        let (mut cc, mut tp) = with_ladder();
        for k in 1..2000 {
            ack(&mut cc, &mut tp, k * 8 * MS, 1, 100 * MS);
        }
        tp.cwnd_pkts = 40;
        // the sender's order on an RTO: ssthresh, cwnd = 1, then CA_EVENT_LOSS
        tp.ssthresh_pkts = cc.ssthresh(&tp);
        tp.cwnd_pkts = 1;
        cc.cwnd_event(&mut tp, CaEvent::Loss);
        assert_eq!((tp.cwnd_pkts, tp.ssthresh_pkts), (2, 13));
        // without a ladder: classical TCP, the sender's loss window stays
        let mut reno = TcpHas::new(Default::default());
        let mut tq = CcState::new(10, MSS);
        tq.cwnd_pkts = 1;
        reno.cwnd_event(&mut tq, CaEvent::Loss);
        assert_eq!(tq.cwnd_pkts, 1);
    }

    #[test]
    fn algorithm_7_restores_cwnd_on_the_first_ack_after_a_fast_retransmit() {
        let (mut cc, mut tp) = with_ladder();
        for k in 1..2000 {
            ack(&mut cc, &mut tp, k * 8 * MS, 1, 100 * MS);
        }
        // a standing queue: the RTT is 150 ms (still 1 Mbps of ACKs), RTT̂ follows
        for k in 0..1000 {
            ack(&mut cc, &mut tp, 16_000 * MS + k * 8 * MS, 1, 150 * MS);
        }
        tp.ssthresh_pkts = cc.ssthresh(&tp);
        tp.cwnd_pkts = tp.ssthresh_pkts;
        cc.cong_avoid(&mut tp, 1);
        let shaped = tp.cwnd_pkts;
        // a loss: ssthresh = rate × RTT_min × 1.2 (100 ms), recovery ends at cwnd = ssthresh
        tp.prior_cwnd_pkts = shaped;
        tp.ssthresh_pkts = cc.ssthresh(&tp);
        tp.ca_state = CaState::Recovery;
        cc.set_state(&mut tp, CaState::Open);
        tp.ca_state = CaState::Open;
        assert_eq!(tp.cwnd_pkts, 13, "928 kbps × 1.2 × 100 ms");
        assert!(shaped > tp.cwnd_pkts, "{shaped}");
        // the next ACK in congestion avoidance (cwnd ≥ ssthresh) sets cwnd = rate × RTT̂ × 1.2:
        // the reduction is undone at once, the standing queue's RTT included
        ack(&mut cc, &mut tp, 24_008 * MS, 1, 150 * MS);
        cc.cong_avoid(&mut tp, 1);
        assert_eq!(tp.cwnd_pkts, shaped);
    }

    #[test]
    fn table_i_levels_are_further_apart_than_the_shaping_factor() {
        // a flow shaped at level n sends at most 1.2 × r_n, below r_{n+1}: its ACK rate cannot
        // make Algorithm 3 choose level n + 1 (docs/algorithms/tcphas.md)
        let f = TcpHasConfig::default().shaping_factor;
        for w in LADDER.windows(2) {
            let ratio = w[1] as f64 / w[0] as f64;
            assert!(ratio >= 1.75 && ratio > f, "{w:?}: {ratio}");
            assert!(
                qlevel(&LADDER, f * w[0] as f64) < LADDER.iter().position(|&r| r == w[1]).unwrap()
            );
        }
    }

    #[test]
    fn without_a_ladder_tcphas_is_newreno() {
        let mut has = TcpHas::new(Default::default());
        let mut reno = NewReno::new(Default::default());
        let mut a = CcState::new(10, MSS);
        let mut b = CcState::new(10, MSS);
        for tp in [&mut a, &mut b] {
            tp.ssthresh_pkts = 30;
            tp.is_cwnd_limited = true;
        }
        for k in 0..200u64 {
            ack(&mut has, &mut a, k * MS, 1, 50 * MS);
            b.now_ns = a.now_ns;
            has.cong_avoid(&mut a, 1);
            reno.cong_avoid(&mut b, 1);
            a.max_packets_out = a.cwnd_pkts;
            b.max_packets_out = b.cwnd_pkts;
            assert_eq!(a.cwnd_pkts, b.cwnd_pkts);
        }
        assert_eq!(has.ssthresh(&a), reno.ssthresh(&b));
    }
}
