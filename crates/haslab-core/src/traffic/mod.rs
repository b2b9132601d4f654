//! Cross-traffic generators: datagram sources that load the network next to the TCP flows.
//!
//! - [`ppbp`]: Poisson Pareto Burst Process, long-range-dependent aggregate Internet traffic;
//! - [`onoff`]: exponential on/off source (ns-2/ns-3 `Exponential` traffic);
//! - [`cbr`]: constant bit rate;
//!
//! (FTP-like bulk TCP is a `[[flow]]` with `app = "bulk"` and `start`/`stop`; short web-like
//! TCP transfers are [`web`].)
//!
//! A datagram generator is a [`Generator`]: the world wakes it at its start time and then at
//! each time it asks for, and it answers how many packets leave now. Every generator turns a
//! piecewise-constant bit rate into packets with a [`Fluid`] accumulator, so the bytes sent by
//! time t are the integral of the rate up to t, to within one packet: a generator's long-run
//! mean rate is exactly its model's, whatever the packet size. Sizes and rates are counted in
//! IP bytes (what links serialise): a packet of `packet_bytes` carries
//! `packet_bytes − 28` bytes of UDP payload.
//!
//! Each generator draws from its own random stream, `Stream::new(seed, "traffic:<name>")`.

pub mod cbr;
pub mod onoff;
pub mod plan;
pub mod ppbp;
pub mod web;

use crate::sim::rng::Stream;
use crate::sim::time::NS_PER_SEC;
use plan::{GeneratorPlan, TrafficPlan};

/// IPv4 (20 bytes) and UDP (8 bytes) headers of a generator's datagram.
pub const UDP_IP_HEADER_BYTES: u32 = 28;

/// What a generator does when woken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wake {
    /// Packets that leave now.
    pub packets: u32,
    /// When to wake the generator next (None: it has nothing more to send).
    pub next_ns: Option<u64>,
}

/// A datagram source.
pub trait Generator: Send {
    /// Called first at the start time, then at each time it returned.
    fn wake(&mut self, now_ns: u64) -> Wake;
    /// The rate the model sends at on average, bits per second.
    fn mean_rate_bps(&self) -> f64;
}

/// Turns a piecewise-constant bit rate into packet departures: bits accrue at the current
/// rate and a packet leaves as soon as a whole packet's worth has accrued; the remainder carries
/// over (also across periods of zero rate, as ns-3's OnOffApplication keeps its residual bits).
/// Credit is kept in bit·ns (bits × 10⁹) so that no rounding ever drifts.
#[derive(Clone, Debug)]
pub struct Fluid {
    packet_bit_ns: u128,
    credit_bit_ns: u128,
    rate_bps: u64,
    at_ns: u64,
}

impl Fluid {
    pub fn new(packet_bytes: u32, now_ns: u64) -> Self {
        Fluid {
            packet_bit_ns: packet_bytes as u128 * 8 * NS_PER_SEC as u128,
            credit_bit_ns: 0,
            rate_bps: 0,
            at_ns: now_ns,
        }
    }
    /// Accrues bits at the current rate up to `now_ns`.
    #[inline]
    pub fn advance(&mut self, now_ns: u64) {
        if now_ns > self.at_ns {
            self.credit_bit_ns += self.rate_bps as u128 * (now_ns - self.at_ns) as u128;
            self.at_ns = now_ns;
        }
    }
    /// Changes the rate from `now_ns` on.
    pub fn set_rate(&mut self, now_ns: u64, rate_bps: u64) {
        self.advance(now_ns);
        self.rate_bps = rate_bps;
    }
    pub fn rate_bps(&self) -> u64 {
        self.rate_bps
    }
    /// Removes and returns the whole packets accrued so far.
    #[inline]
    pub fn take_packets(&mut self) -> u32 {
        let n = (self.credit_bit_ns / self.packet_bit_ns).min(u32::MAX as u128);
        self.credit_bit_ns -= n * self.packet_bit_ns;
        n as u32
    }
    /// When the next whole packet will have accrued at the current rate (None at rate 0).
    #[inline]
    pub fn next_packet_ns(&self) -> Option<u64> {
        if self.rate_bps == 0 {
            return None;
        }
        let need = self.packet_bit_ns.saturating_sub(self.credit_bit_ns);
        let dt = need.div_ceil(self.rate_bps as u128);
        Some(self.at_ns.saturating_add(dt.min(u64::MAX as u128) as u64))
    }
}

/// Seconds (f64) to whole nanoseconds, saturating far beyond any run (heavy-tailed draws can be
/// astronomically long).
pub(crate) fn secs_to_ns(s: f64) -> u64 {
    let ns = s * NS_PER_SEC as f64;
    if ns >= 1e18 {
        1_000_000_000_000_000_000
    } else if ns > 0.0 {
        ns.round() as u64
    } else {
        0
    }
}

/// The random stream of generator `name`.
pub fn stream(seed: u64, name: &str) -> Stream {
    Stream::new(seed, &format!("traffic:{name}"))
}

/// Builds the datagram generator of a plan entry, started at `plan.start_ns` (None for the
/// web generator, which the world drives itself).
pub fn build(plan: &TrafficPlan, seed: u64) -> Option<Box<dyn Generator>> {
    let rng = stream(seed, &plan.name);
    let start = plan.start_ns;
    let pkt = plan.packet_bytes;
    Some(match plan.kind {
        GeneratorPlan::Ppbp {
            mean_rate_bps,
            hurst,
            burst_rate_bps,
            burst_arrivals_per_s,
            ..
        } => Box::new(ppbp::Ppbp::new(
            ppbp::PpbpParams {
                mean_rate_bps: mean_rate_bps as f64,
                hurst,
                burst_rate_bps,
                burst_arrivals_per_s,
            },
            pkt,
            start,
            rng,
        )),
        GeneratorPlan::OnOff {
            rate_bps,
            mean_on_ns,
            mean_off_ns,
        } => Box::new(onoff::OnOff::new(
            rate_bps,
            mean_on_ns,
            mean_off_ns,
            pkt,
            start,
            rng,
        )),
        GeneratorPlan::Cbr { rate_bps } => Box::new(cbr::Cbr::new(rate_bps, pkt, start)),
        GeneratorPlan::Web { .. } => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fluid_sends_the_integral_of_the_rate() {
        // 1500-byte packets at 12 Mbps: one per ms
        let mut f = Fluid::new(1500, 0);
        f.set_rate(0, 12_000_000);
        assert_eq!(f.next_packet_ns(), Some(1_000_000));
        f.advance(2_500_000);
        assert_eq!(f.take_packets(), 2);
        // half a packet of credit remains; at 6 Mbps the rest takes 1 ms
        f.set_rate(2_500_000, 6_000_000);
        assert_eq!(f.next_packet_ns(), Some(3_500_000));
        // at rate 0 the credit is kept, nothing is due
        f.set_rate(3_000_000, 0);
        assert_eq!(f.next_packet_ns(), None);
        f.set_rate(10_000_000, 12_000_000);
        assert_eq!(f.next_packet_ns(), Some(10_250_000));
    }
}
