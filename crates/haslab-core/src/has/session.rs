//! One player session as a simulator application: the player cycle ([`super::driver`]: the
//! player's decisions, the playback model, the scheduler and the connection policy) over
//! simulated TCP connections, the server side of those connections
//! ([`super::http::HttpServer`]), and the logs the QoE metrics are computed from.
//!
//! Request cycle: the player picks a level
//! ([`Player::choose`](super::players::Player::choose)) → GET on a connection (opened first
//! when the policy needs a new one; the handshake then counts in the download time) → the whole
//! response arrives → the segment enters the buffer, the player says when to ask again
//! ([`Player::downloaded`](super::players::Player::downloaded)) → the session waits for that
//! moment *and* for the next segment to fit under the buffer cap. The connection policies are
//! described in [`super::driver`].
//!
//! Each segment record carries the time its response's first byte arrived (the time to first
//! byte, `ttfb_ns`, is request → first byte). Players that abandon requests
//! ([`Player::abandons`](super::players::Player::abandons)) get progress events every
//! [`PROGRESS_EVERY_NS`]; an abandonment aborts the request as a browser aborts an
//! XMLHttpRequest (see `on_progress`).
//!
//! The refill scheduler of the newCWV paper (§3.2: DASH-JS and the modified VLC fill a 30 s
//! buffer, then request again once it has drained by one third) replaces the player's timing
//! when configured: requests back to back until the buffer is full, then nothing until it has
//! drained to the low mark.

use super::driver::{Next, PlayerDriver};
use super::http::{self, HttpServer, HTTP_PORT, REQUEST_BYTES};
use super::players::PROGRESS_EVERY_NS;
use crate::app::{App, AppApi, AppReport, OpenSpec};
use crate::has::plan::PlayerPlan;
use crate::tcp::endpoint::{Notice, NoticeKind};
use std::sync::Arc;

const S: u64 = 1_000_000_000;

// timer tokens: low 2 bits = kind, the rest = generation (request timers only)
const T_REQUEST: u64 = 0;
const T_SAMPLE: u64 = 1;
const T_STOP: u64 = 2;

/// The simulated connection of a slot.
#[derive(Clone, Copy, Debug)]
struct Conn {
    conn: u32,
    established: bool,
    /// the GET waiting for the handshake to complete (its tag)
    unsent: Option<u64>,
}

/// One player session (see the module documentation).
pub struct HasSession {
    plan: Arc<PlayerPlan>,
    driver: PlayerDriver,
    server: HttpServer,
    /// the connection of each of the driver's slots
    conns: Vec<Option<Conn>>,
    /// connections whose request the client aborted (the server stops sending on their FIN)
    aborted: Vec<u32>,
    /// generation of the pending request timer (older ones are stale)
    gen: u64,
}

impl HasSession {
    pub fn new(plan: Arc<PlayerPlan>, seed: u64) -> Self {
        let driver = PlayerDriver::new(plan.clone(), seed);
        HasSession {
            conns: vec![None; driver.slots()],
            driver,
            server: HttpServer::default(),
            aborted: Vec::new(),
            gen: 0,
            plan,
        }
    }

    fn open_slot(&mut self, api: &mut AppApi, slot: usize) -> u32 {
        let conn = api.open(OpenSpec {
            name: format!("{}.c{}", self.plan.name, self.driver.connections_opened()),
            client_node: self.plan.client as u32,
            server_node: self.plan.server as u32,
            server_port: HTTP_PORT,
            tcp: self.plan.tcp.clone(),
            cc: self.plan.cc.clone(),
            data_side: 1,
            serve: true,
        });
        self.driver.connection_opened();
        api.connect(conn);
        if self.driver.abandons() {
            api.set_progress_notices(conn, 0, Some(PROGRESS_EVERY_NS));
        }
        self.conns[slot] = Some(Conn {
            conn,
            established: false,
            unsent: None,
        });
        conn
    }

    fn timer_request(&mut self, api: &mut AppApi, at_ns: u64) {
        self.gen += 1;
        api.timer(at_ns, (self.gen << 2) | T_REQUEST);
    }

