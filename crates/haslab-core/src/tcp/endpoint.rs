//! One TCP endpoint (a full-duplex socket): the sender half and the receiver half.
//!
//! Sender (RFC 793, RFC 5681, RFC 6582, RFC 6298, RFC 7323):
//! - Three-way handshake; SYN / SYN-ACK retransmitted on the RTO (initial 1 s, doubled).
//! - MSS segmentation of the application's byte stream; no Nagle (as TCP_NODELAY, which HTTP
//!   servers set); FIN after the last written byte when the application closes.
//! - Window: packets in flight < cwnd (less the duplicate ACKs received, which gives limited
//!   transmit, RFC 3042), and bytes in flight ≤ the peer's receive window.
//! - Fast retransmit on the 3rd duplicate ACK and NewReno fast recovery (RFC 6582): partial
//!   ACKs retransmit the next hole; the full ACK sets cwnd = ssthresh. A new fast retransmit
//!   needs an ACK at or above `recover` (RFC 6582 §3.2 step 2 / §4.1). cwnd during recovery:
//!   `classic` inflation (cwnd = ssthresh + 3, +1 per further duplicate ACK, deflated by the
//!   packets a partial ACK acks, +1 if at least one MSS was acked) or `prr` (RFC 6937, as
//!   Linux `tcp_cwnd_reduction` without SACK: see `Endpoint::prr_update`).
//! - RTO (RFC 6298, see [`super::rtt`]): ssthresh from the congestion control — once per
//!   loss episode, as Linux `tcp_enter_loss` — cwnd = 1, go-back-N retransmission from
//!   snd_una in slow start, exponential backoff. The timer is restarted on every ACK of new
//!   data (RFC 6298 §5.3, also for partial ACKs: "slow but steady", RFC 6582 §4.2).
//! - RTT samples from the oldest newly acked segment when it was never retransmitted (Karn),
//!   else from the timestamp echo (RFC 7323 §4.1), at 1 ms resolution like Linux's TS clock.
//! - Restart after idle through the [`CwndValidation`] policy; `CA_EVENT_TX_START` when
//!   sending with nothing in flight; Linux's cwnd-limited tracking (`tcp_cwnd_validate`).
//! - Pacing: when `CcState::pacing_rate_bps` is set, a packet of `s` bytes delays the next
//!   one by `s·8/rate` (Linux's `tcp_pacing` with the FQ-less internal pacing).
//!
//! Receiver: cumulative ACKs; out-of-order segments are kept and acknowledged at once with a
//! duplicate ACK; a segment that fills a hole is acknowledged at once; otherwise delayed
//! ACKs (RFC 5681 §4.2): an ACK for every 2 full-sized segments' worth of bytes, or when the
//! delayed-ACK timer expires. Linux's quick-ACK mode at connection start is not modelled.
//! The advertised window is the configured `rwnd` (the application reads instantly).

use super::cc::{
    AckSample, AppData, CaEvent, CaState, CcState, CongestionControl, CA_ACK_SLOWPATH,
    CA_ACK_WIN_UPDATE,
};
use super::config::{DelayedAckMode, RecoveryMode, TcpConfig};
use super::cwv::{self, CwndValidation};
use super::rtt::RttEstimator;
use super::seq::{from_wire, to_wire};
use crate::net::packet::{flags, Packet, SynOptions, TcpHeader};
use crate::sim::events::Timer;
use std::collections::VecDeque;

/// The timers of an endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimerKind {
    Rto,
    DelAck,
    Pacing,
}

/// Connection states (RFC 793 §3.2, reduced to what the simulator needs: there is no
/// TIME-WAIT and a closed connection is simply quiet).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Closed,
    Listen,
    SynSent,
    SynRcvd,
    Established,
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
    /// Every byte written so far was acknowledged (the sender is idle).
    SendIdle,
    /// The peer closed its direction (FIN received in order).
    PeerClosed,
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

/// A transmitted, not yet acknowledged segment.
#[derive(Clone, Copy, Debug)]
struct SentSeg {
    start: u64,
    end: u64,
    sent_ns: u64,
    retransmitted: bool,
}

/// Counters of one endpoint (payload bytes, i.e. without SYN/FIN).
#[derive(Clone, Debug, Default)]
pub struct EndpointStats {
    pub bytes_written: u64,
    pub bytes_sent: u64,
    pub bytes_acked: u64,
    pub bytes_received: u64,
    /// Tagged messages of the peer received completely, in order.
    pub messages_received: u64,
    pub segments_sent: u64,
    pub retransmitted_segments: u64,
    pub rto_count: u64,
    pub fast_recovery_count: u64,
    pub established_ns: Option<u64>,
    /// Time the last written byte was acknowledged (updated at each idle point).
    pub completed_ns: Option<u64>,
}

