//! dash.js v4.7.4's BolaRule (`src/streaming/rules/abr/BolaRule.js`): BOLA with the placeholder
//! buffer and the BOLA-O oscillation guard, as one rule of the dash.js ABR controller
//! ([`super::dashjs`]). Not a player by itself.
//!
//! Constants (BolaRule.js): `MINIMUM_BUFFER_S` = 10, `MINIMUM_BUFFER_PER_BITRATE_LEVEL_S` = 2,
//! `PLACEHOLDER_BUFFER_DECAY` = 0.99. Utilities ln(r_m) shifted so the lowest is 1; buffer
//! time B_t = max(stableBufferTime, 10 + 2·M); γp = (υ_M − 1)/(B_t/10 − 1); V_p = 10/γp.
//!
//! Per call (`getMaxIndex`): no throughput sample → no answer. STARTUP: the level the safe
//! throughput allows (`getQualityForBitrate` with the latency), placeholder P = max(0,
//! B_min(m) − B); STEADY once a segment is in and B ≥ its duration. STEADY: P grows by the time
//! since the last segment finished (or since the last call); m = argmax (V_p(υ_m + γp) −
//! (B + P))/r_m; an up-switch above both the last level and the throughput level stops at the
//! higher of the two (BOLA-O); d = B + P − V_p(υ_m + γp) comes first out of P, the rest delays
//! the request (`setTimeToLoadDelay`) unless m is the top level. Per downloaded segment
//! (`checkNewSegment`): P × 0.99, then P ≤ max(0, V_p(υ_last + γp) − (B + download time)).
//! A stall (BUFFER_EMPTY) empties P; an abandonment to level k lowers P to
//! max(0, B_min(k) − B) (10 s − B for k = 0).

use super::throughput_history::quality_for_bitrate;

/// `MINIMUM_BUFFER_S`
pub const MINIMUM_BUFFER_S: f64 = 10.0;
/// `MINIMUM_BUFFER_PER_BITRATE_LEVEL_S`
pub const MINIMUM_BUFFER_PER_LEVEL_S: f64 = 2.0;
/// `PLACEHOLDER_BUFFER_DECAY`
pub const PLACEHOLDER_BUFFER_DECAY: f64 = 0.99;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    OneBitrate,
    Startup,
    Steady,
}

/// The state of dash.js's BolaRule for the video track.
#[derive(Clone, Debug)]
pub struct DashBola {
    ladder: Vec<u64>,
    tau_s: f64,
    utility: Vec<f64>,
    pub v_p: f64,
    pub gp: f64,
    state: State,
    /// P, s
    pub placeholder: f64,
    last_quality: usize,
    /// quality of the latest quality change (`abrQuality`)
    abr_quality: usize,
    last_segment_duration_s: Option<f64>,
    last_finish_ns: Option<u64>,
    last_call_ns: Option<u64>,
}

impl DashBola {
    pub fn new(ladder: &[u64], tau_s: f64, stable_buffer_s: f64) -> Self {
        let u0 = (ladder[0] as f64).ln();
        let utility: Vec<f64> = ladder.iter().map(|&r| (r as f64).ln() - u0 + 1.0).collect();
        let um = *utility.last().unwrap();
        let buffer_time = stable_buffer_s
            .max(MINIMUM_BUFFER_S + MINIMUM_BUFFER_PER_LEVEL_S * ladder.len() as f64);
        let gp = (um - 1.0) / (buffer_time / MINIMUM_BUFFER_S - 1.0);
        DashBola {
            ladder: ladder.to_vec(),
            tau_s,
            utility,
            v_p: MINIMUM_BUFFER_S / gp.max(1e-12),
            gp,
            state: if ladder.len() > 1 {
                State::Startup
            } else {
                State::OneBitrate
            },
            placeholder: 0.0,
            last_quality: 0,
            abr_quality: 0,
            last_segment_duration_s: None,
            last_finish_ns: None,
            last_call_ns: None,
        }
    }

    fn r(&self, m: usize) -> f64 {
        self.ladder[m] as f64
    }

    pub fn quality_from_buffer(&self, level_s: f64) -> usize {
        let mut best = (0, f64::NAN);
        for m in 0..self.ladder.len() {
            let s = (self.v_p * (self.utility[m] + self.gp) - level_s) / self.r(m);
            if best.1.is_nan() || s >= best.1 {
                best = (m, s);
            }
        }
        best.0
    }

    pub fn max_buffer_for_quality(&self, m: usize) -> f64 {
        self.v_p * (self.utility[m] + self.gp)
    }

    pub fn min_buffer_for_quality(&self, m: usize) -> f64 {
        let (b, u) = (self.r(m), self.utility[m]);
        (0..m)
            .rev()
            .filter(|&k| self.utility[k] < u)
            .map(|k| {
                let (bk, uk) = (self.r(k), self.utility[k]);
                self.v_p * (self.gp + (b * uk - bk * u) / (b - bk))
            })
            .fold(0.0, f64::max)
    }

