//! Rule tests of the receive half with Linux's delayed-ACK engine (`delayed_ack = "linux"`,
//! tcp/delack.rs) on a pair of endpoints wired back to back.

use super::sender_tests::{deliver, headers, pair, MS, MSS};
use super::Output;
use crate::net::packet::TcpHeader;
use crate::tcp::config::{DelayedAckMode, RcvBufMode, TcpConfig};

fn linux(rcvbuf: RcvBufMode, initial_cwnd: u32) -> TcpConfig {
    TcpConfig {
        delayed_ack: DelayedAckMode::Linux,
        rcvbuf,
        // the ratio the live testbed's kernel measures: the window opens from the first segment
        scaling_ratio: 162,
        initial_cwnd,
        ..TcpConfig::default()
    }
}

/// The client's first flight of `bytes`, sent at 100 ms.
fn flight(c: &mut super::Endpoint, bytes: u64) -> Vec<TcpHeader> {
    let mut out = Output::default();
    c.write(bytes, 1, 100 * MS, &mut out);
    headers(&mut out)
        .into_iter()
        .filter(|h| h.payload_bytes > 0)
        .collect()
}

#[test]
fn a_linux_receiver_acks_every_segment_that_opens_its_window() {
    // tcp_grow_window sets icsk_ack.quick |= 1: while rcv_ssthresh grows, every segment is
    // acknowledged at once; once it stops, every second one (__tcp_ack_snd_check)
    let (mut c, mut s) = pair(linux(RcvBufMode::Linux, 40));
    let segs = flight(&mut c, 40 * MSS);
    assert!(segs.len() >= 30, "{} segments", segs.len());
    let (mut grew, mut held_back) = (0, 0);
    for (i, h) in segs.iter().enumerate() {
        let before = s.rcv.rcvbuf.as_ref().unwrap().rcv_ssthresh;
        let acks = deliver(&mut s, &[*h], 150 * MS + i as u64 * 1_500_000);
        let after = s.rcv.rcvbuf.as_ref().unwrap().rcv_ssthresh;
        if i < 16 {
            assert_eq!(acks.len(), 1, "segment {i}: one of the first 16 quick ACKs");
        } else if after > before {
            grew += 1;
            assert_eq!(acks.len(), 1, "segment {i} grew the window: ACKed at once");
        } else if acks.is_empty() {
            held_back += 1;
        }
    }
    assert!(
        grew > 0 && held_back > 0,
        "grew {grew}, held back {held_back}"
    );
}

#[test]
fn with_a_fixed_window_a_linux_receiver_acks_16_segments_then_every_second() {
    // tcp_event_data_recv: the first data arms min(rwnd / (2 rcv_mss), 16) quick ACKs; then
    // more than one rcv_mss unacknowledged with the window advancing sends the ACK
    let (mut c, mut s) = pair(linux(RcvBufMode::Fixed, 40));
    let segs = flight(&mut c, 40 * MSS);
    assert_eq!(segs.len(), 40);
    let at = |i: usize| 150 * MS + i as u64 * 1_500_000;
    let mut acked = Vec::new();
    for (i, h) in segs.iter().enumerate() {
        let a = !deliver(&mut s, &[*h], at(i)).is_empty();
        if !a {
            // held back: the delayed-ACK timer waits ato (TCP_ATO_MIN, 40 ms: the segments
            // come 1.5 ms apart) from the first segment it holds
            assert_eq!(s.rcv.delack_timer.deadline_ns(), Some(at(i) + 40 * MS));
        }
        acked.push(a);
    }
    assert!(acked[..16].iter().all(|&a| a));
    for (i, &a) in acked.iter().enumerate().skip(16) {
        assert_eq!(a, (i - 16) % 2 == 1, "segment {i}");
    }
}

#[test]
fn a_reply_within_ato_makes_the_receiver_interactive_and_its_quick_acks_stop() {
    // tcp_event_data_sent: data sent less than ato after data received enters ping-pong
    // mode, in which tcp_in_quickack_mode is false although quick ACKs are left
    let (mut c, mut s) = pair(linux(RcvBufMode::Fixed, 10));
    let segs = flight(&mut c, 10 * MSS);
    assert_eq!(deliver(&mut s, &segs[..1], 150 * MS).len(), 1);
    let mut out = Output::default();
    s.write(200, 7, 151 * MS, &mut out);
    assert_eq!(headers(&mut out).len(), 1, "the reply");
    let d = s.rcv.delack.as_ref().unwrap();
    assert!(d.pingpong && d.quick > 0);
    let acks: Vec<usize> = (1..5)
        .map(|i| deliver(&mut s, &segs[i..i + 1], 152 * MS + i as u64 * MS).len())
        .collect();
    assert_eq!(acks, vec![0, 1, 0, 1], "every second segment, not each");
}