pub struct Endpoint {
    pub cfg: TcpConfig,
    pub state: State,
    conn: u32,
    side: u8,
    node: u32,
    peer_node: u32,
    local_port: u16,
    peer_port: u16,

    // ---- send half ----
    iss: u32,
    snd_una: u64,
    snd_nxt: u64,
    snd_max: u64,
    /// offset just past the last written byte (1 + bytes written)
    write_end: u64,
    fin_requested: bool,
    rtx: VecDeque<SentSeg>,
    snd_wnd_bytes: u64,
    /// shift applied to windows received from the peer
    snd_wscale: u8,
    pub tp: CcState,
    cc: Box<dyn CongestionControl>,
    cwv: Box<dyn CwndValidation>,
    pub rtt: RttEstimator,
    rto_timer: Timer,
    dupacks: u32,
    /// Linux's `sacked_out` without SACK ("reno sacks"): duplicate ACKs counted as segments
    /// that have left the network, so that pipe = packets out − sacked_out
    sacked_out: u32,
    /// PRR state (RFC 6937): delivered and sent since recovery began, RecoverFS
    prr_delivered: u32,
    prr_out: u32,
    recover_fs: u32,
    recover: u64,
    has_sent_data: bool,
    pacing_next_ns: u64,
    pace_timer: Timer,
    cwnd_usage_seq: u64,
    /// marks (end offset, tag) of writes, for Acked notices
    send_marks: VecDeque<(u64, u64)>,
    idle_notified: bool,

    // ---- receive half ----
    irs: u32,
    rcv_nxt: u64,
    /// out-of-order ranges above rcv_nxt, sorted, disjoint
    ooo: Vec<(u64, u64)>,
    peer_fin_at: Option<u64>,
    pub peer_closed: bool,
    /// shift we apply to the windows we advertise
    rcv_wscale: u8,
    ts_recent: u32,
    delack_timer: Timer,
    unacked_bytes: u64,
    /// marks (end offset, tag) of the peer's writes, for Received notices
    recv_marks: VecDeque<(u64, u64)>,

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
        let rtt = RttEstimator::new(
            cfg.initial_rto.0,
            cfg.min_rto.0,
            cfg.max_rto.0,
            cfg.rto_formula,
        );
        tp.rto_ns = rtt.rto_ns();
        let cwv = cwv::from_config(cfg.idle_restart);
        let rcv_wscale = wscale_for(cfg.rwnd.0);
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
            iss,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            write_end: 1,
            fin_requested: false,
            rtx: VecDeque::new(),
            snd_wnd_bytes: 65_535,
            snd_wscale: 0,
            tp,
            cc,
            cwv,
            rtt,
            rto_timer: Timer::default(),
            dupacks: 0,
            sacked_out: 0,
            prr_delivered: 0,
            prr_out: 0,
            recover_fs: 0,
            recover: 0,
            has_sent_data: false,
            pacing_next_ns: 0,
            pace_timer: Timer::default(),
            cwnd_usage_seq: 0,
            send_marks: VecDeque::new(),
            idle_notified: true,
            irs: 0,
            rcv_nxt: 0,
            ooo: Vec::new(),
            peer_fin_at: None,
            peer_closed: false,
            rcv_wscale,
            ts_recent: 0,
            delack_timer: Timer::default(),
            unacked_bytes: 0,
            recv_marks: VecDeque::new(),
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
    /// Packets in flight (sent and not cumulatively acknowledged).
    pub fn in_flight_pkts(&self) -> u32 {
        self.rtx.len() as u32
    }

    /// What the window is compared with before sending. Classic recovery: packets in flight,
    /// with up to two segments of limited transmit on the first duplicate ACKs (RFC 3042) and
    /// cwnd inflation in recovery. PRR: Linux's `tcp_packets_in_flight`, i.e. packets out less
    /// the duplicate ACKs received (each one a segment that left the network), which also
    /// gives limited transmit.
    fn window_pipe(&self) -> u32 {
        match self.cfg.recovery {
            RecoveryMode::Prr => self.in_flight_pkts().saturating_sub(self.sacked_out),
            RecoveryMode::Classic if self.tp.ca_state == CaState::Disorder => {
                self.in_flight_pkts().saturating_sub(self.dupacks.min(2))
            }
            RecoveryMode::Classic => self.in_flight_pkts(),
        }
    }

