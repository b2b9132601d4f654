//! ELASTIC (De Cicco, Caldaralo, Palmisano, Mascolo, Packet Video 2013), as
//! the goDASH and TAPAS implementations have it (the paper's text was not readable).
//!
//! A feedback-linearisation controller that drives the buffer q toward the set-point q_T and
//! never idles (no OFF periods; only the common buffer cap can make it wait). When a request is
//! issued at t_k:
//! 1. ĥ = harmonic mean of the last 5 segment throughputs;
//! 2. q_I ← q_I + Δt_k·(q_k − q_T), Δt_k = time since the last update;
//! 3. r_k = ĥ / (1 − k_p·q_k − k_i·q_I);
//! 4. anti-windup: if the denominator ≤ 0 or r ≥ r_M, take r_M and undo this step's
//!    integration; if r ≤ r_1, take r_1 and undo it;
//! 5. level = the highest r ≤ r_k.
//!
//! Parameters (defaults): k_p = 0.01 s⁻¹, k_i = 0.001 s⁻² (goDASH), window 5 (TAPAS, goDASH),
//! q_T = 10 s (the TAPAS-derived value; the paper's is unverified).

use super::{check_range, harmonic_mean, BufferState, Player, PlayerContext, SegmentResult, When};
use crate::has::video::highest_at_most;
use crate::sim::units::Duration;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Parameters of ELASTIC.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct ElasticConfig {
    /// Proportional gain k_p, per second (0 to 1). Default 0.01 (goDASH).
    pub kp: f64,
    /// Integral gain k_i, per second² (0 to 1). Default 0.001 (goDASH).
    pub ki: f64,
    /// Buffer set-point q_T. Default "10s" (TAPAS-derived; paper value unverified).
    pub q_target: Duration,
    /// Throughput samples in the harmonic mean (1 to 100). Default 5 (TAPAS, goDASH).
    pub window: u32,
}

impl Default for ElasticConfig {
    fn default() -> Self {
        ElasticConfig {
            kp: 0.01,
            ki: 0.001,
            q_target: Duration(10_000_000_000),
            window: 5,
        }
    }
}

impl ElasticConfig {
    pub fn check(&self) -> Result<(), (String, String)> {
        check_range("kp", self.kp, 0.0, 1.0)?;
        check_range("ki", self.ki, 0.0, 1.0)?;
        check_range("window", self.window as f64, 1.0, 100.0)?;
        Ok(())
    }
}

pub struct Elastic {
    cfg: ElasticConfig,
    ctx: PlayerContext,
    samples: VecDeque<f64>,
    q_i: f64,
    last_update_ns: Option<u64>,
    estimate: Option<f64>,
}

impl Elastic {
    pub fn new(cfg: ElasticConfig, ctx: PlayerContext) -> Self {
        Elastic {
            cfg,
            ctx,
            samples: VecDeque::new(),
            q_i: 0.0,
            last_update_ns: None,
            estimate: None,
        }
    }
    /// The integral of the buffer error, s².
    pub fn integral(&self) -> f64 {
        self.q_i
    }
}

impl Player for Elastic {
    fn name(&self) -> &'static str {
        "elastic"
    }

    fn choose(&mut self, st: &BufferState) -> usize {
        let Some(h) = harmonic_mean(self.samples.iter().copied()) else {
            self.last_update_ns = Some(st.now_ns);
            return 0;
        };
        self.estimate = Some(h);
        let dt = self
            .last_update_ns
            .map_or(0.0, |t| (st.now_ns - t) as f64 / 1e9);
        self.last_update_ns = Some(st.now_ns);
        let q = st.buffer_s();
        let q_i = self.q_i + dt * (q - self.cfg.q_target.0 as f64 / 1e9);
        let den = 1.0 - self.cfg.kp * q - self.cfg.ki * q_i;
        let ladder = &self.ctx.bitrates_bps;
        let top = *ladder.last().unwrap() as f64;
        if den <= 0.0 || h / den >= top {
            return self.ctx.top();
        }
        let r = h / den;
        if r <= ladder[0] as f64 {
            return 0;
        }
        self.q_i = q_i;
        highest_at_most(ladder, r)
    }

    fn downloaded(&mut self, seg: &SegmentResult, _st: &BufferState) -> When {
        self.samples.push_back(seg.throughput_bps());
        while self.samples.len() > self.cfg.window as usize {
            self.samples.pop_front();
        }
        When::Now
    }

    fn estimate_bps(&self) -> Option<f64> {
        self.estimate
    }
}

