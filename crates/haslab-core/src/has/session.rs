//! One player session as a simulator application: the HTTP client (with its connection
//! policy), the server side of its connections ([`super::http::HttpServer`]), the common
//! playback model, the player's decision logic, and the logs the QoE metrics are computed from.
//!
//! Request cycle: the player picks a level ([`Player::choose`]) → GET on a connection (opened
//! first when the policy needs a new one; the handshake then counts in the download time) →
//! the whole response arrives → the segment enters the buffer, the player says when to ask
//! again ([`Player::downloaded`]) → the session waits for that moment *and* for the next
//! segment to fit under the buffer cap.
//!
//! Connection policies ([`ConnectionPolicy`]): one persistent connection; a new connection per
//! request (closed after its response, HTTP/1.0 style); N persistent connections used in turn
//! (requests stay sequential: a player makes one decision per segment); a new connection every
//! k segments.
//!
//! The refill scheduler of the newCWV paper (§3.2: DASH-JS and the modified VLC fill a 30 s
//! buffer, then request again once it has drained by one third) replaces the player's timing
//! when configured: requests back to back until the buffer is full, then nothing until it has
//! drained to the low mark.

use super::driver::cap_wait_ns;
use super::http::{self, HttpServer, HTTP_PORT, REQUEST_BYTES};
use super::playback::{Phase, Playback, Stall};
use super::players::{BufferState, Player, PlayerContext, SegmentResult, When};
use super::video::Video;
use crate::app::{App, AppApi, AppReport, OpenSpec};
use crate::scenario::{ConnectionPolicy, PlayerPlan};
use crate::sim::rng::Stream;
use crate::tcp::endpoint::{Notice, NoticeKind};
use std::sync::Arc;

const S: u64 = 1_000_000_000;

// timer tokens: low 2 bits = kind, the rest = generation (request timers only)
const T_REQUEST: u64 = 0;
const T_SAMPLE: u64 = 1;
const T_STOP: u64 = 2;

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
}

#[derive(Clone, Copy, Debug)]
struct Slot {
    conn: u32,
    established: bool,
    /// requests issued on this connection
    requests: u32,
}

#[derive(Clone, Copy, Debug)]
struct Outstanding {
    segment: usize,
    level: usize,
    request_ns: u64,
    slot: usize,
    sent: bool,
    estimate_bps: f64,
    buffer_before_ns: u64,
}

/// One player session (see the module documentation).
pub struct HasSession {
    plan: Arc<PlayerPlan>,
    video: Arc<Video>,
    player: Box<dyn Player>,
    playback: Playback,
    server: HttpServer,
    slots: Vec<Option<Slot>>,
    next_slot: usize,
    opened: u32,
    next_segment: usize,
    outstanding: Option<Outstanding>,
    /// generation of the pending request timer (older ones are stale)
    gen: u64,
    last_level: Option<usize>,
    /// refill scheduler: waiting for the buffer to drain to the low mark
    refill_waiting: bool,
    stopped: bool,
    segments: Vec<SegmentRecord>,
    samples: Vec<SampleRecord>,
}

impl HasSession {
    pub fn new(plan: Arc<PlayerPlan>, seed: u64) -> Self {
        let video = plan.video.clone();
        let ctx = PlayerContext {
            bitrates_bps: video.bitrates_bps.clone(),
            segment_ns: video.segment_ns(),
            buffer_cap_ns: plan.buffer_ns,
        };
        let rng = Stream::new(seed, &format!("player:{}:abr", plan.name));
        let player = plan.abr.build(ctx, rng);
        let slots = match plan.connection {
            ConnectionPolicy::Parallel(n) => vec![None; n as usize],
            _ => vec![None],
        };
        HasSession {
            playback: Playback::new(plan.start_ns, plan.startup_ns, plan.resume_ns),
            video,
            player,
            server: HttpServer::default(),
            slots,
            next_slot: 0,
            opened: 0,
            next_segment: 0,
            outstanding: None,
            gen: 0,
            last_level: None,
            refill_waiting: false,
            stopped: false,
            segments: Vec::new(),
            samples: Vec::new(),
            plan,
        }
    }

    fn state(&self, now_ns: u64) -> BufferState {
        BufferState {
            now_ns,
            buffer_ns: self.playback.buffer_ns(),
            phase: self.playback.phase(),
            next_segment: self.next_segment,
            segments: self.video.segments(),
        }
    }

