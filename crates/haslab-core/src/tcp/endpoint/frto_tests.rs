//! Rule tests of F-RTO (RFC 5682 §3.1, the SACK-enhanced form; Linux `tcp_enter_loss` and
//! `tcp_process_loss`, net/ipv4/tcp_input.c): when it runs, what the first ACK after the RTO
//! sends, and what shows the RTO spurious or the loss real. Timestamps are off so that Eifel
//! detection (RFC 3522) cannot decide first.

use super::sender_tests::{deliver, headers, pair, MS, MSS};
use super::{Endpoint, Output, TimerKind};
use crate::net::packet::TcpHeader;
use crate::tcp::cc::CaState;
use crate::tcp::config::{DelayedAckMode, TcpConfig};

fn frto_cfg(sack: bool, frto: bool) -> TcpConfig {
    TcpConfig {
        sack,
        tlp: false,
        timestamps: false,
        delayed_ack: DelayedAckMode::Off,
        frto,
        ..TcpConfig::default()
    }
}

/// `c` writes `segments` × MSS at 100 ms (IW 10 sends the first ten) and its RTO fires with
/// all ten outstanding; returns the ten originals, the RTO's time and its retransmission.
fn rto_after_ten(
    cfg: TcpConfig,
    segments: u64,
) -> (Endpoint, Endpoint, Vec<TcpHeader>, u64, TcpHeader) {
    let (mut c, s) = pair(cfg);
    let mut out = Output::default();
    c.write(segments * MSS, 1, 100 * MS, &mut out);
    let data = headers(&mut out);
    assert_eq!(data.len(), 10);
    let rto_at = c.snd.rto_timer.deadline_ns().unwrap();
    c.on_timer_entry(TimerKind::Rto, rto_at, &mut out);
    let resent = headers(&mut out);
    assert_eq!(resent.len(), 1);
    assert_eq!(resent[0].seq, data[0].seq);
    assert_eq!(c.tp.ca_state, CaState::Loss);
    (c, s, data, rto_at, resent[0])
}

/// Whether `h` carries data above the ten originals (new data, not a retransmission).
fn is_new(h: &TcpHeader, data: &[TcpHeader]) -> bool {
    let last = data.last().unwrap();
    h.seq.wrapping_sub(last.seq) as i32 >= MSS as i32
}

/// A spurious RTO (every original only delayed): the ACK of the first original covers the
/// retransmitted head only, so it shows nothing yet; F-RTO (step 2.b) answers it with two new
/// segments (slow start from cwnd 1) where a sender without it resends the next two
/// originals. The next ACK acknowledges an original never retransmitted (step 3.b): the RTO
/// is undone — cwnd back to its value before it, nothing marked lost — and none of the
/// other originals is resent. With and without SACK.
#[test]
fn frto_sends_new_data_after_the_rto_and_undoes_a_spurious_one() {
    for sack in [false, true] {
        for frto in [true, false] {
            let (mut c, mut s, data, rto_at, _) = rto_after_ten(frto_cfg(sack, frto), 30);
            let prior_cwnd = c.tp.prior_cwnd_pkts;
            let acks = deliver(&mut s, &data, rto_at + 10 * MS);
            assert_eq!(acks.len(), 10);
            let sent = deliver(&mut c, &acks[..1], rto_at + 30 * MS);
            assert_eq!(sent.len(), 2, "sack {sack} frto {frto}");
            if frto {
                assert!(sent.iter().all(|h| is_new(h, &data)), "sack {sack}");
            } else {
                let seqs: Vec<u32> = sent.iter().map(|h| h.seq).collect();
                assert_eq!(seqs, vec![data[1].seq, data[2].seq], "sack {sack}");
            }
            let retrans_before = c.stats.transfer.retransmitted_segments;
            let mut later = Vec::new();
            for a in &acks[1..] {
                later.extend(deliver(&mut c, std::slice::from_ref(a), rto_at + 31 * MS));
            }
            if frto {
                assert_eq!(c.stats.loss.spurious_rtos, 1, "sack {sack}");
                assert!(
                    c.tp.cwnd_pkts >= prior_cwnd,
                    "sack {sack}: cwnd {} restored to ≥ {prior_cwnd}",
                    c.tp.cwnd_pkts
                );
                assert_eq!(c.snd.sb.lost_out, 0);
                assert_eq!(c.tp.ca_state, CaState::Open);
                assert_eq!(
                    c.stats.transfer.retransmitted_segments, retrans_before,
                    "sack {sack}: no original is resent"
                );
                assert!(later.iter().all(|h| is_new(h, &data)));
            } else {
                assert_eq!(c.stats.loss.spurious_rtos, 0);
                assert!(c.tp.cwnd_pkts < prior_cwnd);
                assert!(c.stats.transfer.retransmitted_segments > retrans_before);
            }
            c.snd.sb.check().unwrap();
        }
    }
}

