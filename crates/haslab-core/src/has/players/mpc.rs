//! RobustMPC and FastMPC (Yin, Jindal, Sekar, Sinopoli, "A Control-Theoretic Approach for
//! Dynamic Adaptive Video Streaming over HTTP", SIGCOMM 2015): model predictive control over a
//! horizon of future segments, maximising the linear QoE of the paper's §2 (eq. 5 without the
//! start-up term): Σ q(R_k) − λ Σ |q(R_{k+1}) − q(R_k)| − μ Σ rebuffer_k, q(R) = R in Mbit/s.
//!
//! - **Prediction** (§6, "the harmonic mean of the past 5 chunks"): Ĉ = harmonic mean of the
//!   last 5 segment throughputs (bytes over request → last byte).
//! - **RobustMPC** (§4.3): the prediction is divided by 1 + e, e the largest relative error
//!   |Ĉ_prev − C|/C of the last 5 predictions (each prediction against the throughput of the
//!   segment that followed), as Pensieve's `robust_mpc` does (`hongzimao/pensieve`, `test/mpc.py`).
//!   **FastMPC** uses Ĉ as it is. The paper's FastMPC looks the optimum up in a table
//!   enumerated offline over binned buffer and throughput; haslab enumerates the same problem
//!   exactly at each decision instead (the table only approximates it).
//! - **Horizon** N = 5 (§6), shortened at the end of the video. For each sequence of levels the
//!   buffer is simulated segment by segment at the predicted throughput: segment k at level R
//!   takes d_k(R)/Ĉ to download, a download longer than the buffer rebuffers for the
//!   difference, then the segment adds its duration. The first level of the best sequence is
//!   requested (ties: the lower level).
//! - **Segment sizes** (`segment_sizes`): the paper's model (§2) downloads chunk k at bitrate R
//!   as d_k(R) bytes, "L × R for CBR" and varying for VBR, and Pensieve's `mpc.py` reads each
//!   chunk's real size from its video's size files; so the default, `"actual"`, plans with each
//!   segment's real size and duration from the video (as the MPD or the video preset gives them).
//!   `"nominal"` plans with r·τ for every segment, as a client that only knows the ladder would.
//!   For CBR videos the two are the same.
//! - **Weights**: λ = 1 (`smooth_penalty`, the paper's "balanced" weights, §7.1); μ
//!   (`rebuffer_penalty`, per second of rebuffering, in Mbit/s units) defaults to the top
//!   bitrate in Mbit/s — Pensieve's choice for its QoE_lin ("μ = 4.3", the highest bitrate of its
//!   ladder; Mao, Netravali, Alizadeh, SIGCOMM 2017, §5.1) so that one second of stall costs what
//!   one second at the top level gains; the paper's balanced μ is 3000 per kbit/s, i.e. 3 here.
//!   The start-up term μ_s is not used: the common playback model starts after `startup`.
//! - **Cost**: levels^N sequences, enumerated depth first so each prefix is simulated once.
//!   With more than `max_sequences` (default 100 000: 10 levels at N = 5) the horizon is
//!   shortened to the longest one that fits (20 levels: N = 3), and the log says so only here.
//! - The first segment, before any throughput sample, is requested at level 0.
//! - Requests: whenever the next segment fits under the buffer cap.

use super::{check_range, harmonic_mean, BufferState, Player, PlayerContext, SegmentResult, When};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Parameters of RobustMPC / FastMPC.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct MpcConfig {
    /// Segments looked ahead, 1 to 10. Default 5 (§6).
    pub horizon: u32,
    /// Past segments in the harmonic mean and in the error maximum, 1 to 100. Default 5 (§6).
    pub window: u32,
    /// λ, per Mbit/s of level change, 0 to 100. Default 1 (balanced).
    pub smooth_penalty: f64,
    /// μ, per second of rebuffering (Mbit/s units), 0 to 1000. Default: the top bitrate in
    /// Mbit/s (Pensieve's QoE_lin).
    pub rebuffer_penalty: Option<f64>,
    /// Sequences enumerated per decision at most, 1 to 10 000 000 (the horizon shrinks to fit).
    /// Default 100 000.
    pub max_sequences: u32,
    /// Segment sizes the plan uses: `"actual"` (each segment's real size and duration, the
    /// paper's d_k(R); default) or `"nominal"` (bitrate × τ).
    pub segment_sizes: SegmentSizes,
}

