//! Statistics of the traffic generators, driven directly (no network): long-run mean rates
//! over many seeds, and long-range dependence by the aggregated-variance estimate of H
//! (metrics::hurst): PPBP's estimate follows its configured H, while on/off and CBR show no
//! long-range dependence.

use haslab_core::metrics::hurst::{aggregated_variance_hurst, log_levels};
use haslab_core::traffic::cbr::Cbr;
use haslab_core::traffic::onoff::OnOff;
use haslab_core::traffic::ppbp::{Ppbp, PpbpParams};
use haslab_core::traffic::{stream, Generator};

const S: u64 = 1_000_000_000;
const MS: u64 = 1_000_000;

/// Bytes sent by `g` in each bin of `bin_ns` over [start, end).
fn bins(g: &mut dyn Generator, packet: u64, start: u64, end: u64, bin_ns: u64) -> Vec<f64> {
    let mut v = vec![0.0; ((end - start) / bin_ns) as usize];
    let mut t = start;
    while t < end {
        let w = g.wake(t);
        v[((t - start) / bin_ns) as usize] += (w.packets as u64 * packet) as f64;
        match w.next_ns {
            Some(n) => {
                assert!(n > t, "a generator must move time forward ({n} after {t})");
                t = n
            }
            None => break,
        }
    }
    v
}

fn mean_bps(x: &[f64], secs: f64) -> f64 {
    x.iter().sum::<f64>() * 8.0 / secs
}

fn ppbp(rate: f64, h: f64, mean_burst_s: f64, seed: u64, start: u64) -> Ppbp {
    let burst = 1_000_000;
    Ppbp::new(
        PpbpParams {
            mean_rate_bps: rate,
            hurst: h,
            burst_rate_bps: burst,
            burst_arrivals_per_s: rate / (burst as f64 * mean_burst_s),
        },
        1500,
        start,
        stream(seed, "ppbp"),
    )
}

/// Mean over seeds of each seed's rate, relative to the target.
fn check_mean(name: &str, target: f64, rates: &[f64]) {
    let m = rates.iter().sum::<f64>() / rates.len() as f64;
    println!(
        "{name}: mean {:.4} of target over {} seeds",
        m / target,
        rates.len()
    );
    assert!(
        (m / target - 1.0).abs() < 0.03,
        "{name}: long-run mean {m:.0} bps is not within 3 % of {target:.0} bps"
    );
}

#[test]
fn ppbp_mean_rate_is_the_target_over_many_seeds() {
    // the TcpHas paper's PPBP: 40 Mbps, H = 0.7, 1 Mbps bursts of 200 ms on average
    let secs = 200;
    let rates: Vec<f64> = (0..16)
        .map(|seed| {
            let mut g = ppbp(40e6, 0.7, 0.2, seed, 5 * S);
            mean_bps(&bins(&mut g, 1500, 5 * S, (5 + secs) * S, S), secs as f64)
        })
        .collect();
    check_mean("ppbp", 40e6, &rates);
}

#[test]
fn onoff_and_cbr_mean_rates_are_the_target_over_many_seeds() {
    // the Enhancing-TCP paper's exponential source: 5 Mbps while on, 500 ms / 500 ms → 2.5 Mbps
    let secs = 200;
    let rates: Vec<f64> = (0..16)
        .map(|seed| {
            let mut g = OnOff::new(5_000_000, 500 * MS, 500 * MS, 1500, 0, stream(seed, "exp"));
            assert!((g.mean_rate_bps() - 2.5e6).abs() < 1.0);
            mean_bps(&bins(&mut g, 1500, 0, secs * S, S), secs as f64)
        })
        .collect();
    check_mean("onoff", 2.5e6, &rates);
    // unequal periods and small packets
    let rates: Vec<f64> = (0..16)
        .map(|seed| {
            let mut g = OnOff::new(8_000_000, 100 * MS, 300 * MS, 200, 0, stream(seed, "exp2"));
            mean_bps(&bins(&mut g, 200, 0, secs * S, S), secs as f64)
        })
        .collect();
    check_mean("onoff 100/300 ms", 2e6, &rates);
    for rate in [500_000u64, 3_000_000] {
        let mut g = Cbr::new(rate, 1000, 0);
        let x = bins(&mut g, 1000, 0, 60 * S, S);
        // deterministic: within one packet of the rate × time
        let sent = x.iter().sum::<f64>();
        assert!(
            (sent - rate as f64 * 60.0 / 8.0).abs() <= 1000.0,
            "cbr {rate}: {sent}"
        );
    }
}

