//! What a player session records (the simulator's and live mode's alike): its segments, its
//! abandoned requests, its per-second state, and the whole log the QoE metrics
//! ([`crate::metrics::qoe`]) are computed from.

use super::playback::{Phase, Stall};

/// One downloaded segment.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SegmentRecord {
    pub index: u32,
    pub level: u32,
    pub bitrate_bps: u64,
    /// Media (body) bytes.
    pub bytes: u64,
    pub media_ns: u64,
    pub request_ns: u64,
    /// When the first byte of the response arrived.
    pub first_byte_ns: u64,
    pub done_ns: u64,
    /// The player's estimate when it chose this segment's level (NaN if it has none).
    pub estimate_bps: f64,
    pub buffer_before_ns: u64,
    pub buffer_after_ns: u64,
    /// Flow index of the connection it came over.
    pub conn: u32,
}

impl SegmentRecord {
    pub fn download_ns(&self) -> u64 {
        (self.done_ns - self.request_ns).max(1)
    }
    pub fn throughput_bps(&self) -> f64 {
        self.bytes as f64 * 8e9 / self.download_ns() as f64
    }
    /// Time to first byte: request issued → first byte of the response.
    pub fn ttfb_ns(&self) -> u64 {
        self.first_byte_ns.saturating_sub(self.request_ns)
    }
}

/// An in-flight request the player abandoned (see [`super::driver::PlayerDriver::progress`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AbandonRecord {
    pub index: u32,
    pub level: u32,
    /// The level the segment was requested at again.
    pub to_level: u32,
    pub request_ns: u64,
    pub abandon_ns: u64,
    /// Media bytes received before the abandonment (they are discarded).
    pub bytes_loaded: u64,
    pub bytes_total: u64,
    /// Flow index of the connection (closed by the abandonment).
    pub conn: u32,
}

/// The state of a player at a whole second.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SampleRecord {
    pub time_ns: u64,
    /// Level of the latest request.
    pub level: u32,
    pub bitrate_bps: u64,
    /// Bitrate of the segment at the play head (NaN when not playing).
    pub played_bitrate_bps: f64,
    pub buffer_ns: u64,
    /// [`Phase::code`].
    pub phase: u32,
    pub estimate_bps: f64,
}

/// Everything a session recorded, handed to the QoE metrics at the end of the run.
#[derive(Clone, Debug)]
pub struct PlayerLog {
    pub name: String,
    pub algorithm: String,
    pub client: u32,
    pub server: u32,
    pub video: String,
    pub bitrates_bps: Vec<u64>,
    pub segment_ns: u64,
    pub video_segments: usize,
    pub start_ns: u64,
    pub stop_ns: Option<u64>,
    /// End of observation: the stop time, or the end of the run.
    pub end_ns: u64,
    pub segments: Vec<SegmentRecord>,
    pub samples: Vec<SampleRecord>,
    pub startup_delay_ns: Option<u64>,
    pub stalls: Vec<Stall>,
    pub downloaded_ns: u64,
    pub played_ns: u64,
    pub buffered_ns: u64,
    pub discarded_ns: u64,
    pub connections_opened: u32,
    pub final_phase: Phase,
    /// Requests the player abandoned.
    pub abandoned: Vec<AbandonRecord>,
}
