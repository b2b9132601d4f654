//! Rule tests of BBR (bbr.rs) against Linux net/ipv4/tcp_bbr.c.

use super::*;
use std::collections::VecDeque;

const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;
const MSS: u32 = 1448;

/// A packet in flight, with the delivery-rate bookkeeping of Linux tcp_rate.c.
struct Pkt {
    sent_ns: u64,
    ack_ns: u64,
    prior_delivered: u64,
    prior_delivered_ns: u64,
    first_tx_ns: u64,
}

/// A synthetic path: the sender paces at `tp.pacing_rate_bps` within cwnd; a FIFO
/// bottleneck of `rate_bps` (no loss, unlimited buffer); ACKs return `prop_rtt_ns` after a
/// packet leaves the bottleneck. Rate samples follow tcp_rate.c.
struct Path {
    cc: Bbr,
    tp: CcState,
    prop_rtt_ns: u64,
    tx_ns: u64,
    bottleneck_free_ns: u64,
    next_send_ns: u64,
    first_tx_ns: u64,
    flight: VecDeque<Pkt>,
    modes: Vec<(u64, BbrMode)>,
    min_cwnd_in_probe_rtt: u32,
}

impl Path {
    fn new(rate_bps: u64, prop_rtt_ns: u64) -> Path {
        Self::seeded(rate_bps, prop_rtt_ns, 1)
    }

    fn seeded(rate_bps: u64, prop_rtt_ns: u64, seed: u64) -> Path {
        let mut tp = CcState::new(10, MSS);
        let mut cc = Bbr::new(Default::default(), Stream::new(seed, "bbr-test"));
        cc.init(&mut tp);
        Path {
            cc,
            tp,
            prop_rtt_ns,
            tx_ns: MSS as u64 * 8 * S / rate_bps,
            bottleneck_free_ns: 0,
            next_send_ns: 0,
            first_tx_ns: 0,
            flight: VecDeque::new(),
            modes: vec![(0, BbrMode::Startup)],
            min_cwnd_in_probe_rtt: u32::MAX,
        }
    }

    fn send(&mut self, now: u64) {
        if self.flight.is_empty() {
            self.first_tx_ns = now;
            self.tp.delivered_ns = now;
        }
        let depart = now.max(self.bottleneck_free_ns) + self.tx_ns;
        self.bottleneck_free_ns = depart;
        self.flight.push_back(Pkt {
            sent_ns: now,
            ack_ns: depart + self.prop_rtt_ns,
            prior_delivered: self.tp.delivered_pkts,
            prior_delivered_ns: self.tp.delivered_ns,
            first_tx_ns: self.first_tx_ns,
        });
        let rate = self.tp.pacing_rate_bps.unwrap().max(1);
        self.next_send_ns = now + MSS as u64 * 8 * S / rate;
        self.tp.in_flight_pkts = self.flight.len() as u32;
    }

    fn ack(&mut self) {
        let p = self.flight.pop_front().unwrap();
        let now = p.ack_ns;
        let prior_in_flight = self.flight.len() as u32 + 1;
        self.tp.now_ns = now;
        self.tp.delivered_pkts += 1;
        self.tp.delivered_ns = now;
        self.tp.in_flight_pkts = self.flight.len() as u32;
        self.first_tx_ns = p.sent_ns;
        let rtt = now - p.sent_ns;
        self.tp.srtt_ns = if self.tp.srtt_ns == 0 {
            rtt
        } else {
            (7 * self.tp.srtt_ns + rtt) / 8
        };
        let interval = (p.sent_ns - p.first_tx_ns).max(now - p.prior_delivered_ns);
        let rs = RateSample {
            prior_delivered_pkts: p.prior_delivered,
            delivered_pkts: self.tp.delivered_pkts - p.prior_delivered,
            interval_ns: Some(interval),
            rtt_ns: Some(rtt),
            losses_pkts: 0,
            acked_sacked_pkts: 1,
            prior_in_flight_pkts: prior_in_flight,
            is_app_limited: false,
        };
        self.cc.cong_control(&mut self.tp, &rs);
        if self.modes.last().unwrap().1 != self.cc.mode() {
            self.modes.push((now, self.cc.mode()));
        }
        if self.cc.mode() == BbrMode::ProbeRtt {
            self.min_cwnd_in_probe_rtt = self.min_cwnd_in_probe_rtt.min(self.tp.cwnd_pkts);
        }
    }

