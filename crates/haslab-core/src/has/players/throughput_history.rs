//! The throughput and latency estimates of dash.js v4.7.4
//! (`src/streaming/rules/ThroughputHistory.js`), shared by the dash.js rules and BOLA-E, and
//! dash.js's level-for-a-bitrate rule (`AbrController.getQualityForBitrate`).
//!
//! Per downloaded segment: latency = first byte − request (`tresponse − trequest`, "|| 1"),
//! download time = last byte − first byte, throughput = 8·bytes / download time
//! (`useDeadTimeLatency = true`, the default in `src/core/Settings.js`). At most 20 samples are
//! kept (`MAX_MEASUREMENTS_TO_KEEP`).
//!
//! - Sliding window (`movingAverageMethod = "slidingWindow"`, the v4.7.4 default): the mean of
//!   the last 4 throughputs (`AVERAGE_THROUGHPUT_SAMPLE_AMOUNT_VOD`; haslab videos are static),
//!   widened by one sample for every consecutive pair inside that window whose ratio is ≥ 1.3
//!   or ≤ 1/1.3 (`THROUGHPUT_INCREASE_SCALE`, `THROUGHPUT_DECREASE_SCALE`); latency: the mean of
//!   the last 4 (`AVERAGE_LATENCY_SAMPLE_AMOUNT`).
//! - EWMA (`"ewma"`): throughput half-lives 3 s and 8 s of download time, latency half-lives
//!   1 and 2 samples, each corrected for its start at 0; throughput = the smaller, latency the
//!   larger of the two (the same form as Sabre's `Ewma`).
//! - Safe throughput = throughput × `bandwidthSafetyFactor` 0.9 (Settings.js).
//! - Cached responses: a download shorter than `cacheLoadThresholds.video` = 50 ms is taken
//!   for a cache hit and ignored once other samples exist (kept while all samples are such).
//!
//! Differences: dash.js measures with `Date` (whole milliseconds) and rounds the throughput to
//! whole kbit/s; here times are exact nanoseconds and throughputs unrounded.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// `MAX_MEASUREMENTS_TO_KEEP`
pub const MAX_SAMPLES: usize = 20;
/// `AVERAGE_THROUGHPUT_SAMPLE_AMOUNT_VOD`
pub const THROUGHPUT_SAMPLES_VOD: usize = 4;
/// `AVERAGE_LATENCY_SAMPLE_AMOUNT`
pub const LATENCY_SAMPLES: usize = 4;
/// `THROUGHPUT_INCREASE_SCALE`, `THROUGHPUT_DECREASE_SCALE`
pub const THROUGHPUT_SCALE: f64 = 1.3;
/// `EWMA_THROUGHPUT_FAST_HALF_LIFE_SECONDS`, `EWMA_THROUGHPUT_SLOW_HALF_LIFE_SECONDS`
pub const EWMA_THROUGHPUT_HALF_LIFE_S: [f64; 2] = [3.0, 8.0];
/// `EWMA_LATENCY_FAST_HALF_LIFE_COUNT`, `EWMA_LATENCY_SLOW_HALF_LIFE_COUNT`
pub const EWMA_LATENCY_HALF_LIFE: [f64; 2] = [1.0, 2.0];
/// `streaming.abr.bandwidthSafetyFactor` (Settings.js)
pub const BANDWIDTH_SAFETY_FACTOR: f64 = 0.9;
/// `streaming.cacheLoadThresholds.video` (Settings.js), ms
pub const CACHE_LOAD_THRESHOLD_MS: f64 = 50.0;

/// `streaming.abr.movingAverageMethod`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum MovingAverage {
    /// "slidingWindow", the dash.js v4.7.4 default.
    Sliding,
    /// "ewma".
    Ewma,
}

#[derive(Clone, Copy, Debug, Default)]
struct Ewma {
    fast: f64,
    slow: f64,
    weight: f64,
}

impl Ewma {
    fn push(&mut self, value: f64, weight: f64, half_life: [f64; 2]) {
        let a = 0.5f64.powf(weight / half_life[0]);
        self.fast = (1.0 - a) * value + a * self.fast;
        let a = 0.5f64.powf(weight / half_life[1]);
        self.slow = (1.0 - a) * value + a * self.slow;
        self.weight += weight;
    }
    fn corrected(&self, half_life: [f64; 2]) -> Option<(f64, f64)> {
        (self.weight > 0.0).then(|| {
            (
                self.fast / (1.0 - 0.5f64.powf(self.weight / half_life[0])),
                self.slow / (1.0 - 0.5f64.powf(self.weight / half_life[1])),
            )
        })
    }
}

