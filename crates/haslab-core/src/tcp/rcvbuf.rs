//! Linux receive-buffer autotuning and receive-window selection (`[flow.tcp] rcvbuf = "linux"`),
//! as Linux 6.18 runs them with its defaults (`tcp_moderate_rcvbuf = 1`, `tcp_app_win = 31`,
//! `tcp_shrink_window = 0`, no SO_RCVBUF lock, no memory pressure).
//!
//! The receiver's buffer `sk_rcvbuf` is memory (bytes of `skb->truesize`); the window it can
//! offer is that memory scaled by `scaling_ratio / 256`, the payload-to-truesize ratio of the
//! received packets (`tcp_win_from_space`, include/net/tcp.h, Linux 6.6+, which replaced the
//! `tcp_adv_win_scale` sysctl: that sysctl is obsolete from 6.6 and not read here). Every rule,
//! with its source (all net/ipv4/ unless named):
//!
//! - **Initial window** (`tcp_select_initial_window`, tcp_output.c, via `tcp_connect_init` and
//!   `tcp_openreq_init_rwin`): `sk_rcvbuf = tcp_rmem[1]`; the offer is `tcp_full_space` =
//!   `tcp_rmem[1]` × `TCP_DEFAULT_SCALING_RATIO` (128) / 256, rounded down to a multiple of the
//!   MSS the SYN announces (the active opener: the advertised MSS, 1460 on a 1500-byte path; the
//!   passive opener: less the 12 bytes of timestamps when they were negotiated), so 64240 and
//!   65160 with the defaults; `rcv_ssthresh` = that offer. The window scale is
//!   `ilog2(max(offer, tcp_rmem[2])) − 15`, clamped to 0..14 (10 for 32 MiB; net.core.rmem_max,
//!   4 MiB by default, is smaller and does not change it); `window_clamp` = 65535 << scale.
//! - **At the end of the handshake** (`tcp_init_buffer_space`, tcp_input.c): `window_clamp` =
//!   min(`window_clamp`, full space), then one segment is reserved (full space − advmss when
//!   `window_clamp + advmss > full space`); `rcv_ssthresh` = min(`rcv_ssthresh`,
//!   `window_clamp`); the first `rcvq_space.space` = min(`rcv_ssthresh`, `rcv_wnd`,
//!   `TCP_INIT_CWND` (10) × advmss), advmss without the timestamp option (6.16+: "tcp: fix
//!   initial tp->rcvq_space.space value for passive TS enabled flows").
//! - **The scaling ratio is measured** (`tcp_measure_rcv_mss`, tcp_input.c): the first in-order
//!   segment at least `rcv_mss` long (initially min(advmss, 536 = `TCP_MSS_DEFAULT`)) and not
//!   equal to it sets `scaling_ratio` = len × 256 / truesize; a simulated packet has no truesize,
//!   so the measured value is the option `scaling_ratio`. When it changes, `window_clamp`
//!   follows the buffer (`tcp_set_window_clamp(tcp_win_from_space(sk_rcvbuf))`, 6.11+ "tcp:
//!   Update window clamping condition"): a smaller clamp lowers `rcv_ssthresh` to it, a larger one
//!   raises `rcv_ssthresh` to min(`rcv_wnd`, clamp); `rcvq_space.space` ≤ the clamp.
//! - **Receiver RTT** (`tcp_rcv_rtt_update`, `tcp_rcv_rtt_measure`, `tcp_rcv_rtt_measure_ts`):
//!   two sources feed one estimate (kept ×8 in µs). From timestamps: each segment of at least
//!   `rcv_mss` bytes carrying a TSecr not seen before gives now − TSecr (1 ms clock; a 0 ms
//!   sample is dropped, 6.16+ "tcp: remove zero TCP TS samples for autotuning"). From the window:
//!   the time from one in-order segment until `rcv_nxt` passes the `rcv_nxt + rcv_wnd` of that
//!   moment. A sample below the estimate replaces it; a larger one is ignored when it comes from
//!   the window and averaged in with gain 1/8 when it comes from timestamps (6.16+ "tcp: always
//!   seek for minimal rtt in tcp_rcv_rtt_update()").
//! - **Buffer growth** (`tcp_rcv_space_adjust`, `tcp_rcvbuf_grow`; 6.16+ "tcp: add receive
//!   queue awareness in tcp_rcv_space_adjust()", 6.18 "tcp: fix too slow tcp_rcvbuf_grow()
//!   action"): each time the application reads, once a receiver RTT has passed since the last
//!   measurement, `copied` = bytes read since then less those still queued; when `copied` >
//!   `rcvq_space.space` (old), the space becomes `copied` (new) and the window to provision is
//!   rcvwin = 2 × new + 2 × (2 × new × (new − old) / old) + the span of out-of-order data above
//!   `rcv_nxt`; `sk_rcvbuf` = min(`tcp_space_from_win(rcvwin)`, `tcp_rmem[2]`), never lowered,
//!   and `window_clamp` = `tcp_win_from_space(sk_rcvbuf)`. Each segment queued out of order
//!   does the same with new = old (only its span counts: `tcp_data_queue_ofo`, 6.16+ "tcp:
//!   adjust rcvbuf in presence of reorders").
//! - **Window growth** (`tcp_grow_window`, tcp_input.c): each in-order segment of at least 128
//!   bytes raises `rcv_ssthresh` by max(2 × advmss, 2 × len), up to min(`window_clamp`, free
//!   space). An out-of-order segment does so only on a SACK connection ("For non sack flows, do
//!   not grow window to force DUPACK and trigger fast retransmit", `tcp_data_queue_ofo`), so
//!   that duplicate ACKs keep an unchanged window and count as duplicates (RFC 5681 §2).
//! - **The window offered on each segment** (`__tcp_select_window`, `tcp_select_window`,
//!   tcp_output.c): free space = `tcp_space` = `tcp_win_from_space(sk_rcvbuf − memory held)`;
//!   when it is below half of min(`window_clamp`, full space) it is rounded down to the scale
//!   unit and the offer is 0 if it is below 1/16 of the full space or one `rcv_mss`; otherwise
//!   the offer is min(free space, `rcv_ssthresh`) rounded up to the scale unit. The window never
//!   shrinks (RFC 7323 §2.4, RFC 793): an offer whose right edge would fall before the last one
//!   (`rcv_wup + rcv_wnd`) keeps that edge.
//!
//! Simplifications, each stated: the application reads at once, so only out-of-order data is
//! held (what Linux's `tcp_cleanup_rbuf` would then advertise is advertised on the next
//! segment); held data costs its payload in window units (its truesize is the one the ratio was
//! measured from); no memory pressure (`tcp_rmem[0]` is not used), no pruning or collapsing of
//! the queues; `rcv_mss` only grows.

