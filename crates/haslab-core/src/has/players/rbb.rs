//! The rate-and-buffer-based (RBB) player of the TcpHas paper (§IV-A), a reconstruction:
//! **every parameter value here is a project choice**, since the paper's player (its reference
//! \[3\], an emulated player) is not described in the paper beyond what follows.
//!
//! What the TcpHas paper states, and this player does:
//! - the bandwidth estimate is the last chunk's size divided by its download duration;
//! - the buffer occupancy only sets an "aggressiveness level" that lets the player ask for a
//!   level *above* the estimate when the buffer is high;
//! - a 30 s playback buffer (the common `buffer` cap, default 30 s), 2 s chunks (the video);
//! - a buffering state (back-to-back requests until the buffer is full) and a steady state
//!   (one request whenever a chunk's room frees up: ON-OFF).
//!
//! Rule in the steady state: level = the highest r ≤ a(B)·x̃, with a(B) = 1 up to `low_buffer`,
//! rising linearly to `aggressiveness` at the buffer cap. Scheduling: request as soon as the
//! next chunk fits in the buffer (the cap of the common model does the waiting).
//!
//! Rule in the buffering state (`buffering`, docs/has.md): the paper's §IV-C says "During the
//! buffering phase, all players select the lowest quality level, as allowed by slow start
//! phase", and §IV-A that K = 180 s "allows the HAS players to reach stationary behavior". With
//! `buffering = "lowest"` (default) the player asks for level 0 from start-up until the buffer
//! is full (the next chunk no longer fits), and again after a stall; with `"estimate"` the
//! steady-state rule applies from the second chunk on (the first chunk is level 0 for want of an
//! estimate).

use super::{check_range, BufferState, Player, PlayerContext, SegmentResult, When};
use crate::has::playback::Phase;
use crate::has::video::highest_at_most;
use crate::sim::units::Duration;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What the RBB player requests in its buffering state (start-up until the buffer is full, and
/// after a stall).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RbbBuffering {
    /// The lowest level until the buffer is full (TcpHas paper §IV-C; the default).
    Lowest,
    /// The steady-state rule (the estimate times a(B)) from the second chunk on.
    Estimate,
}

/// Parameters of the RBB player (project choices, see the module documentation).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct RbbConfig {
    /// Multiplier on the estimate when the buffer is full (1 to 3). Default 1.2 (project
    /// choice).
    pub aggressiveness: f64,
    /// Buffer level up to which the player asks for no more than the estimate. Default "10s"
    /// (project choice: one third of the 30 s buffer).
    pub low_buffer: Duration,
    /// The buffering-state rule: "lowest" (default: level 0 until the buffer is full, the TcpHas
    /// paper's §IV-C) or "estimate" (the steady-state rule from the second chunk on).
    pub buffering: RbbBuffering,
}

impl Default for RbbConfig {
    fn default() -> Self {
        RbbConfig {
            aggressiveness: 1.2,
            low_buffer: Duration(10_000_000_000),
            buffering: RbbBuffering::Lowest,
        }
    }
}

impl RbbConfig {
    pub fn check(&self) -> Result<(), (String, String)> {
        check_range("aggressiveness", self.aggressiveness, 1.0, 3.0)
    }
}

pub struct Rbb {
    cfg: RbbConfig,
    ctx: PlayerContext,
    x_bps: Option<f64>,
    /// In the buffering state (start-up, or after a stall, until the buffer is full).
    buffering: bool,
}

impl Rbb {
    pub fn new(cfg: RbbConfig, ctx: PlayerContext) -> Self {
        Rbb {
            cfg,
            ctx,
            x_bps: None,
            buffering: true,
        }
    }

    /// Whether the player is in its buffering state.
    pub fn is_buffering(&self) -> bool {
        self.buffering
    }

    /// a(B): 1 up to `low_buffer`, then linear up to `aggressiveness` at the cap.
    pub fn aggressiveness_at(&self, buffer_ns: u64) -> f64 {
        let (low, cap) = (self.cfg.low_buffer.0, self.ctx.buffer_cap_ns);
        if buffer_ns <= low || cap <= low {
            return 1.0;
        }
        let f = ((buffer_ns - low) as f64 / (cap - low) as f64).min(1.0);
        1.0 + (self.cfg.aggressiveness - 1.0) * f
    }
}

