//! The aggregated-variance estimate of the Hurst parameter of a series (e.g. bytes per time
//! bin of a traffic source).
//!
//! Source: J. Beran, "Statistics for Long-Memory Processes" (1994), §4.2; M. S. Taqqu,
//! V. Teverovsky, W. Willinger, "Estimators for long-range dependence: an empirical study",
//! Fractals 3(4), 1995, §2.1. Split the series into blocks of m values and take the variance
//! of the block means X^(m); for a (second-order, asymptotically) self-similar process
//! `Var X^(m) ~ c·m^(2H−2)`, so the least-squares slope β of log Var X^(m) against log m over a
//! range of m gives `H = 1 + β/2`. Short-range-dependent series give β = −1, H = 0.5;
//! long-range dependence gives 0.5 < H < 1. The estimate is biased downward for finite series
//! (Taqqu et al.), more so at large m where few blocks remain.

/// Variance of the means of consecutive blocks of `m` values (the last partial block is
/// dropped); None if fewer than 2 blocks.
pub fn block_mean_variance(x: &[f64], m: usize) -> Option<f64> {
    let n = x.len() / m.max(1);
    if n < 2 {
        return None;
    }
    let means: Vec<f64> = x
        .chunks_exact(m)
        .take(n)
        .map(|c| c.iter().sum::<f64>() / m as f64)
        .collect();
    let mu = means.iter().sum::<f64>() / n as f64;
    Some(means.iter().map(|v| (v - mu).powi(2)).sum::<f64>() / (n - 1) as f64)
}

/// Log-spaced block sizes from `m_min` to `m_max` (`per_decade` per factor of ten).
pub fn log_levels(m_min: usize, m_max: usize, per_decade: usize) -> Vec<usize> {
    let mut v: Vec<usize> = Vec::new();
    let (a, b) = ((m_min.max(1) as f64).log10(), (m_max.max(1) as f64).log10());
    let steps = ((b - a) * per_decade as f64).ceil().max(1.0) as usize;
    for k in 0..=steps {
        let m = 10f64.powf(a + (b - a) * k as f64 / steps as f64).round() as usize;
        if v.last() != Some(&m) {
            v.push(m);
        }
    }
    v
}

/// The aggregated-variance estimate of H over the block sizes `levels` (each must leave at
/// least 2 blocks and a non-zero variance to count). None if fewer than 2 levels count.
pub fn aggregated_variance_hurst(x: &[f64], levels: &[usize]) -> Option<f64> {
    let pts: Vec<(f64, f64)> = levels
        .iter()
        .filter_map(|&m| {
            let v = block_mean_variance(x, m)?;
            (v > 0.0).then(|| ((m as f64).ln(), v.ln()))
        })
        .collect();
    if pts.len() < 2 {
        return None;
    }
    let n = pts.len() as f64;
    let (sx, sy) = pts
        .iter()
        .fold((0.0, 0.0), |(a, b), &(x, y)| (a + x, b + y));
    let (mx, my) = (sx / n, sy / n);
    let sxy: f64 = pts.iter().map(|&(x, y)| (x - mx) * (y - my)).sum();
    let sxx: f64 = pts.iter().map(|&(x, _)| (x - mx).powi(2)).sum();
    Some(1.0 + sxy / sxx / 2.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::rng::Stream;

    #[test]
    fn white_noise_has_h_one_half() {
        let mut r = Stream::new(1, "noise");
        let x: Vec<f64> = (0..200_000).map(|_| r.uniform()).collect();
        let h = aggregated_variance_hurst(&x, &log_levels(10, 1000, 5)).unwrap();
        assert!((h - 0.5).abs() < 0.05, "{h}");
    }

    #[test]
    fn long_constant_runs_look_persistent() {
        // runs of 20 000 equal values: over blocks shorter than a run the block means vary as
        // much as the values themselves, so Var X^(m) hardly falls with m (H near 1)
        let mut r = Stream::new(2, "runs");
        let mut x = Vec::new();
        while x.len() < 100_000 {
            let v = r.uniform();
            let len = 20_000;
            x.extend(std::iter::repeat_n(v, len));
        }
        let h = aggregated_variance_hurst(&x, &log_levels(10, 1000, 5)).unwrap();
        assert!(h > 0.9, "{h}");
    }
}
