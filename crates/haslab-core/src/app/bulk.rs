//! Bulk sender (FTP-like): connects at its start time and writes `bytes` (or an unbounded
//! stream). At the stop time it withdraws what it has not transmitted yet, so data already
//! sent is still delivered and nothing new is sent — like an iperf sender that stops.

use super::{App, AppApi};
use crate::tcp::endpoint::{Notice, NoticeKind};

/// Unbounded streams are written in pieces of this size, topped up when half is acknowledged.
const PIECE_BYTES: u64 = 1 << 30;

pub struct BulkSender {
    pub conn: u32,
    pub bytes: Option<u64>,
    pub stop_ns: Option<u64>,
    stopped: bool,
}

impl BulkSender {
    pub fn new(conn: u32, bytes: Option<u64>, stop_ns: Option<u64>) -> Self {
        BulkSender {
            conn,
            bytes,
            stop_ns,
            stopped: false,
        }
    }
}

impl App for BulkSender {
    fn start(&mut self, api: &mut AppApi) {
        api.connect(self.conn);
        if let Some(t) = self.stop_ns {
            api.timer(t, 0);
        }
    }
    fn on_notice(&mut self, api: &mut AppApi, n: &Notice) {
        match n.kind {
            NoticeKind::Connected if !self.stopped => match self.bytes {
                Some(b) => api.write(self.conn, 0, b, 0),
                None => {
                    api.write(self.conn, 0, PIECE_BYTES, 0);
                    api.write(self.conn, 0, PIECE_BYTES, 1);
                }
            },
            NoticeKind::Acked { .. } if self.bytes.is_none() && !self.stopped => {
                api.write(self.conn, 0, PIECE_BYTES, 1);
            }
            _ => {}
        }
    }
    fn on_timer(&mut self, api: &mut AppApi, _token: u64) {
        self.stopped = true;
        api.withdraw_unsent(self.conn, 0);
    }
}
