//! One TCP endpoint (a full-duplex socket). Its state is in three parts, each beside the code
//! that works on it: the send half (`SendHalf`, `sender.rs`), the receive half (`RecvHalf`,
//! `receiver.rs`) and loss recovery (`LossRecovery`, `recovery.rs` and `rack_tlp.rs`); ACKs
//! are processed in `ack.rs`, the counters are in [`stats`]. This file holds the connection
//! states, the handshake, the application calls and the timers.
//!
//! Sender (RFC 793, RFC 5681, RFC 6582, RFC 6675, RFC 6298, RFC 7323, RFC 8985):
//! - Three-way handshake; SYN / SYN-ACK retransmitted on the RTO (initial 1 s, doubled).
//!   SACK is used when both SYNs carry SACK-permitted (`sack = true` on both ends).
//! - MSS segmentation of the application's byte stream; no Nagle (as TCP_NODELAY, which HTTP
//!   servers set); FIN after the last written byte when the application closes.
//! - Every sent segment stays in the [`Scoreboard`](super::scoreboard::Scoreboard) until cumulatively ACKed, with Linux's
//!   SACKed / lost / retransmitted flags. Window: pipe (RFC 6675, Linux
//!   `tcp_packets_in_flight`) < cwnd, and bytes outstanding ≤ the peer's receive window.
//!   Lost segments are retransmitted before new data (RFC 6675 NextSeg rules 1–2).
//! - Loss detection: the 3rd duplicate ACK; with SACK also RFC 6675 IsLost; with TLP also
//!   RACK (time-based, RFC 8985 §6). Without SACK, the hole at snd_una is the only segment
//!   known lost (NewReno, RFC 6582): partial ACKs mark and retransmit the next one.
//! - Fast recovery until the ACK reaches `recover` (RFC 6582 §3.2 / RFC 6675 RecoveryPoint); a
//!   new fast retransmit needs an ACK at or above `recover` (RFC 6582 §4.1). cwnd during
//!   recovery: `classic` — without SACK RFC 6582 inflation (cwnd = ssthresh + 3, +1 per further
//!   duplicate ACK, deflated by partial ACKs), with SACK RFC 6675 (cwnd = ssthresh, sending
//!   limited by pipe) — or `prr` (RFC 6937, Linux `tcp_cwnd_reduction`). An algorithm with its
//!   own `cong_control` (BBR) sets cwnd itself, as in Linux.
//! - RTO (RFC 6298, see [`super::rtt`]): ssthresh from the congestion control — once per loss
//!   episode, as Linux `tcp_enter_loss` — cwnd = 1, every un-SACKed segment marked lost
//!   (`tcp_timeout_mark_lost`) and retransmitted in order in slow start, exponential backoff.
//!   The timer restarts on every ACK of new data (RFC 6298 §5.3).
//! - Tail loss probe (RFC 8985 §7, Linux `tcp_schedule_loss_probe`) when `tlp` is on.
//! - RTT samples from the oldest newly acked segment when it was never retransmitted (Karn),
//!   else from the timestamp echo (RFC 7323 §4.1), at 1 ms resolution like Linux's TS clock.
//! - Delivery-rate samples for `cong_control` ([`super::rate`]).
//! - Restart after idle / newCWV through the [`CwndValidation`] policy; `CA_EVENT_TX_START`
//!   when sending with nothing in flight; Linux's cwnd-limited tracking (`tcp_cwnd_validate`).
//! - Pacing ([`super::pacing`]): a packet of `s` wire bytes delays the next by `s·8/rate`.
//! - cwnd clamp from a rate (Trickle): cwnd ≤ rate × SRTT / MSS.
//!
//! Receiver: cumulative ACKs; out-of-order segments are kept and acknowledged at once with a
//! duplicate ACK carrying SACK blocks (RFC 2018 §4: the newest block first) when SACK is on,
//! and a D-SACK block for a duplicate segment (RFC 2883); a segment that fills a hole is
//! acknowledged at once; otherwise delayed ACKs (RFC 5681 §4.2): an ACK for every 2
//! full-sized segments' worth of bytes, or when the delayed-ACK timer expires. Linux's
//! quick-ACK mode is not modelled. The advertised window is the configured `rwnd`, or with
//! `rcvbuf = "linux"` Linux's autotuned receive buffer ([`super::rcvbuf`]); the application
//! reads instantly.

