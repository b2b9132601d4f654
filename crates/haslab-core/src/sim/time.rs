//! Simulated time is an integer number of nanoseconds since the start of the run (`u64`,
//! enough for 584 years). Every variable holding a time or a duration ends in `_ns`.

pub const NS_PER_US: u64 = 1_000;
pub const NS_PER_MS: u64 = 1_000_000;
pub const NS_PER_SEC: u64 = 1_000_000_000;

/// Time to serialise `bytes` on a link of `rate_bps`, rounded up to the next nanosecond so that
/// a link never transmits faster than its rate.
#[inline]
pub fn tx_time_ns(bytes: u64, rate_bps: u64) -> u64 {
    debug_assert!(rate_bps > 0);
    let bits = bytes as u128 * 8 * NS_PER_SEC as u128;
    bits.div_ceil(rate_bps as u128) as u64
}

/// Seconds as `f64`, for reporting only (never for simulation logic).
#[inline]
pub fn secs(t_ns: u64) -> f64 {
    t_ns as f64 / NS_PER_SEC as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn tx_time_of_a_full_packet_at_8mbps_is_1500_us() {
        assert_eq!(tx_time_ns(1500, 8_000_000), 1_500_000);
        // rounding up: 1 byte at 3 bps is 8/3 s
        assert_eq!(tx_time_ns(1, 3), 2_666_666_667);
    }
}
