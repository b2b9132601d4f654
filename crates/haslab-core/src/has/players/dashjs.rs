//! The dash.js v4.7.4 ABR controller with its default rules: strategies `abrThroughput`,
//! `abrBola` and `abrDynamic` (the default, `streaming.abr.ABRStrategy` in
//! `src/core/Settings.js`), as players `dashjs-throughput`, `dashjs-bola`, `dashjs-dynamic`.
//!
//! Rules (`src/streaming/rules/abr/ABRRulesCollection.js`): BolaRule ([`super::dashjs_bola`],
//! answers only while the buffer-occupancy strategy is on), ThroughputRule (only while it is
//! off), InsufficientBufferRule, SwitchHistoryRule; the controller takes the lowest level any
//! rule answers (`getMinSwitchRequest`, all rules have the default priority) and keeps the
//! current level when none answers. AbandonRequestsRule ([`super::dashjs_abandon`]) is asked at
//! every progress event. DroppedFramesRule has nothing to see in a simulation.
//!
//! - **ThroughputRule** (`ThroughputRule.js`): with a throughput sample and the buffer state
//!   BUFFER_LOADED (buffer ≥ `stallThreshold` 0.3 s) and no abandonment in the last
//!   `abandonLoadTimeout` 10 s: `getQualityForBitrate(safe throughput, latency)` — the sliding
//!   window mean × 0.9, discounted by latency/τ ([`super::throughput_history`]).
//! - **InsufficientBufferRule** (`InsufficientBufferRule.js`): ignores the first 2 segments
//!   (`SEGMENT_IGNORE_COUNT`); level 0 while BUFFER_EMPTY (buffer < 0.3 s once playing);
//!   else `getQualityForBitrate(throughput × B/τ × 0.5, latency)` (`INSUFFICIENT_BUFFER_SAFETY_FACTOR`).
//! - **SwitchHistoryRule** (`SwitchHistoryRule.js`, `SwitchRequestHistory.js`): over the last 8
//!   decisions (`SWITCH_REQUEST_HISTORY_DEPTH`), counted per old level from the lowest: once 6
//!   (`SAMPLE_SIZE`) are counted and drops/no-drops > 0.075 (`MAX_SWITCH`), at most that level
//!   (one lower if it had drops).
//! - **Dynamic** (`AbrController._updateDynamicAbrStrategy`): BOLA on when the buffer exceeds
//!   `stableBufferTime` (12 s, `streaming.buffer.stableBufferTime`), off again when it falls to
//!   half of it (6 s); starts off.
//! - **First level**: `getQualityForBitrate(initialBitrate)`, 1000 kbps (`DEFAULT_VIDEO_BITRATE`
//!   in `AbrController.js`) with no latency discount (`StreamProcessor.js`).
//! - **Scheduling** (`ScheduleController.js`): the next request once the buffer is below the
//!   buffer target — `stableBufferTime` 12 s, or at the top level `bufferTimeAtTopQuality` 30 s
//!   (`bufferTimeAtTopQualityLongForm` 60 s for videos of at least
//!   `longFormContentDurationThreshold` 600 s); checked at once after a segment is appended and
//!   then every `scheduling.defaultTimeout` 500 ms. BolaRule's delay postpones the request
//!   (`delayLoadingTime`). The session's buffer cap applies on top.
//! - **Abandonment** (`AbrController._onFragmentLoadProgress`): the request is aborted, the
//!   current level becomes the rule's answer, the switch history restarts from that switch,
//!   up-switches are barred for 10 s, BolaRule lowers its placeholder.
//!
//! Simplifications: the ABR decision for a request is taken at the scheduling check that
//! issues it (computed when the previous segment completes, with the buffer drained to that
//! check's time); the buffer state and the dynamic switch are evaluated at these checks and at
//! download completions, where dash.js evaluates them at every buffer-level update; there are no
//! initialisation segments.

