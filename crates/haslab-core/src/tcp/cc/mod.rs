//! The congestion-control interface, modelled on Linux `struct tcp_congestion_ops`
//! (include/net/tcp.h), so that each algorithm reads like its kernel counterpart and can be
//! ported to BPF struct_ops.
//!
//! Units follow Linux: `cwnd` and `ssthresh` are in **packets** (full-sized segments), with a
//! credit counter `cwnd_cnt` for additive increase. The sender owns loss detection and
//! recovery (RFC 5681 / 6582 / 6298); an algorithm only answers the kernel's questions:
//!
//! | hook | Linux | called by the sender |
//! |---|---|---|
//! | [`CongestionControl::ssthresh`] | `ssthresh` | on entering fast recovery or on RTO |
//! | [`CongestionControl::cong_avoid`] | `cong_avoid` | on an ACK of new data outside recovery |
//! | [`CongestionControl::set_state`] | `set_state` | on a change of [`CaState`] |
//! | [`CongestionControl::cwnd_event`] | `cwnd_event` | on [`CaEvent`]s (TX start after idle, restart, loss) |
//! | [`CongestionControl::pkts_acked`] | `pkts_acked` | on every ACK of new data, with an RTT sample; with `ca_sample = "linux"` on every ACK that finds data outstanding (`tcp_clean_rtx_queue`); with `"linux-3.19"` on every ACK that removes a segment (3.19's `FLAG_ACKED`) |
//! | [`CongestionControl::in_ack_event`] | `in_ack_event` | on every ACK `tcp_ack` processes (not older than snd_una; new data, duplicate, window update, nothing outstanding): after `pkts_acked`, before loss detection, recovery and `cong_avoid`, as Linux since 6.15 |
//! | [`CongestionControl::in_data_segment`] | (none) | on a data segment that acknowledges nothing new, which Linux's fast path keeps from `tcp_ack` |
//! | [`CongestionControl::cong_control`] | `cong_control` | on every ACK, instead of `cong_avoid`, when [`CongestionControl::has_cong_control`] (BBR) |
//! | [`CongestionControl::undo_cwnd`] | `undo_cwnd` | when a reduction is found spurious |
//! | [`CongestionControl::set_app_data`] | (socket storage in BPF) | when the application passes data down |
//!
//! Everything an algorithm may read or write lives in [`CcState`] (Linux's `struct tcp_sock`
//! subset). An algorithm may set `pacing_rate_bps`, which the sender honours by spacing its
//! transmissions.

// Each algorithm's module is declared by its line in `registry!` below; these are helpers.
pub mod jiffies;
pub mod minmax;

use crate::sim::registry::{registry, Algorithm};
use crate::sim::rng::Stream;
use crate::tcp::config::{CwndLimited, UndoCwnd};

/// Linux `enum tcp_ca_state`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CaState {
    /// Normal state, no dubious events.
    Open,
    /// Duplicate ACKs seen, fewer than the threshold.
    Disorder,
    /// A cwnd reduction without a fast recovery (Linux `TCP_CA_CWR`): here only the one of a
    /// tail-loss probe that repaired a loss, entered and left on the same ACK (ECN and local
    /// congestion are not modelled).
    Cwr,
    /// Fast recovery after a fast retransmit.
    Recovery,
    /// After an RTO: retransmitting from snd_una in slow start.
    Loss,
}

impl CaState {
    /// Whether moving from `self` to `to` completes a cwnd reduction, where Linux's
    /// `tcp_end_cwnd_reduction` raises `CA_EVENT_COMPLETE_CWR` (net/ipv4/tcp_input.c, 3.19 and
    /// 6.18): a fast recovery or a CWR reduction ending in Open or Disorder (not an RTO's Loss).
    pub fn completes_cwr(self, to: CaState) -> bool {
        matches!(self, CaState::Recovery | CaState::Cwr)
            && matches!(to, CaState::Open | CaState::Disorder)
    }
}

/// Linux `enum tcp_ca_event` (the ones a simulator raises).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaEvent {
    /// First transmission when nothing is in flight (after an idle period or at start).
    TxStart,
    /// cwnd is about to be reduced because of idle time (restart after idle).
    CwndRestart,
    /// RTO: the loss state is entered.
    Loss,
    /// The connection is established (ns-3 calls Init here; Linux's `init` is at socket set-up).
    Established,
}

/// What the sender tells an algorithm about an ACK of new data (Linux `struct ack_sample`).
#[derive(Clone, Copy, Debug)]
pub struct AckSample {
    /// Packets newly acknowledged by this ACK.
    pub pkts_acked: u32,
    /// Bytes newly acknowledged by this ACK.
    pub bytes_acked: u64,
    /// RTT sample (None when Karn's rule forbids one).
    pub rtt_ns: Option<u64>,
    /// Packets in flight before this ACK.
    pub in_flight_pkts: u32,
}

/// `in_ack_event` flags (Linux `enum tcp_ca_ack_event_flags`).
/// The ACK was processed on the slow path: it did not advance `snd_una`, or it carried SACK
/// blocks, or the connection is in recovery (Linux sets it for everything but pure in-order
/// ACKs; Westwood+ then counts duplicate ACKs as one MSS delivered).
pub const CA_ACK_SLOWPATH: u32 = 1 << 0;
/// The ACK advanced `snd_una` (a window update in Linux's fast path).
pub const CA_ACK_WIN_UPDATE: u32 = 1 << 1;

