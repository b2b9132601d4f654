//! The scenario file as written by users (TOML, or the same shape as JSON): serde structs
//! that mirror the file one-to-one. Every table refuses unknown keys; the doc comments on the
//! fields become the descriptions of the JSON Schema ([`super::json_schema`]).
//!
//! Nothing here is checked beyond types and units: [`Scenario::to_plan`] (in `validate.rs`)
//! checks the meaning (names exist, routes exist, ranges) and resolves the file into a
//! [`super::Plan`].

use super::plan::QueueLimit;
use crate::sim::units::{parse_size, Duration, Probability, Rate, Size};
use crate::tcp::cc::CcConfig;
use crate::tcp::config::TcpConfig;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{de, Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// A `[flow.tcp]` or `[defaults.tcp]` table kept as written, so that the defaults can be merged
/// under each flow's own table key by key before it becomes a [`TcpConfig`].
pub type TcpTable = serde_json::Map<String, serde_json::Value>;

/// Smallest byte limit of a drop-tail queue: one full-sized (1500-byte) IP packet.
pub const MIN_QUEUE_BYTES: u64 = 1500;

/// A simulation scenario: the network (explicit `node`/`link` entries and/or a `dumbbell`), the
/// flows that run over it, and what to trace.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, expecting = "a scenario table")]
pub struct Scenario {
    /// Seed of every random stream of the run (loss, initial sequence numbers, ...). Default 1.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Simulated time of the run, e.g. "60s". Required; greater than zero and at most 10 days.
    pub duration: Duration,
    /// Explicit nodes (hosts and routers), `[[node]]` in TOML.
    #[serde(default, rename = "node", skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<NodeSpec>,
    /// Explicit point-to-point links between nodes, `[[link]]` in TOML.
    #[serde(default, rename = "link", skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<LinkSpec>,
    /// Dumbbell shortcut: `pairs` senders `left{i}` and receivers `right{i}` joined through the
    /// routers `r1` and `r2`. May be combined with explicit nodes and links.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dumbbell: Option<DumbbellSpec>,
    /// Defaults applied to every flow (each flow's own settings win).
    #[serde(default)]
    pub defaults: DefaultsSpec,
    /// Flows (one TCP connection each, or `count` of them), `[[flow]]` in TOML.
    #[serde(default, rename = "flow", skip_serializing_if = "Vec::is_empty")]
    pub flows: Vec<FlowSpec>,
    /// HAS players (a video server and a player each, or `count` of them), `[[player]]` in
    /// TOML.
    #[serde(default, rename = "player", skip_serializing_if = "Vec::is_empty")]
    pub players: Vec<super::player_spec::PlayerSpec>,
    /// What to record during the run.
    #[serde(default)]
    pub trace: TraceSpec,

    // --- cross-traffic, dynamics and presets (spec_traffic.rs) ---
    /// Cross-traffic generators, `[[traffic]]` in TOML.
    #[serde(default, rename = "traffic", skip_serializing_if = "Vec::is_empty")]
    pub traffic: Vec<super::spec_traffic::TrafficSpec>,
    /// Loss events on links, `[[loss_event]]` in TOML.
    #[serde(default, rename = "loss_event", skip_serializing_if = "Vec::is_empty")]
    pub loss_events: Vec<super::spec_traffic::LossEventSpec>,
    /// Capacity schedules and Mahimahi traces of link directions, `[[capacity]]` in TOML.
    #[serde(default, rename = "capacity", skip_serializing_if = "Vec::is_empty")]
    pub capacity: Vec<super::spec_traffic::CapacitySpec>,
    /// A topology of one of the papers, `[preset]` in TOML (docs/topologies.md): its nodes,
    /// links, cross-traffic and flows are added to the scenario's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preset: Option<super::spec_traffic::PresetSpec>,
    /// Directory that relative file names (Mahimahi traces) are resolved against; not part of
    /// the file (set by the caller that read it). None: the current directory.
    #[serde(skip)]
    #[schemars(skip)]
    pub base_dir: Option<std::path::PathBuf>,
}

fn default_seed() -> u64 {
    1
}

/// A node (host or router). Every node forwards packets along shortest paths.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(
    deny_unknown_fields,
    expecting = "a node table such as { name = \"r1\" }"
)]
pub struct NodeSpec {
    /// Unique name: 1 to 64 characters from A-Z, a-z, 0-9, `_`, `.` and `-`, not starting
    /// with `.`.
    pub name: String,
}

