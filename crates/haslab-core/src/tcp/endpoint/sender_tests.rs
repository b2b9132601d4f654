//! Rule tests of the send half: each checks one rule of an RFC, Linux or ns-3 on a pair of
//! endpoints wired back to back.

use super::{Endpoint, Output, TimerKind};
use crate::net::packet::{TcpHeader, Transport};
use crate::tcp::cc::{AckSample, CaState, CcConfig, CcState, CongestionControl};
use crate::tcp::config::{CaSample, DelayedAckMode, RttSampling, TcpConfig};
use std::sync::{Arc, Mutex};

pub(super) const MS: u64 = 1_000_000;
pub(super) const MSS: u64 = 1448;

pub(super) fn headers(out: &mut Output) -> Vec<TcpHeader> {
    out.packets
        .drain(..)
        .map(|p| match p.transport {
            Transport::Tcp(h) => h,
            Transport::Udp { .. } => unreachable!(),
        })
        .collect()
}

/// A client/server pair after a handshake with a 50 ms RTT, at t = 75 ms.
pub(super) fn pair(cfg: TcpConfig) -> (Endpoint, Endpoint) {
    pair_with_cc(cfg, CcConfig::default().build())
}

/// [`pair`] with `cc` as the client's (the sender's) congestion control.
pub(super) fn pair_with_cc(cfg: TcpConfig, cc: Box<dyn CongestionControl>) -> (Endpoint, Endpoint) {
    let mut c = Endpoint::new(0, 0, 0, 1, 32768, 5201, cfg.clone(), cc, 1000);
    let mut s = Endpoint::new(
        0,
        1,
        1,
        0,
        5201,
        32768,
        cfg,
        CcConfig::default().build(),
        900_000,
    );
    let mut out = Output::default();
    c.connect(0, &mut out);
    for h in headers(&mut out) {
        s.on_segment(&h, 25 * MS, &mut out);
    }
    for h in headers(&mut out) {
        c.on_segment(&h, 50 * MS, &mut out);
    }
    for h in headers(&mut out) {
        s.on_segment(&h, 75 * MS, &mut out);
    }
    assert!(c.is_established() && s.is_established());
    assert_eq!(c.sack_enabled(), c.cfg.sack);
    (c, s)
}

/// `hs` without the segments at the indices in `lost` (in order).
pub(super) fn all_but(hs: &[TcpHeader], lost: &[usize]) -> Vec<TcpHeader> {
    hs.iter()
        .enumerate()
        .filter(|(i, _)| !lost.contains(i))
        .map(|(_, h)| *h)
        .collect()
}

/// `c` writes `bytes` at `sent_ns` and `s` receives them at `arrive_ns`, all but the segments
/// at the indices in `lost`; returns the segments `c` sent and the ACKs `s` sends back.
pub(super) fn write_with_losses(
    c: &mut Endpoint,
    s: &mut Endpoint,
    bytes: u64,
    sent_ns: u64,
    lost: &[usize],
    arrive_ns: u64,
) -> (Vec<TcpHeader>, Vec<TcpHeader>) {
    let mut out = Output::default();
    c.write(bytes, 1, sent_ns, &mut out);
    let data = headers(&mut out);
    let acks = deliver(s, &all_but(&data, lost), arrive_ns);
    (data, acks)
}

/// Delivers `hs` to `to` at `now_ns` and returns what it sends back.
pub(super) fn deliver(to: &mut Endpoint, hs: &[TcpHeader], now_ns: u64) -> Vec<TcpHeader> {
    let mut out = Output::default();
    for h in hs {
        to.on_segment(h, now_ns, &mut out);
    }
    headers(&mut out)
}

/// RFC 6298 (5.3): an ACK of new data restarts the RTO timer, also when it SACKs new data
/// (the first ACK after a hole, with delayed ACKs, does both); ns-3 3.37 does not restart it
/// for such an ACK (`rto_restart_on_sack_advance = false`).
#[test]
fn an_ack_that_advances_and_sacks_restarts_the_rto_unless_ns3_rules_ask() {
    for restart in [true, false] {
        let cfg = TcpConfig {
            sack: true,
            delayed_ack: DelayedAckMode::On,
            rto_restart_on_sack_advance: restart,
            ..TcpConfig::default()
        };
        let (mut c, mut s) = pair(cfg);
        let mut out = Output::default();
        c.write(4 * MSS, 1, 100 * MS, &mut out);
        let data = headers(&mut out);
        assert_eq!(data.len(), 4);
        let armed_at_send = c.snd.rto_timer.deadline_ns().expect("RTO armed");
        // the first segment arrives (its ACK is delayed), the second is lost, the third
        // arrives out of order: one ACK that acknowledges the first and SACKs the third
        let ack = deliver(&mut s, &[data[0], data[2]], 125 * MS);
        assert_eq!(ack.len(), 1);
        assert_eq!(ack[0].ack, data[1].seq);
        assert_eq!(ack[0].sack_len, 1);
        deliver(&mut c, &ack, 150 * MS);
        assert_eq!(c.stats.loss.fast_recovery_count, 0);
        let after = c.snd.rto_timer.deadline_ns().expect("RTO armed");
        if restart {
            assert_eq!(
                after,
                150 * MS + c.tp.rto_ns,
                "restarted by the ACK of new data"
            );
        } else {
            assert_eq!(after, armed_at_send, "ns-3 keeps the timer running");
        }
    }
}

/// RFC 7323 §4.3 (1): a delayed ACK echoes the TSval of the earliest segment it
/// acknowledges (the one that started at Last.ACK.sent), not the latest, so that the
/// sender's RTT sample includes the receiver's delay; an out-of-order segment is not echoed.
#[test]
fn a_delayed_ack_echoes_the_earliest_segment_it_acknowledges() {
    let cfg = TcpConfig {
        delayed_ack: DelayedAckMode::On,
        ..TcpConfig::default()
    };
    let (mut c, mut s) = pair(cfg);
    let mut out = Output::default();
    let mut segs = Vec::new();
    for (i, t_ms) in [100u64, 103, 106, 109, 112, 115].into_iter().enumerate() {
        c.write(MSS, i as u64, t_ms * MS, &mut out);
        segs.extend(headers(&mut out));
    }
    assert_eq!(segs.len(), 6);
    let tsval = |h: &TcpHeader| h.ts.unwrap().0;
    // two in order: one ACK, echoing the first
    let ack = deliver(&mut s, &segs[..2], 150 * MS);
    assert_eq!(ack.len(), 1);
    assert_eq!(ack[0].ts.unwrap().1, tsval(&segs[0]));
    // the third lost, the other three out of order: their duplicate ACKs keep the old
    // echo, and the retransmission that fills the hole is the one echoed
    let dups = deliver(&mut s, &segs[3..6], 160 * MS);
    assert_eq!(dups.len(), 3);
    assert!(dups.iter().all(|d| d.ts.unwrap().1 == tsval(&segs[0])));
    let mut resent = segs[2];
    resent.ts = Some((170, resent.ts.unwrap().1));
    let ack = deliver(&mut s, &[resent], 175 * MS);
    assert_eq!(ack.len(), 1, "a segment that fills a hole is ACKed at once");
    assert_eq!(ack[0].ts.unwrap().1, 170);
    // then two pairs in order again
    let mut more = Vec::new();
    for (i, t_ms) in [180u64, 183, 186, 189].into_iter().enumerate() {
        c.write(MSS, 6 + i as u64, t_ms * MS, &mut out);
        more.extend(headers(&mut out));
    }
    let more: Vec<_> = more.into_iter().filter(|h| h.payload_bytes > 0).collect();
    assert_eq!(more.len(), 4);
    let ack = deliver(&mut s, &more, 230 * MS);
    assert_eq!(ack.len(), 2);
    assert_eq!(ack[0].ts.unwrap().1, 180);
    assert_eq!(ack[1].ts.unwrap().1, 186);
}

/// RFC 7323 §4.3 (2) for pure ACKs: a data sender's TS.Recent takes the TSval of each ACK that
/// starts at Last.ACK.sent (Linux `tcp_store_ts_recent`), so its next data echoes the latest
/// ACK — the receiver's RTT samples from timestamps (`tcp_rcv_rtt_measure_ts`) depend on it.
#[test]
fn a_data_sender_echoes_the_latest_pure_ack() {
    let (mut c, mut s) = pair(TcpConfig {
        delayed_ack: DelayedAckMode::Off,
        ..TcpConfig::default()
    });
    let mut out = Output::default();
    c.write(MSS, 0, 100 * MS, &mut out);
    let first = headers(&mut out);
    let acks = deliver(&mut s, &first, 150 * MS);
    assert_eq!(acks.len(), 1);
    let ack_tsval = acks[0].ts.unwrap().0;
    let handshake_echo = first[0].ts.unwrap().1;
    assert_ne!(
        ack_tsval, handshake_echo,
        "the ACK is later than the handshake"
    );
    let mut out = Output::default();
    for h in &acks {
        c.on_segment(h, 200 * MS, &mut out);
    }
    c.write(MSS, 1, 200 * MS, &mut out);
    let next: Vec<_> = headers(&mut out)
        .into_iter()
        .filter(|h| h.payload_bytes > 0)
        .collect();
    assert!(!next.is_empty());
    assert!(next.iter().all(|h| h.ts.unwrap().1 == ack_tsval));
}

