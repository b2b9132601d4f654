//! The resolved form of the scenario's cross-traffic (`[[traffic]]`), network dynamics
//! (`[[loss_event]]`, `[[capacity]]`) and topology preset (`[preset]`): part of the [`super::Plan`].

use super::plan::LinkDirRef;
use crate::net::mahimahi::MahimahiTrace;
pub use crate::traffic::plan::{GeneratorPlan, TrafficPlan};
use std::sync::Arc;

/// Loss events and capacity schedules.
#[derive(Clone, Debug, Default)]
pub struct DynamicsPlan {
    pub loss_events: Vec<LossEventPlan>,
    pub capacity: Vec<CapacityPlan>,
}

/// Random loss probability `loss` on one link direction over [start, stop); the direction's
/// own loss applies again from `stop`.
#[derive(Clone, Debug, PartialEq)]
pub struct LossEventPlan {
    pub at: LinkDirRef,
    pub start_ns: u64,
    pub stop_ns: u64,
    pub loss: f64,
}

/// How one link direction's capacity changes.
#[derive(Clone, Debug)]
pub struct CapacityPlan {
    pub at: LinkDirRef,
    pub service: ServicePlan,
}

#[derive(Clone, Debug)]
pub enum ServicePlan {
    /// (time, rate) steps, by increasing time: the rate from each time on (a packet being
    /// serialised when the rate changes finishes at the old rate).
    Steps(Vec<(u64, u64)>),
    /// A Mahimahi trace replaces the fixed-rate transmitter ([`crate::net::mahimahi`]).
    Mahimahi {
        /// the file as the scenario names it
        file: String,
        trace: Arc<MahimahiTrace>,
    },
}

/// A named topology preset ([`super::presets`]) and what it leaves to the HAS layer.
#[derive(Clone, Debug, Default)]
pub struct PresetPlan {
    pub name: String,
    /// The preset's parameters, resolved (defaults applied), as (key, shown value).
    pub params: Vec<(String, String)>,
    /// Where the paper's video players go: one slot per client, to be filled by the HAS
    /// players (the preset's `player` template). Nothing runs in a slot until players exist.
    pub player_slots: Vec<PlayerSlot>,
}

/// A client/server pair for one video player, with the times the viewer starts and stops.
#[derive(Clone, Debug, PartialEq)]
pub struct PlayerSlot {
    pub name: String,
    /// node of the player (client)
    pub client: usize,
    /// node of the video server
    pub server: usize,
    pub start_ns: u64,
    pub stop_ns: Option<u64>,
}