use crate::sim::units::Size;

/// `TCP_RMEM_TO_WIN_SCALE` (include/net/tcp.h): windows are memory × ratio >> 8.
pub const TCP_RMEM_TO_WIN_SCALE: u32 = 8;
/// `TCP_DEFAULT_SCALING_RATIO` (include/net/tcp.h, 6.6+): 50 % until a segment is measured.
pub const TCP_DEFAULT_SCALING_RATIO: u8 = 1 << (TCP_RMEM_TO_WIN_SCALE - 1);
/// `TCP_INIT_CWND` (include/net/tcp.h): the first `rcvq_space.space` is this many advmss.
pub const TCP_INIT_CWND: u64 = 10;
/// `TCP_MSS_DEFAULT` (include/net/tcp.h): the first guess of the peer's MSS (`rcv_mss`).
pub const TCP_MSS_DEFAULT: u64 = 536;
/// `TCP_MIN_MSS` (include/net/tcp.h): the lowest `rcv_mss`.
pub const TCP_MIN_MSS: u64 = 88;
/// `TCP_MAX_WSCALE` (include/net/tcp.h, RFC 7323 §2.3).
pub const TCP_MAX_WSCALE: u8 = 14;
/// `tcp_grow_window` is called only for segments of at least this many bytes
/// (`tcp_event_data_recv`).
pub const GROW_MIN_LEN: u64 = 128;
/// `sysctl_tcp_app_win` default: the share of the buffer kept for the application is 1/2^31.
pub const TCP_APP_WIN: u32 = 31;

/// `__tcp_win_from_space`: the window that `space` bytes of memory hold.
pub fn win_from_space(ratio: u8, space: u64) -> u64 {
    (space * ratio as u64) >> TCP_RMEM_TO_WIN_SCALE
}

/// `__tcp_space_from_win`: the memory a window of `win` bytes needs.
pub fn space_from_win(ratio: u8, win: u64) -> u64 {
    (win << TCP_RMEM_TO_WIN_SCALE) / ratio.max(1) as u64
}

/// Window scale for a buffer of at most `max_space` bytes (`tcp_select_initial_window`).
pub fn wscale_for_space(max_space: u64) -> u8 {
    let ilog2 = 63 - max_space.max(1).leading_zeros() as i64;
    (ilog2 - 15).clamp(0, TCP_MAX_WSCALE as i64) as u8
}