/// A delivery-rate sample (Linux `struct rate_sample`, net/ipv4/tcp_rate.c;
/// draft-cheng-iccrg-delivery-rate-estimation), given to [`CongestionControl::cong_control`].
#[derive(Clone, Copy, Debug, Default)]
pub struct RateSample {
    /// `tp.delivered_pkts` when the newest acked packet was sent (`prior_delivered`).
    pub prior_delivered_pkts: u64,
    /// Packets delivered over the sample's interval (`delivered`; 0 when there is no sample).
    pub delivered_pkts: u64,
    /// Interval of the sample: max(send interval, ACK interval) (`interval_us`); None when the
    /// ACK gives no valid sample.
    pub interval_ns: Option<u64>,
    /// RTT of the newest acked, never-retransmitted packet (`rtt_us`).
    pub rtt_ns: Option<u64>,
    /// Packets newly marked lost by this ACK (`losses`).
    pub losses_pkts: u32,
    /// Packets newly acked or SACKed by this ACK (`acked_sacked`).
    pub acked_sacked_pkts: u32,
    /// Packets in flight before this ACK (`prior_in_flight`).
    pub prior_in_flight_pkts: u32,
    /// The sample's newest packet was sent while the sender was application-limited.
    pub is_app_limited: bool,
}

/// Data an application passes down to its connection's congestion control (Linux: a BPF
/// socket-storage map filled by the server). TcpHas and Trickle read the encoding ladder.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AppData {
    /// Encoding bitrates of the video being served, ascending, in bits per second.
    pub encoding_bitrates_bps: Vec<u64>,
}

/// Linux 3.x's rules of cwnd growth, where they differ from Linux 6.18's (`cwnd_growth`,
/// tcp/config.rs). In both, the algorithms grow in slow start while `snd_cwnd <= snd_ssthresh`
/// and slow start stops at ssthresh + 1 (net/ipv4/tcp_cong.c `tcp_slow_start`, the same in
/// the 3.13-3.15 and 3.19 sources), where Linux 6.18 stops at ssthresh and leaves slow start
/// on reaching it (`tcp_in_slow_start`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Linux3Growth {
    /// Linux 6.18's rules (and ns-3's).
    None,
    /// Linux 3.13-3.18: slow start counts packets (`tcp_slow_start(tp, acked)`) and hands
    /// nothing over; Reno's additive increase (NewReno, Westwood+, YeAH's Reno mode) counts
    /// ACKs, `tcp_cong_avoid_ai(tp, w)` once per ACK, w + 1 ACKs a packet.
    Before319,
    /// Linux 3.19: `tcp_reno_cong_avoid` counts packets and hands slow start's leftover to the
    /// increase (`tcp_cong_avoid_ai(tp, w, acked)`, the stretch-ACK form, in the 3.19 tree);
    /// YeAH still counts one per ACK in its Reno mode (`tcp_cong_avoid_ai(tp, snd_cwnd, 1)`)
    /// and its Scalable mode adds a packet when the count exceeds min(cwnd, 100), then clears
    /// it; YeAH and Illinois hand slow start's leftover to nothing.
    Linux319,
}

