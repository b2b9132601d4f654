//! The `[[player]]` tables of a scenario file: HAS players, their video and their HTTP
//! connections. Checked and resolved by `players.rs` into [`super::PlayerPlan`]s.

use super::spec::{CcSpec, TcpTable};
use crate::has::players::AbrConfig;
use crate::has::video::preset_names;
use crate::sim::units::{Duration, Rate, Size};
use crate::tcp::config::TcpConfig;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{de, Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// A HAS player streaming a video from `server` to `client`, or `count` of them.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(
    deny_unknown_fields,
    expecting = "a player table such as { client = \"right0\", server = \"left0\", abr = \"panda\", video = \"tcphas\" }"
)]
pub struct PlayerSpec {
    /// Unique player name (same characters as node names). Default `player<index>`. With
    /// `count` > 1 it must contain "{i}".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Replicate this entry into `count` players (at least 1; 10000 players in all at most);
    /// "{i}" in `name`, `client` and `server` is replaced by 0..count-1. Default 1.
    #[serde(default = "default_count")]
    pub count: u64,
    /// Node running the player (the HTTP client; it opens the connections).
    pub client: String,
    /// Node running the HTTP server that holds the video (must differ from `client`).
    pub server: String,
    /// Adaptation algorithm: a name ("rbb", "conventional", "panda", "elastic", "festive",
    /// "bba", "bola") or a table `{ algorithm = "panda", kappa = 0.28, ... }`.
    pub abr: AbrSpec,
    /// The video: a preset name ("tcphas", "qoe", "newcwv") or a table (see `VideoSpec`).
    pub video: VideoChoice,
    /// Buffer cap: the player never requests a segment that would not fit. Default "30s"
    /// (the TcpHas paper's player, DASH-JS in the newCWV paper).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffer: Option<Duration>,
    /// Media buffered before playback starts, greater than zero and at most `buffer`.
    /// Default: one segment duration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub startup: Option<Duration>,
    /// Media buffered before playback resumes after a stall, greater than zero and at most
    /// `buffer`. Default: `startup`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume: Option<Duration>,
    /// Refill scheduling of the newCWV paper: once the buffer is full, request again only when
    /// it has drained to this level (e.g. "20s" with a 30 s buffer: "drained by one third"),
    /// then back to back until full. Replaces the player's own timing (not its level choice).
    /// Default: the player schedules its requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refill: Option<Duration>,
    /// Connection policy: "persistent" (one connection, default), "per-request" (a new
    /// connection per segment), "parallel" (`connections` persistent connections downloading at once),
    /// "rotate" (`connections` persistent connections used in turn, one request at a time),
    /// "renew" (a new connection every `renew_every` segments).
    #[serde(default)]
    pub connection: ConnectionKind,
    /// "parallel" only: number of persistent connections, 1 to 64. Default 4 (the newCWV
    /// paper's VLC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connections: Option<u64>,
    /// "renew" only (required): segments per connection, at least 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub renew_every: Option<u64>,
    /// When the player starts (its first request). Default "0s"; before `duration`.
    #[serde(default)]
    pub start: Duration,
    /// When the player leaves (its buffer is discarded). Must be after `start`. Default: never.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<Duration>,
    /// A named transport: a congestion control plus `[flow.tcp]` options as one of the papers
    /// configures its server ("ns3-newreno", "ns3.17-tcp", "newreno-rfc5681", "newreno-linux",
    /// "newcwv", "newcwv-paced", "newcwv-paced-linux", "cubic-standard", "cubic-enhanced",
    /// "cubic-tlp"; `haslab cc list` shows what each sets).
    /// This entry's own `cc` and `tcp` keys override the transport's, which override
    /// `defaults`. Default: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport: Option<String>,
    /// Congestion control of the player's connections (the server's side sends the video).
    /// Default: `defaults.cc`, else "newreno".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cc: Option<CcSpec>,
    /// TCP options of the player's connections (merged over `defaults.tcp`).
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    #[schemars(with = "TcpConfig")]
    pub tcp: TcpTable,
}

