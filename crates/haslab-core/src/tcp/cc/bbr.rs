//! BBR v1 (Cardwell, Cheng, Gunn, Hassas Yeganeh, Jacobson, ACM Queue 2016), as Linux
//! net/ipv4/tcp_bbr.c.
//!
//! Model-based: BtlBw = windowed maximum of delivery-rate samples over `bw_window_rounds` = 10
//! round trips (Linux `bbr_bw_rtts` = CYCLE_LEN + 2), RTprop = minimum RTT over
//! `min_rtt_window` = 10 s. Pacing rate = pacing_gain × BtlBw × (1 − 1 % margin); cwnd target =
//! cwnd_gain × BtlBw × RTprop + 3 × TSO-segments goal, rounded up to even (+2 in the first
//! probing phase), at least 4 packets. Uses the `cong_control` hook: the sender calls it on
//! every ACK with a delivery-rate sample; it sets `tp.cwnd_pkts` and `tp.pacing_rate_bps`.
//!
//! State machine (gains in BBR_UNIT = 1/256, as Linux):
//! - STARTUP: pacing and cwnd gain `high_gain` = 2/ln 2 ≈ 2.885 (Linux 739/256). Left when
//!   BtlBw grew less than `full_bw_threshold` = 25 % for `full_bw_rounds` = 3 rounds without
//!   app-limited samples ("full pipe"); ssthresh is then set to the BDP.
//! - DRAIN: pacing gain 1/high_gain (Linux 88/256), cwnd gain high_gain, until packets in
//!   flight ≤ BDP.
//! - PROBE_BW: pacing gain cycles 5/4, 3/4, 1, 1, 1, 1, 1, 1, each phase about RTprop long
//!   (5/4 lasts until inflight reaches 5/4·BDP or a loss; 3/4 ends early when inflight ≤ BDP);
//!   cwnd gain `cwnd_gain` = 2. The cycle starts at a random phase other than 3/4 (Linux
//!   `bbr_cycle_rand` = 7; the draw comes from the scenario seed).
//! - PROBE_RTT: entered when RTprop was not refreshed for `min_rtt_window`; cwnd = 4 packets
//!   for max(`probe_rtt_duration` = 200 ms, one round), then back to PROBE_BW (or STARTUP if the
//!   pipe was never full) with the cwnd saved before.
//!
//! Loss: the sender's `ssthresh` call saves cwnd (BBR keeps ssthresh); on the first round of
//! fast recovery packet conservation (cwnd = in flight + acked), later rounds grow toward the
//! target by at most the acked packets; lost packets are taken off cwnd; cwnd saved before the
//! loss is restored when recovery ends. RTO (`set_state(Loss)`): the full-pipe estimate resets
//! and the RTO counts as a round end.
//!
//! Idle: a transmission start while application-limited marks an idle restart; in PROBE_BW the
//! pacing rate drops to 1 × BtlBw (Linux `bbr_cwnd_event`). BBR is exempt from Linux's
//! restart-after-idle (the sender's business).
//!
//! Simplified or omitted (relative to tcp_bbr.c of Linux 5.x–6.x):
//! - long-term bandwidth sampling / policer detection (`lt_bw`) is omitted: `lt_use_bw` is
//!   never set;
//! - the ACK-aggregation allowance (`extra_acked`, Linux ≥ 4.19) is omitted;
//! - `bbr_packets_in_net_at_edt` assumes the earliest departure time is now (no EDT queue), so
//!   in-flight is `prior_in_flight` (+ the TSO goal while probing up);
//! - PROBE_RTT does not mark the connection app-limited (`tp->app_limited` is the sender's);
//! - `is_ack_delayed` is not known, so an expired min-RTT filter takes any RTT sample;
//! - the TSO-segments goal uses Linux's formula (pacing rate >> 10 bytes, 2 segments at least
//!   above 1.2 Mbit/s, at most 64 KiB and 127 segments) although the simulator does not
//!   segment-offload.