/// A bidirectional point-to-point link. `rate`, `delay`, `loss` and `queue` apply to both
/// directions unless `ab` / `ba` override them.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(
    deny_unknown_fields,
    expecting = "a link table such as { a = \"r1\", b = \"r2\", rate = \"8Mbps\" }"
)]
pub struct LinkSpec {
    /// Unique link name (same characters as node names, up to 129 long). Default `<a>-<b>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Name of the node at one end.
    pub a: String,
    /// Name of the node at the other end (must differ from `a`).
    pub b: String,
    /// Transmission rate of each direction, e.g. "8Mbps". Required; at most 1Tbps.
    pub rate: Rate,
    /// One-way propagation delay, e.g. "20ms". Default "0s"; at most 10 days.
    #[serde(default)]
    pub delay: Duration,
    /// Probability that a packet entering the link is lost (Bernoulli), e.g. "1%". Default 0.
    #[serde(default)]
    pub loss: Probability,
    /// Drop-tail limit of each direction's output queue: a packet count ("100pkts") or a size
    /// ("30KB", at least one 1500-byte packet). Default "1000pkts".
    #[serde(default)]
    pub queue: QueueSize,
    /// Overrides for the direction a → b.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ab: Option<LinkDirSpec>,
    /// Overrides for the direction b → a.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ba: Option<LinkDirSpec>,
}

/// Per-direction overrides of a link; an absent key keeps the link's value.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(
    deny_unknown_fields,
    expecting = "a table of per-direction overrides (rate, delay, loss, queue)"
)]
pub struct LinkDirSpec {
    /// Transmission rate of this direction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<Rate>,
    /// One-way propagation delay of this direction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay: Option<Duration>,
    /// Loss probability of this direction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss: Option<Probability>,
    /// Drop-tail limit of this direction's output queue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<QueueSize>,
}

/// The dumbbell topology: nodes `left0`..`left{pairs-1}`, `right0`..`right{pairs-1}`, `r1`,
/// `r2` (in that order); links `bottleneck` (r1–r2), `left{i}` (left{i}–r1) and `right{i}`
/// (r2–right{i}). The one-way delay from `left{i}` to `right{i}` is
/// `bottleneck_delay + 2 × access_delay`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(
    deny_unknown_fields,
    expecting = "a dumbbell table such as { pairs = 4, bottleneck_rate = \"8Mbps\" }"
)]
pub struct DumbbellSpec {
    /// Number of sender/receiver pairs, at least 1 (at most 100000: 200002 nodes in all).
    pub pairs: u64,
    /// Rate of the bottleneck link r1–r2, e.g. "8Mbps". Required.
    pub bottleneck_rate: Rate,
    /// One-way delay of the bottleneck link. Default "0s".
    #[serde(default)]
    pub bottleneck_delay: Duration,
    /// Drop-tail limit of each direction of the bottleneck. Default "1000pkts".
    #[serde(default)]
    pub bottleneck_queue: QueueSize,
    /// Loss probability of each direction of the bottleneck. Default 0.
    #[serde(default)]
    pub bottleneck_loss: Probability,
    /// Rate of every access link (left{i}–r1 and r2–right{i}). Default "1Gbps".
    #[serde(default = "default_access_rate")]
    pub access_rate: Rate,
    /// One-way delay of every access link. Default "0s".
    #[serde(default)]
    pub access_delay: Duration,
    /// Drop-tail limit of every access link direction. Default "1000pkts".
    #[serde(default)]
    pub access_queue: QueueSize,
    /// Loss probability of every access link direction. Default 0.
    #[serde(default)]
    pub access_loss: Probability,
}

fn default_access_rate() -> Rate {
    Rate(1_000_000_000)
}

/// Settings applied to every flow unless the flow sets them itself.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, expecting = "a table of flow defaults (tcp, cc)")]
pub struct DefaultsSpec {
    /// TCP options merged key by key under each flow's own `tcp` table (the flow wins).
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    #[schemars(with = "TcpConfig")]
    pub tcp: TcpTable,
    /// Congestion control of flows that do not set `cc`. Default "newreno".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cc: Option<CcSpec>,
}

