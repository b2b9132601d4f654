//! Windowed running maximum, Kathleen Nichols' algorithm as in Linux lib/minmax.c (used by
//! BBR's bottleneck-bandwidth filter). It keeps the best, second-best and third-best samples
//! of the window, with later times, so the maximum over the last `win` time units is known
//! in O(1) memory and time. Time is any monotonic counter (BBR uses round trips).

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Sample {
    t: u64,
    v: u64,
}

/// A windowed maximum filter (`struct minmax` with `minmax_running_max`).
#[derive(Clone, Debug, Default)]
pub struct WindowedMax {
    s: [Sample; 3],
}

impl WindowedMax {
    /// The maximum over the window.
    #[inline]
    pub fn get(&self) -> u64 {
        self.s[0].v
    }

    /// Forgets all samples; `meas` at time `t` becomes the only one (`minmax_reset`).
    pub fn reset(&mut self, t: u64, meas: u64) -> u64 {
        let v = Sample { t, v: meas };
        self.s = [v; 3];
        meas
    }

    /// Adds `meas` taken at time `t`; returns the maximum over (t − win, t].
    pub fn update(&mut self, win: u64, t: u64, meas: u64) -> u64 {
        let val = Sample { t, v: meas };
        if val.v >= self.s[0].v || val.t.saturating_sub(self.s[2].t) > win {
            return self.reset(t, meas); // new maximum, or nothing left in the window
        }
        if val.v >= self.s[1].v {
            self.s[1] = val;
            self.s[2] = val;
        } else if val.v >= self.s[2].v {
            self.s[2] = val;
        }
        self.subwin_update(win, val)
    }

    /// Ages the best samples out of the window (`minmax_subwin_update`).
    fn subwin_update(&mut self, win: u64, val: Sample) -> u64 {
        let dt = val.t.saturating_sub(self.s[0].t);
        if dt > win {
            // the best sample left the window: promote the 2nd and 3rd choices
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = val;
            if val.t.saturating_sub(self.s[0].t) > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = val;
            }
        } else if self.s[1].t == self.s[0].t && dt > win / 4 {
            // a quarter of the window without a new 2nd choice: take one from the 2nd quarter
            self.s[1] = val;
            self.s[2] = val;
        } else if self.s[2].t == self.s[1].t && dt > win / 2 {
            // half the window without a new 3rd choice: take one from the second half
            self.s[2] = val;
        }
        self.s[0].v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Brute force: the maximum over samples with time in (t − win, t].
    fn brute(samples: &[(u64, u64)], win: u64, t: u64) -> u64 {
        samples
            .iter()
            .filter(|(ts, _)| t - ts <= win)
            .map(|&(_, v)| v)
            .max()
            .unwrap()
    }

    #[test]
    fn tracks_a_new_maximum_at_once_and_forgets_it_after_the_window() {
        let mut m = WindowedMax::default();
        m.reset(0, 10);
        assert_eq!(m.update(10, 1, 50), 50);
        for t in 2..=11 {
            assert_eq!(m.update(10, t, 20), 50, "t = {t}");
        }
        // the 50 was taken at t = 1: at t = 12 it is more than 10 rounds old
        assert_eq!(m.update(10, 12, 20), 20);
    }

    #[test]
    fn never_exceeds_the_true_window_maximum_and_never_falls_below_the_latest_sample() {
        // The three-sample filter is an approximation of the exact windowed max: it may report
        // a value older than the window by less than a window, but it is always a sample seen
        // within 2 windows, at least the latest sample, and at most the largest sample.
        let mut m = WindowedMax::default();
        let mut x: u64 = 12345;
        let mut samples = vec![(0u64, 0u64)];
        m.reset(0, 0);
        for t in 1..2000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let v = (x >> 33) % 1000;
            samples.push((t, v));
            let got = m.update(10, t, v);
            assert!(got >= v);
            let within_two = brute(&samples, 20, t);
            assert!(got <= within_two, "t {t}: {got} > {within_two}");
        }
    }
}