/// The part of the connection an algorithm sees (Linux `struct tcp_sock` subset).
#[derive(Clone, Debug)]
pub struct CcState {
    /// Congestion window, packets.
    pub cwnd_pkts: u32,
    /// Slow-start threshold, packets (u32::MAX / 2 initially, "infinite").
    pub ssthresh_pkts: u32,
    /// Additive-increase credit, packets acked since the last increment (`snd_cwnd_cnt`).
    pub cwnd_cnt: u32,
    /// Congestion avoidance counts bytes, as ns-3's `TcpNewReno::CongestionAvoidance`: see
    /// [`CcState::cong_avoid_ai`]. Set by `window_accounting = "bytes"` with
    /// `cwnd_growth = "per-ack"`.
    pub ack_bytes_growth: bool,
    /// Linux 3.x's growth rules (`cwnd_growth = "linux-3"` or `"linux-3.19"`), see
    /// [`Linux3Growth`]; `None` for Linux 6.18 (and ns-3).
    pub linux3: Linux3Growth,
    /// With `ack_bytes_growth`: the bytes of growth since the last whole segment, valid while
    /// cwnd is still [`CcState::ack_credit_cwnd_pkts`] (any other change of cwnd, a reduction
    /// or a slow-start step, drops it).
    pub ack_credit_bytes: u32,
    pub ack_credit_cwnd_pkts: u32,
    /// Upper bound of cwnd (`snd_cwnd_clamp`).
    pub cwnd_clamp_pkts: u32,
    /// cwnd and ssthresh before the last reduction, for undo (`prior_cwnd`, `prior_ssthresh`;
    /// which ssthresh is saved: the sender's `prior_ssthresh`,
    /// [`crate::tcp::config::PriorSsthresh`]).
    pub prior_cwnd_pkts: u32,
    pub prior_ssthresh_pkts: u32,
    /// The sender's `undo_cwnd`: what [`CongestionControl::undo_cwnd`] restores for an
    /// algorithm without its own (see [`CcState::fallback_undo_cwnd`]).
    pub undo_cwnd_rule: UndoCwnd,
    /// Initial window, packets.
    pub initial_cwnd_pkts: u32,
    /// Sender MSS, bytes.
    pub mss_bytes: u32,
    /// Current time.
    pub now_ns: u64,
    /// Smoothed RTT (0 before the first sample).
    pub srtt_ns: u64,
    /// Minimum RTT seen over the connection's life (u64::MAX before the first sample).
    pub min_rtt_ns: u64,
    /// Latest RTT sample.
    pub last_rtt_ns: u64,
    /// Current retransmission timeout (with backoff).
    pub rto_ns: u64,
    /// Packets in flight (sent, not cumulatively acknowledged).
    pub in_flight_pkts: u32,
    /// RFC 6675 pipe when the last ACK arrived (before it was processed): what the sender
    /// compares with cwnd (Linux `tcp_packets_in_flight`, ns-3 `BytesInFlight`). Set before
    /// [`CongestionControl::ssthresh`] is called.
    pub pipe_pkts: u32,
    /// Total bytes cumulatively acknowledged (Linux `delivered`, in bytes).
    pub delivered_bytes: u64,
    /// Time of the last transmission of new data (`lsndtime`).
    pub last_send_ns: u64,
    /// Congestion-avoidance state.
    pub ca_state: CaState,
    /// Linux `tp->is_cwnd_limited`: the current window was fully used.
    pub is_cwnd_limited: bool,
    /// Which kernel's `tcp_is_cwnd_limited` [`CcState::is_cwnd_limited`] is (`cwnd_limited`,
    /// tcp/config.rs).
    pub cwnd_limited_rule: CwndLimited,
    /// Linux `tp->max_packets_out`: most packets in flight in the current window.
    pub max_packets_out: u32,
    /// Pacing rate the sender honours (None: no pacing). Algorithms or sender options set it.
    pub pacing_rate_bps: Option<u64>,
    /// Oldest unacknowledged stream offset (Linux `snd_una`, as a 64-bit offset that never wraps).
    pub snd_una_bytes: u64,
    /// Next stream offset to send (Linux `snd_nxt`).
    pub snd_nxt_bytes: u64,
    /// Packets delivered (cumulatively acked or SACKed) over the connection (`tp->delivered`).
    pub delivered_pkts: u64,
    /// Packets marked lost over the connection (`tp->lost`).
    pub lost_pkts: u64,
    /// Time of the last `delivered_pkts` update (`tp->delivered_mstamp`).
    pub delivered_ns: u64,
    /// The sender is application-limited: it ran out of data with cwnd not full
    /// (`tp->app_limited != 0`).
    pub app_limited: bool,
}

impl CcState {
    pub fn new(initial_cwnd_pkts: u32, mss_bytes: u32) -> Self {
        CcState {
            cwnd_pkts: initial_cwnd_pkts,
            ssthresh_pkts: TCP_INFINITE_SSTHRESH,
            cwnd_cnt: 0,
            ack_bytes_growth: false,
            linux3: Linux3Growth::None,
            ack_credit_bytes: 0,
            ack_credit_cwnd_pkts: 0,
            cwnd_clamp_pkts: u32::MAX / 2,
            prior_cwnd_pkts: initial_cwnd_pkts,
            prior_ssthresh_pkts: 0,
            undo_cwnd_rule: UndoCwnd::Linux,
            initial_cwnd_pkts,
            mss_bytes,
            now_ns: 0,
            srtt_ns: 0,
            min_rtt_ns: u64::MAX,
            last_rtt_ns: 0,
            rto_ns: 0,
            in_flight_pkts: 0,
            pipe_pkts: 0,
            delivered_bytes: 0,
            last_send_ns: 0,
            ca_state: CaState::Open,
            is_cwnd_limited: false,
            cwnd_limited_rule: CwndLimited::Linux,
            max_packets_out: 0,
            pacing_rate_bps: None,
            snd_una_bytes: 0,
            snd_nxt_bytes: 0,
            delivered_pkts: 0,
            lost_pkts: 0,
            delivered_ns: 0,
            app_limited: false,
        }
    }

    /// The bytes cwnd holds beyond its whole segments (ns-3's byte-granular cwnd, with
    /// [`CcState::ack_bytes_growth`]), below one MSS (`cong_avoid_ai` keeps the remainder);
    /// 0 otherwise.
    #[inline]
    pub fn window_credit_bytes(&self) -> u32 {
        if self.ack_bytes_growth && self.ack_credit_cwnd_pkts == self.cwnd_pkts {
            self.ack_credit_bytes
        } else {
            0
        }
    }

    /// Linux `tcp_current_ssthresh` (include/net/tcp.h, the same in 3.19 and 6.18): in a
    /// reduction state (`tcp_in_cwnd_reduction`: CWR or Recovery) ssthresh, otherwise
    /// max(ssthresh, ¾·cwnd), "half-way to cwnd".
    #[inline]
    pub fn current_ssthresh(&self) -> u32 {
        if matches!(self.ca_state, CaState::Cwr | CaState::Recovery) {
            self.ssthresh_pkts
        } else {
            self.ssthresh_pkts
                .max((self.cwnd_pkts >> 1) + (self.cwnd_pkts >> 2))
        }
    }

