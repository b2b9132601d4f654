//! Short web-like TCP transfers: responses of bounded-Pareto size, starting as a Poisson
//! process, each on its own TCP connection from the server (`src`) to the client (`dst`).
//!
//! Source: the heavy-tailed web-object model of M. Crovella and A. Bestavros,
//! "Self-similarity in World Wide Web traffic", IEEE/ACM ToN 5(6), 1997 (file sizes Pareto with
//! shape ≈ 1.1–1.3), in the bounded form of M. Harchol-Balter et al. (bounded Pareto
//! B(k, p, α)), a common background in HAS studies. Default shape 1.2.
//!
//! Given a target mean size m, the shape α and an upper bound `max`, the lower bound (scale) L
//! is solved for by bisection so that the bounded law's mean is m exactly. Transfers arrive at
//! rate `λ = rate / (8·m)`, so the offered load is `rate` bits per second on average. This
//! file only draws arrivals and sizes; the world opens one connection per transfer, writes the
//! size with a bulk sender and lets TCP deliver it.

use crate::sim::rng::Stream;

/// The bounded Pareto law on [lo, hi] with shape `alpha`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BoundedPareto {
    pub alpha: f64,
    pub lo: f64,
    pub hi: f64,
}

impl BoundedPareto {
    /// Its mean.
    pub fn mean(&self) -> f64 {
        let (a, l, h) = (self.alpha, self.lo, self.hi);
        let norm = 1.0 - (l / h).powf(a);
        if (a - 1.0).abs() < 1e-9 {
            l * (h / l).ln() / norm
        } else {
            l.powf(a) / norm * a / (a - 1.0) * (l.powf(1.0 - a) - h.powf(1.0 - a))
        }
    }
    /// The law with shape `alpha`, upper bound `hi` and mean `mean` (< hi): the lower bound
    /// found by bisection (the mean grows with the lower bound, from 0 to `hi`).
    pub fn with_mean(alpha: f64, mean: f64, hi: f64) -> Self {
        let (mut a, mut b) = (0.0_f64, mean);
        for _ in 0..200 {
            let mid = 0.5 * (a + b);
            if mid <= 0.0 {
                break;
            }
            let m = BoundedPareto { alpha, lo: mid, hi }.mean();
            if m < mean {
                a = mid;
            } else {
                b = mid;
            }
        }
        BoundedPareto {
            alpha,
            lo: 0.5 * (a + b),
            hi,
        }
    }
    /// One draw (inverse transform).
    pub fn sample(&self, rng: &mut Stream) -> f64 {
        let u = rng.uniform();
        let norm = 1.0 - (self.lo / self.hi).powf(self.alpha);
        (self.lo / (1.0 - u * norm).powf(1.0 / self.alpha)).clamp(self.lo, self.hi)
    }
}

/// The arrival process of web transfers.
pub struct WebArrivals {
    pub sizes: BoundedPareto,
    pub arrivals_per_s: f64,
    rng: Stream,
}

impl WebArrivals {
    /// `rate_bps` offered on average with sizes of mean `mean_size_bytes`.
    pub fn new(
        rate_bps: u64,
        mean_size_bytes: u64,
        shape: f64,
        max_size_bytes: u64,
        rng: Stream,
    ) -> Self {
        WebArrivals {
            sizes: BoundedPareto::with_mean(shape, mean_size_bytes as f64, max_size_bytes as f64),
            arrivals_per_s: rate_bps as f64 / (8.0 * mean_size_bytes as f64),
            rng,
        }
    }
    /// The gap to the next transfer, ns (exponential, at least 1).
    pub fn gap_ns(&mut self) -> u64 {
        super::secs_to_ns(self.rng.exponential(1.0 / self.arrivals_per_s)).max(1)
    }
    /// The size of a transfer, bytes (at least 1).
    pub fn size_bytes(&mut self) -> u64 {
        self.sizes.sample(&mut self.rng).round().max(1.0) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_pareto_scale_gives_the_mean() {
        let d = BoundedPareto::with_mean(1.2, 100_000.0, 100e6);
        assert!((d.mean() - 100_000.0).abs() < 1e-3, "{d:?}");
        // for an unbounded Pareto the scale would be m·(α−1)/α = 16 667; cutting the tail
        // above 100 MB (which holds 44 % of that law's mean) raises it
        assert!(d.lo > 16_667.0 && d.lo < 25_000.0, "{d:?}");
        let mut rng = Stream::new(5, "web");
        let n = 1_000_000;
        let m = (0..n).map(|_| d.sample(&mut rng)).sum::<f64>() / n as f64;
        assert!((m / 100_000.0 - 1.0).abs() < 0.03, "sample mean {m}");
        let d1 = BoundedPareto::with_mean(1.0, 50_000.0, 1e7);
        assert!((d1.mean() - 50_000.0).abs() < 1e-3);
    }
}
