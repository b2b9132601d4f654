//! HTTP adaptive streaming: the video, the players, the playback model, and HTTP over the
//! simulated TCP.
//!
//! - [`video`]: bitrate ladder, segment durations and sizes; the papers' presets.
//! - [`mpd`]: a video from a DASH MPD (parsed with the `dash-mpd-core` crate).
//! - [`mpd_clean`]: what is dropped from an MPD before parsing (empty attributes, audio/text sets).
//! - [`xs_duration`]: XML Schema durations (`PT10S`), checked against overflow.
//! - [`playback`]: the common playback model (startup, stalls, conservation).
//! - [`players`]: the ABR decision logic, one file per player, independent of the transport.
//! - [`driver`]: a session driven from outside (live mode's real HTTP client): the same
//!   players, playback model and scheduler, without a network.
//! - [`http`]: the HTTP messages (GET request, response header + body) and the server.
//! - [`session`]: one player session as a simulator application: the HTTP client with its
//!   connection policy, the server side of its connections, the playback and the logs.

pub mod driver;
pub mod http;
pub mod mpd;
pub mod mpd_clean;
pub mod playback;
pub mod players;
pub mod session;
pub mod video;
pub mod xs_duration;

pub use session::{PlayerLog, SampleRecord, SegmentRecord};
