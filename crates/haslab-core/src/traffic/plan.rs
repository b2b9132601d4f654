//! What a traffic generator is asked to do, resolved from the scenario's `[[traffic]]` table.

use crate::tcp::cc::CcConfig;
use crate::tcp::config::TcpConfig;

/// One traffic generator between two nodes.
#[derive(Clone, Debug)]
pub struct TrafficPlan {
    pub name: String,
    /// node that sends
    pub src: usize,
    /// node that receives (its sink counts the bytes)
    pub dst: usize,
    pub start_ns: u64,
    /// the generator sends nothing at or after this time (None: until the end of the run)
    pub stop_ns: Option<u64>,
    /// IP size of each datagram (ignored by `Web`, whose packets are TCP's)
    pub packet_bytes: u32,
    pub kind: GeneratorPlan,
    /// datagrams cross the links only this generator uses in closed form
    /// (`private_links = "closed-form"`)
    pub closed_form_private_links: bool,
}

/// The model of a generator and its parameters.
#[derive(Clone, Debug, PartialEq)]
pub enum GeneratorPlan {
    /// Poisson Pareto Burst Process ([`crate::traffic::ppbp`]).
    Ppbp {
        mean_rate_bps: u64,
        hurst: f64,
        burst_rate_bps: u64,
        burst_arrivals_per_s: f64,
        /// derived: mean burst length `mean_rate / (burst_arrivals · burst_rate)`
        mean_burst_ns: u64,
    },
    /// Exponential on/off ([`crate::traffic::onoff`]).
    OnOff {
        rate_bps: u64,
        mean_on_ns: u64,
        mean_off_ns: u64,
    },
    /// Constant bit rate ([`crate::traffic::cbr`]).
    Cbr { rate_bps: u64 },
    /// Web-like TCP transfers ([`crate::traffic::web`]).
    Web {
        mean_rate_bps: u64,
        mean_size_bytes: u64,
        size_shape: f64,
        max_size_bytes: u64,
        cc: CcConfig,
        tcp: Box<TcpConfig>,
    },
}

impl GeneratorPlan {
    /// The name used in scenario files.
    pub fn kind(&self) -> &'static str {
        match self {
            GeneratorPlan::Ppbp { .. } => "ppbp",
            GeneratorPlan::OnOff { .. } => "onoff",
            GeneratorPlan::Cbr { .. } => "cbr",
            GeneratorPlan::Web { .. } => "web",
        }
    }
    /// The model's long-run mean rate, bits per second.
    pub fn mean_rate_bps(&self) -> f64 {
        match *self {
            GeneratorPlan::Ppbp { mean_rate_bps, .. } => mean_rate_bps as f64,
            GeneratorPlan::OnOff {
                rate_bps,
                mean_on_ns,
                mean_off_ns,
            } => rate_bps as f64 * mean_on_ns as f64 / (mean_on_ns + mean_off_ns) as f64,
            GeneratorPlan::Cbr { rate_bps } => rate_bps as f64,
            GeneratorPlan::Web { mean_rate_bps, .. } => mean_rate_bps as f64,
        }
    }
}