impl crate::sim::registry::Algorithm for Elastic {
    type Config = ElasticConfig;
    const NAME: &'static str = "elastic";
    const SOURCE: &'static str = "De Cicco et al., ELASTIC, Packet Video 2013";
    const SUMMARY: &'static str =
        "ELASTIC, feedback-linearisation buffer control (De Cicco et al., Packet Video 2013).";
    fn check(config: &ElasticConfig) -> Result<(), (String, String)> {
        config.check()
    }
}

impl super::AbrAlgorithm for Elastic {
    fn build(
        config: &ElasticConfig,
        ctx: PlayerContext,
        _rng: crate::sim::rng::Stream,
    ) -> Box<dyn Player> {
        Box::new(Elastic::new(config.clone(), ctx))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::has::playback::Phase;
    const S: u64 = 1_000_000_000;

    fn st(now: u64, buffer_s: u64) -> BufferState {
        BufferState {
            now_ns: now,
            buffer_ns: buffer_s * S,
            phase: Phase::Playing,
            next_segment: 1,
            segments: 100,
        }
    }
    fn seg(bps: u64) -> SegmentResult {
        SegmentResult {
            index: 0,
            level: 0,
            bytes: bps / 8,
            media_ns: 2 * S,
            request_ns: 0,
            first_byte_ns: 0,
            done_ns: S,
        }
    }

    #[test]
    fn the_rate_rises_above_the_estimate_when_the_buffer_is_above_target_and_windup_is_undone() {
        let ctx = PlayerContext {
            bitrates_bps: (1..=20).map(|k| k * 250_000).collect(),
            segment_ns: 2 * S,
            buffer_cap_ns: 60 * S,
            video: None,
        };
        let mut p = Elastic::new(Default::default(), ctx);
        assert_eq!(p.choose(&st(0, 0)), 0);
        assert_eq!(p.downloaded(&seg(2_000_000), &st(S, 2)), When::Now);
        // at q = q_T, q_I = 0: r = ĥ / (1 − 0.01·10) = 2.22 Mbps → 2.0 Mbps
        let l = p.choose(&st(S, 10));
        assert_eq!(l, 7);
        // 10 s later at q = 30 s: q_I = 10·20 = 200, den = 1 − 0.3 − 0.2 = 0.5 → 4 Mbps
        assert_eq!(p.choose(&st(11 * S, 30)), 15);
        assert!((p.integral() - 200.0).abs() < 1e-9);
        // much later, the denominator would go negative: top level, integration undone
        assert_eq!(p.choose(&st(1000 * S, 30)), 19);
        assert!((p.integral() - 200.0).abs() < 1e-9);
    }

    #[test]
    fn the_estimate_is_the_harmonic_mean_of_the_last_window() {
        let ctx = PlayerContext {
            bitrates_bps: vec![100_000],
            segment_ns: 2 * S,
            buffer_cap_ns: 60 * S,
            video: None,
        };
        let mut p = Elastic::new(Default::default(), ctx);
        for bps in [
            9_000_000, 1_000_000, 4_000_000, 4_000_000, 4_000_000, 4_000_000,
        ] {
            p.downloaded(&seg(bps), &st(0, 0));
        }
        p.choose(&st(S, 10));
        // the 9 Mbps sample left the window of 5: 5 / (1/1 + 4/4) = 2.5 Mbps
        assert!((p.estimate_bps().unwrap() - 2_500_000.0).abs() < 1.0);
    }
}
