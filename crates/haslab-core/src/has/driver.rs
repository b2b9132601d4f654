//! The player cycle, without a network: the decision logic ([`super::players`]), the common
//! playback model ([`super::playback`]), the request scheduler (buffer cap, refill) and the
//! connection policy's bookkeeping (which connection slot carries a request, when a connection
//! is opened or closed), driven by whoever moves the bytes. The simulator's
//! [`super::session::HasSession`] drives it over simulated TCP; live mode drives the same code
//! from a real HTTP client (`python/haslab/live/player.py`, through `haslab._core.LivePlayers`).
//!
//! Cycle: [`PlayerDriver::next`] at a time `now` answers "request segment k at level ℓ on
//! slot s" (the player's [`Player::choose`]; open a connection first when told), "not before t"
//! (buffer cap / refill scheduler), "nothing until a request ends" or "done"; the caller asks
//! again until it is not told to request. When a response's first byte arrives the caller
//! calls [`PlayerDriver::first_byte`]; a player that abandons requests ([`Player::abandons`])
//! is shown the download's progress every [`PROGRESS_EVERY_NS`] ([`PlayerDriver::progress`]),
//! and when it abandons the caller closes that connection; when the last byte arrives,
//! [`PlayerDriver::completed`] feeds the playback model, asks the player when to ask again
//! ([`Player::downloaded`]) and says which connections to close. [`PlayerDriver::sample`]
//! records the per-second state, and [`PlayerDriver::take_log`] gives the [`PlayerLog`] the QoE
//! metrics and tables are computed from.
//!
//! Connection policies ([`ConnectionPolicy`]): one persistent connection; a new connection per
//! request (closed after its response, HTTP/1.0 style); N persistent connections downloading at
//! once (one request in flight on each, HTTP/1.1 without pipelining: whenever a connection is
//! idle and the next segment fits under the buffer cap — media in flight counted — the player
//! chooses its level and it is requested there; segments that arrive ahead of an earlier one
//! enter the buffer when it does); N persistent connections used in turn, one request at a
//! time (`rotate`); a new connection every k segments.
//!
//! Abandonment: the player gives the request up, as dash.js's `HTTPLoader` aborts the
//! XMLHttpRequest; an HTTP/1.1 connection with a response half read cannot carry another
//! request, so its connection is closed (see `HasSession` for what the server then does) and the
//! segment is requested again at once, at the level the player chose, on a new connection.

use super::log::{AbandonRecord, PlayerLog, SampleRecord, SegmentRecord};
use super::playback::Playback;
use super::players::{BufferState, Player, PlayerContext, Progress, SegmentResult, When};
use crate::has::plan::{ConnectionPolicy, PlayerPlan};
use crate::sim::rng::Stream;
use std::collections::BTreeMap;
use std::sync::Arc;

pub use super::players::PROGRESS_EVERY_NS;

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
    /// Request `segment` at `level` now, on connection slot `slot`; with `new_connection`,
    /// open a connection for the slot first (it has none, or the policy wants one per
    /// request). Then ask again.
    Request {
        segment: usize,
        level: usize,
        slot: usize,
        new_connection: bool,
    },
    /// Ask again at this time (absolute ns): the buffer cap or the refill scheduler.
    WaitUntil(u64),
    /// Nothing until a request in flight ends (every slot busy, every segment requested, or
    /// the refill scheduler waits while nothing plays).
    Idle,
    /// Every segment is in, or the player stopped.
    Done,
}

/// What to do after a response's last byte arrived.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completion {
    /// Close this response's connection (the policy's rule, or the last segment).
    pub close: bool,
    /// Every segment is in: close every connection of the player.
    pub close_all: bool,
    /// The earliest time of the next request (absolute ns; `u64::MAX` when all is in). At or
    /// before the completion: ask [`PlayerDriver::next`] at once.
    pub wake_ns: u64,
}

#[derive(Clone, Copy, Debug)]
struct Slot {
    /// requests issued on this slot's current connection
    requests: u32,
}

#[derive(Clone, Copy, Debug)]
struct Outstanding {
    segment: usize,
    level: usize,
    request_ns: u64,
    slot: usize,
    first_byte_ns: Option<u64>,
    estimate_bps: f64,
    buffer_before_ns: u64,
}

