//! Sequence numbers. Inside the simulator each direction's sequence space is a `u64` offset
//! from its initial sequence number (offset 0 is the SYN, data byte k is at offset k + 1);
//! on the wire it is the 32-bit `ISN + offset`, which wraps. The receiver of a wire value
//! recovers the offset as the one closest to a reference offset it already knows (snd_una
//! or rcv_nxt), which is unambiguous while windows stay below 2^31 bytes (RFC 793 §3.3,
//! RFC 7323 §5 — PAWS is not needed because nothing here is older than a window).

/// The 32-bit wire value of offset `off` in a sequence space starting at `isn`.
#[inline]
pub fn to_wire(isn: u32, off: u64) -> u32 {
    isn.wrapping_add(off as u32)
}

/// The offset of wire value `wire`, closest to `reference` (an offset of the same space).
#[inline]
pub fn from_wire(isn: u32, wire: u32, reference: u64) -> u64 {
    let rel = wire.wrapping_sub(isn);
    let diff = rel.wrapping_sub(reference as u32) as i32 as i64;
    (reference as i64 + diff).max(0) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn wraps_around_two_to_the_32() {
        let isn = u32::MAX - 10;
        assert_eq!(to_wire(isn, 0), u32::MAX - 10);
        assert_eq!(to_wire(isn, 11), 0);
        assert_eq!(from_wire(isn, 5, 3), 16);
        // far past the first wrap
        let off = (1u64 << 33) + 12345;
        assert_eq!(from_wire(isn, to_wire(isn, off), off - 70_000), off);
    }

    proptest! {
        #[test]
        fn round_trips_within_half_the_space(isn: u32, off in 0u64..(1u64 << 40), delta in -(1i64 << 30)..(1i64 << 30)) {
            let reference = (off as i64 + delta).max(0) as u64;
            prop_assume!(reference.abs_diff(off) < (1 << 30));
            prop_assert_eq!(from_wire(isn, to_wire(isn, off), reference), off);
        }
    }
}