/// A real loss (all ten lost): the retransmitted head's ACK draws two new segments (step
/// 2.b); they arrive above the holes, so their ACKs are duplicates (without SACK) or SACK
/// new data: the loss is real (step 3.a). F-RTO ends, nothing is undone, and the same ACKs
/// clock out the next retransmissions at once — without SACK because each duplicate ACK now
/// counts as a segment that left the network (Linux's "reno sacks" in `tcp_process_loss`),
/// which lowers the pipe below cwnd.
#[test]
fn frto_finds_a_real_loss_by_the_duplicate_acks_of_its_new_data() {
    for sack in [false, true] {
        let (mut c, mut s, data, rto_at, resent) = rto_after_ten(frto_cfg(sack, true), 30);
        let ssthresh = c.tp.ssthresh_pkts;
        let ack = deliver(&mut s, &[resent], rto_at + 10 * MS);
        let new = deliver(&mut c, &ack, rto_at + 30 * MS);
        assert_eq!(new.len(), 2);
        assert!(new.iter().all(|h| is_new(h, &data)), "sack {sack}");
        assert!(c.recovery.frto);
        let dupacks = deliver(&mut s, &new, rto_at + 40 * MS);
        assert_eq!(dupacks.len(), 2);
        assert!(dupacks.iter().all(|a| a.ack == ack[0].ack));
        let sent = deliver(&mut c, &dupacks, rto_at + 60 * MS);
        assert!(!c.recovery.frto, "sack {sack}: F-RTO ends");
        assert_eq!(c.stats.loss.spurious_rtos, 0);
        assert_eq!(c.tp.ssthresh_pkts, ssthresh, "the reduction stays");
        let seqs: Vec<u32> = sent.iter().map(|h| h.seq).collect();
        assert_eq!(seqs, vec![data[1].seq, data[2].seq], "sack {sack}");
        assert_eq!(c.stats.loss.rto_count, 1);
        c.snd.sb.check().unwrap();
    }
}

/// Step 2.b needs something new to send: with all the data already sent, the first ACK ends
/// F-RTO and the retransmissions go on as without it.
#[test]
fn frto_without_new_data_falls_back_to_retransmitting() {
    let (mut c, mut s, data, rto_at, resent) = rto_after_ten(frto_cfg(true, true), 10);
    let ack = deliver(&mut s, &[resent], rto_at + 10 * MS);
    let sent = deliver(&mut c, &ack, rto_at + 30 * MS);
    assert!(!c.recovery.frto);
    let seqs: Vec<u32> = sent.iter().map(|h| h.seq).collect();
    assert_eq!(seqs, vec![data[1].seq, data[2].seq]);
}

/// When F-RTO runs (Linux `tcp_enter_loss`: `new_recovery || icsk_retransmits`): on an RTO
/// outside a fast recovery or a Loss episode, and on a repeated RTO with no ACK advancing
/// snd_una since the last one; not on an RTO that ends a fast recovery, nor on one in a Loss
/// episode whose cumulative ACK advanced; never with `frto = false`.
#[test]
fn frto_runs_on_a_first_or_repeated_rto_not_after_recovery_or_progress() {
    // first RTO, then a repeat without progress
    let (mut c, mut s, _data, _rto_at, resent) = rto_after_ten(frto_cfg(true, true), 30);
    assert!(c.recovery.frto, "a first RTO");
    let mut out = Output::default();
    let again = c.snd.rto_timer.deadline_ns().unwrap();
    c.on_timer_entry(TimerKind::Rto, again, &mut out);
    assert!(c.recovery.frto, "a repeat on the same snd_una");
    // progress, then another RTO in the same Loss episode
    let ack = deliver(&mut s, &[resent], again + 10 * MS);
    deliver(&mut c, &ack, again + 30 * MS);
    assert_eq!(c.tp.ca_state, CaState::Loss);
    let third = c.snd.rto_timer.deadline_ns().unwrap();
    let (cwnd_before, ssthresh_before) = (c.tp.cwnd_pkts, c.tp.ssthresh_pkts);
    c.on_timer_entry(TimerKind::Rto, third, &mut out);
    assert!(!c.recovery.frto, "an RTO in Loss after snd_una advanced");
    // it is a new loss episode for Linux `tcp_enter_loss` too: ssthresh is recomputed
    // (NewReno: half the window, at least 2), where the repeat above kept it
    assert_eq!(c.tp.ssthresh_pkts, (cwnd_before / 2).max(2));
    assert_ne!(
        c.tp.ssthresh_pkts, ssthresh_before,
        "a recomputed ssthresh is told apart"
    );

    // an RTO during a fast recovery
    let (mut c, mut s) = pair(frto_cfg(true, true));
    let mut out = Output::default();
    c.write(30 * MSS, 1, 100 * MS, &mut out);
    let data = headers(&mut out);
    let acks = deliver(&mut s, &data[1..], 125 * MS);
    deliver(&mut c, &acks, 150 * MS);
    assert_eq!(c.tp.ca_state, CaState::Recovery);
    let at = c.snd.rto_timer.deadline_ns().unwrap();
    c.on_timer_entry(TimerKind::Rto, at, &mut out);
    assert_eq!(c.tp.ca_state, CaState::Loss);
    assert!(!c.recovery.frto, "an RTO that ends a fast recovery");

    let (c, ..) = rto_after_ten(frto_cfg(true, false), 30);
    assert!(!c.recovery.frto, "frto = false");
}
