//! Adaptive-bitrate players: pure decision logic, one file per player with its source.
//!
//! A player sees segment results and the buffer state and answers two questions: *which level*
//! the next segment is requested at ([`Player::choose`], asked when the request is issued) and
//! *when* the next request is issued ([`Player::downloaded`], asked when a download completes).
//! Nothing here touches the simulator: the simulated HTTP client drives players now, and a real
//! HTTP client (live mode) can drive the same code.
//!
//! The common playback model (startup, stalls, buffer cap) is in [`super::playback`]; the
//! session enforces the buffer cap on top of a player's [`When`].
//!
//! One file per player, each with its parameters on top and the source of every default:
//! [`rbb`], [`conventional`], [`panda`], [`elastic`], [`festive`], [`bba`], [`bola`],
//! [`bola_e`], [`dashjs`] (with [`dashjs_bola`], [`dashjs_abandon`]), [`mpc`]; the dash.js
//! throughput estimate shared by several is [`throughput_history`].

// Each player's module is declared by its line in `registry!` below; these are its helpers.
pub mod dashjs_abandon;
pub mod dashjs_bola;
pub mod throughput_history;

use super::playback::Phase;
use crate::sim::registry::{registry, Algorithm};
use crate::sim::rng::Stream;

/// What a player knows about the video and the session (from the MPD and its configuration).
#[derive(Clone, Debug)]
pub struct PlayerContext {
    /// Encoding bitrates, ascending.
    pub bitrates_bps: Vec<u64>,
    /// Nominal segment duration τ.
    pub segment_ns: u64,
    /// Buffer cap of the common playback model.
    pub buffer_cap_ns: u64,
    /// The video itself (each segment's duration and size at each level), for players that plan
    /// with real segment sizes (MPC's d_k(R_k)); `None` when only the ladder is known.
    pub video: Option<std::sync::Arc<crate::has::video::Video>>,
}

impl PlayerContext {
    pub fn levels(&self) -> usize {
        self.bitrates_bps.len()
    }
    pub fn top(&self) -> usize {
        self.bitrates_bps.len() - 1
    }
    pub fn tau_s(&self) -> f64 {
        self.segment_ns as f64 / 1e9
    }
    pub fn cap_s(&self) -> f64 {
        self.buffer_cap_ns as f64 / 1e9
    }
}

/// One completed segment download.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SegmentResult {
    pub index: usize,
    pub level: usize,
    /// Media (body) bytes of the segment.
    pub bytes: u64,
    /// Media duration of the segment.
    pub media_ns: u64,
    /// When the request was issued (including connection set-up when one was needed).
    pub request_ns: u64,
    /// When the first byte of the response arrived (request_ns ≤ first_byte_ns ≤ done_ns).
    pub first_byte_ns: u64,
    /// When the last byte arrived.
    pub done_ns: u64,
}

impl SegmentResult {
    /// T̃: request → last byte, at least 1 ns.
    pub fn download_ns(&self) -> u64 {
        (self.done_ns - self.request_ns).max(1)
    }
    /// Time to first byte: request → first byte of the response (dash.js's "latency",
    /// `tresponse − trequest`).
    pub fn ttfb_ns(&self) -> u64 {
        self.first_byte_ns.saturating_sub(self.request_ns)
    }
    /// First byte → last byte, at least 1 ns (dash.js's download time with
    /// `useDeadTimeLatency`, Sabre's `time − time_to_first_bit`).
    pub fn transfer_ns(&self) -> u64 {
        self.done_ns.saturating_sub(self.first_byte_ns).max(1)
    }
    /// x̃ = bits / T̃ (actual segment bytes, not bitrate × τ).
    pub fn throughput_bps(&self) -> f64 {
        self.bytes as f64 * 8e9 / self.download_ns() as f64
    }
}

/// The buffer and session state a player sees.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BufferState {
    pub now_ns: u64,
    pub buffer_ns: u64,
    pub phase: Phase,
    /// Index of the next segment to request.
    pub next_segment: usize,
    /// Number of segments of the video.
    pub segments: usize,
}

