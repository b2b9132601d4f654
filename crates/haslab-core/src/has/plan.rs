//! What a HAS player is asked to do, resolved from the scenario's `[[player]]` table: the
//! player's hosts, ABR rule, video, buffer thresholds, connection policy and transport.

use crate::has::players::AbrConfig;
use crate::has::video::Video;
use crate::tcp::cc::CcConfig;
use crate::tcp::config::TcpConfig;
use std::sync::Arc;

/// How a player's HTTP client uses connections.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConnectionPolicy {
    /// One persistent connection for the whole session.
    Persistent,
    /// A new connection for every request, closed after its response.
    PerRequest,
    /// N persistent connections downloading at once (one request in flight on each).
    Parallel(u32),
    /// N persistent connections used in turn, one request at a time.
    Rotate(u32),
    /// A new connection every k segments.
    Renew(u32),
}

/// One HAS player: a client node running the player, a server node holding the video.
#[derive(Clone, Debug)]
pub struct PlayerPlan {
    pub name: String,
    /// node running the player (HTTP client)
    pub client: usize,
    /// node running the HTTP server
    pub server: usize,
    pub abr: AbrConfig,
    pub video: Arc<Video>,
    /// buffer cap of the playback model
    pub buffer_ns: u64,
    /// media buffered before playback starts
    pub startup_ns: u64,
    /// media buffered before playback resumes after a stall
    pub resume_ns: u64,
    /// refill scheduler (newCWV paper): after the buffer is full, wait until it has drained
    /// to this level; None: the player schedules its requests
    pub refill_low_ns: Option<u64>,
    pub connection: ConnectionPolicy,
    pub start_ns: u64,
    pub stop_ns: Option<u64>,
    pub tcp: TcpConfig,
    /// congestion control of the player's connections (the server side sends the video)
    pub cc: CcConfig,
    /// the named transport the player selected (its options are already in `tcp` and `cc`)
    pub transport: Option<String>,
}
