//! The "Conventional" throughput-based player: the QoE-of-legacy-TCP paper's model (its
//! equations 1–6, §II-A), with the estimator, smoother and quantizer of the PANDA paper's
//! Algorithm 1 as the TAPAS `ConventionalController` implements it.
//!
//! After segment n is downloaded:
//! 1. estimate (eq. 3): x̃ = segment bits / T̃ (actual bytes; T̃ = request → last byte);
//! 2. smooth (eq. 4, EWMA in continuous time): ŷ ← ŷ − min(1, α·T)·(ŷ − x̃), T the actual
//!    inter-request interval T\[n\] of eq. 1 (PANDA paper; TAPAS uses the last download duration
//!    instead); the first sample sets ŷ = x̃;
//! 3. schedule (eqs. 1, 6): T̂ = 0 while B < B_max (buffering state: request at once), else τ
//!    (steady state: one request every τ, i.e. idle for τ − T̃ after the download).
//!
//! When the next request is issued, quantize (eq. 5) with PANDA's dead zone: Δ_up = ε·ŷ,
//! Δ_down = 0 (step up only when the estimate clears the next rate by ε, step down as soon as
//! the current rate exceeds the estimate). The first segment is requested at the lowest level.
//!
//! Parameters (defaults): α = 0.2 s⁻¹, ε = 0.15 (PANDA paper / TAPAS); B_max = 15 s (TAPAS;
//! the PANDA paper's own value is unverified).

use super::{check_range, dead_zone, BufferState, Player, PlayerContext, SegmentResult, When};
use crate::sim::units::Duration;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Parameters of the Conventional player.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct ConventionalConfig {
    /// EWMA smoothing rate α, per second (0 to 10). Default 0.2 (PANDA paper, TAPAS).
    pub alpha: f64,
    /// Up-switch margin ε of the dead-zone quantizer (0 to 1). Default 0.15 (PANDA paper).
    pub epsilon: f64,
    /// Buffer level B_max at which the player leaves the buffering state and requests one
    /// segment every τ. Default "15s" (TAPAS).
    pub b_max: Duration,
}

impl Default for ConventionalConfig {
    fn default() -> Self {
        ConventionalConfig {
            alpha: 0.2,
            epsilon: 0.15,
            b_max: Duration(15_000_000_000),
        }
    }
}

impl ConventionalConfig {
    pub fn check(&self) -> Result<(), (String, String)> {
        check_range("alpha", self.alpha, 0.0, 10.0)?;
        check_range("epsilon", self.epsilon, 0.0, 1.0)?;
        Ok(())
    }
}

pub struct Conventional {
    cfg: ConventionalConfig,
    ctx: PlayerContext,
    y_bps: Option<f64>,
    prev: usize,
    /// request time of the previous segment
    last_request_ns: Option<u64>,
}

impl Conventional {
    pub fn new(cfg: ConventionalConfig, ctx: PlayerContext) -> Self {
        Conventional {
            cfg,
            ctx,
            y_bps: None,
            prev: 0,
            last_request_ns: None,
        }
    }
}

impl Player for Conventional {
    fn name(&self) -> &'static str {
        "conventional"
    }

    fn choose(&mut self, _st: &BufferState) -> usize {
        let level = match self.y_bps {
            None => 0,
            Some(y) => dead_zone(
                &self.ctx.bitrates_bps,
                y,
                self.cfg.epsilon * y,
                0.0,
                self.prev,
            ),
        };
        self.prev = level;
        level
    }

    fn downloaded(&mut self, seg: &SegmentResult, st: &BufferState) -> When {
        let x = seg.throughput_bps();
        // T: the actual inter-request interval that ended with this segment's request (eq. 1);
        // the download duration for the first segment
        let t_ns = match self.last_request_ns {
            Some(prev) if seg.request_ns > prev => seg.request_ns - prev,
            _ => seg.download_ns(),
        };
        self.last_request_ns = Some(seg.request_ns);
        let t_s = t_ns as f64 / 1e9;
        self.y_bps = Some(match self.y_bps {
            None => x,
            Some(y) => y - (self.cfg.alpha * t_s).min(1.0) * (y - x),
        });
        if st.buffer_ns < self.cfg.b_max.0 {
            When::Now
        } else {
            When::At(seg.request_ns + self.ctx.segment_ns)
        }
    }

    fn estimate_bps(&self) -> Option<f64> {
        self.y_bps
    }
}

