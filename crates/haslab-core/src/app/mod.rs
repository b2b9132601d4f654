//! Applications on the TCP byte-stream API.
//!
//! An application reacts to its start, its own timers and the notices of its connections
//! ([`crate::tcp::endpoint::NoticeKind`]: connected, a tagged write acknowledged, a tagged
//! message received, send buffer idle, peer closed), and acts only through [`AppApi`]:
//! connect, write(bytes, tag), close, set timers, pass data down to the congestion control.
//! It never touches the simulator's internals, so HTTP and HAS players (later issues) build
//! on the same interface.

pub mod bulk;
pub mod chunks;

use crate::tcp::cc::AppData;
use crate::tcp::endpoint::Notice;

/// A request from an application to the world, applied after the callback returns.
#[derive(Clone, Debug, PartialEq)]
pub enum AppAction {
    Connect {
        conn: u32,
    },
    Write {
        conn: u32,
        side: u8,
        bytes: u64,
        tag: u64,
    },
    /// Withdraw written bytes not yet transmitted (stop a bulk transfer).
    WithdrawUnsent {
        conn: u32,
        side: u8,
    },
    Close {
        conn: u32,
        side: u8,
    },
    Timer {
        at_ns: u64,
        token: u64,
    },
    SetAppData {
        conn: u32,
        side: u8,
        data: AppData,
    },
    /// Clamp the sender's cwnd to rate × SRTT (Trickle); None removes the clamp.
    SetCwndClampRate {
        conn: u32,
        side: u8,
        rate_bps: Option<u64>,
    },
}

/// What an application may do during a callback.
pub struct AppApi<'a> {
    pub now_ns: u64,
    pub(crate) actions: &'a mut Vec<AppAction>,
}

impl<'a> AppApi<'a> {
    pub fn new(now_ns: u64, actions: &'a mut Vec<AppAction>) -> Self {
        AppApi { now_ns, actions }
    }
    pub fn connect(&mut self, conn: u32) {
        self.actions.push(AppAction::Connect { conn });
    }
    pub fn write(&mut self, conn: u32, side: u8, bytes: u64, tag: u64) {
        self.actions.push(AppAction::Write {
            conn,
            side,
            bytes,
            tag,
        });
    }
    pub fn withdraw_unsent(&mut self, conn: u32, side: u8) {
        self.actions.push(AppAction::WithdrawUnsent { conn, side });
    }
    pub fn close(&mut self, conn: u32, side: u8) {
        self.actions.push(AppAction::Close { conn, side });
    }
    /// Calls `on_timer(token)` at `at_ns`.
    pub fn timer(&mut self, at_ns: u64, token: u64) {
        self.actions.push(AppAction::Timer { at_ns, token });
    }
    pub fn set_app_data(&mut self, conn: u32, side: u8, data: AppData) {
        self.actions
            .push(AppAction::SetAppData { conn, side, data });
    }
    /// Clamps the cwnd of the `side` sender of `conn` to `rate_bps` × SRTT (None: no clamp).
    pub fn set_cwnd_clamp_rate(&mut self, conn: u32, side: u8, rate_bps: Option<u64>) {
        self.actions.push(AppAction::SetCwndClampRate {
            conn,
            side,
            rate_bps,
        });
    }
}

pub trait App: Send {
    /// Called at the application's start time.
    fn start(&mut self, api: &mut AppApi);
    fn on_notice(&mut self, _api: &mut AppApi, _notice: &Notice) {}
    fn on_timer(&mut self, _api: &mut AppApi, _token: u64) {}
}