/// Which segment sizes MPC plans with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SegmentSizes {
    /// Each segment's real size and duration at each level (d_k(R), §2).
    #[default]
    Actual,
    /// bitrate × nominal segment duration τ for every segment.
    Nominal,
}

impl Default for MpcConfig {
    fn default() -> Self {
        MpcConfig {
            horizon: 5,
            window: 5,
            smooth_penalty: 1.0,
            rebuffer_penalty: None,
            max_sequences: 100_000,
            segment_sizes: SegmentSizes::Actual,
        }
    }
}

impl MpcConfig {
    pub fn check(&self) -> Result<(), (String, String)> {
        check_range("horizon", self.horizon as f64, 1.0, 10.0)?;
        check_range("window", self.window as f64, 1.0, 100.0)?;
        check_range("smooth_penalty", self.smooth_penalty, 0.0, 100.0)?;
        if let Some(m) = self.rebuffer_penalty {
            check_range("rebuffer_penalty", m, 0.0, 1000.0)?;
        }
        check_range("max_sequences", self.max_sequences as f64, 1.0, 1e7)
    }
}

pub struct Mpc {
    cfg: MpcConfig,
    ctx: PlayerContext,
    robust: bool,
    /// throughput samples, bps
    samples: VecDeque<f64>,
    /// relative errors of past predictions
    errors: VecDeque<f64>,
    /// the harmonic-mean prediction made after the last sample
    last_prediction: Option<f64>,
    /// the throughput the last decision used, bps
    used_bps: Option<f64>,
    prev_level: usize,
    /// horizon after the cap on sequences
    horizon: usize,
    /// level bitrates in Mbit/s
    mbps: Vec<f64>,
    mu: f64,
}

impl Mpc {
    pub fn new(cfg: MpcConfig, ctx: PlayerContext, robust: bool) -> Self {
        let levels = ctx.levels() as f64;
        let mut horizon = cfg.horizon.max(1) as usize;
        while horizon > 1 && levels.powi(horizon as i32) > cfg.max_sequences as f64 {
            horizon -= 1;
        }
        let mbps: Vec<f64> = ctx.bitrates_bps.iter().map(|&r| r as f64 / 1e6).collect();
        let mu = cfg.rebuffer_penalty.unwrap_or(*mbps.last().unwrap());
        Mpc {
            cfg,
            ctx,
            robust,
            samples: VecDeque::new(),
            errors: VecDeque::new(),
            last_prediction: None,
            used_bps: None,
            prev_level: 0,
            horizon,
            mbps,
            mu,
        }
    }

    pub fn horizon(&self) -> usize {
        self.horizon
    }

    /// Adds a throughput sample (bps): the error of the last prediction, then a new one.
    pub fn observe(&mut self, bps: f64) {
        let w = self.cfg.window as usize;
        let bps = bps.max(1.0);
        if let Some(p) = self.last_prediction {
            self.errors.push_back((p - bps).abs() / bps);
            if self.errors.len() > w {
                self.errors.pop_front();
            }
        }
        self.samples.push_back(bps);
        if self.samples.len() > w {
            self.samples.pop_front();
        }
        self.last_prediction = harmonic_mean(self.samples.iter().copied());
    }

    /// The throughput the controller plans with, bps.
    pub fn predicted_bps(&self) -> Option<f64> {
        let hm = self.last_prediction?;
        Some(if self.robust {
            hm / (1.0 + self.errors.iter().copied().fold(0.0, f64::max))
        } else {
            hm
        })
    }