mod ack;
#[cfg(test)]
mod delack_tests;
#[cfg(test)]
mod frto_tests;
mod rack_tlp;
mod receiver;
mod recovery;
#[cfg(test)]
mod recovery_tests;
mod sender;
#[cfg(test)]
mod sender_tests;
pub mod stats;
#[cfg(test)]
mod undo_tests;

pub use stats::{EndpointStats, LossCounters, TransferCounters};

use receiver::RecvHalf;
use recovery::LossRecovery;
use sender::SendHalf;

use super::cc::{AppData, CaEvent, CcState, CongestionControl};
use super::config::{DelayedAckMode, TcpConfig};
use super::cwv::{self, CwndValidation};
use super::delack::{LinuxAckRules, LinuxDelAck};
use super::rate::RateSampler;
use super::rcvbuf::LinuxRcvBuf;
use super::rtt::RttEstimator;
use super::scoreboard::{segflags, Seg, TxState};
use super::sender_hook::{self, SenderHook};
use super::seq::{from_wire, to_wire};
use crate::net::packet::{flags, Packet, SynOptions, TcpHeader};
use crate::sim::events::Timer;
use std::fmt;

/// The timers of an endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimerKind {
    Rto,
    DelAck,
    Pacing,
    /// RFC 8985 probe timeout (PTO).
    LossProbe,
    /// RFC 8985 RACK reordering timer.
    Reorder,
}

/// Connection states (RFC 793 §3.2, Figure 6). Two simplifications: TIME-WAIT has no 2·MSL
/// timer (the connection stays there, answering a retransmitted FIN with an ACK), and a
/// passive closer whose FIN was acknowledged is CLOSED but still answers segments the same
/// way; neither ever sends data again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// Not opened yet (a client before `connect`), or closed after both FINs (passive closer).
    Closed,
    /// A server waiting for a SYN.
    Listen,
    SynSent,
    SynRcvd,
    Established,
    /// We sent our FIN (the application closed); not yet acknowledged.
    FinWait1,
    /// Our FIN was acknowledged; the peer may still send.
    FinWait2,
    /// The peer's FIN arrived (in order); we may still send.
    CloseWait,
    /// Both sides sent a FIN, ours first, and ours is not acknowledged yet.
    Closing,
    /// The peer closed first, then we did; our FIN is not acknowledged yet.
    LastAck,
    /// Both FINs exchanged and acknowledged, we closed first.
    TimeWait,
}

impl State {
    /// After the handshake: segments carry data and ACKs (RFC 793 "synchronized states").
    pub fn is_synchronized(self) -> bool {
        !matches!(
            self,
            State::Closed | State::Listen | State::SynSent | State::SynRcvd
        )
    }

    /// The state after the application closes its direction (RFC 793 CLOSE call).
    fn on_close(self) -> State {
        match self {
            State::Established => State::FinWait1,
            State::CloseWait => State::LastAck,
            s => s,
        }
    }

    /// The state after the peer's FIN is received in order.
    fn on_peer_fin(self) -> State {
        match self {
            State::Established => State::CloseWait,
            State::FinWait1 => State::Closing,
            State::FinWait2 => State::TimeWait,
            s => s,
        }
    }

    /// The state after our FIN is acknowledged.
    fn on_fin_acked(self) -> State {
        match self {
            State::FinWait1 => State::FinWait2,
            State::Closing => State::TimeWait,
            State::LastAck => State::Closed,
            s => s,
        }
    }
}

impl fmt::Display for State {
    /// RFC 793's names (`ESTABLISHED`, `FIN-WAIT-1`, ...).
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(match self {
            State::Closed => "CLOSED",
            State::Listen => "LISTEN",
            State::SynSent => "SYN-SENT",
            State::SynRcvd => "SYN-RECEIVED",
            State::Established => "ESTABLISHED",
            State::FinWait1 => "FIN-WAIT-1",
            State::FinWait2 => "FIN-WAIT-2",
            State::CloseWait => "CLOSE-WAIT",
            State::Closing => "CLOSING",
            State::LastAck => "LAST-ACK",
            State::TimeWait => "TIME-WAIT",
        })
    }
}