/// H estimates of PPBP series (10 ms bins, 2000 s, blocks of 0.3 s to 20 s) for 8 seeds.
fn ppbp_h_estimates(h: f64) -> Vec<f64> {
    (0..8)
        .map(|seed| {
            // short bursts (20 ms on average) put the asymptotic regime within reach
            let mut g = ppbp(10e6, h, 0.02, 100 + seed, 0);
            let x = bins(&mut g, 1500, 0, 2000 * S, 10 * MS);
            aggregated_variance_hurst(&x, &log_levels(30, 2000, 5)).unwrap()
        })
        .collect()
}

#[test]
fn ppbp_aggregated_variance_estimate_follows_the_configured_hurst_parameter() {
    for h in [0.6, 0.7, 0.85] {
        let est = ppbp_h_estimates(h);
        let mean = est.iter().sum::<f64>() / est.len() as f64;
        println!("H = {h}: estimates {est:.3?}, mean {mean:.3}");
        assert!(
            (mean - h).abs() <= 0.1,
            "H = {h}: aggregated-variance estimate {mean:.3} is not within 0.1"
        );
        for e in &est {
            assert!((e - h).abs() <= 0.15, "H = {h}: one seed's estimate {e:.3}");
        }
    }
}

#[test]
fn onoff_and_cbr_show_no_long_range_dependence() {
    // on/off periods are exponential (memory ≈ 0.25 s): over blocks of 2 s to 100 s the
    // block-mean variance falls as 1/m, H ≈ 0.5
    let est: Vec<f64> = (0..4)
        .map(|seed| {
            let mut g = OnOff::new(5_000_000, 500 * MS, 500 * MS, 1500, 0, stream(seed, "x"));
            let x = bins(&mut g, 1500, 0, 10_000 * S, 100 * MS);
            aggregated_variance_hurst(&x, &log_levels(20, 1000, 5)).unwrap()
        })
        .collect();
    println!("onoff: {est:.3?}");
    for e in &est {
        assert!(
            (e - 0.5).abs() < 0.1,
            "on/off H estimate {e:.3} is not near 0.5"
        );
    }
    // CBR is periodic: bins differ by at most one packet and block means converge as 1/m
    // (faster than white noise), so H falls below 0.5 — certainly no long-range dependence.
    let mut g = Cbr::new(2_500_000, 1500, 0);
    let x = bins(&mut g, 1500, 0, 2000 * S, 7 * MS);
    let h = aggregated_variance_hurst(&x, &log_levels(10, 1000, 5)).unwrap();
    println!("cbr: {h:.3}");
    assert!(h < 0.55, "CBR H estimate {h:.3}");
}

#[test]
fn web_offered_load_is_the_target_over_many_seeds() {
    use haslab_core::traffic::web::WebArrivals;
    // 4 Mbps of transfers of 50 KB on average (bounded Pareto, shape 1.2, at most 100 MB)
    let horizon = 20_000 * S;
    let rates: Vec<f64> = (0..16)
        .map(|seed| {
            let mut w = WebArrivals::new(4_000_000, 50_000, 1.2, 100_000_000, stream(seed, "web"));
            let (mut t, mut bytes) = (w.gap_ns(), 0u64);
            while t < horizon {
                bytes += w.size_bytes();
                t += w.gap_ns();
            }
            bytes as f64 * 8.0 / (horizon / S) as f64
        })
        .collect();
    check_mean("web", 4e6, &rates);
}