    /// Runs until `until_ns`, calling `each_ack` after every ACK.
    fn run(&mut self, until_ns: u64, mut each_ack: impl FnMut(&Path)) {
        loop {
            let next_ack = self.flight.front().map_or(u64::MAX, |p| p.ack_ns);
            let can_send = (self.flight.len() as u32) < self.tp.cwnd_pkts;
            let send_at = self.next_send_ns.max(self.tp.now_ns);
            if can_send && send_at <= next_ack {
                if send_at > until_ns {
                    return;
                }
                self.tp.now_ns = send_at;
                self.send(send_at);
            } else {
                if next_ack > until_ns {
                    return;
                }
                self.ack();
                each_ack(self);
            }
        }
    }
}

/// 20 Mbit/s, 50 ms: BDP ≈ 86 packets.
fn path() -> Path {
    Path::new(20_000_000, 50 * MS)
}

fn bdp_pkts(p: &Path) -> f64 {
    (p.prop_rtt_ns + p.tx_ns) as f64 / p.tx_ns as f64
}

#[test]
fn startup_drain_probe_bw_on_a_bandwidth_plateau() {
    let mut p = path();
    p.run(3 * S, |_| {});
    let modes: Vec<BbrMode> = p.modes.iter().map(|m| m.1).collect();
    assert_eq!(
        modes,
        vec![BbrMode::Startup, BbrMode::Drain, BbrMode::ProbeBw]
    );
    assert!(p.cc.full_bw_reached());
    // the filter holds the bottleneck rate (payload bits per second)
    let want = 20e6;
    let got = p.cc.max_bw_bps(MSS) as f64;
    assert!((got - want).abs() / want < 0.01, "{got} vs {want}");
    // ssthresh was set to the BDP (plus the quantisation budget) at the end of startup
    let bdp = bdp_pkts(&p);
    let ss = p.tp.ssthresh_pkts as f64;
    assert!(ss >= bdp && ss < bdp + 20.0, "ssthresh {ss}, BDP {bdp}");
    // startup takes a few round trips, not more
    assert!(p.modes[1].0 < S, "drain at {} ms", p.modes[1].0 / MS);
}

#[test]
fn pacing_rate_is_the_max_bw_filter_times_the_gain() {
    let mut p = path();
    let mut checked = 0;
    let mut gains = std::collections::BTreeSet::new();
    p.run(4 * S, |p| {
        if p.cc.full_bw_reached() {
            let bw = p.cc.max_bw_bps(MSS) as f64;
            let gain = p.cc.pacing_gain();
            let rate = p.tp.pacing_rate_bps.unwrap() as f64;
            // pacing = gain × BtlBw less the 1 % margin
            let want = gain * bw * 0.99;
            assert!(
                (rate - want).abs() / want < 0.005,
                "{rate} vs {want} (gain {gain})"
            );
            checked += 1;
            gains.insert((gain * 1000.0).round() as u32);
        }
    });
    assert!(checked > 1000);
    // drain (1/2.885) and the PROBE_BW cycle 5/4, 3/4, 1
    for g in [1250, 750, 1000, 344] {
        assert!(gains.contains(&g), "gain {g} missing from {gains:?}");
    }
}

#[test]
fn probe_bw_keeps_the_queue_small_and_cwnd_at_twice_the_bdp() {
    let mut p = path();
    p.run(3 * S, |_| {});
    let bdp = bdp_pkts(&p);
    let mut max_rtt = 0;
    let mut max_cwnd = 0;
    let t0 = p.tp.now_ns;
    let delivered_before = p.tp.delivered_pkts;
    p.run(8 * S, |p| {
        max_rtt = max_rtt.max(p.tp.srtt_ns);
        max_cwnd = max_cwnd.max(p.tp.cwnd_pkts);
    });
    assert_eq!(p.cc.mode(), BbrMode::ProbeBw);
    // cwnd = 2 × BDP + 3 × TSO goal (2 here), even, + 2 in the 5/4 phase
    assert!(
        (max_cwnd as f64) >= 2.0 * bdp && (max_cwnd as f64) <= 2.0 * bdp + 12.0,
        "cwnd {max_cwnd}, BDP {bdp}"
    );
    // pacing at BtlBw keeps the queue to about a quarter BDP (the 5/4 phase)
    let rtt_ceiling = (p.prop_rtt_ns as f64 * 1.35) as u64;
    assert!(max_rtt < rtt_ceiling, "srtt reached {} ms", max_rtt / MS);
    // and the bottleneck stays busy
    let util = (p.tp.delivered_pkts - delivered_before) as f64 * p.tx_ns as f64
        / (p.tp.now_ns - t0) as f64;
    assert!(util > 0.97, "utilisation {util}");
    assert_eq!(p.cc.min_rtt_ns(), p.prop_rtt_ns + p.tx_ns);
}

