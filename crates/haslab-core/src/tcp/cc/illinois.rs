//! TCP-Illinois (Liu, Başar, Srikant, Performance Evaluation 2008), as Linux
//! net/ipv4/tcp_illinois.c.
//!
//! Loss-based AIMD whose additive increase α and multiplicative decrease β are functions of
//! the average queuing delay `da` relative to the largest seen `dm`, updated once per RTT:
//! - `dm = max_rtt − base_rtt`, `da = mean RTT of the round − base_rtt` (base_rtt, max_rtt: the
//!   smallest and largest RTT ever; max_rtt is never aged, as in Linux).
//! - α, with `d1 = dm/100`: α = `alpha_max` while da ≤ d1 and delay never rose above d1; after
//!   it did, α returns to `alpha_max` only after `theta` = 5 consecutive rounds with da ≤ d1;
//!   otherwise `α = (dm − d1)·α_max / ((dm − d1) + (da − d1)·(α_max − α_min)/α_min)`, which
//!   falls from α_max at da = d1 to α_min at da = dm.
//! - β, with `d2 = dm/10`, `d3 = 8·dm/10`: β_min if da ≤ d2, β_max if da ≥ d3, linear between.
//! - While cwnd < `win_thresh` = 15: α = 1, β = 1/2 (Reno).
//!
//! Constants: α_min = 0.3, α_max = 10, α_base = 1, β_min = 1/8, β_max = β_base = 1/2,
//! win_thresh = 15 segments, theta = 5 rounds. Fixed point as Linux: α in 1/128, β in 1/64,
//! RTTs in µs capped at 2^32/α_max (≈ 3.3 s).
//!
//! Rules: slow start as Reno; congestion avoidance adds α/cwnd per acked packet (Linux
//! accumulates `cwnd_cnt·α`); loss: ssthresh = max(cwnd − β·cwnd, 2); RTO (Loss state): α = 1,
//! β = 1/2 and the round restarts. Growth is gated by `tcp_is_cwnd_limited`; the round update
//! is not.
//!
//! Differences from Linux: none intended beyond ns time. ns-3's TcpIllinois takes delays in
//! integer milliseconds and reduces from bytes in flight (ns-3 tcp-illinois.cc).

use super::{AckSample, CaState, CcState, CongestionControl};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Parameters of Illinois (the constants of tcp_illinois.c).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct IllinoisConfig {
    /// Smallest additive increase, packets per RTT (quantised to 1/128; > 0).
    pub alpha_min: f64,
    /// Largest additive increase, packets per RTT (quantised to 1/128; ≥ alpha_min, ≤ 100).
    pub alpha_max: f64,
    /// Smallest decrease factor (quantised to 1/64; > 0).
    pub beta_min: f64,
    /// Largest decrease factor, also Reno's below win_thresh (quantised to 1/64;
    /// ≥ beta_min, < 1).
    pub beta_max: f64,
    /// Below this cwnd (segments) Illinois behaves as Reno.
    pub win_thresh: u32,
    /// Rounds of low delay before α returns to alpha_max.
    pub theta: u32,
}

impl Default for IllinoisConfig {
    fn default() -> Self {
        IllinoisConfig {
            alpha_min: 0.3,
            alpha_max: 10.0,
            beta_min: 0.125,
            beta_max: 0.5,
            win_thresh: 15,
            theta: 5,
        }
    }
}

impl IllinoisConfig {
    pub fn check(&self) -> Result<(), (String, String)> {
        let err = |f: &str, m: &str| Err((f.to_string(), m.to_string()));
        let at_least = |x: f64, min: f64| x.is_finite() && x >= min;
        if !at_least(self.alpha_min * ALPHA_SCALE as f64, 1.0) {
            return err("alpha_min", "must be at least 1/128 (Linux: 0.3)");
        }
        if !(self.alpha_max >= self.alpha_min && self.alpha_max <= 100.0) {
            return err("alpha_max", "must be between alpha_min and 100 (Linux: 10)");
        }
        if !at_least(self.beta_min * BETA_SCALE as f64, 1.0) {
            return err("beta_min", "must be at least 1/64 (Linux: 0.125)");
        }
        if !(self.beta_max >= self.beta_min && self.beta_max < 1.0) {
            return err(
                "beta_max",
                "must be at least beta_min and less than 1 (Linux: 0.5)",
            );
        }
        Ok(())
    }
}

const ALPHA_SHIFT: u32 = 7;
const ALPHA_SCALE: u64 = 1 << ALPHA_SHIFT;
const BETA_SHIFT: u32 = 6;
const BETA_SCALE: u64 = 1 << BETA_SHIFT;

