//! BOLA-BASIC (Spiteri, Urgaonkar, Sitaraman, INFOCOM 2016 / IEEE/ACM ToN 2020), checked
//! against Sabre (written by the BOLA authors).
//!
//! Utilities υ_m = ln(S_m/S_1) with S_m = r_m·τ, so υ_1 = 0. In time units (Sabre):
//! V_p = (B_max − τ)/(υ_M + γp), with B_max the common buffer cap. When a request is issued the
//! level is m* = argmax_m (V_p·(υ_m + γp) − B)/S_m. After a download, the player waits until the
//! buffer has drained to V_p·(υ_M + γp) = B_max − τ, where the best score turns positive.
//!
//! Parameters (defaults): γp = 5 (Sabre). B_max is the session's `buffer` (Sabre's default is
//! 25 s; the session default is 30 s).

use super::{check_range, BufferState, Player, PlayerContext, SegmentResult, When};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Parameters of BOLA-BASIC.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct BolaConfig {
    /// Weight γp of rebuffering avoidance against utility (0 to 100). Default 5 (Sabre).
    pub gamma_p: f64,
}

impl Default for BolaConfig {
    fn default() -> Self {
        BolaConfig { gamma_p: 5.0 }
    }
}

impl BolaConfig {
    pub fn check(&self) -> Result<(), (String, String)> {
        check_range("gamma_p", self.gamma_p, 0.0, 100.0)
    }
}

pub struct Bola {
    cfg: BolaConfig,
    /// υ_m
    utility: Vec<f64>,
    /// S_m, bits
    size_bits: Vec<f64>,
    /// V_p, s
    v_p: f64,
}

impl Bola {
    pub fn new(cfg: BolaConfig, ctx: PlayerContext) -> Self {
        let tau = ctx.tau_s();
        let size_bits: Vec<f64> = ctx.bitrates_bps.iter().map(|&r| r as f64 * tau).collect();
        let utility: Vec<f64> = size_bits.iter().map(|s| (s / size_bits[0]).ln()).collect();
        let um = *utility.last().unwrap();
        let v_p = (ctx.cap_s() - tau).max(0.0) / (um + cfg.gamma_p).max(1e-9);
        Bola {
            cfg,
            utility,
            size_bits,
            v_p,
        }
    }

    pub fn v_p(&self) -> f64 {
        self.v_p
    }

    /// m* for a buffer of `buffer_s` seconds.
    pub fn decide(&self, buffer_s: f64) -> usize {
        let mut best = (0, f64::NEG_INFINITY);
        for (m, (&u, &s)) in self.utility.iter().zip(&self.size_bits).enumerate() {
            let score = (self.v_p * (u + self.cfg.gamma_p) - buffer_s) / s;
            if score > best.1 {
                best = (m, score);
            }
        }
        best.0
    }
}

impl Player for Bola {
    fn name(&self) -> &'static str {
        "bola"
    }
    fn choose(&mut self, st: &BufferState) -> usize {
        self.decide(st.buffer_s())
    }
    fn downloaded(&mut self, _seg: &SegmentResult, _st: &BufferState) -> When {
        let um = *self.utility.last().unwrap();
        When::BufferAtMost((self.v_p * (um + self.cfg.gamma_p) * 1e9) as u64)
    }
}

impl crate::sim::registry::Algorithm for Bola {
    type Config = BolaConfig;
    const NAME: &'static str = "bola";
    const SOURCE: &'static str = "Spiteri, Urgaonkar, Sitaraman, BOLA-BASIC, INFOCOM 2016 (Sabre)";
    const SUMMARY: &'static str =
        "BOLA-BASIC, Lyapunov buffer control (Spiteri, Urgaonkar, Sitaraman, INFOCOM 2016).";
    fn check(config: &BolaConfig) -> Result<(), (String, String)> {
        config.check()
    }
}

impl super::AbrAlgorithm for Bola {
    fn build(
        config: &BolaConfig,
        ctx: PlayerContext,
        _rng: crate::sim::rng::Stream,
    ) -> Box<dyn Player> {
        Box::new(Bola::new(config.clone(), ctx))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const S: u64 = 1_000_000_000;

    #[test]
    fn the_choice_climbs_the_ladder_as_the_buffer_fills() {
        let ctx = PlayerContext {
            bitrates_bps: vec![1_000_000, 2_000_000, 4_000_000],
            segment_ns: 2 * S,
            buffer_cap_ns: 25 * S,
            video: None,
        };
        let b = Bola::new(Default::default(), ctx);
        // V_p = (25 − 2)/(ln 4 + 5) = 3.6158
        assert!((b.v_p() - 23.0 / (4f64.ln() + 5.0)).abs() < 1e-12);
        assert_eq!(b.decide(0.0), 0);
        let mut last = 0;
        for tenth in 0..=230 {
            let m = b.decide(tenth as f64 / 10.0);
            assert!(m >= last, "monotone in the buffer");
            last = m;
        }
        assert_eq!(last, 2, "near B_max − τ the top level wins");
        // level 1 beats level 0 once (V(υ2+γ) − B)/2 > (Vγ − B)/1, i.e. B > V·(γ − ln 2)
        let switch = b.v_p() * (5.0 - 2f64.ln());
        assert_eq!(b.decide(switch - 0.01), 0);
        assert_eq!(b.decide(switch + 0.01), 1);
    }

    #[test]
    fn it_waits_until_the_buffer_is_below_b_max_minus_tau() {
        let ctx = PlayerContext {
            bitrates_bps: vec![1_000_000, 2_000_000],
            segment_ns: 2 * S,
            buffer_cap_ns: 25 * S,
            video: None,
        };
        let mut b = Bola::new(Default::default(), ctx);
        let seg = SegmentResult {
            index: 0,
            level: 0,
            bytes: 1,
            media_ns: 2 * S,
            request_ns: 0,
            first_byte_ns: 0,
            done_ns: 1,
        };
        let st = BufferState {
            now_ns: 0,
            buffer_ns: 0,
            phase: crate::has::playback::Phase::Playing,
            next_segment: 1,
            segments: 10,
        };
        match b.downloaded(&seg, &st) {
            When::BufferAtMost(x) => assert!((x as i64 - 23 * S as i64).abs() < 1000),
            w => panic!("{w:?}"),
        }
    }
}