fn align_up(v: u64, unit: u64) -> u64 {
    v.div_ceil(unit) * unit
}

/// The receive-buffer state of one endpoint (the fields of Linux's `tcp_sock` / `sock` that
/// the rules above read and write).
#[derive(Clone, Debug)]
pub struct LinuxRcvBuf {
    rmem: [u64; 3],
    /// what `tcp_measure_rcv_mss` measures on this path (the option `scaling_ratio`)
    measured_ratio: u8,
    sack: bool,
    /// `tp->scaling_ratio`
    pub scaling_ratio: u8,
    /// `sk->sk_rcvbuf` (memory)
    pub rcvbuf: u64,
    /// `tp->window_clamp`
    pub window_clamp: u64,
    /// `tp->rcv_ssthresh`
    pub rcv_ssthresh: u64,
    /// `tp->rcv_wnd`: the last window offered, from `rcv_wup`
    pub rcv_wnd: u64,
    /// `tp->rcv_wup`: rcv_nxt when the last window was offered
    pub rcv_wup: u64,
    /// `tp->rx_opt.rcv_wscale`
    pub wscale: u8,
    /// `tp->advmss` (payload bytes, without the timestamp option)
    advmss: u64,
    /// `icsk->icsk_ack.rcv_mss`
    pub rcv_mss: u64,
    /// `tp->rcvq_space`: bytes the application read per receiver RTT, and the measurement start
    pub rcvq_space: u64,
    rcvq_seq: u64,
    rcvq_time_ns: u64,
    /// `tp->rcv_rtt_est.rtt_us` (×8, µs; 0 = no sample yet)
    pub rtt_us8: u64,
    rtt_seq: u64,
    rtt_time_ns: Option<u64>,
    /// `tp->rcv_rtt_last_tsecr`
    last_tsecr: Option<u32>,
}

impl LinuxRcvBuf {
    /// A socket with `tcp_rmem` = `rmem` (bytes); `measured_ratio` is what
    /// `tcp_measure_rcv_mss` will measure; `sack` whether the connection uses SACK (set again
    /// when the handshake decides it).
    pub fn new(rmem: [Size; 3], measured_ratio: u8, sack: bool) -> LinuxRcvBuf {
        let rmem = [rmem[0].0, rmem[1].0, rmem[2].0];
        let ratio = TCP_DEFAULT_SCALING_RATIO;
        let offer = win_from_space(ratio, rmem[1]);
        let wscale = wscale_for_space(offer.max(rmem[2]));
        LinuxRcvBuf {
            rmem,
            measured_ratio,
            sack,
            scaling_ratio: ratio,
            rcvbuf: rmem[1],
            window_clamp: 65_535u64 << wscale,
            rcv_ssthresh: 0,
            rcv_wnd: 0,
            rcv_wup: 0,
            wscale,
            advmss: 0,
            rcv_mss: TCP_MSS_DEFAULT,
            rcvq_space: 0,
            rcvq_seq: 0,
            rcvq_time_ns: 0,
            rtt_us8: 0,
            rtt_seq: 0,
            rtt_time_ns: None,
            last_tsecr: None,
        }
    }

    pub fn set_sack(&mut self, sack: bool) {
        self.sack = sack;
    }

    /// `tcp_full_space`: the window the whole buffer holds.
    pub fn full_space(&self) -> u64 {
        win_from_space(self.scaling_ratio, self.rcvbuf)
    }

    /// `tcp_space`: the window the free buffer holds, with `held` bytes queued out of order.
    pub fn free_space(&self, held: u64) -> u64 {
        self.full_space().saturating_sub(held)
    }

    /// `tcp_select_initial_window`: the window of our SYN or SYN-ACK, rounded to `syn_mss`.
    /// Computed once; a retransmitted SYN offers the same.
    pub fn initial_window(&mut self, syn_mss: u64) -> u64 {
        if self.rcv_wnd == 0 {
            let mut space = self.full_space().min(self.window_clamp);
            if space > syn_mss {
                space = space / syn_mss * syn_mss;
            }
            self.rcv_wnd = space;
            self.rcv_ssthresh = space;
        }
        self.rcv_wnd
    }