/// The application that drives a flow's sender.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AppKind {
    /// FTP-like: writes `bytes` (or without end) from `start` until `stop`.
    Bulk,
    /// On/off: writes `chunk` bytes every `interval` from `start` until `stop`.
    Chunks,
}

/// One TCP connection from `src` to `dst`, or `count` of them.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(
    deny_unknown_fields,
    expecting = "a flow table such as { src = \"left0\", dst = \"right0\", app = \"bulk\" }"
)]
pub struct FlowSpec {
    /// Unique flow name (same characters as node names). Default `flow<index>` (index in the
    /// expanded list of flows). With `count` > 1 it must contain "{i}".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Replicate this entry into `count` flows (at least 1; 100000 flows in all at most);
    /// "{i}" in `name`, `src` and `dst` is replaced by 0..count-1. Default 1.
    #[serde(default = "default_count")]
    pub count: u64,
    /// Node that opens the connection and sends.
    pub src: String,
    /// Node that accepts the connection and receives (must differ from `src`).
    pub dst: String,
    /// Application: "bulk" or "chunks".
    pub app: AppKind,
    /// When the connection is opened. Default "0s"; must be before `duration`.
    #[serde(default)]
    pub start: Duration,
    /// When the application stops writing (data already written is still delivered). Must be
    /// after `start`. Default: never.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<Duration>,
    /// bulk only: bytes to send, greater than zero and at most 1PB. Default: without end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<Size>,
    /// chunks only (required): bytes written at each interval, greater than zero (at most
    /// 1PB written over the whole run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunk: Option<Size>,
    /// chunks only (required): time between two chunks, greater than zero.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<Duration>,
    /// A named transport: a congestion control plus `[flow.tcp]` options as one of the papers
    /// configures its server ("ns3-newreno", "ns3.17-tcp", "newreno-rfc5681", "newreno-linux",
    /// "newcwv", "newcwv-paced", "newcwv-paced-linux", "cubic-standard", "cubic-enhanced",
    /// "cubic-tlp"; `haslab cc list` shows what each sets).
    /// This entry's own `cc` and `tcp` keys override the transport's, which override
    /// `defaults`. Default: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport: Option<String>,
    /// Congestion control: an algorithm name ("newreno") or a table
    /// `{ algorithm = "newreno", ... }` with its parameters. Default: `defaults.cc`, else
    /// "newreno".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cc: Option<CcSpec>,
    /// TCP options of this flow (merged over `defaults.tcp`).
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    #[schemars(with = "TcpConfig")]
    pub tcp: TcpTable,
}

fn default_count() -> u64 {
    1
}

/// What to record during the run.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(
    deny_unknown_fields,
    expecting = "a trace table (cwnd, queues, pcap, ...)"
)]
pub struct TraceSpec {
    /// Record cwnd, ssthresh and srtt of every flow when they change. Default true.
    #[serde(default = "default_true")]
    pub cwnd: bool,
    /// At most one cwnd sample per flow within this interval ("0s": every change). Default "0s".
    #[serde(default)]
    pub cwnd_interval: Duration,
    /// Link directions whose queue occupancy is recorded: "A->B" (node names; exactly one link
    /// must join them), "LINK:ab" / "LINK:ba" (by link name), or "*" (every direction).
    /// Default: none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub queues: Vec<String>,
    /// At most one queue sample per direction within this interval. Default "1ms".
    #[serde(default = "default_queue_interval")]
    pub queue_interval: Duration,
    /// Window of the goodput time series of every flow, greater than zero. Default "1s".
    #[serde(default = "default_goodput_window")]
    pub goodput_window: Duration,
    /// Link directions to capture into pcap files named `<from>-<to>.pcap` (same forms as
    /// `queues`). Default: none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pcap: Vec<String>,
    /// Bytes of each packet kept in pcap files, 40 to 65535. Default 96.
    #[serde(default = "default_snaplen")]
    pub snaplen: u64,
}

fn default_true() -> bool {
    true
}
fn default_queue_interval() -> Duration {
    Duration(1_000_000)
}
fn default_goodput_window() -> Duration {
    Duration(1_000_000_000)
}
fn default_snaplen() -> u64 {
    96
}