/// What an endpoint tells its application.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoticeKind {
    /// The handshake completed.
    Connected,
    /// Every byte of the write tagged `tag` was acknowledged.
    Acked { tag: u64 },
    /// Every byte of the peer's write tagged `tag` was received in order.
    Received { tag: u64 },
    /// The first byte of the peer's write tagged `tag` was received in order (an HTTP
    /// client's "response started": the time to first byte ends here).
    FirstByte { tag: u64 },
    /// `bytes` of the peer's write tagged `tag` have been received in order, the write not yet
    /// whole. Only when asked for ([`Endpoint::set_progress_every`]), at most once per interval:
    /// the XMLHttpRequest standard fires `progress` "every 50ms or for every byte received,
    /// whichever is least frequent" (XHR Living Standard, "process response body").
    Progress { tag: u64, bytes: u64 },
    /// Every byte written so far was acknowledged (the sender is idle).
    SendIdle,
    /// The peer closed its direction (FIN received in order).
    PeerClosed,
}

/// A message of the peer the receiver is waiting for (stream offsets).
#[derive(Clone, Copy, Debug)]
pub(crate) struct RecvMark {
    pub start: u64,
    pub end: u64,
    pub tag: u64,
    /// FirstByte already notified
    pub first_byte: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Notice {
    pub conn: u32,
    pub side: u8,
    pub kind: NoticeKind,
}

/// Everything an endpoint produces while handling an input.
#[derive(Default, Debug)]
pub struct Output {
    pub packets: Vec<Packet>,
    /// (time, conn, side, timer) heap entries to schedule
    pub timers: Vec<(u64, u32, u8, TimerKind)>,
    pub notices: Vec<Notice>,
}

/// One TCP endpoint: the connection's identity and negotiated options, the congestion state
/// shared by both directions' machinery, and the three parts smoltcp and the RFCs name apart:
/// the send half (`SendHalf`, RFC 793 §3.2 send sequence variables), the receive half
/// (`RecvHalf`, the receive sequence variables) and loss recovery (`LossRecovery`).
pub struct Endpoint {
    pub cfg: TcpConfig,
    pub state: State,
    conn: u32,
    side: u8,
    node: u32,
    peer_node: u32,
    local_port: u16,
    peer_port: u16,
    /// both SYNs carried SACK-permitted
    sack_ok: bool,
    pub tp: CcState,
    cc: Box<dyn CongestionControl>,
    /// `cc.has_cong_control()`, read once when the algorithm is installed
    cc_controls: bool,
    cwv: Box<dyn CwndValidation>,
    rate: RateSampler,
    pub rtt: RttEstimator,
    /// The per-chunk mechanisms of Enhancing-TCP §3 (novel pacing, Reducing Tail Loss) that
    /// the configuration turns on, called at the chunk's events ([`sender_hook`])
    hooks: Vec<Box<dyn SenderHook>>,
    /// what we send: the stream, the retransmission queue, the RTO timer, pacing, the chunk
    snd: SendHalf,
    /// what the peer sends: reassembly, SACK blocks, delayed ACKs, the advertised window
    rcv: RecvHalf,
    /// dupacks, the recovery point, PRR, RACK, TLP, the RTO's undo
    recovery: LossRecovery,
    pub stats: EndpointStats,
}

/// Window-scale shift needed to advertise `rwnd` in 16 bits (RFC 7323 §2.3, at most 14).
fn wscale_for(rwnd: u64) -> u8 {
    let mut s = 0;
    while (rwnd >> s) > 65_535 && s < 14 {
        s += 1;
    }
    s
}

/// Timestamp clock: milliseconds, as Linux's `tcp_clock_ms` for the TS option.
#[inline]
fn ts_now(now_ns: u64) -> u32 {
    (now_ns / 1_000_000) as u32
}

/// `a` is strictly before `b` on the 32-bit timestamp clock (RFC 7323 §5.2's comparison).
#[inline]
fn ts_before(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}

/// RTT from a timestamp echo (ms clock).
fn ts_rtt(now_ns: u64, ecr: u32) -> u64 {
    let now_ms = ts_now(now_ns);
    (now_ms.wrapping_sub(ecr) as u64).max(1) * 1_000_000
}

impl Endpoint {
    /// An endpoint of connection `conn`; `side` 0 is the client (it connects), 1 the server.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        conn: u32,
        side: u8,
        node: u32,
        peer_node: u32,
        local_port: u16,
        peer_port: u16,
        cfg: TcpConfig,
        cc: Box<dyn CongestionControl>,
        iss: u32,
    ) -> Endpoint {
        let mut tp = CcState::new(cfg.initial_cwnd, cfg.mss);
        tp.ack_bytes_growth = cfg.window_accounting == super::config::WindowAccounting::Bytes
            && cfg.cwnd_growth == super::config::CwndGrowth::PerAck;
        tp.linux3 = match cfg.cwnd_growth {
            super::config::CwndGrowth::Linux3 => crate::tcp::cc::Linux3Growth::Before319,
            super::config::CwndGrowth::Linux319 => crate::tcp::cc::Linux3Growth::Linux319,
            _ => crate::tcp::cc::Linux3Growth::None,
        };
        tp.undo_cwnd_rule = cfg.undo_cwnd;
        tp.cwnd_limited_rule = cfg.cwnd_limited;
        let rtt = RttEstimator::new(
            cfg.initial_rto.0,
            cfg.min_rto.0,
            cfg.max_rto.0,
            cfg.rto_formula,
        );
        tp.rto_ns = rtt.rto_ns();
        let cwv = cwv::from_config(cfg.idle_restart, cfg.newcwv_nvp.0);
        let rcvbuf = (cfg.rcvbuf == super::config::RcvBufMode::Linux)
            .then(|| LinuxRcvBuf::new(cfg.tcp_rmem, cfg.scaling_ratio, cfg.sack));
        let rcv_wscale = rcvbuf
            .as_ref()
            .map_or_else(|| wscale_for(cfg.rwnd.0), |b| b.wscale);
        let delack = match cfg.delayed_ack {
            DelayedAckMode::Linux => Some(LinuxAckRules::Linux6),
            DelayedAckMode::Linux3 => Some(LinuxAckRules::Linux3),
            DelayedAckMode::On | DelayedAckMode::Off => None,
        }
        .map(|rules| LinuxDelAck::new(rules, cfg.mss as u64, cfg.delayed_ack_timeout.0));
        let mut ep = Endpoint {
            state: if side == 0 {
                State::Closed
            } else {
                State::Listen
            },
            conn,
            side,
            node,
            peer_node,
            local_port,
            peer_port,
            sack_ok: false,
            tp,
            cc_controls: cc.has_cong_control(),
            cc,
            cwv,
            rate: RateSampler::default(),
            rtt,
            hooks: sender_hook::from_config(&cfg),
            snd: SendHalf::new(iss, cfg.cwnd_clamp_rate.map(|r| r.0)),
            rcv: RecvHalf::new(rcv_wscale, rcvbuf, delack),
            recovery: LossRecovery::default(),
            stats: EndpointStats::default(),
            cfg,
        };
        ep.cc.init(&mut ep.tp);
        ep
    }