    /// `getMaxIndex` at `now_ns` with buffer `buffer_s`: Some((level, delay s)) or None (no
    /// answer). `safe_bps` / `latency_ms` come from the throughput history (None: no sample).
    pub fn max_index(
        &mut self,
        now_ns: u64,
        buffer_s: f64,
        safe_bps: Option<f64>,
        latency_ms: Option<f64>,
    ) -> Option<(usize, f64)> {
        if self.state == State::OneBitrate {
            return None;
        }
        let safe = safe_bps?;
        let qt = quality_for_bitrate(&self.ladder, safe, latency_ms, self.tau_s);
        match self.state {
            State::Startup => {
                self.placeholder = (self.min_buffer_for_quality(qt) - buffer_s).max(0.0);
                self.last_quality = qt;
                if self.last_segment_duration_s.is_some_and(|d| buffer_s >= d) {
                    self.state = State::Steady;
                }
                Some((qt, 0.0))
            }
            _ => {
                // updatePlaceholderBuffer
                if let Some(f) = self.last_finish_ns {
                    self.placeholder += now_ns.saturating_sub(f) as f64 / 1e9;
                } else if let Some(c) = self.last_call_ns {
                    self.placeholder += now_ns.saturating_sub(c) as f64 / 1e9;
                }
                self.last_call_ns = Some(now_ns);
                self.last_finish_ns = None;
                let mut q = self.quality_from_buffer(buffer_s + self.placeholder);
                if q > self.last_quality && q > qt {
                    q = qt.max(self.last_quality);
                }
                let mut delay =
                    (buffer_s + self.placeholder - self.max_buffer_for_quality(q)).max(0.0);
                if delay <= self.placeholder {
                    self.placeholder -= delay;
                    delay = 0.0;
                } else {
                    delay -= self.placeholder;
                    self.placeholder = 0.0;
                    if q >= self.ladder.len() - 1 {
                        delay = 0.0;
                    }
                }
                self.last_quality = q;
                Some((q, delay))
            }
        }
    }

    /// A media segment at `level` was downloaded (`onMediaFragmentLoaded` and `onMetricAdded`,
    /// then `checkNewSegment`): requested at `request_ns`, finished at `done_ns`; `buffer_s`
    /// after it entered the buffer.
    pub fn segment_loaded(
        &mut self,
        level: usize,
        duration_s: f64,
        request_ns: u64,
        done_ns: u64,
        buffer_s: f64,
    ) {
        if self.state == State::OneBitrate {
            return;
        }
        self.last_segment_duration_s = Some(duration_s);
        self.last_quality = level;
        self.last_finish_ns = Some(done_ns);
        self.placeholder *= PLACEHOLDER_BUFFER_DECAY;
        let at_request = buffer_s + done_ns.saturating_sub(request_ns) as f64 / 1e9;
        let max_p = (self.max_buffer_for_quality(level) - at_request).max(0.0);
        self.placeholder = self.placeholder.min(max_p);
    }

    /// The quality changed to `level` (`onQualityChangeRequested`).
    pub fn quality_changed(&mut self, level: usize) {
        self.abr_quality = level;
    }

    /// BUFFER_EMPTY (`onBufferEmpty`).
    pub fn buffer_empty(&mut self) {
        if self.state == State::Steady {
            self.placeholder = 0.0;
        }
    }

    /// FRAGMENT_LOADING_ABANDONED (`onFragmentLoadingAbandoned`).
    pub fn abandoned(&mut self, buffer_s: f64) {
        if self.state == State::OneBitrate {
            return;
        }
        let want = if self.abr_quality > 0 {
            self.min_buffer_for_quality(self.abr_quality)
        } else {
            MINIMUM_BUFFER_S
        };
        self.placeholder = self.placeholder.min((want - buffer_s).max(0.0));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const S: u64 = 1_000_000_000;

    #[test]
    fn v_p_and_gp_put_level_0_at_10_s_and_the_top_at_the_buffer_time() {
        // BolaRule.js: "Vp * (utilities[0] + gp - 1) === minimumBufferS and
        // Vp * (utilities[max] + gp - 1) === bufferTarget". Ladder 1000/2500/5000 kbps,
        // stableBufferTime 12: B_t = max(12, 10 + 2·3) = 16, γp = ln 5/0.6 = 2.682,
        // V_p = 10/γp = 3.728.
        let b = DashBola::new(&[1_000_000, 2_500_000, 5_000_000], 2.0, 12.0);
        let gp = 5f64.ln() / 0.6;
        assert!((b.gp - gp).abs() < 1e-12);
        assert!((b.v_p * b.gp - 10.0).abs() < 1e-9);
        assert!((b.v_p * (1.0 + 5f64.ln() + gp - 1.0) - 16.0).abs() < 1e-9);
        // by hand: at B = 10 the scores are 3.728, 2.858, 1.945 per Mbit → level 0;
        // at B = 16: −2.27, 0.458, 0.745 → level 2
        assert_eq!(b.quality_from_buffer(10.0), 0);
        assert_eq!(b.quality_from_buffer(16.0), 2);
        // 0 → 1 at V_p(γp + (2.5·1 − 1·(1 + ln 2.5))/1.5) = 11.45 s
        let s01 = b.min_buffer_for_quality(1);
        assert!((s01 - 11.45).abs() < 0.01, "{s01}");
        assert_eq!(b.quality_from_buffer(s01 - 0.01), 0);
        assert_eq!(b.quality_from_buffer(s01 + 0.01), 1);
    }

    #[test]
    fn bola_o_stops_an_up_switch_at_the_throughput_level() {
        let mut b = DashBola::new(&[1_000_000, 2_500_000, 5_000_000], 2.0, 12.0);
        b.segment_loaded(0, 2.0, 0, S, 2.0);
        // startup: 1.2 Mbps safe → level 0; B = 2 ≥ 2 → STEADY next
        assert_eq!(b.max_index(S, 2.0, Some(1.2e6), None), Some((0, 0.0)));
        // a large buffer alone would ask for the top level; throughput allows level 0
        let (q, _) = b.max_index(2 * S, 20.0, Some(1.2e6), None).unwrap();
        assert_eq!(q, 0);
    }
}
