//! BBA-0 (Huang, Johari, McKeown, Trunnell, Watson, SIGCOMM 2014): the rate
//! follows buffer occupancy through a piecewise-linear map.
//!
//! f(B) = r_1 + (r_M − r_1)·(B − reservoir)/cushion for reservoir < B < reservoir + cushion.
//! With R_prev the previous rate, R+ the next level above it (or r_M) and R− the next below
//! (or r_1), when a request is issued:
//! - B ≤ reservoir → r_1; B ≥ reservoir + cushion → r_M;
//! - f(B) ≥ R+ → the highest level below f(B); f(B) ≤ R− → the lowest level above f(B);
//! - else keep R_prev.
//!
//! Scheduling: request whenever the next segment fits (the common buffer cap waits).
//!
//! Parameters (defaults): reservoir 5 s and cushion 10 s, the short-buffer values of the
//! Pensieve/Genet simulators; the paper's Netflix values (90 s, 126 s) go
//! with a 240 s buffer and 4 s chunks — set `buffer = "240s"` to use them.

use super::{BufferState, Player, PlayerContext, SegmentResult, When};
use crate::sim::units::Duration;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Parameters of BBA-0.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct BbaConfig {
    /// Lower reservoir: below it, the lowest level. Default "5s" (Pensieve/Genet).
    pub reservoir: Duration,
    /// Cushion over which the rate map rises to the top level, greater than zero. Default
    /// "10s" (Pensieve/Genet).
    pub cushion: Duration,
}

impl Default for BbaConfig {
    fn default() -> Self {
        BbaConfig {
            reservoir: Duration(5_000_000_000),
            cushion: Duration(10_000_000_000),
        }
    }
}

impl BbaConfig {
    pub fn check(&self) -> Result<(), (String, String)> {
        if self.cushion.0 == 0 {
            return Err(("cushion".into(), "must be greater than zero".into()));
        }
        Ok(())
    }
}

pub struct Bba {
    cfg: BbaConfig,
    ctx: PlayerContext,
    prev: usize,
}

impl Bba {
    pub fn new(cfg: BbaConfig, ctx: PlayerContext) -> Self {
        Bba { cfg, ctx, prev: 0 }
    }

    /// The rate map f(B), bps.
    pub fn rate_map(&self, buffer_ns: u64) -> f64 {
        let r = &self.ctx.bitrates_bps;
        let (r1, rm) = (r[0] as f64, *r.last().unwrap() as f64);
        let x = (buffer_ns as f64 - self.cfg.reservoir.0 as f64) / self.cfg.cushion.0 as f64;
        r1 + (rm - r1) * x.clamp(0.0, 1.0)
    }

    /// The BBA-0 decision for buffer `buffer_ns` after rate index `prev`.
    pub fn decide(&self, buffer_ns: u64, prev: usize) -> usize {
        let r = &self.ctx.bitrates_bps;
        let top = self.ctx.top();
        if buffer_ns <= self.cfg.reservoir.0 {
            return 0;
        }
        if buffer_ns >= self.cfg.reservoir.0 + self.cfg.cushion.0 {
            return top;
        }
        let f = self.rate_map(buffer_ns);
        let plus = (prev + 1).min(top);
        let minus = prev.saturating_sub(1);
        if f >= r[plus] as f64 {
            r.iter().rposition(|&x| (x as f64) < f).unwrap_or(0)
        } else if f <= r[minus] as f64 {
            r.iter().position(|&x| (x as f64) > f).unwrap_or(top)
        } else {
            prev
        }
    }
}

impl Player for Bba {
    fn name(&self) -> &'static str {
        "bba"
    }
    fn choose(&mut self, st: &BufferState) -> usize {
        self.prev = self.decide(st.buffer_ns, self.prev);
        self.prev
    }
    fn downloaded(&mut self, _seg: &SegmentResult, _st: &BufferState) -> When {
        When::Now
    }
}

impl crate::sim::registry::Algorithm for Bba {
    type Config = BbaConfig;
    const NAME: &'static str = "bba";
    const ALIASES: &'static [&'static str] = &["bba0", "bba-0"];
    const SOURCE: &'static str = "Huang et al., BBA-0, SIGCOMM 2014";
    const SUMMARY: &'static str = "BBA-0, buffer-based (Huang et al., SIGCOMM 2014).";
    fn check(config: &BbaConfig) -> Result<(), (String, String)> {
        config.check()
    }
}

impl super::AbrAlgorithm for Bba {
    fn build(
        config: &BbaConfig,
        ctx: PlayerContext,
        _rng: crate::sim::rng::Stream,
    ) -> Box<dyn Player> {
        Box::new(Bba::new(config.clone(), ctx))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const S: u64 = 1_000_000_000;

    fn bba() -> Bba {
        let ctx = PlayerContext {
            bitrates_bps: vec![1_000_000, 2_000_000, 3_000_000, 5_000_000],
            segment_ns: 2 * S,
            buffer_cap_ns: 30 * S,
            video: None,
        };
        Bba::new(Default::default(), ctx)
    }

    #[test]
    fn reservoir_and_cushion_bound_the_map() {
        let b = bba();
        assert_eq!(b.decide(5 * S, 3), 0, "in the reservoir: lowest");
        assert_eq!(b.decide(15 * S, 0), 3, "past reservoir + cushion: highest");
        // f(10 s) = 1 + 4 · 0.5 = 3 Mbps
        assert!((b.rate_map(10 * S) - 3e6).abs() < 1e-6);
    }

    #[test]
    fn the_map_has_hysteresis_between_neighbouring_rates() {
        let b = bba();
        // f(8.75 s) = 2.5 Mbps: from 2 Mbps (idx 1), R+ = 3, R− = 1 → keep
        assert_eq!(b.decide(8_750_000_000, 1), 1);
        // from 1 Mbps: f ≥ R+ = 2 → highest below 2.5 = 2 Mbps
        assert_eq!(b.decide(8_750_000_000, 0), 1);
        // from 5 Mbps: f ≤ R− = 3 → lowest above 2.5 = 3 Mbps
        assert_eq!(b.decide(8_750_000_000, 3), 2);
    }
}