    pub fn cc_name(&self) -> &'static str {
        self.cc.name()
    }
    pub fn cwv_name(&self) -> &'static str {
        self.cwv.name()
    }
    /// Replaces the congestion control (before the connection starts).
    pub fn set_congestion_control(&mut self, mut cc: Box<dyn CongestionControl>) {
        cc.init(&mut self.tp);
        self.cc_controls = cc.has_cong_control();
        self.cc = cc;
    }
    /// Replaces the congestion-window validation policy (newCWV plugs in here).
    pub fn set_cwnd_validation(&mut self, policy: Box<dyn CwndValidation>) {
        self.cwv = policy;
    }
    /// Passes application data down to the congestion control.
    pub fn set_app_data(&mut self, data: &AppData) {
        self.cc.set_app_data(&mut self.tp, data);
    }
    /// Sets (or removes) the cwnd clamp: cwnd ≤ rate × SRTT / MSS (Trickle). Applied at once
    /// and on every ACK.
    pub fn set_cwnd_clamp_rate(&mut self, rate_bps: Option<u64>) {
        self.snd.clamp_rate_bps = rate_bps;
        if rate_bps.is_none() {
            self.tp.cwnd_clamp_pkts = CcState::new(1, 1).cwnd_clamp_pkts;
        }
        self.apply_clamp();
    }
    /// Packets sent and not cumulatively acknowledged (Linux `packets_out`).
    pub fn in_flight_pkts(&self) -> u32 {
        self.snd.sb.len()
    }
    /// Whether SACK was negotiated.
    pub fn sack_enabled(&self) -> bool {
        self.sack_ok
    }
    /// Bytes written by the application and not yet acknowledged.
    pub fn unacked_written_bytes(&self) -> u64 {
        self.snd.unacked_written_bytes()
    }
    /// The handshake completed (whether or not either side has closed since).
    pub fn is_established(&self) -> bool {
        self.state.is_synchronized()
    }
    pub fn node(&self) -> u32 {
        self.node
    }
    pub fn rcv_nxt(&self) -> u64 {
        self.rcv.nxt
    }
    /// The peer's FIN was received in order.
    pub fn peer_closed(&self) -> bool {
        self.rcv.peer_closed
    }

    // ------------------------------------------------------------------ application calls

    /// Active open (client).
    pub fn connect(&mut self, now_ns: u64, out: &mut Output) {
        if self.state != State::Closed {
            return;
        }
        self.state = State::SynSent;
        self.send_syn(now_ns, out, false);
    }

    /// Appends `bytes` to the send stream; `tag` is reported back when they are acknowledged.
    /// Returns the stream offset just past the written bytes (None if nothing was written:
    /// zero bytes, or the direction is closed).
    pub fn write(&mut self, bytes: u64, tag: u64, now_ns: u64, out: &mut Output) -> Option<u64> {
        if self.snd.fin_requested || bytes == 0 {
            return None;
        }
        if self.snd.una >= self.snd.write_end {
            // written while idle: a new chunk (an HTTP response) starts here
            self.snd.chunk_start = self.snd.write_end;
            self.snd.chunk_pending = true;
            for hook in &mut self.hooks {
                hook.on_chunk_written();
            }
        }
        self.snd.write_end += bytes;
        self.snd.chunk_end = self.snd.write_end;
        self.stats.transfer.bytes_written += bytes;
        self.snd.marks.push_back((self.snd.write_end, tag));
        self.snd.idle_notified = false;
        self.try_send(now_ns, out);
        Some(self.snd.write_end)
    }

    /// Withdraws written bytes that have not been transmitted yet (a bulk sender stopping).
    pub fn withdraw_unsent(&mut self) {
        let keep = self.snd.nxt.max(1).max(self.snd.una);
        if keep < self.snd.write_end && !self.snd.fin_requested {
            self.stats.transfer.bytes_written -= self.snd.write_end - keep;
            self.snd.write_end = keep;
            self.snd.marks.retain(|&(end, _)| end <= keep);
        }
    }

    /// Closes the send direction: a FIN follows the written data.
    pub fn close(&mut self, now_ns: u64, out: &mut Output) {
        if !self.snd.fin_requested {
            self.snd.fin_requested = true;
            self.state = self.state.on_close();
            self.try_send(now_ns, out);
        }
    }

    /// The peer wrote a message spanning stream offsets `start..end` (Connection keeps both
    /// ends' marks in step).
    pub(crate) fn expect_message(&mut self, start: u64, end: u64, tag: u64) {
        self.rcv.marks.push_back(RecvMark {
            start,
            end,
            tag,
            first_byte: false,
        });
    }

    /// Asks for [`NoticeKind::Progress`] notices, at most one per `every_ns` (None: none).
    pub fn set_progress_every(&mut self, every_ns: Option<u64>) {
        self.rcv.progress_every_ns = every_ns;
        self.rcv.last_progress_ns = None;
    }

    // ------------------------------------------------------------------ packets out

    fn arm(timer: &mut Timer, at_ns: u64, conn: u32, side: u8, kind: TimerKind, out: &mut Output) {
        if let Some(t) = timer.arm(at_ns) {
            out.timers.push((t, conn, side, kind));
        }
    }

    /// When a timer armed now for `timeout_ns` fires: `timeout_ns` later, or on the tick the
    /// kernel's timer wheel gives (`timer_clock`, tcp/timer_clock.rs).
    #[inline]
    fn timer_fires_at(&self, now_ns: u64, timeout_ns: u64) -> u64 {
        crate::tcp::timer_clock::fires_at(self.cfg.timer_clock, self.cfg.hz, now_ns, timeout_ns)
    }

    fn arm_rto(&mut self, now_ns: u64, out: &mut Output) {
        self.tp.rto_ns = self.rtt.rto_ns();
        let at = self.timer_fires_at(now_ns, self.tp.rto_ns);
        Self::arm(
            &mut self.snd.rto_timer,
            at,
            self.conn,
            self.side,
            TimerKind::Rto,
            out,
        );
    }

    #[inline(always)]
    fn header(&self, now_ns: u64, seq_off: u64, fl: u8, payload: u32) -> TcpHeader {
        let window = if fl & flags::SYN != 0 {
            self.cfg.rwnd.0.min(65_535) as u16
        } else {
            (self.cfg.rwnd.0 >> self.rcv.wscale).min(65_535) as u16
        };
        TcpHeader {
            src_port: self.local_port,
            dst_port: self.peer_port,
            seq: to_wire(self.snd.iss, seq_off),
            ack: if fl & flags::ACK != 0 {
                to_wire(self.rcv.irs, self.rcv.nxt)
            } else {
                0
            },
            flags: fl,
            window,
            ts: self
                .cfg
                .timestamps
                .then(|| (ts_now(now_ns), self.rcv.ts_recent)),
            syn: None,
            sack: [(0, 0); 3],
            sack_len: 0,
            payload_bytes: payload,
        }
    }

    #[inline(always)]
    fn emit(&mut self, mut h: TcpHeader, out: &mut Output) {
        if h.flags & flags::SYN == 0 && self.rcv.rcvbuf.is_some() {
            let (held, rcv_nxt) = (self.rcv.buffered(), self.rcv.nxt);
            if let Some(b) = self.rcv.rcvbuf.as_mut() {
                h.window = b.select_window(rcv_nxt, held);
            }
        }
        if h.flags & flags::ACK != 0 {
            self.rcv.last_ack_sent = self.rcv.nxt;
            if let Some(d) = self
                .rcv
                .delack
                .as_mut()
                .filter(|_| h.flags & flags::SYN == 0)
            {
                // tcp_event_ack_sent
                d.on_ack_sent();
            }
        }
        if self.sack_ok && h.flags & flags::ACK != 0 && h.flags & flags::SYN == 0 {
            self.rcv.fill_sack_blocks(&mut h);
        }
        out.packets.push(Packet::tcp(
            self.node,
            self.peer_node,
            self.conn,
            self.side == 0,
            h,
        ));
    }

    fn send_syn(&mut self, now_ns: u64, out: &mut Output, retransmission: bool) {
        let fl = if self.side == 0 {
            flags::SYN
        } else {
            flags::SYN | flags::ACK
        };
        let mut h = self.header(now_ns, 0, fl, 0);
        let ts_bytes = if self.cfg.timestamps { 12 } else { 0 };
        if let Some(b) = self.rcv.rcvbuf.as_mut() {
            // tcp_connect_init rounds to the MSS it announces; tcp_openreq_init_rwin to that
            // MSS less the timestamp option when the SYN carried one
            let syn_mss = (self.cfg.mss + ts_bytes) as u64;
            let round = if self.side == 1 && self.rcv.peer_ts_ok {
                syn_mss - 12
            } else {
                syn_mss
            };
            h.window = b.initial_window(round).min(65_535) as u16;
        }
        h.syn = Some(SynOptions {
            // advertised MSS: the MTU's payload (Linux advertises 1460 and sends 1448 + 12 of TS)
            mss: (self.cfg.mss + ts_bytes).min(65_535) as u16,
            wscale: Some(self.rcv.wscale),
            // the server answers SACK-permitted only if the client offered it
            sack_permitted: self.cfg.sack && (self.side == 0 || self.sack_ok),
        });
        self.emit(h, out);
        if !retransmission {
            self.snd.nxt = 1;
            self.snd.una = 0;
            self.snd.sb.clear();
            self.snd.short_segs.clear();
            self.snd.sb.push(Seg {
                start: 0,
                end: 1,
                sent_ns: now_ns,
                flags: 0,
                tx: TxState::default(),
            });
        } else if let Some(s) = self.snd.sb.front_mut() {
            s.flags |= segflags::EVER_RETRANS;
            s.sent_ns = now_ns;
        }
        self.arm_rto(now_ns, out);
    }

    /// A pure ACK.
    #[inline]
    fn send_ack(&mut self, now_ns: u64, out: &mut Output) {
        let h = self.header(now_ns, self.snd.nxt, flags::ACK, 0);
        self.emit(h, out);
        self.rcv.delack_timer.cancel();
        self.rcv.unacked_bytes = 0;
    }

    // ------------------------------------------------------------------ packets in

    /// Handles a segment addressed to this endpoint.
    pub fn on_segment(&mut self, h: &TcpHeader, now_ns: u64, out: &mut Output) {
        self.tp.now_ns = now_ns;
        match self.state {
            // never opened
            State::Closed if self.stats.established_ns.is_none() => {}
            State::Listen => {
                if h.has(flags::SYN) && !h.has(flags::ACK) {
                    self.accept_syn(h);
                    self.state = State::SynRcvd;
                    self.send_syn(now_ns, out, false);
                }
            }
            State::SynSent => {
                if h.has(flags::SYN) && h.has(flags::ACK) && from_wire(self.snd.iss, h.ack, 1) == 1
                {
                    self.accept_syn(h);
                    self.handshake_acked(h, now_ns, out);
                    self.send_ack(now_ns, out);
                    self.try_send(now_ns, out);
                }
            }
            State::SynRcvd => {
                if h.has(flags::SYN) && !h.has(flags::ACK) {
                    // our SYN-ACK was lost: the client retransmitted its SYN
                    self.send_syn(now_ns, out, true);
                } else if h.has(flags::ACK) && from_wire(self.snd.iss, h.ack, 1) >= 1 {
                    self.handshake_acked(h, now_ns, out);
                    self.on_established_segment(h, now_ns, out);
                }
            }
            _ => {
                if h.has(flags::SYN) {
                    // a retransmitted SYN-ACK: our handshake ACK was lost
                    self.send_ack(now_ns, out);
                    return;
                }
                self.on_established_segment(h, now_ns, out);
            }
        }
    }

    fn accept_syn(&mut self, h: &TcpHeader) {
        self.rcv.irs = h.seq;
        self.rcv.nxt = 1;
        if let Some(syn) = h.syn {
            self.snd.wscale = syn.wscale.unwrap_or(0);
            // the peer's MSS bounds ours
            let peer_mss = syn.mss as u32 - if self.cfg.timestamps { 12 } else { 0 };
            self.cfg.mss = self.cfg.mss.min(peer_mss.max(64));
            self.tp.mss_bytes = self.cfg.mss;
            self.sack_ok = self.cfg.sack && syn.sack_permitted;
        }
        self.snd.wnd_bytes = h.window as u64;
        if let Some((val, _)) = h.ts {
            self.rcv.ts_recent = val;
        }
        self.rcv.peer_ts_ok = self.cfg.timestamps && h.ts.is_some();
        let sack_ok = self.sack_ok;
        if let Some(b) = self.rcv.rcvbuf.as_mut() {
            b.set_sack(sack_ok);
        }
    }

    /// Our SYN (or SYN-ACK) was acknowledged.
    fn handshake_acked(&mut self, h: &TcpHeader, now_ns: u64, out: &mut Output) {
        let syn = self.snd.sb.front().copied();
        self.snd.sb.clear();
        self.snd.short_segs.clear();
        self.snd.una = 1;
        self.tp.snd_una_bytes = 1;
        self.tp.snd_nxt_bytes = 1;
        match syn {
            Some(s) if !s.has(segflags::EVER_RETRANS) => self.take_rtt_sample(now_ns - s.sent_ns),
            _ => match (self.cfg.timestamps, h.ts) {
                (true, Some((_, ecr))) => self.take_rtt_sample(ts_rtt(now_ns, ecr)),
                _ => self.rtt.syn_was_retransmitted(),
            },
        }
        self.snd.rto_timer.cancel();
        self.state = State::Established;
        if self.snd.fin_requested {
            // the application closed during the handshake: the FIN follows its data
            self.state = self.state.on_close();
        }
        self.stats.established_ns = Some(now_ns);
        let (mss, rcv_nxt) = (self.cfg.mss as u64, self.rcv.nxt);
        if let Some(b) = self.rcv.rcvbuf.as_mut() {
            b.established(mss, now_ns, rcv_nxt, rcv_nxt);
        }
        if let Some(d) = self.rcv.delack.as_mut() {
            d.on_established(now_ns);
        }
        self.tp.rto_ns = self.rtt.rto_ns();
        self.cc.cwnd_event(&mut self.tp, CaEvent::Established);
        self.update_pacing_rate();
        self.apply_clamp();
        out.notices.push(Notice {
            conn: self.conn,
            side: self.side,
            kind: NoticeKind::Connected,
        });
    }

    fn take_rtt_sample(&mut self, rtt_ns: u64) {
        self.rtt.on_sample(rtt_ns, self.snd.una, self.snd.nxt);
        self.tp.srtt_ns = self.rtt.srtt_ns;
        self.tp.min_rtt_ns = self.rtt.min_rtt_ns;
        self.tp.last_rtt_ns = self.rtt.latest_ns;
        self.tp.rto_ns = self.rtt.rto_ns();
    }

    fn on_established_segment(&mut self, h: &TcpHeader, now_ns: u64, out: &mut Output) {
        self.note_ts_recent(h);
        if h.has(flags::ACK) {
            self.on_ack(h, now_ns, out);
        }
        let ack_now = self.on_data(h, now_ns, out);
        let sent_before = self.stats.transfer.segments_sent;
        self.try_send(now_ns, out);
        if ack_now && self.stats.transfer.segments_sent == sent_before {
            self.send_ack(now_ns, out);
        }
        if self.rcv.unread.is_some() {
            self.app_read(now_ns);
        }
    }

    // ------------------------------------------------------------------ timers

    /// A timer's heap entry popped; schedules what it must in `out`.
    pub fn on_timer_entry(&mut self, kind: TimerKind, now_ns: u64, out: &mut Output) {
        use crate::sim::events::TimerPop;
        let timer = match kind {
            TimerKind::Rto => &mut self.snd.rto_timer,
            TimerKind::DelAck => &mut self.rcv.delack_timer,
            TimerKind::Pacing => &mut self.snd.pace_timer,
            TimerKind::LossProbe => &mut self.recovery.tlp_timer,
            TimerKind::Reorder => &mut self.recovery.reorder_timer,
        };
        match timer.on_pop(now_ns) {
            TimerPop::Fire => {}
            TimerPop::Reschedule(t) => {
                out.timers.push((t, self.conn, self.side, kind));
                return;
            }
            TimerPop::Ignore => return,
        }
        self.tp.now_ns = now_ns;
        match kind {
            TimerKind::Rto => self.on_rto(now_ns, out),
            TimerKind::DelAck => {
                if let Some(d) = self.rcv.delack.as_mut() {
                    if d.pending && self.state.is_synchronized() {
                        d.on_timer(self.rtt.rto_ns());
                        self.send_ack(now_ns, out);
                    }
                } else if self.rcv.unacked_bytes > 0 && self.state.is_synchronized() {
                    self.send_ack(now_ns, out);
                }
            }
            TimerKind::Pacing => self.try_send(now_ns, out),
            TimerKind::LossProbe => self.on_loss_probe(now_ns, out),
            TimerKind::Reorder => self.on_reorder_timeout(now_ns, out),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_scale_fits_16_bits() {
        assert_eq!(wscale_for(65_535), 0);
        assert_eq!(wscale_for(65_536), 1);
        // 64 MiB >> 10 = 65536 does not fit: Linux would also pick 11 for a 64 MiB buffer
        assert_eq!(wscale_for(64 << 20), 11);
        assert_eq!(wscale_for((64 << 20) - 1024), 10);
        assert_eq!(wscale_for(u64::MAX), 14);
    }
}
