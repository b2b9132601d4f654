//! Scenario tables for cross-traffic (`[[traffic]]`), network dynamics (`[[loss_event]]`,
//! `[[capacity]]`) and topology presets (`[preset]`). Same conventions as `spec.rs`: serde
//! structs that mirror the file, unknown keys refused, doc comments = JSON Schema text.

use super::spec::{CcSpec, QueueSize, TcpTable};
use crate::sim::units::{Duration, Probability, Rate, Size};
use crate::tcp::config::TcpConfig;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The model of a traffic generator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TrafficKind {
    /// Poisson Pareto Burst Process: long-range-dependent aggregate traffic of mean `rate`.
    Ppbp,
    /// Exponential on/off: `rate` while on, silent while off.
    Onoff,
    /// Constant bit rate `rate`.
    Cbr,
    /// Short TCP transfers of bounded-Pareto size arriving as a Poisson process, `rate`
    /// offered on average.
    Web,
}

/// A traffic generator from `src` to `dst` (datagrams counted by a sink at `dst`; `web`
/// opens TCP connections instead). Keys that do not belong to the `kind` are refused.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(
    deny_unknown_fields,
    expecting = "a traffic table such as { kind = \"cbr\", src = \"a\", dst = \"b\", rate = \"1Mbps\" }"
)]
pub struct TrafficSpec {
    /// Unique generator name (same characters as node names). Default `traffic<index>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// "ppbp", "onoff", "cbr" or "web".
    pub kind: TrafficKind,
    /// Node that sends (for "web": the server that sends the responses).
    pub src: String,
    /// Node that receives (must differ from `src`).
    pub dst: String,
    /// When the generator starts. Default "0s"; must be before `duration`.
    #[serde(default)]
    pub start: Duration,
    /// When it stops (nothing is sent from then on; for "web", no new transfer starts). Must be
    /// after `start`. Default: never.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<Duration>,
    /// ppbp and web: mean rate; onoff: rate while on; cbr: the rate. In IP bytes. Required.
    pub rate: Rate,
    /// IP size of each datagram, 29 to 1500 bytes (28 bytes of IPv4 and UDP headers). Not for
    /// "web". Default "1500B".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packet: Option<Size>,
    /// ppbp: Hurst parameter H, strictly between 0.5 and 1 (burst lengths are Pareto with
    /// shape 3 − 2H). Default 0.7.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hurst: Option<f64>,
    /// ppbp: bit rate of one burst. Default "1Mbps".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst_rate: Option<Rate>,
    /// ppbp: bursts starting per second (Poisson). Default: rate / (burst_rate × mean_burst).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst_arrivals: Option<f64>,
    /// ppbp: mean burst length, instead of `burst_arrivals` (give at most one of the two).
    /// Default "200ms" when `burst_arrivals` is not given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_burst: Option<Duration>,
    /// onoff: mean length of an on period (exponential). Default "500ms".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_on: Option<Duration>,
    /// onoff: mean length of an off period (exponential). Default "500ms".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_off: Option<Duration>,
    /// web: mean transfer size. Default "100KB".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_size: Option<Size>,
    /// web: Pareto shape of the sizes, greater than 0 (heavier tail when smaller). Default 1.2.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_shape: Option<f64>,
    /// web: largest transfer (the Pareto law is bounded), more than `mean_size`. Default "100MB".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_size: Option<Size>,
    /// web: congestion control of the transfers. Default: `defaults.cc`, else "newreno".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cc: Option<CcSpec>,
    /// web: TCP options of the transfers (merged over `defaults.tcp`).
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    #[schemars(with = "TcpConfig")]
    pub tcp: TcpTable,
    /// Datagram generators (not "web"): how the datagrams cross the link directions of their
    /// path that nothing else uses (the source's and the sink's own links). "packets" (default):
    /// as every packet, two events per hop. "closed-form": computed when the datagram is sent
    /// (a FIFO at a constant rate fed by one source: start = max(arrival, end of the previous
    /// one), the same drop-tail rule and random loss), so the datagram enters the first shared
    /// link at the time it would have and the sink counts it when it would have arrived; the
    /// queueing on the shared links is the same. Link directions with capacity steps, a Mahimahi
    /// trace, loss events, a pcap or a queue trace are always simulated packet by packet. The
    /// private links' counters include datagrams still in flight at the end of the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub private_links: Option<PrivateLinks>,
}

/// How a datagram generator's packets cross the links only it uses (`[[traffic]].private_links`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum PrivateLinks {
    /// Packet by packet, as on every other link.
    #[default]
    Packets,
    /// Departures computed when the datagram is sent (no events on those links).
    ClosedForm,
}

/// A loss event: random loss with probability `loss` on `link` from `start` to `stop`
/// (packets arriving at the link's far end in that interval); the link's own loss applies
/// again afterwards.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(
    deny_unknown_fields,
    expecting = "a loss_event table such as { link = \"server->router\", loss = \"50%\", start = \"30s\", stop = \"31s\" }"
)]
pub struct LossEventSpec {
    /// Link direction(s): "A->B" (node names), "LINK:ab" / "LINK:ba", a link name alone (both
    /// directions) or "*" (every direction).
    pub link: String,
    /// Loss probability during the event, e.g. "50%".
    pub loss: Probability,
    /// Start of the event; before `duration`.
    pub start: Duration,
    /// End of the event; after `start`.
    pub stop: Duration,
}