#[test]
fn probe_rtt_every_ten_seconds_at_four_packets() {
    let mut p = path();
    p.run(13 * S, |_| {});
    let probe: Vec<u64> = p
        .modes
        .iter()
        .filter(|m| m.1 == BbrMode::ProbeRtt)
        .map(|m| m.0)
        .collect();
    assert_eq!(probe.len(), 1, "{:?}", p.modes);
    // entered when the min-RTT sample is 10 s old (it was taken in the first round)
    assert!(
        probe[0] > 10 * S && probe[0] < 10 * S + 200 * MS,
        "{}",
        probe[0]
    );
    assert_eq!(p.min_cwnd_in_probe_rtt, 4);
    // left after at least 200 ms, back to PROBE_BW
    let i = p
        .modes
        .iter()
        .position(|m| m.1 == BbrMode::ProbeRtt)
        .unwrap();
    let (left_at, next) = p.modes[i + 1];
    assert_eq!(next, BbrMode::ProbeBw);
    assert!(left_at - probe[0] >= 200 * MS && left_at - probe[0] < 400 * MS);
}

#[test]
fn packet_conservation_in_the_first_round_of_recovery_then_restore() {
    let mut p = path();
    p.run(3 * S, |_| {});
    let before = p.tp.cwnd_pkts;
    // fast retransmit: the sender calls ssthresh (BBR saves cwnd, keeps ssthresh)
    let ss = p.cc.ssthresh(&p.tp);
    assert_eq!(ss, p.tp.ssthresh_pkts);
    p.tp.ca_state = CaState::Recovery;
    p.tp.delivered_pkts += 1;
    let rs = RateSample {
        prior_delivered_pkts: p.tp.delivered_pkts - 80,
        delivered_pkts: 80,
        interval_ns: Some(50 * MS),
        rtt_ns: Some(51 * MS),
        losses_pkts: 3,
        acked_sacked_pkts: 1,
        prior_in_flight_pkts: 51,
        is_app_limited: false,
    };
    p.cc.cong_control(&mut p.tp, &rs);
    // in flight after the ACK (51 − 1 acked − 3 lost) + acked
    assert_eq!(p.tp.cwnd_pkts, 48);
    // recovery ends: cwnd comes back to its value before the loss (capped by the target)
    p.tp.ca_state = CaState::Open;
    p.tp.delivered_pkts += 1;
    let rs = RateSample {
        losses_pkts: 0,
        prior_delivered_pkts: p.tp.delivered_pkts - 80,
        ..rs
    };
    p.cc.cong_control(&mut p.tp, &rs);
    assert!(
        p.tp.cwnd_pkts + 2 >= before && p.tp.cwnd_pkts <= before + 1,
        "{} vs {before}",
        p.tp.cwnd_pkts
    );
}

#[test]
fn the_gain_cycle_phase_comes_from_the_seed() {
    let start = |seed: u64| {
        let mut p = Path::seeded(20_000_000, 50 * MS, seed);
        let mut idx = None;
        p.run(2 * S, |p| {
            if idx.is_none() && p.cc.mode() == BbrMode::ProbeBw {
                idx = Some(p.cc.cycle_idx);
            }
        });
        idx.unwrap()
    };
    assert_eq!(start(7), start(7));
    let phases: std::collections::BTreeSet<usize> = (0..30).map(start).collect();
    // never starts in the 3/4 phase (index 1); several phases occur
    assert!(!phases.contains(&1), "{phases:?}");
    assert!(phases.len() >= 4, "{phases:?}");
}

#[test]
fn out_of_range_parameters_are_named() {
    let c = BbrConfig {
        cwnd_gain: 0.5,
        ..Default::default()
    };
    assert_eq!(c.check().unwrap_err().0, "cwnd_gain");
    let c = BbrConfig {
        full_bw_threshold: 1.0,
        ..Default::default()
    };
    assert_eq!(c.check().unwrap_err().0, "full_bw_threshold");
}
