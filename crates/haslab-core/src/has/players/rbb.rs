//! The rate-and-buffer-based (RBB) player of the TcpHas paper (§IV-A), as reconstructed in
//! algorithms.md B7: **every parameter value here is a project choice**, since the paper's
//! player (Ben Ameur et al., Multimedia Systems 24(1), 2018) could not be read.
//!
//! What the TcpHas paper states, and this player does:
//! - the bandwidth estimate is the last chunk's size divided by its download duration;
//! - the buffer occupancy only sets an "aggressiveness level" that lets the player ask for a
//!   level *above* the estimate when the buffer is high;
//! - a 30 s playback buffer (the common `buffer` cap, default 30 s), 2 s chunks (the video);
//! - a buffering state (back-to-back requests until the buffer is full) and a steady state
//!   (one request whenever a chunk's room frees up: ON-OFF).
//!
//! Rule: level = the highest r ≤ a(B)·x̃, with a(B) = 1 up to `low_buffer`, rising linearly to
//! `aggressiveness` at the buffer cap. Scheduling: request as soon as the next chunk fits in
//! the buffer (the cap of the common model does the waiting).

use super::{check_range, BufferState, Player, PlayerContext, SegmentResult, When};
use crate::has::video::highest_at_most;
use crate::scenario::units::Duration;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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
}

impl Default for RbbConfig {
    fn default() -> Self {
        RbbConfig {
            aggressiveness: 1.2,
            low_buffer: Duration(10_000_000_000),
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
}

impl Rbb {
    pub fn new(cfg: RbbConfig, ctx: PlayerContext) -> Self {
        Rbb {
            cfg,
            ctx,
            x_bps: None,
        }
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
        match self.x_bps {
            None => 0,
            Some(x) => highest_at_most(
                &self.ctx.bitrates_bps,
                self.aggressiveness_at(st.buffer_ns) * x,
            ),
        }
    }
    fn downloaded(&mut self, seg: &SegmentResult, _st: &BufferState) -> When {
        self.x_bps = Some(seg.throughput_bps());
        When::Now
    }
    fn estimate_bps(&self) -> Option<f64> {
        self.x_bps
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::has::playback::Phase;
    const S: u64 = 1_000_000_000;

    #[test]
    fn a_full_buffer_allows_a_level_above_the_estimate() {
        let ctx = PlayerContext {
            bitrates_bps: vec![500_000, 1_000_000, 1_150_000],
            segment_ns: 2 * S,
            buffer_cap_ns: 30 * S,
        };
        let mut p = Rbb::new(Default::default(), ctx);
        let st = |b| BufferState {
            now_ns: 0,
            buffer_ns: b,
            phase: Phase::Playing,
            next_segment: 1,
            segments: 10,
        };
        assert_eq!(p.choose(&st(0)), 0, "no estimate yet: lowest level");
        let seg = SegmentResult {
            index: 0,
            level: 0,
            bytes: 250_000,
            media_ns: 2 * S,
            request_ns: 0,
            done_ns: 2 * S,
        }; // 1 Mbps
        assert_eq!(p.downloaded(&seg, &st(2 * S)), When::Now);
        assert_eq!(p.choose(&st(5 * S)), 1, "low buffer: at most the estimate");
        assert_eq!(
            p.choose(&st(30 * S)),
            2,
            "full buffer: 1.2 × 1 Mbps allows 1.15 Mbps"
        );
        assert!((p.aggressiveness_at(20 * S) - 1.1).abs() < 1e-9);
    }
}