    /// Issues requests now while the driver allows, else arms the timer it asks for.
    fn try_request(&mut self, api: &mut AppApi) {
        loop {
            match self.driver.next(api.now_ns) {
                Next::Request {
                    segment,
                    level,
                    slot,
                    new_connection,
                } => {
                    if new_connection {
                        self.open_slot(api, slot);
                    }
                    let tag = http::tag(segment, level);
                    let c = self.conns[slot]
                        .as_mut()
                        .expect("the slot has a connection");
                    if c.established {
                        api.write(c.conn, 0, REQUEST_BYTES, tag);
                    } else {
                        c.unsent = Some(tag);
                    }
                }
                Next::WaitUntil(t) => {
                    self.timer_request(api, t);
                    return;
                }
                Next::Idle | Next::Done => return,
            }
        }
    }

    /// The slot whose connection is `conn`.
    fn slot_of(&self, conn: u32) -> Option<usize> {
        self.conns
            .iter()
            .position(|c| c.is_some_and(|c| c.conn == conn))
    }

    fn close_slot(&mut self, api: &mut AppApi, slot: usize) {
        if let Some(c) = self.conns[slot].take() {
            api.close(c.conn, 0);
        }
    }

    fn on_response(&mut self, api: &mut AppApi, conn: u32, tag: u64) {
        let now = api.now_ns;
        let Some(slot) = self.slot_of(conn) else {
            return;
        };
        let (segment, level) = http::untag(tag);
        let Some(c) = self.driver.completed(slot, segment, level, now, conn, None) else {
            return;
        };
        if c.close {
            self.close_slot(api, slot);
        }
        if c.close_all {
            for s in 0..self.conns.len() {
                self.close_slot(api, s);
            }
            return;
        }
        if c.wake_ns <= now {
            self.try_request(api)
        } else {
            self.timer_request(api, c.wake_ns)
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
        let Some(slot) = self.slot_of(conn) else {
            return;
        };
        let (segment, level) = http::untag(tag);
        let loaded = bytes.saturating_sub(http::RESPONSE_HEADER_BYTES);
        if !self
            .driver
            .progress(slot, segment, level, loaded, api.now_ns, conn)
        {
            return;
        }
        api.close(conn, 0);
        self.aborted.push(conn);
        self.conns[slot] = None;
        self.try_request(api);
    }

    fn stop(&mut self, api: &mut AppApi) {
        self.driver.stop(api.now_ns);
        for s in 0..self.conns.len() {
            self.close_slot(api, s);
        }
    }
}

impl App for HasSession {
    fn start(&mut self, api: &mut AppApi) {
        let now = api.now_ns;
        for slot in self.driver.open_at_start() {
            self.open_slot(api, slot);
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
                if let Some(slot) = self.slot_of(n.conn) {
                    if let Some(c) = self.conns[slot].as_mut() {
                        c.established = true;
                        if let Some(tag) = c.unsent.take() {
                            api.write(c.conn, 0, REQUEST_BYTES, tag);
                        }
                    }
                }
            }
            (0, NoticeKind::FirstByte { tag }) => {
                if let Some(slot) = self.slot_of(n.conn) {
                    let (segment, level) = http::untag(tag);
                    self.driver.first_byte(slot, segment, level, api.now_ns);
                }
            }
            (0, NoticeKind::Progress { tag, bytes }) => self.on_progress(api, n.conn, tag, bytes),
            (0, NoticeKind::Received { tag }) => self.on_response(api, n.conn, tag),
            (1, NoticeKind::Received { tag }) => {
                self.server.on_request(api, &self.plan.video, n.conn, tag)
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
                self.driver.sample(api.now_ns);
                api.timer(api.now_ns + S, T_SAMPLE);
            }
            T_STOP => self.stop(api),
            _ => {}
        }
    }

    fn finish(&mut self, now_ns: u64) -> Option<AppReport> {
        Some(AppReport::Player(Box::new(self.driver.take_log(now_ns))))
    }
}
