//! Rule tests of what an RTO episode tells the congestion control, as Linux 3.19 and 6.18 do
//! it: the ssthresh an undo restores (`prior_ssthresh`, `tcp_current_ssthresh` in
//! `tcp_enter_loss`), the cwnd it restores for an algorithm without its own `undo_cwnd`
//! (`tcp_undo_cwnd_reduction`, net/ipv4/tcp_input.c), and `CA_EVENT_TX_START` on the
//! retransmission an RTO sends with nothing in flight (`tcp_transmit_skb`, tcp_output.c).

use super::sender_tests::{deliver, headers, pair_with_cc, sack_cfg, MS, MSS};
use super::{Endpoint, Output, TimerKind};
use crate::net::packet::TcpHeader;
use crate::tcp::cc::{CaEvent, CaState, CcConfig, CcState, CongestionControl};
use crate::tcp::config::{PriorSsthresh, TcpConfig, TxStartEvent, UndoCwnd};
use std::sync::{Arc, Mutex};

/// `c` (running `cc`) is in congestion avoidance at cwnd 20, ssthresh 8, writes 20 segments at
/// 100 ms, and its RTO fires with all of them outstanding; returns the pair, the originals and
/// the RTO's time.
fn rto_at_cwnd_20(cfg: TcpConfig, cc: &CcConfig) -> (Endpoint, Endpoint, Vec<TcpHeader>, u64) {
    let (mut c, s) = pair_with_cc(cfg, cc.build());
    c.tp.cwnd_pkts = 20;
    c.tp.ssthresh_pkts = 8;
    let mut out = Output::default();
    c.write(20 * MSS, 1, 100 * MS, &mut out);
    let data = headers(&mut out);
    assert_eq!(data.len(), 20);
    let rto_at = c.snd.rto_timer.deadline_ns().expect("RTO armed");
    c.on_timer_entry(TimerKind::Rto, rto_at, &mut out);
    assert_eq!(headers(&mut out).len(), 1, "the RTO resends the head");
    assert_eq!(c.tp.ca_state, CaState::Loss);
    (c, s, data, rto_at)
}

fn cfg(undo_cwnd: UndoCwnd, prior_ssthresh: PriorSsthresh) -> TcpConfig {
    TcpConfig {
        tlp: false,
        undo_cwnd,
        prior_ssthresh,
        ..sack_cfg()
    }
}

/// Linux 3.19 and 6.18 `tcp_enter_loss` save `prior_ssthresh = tcp_current_ssthresh(sk)`,
/// max(ssthresh, ¾·cwnd) outside fast recovery, before the algorithm's `ssthresh`; 3.19's
/// `tcp_undo_cwnd_reduction` then gives Westwood+ (no `undo_cwnd` in the 3.19 tree) cwnd =
/// max(cwnd, 2 × the reduced ssthresh) — Westwood+'s BWE × RTT_min, 2 here with no estimate
/// yet — and ssthresh = max(ssthresh, prior_ssthresh). Saving ssthresh itself
/// (`prior_ssthresh = "ssthresh"`) and 6.18's `tcp_reno_undo_cwnd` restore 8 and the pre-RTO cwnd.
#[test]
fn a_spurious_rto_of_westwood_is_undone_by_the_3_19_rules() {
    let westwood = CcConfig::WestwoodPlus(Default::default());
    for linux319 in [true, false] {
        let cfg = if linux319 {
            cfg(UndoCwnd::Linux319, PriorSsthresh::Linux)
        } else {
            cfg(UndoCwnd::Linux, PriorSsthresh::Ssthresh)
        };
        let (mut c, mut s, data, rto_at) = rto_at_cwnd_20(cfg, &westwood);
        let reduced = c.tp.ssthresh_pkts;
        assert_eq!(
            reduced, 2,
            "Westwood+ without an estimate: BWE × RTT_min floored at 2"
        );
        let expected_prior = if linux319 { 15 } else { 8 };
        assert_eq!(
            c.tp.prior_ssthresh_pkts, expected_prior,
            "3.19: max(8, ¾·20)"
        );
        // the delayed first original arrives: its ACK echoes a TSval older than the
        // retransmission's (Eifel), and it acknowledges an original (F-RTO)
        let acks = deliver(&mut s, &data[..1], rto_at + 10 * MS);
        deliver(&mut c, &acks, rto_at + 30 * MS);
        assert_eq!(c.stats.loss.spurious_rtos, 1);
        assert_eq!(c.tp.ca_state, CaState::Open);
        assert_eq!(c.tp.ssthresh_pkts, expected_prior);
        if linux319 {
            // 2 × 2, and at most the ACK's own slow-start step on top
            assert!(
                (2 * reduced..=2 * reduced + 1).contains(&c.tp.cwnd_pkts),
                "cwnd {}",
                c.tp.cwnd_pkts
            );
        } else {
            assert!(c.tp.cwnd_pkts >= 20, "cwnd {}", c.tp.cwnd_pkts);
        }
    }
}