    /// `tcp_init_buffer_space` when the connection is established; `advmss` is our MSS without
    /// the timestamp option, `copied_seq` the stream offset the application has read to.
    pub fn established(&mut self, advmss: u64, now_ns: u64, copied_seq: u64, rcv_nxt: u64) {
        self.advmss = advmss;
        // tcp_initialize_rcv_mss
        self.rcv_mss = advmss
            .min(self.rcv_wnd / 2)
            .clamp(TCP_MIN_MSS, TCP_MSS_DEFAULT);
        self.rcvq_time_ns = now_ns;
        self.rcvq_seq = copied_seq;
        self.rcv_wup = rcv_nxt;
        let maxwin = self.full_space();
        if self.window_clamp >= maxwin {
            self.window_clamp = maxwin;
            if maxwin > 4 * advmss {
                self.window_clamp = (maxwin - (maxwin >> TCP_APP_WIN)).max(4 * advmss);
            }
        }
        // force the reservation of one segment
        if self.window_clamp > 2 * advmss && self.window_clamp + advmss > maxwin {
            self.window_clamp = (2 * advmss).max(maxwin.saturating_sub(advmss));
        }
        self.rcv_ssthresh = self.rcv_ssthresh.min(self.window_clamp);
        self.rcvq_space = self
            .rcv_ssthresh
            .min(self.rcv_wnd)
            .min(TCP_INIT_CWND * advmss);
    }

    /// `tcp_rcv_rtt_update`: `sample_us` from timestamps (`win_dep` false) or the window.
    fn rtt_update(&mut self, sample_us: u64, win_dep: bool) {
        let old = self.rtt_us8;
        let m = sample_us << 3;
        if old == 0 || m < old {
            self.rtt_us8 = m;
        } else if !win_dep {
            self.rtt_us8 = old - (old >> 3) + sample_us;
        }
    }

    /// `tcp_rcv_rtt_measure_ts`: a data segment of `len` bytes echoing `tsecr` (our 1 ms
    /// timestamp clock reads `now_ms`).
    pub fn on_segment_ts(&mut self, len: u64, tsecr: Option<u32>, now_ms: u32) {
        let Some(ecr) = tsecr else { return };
        if self.last_tsecr == Some(ecr) {
            return;
        }
        self.last_tsecr = Some(ecr);
        if len >= self.rcv_mss {
            let delta_ms = now_ms.wrapping_sub(ecr);
            if delta_ms > 0 && delta_ms < (i32::MAX as u32) / 1000 {
                self.rtt_update(delta_ms as u64 * 1000, false);
            }
        }
    }

    /// `tcp_set_window_clamp` with a new, nonzero clamp.
    fn set_window_clamp(&mut self, val: u64) {
        let old = self.window_clamp;
        self.window_clamp = val;
        if val < old {
            self.rcv_ssthresh = self.rcv_ssthresh.min(val);
        } else {
            self.rcv_ssthresh = self.rcv_ssthresh.max(self.rcv_wnd.min(val));
        }
    }

    /// `tcp_measure_rcv_mss` for an in-order segment of `len` bytes.
    fn measure_rcv_mss(&mut self, len: u64) {
        if len < self.rcv_mss {
            return;
        }
        if len != self.rcv_mss && self.scaling_ratio != self.measured_ratio {
            self.scaling_ratio = self.measured_ratio;
            self.set_window_clamp(self.full_space());
            if self.window_clamp < self.rcvq_space {
                self.rcvq_space = self.window_clamp;
            }
        }
        self.rcv_mss = len.min(self.advmss);
    }

    /// `tcp_rcv_rtt_measure`: the window-based receiver RTT sample.
    fn rtt_measure(&mut self, rcv_nxt: u64, now_ns: u64) {
        if let Some(t) = self.rtt_time_ns {
            if rcv_nxt < self.rtt_seq {
                return;
            }
            self.rtt_update(((now_ns - t) / 1000).max(1), true);
        }
        self.rtt_seq = rcv_nxt + self.rcv_wnd;
        self.rtt_time_ns = Some(now_ns);
    }

    /// `tcp_grow_window` for a segment of `len` bytes with `held` bytes already queued.
    /// Returns whether the window grew (Linux then sets `icsk_ack.quick |= 1`).
    fn grow_window(&mut self, len: u64, held: u64) -> bool {
        let room = self.window_clamp.min(self.free_space(held));
        if room <= self.rcv_ssthresh {
            return false;
        }
        let incr = (2 * self.advmss).max(2 * len);
        self.rcv_ssthresh += incr.min(room - self.rcv_ssthresh);
        true
    }

