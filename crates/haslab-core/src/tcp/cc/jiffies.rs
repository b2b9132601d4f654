//! The kernel's tick clock, for the algorithms Linux times in jiffies (CUBIC's epoch,
//! Westwood+'s windows and RTTs).
//!
//! `jiffies` counts ticks of 1/HZ s (`tcp_jiffies32`); HZ is the kernel's `CONFIG_HZ`, one of
//! the choices of kernel/Kconfig.hz: 100, 250 (Kconfig's default, and the value of Debian's and
//! Ubuntu's generic kernels and the live testbed), 300 or 1000. The simulation starts on a tick.

/// The values of `CONFIG_HZ` Kconfig offers (kernel/Kconfig.hz).
pub const HZ_CHOICES: [u32; 4] = [100, 250, 300, 1000];

/// Checks a `hz` parameter: one of [`HZ_CHOICES`]; the error names the field.
pub fn check_hz(hz: u32) -> Result<(), (String, String)> {
    if HZ_CHOICES.contains(&hz) {
        return Ok(());
    }
    Err((
        "hz".into(),
        format!("must be one of Linux's CONFIG_HZ choices 100, 250, 300 or 1000 (got {hz})"),
    ))
}

/// `tcp_jiffies32` at `t_ns`: ⌊t·HZ/1 s⌋.
#[inline]
pub fn jiffies(t_ns: u64, hz: u32) -> u64 {
    (t_ns as u128 * hz as u128 / 1_000_000_000) as u64
}

/// The ns at which tick `j` begins, ⌈j·10⁹/HZ⌉: the first instant at which [`jiffies`] reads
/// `j`.
#[inline]
pub fn jiffies_to_ns(j: u64, hz: u32) -> u64 {
    (j as u128 * 1_000_000_000).div_ceil(hz as u128) as u64
}

/// A length of `ns` rounded **up** to whole jiffies: `usecs_to_jiffies` of it in µs (the same
/// at HZ 100, 250 and 1000, whose jiffies are whole µs), and at HZ = 300 a length of whole
/// jiffies taken to ns by truncation comes back whole.
#[inline]
pub fn ns_to_jiffies(ns: u64, hz: u32) -> u64 {
    (ns as u128 * hz as u128).div_ceil(1_000_000_000) as u64
}

/// Linux `usecs_to_jiffies`: `us` rounded **up** to whole jiffies.
#[inline]
pub fn usecs_to_jiffies(us: u64, hz: u32) -> u64 {
    (us as u128 * hz as u128).div_ceil(1_000_000) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// At HZ = 250 a jiffy is 4 ms: 10.003 s is tick 2,500, and 20,300 µs rounds up to 6
    /// jiffies (24 ms); at HZ = 1000, tick 10,003 and 21 jiffies; at HZ = 300, 10.003 s is
    /// ⌊3,000.9⌋ = 3,000 and 20,300 µs is ⌈6.09⌉ = 7. A whole number of jiffies stays as it is.
    #[test]
    fn ticks_round_down_and_usecs_round_up() {
        for (hz, tick, rtt_j) in [
            (250, 2_500, 6),
            (1000, 10_003, 21),
            (300, 3_000, 7),
            (100, 1_000, 3),
        ] {
            assert_eq!(jiffies(10_003_000_000, hz), tick, "HZ {hz}");
            assert_eq!(usecs_to_jiffies(20_300, hz), rtt_j, "HZ {hz}");
        }
        assert_eq!(usecs_to_jiffies(20_000, 250), 5);
        // a tick begins where `jiffies` first reads it; a length of j jiffies truncated to ns is
        // j jiffies again, at HZ = 300 too (3,333,333 ns is one jiffy, 3,333,334 two); a length
        // in whole µs rounds as usecs_to_jiffies
        for hz in HZ_CHOICES {
            for j in [1u64, 2, 3, 50, 1_001] {
                let ns = jiffies_to_ns(j, hz);
                assert_eq!(
                    (jiffies(ns, hz), jiffies(ns - 1, hz)),
                    (j, j - 1),
                    "HZ {hz}"
                );
                let len = (j as u128 * 1_000_000_000 / hz as u128) as u64;
                assert_eq!(ns_to_jiffies(len, hz), j, "HZ {hz} j {j}");
            }
            for us in [1u64, 3_333, 3_334, 20_300, 200_050] {
                assert_eq!(
                    ns_to_jiffies(us * 1000, hz),
                    usecs_to_jiffies(us, hz),
                    "HZ {hz}"
                );
            }
        }
        assert_eq!(ns_to_jiffies(3_333_334, 300), 2);
        assert_eq!(usecs_to_jiffies(0, 250), 0);
    }

    #[test]
    fn hz_is_one_of_kconfigs_choices_and_the_error_names_the_field() {
        for hz in HZ_CHOICES {
            assert!(check_hz(hz).is_ok());
        }
        for hz in [0, 200, 1024] {
            let (field, why) = check_hz(hz).unwrap_err();
            assert_eq!(field, "hz");
            assert!(
                why.contains("250") && why.contains(&hz.to_string()),
                "{why}"
            );
        }
    }
}
