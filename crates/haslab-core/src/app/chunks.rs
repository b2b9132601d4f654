//! Chunked (on/off) sender: connects at its start time, then writes `chunk_bytes` every
//! `interval_ns` (the first right after connecting) until its stop time. A chunk written
//! while the previous one is still in flight queues behind it. This is the traffic shape of
//! a HAS server without a player: an ON period per chunk, then idle.

use super::{App, AppApi};
use crate::tcp::endpoint::{Notice, NoticeKind};

pub struct ChunkSender {
    pub conn: u32,
    pub chunk_bytes: u64,
    pub interval_ns: u64,
    pub stop_ns: Option<u64>,
    next_tag: u64,
}

impl ChunkSender {
    pub fn new(conn: u32, chunk_bytes: u64, interval_ns: u64, stop_ns: Option<u64>) -> Self {
        ChunkSender {
            conn,
            chunk_bytes,
            interval_ns,
            stop_ns,
            next_tag: 0,
        }
    }
    fn send_chunk(&mut self, api: &mut AppApi) {
        if self.stop_ns.is_some_and(|s| api.now_ns >= s) {
            return;
        }
        api.write(self.conn, 0, self.chunk_bytes, self.next_tag);
        self.next_tag += 1;
        api.timer(api.now_ns + self.interval_ns, 0);
    }
}

impl App for ChunkSender {
    fn start(&mut self, api: &mut AppApi) {
        api.connect(self.conn);
    }
    fn on_notice(&mut self, api: &mut AppApi, n: &Notice) {
        if n.kind == NoticeKind::Connected {
            self.send_chunk(api);
        }
    }
    fn on_timer(&mut self, api: &mut AppApi, _token: u64) {
        self.send_chunk(api);
    }
}
