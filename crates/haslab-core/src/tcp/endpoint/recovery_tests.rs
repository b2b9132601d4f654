//! Rule tests of loss recovery: fast recovery with and without SACK, PRR, the full-ACK exit,
//! limited transmit, RACK, RFC 6675's NextSeg rule (3), and what counts as a duplicate ACK.

use super::sender_tests::{
    all_but, deliver, headers, pair, rto_with_everything_outstanding, sack_cfg, MS, MSS,
};
use super::{Endpoint, Output, TimerKind};
use crate::tcp::cc::{CaState, CcConfig};
use crate::tcp::config::{CwndGrowth, DelayedAckMode, FullAckExit, RecoveryMode, TcpConfig};

#[test]
fn three_losses_in_a_window_are_repaired_in_one_round_trip_with_sack() {
    let (mut c, mut s) = pair(TcpConfig {
        tlp: false,
        ..sack_cfg()
    });
    let mut out = Output::default();
    c.write(10 * MSS, 1, 100 * MS, &mut out);
    let data = headers(&mut out);
    // segments 1, 4 and 6 are lost
    for (i, h) in data.iter().enumerate() {
        if ![1, 4, 6].contains(&i) {
            s.on_segment(h, 125 * MS, &mut out);
        }
    }
    let acks = headers(&mut out);
    // every ACK after the first hole carries the newest block first (RFC 2018 §4)
    assert!(acks[1..].iter().all(|a| a.sack_len > 0));
    for h in &acks {
        c.on_segment(h, 150 * MS, &mut out);
    }
    let resent: Vec<u32> = headers(&mut out).iter().map(|h| h.seq).collect();
    // all three holes go out in this round trip (RFC 6675 IsLost + pipe)
    assert_eq!(resent, vec![data[1].seq, data[4].seq, data[6].seq]);
    assert_eq!(c.stats.loss.fast_recovery_count, 1);
    c.snd.sb.check().unwrap();
}

/// RFC 8985 §6.2 (Linux `tcp_mark_skb_lost`): RACK also detects a lost retransmission —
/// once a segment sent after it is SACKed and a RACK RTT has passed, it is sent again,
/// without waiting for the RTO.
#[test]
fn rack_detects_a_lost_retransmission() {
    let (mut c, mut s) = pair(sack_cfg());
    let mut out = Output::default();
    c.write(30 * MSS, 1, 100 * MS, &mut out);
    let data = headers(&mut out);
    // segment 1 is lost; the others draw SACKs, the sender enters recovery and resends it
    for h in &all_but(&data, &[1]) {
        s.on_segment(h, 125 * MS, &mut out);
    }
    let acks = headers(&mut out);
    let mut t = 150 * MS;
    let mut sent = Vec::new();
    for a in &acks {
        sent.extend(deliver(&mut c, std::slice::from_ref(a), t));
    }
    let first: Vec<_> = sent.iter().filter(|h| h.seq == data[1].seq).collect();
    assert_eq!(first.len(), 1, "the fast retransmission");
    assert_eq!(c.tp.ca_state, CaState::Recovery);
    // the retransmission is lost too; the new segments sent with it arrive and are SACKed
    let later: Vec<_> = sent
        .iter()
        .filter(|h| h.seq != data[1].seq)
        .copied()
        .collect();
    assert!(!later.is_empty());
    let acks = deliver(&mut s, &later, 175 * MS);
    let before = c.stats.transfer.retransmitted_segments;
    let mut again = Vec::new();
    for a in &acks {
        t += MS;
        again.extend(deliver(
            &mut c,
            std::slice::from_ref(a),
            200 * MS + t - 150 * MS,
        ));
    }
    // the reordering window is 0 in recovery: RACK marks it at once, or its timer fires
    if let Some(at) = c.recovery.reorder_timer.deadline_ns() {
        c.on_timer_entry(TimerKind::Reorder, at, &mut out);
        again.extend(headers(&mut out));
    }
    assert!(
        again.iter().any(|h| h.seq == data[1].seq),
        "the lost retransmission is sent again"
    );
    assert!(c.stats.transfer.retransmitted_segments > before);
    assert_eq!(c.stats.loss.rto_count, 0);
    c.snd.sb.check().unwrap();
}

#[test]
fn without_sack_newreno_repairs_one_hole_per_round_trip() {
    let cfg = TcpConfig {
        delayed_ack: DelayedAckMode::Off,
        ..TcpConfig::default()
    };
    let cc = || CcConfig::default().build();
    let mut c = Endpoint::new(0, 0, 0, 1, 32768, 5201, cfg.clone(), cc(), 1);
    let mut s = Endpoint::new(0, 1, 1, 0, 5201, 32768, cfg, cc(), 2);
    let mut out = Output::default();
    c.connect(0, &mut out);
    for (t, to_server) in [(25, true), (50, false), (75, true)] {
        for h in headers(&mut out) {
            let ep = if to_server { &mut s } else { &mut c };
            ep.on_segment(&h, t * MS, &mut out);
        }
    }
    c.write(10 * MSS, 1, 100 * MS, &mut out);
    let data = headers(&mut out);
    let mut t = 125 * MS;
    for (i, h) in data.iter().enumerate() {
        if ![1, 4, 6].contains(&i) {
            s.on_segment(h, t, &mut out);
        }
    }
    // one round trip per hole: each partial ACK reveals only the next one
    let mut rounds = 0;
    while c.unacked_written_bytes() > 0 && rounds < 10 {
        t += 25 * MS;
        for h in headers(&mut out) {
            c.on_segment(&h, t, &mut out);
        }
        t += 25 * MS;
        let sent = headers(&mut out);
        assert!(sent.len() <= 1, "one hole per round trip");
        for h in &sent {
            s.on_segment(h, t, &mut out);
        }
        rounds += !sent.is_empty() as u32;
    }
    assert_eq!(rounds, 3, "three holes, three round trips");
    assert_eq!(c.stats.loss.rto_count, 0);
    assert_eq!(s.stats.transfer.bytes_received, 10 * MSS);
}