impl Default for TraceSpec {
    fn default() -> Self {
        TraceSpec {
            cwnd: true,
            cwnd_interval: Duration(0),
            queues: Vec::new(),
            queue_interval: default_queue_interval(),
            goodput_window: default_goodput_window(),
            pcap: Vec::new(),
            snaplen: default_snaplen(),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Queue limits: "100pkts" or a size.

/// The limit of a drop-tail queue: a packet count (`"100pkts"`) or a byte size (`"30KB"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueSize(pub QueueLimit);

impl Default for QueueSize {
    fn default() -> Self {
        QueueSize(QueueLimit::Packets(1000))
    }
}

pub const QUEUE_FORMS: &str = "a packet count such as \"100pkts\" (at least 1) or a size such as \
     \"30KB\" (at least one full 1500-byte packet)";

/// Parses `"100pkts"` / `"100 packets"` / `"30KB"`.
pub fn parse_queue(s: &str) -> Result<QueueSize, String> {
    let t = s.trim();
    let end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(end);
    if matches!(unit.trim(), "pkts" | "pkt" | "packets" | "packet" | "p") {
        if num.is_empty() {
            return Err(format!("invalid queue limit {s:?}: expected {QUEUE_FORMS}"));
        }
        return match num.parse::<u32>() {
            Ok(0) => Err(format!(
                "invalid queue limit {s:?}: must hold at least 1 packet"
            )),
            Ok(n) => Ok(QueueSize(QueueLimit::Packets(n))),
            Err(_) => Err(format!(
                "invalid queue limit {s:?}: at most {} packets",
                u32::MAX
            )),
        };
    }
    if !t.is_empty() && unit.is_empty() {
        return Err(format!(
            "invalid queue limit {s:?}: a unit is required; expected {QUEUE_FORMS}"
        ));
    }
    let size =
        parse_size(s).map_err(|_| format!("invalid queue limit {s:?}: expected {QUEUE_FORMS}"))?;
    queue_bytes(size.0, s)
}

fn queue_bytes(bytes: u64, shown: &str) -> Result<QueueSize, String> {
    if bytes < MIN_QUEUE_BYTES {
        Err(format!(
            "invalid queue limit {shown:?}: {bytes} bytes is less than one full-sized packet; \
             a byte limit must be at least {MIN_QUEUE_BYTES} bytes (or use a packet count such as \"1pkts\")"
        ))
    } else {
        Ok(QueueSize(QueueLimit::Bytes(bytes)))
    }
}

impl std::str::FromStr for QueueSize {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        parse_queue(s)
    }
}

struct QueueVisitor;

impl de::Visitor<'_> for QueueVisitor {
    type Value = QueueSize;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(QUEUE_FORMS)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<QueueSize, E> {
        parse_queue(v).map_err(E::custom)
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<QueueSize, E> {
        Err(E::custom(format!(
            "invalid queue limit {v}: a unit is required; expected {QUEUE_FORMS}"
        )))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<QueueSize, E> {
        self.visit_f64(v as f64)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<QueueSize, E> {
        self.visit_f64(v as f64)
    }
}

impl<'de> Deserialize<'de> for QueueSize {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(QueueVisitor)
    }
}

impl Serialize for QueueSize {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            QueueLimit::Packets(n) => s.serialize_str(&format!("{n}pkts")),
            QueueLimit::Bytes(b) => s.serialize_str(&format!("{b}B")),
        }
    }
}

impl JsonSchema for QueueSize {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "QueueSize".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        schemars::json_schema!({
            "description": QUEUE_FORMS,
            "type": "string",
            "pattern": r"^\s*[0-9.]+\s*(pkts|pkt|packets|packet|p|B|KB|kB|MB|GB|KiB|MiB|GiB)?\s*$"
        })
    }
}

// ---------------------------------------------------------------------------------------------
// Congestion control: a name or a table.

/// A congestion-control choice: an algorithm name (`"newreno"`) or a table with the
/// algorithm's parameters (`{ algorithm = "newreno", grow_when_app_limited = true }`).
pub type CcSpec = crate::sim::registry::NameOrTable<CcConfig>;
