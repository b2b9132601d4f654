//! YeAH-TCP (Baiocchi, Castellani, Vacirca, PFLDnet 2007), as Linux net/ipv4/tcp_yeah.c
//! with the RTT bookkeeping of net/ipv4/tcp_vegas.c.
//!
//! Two modes, chosen once per RTT from a Vegas-style queue estimate:
//! - *fast* mode: Scalable TCP's increase, +1 per min(cwnd, 100) acked packets (+1 % per RTT
//!   once cwnd ≥ 100);
//! - *slow* mode: Reno (+1 per cwnd acked), after precautionary decongestion.
//!
//! Once per RTT (the first ACK beyond the snd_nxt recorded at the start of the round), when
//! the round had more than 2 RTT samples:
//! - RTT = the round's minimum RTT; `Q = cwnd·(RTT − baseRTT)/RTT` (packets queued);
//!   `L = (RTT − baseRTT)/baseRTT`;
//! - slow zone if `Q > alpha` (80 packets) or `RTT − baseRTT > baseRTT/phy` (phy = 8):
//!   - if `Q > alpha` and cwnd > reno_count: precautionary decongestion,
//!     cwnd −= min(Q/gamma, cwnd/2^epsilon) (gamma = 1, epsilon = 1), not below reno_count;
//!     ssthresh = cwnd;
//!   - reno_count = max(cwnd/2, 2) if reno_count ≤ 2, else reno_count + 1;
//!   - doing_reno_now += 1;
//! - fast zone otherwise: fast_count += 1 (after zeta = 50, reno_count = 2 and
//!   fast_count = 0); doing_reno_now = 0;
//! - lastQ = Q.
//!
//! On loss (ssthresh): if doing_reno_now < rho (16 rounds): reduction =
//! max(min(lastQ, max(cwnd/2, 2)), cwnd/2^delta) (delta = 3: at least cwnd/8); else Reno's
//! max(cwnd/2, 2). fast_count = 0, reno_count = max(reno_count/2, 2);
//! ssthresh = max(cwnd − reduction, 2).
//!
//! Vegas bookkeeping: vrtt = RTT sample + 1 µs; baseRTT = min over all samples; the round's
//! minRTT and sample count. Leaving the Open state stops the round; returning to it starts a
//! new one (`tcp_vegas_state`). `TxStart` (first send after idle) and `CwndRestart` reset all
//! of it, baseRTT included (`tcp_vegas_cwnd_event`) — ns-3's TcpYeah never resets baseRTT.
//! Growth is gated by `tcp_is_cwnd_limited`.
//!
//! Linux 3.x's growth (`cwnd_growth = "linux-3"` or `"linux-3.19"`, [`Linux3Growth`]): slow start
//! or the increase on one ACK, never both; the Reno mode one per ACK; the Scalable mode a packet
//! once `snd_cwnd_cnt` exceeds min(cwnd, 100), then the count cleared (3.19's
//! `tcp_yeah_cong_avoid`).
//!
//! Differences from Linux: none intended beyond ns time. ns-3's TcpYeah computes the loss
//! reduction from bytes in flight instead of cwnd (ns-3 tcp-yeah.cc, GetSsThresh).

use super::{AckSample, CaEvent, CaState, CcState, CongestionControl, Linux3Growth};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Parameters of YeAH (the `TCP_YEAH_*` constants of tcp_yeah.c; Linux = ns-3 defaults).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct YeahConfig {
    /// Queue threshold in packets for the slow zone and decongestion (`TCP_YEAH_ALPHA`).
    pub alpha: u32,
    /// Precautionary decongestion removes Q/gamma packets per RTT (`TCP_YEAH_GAMMA`, ≥ 1).
    pub gamma: u32,
    /// A loss removes at least cwnd/2^delta (`TCP_YEAH_DELTA`, 0 to 16).
    pub delta: u32,
    /// Decongestion removes at most cwnd/2^epsilon (`TCP_YEAH_EPSILON`, 0 to 16).
    pub epsilon: u32,
    /// Slow zone when queuing delay > baseRTT/phy (`TCP_YEAH_PHY`, ≥ 1).
    pub phy: u32,
    /// Slow rounds before a loss is treated as competition with Reno (`TCP_YEAH_RHO`).
    pub rho: u32,
    /// Fast rounds after which reno_count resets (`TCP_YEAH_ZETA`).
    pub zeta: u32,
    /// Scalable TCP's ACK count per +1 cwnd in fast mode (`TCP_SCALABLE_AI_CNT`, ≥ 1).
    pub scalable_ai_cnt: u32,
}