/// RTT samples (`rtt_sampling`): Linux measures from the send time at full resolution and
/// falls back to the timestamp echo for a retransmitted segment; ns-3 3.37's EstimateRtt
/// takes the echo's age in whole milliseconds and nothing from a retransmitted segment.
#[test]
fn rtt_samples_follow_linux_or_ns3_rules() {
    for sampling in [RttSampling::SendTime, RttSampling::TsEcho] {
        let cfg = TcpConfig {
            delayed_ack: DelayedAckMode::Off,
            rtt_sampling: sampling,
            tlp: false,
            ..TcpConfig::default()
        };
        let (mut c, mut s) = pair(cfg.clone());
        let mut out = Output::default();
        // sent at 100.7 ms (TSval 100), acknowledged at 151.2 ms (timestamp clock 151)
        let sent_ns = 100 * MS + 700_000;
        c.write(MSS, 1, sent_ns, &mut out);
        let data = headers(&mut out);
        let ack = deliver(&mut s, &data, 125 * MS);
        assert_eq!(
            ack[0].ts.map(|t| t.1),
            Some(100),
            "the receiver echoes TSval 100"
        );
        let before = c.rtt.samples;
        deliver(&mut c, &ack, 151 * MS + 200_000);
        assert_eq!(c.rtt.samples, before + 1);
        let expected = match sampling {
            RttSampling::SendTime => 50 * MS + 500_000,
            RttSampling::TsEcho => 51 * MS,
        };
        assert_eq!(c.rtt.latest_ns, expected, "{sampling:?}");

        // a segment acknowledged after its RTO retransmission
        let (mut c, mut s, data, rto_at, resent) = rto_with_everything_outstanding(cfg);
        let mut acks = Vec::new();
        for h in data[1..].iter().chain([&resent]) {
            acks = deliver(&mut s, std::slice::from_ref(h), rto_at + 10 * MS);
        }
        let before = c.rtt.samples;
        deliver(&mut c, &acks, rto_at + 60 * MS);
        assert_eq!(c.unacked_written_bytes(), 0);
        match sampling {
            // the echo of the retransmission's TSval: 60 ms on the 1 ms clock
            RttSampling::SendTime => {
                assert_eq!(c.rtt.samples, before + 1);
                let rto_ms = rto_at / MS;
                assert_eq!(c.rtt.latest_ns, ((rto_at + 60 * MS) / MS - rto_ms) * MS);
            }
            RttSampling::TsEcho => assert_eq!(c.rtt.samples, before, "no sample (Karn)"),
        }
    }
}

/// RTL (Enhancing-TCP §3.2): a dummy's duplicate ACK is an echo only if it reports the
/// chunk complete. Dummies sent before a fast retransmission reach the receiver while the
/// hole is still open (one FIFO path) and draw ordinary duplicate ACKs, so none of them is
/// left to echo once the retransmission completes the chunk; the next chunk's duplicate ACKs
/// must all count (RFC 5681 §3.2: the third one triggers the fast retransmission).
#[test]
fn rtl_dummies_sent_before_a_fast_retransmission_leave_no_echoes_to_swallow() {
    let cfg = TcpConfig {
        sack: false,
        tlp: false,
        rtl: true,
        delayed_ack: DelayedAckMode::Off,
        // chunk B's duplicate ACKs stop at chunk A's recovery point: let them start a fast
        // recovery (under "more" none would, RFC 6582 §3.2 step 1, whatever RTL does)
        recover_covers: crate::tcp::config::RecoverCovers::Reach,
        ..TcpConfig::default()
    };
    let (mut c, mut s) = pair(cfg);
    let mut out = Output::default();
    // chunk A: ten segments at 100 ms, the eighth lost
    c.write(10 * MSS, 1, 100 * MS, &mut out);
    let a = headers(&mut out);
    assert_eq!(a.len(), 10);
    let acks = deliver(&mut s, &all_but(&a, &[7]), 125 * MS);
    // seven ACKs advance into the trailing-ACKs phase (one dummy each, up to m), two are
    // duplicates of the hole
    let from_c = deliver(&mut c, &acks, 150 * MS);
    let dummies: Vec<_> = from_c
        .iter()
        .filter(|h| h.payload_bytes == 1)
        .copied()
        .collect();
    assert!(
        !dummies.is_empty(),
        "RTL sends dummies in the trailing-ACKs phase"
    );
    assert_eq!(
        c.stats.loss.fast_recovery_count, 0,
        "two duplicate ACKs only"
    );
    // the dummies reach the receiver before any retransmission: duplicate ACKs of the hole
    let dup = deliver(&mut s, &dummies, 175 * MS);
    assert!(dup.iter().all(|h| h.ack == a[7].seq));
    let from_c = deliver(&mut c, &dup, 200 * MS);
    assert_eq!(
        c.stats.loss.fast_recovery_count, 1,
        "the third duplicate ACK"
    );
    let retx: Vec<_> = from_c
        .iter()
        .filter(|h| h.seq == a[7].seq && h.payload_bytes > 1)
        .copied()
        .collect();
    assert_eq!(retx.len(), 1);
    // the retransmission completes chunk A
    let full = deliver(&mut s, &retx, 225 * MS);
    deliver(&mut c, &full, 250 * MS);
    assert_eq!(c.stats.transfer.bytes_acked, 10 * MSS);
    // chunk B: four segments, the first lost; the other three draw three duplicate ACKs of
    // chunk A's end, which none of A's dummies can have produced
    c.write(4 * MSS, 2, 300 * MS, &mut out);
    let b = headers(&mut out);
    assert_eq!(b.len(), 4);
    let dup = deliver(&mut s, &b[1..], 325 * MS);
    assert_eq!(dup.len(), 3);
    assert!(dup.iter().all(|h| h.ack == b[0].seq));
    let from_c = deliver(&mut c, &dup, 350 * MS);
    assert_eq!(
        c.stats.loss.fast_recovery_count, 2,
        "the third duplicate ACK of chunk B must start a fast recovery"
    );
    assert!(from_c
        .iter()
        .any(|h| h.seq == b[0].seq && h.payload_bytes > 1));
}

pub(super) fn sack_cfg() -> TcpConfig {
    TcpConfig {
        sack: true,
        tlp: true,
        delayed_ack: DelayedAckMode::Off,
        ..TcpConfig::default()
    }
}

#[test]
fn a_tail_loss_is_probed_at_the_pto_and_repaired_by_fast_recovery() {
    let (mut c, mut s) = pair(sack_cfg());
    let mut out = Output::default();
    // ten segments at t = 100 ms; the last two are lost
    c.write(10 * MSS, 1, 100 * MS, &mut out);
    let data = headers(&mut out);
    assert_eq!(data.len(), 10);
    for h in &data[..8] {
        s.on_segment(h, 125 * MS, &mut out);
    }
    let acks = headers(&mut out);
    assert_eq!(acks.len(), 8, "delayed ACKs are off");
    for h in &acks {
        c.on_segment(h, 150 * MS, &mut out);
    }
    assert!(headers(&mut out).is_empty(), "nothing more to send");
    // RFC 8985 §7.2 / Linux: PTO = 2·SRTT + 2 ms with more than one packet out
    let pto_at = c
        .recovery
        .tlp_timer
        .deadline_ns()
        .expect("probe timer armed");
    assert_eq!(c.tp.srtt_ns, 50 * MS);
    assert_eq!(pto_at, 150 * MS + 2 * 50 * MS + 2 * MS);
    assert!(
        c.snd.rto_timer.deadline_ns().unwrap() > pto_at,
        "PTO fires before the RTO"
    );
    // the probe retransmits the last segment
    c.on_timer_entry(TimerKind::LossProbe, pto_at, &mut out);
    let probe = headers(&mut out);
    assert_eq!(probe.len(), 1);
    assert_eq!(
        probe[0].seq, data[9].seq,
        "the probe is the highest segment"
    );
    assert_eq!(c.stats.loss.tlp_probes, 1);
    // the receiver SACKs it; RACK marks segment 8 lost and fast recovery resends it
    s.on_segment(&probe[0], pto_at + 25 * MS, &mut out);
    let sack = headers(&mut out);
    assert_eq!(sack[0].sack_len, 1);
    c.on_segment(&sack[0], pto_at + 50 * MS, &mut out);
    let resent = headers(&mut out);
    assert_eq!(resent.len(), 1);
    assert_eq!(resent[0].seq, data[8].seq);
    assert_eq!(
        (c.stats.loss.fast_recovery_count, c.stats.loss.rto_count),
        (1, 0)
    );
    s.on_segment(&resent[0], pto_at + 75 * MS, &mut out);
    for h in headers(&mut out) {
        c.on_segment(&h, pto_at + 100 * MS, &mut out);
    }
    assert_eq!(c.unacked_written_bytes(), 0);
    assert_eq!(s.stats.transfer.bytes_received, 10 * MSS);
}

/// Ten segments go out at 100 ms; their ACKs are held past the RTO. Returns the pair, the
/// data segments, the RTO time and the segment the RTO retransmitted.
pub(super) fn rto_with_everything_outstanding(
    cfg: TcpConfig,
) -> (Endpoint, Endpoint, Vec<TcpHeader>, u64, TcpHeader) {
    let (mut c, s) = pair(cfg);
    let mut out = Output::default();
    c.write(10 * MSS, 1, 100 * MS, &mut out);
    let data = headers(&mut out);
    assert_eq!(data.len(), 10);
    let rto_at = c.snd.rto_timer.deadline_ns().expect("RTO armed");
    let cwnd_before = c.tp.cwnd_pkts;
    c.on_timer_entry(TimerKind::Rto, rto_at, &mut out);
    let resent = headers(&mut out);
    assert_eq!(resent.len(), 1, "an RTO resends the head segment");
    assert_eq!(resent[0].seq, data[0].seq);
    assert_eq!(c.tp.cwnd_pkts, 1);
    assert!(cwnd_before >= 10);
    (c, s, data, rto_at, resent[0])
}

