//! Round-trip time estimation and the retransmission timeout (RFC 6298).
//!
//! - First sample R: SRTT = R, RTTVAR = R/2. Later: RTTVAR = ¾·RTTVAR + ¼·|SRTT − R| (with the
//!   old SRTT), then SRTT = ⅞·SRTT + ⅛·R (α = 1/8, β = 1/4, K = 4).
//! - `rfc6298` formula (ns-3): RTO = max(min_rto, SRTT + max(G, 4·RTTVAR)), G = 1 ms.
//! - `linux` (net/ipv4/tcp_input.c `tcp_rtt_estimator`, include/net/tcp.h `__tcp_set_rto`, the
//!   same in 3.19 and 6.18): SRTT as above (kept ×8, `srtt_us`), and a deviation `mdev`
//!   (kept ×4, so 4·mdev, `mdev_us`) that takes RFC 6298's gain ¼, except for a sample *below*
//!   SRTT by more than mdev, where the gain is 1/32 (`if (m < 0) { m = -m; m -= mdev >> 2; if
//!   (m > 0) m >>= 3; }`: a falling RTT barely raises the RTO). The RTO does not use mdev
//!   directly but `rttvar`: the largest 4·mdev seen in the current round trip (`mdev_max`)
//!   raises it at once; once per round trip (when snd_una passes the snd_nxt recorded at the
//!   last round, `rtt_seq`) it falls by a quarter of its excess over that round's largest,
//!   and `mdev_max` restarts at `min_rto`, so `rttvar` never falls below `min_rto`. First
//!   sample R: SRTT = R, 4·mdev = 2R, rttvar = max(2R, min_rto). RTO = SRTT + rttvar: the
//!   floor sits *inside* the sum, so on a path with a stable RTT Linux's RTO is about
//!   SRTT + 200 ms where ns-3's is max(1 s, …).
//! - `ns3.17` (ns-3.17's `RttMeanDeviation`, src/internet/model/rtt-estimator.cc at the ns-3.17
//!   tag): one gain g = 0.1 for both, first sample R: SRTT = R, deviation = R; later
//!   err = R − SRTT, SRTT += g·err, deviation += g·(|err| − deviation); RTO =
//!   max(min_rto, SRTT + 4·deviation), each term truncated to whole milliseconds
//!   (`RetransmitTimeout`), with no clock-granularity term.
//! - Before the first sample RTO = `initial_rto` (1 s); after an exchange whose SYN was
//!   retransmitted and no sample was possible, 3 s (RFC 6298 §5.7).
//! - Backoff: each expiry doubles the RTO up to `max_rto`; the next valid sample recomputes it
//!   from the formula (Karn's rule: samples come only from segments never retransmitted, or
//!   from timestamp echoes, RFC 7323 §4).
//! - `min_rtt_ns` is the minimum over the connection's life (Linux keeps a windowed minimum
//!   of 5 minutes in `tcp_min_rtt_wlen`; runs here are shorter than that).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Which RTO formula to use (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum RtoFormula {
    /// RFC 6298 §2 as ns-3 computes it: RTO = max(min_rto, SRTT + max(G, 4·RTTVAR)), G = 1 ms.
    Rfc6298,
    /// Linux `tcp_rtt_estimator` and `__tcp_set_rto`: RTO = SRTT + rttvar, rttvar a per-round
    /// maximum of 4·mdev that decays once per round and never falls below min_rto (see the
    /// module docs).
    Linux,
    /// ns-3.17's `RttMeanDeviation` estimator and RTO (see the module docs).
    #[serde(rename = "ns3.17")]
    Ns317,
}

/// ns-3.17 `RttMeanDeviation` `Gain` default.
const NS317_GAIN: f64 = 0.1;

pub const CLOCK_GRANULARITY_NS: u64 = 1_000_000;

#[derive(Clone, Debug)]
pub struct RttEstimator {
    pub srtt_ns: u64,
    /// RFC 6298's RTTVAR (ns-3.17: its mean deviation; `linux`: mdev, Linux's `mdev_us` / 4).
    pub rttvar_ns: u64,
    /// `linux`: 8·SRTT (`srtt_us`), 4·mdev (`mdev_us`), the round's largest 4·mdev
    /// (`mdev_max_us`), the RTO's variance term (`rttvar_us`) and the snd_nxt that ends the
    /// round (`rtt_seq`).
    srtt8_ns: u64,
    mdev4_ns: u64,
    mdev_max4_ns: u64,
    rttvar4_ns: u64,
    rtt_seq: u64,
    pub min_rtt_ns: u64,
    pub latest_ns: u64,
    pub samples: u64,
    sum_srtt_ns: u128,
    base_rto_ns: u64,
    backoff: u32,
    min_rto_ns: u64,
    max_rto_ns: u64,
    formula: RtoFormula,
}