    /// The cwnd an undo restores for an algorithm without an `undo_cwnd` of its own, by
    /// [`CcState::undo_cwnd_rule`]: Linux 6.18's `tcp_reno_undo_cwnd` (net/ipv4/tcp_cong.c),
    /// max(cwnd, `prior_cwnd`), or Linux 3.19's fallback in `tcp_undo_cwnd_reduction`
    /// (net/ipv4/tcp_input.c), `max(tp->snd_cwnd, tp->snd_ssthresh << 1)`, with ssthresh still
    /// the reduced one (the undo restores it afterwards).
    #[inline]
    pub fn fallback_undo_cwnd(&self) -> u32 {
        match self.undo_cwnd_rule {
            UndoCwnd::Linux => self.cwnd_pkts.max(self.prior_cwnd_pkts),
            UndoCwnd::Linux319 => self.cwnd_pkts.max(self.ssthresh_pkts.saturating_mul(2)),
        }
    }

    /// A `TxStart` ends an OFF period longer than the RTO: nothing outstanding (where Linux's
    /// restart after idle acts, `tcp_slow_start_after_idle_check`: `packets_out == 0`; not the
    /// event Linux also raises for an RTO's retransmission) and the last transmission more than
    /// an RTO ago. TcpHas's Algorithm 5 and Trickle's level update run on it.
    pub fn off_period_longer_than_rto(&self) -> bool {
        self.last_send_ns > 0
            && self.in_flight_pkts == 0
            && self.now_ns.saturating_sub(self.last_send_ns) > self.rto_ns
    }

    /// Linux `tcp_in_slow_start`.
    #[inline]
    pub fn in_slow_start(&self) -> bool {
        self.cwnd_pkts < self.ssthresh_pkts
    }

    /// Linux `tcp_is_cwnd_limited` (include/net/tcp.h, since Linux 5.18): growing is allowed if
    /// the window was fully used in the last window of data (`is_cwnd_limited`), or, in slow
    /// start, while cwnd is below twice the packets actually used. With
    /// [`CwndLimited::Linux319`], the 3.16-3.19 form: in slow start, `snd_cwnd <= snd_ssthresh`,
    /// only `snd_cwnd < 2 * max_packets_out` counts, the flag only outside it.
    #[inline]
    pub fn is_cwnd_limited(&self) -> bool {
        if self.cwnd_limited_rule == CwndLimited::Linux319 {
            if self.cwnd_pkts <= self.ssthresh_pkts {
                return self.cwnd_pkts < 2 * self.max_packets_out;
            }
            return self.is_cwnd_limited;
        }
        if self.is_cwnd_limited {
            return true;
        }
        self.in_slow_start() && self.cwnd_pkts < 2 * self.max_packets_out
    }

    /// Whether the algorithms' growth is in slow start: Linux `tcp_in_slow_start` (cwnd <
    /// ssthresh, Linux 6.18), or with [`CcState::linux3`] the test the 3.x algorithms made
    /// themselves, `snd_cwnd <= snd_ssthresh` (3.13-3.19 `tcp_reno_cong_avoid`,
    /// `bictcp_cong_avoid`, `tcp_illinois_cong_avoid`, `tcp_yeah_cong_avoid`).
    #[inline]
    pub fn growth_in_slow_start(&self) -> bool {
        if self.linux3 == Linux3Growth::None {
            self.cwnd_pkts < self.ssthresh_pkts
        } else {
            self.cwnd_pkts <= self.ssthresh_pkts
        }
    }

    /// Linux `tcp_slow_start`: cwnd grows by the packets acked, up to ssthresh; returns the
    /// acked packets left over for congestion avoidance. With [`CcState::linux3`], up to
    /// ssthresh + 1 (3.13-3.19: `if (cwnd > tp->snd_ssthresh) cwnd = tp->snd_ssthresh + 1`).
    pub fn slow_start(&mut self, acked_pkts: u32) -> u32 {
        let cap = if self.linux3 == Linux3Growth::None {
            self.ssthresh_pkts
        } else {
            self.ssthresh_pkts.saturating_add(1)
        };
        let cwnd = (self.cwnd_pkts.saturating_add(acked_pkts)).min(cap);
        let used = cwnd - self.cwnd_pkts;
        self.cwnd_pkts = cwnd.min(self.cwnd_clamp_pkts);
        acked_pkts - used
    }

    /// Reno growth, the body of Linux `tcp_reno_cong_avoid` without its cwnd-limited gate:
    /// slow start up to ssthresh, then one packet per window of packets acked. With
    /// [`Linux3Growth::Before319`], slow start or the additive increase counted once per ACK
    /// ([`CcState::cong_avoid_ai_per_ack`]); with [`Linux3Growth::Linux319`], 3.19's packets
    /// with 3.x's slow-start boundary.
    pub fn reno_grow(&mut self, acked_pkts: u32) {
        let mut acked = acked_pkts;
        if self.growth_in_slow_start() {
            acked = self.slow_start(acked);
            if acked == 0 || self.linux3 == Linux3Growth::Before319 {
                return;
            }
        }
        let w = self.cwnd_pkts;
        if self.linux3 == Linux3Growth::Before319 {
            self.cong_avoid_ai_per_ack(w);
        } else {
            self.cong_avoid_ai(w, acked);
        }
    }

    /// Linux 3.13-3.18 `tcp_cong_avoid_ai(tp, w)`, one call per ACK whatever it covers: the
    /// call that finds `snd_cwnd_cnt` at `w` adds the packet and clears the count, any other
    /// adds one to the count, so a packet takes w + 1 ACKs.
    pub fn cong_avoid_ai_per_ack(&mut self, w: u32) {
        if self.cwnd_cnt >= w {
            if self.cwnd_pkts < self.cwnd_clamp_pkts {
                self.cwnd_pkts += 1;
            }
            self.cwnd_cnt = 0;
        } else {
            self.cwnd_cnt += 1;
        }
    }