pub struct Illinois {
    cfg: IllinoisConfig,
    alpha_min: u64,
    alpha_max: u64,
    beta_min: u64,
    beta_max: u64,
    rtt_max_us: u64,
    sum_rtt_us: u64,
    cnt_rtt: u32,
    base_rtt_us: u64,
    max_rtt_us: u64,
    end_seq: u64,
    /// α in 1/128.
    alpha: u64,
    /// β in 1/64.
    beta: u64,
    /// Packets acked by the current ACK.
    acked: u32,
    rtt_above: bool,
    rtt_low: u32,
}

impl Illinois {
    pub fn new(cfg: IllinoisConfig) -> Self {
        let q = |x: f64, s: u64| ((x * s as f64).round() as u64).max(1);
        let alpha_max = q(cfg.alpha_max, ALPHA_SCALE);
        Illinois {
            alpha_min: q(cfg.alpha_min, ALPHA_SCALE),
            alpha_max,
            beta_min: q(cfg.beta_min, BETA_SCALE),
            beta_max: q(cfg.beta_max, BETA_SCALE),
            rtt_max_us: u32::MAX as u64 / alpha_max,
            sum_rtt_us: 0,
            cnt_rtt: 0,
            base_rtt_us: 0x7fff_ffff,
            max_rtt_us: 0,
            end_seq: 0,
            alpha: alpha_max,
            beta: q(cfg.beta_max, BETA_SCALE),
            acked: 0,
            rtt_above: false,
            rtt_low: 0,
            cfg,
        }
    }

    /// Current additive increase α, packets per RTT.
    pub fn alpha(&self) -> f64 {
        self.alpha as f64 / ALPHA_SCALE as f64
    }
    /// Current decrease factor β.
    pub fn beta(&self) -> f64 {
        self.beta as f64 / BETA_SCALE as f64
    }

    fn rtt_reset(&mut self, tp: &CcState) {
        self.end_seq = tp.snd_nxt_bytes;
        self.cnt_rtt = 0;
        self.sum_rtt_us = 0;
    }

    /// Linux `alpha()`.
    fn compute_alpha(&mut self, da: u64, dm: u64) -> u64 {
        let d1 = dm / 100;
        if da <= d1 {
            if !self.rtt_above {
                return self.alpha_max;
            }
            // wait for theta good rounds before going back to alpha_max
            self.rtt_low += 1;
            if self.rtt_low < self.cfg.theta {
                return self.alpha;
            }
            self.rtt_low = 0;
            self.rtt_above = false;
            return self.alpha_max;
        }
        self.rtt_above = true;
        let dm = dm - d1;
        let da = da - d1;
        (dm * self.alpha_max)
            / (dm + (da * (self.alpha_max - self.alpha_min)) / self.alpha_min).max(1)
    }

    /// Linux `beta()`.
    fn compute_beta(&self, da: u64, dm: u64) -> u64 {
        let d2 = dm / 10;
        if da <= d2 {
            return self.beta_min;
        }
        let d3 = (8 * dm) / 10;
        if da >= d3 || d3 <= d2 {
            return self.beta_max;
        }
        (self.beta_min * d3 + (self.beta_max - self.beta_min) * da - self.beta_max * d2) / (d3 - d2)
    }

    /// Linux `update_params`, once per RTT.
    fn update_params(&mut self, tp: &CcState) {
        if tp.cwnd_pkts < self.cfg.win_thresh {
            self.alpha = ALPHA_SCALE;
            self.beta = self.beta_max;
        } else if self.cnt_rtt > 0 {
            let dm = self.max_rtt_us - self.base_rtt_us;
            let da = (self.sum_rtt_us / self.cnt_rtt as u64).saturating_sub(self.base_rtt_us);
            self.alpha = self.compute_alpha(da, dm);
            self.beta = self.compute_beta(da, dm);
        }
        self.rtt_reset(tp);
    }
}

