//! A player session without a network: the decision logic ([`super::players`]), the common
//! playback model ([`super::playback`]) and the request scheduler (buffer cap, refill), driven
//! by whoever moves the bytes. Live mode drives it from a real HTTP client
//! (`python/haslab/live/player.py`, through `haslab._core.LivePlayers`); the simulator's
//! [`super::session::HasSession`] uses the same scheduler rule ([`cap_wait_ns`]).
//!
//! Cycle: [`PlayerDriver::next`] at a time `now` answers "request segment k at level ℓ" (the
//! player's [`Player::choose`]), "not before t" (buffer cap / refill scheduler) or "done"; the
//! caller fetches the segment and calls [`PlayerDriver::completed`] when its last byte arrived,
//! which feeds the playback model and asks the player when to ask again
//! ([`Player::downloaded`]). [`PlayerDriver::sample`] records the per-second state, and
//! [`PlayerDriver::into_log`] gives the same [`PlayerLog`] the simulator's sessions give, so the
//! QoE metrics and tables are computed by the same code.

use super::playback::Playback;
use super::players::{BufferState, Player, PlayerContext, SegmentResult, When};
use super::session::{PlayerLog, SampleRecord, SegmentRecord};
use crate::scenario::PlayerPlan;
use crate::sim::rng::Stream;
use std::sync::Arc;

/// How long to wait before the next request may be issued, under the buffer cap and the
/// refill scheduler (None: issue it now). `refill_waiting` is the refill scheduler's state
/// (set once the buffer was full, cleared when it has drained to the low mark). While not
/// playing the buffer does not drain, so nothing waits.
pub fn cap_wait_ns(
    buffer_ns: u64,
    segment_ns: u64,
    cap_ns: u64,
    refill_low_ns: Option<u64>,
    refill_waiting: &mut bool,
    playing: bool,
) -> Option<u64> {
    if let Some(low) = refill_low_ns {
        if buffer_ns + segment_ns > cap_ns {
            *refill_waiting = true;
        }
        if *refill_waiting && buffer_ns > low {
            // not playing: nothing drains; the caller is woken again by a completion
            return Some(if playing { buffer_ns - low } else { u64::MAX });
        }
        *refill_waiting = false;
    }
    if buffer_ns + segment_ns > cap_ns && playing {
        return Some(buffer_ns + segment_ns - cap_ns);
    }
    None
}

/// What the caller should do next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// Request this segment at this level now.
    Request { segment: usize, level: usize },
    /// Ask again at this time (absolute ns).
    WaitUntil(u64),
    /// The whole video was requested, or the player stopped.
    Done,
}

#[derive(Clone, Copy, Debug)]
struct Outstanding {
    segment: usize,
    level: usize,
    request_ns: u64,
    estimate_bps: f64,
    buffer_before_ns: u64,
}

/// One player session driven from outside (see the module documentation).
pub struct PlayerDriver {
    plan: Arc<PlayerPlan>,
    player: Box<dyn Player>,
    playback: Playback,
    next_segment: usize,
    outstanding: Option<Outstanding>,
    last_level: Option<usize>,
    refill_waiting: bool,
    stopped: bool,
    connections_opened: u32,
    segments: Vec<SegmentRecord>,
    samples: Vec<SampleRecord>,
}

impl PlayerDriver {
    /// A fresh session; the random stream is the simulator's (`player:{name}:abr`).
    pub fn new(plan: Arc<PlayerPlan>, seed: u64) -> Self {
        let video = &plan.video;
        let ctx = PlayerContext {
            bitrates_bps: video.bitrates_bps.clone(),
            segment_ns: video.segment_ns(),
            buffer_cap_ns: plan.buffer_ns,
        };
        let rng = Stream::new(seed, &format!("player:{}:abr", plan.name));
        let player = plan.abr.build(ctx, rng);
        PlayerDriver {
            playback: Playback::new(plan.start_ns, plan.startup_ns, plan.resume_ns),
            player,
            next_segment: 0,
            outstanding: None,
            last_level: None,
            refill_waiting: false,
            stopped: false,
            connections_opened: 0,
            segments: Vec::new(),
            samples: Vec::new(),
            plan,
        }
    }