    /// Linux `tcp_cong_avoid_ai`: one packet of growth per `w` packets acked (byte counting in
    /// packet units, RFC 5681 §3.1 / RFC 3465).
    ///
    /// With [`CcState::ack_bytes_growth`] the credit is in bytes, as ns-3 keeps cwnd: each of
    /// the `acked_pkts` calls adds max(1, ⌊MSS² / (w·MSS + credit)⌋) bytes, ns-3's
    /// `TcpNewReno::CongestionAvoidance` adder (src/internet/model/tcp-congestion-ops.cc, the
    /// same in ns-3.17's tcp-newreno.cc) with cwnd = w whole segments plus the credit, and
    /// every MSS of credit is a packet. The adder's truncation makes this slower than one
    /// packet per w ACKs: about ⌈MSS/⌊MSS/w⌋⌉ ACKs per packet, 104 at w = 100 with a
    /// 1448-byte MSS.
    pub fn cong_avoid_ai(&mut self, w: u32, acked_pkts: u32) {
        let w = w.max(1);
        if self.ack_bytes_growth {
            let mss = self.mss_bytes.max(1) as u64;
            let mut credit = self.window_credit_bytes() as u64;
            for _ in 0..acked_pkts {
                let adder = (mss * mss / (w as u64 * mss + credit)).max(1);
                credit += adder;
                self.cwnd_pkts = self.cwnd_pkts.saturating_add((credit / mss) as u32);
                credit %= mss;
            }
            self.cwnd_pkts = self.cwnd_pkts.min(self.cwnd_clamp_pkts);
            self.cwnd_cnt = 0;
            self.ack_credit_bytes = credit as u32;
            self.ack_credit_cwnd_pkts = self.cwnd_pkts;
            return;
        }
        if self.cwnd_cnt >= w {
            self.cwnd_cnt = 0;
            self.cwnd_pkts += 1;
        }
        self.cwnd_cnt += acked_pkts;
        if self.cwnd_cnt >= w {
            let delta = self.cwnd_cnt / w;
            self.cwnd_cnt -= delta * w;
            self.cwnd_pkts += delta;
        }
        self.cwnd_pkts = self.cwnd_pkts.min(self.cwnd_clamp_pkts);
    }
}

/// Linux `TCP_INFINITE_SSTHRESH`.
pub const TCP_INFINITE_SSTHRESH: u32 = 0x7fff_ffff;

/// A congestion-control algorithm. Hooks other than `ssthresh` and `cong_avoid` have defaults
/// that do nothing, as an unset function pointer does in `tcp_congestion_ops`.
pub trait CongestionControl: Send {
    /// The algorithm's name as in scenarios (`"newreno"`).
    fn name(&self) -> &'static str;
    /// Called once when the connection is created.
    fn init(&mut self, _tp: &mut CcState) {}
    /// The new ssthresh after a loss (fast retransmit or RTO), in packets.
    fn ssthresh(&mut self, tp: &CcState) -> u32;
    /// Grow cwnd on an ACK of new data in the Open / Disorder states (with `growth_count =
    /// "linux-3.19"`, an ACK that removes data outside Recovery, Loss included).
    fn cong_avoid(&mut self, tp: &mut CcState, acked_pkts: u32);
    /// The congestion state changes to `new_state` (tp.ca_state still holds the old one).
    fn set_state(&mut self, _tp: &mut CcState, _new_state: CaState) {}
    fn cwnd_event(&mut self, _tp: &mut CcState, _event: CaEvent) {}
    /// Every ACK of new data, with the RTT sample when there is one; with the sender's
    /// `ca_sample = "linux"`, every ACK that finds data outstanding, also one that acknowledges
    /// no packet; with `ca_sample = "ns3"`, where ns-3.37 calls `PktsAcked`, with ns-3's count
    /// and the smoothed RTT; with `ca_sample = "linux-3.19"`, every ACK whose cumulative ACK
    /// removes a segment, with 3.19's sample (see [`crate::tcp::config::CaSample`]).
    fn pkts_acked(&mut self, _tp: &mut CcState, _sample: &AckSample) {}
    /// Every ACK Linux's `tcp_ack` processes, with `CA_ACK_*` flags (Linux `in_ack_event`):
    /// an ACK that is not older than snd_una, of new data or duplicate, with data outstanding
    /// or not, except a data segment that acknowledges nothing new (see
    /// [`Self::in_data_segment`]). Called where Linux 6.15 and later call it (`tcp_ack`): after
    /// the SACK blocks are read and `tcp_clean_rtx_queue` (`pkts_acked`), with `snd_una_bytes`
    /// updated, and before the tail-loss probe's ACK, loss detection and the state machine
    /// (`tcp_fastretrans_alert`: `ssthresh`, `set_state`) and `cong_avoid` / `cong_control`;
    /// so an estimate the algorithm updates here is current when it sets ssthresh on this ACK.
    fn in_ack_event(&mut self, _tp: &mut CcState, _flags: u32) {}
    /// Not a Linux hook: a data segment from the peer that acknowledges nothing new, e.g. a
    /// client's next request. Linux's header-predicted fast path (`tcp_rcv_established`)
    /// queues such a segment without calling `tcp_ack`, so `in_ack_event` does not see it;
    /// ns-3.17's `ReceivedAck` does see it (a TIBET reading of the TcpHas paper reads it).
    fn in_data_segment(&mut self, _tp: &mut CcState) {}
    /// Whether the algorithm controls cwnd and pacing itself on every ACK (Linux: a non-null
    /// `cong_control`, as BBR). The sender then calls [`Self::cong_control`] after its own loss
    /// recovery step and never calls [`Self::cong_avoid`]. A property of the algorithm: the
    /// sender reads it once, when the algorithm is installed.
    fn has_cong_control(&self) -> bool {
        false
    }
    /// Sets cwnd (and `pacing_rate_bps`) from a delivery-rate sample; called on every ACK when
    /// [`Self::has_cong_control`].
    fn cong_control(&mut self, _tp: &mut CcState, _rs: &RateSample) {}
    /// cwnd to restore when the last reduction proved spurious. The default is what the kernel
    /// gives an algorithm without an `undo_cwnd` of its own ([`CcState::fallback_undo_cwnd`]:
    /// Linux 6.18's `tcp_reno_undo_cwnd`, or 3.19's fallback with the sender's `undo_cwnd =
    /// "linux-3.19"`).
    fn undo_cwnd(&mut self, tp: &CcState) -> u32 {
        tp.fallback_undo_cwnd()
    }
    /// Per-connection data passed down by the application (see [`AppData`]).
    fn set_app_data(&mut self, _tp: &mut CcState, _data: &AppData) {}
}