impl BufferState {
    pub fn buffer_s(&self) -> f64 {
        self.buffer_ns as f64 / 1e9
    }
}

/// An in-flight download, as a player sees it on a progress event.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Progress {
    pub index: usize,
    pub level: usize,
    /// Media (body) bytes of the whole segment (Content-Length).
    pub bytes_total: u64,
    /// Media bytes received so far (< bytes_total).
    pub bytes_loaded: u64,
    pub media_ns: u64,
    pub request_ns: u64,
    /// When the first byte of the response arrived (None: not yet).
    pub first_byte_ns: Option<u64>,
    pub now_ns: u64,
}

/// The interval of progress events a player that abandons requests is given: the
/// XMLHttpRequest standard fires `progress` "every 50ms or for every byte received, whichever
/// is least frequent" (XHR Living Standard, "process response body"); Sabre checks abandonment
/// every 50 ms of download as well (`NetworkModel.min_progress_time = 50`).
pub const PROGRESS_EVERY_NS: u64 = 50_000_000;

/// When to issue the next request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum When {
    /// At once.
    Now,
    /// At this absolute time (at once if it is past).
    At(u64),
    /// As soon as the buffer holds at most this much media.
    BufferAtMost(u64),
}

/// A player's decision logic.
pub trait Player: Send {
    fn name(&self) -> &'static str;
    /// The level of the next segment, decided when its request is issued.
    fn choose(&mut self, st: &BufferState) -> usize;
    /// A segment has been downloaded: when to issue the next request.
    fn downloaded(&mut self, seg: &SegmentResult, st: &BufferState) -> When;
    /// The current bandwidth estimate (the value the last decision used), for the log.
    fn estimate_bps(&self) -> Option<f64> {
        None
    }
    /// Whether the player may abandon an in-flight request (then the session reports
    /// progress every [`PROGRESS_EVERY_NS`] to [`Player::progress`]).
    fn abandons(&self) -> bool {
        false
    }
    /// Progress of the in-flight download: Some(level) abandons it and requests the same
    /// segment again at `level` (lower than the in-flight level); the next [`Player::choose`]
    /// is asked for that request and should answer `level`.
    fn progress(&mut self, _p: &Progress, _st: &BufferState) -> Option<usize> {
        None
    }
}

/// A player algorithm's registration: its config (name, aliases, source, range check: see
/// [`Algorithm`]) builds the player. Implemented in the algorithm's own file, by its player
/// type or, where one player type serves several strategies (dash.js, MPC), by a marker type
/// per strategy.
pub trait AbrAlgorithm: Algorithm {
    /// A fresh player; `rng` is the player's own random stream (FESTIVE draws from it).
    fn build(config: &Self::Config, ctx: PlayerContext, rng: Stream) -> Box<dyn Player>;
}

registry! {
    /// The `abr` of a `[[player]]`: the algorithm and its parameters.
    ///
    /// A new player is a file in this folder implementing [`AbrAlgorithm`], and a line here
    /// (which also declares the file's module). A file serving several strategies lists one
    /// marker type per strategy.
    pub enum AbrConfig: AbrAlgorithm, visit AbrVisit, what "player algorithm" {
        mod rbb { Rbb(Rbb) }
        mod conventional { Conventional(Conventional) }
        mod panda { Panda(Panda) }
        mod elastic { Elastic(Elastic) }
        mod festive { Festive(Festive) }
        mod bba { Bba(Bba) }
        mod bola { Bola(Bola) }
        mod bola_e { BolaE(BolaE) }
        mod dashjs { DashjsThroughput(DashjsThroughput), DashjsBola(DashjsBola), DashjsDynamic(DashjsDynamic) }
        mod mpc { RobustMpc(RobustMpc), FastMpc(FastMpc) }
    }
}

impl Default for AbrConfig {
    fn default() -> Self {
        AbrConfig::Conventional(Default::default())
    }
}