/// One step of a capacity schedule.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(
    deny_unknown_fields,
    expecting = "a step such as { at = \"30s\", rate = \"4Mbps\" }"
)]
pub struct CapacityStepSpec {
    /// From when the rate applies.
    pub at: Duration,
    /// The link direction's rate from `at` on.
    pub rate: Rate,
}

/// The capacity of a link direction over time: rate `steps`, a Mahimahi trace file that
/// replaces the fixed-rate transmitter, or a Sabre network trace (give exactly one of the three).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(
    deny_unknown_fields,
    expecting = "a capacity table such as { link = \"r1->r2\", mahimahi = \"trace.down\" }"
)]
pub struct CapacitySpec {
    /// Link direction(s), as for `loss_event.link`.
    pub link: String,
    /// Rate steps by strictly increasing time, e.g. [{ at = "0s", rate = "8Mbps" },
    /// { at = "60s", rate = "2Mbps" }]; before the first step the link's `rate` applies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps: Option<Vec<CapacityStepSpec>>,
    /// Path of a Mahimahi trace (one delivery opportunity of 1500 bytes per line, times in ms),
    /// relative to the scenario file's directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mahimahi: Option<String>,
    /// Path of a Sabre network trace (`network.json`: a list of { duration_ms, bandwidth_kbps,
    /// latency_ms }), relative to the scenario file's directory: its bandwidths become rate
    /// steps, played in a loop to the end of the run as Sabre does; latency_ms is not used
    /// (the links' delays are the path's latency).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sabre: Option<String>,
    /// mahimahi only: play the trace once and then deliver nothing (`mm-link --once`) instead
    /// of looping. Default false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub once: Option<bool>,
}

/// A named topology of one of the papers, with its parameters (see docs/topologies.md). Each
/// preset accepts only its own parameters.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(
    deny_unknown_fields,
    expecting = "a preset table such as { name = \"tcphas-home\", clients = 8 }"
)]
pub struct PresetSpec {
    /// "tcphas-home", "enhancing-dumbbell", "enhancing-cross", "enhancing-tcp-flow",
    /// "household", "newcwv-single" or "newcwv-shared".
    pub name: String,
    /// A `[[player]]` table without `name`, `client`, `server`, `start`, `stop` and `count`
    /// (e.g. `{ abr = "rbb", video = "tcphas" }`): one such player runs in each of the
    /// preset's player slots. Absent: the slots stay empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub player: Option<serde_json::Map<String, serde_json::Value>>,
    /// tcphas-home: number of clients N (and servers), 1 to 100. Default 8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clients: Option<u64>,
    /// Round-trip propagation delay between a client and its server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rtt: Option<Duration>,
    /// Rate of the bottleneck link.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bottleneck_rate: Option<Rate>,
    /// Drop-tail limit of the bottleneck queue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bottleneck_queue: Option<QueueSize>,
    /// Random loss on the bottleneck.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss: Option<Probability>,
    /// enhancing-*: which direction of the bottleneck the random loss hits: "data" (switch1 →
    /// switch2, the server's packets; default) or "ack" (switch2 → switch1, the client's
    /// ACKs). NS-2's ErrorModel drops on one simplex link and the paper does not say which.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss_direction: Option<String>,
    /// enhancing-*: drop-tail limit of the hosts' own queues (a host's link to its switch).
    /// Default "50pkts": NS-2's `Queue set limit_ 50` (ns-default.tcl); the paper sizes only
    /// the switches' ports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_queue: Option<QueueSize>,
    /// tcphas-home: mean rate of the PPBP cross-traffic. Default "40Mbps".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ppbp_rate: Option<Rate>,
    /// tcphas-home: Hurst parameter of the PPBP cross-traffic. Default 0.7.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hurst: Option<f64>,
    /// enhancing-cross: rate of the CBR competitor. Default "500kbps".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cbr_rate: Option<Rate>,
    /// household: the paper's environment 1 to 4. Default 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<u64>,
    /// household: each viewer starts up to this much after its time in the environment, one
    /// uniform draw per viewer from the scenario's seed; at most 60 s and less than the
    /// environments' spacing (10 min / clients). Default "0s": the paper's viewers "start to view
    /// their video simultaneously" (§IV-A). A probe of how much a result depends on the viewers'
    /// relative timing, which a testbed does not control to the millisecond.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_jitter: Option<Duration>,
    /// newcwv-shared: when the FTP competitor starts. Default "60s".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ftp_start: Option<Duration>,
    /// Congestion control of the preset's own TCP competitor (enhancing-tcp-flow: the TCP
    /// source; newcwv-shared: the FTP transfer). Default "newreno".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub competitor_cc: Option<CcSpec>,
    /// newcwv-shared: when the DASH player stops. Default "400s".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub player_stop: Option<Duration>,
}