fn default_count() -> u64 {
    1
}

/// How a player uses HTTP connections.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ConnectionKind {
    /// One persistent connection.
    #[default]
    Persistent,
    /// A new connection for every request.
    PerRequest,
    /// `connections` persistent connections downloading at once, one request in flight on each.
    Parallel,
    /// `connections` persistent connections used in turn, one request at a time.
    Rotate,
    /// A new connection every `renew_every` segments.
    Renew,
}

impl ConnectionKind {
    pub fn name(self) -> &'static str {
        match self {
            ConnectionKind::Persistent => "persistent",
            ConnectionKind::PerRequest => "per-request",
            ConnectionKind::Parallel => "parallel",
            ConnectionKind::Rotate => "rotate",
            ConnectionKind::Renew => "renew",
        }
    }
}

/// A video described by a table: exactly one of `preset`, `bitrates`, `mpd` or `sabre`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(
    deny_unknown_fields,
    expecting = "a video table with one of `preset`, `bitrates`, `mpd` or `sabre`"
)]
pub struct VideoSpec {
    /// A preset ladder: "tcphas", "qoe" or "newcwv" (2 s segments, 10 min).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preset: Option<String>,
    /// A custom ladder, strictly ascending (at most 255 levels), e.g. ["1Mbps", "2Mbps"].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bitrates: Option<Vec<Rate>>,
    /// Segment duration (presets: 2 s; required with `bitrates`; with `mpd`, only to cut a
    /// SegmentBase representation into segments).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub segment: Option<Duration>,
    /// Length of the video (presets: 10 min; required with `bitrates` unless `sizes` is given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<Duration>,
    /// With `bitrates`: the size of every segment, one list per level (replaces CBR sizes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sizes: Option<Vec<Vec<Size>>>,
    /// Path of a DASH MPD (relative to the scenario file's folder, or to the working directory
    /// when the scenario is not a file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mpd: Option<String>,
    /// Path of a Sabre movie (`movie.json`: { segment_duration_ms, bitrates_kbps,
    /// segment_sizes_bits }), relative to the scenario file's folder like `mpd`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sabre: Option<String>,
}

/// A video: a preset name or a [`VideoSpec`] table.
#[derive(Clone, Debug, PartialEq)]
pub enum VideoChoice {
    Preset(String),
    Table(VideoSpec),
}

impl VideoChoice {
    pub fn spec(&self) -> VideoSpec {
        match self {
            VideoChoice::Preset(p) => VideoSpec {
                preset: Some(p.clone()),
                ..Default::default()
            },
            VideoChoice::Table(t) => t.clone(),
        }
    }
}

struct VideoVisitor;

impl<'de> de::Visitor<'de> for VideoVisitor {
    type Value = VideoChoice;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "a video preset name (one of {}) or a table {{ preset = ... }}, {{ bitrates = [...], segment = ..., duration = ... }} or {{ mpd = \"file.mpd\" }}",
            preset_names()
        )
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<VideoChoice, E> {
        Ok(VideoChoice::Preset(v.to_string()))
    }
    fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<VideoChoice, A::Error> {
        VideoSpec::deserialize(de::value::MapAccessDeserializer::new(map)).map(VideoChoice::Table)
    }
}

impl<'de> Deserialize<'de> for VideoChoice {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(VideoVisitor)
    }
}

impl Serialize for VideoChoice {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            VideoChoice::Preset(p) => s.serialize_str(p),
            VideoChoice::Table(t) => t.serialize(s),
        }
    }
}

impl JsonSchema for VideoChoice {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "VideoChoice".into()
    }
    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let table = generator.subschema_for::<VideoSpec>();
        schemars::json_schema!({
            "description": "A video: a preset name (\"tcphas\", \"qoe\", \"newcwv\") or a table.",
            "anyOf": [{"type": "string"}, table]
        })
    }
}

/// An adaptation algorithm: a name (`"panda"`) or a table with its parameters
/// (`{ algorithm = "panda", kappa = 0.28 }`).
pub type AbrSpec = crate::sim::registry::NameOrTable<AbrConfig>;