/// RFC 3522 / Linux `tcp_try_undo_loss`: the originals were only delayed; the first ACK
/// echoes their TSval (older than the retransmission's), so the RTO is undone: cwnd and
/// ssthresh come back, nothing is marked lost, and the rest is not resent.
#[test]
fn a_spurious_rto_is_detected_by_its_timestamp_and_undone() {
    let cfg = TcpConfig {
        tlp: false,
        ..sack_cfg()
    };
    let (mut c, mut s, data, rto_at, _) = rto_with_everything_outstanding(cfg);
    let prior_cwnd = c.tp.prior_cwnd_pkts;
    let prior_ssthresh = c.tp.prior_ssthresh_pkts;
    let mut out = Output::default();
    // the delayed originals arrive; the retransmission is still on its way
    for h in &data {
        s.on_segment(h, rto_at + 10 * MS, &mut out);
    }
    let acks = headers(&mut out);
    assert!(acks.iter().all(|a| a.ts.unwrap().1 < (rto_at / MS) as u32));
    c.on_segment(&acks[0], rto_at + 30 * MS, &mut out);
    assert_eq!(c.stats.loss.spurious_rtos, 1);
    assert!(
        c.tp.cwnd_pkts >= prior_cwnd,
        "cwnd restored: {}",
        c.tp.cwnd_pkts
    );
    assert_eq!(c.tp.ssthresh_pkts, c.tp.ssthresh_pkts.max(prior_ssthresh));
    assert_eq!(c.snd.sb.lost_out, 0);
    let before = c.stats.transfer.retransmitted_segments;
    for h in &acks[1..] {
        c.on_segment(h, rto_at + 30 * MS, &mut out);
    }
    assert_eq!(
        c.stats.transfer.retransmitted_segments, before,
        "the delayed originals are not resent"
    );
    assert_eq!(c.unacked_written_bytes(), 0);
    c.snd.sb.check().unwrap();
}

/// Linux `tcp_try_undo_loss`: only F-RTO's undo or a SACK sender reopens; a sender without
/// SACK whose RTO Eifel undoes stays in Loss (cwnd restored, nothing marked lost) until snd_una
/// passes the recovery point, so the duplicate ACKs of a hole met on the way start no fast
/// recovery (`frto = false`). With F-RTO (Linux's default) the next ACK of an original never
/// retransmitted is F-RTO's undo: Open, one spurious RTO counted, and the recovery point no
/// longer refuses the duplicate ACKs of snd_una (Linux holds nothing in Open), so three of them
/// start a fast recovery. Here the originals arrive late but data[2] is lost.
#[test]
fn without_sack_an_eifel_undo_holds_the_loss_state_until_frto_or_the_recovery_point() {
    for frto in [false, true] {
        let cfg = TcpConfig {
            sack: false,
            tlp: false,
            frto,
            delayed_ack: DelayedAckMode::Off,
            ..TcpConfig::default()
        };
        let (mut c, mut s, data, rto_at, _) = rto_with_everything_outstanding(cfg);
        let recover = c.recovery.recover;
        let prior_cwnd = c.tp.prior_cwnd_pkts;
        let mut out = Output::default();
        for (i, h) in data.iter().enumerate() {
            if i != 2 {
                s.on_segment(h, rto_at + 10 * MS, &mut out);
            }
        }
        // ACKs of data[0] and data[1], then seven duplicate ACKs of data[2]'s hole
        let acks = headers(&mut out);
        assert_eq!(acks.len(), 9);
        assert!(acks[2..].iter().all(|a| a.ack == data[2].seq));
        c.on_segment(&acks[0], rto_at + 30 * MS, &mut out);
        assert_eq!(c.stats.loss.spurious_rtos, 1, "frto {frto}: Eifel");
        assert!(c.tp.cwnd_pkts >= prior_cwnd, "cwnd restored");
        assert_eq!(c.snd.sb.lost_out, 0);
        assert_eq!(c.tp.ca_state, CaState::Loss, "frto {frto}: held in Loss");
        assert_eq!(c.recovery.recover, recover);
        for a in &acks[1..] {
            c.on_segment(a, rto_at + 40 * MS, &mut out);
        }
        assert_eq!(
            c.stats.loss.spurious_rtos, 1,
            "frto {frto}: one spurious RTO"
        );
        if frto {
            assert_eq!(
                c.stats.loss.fast_recovery_count, 1,
                "Open after F-RTO's undo"
            );
            assert_eq!(c.tp.ca_state, CaState::Recovery);
        } else {
            assert_eq!(
                c.stats.loss.fast_recovery_count, 0,
                "no fast recovery while in Loss"
            );
            assert_eq!(c.tp.ca_state, CaState::Loss);
            assert!(c.snd.rto_timer.is_armed(), "the hole waits for the RTO");
        }
        c.snd.sb.check().unwrap();
    }

    // with SACK, Eifel's undo reopens at once
    let (mut c, mut s, data, rto_at, _) = rto_with_everything_outstanding(TcpConfig {
        tlp: false,
        frto: false,
        ..sack_cfg()
    });
    let acks = deliver(&mut s, &data[..1], rto_at + 10 * MS);
    deliver(&mut c, &acks, rto_at + 30 * MS);
    assert_eq!(c.stats.loss.spurious_rtos, 1);
    assert_eq!(c.tp.ca_state, CaState::Open);
}

/// The same RTO with the head segment really lost: the ACK that the retransmission
/// triggers echoes the retransmission's TSval, so nothing is undone. Without timestamps
/// there is no detection at all.
#[test]
fn a_genuine_rto_is_not_undone() {
    // F-RTO off: the late originals' SACKs below would show it the RTO spurious (Linux's
    // FLAG_ORIG_SACK_ACKED; frto_tests.rs), and this test is about the timestamp echo
    let cfg = TcpConfig {
        tlp: false,
        frto: false,
        ..sack_cfg()
    };
    let (mut c, mut s, data, rto_at, resent) = rto_with_everything_outstanding(cfg.clone());
    let prior_cwnd = c.tp.prior_cwnd_pkts;
    let mut out = Output::default();
    for h in &data[1..] {
        s.on_segment(h, rto_at + 10 * MS, &mut out);
    }
    s.on_segment(&resent, rto_at + 25 * MS, &mut out);
    let acks = headers(&mut out);
    let last = acks.last().unwrap();
    c.on_segment(last, rto_at + 50 * MS, &mut out);
    assert_eq!(c.stats.loss.spurious_rtos, 0);
    assert!(
        c.tp.ssthresh_pkts < prior_cwnd && c.tp.cwnd_pkts < prior_cwnd,
        "the reduction stays: cwnd {} ssthresh {} (before the RTO {prior_cwnd})",
        c.tp.cwnd_pkts,
        c.tp.ssthresh_pkts
    );

    let (mut c, mut s, data, rto_at, _) = rto_with_everything_outstanding(TcpConfig {
        timestamps: false,
        ..cfg
    });
    for h in &data {
        s.on_segment(h, rto_at + 10 * MS, &mut out);
    }
    for h in headers(&mut out) {
        c.on_segment(&h, rto_at + 30 * MS, &mut out);
    }
    assert_eq!(c.stats.loss.spurious_rtos, 0);
}

#[test]
fn a_duplicate_segment_is_reported_as_dsack() {
    let (mut c, mut s) = pair(sack_cfg());
    let mut out = Output::default();
    c.write(2 * MSS, 1, 100 * MS, &mut out);
    let data = headers(&mut out);
    for h in &data {
        s.on_segment(h, 125 * MS, &mut out);
    }
    headers(&mut out);
    s.on_segment(&data[0], 130 * MS, &mut out);
    let dup_ack = headers(&mut out);
    assert_eq!(dup_ack.len(), 1);
    assert_eq!(dup_ack[0].sack_len, 1);
    assert_eq!(
        dup_ack[0].sack[0].0, data[0].seq,
        "D-SACK names the duplicate"
    );
    c.on_segment(&dup_ack[0], 155 * MS, &mut out);
    assert_eq!(c.stats.loss.dsacks_received, 1);
}

/// RFC 793 §3.5 (Figure 13, normal close): the side that closes first goes through
/// FIN-WAIT-1, FIN-WAIT-2 and TIME-WAIT, the other through CLOSE-WAIT, LAST-ACK and CLOSED;
/// each side's data is delivered before its FIN, and the states print as the RFC names them.
#[test]
fn a_normal_close_walks_the_rfc_793_states_on_both_sides() {
    use super::State;
    let cfg = TcpConfig {
        delayed_ack: DelayedAckMode::Off,
        ..TcpConfig::default()
    };
    let (mut c, mut s) = pair(cfg);
    assert_eq!((c.state, s.state), (State::Established, State::Established));
    let mut out = Output::default();
    c.write(3000, 1, 100 * MS, &mut out);
    c.close(100 * MS, &mut out);
    assert_eq!(c.state, State::FinWait1);
    // the data and the FIN reach the server; its ACKs reach the client
    let to_client = deliver(&mut s, &headers(&mut out), 125 * MS);
    assert_eq!(s.state, State::CloseWait);
    assert_eq!(s.stats.transfer.bytes_received, 3000);
    assert!(s.rcv.peer_closed);
    let back = deliver(&mut c, &to_client, 150 * MS);
    assert!(back.is_empty(), "an ACK of everything needs no answer");
    assert_eq!(c.state, State::FinWait2);
    // the server closes in turn
    let mut out = Output::default();
    s.close(160 * MS, &mut out);
    assert_eq!(s.state, State::LastAck);
    let fin = headers(&mut out);
    assert_eq!(fin.len(), 1);
    let ack = deliver(&mut c, &fin, 185 * MS);
    assert_eq!(c.state, State::TimeWait);
    deliver(&mut s, &ack, 210 * MS);
    assert_eq!(s.state, State::Closed);
    assert_eq!(c.state.to_string(), "TIME-WAIT");
    assert_eq!(State::FinWait1.to_string(), "FIN-WAIT-1");
    // TIME-WAIT still answers a retransmitted FIN with an ACK
    assert_eq!(deliver(&mut c, &fin, 400 * MS).len(), 1);
}