use super::minmax::WindowedMax;
use super::{CaEvent, CaState, CcState, CongestionControl, RateSample, TCP_INFINITE_SSTHRESH};
use crate::sim::rng::Stream;
use crate::sim::units::Duration;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Parameters of BBR (the `bbr_*` constants of tcp_bbr.c).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct BbrConfig {
    /// STARTUP pacing and cwnd gain (2/ln 2 ≈ 2.885; quantised to 1/256, Linux 739/256);
    /// DRAIN paces at its inverse. Between 1 and 10.
    pub high_gain: f64,
    /// PROBE_BW cwnd gain (2). Between 1 and 10.
    pub cwnd_gain: f64,
    /// Length of the max-bandwidth filter in round trips (10). 1 to 1000.
    pub bw_window_rounds: u32,
    /// Length of the min-RTT filter (10 s); PROBE_RTT runs when it expires. 1 ms to 1 h.
    pub min_rtt_window: Duration,
    /// Time at 4 packets in PROBE_RTT (200 ms). At most 10 s.
    pub probe_rtt_duration: Duration,
    /// STARTUP ends when BtlBw grows less than this factor per round (1.25). Above 1, at most 4.
    pub full_bw_threshold: f64,
    /// ... for this many rounds (3). 1 to 100.
    pub full_bw_rounds: u32,
    /// Pacing below the estimate, percent (1). 0 to 50.
    pub pacing_margin_percent: u32,
}

impl Default for BbrConfig {
    fn default() -> Self {
        BbrConfig {
            high_gain: 2.885,
            cwnd_gain: 2.0,
            bw_window_rounds: 10,
            min_rtt_window: Duration(10_000_000_000),
            probe_rtt_duration: Duration(200_000_000),
            full_bw_threshold: 1.25,
            full_bw_rounds: 3,
            pacing_margin_percent: 1,
        }
    }
}

impl BbrConfig {
    pub fn check(&self) -> Result<(), (String, String)> {
        let err = |f: &str, m: &str| Err((f.to_string(), m.to_string()));
        if !(1.0..=10.0).contains(&self.high_gain) {
            return err("high_gain", "must be between 1 and 10 (Linux: 2.885)");
        }
        if !(1.0..=10.0).contains(&self.cwnd_gain) {
            return err("cwnd_gain", "must be between 1 and 10 (Linux: 2)");
        }
        if !(1..=1000).contains(&self.bw_window_rounds) {
            return err("bw_window_rounds", "must be between 1 and 1000 (Linux: 10)");
        }
        if !(1_000_000..=3_600_000_000_000).contains(&self.min_rtt_window.0) {
            return err("min_rtt_window", "must be between 1ms and 1h (Linux: 10s)");
        }
        if self.probe_rtt_duration.0 > 10_000_000_000 {
            return err("probe_rtt_duration", "must be at most 10s (Linux: 200ms)");
        }
        if !(self.full_bw_threshold > 1.0 && self.full_bw_threshold <= 4.0) {
            return err(
                "full_bw_threshold",
                "must be greater than 1 and at most 4 (Linux: 1.25)",
            );
        }
        if !(1..=100).contains(&self.full_bw_rounds) {
            return err("full_bw_rounds", "must be between 1 and 100 (Linux: 3)");
        }
        if self.pacing_margin_percent > 50 {
            return err(
                "pacing_margin_percent",
                "must be between 0 and 50 (Linux: 1)",
            );
        }
        Ok(())
    }
}

/// BBR's modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BbrMode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

