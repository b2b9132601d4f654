//! FESTIVE (Jiang, Sekar, Zhang, CoNEXT 2012), as the TU Berlin ns-3 model and the ndnSIM
//! implementation have it (the paper's text was not readable).
//!
//! After each download:
//! - **randomised scheduling:** draw randbuf ~ U[target − Δ, target + Δ]; request when the
//!   buffer has drained to randbuf (at once if it is already below).
//!
//! When the next request is issued:
//! 1. **estimate:** ŵ = harmonic mean of the last 20 segment throughputs (of those there are,
//!    before 20 have been seen);
//! 2. **reference level** (gradual switching): one level down if r_cur > p·ŵ; one level up if the
//!    current level k (numbered from 1) has been requested for the last k consecutive segments
//!    and r_{k+1} ≤ ŵ (the paper's rule as ndnSIM implements it; TU Berlin uses 5 segments);
//!    else stay;
//! 3. **delayed update:** with n switches in the last 20 s, score_stab(b_cur) = 2^n,
//!    score_stab(b_ref) = 2^n + 1, score_eff(b) = |b / min(ŵ, b_ref) − 1|; take whichever of
//!    b_cur and b_ref has the lower score_stab + α·score_eff (b_ref on a tie: TU Berlin's
//!    `festive.cc` keeps b_cur only if its score is strictly lower).
//!
//! Parameters (defaults): window 20 segments, target buffer 30 s, Δ = one segment duration,
//! p = 0.85 (TU Berlin), α = 12 (both implementations), switch window 20 s. With the common
//! buffer cap at 30 s the cap, not randbuf, limits the buffer: set `buffer` ≥ target + Δ + τ to
//! see FESTIVE's own scheduling.

use super::{check_range, harmonic_mean, BufferState, Player, PlayerContext, SegmentResult, When};
use crate::sim::rng::Stream;
use crate::sim::units::Duration;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Parameters of FESTIVE.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct FestiveConfig {
    /// Throughput samples in the harmonic mean (1 to 1000). Default 20 (paper).
    pub window: u32,
    /// Target buffer of the randomised scheduler. Default "30s" (TU Berlin; paper as recalled).
    pub target_buffer: Duration,
    /// Half-width Δ of the randomisation. Default: one segment duration.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delta: Option<Duration>,
    /// Down-switch threshold p: down when r_cur > p·ŵ (0 to 1). Default 0.85 (TU Berlin).
    pub p: f64,
    /// Weight α of efficiency against stability (0 to 1000). Default 12 (both implementations).
    pub alpha: f64,
    /// Window over which switches are counted. Default "20s".
    pub switch_window: Duration,
}

impl Default for FestiveConfig {
    fn default() -> Self {
        FestiveConfig {
            window: 20,
            target_buffer: Duration(30_000_000_000),
            delta: None,
            p: 0.85,
            alpha: 12.0,
            switch_window: Duration(20_000_000_000),
        }
    }
}

impl FestiveConfig {
    pub fn check(&self) -> Result<(), (String, String)> {
        check_range("window", self.window as f64, 1.0, 1000.0)?;
        check_range("p", self.p, 0.0, 1.0)?;
        check_range("alpha", self.alpha, 0.0, 1000.0)?;
        Ok(())
    }
}

pub struct Festive {
    cfg: FestiveConfig,
    ctx: PlayerContext,
    rng: Stream,
    samples: VecDeque<f64>,
    cur: usize,
    /// consecutive requests at `cur`
    run: usize,
    switches: VecDeque<u64>,
    estimate: Option<f64>,
}

impl Festive {
    pub fn new(cfg: FestiveConfig, ctx: PlayerContext, rng: Stream) -> Self {
        Festive {
            cfg,
            ctx,
            rng,
            samples: VecDeque::new(),
            cur: 0,
            run: 0,
            switches: VecDeque::new(),
            estimate: None,
        }
    }

    /// The reference level b_ref for estimate `w` (step 2).
    pub fn reference(&self, w: f64) -> usize {
        let r = &self.ctx.bitrates_bps;
        if self.cur > 0 && r[self.cur] as f64 > self.cfg.p * w {
            self.cur - 1
        } else if self.cur < self.ctx.top() && self.run > self.cur && r[self.cur + 1] as f64 <= w {
            self.cur + 1
        } else {
            self.cur
        }
    }

    /// The delayed update (step 3): b_cur or b_ref.
    pub fn delayed_update(&self, w: f64, b_ref: usize, n_switches: usize) -> usize {
        if b_ref == self.cur {
            return b_ref;
        }
        let r = &self.ctx.bitrates_bps;
        let base = (r[b_ref] as f64).min(w).max(1.0);
        let eff = |b: usize| (r[b] as f64 / base - 1.0).abs();
        let stab = 2f64.powi(n_switches.min(60) as i32);
        let cur = stab + self.cfg.alpha * eff(self.cur);
        let refs = stab + 1.0 + self.cfg.alpha * eff(b_ref);
        if cur < refs {
            self.cur
        } else {
            b_ref
        }
    }
}