    /// RFC 6937 §3 (as Linux `tcp_cwnd_reduction`): on each ACK in recovery that delivered
    /// `delivered` packets, cwnd = pipe + sndcnt, where sndcnt keeps the sending rate
    /// proportional (pipe > ssthresh) or slow-starts back up to ssthresh (PRR-SSRB). RecoverFS
    /// is cwnd when recovery began, as in Linux.
    fn prr_update(&mut self, delivered: u32, una_advanced: bool) {
        let pipe = self.window_pipe() as i64;
        let ssthresh = self.tp.ssthresh_pkts as i64;
        self.prr_delivered += delivered;
        let (prr_delivered, prr_out) = (self.prr_delivered as i64, self.prr_out as i64);
        let mut sndcnt = if pipe > ssthresh {
            let fs = self.recover_fs.max(1) as i64;
            (ssthresh * prr_delivered + fs - 1) / fs - prr_out
        } else if una_advanced {
            (prr_delivered - prr_out)
                .max(delivered as i64)
                .min(ssthresh - pipe)
        } else {
            (delivered as i64).min(ssthresh - pipe)
        };
        // the fast retransmission itself is always allowed
        sndcnt = sndcnt.max(if prr_out == 0 { 1 } else { 0 });
        self.tp.cwnd_pkts = (pipe + sndcnt).max(1) as u32;
    }
    /// Bytes written by the application and not yet acknowledged.
    pub fn unacked_written_bytes(&self) -> u64 {
        self.write_end - self.snd_una.clamp(1, self.write_end)
    }
    pub fn is_established(&self) -> bool {
        self.state == State::Established
    }
    pub fn node(&self) -> u32 {
        self.node
    }
    pub fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
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
        if self.fin_requested || bytes == 0 {
            return None;
        }
        self.write_end += bytes;
        self.stats.bytes_written += bytes;
        self.send_marks.push_back((self.write_end, tag));
        self.idle_notified = false;
        self.try_send(now_ns, out);
        Some(self.write_end)
    }

    /// Withdraws written bytes that have not been transmitted yet (a bulk sender stopping).
    pub fn withdraw_unsent(&mut self) {
        let keep = self.snd_max.max(1).max(self.snd_una);
        if keep < self.write_end && !self.fin_requested {
            self.stats.bytes_written -= self.write_end - keep;
            self.write_end = keep;
            self.send_marks.retain(|&(end, _)| end <= keep);
        }
    }

    /// Closes the send direction: a FIN follows the written data.
    pub fn close(&mut self, now_ns: u64, out: &mut Output) {
        if !self.fin_requested {
            self.fin_requested = true;
            self.try_send(now_ns, out);
        }
    }

    /// The peer wrote a message ending at stream offset `end` (Connection keeps both ends'
    /// marks in step).
    pub(crate) fn expect_message(&mut self, end: u64, tag: u64) {
        self.recv_marks.push_back((end, tag));
    }

    // ------------------------------------------------------------------ packets out

    fn arm(timer: &mut Timer, at_ns: u64, conn: u32, side: u8, kind: TimerKind, out: &mut Output) {
        if let Some(t) = timer.arm(at_ns) {
            out.timers.push((t, conn, side, kind));
        }
    }

    fn arm_rto(&mut self, now_ns: u64, out: &mut Output) {
        self.tp.rto_ns = self.rtt.rto_ns();
        Self::arm(
            &mut self.rto_timer,
            now_ns + self.tp.rto_ns,
            self.conn,
            self.side,
            TimerKind::Rto,
            out,
        );
    }

    fn header(&self, now_ns: u64, seq_off: u64, fl: u8, payload: u32) -> TcpHeader {
        let window = if fl & flags::SYN != 0 {
            self.cfg.rwnd.0.min(65_535) as u16
        } else {
            (self.cfg.rwnd.0 >> self.rcv_wscale).min(65_535) as u16
        };
        TcpHeader {
            src_port: self.local_port,
            dst_port: self.peer_port,
            seq: to_wire(self.iss, seq_off),
            ack: if fl & flags::ACK != 0 {
                to_wire(self.irs, self.rcv_nxt)
            } else {
                0
            },
            flags: fl,
            window,
            ts: self
                .cfg
                .timestamps
                .then(|| (ts_now(now_ns), self.ts_recent)),
            syn: None,
            sack: [(0, 0); 3],
            sack_len: 0,
            payload_bytes: payload,
        }
    }

    fn emit(&mut self, h: TcpHeader, out: &mut Output) {
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
        h.syn = Some(SynOptions {
            // advertised MSS: the MTU's payload (Linux advertises 1460 and sends 1448 + 12 of TS)
            mss: (self.cfg.mss + ts_bytes).min(65_535) as u16,
            wscale: Some(self.rcv_wscale),
            sack_permitted: false,
        });
        self.emit(h, out);
        if !retransmission {
            self.snd_nxt = 1;
            self.snd_max = 1;
            self.snd_una = 0;
            self.rtx.clear();
            self.rtx.push_back(SentSeg {
                start: 0,
                end: 1,
                sent_ns: now_ns,
                retransmitted: false,
            });
        } else if let Some(s) = self.rtx.front_mut() {
            s.retransmitted = true;
            s.sent_ns = now_ns;
        }
        self.arm_rto(now_ns, out);
    }

    /// A pure ACK.
    fn send_ack(&mut self, now_ns: u64, out: &mut Output) {
        let h = self.header(now_ns, self.snd_nxt, flags::ACK, 0);
        self.emit(h, out);
        self.delack_timer.cancel();
        self.unacked_bytes = 0;
    }

    /// End of the sendable stream: written data, plus the FIN when the app closed.
    #[inline]
    fn stream_end(&self) -> u64 {
        self.write_end + self.fin_requested as u64
    }

    /// Sends what the windows allow.
    pub fn try_send(&mut self, now_ns: u64, out: &mut Output) {
        if self.state != State::Established {
            return;
        }
        let mut cwnd_limited = false;
        while self.snd_nxt < self.stream_end() {
            if self.rtx.is_empty() && self.snd_nxt == self.snd_max {
                // sending new data with nothing in flight: restart after idle, TX start
                if self.has_sent_data {
                    let idle_ns = now_ns.saturating_sub(self.tp.last_send_ns);
                    self.tp.now_ns = now_ns;
                    self.tp.rto_ns = self.rtt.rto_ns();
                    self.cwv
                        .on_restart_after_idle(&mut self.tp, self.cc.as_mut(), idle_ns);
                }
                self.cc.cwnd_event(&mut self.tp, CaEvent::TxStart);
            }
            if self.window_pipe() >= self.tp.cwnd_pkts {
                cwnd_limited = true;
                break;
            }
            let len = (self.write_end.saturating_sub(self.snd_nxt)).min(self.cfg.mss as u64) as u32;
            if self.snd_nxt + len as u64 - self.snd_una > self.snd_wnd_bytes
                && self.in_flight_pkts() > 0
            {
                break; // receive window full (zero-window probing is not modelled)
            }
            if let Some(rate) = self.tp.pacing_rate_bps {
                if now_ns < self.pacing_next_ns {
                    let (c, s) = (self.conn, self.side);
                    Self::arm(
                        &mut self.pace_timer,
                        self.pacing_next_ns,
                        c,
                        s,
                        TimerKind::Pacing,
                        out,
                    );
                    break;
                }
                let wire = len as u64 + 40 + if self.cfg.timestamps { 12 } else { 0 };
                self.pacing_next_ns = now_ns + crate::sim::time::tx_time_ns(wire, rate.max(1));
            }
            let fin = self.fin_requested && self.snd_nxt + len as u64 == self.write_end;
            self.transmit(self.snd_nxt, len, fin, now_ns, out);
            self.snd_nxt += len as u64 + fin as u64;
            self.snd_max = self.snd_max.max(self.snd_nxt);
            self.tp.snd_nxt_bytes = self.snd_nxt;
        }
        self.cwnd_validate(cwnd_limited);
    }

    /// Puts the segment [off, off + len) (+ FIN) on the wire and records it.
    fn transmit(&mut self, off: u64, len: u32, fin: bool, now_ns: u64, out: &mut Output) {
        let retransmission = off < self.snd_max;
        let mut fl = flags::ACK;
        if fin {
            fl |= flags::FIN;
        }
        if len > 0 && off + len as u64 == self.write_end {
            fl |= flags::PSH;
        }
        let h = self.header(now_ns, off, fl, len);
        self.emit(h, out);
        self.rtx.push_back(SentSeg {
            start: off,
            end: off + len as u64 + fin as u64,
            sent_ns: now_ns,
            retransmitted: retransmission,
        });
        self.on_segment_sent(len, retransmission, now_ns, out);
    }

    fn on_segment_sent(&mut self, len: u32, retransmission: bool, now_ns: u64, out: &mut Output) {
        self.stats.segments_sent += 1;
        if self.tp.ca_state == CaState::Recovery {
            self.prr_out += 1;
        }
        self.stats.bytes_sent += len as u64;
        if retransmission {
            self.stats.retransmitted_segments += 1;
        }
        self.has_sent_data = true;
        self.tp.last_send_ns = now_ns;
        self.tp.in_flight_pkts = self.rtx.len() as u32;
        self.cwv.on_data_sent(&mut self.tp, len);
        // the ACK rides on this segment
        self.delack_timer.cancel();
        self.unacked_bytes = 0;
        if !self.rto_timer.is_armed() {
            self.arm_rto(now_ns, out);
        }
    }

    /// Retransmits the oldest unacknowledged segment (fast retransmit / partial ACK).
    fn retransmit_head(&mut self, now_ns: u64, out: &mut Output) {
        let Some(seg) = self.rtx.front().copied() else {
            return;
        };
        let fin = seg.end == self.write_end + 1 && self.fin_requested;
        let len = (seg.end - seg.start - fin as u64) as u32;
        let mut fl = flags::ACK;
        if fin {
            fl |= flags::FIN;
        }
        let h = self.header(now_ns, seg.start, fl, len);
        self.emit(h, out);
        if let Some(s) = self.rtx.front_mut() {
            s.retransmitted = true;
            s.sent_ns = now_ns;
        }
        self.on_segment_sent(len, true, now_ns, out);
    }

    /// Linux `tcp_cwnd_validate`: remember whether this window was cwnd-limited, or else the
    /// most packets it had in flight.
    fn cwnd_validate(&mut self, cwnd_limited: bool) {
        let out_pkts = self.in_flight_pkts();
        self.tp.in_flight_pkts = out_pkts;
        if self.snd_una >= self.cwnd_usage_seq
            || cwnd_limited
            || (!self.tp.is_cwnd_limited && out_pkts > self.tp.max_packets_out)
        {
            self.tp.is_cwnd_limited = cwnd_limited;
            self.tp.max_packets_out = out_pkts;
            self.cwnd_usage_seq = self.snd_nxt;
        }
    }

    fn set_ca_state(&mut self, new_state: CaState) {
        if self.tp.ca_state != new_state {
            self.cc.set_state(&mut self.tp, new_state);
            self.tp.ca_state = new_state;
        }
    }

    // ------------------------------------------------------------------ packets in

    /// Handles a segment addressed to this endpoint.
    pub fn on_segment(&mut self, h: &TcpHeader, now_ns: u64, out: &mut Output) {
        self.tp.now_ns = now_ns;
        match self.state {
            State::Closed => {}
            State::Listen => {
                if h.has(flags::SYN) && !h.has(flags::ACK) {
                    self.accept_syn(h);
                    self.state = State::SynRcvd;
                    self.send_syn(now_ns, out, false);
                }
            }
            State::SynSent => {
                if h.has(flags::SYN) && h.has(flags::ACK) && from_wire(self.iss, h.ack, 1) == 1 {
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
                } else if h.has(flags::ACK) && from_wire(self.iss, h.ack, 1) >= 1 {
                    self.handshake_acked(h, now_ns, out);
                    self.on_established_segment(h, now_ns, out);
                }
            }
            State::Established => {
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
        self.irs = h.seq;
        self.rcv_nxt = 1;
        if let Some(syn) = h.syn {
            self.snd_wscale = syn.wscale.unwrap_or(0);
            // the peer's MSS bounds ours
            let peer_mss = syn.mss as u32 - if self.cfg.timestamps { 12 } else { 0 };
            self.cfg.mss = self.cfg.mss.min(peer_mss.max(64));
            self.tp.mss_bytes = self.cfg.mss;
        }
        self.snd_wnd_bytes = h.window as u64;
        if let Some((val, _)) = h.ts {
            self.ts_recent = val;
        }
    }

    /// Our SYN (or SYN-ACK) was acknowledged.
    fn handshake_acked(&mut self, h: &TcpHeader, now_ns: u64, out: &mut Output) {
        let syn = self.rtx.pop_front();
        self.snd_una = 1;
        match syn {
            Some(s) if !s.retransmitted => self.take_rtt_sample(now_ns - s.sent_ns),
            _ => match (self.cfg.timestamps, h.ts) {
                (true, Some((_, ecr))) => self.take_rtt_sample(ts_rtt(now_ns, ecr)),
                _ => self.rtt.syn_was_retransmitted(),
            },
        }
        self.rto_timer.cancel();
        self.state = State::Established;
        self.stats.established_ns = Some(now_ns);
        self.tp.rto_ns = self.rtt.rto_ns();
        self.cc.cwnd_event(&mut self.tp, CaEvent::Established);
        out.notices.push(Notice {
            conn: self.conn,
            side: self.side,
            kind: NoticeKind::Connected,
        });
    }

    fn take_rtt_sample(&mut self, rtt_ns: u64) {
        self.rtt.on_sample(rtt_ns);
        self.tp.srtt_ns = self.rtt.srtt_ns;
        self.tp.min_rtt_ns = self.rtt.min_rtt_ns;
        self.tp.last_rtt_ns = self.rtt.latest_ns;
        self.tp.rto_ns = self.rtt.rto_ns();
    }

    fn on_established_segment(&mut self, h: &TcpHeader, now_ns: u64, out: &mut Output) {
        if h.has(flags::ACK) {
            self.on_ack(h, now_ns, out);
        }
        let ack_now = self.on_data(h, now_ns, out);
        let sent_before = self.stats.segments_sent;
        self.try_send(now_ns, out);
        if ack_now && self.stats.segments_sent == sent_before {
            self.send_ack(now_ns, out);
        }
    }

    // ------------------------------------------------------------------ sender: ACKs

    fn on_ack(&mut self, h: &TcpHeader, now_ns: u64, out: &mut Output) {
        let ack = from_wire(self.iss, h.ack, self.snd_una);
        if ack > self.snd_max {
            return; // acknowledges data never sent
        }
        let prev_wnd = self.snd_wnd_bytes;
        self.snd_wnd_bytes = (h.window as u64) << self.snd_wscale;
        let slow_path = self.tp.ca_state != CaState::Open;
        if ack > self.snd_una {
            self.on_new_ack(ack, h, now_ns, out);
            let fl = CA_ACK_WIN_UPDATE | if slow_path { CA_ACK_SLOWPATH } else { 0 };
            self.tp.snd_una_bytes = self.snd_una;
            self.tp.snd_nxt_bytes = self.snd_nxt;
            self.cc.in_ack_event(&mut self.tp, fl);
        } else if ack == self.snd_una
            && h.payload_bytes == 0
            && !h.has(flags::FIN)
            && !self.rtx.is_empty()
            && self.snd_wnd_bytes == prev_wnd
        {
            self.on_dupack(ack, now_ns, out);
            self.tp.snd_nxt_bytes = self.snd_nxt;
            self.cc.in_ack_event(&mut self.tp, CA_ACK_SLOWPATH);
        }
    }

    fn on_new_ack(&mut self, ack: u64, h: &TcpHeader, now_ns: u64, out: &mut Output) {
        let in_flight_before = self.in_flight_pkts();
        let mut pkts_acked = 0u32;
        let mut rtt_ns = None;
        let mut first = true;
        while let Some(seg) = self.rtx.front_mut() {
            if seg.end <= ack {
                if first && !seg.retransmitted {
                    rtt_ns = Some(now_ns - seg.sent_ns);
                }
                first = false;
                pkts_acked += 1;
                self.rtx.pop_front();
            } else {
                if seg.start < ack {
                    seg.start = ack; // partially acknowledged
                }
                break;
            }
        }
        if rtt_ns.is_none() && pkts_acked > 0 && self.cfg.timestamps {
            // Karn forbids the send-time sample; the timestamp echo disambiguates (RFC 7323)
            if let Some((_, ecr)) = h.ts {
                rtt_ns = Some(ts_rtt(now_ns, ecr));
            }
        }
        let data_end = self.write_end;
        let bytes_acked = ack.min(data_end) - self.snd_una.clamp(1, data_end);
        self.snd_una = ack;
        if self.snd_nxt < self.snd_una {
            self.snd_nxt = self.snd_una; // after go-back-N the receiver may be ahead
        }
        self.stats.bytes_acked += bytes_acked;
        if let Some(r) = rtt_ns {
            self.take_rtt_sample(r);
        }
        self.tp.delivered_bytes += bytes_acked;
        self.tp.delivered_pkts += pkts_acked as u64;
        self.tp.delivered_ns = now_ns;
        self.tp.snd_una_bytes = self.snd_una;
        self.tp.snd_nxt_bytes = self.snd_nxt;
        self.tp.in_flight_pkts = self.in_flight_pkts();
        let sample = AckSample {
            pkts_acked,
            bytes_acked,
            rtt_ns,
            in_flight_pkts: in_flight_before,
        };
        self.cc.pkts_acked(&mut self.tp, &sample);

        match self.tp.ca_state {
            CaState::Recovery => {
                if ack >= self.recover {
                    // full ACK: leave fast recovery (RFC 6582 §3.2 step 3, cwnd = ssthresh;
                    // Linux tcp_end_cwnd_reduction)
                    self.tp.cwnd_pkts = self.tp.ssthresh_pkts.max(1);
                    self.tp.cwnd_cnt = 0;
                    self.dupacks = 0;
                    self.sacked_out = 0;
                    self.set_ca_state(CaState::Open);
                } else {
                    // partial ACK: retransmit the next hole (RFC 6582 §3.2 step 4)
                    match self.cfg.recovery {
                        RecoveryMode::Classic => {
                            // deflate by the packets acked, add back one if ≥ 1 MSS was acked
                            let add_back = (bytes_acked >= self.cfg.mss as u64) as u32;
                            self.tp.cwnd_pkts =
                                (self.tp.cwnd_pkts.saturating_sub(pkts_acked) + add_back).max(1);
                        }
                        RecoveryMode::Prr => {
                            // Linux tcp_remove_reno_sacks: one acked packet is the hole, the
                            // others had already been counted by duplicate ACKs
                            let delivered = pkts_acked.saturating_sub(self.sacked_out).max(1);
                            self.sacked_out -= pkts_acked.saturating_sub(1).min(self.sacked_out);
                            self.prr_update(delivered, true);
                        }
                    }
                    self.retransmit_head(now_ns, out);
                }
            }
            CaState::Loss => {
                if ack >= self.recover {
                    self.set_ca_state(CaState::Open);
                }
                self.dupacks = 0;
                self.sacked_out = 0;
                self.grow(pkts_acked);
            }
            CaState::Open | CaState::Disorder => {
                self.dupacks = 0;
                self.sacked_out = 0;
                self.set_ca_state(CaState::Open);
                self.grow(pkts_acked);
            }
        }
        self.cwv.on_ack(&mut self.tp, bytes_acked);

        if self.rtx.is_empty() {
            self.rto_timer.cancel();
        } else {
            self.arm_rto(now_ns, out);
        }
        while let Some(&(end, tag)) = self.send_marks.front() {
            if end > self.snd_una {
                break;
            }
            self.send_marks.pop_front();
            out.notices.push(Notice {
                conn: self.conn,
                side: self.side,
                kind: NoticeKind::Acked { tag },
            });
        }
        if !self.idle_notified && self.snd_una >= self.write_end {
            self.idle_notified = true;
            self.stats.completed_ns = Some(now_ns);
            out.notices.push(Notice {
                conn: self.conn,
                side: self.side,
                kind: NoticeKind::SendIdle,
            });
        }
    }

    fn grow(&mut self, pkts_acked: u32) {
        if pkts_acked > 0 && self.cwv.allow_cwnd_growth(&self.tp) {
            self.cc.cong_avoid(&mut self.tp, pkts_acked);
        }
    }

    fn on_dupack(&mut self, ack: u64, now_ns: u64, out: &mut Output) {
        self.dupacks += 1;
        // Linux tcp_add_reno_sack: a duplicate ACK means a segment left the network
        self.sacked_out = (self.sacked_out + 1).min(self.in_flight_pkts().saturating_sub(1));
        match self.tp.ca_state {
            CaState::Recovery => match self.cfg.recovery {
                // inflation: a segment has left the network
                RecoveryMode::Classic => self.tp.cwnd_pkts += 1,
                RecoveryMode::Prr => self.prr_update(1, false),
            },
            // After an RTO no fast retransmit until the ACK passes `recover` (RFC 6582 §4.1);
            // an ACK that reaches `recover` returns the state to Open first.
            CaState::Loss => {}
            CaState::Open | CaState::Disorder => {
                if self.dupacks >= 3 {
                    // `recover` is one past the highest byte sent when the last episode began:
                    // an ACK at or above it covers all of that episode (RFC 6582 §3.2 step 2)
                    if ack >= self.recover {
                        self.enter_fast_recovery(now_ns, out);
                    }
                } else {
                    self.set_ca_state(CaState::Disorder);
                }
            }
        }
    }

    fn enter_fast_recovery(&mut self, now_ns: u64, out: &mut Output) {
        self.stats.fast_recovery_count += 1;
        self.tp.prior_cwnd_pkts = self.tp.cwnd_pkts;
        self.tp.prior_ssthresh_pkts = self.tp.ssthresh_pkts;
        self.tp.ssthresh_pkts = self.cc.ssthresh(&self.tp).max(2);
        self.recover = self.snd_max;
        self.set_ca_state(CaState::Recovery);
        self.tp.cwnd_cnt = 0;
        match self.cfg.recovery {
            RecoveryMode::Classic => self.tp.cwnd_pkts = self.tp.ssthresh_pkts + 3,
            RecoveryMode::Prr => {
                // Linux tcp_init_cwnd_reduction
                self.prr_delivered = 0;
                self.prr_out = 0;
                self.recover_fs = self.tp.prior_cwnd_pkts;
                self.prr_update(1, false);
            }
        }
        self.cwv.on_congestion(&mut self.tp);
        self.retransmit_head(now_ns, out);
    }

    // ------------------------------------------------------------------ timers

    /// A timer's heap entry popped; returns nothing, schedules what it must in `out`.
    pub fn on_timer_entry(&mut self, kind: TimerKind, now_ns: u64, out: &mut Output) {
        use crate::sim::events::TimerPop;
        let timer = match kind {
            TimerKind::Rto => &mut self.rto_timer,
            TimerKind::DelAck => &mut self.delack_timer,
            TimerKind::Pacing => &mut self.pace_timer,
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
                if self.unacked_bytes > 0 && self.state == State::Established {
                    self.send_ack(now_ns, out);
                }
            }
            TimerKind::Pacing => self.try_send(now_ns, out),
        }
    }

    fn on_rto(&mut self, now_ns: u64, out: &mut Output) {
        match self.state {
            State::SynSent | State::SynRcvd => {
                self.rtt.back_off();
                self.send_syn(now_ns, out, true);
                return;
            }
            State::Established => {}
            _ => return,
        }
        if self.rtx.is_empty() {
            return;
        }
        self.stats.rto_count += 1;
        // Linux tcp_enter_loss: reduce ssthresh once per loss episode
        if self.tp.ca_state <= CaState::Disorder || self.recover <= self.snd_una {
            self.tp.prior_cwnd_pkts = self.tp.cwnd_pkts;
            self.tp.prior_ssthresh_pkts = self.tp.ssthresh_pkts;
            self.tp.ssthresh_pkts = self.cc.ssthresh(&self.tp).max(2);
        }
        self.tp.cwnd_pkts = 1;
        self.tp.cwnd_cnt = 0;
        self.cc.cwnd_event(&mut self.tp, CaEvent::Loss);
        self.set_ca_state(CaState::Loss);
        self.cwv.on_congestion(&mut self.tp);
        self.recover = self.snd_max;
        self.dupacks = 0;
        self.sacked_out = 0;
        // go-back-N from snd_una
        self.snd_nxt = self.snd_una;
        self.rtx.clear();
        self.tp.in_flight_pkts = 0;
        self.rtt.back_off();
        self.tp.rto_ns = self.rtt.rto_ns();
        self.pacing_next_ns = 0;
        self.try_send(now_ns, out);
    }

    // ------------------------------------------------------------------ receiver

    /// Processes the data / FIN part of a segment; returns whether an ACK must go out now.
    fn on_data(&mut self, h: &TcpHeader, now_ns: u64, out: &mut Output) -> bool {
        let fin = h.has(flags::FIN);
        if h.payload_bytes == 0 && !fin {
            return false;
        }
        let start = from_wire(self.irs, h.seq, self.rcv_nxt);
        let end = start + h.payload_bytes as u64;
        if fin {
            self.peer_fin_at = Some(end);
        }
        let occupied_end = end + fin as u64;
        if occupied_end <= self.rcv_nxt {
            return true; // entirely old: a duplicate, ACK at once
        }
        if start > self.rcv_nxt {
            // out of order: keep it, duplicate ACK at once
            insert_range(&mut self.ooo, start, end);
            return true;
        }
        let filled_hole = !self.ooo.is_empty();
        let before = self.rcv_nxt;
        self.rcv_nxt = self.rcv_nxt.max(end);
        while let Some(&(s, e)) = self.ooo.first() {
            if s > self.rcv_nxt {
                break;
            }
            self.rcv_nxt = self.rcv_nxt.max(e);
            self.ooo.remove(0);
        }
        if let Some((val, _)) = h.ts {
            self.ts_recent = val;
        }
        let mut ack_now = filled_hole;
        if let Some(f) = self.peer_fin_at {
            if self.rcv_nxt == f && !self.peer_closed {
                self.rcv_nxt += 1;
                self.peer_closed = true;
                ack_now = true;
            }
        }
        let delivered_end = self
            .peer_fin_at
            .map_or(self.rcv_nxt, |f| self.rcv_nxt.min(f));
        let new_bytes = delivered_end.saturating_sub(before);
        self.stats.bytes_received += new_bytes;
        while let Some(&(mark_end, tag)) = self.recv_marks.front() {
            if mark_end > delivered_end {
                break;
            }
            self.recv_marks.pop_front();
            self.stats.messages_received += 1;
            out.notices.push(Notice {
                conn: self.conn,
                side: self.side,
                kind: NoticeKind::Received { tag },
            });
        }
        if self.peer_closed && ack_now {
            out.notices.push(Notice {
                conn: self.conn,
                side: self.side,
                kind: NoticeKind::PeerClosed,
            });
        }
        if ack_now {
            return true;
        }
        self.unacked_bytes += new_bytes;
        match self.cfg.delayed_ack {
            DelayedAckMode::Off => true,
            DelayedAckMode::On => {
                if self.unacked_bytes >= 2 * self.cfg.mss as u64 {
                    true
                } else {
                    let at = now_ns + self.cfg.delayed_ack_timeout.0;
                    if !self.delack_timer.is_armed() {
                        Self::arm(
                            &mut self.delack_timer,
                            at,
                            self.conn,
                            self.side,
                            TimerKind::DelAck,
                            out,
                        );
                    }
                    false
                }
            }
        }
    }
}

