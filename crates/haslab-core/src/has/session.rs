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
//! request (closed after its response, HTTP/1.0 style); N persistent connections downloading at
//! once (one request in flight on each, HTTP/1.1 without pipelining: whenever a connection is
//! idle and the next segment fits under the buffer cap — media in flight counted — the player
//! chooses its level and it is requested there; segments that arrive ahead of an earlier one
//! enter the buffer when it does); N persistent connections used in turn, one request at a
//! time (`rotate`); a new connection every k segments.
//!
//! Each segment record carries the time its response's first byte arrived (the time to first
//! byte, `ttfb_ns`, is request → first byte). Players that abandon requests
//! ([`Player::abandons`]) get progress events every [`PROGRESS_EVERY_NS`]; an abandonment
//! aborts the request as a browser aborts an XMLHttpRequest (see `on_progress`).
//!
//! The refill scheduler of the newCWV paper (§3.2: DASH-JS and the modified VLC fill a 30 s
//! buffer, then request again once it has drained by one third) replaces the player's timing
//! when configured: requests back to back until the buffer is full, then nothing until it has
//! drained to the low mark.

use super::driver::cap_wait_ns;
use super::http::{self, HttpServer, HTTP_PORT, REQUEST_BYTES};
use super::playback::{Phase, Playback, Stall};
use super::players::{
    BufferState, Player, PlayerContext, Progress, SegmentResult, When, PROGRESS_EVERY_NS,
};
use super::video::Video;
use crate::app::{App, AppApi, AppReport, OpenSpec};
use crate::scenario::{ConnectionPolicy, PlayerPlan};
use crate::sim::rng::Stream;
use crate::tcp::endpoint::{Notice, NoticeKind};
use std::collections::BTreeMap;
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

