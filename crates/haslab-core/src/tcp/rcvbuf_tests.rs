//! Rule tests for Linux receive-buffer autotuning (tcp/rcvbuf.rs); each names the kernel rule.

use super::*;

const MS: u64 = 1_000_000;

fn defaults() -> [Size; 3] {
    [Size(4096), Size(131_072), Size(33_554_432)]
}

/// A client socket after the handshake at t = 0 (SYN announcing MSS 1460, advmss 1448).
fn client(ratio: u8, sack: bool) -> LinuxRcvBuf {
    let mut b = LinuxRcvBuf::new(defaults(), ratio, sack);
    b.initial_window(1460);
    b.established(1448, 0, 1, 1);
    b
}

/// Gives the receiver an RTT estimate of `rtt_ms` (a timestamp sample).
fn with_rtt(b: &mut LinuxRcvBuf, now_ms: u32, rtt_ms: u32) {
    b.on_segment_ts(1448, Some(now_ms - rtt_ms), now_ms);
}

#[test]
fn initial_window_from_tcp_rmem_1_and_the_default_ratio() {
    // tcp_select_initial_window: tcp_full_space = 131072 * 128 / 256 = 65536, rounded down
    // to the SYN's MSS: 44 * 1460 (active opener) and 45 * 1448 (passive, timestamps)
    let mut a = LinuxRcvBuf::new(defaults(), 200, false);
    assert_eq!(a.initial_window(1460), 64_240);
    let mut p = LinuxRcvBuf::new(defaults(), 200, false);
    assert_eq!(p.initial_window(1448), 65_160);
    // window scale from tcp_rmem[2] = 32 MiB: ilog2 = 25, 25 - 15 = 10
    assert_eq!(a.wscale, 10);
    assert_eq!(wscale_for_space(6 << 20), 7);
    assert_eq!(wscale_for_space(1 << 30), 14);
    assert_eq!(wscale_for_space(u64::MAX), 14);
    // tcp_init_buffer_space: one advmss reserved, rcv_ssthresh clamped, rcvq_space = 10 advmss
    a.established(1448, 0, 1, 1);
    assert_eq!(a.window_clamp, 65_536 - 1448);
    assert_eq!(a.rcv_ssthresh, 65_536 - 1448);
    assert_eq!(a.rcvq_space, 10 * 1448);
    // the first window offered after the handshake is rcv_ssthresh rounded up to 1 KiB, but
    // not below the SYN's right edge
    let w = a.select_window(1, 0) as u64;
    assert_eq!(w << 10, 64_512);
}

#[test]
fn the_measured_scaling_ratio_moves_window_clamp() {
    // tcp_measure_rcv_mss: the first full segment (len 1448 != rcv_mss 536) sets the ratio;
    // window_clamp follows tcp_win_from_space(sk_rcvbuf) (tcp_set_window_clamp)
    let mut b = client(200, false);
    assert_eq!(b.rcv_mss, 536);
    b.on_data_in_order(1448, 1 + 1448, MS, 0);
    assert_eq!(b.scaling_ratio, 200);
    assert_eq!(b.rcv_mss, 1448);
    assert_eq!(b.window_clamp, 131_072 * 200 / 256);
    // a ratio below the default lowers the clamp and rcv_ssthresh with it
    let mut low = client(100, false);
    low.on_data_in_order(1448, 1 + 1448, MS, 0);
    assert_eq!(low.window_clamp, 131_072 * 100 / 256);
    assert!(low.rcv_ssthresh <= low.window_clamp);
}

#[test]
fn rcv_ssthresh_grows_two_advmss_per_in_order_segment_up_to_the_clamp() {
    // tcp_grow_window: incr = max(2 * advmss, 2 * len), limited by min(window_clamp, tcp_space)
    let mut b = client(128, false);
    let start = b.rcv_ssthresh;
    b.on_data_in_order(1448, 1449, MS, 0);
    // ratio unchanged (128): clamp 64088 = rcv_ssthresh already, no room
    assert_eq!(b.rcv_ssthresh, start);
    let mut b = client(200, false);
    b.on_data_in_order(1448, 1449, MS, 0);
    let after_first = b.rcv_ssthresh;
    b.on_data_in_order(1448, 2 * 1448 + 1, MS, 0);
    assert_eq!(b.rcv_ssthresh, (after_first + 2 * 1448).min(b.window_clamp));
    // segments shorter than 128 bytes do not grow it
    let before = b.rcv_ssthresh;
    b.on_data_in_order(100, 2 * 1448 + 101, MS, 0);
    assert_eq!(b.rcv_ssthresh, before);
    for i in 0..1000 {
        b.on_data_in_order(1448, 3000 + i * 1448, MS, 0);
    }
    assert_eq!(b.rcv_ssthresh, b.window_clamp, "never above window_clamp");
}

