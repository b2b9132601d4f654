//! PANDA, "probe and adapt" (Li, Zhu, Gahm, Pan, Hu, Begen, Oran, IEEE JSAC 32(4), 2014), as
//! the TU Berlin ns-3 model and Cisco's viper code have it (the paper's own text was not
//! readable).
//!
//! When request n is issued, with T = the actual time since the previous request (clamped to
//! `max_interval` segments: the update discretises a continuous-time law and overshoots when
//! κ·T or α·T nears 1) and x̃ the last segment's throughput:
//! 1. probe: x̂ ← x̂ + κ·T·(w − max(0, x̂ − x̃ + w)), floored at 0 (the TU Berlin form; Cisco's
//!    omits the "+ w" inside the max);
//! 2. smooth: ŷ ← ŷ − α·T·(ŷ − x̂);
//! 3. quantize with the dead zone Δ_up = w + ε·ŷ, Δ_down = w;
//! 4. schedule: T̂ = r·τ/ŷ + β·(B − B_min), floored at 0; the next request is issued
//!    max(T̂, T̃) after this one.
//!
//! The first segment is requested at the lowest level at once; its throughput initialises x̂ and
//! ŷ. κ·T and α·T are capped at 1.
//!
//! Parameters (defaults): κ = 0.14 s⁻¹ (Cisco viper / JSAC table as recalled; TU Berlin uses
//! 0.28), w = 0.3 Mbps, α = 0.2 s⁻¹, β = 0.2 s⁻¹, ε = 0.15, B_min = 26 s (TU Berlin / paper as
//! recalled; Cisco uses 44 s).

use super::{check_range, dead_zone, BufferState, Player, PlayerContext, SegmentResult, When};
use crate::sim::units::{Duration, Rate};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Parameters of PANDA.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct PandaConfig {
    /// Probing convergence rate κ, per second (0 to 10). Default 0.14 (Cisco viper; JSAC).
    pub kappa: f64,
    /// Additive-increase probing rate w. Default "300kbps" (both implementations).
    pub w: Rate,
    /// Smoothing rate α, per second (0 to 10). Default 0.2.
    pub alpha: f64,
    /// Buffer-convergence rate β, per second (0 to 10). Default 0.2.
    pub beta: f64,
    /// Up-switch margin ε of the dead zone (0 to 1). Default 0.15.
    pub epsilon: f64,
    /// Buffer level B_min the scheduler steers to. Default "26s" (TU Berlin; paper as recalled).
    pub b_min: Duration,
    /// The interval T used in the updates is capped at this many segment durations (1 to 100).
    /// Default 3 (project choice: the updates are a discretisation of the paper's continuous-time
    /// law and overshoot when κ·T or α·T nears 1, e.g. after a long pause).
    pub max_interval: f64,
}

impl Default for PandaConfig {
    fn default() -> Self {
        PandaConfig {
            kappa: 0.14,
            w: Rate(300_000),
            alpha: 0.2,
            beta: 0.2,
            epsilon: 0.15,
            b_min: Duration(26_000_000_000),
            max_interval: 3.0,
        }
    }
}

impl PandaConfig {
    pub fn check(&self) -> Result<(), (String, String)> {
        check_range("kappa", self.kappa, 0.0, 10.0)?;
        check_range("alpha", self.alpha, 0.0, 10.0)?;
        check_range("beta", self.beta, 0.0, 10.0)?;
        check_range("epsilon", self.epsilon, 0.0, 1.0)?;
        check_range("max_interval", self.max_interval, 1.0, 100.0)?;
        Ok(())
    }
}

pub struct Panda {
    cfg: PandaConfig,
    ctx: PlayerContext,
    /// x̂, ŷ (bps), set by the first download.
    x_hat: Option<f64>,
    y_hat: f64,
    /// throughput of the last download
    x_tilde: f64,
    prev: usize,
    last_request_ns: Option<u64>,
    /// T̂ of the last request
    target_ns: u64,
}

impl Panda {
    pub fn new(cfg: PandaConfig, ctx: PlayerContext) -> Self {
        Panda {
            cfg,
            ctx,
            x_hat: None,
            y_hat: 0.0,
            x_tilde: 0.0,
            prev: 0,
            last_request_ns: None,
            target_ns: 0,
        }
    }

    /// The target inter-request time T̂ of the last request.
    pub fn target_interval_ns(&self) -> u64 {
        self.target_ns
    }
    /// x̂, the probed share.
    pub fn probed_bps(&self) -> Option<f64> {
        self.x_hat
    }
}