const BW_SCALE: u32 = 24;
const BW_UNIT: u64 = 1 << BW_SCALE;
const BBR_SCALE: u32 = 8;
const BBR_UNIT: u64 = 1 << BBR_SCALE;
const CYCLE_LEN: usize = 8;
const PACING_GAIN: [u64; CYCLE_LEN] = [
    BBR_UNIT * 5 / 4,
    BBR_UNIT * 3 / 4,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
];
/// Linux `bbr_cycle_rand`.
const CYCLE_RAND: u32 = 7;
/// Linux `bbr_cwnd_min_target`.
const CWND_MIN_TARGET: u32 = 4;
/// Linux `bbr_min_tso_rate`, bit/s.
const MIN_TSO_RATE_BPS: u64 = 1_200_000;
/// Linux TCP_INIT_CWND.
const TCP_INIT_CWND: u32 = 10;
/// GSO_LEGACY_MAX_SIZE − 1 − MAX_TCP_HEADER (x86-64).
const TSO_MAX_BYTES: u64 = 65_536 - 1 - 320;

pub struct Bbr {
    cfg: BbrConfig,
    rng: Stream,
    high_gain: u64,
    drain_gain: u64,
    cwnd_gain_probe: u64,
    full_bw_thresh: u64,

    mode: BbrMode,
    /// Max-bandwidth filter over rounds, packets per µs << 24.
    bw: WindowedMax,
    min_rtt_ns: u64,
    min_rtt_stamp_ns: u64,
    probe_rtt_done_stamp_ns: Option<u64>,
    probe_rtt_round_done: bool,
    rtt_cnt: u64,
    next_rtt_delivered: u64,
    round_start: bool,
    prev_ca_state: CaState,
    packet_conservation: bool,
    idle_restart: bool,
    prior_cwnd: u32,
    full_bw_reached: bool,
    full_bw: u64,
    full_bw_cnt: u32,
    cycle_idx: usize,
    cycle_stamp_ns: u64,
    pacing_gain: u64,
    cwnd_gain: u64,
    has_seen_rtt: bool,
    /// Packets in flight after the current ACK (Linux `tcp_packets_in_flight`, the pipe):
    /// the sample's prior in-flight less what it delivered or marked lost.
    inflight_now: u32,
    /// Pacing rate, bytes per second (`sk_pacing_rate`).
    pacing_rate: u64,
}

impl Bbr {
    pub fn new(cfg: BbrConfig, rng: Stream) -> Self {
        let high_gain = (cfg.high_gain * BBR_UNIT as f64).round() as u64;
        Bbr {
            rng,
            high_gain,
            drain_gain: (BBR_UNIT as f64 / cfg.high_gain) as u64,
            cwnd_gain_probe: (cfg.cwnd_gain * BBR_UNIT as f64).round() as u64,
            full_bw_thresh: (cfg.full_bw_threshold * BBR_UNIT as f64).round() as u64,
            cfg,
            mode: BbrMode::Startup,
            bw: WindowedMax::default(),
            min_rtt_ns: u64::MAX,
            min_rtt_stamp_ns: 0,
            probe_rtt_done_stamp_ns: None,
            probe_rtt_round_done: false,
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            round_start: false,
            prev_ca_state: CaState::Open,
            packet_conservation: false,
            idle_restart: false,
            prior_cwnd: 0,
            full_bw_reached: false,
            full_bw: 0,
            full_bw_cnt: 0,
            cycle_idx: 0,
            cycle_stamp_ns: 0,
            pacing_gain: high_gain,
            cwnd_gain: high_gain,
            has_seen_rtt: false,
            inflight_now: 0,
            pacing_rate: 0,
        }
    }