    fn open_slot(&mut self, api: &mut AppApi, slot: usize) -> u32 {
        let conn = api.open(OpenSpec {
            name: format!("{}.c{}", self.plan.name, self.opened),
            client_node: self.plan.client as u32,
            server_node: self.plan.server as u32,
            server_port: HTTP_PORT,
            tcp: self.plan.tcp.clone(),
            cc: self.plan.cc.clone(),
            data_side: 1,
            serve: true,
        });
        self.opened += 1;
        api.connect(conn);
        self.slots[slot] = Some(Slot {
            conn,
            established: false,
            requests: 0,
        });
        conn
    }

    fn timer_request(&mut self, api: &mut AppApi, at_ns: u64) {
        self.gen += 1;
        api.timer(at_ns, (self.gen << 2) | T_REQUEST);
    }

    /// Issues the next request now if the schedule allows, else arms the timer for it.
    fn try_request(&mut self, api: &mut AppApi) {
        let now = api.now_ns;
        if self.stopped || self.outstanding.is_some() || self.next_segment >= self.video.segments()
        {
            return;
        }
        self.playback.advance(now);
        let buffer = self.playback.buffer_ns();
        let dur = self.video.durations_ns[self.next_segment];
        let cap = self.plan.buffer_ns;
        match cap_wait_ns(
            buffer,
            dur,
            cap,
            self.plan.refill_low_ns,
            &mut self.refill_waiting,
            self.playback.is_playing(),
        ) {
            // not playing under the refill scheduler: nothing drains; a completion wakes it
            Some(u64::MAX) => return,
            Some(wait) => {
                self.timer_request(api, now + wait);
                return;
            }
            None => {}
        }
        self.issue(api);
    }

    fn issue(&mut self, api: &mut AppApi) {
        let now = api.now_ns;
        let st = self.state(now);
        let level = self.player.choose(&st).min(self.video.levels() - 1);
        let estimate_bps = self.player.estimate_bps().unwrap_or(f64::NAN);
        self.last_level = Some(level);
        let slot = match self.plan.connection {
            ConnectionPolicy::Parallel(n) => {
                let s = self.next_slot;
                self.next_slot = (s + 1) % n as usize;
                s
            }
            _ => 0,
        };
        let need_new =
            self.slots[slot].is_none() || self.plan.connection == ConnectionPolicy::PerRequest;
        if need_new {
            self.open_slot(api, slot);
        }
        let s = self.slots[slot].as_mut().expect("slot just filled");
        s.requests += 1;
        self.outstanding = Some(Outstanding {
            segment: self.next_segment,
            level,
            request_ns: now,
            slot,
            sent: false,
            estimate_bps,
            buffer_before_ns: st.buffer_ns,
        });
        self.next_segment += 1;
        if s.established {
            self.send_get(api);
        }
    }

    fn send_get(&mut self, api: &mut AppApi) {
        if let Some(o) = self.outstanding.as_mut() {
            if !o.sent {
                o.sent = true;
                let conn = self.slots[o.slot].expect("outstanding slot").conn;
                api.write(conn, 0, REQUEST_BYTES, http::tag(o.segment, o.level));
            }
        }
    }

    fn on_response(&mut self, api: &mut AppApi, conn: u32, tag: u64) {
        let now = api.now_ns;
        let Some(o) = self.outstanding else { return };
        if http::tag(o.segment, o.level) != tag || self.slots[o.slot].map(|s| s.conn) != Some(conn)
        {
            return;
        }
        self.outstanding = None;
        let media_ns = self.video.durations_ns[o.segment];
        let bytes = self.video.size(o.level, o.segment);
        let last = o.segment + 1 == self.video.segments();
        self.playback.add_segment(now, o.level, media_ns, last);
        self.segments.push(SegmentRecord {
            index: o.segment as u32,
            level: o.level as u32,
            bitrate_bps: self.video.bitrates_bps[o.level],
            bytes,
            media_ns,
            request_ns: o.request_ns,
            done_ns: now,
            estimate_bps: o.estimate_bps,
            buffer_before_ns: o.buffer_before_ns,
            buffer_after_ns: self.playback.buffer_ns(),
            conn,
        });
        // connection policy after a response
        let close = match self.plan.connection {
            ConnectionPolicy::PerRequest => true,
            ConnectionPolicy::Renew(k) => self.slots[o.slot].is_some_and(|s| s.requests >= k),
            _ => last,
        };
        if close || last {
            api.close(conn, 0);
            self.slots[o.slot] = None;
        }
        if last {
            for s in self.slots.iter_mut() {
                if let Some(x) = s.take() {
                    api.close(x.conn, 0);
                }
            }
            return;
        }
        let result = SegmentResult {
            index: o.segment,
            level: o.level,
            bytes,
            media_ns,
            request_ns: o.request_ns,
            done_ns: now,
        };
        let st = self.state(now);
        let when = self.player.downloaded(&result, &st);
        match when {
            When::Now => self.try_request(api),
            When::At(t) if t <= now => self.try_request(api),
            When::At(t) => self.timer_request(api, t),
            When::BufferAtMost(b) => {
                let buf = self.playback.buffer_ns();
                if buf <= b || !self.playback.is_playing() {
                    self.try_request(api)
                } else {
                    self.timer_request(api, now + (buf - b))
                }
            }
        }
    }

