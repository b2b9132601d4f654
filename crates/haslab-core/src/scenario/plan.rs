//! The resolved scenario: what validation of a [`super::Scenario`] produces and what the
//! simulator builds. Names are resolved to indices, units to integers (`_ns`, `_bps`,
//! `_bytes`), defaults are applied. Nothing here can be invalid.

pub use crate::app::plan::AppPlan;
pub use crate::has::plan::{ConnectionPolicy, PlayerPlan};
pub use crate::net::queue::QueueLimit;
use crate::tcp::cc::CcConfig;
use crate::tcp::config::TcpConfig;

#[derive(Clone, Debug)]
pub struct Plan {
    pub seed: u64,
    pub duration_ns: u64,
    pub nodes: Vec<NodePlan>,
    pub links: Vec<LinkPlan>,
    pub flows: Vec<FlowPlan>,
    /// HAS players (`[[player]]`), each with its own connections opened at run time.
    pub players: Vec<PlayerPlan>,
    pub trace: TracePlan,
    // --- cross-traffic, dynamics and presets (plan_traffic.rs) ---
    pub traffic: Vec<super::plan_traffic::TrafficPlan>,
    pub dynamics: super::plan_traffic::DynamicsPlan,
    pub preset: Option<super::plan_traffic::PresetPlan>,
}

impl Plan {
    /// What reading the inputs forgave (players' videos, e.g. duplicate Representation ids in
    /// an MPD), in scenario order, without repeats: the run's `warnings`, and `validate`'s.
    pub fn input_warnings(&self) -> Vec<String> {
        let mut w: Vec<String> = Vec::new();
        for p in &self.players {
            for m in &p.video.warnings {
                if !w.contains(m) {
                    w.push(m.clone());
                }
            }
        }
        w
    }
}

#[derive(Clone, Debug)]
pub struct NodePlan {
    pub name: String,
}

/// A bidirectional point-to-point link between nodes `a` and `b` (indices into `Plan::nodes`).
#[derive(Clone, Debug)]
pub struct LinkPlan {
    pub name: String,
    pub a: usize,
    pub b: usize,
    /// direction a → b
    pub ab: LinkDirPlan,
    /// direction b → a
    pub ba: LinkDirPlan,
}

#[derive(Clone, Debug)]
pub struct LinkDirPlan {
    pub rate_bps: u64,
    pub delay_ns: u64,
    /// Bernoulli loss probability applied to each packet as it enters the link.
    pub loss: f64,
    pub queue: QueuePlan,
}

/// Output queue of one link direction. Only drop-tail exists; the enum leaves room for
/// RED / CoDel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueuePlan {
    DropTail { limit: QueueLimit },
}

#[derive(Clone, Debug)]
pub struct FlowPlan {
    pub name: String,
    /// node that opens the connection and runs the sending app
    pub src: usize,
    /// node that accepts the connection and runs the sink
    pub dst: usize,
    pub app: AppPlan,
    pub tcp: TcpConfig,
    pub cc: CcConfig,
    /// the named transport the flow selected (its options are already in `tcp` and `cc`)
    pub transport: Option<String>,
}

/// One link direction, by link index and direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LinkDirRef {
    pub link: usize,
    /// false: a → b, true: b → a
    pub reverse: bool,
}

#[derive(Clone, Debug)]
pub struct PcapPlan {
    pub at: LinkDirRef,
    /// file name (relative to the run's output directory)
    pub file: String,
    pub snaplen: u32,
}

#[derive(Clone, Debug)]
pub struct TracePlan {
    /// record cwnd / ssthresh / srtt of every flow on change
    pub cwnd: bool,
    /// at most one cwnd sample per flow within this interval (0: every change)
    pub cwnd_interval_ns: u64,
    /// queues whose occupancy is recorded (on change, at most once per `queue_interval_ns`)
    pub queues: Vec<LinkDirRef>,
    pub queue_interval_ns: u64,
    /// window for the goodput time series of every flow
    pub goodput_window_ns: u64,
    pub pcaps: Vec<PcapPlan>,
}