impl RttEstimator {
    pub fn new(initial_rto_ns: u64, min_rto_ns: u64, max_rto_ns: u64, formula: RtoFormula) -> Self {
        RttEstimator {
            srtt_ns: 0,
            rttvar_ns: 0,
            srtt8_ns: 0,
            mdev4_ns: 0,
            mdev_max4_ns: 0,
            rttvar4_ns: 0,
            rtt_seq: 0,
            min_rtt_ns: u64::MAX,
            latest_ns: 0,
            samples: 0,
            sum_srtt_ns: 0,
            base_rto_ns: initial_rto_ns,
            backoff: 0,
            min_rto_ns,
            max_rto_ns,
            formula,
        }
    }

    pub fn has_sample(&self) -> bool {
        self.samples > 0
    }

    /// Adds an RTT sample, taken when snd_una and snd_nxt are `snd_una` and `snd_nxt` (stream
    /// offsets; only `linux` reads them, for its rounds); clears the backoff (RFC 6298 §5.7:
    /// the RTO is recomputed).
    pub fn on_sample(&mut self, r_ns: u64, snd_una: u64, snd_nxt: u64) {
        let r = r_ns.max(1);
        if self.formula == RtoFormula::Linux {
            self.linux_estimator(r, snd_una, snd_nxt);
        } else if self.formula == RtoFormula::Ns317 {
            if self.samples == 0 {
                self.srtt_ns = r;
                self.rttvar_ns = r;
            } else {
                let err = r as f64 - self.srtt_ns as f64;
                self.srtt_ns = (self.srtt_ns as f64 + NS317_GAIN * err).round() as u64;
                let var = self.rttvar_ns as f64;
                self.rttvar_ns = (var + NS317_GAIN * (err.abs() - var)).round() as u64;
            }
        } else if self.samples == 0 {
            self.srtt_ns = r;
            self.rttvar_ns = r / 2;
        } else {
            let diff = self.srtt_ns.abs_diff(r);
            self.rttvar_ns = (3 * self.rttvar_ns + diff) / 4;
            self.srtt_ns = (7 * self.srtt_ns + r) / 8;
        }
        self.samples += 1;
        self.sum_srtt_ns += self.srtt_ns as u128;
        self.latest_ns = r;
        self.min_rtt_ns = self.min_rtt_ns.min(r);
        self.base_rto_ns = match self.formula {
            RtoFormula::Rfc6298 => {
                (self.srtt_ns + CLOCK_GRANULARITY_NS.max(4 * self.rttvar_ns)).max(self.min_rto_ns)
            }
            RtoFormula::Linux => self.srtt_ns + self.rttvar4_ns,
            RtoFormula::Ns317 => {
                const MS: u64 = 1_000_000;
                ((self.srtt_ns / MS + 4 * (self.rttvar_ns / MS)) * MS).max(self.min_rto_ns)
            }
        }
        .min(self.max_rto_ns);
        self.backoff = 0;
    }

    /// Linux `tcp_rtt_estimator` (net/ipv4/tcp_input.c), in ns where the kernel counts µs.
    fn linux_estimator(&mut self, r: u64, snd_una: u64, snd_nxt: u64) {
        if self.samples == 0 {
            // "no previous measure": srtt = m << 3; mdev_us = m << 1 ("make sure rto =
            // 3*rtt"); rttvar_us = max(mdev_us, tcp_rto_min_us); mdev_max_us = rttvar_us
            self.srtt8_ns = r << 3;
            self.mdev4_ns = r << 1;
            self.rttvar4_ns = self.mdev4_ns.max(self.min_rto_ns);
            self.mdev_max4_ns = self.rttvar4_ns;
            self.rtt_seq = snd_nxt;
        } else {
            // m is now the error in the RTT estimate; srtt = 7/8 srtt + 1/8 new
            let mut m = r as i64 - (self.srtt8_ns >> 3) as i64;
            self.srtt8_ns = (self.srtt8_ns as i64 + m) as u64;
            let quarter = (self.mdev4_ns >> 2) as i64;
            if m < 0 {
                // below SRTT: a finer gain (1/32) once the error exceeds mdev
                m = -m - quarter;
                if m > 0 {
                    m >>= 3;
                }
            } else {
                m -= quarter;
            }
            // mdev = 3/4 mdev + 1/4 new; never negative (m ≥ −mdev/4)
            self.mdev4_ns = (self.mdev4_ns as i64 + m) as u64;
            if self.mdev4_ns > self.mdev_max4_ns {
                self.mdev_max4_ns = self.mdev4_ns;
                if self.mdev_max4_ns > self.rttvar4_ns {
                    self.rttvar4_ns = self.mdev_max4_ns;
                }
            }
            // once per round trip: rttvar falls by a quarter of its excess over the round's
            // largest mdev, and the next round's largest starts at tcp_rto_min
            if snd_una > self.rtt_seq {
                if self.mdev_max4_ns < self.rttvar4_ns {
                    self.rttvar4_ns -= (self.rttvar4_ns - self.mdev_max4_ns) >> 2;
                }
                self.rtt_seq = snd_nxt;
                self.mdev_max4_ns = self.min_rto_ns;
            }
        }
        self.srtt8_ns = self.srtt8_ns.max(1);
        self.srtt_ns = self.srtt8_ns >> 3;
        self.rttvar_ns = self.mdev4_ns >> 2;
    }