/// A congestion control's registration (quinn-proto's `ControllerFactory`; Linux's
/// `tcp_register_congestion_control`): its config (name, aliases, source, range check: see
/// [`Algorithm`]) builds its instance. Implemented by each algorithm's config type, in the
/// algorithm's own file.
pub trait CcAlgorithm: Algorithm {
    /// A fresh instance for one connection; `rng` is the connection's own random stream
    /// (BBR draws its first gain-cycle phase from it, as Linux does).
    fn build(config: &Self::Config, rng: Stream) -> Box<dyn CongestionControl>;
}

registry! {
    /// The `[flow.cc]` table of a scenario: the algorithm and its parameters.
    ///
    /// A new algorithm is a file in this folder implementing [`CcAlgorithm`] for its config,
    /// and a line here (which also declares the file's module).
    pub enum CcConfig: CcAlgorithm, visit CcVisit, what "congestion control" {
        mod newreno { NewReno(NewRenoConfig) }
        mod cubic { Cubic(CubicConfig) }
        mod westwood { WestwoodPlus(WestwoodConfig) }
        mod tibet { Tibet(TibetConfig) }
        mod yeah { Yeah(YeahConfig) }
        mod illinois { Illinois(IllinoisConfig) }
        mod bbr { Bbr(BbrConfig) }
        mod tcphas { TcpHas(TcpHasConfig) }
        mod trickle { Trickle(TrickleConfig) }
    }
}

impl Default for CcConfig {
    fn default() -> Self {
        CcConfig::NewReno(Default::default())
    }
}

/// One entry of [`CcConfig::catalog`].
pub type CcInfo = crate::sim::registry::AlgorithmInfo;

