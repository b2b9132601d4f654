//! The common playback model every player shares (docs/has.md).
//!
//! - The buffer holds downloaded, not yet played segments (media time, integer ns).
//! - **Startup:** playback starts once the buffer holds `startup_ns` of media (or the whole
//!   video has been downloaded). The startup delay is from the session's start (its first
//!   request) to that moment.
//! - **Playing:** the buffer drains at one second of media per second.
//! - **Stall:** when the buffer empties before the last segment has arrived, playback stops;
//!   it resumes once the buffer holds `resume_ns` again (or the rest of the video is in).
//! - **Ended:** the buffer emptied after the last segment was downloaded.
//! - **Left:** the player left (its stop time); what was buffered is discarded.
//!
//! The model is evaluated lazily: [`Playback::advance`] plays the buffer from the last update
//! to `now`, finding the exact instant a stall or the end began, so no timer is needed.
//! Conservation, exact in integer ns: `downloaded = played + buffered + discarded`.
//!
//! The buffer cap (a player never requests a segment that would not fit) is applied by the
//! session's scheduler, not here.

use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Before playback started (initial buffering).
    Startup,
    Playing,
    /// Rebuffering after the buffer ran empty.
    Stalled,
    /// The whole video was played.
    Ended,
    /// The player left before the end.
    Left,
}

impl Phase {
    /// A small integer for tables: 0 startup, 1 playing, 2 stalled, 3 ended, 4 left.
    pub fn code(self) -> u32 {
        match self {
            Phase::Startup => 0,
            Phase::Playing => 1,
            Phase::Stalled => 2,
            Phase::Ended => 3,
            Phase::Left => 4,
        }
    }
}

/// A stall: when it began and how long it lasted (None while it lasts).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stall {
    pub start_ns: u64,
    pub duration_ns: Option<u64>,
}

#[derive(Clone, Debug)]
pub struct Playback {
    pub startup_ns: u64,
    pub resume_ns: u64,
    phase: Phase,
    /// Buffered segments: (level, media ns left).
    queue: VecDeque<(usize, u64)>,
    buffer_ns: u64,
    last_ns: u64,
    /// The session's start (first request).
    start_ns: u64,
    /// When playback first started.
    play_start_ns: Option<u64>,
    all_downloaded: bool,
    pub downloaded_ns: u64,
    pub played_ns: u64,
    pub discarded_ns: u64,
    stalls: Vec<Stall>,
    ended_ns: Option<u64>,
}

impl Playback {
    pub fn new(start_ns: u64, startup_ns: u64, resume_ns: u64) -> Self {
        Playback {
            startup_ns,
            resume_ns,
            phase: Phase::Startup,
            queue: VecDeque::new(),
            buffer_ns: 0,
            last_ns: start_ns,
            start_ns,
            play_start_ns: None,
            all_downloaded: false,
            downloaded_ns: 0,
            played_ns: 0,
            discarded_ns: 0,
            stalls: Vec::new(),
            ended_ns: None,
        }
    }

    pub fn phase(&self) -> Phase {
        self.phase
    }
    /// Media buffered as of the last [`Self::advance`].
    pub fn buffer_ns(&self) -> u64 {
        self.buffer_ns
    }
    pub fn is_playing(&self) -> bool {
        self.phase == Phase::Playing
    }
    /// Level of the segment at the play head, when playing.
    pub fn playing_level(&self) -> Option<usize> {
        if self.phase == Phase::Playing {
            self.queue.front().map(|&(l, _)| l)
        } else {
            None
        }
    }
    pub fn play_start_ns(&self) -> Option<u64> {
        self.play_start_ns
    }
    /// Startup delay: session start → first playback.
    pub fn startup_delay_ns(&self) -> Option<u64> {
        self.play_start_ns.map(|p| p - self.start_ns)
    }
    pub fn stalls(&self) -> &[Stall] {
        &self.stalls
    }
    /// Total stall time up to the last update (an ongoing stall counts up to then).
    pub fn stall_ns(&self) -> u64 {
        self.stalls
            .iter()
            .map(|s| s.duration_ns.unwrap_or(self.last_ns - s.start_ns))
            .sum()
    }
    pub fn ended_ns(&self) -> Option<u64> {
        self.ended_ns
    }

    /// Plays the buffer up to `now_ns`.
    pub fn advance(&mut self, now_ns: u64) {
        if now_ns <= self.last_ns {
            return;
        }
        if self.phase == Phase::Playing {
            let mut left = now_ns - self.last_ns;
            while left > 0 {
                let Some(front) = self.queue.front_mut() else {
                    break;
                };
                let d = left.min(front.1);
                front.1 -= d;
                left -= d;
                self.buffer_ns -= d;
                self.played_ns += d;
                if front.1 == 0 {
                    self.queue.pop_front();
                }
            }
            if self.buffer_ns == 0 {
                let at = now_ns - left;
                if self.all_downloaded {
                    self.phase = Phase::Ended;
                    self.ended_ns = Some(at);
                } else {
                    self.phase = Phase::Stalled;
                    self.stalls.push(Stall {
                        start_ns: at,
                        duration_ns: None,
                    });
                }
            }
        }
        self.last_ns = now_ns;
    }