/// ns-3's `TcpSocketBase` counts the window in bytes (`window_accounting = "bytes"`;
/// `AvailableWindow`, `SendPendingData`'s silly-window check, tcp-socket-base.cc): with a cwnd
/// of 10 segments and 500 bytes of per-ACK growth, a write of 10 segments and 440 bytes goes
/// out whole, its short last segment on the 500 bytes; Linux (`packets`) keeps it for a free
/// packet. 300 bytes are not enough for it, and 500 bytes never let a full segment leave. A
/// short segment in flight counts its own bytes: after 440 bytes alone, 10 full segments
/// still fit in 10 segments and 1,100 bytes.
#[test]
fn a_short_last_segment_leaves_on_the_bytes_left_in_a_byte_counted_window() {
    use crate::tcp::config::{CwndGrowth, WindowAccounting};
    let sent = |accounting: WindowAccounting, credit: u32, writes: &[u64]| -> Vec<u32> {
        let cfg = TcpConfig {
            delayed_ack: DelayedAckMode::Off,
            cwnd_growth: CwndGrowth::PerAck,
            window_accounting: accounting,
            ..TcpConfig::default()
        };
        let (mut c, _s) = pair(cfg);
        c.tp.ssthresh_pkts = 5;
        assert_eq!(c.tp.cwnd_pkts, 10);
        c.tp.ack_credit_bytes = credit;
        c.tp.ack_credit_cwnd_pkts = 10;
        let mut out = Output::default();
        for (k, &bytes) in writes.iter().enumerate() {
            c.write(bytes, k as u64, 100 * MS, &mut out);
        }
        headers(&mut out).iter().map(|h| h.payload_bytes).collect()
    };
    let full = |n: usize| vec![MSS as u32; n];
    let with_tail = [full(10), vec![440]].concat();
    let (bytes, packets) = (WindowAccounting::Bytes, WindowAccounting::Packets);
    assert_eq!(sent(bytes, 500, &[10 * MSS + 440]), with_tail);
    assert_eq!(sent(packets, 500, &[10 * MSS + 440]), full(10));
    assert_eq!(sent(bytes, 300, &[10 * MSS + 440]), full(10));
    assert_eq!(sent(bytes, 500, &[11 * MSS]), full(10));
    assert_eq!(
        sent(bytes, 1100, &[440, 10 * MSS]),
        [vec![440], full(10)].concat()
    );
    assert_eq!(
        sent(packets, 1100, &[440, 10 * MSS]),
        [vec![440], full(9)].concat()
    );
}

/// What each `pkts_acked` call got: (packets acknowledged, RTT sample).
type Calls = Arc<Mutex<Vec<(u32, Option<u64>)>>>;

/// The flags of each `in_ack_event` call, and [`DATA_SEGMENT`] for each `in_data_segment`.
type AckEvents = Arc<Mutex<Vec<u32>>>;

/// What [`Recorder`] records for an `in_data_segment` call.
const DATA_SEGMENT: u32 = u32::MAX;

/// Reno that records its `pkts_acked`, `in_ack_event` and `in_data_segment` calls.
#[derive(Default)]
struct Recorder {
    acked: Calls,
    events: AckEvents,
}

impl CongestionControl for Recorder {
    fn name(&self) -> &'static str {
        "recorder"
    }
    fn ssthresh(&mut self, tp: &CcState) -> u32 {
        (tp.cwnd_pkts / 2).max(2)
    }
    fn cong_avoid(&mut self, tp: &mut CcState, acked_pkts: u32) {
        tp.reno_grow(acked_pkts);
    }
    fn pkts_acked(&mut self, _tp: &mut CcState, sample: &AckSample) {
        self.acked
            .lock()
            .unwrap()
            .push((sample.pkts_acked, sample.rtt_ns));
    }
    fn in_ack_event(&mut self, _tp: &mut CcState, flags: u32) {
        self.events.lock().unwrap().push(flags);
    }
    fn in_data_segment(&mut self, _tp: &mut CcState) {
        self.events.lock().unwrap().push(DATA_SEGMENT);
    }
}

/// `ca_sample`: by default `pkts_acked` runs on ACKs of new data with the RTO estimator's
/// sample (the oldest segment acknowledged); with `"linux"` it runs on every ACK that finds
/// data outstanding, as Linux's `tcp_clean_rtx_queue` calls it, with the RTT of the newest
/// segment newly SACKed, else newly acknowledged, else the timestamp echo when retransmitted
/// data was acknowledged (`tcp_ack_update_rtt`).
#[test]
fn pkts_acked_follows_linux_with_ca_sample_linux() {
    for mode in [CaSample::NewAck, CaSample::Linux] {
        let cfg = TcpConfig {
            ca_sample: mode,
            tlp: false,
            rack: Some(true),
            ..sack_cfg()
        };
        let rec = Recorder::default();
        let calls = rec.acked.clone();
        let (mut c, mut s) = pair_with_cc(cfg, Box::new(rec));
        let mut out = Output::default();
        // two segments 10 ms apart; one ACK (the second) covers both, 60 ms after the first
        c.write(MSS, 1, 100 * MS, &mut out);
        c.write(MSS, 2, 110 * MS, &mut out);
        let data = headers(&mut out);
        let acks = deliver(&mut s, &data, 130 * MS);
        assert_eq!(acks.len(), 2, "delayed ACKs are off");
        c.on_segment(&acks[1], 160 * MS, &mut out);
        let oldest_first = if mode == CaSample::Linux { 50 } else { 60 };
        assert_eq!(
            calls.lock().unwrap().clone(),
            vec![(2, Some(oldest_first * MS))]
        );
        calls.lock().unwrap().clear();
        // five segments at 200 ms, the second lost: one ACK of new data, three that only SACK
        let (data, acks) = write_with_losses(&mut c, &mut s, 5 * MSS, 200 * MS, &[1], 230 * MS);
        assert_eq!(acks.len(), 4);
        for h in &acks {
            c.on_segment(h, 260 * MS, &mut out);
        }
        let resent = headers(&mut out);
        assert_eq!(
            resent.first().map(|h| h.seq),
            Some(data[1].seq),
            "fast retransmit"
        );
        let got = calls.lock().unwrap().clone();
        if mode == CaSample::Linux {
            assert_eq!(
                got,
                vec![
                    (1, Some(60 * MS)),
                    (0, Some(60 * MS)),
                    (0, Some(60 * MS)),
                    (0, Some(60 * MS))
                ]
            );
        } else {
            assert_eq!(got, vec![(1, Some(60 * MS))]);
        }
        calls.lock().unwrap().clear();
        // the retransmission's ACK covers it and the SACKed segments: no send-time sample
        // (Karn); Linux falls back to the timestamp echo (resent at 260 ms, ACKed at 320 ms)
        let ack = deliver(&mut s, &resent[..1], 290 * MS);
        c.on_segment(&ack[0], 320 * MS, &mut out);
        let got = calls.lock().unwrap().clone();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].0, 4, "the hole and the three SACKed segments");
        assert_eq!(got[0].1, Some(60 * MS), "{mode:?}");
    }
}

/// Linux `tcp_clean_rtx_queue` runs on every ACK that finds data outstanding, and its
/// `tcp_ack_update_rtt` gives the RTO estimator the oldest newly SACKed segment's RTT when the
/// cumulative ACK gives none (`rtt_sampling = "send-time"`, the default); ns-3 3.37's
/// `EstimateRtt` samples only ACKs that cover the oldest outstanding segment (`"ts-echo"`).
#[test]
fn an_ack_that_only_sacks_feeds_the_rto_estimator_as_linux_does() {
    for sampling in [RttSampling::SendTime, RttSampling::TsEcho] {
        let cfg = TcpConfig {
            rtt_sampling: sampling,
            tlp: false,
            rack: Some(false),
            ..sack_cfg()
        };
        let (mut c, mut s) = pair(cfg);
        let mut out = Output::default();
        assert_eq!(c.tp.srtt_ns, 50 * MS, "the handshake's sample");
        // five segments at 200 ms, the first lost: the second's ACK SACKs it at 290 ms (90 ms)
        let (_, acks) = write_with_losses(&mut c, &mut s, 5 * MSS, 200 * MS, &[0], 230 * MS);
        c.on_segment(&acks[0], 290 * MS, &mut out);
        let want = match sampling {
            RttSampling::SendTime => (7 * 50 + 90) * MS / 8,
            RttSampling::TsEcho => 50 * MS,
        };
        assert_eq!(c.tp.srtt_ns, want, "{sampling:?}");
    }
}

/// `ca_sample = "ns3"`: `pkts_acked` where ns-3.37's `TcpSocketBase::ProcessAck` calls
/// `PktsAcked`, with the smoothed RTT, worked by hand without SACK: six segments, the second
/// lost. The ACK of the first counts 1 (Open, `segsAcked`); each of the four duplicate ACKs
/// counts 1 ("after all, one segment has been ACKed"), the third of them also starting fast
/// recovery; the retransmission's ACK ends it and counts (ACK − old snd_una)/MSS = 5. The
/// default (`new-ack`) calls it on the two ACKs of new data only.
#[test]
fn pkts_acked_follows_ns3_with_ca_sample_ns3() {
    for mode in [CaSample::NewAck, CaSample::Ns3] {
        let cfg = TcpConfig {
            ca_sample: mode,
            sack: false,
            tlp: false,
            timestamps: false,
            delayed_ack: DelayedAckMode::Off,
            ..TcpConfig::default()
        };
        let rec = Recorder::default();
        let calls = rec.acked.clone();
        let (mut c, mut s) = pair_with_cc(cfg, Box::new(rec));
        let (_, acks) = write_with_losses(&mut c, &mut s, 6 * MSS, 100 * MS, &[1], 125 * MS);
        assert_eq!(acks.len(), 5);
        let srtt_before = c.tp.srtt_ns;
        // the first ACK's sample, 60 ms, moves SRTT from the handshake's 50 ms
        let resent = deliver(&mut c, &acks, 160 * MS);
        let srtt_first = c.tp.srtt_ns;
        assert_ne!(srtt_first, srtt_before, "the first ACK's sample moves SRTT");
        assert_eq!(c.tp.ca_state, CaState::Recovery);
        let last = deliver(&mut s, &resent[..1], 175 * MS);
        deliver(&mut c, &last, 200 * MS);
        assert_eq!(c.tp.ca_state, CaState::Open);
        assert_eq!(c.unacked_written_bytes(), 0);
        let got = std::mem::take(&mut *calls.lock().unwrap());
        let counts: Vec<u32> = got.iter().map(|&(n, _)| n).collect();
        match mode {
            CaSample::Ns3 => {
                assert_eq!(counts, [1, 1, 1, 1, 1, 5]);
                let srtt_end = c.tp.srtt_ns;
                let rtts: Vec<Option<u64>> = got.iter().map(|&(_, r)| r).collect();
                assert_eq!(rtts[..5], [Some(srtt_first); 5]);
                assert_eq!(rtts[5], Some(srtt_end));
            }
            _ => assert_eq!(counts, [1, 5]),
        }
    }
}