    pub fn plan(&self) -> &PlayerPlan {
        &self.plan
    }

    fn state(&self, now_ns: u64) -> BufferState {
        BufferState {
            now_ns,
            buffer_ns: self.playback.buffer_ns(),
            phase: self.playback.phase(),
            next_segment: self.next_segment,
            segments: self.plan.video.segments(),
        }
    }

    /// The next step at `now_ns` (see [`Next`]). A request is only issued when none is
    /// outstanding; while one is, the answer is `WaitUntil(u64::MAX)`.
    pub fn next(&mut self, now_ns: u64) -> Next {
        if self.stopped || self.next_segment >= self.plan.video.segments() {
            return Next::Done;
        }
        if self.outstanding.is_some() {
            return Next::WaitUntil(u64::MAX);
        }
        self.playback.advance(now_ns);
        let dur = self.plan.video.durations_ns[self.next_segment];
        if let Some(w) = cap_wait_ns(
            self.playback.buffer_ns(),
            dur,
            self.plan.buffer_ns,
            self.plan.refill_low_ns,
            &mut self.refill_waiting,
            self.playback.is_playing(),
        ) {
            return Next::WaitUntil(now_ns.saturating_add(w));
        }
        let st = self.state(now_ns);
        let level = self.player.choose(&st).min(self.plan.video.levels() - 1);
        self.last_level = Some(level);
        self.outstanding = Some(Outstanding {
            segment: self.next_segment,
            level,
            request_ns: now_ns,
            estimate_bps: self.player.estimate_bps().unwrap_or(f64::NAN),
            buffer_before_ns: st.buffer_ns,
        });
        self.next_segment += 1;
        Next::Request {
            segment: self.next_segment - 1,
            level,
        }
    }

    /// The outstanding segment's last byte arrived at `now_ns` over connection (flow) `conn`;
    /// its first byte at `first_byte_ns` (None: not measured, taken as `now_ns`).
    /// Returns the earliest time of the next request (absolute ns; `u64::MAX` after the last
    /// segment or when nothing is outstanding).
    pub fn completed(&mut self, now_ns: u64, conn: u32, first_byte_ns: Option<u64>) -> u64 {
        let Some(o) = self.outstanding.take() else {
            return u64::MAX;
        };
        let video = &self.plan.video;
        let media_ns = video.durations_ns[o.segment];
        let bytes = video.size(o.level, o.segment);
        let last = o.segment + 1 == video.segments();
        let first_byte_ns = first_byte_ns.unwrap_or(now_ns).clamp(o.request_ns, now_ns);
        self.playback.add_segment(now_ns, o.level, media_ns, last);
        self.segments.push(SegmentRecord {
            index: o.segment as u32,
            level: o.level as u32,
            bitrate_bps: video.bitrates_bps[o.level],
            bytes,
            media_ns,
            request_ns: o.request_ns,
            first_byte_ns,
            done_ns: now_ns,
            estimate_bps: o.estimate_bps,
            buffer_before_ns: o.buffer_before_ns,
            buffer_after_ns: self.playback.buffer_ns(),
            conn,
        });
        if last {
            return u64::MAX;
        }
        let result = SegmentResult {
            index: o.segment,
            level: o.level,
            bytes,
            media_ns,
            request_ns: o.request_ns,
            first_byte_ns,
            done_ns: now_ns,
        };
        let st = self.state(now_ns);
        match self.player.downloaded(&result, &st) {
            When::Now => now_ns,
            When::At(t) => t.max(now_ns),
            When::BufferAtMost(b) => {
                let buf = self.playback.buffer_ns();
                if buf <= b || !self.playback.is_playing() {
                    now_ns
                } else {
                    now_ns + (buf - b)
                }
            }
        }
    }