/// RTT from a timestamp echo (ms clock).
fn ts_rtt(now_ns: u64, ecr: u32) -> u64 {
    let now_ms = ts_now(now_ns);
    (now_ms.wrapping_sub(ecr) as u64).max(1) * 1_000_000
}

/// Inserts [s, e) into sorted disjoint ranges, merging overlaps and adjacency.
fn insert_range(ranges: &mut Vec<(u64, u64)>, s: u64, e: u64) {
    let i = ranges.partition_point(|&(_, re)| re < s);
    let mut ns = s;
    let mut ne = e;
    let mut j = i;
    while j < ranges.len() && ranges[j].0 <= ne {
        ns = ns.min(ranges[j].0);
        ne = ne.max(ranges[j].1);
        j += 1;
    }
    ranges.splice(i..j, std::iter::once((ns, ne)));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_merge() {
        let mut r = vec![];
        insert_range(&mut r, 10, 20);
        insert_range(&mut r, 30, 40);
        assert_eq!(r, vec![(10, 20), (30, 40)]);
        insert_range(&mut r, 20, 30);
        assert_eq!(r, vec![(10, 40)]);
        insert_range(&mut r, 5, 8);
        insert_range(&mut r, 50, 60);
        insert_range(&mut r, 7, 55);
        assert_eq!(r, vec![(5, 60)]);
    }

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
