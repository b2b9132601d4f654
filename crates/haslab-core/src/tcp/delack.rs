//! Linux's delayed-ACK engine (`[flow.tcp] delayed_ack = "linux"`, or `"linux-3"` below): when
//! a Linux 6.18 receiver acknowledges in-order data at once and when it waits, and for how
//! long. The state is the kernel's `icsk_ack` (include/net/inet_connection_sock.h); every rule,
//! with its source (all net/ipv4/ unless named):
//!
//! - **Quick-ACK credit** (`quick`): while it is positive and the connection is not
//!   interactive, every data segment is acknowledged at once (`tcp_in_quickack_mode`,
//!   `__tcp_ack_snd_check`, tcp_input.c). `tcp_incr_quickack(max)` raises it to
//!   min(`rcv_wnd` / (2 × `rcv_mss`) (2 if that is 0), `max`) when that is more; it is called
//!   with `TCP_MAX_QUICKACKS` = 16 for the first data segment of the connection and for one
//!   that arrives more than an RTO after the previous one (`tcp_event_data_recv`), and through
//!   `tcp_enter_quickack_mode` for data received again (a duplicate segment,
//!   `tcp_data_queue`), which also leaves interactive mode and resets `ato`. Every segment
//!   that grows the receive window (`rcv_ssthresh`, `tcp_grow_window`) sets `quick |= 1`: a
//!   receiver whose window is still opening acknowledges every segment. Each segment sent
//!   with an ACK while an ACK is owed uses one credit (`tcp_dec_quickack_mode`, tcp_output.c's
//!   `tcp_event_ack_sent`); the last one resets `ato`.
//! - **Two segments**: more than one `rcv_mss` acknowledged by no ACK yet (`rcv_nxt −
//!   rcv_wup`), and a window at least as large as the last one offered to advertise
//!   (`__tcp_select_window(sk) >= tp->rcv_wnd`; always true with a fixed window), send an ACK
//!   at once (`__tcp_ack_snd_check`). `rcv_mss` is the peer's segment size as measured: first
//!   min(MSS, 536), then the largest in-order segment, at most the MSS
//!   (`tcp_initialize_rcv_mss`, `tcp_measure_rcv_mss`).
//! - **Interactive (ping-pong) mode**: a data segment sent less than `ato` after the last data
//!   received enters it (`tcp_event_data_sent`, tcp_output.c, with `tcp_pingpong_thresh` = 1,
//!   the default); it turns the quick-ACK credit off. The delayed-ACK timer firing in it leaves
//!   it and resets `ato`; firing outside it doubles `ato`, up to the RTO
//!   (`tcp_delack_timer_handler`, tcp_timer.c).
//! - **`ato`**, the delayed-ACK timeout (`tcp_event_data_recv`): `TCP_ATO_MIN` (40 ms, the
//!   option `delayed_ack_timeout`) at the first data; then, with m the time since the last data
//!   segment in whole jiffies (ms): m ≤ `TCP_ATO_MIN`/2 → ato/2 + `TCP_ATO_MIN`/2; m < ato →
//!   ato/2 + m, at most the RTO. The timer is armed for min(ato, max_ato) when ato exceeds
//!   `TCP_DELACK_MIN` (= `TCP_ATO_MIN`), max_ato being 500 ms (`HZ/2`), 200 ms
//!   (`TCP_DELACK_MAX`) in interactive mode, and at most SRTT (not below `TCP_DELACK_MIN`)
//!   once the endpoint has one; never beyond `TCP_DELACK_MAX` (`icsk_delack_max`). A timer
//!   already armed keeps the earlier deadline, and an ACK is sent at once instead when that
//!   deadline is within ato/4 (`tcp_send_delayed_ack`, tcp_output.c).
//!
//! **Linux 3.x** (`delayed_ack = "linux-3"`, the receivers of Linux 3.19, e.g. Ubuntu 15.04)
//! follows the same rules but two, which changed later:
//! - every segment sent with the ACK flag uses a quick-ACK credit, an ACK owed or not, data
//!   segments (a request) included: 3.19's `tcp_transmit_skb` calls `tcp_event_ack_sent(sk,
//!   tcp_skb_pcount(skb))` for each (one per segment here, no TSO). Linux 6.6 ("tcp: fix
//!   quick-ack counting to count actual ACKs of new data") counts only an ACK sent while one is
//!   owed (`inet_csk_ack_scheduled`), the rule above;
//! - the timeout is min(ato, max_ato) with max_ato = 500 ms (`HZ/2`) outside interactive mode:
//!   the cap `icsk_delack_max` (= `TCP_DELACK_MAX`, 200 ms) came with Linux 5.10.
//!
//! Out-of-order data and the segment that fills a hole are acknowledged at once, as in the
//! other modes (`__tcp_ack_snd_check` with out-of-order data queued, `ICSK_ACK_NOW`).
//! Not modelled: SACK compression (`tcp_comp_sack_nr` = 44: after three immediate duplicate
//! ACKs, Linux delays further SACKs by min(1 ms, RTT/20)), `ICSK_ACK_PUSHED` (sub-MSS segments
//! sent with PSH, which acknowledge the read that empties the buffer), the ACK a read sends
//! when it doubles the window (`__tcp_cleanup_rbuf`; the simulated application reads at once,
//! so the window never needs it), ECN's quick-ACKs, and jiffies: times are the simulator's ns.