impl Player for Rbb {
    fn name(&self) -> &'static str {
        "rbb"
    }
    fn choose(&mut self, st: &BufferState) -> usize {
        if st.phase == Phase::Stalled {
            self.buffering = true;
        }
        if self.buffering && self.cfg.buffering == RbbBuffering::Lowest {
            return 0;
        }
        match self.x_bps {
            None => 0,
            Some(x) => highest_at_most(
                &self.ctx.bitrates_bps,
                self.aggressiveness_at(st.buffer_ns) * x,
            ),
        }
    }
    fn downloaded(&mut self, seg: &SegmentResult, st: &BufferState) -> When {
        self.x_bps = Some(seg.throughput_bps());
        // the buffer is full when the next chunk no longer fits: the steady state begins
        if st.buffer_ns + self.ctx.segment_ns > self.ctx.buffer_cap_ns {
            self.buffering = false;
        }
        When::Now
    }
    fn estimate_bps(&self) -> Option<f64> {
        self.x_bps
    }
}

impl crate::sim::registry::Algorithm for Rbb {
    type Config = RbbConfig;
    const NAME: &'static str = "rbb";
    const SOURCE: &'static str =
        "TcpHas paper's rate-and-buffer-based player (ICC 2017, §IV-A; a reconstruction)";
    const SUMMARY: &'static str = "Rate-and-buffer-based player of the TcpHas paper (Ben Ameur et al., Multimedia Systems 2018; a reconstruction).";
    fn check(config: &RbbConfig) -> Result<(), (String, String)> {
        config.check()
    }
}

impl super::AbrAlgorithm for Rbb {
    fn build(
        config: &RbbConfig,
        ctx: PlayerContext,
        _rng: crate::sim::rng::Stream,
    ) -> Box<dyn Player> {
        Box::new(Rbb::new(config.clone(), ctx))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const S: u64 = 1_000_000_000;

    fn ctx() -> PlayerContext {
        PlayerContext {
            bitrates_bps: vec![500_000, 1_000_000, 1_150_000],
            segment_ns: 2 * S,
            buffer_cap_ns: 30 * S,
            video: None,
        }
    }

    fn st(buffer_ns: u64, phase: Phase) -> BufferState {
        BufferState {
            now_ns: 0,
            buffer_ns,
            phase,
            next_segment: 1,
            segments: 10,
        }
    }

    /// A 2 s chunk of 250 kB downloaded in 2 s: 1 Mbps.
    fn one_mbps() -> SegmentResult {
        SegmentResult {
            index: 0,
            level: 0,
            bytes: 250_000,
            media_ns: 2 * S,
            request_ns: 0,
            first_byte_ns: 0,
            done_ns: 2 * S,
        }
    }

    #[test]
    fn a_full_buffer_allows_a_level_above_the_estimate() {
        let cfg = RbbConfig {
            buffering: RbbBuffering::Estimate,
            ..Default::default()
        };
        let mut p = Rbb::new(cfg, ctx());
        let play = |b| st(b, Phase::Playing);
        assert_eq!(p.choose(&play(0)), 0, "no estimate yet: lowest level");
        assert_eq!(p.downloaded(&one_mbps(), &play(2 * S)), When::Now);
        assert_eq!(
            p.choose(&play(5 * S)),
            1,
            "low buffer: at most the estimate"
        );
        assert_eq!(
            p.choose(&play(30 * S)),
            2,
            "full buffer: 1.2 × 1 Mbps allows 1.15 Mbps"
        );
        assert!((p.aggressiveness_at(20 * S) - 1.1).abs() < 1e-9);
    }

    #[test]
    fn the_buffering_state_asks_for_the_lowest_level_until_the_buffer_is_full() {
        let mut p = Rbb::new(Default::default(), ctx());
        // start-up and filling: level 0 whatever the estimate
        for b in [2, 10, 20, 28] {
            p.downloaded(&one_mbps(), &st(b * S, Phase::Playing));
            assert!(
                p.is_buffering(),
                "{b} s: the next 2 s chunk still fits in 30 s"
            );
            assert_eq!(p.choose(&st(b * S, Phase::Playing)), 0);
        }
        // the next chunk no longer fits: steady state, the estimate's rule
        p.downloaded(&one_mbps(), &st(29 * S, Phase::Playing));
        assert!(!p.is_buffering());
        assert_eq!(p.choose(&st(28 * S, Phase::Playing)), 2);
        assert_eq!(p.choose(&st(5 * S, Phase::Playing)), 1);
        // a stall is a new buffering state
        assert_eq!(p.choose(&st(0, Phase::Stalled)), 0);
        assert!(p.is_buffering());
        assert_eq!(p.choose(&st(6 * S, Phase::Playing)), 0);
    }
}
