//! Round-trip time estimation and the retransmission timeout (RFC 6298).
//!
//! - First sample R: SRTT = R, RTTVAR = R/2. Later: RTTVAR = ¾·RTTVAR + ¼·|SRTT − R| (with the
//!   old SRTT), then SRTT = ⅞·SRTT + ⅛·R (α = 1/8, β = 1/4, K = 4).
//! - `rfc6298` formula (ns-3): RTO = max(min_rto, SRTT + max(G, 4·RTTVAR)), G = 1 ms.
//! - `linux` formula (include/net/tcp.h, `__tcp_set_rto`): RTO = SRTT + max(4·RTTVAR, min_rto):
//!   the floor sits *inside* the sum, so on a path with a stable RTT Linux's RTO is about
//!   SRTT + 200 ms where ns-3's is max(1 s, …). (Linux also decays its variance term per RTT
//!   through `mdev_max`; we use the RFC estimator for both formulas.)
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
    /// Linux `__tcp_set_rto` (include/net/tcp.h): RTO = SRTT + max(4·RTTVAR, min_rto), the
    /// floor inside the sum.
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
    pub rttvar_ns: u64,
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

    /// Adds an RTT sample; clears the backoff (RFC 6298 §5.7: the RTO is recomputed).
    pub fn on_sample(&mut self, r_ns: u64) {
        let r = r_ns.max(1);
        if self.formula == RtoFormula::Ns317 {
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
            RtoFormula::Linux => self.srtt_ns + (4 * self.rttvar_ns).max(self.min_rto_ns),
            RtoFormula::Ns317 => {
                const MS: u64 = 1_000_000;
                ((self.srtt_ns / MS + 4 * (self.rttvar_ns / MS)) * MS).max(self.min_rto_ns)
            }
        }
        .min(self.max_rto_ns);
        self.backoff = 0;
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
        e.on_sample(100 * MS);
        assert_eq!(
            (e.srtt_ns, e.rttvar_ns, e.rto_ns()),
            (100 * MS, 100 * MS, 500 * MS)
        );
        e.on_sample(120 * MS);
        assert_eq!(
            (e.srtt_ns, e.rttvar_ns, e.rto_ns()),
            (102 * MS, 92 * MS, 470 * MS)
        );
        e.on_sample(90 * MS);
        assert_eq!((e.srtt_ns, e.rttvar_ns), (100_800_000, 84 * MS));
        assert_eq!(e.rto_ns(), 436 * MS);
        // a steady path: the floor
        for _ in 0..200 {
            e.on_sample(100 * MS);
        }
        assert_eq!(e.rto_ns(), 200 * MS);
    }

    #[test]
    fn first_sample_gives_three_rtts_then_converges() {
        let mut e = RttEstimator::new(1000 * MS, 200 * MS, 120_000 * MS, RtoFormula::Rfc6298);
        assert_eq!(e.rto_ns(), 1000 * MS);
        e.on_sample(100 * MS);
        assert_eq!((e.srtt_ns, e.rttvar_ns), (100 * MS, 50 * MS));
        assert_eq!(e.rto_ns(), 300 * MS);
        for _ in 0..100 {
            e.on_sample(100 * MS);
        }
        // variance decays: RTO floors at min_rto
        assert_eq!(e.rto_ns(), 200 * MS);
        let mut l = RttEstimator::new(1000 * MS, 200 * MS, 120_000 * MS, RtoFormula::Linux);
        for _ in 0..100 {
            l.on_sample(100 * MS);
        }
        assert_eq!(l.rto_ns(), 300 * MS, "Linux adds the floor to SRTT");
    }

    #[test]
    fn rttvar_uses_the_old_srtt() {
        let mut e = RttEstimator::new(1000 * MS, 1, 120_000 * MS, RtoFormula::Rfc6298);
        e.on_sample(100 * MS);
        e.on_sample(180 * MS);
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
        e.on_sample(100 * MS);
        assert_eq!(e.backoff(), 0);
        assert_eq!(e.rto_ns(), 300 * MS);
    }
}