    /// (download seconds at `bps`, media seconds) of segment `index` at `level`: its real size
    /// and duration under `"actual"` when the video is known, r·τ and τ otherwise.
    fn segment_cost(&self, level: usize, index: usize, bps: f64) -> (f64, f64) {
        if self.cfg.segment_sizes == SegmentSizes::Actual {
            if let Some(v) = self.ctx.video.as_deref() {
                if index < v.segments() {
                    let bits = v.size(level, index) as f64 * 8.0;
                    return (bits / bps, v.durations_ns[index] as f64 / 1e9);
                }
            }
        }
        let tau = self.ctx.tau_s();
        (self.mbps[level] * tau / (bps / 1e6), tau)
    }

    /// The best first level for segment `next`, buffer `buffer_s`, previous level `prev`,
    /// `ahead` segments left (including the one decided), at throughput `bps`.
    pub fn decide(&self, next: usize, buffer_s: f64, prev: usize, ahead: usize, bps: f64) -> usize {
        let depth = self.horizon.min(ahead).max(1);
        let mut best = (f64::NEG_INFINITY, 0usize);
        // depth first, so each prefix is simulated once:
        // (depth, level, reward before it, buffer before it, first level, previous level)
        let mut stack: Vec<(usize, usize, f64, f64, usize, usize)> = Vec::new();
        for m in (0..self.ctx.levels()).rev() {
            stack.push((0, m, 0.0, buffer_s, m, prev));
        }
        while let Some((d, m, reward, buffer, first, prev_m)) = stack.pop() {
            let (dl, media) = self.segment_cost(m, next + d, bps);
            let rebuf = (dl - buffer).max(0.0);
            let buf = (buffer - dl).max(0.0) + media;
            let r = reward
                + (self.mbps[m]
                    - self.cfg.smooth_penalty * (self.mbps[m] - self.mbps[prev_m]).abs()
                    - self.mu * rebuf);
            if d + 1 == depth {
                if r > best.0 || (r == best.0 && first < best.1) {
                    best = (r, first);
                }
            } else {
                for k in (0..self.ctx.levels()).rev() {
                    stack.push((d + 1, k, r, buf, first, m));
                }
            }
        }
        best.1
    }
}

impl Player for Mpc {
    fn name(&self) -> &'static str {
        if self.robust {
            "robustmpc"
        } else {
            "fastmpc"
        }
    }

    fn choose(&mut self, st: &BufferState) -> usize {
        let Some(bps) = self.predicted_bps() else {
            return 0;
        };
        self.used_bps = Some(bps);
        let ahead = st.segments.saturating_sub(st.next_segment);
        let m = self.decide(st.next_segment, st.buffer_s(), self.prev_level, ahead, bps);
        self.prev_level = m;
        m
    }

    fn downloaded(&mut self, seg: &SegmentResult, _st: &BufferState) -> When {
        self.observe(seg.throughput_bps());
        self.prev_level = seg.level;
        When::Now
    }

    fn estimate_bps(&self) -> Option<f64> {
        self.used_bps
    }
}

/// RobustMPC: MPC on the throughput prediction divided by 1 + the largest recent error.
pub struct RobustMpc;

impl crate::sim::registry::Algorithm for RobustMpc {
    type Config = MpcConfig;
    const NAME: &'static str = "robustmpc";
    const ALIASES: &'static [&'static str] = &["robust-mpc"];
    const SOURCE: &'static str = "Yin, Jindal, Sekar, Sinopoli, RobustMPC, SIGCOMM 2015";
    const SUMMARY: &'static str = "RobustMPC.";
    fn check(config: &MpcConfig) -> Result<(), (String, String)> {
        config.check()
    }
}

impl super::AbrAlgorithm for RobustMpc {
    fn build(
        config: &MpcConfig,
        ctx: PlayerContext,
        _rng: crate::sim::rng::Stream,
    ) -> Box<dyn Player> {
        Box::new(Mpc::new(config.clone(), ctx, true))
    }
}

/// FastMPC: MPC on the plain throughput prediction (solved exactly online).
pub struct FastMpc;

