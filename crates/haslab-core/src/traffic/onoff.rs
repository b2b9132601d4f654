//! Exponential on/off source: alternates between ON periods, during which it sends at a
//! constant `rate_bps`, and silent OFF periods; both lengths are exponential.
//!
//! Source: ns-2's `Application/Traffic/Exponential` and ns-3's `OnOffApplication` with
//! exponential On/Off times (which also keeps the bits of an unfinished packet across an OFF
//! period, as the [`Fluid`] accumulator here does). Used by the Enhancing-TCP paper (Liu, Men,
//! Zhang, §4.2): mean ON 500 ms, mean OFF 500 ms, 5 Mbps while ON, hence 2.5 Mbps on average.
//!
//! Mean rate: `rate_bps · mean_on / (mean_on + mean_off)`. The source starts in its stationary
//! regime: ON with probability `mean_on / (mean_on + mean_off)`, with an exponential
//! remaining time (memorylessness), so the mean holds from the first instant.

use super::{secs_to_ns, Fluid, Generator, Wake};
use crate::sim::rng::Stream;
use crate::sim::time::NS_PER_SEC;

pub struct OnOff {
    rate_bps: u64,
    mean_on_s: f64,
    mean_off_s: f64,
    rng: Stream,
    fluid: Fluid,
    on: bool,
    /// end of the current ON or OFF period
    switch_ns: u64,
}

impl OnOff {
    pub fn new(
        rate_bps: u64,
        mean_on_ns: u64,
        mean_off_ns: u64,
        packet_bytes: u32,
        start_ns: u64,
        mut rng: Stream,
    ) -> Self {
        let mean_on_s = mean_on_ns as f64 / NS_PER_SEC as f64;
        let mean_off_s = mean_off_ns as f64 / NS_PER_SEC as f64;
        let on = rng.uniform() < mean_on_s / (mean_on_s + mean_off_s);
        let first = rng.exponential(if on { mean_on_s } else { mean_off_s });
        let mut fluid = Fluid::new(packet_bytes, start_ns);
        fluid.set_rate(start_ns, if on { rate_bps } else { 0 });
        OnOff {
            rate_bps,
            mean_on_s,
            mean_off_s,
            rng,
            fluid,
            on,
            switch_ns: start_ns.saturating_add(secs_to_ns(first).max(1)),
        }
    }
}

impl Generator for OnOff {
    fn wake(&mut self, now_ns: u64) -> Wake {
        while self.switch_ns <= now_ns {
            let t = self.switch_ns;
            self.on = !self.on;
            self.fluid
                .set_rate(t, if self.on { self.rate_bps } else { 0 });
            let mean = if self.on {
                self.mean_on_s
            } else {
                self.mean_off_s
            };
            self.switch_ns = t.saturating_add(secs_to_ns(self.rng.exponential(mean)).max(1));
        }
        self.fluid.advance(now_ns);
        let packets = self.fluid.take_packets();
        let next = match self.fluid.next_packet_ns() {
            Some(t) => t.min(self.switch_ns),
            None => self.switch_ns,
        };
        Wake {
            packets,
            next_ns: Some(next),
        }
    }
    fn mean_rate_bps(&self) -> f64 {
        self.rate_bps as f64 * self.mean_on_s / (self.mean_on_s + self.mean_off_s)
    }
}
