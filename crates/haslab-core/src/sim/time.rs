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
    // a 64-bit division (any packet: up to 2.3 GB) is several times cheaper than a 128-bit one,
    // and gives the same quotient
    match bytes.checked_mul(8 * NS_PER_SEC) {
        Some(bits) => bits.div_ceil(rate_bps),
        None => (bytes as u128 * 8 * NS_PER_SEC as u128).div_ceil(rate_bps as u128) as u64,
    }
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
    #[test]
    fn the_64_bit_path_agrees_with_128_bit_arithmetic() {
        let exact =
            |b: u64, r: u64| (b as u128 * 8 * NS_PER_SEC as u128).div_ceil(r as u128) as u64;
        for b in [
            0,
            1,
            40,
            52,
            1500,
            9000,
            65_535,
            2_305_843_009,
            u32::MAX as u64,
        ] {
            for r in [
                1,
                3,
                1_000_000,
                8_000_000,
                10_000_000_000,
                100_000_000_000,
                u64::MAX,
            ] {
                assert_eq!(tx_time_ns(b, r), exact(b, r), "{b} B at {r} bit/s");
            }
        }
    }
}