/// `full_ack_exit`, worked by hand: IW 40, five segments written (application-limited), the
/// first lost. Three duplicate ACKs start a classic fast recovery with ssthresh = 40/2 = 20;
/// the retransmission's ACK is the full ACK, with 5 packets in flight before it. Linux /
/// ns-3.37 (`ssthresh`): cwnd = 20. ns-3.17 (`flight`): min(20, 5 + 1) = 6, then the ACK's
/// ordinary increase: 6 < ssthresh, slow start, per-ACK growth: 7.
#[test]
fn a_full_ack_sets_cwnd_to_ssthresh_or_to_the_flight_as_ns3_17() {
    for (exit, want) in [(FullAckExit::Ssthresh, 20), (FullAckExit::Flight, 7)] {
        let cfg = TcpConfig {
            delayed_ack: DelayedAckMode::Off,
            initial_cwnd: 40,
            cwnd_growth: CwndGrowth::PerAck,
            full_ack_exit: exit,
            ..TcpConfig::default()
        };
        let (mut c, mut s) = pair(cfg);
        let mut out = Output::default();
        c.write(5 * MSS, 1, 100 * MS, &mut out);
        let data = headers(&mut out);
        assert_eq!(data.len(), 5);
        let dupacks = deliver(&mut s, &data[1..], 125 * MS);
        let rtx = deliver(&mut c, &dupacks, 150 * MS);
        assert_eq!(c.tp.ca_state, CaState::Recovery, "{exit:?}");
        assert_eq!(c.tp.ssthresh_pkts, 20);
        let full = deliver(&mut s, &rtx, 175 * MS);
        deliver(&mut c, &full, 200 * MS);
        assert_eq!(c.unacked_written_bytes(), 0);
        assert_eq!(c.tp.ca_state, CaState::Open);
        assert_eq!(c.tp.cwnd_pkts, want, "{exit:?}");
    }
}

/// Reno against NewReno without SACK (`recovery_end`, `recovery_entry_cwnd`), worked by hand:
/// IW 20, 20 segments written, segments 1 and 5 lost, no delayed ACKs. The ACK of segment 0
/// grows cwnd to 21 (slow start); the third duplicate ACK starts fast recovery with ssthresh =
/// 21/2 = 10 (NewReno's halving) and cwnd = ssthresh + 3 = 13 (RFC 5681 §3.2 step 4) or
/// min(21, 10) = 10 (ns-3.17's TcpWestwood::DupAck); each of the 14 further duplicate ACKs
/// adds one. The retransmitted segment 1 draws a partial ACK (up to segment 5). NewReno (RFC
/// 6582 §3.2 step 4) stays in recovery and resends segment 5 at once; Reno (RFC 5681 §3.2 step
/// 6) ends the recovery: cwnd = ssthresh, the Open state, and segment 5 goes out only when
/// the RTO fires, since every segment above it has already reached the receiver.
#[test]
fn reno_ends_recovery_at_the_first_new_ack_newreno_at_recover() {
    use crate::tcp::config::{RecoveryEnd, RecoveryEntryCwnd};
    for (end, entry) in [
        (RecoveryEnd::Recover, RecoveryEntryCwnd::Rfc),
        (RecoveryEnd::NewAck, RecoveryEntryCwnd::Rfc),
        (RecoveryEnd::NewAck, RecoveryEntryCwnd::Min),
    ] {
        let cfg = TcpConfig {
            sack: false,
            tlp: false,
            timestamps: false,
            recovery: RecoveryMode::Classic,
            delayed_ack: DelayedAckMode::Off,
            limited_transmit: false,
            initial_cwnd: 20,
            cwnd_growth: CwndGrowth::PerAck,
            recovery_end: end,
            recovery_entry_cwnd: entry,
            ..TcpConfig::default()
        };
        let (mut c, mut s) = pair(cfg);
        let mut out = Output::default();
        c.write(20 * MSS, 1, 100 * MS, &mut out);
        let data = headers(&mut out);
        assert_eq!(data.len(), 20);
        let acks = deliver(&mut s, &all_but(&data, &[1, 5]), 125 * MS);
        // the ACK of segment 0 and three duplicate ACKs
        let rtx = deliver(&mut c, &acks[..4], 150 * MS);
        assert_eq!(c.tp.ca_state, CaState::Recovery, "{end:?}");
        assert_eq!(c.tp.ssthresh_pkts, 10);
        let entry_cwnd = match entry {
            RecoveryEntryCwnd::Rfc => 13,
            RecoveryEntryCwnd::Min => 10,
        };
        assert_eq!(c.tp.cwnd_pkts, entry_cwnd, "{entry:?}");
        assert_eq!(
            rtx.iter().map(|h| h.seq).collect::<Vec<_>>(),
            vec![data[1].seq]
        );
        deliver(&mut c, &acks[4..], 150 * MS);
        assert_eq!(
            c.tp.cwnd_pkts,
            entry_cwnd + 14,
            "inflation by the further duplicate ACKs"
        );
        let partial = deliver(&mut s, &rtx, 175 * MS);
        assert_eq!(partial.len(), 1);
        assert_eq!(partial[0].ack, data[5].seq);
        let sent = deliver(&mut c, &partial, 200 * MS);
        let resent_5 = sent.iter().any(|h| h.seq == data[5].seq);
        match end {
            RecoveryEnd::Recover => {
                assert_eq!(c.tp.ca_state, CaState::Recovery);
                assert!(resent_5, "NewReno resends the next hole on the partial ACK");
            }
            RecoveryEnd::NewAck => {
                assert_eq!(c.tp.ca_state, CaState::Open);
                assert_eq!(c.tp.cwnd_pkts, 10, "cwnd = ssthresh (then +1/cwnd)");
                assert!(!resent_5, "Reno waits for duplicate ACKs or the RTO");
                assert_eq!(c.stats.loss.rto_count, 0);
                let at = c.snd.rto_timer.deadline_ns().unwrap();
                c.on_timer_entry(TimerKind::Rto, at, &mut out);
                assert_eq!(c.stats.loss.rto_count, 1);
                assert_eq!(headers(&mut out)[0].seq, data[5].seq);
            }
        }
    }
}