impl AbrConfig {
    /// `[{name, aliases, source, parameters: {key: default}}]` for every algorithm, in
    /// [`Self::NAMES`] order (`haslab abr`).
    pub fn catalog_json() -> serde_json::Value {
        let list: Vec<serde_json::Value> = Self::catalog()
            .into_iter()
            .map(|a| {
                serde_json::json!({
                    "name": a.name,
                    "aliases": a.aliases,
                    "source": a.source,
                    "parameters": a.defaults,
                })
            })
            .collect();
        serde_json::Value::Array(list)
    }

    /// A fresh player. `rng` is the player's own random stream (FESTIVE draws from it).
    pub fn build(&self, ctx: PlayerContext, rng: Stream) -> Box<dyn Player> {
        struct Build(PlayerContext, Stream);
        impl AbrVisit for Build {
            type Out = Box<dyn Player>;
            fn visit<A: AbrAlgorithm>(self, config: &A::Config) -> Self::Out {
                A::build(config, self.0, self.1)
            }
        }
        self.visit(Build(ctx, rng))
    }
}

// ---------------------------------------------------------------------------------------------
// Shared pieces.

/// The dead-zone quantizer of PANDA (Li et al., JSAC 2014, Algorithm 1 and PANDA's step 3): with
/// `r_up = max{r ≤ y − Δ_up}` and `r_down = max{r ≤ y − Δ_down}`, go up to r_up when the previous
/// rate is below it, keep the previous rate inside [r_up, r_down], else go down to r_down.
pub fn dead_zone(ladder: &[u64], y_bps: f64, up_bps: f64, down_bps: f64, prev: usize) -> usize {
    let r_up = super::video::highest_at_most(ladder, y_bps - up_bps);
    let r_down = super::video::highest_at_most(ladder, y_bps - down_bps);
    if prev < r_up {
        r_up
    } else if prev <= r_down {
        prev
    } else {
        r_down
    }
}

/// Harmonic mean of positive samples (None when empty).
pub fn harmonic_mean(xs: impl IntoIterator<Item = f64>) -> Option<f64> {
    let (mut n, mut inv) = (0usize, 0.0);
    for x in xs {
        n += 1;
        inv += 1.0 / x.max(1e-9);
    }
    (n > 0).then(|| n as f64 / inv)
}

/// Checks that a parameter is finite and inside `lo..=hi`.
pub(crate) fn check_range(field: &str, v: f64, lo: f64, hi: f64) -> Result<(), (String, String)> {
    if !v.is_finite() || v < lo || v > hi {
        return Err((
            field.to_string(),
            format!("{v} is out of range: must be between {lo} and {hi}"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dead_zone_holds_the_previous_level_between_r_up_and_r_down() {
        let l = [1_000, 2_000, 3_000, 4_000];
        // y = 3500, up margin 1000 → r_up = 2000 (idx 1); down margin 0 → r_down = 3000 (idx 2)
        assert_eq!(
            dead_zone(&l, 3500.0, 1000.0, 0.0, 0),
            1,
            "below r_up: go up to r_up"
        );
        assert_eq!(dead_zone(&l, 3500.0, 1000.0, 0.0, 2), 2, "inside: keep");
        assert_eq!(
            dead_zone(&l, 3500.0, 1000.0, 0.0, 3),
            2,
            "above r_down: go down"
        );
    }

    #[test]
    fn harmonic_mean_is_dominated_by_small_samples() {
        assert_eq!(harmonic_mean([]), None);
        let h = harmonic_mean([1.0, 4.0, 4.0]).unwrap();
        assert!((h - 2.0).abs() < 1e-12);
    }

    #[test]
    fn every_name_builds_its_player() {
        let ctx = PlayerContext {
            bitrates_bps: vec![1_000_000, 2_000_000],
            segment_ns: 2_000_000_000,
            buffer_cap_ns: 30_000_000_000,
            video: None,
        };
        for n in AbrConfig::NAMES {
            let c = AbrConfig::by_name(n).unwrap();
            assert_eq!(c.name(), *n);
            assert!(c.check().is_ok());
            let p = c.build(ctx.clone(), Stream::new(1, "t"));
            assert_eq!(p.name(), *n);
        }
    }
}