/// `TCP_MAX_QUICKACKS` (include/net/tcp.h).
pub const TCP_MAX_QUICKACKS: u32 = 16;
/// `TCP_DELACK_MAX` (include/net/tcp.h): HZ/5.
pub const TCP_DELACK_MAX_NS: u64 = 200_000_000;
/// `HZ/2`: the largest `ato` outside interactive mode (`tcp_send_delayed_ack`).
pub const MAX_ATO_NS: u64 = 500_000_000;
/// `TCP_MSS_DEFAULT` (include/net/tcp.h): the first estimate of the peer's MSS is at most this.
const TCP_MSS_DEFAULT: u64 = 536;
const MS: u64 = 1_000_000;

/// Which kernel's rules (module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinuxAckRules {
    /// Linux 6.18 (`delayed_ack = "linux"`)
    Linux6,
    /// Linux 3.19 (`delayed_ack = "linux-3"`)
    Linux3,
}

/// The receiver's `icsk_ack` state.
#[derive(Clone, Debug)]
pub struct LinuxDelAck {
    rules: LinuxAckRules,
    /// `TCP_ATO_MIN` = `TCP_DELACK_MIN` (the option `delayed_ack_timeout`, 40 ms in Linux)
    ato_min_ns: u64,
    /// the MSS we announced (`tp->advmss`): the ceiling of `rcv_mss`
    advmss: u64,
    /// `icsk_ack.quick`
    pub quick: u32,
    /// `inet_csk_in_pingpong_mode`
    pub pingpong: bool,
    /// `icsk_ack.ato` (0 until the first data segment)
    pub ato_ns: u64,
    /// `icsk_ack.lrcvtime`: when the last in-order data segment arrived (the handshake's end
    /// before any: `tcp_create_openreq_child`, `tcp_rcv_synsent_state_process`)
    lrcv_ns: u64,
    /// `ICSK_ACK_SCHED`: an ACK is owed for data received
    pub pending: bool,
    /// `icsk_ack.rcv_mss`
    pub rcv_mss: u64,
}

impl LinuxDelAck {
    pub fn new(rules: LinuxAckRules, mss: u64, ato_min_ns: u64) -> LinuxDelAck {
        LinuxDelAck {
            rules,
            ato_min_ns,
            advmss: mss,
            quick: 0,
            pingpong: false,
            ato_ns: 0,
            lrcv_ns: 0,
            pending: false,
            rcv_mss: mss.min(TCP_MSS_DEFAULT),
        }
    }

    /// `tcp_incr_quickack(sk, max)` with the window `rcv_wnd` we offer.
    fn incr_quickack(&mut self, rcv_wnd: u64, max: u32) {
        let mut quickacks = (rcv_wnd / (2 * self.rcv_mss.max(1))).min(u32::MAX as u64) as u32;
        if quickacks == 0 {
            quickacks = 2;
        }
        let quickacks = quickacks.min(max);
        if quickacks > self.quick {
            self.quick = quickacks;
        }
    }

    /// `tcp_enter_quickack_mode(sk, TCP_MAX_QUICKACKS)`: data received again.
    pub fn enter_quickack(&mut self, rcv_wnd: u64) {
        self.incr_quickack(rcv_wnd, TCP_MAX_QUICKACKS);
        self.pingpong = false;
        self.ato_ns = self.ato_min_ns;
        self.pending = true;
    }