    /// RFC 6298 §5.7: the SYN was retransmitted and no sample was taken: RTO = 3 s.
    pub fn syn_was_retransmitted(&mut self) {
        if self.samples == 0 {
            self.base_rto_ns = 3_000_000_000u64.min(self.max_rto_ns).max(self.min_rto_ns);
        }
        self.backoff = 0;
    }

    /// The current RTO, backoff included.
    pub fn rto_ns(&self) -> u64 {
        let shifted = self
            .base_rto_ns
            .checked_shl(self.backoff)
            .unwrap_or(u64::MAX);
        if self.backoff >= 40 {
            self.max_rto_ns
        } else {
            shifted.min(self.max_rto_ns)
        }
    }

    /// Doubles the RTO (an expiry).
    pub fn back_off(&mut self) {
        if self.rto_ns() < self.max_rto_ns {
            self.backoff += 1;
        }
    }

    pub fn backoff(&self) -> u32 {
        self.backoff
    }

    pub fn mean_srtt_ns(&self) -> Option<u64> {
        (self.samples > 0).then(|| (self.sum_srtt_ns / self.samples as u128) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const MS: u64 = 1_000_000;

    /// ns-3.17 `RttMeanDeviation`, worked by hand: samples 100, 120, 90 ms with gain 0.1.
    /// 100: SRTT 100, dev 100, RTO 100 + 400 = 500 ms. 120: err 20, SRTT 102, dev 100 +
    /// 0.1·(20 − 100) = 92, RTO 102 + 368 = 470 ms. 90: err −12, SRTT 100.8, dev 92 +
    /// 0.1·(12 − 92) = 84, RTO 100 + 336 = 436 ms (each term truncated to whole ms).
    #[test]
    fn ns317_mean_deviation_estimator() {
        let mut e = RttEstimator::new(1000 * MS, 200 * MS, 60_000 * MS, RtoFormula::Ns317);
        e.on_sample(100 * MS, 0, 0);
        assert_eq!(
            (e.srtt_ns, e.rttvar_ns, e.rto_ns()),
            (100 * MS, 100 * MS, 500 * MS)
        );
        e.on_sample(120 * MS, 0, 0);
        assert_eq!(
            (e.srtt_ns, e.rttvar_ns, e.rto_ns()),
            (102 * MS, 92 * MS, 470 * MS)
        );
        e.on_sample(90 * MS, 0, 0);
        assert_eq!((e.srtt_ns, e.rttvar_ns), (100_800_000, 84 * MS));
        assert_eq!(e.rto_ns(), 436 * MS);
        // a steady path: the floor
        for _ in 0..200 {
            e.on_sample(100 * MS, 0, 0);
        }
        assert_eq!(e.rto_ns(), 200 * MS);
    }

    #[test]
    fn first_sample_gives_three_rtts_then_converges() {
        let mut e = RttEstimator::new(1000 * MS, 200 * MS, 120_000 * MS, RtoFormula::Rfc6298);
        assert_eq!(e.rto_ns(), 1000 * MS);
        e.on_sample(100 * MS, 0, 0);
        assert_eq!((e.srtt_ns, e.rttvar_ns), (100 * MS, 50 * MS));
        assert_eq!(e.rto_ns(), 300 * MS);
        for _ in 0..100 {
            e.on_sample(100 * MS, 0, 0);
        }
        // variance decays: RTO floors at min_rto
        assert_eq!(e.rto_ns(), 200 * MS);
        let mut l = RttEstimator::new(1000 * MS, 200 * MS, 120_000 * MS, RtoFormula::Linux);
        for k in 0..100 {
            l.on_sample(100 * MS, k, k + 1);
        }
        assert_eq!(l.rto_ns(), 300 * MS, "Linux adds the floor to SRTT");
    }

    #[test]
    fn rttvar_uses_the_old_srtt() {
        let mut e = RttEstimator::new(1000 * MS, 1, 120_000 * MS, RtoFormula::Rfc6298);
        e.on_sample(100 * MS, 0, 0);
        e.on_sample(180 * MS, 0, 0);
        // rttvar = 3/4·50 + 1/4·|100 − 180| = 57.5 ms; srtt = 7/8·100 + 1/8·180 = 110 ms
        assert_eq!(e.rttvar_ns, 57_500_000);
        assert_eq!(e.srtt_ns, 110 * MS);
        assert_eq!(e.rto_ns(), 110 * MS + 4 * 57_500_000);
    }

    #[test]
    fn backoff_doubles_to_the_cap_and_a_sample_resets_it() {
        let mut e = RttEstimator::new(1000 * MS, 200 * MS, 60_000 * MS, RtoFormula::Rfc6298);
        let mut seen = vec![];
        for _ in 0..8 {
            seen.push(e.rto_ns() / MS);
            e.back_off();
        }
        assert_eq!(
            seen,
            vec![1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000]
        );
        e.on_sample(100 * MS, 0, 0);
        assert_eq!(e.backoff(), 0);
        assert_eq!(e.rto_ns(), 300 * MS);
    }

    /// Linux `tcp_rtt_estimator`, worked by hand (min_rto 200 ms): a first sample of 100 ms
    /// gives SRTT 100, 4·mdev 200, rttvar max(200, 200), RTO 300 ms. A sample of 20 ms in the
    /// same round (snd_una not past `rtt_seq`): error −80, 80 − 200/4 = 30 > 0, so the gain
    /// is 1/32: 4·mdev 200 + 30/8 = 203.75, which raises the round's largest and rttvar at
    /// once; SRTT 100 − 80/8 = 90; RTO 293.75 ms. RFC 6298 would give RTTVAR ¾·50 + ¼·80 =
    /// 57.5 and, with the floor inside the sum, 90 + max(230, 200) = 320 ms.
    #[test]
    fn linux_raises_mdev_by_one_32nd_of_a_fall_in_rtt() {
        let mut l = RttEstimator::new(1000 * MS, 200 * MS, 120_000 * MS, RtoFormula::Linux);
        l.on_sample(100 * MS, 0, 10);
        assert_eq!(
            (l.srtt_ns, l.rttvar_ns, l.rto_ns()),
            (100 * MS, 50 * MS, 300 * MS)
        );
        l.on_sample(20 * MS, 5, 10);
        assert_eq!(l.srtt_ns, 90 * MS);
        assert_eq!(l.mdev4_ns, 203_750_000);
        assert_eq!(l.rto_ns(), 293_750_000);
        let mut r = RttEstimator::new(1000 * MS, 200 * MS, 120_000 * MS, RtoFormula::Rfc6298);
        r.on_sample(100 * MS, 0, 0);
        r.on_sample(20 * MS, 0, 0);
        assert_eq!(r.rttvar_ns, 57_500_000);
    }

    /// Linux's rttvar holds the round's largest 4·mdev and falls once per round, by a quarter of
    /// its excess over the round's largest (min_rto 1 ms, so the floor stays out of the way).
    /// First sample 100 ms at snd_nxt 10: 4·mdev 200, rttvar 200, RTO 300. Another 100 ms in
    /// the same round: 4·mdev 150, rttvar stays, RTO 300 (RFC 6298: 100 + 4·37.5 = 250). The
    /// ACK that passes snd_una 10 ends the round: 4·mdev 112.5; the round's largest (200) is
    /// not below rttvar, so rttvar stays 200 and the next round (to snd_nxt 20) starts its
    /// largest at 1 ms. Past 20: 4·mdev 84.375 is the round's largest, rttvar falls by
    /// (200 − 84.375)/4 to 171.09375 ms, RTO 271.09375 ms.
    #[test]
    fn linux_rttvar_falls_once_per_round_trip() {
        let mut l = RttEstimator::new(1000 * MS, MS, 120_000 * MS, RtoFormula::Linux);
        l.on_sample(100 * MS, 0, 10);
        assert_eq!(l.rto_ns(), 300 * MS);
        l.on_sample(100 * MS, 5, 10);
        assert_eq!((l.mdev4_ns, l.rto_ns()), (150 * MS, 300 * MS));
        l.on_sample(100 * MS, 11, 20);
        assert_eq!((l.mdev4_ns, l.rttvar4_ns), (112_500_000, 200 * MS));
        l.on_sample(100 * MS, 21, 30);
        assert_eq!((l.mdev4_ns, l.rttvar4_ns), (84_375_000, 171_093_750));
        assert_eq!(l.rto_ns(), 271_093_750);
    }
}