/// Reno that records the name of each hook it is called through, in order.
#[derive(Default)]
struct HookOrder {
    log: Arc<Mutex<Vec<String>>>,
}

impl CongestionControl for HookOrder {
    fn name(&self) -> &'static str {
        "hook-order"
    }
    fn ssthresh(&mut self, tp: &CcState) -> u32 {
        self.log.lock().unwrap().push("ssthresh".into());
        (tp.cwnd_pkts / 2).max(2)
    }
    fn cong_avoid(&mut self, tp: &mut CcState, acked_pkts: u32) {
        self.log.lock().unwrap().push("cong_avoid".into());
        tp.reno_grow(acked_pkts);
    }
    fn set_state(&mut self, _tp: &mut CcState, new_state: crate::tcp::cc::CaState) {
        self.log
            .lock()
            .unwrap()
            .push(format!("set_state {new_state:?}"));
    }
    fn pkts_acked(&mut self, _tp: &mut CcState, _sample: &AckSample) {
        self.log.lock().unwrap().push("pkts_acked".into());
    }
    fn in_ack_event(&mut self, _tp: &mut CcState, _flags: u32) {
        self.log.lock().unwrap().push("in_ack_event".into());
    }
}

/// A pair whose sender runs [`HookOrder`] under `cfg`, and a function that takes the hooks
/// logged since it was last called.
fn pair_with_hook_log(cfg: TcpConfig) -> (Endpoint, Endpoint, impl Fn() -> Vec<String>) {
    let rec = HookOrder::default();
    let log = rec.log.clone();
    let (c, s) = pair_with_cc(cfg, Box::new(rec));
    (c, s, move || std::mem::take(&mut *log.lock().unwrap()))
}

/// Linux `tcp_ack` (6.15 and later; the live testbed runs 6.18) calls `in_ack_event` after
/// `tcp_clean_rtx_queue` (`pkts_acked`) and before `tcp_fastretrans_alert` (ssthresh and the
/// state changes of entering or leaving recovery) and `tcp_cong_control` (`cong_avoid`): what
/// an algorithm estimates in `in_ack_event` (Westwood+, TIBET) is current when it sets ssthresh
/// on the same ACK. Before 6.15 `in_ack_event` ran before `pkts_acked`, and before recovery too.
/// The ACK that ends recovery also grows cwnd, after the state is Open.
#[test]
fn in_ack_event_runs_after_pkts_acked_and_before_recovery_and_cong_avoid() {
    let cfg = TcpConfig {
        tlp: false,
        rack: Some(false),
        ..sack_cfg()
    };
    let (mut c, mut s, take) = pair_with_hook_log(cfg);
    let mut out = Output::default();
    // an ACK of new data in Open
    let (_, acks) = write_with_losses(&mut c, &mut s, MSS, 100 * MS, &[], 125 * MS);
    take();
    c.on_segment(&acks[0], 150 * MS, &mut out);
    assert_eq!(take(), ["pkts_acked", "in_ack_event", "cong_avoid"]);
    // five segments, the first lost: the third ACK that SACKs new data starts recovery
    let (_, acks) = write_with_losses(&mut c, &mut s, 5 * MSS, 200 * MS, &[0], 230 * MS);
    assert_eq!(acks.len(), 4);
    take();
    c.on_segment(&acks[0], 260 * MS, &mut out);
    assert_eq!(take(), ["in_ack_event", "set_state Disorder"]);
    c.on_segment(&acks[1], 260 * MS, &mut out);
    take();
    c.on_segment(&acks[2], 260 * MS, &mut out);
    assert_eq!(
        take(),
        ["in_ack_event", "ssthresh", "set_state Recovery"],
        "Linux tcp_enter_recovery: ssthresh, then the state"
    );
    c.on_segment(&acks[3], 260 * MS, &mut out);
    let resent = headers(&mut out);
    // the retransmission's ACK covers everything: recovery ends after in_ack_event, and the
    // same ACK then grows cwnd (Linux tcp_cong_control finds the state Open and calls
    // tcp_cong_avoid; ns-3.37 ProcessAck calls IncreaseWindow)
    let ack = deliver(&mut s, &resent[..1], 290 * MS);
    take();
    c.on_segment(&ack[0], 320 * MS, &mut out);
    assert_eq!(
        take(),
        ["pkts_acked", "in_ack_event", "set_state Open", "cong_avoid"]
    );
}

/// Linux `tcp_ack` calls `in_ack_event` on every ACK that is neither old nor for unsent data:
/// an ACK of new data, a duplicate ACK, a pure ACK with nothing outstanding. A data segment
/// that acknowledges nothing new, such as a client's next request after an OFF period, takes
/// `tcp_rcv_established`'s fast path, which does not call `tcp_ack`: the algorithm hears of
/// it through `in_data_segment` only. An old ACK reaches no hook. The flags are Linux 6.15's
/// (`tcp_in_ack_event(sk, flag)`): `CA_ACK_SLOWPATH` when header prediction fails (SACK
/// blocks, a new window), whether or not snd_una advanced; `CA_ACK_WIN_UPDATE` when snd_una
/// advanced or the window grew.
#[test]
fn in_ack_event_runs_on_every_ack_linux_tcp_ack_processes() {
    use crate::tcp::cc::{CA_ACK_SLOWPATH, CA_ACK_WIN_UPDATE};
    let rec = Recorder::default();
    let events = rec.events.clone();
    let take = || std::mem::take(&mut *events.lock().unwrap());
    let (mut c, mut s) = pair_with_cc(
        TcpConfig {
            tlp: false,
            ..sack_cfg()
        },
        Box::new(rec),
    );
    take(); // the handshake's
    let mut out = Output::default();
    // every ACK below advertises the window the sender holds, unless it says otherwise
    let raw_window = (c.snd.wnd_bytes >> c.snd.wscale) as u16;
    let same_window = |h: &TcpHeader| TcpHeader {
        window: raw_window,
        ..*h
    };
    // a first exchange scales the window the SYN left unscaled (a new window: the slow path,
    // as Linux's first ACK after the handshake, whose pred_flags are 0 with window scaling)
    let (_, first) = write_with_losses(&mut c, &mut s, MSS, 80 * MS, &[], 90 * MS);
    c.on_segment(&same_window(&first[0]), 95 * MS, &mut out);
    take();
    // three segments; the second lost: an ACK of new data, then a duplicate that SACKs
    let (data, acks) = write_with_losses(&mut c, &mut s, 3 * MSS, 100 * MS, &[1], 125 * MS);
    assert_eq!(acks.len(), 2);
    assert!(acks[0].sack_len == 0 && acks[1].sack_len > 0);
    for h in &acks {
        c.on_segment(&same_window(h), 150 * MS, &mut out);
    }
    assert_eq!(take(), vec![CA_ACK_WIN_UPDATE, CA_ACK_SLOWPATH]);
    // the hole filled: everything acknowledged (no SACK blocks: the fast path although the
    // sender is in Disorder), then the first ACK again (old): no event
    let ack = deliver(&mut s, &data[1..2], 175 * MS);
    c.on_segment(&same_window(&ack[0]), 200 * MS, &mut out);
    c.on_segment(&same_window(&acks[0]), 201 * MS, &mut out);
    assert_eq!(take(), vec![CA_ACK_WIN_UPDATE]);
    assert!(c.snd.sb.is_empty());
    // the peer's request, 1 s later: a data segment acknowledging nothing new
    s.write(400, 1, 1200 * MS, &mut out);
    let request = headers(&mut out);
    assert_eq!(request.len(), 1);
    assert!(request[0].payload_bytes > 0);
    c.on_segment(&same_window(&request[0]), 1225 * MS, &mut out);
    assert_eq!(take(), vec![DATA_SEGMENT]);
    // a pure ACK with nothing outstanding (the same ACK number again), then one that opens the
    // window: the fast path, then the slow path with a window update
    let mut pure = same_window(&request[0]);
    pure.payload_bytes = 0;
    pure.seq = request[0].seq.wrapping_add(400);
    c.on_segment(&pure, 1226 * MS, &mut out);
    pure.window = raw_window + 1;
    c.on_segment(&pure, 1227 * MS, &mut out);
    assert_eq!(take(), vec![0, CA_ACK_WIN_UPDATE | CA_ACK_SLOWPATH]);
}

/// What the ACK that ends an RTO's hole counts for in cwnd growth. Ten segments are out when
/// the RTO fires (cwnd 1, ssthresh 5); the originals but the first and the last arrive late
/// and are SACKed; then the retransmission of the first fills the hole, and its ACK covers
/// nine segments, below the recovery point. Linux (`growth_count = "delivered"`,
/// `tcp_cong_avoid(sk, ack, acked_sacked)`) counts the one segment it newly delivered: slow
/// start from 1 to 2. ns-3's `ProcessAck` (`"cumulative"`) calls `IncreaseWindow` with the nine
/// segments the cumulative ACK covers: slow start reaches ssthresh on this one ACK (1 + 4) and
/// the five left over are a whole window of congestion avoidance, one more (Linux's Reno and
/// ns-3's `TcpLinuxReno::SlowStart` both hand the rest to congestion avoidance): 6. Linux 3.19
/// (`"linux-3.19"`, `tcp_cong_avoid(sk, ack, acked)` with the segments `tcp_clean_rtx_queue`
/// removed) counts the nine as well: 6.
#[test]
fn the_ack_that_fills_an_rto_hole_counts_what_linux_or_ns3_counts() {
    use crate::tcp::config::GrowthCount;
    for mode in [
        GrowthCount::Delivered,
        GrowthCount::Cumulative,
        GrowthCount::Linux319,
    ] {
        // F-RTO off (as in ns-3): with it, the SACKs of the late originals would undo the RTO
        let cfg = TcpConfig {
            tlp: false,
            growth_count: mode,
            frto: false,
            ..sack_cfg()
        };
        let (mut c, mut s, data, rto_at, resent) = rto_with_everything_outstanding(cfg);
        assert_eq!(c.tp.ssthresh_pkts, 5);
        let mut out = Output::default();
        for h in &data[1..9] {
            s.on_segment(h, rto_at + 10 * MS, &mut out);
        }
        for h in headers(&mut out) {
            assert!(h.sack_len > 0);
            c.on_segment(&h, rto_at + 35 * MS, &mut out);
        }
        assert_eq!(c.snd.sb.sacked_out, 8);
        assert_eq!(c.tp.cwnd_pkts, 1, "{mode:?}: SACKs in Loss grow nothing");
        out.packets.clear();
        s.on_segment(&resent, rto_at + 25 * MS, &mut out);
        let acks = headers(&mut out);
        let ack = acks.last().unwrap();
        c.on_segment(ack, rto_at + 50 * MS, &mut out);
        assert_eq!(
            c.snd.una,
            data[9].seq.wrapping_sub(c.snd.iss) as u64,
            "{mode:?}"
        );
        let want = match mode {
            GrowthCount::Delivered => 2,
            GrowthCount::Cumulative | GrowthCount::Linux319 => 6,
        };
        assert_eq!(c.tp.cwnd_pkts, want, "{mode:?}");
    }
}

