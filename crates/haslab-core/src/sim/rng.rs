//! Seeded random streams.
//!
//! Every random component (a link's loss process, a connection's initial sequence number, a
//! traffic generator) draws from its own stream, derived from the scenario seed and the
//! component's *name* — never from its index — so adding a flow does not change the draws of
//! any other component. The generator is xoshiro256++ (rand_xoshiro), seeded through
//! SplitMix64 from a 64-bit FNV-1a hash of the name mixed with the seed.

use rand::{Rng as _, RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// One independent random stream.
#[derive(Clone, Debug)]
pub struct Stream(Xoshiro256PlusPlus);

fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

impl Stream {
    /// The stream of component `name` in a run seeded with `seed`.
    pub fn new(seed: u64, name: &str) -> Self {
        let key = fnv1a64(name.as_bytes()) ^ seed.rotate_left(17) ^ 0x9e37_79b9_7f4a_7c15;
        Stream(Xoshiro256PlusPlus::seed_from_u64(
            key ^ fnv1a64(&seed.to_le_bytes()),
        ))
    }
    /// Uniform in [0, 1).
    #[inline]
    pub fn uniform(&mut self) -> f64 {
        self.0.random::<f64>()
    }
    /// True with probability `p` (no draw is consumed when `p` is 0).
    #[inline]
    pub fn bernoulli(&mut self, p: f64) -> bool {
        p > 0.0 && self.uniform() < p
    }
    #[inline]
    pub fn next_u32(&mut self) -> u32 {
        self.0.next_u32()
    }
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }
    /// Exponential with the given mean (inverse transform).
    pub fn exponential(&mut self, mean: f64) -> f64 {
        -mean * (1.0 - self.uniform()).ln()
    }
    /// Pareto (type I) with shape `alpha` > 0 and scale (minimum) `scale`, by inverse
    /// transform: `scale / U^(1/alpha)`, U uniform in (0, 1]. Mean `alpha·scale/(alpha−1)` for
    /// alpha > 1.
    pub fn pareto(&mut self, alpha: f64, scale: f64) -> f64 {
        scale / (1.0 - self.uniform()).powf(1.0 / alpha)
    }
    /// Poisson with the given mean: the number of unit-mean exponential gaps that fit in
    /// `mean` (the arrival count of a unit-rate Poisson process). Costs O(mean) draws, which
    /// is fine for the initial burst counts it is used for.
    pub fn poisson(&mut self, mean: f64) -> u64 {
        let mut n = 0;
        let mut t = self.exponential(1.0);
        while t <= mean {
            n += 1;
            t += self.exponential(1.0);
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    fn draws(seed: u64, name: &str) -> Vec<u64> {
        let mut s = Stream::new(seed, name);
        (0..4).map(|_| s.next_u64()).collect()
    }

    #[test]
    fn streams_depend_on_name_and_seed_only() {
        assert_eq!(draws(7, "a"), draws(7, "a"));
        assert_ne!(draws(7, "a"), draws(7, "b"));
        assert_ne!(draws(7, "a"), draws(8, "a"));
    }
    #[test]
    fn pareto_and_poisson_means_match() {
        let mut s = Stream::new(3, "dists");
        let n = 400_000;
        // shape 3: finite variance, so the sample mean converges quickly
        let m = (0..n).map(|_| s.pareto(3.0, 2.0)).sum::<f64>() / n as f64;
        assert!((m - 3.0).abs() < 0.02, "pareto mean {m}");
        assert!((0..1000).all(|_| s.pareto(1.5, 2.0) >= 2.0));
        let k = 100_000;
        let m = (0..k).map(|_| s.poisson(7.5) as f64).sum::<f64>() / k as f64;
        assert!((m - 7.5).abs() < 0.05, "poisson mean {m}");
    }
    #[test]
    fn bernoulli_frequency_matches_p() {
        let mut s = Stream::new(1, "loss");
        let n = 200_000;
        let hits = (0..n).filter(|_| s.bernoulli(0.05)).count() as f64 / n as f64;
        assert!((hits - 0.05).abs() < 0.003, "{hits}");
    }
}