use super::dashjs_abandon::AbandonRequests;
use super::dashjs_bola::DashBola;
use super::throughput_history::{quality_for_bitrate, MovingAverage, ThroughputHistory};
use super::{BufferState, Player, PlayerContext, Progress, SegmentResult, When};
use crate::has::playback::Phase;
use crate::sim::units::{Duration, Rate};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// `streaming.buffer.stallThreshold` (Settings.js), s
pub const STALL_THRESHOLD_S: f64 = 0.3;
/// InsufficientBufferRule `INSUFFICIENT_BUFFER_SAFETY_FACTOR`
pub const INSUFFICIENT_BUFFER_SAFETY_FACTOR: f64 = 0.5;
/// InsufficientBufferRule `SEGMENT_IGNORE_COUNT`
pub const SEGMENT_IGNORE_COUNT: u32 = 2;
/// SwitchHistoryRule `MAX_SWITCH`
pub const MAX_SWITCH: f64 = 0.075;
/// SwitchHistoryRule `SAMPLE_SIZE`
pub const SWITCH_SAMPLE_SIZE: u32 = 6;
/// SwitchRequestHistory `SWITCH_REQUEST_HISTORY_DEPTH`
pub const SWITCH_REQUEST_HISTORY_DEPTH: usize = 8;

/// Which rules decide (`streaming.abr.ABRStrategy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    Throughput,
    Bola,
    Dynamic,
}

/// Parameters of the dash.js players (dash.js v4.7.4 `src/core/Settings.js` defaults).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct DashjsConfig {
    /// `streaming.buffer.stableBufferTime`. Default "12s".
    pub stable_buffer: Duration,
    /// `streaming.buffer.bufferTimeAtTopQuality`. Default "30s".
    pub buffer_at_top_quality: Duration,
    /// `streaming.buffer.bufferTimeAtTopQualityLongForm`. Default "60s".
    pub buffer_at_top_quality_long_form: Duration,
    /// `streaming.buffer.longFormContentDurationThreshold`. Default "600s".
    pub long_form_threshold: Duration,
    /// `streaming.scheduling.defaultTimeout`, greater than zero. Default "500ms".
    pub schedule_timeout: Duration,
    /// `streaming.abr.initialBitrate.video` (−1 → `DEFAULT_VIDEO_BITRATE`). Default "1000kbps".
    pub initial_bitrate: Rate,
    /// `streaming.abr.movingAverageMethod`: "sliding" (default) or "ewma".
    pub average: MovingAverage,
    /// `additionalAbrRules.insufficientBufferRule`. Default true.
    pub insufficient_buffer_rule: bool,
    /// `additionalAbrRules.switchHistoryRule`. Default true.
    pub switch_history_rule: bool,
    /// `additionalAbrRules.abandonRequestsRule`. Default true.
    pub abandon_requests_rule: bool,
    /// `streaming.abandonLoadTimeout`. Default "10s".
    pub abandon_load_timeout: Duration,
}

impl Default for DashjsConfig {
    fn default() -> Self {
        const S: u64 = 1_000_000_000;
        DashjsConfig {
            stable_buffer: Duration(12 * S),
            buffer_at_top_quality: Duration(30 * S),
            buffer_at_top_quality_long_form: Duration(60 * S),
            long_form_threshold: Duration(600 * S),
            schedule_timeout: Duration(S / 2),
            initial_bitrate: Rate(1_000_000),
            average: MovingAverage::Sliding,
            insufficient_buffer_rule: true,
            switch_history_rule: true,
            abandon_requests_rule: true,
            abandon_load_timeout: Duration(10 * S),
        }
    }
}

impl DashjsConfig {
    pub fn check(&self) -> Result<(), (String, String)> {
        if self.schedule_timeout.0 == 0 {
            return Err((
                "schedule_timeout".into(),
                "must be greater than zero".into(),
            ));
        }
        if self.stable_buffer.0 == 0 {
            return Err(("stable_buffer".into(), "must be greater than zero".into()));
        }
        Ok(())
    }
}

/// SwitchRequestHistory with SwitchHistoryRule.
#[derive(Clone, Debug, Default)]
struct SwitchHistory {
    /// (drops, no drops) per old level
    per_level: Vec<(u32, u32)>,
    history: VecDeque<(usize, bool)>,
}