/// An ACK that acknowledges new data and SACKs new data outside recovery (with delayed ACKs,
/// the first ACK after a hole): Linux grows cwnd by what it delivered (`tcp_cong_control` in
/// Disorder: the acknowledged segment and the SACKed one, slow start 10 → 12); to ns-3's
/// `ProcessAck` it is a duplicate ACK (`isDupack = scoreboardUpdated`), `DupAck` moves Open
/// to Disorder and `IncreaseWindow` runs only in Open: cwnd stays (`growth_count =
/// "cumulative"`). Linux 3.19 (`"linux-3.19"`) counts the one segment the ACK removed (10 → 11).
#[test]
fn an_ack_that_advances_and_sacks_grows_cwnd_in_linux_not_in_ns3() {
    use crate::tcp::config::GrowthCount;
    for mode in [
        GrowthCount::Delivered,
        GrowthCount::Cumulative,
        GrowthCount::Linux319,
    ] {
        let cfg = TcpConfig {
            sack: true,
            delayed_ack: DelayedAckMode::On,
            growth_count: mode,
            ..TcpConfig::default()
        };
        let (mut c, mut s) = pair(cfg);
        let mut out = Output::default();
        // a whole window, so that cwnd is the limit (Linux `tcp_is_cwnd_limited`)
        c.write(10 * MSS, 1, 100 * MS, &mut out);
        let data = headers(&mut out);
        let cwnd_before = c.tp.cwnd_pkts;
        assert_eq!(cwnd_before, 10);
        let ack = deliver(&mut s, &[data[0], data[2]], 125 * MS);
        assert_eq!(
            (ack.len(), ack[0].ack, ack[0].sack_len),
            (1, data[1].seq, 1)
        );
        deliver(&mut c, &ack, 150 * MS);
        assert_eq!(c.tp.ca_state, crate::tcp::cc::CaState::Disorder, "{mode:?}");
        let want = match mode {
            GrowthCount::Delivered => cwnd_before + 2,
            GrowthCount::Cumulative => cwnd_before,
            GrowthCount::Linux319 => cwnd_before + 1,
        };
        assert_eq!(c.tp.cwnd_pkts, want, "{mode:?}");
    }
}

/// A sender with cwnd 10, RFC 5681 delayed ACKs at the receiver and `rule`, that writes `segs`
/// (> 10) segments at 100 ms: the first round stops with cwnd full and data left, so either
/// rule sets the flag for that window with `max_packets_out` 10. Returns the pair, the ten
/// segments sent and the output buffer.
fn first_round_cwnd_limited(
    rule: crate::tcp::config::CwndLimited,
    segs: u64,
) -> (Endpoint, Endpoint, Vec<TcpHeader>, Output) {
    let cfg = TcpConfig {
        delayed_ack: DelayedAckMode::On,
        cwnd_limited: rule,
        ..TcpConfig::default()
    };
    let (mut c, s) = pair(cfg);
    let mut out = Output::default();
    c.write(segs * MSS, 1, 100 * MS, &mut out);
    let data = headers(&mut out);
    assert_eq!(data.len(), 10);
    assert!(c.tp.is_cwnd_limited, "{rule:?}: cwnd full with data left");
    assert_eq!(c.tp.max_packets_out, 10);
    (c, s, data, out)
}

/// Twelve segments with cwnd 10: the first round stops with cwnd full and data left, so both
/// rules set the flag for that window (`max_packets_out` 10). The first ACK (two segments,
/// delayed ACKs) grows cwnd to 12 and sends the last two, with room left in cwnd; the remaining
/// ACKs send nothing, and the last of them ends the window. Neither kernel validates cwnd
/// then: `tcp_write_xmit` runs only with unsent data (`tcp_push_pending_frames` tests
/// `tcp_send_head`), so the flag and `max_packets_out` stay through the window's tail, and
/// the window's last ACKs may still grow cwnd. Then an application-limited send of one
/// segment in the next window overwrites them (`!before(snd_una, max_packets_seq)`, 5.11+
/// `cwnd_usage_seq`): the flag is cleared, `max_packets_out` is the new flight.
#[test]
fn the_cwnd_limited_flag_holds_through_rounds_that_send_nothing() {
    use crate::tcp::config::CwndLimited;
    for rule in [CwndLimited::Linux, CwndLimited::Linux319] {
        let (mut c, mut s, data, mut out) = first_round_cwnd_limited(rule, 12);
        let acks = deliver(&mut s, &data, 125 * MS);
        assert_eq!(acks.len(), 5, "one ACK per two segments");
        let tail = deliver(&mut c, &acks[..1], 150 * MS);
        assert_eq!(tail.len(), 2, "{rule:?}: the last two segments leave");
        for (i, ack) in acks[1..].iter().enumerate() {
            assert!(deliver(&mut c, &[*ack], 150 * MS + i as u64).is_empty());
        }
        assert_eq!(c.snd.sb.len(), 2, "the window's ten are acknowledged");
        assert_eq!(
            (c.tp.is_cwnd_limited, c.tp.max_packets_out),
            (true, 10),
            "{rule:?}: after the window ended with nothing sent"
        );
        c.write(MSS, 2, 160 * MS, &mut out);
        assert_eq!(headers(&mut out).len(), 1);
        assert_eq!(
            (c.tp.is_cwnd_limited, c.tp.max_packets_out),
            (false, 3),
            "{rule:?}: an application-limited send in the next window"
        );
    }
}

/// Thirteen segments with cwnd 10: the first round is cwnd-limited (flag set, 10 out); the
/// first ACK acknowledges two, grows cwnd to 12 and lets the last three leave, 11 out, with
/// room left in cwnd. In 3.16-3.19 a flight above `max_packets_out` overwrites the flag with
/// this round's (`tp->packets_out > tp->max_packets_out`): cleared, and congestion avoidance
/// would not grow. Linux 5.18+ keeps a set flag for the rest of the window (`(!is_cwnd_limited
/// && packets_out > max_packets_out)`).
#[test]
fn linux_3_19_clears_the_flag_when_a_longer_flight_finds_room_in_cwnd() {
    use crate::tcp::config::CwndLimited;
    for rule in [CwndLimited::Linux, CwndLimited::Linux319] {
        let (mut c, mut s, data, _) = first_round_cwnd_limited(rule, 13);
        let acks = deliver(&mut s, &data[..2], 125 * MS);
        assert_eq!(acks.len(), 1);
        let tail = deliver(&mut c, &acks, 150 * MS);
        assert_eq!(tail.len(), 3);
        assert_eq!((c.tp.cwnd_pkts, c.snd.sb.len()), (12, 11));
        let (flag, max_out) = match rule {
            CwndLimited::Linux => (true, 10),
            CwndLimited::Linux319 => (false, 11),
        };
        assert_eq!(
            (c.tp.is_cwnd_limited, c.tp.max_packets_out),
            (flag, max_out),
            "{rule:?}"
        );
    }
}

/// Ten segments written with cwnd 10: the round sends them all and stops because the data
/// ran out, with cwnd just full. Linux 5.11+'s `tcp_write_xmit` counts it cwnd-limited
/// (`is_cwnd_limited |= (tcp_packets_in_flight(tp) >= tcp_snd_cwnd(tp))` after the loop);
/// 3.16-3.19 set the flag only when `tcp_cwnd_test` gave no quota to a segment waiting to
/// leave, which never happened. Both validate (new data left): `max_packets_out` is 10.
#[test]
fn linux_counts_a_round_that_fills_cwnd_with_its_last_data_as_cwnd_limited() {
    use crate::tcp::config::CwndLimited;
    for (rule, flag) in [(CwndLimited::Linux, true), (CwndLimited::Linux319, false)] {
        let cfg = TcpConfig {
            cwnd_limited: rule,
            ..TcpConfig::default()
        };
        let (mut c, _s) = pair(cfg);
        let mut out = Output::default();
        c.write(10 * MSS, 1, 100 * MS, &mut out);
        assert_eq!(headers(&mut out).len(), 10);
        assert_eq!(c.tp.cwnd_pkts, 10);
        assert_eq!(
            (c.tp.is_cwnd_limited, c.tp.max_packets_out),
            (flag, 10),
            "{rule:?}"
        );
    }
}