/// dash.js's throughput history for the video track.
#[derive(Clone, Debug)]
pub struct ThroughputHistory {
    method: MovingAverage,
    /// bps
    throughput: VecDeque<f64>,
    /// ms
    latency: VecDeque<f64>,
    has_cached_entries: bool,
    ewma_throughput: Ewma,
    ewma_latency: Ewma,
    /// the latency EWMA's half-lives, in samples
    latency_half_life: [f64; 2],
}

impl ThroughputHistory {
    pub fn new(method: MovingAverage) -> Self {
        ThroughputHistory {
            method,
            throughput: VecDeque::new(),
            latency: VecDeque::new(),
            has_cached_entries: false,
            ewma_throughput: Ewma::default(),
            ewma_latency: Ewma::default(),
            latency_half_life: EWMA_LATENCY_HALF_LIFE,
        }
    }

    /// The same history with other half-lives, in samples, for the latency EWMA (Sabre's `Ewma`
    /// takes each throughput half-life divided by the segment duration: 1.5 and 4 segments of
    /// 2 s for its 3 s and 8 s).
    pub fn with_latency_half_life(mut self, half_life: [f64; 2]) -> Self {
        self.latency_half_life = half_life;
        self
    }

    pub fn len(&self) -> usize {
        self.throughput.len()
    }

    pub fn is_empty(&self) -> bool {
        self.throughput.is_empty()
    }

    /// A downloaded segment: `bytes` of body, request → first byte `ttfb_ns`, first → last
    /// byte `transfer_ns` (`ThroughputHistory.push`).
    pub fn push(&mut self, bytes: u64, ttfb_ns: u64, transfer_ns: u64) {
        let or_one = |ms: f64| if ms == 0.0 { 1.0 } else { ms };
        let latency_ms = or_one(ttfb_ns as f64 / 1e6);
        let download_ms = or_one(transfer_ns as f64 / 1e6);
        let bps = 8.0 * bytes as f64 / download_ms * 1e3;
        if download_ms < CACHE_LOAD_THRESHOLD_MS {
            if !self.throughput.is_empty() && !self.has_cached_entries {
                return;
            }
            self.has_cached_entries = true;
        } else if self.has_cached_entries {
            // the first uncached sample clears the cached ones (`clearSettingsForMediaType`)
            *self =
                ThroughputHistory::new(self.method).with_latency_half_life(self.latency_half_life);
        }
        self.throughput.push_back(bps);
        if self.throughput.len() > MAX_SAMPLES {
            self.throughput.pop_front();
        }
        self.latency.push_back(latency_ms);
        if self.latency.len() > MAX_SAMPLES {
            self.latency.pop_front();
        }
        self.ewma_throughput
            .push(bps, download_ms / 1e3, EWMA_THROUGHPUT_HALF_LIFE_S);
        self.ewma_latency
            .push(latency_ms, 1.0, self.latency_half_life);
    }

    /// `getSampleSize(isThroughput = true)` for VOD.
    fn throughput_sample_size(&self) -> usize {
        let arr = &self.throughput;
        let n = arr.len();
        let mut size = THROUGHPUT_SAMPLES_VOD;
        if size >= n {
            return n;
        }
        for i in 1..THROUGHPUT_SAMPLES_VOD {
            let ratio = arr[n - i] / arr[n - i - 1];
            if ratio >= THROUGHPUT_SCALE || ratio <= 1.0 / THROUGHPUT_SCALE {
                size += 1;
                if size == n {
                    break;
                }
            }
        }
        size
    }

    fn mean_last(v: &VecDeque<f64>, k: usize) -> Option<f64> {
        let k = k.min(v.len());
        (k > 0).then(|| v.iter().rev().take(k).sum::<f64>() / k as f64)
    }

    /// `getAverageThroughput`, bps (None: no sample yet, dash.js's NaN).
    pub fn average_bps(&self) -> Option<f64> {
        match self.method {
            MovingAverage::Sliding => {
                Self::mean_last(&self.throughput, self.throughput_sample_size())
            }
            MovingAverage::Ewma => self
                .ewma_throughput
                .corrected(EWMA_THROUGHPUT_HALF_LIFE_S)
                .map(|(f, s)| f.min(s)),
        }
    }