impl Default for YeahConfig {
    fn default() -> Self {
        YeahConfig {
            alpha: 80,
            gamma: 1,
            delta: 3,
            epsilon: 1,
            phy: 8,
            rho: 16,
            zeta: 50,
            scalable_ai_cnt: 100,
        }
    }
}

impl YeahConfig {
    pub fn check(&self) -> Result<(), (String, String)> {
        let err = |f: &str, m: &str| Err((f.to_string(), m.to_string()));
        if self.gamma == 0 {
            return err("gamma", "must be at least 1");
        }
        if self.delta > 16 {
            return err("delta", "must be between 0 and 16");
        }
        if self.epsilon > 16 {
            return err("epsilon", "must be between 0 and 16");
        }
        if self.phy == 0 {
            return err("phy", "must be at least 1");
        }
        if self.scalable_ai_cnt == 0 {
            return err("scalable_ai_cnt", "must be at least 1");
        }
        Ok(())
    }
}

pub struct Yeah {
    cfg: YeahConfig,
    // struct vegas
    beg_snd_nxt: u64,
    cnt_rtt: u32,
    /// Round minimum RTT, µs (+1).
    min_rtt_us: u64,
    /// Minimum RTT ever (since the last reset), µs (+1).
    base_rtt_us: u64,
    // YeAH
    last_q: u32,
    doing_reno_now: u32,
    reno_count: u32,
    fast_count: u32,
}

const VEGAS_INF: u64 = 0x7fff_ffff;

impl Yeah {
    pub fn new(cfg: YeahConfig) -> Self {
        Yeah {
            cfg,
            beg_snd_nxt: 0,
            cnt_rtt: 0,
            min_rtt_us: VEGAS_INF,
            base_rtt_us: VEGAS_INF,
            last_q: 0,
            doing_reno_now: 0,
            reno_count: 2,
            fast_count: 0,
        }
    }

    /// In slow (Reno) mode: the last round's estimate was in the slow zone.
    pub fn slow_mode(&self) -> bool {
        self.doing_reno_now > 0
    }
    /// The last queue estimate Q, packets.
    pub fn last_q(&self) -> u32 {
        self.last_q
    }
    pub fn reno_count(&self) -> u32 {
        self.reno_count
    }
    /// baseRTT in µs (None before a sample).
    pub fn base_rtt_us(&self) -> Option<u64> {
        (self.base_rtt_us != VEGAS_INF).then_some(self.base_rtt_us)
    }

    /// Linux `vegas_enable` (Vegas' `doing_vegas_now` flag is not modelled: YeAH never reads
    /// it).
    fn vegas_enable(&mut self, tp: &CcState) {
        self.beg_snd_nxt = tp.snd_nxt_bytes;
        self.cnt_rtt = 0;
        self.min_rtt_us = VEGAS_INF;
    }

    /// Linux `tcp_vegas_init`.
    fn vegas_init(&mut self, tp: &CcState) {
        self.base_rtt_us = VEGAS_INF;
        self.vegas_enable(tp);
    }

    /// The once-per-RTT mode decision.
    fn end_of_round(&mut self, tp: &mut CcState) {
        if self.cnt_rtt > 2 {
            let rtt = self.min_rtt_us;
            let base = self.base_rtt_us;
            let cwnd = tp.cwnd_pkts;
            let queue = (cwnd as u64 * (rtt - base) / rtt) as u32;
            let c = &self.cfg;
            if queue > c.alpha || rtt - base > base / c.phy as u64 {
                if queue > c.alpha && cwnd > self.reno_count {
                    let reduction = (queue / c.gamma).min(cwnd >> c.epsilon);
                    let new = (cwnd - reduction).max(self.reno_count);
                    tp.cwnd_pkts = new;
                    tp.ssthresh_pkts = new;
                }
                if self.reno_count <= 2 {
                    self.reno_count = (tp.cwnd_pkts >> 1).max(2);
                } else {
                    self.reno_count += 1;
                }
                self.doing_reno_now = (self.doing_reno_now + 1).min(0xff_ffff);
            } else {
                self.fast_count += 1;
                if self.fast_count > c.zeta {
                    self.reno_count = 2;
                    self.fast_count = 0;
                }
                self.doing_reno_now = 0;
            }
            self.last_q = queue;
        }
        // the next round ends with the ACK of what is sent now
        self.beg_snd_nxt = tp.snd_nxt_bytes;
        self.cnt_rtt = 0;
        self.min_rtt_us = VEGAS_INF;
    }
}