/// The undo's cwnd, hook by hook: the default (an algorithm without its own `undo_cwnd`) is
/// 6.18's `tcp_reno_undo_cwnd` or 3.19's fallback by the sender's option; CUBIC's own
/// (`bictcp_undo_cwnd` in 3.19, max(cwnd, `loss_cwnd`)) is the pre-reduction cwnd under both.
#[test]
fn undo_cwnd_falls_back_to_twice_ssthresh_only_without_an_own_hook() {
    let mut tp = CcState::new(10, 1448);
    tp.cwnd_pkts = 3;
    tp.ssthresh_pkts = 7;
    tp.prior_cwnd_pkts = 20;
    for (name, cc) in [
        ("newreno", CcConfig::default()),
        ("westwood+", CcConfig::WestwoodPlus(Default::default())),
        ("yeah", CcConfig::Yeah(Default::default())),
        ("illinois", CcConfig::Illinois(Default::default())),
        ("cubic", CcConfig::Cubic(Default::default())),
    ] {
        for (rule, want) in [(UndoCwnd::Linux, 20), (UndoCwnd::Linux319, 14)] {
            tp.undo_cwnd_rule = rule;
            let want = if name == "cubic" { 20 } else { want };
            assert_eq!(cc.build().undo_cwnd(&tp), want, "{name} {rule:?}");
        }
    }
    // never below the current cwnd
    tp.cwnd_pkts = 30;
    assert_eq!(CcConfig::default().build().undo_cwnd(&tp), 30);
}

/// Linux `tcp_current_ssthresh`: ¾·cwnd (`(cwnd >> 1) + (cwnd >> 2)`) when larger, outside
/// fast recovery; ssthresh itself in it.
#[test]
fn current_ssthresh_is_three_quarters_of_cwnd_outside_recovery() {
    let mut tp = CcState::new(10, 1448);
    tp.cwnd_pkts = 21;
    tp.ssthresh_pkts = 8;
    assert_eq!(tp.current_ssthresh(), 15);
    tp.ssthresh_pkts = 16;
    assert_eq!(tp.current_ssthresh(), 16);
    tp.ssthresh_pkts = 8;
    tp.ca_state = CaState::Recovery;
    assert_eq!(tp.current_ssthresh(), 8);
}

/// Reno that records its `cwnd_event` calls.
struct Events(Arc<Mutex<Vec<CaEvent>>>);

impl CongestionControl for Events {
    fn name(&self) -> &'static str {
        "events"
    }
    fn ssthresh(&mut self, tp: &CcState) -> u32 {
        (tp.cwnd_pkts / 2).max(2)
    }
    fn cong_avoid(&mut self, tp: &mut CcState, acked_pkts: u32) {
        tp.reno_grow(acked_pkts);
    }
    fn cwnd_event(&mut self, _tp: &mut CcState, event: CaEvent) {
        self.0.lock().unwrap().push(event);
    }
}

/// Linux 3.19 `tcp_transmit_skb` and 6.18 `tcp_event_data_sent` raise `CA_EVENT_TX_START`
/// before any data segment sent with `tcp_packets_in_flight` = 0: the first write, and also the
/// retransmission an RTO sends after marking every segment lost (`tx_start = "linux"`); the
/// retransmissions after it find the first one in flight. haslab's default raises it for new
/// data with nothing outstanding only.
#[test]
fn the_rto_retransmission_with_nothing_in_flight_raises_tx_start() {
    for rule in [TxStartEvent::Linux, TxStartEvent::NewData] {
        let log = Arc::new(Mutex::new(Vec::new()));
        let cfg = TcpConfig {
            tlp: false,
            frto: false,
            tx_start: rule,
            ..sack_cfg()
        };
        let (mut c, mut s) = pair_with_cc(cfg, Box::new(Events(log.clone())));
        let tx_starts = || {
            let events = log.lock().unwrap();
            events.iter().filter(|&&e| e == CaEvent::TxStart).count()
        };
        let mut out = Output::default();
        c.write(10 * MSS, 1, 100 * MS, &mut out);
        let data = headers(&mut out);
        assert_eq!(data.len(), 10);
        assert_eq!(tx_starts(), 1, "{rule:?}: the first send");
        let rto_at = c.snd.rto_timer.deadline_ns().unwrap();
        c.on_timer_entry(TimerKind::Rto, rto_at, &mut out);
        let resent = headers(&mut out);
        assert_eq!(resent.len(), 1);
        let after_rto = if rule == TxStartEvent::Linux { 2 } else { 1 };
        assert_eq!(tx_starts(), after_rto, "{rule:?}: the RTO's retransmission");
        // the head's retransmission is acknowledged (the originals were lost), which empties
        // the pipe again: of the two retransmissions slow start sends now, the first leaves
        // with nothing in flight, the second with the first in flight
        let acks = deliver(&mut s, &resent, rto_at + 25 * MS);
        let mut out = Output::default();
        for a in &acks {
            c.on_segment(a, rto_at + 50 * MS, &mut out);
        }
        let resent = headers(&mut out);
        assert_eq!(resent.len(), 2);
        assert_eq!(
            tx_starts(),
            after_rto + (rule == TxStartEvent::Linux) as usize
        );
    }
}