impl crate::sim::registry::Algorithm for Conventional {
    type Config = ConventionalConfig;
    const NAME: &'static str = "conventional";
    const SOURCE: &'static str =
        "QoE-of-legacy-TCP paper eqs. 1-6 with PANDA's Algorithm 1 (TAPAS parameters)";
    const SUMMARY: &'static str = "The QoE paper's / PANDA paper's conventional throughput-based player (Li et al., JSAC 2014, Algorithm 1).";
    fn check(config: &ConventionalConfig) -> Result<(), (String, String)> {
        config.check()
    }
}

impl super::AbrAlgorithm for Conventional {
    fn build(
        config: &ConventionalConfig,
        ctx: PlayerContext,
        _rng: crate::sim::rng::Stream,
    ) -> Box<dyn Player> {
        Box::new(Conventional::new(config.clone(), ctx))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::has::playback::Phase;
    const S: u64 = 1_000_000_000;

    fn ctx() -> PlayerContext {
        PlayerContext {
            bitrates_bps: vec![1_000_000, 2_000_000, 3_000_000],
            segment_ns: 2 * S,
            buffer_cap_ns: 30 * S,
            video: None,
        }
    }
    fn st(now: u64, buffer: u64) -> BufferState {
        BufferState {
            now_ns: now,
            buffer_ns: buffer,
            phase: Phase::Playing,
            next_segment: 1,
            segments: 100,
        }
    }
    fn seg(req: u64, done: u64, bytes: u64) -> SegmentResult {
        SegmentResult {
            index: 0,
            level: 0,
            bytes,
            media_ns: 2 * S,
            request_ns: req,
            first_byte_ns: req,
            done_ns: done,
        }
    }

    #[test]
    fn first_sample_sets_the_estimate_and_the_quantizer_needs_an_epsilon_margin() {
        let mut p = Conventional::new(Default::default(), ctx());
        assert_eq!(p.choose(&st(0, 0)), 0);
        // 2.2 Mbps measured: going up to 2 Mbps needs 2 / 0.85 = 2.35 Mbps: stay at 1 Mbps
        assert_eq!(p.downloaded(&seg(0, S, 275_000), &st(S, 2 * S)), When::Now);
        assert!((p.estimate_bps().unwrap() - 2.2e6).abs() < 1.0);
        assert_eq!(p.choose(&st(S, 2 * S)), 0);
        // 2.4 Mbps clears the margin: up to 2 Mbps, and kept while the estimate stays ≥ 2 Mbps
        let mut q = Conventional::new(Default::default(), ctx());
        q.downloaded(&seg(0, S, 300_000), &st(S, 2 * S));
        assert_eq!(q.choose(&st(S, 2 * S)), 1);
        q.downloaded(&seg(S, 2 * S, 262_500), &st(2 * S, 2 * S)); // 2.1 Mbps: ŷ = 2.34
        assert_eq!(q.choose(&st(2 * S, 2 * S)), 1, "inside the dead zone: keep");
    }

    #[test]
    fn the_ewma_moves_by_alpha_times_the_inter_request_time_and_steady_state_waits_tau() {
        let mut p = Conventional::new(Default::default(), ctx());
        p.downloaded(&seg(0, S, 500_000), &st(S, 2 * S)); // 4 Mbps
                                                          // requested 2 s after the first: y = 4 − 0.2·2·(4 − 2) = 3.2 Mbps
        let w = p.downloaded(&seg(2 * S, 4 * S, 500_000), &st(4 * S, 20 * S));
        assert!((p.estimate_bps().unwrap() - 3.2e6).abs() < 1.0);
        assert_eq!(
            w,
            When::At(4 * S),
            "B ≥ B_max: next request τ after this one"
        );
        // a long gap: α·T is capped at 1, the estimate jumps to the sample
        p.downloaded(&seg(30 * S, 31 * S, 125_000), &st(31 * S, 20 * S));
        assert!((p.estimate_bps().unwrap() - 1e6).abs() < 1.0);
    }
}