    /// `tcp_rcvbuf_grow(sk, newval)` with `ooo_span` bytes from rcv_nxt to the end of
    /// out-of-order data: `rcvq_space.space` goes from its value to `newval`.
    fn rcvbuf_grow(&mut self, newval: u64, ooo_span: u64) {
        let oldval = self.rcvq_space.max(1);
        self.rcvq_space = newval;
        // slow start: allow the sender to double its rate, plus twice the growth seen
        let mut rcvwin = newval << 1;
        rcvwin = rcvwin.saturating_add(
            (rcvwin.saturating_mul(newval.saturating_sub(oldval)) / oldval).saturating_mul(2),
        );
        rcvwin += ooo_span;
        let rcvbuf = space_from_win(self.scaling_ratio, rcvwin).min(self.rmem[2]);
        if rcvbuf > self.rcvbuf {
            self.rcvbuf = rcvbuf;
            self.window_clamp = win_from_space(self.scaling_ratio, rcvbuf);
        }
    }

    /// `tcp_event_data_recv` for an in-order segment of `len` bytes; `rcv_nxt` after it,
    /// `held` bytes still out of order. Returns whether the segment grew the window.
    pub fn on_data_in_order(&mut self, len: u64, rcv_nxt: u64, now_ns: u64, held: u64) -> bool {
        self.measure_rcv_mss(len);
        self.rtt_measure(rcv_nxt, now_ns);
        len >= GROW_MIN_LEN && self.grow_window(len, held)
    }

    /// `tcp_data_queue_ofo` for a segment of `len` bytes queued out of order; `held_before`
    /// bytes were held before it, `ooo_span` is the span after it.
    pub fn on_data_out_of_order(&mut self, len: u64, held_before: u64, ooo_span: u64) {
        if self.sack {
            // the quick ACK it would set changes nothing: out-of-order data is ACKed at once
            let _ = self.grow_window(len, held_before);
        }
        self.rcvbuf_grow(self.rcvq_space, ooo_span);
    }

    /// `tcp_rcv_space_adjust` when the application has read up to `copied_seq`.
    pub fn on_read(&mut self, copied_seq: u64, now_ns: u64, ooo_span: u64) {
        if self.rtt_us8 == 0 || (now_ns - self.rcvq_time_ns) / 1000 < self.rtt_us8 >> 3 {
            return;
        }
        let copied = copied_seq - self.rcvq_seq;
        if copied > self.rcvq_space {
            self.rcvbuf_grow(copied, ooo_span);
        }
        self.rcvq_seq = copied_seq;
        self.rcvq_time_ns = now_ns;
    }

    /// `__tcp_select_window`: the window the buffer allows now.
    fn raw_window(&self, held: u64) -> u64 {
        let unit = 1u64 << self.wscale;
        let allowed = self.full_space();
        let full = self.window_clamp.min(allowed);
        let mss = self.rcv_mss.min(full);
        let mut free = self.free_space(held);
        if free < full >> 1 {
            free = free / unit * unit;
            if free < allowed >> 4 || free < mss {
                return 0;
            }
        }
        let free = free.min(self.rcv_ssthresh);
        if self.wscale > 0 {
            return align_up(free, unit);
        }
        // no window scaling: a multiple of the MSS, kept when within one MSS of the free space
        let mut window = self.rcv_wnd;
        if window + mss <= free || window > free {
            window = free.checked_div(mss).map_or(free, |n| n * mss);
        } else if mss == full && free > window + (full >> 1) {
            window = free;
        }
        window
    }

    /// Whether the window that could be offered now is at least the last one
    /// (`__tcp_select_window(sk) >= tp->rcv_wnd`, the condition of `__tcp_ack_snd_check` for
    /// acknowledging two segments at once).
    pub fn window_advances(&self, held: u64) -> bool {
        self.raw_window(held) >= self.rcv_wnd
    }

    /// `tcp_select_window`: the window field of a segment sent with `rcv_nxt` acknowledged and
    /// `held` bytes queued out of order. Never moves the right edge back (RFC 7323 §2.4).
    pub fn select_window(&mut self, rcv_nxt: u64, held: u64) -> u16 {
        let unit = 1u64 << self.wscale;
        let cur = (self.rcv_wup + self.rcv_wnd).saturating_sub(rcv_nxt);
        let mut new = self.raw_window(held);
        if new < cur {
            new = align_up(cur, unit);
        }
        self.rcv_wnd = new;
        self.rcv_wup = rcv_nxt;
        (new.min(65_535u64 << self.wscale) >> self.wscale) as u16
    }
}

#[cfg(test)]
#[path = "rcvbuf_tests.rs"]
mod tests;