/// A tail loss probe that sends new data with cwnd full: `tcp_send_loss_probe` sends it
/// through `tcp_write_xmit(.., push_one = 2)`, which forces it out and validates cwnd, the
/// round cwnd-limited (3.16-3.19: cwnd had no quota; 5.11+: the flight of 11 is at least
/// cwnd): the flight raises `max_packets_out` and moves the window's end past the probe.
#[test]
fn a_loss_probe_of_new_data_validates_cwnd() {
    use crate::tcp::config::CwndLimited;
    for rule in [CwndLimited::Linux, CwndLimited::Linux319] {
        let cfg = TcpConfig {
            cwnd_limited: rule,
            ..sack_cfg()
        };
        let (mut c, _s) = pair(cfg);
        let mut out = Output::default();
        c.write(20 * MSS, 1, 100 * MS, &mut out);
        assert_eq!(headers(&mut out).len(), 10);
        let window_end = c.snd.nxt;
        assert_eq!(
            (
                c.tp.is_cwnd_limited,
                c.tp.max_packets_out,
                c.snd.cwnd_usage_seq
            ),
            (true, 10, window_end)
        );
        let pto_at = c.recovery.tlp_timer.deadline_ns().expect("probe armed");
        c.on_timer_entry(TimerKind::LossProbe, pto_at, &mut out);
        let probe = headers(&mut out);
        assert_eq!(probe.len(), 1);
        assert_eq!(probe[0].seq.wrapping_sub(c.snd.iss) as u64, window_end);
        assert_eq!(
            (
                c.tp.is_cwnd_limited,
                c.tp.max_packets_out,
                c.snd.cwnd_usage_seq
            ),
            (true, 11, c.snd.nxt),
            "{rule:?}"
        );
    }
}

/// `ca_sample = "linux-3.19"`: Linux 3.19's `tcp_clean_rtx_queue` calls `pkts_acked` only when
/// the cumulative ACK removed a segment (`FLAG_ACKED`), with the segments removed and
/// `ca_seq_rtt_us` from `last_ackt`: the newest removed segment never retransmitted, SACKed
/// before or not, even when the same ACK also removes a retransmitted one; none when every
/// removed segment was retransmitted (no SACK or timestamp fallback). The default (`new-ack`)
/// gives the RTO estimator's sample: the oldest segment, Karn, then the timestamp echo.
#[test]
fn pkts_acked_follows_linux_3_19_with_ca_sample_linux_3_19() {
    for mode in [CaSample::NewAck, CaSample::Linux319] {
        let v319 = mode == CaSample::Linux319;
        let cfg = TcpConfig {
            ca_sample: mode,
            tlp: false,
            rack: Some(true),
            ..sack_cfg()
        };
        let rec = Recorder::default();
        let calls = rec.acked.clone();
        let take = || std::mem::take(&mut *calls.lock().unwrap());
        let (mut c, mut s) = pair_with_cc(cfg, Box::new(rec));
        let mut out = Output::default();
        // two segments 10 ms apart; one ACK (the second) covers both, 60 ms after the first
        c.write(MSS, 1, 100 * MS, &mut out);
        c.write(MSS, 2, 110 * MS, &mut out);
        let data = headers(&mut out);
        let acks = deliver(&mut s, &data, 130 * MS);
        c.on_segment(&acks[1], 160 * MS, &mut out);
        let rtt = if v319 { 50 } else { 60 };
        assert_eq!(
            take(),
            vec![(2, Some(rtt * MS))],
            "{mode:?}: the newest, or the oldest"
        );
        // five segments at 200 ms, the second lost: one ACK of new data, three that only SACK
        // (3.19: no call for those)
        let (data, acks) = write_with_losses(&mut c, &mut s, 5 * MSS, 200 * MS, &[1], 230 * MS);
        assert_eq!(acks.len(), 4);
        for h in &acks {
            c.on_segment(h, 260 * MS, &mut out);
        }
        let resent = headers(&mut out);
        assert_eq!(resent.first().map(|h| h.seq), Some(data[1].seq));
        assert_eq!(take(), vec![(1, Some(60 * MS))], "{mode:?}");
        // the retransmission's ACK removes it and the three SACKed originals, sent at 200 ms:
        // 3.19 takes the newest of those (120 ms); new-ack's Karn falls back to the timestamp
        // echo of the retransmission (resent at 260 ms, ACKed at 320 ms)
        let ack = deliver(&mut s, &resent[..1], 290 * MS);
        c.on_segment(&ack[0], 320 * MS, &mut out);
        let rtt = if v319 { 120 } else { 60 };
        assert_eq!(take(), vec![(4, Some(rtt * MS))], "{mode:?}");
        assert!(c.snd.sb.is_empty());
        // one segment, lost; the RTO resends it and its ACK removes only retransmitted data:
        // 3.19 passes no sample (-1), new-ack the timestamp echo
        c.write(MSS, 3, 400 * MS, &mut out);
        out.packets.clear();
        let rto_at = c.snd.rto_timer.deadline_ns().expect("RTO armed");
        c.on_timer_entry(TimerKind::Rto, rto_at, &mut out);
        let resent = headers(&mut out);
        assert_eq!(resent.len(), 1);
        let ack = deliver(&mut s, &resent, rto_at + 25 * MS);
        c.on_segment(&ack[0], rto_at + 50 * MS, &mut out);
        let got = take();
        assert_eq!(got.len(), 1, "{mode:?}");
        assert_eq!(got[0].0, 1);
        assert_eq!(got[0].1.is_some(), !v319, "{mode:?}: {got:?}");
    }
}

/// `growth_count = "linux-3.19"`: the count is the segments the cumulative ACK removes, SACKed
/// before or not (Linux 3.19 `tcp_ack`: `acked = tp->packets_out` before and after
/// `tcp_clean_rtx_queue`). Ten segments, the second lost: the ACK of the first grows cwnd by 1
/// (slow start, 10 → 11) either way; the third's ACK only SACKs and grows nothing; the second
/// arrives and its ACK removes it and the SACKed third: 3.19 counts both (13), the default
/// (`delivered`, 6.x's `acked_sacked`) only the one it newly delivered (12).
#[test]
fn an_ack_that_removes_segments_sacked_before_counts_them_under_linux_3_19() {
    use crate::tcp::config::GrowthCount;
    for mode in [GrowthCount::Delivered, GrowthCount::Linux319] {
        let cfg = TcpConfig {
            tlp: false,
            rack: Some(false),
            growth_count: mode,
            ..sack_cfg()
        };
        let (mut c, mut s) = pair(cfg);
        let mut out = Output::default();
        c.write(10 * MSS, 1, 100 * MS, &mut out);
        let data = headers(&mut out);
        assert_eq!((data.len(), c.tp.cwnd_pkts), (10, 10));
        let ack = deliver(&mut s, &data[..1], 125 * MS);
        deliver(&mut c, &ack, 150 * MS);
        assert_eq!(c.tp.cwnd_pkts, 11, "{mode:?}");
        let ack = deliver(&mut s, &data[2..3], 126 * MS);
        assert_eq!(ack[0].sack_len, 1);
        deliver(&mut c, &ack, 151 * MS);
        assert_eq!(
            (c.tp.ca_state, c.tp.cwnd_pkts),
            (CaState::Disorder, 11),
            "{mode:?}: an ACK that only SACKs grows nothing"
        );
        let ack = deliver(&mut s, &data[1..2], 127 * MS);
        assert_eq!(ack[0].ack, data[3].seq);
        deliver(&mut c, &ack, 152 * MS);
        let want = match mode {
            GrowthCount::Linux319 => 13,
            _ => 12,
        };
        assert_eq!(c.tp.cwnd_pkts, want, "{mode:?}");
    }
}

/// Linux 3.19's `tcp_ack` grows cwnd (`tcp_may_raise_cwnd` → `tcp_cong_avoid`) before
/// `tcp_fastretrans_alert`, and not in Recovery (`tcp_in_cwnd_reduction`): the ACK that ends a
/// fast recovery is seen in Recovery and grows nothing, cwnd = ssthresh
/// (`tcp_end_cwnd_reduction`) being all it gets. Under the default (Linux 6.x, whose
/// `tcp_cong_control` runs after the state machine has left recovery) the same ACK grows
/// cwnd in Open: with 3.x's slow-start boundary (`cwnd_growth = "linux-3.19"`, cwnd ≤
/// ssthresh) from ssthresh to ssthresh + 1.
#[test]
fn the_ack_that_ends_fast_recovery_grows_nothing_under_linux_3_19() {
    use crate::tcp::config::{CwndGrowth, GrowthCount};
    for mode in [GrowthCount::Delivered, GrowthCount::Linux319] {
        let cfg = TcpConfig {
            tlp: false,
            rack: Some(false),
            growth_count: mode,
            cwnd_growth: CwndGrowth::Linux319,
            ..sack_cfg()
        };
        let (mut c, mut s, take) = pair_with_hook_log(cfg);
        let mut out = Output::default();
        // ten segments, the first lost: nine ACKs that only SACK, the third starting recovery
        let (_, acks) = write_with_losses(&mut c, &mut s, 10 * MSS, 100 * MS, &[0], 125 * MS);
        assert_eq!(acks.len(), 9);
        for h in &acks {
            c.on_segment(h, 150 * MS, &mut out);
        }
        assert_eq!(c.tp.ca_state, CaState::Recovery);
        assert_eq!(c.tp.ssthresh_pkts, 5);
        let resent = headers(&mut out);
        let ack = deliver(&mut s, &resent[..1], 175 * MS);
        take();
        c.on_segment(&ack[0], 200 * MS, &mut out);
        assert!(c.snd.sb.is_empty());
        assert_eq!(c.tp.ca_state, CaState::Open);
        match mode {
            GrowthCount::Linux319 => {
                assert_eq!(take(), ["pkts_acked", "in_ack_event", "set_state Open"]);
                assert_eq!(c.tp.cwnd_pkts, 5, "cwnd = ssthresh, nothing more");
            }
            _ => {
                assert_eq!(
                    take(),
                    ["pkts_acked", "in_ack_event", "set_state Open", "cong_avoid"]
                );
                assert_eq!(c.tp.cwnd_pkts, 6);
            }
        }
    }
}