    /// The caller opened a connection for this player.
    pub fn connection_opened(&mut self) {
        self.connections_opened += 1;
    }

    /// Records the state at `now_ns` (the simulator samples at whole seconds).
    pub fn sample(&mut self, now_ns: u64) {
        self.playback.advance(now_ns);
        let video = &self.plan.video;
        let level = self.last_level.unwrap_or(0);
        self.samples.push(SampleRecord {
            time_ns: now_ns,
            level: level as u32,
            bitrate_bps: video.bitrates_bps[level],
            played_bitrate_bps: self
                .playback
                .playing_level()
                .map_or(f64::NAN, |l| video.bitrates_bps[l] as f64),
            buffer_ns: self.playback.buffer_ns(),
            phase: self.playback.phase().code(),
            estimate_bps: self.player.estimate_bps().unwrap_or(f64::NAN),
        });
    }

    /// The player leaves at `now_ns` (its stop time): an outstanding request is abandoned.
    pub fn stop(&mut self, now_ns: u64) {
        if self.stopped {
            return;
        }
        self.stopped = true;
        self.outstanding = None;
        self.playback.leave(now_ns);
    }

    /// The session's log at the end of observation `now_ns` (the run's end).
    pub fn into_log(mut self, now_ns: u64) -> PlayerLog {
        let end_ns = self.plan.stop_ns.map_or(now_ns, |s| s.min(now_ns));
        self.playback.advance(end_ns);
        let video = &self.plan.video;
        PlayerLog {
            name: self.plan.name.clone(),
            algorithm: self.plan.abr.name().to_string(),
            client: self.plan.client as u32,
            server: self.plan.server as u32,
            video: video.name.clone(),
            bitrates_bps: video.bitrates_bps.clone(),
            segment_ns: video.segment_ns(),
            video_segments: video.segments(),
            start_ns: self.plan.start_ns,
            stop_ns: self.plan.stop_ns,
            end_ns,
            segments: self.segments,
            samples: self.samples,
            startup_delay_ns: self.playback.startup_delay_ns(),
            stalls: self.playback.stalls().to_vec(),
            downloaded_ns: self.playback.downloaded_ns,
            played_ns: self.playback.played_ns,
            buffered_ns: self.playback.buffer_ns(),
            discarded_ns: self.playback.discarded_ns,
            connections_opened: self.connections_opened,
            final_phase: self.playback.phase(),
            abandoned: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const S: u64 = 1_000_000_000;

    #[test]
    fn the_cap_waits_for_room_only_while_playing() {
        let mut w = false;
        assert_eq!(
            cap_wait_ns(29 * S, 2 * S, 30 * S, None, &mut w, true),
            Some(S)
        );
        assert_eq!(
            cap_wait_ns(29 * S, 2 * S, 30 * S, None, &mut w, false),
            None
        );
        assert_eq!(cap_wait_ns(10 * S, 2 * S, 30 * S, None, &mut w, true), None);
    }

    #[test]
    fn the_refill_scheduler_waits_for_the_low_mark_once_full() {
        let mut w = false;
        // full: wait until drained to 20 s
        assert_eq!(
            cap_wait_ns(29 * S, 2 * S, 30 * S, Some(20 * S), &mut w, true),
            Some(9 * S)
        );
        assert!(w);
        // still above the low mark after one segment left: keep waiting
        assert_eq!(
            cap_wait_ns(25 * S, 2 * S, 30 * S, Some(20 * S), &mut w, true),
            Some(5 * S)
        );
        // at the low mark: request, back to back until full again
        assert_eq!(
            cap_wait_ns(20 * S, 2 * S, 30 * S, Some(20 * S), &mut w, true),
            None
        );
        assert!(!w);
        assert_eq!(
            cap_wait_ns(24 * S, 2 * S, 30 * S, Some(20 * S), &mut w, true),
            None
        );
    }
}
