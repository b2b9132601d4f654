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
pub mod plan;

use crate::tcp::cc::{AppData, CcConfig};
use crate::tcp::config::TcpConfig;
use crate::tcp::endpoint::Notice;

/// A connection an application opens at run time ([`AppApi::open`]): between which nodes, with
/// which TCP options and congestion control, and who serves it.
#[derive(Clone, Debug, PartialEq)]
pub struct OpenSpec {
    /// Unique name (it appears as a flow of the result and seeds the connection's ISNs).
    pub name: String,
    /// Node of the side that connects (side 0).
    pub client_node: u32,
    /// Node of the side that accepts (side 1).
    pub server_node: u32,
    pub server_port: u16,
    pub tcp: TcpConfig,
    /// Congestion control of both sides (the server's is the one that matters for downloads).
    pub cc: CcConfig,
    /// The side that carries the connection's main data, reported as the flow's sender in
    /// summaries and traces: 0 (client → server, like `[[flow]]`s) or 1 (server → client, HTTP
    /// downloads).
    pub data_side: u8,
    /// Attach the opening application to the server side as well (it gets the server side's
    /// notices, with `side` = 1).
    pub serve: bool,
}

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
    /// Create connection `conn` (the id [`AppApi::open`] returned); it stays closed until a
    /// `Connect`.
    Open {
        conn: u32,
        spec: Box<OpenSpec>,
    },
    /// Ask the `side` endpoint of `conn` for progress notices on the peer's messages, at most
    /// one per `every_ns` (None: none).
    SetProgressNotices {
        conn: u32,
        side: u8,
        every_ns: Option<u64>,
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
    /// id the next [`AppApi::open`] returns
    next_conn: u32,
}

impl<'a> AppApi<'a> {
    pub fn new(now_ns: u64, actions: &'a mut Vec<AppAction>) -> Self {
        AppApi {
            now_ns,
            actions,
            next_conn: 0,
        }
    }
    /// An API whose [`AppApi::open`] numbers new connections from `next_conn` (the number of
    /// connections that exist).
    pub fn with_next_conn(now_ns: u64, actions: &'a mut Vec<AppAction>, next_conn: u32) -> Self {
        AppApi {
            now_ns,
            actions,
            next_conn,
        }
    }
    /// Opens a new connection (not yet connected: call [`AppApi::connect`]) and returns its id.
    /// The opening application gets the client side's notices (and the server side's when
    /// `spec.serve`). Ids are assigned in order, so runs stay deterministic.
    pub fn open(&mut self, spec: OpenSpec) -> u32 {
        let conn = self.next_conn;
        self.next_conn += 1;
        self.actions.push(AppAction::Open {
            conn,
            spec: Box::new(spec),
        });
        conn
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
    /// Progress notices ([`crate::tcp::endpoint::NoticeKind::Progress`]) for the peer's messages
    /// on the `side` endpoint of `conn`, at most one per `every_ns` (None: none).
    pub fn set_progress_notices(&mut self, conn: u32, side: u8, every_ns: Option<u64>) {
        self.actions.push(AppAction::SetProgressNotices {
            conn,
            side,
            every_ns,
        });
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
    /// Called once at the end of the run (`now_ns` = the run's end): what the application
    /// measured, if it reports anything (HAS players return their logs).
    fn finish(&mut self, _now_ns: u64) -> Option<AppReport> {
        None
    }
}

/// What an application reports at the end of a run.
///
/// The one deliberate upward reference of `app/`: a player's report is its log, a type of
/// `has/` (which builds on this module's [`App`]). The alternative, a type-erased report,
/// would lose the compiler's check at the one place (the world) that reads it.
#[derive(Clone, Debug)]
pub enum AppReport {
    Player(Box<crate::has::PlayerLog>),
}