/// Linux 3.19's `tcp_ack` grows cwnd before `tcp_fastretrans_alert`: an ACK that removes data
/// and starts a fast recovery (it advances snd_una and SACKs three segments above a hole)
/// first grows cwnd (slow start, 10 → 11), and `tcp_enter_recovery` then takes prior_cwnd and
/// ssthresh from the grown cwnd. Under the default the ACK enters recovery without growing.
#[test]
fn an_ack_that_starts_fast_recovery_grows_first_under_linux_3_19() {
    use crate::tcp::config::GrowthCount;
    for mode in [GrowthCount::Delivered, GrowthCount::Linux319] {
        let cfg = TcpConfig {
            tlp: false,
            rack: Some(false),
            growth_count: mode,
            ..sack_cfg()
        };
        let (mut c, mut s, take) = pair_with_hook_log(cfg);
        let mut out = Output::default();
        // ten segments; the receiver gets the first and the third to fifth, and only its last
        // ACK reaches the sender: it acknowledges the first and SACKs the third to fifth
        let lost = [1, 5, 6, 7, 8, 9];
        let (_, acks) = write_with_losses(&mut c, &mut s, 10 * MSS, 100 * MS, &lost, 125 * MS);
        assert_eq!((acks.len(), c.tp.cwnd_pkts), (4, 10));
        let last = acks.last().unwrap();
        assert_eq!(last.sack_len, 1);
        take();
        c.on_segment(last, 150 * MS, &mut out);
        assert_eq!(c.tp.ca_state, CaState::Recovery, "{mode:?}");
        let hooks = take();
        match mode {
            GrowthCount::Linux319 => {
                assert_eq!(
                    hooks,
                    [
                        "pkts_acked",
                        "in_ack_event",
                        "cong_avoid",
                        "ssthresh",
                        "set_state Recovery"
                    ]
                );
                assert_eq!(c.tp.prior_cwnd_pkts, 11);
            }
            _ => {
                assert_eq!(
                    hooks,
                    [
                        "pkts_acked",
                        "in_ack_event",
                        "ssthresh",
                        "set_state Recovery"
                    ]
                );
                assert_eq!(c.tp.prior_cwnd_pkts, 10);
            }
        }
    }
}

/// Linux `tcp_process_tlp_ack` (3.19 and 6.18): when a tail-loss probe retransmitted the last
/// segment and a later ACK goes beyond the probe's `tlp_high_seq` without a D-SACK, the probe
/// repaired a loss. The reduction runs through the CWR state on that ACK: the ssthresh hook
/// (`tcp_init_cwnd_reduction`), `tcp_set_ca_state(CWR)`, cwnd = ssthresh
/// (`tcp_end_cwnd_reduction`, whose `CA_EVENT_COMPLETE_CWR` the algorithms here take as
/// leaving CWR) and `tcp_try_keep_open`, back to Open.
#[test]
fn a_loss_repaired_by_the_probe_reduces_cwnd_through_the_cwr_state() {
    let (mut c, mut s, take) = pair_with_hook_log(sack_cfg());
    let mut out = Output::default();
    // ten segments, the last lost: the probe retransmits it and repairs the loss
    let (data, acks) = write_with_losses(&mut c, &mut s, 10 * MSS, 100 * MS, &[9], 125 * MS);
    for h in &acks {
        c.on_segment(h, 150 * MS, &mut out);
    }
    let pto_at = c
        .recovery
        .tlp_timer
        .deadline_ns()
        .expect("probe timer armed");
    c.on_timer_entry(TimerKind::LossProbe, pto_at, &mut out);
    let probe = headers(&mut out);
    assert_eq!((probe.len(), probe[0].seq), (1, data[9].seq));
    let ack = deliver(&mut s, &probe, pto_at + 25 * MS);
    c.on_segment(&ack[0], pto_at + 50 * MS, &mut out);
    assert_eq!(
        c.stats.loss.tlp_recoveries, 0,
        "the ACK reaches the probe, not beyond"
    );
    // the next data's ACK goes beyond the probe
    let cwnd_before = c.tp.cwnd_pkts;
    let (_, acks) = write_with_losses(&mut c, &mut s, MSS, pto_at + 60 * MS, &[], pto_at + 85 * MS);
    take();
    c.on_segment(&acks[0], pto_at + 110 * MS, &mut out);
    assert_eq!(c.stats.loss.tlp_recoveries, 1);
    let log = take();
    let at = log
        .iter()
        .position(|h| h == "ssthresh")
        .expect("the ssthresh hook ran");
    assert_eq!(
        log[at..at + 3],
        ["ssthresh", "set_state Cwr", "set_state Open"],
        "{log:?}"
    );
    assert_eq!(c.tp.ca_state, CaState::Open);
    assert_eq!(c.tp.ssthresh_pkts, (cwnd_before / 2).max(2));
    // cwnd = ssthresh, then this ACK's growth in Open (Reno, below ssthresh: slow start)
    assert!(
        c.tp.cwnd_pkts >= c.tp.ssthresh_pkts && c.tp.cwnd_pkts <= c.tp.ssthresh_pkts + 1,
        "cwnd {} ssthresh {}",
        c.tp.cwnd_pkts,
        c.tp.ssthresh_pkts
    );
}

/// `tlp_variant = "linux-3.19"` (the 3.19 tree's `tcp_schedule_loss_probe`) at HZ = 250: the
/// RTT is SRTT rounded up to jiffies (50 ms: 12.5 → 13 jiffies, 52 ms) and the PTO is 2·RTT,
/// 104 ms, where 6.18's is 2·SRTT + 2 ms = 102 ms. With one packet out it is max(2·RTT, RTT +
/// RTT/2 + `TCP_DELACK_MAX`) = 13 + 6 + 50 = 69 jiffies (276 ms), 6.18's 2·SRTT + min_rto =
/// 300 ms; both are later than the RTO (SRTT + 200 ms), so the probe takes the RTO's time ("If
/// RTO is shorter, just schedule TLP in its place").
#[test]
fn the_3_19_probe_timeout_counts_jiffies_and_the_delayed_ack_maximum() {
    use crate::tcp::config::TlpVariant;
    for (variant, multi_ms) in [(TlpVariant::Linux, 102), (TlpVariant::Linux319, 104)] {
        let (mut c, mut s) = pair(TcpConfig {
            tlp_variant: variant,
            ..sack_cfg()
        });
        let mut out = Output::default();
        c.write(10 * MSS, 1, 100 * MS, &mut out);
        let data = headers(&mut out);
        let acks = deliver(&mut s, &data[..8], 125 * MS);
        deliver(&mut c, &acks, 150 * MS);
        assert_eq!(c.tp.srtt_ns, 50 * MS);
        let pto_at = c.recovery.tlp_timer.deadline_ns().expect("probe armed");
        assert_eq!(pto_at, (150 + multi_ms) * MS, "{variant:?}");
        // the last two arrive: nothing is out; then one new segment
        let acks = deliver(&mut s, &data[8..], 125 * MS);
        deliver(&mut c, &acks, 150 * MS);
        assert_eq!(c.tp.srtt_ns, 50 * MS);
        c.write(MSS, 2, 300 * MS, &mut out);
        assert_eq!(headers(&mut out).len(), 1);
        let pto_at = c.recovery.tlp_timer.deadline_ns().expect("probe armed");
        assert_eq!(c.tp.rto_ns, 250 * MS);
        assert_eq!(pto_at, 550 * MS, "{variant:?}");
        assert_eq!(c.snd.rto_timer.deadline_ns(), Some(pto_at));
    }
}

/// A probe of new data opens an episode in 6.18 (`tlp_high_seq` is set for it too), so no
/// further probe is armed until an ACK covers it; in 3.19 only a retransmission sets
/// `tlp_high_seq`, so the next ACK arms another probe while the first is unacknowledged. And
/// 3.19 arms none while cwnd has room and data waits.
#[test]
fn a_3_19_probe_of_new_data_opens_no_episode() {
    use crate::tcp::config::TlpVariant;
    for variant in [TlpVariant::Linux, TlpVariant::Linux319] {
        let (mut c, mut s) = pair(TcpConfig {
            tlp_variant: variant,
            ..sack_cfg()
        });
        let mut out = Output::default();
        c.write(10 * MSS, 1, 100 * MS, &mut out);
        let acks = deliver(&mut s, &headers(&mut out), 125 * MS);
        deliver(&mut c, &acks, 150 * MS);
        // cwnd 20 after slow start: 20 segments leave, 20 wait
        c.write(40 * MSS, 2, 200 * MS, &mut out);
        let flight = headers(&mut out);
        assert_eq!(flight.len(), 20);
        let pto_at = c.recovery.tlp_timer.deadline_ns().expect("probe armed");
        c.on_timer_entry(TimerKind::LossProbe, pto_at, &mut out);
        let probe = headers(&mut out);
        assert_eq!(probe.len(), 1);
        assert!(probe[0].seq != flight[19].seq, "new data");
        assert_eq!(c.stats.loss.tlp_probes, 1);
        assert_eq!(c.recovery.tlp.is_some(), variant == TlpVariant::Linux);
        // the first segment's ACK: new data leaves, cwnd is full again, data still waits
        let ack = deliver(&mut s, &flight[..1], pto_at + MS);
        let sent = deliver(&mut c, &ack, pto_at + 2 * MS);
        assert!(sent.iter().any(|h| h.payload_bytes > 0), "new data left");
        assert!(c.snd.nxt < c.snd.stream_end() && c.window_full(c.snd.nxt));
        assert_eq!(
            c.recovery.tlp_timer.is_armed(),
            variant == TlpVariant::Linux319,
            "{variant:?}"
        );
    }
    // 3.19: cwnd with room and data waiting behind the receive window: no probe
    let (mut c, mut s) = pair(TcpConfig {
        tlp_variant: TlpVariant::Linux319,
        rwnd: crate::sim::units::Size(4 * MSS),
        ..sack_cfg()
    });
    let mut out = Output::default();
    c.write(10 * MSS, 1, 100 * MS, &mut out);
    let first = headers(&mut out);
    assert_eq!(first.len(), 4, "the receive window holds four");
    let acks = deliver(&mut s, &first[..2], 125 * MS);
    deliver(&mut c, &acks, 150 * MS);
    assert!(c.snd.nxt < c.snd.stream_end() && !c.window_full(c.snd.nxt));
    assert!(!c.recovery.tlp_timer.is_armed());
}
