//! Rule tests of Linux's delayed-ACK engine, each against the kernel function it models.

use super::*;

const MSS: u64 = 1448;

fn engine() -> LinuxDelAck {
    let mut d = LinuxDelAck::new(LinuxAckRules::Linux6, MSS, 40 * MS);
    d.on_established(0);
    d
}

#[test]
fn the_first_data_gives_min_of_half_the_window_in_segments_and_16_quick_acks() {
    // tcp_incr_quickack: rcv_wnd / (2 × rcv_mss), at most TCP_MAX_QUICKACKS, 2 when it is 0
    let mut d = engine();
    d.on_data(MSS, 10 * MS, 65_160, 1_000 * MS, false, None);
    assert_eq!(d.quick, 16);
    assert_eq!(d.ato_ns, 40 * MS);
    let mut small = engine();
    small.on_data(MSS, 10 * MS, 5 * MSS, 1_000 * MS, false, None);
    assert_eq!(small.quick, 2, "5 segments of window: 5 / 2 = 2");
    let mut tiny = engine();
    tiny.on_data(MSS, 10 * MS, MSS, 1_000 * MS, false, None);
    assert_eq!(tiny.quick, 2, "0 becomes 2");
}

#[test]
fn each_ack_sent_for_data_uses_one_credit_and_the_last_resets_ato() {
    // tcp_dec_quickack_mode: only an ACK sent while one is owed counts
    let mut d = engine();
    d.on_data(MSS, 10 * MS, 4 * MSS, 1_000 * MS, false, None);
    assert_eq!(d.quick, 2);
    d.on_ack_sent();
    assert_eq!(d.quick, 1);
    d.on_ack_sent();
    assert_eq!(d.quick, 1, "no ACK owed: no credit used");
    d.ato_ns = 90 * MS;
    d.on_data(MSS, 11 * MS, 4 * MSS, 1_000 * MS, false, None);
    d.on_ack_sent();
    assert_eq!(d.quick, 0);
    assert_eq!(d.ato_ns, 40 * MS, "leaving quick-ACK mode deflates ato");
    assert!(!d.in_quickack());
}

#[test]
fn a_segment_that_grows_the_window_is_acked_at_once() {
    // tcp_grow_window: quick |= 1
    let mut d = engine();
    d.on_data(MSS, 10 * MS, 65_160, 1_000 * MS, false, None);
    d.quick = 0;
    d.on_data(MSS, 12 * MS, 65_160, 1_000 * MS, false, None);
    assert!(!d.in_quickack());
    d.on_data(MSS, 14 * MS, 65_160, 1_000 * MS, true, None);
    assert!(d.in_quickack());
    d.quick = 6;
    d.on_data(MSS, 16 * MS, 65_160, 1_000 * MS, true, None);
    assert_eq!(d.quick, 7, "a bitwise or, as the kernel's");
}

#[test]
fn ato_follows_the_gaps_between_data_segments() {
    // tcp_event_data_recv, in jiffies of 1 ms
    let mut d = engine();
    d.on_data(MSS, 100 * MS, 65_160, 300 * MS, false, None);
    assert_eq!(d.ato_ns, 40 * MS);
    // m ≤ ATO_MIN/2: ato/2 + ATO_MIN/2
    d.on_data(MSS, 115 * MS, 65_160, 300 * MS, false, None);
    assert_eq!(d.ato_ns, 40 * MS);
    d.ato_ns = 100 * MS;
    d.on_data(MSS, 125 * MS, 65_160, 300 * MS, false, None);
    assert_eq!(d.ato_ns, 70 * MS);
    // ATO_MIN/2 < m < ato: ato/2 + m, at most the RTO
    d.on_data(MSS, 155 * MS, 65_160, 300 * MS, false, None);
    assert_eq!(d.ato_ns, 35 * MS + 30 * MS);
    d.ato_ns = 400 * MS;
    d.on_data(MSS, 405 * MS, 65_160, 300 * MS, false, None);
    assert_eq!(d.ato_ns, 300 * MS, "capped at the RTO");
    // a gap longer than the RTO re-arms the quick ACKs
    d.quick = 0;
    d.on_data(MSS, 800 * MS, 65_160, 300 * MS, false, None);
    assert_eq!(d.quick, 16);
}