    pub fn mode(&self) -> BbrMode {
        self.mode
    }
    /// BtlBw in bits per second (payload).
    pub fn max_bw_bps(&self, mss_bytes: u32) -> u64 {
        ((self.bw.get() as u128 * mss_bytes as u128 * 8 * 1_000_000) >> BW_SCALE) as u64
    }
    /// Current pacing gain.
    pub fn pacing_gain(&self) -> f64 {
        self.pacing_gain as f64 / BBR_UNIT as f64
    }
    /// RTprop (u64::MAX before a sample).
    pub fn min_rtt_ns(&self) -> u64 {
        self.min_rtt_ns
    }
    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_reached
    }
    /// Round trips counted so far.
    pub fn rounds(&self) -> u64 {
        self.rtt_cnt
    }

    fn max_bw(&self) -> u64 {
        self.bw.get()
    }

    /// Linux `bbr_rate_bytes_per_sec`: rate (pkts/µs << 24) × gain → bytes per second.
    fn rate_bytes_per_sec(&self, mss: u32, rate: u64, gain: u64) -> u64 {
        let r = (rate as u128 * mss as u128 * gain as u128) >> BBR_SCALE;
        let r = r * (1_000_000 / 100 * (100 - self.cfg.pacing_margin_percent as u128));
        (r >> BW_SCALE) as u64
    }

    fn set_pacing(&mut self, tp: &mut CcState) {
        tp.pacing_rate_bps = Some(self.pacing_rate.saturating_mul(8).max(1));
    }

    /// Linux `bbr_init_pacing_rate_from_rtt`.
    fn init_pacing_rate_from_rtt(&mut self, tp: &mut CcState) {
        let rtt_us = if tp.srtt_ns > 0 {
            self.has_seen_rtt = true;
            (tp.srtt_ns / 1000).max(1)
        } else {
            1000 // nominal 1 ms
        };
        let bw = tp.cwnd_pkts as u64 * BW_UNIT / rtt_us;
        self.pacing_rate = self.rate_bytes_per_sec(tp.mss_bytes, bw, self.high_gain);
        self.set_pacing(tp);
    }

    /// Linux `bbr_set_pacing_rate`.
    fn set_pacing_rate(&mut self, tp: &mut CcState, bw: u64, gain: u64) {
        let rate = self.rate_bytes_per_sec(tp.mss_bytes, bw, gain);
        if !self.has_seen_rtt && tp.srtt_ns > 0 {
            self.init_pacing_rate_from_rtt(tp);
        }
        if self.full_bw_reached || rate > self.pacing_rate {
            self.pacing_rate = rate;
        }
        self.set_pacing(tp);
    }

    /// Linux `bbr_tso_segs_goal`.
    fn tso_segs_goal(&self, tp: &CcState) -> u32 {
        let min_segs = if self.pacing_rate < MIN_TSO_RATE_BPS / 8 {
            1
        } else {
            2
        };
        let bytes = (self.pacing_rate >> 10).min(TSO_MAX_BYTES);
        ((bytes / tp.mss_bytes.max(1) as u64) as u32)
            .max(min_segs)
            .min(0x7f)
    }

    /// Linux `bbr_bdp`: bw × min_rtt × gain in packets, rounded up.
    fn bdp(&self, bw: u64, gain: u64) -> u32 {
        if self.min_rtt_ns == u64::MAX {
            return TCP_INIT_CWND;
        }
        let w = bw as u128 * (self.min_rtt_ns / 1000) as u128;
        ((w * gain as u128) >> BBR_SCALE)
            .div_ceil(BW_UNIT as u128)
            .min(u32::MAX as u128 / 2) as u32
    }

    /// Linux `bbr_quantization_budget`.
    fn quantization_budget(&self, tp: &CcState, cwnd: u32) -> u32 {
        let mut cwnd = cwnd + 3 * self.tso_segs_goal(tp);
        cwnd = (cwnd + 1) & !1;
        if self.mode == BbrMode::ProbeBw && self.cycle_idx == 0 {
            cwnd += 2;
        }
        cwnd
    }

    /// Linux `bbr_inflight`.
    fn inflight(&self, tp: &CcState, bw: u64, gain: u64) -> u32 {
        let b = self.bdp(bw, gain);
        self.quantization_budget(tp, b)
    }

    /// Linux `bbr_packets_in_net_at_edt`, with the earliest departure time = now.
    fn packets_in_net_at_edt(&self, tp: &CcState, inflight_now: u32) -> u32 {
        if self.pacing_gain > BBR_UNIT {
            inflight_now + self.tso_segs_goal(tp)
        } else {
            inflight_now
        }
    }

    fn save_cwnd(&mut self, tp: &CcState) {
        if self.prev_ca_state < CaState::Recovery && self.mode != BbrMode::ProbeRtt {
            self.prior_cwnd = tp.cwnd_pkts;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(tp.cwnd_pkts);
        }
    }

    fn advance_cycle_phase(&mut self, tp: &CcState) {
        self.cycle_idx = (self.cycle_idx + 1) % CYCLE_LEN;
        self.cycle_stamp_ns = tp.delivered_ns;
    }

    fn reset_probe_bw_mode(&mut self, tp: &CcState) {
        self.mode = BbrMode::ProbeBw;
        let r = ((self.rng.next_u32() as u64 * CYCLE_RAND as u64) >> 32) as usize;
        self.cycle_idx = CYCLE_LEN - 1 - r;
        self.advance_cycle_phase(tp);
    }

    fn reset_mode(&mut self, tp: &CcState) {
        if !self.full_bw_reached {
            self.mode = BbrMode::Startup;
        } else {
            self.reset_probe_bw_mode(tp);
        }
    }

    fn is_next_cycle_phase(&self, tp: &CcState, rs: &RateSample) -> bool {
        let is_full_length = tp.delivered_ns.saturating_sub(self.cycle_stamp_ns) > self.min_rtt_ns;
        if self.pacing_gain == BBR_UNIT {
            return is_full_length;
        }
        let inflight = self.packets_in_net_at_edt(tp, rs.prior_in_flight_pkts);
        let bw = self.max_bw();
        if self.pacing_gain > BBR_UNIT {
            return is_full_length
                && (rs.losses_pkts > 0 || inflight >= self.inflight(tp, bw, self.pacing_gain));
        }
        is_full_length || inflight <= self.inflight(tp, bw, BBR_UNIT)
    }

    fn update_bw(&mut self, tp: &CcState, rs: &RateSample) {
        self.round_start = false;
        let Some(interval_ns) = rs.interval_ns.filter(|&i| i > 0) else {
            return; // not a valid observation
        };
        if rs.prior_delivered_pkts >= self.next_rtt_delivered {
            self.next_rtt_delivered = tp.delivered_pkts;
            self.rtt_cnt += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        let interval_us = (interval_ns / 1000).max(1);
        let bw = rs.delivered_pkts * BW_UNIT / interval_us;
        if !rs.is_app_limited || bw >= self.max_bw() {
            self.bw
                .update(self.cfg.bw_window_rounds as u64, self.rtt_cnt, bw);
        }
    }

    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || rs.is_app_limited {
            return;
        }
        let thresh = ((self.full_bw as u128 * self.full_bw_thresh as u128) >> BBR_SCALE) as u64;
        if self.max_bw() >= thresh {
            self.full_bw = self.max_bw();
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= self.cfg.full_bw_rounds;
    }

    fn check_drain(&mut self, tp: &mut CcState) {
        if self.mode == BbrMode::Startup && self.full_bw_reached {
            self.mode = BbrMode::Drain;
            tp.ssthresh_pkts = self.inflight(tp, self.max_bw(), BBR_UNIT);
        }
        if self.mode == BbrMode::Drain
            && self.packets_in_net_at_edt(tp, self.inflight_now)
                <= self.inflight(tp, self.max_bw(), BBR_UNIT)
        {
            self.reset_probe_bw_mode(tp); // queue drained
        }
    }

    fn check_probe_rtt_done(&mut self, tp: &mut CcState) {
        match self.probe_rtt_done_stamp_ns {
            Some(done) if tp.now_ns > done => {}
            _ => return,
        }
        self.min_rtt_stamp_ns = tp.now_ns; // wait a while until the next PROBE_RTT
        tp.cwnd_pkts = tp.cwnd_pkts.max(self.prior_cwnd);
        self.reset_mode(tp);
    }

    fn update_min_rtt(&mut self, tp: &mut CcState, rs: &RateSample) {
        let filter_expired = tp.now_ns
            > self
                .min_rtt_stamp_ns
                .saturating_add(self.cfg.min_rtt_window.0);
        if let Some(rtt) = rs.rtt_ns {
            if rtt < self.min_rtt_ns || filter_expired {
                self.min_rtt_ns = rtt;
                self.min_rtt_stamp_ns = tp.now_ns;
            }
        }
        if self.cfg.probe_rtt_duration.0 > 0
            && filter_expired
            && !self.idle_restart
            && self.mode != BbrMode::ProbeRtt
        {
            self.mode = BbrMode::ProbeRtt; // dip, drain the queue
            self.save_cwnd(tp);
            self.probe_rtt_done_stamp_ns = None;
        }
        if self.mode == BbrMode::ProbeRtt {
            // keep at most 4 packets in flight for max(200 ms, one round)
            if self.probe_rtt_done_stamp_ns.is_none() && self.inflight_now <= CWND_MIN_TARGET {
                self.probe_rtt_done_stamp_ns = Some(tp.now_ns + self.cfg.probe_rtt_duration.0);
                self.probe_rtt_round_done = false;
                self.next_rtt_delivered = tp.delivered_pkts;
            } else if self.probe_rtt_done_stamp_ns.is_some() {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(tp);
                }
            }
        }
        if rs.delivered_pkts > 0 {
            self.idle_restart = false; // ends once a new ACK for data arrives
        }
    }

    fn update_gains(&mut self) {
        let (p, c) = match self.mode {
            BbrMode::Startup => (self.high_gain, self.high_gain),
            BbrMode::Drain => (self.drain_gain, self.high_gain),
            BbrMode::ProbeBw => (PACING_GAIN[self.cycle_idx], self.cwnd_gain_probe),
            BbrMode::ProbeRtt => (BBR_UNIT, BBR_UNIT),
        };
        self.pacing_gain = p;
        self.cwnd_gain = c;
    }

    /// Linux `bbr_set_cwnd_to_recover_or_restore`: Some(cwnd) under packet conservation.
    fn recover_or_restore(&mut self, tp: &CcState, rs: &RateSample, acked: u32) -> (u32, bool) {
        let prev = self.prev_ca_state;
        let state = tp.ca_state;
        let mut cwnd = tp.cwnd_pkts;
        if rs.losses_pkts > 0 {
            cwnd = cwnd.saturating_sub(rs.losses_pkts).max(1);
        }
        if state == CaState::Recovery && prev != CaState::Recovery {
            // first round of recovery: packet conservation
            self.packet_conservation = true;
            self.next_rtt_delivered = tp.delivered_pkts; // start a round now
            cwnd = self.inflight_now + acked;
        } else if prev >= CaState::Recovery && state < CaState::Recovery {
            // leaving recovery: restore the cwnd from before it
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca_state = state;
        if self.packet_conservation {
            return (cwnd.max(self.inflight_now + acked), true);
        }
        (cwnd, false)
    }

    /// Linux `bbr_set_cwnd`.
    fn set_cwnd(&mut self, tp: &mut CcState, rs: &RateSample, bw: u64) {
        let acked = rs.acked_sacked_pkts;
        let mut cwnd = tp.cwnd_pkts;
        if acked > 0 {
            let (c, conserving) = self.recover_or_restore(tp, rs, acked);
            cwnd = c;
            if !conserving {
                let target = self.quantization_budget(tp, self.bdp(bw, self.cwnd_gain));
                if self.full_bw_reached {
                    cwnd = (cwnd + acked).min(target);
                } else if cwnd < target || tp.delivered_pkts < TCP_INIT_CWND as u64 {
                    cwnd += acked;
                }
                cwnd = cwnd.max(CWND_MIN_TARGET);
            }
        }
        tp.cwnd_pkts = cwnd.min(tp.cwnd_clamp_pkts);
        if self.mode == BbrMode::ProbeRtt {
            tp.cwnd_pkts = tp.cwnd_pkts.min(CWND_MIN_TARGET);
        }
    }
}