impl crate::sim::registry::Algorithm for FastMpc {
    type Config = MpcConfig;
    const NAME: &'static str = "fastmpc";
    const ALIASES: &'static [&'static str] = &["fast-mpc"];
    const SOURCE: &'static str =
        "Yin, Jindal, Sekar, Sinopoli, FastMPC, SIGCOMM 2015 (solved exactly online)";
    const SUMMARY: &'static str = "FastMPC (solved exactly).";
    fn check(config: &MpcConfig) -> Result<(), (String, String)> {
        config.check()
    }
}

impl super::AbrAlgorithm for FastMpc {
    fn build(
        config: &MpcConfig,
        ctx: PlayerContext,
        _rng: crate::sim::rng::Stream,
    ) -> Box<dyn Player> {
        Box::new(Mpc::new(config.clone(), ctx, false))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const S: u64 = 1_000_000_000;

    fn mpc(levels: Vec<u64>, horizon: u32, robust: bool) -> Mpc {
        let ctx = PlayerContext {
            bitrates_bps: levels,
            segment_ns: 2 * S,
            buffer_cap_ns: 30 * S,
            video: None,
        };
        let cfg = MpcConfig {
            horizon,
            rebuffer_penalty: Some(3.0),
            ..Default::default()
        };
        Mpc::new(cfg, ctx, robust)
    }

    #[test]
    fn the_horizon_is_worked_by_hand() {
        // levels 1 and 3 Mbps, τ = 2 s, Ĉ = 2 Mbps, N = 2, λ = 1, μ = 3, previous level 0.
        // From B = 2 s: (0,0): downloads of 1 s, no stall, 1 + 1 = 2; (0,1): 1 + 3 − 2 = 2;
        // (1,0): a 3 s download stalls 1 s: 3 + 1 − 3 − 2 − 2 = −3; (1,1): two stalls of 1 s:
        // 6 − 6 − 2 = −2 → level 0.
        let m = mpc(vec![1_000_000, 3_000_000], 2, false);
        assert_eq!(m.decide(0, 2.0, 0, 100, 2e6), 0);
        // From B = 10 s nothing stalls: (1,1) = 6 − 2 = 4 beats (0,1) = 2, (0,0) = 2,
        // (1,0) = 4 − 4 = 0 → level 1.
        assert_eq!(m.decide(0, 10.0, 0, 100, 2e6), 1);
        // with one segment left the horizon is 1: from B = 2 s, level 1 scores 3 − 2 − 3 = −2,
        // level 0 scores 1 → level 0
        assert_eq!(m.decide(0, 2.0, 0, 1, 2e6), 0);
    }

    #[test]
    fn robust_mpc_divides_by_one_plus_the_largest_recent_error() {
        let mut m = mpc(vec![1_000_000, 3_000_000], 5, true);
        for _ in 0..5 {
            m.observe(2e6);
        }
        assert!((m.predicted_bps().unwrap() - 2e6).abs() < 1e-6);
        // the prediction was 2 Mbps, the segment came at 1: error 1
        m.observe(1e6);
        // harmonic mean of 2, 2, 2, 2, 1 = 5/(4/2 + 1) = 5/3 Mbps; / (1 + 1)
        let want = 5.0 / 3.0 * 1e6 / 2.0;
        assert!((m.predicted_bps().unwrap() - want).abs() < 1e-3);
        let mut f = mpc(vec![1_000_000, 3_000_000], 5, false);
        for x in [2e6, 2e6, 2e6, 2e6, 2e6, 1e6] {
            f.observe(x);
        }
        assert!((f.predicted_bps().unwrap() - 5.0 / 3.0 * 1e6).abs() < 1e-3);
    }

    #[test]
    fn the_plan_uses_each_segments_real_size_unless_told_nominal() {
        // Levels 1 and 3 Mbps, τ = 2 s, Ĉ = 2 Mbps, N = 1, λ = 1, μ = 3, previous level 1,
        // buffer 2 s. Nominal sizes: level 1 downloads in 3 s and stalls 1 s: 3 − 0 − 3 = 0;
        // level 0 in 1 s: 1 − 2 = −1 → level 1. Segment 0's real size at level 1 is 1 MB
        // (8 Mbit, a VBR peak): 4 s, a 2 s stall: 3 − 6 = −3 → level 0. Segment 1 at level 1
        // is 0.25 MB (2 Mbit): 1 s, no stall: 3 → level 1.
        use crate::has::video::Video;
        let sizes = vec![vec![250_000, 250_000], vec![1_000_000, 250_000]];
        let video = Video::from_durations(
            "vbr",
            vec![1_000_000, 3_000_000],
            vec![2 * S; 2],
            Some(sizes),
        )
        .unwrap();
        let build = |sizes: SegmentSizes| {
            let ctx = PlayerContext {
                bitrates_bps: video.bitrates_bps.clone(),
                segment_ns: 2 * S,
                buffer_cap_ns: 30 * S,
                video: Some(std::sync::Arc::new(video.clone())),
            };
            let cfg = MpcConfig {
                horizon: 1,
                rebuffer_penalty: Some(3.0),
                segment_sizes: sizes,
                ..Default::default()
            };
            Mpc::new(cfg, ctx, false)
        };
        let actual = build(SegmentSizes::Actual);
        assert_eq!(
            actual.decide(0, 2.0, 1, 2, 2e6),
            0,
            "segment 0: the 1 MB peak stalls"
        );
        assert_eq!(
            actual.decide(1, 2.0, 1, 1, 2e6),
            1,
            "segment 1: 0.25 MB fits"
        );
        let nominal = build(SegmentSizes::Nominal);
        assert_eq!(
            nominal.decide(0, 2.0, 1, 2, 2e6),
            1,
            "r·τ = 0.75 MB for both"
        );
        assert_eq!(nominal.decide(1, 2.0, 1, 1, 2e6), 1);
        // a segment's real duration counts too: a 1 s last segment adds 1 s, not τ
        let short =
            Video::from_durations("short", vec![1_000_000, 3_000_000], vec![2 * S, S], None)
                .unwrap();
        let ctx = PlayerContext {
            bitrates_bps: short.bitrates_bps.clone(),
            segment_ns: 2 * S,
            buffer_cap_ns: 30 * S,
            video: Some(std::sync::Arc::new(short)),
        };
        let m = Mpc::new(MpcConfig::default(), ctx, false);
        let (dl, media) = m.segment_cost(1, 1, 3e6);
        assert!(
            (dl - 1.0).abs() < 1e-9 && (media - 1.0).abs() < 1e-9,
            "{dl} {media}"
        );
    }

    #[test]
    fn the_horizon_shrinks_to_the_sequence_cap() {
        let many: Vec<u64> = (1..=20).map(|k| k * 500_000).collect();
        assert_eq!(mpc(many, 5, true).horizon(), 3, "20^3 = 8000 ≤ 1e5 < 20^4");
        assert_eq!(
            mpc((1..=10).map(|k| k * 1000).collect(), 5, true).horizon(),
            5
        );
    }

    #[test]
    fn enumeration_agrees_with_brute_force() {
        // 4 levels, N = 4: the depth-first search equals a plain enumeration of all 256
        let m = mpc(vec![500_000, 1_000_000, 2_000_000, 4_000_000], 4, true);
        for (b, prev, bps) in [(1.0, 0, 1.5e6), (6.0, 2, 2.5e6), (20.0, 3, 0.8e6)] {
            let mut best = (f64::NEG_INFINITY, 0);
            for code in 0..256usize {
                let seq: Vec<usize> = (0..4).map(|i| (code >> (2 * (3 - i))) & 3).collect();
                let (mut buf, mut r, mut last) = (b, 0.0, prev);
                for &q in &seq {
                    let dl = m.mbps[q] * 2.0 / (bps / 1e6);
                    r += m.mbps[q]
                        - 1.0 * (m.mbps[q] - m.mbps[last]).abs()
                        - 3.0 * (dl - buf).max(0.0);
                    buf = (buf - dl).max(0.0) + 2.0;
                    last = q;
                }
                if r > best.0 {
                    best = (r, seq[0]);
                }
            }
            assert_eq!(m.decide(0, b, prev, 100, bps), best.1, "B {b} prev {prev}");
        }
    }
}