#[test]
fn a_reply_within_ato_turns_quick_acks_off_until_the_timer_fires() {
    // tcp_event_data_sent (tcp_pingpong_thresh = 1), tcp_delack_timer_handler
    let mut d = engine();
    d.on_data(MSS, 100 * MS, 65_160, 300 * MS, false, None);
    assert!(d.in_quickack());
    d.on_data_sent(170 * MS);
    assert!(!d.pingpong, "70 ms after the data: not a reply");
    d.on_data_sent(139 * MS);
    assert!(d.pingpong);
    assert!(!d.in_quickack(), "interactive: no quick ACKs");
    assert_eq!(d.timeout_ns(0), 40 * MS);
    d.ato_ns = 400 * MS;
    assert_eq!(d.timeout_ns(0), 200 * MS, "TCP_DELACK_MAX when interactive");
    d.on_timer(300 * MS);
    assert!(!d.pingpong);
    assert_eq!(d.ato_ns, 40 * MS);
    // outside interactive mode a missed delayed ACK doubles ato, up to the RTO
    d.on_timer(300 * MS);
    assert_eq!(d.ato_ns, 80 * MS);
    d.ato_ns = 200 * MS;
    d.on_timer(300 * MS);
    assert_eq!(d.ato_ns, 300 * MS);
}

#[test]
fn the_timeout_is_bounded_by_srtt_and_half_a_second() {
    // tcp_send_delayed_ack
    let mut d = engine();
    d.on_data(MSS, 100 * MS, 65_160, 1_000 * MS, false, None);
    d.ato_ns = 450 * MS;
    assert_eq!(d.timeout_ns(0), 200 * MS, "never beyond icsk_delack_max");
    assert_eq!(d.timeout_ns(120 * MS), 120 * MS, "at most SRTT");
    assert_eq!(
        d.timeout_ns(10 * MS),
        40 * MS,
        "SRTT counts as at least TCP_DELACK_MIN"
    );
    d.ato_ns = 40 * MS;
    assert_eq!(d.timeout_ns(10 * MS), 40 * MS);
}

#[test]
fn data_received_again_enters_quick_ack_mode_and_leaves_interactive_mode() {
    // tcp_enter_quickack_mode from tcp_data_queue's "A retransmit" branch
    let mut d = engine();
    d.on_data(MSS, 100 * MS, 65_160, 300 * MS, false, None);
    d.on_data_sent(101 * MS);
    d.quick = 0;
    d.ato_ns = 90 * MS;
    d.enter_quickack(65_160);
    assert!(!d.pingpong);
    assert_eq!(d.quick, 16);
    assert_eq!(d.ato_ns, 40 * MS);
    assert!(d.in_quickack());
}

#[test]
fn the_receive_buffers_rcv_mss_is_the_one_estimate_when_there_is_one() {
    // one icsk_ack.rcv_mss in Linux: tcp_incr_quickack divides by the value tcp_measure_rcv_mss
    // keeps for the receive buffer, not by a second estimate
    let mut own = engine();
    own.on_data(MSS, 10 * MS, 64 * MSS, 1_000 * MS, false, None);
    assert_eq!(own.rcv_mss, MSS, "measured from the segment");
    let mut shared = engine();
    shared.on_data(MSS, 10 * MS, 64 * MSS, 1_000 * MS, false, Some(536));
    assert_eq!(shared.rcv_mss, 536);
    // 64 × 1448 / (2 × 536) = 86, at most TCP_MAX_QUICKACKS; the window of 4 segments shows
    // the divisor: 4 × 1448 / (2 × 536) = 5
    let mut small = engine();
    small.on_data(MSS, 10 * MS, 4 * MSS, 1_000 * MS, false, Some(536));
    assert_eq!(small.quick, 5);
}

#[test]
fn linux_3_counts_every_ack_sent_and_lets_the_timeout_reach_half_a_second() {
    // 3.19: tcp_event_ack_sent(sk, tcp_skb_pcount(skb)) for every segment with an ACK, and
    // tcp_send_delayed_ack without icsk_delack_max (Linux 5.10): min(ato, HZ/2, SRTT)
    let mut d = LinuxDelAck::new(LinuxAckRules::Linux3, MSS, 40 * MS);
    d.on_established(0);
    d.on_data(MSS, 10 * MS, 4 * MSS, 1_000 * MS, false, None);
    assert_eq!(d.quick, 2);
    d.on_ack_sent();
    d.on_ack_sent();
    assert_eq!(d.quick, 0, "the second, with no ACK owed, counts too");
    d.ato_ns = 450 * MS;
    assert_eq!(d.timeout_ns(0), 450 * MS);
    assert_eq!(d.timeout_ns(700 * MS), 450 * MS);
    assert_eq!(d.timeout_ns(300 * MS), 300 * MS, "at most SRTT");
    d.ato_ns = 900 * MS;
    assert_eq!(d.timeout_ns(0), 500 * MS, "HZ/2");
    d.pingpong = true;
    assert_eq!(d.timeout_ns(0), 200 * MS, "TCP_DELACK_MAX when interactive");
}
