//! Constant bit rate source: one packet of `packet_bytes` every `packet_bytes·8/rate_bps`
//! seconds (the first one interval after the start), as ns-2's `Application/Traffic/CBR`.
//! Used as the competing traffic of the Enhancing-TCP paper (§4.2, 500–3000 kbps).

use super::{Fluid, Generator, Wake};

pub struct Cbr {
    rate_bps: u64,
    fluid: Fluid,
}

impl Cbr {
    pub fn new(rate_bps: u64, packet_bytes: u32, start_ns: u64) -> Self {
        let mut fluid = Fluid::new(packet_bytes, start_ns);
        fluid.set_rate(start_ns, rate_bps);
        Cbr { rate_bps, fluid }
    }
}

impl Generator for Cbr {
    fn wake(&mut self, now_ns: u64) -> Wake {
        self.fluid.advance(now_ns);
        Wake {
            packets: self.fluid.take_packets(),
            next_ns: self.fluid.next_packet_ns(),
        }
    }
    fn mean_rate_bps(&self) -> f64 {
        self.rate_bps as f64
    }
}