#[test]
fn the_buffer_grows_when_more_than_rcvq_space_is_read_per_receiver_rtt() {
    // tcp_rcv_space_adjust / tcp_rcvbuf_grow: once per receiver RTT, copied > space gives
    // space = copied and sk_rcvbuf = tcp_space_from_win(2 new + 4 new (new - old) / old)
    let mut b = client(128, false);
    with_rtt(&mut b, 150, 100);
    assert_eq!(b.rtt_us8, 100_000 << 3);
    let buf0 = b.rcvbuf;
    // read 100 kB, but less than one RTT after the measurement began: nothing yet
    b.on_read(1 + 100_000, 50 * MS, 0);
    assert_eq!(b.rcvbuf, buf0);
    // one RTT later: 100 kB > 14480
    b.on_read(1 + 100_000, 100 * MS, 0);
    assert_eq!(b.rcvq_space, 100_000);
    let win = 200_000 + 2 * (200_000 * (100_000 - 14_480) / 14_480);
    assert_eq!(b.rcvbuf, space_from_win(128, win).min(33_554_432));
    assert_eq!(b.window_clamp, win_from_space(128, b.rcvbuf));
    // a second RTT that reads no more than the space leaves the buffer alone
    let buf1 = b.rcvbuf;
    b.on_read(1 + 150_000, 200 * MS, 0);
    assert_eq!(b.rcvq_space, 100_000);
    assert_eq!(b.rcvbuf, buf1);
    // the numbers of a live kernel (6.18, tcp_rcvbuf_grow tracepoint, scaling_ratio 162):
    // space 30408 -> 59368 gives rcvbuf 545024 (window_clamp 344898)
    let mut k = client(162, false);
    k.on_data_in_order(1448, 1, 0, 0);
    k.rcvq_space = 30_408;
    k.rtt_us8 = 100_000 << 3;
    k.on_read(1 + 59_368, 200 * MS, 0);
    assert!(k.rcvbuf.abs_diff(545_024) <= 8, "rcvbuf {}", k.rcvbuf);
    // out-of-order data above rcv_nxt adds its span (6.16+ "adjust rcvbuf in presence of
    // reorders"), even when nothing more was read
    let mut o = client(162, false);
    o.rcvq_space = 100_000;
    o.on_data_out_of_order(1448, 0, 600_000);
    assert_eq!(o.rcvbuf, space_from_win(o.scaling_ratio, 200_000 + 600_000));
}

#[test]
fn the_buffer_never_exceeds_tcp_rmem_2() {
    let mut b = client(200, true);
    b.on_data_in_order(1448, 1449, 0, 0);
    with_rtt(&mut b, 20, 10);
    let mut copied = 1449u64;
    let mut prev = b.rcvbuf;
    for i in 1..=40u64 {
        copied += 1u64 << (i / 2 + 12);
        b.on_read(copied, i * 10 * MS, 0);
        b.on_data_out_of_order(1448, 0, 1 << 29);
        assert!(
            b.rcvbuf <= 33_554_432,
            "sk_rcvbuf {} above tcp_rmem[2]",
            b.rcvbuf
        );
        assert!(b.rcvbuf >= prev, "sk_rcvbuf is never lowered");
        prev = b.rcvbuf;
    }
    assert_eq!(b.rcvbuf, 33_554_432);
    assert_eq!(b.window_clamp, 33_554_432 * 200 / 256);
}

#[test]
fn out_of_order_data_held_counts_against_the_buffer() {
    // tcp_space: the memory of queued segments is not free; __tcp_select_window offers at
    // most that free space
    let b = client(128, true);
    assert_eq!(b.free_space(0), 65_536);
    assert_eq!(b.free_space(20_000), 45_536);
    // a fresh socket whose rcv_ssthresh is not the limit: the offer falls with what is held
    let mut wide = client(128, true);
    wide.rcv_ssthresh = wide.window_clamp;
    let none = wide.raw_window(0);
    let held = wide.raw_window(30_000);
    assert_eq!(none, align_up(64_088, 1024));
    assert_eq!(held, align_up(65_536 - 30_000, 1024));
    // below 1/16 of the buffer free, the raw offer is zero...
    assert_eq!(wide.raw_window(65_536 - 3000), 0);
    // ...but an offered window is never withdrawn: the right edge stays
    let first = wide.select_window(1, 0) as u64;
    let later = wide.select_window(1, 65_536 - 3000) as u64;
    assert_eq!(later, first);
}