    fn sample(&mut self, now: u64) {
        self.playback.advance(now);
        let level = self.last_level.unwrap_or(0);
        self.samples.push(SampleRecord {
            time_ns: now,
            level: level as u32,
            bitrate_bps: self.video.bitrates_bps[level],
            played_bitrate_bps: self
                .playback
                .playing_level()
                .map_or(f64::NAN, |l| self.video.bitrates_bps[l] as f64),
            buffer_ns: self.playback.buffer_ns(),
            phase: self.playback.phase().code(),
            estimate_bps: self.player.estimate_bps().unwrap_or(f64::NAN),
        });
    }

    fn stop(&mut self, api: &mut AppApi) {
        if self.stopped {
            return;
        }
        self.stopped = true;
        self.outstanding = None;
        self.playback.leave(api.now_ns);
        for s in self.slots.iter_mut() {
            if let Some(x) = s.take() {
                api.close(x.conn, 0);
            }
        }
    }
}

impl App for HasSession {
    fn start(&mut self, api: &mut AppApi) {
        let now = api.now_ns;
        if let ConnectionPolicy::Parallel(n) = self.plan.connection {
            for slot in 0..n as usize {
                self.open_slot(api, slot);
            }
        }
        let first_sample = now.div_ceil(S) * S;
        api.timer(first_sample, T_SAMPLE);
        if let Some(stop) = self.plan.stop_ns {
            api.timer(stop, T_STOP);
        }
        self.try_request(api);
    }

    fn on_notice(&mut self, api: &mut AppApi, n: &Notice) {
        match (n.side, n.kind) {
            (0, NoticeKind::Connected) => {
                if let Some(s) = self.slots.iter_mut().flatten().find(|s| s.conn == n.conn) {
                    s.established = true;
                    let slot_conn = s.conn;
                    if self
                        .outstanding
                        .is_some_and(|o| self.slots[o.slot].map(|s| s.conn) == Some(slot_conn))
                    {
                        self.send_get(api);
                    }
                }
            }
            (0, NoticeKind::Received { tag }) if !self.stopped => {
                self.on_response(api, n.conn, tag)
            }
            (1, NoticeKind::Received { tag }) => {
                self.server.on_request(api, &self.video, n.conn, tag)
            }
            (1, NoticeKind::PeerClosed) => self.server.on_peer_closed(api, n.conn),
            _ => {}
        }
    }

    fn on_timer(&mut self, api: &mut AppApi, token: u64) {
        match token & 3 {
            T_REQUEST if token >> 2 == self.gen => self.try_request(api),
            T_SAMPLE if self.plan.stop_ns.is_none_or(|s| api.now_ns < s) => {
                self.sample(api.now_ns);
                api.timer(api.now_ns + S, T_SAMPLE);
            }
            T_STOP => self.stop(api),
            _ => {}
        }
    }

    fn finish(&mut self, now_ns: u64) -> Option<AppReport> {
        let end_ns = self.plan.stop_ns.map_or(now_ns, |s| s.min(now_ns));
        self.playback.advance(end_ns);
        Some(AppReport::Player(Box::new(PlayerLog {
            name: self.plan.name.clone(),
            algorithm: self.plan.abr.name().to_string(),
            client: self.plan.client as u32,
            server: self.plan.server as u32,
            video: self.video.name.clone(),
            bitrates_bps: self.video.bitrates_bps.clone(),
            segment_ns: self.video.segment_ns(),
            video_segments: self.video.segments(),
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
            connections_opened: self.opened,
            final_phase: self.playback.phase(),
        })))
    }
}