impl CongestionControl for Bbr {
    fn name(&self) -> &'static str {
        "bbr"
    }

    fn init(&mut self, tp: &mut CcState) {
        self.prior_cwnd = 0;
        tp.ssthresh_pkts = TCP_INFINITE_SSTHRESH;
        self.rtt_cnt = 0;
        self.next_rtt_delivered = tp.delivered_pkts;
        self.prev_ca_state = CaState::Open;
        self.packet_conservation = false;
        self.probe_rtt_done_stamp_ns = None;
        self.probe_rtt_round_done = false;
        self.min_rtt_ns = tp.min_rtt_ns;
        self.min_rtt_stamp_ns = tp.now_ns;
        self.bw.reset(0, 0);
        self.has_seen_rtt = false;
        self.init_pacing_rate_from_rtt(tp);
        self.round_start = false;
        self.idle_restart = false;
        self.full_bw_reached = false;
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.cycle_stamp_ns = 0;
        self.cycle_idx = 0;
        self.mode = BbrMode::Startup;
        self.update_gains();
    }

    fn ssthresh(&mut self, tp: &CcState) -> u32 {
        self.save_cwnd(tp);
        tp.ssthresh_pkts
    }

    fn cong_avoid(&mut self, _tp: &mut CcState, _acked_pkts: u32) {}

    fn has_cong_control(&self) -> bool {
        true
    }

    fn cong_control(&mut self, tp: &mut CcState, rs: &RateSample) {
        self.inflight_now = rs
            .prior_in_flight_pkts
            .saturating_sub(rs.acked_sacked_pkts + rs.losses_pkts);
        // bbr_update_model
        self.update_bw(tp, rs);
        if self.mode == BbrMode::ProbeBw && self.is_next_cycle_phase(tp, rs) {
            self.advance_cycle_phase(tp);
        }
        self.check_full_bw_reached(rs);
        self.check_drain(tp);
        self.update_min_rtt(tp, rs);
        self.update_gains();
        // bbr_main
        let bw = self.max_bw();
        self.set_pacing_rate(tp, bw, self.pacing_gain);
        self.set_cwnd(tp, rs, bw);
    }

    fn set_state(&mut self, _tp: &mut CcState, new_state: CaState) {
        if new_state == CaState::Loss {
            self.prev_ca_state = CaState::Loss;
            self.full_bw = 0;
            self.round_start = true; // treat an RTO like the end of a round
        }
    }

    fn cwnd_event(&mut self, tp: &mut CcState, event: CaEvent) {
        if event == CaEvent::TxStart && tp.app_limited {
            self.idle_restart = true;
            // pace at the estimate if restarting from idle while app-limited
            if self.mode == BbrMode::ProbeBw {
                let bw = self.max_bw();
                self.set_pacing_rate(tp, bw, BBR_UNIT);
            } else if self.mode == BbrMode::ProbeRtt {
                self.check_probe_rtt_done(tp);
            }
        }
    }

    fn undo_cwnd(&mut self, tp: &CcState) -> u32 {
        self.full_bw = 0; // spurious slow-down: redo full-pipe detection
        self.full_bw_cnt = 0;
        tp.cwnd_pkts
    }
}

impl crate::sim::registry::Algorithm for BbrConfig {
    type Config = BbrConfig;
    const NAME: &'static str = "bbr";
    const SOURCE: &'static str = "Linux net/ipv4/tcp_bbr.c, BBR v1 (Cardwell et al. 2016); long-term bw and ACK aggregation omitted";
    const SUMMARY: &'static str = "BBR v1, Linux net/ipv4/tcp_bbr.c (simplified: see bbr.rs).";
    fn check(config: &BbrConfig) -> Result<(), (String, String)> {
        config.check()
    }
}

impl super::CcAlgorithm for BbrConfig {
    fn build(config: &BbrConfig, rng: crate::sim::rng::Stream) -> Box<dyn CongestionControl> {
        Box::new(Bbr::new(config.clone(), rng))
    }
}

#[cfg(test)]
#[path = "bbr_tests.rs"]
mod tests;
