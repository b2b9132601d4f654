//! dash.js v4.7.4's AbandonRequestsRule (`src/streaming/rules/abr/AbandonRequestsRule.js`), the
//! abandonment rule of the dash.js ABR controller ([`super::dashjs`]), asked at every progress
//! event of a media request.
//!
//! Parameters (`streaming.abr.abrRulesParameters.abandonRequestsRule`, `src/core/Settings.js`):
//! `graceTimeThreshold` 500 ms, `abandonMultiplier` 1.8, `minLengthToAverage` 5; with
//! `bandwidthSafetyFactor` 0.9.
//!
//! Rule: never while the buffer is above `stableBufferTime`. From the first progress event of a
//! request (its first byte), every event adds a sample 8·loaded/elapsed (elapsed since the first
//! byte, kbit/s in dash.js). With at least 5 samples, more than 500 ms elapsed and the response
//! incomplete: the measured bandwidth is their mean; the whole segment would take
//! 8·total/measured; if that is at least 1.8 × the segment duration and the level is not 0, the
//! new level is the highest whose bitrate fits 0.9 × measured (no latency discount), and the
//! request is abandoned for it if the bytes still to come exceed that level's estimated segment
//! size (total × r_new / r_current). A segment index is abandoned at most once: dash.js keys its
//! `abandonDict` on the index and clears it only on `reset`, so the lower-level request that
//! replaces an abandoned one is never abandoned in turn.

use super::throughput_history::{quality_for_bitrate, BANDWIDTH_SAFETY_FACTOR};
use super::Progress;

/// `graceTimeThreshold`, ms
pub const GRACE_TIME_MS: f64 = 500.0;
/// `abandonMultiplier`
pub const ABANDON_MULTIPLIER: f64 = 1.8;
/// `minLengthToAverage`
pub const MIN_LENGTH_TO_AVERAGE: usize = 5;

/// The rule's state for the request in flight.
#[derive(Clone, Debug, Default)]
pub struct AbandonRequests {
    /// (segment index, level) of the request the samples belong to
    request: Option<(usize, usize, u64)>,
    /// kbit/s samples of the current request
    samples: Vec<f64>,
    /// the segment indices abandoned so far (`abandonDict`)
    abandoned: std::collections::BTreeSet<usize>,
}

impl AbandonRequests {
    /// `shouldAbandon` on a progress event: Some(new level) abandons.
    pub fn should_abandon(
        &mut self,
        p: &Progress,
        ladder: &[u64],
        buffer_s: f64,
        stable_buffer_s: f64,
    ) -> Option<usize> {
        let key = (p.index, p.level, p.request_ns);
        if self.request != Some(key) {
            self.request = Some(key);
            self.samples.clear();
        }
        if buffer_s > stable_buffer_s || self.abandoned.contains(&p.index) {
            return None;
        }
        let first = p.first_byte_ns?;
        let elapsed_ms = p.now_ns.saturating_sub(first) as f64 / 1e6;
        if p.bytes_loaded > 0 && elapsed_ms > 0.0 {
            self.samples.push(p.bytes_loaded as f64 * 8.0 / elapsed_ms);
        }
        if self.samples.len() < MIN_LENGTH_TO_AVERAGE
            || elapsed_ms <= GRACE_TIME_MS
            || p.bytes_loaded >= p.bytes_total
        {
            return None;
        }
        let measured_kbps = self.samples.iter().sum::<f64>() / self.samples.len() as f64;
        let estimated_s = p.bytes_total as f64 * 8.0 / measured_kbps / 1000.0;
        let tau_s = p.media_ns as f64 / 1e9;
        if estimated_s < tau_s * ABANDON_MULTIPLIER || p.level == 0 {
            return None;
        }
        let new = quality_for_bitrate(
            ladder,
            measured_kbps * 1e3 * BANDWIDTH_SAFETY_FACTOR,
            None,
            tau_s,
        );
        let other = p.bytes_total as f64 * ladder[new] as f64 / ladder[p.level] as f64;
        let remaining = (p.bytes_total - p.bytes_loaded) as f64;
        if remaining > other {
            self.abandoned.insert(p.index);
            return Some(new);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const MS: u64 = 1_000_000;

    #[test]
    fn a_slow_download_is_abandoned_after_five_samples_and_the_grace_time() {
        let ladder = [1_000_000, 2_000_000, 4_000_000];
        let mut r = AbandonRequests::default();
        // a 4 Mbps × 2 s segment (1 MB) arriving at 1 Mbps (125 bytes per ms)
        let mut got = None;
        for k in 1..=12u64 {
            let t = 100 * k; // a progress event every 100 ms
            let p = Progress {
                index: 7,
                level: 2,
                bytes_total: 1_000_000,
                bytes_loaded: 125 * t,
                media_ns: 2000 * MS,
                request_ns: 0,
                first_byte_ns: Some(0),
                now_ns: t * MS,
            };
            got = r.should_abandon(&p, &ladder, 4.0, 12.0);
            if got.is_some() {
                // five samples by 500 ms, but elapsed must exceed 500 ms: the 6th event
                assert_eq!(t, 600);
                break;
            }
        }
        // measured 1000 kbit/s: 8 s for the segment ≥ 1.8 × 2 s; 0.9 Mbps fits level 0 only
        // (1 Mbps > 0.9 Mbps → the default, 0); remaining 925 kB > 1 MB × 1/4
        assert_eq!(got, Some(0));
        // the buffer above stableBufferTime: never
        let mut r = AbandonRequests::default();
        let p = Progress {
            index: 7,
            level: 2,
            bytes_total: 1_000_000,
            bytes_loaded: 125 * 900,
            media_ns: 2000 * MS,
            request_ns: 0,
            first_byte_ns: Some(0),
            now_ns: 900 * MS,
        };
        for _ in 0..6 {
            assert_eq!(r.should_abandon(&p, &ladder, 13.0, 12.0), None);
        }
    }

    /// dash.js's `abandonDict` is keyed on the segment index: once segment 7 is abandoned, its
    /// lower-level replacement is not abandoned, however slowly it arrives; segment 8 can be.
    #[test]
    fn a_segment_index_is_abandoned_at_most_once() {
        let ladder = [1_000_000, 2_000_000, 4_000_000];
        let mut r = AbandonRequests::default();
        // 125 bytes per ms: 1 Mbit/s, a quarter of what level 2 needs and half of level 1's
        let slow = |index, level, total, request_ns: u64, k: u64| Progress {
            index,
            level,
            bytes_total: total,
            bytes_loaded: 125 * 100 * k,
            media_ns: 2000 * MS,
            request_ns,
            first_byte_ns: Some(request_ns),
            now_ns: request_ns + 100 * k * MS,
        };
        let first = (1..=12)
            .find_map(|k| r.should_abandon(&slow(7, 2, 1_000_000, 0, k), &ladder, 4.0, 12.0));
        assert_eq!(first, Some(0));
        // segment 7 again at level 1 (500 kB at 1 Mbit/s: 4 s for a 2 s segment, ≥ 1.8 × 2 s)
        let again = (1..=30)
            .find_map(|k| r.should_abandon(&slow(7, 1, 500_000, 2000 * MS, k), &ladder, 3.0, 12.0));
        assert_eq!(again, None);
        // segment 8 at level 1 the same way: abandoned
        let next = (1..=30)
            .find_map(|k| r.should_abandon(&slow(8, 1, 500_000, 6000 * MS, k), &ladder, 3.0, 12.0));
        assert_eq!(next, Some(0));
    }
}