impl CongestionControl for Yeah {
    fn name(&self) -> &'static str {
        "yeah"
    }

    fn init(&mut self, tp: &mut CcState) {
        let cfg = self.cfg.clone();
        *self = Yeah::new(cfg);
        self.vegas_init(tp);
    }

    fn ssthresh(&mut self, tp: &CcState) -> u32 {
        let cwnd = tp.cwnd_pkts;
        let reduction = if self.doing_reno_now < self.cfg.rho {
            self.last_q
                .min((cwnd >> 1).max(2))
                .max(cwnd >> self.cfg.delta)
        } else {
            (cwnd >> 1).max(2)
        };
        self.fast_count = 0;
        self.reno_count = (self.reno_count >> 1).max(2);
        cwnd.saturating_sub(reduction).max(2)
    }

    fn cong_avoid(&mut self, tp: &mut CcState, acked_pkts: u32) {
        if !tp.is_cwnd_limited() {
            return;
        }
        let mut acked = acked_pkts;
        let linux3 = tp.linux3;
        if tp.growth_in_slow_start() {
            acked = tp.slow_start(acked);
            if linux3 != Linux3Growth::None {
                // Linux 3.x: slow start or the increase, never both on one ACK
                acked = 0;
            }
        }
        if acked > 0 {
            if self.doing_reno_now == 0 {
                let w = tp.cwnd_pkts.min(self.cfg.scalable_ai_cnt);
                if linux3 == Linux3Growth::None {
                    // Scalable: packets, `tcp_cong_avoid_ai`
                    tp.cong_avoid_ai(w, acked);
                } else {
                    // Linux 3.x: `snd_cwnd_cnt += pkts_acked`, a packet once it exceeds w
                    tp.cwnd_cnt += acked;
                    if tp.cwnd_cnt > w {
                        if tp.cwnd_pkts < tp.cwnd_clamp_pkts {
                            tp.cwnd_pkts += 1;
                        }
                        tp.cwnd_cnt = 0;
                    }
                }
            } else {
                // Reno: packets in Linux 6.18, one per ACK in 3.x
                match linux3 {
                    Linux3Growth::None => tp.cong_avoid_ai(tp.cwnd_pkts, acked),
                    Linux3Growth::Before319 => tp.cong_avoid_ai_per_ack(tp.cwnd_pkts),
                    Linux3Growth::Linux319 => tp.cong_avoid_ai(tp.cwnd_pkts, 1),
                }
            }
        }
        if tp.snd_una_bytes > self.beg_snd_nxt {
            self.end_of_round(tp);
        }
    }

    fn set_state(&mut self, tp: &mut CcState, new_state: CaState) {
        if new_state == CaState::Open {
            self.vegas_enable(tp);
        }
    }

    fn cwnd_event(&mut self, tp: &mut CcState, event: CaEvent) {
        if matches!(event, CaEvent::TxStart | CaEvent::CwndRestart) {
            self.vegas_init(tp);
        }
    }

    fn pkts_acked(&mut self, _tp: &mut CcState, sample: &AckSample) {
        let Some(rtt_ns) = sample.rtt_ns else {
            return;
        };
        let vrtt = rtt_ns / 1000 + 1; // never zero
        self.base_rtt_us = self.base_rtt_us.min(vrtt);
        self.min_rtt_us = self.min_rtt_us.min(vrtt);
        self.cnt_rtt += 1;
    }
}

impl crate::sim::registry::Algorithm for YeahConfig {
    type Config = YeahConfig;
    const NAME: &'static str = "yeah";
    const SOURCE: &'static str =
        "Linux net/ipv4/tcp_yeah.c and tcp_vegas.c (Baiocchi et al., PFLDnet 2007)";
    const SUMMARY: &'static str =
        "YeAH-TCP, Linux net/ipv4/tcp_yeah.c (with tcp_vegas.c's RTT bookkeeping).";
    fn check(config: &YeahConfig) -> Result<(), (String, String)> {
        config.check()
    }
}