impl CongestionControl for Illinois {
    fn name(&self) -> &'static str {
        "illinois"
    }

    fn init(&mut self, tp: &mut CcState) {
        let cfg = self.cfg.clone();
        *self = Illinois::new(cfg);
        self.rtt_reset(tp);
    }

    fn ssthresh(&mut self, tp: &CcState) -> u32 {
        let cwnd = tp.cwnd_pkts as u64;
        let decr = (cwnd * self.beta) >> BETA_SHIFT;
        ((cwnd - decr) as u32).max(2)
    }

    fn cong_avoid(&mut self, tp: &mut CcState, acked_pkts: u32) {
        if tp.snd_una_bytes > self.end_seq {
            self.update_params(tp);
        }
        if !tp.is_cwnd_limited() {
            return;
        }
        if tp.growth_in_slow_start() {
            tp.slow_start(acked_pkts);
        } else {
            // cwnd += α/cwnd per acked packet
            tp.cwnd_cnt += self.acked;
            self.acked = 1;
            let delta = (tp.cwnd_cnt as u64 * self.alpha) >> ALPHA_SHIFT;
            if delta >= tp.cwnd_pkts as u64 {
                let inc = (delta / tp.cwnd_pkts as u64) as u32;
                tp.cwnd_pkts = tp.cwnd_pkts.saturating_add(inc).min(tp.cwnd_clamp_pkts);
                tp.cwnd_cnt = 0;
            }
        }
    }

    fn set_state(&mut self, tp: &mut CcState, new_state: CaState) {
        if new_state == CaState::Loss {
            self.alpha = ALPHA_SCALE;
            self.beta = self.beta_max;
            self.rtt_low = 0;
            self.rtt_above = false;
            self.rtt_reset(tp);
        }
    }

    fn pkts_acked(&mut self, _tp: &mut CcState, sample: &AckSample) {
        self.acked = sample.pkts_acked;
        let Some(rtt_ns) = sample.rtt_ns else {
            return;
        };
        let rtt = (rtt_ns / 1000).min(self.rtt_max_us);
        self.base_rtt_us = self.base_rtt_us.min(rtt);
        self.max_rtt_us = self.max_rtt_us.max(rtt);
        self.cnt_rtt += 1;
        self.sum_rtt_us += rtt;
    }
}

impl crate::sim::registry::Algorithm for IllinoisConfig {
    type Config = IllinoisConfig;
    const NAME: &'static str = "illinois";
    const SOURCE: &'static str = "Linux net/ipv4/tcp_illinois.c (Liu, Basar, Srikant 2008)";
    const SUMMARY: &'static str = "TCP-Illinois, Linux net/ipv4/tcp_illinois.c.";
    fn check(config: &IllinoisConfig) -> Result<(), (String, String)> {
        config.check()
    }
}