impl SwitchHistory {
    fn push(&mut self, old: usize, new: usize) {
        if self.per_level.len() <= old {
            self.per_level.resize(old + 1, (0, 0));
        }
        let drop = new < old;
        let e = &mut self.per_level[old];
        if drop {
            e.0 += 1;
        } else {
            e.1 += 1;
        }
        self.history.push_back((old, drop));
        if self.history.len() > SWITCH_REQUEST_HISTORY_DEPTH {
            let (i, d) = self.history.pop_front().unwrap();
            let e = &mut self.per_level[i];
            if d {
                e.0 -= 1;
            } else {
                e.1 -= 1;
            }
        }
    }
    fn reset(&mut self) {
        *self = SwitchHistory::default();
    }
    fn max_index(&self) -> Option<usize> {
        let (mut drops, mut no_drops) = (0u32, 0u32);
        for (i, &(d, n)) in self.per_level.iter().enumerate() {
            drops += d;
            no_drops += n;
            let ratio = if no_drops == 0 {
                f64::INFINITY
            } else {
                drops as f64 / no_drops as f64
            };
            if drops + no_drops >= SWITCH_SAMPLE_SIZE && ratio > MAX_SWITCH {
                return Some(if i > 0 && d > 0 { i - 1 } else { i });
            }
        }
        None
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BufferLevelState {
    Loaded,
    Empty,
}

pub struct Dashjs {
    cfg: DashjsConfig,
    ctx: PlayerContext,
    strategy: Strategy,
    history: ThroughputHistory,
    bola: DashBola,
    use_bola: bool,
    /// the current level (`qualityDict`)
    quality: usize,
    buffer_state: Option<BufferLevelState>,
    ibr_ignore: u32,
    switches: SwitchHistory,
    abandon: AbandonRequests,
    abandon_until_ns: Option<u64>,
    /// the level decided at the scheduling check for the next request
    planned: Option<usize>,
}

impl Dashjs {
    pub fn new(cfg: DashjsConfig, ctx: PlayerContext, strategy: Strategy) -> Self {
        let quality = quality_for_bitrate(
            &ctx.bitrates_bps,
            cfg.initial_bitrate.0 as f64,
            None,
            ctx.tau_s(),
        );
        Dashjs {
            history: ThroughputHistory::new(cfg.average),
            bola: DashBola::new(
                &ctx.bitrates_bps,
                ctx.tau_s(),
                cfg.stable_buffer.0 as f64 / 1e9,
            ),
            use_bola: strategy == Strategy::Bola,
            quality,
            buffer_state: None,
            ibr_ignore: SEGMENT_IGNORE_COUNT,
            switches: SwitchHistory::default(),
            abandon: AbandonRequests::default(),
            abandon_until_ns: None,
            planned: None,
            cfg,
            ctx,
            strategy,
        }
    }

    fn stable_s(&self) -> f64 {
        self.cfg.stable_buffer.0 as f64 / 1e9
    }

    /// BufferController.checkIfSufficientBuffer; BUFFER_EMPTY only once playback has started.
    fn observe_buffer(&mut self, buffer_s: f64, phase: Phase) {
        if buffer_s < STALL_THRESHOLD_S {
            if phase != Phase::Startup && self.buffer_state != Some(BufferLevelState::Empty) {
                self.buffer_state = Some(BufferLevelState::Empty);
                self.bola.buffer_empty();
            }
        } else {
            self.buffer_state = Some(BufferLevelState::Loaded);
        }
        if self.strategy == Strategy::Dynamic {
            let threshold = if self.use_bola {
                0.5 * self.stable_s()
            } else {
                self.stable_s()
            };
            self.use_bola = buffer_s > threshold;
        }
    }

    fn abandoning(&self, now_ns: u64) -> bool {
        self.abandon_until_ns.is_some_and(|t| now_ns < t)
    }

    /// `AbrController.checkPlaybackQuality` at `now_ns` with buffer `buffer_s`: the level and
    /// BolaRule's delay (s).
    pub fn check_playback_quality(
        &mut self,
        now_ns: u64,
        buffer_s: f64,
        phase: Phase,
    ) -> (usize, f64) {
        self.observe_buffer(buffer_s, phase);
        let tau = self.ctx.tau_s();
        let ladder = &self.ctx.bitrates_bps;
        let (avg, safe, lat) = (
            self.history.average_bps(),
            self.history.safe_average_bps(),
            self.history.average_latency_ms(),
        );
        let mut answers: Vec<usize> = Vec::new();
        let mut delay = 0.0;
        if self.use_bola {
            if let Some((q, d)) = self.bola.max_index(now_ns, buffer_s, safe, lat) {
                answers.push(q);
                delay = d;
            }
        } else if let (Some(s), Some(BufferLevelState::Loaded)) = (safe, self.buffer_state) {
            if !self.abandoning(now_ns) {
                answers.push(quality_for_bitrate(ladder, s, lat, tau));
            }
        }
        if self.cfg.insufficient_buffer_rule && self.ibr_ignore == 0 {
            answers.push(match (self.buffer_state, avg) {
                (Some(BufferLevelState::Empty), _) => 0,
                (_, Some(a)) => quality_for_bitrate(
                    ladder,
                    a * (buffer_s / tau) * INSUFFICIENT_BUFFER_SAFETY_FACTOR,
                    lat,
                    tau,
                ),
                // getQualityForBitrate(NaN) answers QUALITY_DEFAULT
                (_, None) => 0,
            });
        }
        if self.cfg.switch_history_rule {
            if let Some(q) = self.switches.max_index() {
                answers.push(q);
            }
        }
        let old = self.quality;
        let new = answers.iter().copied().min().map(|q| q.min(self.ctx.top()));
        self.switches.push(old, new.unwrap_or(old));
        if let Some(n) = new {
            if n != old && (!self.abandoning(now_ns) || n < old) {
                self.quality = n;
                self.bola.quality_changed(n);
            }
        }
        (self.quality, delay)
    }

    /// The buffer target of the scheduler at the current level.
    fn buffer_target_s(&self, segments: usize) -> f64 {
        if self.quality == self.ctx.top() {
            let duration_ns = segments as u64 * self.ctx.segment_ns;
            let t = if duration_ns >= self.cfg.long_form_threshold.0 {
                self.cfg.buffer_at_top_quality_long_form
            } else {
                self.cfg.buffer_at_top_quality
            };
            t.0 as f64 / 1e9
        } else {
            self.stable_s()
        }
    }
}

impl Player for Dashjs {
    fn name(&self) -> &'static str {
        match self.strategy {
            Strategy::Throughput => "dashjs-throughput",
            Strategy::Bola => "dashjs-bola",
            Strategy::Dynamic => "dashjs-dynamic",
        }
    }

    fn choose(&mut self, st: &BufferState) -> usize {
        match self.planned.take() {
            Some(q) => q,
            None => {
                self.check_playback_quality(st.now_ns, st.buffer_s(), st.phase)
                    .0
            }
        }
    }

    fn downloaded(&mut self, seg: &SegmentResult, st: &BufferState) -> When {
        self.history
            .push(seg.bytes, seg.ttfb_ns(), seg.transfer_ns());
        self.ibr_ignore = self.ibr_ignore.saturating_sub(1);
        let b = st.buffer_s();
        self.bola.segment_loaded(
            seg.level,
            seg.media_ns as f64 / 1e9,
            seg.request_ns,
            seg.done_ns,
            b,
        );
        self.observe_buffer(b, st.phase);
        // ScheduleController: checked at once, then every defaultTimeout until B < target
        let target = self.buffer_target_s(st.segments);
        let poll = self.cfg.schedule_timeout.0;
        let k = if b < target {
            0
        } else if st.phase != Phase::Playing {
            // nothing drains: ask when the session can request (it does at once)
            return When::BufferAtMost((target * 1e9) as u64);
        } else {
            ((b - target) * 1e9 / poll as f64).floor() as u64 + 1
        };
        let at = st.now_ns + k * poll;
        let b_then = (b - (k * poll) as f64 / 1e9).max(0.0);
        let (q, delay) = self.check_playback_quality(at, b_then, st.phase);
        self.planned = Some(q);
        When::At(at + (delay * 1e9) as u64)
    }

    fn estimate_bps(&self) -> Option<f64> {
        self.history.average_bps()
    }

    fn abandons(&self) -> bool {
        self.cfg.abandon_requests_rule
    }

    fn progress(&mut self, p: &Progress, st: &BufferState) -> Option<usize> {
        let to = self.abandon.should_abandon(
            p,
            &self.ctx.bitrates_bps,
            st.buffer_s(),
            self.stable_s(),
        )?;
        self.abandon_until_ns = Some(p.now_ns + self.cfg.abandon_load_timeout.0);
        self.switches.reset();
        self.switches.push(self.quality, to);
        self.quality = to;
        self.bola.quality_changed(to);
        self.bola.abandoned(st.buffer_s());
        self.planned = None;
        Some(to)
    }
}

/// dash.js with strategy abrThroughput (the registry's `dashjs-throughput`).
pub struct DashjsThroughput;

impl crate::sim::registry::Algorithm for DashjsThroughput {
    type Config = DashjsConfig;
    const NAME: &'static str = "dashjs-throughput";
    const SOURCE: &'static str = "dash.js v4.7.4 ABRStrategy abrThroughput with its default rules";
    const SUMMARY: &'static str = "dash.js v4.7.4, strategy abrThroughput.";
    fn check(config: &DashjsConfig) -> Result<(), (String, String)> {
        config.check()
    }
}

impl super::AbrAlgorithm for DashjsThroughput {
    fn build(
        config: &DashjsConfig,
        ctx: PlayerContext,
        _rng: crate::sim::rng::Stream,
    ) -> Box<dyn Player> {
        Box::new(Dashjs::new(config.clone(), ctx, Strategy::Throughput))
    }
}

/// dash.js with strategy abrBola (the registry's `dashjs-bola`).
pub struct DashjsBola;

impl crate::sim::registry::Algorithm for DashjsBola {
    type Config = DashjsConfig;
    const NAME: &'static str = "dashjs-bola";
    const SOURCE: &'static str = "dash.js v4.7.4 ABRStrategy abrBola with its default rules";
    const SUMMARY: &'static str = "dash.js v4.7.4, strategy abrBola.";
    fn check(config: &DashjsConfig) -> Result<(), (String, String)> {
        config.check()
    }
}

impl super::AbrAlgorithm for DashjsBola {
    fn build(
        config: &DashjsConfig,
        ctx: PlayerContext,
        _rng: crate::sim::rng::Stream,
    ) -> Box<dyn Player> {
        Box::new(Dashjs::new(config.clone(), ctx, Strategy::Bola))
    }
}

/// dash.js with strategy abrDynamic, its default (the registry's `dashjs-dynamic`).
pub struct DashjsDynamic;

impl crate::sim::registry::Algorithm for DashjsDynamic {
    type Config = DashjsConfig;
    const NAME: &'static str = "dashjs-dynamic";
    const ALIASES: &'static [&'static str] = &["dashjs"];
    const SOURCE: &'static str =
        "dash.js v4.7.4 ABRStrategy abrDynamic (its default) with its default rules";
    const SUMMARY: &'static str = "dash.js v4.7.4, strategy abrDynamic (its default).";
    fn check(config: &DashjsConfig) -> Result<(), (String, String)> {
        config.check()
    }
}

