//! HTTP adaptive streaming: the video, the players, the playback model, and HTTP over the
//! simulated TCP.
//!
//! - [`video`]: bitrate ladder, segment durations and sizes; the papers' presets.
//! - [`mpd`]: a video from a DASH MPD (parsed with the `dash-mpd-core` crate).
//! - [`mpd_clean`]: what is dropped from an MPD before parsing (empty attributes, audio/text sets).
//! - [`xs_duration`]: XML Schema durations (`PT10S`), checked against overflow.
//! - [`plan`]: a player's resolved configuration ([`plan::PlayerPlan`]).
//! - [`playback`]: the common playback model (startup, stalls, conservation).
//! - [`players`]: the ABR decision logic, one file per player, independent of the transport.
//! - [`driver`]: the player cycle without a network (decisions, playback, scheduler, connection
//!   policy, abandonment), driven by the simulator's sessions and by live mode's HTTP client.
//! - [`log`]: what a session records (segments, abandonments, samples), for the QoE metrics.
//! - [`http`]: the HTTP messages (GET request, response header + body) and the server.
//! - [`session`]: one player session as a simulator application: the player cycle over
//!   simulated TCP connections, and the server side of those connections.

pub mod driver;
pub mod http;
pub mod log;
pub mod mpd;
pub mod mpd_clean;
pub mod plan;
pub mod playback;
pub mod players;
pub mod session;
pub mod video;
pub mod xs_duration;

pub use log::{PlayerLog, SampleRecord, SegmentRecord};