impl super::CcAlgorithm for IllinoisConfig {
    fn build(config: &IllinoisConfig, _rng: crate::sim::rng::Stream) -> Box<dyn CongestionControl> {
        Box::new(Illinois::new(config.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;
    const MSS: u64 = 1448;

    struct Flow {
        cc: Illinois,
        tp: CcState,
    }

    impl Flow {
        fn new(cwnd: u32) -> Flow {
            let mut tp = CcState::new(10, MSS as u32);
            tp.cwnd_pkts = cwnd;
            tp.ssthresh_pkts = cwnd;
            tp.is_cwnd_limited = true;
            tp.snd_nxt_bytes = 1;
            tp.snd_una_bytes = 1;
            let mut cc = Illinois::new(Default::default());
            cc.init(&mut tp);
            Flow { cc, tp }
        }

        /// One RTT: the window is acked packet by packet. The first ACK ends the previous
        /// round (α and β are updated from it) and carries no RTT sample; the others carry
        /// `rtt_ns`.
        fn round(&mut self, rtt_ns: u64) {
            let n = self.tp.cwnd_pkts as u64;
            self.tp.snd_nxt_bytes = self.tp.snd_una_bytes + n * MSS;
            for i in 0..n {
                self.tp.snd_una_bytes += MSS;
                self.tp.max_packets_out = self.tp.cwnd_pkts;
                self.cc.pkts_acked(
                    &mut self.tp,
                    &AckSample {
                        pkts_acked: 1,
                        bytes_acked: MSS,
                        rtt_ns: (i > 0).then_some(rtt_ns),
                        in_flight_pkts: n as u32,
                    },
                );
                self.cc.cong_avoid(&mut self.tp, 1);
            }
        }

        /// Two rounds whose queuing delay is `frac` of the largest (base 100 ms, max 200 ms):
        /// afterwards α and β reflect `frac`.
        fn level(&mut self, frac: f64) {
            let rtt = (100.0 + 100.0 * frac).round() as u64 * MS;
            self.round(rtt);
            self.round(rtt);
        }
    }

    /// base_rtt = 100 ms, max_rtt = 200 ms.
    fn calibrated() -> Flow {
        let mut f = Flow::new(100);
        f.round(100 * MS);
        f.round(200 * MS);
        f
    }

    #[test]
    fn alpha_and_beta_stay_between_their_bounds_and_move_with_the_queuing_delay() {
        let mut f = calibrated();
        let mut last_alpha = f64::INFINITY;
        let mut last_beta = 0.0;
        for frac in [0.02, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 0.9, 1.0] {
            f.level(frac);
            let (a, b) = (f.cc.alpha(), f.cc.beta());
            assert!((0.28..=10.0).contains(&a), "α {a} at {frac}");
            assert!((0.125..=0.5).contains(&b), "β {b} at {frac}");
            assert!(a < last_alpha, "α rose from {last_alpha} to {a} at {frac}");
            assert!(b >= last_beta, "β fell from {last_beta} to {b} at {frac}");
            last_alpha = a;
            last_beta = b;
        }
        // at the largest delay: α_min and β_max
        assert!((f.cc.alpha() - 0.3).abs() < 0.02, "{}", f.cc.alpha());
        assert_eq!(f.cc.beta(), 0.5);
    }

    #[test]
    fn formulas_at_known_points() {
        let mut f = calibrated();
        // dm = 100 ms, d1 = 1 ms, d2 = 10 ms, d3 = 80 ms. da = 10 ms ≤ d2: β = β_min
        f.level(0.1);
        assert_eq!(f.cc.beta(), 0.125);
        let (a_min, a_max) = (38.0 / 128.0, 10.0); // α_min quantised as Linux: 38/128
        let (dm, da) = (99.0, 9.0); // ms, minus d1
        let alpha = dm * a_max / (dm + da * (a_max - a_min) / a_min);
        assert!(
            (f.cc.alpha() - alpha).abs() < 0.01,
            "{} vs {alpha}",
            f.cc.alpha()
        );
        // da = 45 ms, halfway between d2 and d3: β halfway between 1/8 and 1/2
        f.level(0.45);
        assert!(
            (f.cc.beta() - 0.3125).abs() <= 1.0 / 64.0,
            "{}",
            f.cc.beta()
        );
    }

    #[test]
    fn alpha_returns_to_max_only_after_theta_low_delay_rounds() {
        let mut f = calibrated();
        f.level(0.5);
        let low = f.cc.alpha();
        assert!(low < 1.0);
        // rounds at the base RTT: the update at the start of round k reflects round k − 1
        f.round(100 * MS); // reflects the 0.5 round
        for i in 1..=4 {
            f.round(100 * MS);
            assert_eq!(f.cc.alpha(), low, "after {i} low rounds");
        }
        f.round(100 * MS); // the 5th (theta) low round is counted
        assert_eq!(f.cc.alpha(), 10.0);
        assert_eq!(f.cc.beta(), 0.125);
    }

    #[test]
    fn increase_is_alpha_per_rtt_and_decrease_is_beta() {
        // no queuing delay at all: α = 10 packets per RTT, β = 1/8
        let mut f = Flow::new(100);
        for _ in 0..5 {
            f.round(100 * MS);
        }
        let before = f.tp.cwnd_pkts;
        f.round(100 * MS);
        let gain = f.tp.cwnd_pkts - before;
        assert!((9..=11).contains(&gain), "{gain}");
        let cwnd = f.tp.cwnd_pkts;
        assert_eq!(f.cc.ssthresh(&f.tp), cwnd - ((cwnd * 8) >> 6));
        // at the largest delay β = 1/2
        let mut g = calibrated();
        g.level(1.0);
        let cwnd = g.tp.cwnd_pkts;
        assert_eq!(g.cc.ssthresh(&g.tp), cwnd - cwnd / 2);
    }

    #[test]
    fn small_windows_and_rto_fall_back_to_reno() {
        let mut f = Flow::new(10);
        f.round(100 * MS);
        f.round(100 * MS);
        assert_eq!(f.cc.alpha(), 1.0);
        assert_eq!(f.cc.beta(), 0.5);
        let mut g = Flow::new(100);
        g.round(100 * MS);
        g.round(100 * MS);
        assert_eq!(g.cc.alpha(), 10.0);
        g.cc.set_state(&mut g.tp, CaState::Loss);
        assert_eq!(g.cc.alpha(), 1.0);
        assert_eq!(g.cc.beta(), 0.5);
    }

    #[test]
    fn out_of_range_parameters_are_named() {
        let c = IllinoisConfig {
            beta_max: 1.0,
            ..Default::default()
        };
        assert_eq!(c.check().unwrap_err().0, "beta_max");
        let c = IllinoisConfig {
            alpha_max: 0.1,
            ..Default::default()
        };
        assert_eq!(c.check().unwrap_err().0, "alpha_max");
    }
}