    /// `getSafeAverageThroughput`, bps.
    pub fn safe_average_bps(&self) -> Option<f64> {
        self.average_bps().map(|t| t * BANDWIDTH_SAFETY_FACTOR)
    }

    /// `getAverageLatency`, ms.
    pub fn average_latency_ms(&self) -> Option<f64> {
        match self.method {
            MovingAverage::Sliding => Self::mean_last(&self.latency, LATENCY_SAMPLES),
            MovingAverage::Ewma => self
                .ewma_latency
                .corrected(self.latency_half_life)
                .map(|(f, s)| f.max(s)),
        }
    }
}

/// `AbrController.getQualityForBitrate(bitrate, latency)` with `useDeadTimeLatency`: the
/// bitrate is reduced by the share of a segment duration the latency takes (a latency longer
/// than a segment gives level 0), then the highest level whose bitrate it reaches (else 0).
/// `latency_ms` None or 0 skips the reduction (JavaScript's falsy `latency`).
pub fn quality_for_bitrate(ladder: &[u64], bps: f64, latency_ms: Option<f64>, tau_s: f64) -> usize {
    let mut bps = bps;
    if let Some(l) = latency_ms.filter(|&l| l > 0.0) {
        let l_s = l / 1e3;
        if l_s > tau_s {
            return 0;
        }
        bps *= 1.0 - l_s / tau_s;
    }
    ladder.iter().rposition(|&r| bps >= r as f64).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    const MS: u64 = 1_000_000;

    #[test]
    fn the_sliding_window_widens_when_samples_vary() {
        let mut h = ThroughputHistory::new(MovingAverage::Sliding);
        assert_eq!(h.average_bps(), None);
        // 1 MB in 1 s each = 8 Mbps; latency 100 ms
        for _ in 0..4 {
            h.push(1_000_000, 100 * MS, 1000 * MS);
        }
        assert!((h.average_bps().unwrap() - 8e6).abs() < 1e-6);
        assert!((h.safe_average_bps().unwrap() - 7.2e6).abs() < 1e-6);
        assert!((h.average_latency_ms().unwrap() - 100.0).abs() < 1e-9);
        // a drop to 2 Mbps: ratio 0.25 ≤ 1/1.3 → the window grows to 5 samples
        h.push(250_000, 100 * MS, 1000 * MS);
        // (8 + 8 + 8 + 8 + 2) / 5 = 6.8 Mbps
        assert!((h.average_bps().unwrap() - 6.8e6).abs() < 1e-6);
        // steady samples: only the first pair inside the window of 4 differs → 5 samples
        h.push(250_000, 100 * MS, 1000 * MS);
        // last 5: 8, 8, 8, 2, 2 → ratios (2/2 = 1, 2/8 = 0.25 ≤ 1/1.3, 8/8) → size 5
        assert!((h.average_bps().unwrap() - 5.6e6).abs() < 1e-6);
    }

    #[test]
    fn cached_responses_are_ignored_once_real_samples_exist() {
        let mut h = ThroughputHistory::new(MovingAverage::Sliding);
        h.push(1_000_000, 10 * MS, 1000 * MS);
        h.push(1_000_000, 10 * MS, 10 * MS); // 10 ms: a cache hit, ignored
        assert_eq!(h.len(), 1);
    }

    #[test]
    fn the_ewma_is_corrected_for_its_start_at_zero() {
        let mut h = ThroughputHistory::new(MovingAverage::Ewma);
        h.push(1_000_000, 100 * MS, 2000 * MS);
        // one sample: both corrected estimates equal it (4 Mbps)
        assert!((h.average_bps().unwrap() - 4e6).abs() < 1e-3);
        assert!((h.average_latency_ms().unwrap() - 100.0).abs() < 1e-9);
    }

    #[test]
    fn the_quality_for_a_bitrate_discounts_the_dead_time() {
        let l = [1_000_000, 2_000_000, 4_000_000];
        assert_eq!(quality_for_bitrate(&l, 4e6, None, 2.0), 2);
        // latency 1 s of a 2 s segment halves it: 2 Mbps → level 1
        assert_eq!(quality_for_bitrate(&l, 4e6, Some(1000.0), 2.0), 1);
        assert_eq!(quality_for_bitrate(&l, 4e6, Some(2500.0), 2.0), 0);
        assert_eq!(quality_for_bitrate(&l, 0.5e6, None, 2.0), 0);
    }
}
