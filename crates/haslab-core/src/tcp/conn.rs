//! A TCP connection: the client endpoint (side 0, which connects) and the server endpoint
//! (side 1, which accepts). Keeping both in one place lets a write's message boundary (its
//! tag) travel out of band to the receiving endpoint, so that applications learn when a whole
//! message has arrived without modelling an application protocol's framing.

use super::cc::AppData;
use super::endpoint::{Endpoint, Output};

pub struct Connection {
    pub ends: [Endpoint; 2],
}

impl Connection {
    pub fn new(client: Endpoint, server: Endpoint) -> Self {
        Connection {
            ends: [client, server],
        }
    }

    /// Writes `bytes` on `side`, tagged `tag`: the writer gets `Acked { tag }` when they are
    /// acknowledged, the peer `Received { tag }` when they have all arrived in order.
    pub fn write(&mut self, side: u8, bytes: u64, tag: u64, now_ns: u64, out: &mut Output) {
        let s = side as usize;
        if let Some(end) = self.ends[s].write(bytes, tag, now_ns, out) {
            self.ends[1 - s].expect_message(end - bytes, end, tag);
        }
    }

    pub fn set_app_data(&mut self, side: u8, data: &AppData) {
        self.ends[side as usize].set_app_data(data);
    }
}