impl super::AbrAlgorithm for DashjsDynamic {
    fn build(
        config: &DashjsConfig,
        ctx: PlayerContext,
        _rng: crate::sim::rng::Stream,
    ) -> Box<dyn Player> {
        Box::new(Dashjs::new(config.clone(), ctx, Strategy::Dynamic))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const S: u64 = 1_000_000_000;

    fn ctx() -> PlayerContext {
        PlayerContext {
            bitrates_bps: vec![500_000, 1_000_000, 2_000_000, 4_000_000],
            segment_ns: 2 * S,
            buffer_cap_ns: 60 * S,
            video: None,
        }
    }

    fn seg(level: usize, bytes: u64, req: u64, first: u64, done: u64) -> SegmentResult {
        SegmentResult {
            index: 0,
            level,
            bytes,
            media_ns: 2 * S,
            request_ns: req,
            first_byte_ns: first,
            done_ns: done,
        }
    }

    fn st(now: u64, buffer_ns: u64, phase: Phase) -> BufferState {
        BufferState {
            now_ns: now,
            buffer_ns,
            phase,
            next_segment: 1,
            segments: 300,
        }
    }

    #[test]
    fn the_first_level_is_the_one_for_1000_kbps() {
        let mut d = Dashjs::new(Default::default(), ctx(), Strategy::Dynamic);
        assert_eq!(d.choose(&st(0, 0, Phase::Startup)), 1);
    }

    #[test]
    fn the_throughput_rule_uses_the_safe_latency_discounted_mean() {
        let mut d = Dashjs::new(
            DashjsConfig {
                insufficient_buffer_rule: false,
                switch_history_rule: false,
                ..Default::default()
            },
            ctx(),
            Strategy::Throughput,
        );
        // 1 MB in 2 s after a 200 ms first byte: 4 Mbps, latency 200 ms
        let w = d.downloaded(
            &seg(1, 1_000_000, 0, S / 5, S / 5 + 2 * S),
            &st(3 * S, 4 * S, Phase::Playing),
        );
        // B = 4 s < 12 s: decided at once
        assert_eq!(w, When::At(3 * S));
        // safe 3.6 Mbps × (1 − 0.2/2) = 3.24 Mbps → 2 Mbps (level 2)
        assert_eq!(d.choose(&st(3 * S, 4 * S, Phase::Playing)), 2);
    }

    #[test]
    fn the_scheduler_polls_every_500_ms_until_the_buffer_is_below_its_target() {
        let mut d = Dashjs::new(Default::default(), ctx(), Strategy::Throughput);
        // B = 13.2 s ≥ 12 s at level 1: polls at +0.5 (12.7), +1.0 (12.2), +1.5 (11.7 < 12)
        let w = d.downloaded(
            &seg(1, 250_000, 0, 0, 2 * S),
            &st(10 * S, 13_200_000_000, Phase::Playing),
        );
        assert_eq!(w, When::At(10 * S + 1_500_000_000));
    }

    #[test]
    fn dynamic_switches_to_bola_above_12_s_and_back_at_6_s() {
        let mut d = Dashjs::new(Default::default(), ctx(), Strategy::Dynamic);
        d.observe_buffer(11.0, Phase::Playing);
        assert!(!d.use_bola);
        d.observe_buffer(12.5, Phase::Playing);
        assert!(d.use_bola);
        d.observe_buffer(7.0, Phase::Playing);
        assert!(d.use_bola, "hysteresis");
        d.observe_buffer(5.9, Phase::Playing);
        assert!(!d.use_bola);
    }

    #[test]
    fn the_switch_history_caps_a_level_that_keeps_dropping() {
        let mut h = SwitchHistory::default();
        // at level 2: 5 holds and 1 drop → 6 samples, 1/5 = 0.2 > 0.075 → level 1
        for _ in 0..5 {
            h.push(2, 2);
        }
        assert_eq!(h.max_index(), None);
        h.push(2, 1);
        assert_eq!(h.max_index(), Some(1));
        // 8 more holds push the drop out of the 8-deep history
        for _ in 0..8 {
            h.push(2, 2);
        }
        assert_eq!(h.max_index(), None);
    }

    #[test]
    fn the_insufficient_buffer_rule_limits_a_low_buffer() {
        let mut d = Dashjs::new(
            DashjsConfig {
                switch_history_rule: false,
                ..Default::default()
            },
            ctx(),
            Strategy::Throughput,
        );
        for k in 0..2 {
            d.downloaded(
                &seg(1, 1_000_000, 0, 0, 2 * S),
                &st(k * S, 20 * S, Phase::Playing),
            );
        }
        // 4 Mbps: throughput rule → 3.6 → level 2; IBR at B = 1 s: 4 × 0.5 × 0.5 = 1 Mbps
        // (latency 1 ms → ×0.9995) → just below 1 Mbps → level 0
        let (q, _) = d.check_playback_quality(5 * S, 1.0, Phase::Playing);
        assert_eq!(q, 0);
    }
}