    /// A segment of `duration_ns` at `level` arrived at `now_ns`; `last` when it is the video's
    /// last segment.
    pub fn add_segment(&mut self, now_ns: u64, level: usize, duration_ns: u64, last: bool) {
        self.advance(now_ns);
        if matches!(self.phase, Phase::Left | Phase::Ended) {
            return;
        }
        self.queue.push_back((level, duration_ns));
        self.buffer_ns += duration_ns;
        self.downloaded_ns += duration_ns;
        self.all_downloaded |= last;
        match self.phase {
            Phase::Startup if self.buffer_ns >= self.startup_ns || self.all_downloaded => {
                self.phase = Phase::Playing;
                self.play_start_ns = Some(now_ns);
            }
            Phase::Stalled if self.buffer_ns >= self.resume_ns || self.all_downloaded => {
                self.phase = Phase::Playing;
                if let Some(s) = self.stalls.last_mut() {
                    s.duration_ns = Some(now_ns - s.start_ns);
                }
            }
            _ => {}
        }
    }

    /// The player leaves at `now_ns`: the buffer is discarded, an ongoing stall ends.
    pub fn leave(&mut self, now_ns: u64) {
        self.advance(now_ns);
        if matches!(self.phase, Phase::Left | Phase::Ended) {
            return;
        }
        if self.phase == Phase::Stalled {
            if let Some(s) = self.stalls.last_mut() {
                s.duration_ns = Some(now_ns - s.start_ns);
            }
        }
        self.discarded_ns += self.buffer_ns;
        self.buffer_ns = 0;
        self.queue.clear();
        self.phase = Phase::Left;
    }

    /// downloaded − (played + buffered + discarded): zero whenever the model is right.
    pub fn conservation_error_ns(&self) -> i128 {
        self.downloaded_ns as i128
            - (self.played_ns as i128 + self.buffer_ns as i128 + self.discarded_ns as i128)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const S: u64 = 1_000_000_000;

    #[test]
    fn startup_waits_for_the_threshold_then_plays_in_real_time() {
        let mut p = Playback::new(0, 4 * S, 2 * S);
        p.add_segment(S, 0, 2 * S, false);
        assert_eq!(p.phase(), Phase::Startup);
        p.add_segment(2 * S, 1, 2 * S, false);
        assert_eq!(p.phase(), Phase::Playing);
        assert_eq!(p.startup_delay_ns(), Some(2 * S));
        p.advance(3 * S);
        assert_eq!(p.buffer_ns(), 3 * S);
        assert_eq!(p.playing_level(), Some(0));
        p.advance(4 * S + S / 2);
        assert_eq!(p.playing_level(), Some(1));
        assert_eq!(p.conservation_error_ns(), 0);
    }

    #[test]
    fn an_empty_buffer_stalls_at_the_exact_instant_and_resumes_at_the_threshold() {
        let mut p = Playback::new(0, 2 * S, 4 * S);
        p.add_segment(0, 0, 2 * S, false);
        p.advance(5 * S); // ran dry at 2 s
        assert_eq!(p.phase(), Phase::Stalled);
        assert_eq!(p.stalls()[0].start_ns, 2 * S);
        p.add_segment(6 * S, 0, 2 * S, false);
        assert_eq!(p.phase(), Phase::Stalled, "2 s < resume threshold 4 s");
        p.add_segment(7 * S, 0, 2 * S, false);
        assert_eq!(p.phase(), Phase::Playing);
        assert_eq!(p.stall_ns(), 5 * S);
        assert_eq!(p.played_ns, 2 * S);
        assert_eq!(p.conservation_error_ns(), 0);
    }

    #[test]
    fn the_end_of_the_video_is_not_a_stall_and_leaving_discards_the_buffer() {
        let mut p = Playback::new(0, 2 * S, 2 * S);
        p.add_segment(0, 0, 2 * S, true);
        p.advance(10 * S);
        assert_eq!(p.phase(), Phase::Ended);
        assert!(p.stalls().is_empty());
        assert_eq!(p.ended_ns(), Some(2 * S));

        let mut q = Playback::new(0, 2 * S, 2 * S);
        q.add_segment(0, 0, 6 * S, false);
        q.leave(S);
        assert_eq!(q.discarded_ns, 5 * S);
        assert_eq!(q.played_ns, S);
        assert_eq!(q.conservation_error_ns(), 0);
    }
}