/// One player session driven from outside (see the module documentation).
pub struct PlayerDriver {
    plan: Arc<PlayerPlan>,
    player: Box<dyn Player>,
    playback: Playback,
    /// connection slots: `Some` while the slot has a connection
    slots: Vec<Option<Slot>>,
    /// `rotate`: the slot the next request goes to
    next_slot: usize,
    next_segment: usize,
    /// requests in flight, in the order they were issued (at most one per slot)
    outstanding: Vec<Outstanding>,
    /// segments to request again after an abandonment, ascending (before `next_segment`)
    retry: Vec<usize>,
    /// segments downloaded ahead of an earlier one still in flight: level by index
    ready: BTreeMap<usize, usize>,
    /// index of the next segment the playback buffer takes
    next_buffered: usize,
    last_level: Option<usize>,
    /// refill scheduler: waiting for the buffer to drain to the low mark
    refill_waiting: bool,
    stopped: bool,
    connections_opened: u32,
    segments: Vec<SegmentRecord>,
    abandoned: Vec<AbandonRecord>,
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
            video: Some(plan.video.clone()),
        };
        let rng = Stream::new(seed, &format!("player:{}:abr", plan.name));
        let player = plan.abr.build(ctx, rng);
        let slots = match plan.connection {
            ConnectionPolicy::Parallel(n) | ConnectionPolicy::Rotate(n) => vec![None; n as usize],
            _ => vec![None],
        };
        PlayerDriver {
            playback: Playback::new(plan.start_ns, plan.startup_ns, plan.resume_ns),
            player,
            slots,
            next_slot: 0,
            next_segment: 0,
            outstanding: Vec::new(),
            retry: Vec::new(),
            ready: BTreeMap::new(),
            next_buffered: 0,
            last_level: None,
            refill_waiting: false,
            stopped: false,
            connections_opened: 0,
            segments: Vec::new(),
            abandoned: Vec::new(),
            samples: Vec::new(),
            plan,
        }
    }

    pub fn plan(&self) -> &PlayerPlan {
        &self.plan
    }

    /// Number of connection slots (N for `parallel`/`rotate`, else 1).
    pub fn slots(&self) -> usize {
        self.slots.len()
    }

    /// Whether the player abandons requests (the caller then reports progress).
    pub fn abandons(&self) -> bool {
        self.player.abandons()
    }

    /// The slots whose connections are opened at the start (`parallel`/`rotate`: all of them,
    /// before the first request); they are marked open.
    pub fn open_at_start(&mut self) -> Vec<usize> {
        match self.plan.connection {
            ConnectionPolicy::Parallel(_) | ConnectionPolicy::Rotate(_) => {
                for s in self.slots.iter_mut() {
                    *s = Some(Slot { requests: 0 });
                }
                (0..self.slots.len()).collect()
            }
            _ => Vec::new(),
        }
    }

    /// The caller opened a connection for this player (counted in the log).
    pub fn connection_opened(&mut self) {
        self.connections_opened += 1;
    }

    /// Connections opened so far (the next one's number, from 0).
    pub fn connections_opened(&self) -> u32 {
        self.connections_opened
    }

    fn state(&self, now_ns: u64, next_segment: usize) -> BufferState {
        BufferState {
            now_ns,
            buffer_ns: self.playback.buffer_ns(),
            phase: self.playback.phase(),
            next_segment,
            segments: self.plan.video.segments(),
        }
    }

    /// The segment the next request is for: one to request again first, else the next new one.
    fn next_to_request(&self) -> Option<usize> {
        self.retry
            .first()
            .copied()
            .or((self.next_segment < self.plan.video.segments()).then_some(self.next_segment))
    }

    /// A slot with no request in flight: the only slot of the sequential policies, the lowest
    /// idle one of `parallel` (every parallel connection carries one request at a time, as
    /// HTTP/1.1 without pipelining does).
    fn free_slot(&self) -> Option<usize> {
        if let ConnectionPolicy::Rotate(_) = self.plan.connection {
            return self.outstanding.is_empty().then_some(self.next_slot);
        }
        (0..self.slots.len()).find(|&s| self.outstanding.iter().all(|o| o.slot != s))
    }

    /// Media in flight or downloaded ahead of a gap: it will enter the buffer, so the buffer
    /// cap counts it (nothing when requests are sequential).
    fn pending_media_ns(&self) -> u64 {
        let d = &self.plan.video.durations_ns;
        self.outstanding.iter().map(|o| d[o.segment]).sum::<u64>()
            + self.ready.keys().map(|&i| d[i]).sum::<u64>()
    }

    /// The next step at `now_ns` (see [`Next`]).
    pub fn next(&mut self, now_ns: u64) -> Next {
        if self.stopped {
            return Next::Done;
        }
        let Some(segment) = self.next_to_request() else {
            return if self.outstanding.is_empty() {
                Next::Done
            } else {
                Next::Idle
            };
        };
        let Some(slot) = self.free_slot() else {
            return Next::Idle;
        };
        self.playback.advance(now_ns);
        let buffer = self.playback.buffer_ns() + self.pending_media_ns();
        let dur = self.plan.video.durations_ns[segment];
        match cap_wait_ns(
            buffer,
            dur,
            self.plan.buffer_ns,
            self.plan.refill_low_ns,
            &mut self.refill_waiting,
            self.playback.is_playing(),
        ) {
            // not playing under the refill scheduler: nothing drains; a completion wakes it
            Some(u64::MAX) => return Next::Idle,
            Some(wait) => return Next::WaitUntil(now_ns.saturating_add(wait)),
            None => {}
        }
        let st = self.state(now_ns, segment);
        let level = self.player.choose(&st).min(self.plan.video.levels() - 1);
        let estimate_bps = self.player.estimate_bps().unwrap_or(f64::NAN);
        self.last_level = Some(level);
        if let ConnectionPolicy::Rotate(n) = self.plan.connection {
            self.next_slot = (slot + 1) % n as usize;
        }
        let new_connection =
            self.slots[slot].is_none() || self.plan.connection == ConnectionPolicy::PerRequest;
        if new_connection {
            self.slots[slot] = Some(Slot { requests: 0 });
        }
        if let Some(s) = self.slots[slot].as_mut() {
            s.requests += 1;
        }
        self.outstanding.push(Outstanding {
            segment,
            level,
            request_ns: now_ns,
            slot,
            first_byte_ns: None,
            estimate_bps,
            buffer_before_ns: st.buffer_ns,
        });
        if self.retry.first() == Some(&segment) {
            self.retry.remove(0);
        } else {
            self.next_segment += 1;
        }
        Next::Request {
            segment,
            level,
            slot,
            new_connection,
        }
    }

    /// The request in flight on `slot` for (`segment`, `level`).
    fn find(&self, slot: usize, segment: usize, level: usize) -> Option<usize> {
        self.outstanding
            .iter()
            .position(|o| o.slot == slot && o.segment == segment && o.level == level)
    }

    /// The first byte of the response to (`segment`, `level`) on `slot` arrived at `now_ns`.
    pub fn first_byte(&mut self, slot: usize, segment: usize, level: usize, now_ns: u64) {
        if self.stopped {
            return;
        }
        if let Some(k) = self.find(slot, segment, level) {
            self.outstanding[k].first_byte_ns.get_or_insert(now_ns);
        }
    }

    /// Progress of the response to (`segment`, `level`) on `slot`: `bytes_loaded` media bytes
    /// by `now_ns` over connection (flow) `conn`. True when the player abandons it: the caller
    /// closes that connection (the slot has none any more), and asks [`Self::next`] at once
    /// (the segment is requested again first).
    pub fn progress(
        &mut self,
        slot: usize,
        segment: usize,
        level: usize,
        bytes_loaded: u64,
        now_ns: u64,
        conn: u32,
    ) -> bool {
        if self.stopped {
            return false;
        }
        let Some(k) = self.find(slot, segment, level) else {
            return false;
        };
        let o = self.outstanding[k];
        self.playback.advance(now_ns);
        let video = &self.plan.video;
        let p = Progress {
            index: o.segment,
            level: o.level,
            bytes_total: video.size(o.level, o.segment),
            bytes_loaded,
            media_ns: video.durations_ns[o.segment],
            request_ns: o.request_ns,
            first_byte_ns: o.first_byte_ns,
            now_ns,
        };
        let st = self.state(now_ns, o.segment);
        let Some(to) = self.player.progress(&p, &st) else {
            return false;
        };
        if to >= o.level {
            return false;
        }
        self.outstanding.remove(k);
        self.abandoned.push(AbandonRecord {
            index: o.segment as u32,
            level: o.level as u32,
            to_level: to as u32,
            request_ns: o.request_ns,
            abandon_ns: now_ns,
            bytes_loaded: p.bytes_loaded,
            bytes_total: p.bytes_total,
            conn,
        });
        self.slots[o.slot] = None;
        let at = self.retry.partition_point(|&s| s < o.segment);
        self.retry.insert(at, o.segment);
        true
    }

    /// A downloaded segment enters the buffer in order: one that arrives ahead of an earlier
    /// one still in flight (parallel connections) waits for it.
    fn buffer_segment(&mut self, now: u64, segment: usize, level: usize) {
        if segment != self.next_buffered {
            self.ready.insert(segment, level);
            return;
        }
        let n = self.plan.video.segments();
        let mut add = Some((segment, level));
        while let Some((i, l)) = add {
            self.playback
                .add_segment(now, l, self.plan.video.durations_ns[i], i + 1 == n);
            self.next_buffered = i + 1;
            add = self.ready.remove(&(i + 1)).map(|l| (i + 1, l));
        }
    }

    /// The last byte of the response to (`segment`, `level`) on `slot` arrived at `now_ns`
    /// over connection (flow) `conn`; its first byte at `first_byte_ns` (None: as reported by
    /// [`Self::first_byte`], else `now_ns`). None when no such request is in flight (a
    /// response on an abandoned connection, or after the stop).
    pub fn completed(
        &mut self,
        slot: usize,
        segment: usize,
        level: usize,
        now_ns: u64,
        conn: u32,
        first_byte_ns: Option<u64>,
    ) -> Option<Completion> {
        if self.stopped {
            return None;
        }
        let k = self.find(slot, segment, level)?;
        let o = self.outstanding.remove(k);
        let video = self.plan.video.clone();
        let media_ns = video.durations_ns[o.segment];
        let bytes = video.size(o.level, o.segment);
        self.buffer_segment(now_ns, o.segment, o.level);
        let first_byte_ns = first_byte_ns
            .or(o.first_byte_ns)
            .unwrap_or(now_ns)
            .clamp(o.request_ns, now_ns);
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
        // every segment is in: close everything
        let last = self.outstanding.is_empty() && self.next_to_request().is_none();
        // connection policy after a response
        let close = match self.plan.connection {
            ConnectionPolicy::PerRequest => true,
            ConnectionPolicy::Renew(k) => self.slots[o.slot].is_some_and(|s| s.requests >= k),
            _ => last,
        };
        if close || last {
            self.slots[o.slot] = None;
        }
        if last {
            self.slots.iter_mut().for_each(|s| *s = None);
            return Some(Completion {
                close: true,
                close_all: true,
                wake_ns: u64::MAX,
            });
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
        let st = self.state(now_ns, self.next_to_request().unwrap_or(self.next_segment));
        let wake_ns = match self.player.downloaded(&result, &st) {
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
        };
        Some(Completion {
            close,
            close_all: false,
            wake_ns,
        })
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

    /// The player leaves at `now_ns` (its stop time): requests in flight are abandoned, and the
    /// caller closes every connection.
    pub fn stop(&mut self, now_ns: u64) {
        if self.stopped {
            return;
        }
        self.stopped = true;
        self.outstanding.clear();
        self.slots.iter_mut().for_each(|s| *s = None);
        self.playback.leave(now_ns);
    }

    /// The session's log at the end of observation `now_ns` (the run's end); the records are
    /// moved out.
    pub fn take_log(&mut self, now_ns: u64) -> PlayerLog {
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
            segments: std::mem::take(&mut self.segments),
            samples: std::mem::take(&mut self.samples),
            startup_delay_ns: self.playback.startup_delay_ns(),
            stalls: self.playback.stalls().to_vec(),
            downloaded_ns: self.playback.downloaded_ns,
            played_ns: self.playback.played_ns,
            buffered_ns: self.playback.buffer_ns(),
            discarded_ns: self.playback.discarded_ns,
            connections_opened: self.connections_opened,
            final_phase: self.playback.phase(),
            abandoned: std::mem::take(&mut self.abandoned),
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