impl Player for Panda {
    fn name(&self) -> &'static str {
        "panda"
    }

    fn choose(&mut self, st: &BufferState) -> usize {
        let level = match self.x_hat {
            None => {
                self.target_ns = 0;
                0
            }
            Some(x_hat) => {
                let w = self.cfg.w.0 as f64;
                let since = self.last_request_ns.map_or(0, |t| st.now_ns - t);
                let t = (since as f64 / 1e9).min(self.cfg.max_interval * self.ctx.tau_s());
                let k = (self.cfg.kappa * t).min(1.0);
                let x = (x_hat + k * (w - (x_hat - self.x_tilde + w).max(0.0))).max(0.0);
                self.x_hat = Some(x);
                let a = (self.cfg.alpha * t).min(1.0);
                self.y_hat -= a * (self.y_hat - x);
                let y = self.y_hat.max(1.0);
                let level = dead_zone(
                    &self.ctx.bitrates_bps,
                    y,
                    w + self.cfg.epsilon * y,
                    w,
                    self.prev,
                );
                let r = self.ctx.bitrates_bps[level] as f64;
                let b_err = st.buffer_s() - self.cfg.b_min.0 as f64 / 1e9;
                let t_hat = (r * self.ctx.tau_s() / y + self.cfg.beta * b_err).max(0.0);
                self.target_ns = (t_hat * 1e9) as u64;
                level
            }
        };
        self.prev = level;
        self.last_request_ns = Some(st.now_ns);
        level
    }

    fn downloaded(&mut self, seg: &SegmentResult, _st: &BufferState) -> When {
        self.x_tilde = seg.throughput_bps();
        if self.x_hat.is_none() {
            self.x_hat = Some(self.x_tilde);
            self.y_hat = self.x_tilde;
        }
        When::At(seg.request_ns + self.target_ns)
    }

    fn estimate_bps(&self) -> Option<f64> {
        self.x_hat.map(|_| self.y_hat)
    }
}

impl crate::sim::registry::Algorithm for Panda {
    type Config = PandaConfig;
    const NAME: &'static str = "panda";
    const SOURCE: &'static str = "Li et al., PANDA, IEEE JSAC 2014";
    const SUMMARY: &'static str = "PANDA, probe and adapt (Li et al., JSAC 2014).";
    fn check(config: &PandaConfig) -> Result<(), (String, String)> {
        config.check()
    }
}

impl super::AbrAlgorithm for Panda {
    fn build(
        config: &PandaConfig,
        ctx: PlayerContext,
        _rng: crate::sim::rng::Stream,
    ) -> Box<dyn Player> {
        Box::new(Panda::new(config.clone(), ctx))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::has::playback::Phase;
    const S: u64 = 1_000_000_000;

    fn ctx() -> PlayerContext {
        PlayerContext {
            bitrates_bps: vec![500_000, 1_000_000, 2_000_000],
            segment_ns: 2 * S,
            buffer_cap_ns: 60 * S,
            video: None,
        }
    }
    fn st(now: u64, buffer_s: u64) -> BufferState {
        BufferState {
            now_ns: now,
            buffer_ns: buffer_s * S,
            phase: Phase::Playing,
            next_segment: 1,
            segments: 100,
        }
    }
    fn seg(req: u64, bps: u64) -> SegmentResult {
        SegmentResult {
            index: 0,
            level: 0,
            bytes: bps / 8,
            media_ns: 2 * S,
            request_ns: req,
            first_byte_ns: req,
            done_ns: req + S,
        }
    }

    #[test]
    fn probe_adds_kappa_w_per_second_when_the_measure_clears_the_target() {
        let mut p = Panda::new(Default::default(), ctx());
        assert_eq!(p.choose(&st(0, 0)), 0);
        p.downloaded(&seg(0, 1_000_000), &st(S, 2)); // x̂ = ŷ = 1 Mbps
                                                     // measured 3 Mbps ≥ x̂ + w: x̂ rises by κ·w·T = 0.14 · 0.3 · 2 = 0.084 Mbps
        p.downloaded(&seg(0, 3_000_000), &st(S, 2));
        p.choose(&st(2 * S, 2));
        assert!((p.probed_bps().unwrap() - 1_084_000.0).abs() < 1.0);
    }

    #[test]
    fn probe_backs_off_toward_the_measure_when_it_is_below_the_target() {
        let mut p = Panda::new(Default::default(), ctx());
        p.choose(&st(0, 0));
        p.downloaded(&seg(0, 2_000_000), &st(S, 2)); // x̂ = 2 Mbps
        p.downloaded(&seg(0, 1_000_000), &st(S, 2)); // x̃ = 1 Mbps
        p.choose(&st(S, 2));
        // x̂ += κ·T·(w − (x̂ − x̃ + w)) = 2 − 0.14·1·1 Mbps = 1.86 Mbps
        assert!((p.probed_bps().unwrap() - 1_860_000.0).abs() < 1.0);
    }

    #[test]
    fn the_schedule_steers_the_buffer_to_b_min() {
        let mut p = Panda::new(Default::default(), ctx());
        p.choose(&st(0, 0));
        p.downloaded(&seg(0, 2_000_000), &st(S, 2));
        // ŷ = 2 Mbps; quantized with Δ_up = w + εŷ = 0.6 Mbps → r = 1 Mbps
        let l = p.choose(&st(S, 26));
        assert_eq!(l, 1);
        // T̂ = r·τ/ŷ + β·(B − B_min) = 1·2/2 + 0 = 1 s
        assert_eq!(p.target_interval_ns(), S);
        p.choose(&st(2 * S, 36));
        // B − B_min = 10 s adds β·10 = 2 s
        assert!((p.target_interval_ns() as f64 / 1e9 - 3.0).abs() < 0.05);
        p.choose(&st(3 * S, 0));
        assert_eq!(
            p.target_interval_ns(),
            0,
            "low buffer: floored at 0, back-to-back"
        );
        assert_eq!(
            p.downloaded(&seg(3 * S, 2_000_000), &st(4 * S, 2)),
            When::At(3 * S)
        );
    }
}