/// `recovery_end = "new-ack"` and `recovery_entry_cwnd = "min"` are Reno's rules for a
/// sender without SACK that inflates cwnd: refused, with the field named, elsewhere.
#[test]
fn reno_recovery_options_need_classic_recovery_without_sack() {
    use crate::tcp::config::{RecoveryEnd, RecoveryEntryCwnd};
    let reno = TcpConfig {
        sack: false,
        tlp: false,
        recovery: RecoveryMode::Classic,
        recovery_end: RecoveryEnd::NewAck,
        recovery_entry_cwnd: RecoveryEntryCwnd::Min,
        ..TcpConfig::default()
    };
    assert_eq!(reno.check(), Ok(()));
    for (field, cfg) in [
        (
            "recovery_end",
            TcpConfig {
                sack: true,
                recovery_entry_cwnd: RecoveryEntryCwnd::Rfc,
                ..reno.clone()
            },
        ),
        (
            "recovery_end",
            TcpConfig {
                recovery: RecoveryMode::Prr,
                recovery_entry_cwnd: RecoveryEntryCwnd::Rfc,
                ..reno.clone()
            },
        ),
        (
            "recovery_entry_cwnd",
            TcpConfig {
                sack: true,
                recovery_end: RecoveryEnd::Recover,
                ..reno.clone()
            },
        ),
        (
            "recovery_entry_cwnd",
            TcpConfig {
                recovery: RecoveryMode::Prr,
                recovery_end: RecoveryEnd::Recover,
                ..reno.clone()
            },
        ),
    ] {
        assert_eq!(cfg.check().unwrap_err().0, field);
    }
}

/// `rto_ssthresh`, worked by hand with NewReno halving the flight: ten segments outstanding,
/// all lost; the first RTO sets ssthresh = 10/2 = 5 under every rule.
///
/// Then the timer fires again with no ACK in between: Linux (`once-per-episode`) keeps
/// ssthresh (`icsk_retransmits` is 1); ns-3.37 (`every-in-flight`) recomputes it from its
/// BytesInFlight, the resent head alone: max(1/2, 2) = 2; ns-3.17 (`every`) from everything
/// outstanding: 10/2 = 5.
///
/// Or the resent head arrives first and its ACK covers one segment (nine outstanding, still
/// below the recovery point; slow start resends the next two), then the timer fires: Linux
/// recomputes, since the ACK advanced snd_una (`tcp_ack` zeroes `icsk_retransmits`), from the
/// two resent segments in flight: 2; ns-3.37 the same; ns-3.17 from the nine outstanding: 4.
/// A sender without SACK, timestamps, undo or delayed ACKs, with `rule` for its RTOs.
fn rto_test_config(rule: crate::tcp::config::RtoSsthresh) -> TcpConfig {
    TcpConfig {
        sack: false,
        tlp: false,
        timestamps: false,
        rto_undo: false,
        delayed_ack: DelayedAckMode::Off,
        rto_ssthresh: rule,
        ..TcpConfig::default()
    }
}

#[test]
fn a_repeated_rto_recomputes_ssthresh_as_linux_ns3_and_ns3_17_do() {
    use crate::tcp::config::RtoSsthresh;
    for (rule, acked_between, want) in [
        (RtoSsthresh::OncePerEpisode, false, 5),
        (RtoSsthresh::EveryInFlight, false, 2),
        (RtoSsthresh::Every, false, 5),
        (RtoSsthresh::OncePerEpisode, true, 2),
        (RtoSsthresh::EveryInFlight, true, 2),
        (RtoSsthresh::Every, true, 4),
    ] {
        let cfg = rto_test_config(rule);
        let (mut c, mut s) = pair(cfg);
        c.cc = CcConfig::NewReno(crate::tcp::cc::newreno::NewRenoConfig {
            ssthresh: crate::tcp::cc::newreno::SsthreshBase::Flight,
            ..Default::default()
        })
        .build();
        let mut out = Output::default();
        c.write(10 * MSS, 1, 100 * MS, &mut out);
        assert_eq!(headers(&mut out).len(), 10);
        let at = c.snd.rto_timer.deadline_ns().unwrap();
        c.on_timer_entry(TimerKind::Rto, at, &mut out);
        let resent = headers(&mut out)[0];
        assert_eq!(c.tp.ssthresh_pkts, 5, "{rule:?}");
        if acked_between {
            let ack = deliver(&mut s, &[resent], at + 10 * MS);
            deliver(&mut c, &ack, at + 20 * MS);
            assert_eq!(c.snd.sb.len(), 9);
            assert_eq!(c.snd.sb.retrans_out, 2, "{rule:?}");
        }
        assert_eq!(c.tp.ca_state, CaState::Loss);
        let again = c.snd.rto_timer.deadline_ns().unwrap();
        c.on_timer_entry(TimerKind::Rto, again, &mut out);
        assert_eq!(c.stats.loss.rto_count, 2);
        assert_eq!(
            c.tp.ssthresh_pkts, want,
            "{rule:?} acked between: {acked_between}"
        );
    }
}