#[test]
fn a_linux_receiver_offers_its_window_with_the_segment_it_acknowledges_still_unread() {
    // Linux queues a segment (sk_rmem_alloc), grows the window and sends the ACK in the softirq
    // (tcp_rcv_established → __tcp_ack_snd_check → tcp_select_window); the reader copies it
    // afterwards (tcp_recvmsg). A buffer that cannot grow (tcp_rmem[1] = tcp_rmem[2] = 32 KiB,
    // window scale 0) then never offers more than its window less the segment just received.
    let cfg = TcpConfig {
        tcp_rmem: [
            crate::sim::units::Size(4096),
            crate::sim::units::Size(32_768),
            crate::sim::units::Size(32_768),
        ],
        ..linux(RcvBufMode::Linux, 10)
    };
    let (mut c, mut s) = pair(cfg);
    let mut data = flight(&mut c, 200 * MSS);
    let (mut now, mut acks_seen) = (150 * MS, 0);
    while !data.is_empty() && acks_seen < 150 {
        let mut next = Vec::new();
        for h in &data {
            now += MS;
            let acks = deliver(&mut s, &[*h], now);
            // the window the buffer holds (its scaling ratio is measured on the first segment)
            let full = s.rcv.rcvbuf.as_ref().unwrap().full_space();
            for a in acks {
                acks_seen += 1;
                assert!(
                    a.window as u64 + h.payload_bytes as u64 <= full,
                    "ACK {acks_seen} offers {} with a {}-byte segment unread in a {full}-byte window",
                    a.window,
                    h.payload_bytes
                );
                next.extend(deliver(&mut c, &[a], now + 25 * MS));
            }
        }
        data = next.into_iter().filter(|h| h.payload_bytes > 0).collect();
        now += 25 * MS;
    }
    assert!(acks_seen >= 50, "{acks_seen} ACKs");
}

#[test]
fn a_linux_3_receiver_spends_a_quick_ack_on_every_segment_it_sends() {
    // Linux 3.19's tcp_transmit_skb calls tcp_event_ack_sent(sk, tcp_skb_pcount(skb)) for every
    // segment with the ACK flag, so a reply sent with no ACK owed uses a quick-ACK credit;
    // Linux 6.6+ counts only ACKs sent while one is owed (inet_csk_ack_scheduled)
    let quick_after_reply = |mode: DelayedAckMode| {
        let (mut c, mut s) = pair(TcpConfig {
            delayed_ack: mode,
            ..linux(RcvBufMode::Fixed, 10)
        });
        let segs = flight(&mut c, 10 * MSS);
        assert_eq!(
            deliver(&mut s, &segs[..1], 150 * MS).len(),
            1,
            "a quick ACK"
        );
        let before = s.rcv.delack.as_ref().unwrap().quick;
        // 100 ms later (beyond ato, 40 ms): a reply, not a ping-pong exchange
        let mut out = Output::default();
        s.write(200, 7, 250 * MS, &mut out);
        assert_eq!(headers(&mut out).len(), 1, "the reply");
        let d = s.rcv.delack.as_ref().unwrap();
        assert!(!d.pingpong);
        (before, d.quick)
    };
    let (before, after) = quick_after_reply(DelayedAckMode::Linux);
    assert_eq!(after, before, "6.18: no ACK was owed");
    let (before, after) = quick_after_reply(DelayedAckMode::Linux3);
    assert_eq!(after, before - 1, "3.19: the reply carried an ACK");
}

/// The timers follow `timer_clock` (tcp/timer_clock.rs) at HZ = 250 (4 ms jiffies). A lone
/// segment received at 150.5 ms (tick 37) by an RFC 5681 receiver arms the 40 ms delayed-ACK
/// timer (10 jiffies, expiry tick 47): exact at 190.5 ms, on the expiry tick (188 ms) with
/// 3.19's wheel, one tick later (192 ms) with 6.18's. The sender's RTO after the handshake's
/// sample, 250 ms, armed at 100 ms (tick 25): 62.5 jiffies round up to 63, the first delta of
/// the wheel's level 1, so the expiry tick 88 goes to the next 8-jiffy bucket with 6.18's
/// wheel, tick (88 >> 3 + 1) × 8 = 96 (384 ms), where 3.19's fires on tick 88 (352 ms) and the
/// exact clock at 350 ms.
#[test]
fn the_delayed_ack_and_the_rto_fire_on_the_ticks_of_the_timer_clock() {
    use crate::tcp::timer_clock::TimerClock;
    for (clock, delack_ms_x10, rto_ms) in [
        (TimerClock::Exact, 1905, 350),
        (TimerClock::Linux319, 1880, 352),
        (TimerClock::Linux, 1920, 384),
    ] {
        let (mut c, mut s) = pair(TcpConfig {
            delayed_ack: DelayedAckMode::On,
            timer_clock: clock,
            hz: 250,
            ..TcpConfig::default()
        });
        let mut out = Output::default();
        c.write(MSS, 1, 100 * MS, &mut out);
        let segs = headers(&mut out);
        let data: Vec<_> = segs.into_iter().filter(|h| h.payload_bytes > 0).collect();
        assert_eq!(data.len(), 1);
        let rto_at = c.snd.rto_timer.deadline_ns();
        assert_eq!(c.tp.rto_ns, 250 * MS);
        assert_eq!(rto_at, Some(rto_ms * MS), "{clock:?}");
        assert!(deliver(&mut s, &data, 150 * MS + MS / 2).is_empty());
        let delack_at = s.rcv.delack_timer.deadline_ns();
        assert_eq!(delack_at, Some(delack_ms_x10 * MS / 10), "{clock:?}");
    }
}