impl Player for Festive {
    fn name(&self) -> &'static str {
        "festive"
    }

    fn choose(&mut self, st: &BufferState) -> usize {
        let win = self.cfg.switch_window.0;
        while self.switches.front().is_some_and(|&t| t + win < st.now_ns) {
            self.switches.pop_front();
        }
        let level = match harmonic_mean(self.samples.iter().copied()) {
            None => 0,
            Some(w) => {
                self.estimate = Some(w);
                let b_ref = self.reference(w);
                self.delayed_update(w, b_ref, self.switches.len())
            }
        };
        if level != self.cur {
            self.switches.push_back(st.now_ns);
            self.cur = level;
            self.run = 1;
        } else {
            self.run += 1;
        }
        level
    }

    fn downloaded(&mut self, seg: &SegmentResult, _st: &BufferState) -> When {
        self.samples.push_back(seg.throughput_bps());
        while self.samples.len() > self.cfg.window as usize {
            self.samples.pop_front();
        }
        let delta = self.cfg.delta.map_or(self.ctx.segment_ns, |d| d.0) as f64;
        let target = self.cfg.target_buffer.0 as f64;
        let randbuf = target - delta + 2.0 * delta * self.rng.uniform();
        When::BufferAtMost(randbuf.max(0.0) as u64)
    }

    fn estimate_bps(&self) -> Option<f64> {
        self.estimate
    }
}

impl crate::sim::registry::Algorithm for Festive {
    type Config = FestiveConfig;
    const NAME: &'static str = "festive";
    const SOURCE: &'static str = "Jiang, Sekar, Zhang, FESTIVE, CoNEXT 2012";
    const SUMMARY: &'static str = "FESTIVE (Jiang, Sekar, Zhang, CoNEXT 2012).";
    fn check(config: &FestiveConfig) -> Result<(), (String, String)> {
        config.check()
    }
}

impl super::AbrAlgorithm for Festive {
    fn build(
        config: &FestiveConfig,
        ctx: PlayerContext,
        rng: crate::sim::rng::Stream,
    ) -> Box<dyn Player> {
        Box::new(Festive::new(config.clone(), ctx, rng))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::has::playback::Phase;
    const S: u64 = 1_000_000_000;

    fn festive() -> Festive {
        let ctx = PlayerContext {
            bitrates_bps: vec![1_000_000, 2_000_000, 3_000_000, 4_000_000],
            segment_ns: 2 * S,
            buffer_cap_ns: 60 * S,
            video: None,
        };
        Festive::new(Default::default(), ctx, Stream::new(7, "festive-test"))
    }
    fn st(now: u64) -> BufferState {
        BufferState {
            now_ns: now,
            buffer_ns: 10 * S,
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
    fn the_estimate_is_the_harmonic_mean_of_the_throughputs() {
        let mut f = festive();
        f.choose(&st(0));
        f.downloaded(&seg(2_000_000), &st(S));
        f.downloaded(&seg(8_000_000), &st(S));
        f.choose(&st(S));
        assert!((f.estimate_bps().unwrap() - 3_200_000.0).abs() < 1.0);
    }

    #[test]
    fn up_switches_are_gradual_level_k_needs_k_segments() {
        let mut f = festive();
        let mut levels = Vec::new();
        for k in 0..12u64 {
            levels.push(f.choose(&st(k * 100 * S))); // far apart: no recent switches
            f.downloaded(&seg(10_000_000), &st(k * 100 * S + S));
        }
        // level 1 (numbered 1) after 1 segment, level 2 after 2 more, level 3 after 3 more
        assert_eq!(levels, vec![0, 1, 1, 2, 2, 2, 3, 3, 3, 3, 3, 3]);
    }

    #[test]
    fn the_delayed_update_trades_stability_against_efficiency() {
        let mut f = festive();
        f.cur = 1;
        // w = 4 Mbps, b_ref = 2 (3 Mbps): eff(cur) = |2/3 − 1| = 1/3, eff(ref) = 0
        // no switch: 1 + 12/3 = 5 vs 2 + 0 → switch; 3 recent switches: 8 + 4 = 12 vs 9 → switch;
        // the score of b_ref grows as 2^n + 1 against 2^n + 4: always switch here
        assert_eq!(f.delayed_update(4e6, 2, 0), 2);
        // w = 2.2 Mbps, b_ref = 0 (down): eff(cur = 2 Mbps) = |2/1 − 1| = 1, eff(ref) = 0
        assert_eq!(f.delayed_update(2.2e6, 0, 5), 0);
        // a close call: w = 3.1 Mbps, up to 3 Mbps from 2: eff(cur) = 1/3 (12 × 1/3 = 4) vs 1 + 0
        assert_eq!(f.delayed_update(3.1e6, 2, 10), 2);
        // with α = 1 the stability term wins: 2^n + 1/3 < 2^n + 1
        f.cfg.alpha = 1.0;
        assert_eq!(f.delayed_update(3.1e6, 2, 0), 1);
        // a tie goes to b_ref (TU Berlin: b_cur only if strictly lower): from 2 Mbps down to
        // 1 Mbps with w = 1.5 Mbps, eff(cur) = |2/1 − 1| = 1, eff(ref) = 0, α = 1: 2^n + 1 both
        assert_eq!(f.delayed_update(1.5e6, 0, 0), 0);
    }

    #[test]
    fn randomised_scheduling_waits_for_target_plus_minus_delta() {
        let mut f = festive();
        for _ in 0..50 {
            match f.downloaded(&seg(1_000_000), &st(0)) {
                When::BufferAtMost(b) => assert!((28 * S..=32 * S).contains(&b), "{b}"),
                w => panic!("{w:?}"),
            }
        }
    }
}
