//! Sender pacing rates (Linux `tcp_update_pacing_rate`, net/ipv4/tcp_input.c).
//!
//! - `linux`: Linux `tcp_update_pacing_rate` (net/ipv4/tcp_input.c), recomputed on every ACK:
//!   rate = ratio × max(cwnd, packets_out) × MSS / SRTT with ratio = `tcp_pacing_ss_ratio`
//!   (200 %) while cwnd < ssthresh/2 and `tcp_pacing_ca_ratio` (120 %) otherwise. Linux enforces
//!   it only with the fq qdisc (or a CC asking for internal pacing); choosing this mode means
//!   "fq is installed".
//! - `cwnd-per-rtt`: rate = cwnd × MSS / SRTT, the window spread evenly over one RTT (the
//!   Linux 3.12 FQ pacing the newCWV paper used, §3).
//! - a maximum rate (SO_MAX_PACING_RATE) caps either, and paces on its own when the mode is
//!   `off`.
//!
//! Before the first RTT sample there is no rate (Linux's initial `sk_pacing_rate` is ~0U,
//! i.e. unpaced): the initial window leaves as a burst, as ns-3's `PaceInitialWindow = false`.
//! The rate counts MSS payload bytes, as Linux does, while the sender spaces packets by their
//! wire size; pacing is therefore about 3 % slower than the nominal rate.

use super::cc::CcState;
use super::config::PacingMode;

/// `tcp_pacing_ss_ratio`, percent.
pub const PACING_SS_RATIO: u64 = 200;
/// `tcp_pacing_ca_ratio`, percent.
pub const PACING_CA_RATIO: u64 = 120;

/// The pacing rate for `mode`, or None for no pacing.
pub fn pacing_rate_bps(
    mode: PacingMode,
    max_rate_bps: Option<u64>,
    tp: &CcState,
    packets_out: u32,
) -> Option<u64> {
    let per_rtt = |ratio_pct: u64, pkts: u32| -> Option<u64> {
        (tp.srtt_ns > 0).then(|| {
            let bits = pkts as u128 * tp.mss_bytes as u128 * 8 * ratio_pct as u128;
            (bits * 1_000_000_000 / (100 * tp.srtt_ns as u128)).min(u64::MAX as u128) as u64
        })
    };
    let rate = match mode {
        PacingMode::Off => None,
        PacingMode::Linux => {
            let ratio = if tp.cwnd_pkts < tp.ssthresh_pkts / 2 {
                PACING_SS_RATIO
            } else {
                PACING_CA_RATIO
            };
            per_rtt(ratio, tp.cwnd_pkts.max(packets_out))
        }
        PacingMode::CwndPerRtt => per_rtt(100, tp.cwnd_pkts),
    };
    match (rate, max_rate_bps) {
        (Some(r), Some(m)) => Some(r.min(m)),
        (None, Some(m)) if mode == PacingMode::Off => Some(m),
        (r, _) => r,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tp(cwnd: u32, ssthresh: u32) -> CcState {
        let mut t = CcState::new(10, 1000);
        t.cwnd_pkts = cwnd;
        t.ssthresh_pkts = ssthresh;
        t.srtt_ns = 100_000_000;
        t
    }

    #[test]
    fn linux_uses_200_percent_below_half_ssthresh_and_120_above() {
        // cwnd 10 · 1000 B · 8 / 100 ms = 800 kbps
        let r = |cwnd, ssthresh| pacing_rate_bps(PacingMode::Linux, None, &tp(cwnd, ssthresh), 0);
        assert_eq!(r(10, 100), Some(1_600_000));
        // the switch is at ssthresh/2, not ssthresh
        assert_eq!(r(60, 100), Some(60 * 80_000 * 12 / 10));
        assert_eq!(r(49, 100), Some(49 * 80_000 * 2));
        // packets_out above cwnd counts
        assert_eq!(
            pacing_rate_bps(PacingMode::Linux, None, &tp(10, 10), 20),
            Some(20 * 80_000 * 12 / 10)
        );
    }

    #[test]
    fn cwnd_per_rtt_and_the_maximum_rate() {
        let t = tp(10, 5);
        assert_eq!(
            pacing_rate_bps(PacingMode::CwndPerRtt, None, &t, 0),
            Some(800_000)
        );
        assert_eq!(
            pacing_rate_bps(PacingMode::CwndPerRtt, Some(500_000), &t, 0),
            Some(500_000)
        );
        assert_eq!(
            pacing_rate_bps(PacingMode::Off, Some(500_000), &t, 0),
            Some(500_000)
        );
        assert_eq!(pacing_rate_bps(PacingMode::Off, None, &t, 0), None);
        let mut fresh = tp(10, 5);
        fresh.srtt_ns = 0;
        assert_eq!(pacing_rate_bps(PacingMode::Linux, None, &fresh, 0), None);
    }
}