/// An in-flight request the player abandoned (see [`HasSession`]'s progress handling).
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
    first_byte_ns: Option<u64>,
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
    /// `rotate`: the slot the next request goes to
    next_slot: usize,
    opened: u32,
    next_segment: usize,
    /// requests in flight, in the order they were issued (at most one per slot)
    outstanding: Vec<Outstanding>,
    /// segments to request again after an abandonment, ascending (before `next_segment`)
    retry: Vec<usize>,
    /// segments downloaded ahead of an earlier one still in flight: (level, media) by index
    ready: BTreeMap<usize, usize>,
    /// index of the next segment the playback buffer takes
    next_buffered: usize,
    /// connections whose request the client aborted (the server stops sending on their FIN)
    aborted: Vec<u32>,
    /// generation of the pending request timer (older ones are stale)
    gen: u64,
    last_level: Option<usize>,
    /// refill scheduler: waiting for the buffer to drain to the low mark
    refill_waiting: bool,
    stopped: bool,
    segments: Vec<SegmentRecord>,
    abandoned: Vec<AbandonRecord>,
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
            ConnectionPolicy::Parallel(n) | ConnectionPolicy::Rotate(n) => vec![None; n as usize],
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
            outstanding: Vec::new(),
            retry: Vec::new(),
            ready: BTreeMap::new(),
            next_buffered: 0,
            aborted: Vec::new(),
            gen: 0,
            last_level: None,
            refill_waiting: false,
            stopped: false,
            segments: Vec::new(),
            abandoned: Vec::new(),
            samples: Vec::new(),
            plan,
        }
    }

    fn state(&self, now_ns: u64, next_segment: usize) -> BufferState {
        BufferState {
            now_ns,
            buffer_ns: self.playback.buffer_ns(),
            phase: self.playback.phase(),
            next_segment,
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
        if self.player.abandons() {
            api.set_progress_notices(conn, 0, Some(PROGRESS_EVERY_NS));
        }
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

    /// The segment the next request is for: one to request again first, else the next new one.
    fn next_to_request(&self) -> Option<usize> {
        self.retry
            .first()
            .copied()
            .or((self.next_segment < self.video.segments()).then_some(self.next_segment))
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
        let d = &self.video.durations_ns;
        self.outstanding.iter().map(|o| d[o.segment]).sum::<u64>()
            + self.ready.keys().map(|&i| d[i]).sum::<u64>()
    }

    /// Issues requests now while the schedule allows and a slot is free, else arms the timer.
    fn try_request(&mut self, api: &mut AppApi) {
        loop {
            let now = api.now_ns;
            if self.stopped {
                return;
            }
            let Some(segment) = self.next_to_request() else {
                return;
            };
            let Some(slot) = self.free_slot() else { return };
            self.playback.advance(now);
            let buffer = self.playback.buffer_ns() + self.pending_media_ns();
            let dur = self.video.durations_ns[segment];
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
            self.issue(api, slot, segment);
        }
    }

    fn issue(&mut self, api: &mut AppApi, slot: usize, segment: usize) {
        let now = api.now_ns;
        let st = self.state(now, segment);
        let level = self.player.choose(&st).min(self.video.levels() - 1);
        let estimate_bps = self.player.estimate_bps().unwrap_or(f64::NAN);
        self.last_level = Some(level);
        if let ConnectionPolicy::Rotate(n) = self.plan.connection {
            self.next_slot = (slot + 1) % n as usize;
        }
        let need_new =
            self.slots[slot].is_none() || self.plan.connection == ConnectionPolicy::PerRequest;
        if need_new {
            self.open_slot(api, slot);
        }
        let s = self.slots[slot].as_mut().expect("slot just filled");
        s.requests += 1;
        let established = s.established;
        self.outstanding.push(Outstanding {
            segment,
            level,
            request_ns: now,
            slot,
            sent: false,
            first_byte_ns: None,
            estimate_bps,
            buffer_before_ns: st.buffer_ns,
        });
        if self.retry.first() == Some(&segment) {
            self.retry.remove(0);
        } else {
            self.next_segment += 1;
        }
        if established {
            self.send_gets(api, slot);
        }
    }

    /// Sends the GETs not yet sent on `slot` (its connection is established).
    fn send_gets(&mut self, api: &mut AppApi, slot: usize) {
        let Some(conn) = self.slots[slot].map(|s| s.conn) else {
            return;
        };
        for o in self.outstanding.iter_mut().filter(|o| o.slot == slot) {
            if !o.sent {
                o.sent = true;
                api.write(conn, 0, REQUEST_BYTES, http::tag(o.segment, o.level));
            }
        }
    }

    /// The outstanding request answered by `tag` on connection `conn`.
    fn find(&self, conn: u32, tag: u64) -> Option<usize> {
        self.outstanding.iter().position(|o| {
            http::tag(o.segment, o.level) == tag && self.slots[o.slot].map(|s| s.conn) == Some(conn)
        })
    }

    /// A downloaded segment enters the buffer in order: one that arrives ahead of an earlier
    /// one still in flight (parallel connections) waits for it.
    fn buffer_segment(&mut self, now: u64, segment: usize, level: usize) {
        if segment != self.next_buffered {
            self.ready.insert(segment, level);
            return;
        }
        let n = self.video.segments();
        let mut add = Some((segment, level));
        while let Some((i, l)) = add {
            self.playback
                .add_segment(now, l, self.video.durations_ns[i], i + 1 == n);
            self.next_buffered = i + 1;
            add = self.ready.remove(&(i + 1)).map(|l| (i + 1, l));
        }
    }

    fn on_response(&mut self, api: &mut AppApi, conn: u32, tag: u64) {
        let now = api.now_ns;
        let Some(k) = self.find(conn, tag) else {
            return;
        };
        let o = self.outstanding.remove(k);
        let media_ns = self.video.durations_ns[o.segment];
        let bytes = self.video.size(o.level, o.segment);
        self.buffer_segment(now, o.segment, o.level);
        let first_byte_ns = o.first_byte_ns.unwrap_or(now);
        self.segments.push(SegmentRecord {
            index: o.segment as u32,
            level: o.level as u32,
            bitrate_bps: self.video.bitrates_bps[o.level],
            bytes,
            media_ns,
            request_ns: o.request_ns,
            first_byte_ns,
            done_ns: now,
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
            first_byte_ns,
            done_ns: now,
        };
        let st = self.state(now, self.next_to_request().unwrap_or(self.next_segment));
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

    /// A progress event of an in-flight response: the player may abandon it. Like dash.js
    /// (`HTTPLoader` aborts the XMLHttpRequest), the client gives the request up; an HTTP/1.1
    /// connection with a response half read cannot carry another request, and browsers close
    /// it (Chromium's `HttpNetworkTransaction` drains only bodies of at most 16 KiB, then
    /// `ERR_RESPONSE_BODY_TOO_BIG_TO_DRAIN`; Linux answers a close with unread data by a RST,
    /// RFC 2525 §2.17). haslab closes the client side at once (FIN); when it reaches the
    /// server, the server withdraws what it has not yet transmitted and closes too. Bytes
    /// already in flight still arrive (and count in the flow's goodput) but are discarded. The
    /// segment is requested again at once, at the level the player chose, on a new connection.
    fn on_progress(&mut self, api: &mut AppApi, conn: u32, tag: u64, bytes: u64) {
        let now = api.now_ns;
        let Some(k) = self.find(conn, tag) else {
            return;
        };
        let o = self.outstanding[k];
        self.playback.advance(now);
        let p = Progress {
            index: o.segment,
            level: o.level,
            bytes_total: self.video.size(o.level, o.segment),
            bytes_loaded: bytes.saturating_sub(http::RESPONSE_HEADER_BYTES),
            media_ns: self.video.durations_ns[o.segment],
            request_ns: o.request_ns,
            first_byte_ns: o.first_byte_ns,
            now_ns: now,
        };
        let st = self.state(now, o.segment);
        let Some(to) = self.player.progress(&p, &st) else {
            return;
        };
        if to >= o.level {
            return;
        }
        self.outstanding.remove(k);
        self.abandoned.push(AbandonRecord {
            index: o.segment as u32,
            level: o.level as u32,
            to_level: to as u32,
            request_ns: o.request_ns,
            abandon_ns: now,
            bytes_loaded: p.bytes_loaded,
            bytes_total: p.bytes_total,
            conn,
        });
        api.close(conn, 0);
        self.aborted.push(conn);
        self.slots[o.slot] = None;
        let at = self.retry.partition_point(|&s| s < o.segment);
        self.retry.insert(at, o.segment);
        self.try_request(api);
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
        self.outstanding.clear();
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
        if let ConnectionPolicy::Parallel(n) | ConnectionPolicy::Rotate(n) = self.plan.connection {
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
                if let Some(slot) = self
                    .slots
                    .iter()
                    .position(|s| s.is_some_and(|s| s.conn == n.conn))
                {
                    if let Some(s) = self.slots[slot].as_mut() {
                        s.established = true;
                    }
                    self.send_gets(api, slot);
                }
            }
            (0, NoticeKind::FirstByte { tag }) if !self.stopped => {
                if let Some(k) = self.find(n.conn, tag) {
                    let o = &mut self.outstanding[k];
                    o.first_byte_ns.get_or_insert(api.now_ns);
                }
            }
            (0, NoticeKind::Progress { tag, bytes }) if !self.stopped => {
                self.on_progress(api, n.conn, tag, bytes)
            }
            (0, NoticeKind::Received { tag }) if !self.stopped => {
                self.on_response(api, n.conn, tag)
            }
            (1, NoticeKind::Received { tag }) => {
                self.server.on_request(api, &self.video, n.conn, tag)
            }
            (1, NoticeKind::PeerClosed) => {
                if let Some(k) = self.aborted.iter().position(|&c| c == n.conn) {
                    self.aborted.swap_remove(k);
                    api.withdraw_unsent(n.conn, 1);
                }
                self.server.on_peer_closed(api, n.conn)
            }
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
            abandoned: std::mem::take(&mut self.abandoned),
        })))
    }
}