impl super::CcAlgorithm for YeahConfig {
    fn build(config: &YeahConfig, _rng: crate::sim::rng::Stream) -> Box<dyn CongestionControl> {
        Box::new(Yeah::new(config.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;
    const MSS: u64 = 1448;

    /// A flow in congestion avoidance: `cwnd` packets per round, one ACK per packet with
    /// RTT `rtt_ns`.
    struct Flow {
        cc: Yeah,
        tp: CcState,
    }

    impl Flow {
        fn new(cwnd: u32) -> Flow {
            let mut tp = CcState::new(10, MSS as u32);
            tp.cwnd_pkts = cwnd;
            tp.ssthresh_pkts = cwnd; // congestion avoidance
            tp.is_cwnd_limited = true;
            tp.snd_nxt_bytes = 1;
            tp.snd_una_bytes = 1;
            let mut cc = Yeah::new(Default::default());
            cc.init(&mut tp);
            Flow { cc, tp }
        }

        /// One round trip: the window sent at its start is acked packet by packet.
        fn round(&mut self, rtt_ns: u64) {
            let n = self.tp.cwnd_pkts as u64;
            self.tp.snd_nxt_bytes = self.tp.snd_una_bytes + n * MSS;
            for _ in 0..n {
                self.ack(rtt_ns);
            }
        }

        fn ack(&mut self, rtt_ns: u64) {
            self.tp.snd_una_bytes += MSS;
            self.tp.max_packets_out = self.tp.cwnd_pkts;
            let in_flight = self.tp.cwnd_pkts;
            self.cc.pkts_acked(
                &mut self.tp,
                &AckSample {
                    pkts_acked: 1,
                    bytes_acked: MSS,
                    rtt_ns: Some(rtt_ns),
                    in_flight_pkts: in_flight,
                },
            );
            self.cc.cong_avoid(&mut self.tp, 1);
        }
    }

    #[test]
    fn fast_mode_grows_like_scalable_without_queueing() {
        let mut f = Flow::new(200);
        f.round(100 * MS); // baseRTT
        for _ in 0..10 {
            f.round(100 * MS);
        }
        assert!(!f.cc.slow_mode());
        // +1 per 100 acked: about 1 % per RTT, i.e. ~2 packets per round at cwnd ≈ 200
        assert!((218..=224).contains(&f.tp.cwnd_pkts), "{}", f.tp.cwnd_pkts);
    }

    #[test]
    fn switches_to_slow_mode_on_queueing_delay_and_back() {
        let mut f = Flow::new(40);
        f.round(100 * MS);
        f.round(100 * MS);
        assert!(!f.cc.slow_mode());
        // RTT 115 ms: queuing 15 ms > baseRTT/8 = 12.5 ms → slow zone; Q = 40·15/115 = 5 < 80
        f.round(115 * MS);
        f.round(115 * MS);
        assert!(f.cc.slow_mode());
        assert_eq!(f.cc.last_q(), 5);
        // Reno growth: +1 per cwnd acked
        let before = f.tp.cwnd_pkts;
        f.round(115 * MS);
        assert_eq!(f.tp.cwnd_pkts, before + 1);
        // queue drains: back to fast mode
        f.round(105 * MS);
        f.round(105 * MS);
        assert!(!f.cc.slow_mode());
    }

    /// Linux 3.x `tcp_yeah_cong_avoid` (the 3.19 tree): the Reno mode calls
    /// `tcp_cong_avoid_ai(tp, tp->snd_cwnd, 1)`, one per ACK (3.13-3.18: `tcp_cong_avoid_ai(tp,
    /// w)`, w + 1 ACKs a packet); the Scalable mode adds `pkts_acked` to `snd_cwnd_cnt` and a
    /// packet once the count exceeds min(cwnd, 100), clearing it.
    #[test]
    fn linux_3_the_reno_mode_counts_acks_and_the_scalable_mode_packets() {
        let slow_flow = |linux3| {
            let mut f = Flow::new(40);
            f.round(100 * MS);
            f.round(100 * MS);
            f.round(115 * MS);
            f.round(115 * MS);
            assert!(f.cc.slow_mode());
            f.tp.cwnd_cnt = 0;
            f.tp.ssthresh_pkts = 2; // congestion avoidance under either boundary
            f.tp.linux3 = linux3;
            f
        };
        let mut early = slow_flow(Linux3Growth::Before319);
        let mut v319 = slow_flow(Linux3Growth::Linux319);
        let mut packets = slow_flow(Linux3Growth::None);
        let reno0 = early.tp.cwnd_pkts;
        // 2·reno0 + 1 ACKs of two packets: +1 per w + 1 ACKs (3.13-3.18), +1 per w ACKs
        // (3.19), +1 per w packets (6.18)
        for _ in 0..2 * reno0 + 1 {
            for f in [&mut early, &mut v319, &mut packets] {
                f.cc.cong_avoid(&mut f.tp, 2);
            }
        }
        assert_eq!(early.tp.cwnd_pkts, reno0 + 1);
        assert_eq!(v319.tp.cwnd_pkts, reno0 + 2);
        assert_eq!(packets.tp.cwnd_pkts, reno0 + 3);
        // Scalable: 200 packets in 100 two-packet ACKs at cwnd 200: 6.18 adds one per 100
        // packets, 3.x one when the count exceeds 100 (51 ACKs), then from zero again
        let fast_flow = |linux3| {
            let mut fast = Flow::new(200);
            fast.round(100 * MS);
            assert!(!fast.cc.slow_mode());
            fast.tp.cwnd_cnt = 0;
            fast.tp.ssthresh_pkts = 2;
            fast.tp.linux3 = linux3;
            fast
        };
        let (mut old, mut now) = (fast_flow(Linux3Growth::Linux319), fast_flow(Linux3Growth::None));
        let scalable0 = now.tp.cwnd_pkts;
        for _ in 0..100 {
            old.cc.cong_avoid(&mut old.tp, 2);
            now.cc.cong_avoid(&mut now.tp, 2);
        }
        assert_eq!(now.tp.cwnd_pkts, scalable0 + 2);
        assert_eq!((old.tp.cwnd_pkts, old.tp.cwnd_cnt), (scalable0 + 1, 98));
    }

    #[test]
    fn precautionary_decongestion_removes_the_queue() {
        let mut f = Flow::new(400);
        f.round(100 * MS);
        f.round(100 * MS);
        // RTT 150 ms: Q = 400·50/150 = 133 > 80 → cwnd −= Q, ssthresh = cwnd
        f.round(150 * MS);
        let before = f.tp.cwnd_pkts;
        assert!(!f.cc.slow_mode());
        // the first ACK of the next round ends the 150 ms round
        f.tp.snd_nxt_bytes = f.tp.snd_una_bytes + before as u64 * MSS;
        f.ack(150 * MS);
        assert!(f.cc.slow_mode());
        let q = f.cc.last_q();
        assert!(q > 80);
        // Q from the window at that ACK (before, or before + 1 if that ACK grew it)
        assert!(
            [before, before + 1]
                .iter()
                .any(|&c| q == (c as u64 * 50_000 / 150_001) as u32 && f.tp.cwnd_pkts == c - q),
            "before {before}, Q {q}, cwnd {}",
            f.tp.cwnd_pkts
        );
        assert_eq!(f.tp.ssthresh_pkts, f.tp.cwnd_pkts);
    }

    #[test]
    fn loss_reduction_depends_on_the_queue_estimate() {
        // small queue: reduction = max(lastQ, cwnd/8)
        let mut f = Flow::new(400);
        f.round(100 * MS);
        f.round(100 * MS);
        f.round(100 * MS);
        assert_eq!(f.cc.last_q(), 0);
        let cwnd = f.tp.cwnd_pkts;
        assert_eq!(f.cc.ssthresh(&f.tp), cwnd - cwnd / 8);
        // after rho = 16 slow rounds (competing with Reno): halve
        let mut g = Flow::new(100);
        g.round(100 * MS);
        for _ in 0..18 {
            g.round(120 * MS); // queuing 20 ms > 12.5 ms, Q ≈ 17 < 80
        }
        assert!(g.cc.doing_reno_now >= 16);
        let cwnd = g.tp.cwnd_pkts;
        assert_eq!(g.cc.ssthresh(&g.tp), cwnd - cwnd / 2);
    }

    #[test]
    fn idle_restart_forgets_base_rtt() {
        let mut f = Flow::new(40);
        f.round(100 * MS);
        assert_eq!(f.cc.base_rtt_us(), Some(100_001));
        f.cc.cwnd_event(&mut f.tp, CaEvent::TxStart);
        assert_eq!(f.cc.base_rtt_us(), None);
    }
}