/// What an RTO announces to the congestion control, as Linux's `tcp_enter_loss` does: the Loss
/// state on every RTO (`tcp_set_ca_state`, unconditional: CUBIC, Illinois and BBR reset
/// themselves each time) and `CA_EVENT_LOSS` only with an ssthresh reduction (inside the
/// "reduce ssthresh if it has not yet been made inside this window" branch). Two RTOs with no
/// ACK in between: Linux (`once-per-episode`) reduces once, so one loss event and two Loss
/// announcements; ns-3.37 (`every-in-flight`) two of each (its `ReTxTimeout` calls `CwndEvent`
/// and `CongestionStateSet` every time).
#[test]
fn an_rto_announces_loss_every_time_and_the_loss_event_with_the_reduction() {
    use crate::tcp::cc::{CaEvent, CcState, CongestionControl};
    use crate::tcp::config::RtoSsthresh;
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::sync::Arc;
    struct Count {
        states: Arc<AtomicU32>,
        events: Arc<AtomicU32>,
    }
    impl CongestionControl for Count {
        fn name(&self) -> &'static str {
            "count"
        }
        fn ssthresh(&mut self, tp: &CcState) -> u32 {
            (tp.cwnd_pkts / 2).max(2)
        }
        fn cong_avoid(&mut self, tp: &mut CcState, acked_pkts: u32) {
            tp.cwnd_pkts += acked_pkts;
        }
        fn set_state(&mut self, _tp: &mut CcState, new_state: CaState) {
            if new_state == CaState::Loss {
                self.states.fetch_add(1, Ordering::Relaxed);
            }
        }
        fn cwnd_event(&mut self, _tp: &mut CcState, event: CaEvent) {
            if event == CaEvent::Loss {
                self.events.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
    for (rule, events) in [
        (RtoSsthresh::OncePerEpisode, 1),
        (RtoSsthresh::EveryInFlight, 2),
    ] {
        let cfg = rto_test_config(rule);
        let (mut c, _s) = pair(cfg);
        let (states, loss_events) = (Arc::new(AtomicU32::new(0)), Arc::new(AtomicU32::new(0)));
        c.set_congestion_control(Box::new(Count {
            states: states.clone(),
            events: loss_events.clone(),
        }));
        let mut out = Output::default();
        c.write(10 * MSS, 1, 100 * MS, &mut out);
        headers(&mut out);
        for _ in 0..2 {
            let at = c.snd.rto_timer.deadline_ns().unwrap();
            c.on_timer_entry(TimerKind::Rto, at, &mut out);
            headers(&mut out);
        }
        assert_eq!(c.stats.loss.rto_count, 2);
        assert_eq!(states.load(Ordering::Relaxed), 2, "{rule:?}");
        assert_eq!(loss_events.load(Ordering::Relaxed), events, "{rule:?}");
    }
}

/// PRR-SSRB once pipe ≤ ssthresh (`prr_variant`), worked by hand with pipe 0, ssthresh
/// 10, prr_delivered 5 → 7 (this ACK delivers 2), prr_out 4: Linux 6.x sends
/// max(7 − 4, 2) = 3, +1 when the ACK advanced snd_una without a new loss (Linux 3.x: +1
/// on every ACK); ns-3's
/// TcpPrrRecovery sends 3 + 1 only when the ACK covered retransmitted data, else the 2
/// delivered.
#[test]
fn prr_ssrb_follows_linux_or_ns3() {
    use crate::tcp::config::PrrVariant;
    let cases = [
        (PrrVariant::Linux, true, false, 4),
        (PrrVariant::Linux, false, false, 3),
        (PrrVariant::Linux, false, true, 3),
        (PrrVariant::Ns3, true, false, 2),
        (PrrVariant::Ns3, false, true, 4),
        (PrrVariant::Ns3, true, true, 4),
        (PrrVariant::Linux3, false, false, 4),
    ];
    for (variant, advanced_no_loss, retrans_acked, cwnd) in cases {
        let cfg = TcpConfig {
            recovery: RecoveryMode::Prr,
            prr_variant: variant,
            ..TcpConfig::default()
        };
        let (mut c, _s) = pair(cfg);
        assert_eq!(c.window_pipe(), 0);
        c.tp.ca_state = CaState::Recovery;
        c.tp.ssthresh_pkts = 10;
        c.recovery.recover_fs = 20;
        c.recovery.prr_delivered = 5;
        c.recovery.prr_out = 4;
        c.prr_update(2, advanced_no_loss, retrans_acked);
        assert_eq!(
            c.tp.cwnd_pkts, cwnd,
            "{variant:?} advanced_no_loss {advanced_no_loss} retrans_acked {retrans_acked}"
        );
    }
}

/// PRR's RecoverFS: Linux takes cwnd when recovery begins (`prior_cwnd`), ns-3 every
/// outstanding segment (`UnAckDataCount`), which includes the two limited-transmit
/// segments sent on the first duplicate ACKs.
#[test]
fn prr_recover_fs_is_cwnd_in_linux_and_the_outstanding_data_in_ns3() {
    use crate::tcp::config::PrrVariant;
    for variant in [PrrVariant::Linux, PrrVariant::Ns3] {
        let cfg = TcpConfig {
            sack: true,
            tlp: false,
            delayed_ack: DelayedAckMode::Off,
            recovery: RecoveryMode::Prr,
            prr_variant: variant,
            ..TcpConfig::default()
        };
        let (mut c, mut s) = pair(cfg);
        let mut out = Output::default();
        c.write(30 * MSS, 1, 100 * MS, &mut out);
        let data = headers(&mut out);
        let iw = data.len() as u32;
        let mut sent = Vec::new();
        for (k, h) in data[1..4].iter().enumerate() {
            let dup = deliver(&mut s, std::slice::from_ref(h), 150 * MS);
            sent.extend(deliver(&mut c, &dup, 200 * MS + k as u64 * MS));
        }
        assert_eq!(c.tp.ca_state, CaState::Recovery);
        let outstanding = c.snd.sb.len();
        assert!(outstanding > iw, "limited transmit sent new segments");
        let expected = match variant {
            PrrVariant::Linux | PrrVariant::Linux3 => iw,
            PrrVariant::Ns3 => outstanding,
        };
        assert_eq!(c.recovery.recover_fs, expected, "{variant:?}");
    }
}

/// RFC 6582 §3.2 step 1 (`recover_guard`): after an RTO the go-back-N's duplicate ACKs
/// do not start a fast recovery (Linux's Loss state); ns-3.17's `TcpNewReno::DupAck` enters
/// one on the third, with ssthresh = max(2, outstanding / 2), cwnd = ssthresh + 3, and
/// resends the first unacknowledged segment (`DoRetransmit`).
#[test]
fn after_an_rto_three_duplicate_acks_start_fast_recovery_only_without_the_recover_guard() {
    for guard in [true, false] {
        let cfg = TcpConfig {
            sack: false,
            tlp: false,
            timestamps: false,
            rto_undo: false,
            recovery: RecoveryMode::Classic,
            delayed_ack: DelayedAckMode::Off,
            recover_guard: guard,
            ..TcpConfig::default()
        };
        let (mut c, mut s, data, rto_at, resent) = rto_with_everything_outstanding(cfg);
        assert_eq!(c.tp.ca_state, CaState::Loss);
        // ns-3's NewReno: ssthresh halves the flight, not cwnd
        c.cc = CcConfig::NewReno(crate::tcp::cc::newreno::NewRenoConfig {
            ssthresh: crate::tcp::cc::newreno::SsthreshBase::Flight,
            ..Default::default()
        })
        .build();
        let mut out = Output::default();
        // the head was lost; the receiver holds segments 3.. (1 and 2 lost too): the
        // resent head draws a partial ACK up to 1, then the go-back-N's segments above the
        // holes (the receiver has them) draw duplicate ACKs
        for h in &data[3..] {
            s.on_segment(h, rto_at + 10 * MS, &mut out);
        }
        headers(&mut out);
        let ack = deliver(&mut s, &[resent], rto_at + 20 * MS);
        deliver(&mut c, &ack, rto_at + 40 * MS);
        let before = c.stats.loss.fast_recovery_count;
        let retrans_before = c.stats.transfer.retransmitted_segments;
        let outstanding = c.snd.sb.len();
        let dup = deliver(&mut s, &data[4..7], rto_at + 45 * MS);
        assert_eq!(dup.len(), 3);
        assert!(
            dup.iter().all(|d| d.ack == data[1].seq),
            "three duplicate ACKs"
        );
        let sent = deliver(&mut c, &dup, rto_at + 60 * MS);
        if guard {
            assert_eq!(c.stats.loss.fast_recovery_count, before);
            assert_eq!(c.tp.ca_state, CaState::Loss);
        } else {
            assert_eq!(c.stats.loss.fast_recovery_count, before + 1);
            assert_eq!(c.tp.ca_state, CaState::Recovery);
            let ssthresh = (outstanding / 2).max(2);
            assert_eq!(c.tp.ssthresh_pkts, ssthresh);
            assert!(c.stats.transfer.retransmitted_segments > retrans_before);
            assert_eq!(
                sent.iter().find(|h| h.payload_bytes > 0).map(|h| h.seq),
                Some(data[1].seq),
                "DoRetransmit resends the first unacknowledged segment"
            );
        }
    }
}

/// RFC 6582 §3.2 step 1 (`recover_covers`): without SACK, after a go-back-N whose cumulative
/// ACK stops exactly at `recover`, duplicate ACKs (here the receiver's answers to copies of
/// segments it already holds) start no fast recovery unless the ACK covered more than
/// `recover` ("more", RFC 6582 and Linux's hold of the Reno states at high_seq); ns-3.37 starts
/// one once the ACK reaches it ("reach").
#[test]
fn duplicate_acks_at_the_recovery_point_start_a_fast_recovery_only_under_reach() {
    use crate::tcp::config::RecoverCovers;
    for covers in [RecoverCovers::More, RecoverCovers::Reach] {
        let cfg = TcpConfig {
            sack: false,
            tlp: false,
            timestamps: false,
            rto_undo: false,
            delayed_ack: DelayedAckMode::Off,
            recover_covers: covers,
            ..TcpConfig::default()
        };
        let (mut c, mut s, data, rto_at, resent) = rto_with_everything_outstanding(cfg);
        // one past the last segment sent, on the wire
        let recover = data[9].seq.wrapping_add(data[9].payload_bytes);
        assert_eq!(c.recovery.recover, c.snd.nxt);
        let mut out = Output::default();
        // only the head was lost: the receiver holds the other nine
        for h in &data[1..] {
            s.on_segment(h, rto_at + 10 * MS, &mut out);
        }
        headers(&mut out);
        // more data to send once the repair is done
        c.write(10 * MSS, 2, rto_at + 15 * MS, &mut out);
        headers(&mut out);
        let ack = deliver(&mut s, &[resent], rto_at + 20 * MS);
        assert_eq!(ack.len(), 1);
        assert_eq!(ack[0].ack, recover, "the go-back-N ends exactly at recover");
        deliver(&mut c, &ack, rto_at + 40 * MS);
        assert_eq!(c.tp.ca_state, CaState::Open);
        let before = c.stats.loss.fast_recovery_count;
        // three late copies of segments the receiver already holds
        let dup = deliver(&mut s, &data[5..8], rto_at + 45 * MS);
        assert_eq!(dup.len(), 3);
        assert!(
            dup.iter().all(|d| d.ack == recover),
            "three duplicate ACKs at recover"
        );
        deliver(&mut c, &dup, rto_at + 60 * MS);
        match covers {
            RecoverCovers::More => {
                assert_eq!(c.stats.loss.fast_recovery_count, before, "{covers:?}");
                assert_ne!(c.tp.ca_state, CaState::Recovery, "{covers:?}");
            }
            RecoverCovers::Reach => {
                assert_eq!(c.stats.loss.fast_recovery_count, before + 1, "{covers:?}");
                assert_eq!(c.tp.ca_state, CaState::Recovery, "{covers:?}");
            }
        }
    }
}

/// RFC 3042 (`limited_transmit`): without SACK, in classic recovery, each of the first two
/// duplicate ACKs lets one new segment out; ns-3.17 sends none.
#[test]
fn limited_transmit_sends_one_new_segment_per_early_duplicate_ack() {
    for limited in [true, false] {
        let cfg = TcpConfig {
            sack: false,
            tlp: false,
            recovery: RecoveryMode::Classic,
            delayed_ack: DelayedAckMode::Off,
            limited_transmit: limited,
            ..TcpConfig::default()
        };
        let (mut c, mut s) = pair(cfg);
        let mut out = Output::default();
        // more written than the initial window: the window is full
        c.write(30 * MSS, 1, 100 * MS, &mut out);
        let data = headers(&mut out);
        let iw = data.len();
        assert!(iw < 30);
        // the first segment arrives, the second is lost, the next two draw duplicate ACKs
        let first = deliver(&mut s, &data[..1], 150 * MS);
        let more = deliver(&mut c, &first, 200 * MS);
        let dups = deliver(&mut s, &data[2..4], 150 * MS);
        assert_eq!(dups.len(), 2);
        assert!(dups.iter().all(|d| d.ack == data[1].seq));
        let sent = deliver(&mut c, &dups, 200 * MS);
        assert!(
            !more.is_empty(),
            "the ACK of the first segment opened the window"
        );
        let new = sent.iter().filter(|h| h.payload_bytes > 0).count();
        assert_eq!(
            new,
            if limited { 2 } else { 0 },
            "limited_transmit = {limited}"
        );
    }
}

/// RFC 6937 §3 counts each delivered segment once (DeliveredData), as Linux does with
/// `tp->delivered`: a segment SACKed during recovery and later covered by the cumulative
/// ACK is not delivered a second time. Two holes in 20 segments; the 18 others are
/// SACKed, then the retransmissions fill the holes.
#[test]
fn prr_counts_a_sacked_segment_once_when_the_cumulative_ack_covers_it() {
    let (mut c, mut s) = pair(TcpConfig {
        tlp: false,
        recovery: crate::tcp::config::RecoveryMode::Prr,
        initial_cwnd: 20,
        ..sack_cfg()
    });
    let mut out = Output::default();
    c.write(20 * MSS, 1, 100 * MS, &mut out);
    let data = headers(&mut out);
    assert_eq!(data.len(), 20);
    let mut t = 125 * MS;
    for (i, h) in data.iter().enumerate() {
        if i != 0 && i != 10 {
            s.on_segment(h, t, &mut out);
        }
    }
    let mut sacked_before_recovery = 0;
    let mut in_recovery = false;
    let mut rounds = 0;
    while c.unacked_written_bytes() > 0 && rounds < 10 {
        rounds += 1;
        t += 25 * MS;
        for h in headers(&mut out) {
            let sacked_before = c.snd.sb.sacked_out;
            c.on_segment(&h, t, &mut out);
            if !in_recovery && c.tp.ca_state == crate::tcp::cc::CaState::Recovery {
                in_recovery = true;
                sacked_before_recovery = sacked_before;
            }
            if c.tp.ca_state == crate::tcp::cc::CaState::Recovery {
                // RFC 6937: what recovery sends is bounded by ssthresh/RecoverFS of what
                // was delivered (proportional part) or by what was delivered plus one
                // segment (slow-start reduction bound), plus the fast retransmission
                let fs = c.recovery.recover_fs.max(1) as u64;
                let prop =
                    (c.tp.ssthresh_pkts as u64 * c.recovery.prr_delivered as u64).div_ceil(fs);
                let bound = prop.max(c.recovery.prr_delivered as u64) + 1;
                assert!(
                    c.recovery.prr_out as u64 <= bound,
                    "prr_out {} > bound {bound} (delivered {})",
                    c.recovery.prr_out,
                    c.recovery.prr_delivered
                );
                assert!(
                    c.recovery.prr_delivered <= 20,
                    "delivered {}",
                    c.recovery.prr_delivered
                );
            }
        }
        t += 25 * MS;
        for h in headers(&mut out) {
            s.on_segment(&h, t, &mut out);
        }
    }
    assert!(in_recovery);
    assert_eq!(c.unacked_written_bytes(), 0);
    assert_eq!(c.stats.loss.rto_count, 0);
    // every segment delivered after recovery began is counted exactly once, except the
    // second hole, whose ACK ends the recovery (it is not passed to PRR)
    assert_eq!(c.recovery.prr_delivered, 20 - sacked_before_recovery - 1);
    c.snd.sb.check().unwrap();
}

/// RFC 6675 §2: with SACK, a duplicate ACK counts toward DupThresh only if its SACK blocks
/// name octets not SACKed before. Three ACKs that carry only a D-SACK of a duplicated
/// segment (what the go-back-N after an RTO draws from a receiver that held the data) do
/// not start a fast recovery; three that SACK new segments do.
#[test]
fn with_sack_only_acks_that_sack_new_data_are_duplicate_acks() {
    let (mut c, mut s) = pair(TcpConfig {
        tlp: false,
        ..sack_cfg()
    });
    let mut out = Output::default();
    c.write(10 * MSS, 1, 100 * MS, &mut out);
    let data = headers(&mut out);
    for h in &data[..5] {
        s.on_segment(h, 125 * MS, &mut out);
    }
    for h in headers(&mut out) {
        c.on_segment(&h, 150 * MS, &mut out);
    }
    headers(&mut out); // new data the ACKs released
                       // segment 2 arrives three more times: three ACKs of 5 carrying a D-SACK block only
    for k in 0..3 {
        s.on_segment(&data[2], (160 + k) * MS, &mut out);
    }
    let dsack_acks = headers(&mut out);
    assert_eq!(dsack_acks.len(), 3);
    for h in &dsack_acks {
        c.on_segment(h, 185 * MS, &mut out);
    }
    assert_eq!(c.stats.loss.dsacks_received, 3);
    assert_eq!(
        c.stats.loss.fast_recovery_count, 0,
        "D-SACKs are not duplicate ACKs"
    );
    assert_eq!(c.recovery.dupacks, 0);
    // segment 5 is lost; 6, 7 and 8 arrive: three ACKs that SACK new data
    for h in &data[6..9] {
        s.on_segment(h, 190 * MS, &mut out);
    }
    for h in headers(&mut out) {
        c.on_segment(&h, 215 * MS, &mut out);
    }
    assert_eq!(c.stats.loss.fast_recovery_count, 1);
    let resent = headers(&mut out);
    assert_eq!(resent[0].seq, data[5].seq, "the hole is retransmitted");
}

/// The client writes ten segments at 100 ms; all but `lost` reach the server at 125 ms, whose
/// ACKs reach the client one by one at 150 ms. Returns the ten data segments and what the
/// client sent in response.
fn ten_segments_with_two_lost(
    c: &mut Endpoint,
    s: &mut Endpoint,
    lost: [usize; 2],
) -> (
    Vec<crate::net::packet::TcpHeader>,
    Vec<crate::net::packet::TcpHeader>,
) {
    let mut out = Output::default();
    c.write(10 * MSS, 1, 100 * MS, &mut out);
    let data = headers(&mut out);
    assert_eq!(data.len(), 10);
    let acks = deliver(s, &all_but(&data, &lost), 125 * MS);
    let mut sent = Vec::new();
    for a in &acks {
        sent.extend(deliver(c, std::slice::from_ref(a), 150 * MS));
    }
    (data, sent)
}

/// RFC 6675 §4 NextSeg rule (3) (`nextseg_rule3`, ns-3 3.37's `TcpTxBuffer::NextSeg`): in
/// recovery, with no segment marked lost and no new data, the first segment neither SACKed nor
/// retransmitted goes out again. Ten segments, the second and the last lost: the SACKs of 2-8
/// mark the second lost (three SACKed above it); nothing is SACKed above the last, so only rule
/// (3) resends it before the RTO. Linux (the default) waits.
#[test]
fn nextseg_rule3_resends_the_unsacked_tail_in_recovery_when_no_data_is_left() {
    for rule3 in [false, true] {
        let (mut c, mut s) = pair(TcpConfig {
            tlp: false,
            nextseg_rule3: rule3,
            ..sack_cfg()
        });
        let (data, resent) = ten_segments_with_two_lost(&mut c, &mut s, [1, 9]);
        assert_eq!(c.tp.ca_state, CaState::Recovery);
        let seqs: Vec<u32> = resent.iter().map(|h| h.seq).collect();
        if rule3 {
            // the lost segment first; then, one per ACK, the first segment not yet SACKed: the
            // SACKs of 5-8 are still on their way, so segments still in flight are resent too
            // (ns-3's spurious retransmissions at the end of a chunk), ending with the tail
            assert_eq!(seqs.first(), Some(&data[1].seq));
            assert_eq!(seqs.last(), Some(&data[9].seq));
            let mut unique = seqs.clone();
            unique.sort_unstable();
            unique.dedup();
            assert_eq!(unique.len(), seqs.len(), "each segment resent once");
            // what was SACKed when the recovery began (2, 3, 4) is never resent
            assert!(data[2..5].iter().all(|d| !seqs.contains(&d.seq)));
        } else {
            assert_eq!(seqs, vec![data[1].seq], "only what SACK marked lost");
        }
        assert_eq!(c.stats.transfer.retransmitted_segments, seqs.len() as u64);
        c.snd.sb.check().unwrap();
    }
}

/// A partial ACK of a PRR fast recovery without SACK. Linux (`partial_ack_retransmit =
/// "window"`) marks the new head lost before PRR runs and resends it only if PRR's window
/// allows (net/ipv4/tcp_input.c `tcp_ack`: `tcp_fastretrans_alert`, `tcp_cong_control`,
/// `tcp_xmit_recovery`); in PRR's proportional phase (pipe > ssthresh, RFC 6937 §3) an ACK
/// that delivers one packet may release nothing, and the head then waits. ns-3 3.37
/// (`"forced"`) resends it at once whatever the window. 40 segments in flight, the first
/// 30 lost after segment 0 (pipe stays above ssthresh): the ten that arrive draw duplicate
/// ACKs, and the retransmission of segment 1 draws the partial ACK.
#[test]
fn a_partial_ack_resends_the_head_only_within_prr_window_unless_forced() {
    use crate::tcp::config::PartialAckRetransmit;
    for mode in [PartialAckRetransmit::Window, PartialAckRetransmit::Forced] {
        let (mut c, mut s) = pair(TcpConfig {
            initial_cwnd: 40,
            recovery: RecoveryMode::Prr,
            partial_ack_retransmit: mode,
            delayed_ack: crate::tcp::config::DelayedAckMode::Off,
            ..TcpConfig::default()
        });
        let mut out = Output::default();
        c.write(200 * MSS, 1, 100 * MS, &mut out);
        let data = headers(&mut out);
        assert_eq!(data.len(), 40);
        let arrived: Vec<_> = std::iter::once(data[0])
            .chain(data[31..].iter().copied())
            .collect();
        let acks = deliver(&mut s, &arrived, 125 * MS);
        let mut sent = Vec::new();
        for a in &acks {
            sent.extend(deliver(&mut c, std::slice::from_ref(a), 150 * MS));
        }
        assert_eq!(c.tp.ca_state, CaState::Recovery);
        let rtx: Vec<_> = sent
            .iter()
            .filter(|h| h.seq == data[1].seq)
            .copied()
            .collect();
        assert_eq!(rtx.len(), 1, "the fast retransmission");
        assert!(
            c.window_pipe() > c.tp.ssthresh_pkts,
            "PRR's proportional phase"
        );
        // the retransmission arrives: the partial ACK covers segment 1
        let pa = deliver(&mut s, &rtx, 175 * MS);
        let resent = deliver(&mut c, &pa, 200 * MS);
        let seqs: Vec<u32> = resent.iter().map(|h| h.seq).collect();
        match mode {
            PartialAckRetransmit::Window => {
                // ceil(ssthresh × prr_delivered / RecoverFS) − prr_out = 0: nothing goes out;
                // the head is marked lost and is the next segment any window sends
                assert!(seqs.is_empty(), "{seqs:?}");
                assert_eq!(c.snd.sb.next_lost(), Some(0));
            }
            PartialAckRetransmit::Forced => assert_eq!(seqs, vec![data[2].seq]),
        }
        c.snd.sb.check().unwrap();
    }
}

/// With SACK, ns-3 3.37 (`partial_ack_retransmit = "forced"`) sends one segment on a partial
/// ACK whose new head has no retransmission in flight (`TcpSocketBase::ProcessAck`,
/// `DoRetransmit`): the first segment marked lost, else new data, else the head. Ten
/// segments, the second and the ninth lost: one SACKed segment above the ninth does not mark
/// it lost (RFC 6675 IsLost needs three), so when the retransmission of the second is
/// acknowledged, Linux (`"window"`) has nothing to send while ns-3 resends the new head.
#[test]
fn with_sack_a_forced_partial_ack_send_resends_a_head_not_yet_retransmitted() {
    use crate::tcp::config::PartialAckRetransmit;
    for mode in [PartialAckRetransmit::Window, PartialAckRetransmit::Forced] {
        let (mut c, mut s) = pair(TcpConfig {
            tlp: false,
            recovery: RecoveryMode::Prr,
            partial_ack_retransmit: mode,
            ..sack_cfg()
        });
        let (data, sent) = ten_segments_with_two_lost(&mut c, &mut s, [1, 8]);
        let seqs: Vec<u32> = sent.iter().map(|h| h.seq).collect();
        assert_eq!(seqs, vec![data[1].seq], "only the segment SACK marked lost");
        let pa = deliver(&mut s, &sent, 175 * MS);
        let resent: Vec<u32> = deliver(&mut c, &pa, 200 * MS)
            .iter()
            .map(|h| h.seq)
            .collect();
        assert_eq!(c.tp.ca_state, CaState::Recovery, "a partial ACK");
        match mode {
            PartialAckRetransmit::Window => assert!(resent.is_empty(), "{resent:?}"),
            PartialAckRetransmit::Forced => assert_eq!(resent, vec![data[8].seq]),
        }
        c.snd.sb.check().unwrap();
    }
}

/// `rack = true` with `tlp = false` (Linux 6.17+ with `tcp_early_retrans = 0`): a segment with
/// only two SACKed segments after it — fewer than RFC 6675's DupThresh — is marked lost by RACK
/// once the reordering window (min_RTT/4) has passed since the later segments were sent (RFC 8985
/// §6.2), and resent without an RTO; no loss probe is armed. Without RACK (the default with
/// `tlp = false`) the same ACKs repair nothing: only the RTO would.
#[test]
fn rack_without_the_probe_repairs_a_loss_two_segments_from_the_tail() {
    for rack in [Some(true), None] {
        let (mut c, mut s) = pair(TcpConfig {
            rack,
            tlp: false,
            ..sack_cfg()
        });
        assert_eq!(c.cfg.rack_on(), rack.is_some());
        let mut out = Output::default();
        c.write(10 * MSS, 1, 100 * MS, &mut out);
        let data = headers(&mut out);
        let acks = deliver(&mut s, &all_but(&data, &[7]), 150 * MS);
        let mut resent = deliver(&mut c, &acks, 200 * MS);
        assert!(!c.recovery.tlp_timer.is_armed(), "no probe without tlp");
        if let Some(at) = c.recovery.reorder_timer.deadline_ns() {
            c.on_timer_entry(TimerKind::Reorder, at, &mut out);
            resent.extend(headers(&mut out));
        }
        let repaired = resent.iter().any(|h| h.seq == data[7].seq);
        assert_eq!(repaired, rack.is_some(), "rack = {rack:?}");
        assert_eq!(c.stats.loss.rto_count, 0);
        c.snd.sb.check().unwrap();
    }
}

/// RACK's reordering timer waits for the **last** segment still inside its window (RFC 8985
/// §6.2: `timeout = max(remaining, timeout)`; Linux `tcp_rack_detect_loss`, "Record maximum wait
/// time"), plus Linux's `TCP_TIMEOUT_MIN_US` (2 ms, `tcp_rack_mark_lost`), and then marks every
/// such segment lost at once. Two tail segments sent 1 ms apart are lost and only the last one
/// is SACKed (fewer than DupThresh, so the reordering window is min_RTT/4): one firing marks
/// both. An ACK that delivers nothing RACK can time (a duplicate of the last ACK, after both
/// deadlines) runs no detection (Linux runs `tcp_rack_mark_lost` only when `rack.advanced`).
#[test]
fn the_reordering_timer_waits_for_the_last_candidate_and_marks_all_at_once() {
    let (mut c, mut s) = pair(TcpConfig {
        rack: Some(true),
        tlp: false,
        ..sack_cfg()
    });
    let mut out = Output::default();
    c.write(8 * MSS, 1, 100 * MS, &mut out);
    c.write(2 * MSS, 2, 101 * MS, &mut out);
    let data = headers(&mut out);
    assert_eq!(data.len(), 10);
    let acks = deliver(&mut s, &all_but(&data, &[7, 8]), 150 * MS);
    deliver(&mut c, &acks, 200 * MS);
    let lost_before = c.tp.lost_pkts;
    assert_eq!(c.snd.sb.sacked_out, 1);
    let rack = c.recovery.rack;
    assert_eq!(rack.xmit_ns, 101 * MS);
    let reo_wnd = (c.tp.min_rtt_ns / 4).min(c.tp.srtt_ns);
    assert!(reo_wnd > 0);
    // segment 7 was sent at 100 ms, segment 8 at 101 ms
    let (first, last) = (
        100 * MS + rack.rtt_ns + reo_wnd,
        101 * MS + rack.rtt_ns + reo_wnd,
    );
    let at = c
        .recovery
        .reorder_timer
        .deadline_ns()
        .expect("reordering timer");
    assert_eq!(at, last + 2 * MS, "not the first candidate's {first}");
    // a duplicate of the last ACK after both deadlines: no detection without a delivery
    deliver(&mut c, &acks[acks.len() - 1..], last + MS);
    assert_eq!(c.tp.lost_pkts, lost_before);
    c.on_timer_entry(TimerKind::Reorder, at, &mut out);
    assert_eq!(c.tp.lost_pkts, lost_before + 2, "both marked by one firing");
    assert!(headers(&mut out).iter().any(|h| h.seq == data[7].seq));
    assert!(!c.recovery.reorder_timer.is_armed());
    c.snd.sb.check().unwrap();
}

/// `rack = false` with `tlp = true` is refused, as is `rack = true` without SACK.
#[test]
fn rack_is_checked_against_tlp_and_sack() {
    let bad = TcpConfig {
        rack: Some(false),
        ..sack_cfg()
    };
    assert_eq!(bad.check().unwrap_err().0, "rack");
    let no_sack = TcpConfig {
        rack: Some(true),
        tlp: false,
        sack: false,
        ..sack_cfg()
    };
    assert_eq!(no_sack.check().unwrap_err().0, "rack");
    assert!(TcpConfig {
        rack: Some(true),
        tlp: false,
        ..sack_cfg()
    }
    .check()
    .is_ok());
}