impl CcConfig {
    /// A fresh instance of the configured algorithm, for a connection whose random draws (BBR's
    /// gain-cycle phase) come from the stream `Stream::new(seed, stream_name)`.
    pub fn build_seeded(&self, seed: u64, stream_name: &str) -> Box<dyn CongestionControl> {
        struct Build<'a>(u64, &'a str);
        impl CcVisit for Build<'_> {
            type Out = Box<dyn CongestionControl>;
            fn visit<A: CcAlgorithm>(self, config: &A::Config) -> Self::Out {
                A::build(config, Stream::new(self.0, self.1))
            }
        }
        self.visit(Build(seed, stream_name))
    }

    /// A fresh instance of the configured algorithm (random draws from seed 0, stream "cc").
    pub fn build(&self) -> Box<dyn CongestionControl> {
        self.build_seeded(0, "cc")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An OFF period for TcpHas and Trickle: the last transmission more than an RTO ago *and*
    /// nothing outstanding; the same idle with the window still outstanding (an RTO's
    /// retransmission, which Linux's `tcp_event_data_sent` also signals) is not one, nor a
    /// short idle, nor the connection's first transmission.
    #[test]
    fn an_off_period_needs_nothing_outstanding_and_an_idle_longer_than_the_rto() {
        const MS: u64 = 1_000_000;
        let mut tp = CcState::new(10, 1448);
        tp.rto_ns = 300 * MS;
        tp.now_ns = 5_000 * MS;
        assert!(!tp.off_period_longer_than_rto(), "nothing sent yet");
        tp.last_send_ns = 4_000 * MS;
        assert!(tp.off_period_longer_than_rto());
        tp.in_flight_pkts = 3;
        assert!(!tp.off_period_longer_than_rto(), "segments outstanding");
        tp.in_flight_pkts = 0;
        tp.last_send_ns = 4_800 * MS;
        assert!(
            !tp.off_period_longer_than_rto(),
            "idle shorter than the RTO"
        );
    }

    /// Linux 5.18+ `tcp_is_cwnd_limited`: the flag first, then slow start's 2 × max_packets_out.
    /// A window fully used (flag set) allows growth in slow start even once cwnd has grown past
    /// twice the packets out (cwnd 40, 16 out); unused, slow start still grows below twice what
    /// was used, congestion avoidance does not.
    #[test]
    fn cwnd_limited_takes_the_flag_first_then_slow_starts_rule() {
        let mut tp = CcState::new(10, 1448);
        tp.ssthresh_pkts = 1000;
        for (flag, cwnd, out, ss_thresh, want) in [
            (true, 40, 16, 1000, true),
            (false, 40, 16, 1000, false),
            (false, 30, 16, 1000, true),
            (false, 30, 16, 20, false),
            (true, 30, 16, 20, true),
        ] {
            tp.is_cwnd_limited = flag;
            tp.cwnd_pkts = cwnd;
            tp.max_packets_out = out;
            tp.ssthresh_pkts = ss_thresh;
            assert_eq!(
                tp.is_cwnd_limited(),
                want,
                "flag {flag} cwnd {cwnd} out {out}"
            );
        }
    }

    /// Linux 3.16-3.19 `tcp_is_cwnd_limited` (`cwnd_limited = "linux-3.19"`): in slow start,
    /// `snd_cwnd <= snd_ssthresh` (cwnd == ssthresh included), only cwnd < 2 × max_packets_out
    /// counts and the flag is ignored; above ssthresh, the flag. Each row where the rules part
    /// is checked against the 5.18 rule too: a set flag no longer lets slow start grow past
    /// twice the flight, and at cwnd == ssthresh 3.19 still applies slow start's test.
    #[test]
    fn linux_3_19_cwnd_limited_ignores_the_flag_in_slow_start_up_to_ssthresh() {
        let mut tp = CcState::new(10, 1448);
        for (flag, cwnd, out, ss_thresh, want_319, want_518) in [
            (true, 40, 16, 1000, false, true),
            (false, 40, 16, 1000, false, false),
            (false, 30, 16, 1000, true, true),
            (false, 20, 16, 20, true, false),
            (true, 20, 8, 20, false, true),
            (true, 30, 16, 20, true, true),
            (false, 30, 16, 20, false, false),
        ] {
            tp.is_cwnd_limited = flag;
            tp.cwnd_pkts = cwnd;
            tp.max_packets_out = out;
            tp.ssthresh_pkts = ss_thresh;
            for (rule, want) in [
                (CwndLimited::Linux319, want_319),
                (CwndLimited::Linux, want_518),
            ] {
                tp.cwnd_limited_rule = rule;
                assert_eq!(
                    tp.is_cwnd_limited(),
                    want,
                    "{rule:?}: flag {flag} cwnd {cwnd} out {out} ssthresh {ss_thresh}"
                );
            }
        }
    }

    #[test]
    fn every_name_builds_its_algorithm_and_round_trips_through_serde() {
        for &name in CcConfig::NAMES {
            let cfg = CcConfig::by_name(name).expect("known name");
            assert_eq!(cfg.name(), name);
            assert_eq!(cfg.build().name(), name);
            assert!(cfg.check().is_ok(), "{name}: defaults are in range");
            let json = serde_json::to_value(&cfg).unwrap();
            assert_eq!(json["algorithm"], name);
            let back: CcConfig = serde_json::from_value(json.clone()).unwrap();
            assert_eq!(back, cfg);
            // the scenario parser's path: the parameters without the tag
            let mut params = json;
            params.as_object_mut().unwrap().remove("algorithm");
            assert_eq!(CcConfig::with_params(name, params).unwrap(), cfg, "{name}");
        }
        assert_eq!(CcConfig::by_name("westwood").unwrap().name(), "westwood+");
        assert!(CcConfig::by_name("vegas").is_none());
    }

    #[test]
    fn catalog_lists_every_algorithm_with_source_and_defaults() {
        let cat = CcConfig::catalog();
        let names: Vec<&str> = cat.iter().map(|c| c.name).collect();
        assert_eq!(names, CcConfig::NAMES);
        for c in &cat {
            assert!(!c.source.is_empty());
            assert!(c.defaults.is_object() && c.defaults.get("algorithm").is_none());
        }
        let cubic = cat.iter().find(|c| c.name == "cubic").unwrap();
        assert_eq!(cubic.defaults["beta"], 717.0 / 1024.0);
    }

    #[test]
    fn slow_start_stops_at_ssthresh_and_returns_the_rest() {
        let mut tp = CcState::new(10, 1448);
        tp.ssthresh_pkts = 12;
        assert_eq!(tp.slow_start(5), 3);
        assert_eq!(tp.cwnd_pkts, 12);
    }

    #[test]
    fn additive_increase_is_one_packet_per_window_acked() {
        let mut tp = CcState::new(20, 1448);
        for _ in 0..19 {
            tp.cong_avoid_ai(20, 1);
        }
        assert_eq!(tp.cwnd_pkts, 20);
        tp.cong_avoid_ai(20, 1);
        assert_eq!(tp.cwnd_pkts, 21);
        // a stretch ACK of 45 packets at w = 21 gives two increments and keeps the remainder
        tp.cong_avoid_ai(21, 45);
        assert_eq!(tp.cwnd_pkts, 23);
        assert_eq!(tp.cwnd_cnt, 3);
    }

    /// Linux 3.13-3.18 (`cwnd_growth = "linux-3"`): `tcp_reno_cong_avoid` ran either
    /// `tcp_slow_start(tp, acked)` (while cwnd ≤ ssthresh, up to ssthresh + 1) or
    /// `tcp_cong_avoid_ai(tp, snd_cwnd)`, the latter adding one to `snd_cwnd_cnt` per call and
    /// the packet on the call after the count reached w; so a window of two-packet (delayed)
    /// ACKs grows cwnd by about half a packet, and the ACK that crosses ssthresh carries
    /// nothing over.
    #[test]
    fn linux_3_13_to_3_18_reno_increases_once_per_window_of_acks_and_one() {
        let mut tp = CcState::new(10, 1448);
        tp.linux3 = Linux3Growth::Before319;
        tp.ssthresh_pkts = 12;
        tp.reno_grow(5);
        assert_eq!(
            (tp.cwnd_pkts, tp.cwnd_cnt),
            (13, 0),
            "ssthresh + 1, no leftover"
        );
        tp.ssthresh_pkts = 10;
        tp.cwnd_pkts = 20;
        for _ in 0..20 {
            tp.reno_grow(2); // two windows of 20 packets in delayed ACKs
        }
        assert_eq!(
            (tp.cwnd_pkts, tp.cwnd_cnt),
            (20, 20),
            "w ACKs fill the count"
        );
        tp.reno_grow(2);
        assert_eq!(
            (tp.cwnd_pkts, tp.cwnd_cnt),
            (21, 0),
            "the next one adds the packet"
        );
        // Linux 6.18: packets, and slow start stops at ssthresh with the leftover handed on
        let mut now = CcState::new(20, 1448);
        now.ssthresh_pkts = 10;
        for _ in 0..10 {
            now.reno_grow(2);
        }
        assert_eq!(now.cwnd_pkts, 21);
        let mut ss = CcState::new(10, 1448);
        ss.ssthresh_pkts = 12;
        ss.reno_grow(5);
        assert_eq!((ss.cwnd_pkts, ss.cwnd_cnt), (12, 3));
    }

    /// Linux 3.19 (`cwnd_growth = "linux-3.19"`): the 3.19 tree's `tcp_reno_cong_avoid` counts
    /// packets and hands slow start's leftover on (`acked = tcp_slow_start(tp, acked); if
    /// (!acked) return; tcp_cong_avoid_ai(tp, tp->snd_cwnd, acked)`), with 3.x's boundary: at
    /// cwnd = ssthresh (as after a recovery) it is still slow start, and the first ACK adds
    /// a packet at once.
    #[test]
    fn linux_3_19_reno_counts_packets_but_slow_start_reaches_ssthresh_plus_one() {
        let mut tp = CcState::new(10, 1448);
        tp.linux3 = Linux3Growth::Linux319;
        tp.ssthresh_pkts = 12;
        tp.reno_grow(5);
        assert_eq!(
            (tp.cwnd_pkts, tp.cwnd_cnt),
            (13, 2),
            "ssthresh + 1, leftover 2"
        );
        // after a reduction to ssthresh, one ACK of two packets
        let (mut old, mut now) = (CcState::new(20, 1448), CcState::new(20, 1448));
        old.linux3 = Linux3Growth::Linux319;
        for tp in [&mut old, &mut now] {
            tp.ssthresh_pkts = 20;
            tp.reno_grow(2);
        }
        assert_eq!((old.cwnd_pkts, old.cwnd_cnt), (21, 1));
        assert_eq!((now.cwnd_pkts, now.cwnd_cnt), (20, 2));
        assert!(
            !old.growth_in_slow_start(),
            "above ssthresh: congestion avoidance"
        );
    }

    /// With `ack_bytes_growth`, congestion avoidance follows ns-3's byte cwnd ACK by ACK:
    /// `TcpNewReno::CongestionAvoidance` adds max(1, ⌊MSS²/cwnd⌋) bytes per ACK
    /// (tcp-congestion-ops.cc), computed here on a byte cwnd independently. From 60 to 140
    /// packets the whole segments plus the credit equal ns-3's cwnd after every ACK, and the
    /// truncation makes a window of 100 take 104 ACKs instead of Linux's 100.
    #[test]
    fn per_ack_byte_growth_follows_ns3_byte_cwnd() {
        let mss: u64 = 1448;
        let mut tp = CcState::new(60, mss as u32);
        tp.ssthresh_pkts = 30;
        tp.ack_bytes_growth = true;
        let mut ns3_cwnd = 60 * mss;
        let mut acks_from_100 = None;
        let mut acks = 0u32;
        let mut checked_101 = false;
        while tp.cwnd_pkts < 140 {
            tp.reno_grow(1);
            ns3_cwnd += (mss * mss / ns3_cwnd).max(1);
            acks += 1;
            let ours = tp.cwnd_pkts as u64 * mss + tp.window_credit_bytes() as u64;
            assert_eq!(ours, ns3_cwnd, "after {acks} ACKs");
            if tp.cwnd_pkts == 100 && acks_from_100.is_none() {
                acks_from_100 = Some(acks);
            }
            if tp.cwnd_pkts == 101 && !checked_101 {
                let start = acks_from_100.expect("passed 100");
                assert_eq!(
                    acks - start,
                    104,
                    "1448 / ⌊1448/100⌋ = 103.4 ACKs per packet"
                );
                checked_101 = true;
            }
        }
        assert!(checked_101);
        // any other change of cwnd (a reduction) drops the credit
        tp.cwnd_pkts = 70;
        assert_eq!(tp.window_credit_bytes(), 0);
    }
}