#[test]
fn the_right_edge_never_moves_back() {
    // tcp_select_window: a new window whose right edge is before rcv_wup + rcv_wnd keeps that
    // edge (RFC 7323 §2.4; tcp_shrink_window = 0)
    let mut b = client(180, false);
    with_rtt(&mut b, 120, 100);
    let mut rcv_nxt = 1u64;
    let mut held = 0u64;
    let mut edge = 0u64;
    let mut now = 0u64;
    for i in 0..3000u64 {
        now += MS / 4;
        match i % 7 {
            // a segment above a hole
            0..=2 => {
                b.on_data_out_of_order(1448, held, held + 1448 * 3);
                held += 1448;
            }
            // the hole filled: everything held is delivered
            3 => {
                rcv_nxt += 1448 + held;
                held = 0;
                b.on_data_in_order(1448, rcv_nxt, now, 0);
                b.on_read(rcv_nxt, now, 0);
            }
            _ => {
                rcv_nxt += 1448;
                b.on_data_in_order(1448, rcv_nxt, now, held);
                b.on_read(rcv_nxt, now, held + 1448);
            }
        }
        let field = b.select_window(rcv_nxt, held) as u64;
        let right = rcv_nxt + (field << b.wscale);
        assert!(right >= edge, "step {i}: right edge {right} before {edge}");
        edge = right;
    }
    assert!(b.rcvbuf > 131_072, "the buffer grew");
}

#[test]
fn without_sack_out_of_order_segments_keep_the_window() {
    // tcp_data_queue_ofo: "For non sack flows, do not grow window to force DUPACK and trigger
    // fast retransmit": duplicate ACKs carry the same window, so the sender counts them
    let mut b = client(200, false);
    b.on_data_in_order(1448, 1449, MS, 0);
    let w0 = b.select_window(1449, 0);
    let ss = b.rcv_ssthresh;
    let mut held = 0;
    for _ in 0..20 {
        b.on_data_out_of_order(1448, held, held + 2896);
        held += 1448;
        assert_eq!(b.rcv_ssthresh, ss);
        assert_eq!(b.select_window(1449, held), w0);
    }
    // with SACK the same segments open the window
    let mut s = client(200, true);
    s.on_data_in_order(1448, 1449, MS, 0);
    let ss = s.rcv_ssthresh;
    s.on_data_out_of_order(1448, 0, 2896);
    assert!(s.rcv_ssthresh > ss);
}

#[test]
fn receiver_rtt_keeps_the_minimum_and_averages_larger_timestamp_samples() {
    // tcp_rcv_rtt_update (6.16+): a smaller sample replaces the estimate; a larger one is
    // ignored from the window and averaged with gain 1/8 from timestamps; 0 ms is dropped
    let mut b = client(128, false);
    b.on_segment_ts(1448, Some(100), 100);
    assert_eq!(b.rtt_us8, 0, "a 0 ms timestamp sample is dropped");
    b.on_segment_ts(1448, Some(101), 201);
    assert_eq!(b.rtt_us8, 100_000 << 3);
    b.on_segment_ts(1448, Some(101), 400);
    assert_eq!(b.rtt_us8, 100_000 << 3, "the same TSecr counts once");
    b.on_segment_ts(1448, Some(102), 302);
    assert_eq!(b.rtt_us8, (800_000 - 100_000) + 200_000);
    b.on_segment_ts(1448, Some(300), 350);
    assert_eq!(b.rtt_us8, 50_000 << 3);
    // a segment shorter than rcv_mss gives no sample
    b.on_segment_ts(100, Some(301), 311);
    assert_eq!(b.rtt_us8, 50_000 << 3);
    // the window-based sample: the time for rcv_nxt to pass rcv_nxt + rcv_wnd
    let mut w = client(128, false);
    w.select_window(1, 0);
    let wnd = w.rcv_wnd;
    w.on_data_in_order(1448, 1449, 10 * MS, 0);
    w.on_data_in_order(1448, 1449 + wnd, 90 * MS, 0);
    assert_eq!(w.rtt_us8, 80_000 << 3);
    w.on_data_in_order(1448, 1449 + 2 * wnd + 2000, 300 * MS, 0);
    assert_eq!(w.rtt_us8, 80_000 << 3, "a larger window sample is ignored");
}