    /// `tcp_event_data_recv` for an in-order segment of `len` bytes arriving at `now_ns`, the
    /// window offered being `rcv_wnd` and the endpoint's RTO `rto_ns`; `grew` tells whether
    /// the segment grew the receive window (`tcp_grow_window`). `measured_rcv_mss` is the
    /// receive buffer's estimate when Linux autotuning keeps one (`rcvbuf = "linux"`: one
    /// `icsk_ack.rcv_mss` for both); without it this engine measures its own.
    pub fn on_data(
        &mut self,
        len: u64,
        now_ns: u64,
        rcv_wnd: u64,
        rto_ns: u64,
        grew: bool,
        measured_rcv_mss: Option<u64>,
    ) {
        self.pending = true;
        match measured_rcv_mss {
            Some(m) => self.rcv_mss = m,
            // tcp_measure_rcv_mss: the estimate only grows, up to the MSS we announced
            None if len >= self.rcv_mss => self.rcv_mss = len.min(self.advmss),
            None => {}
        }
        if self.ato_ns == 0 {
            // the first data segment: initialise the delayed-ACK engine
            self.incr_quickack(rcv_wnd, TCP_MAX_QUICKACKS);
            self.ato_ns = self.ato_min_ns;
        } else {
            // in jiffies (ms), as the kernel counts; lrcvtime starts at the handshake
            let m_ns = (now_ns / MS).saturating_sub(self.lrcv_ns / MS) * MS;
            if m_ns <= self.ato_min_ns / 2 {
                self.ato_ns = self.ato_ns / 2 + self.ato_min_ns / 2;
            } else if m_ns < self.ato_ns {
                self.ato_ns = (self.ato_ns / 2 + m_ns).min(rto_ns);
            } else if m_ns > rto_ns {
                // a long gap: the sender failed to restart its window, ACK quickly
                self.incr_quickack(rcv_wnd, TCP_MAX_QUICKACKS);
            }
        }
        self.lrcv_ns = now_ns;
        if grew {
            self.quick |= 1;
        }
    }

    /// `tcp_in_quickack_mode`.
    pub fn in_quickack(&self) -> bool {
        self.quick > 0 && !self.pingpong
    }

    /// `tcp_event_ack_sent` → `tcp_dec_quickack_mode`: a segment carrying an ACK was sent.
    pub fn on_ack_sent(&mut self) {
        if self.quick > 0 {
            // Linux 6.6+: one if an ACK was owed; 3.19: the segment's tcp_skb_pcount, always 1
            let pkts = match self.rules {
                LinuxAckRules::Linux6 => self.pending as u32,
                LinuxAckRules::Linux3 => 1,
            };
            if pkts >= self.quick {
                self.quick = 0;
                // leaving quick-ACK mode deflates ato
                self.ato_ns = self.ato_min_ns;
            } else {
                self.quick -= pkts;
            }
        }
        self.pending = false;
    }

    /// `tcp_event_data_sent`: a data segment sent less than `ato` after the last data
    /// received makes the connection interactive.
    pub fn on_data_sent(&mut self, now_ns: u64) {
        if now_ns.saturating_sub(self.lrcv_ns) < self.ato_ns {
            self.pingpong = true;
        }
    }

    /// The handshake completed at `now_ns` (`icsk_ack.lrcvtime` = now).
    pub fn on_established(&mut self, now_ns: u64) {
        self.lrcv_ns = now_ns;
    }

    /// `tcp_send_delayed_ack`: the timeout to arm, with the endpoint's SRTT (0: none yet).
    pub fn timeout_ns(&self, srtt_ns: u64) -> u64 {
        let mut ato = self.ato_ns.max(self.ato_min_ns);
        if ato > self.ato_min_ns {
            let mut max_ato = if self.pingpong {
                TCP_DELACK_MAX_NS
            } else {
                MAX_ATO_NS
            };
            if srtt_ns > 0 {
                max_ato = max_ato.min(srtt_ns.max(self.ato_min_ns));
            }
            ato = ato.min(max_ato);
        }
        match self.rules {
            // icsk_delack_max (Linux 5.10+)
            LinuxAckRules::Linux6 => ato.min(TCP_DELACK_MAX_NS.max(self.ato_min_ns)),
            LinuxAckRules::Linux3 => ato,
        }
    }

    /// `tcp_delack_timer_handler`: the delayed-ACK timer fired with an ACK owed.
    pub fn on_timer(&mut self, rto_ns: u64) {
        if self.pingpong {
            self.pingpong = false;
            self.ato_ns = self.ato_min_ns;
        } else {
            self.ato_ns = (self.ato_ns << 1).min(rto_ns);
        }
    }
}

#[cfg(test)]
#[path = "delack_tests.rs"]
mod tests;
