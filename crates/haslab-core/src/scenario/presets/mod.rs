//! Topology presets: the networks of the papers haslab reproduces, by name and with parameters
//! (`[preset] name = "tcphas-home", clients = 8`). Each is documented with a drawing in
//! docs/topologies.md.
//!
//! A preset expands into ordinary scenario entries — `[[node]]`, `[[link]]`, `[[traffic]]`,
//! `[[flow]]`, `[[loss_event]]` — appended after the file's own (so the file's indices in error
//! paths do not move, and the file may add flows or traffic between the preset's nodes), plus
//! **player slots**: the client/server pairs (with start and stop times) where the paper runs
//! its video players. `player = { abr = "...", video = "...", ... }` (a `[[player]]` table
//! without name, client, server, start, stop and count) puts one player in every slot; without
//! it the slots stay empty.
//!
//! - [`tcphas`]: `tcphas-home` (TcpHas paper, Fig. 1);
//! - [`enhancing`]: `enhancing-dumbbell`, `enhancing-cross`, `enhancing-tcp-flow`
//!   (Enhancing-TCP paper, Figs. 4, 9, 12);
//! - [`household`]: `household` (QoE-of-legacy-TCP paper, environments 1–4);
//! - [`newcwv`]: `newcwv-single`, `newcwv-shared` (newCWV paper, Figs. 1 and 6).

pub mod enhancing;
pub mod household;
pub mod newcwv;
pub mod tcphas;

use super::plan::{Plan, QueueLimit};
use super::plan_traffic::{PlayerSlot, PresetPlan};
use super::spec::{FlowSpec, LinkSpec, NodeSpec, QueueSize, Scenario, TcpTable};
use super::spec_traffic::{LossEventSpec, PresetSpec, TrafficSpec};
use super::validate::show_ns;
use super::ScenarioError;
use crate::sim::rng::Stream;
use serde_json::{json, Value};

/// The preset names, as scenario files spell them.
pub const NAMES: &[&str] = &[
    "tcphas-home",
    "enhancing-dumbbell",
    "enhancing-cross",
    "enhancing-tcp-flow",
    "household",
    "newcwv-single",
    "newcwv-shared",
];

/// A player slot before names are resolved to node indices.
#[derive(Clone, Debug)]
pub struct SlotSpec {
    pub name: String,
    pub client: String,
    pub server: String,
    pub start_ns: u64,
    pub stop_ns: Option<u64>,
}

/// What a preset adds to a scenario.
#[derive(Clone, Debug, Default)]
pub struct Expansion {
    pub nodes: Vec<NodeSpec>,
    pub links: Vec<LinkSpec>,
    pub flows: Vec<FlowSpec>,
    pub traffic: Vec<TrafficSpec>,
    pub loss_events: Vec<LossEventSpec>,
    pub slots: Vec<SlotSpec>,
    /// resolved parameters, (key, value as a scenario file would write it)
    pub params: Vec<(String, String)>,
    /// TCP options of the paper's transport stack for the players of the slots (`[player.tcp]`
    /// keys); a key the `player` template's own `tcp` table sets wins, and a template with a
    /// named `transport` gets none of them.
    pub slot_tcp: TcpTable,
    /// Each slot starts up to this much later, drawn per slot from the scenario's seed (0: at
    /// its own time); see [`PresetSpec::start_jitter`].
    pub slot_jitter_ns: u64,
}

/// Builds spec entries from JSON (so that fields added to the spec structs later keep their
/// defaults here).
fn from_json<T: serde::de::DeserializeOwned>(v: Value) -> T {
    serde_json::from_value(v).expect("a preset builds valid entries")
}

impl Expansion {
    pub(super) fn node(&mut self, name: &str) {
        self.nodes.push(from_json(json!({ "name": name })));
    }
    /// A link with the same settings both ways; `delay_ns` one way.
    pub(super) fn link(
        &mut self,
        name: &str,
        a: &str,
        b: &str,
        rate_bps: u64,
        delay_ns: u64,
        queue: QueueLimit,
    ) {
        self.links.push(from_json(json!({
            "name": name, "a": a, "b": b,
            "rate": format!("{rate_bps}bps"),
            "delay": format!("{delay_ns}ns"),
            "queue": queue_text(queue),
        })));
    }
    /// Random loss `p` on the direction a → b of the last link added.
    pub(super) fn loss_ab(&mut self, p: f64) {
        let l = self.links.last_mut().expect("a link was added");
        l.ab = Some(from_json(json!({ "loss": p })));
    }
    /// The drop-tail limit of the last link's a → b direction only.
    pub(super) fn queue_ab(&mut self, q: QueueLimit) {
        let l = self.links.last_mut().expect("a link was added");
        let mut d = l.ab.take().unwrap_or_default();
        d.queue = Some(QueueSize(q));
        l.ab = Some(d);
    }
    /// The drop-tail limit of the last link's b → a direction only.
    pub(super) fn queue_ba(&mut self, q: QueueLimit) {
        let l = self.links.last_mut().expect("a link was added");
        let mut d = l.ba.take().unwrap_or_default();
        d.queue = Some(QueueSize(q));
        l.ba = Some(d);
    }
    /// Random loss on the last link's b → a direction only.
    pub(super) fn loss_ba(&mut self, p: f64) {
        let l = self.links.last_mut().expect("a link was added");
        l.ba = Some(from_json(json!({ "loss": p })));
    }
    pub(super) fn traffic(&mut self, v: Value) {
        self.traffic.push(from_json(v));
    }
    /// A bulk TCP flow (FTP) from `src` to `dst` from `start_ns`, with congestion control `cc`.
    pub(super) fn bulk_flow(&mut self, name: &str, src: &str, dst: &str, start_ns: u64, cc: Value) {
        self.flows.push(from_json(json!({
            "name": name, "src": src, "dst": dst, "app": "bulk",
            "start": format!("{start_ns}ns"), "cc": cc,
        })));
    }
    pub(super) fn loss_event(&mut self, link: &str, p: f64, start_ns: u64, stop_ns: u64) {
        self.loss_events.push(from_json(json!({
            "link": link, "loss": p,
            "start": format!("{start_ns}ns"), "stop": format!("{stop_ns}ns"),
        })));
    }
    pub(super) fn slot(
        &mut self,
        name: &str,
        client: &str,
        server: &str,
        start_ns: u64,
        stop_ns: Option<u64>,
    ) {
        self.slots.push(SlotSpec {
            name: name.into(),
            client: client.into(),
            server: server.into(),
            start_ns,
            stop_ns,
        });
    }
    pub(super) fn slot_tcp(&mut self, key: &str, value: Value) {
        self.slot_tcp.insert(key.into(), value);
    }
    pub(super) fn param(&mut self, key: &str, value: impl Into<String>) {
        self.params.push((key.into(), value.into()));
    }
}

pub(super) fn queue_text(q: QueueLimit) -> String {
    match q {
        QueueLimit::Packets(n) => format!("{n}pkts"),
        QueueLimit::Bytes(b) => format!("{b}B"),
    }
}

/// "8Mbps", "500kbps", "1200bps".
pub(super) fn rate_text(bps: u64) -> String {
    if bps.is_multiple_of(1_000_000) {
        format!("{}Mbps", bps / 1_000_000)
    } else if bps.is_multiple_of(1000) {
        format!("{}kbps", bps / 1000)
    } else {
        format!("{bps}bps")
    }
}

pub(super) fn ns_text(ns: u64) -> String {
    show_ns(ns)
}

/// Refuses parameters that the preset does not take.
pub(super) fn only_params(spec: &PresetSpec, allowed: &[&str]) -> Result<(), ScenarioError> {
    let v = serde_json::to_value(spec).expect("a preset table serialises");
    if let Value::Object(m) = v {
        for k in m.keys() {
            if k != "name" && k != "player" && !allowed.contains(&k.as_str()) {
                return Err(ScenarioError {
                    path: format!("preset.{k}"),
                    message: format!(
                        "not a parameter of preset {:?}; its parameters are: {}, player",
                        spec.name,
                        allowed.join(", ")
                    ),
                });
            }
        }
    }
    Ok(())
}

pub(super) fn perr(key: &str, message: impl Into<String>) -> ScenarioError {
    ScenarioError {
        path: format!("preset.{key}"),
        message: message.into(),
    }
}

/// A round-trip time parameter: greater than zero, at most 10 s.
pub(super) fn rtt_param(spec: &PresetSpec, default_ns: u64) -> Result<u64, ScenarioError> {
    let rtt = spec.rtt.map_or(default_ns, |d| d.0);
    if rtt == 0 || rtt > 10_000_000_000 {
        return Err(perr("rtt", "must be greater than zero and at most 10s"));
    }
    Ok(rtt)
}

/// A rate parameter: greater than zero, at most 1 Tbps.
pub(super) fn rate_param(
    v: Option<super::units::Rate>,
    key: &str,
    default_bps: u64,
) -> Result<u64, ScenarioError> {
    let r = v.map_or(default_bps, |r| r.0);
    if r == 0 || r > super::MAX_RATE_BPS {
        return Err(perr(key, "must be greater than zero and at most 1Tbps"));
    }
    Ok(r)
}

/// A queue parameter, or `default`.
pub(super) fn queue_param(v: Option<QueueSize>, default: QueueLimit) -> QueueLimit {
    v.map_or(default, |q| q.0)
}

/// A loss parameter in [0, 1].
pub(super) fn loss_param(
    v: Option<super::units::Probability>,
    default: f64,
) -> Result<f64, ScenarioError> {
    let p = v.map_or(default, |p| p.0);
    if !(0.0..=1.0).contains(&p) {
        return Err(perr("loss", "must be a probability between 0 and 1"));
    }
    Ok(p)
}

/// One bandwidth-delay product in bytes (at least one 1500-byte packet, the smallest byte
/// limit a queue accepts).
pub(super) fn bdp_bytes(rate_bps: u64, rtt_ns: u64) -> u64 {
    ((rate_bps as u128 * rtt_ns as u128 / 8 / 1_000_000_000) as u64).max(1500)
}

/// Expands the preset named in `spec`.
pub fn expand(spec: &PresetSpec) -> Result<Expansion, ScenarioError> {
    match spec.name.as_str() {
        "tcphas-home" => tcphas::home(spec),
        "enhancing-dumbbell" => enhancing::dumbbell(spec),
        "enhancing-cross" => enhancing::cross(spec),
        "enhancing-tcp-flow" => enhancing::tcp_flow(spec),
        "household" => household::household(spec),
        "newcwv-single" => newcwv::single(spec),
        "newcwv-shared" => newcwv::shared(spec),
        other => Err(ScenarioError {
            path: "preset.name".into(),
            message: format!(
                "unknown preset {other:?}; presets are: {}",
                NAMES
                    .iter()
                    .map(|n| format!("{n:?}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }),
    }
}

/// Rewrites an error about an entry the preset created (`node[7]` when the file has 5 nodes)
/// so that it names the preset instead of an index the file does not have.
fn remap(mut e: ScenarioError, counts: &[(&str, usize)], preset: &str) -> ScenarioError {
    for &(key, n) in counts {
        let prefix = format!("{key}[");
        if let Some(rest) = e.path.strip_prefix(&prefix) {
            if let Some((idx, field)) = rest.split_once(']') {
                if key == "player"
                    && field.starts_with('.')
                    && idx.parse::<usize>().is_ok_and(|i| i >= n)
                {
                    // a field of a player the `player` template made: the template's field
                    e.path = format!("preset.player{field}");
                    return e;
                }
                if idx.parse::<usize>().is_ok_and(|i| i >= n) {
                    e.message = format!(
                        "{} (this {key} entry is created by preset {preset:?}: rename the file's own entry)",
                        e.message
                    );
                    e.path = "preset".into();
                }
            }
        }
    }
    e
}

/// One `[[player]]` per slot from the preset's `player` template.
fn fill_slots(
    template: &serde_json::Map<String, Value>,
    slots: &[SlotSpec],
    slot_tcp: &TcpTable,
) -> Result<Vec<super::PlayerSpec>, ScenarioError> {
    for key in ["name", "client", "server", "start", "stop", "count"] {
        if template.contains_key(key) {
            return Err(ScenarioError {
                path: format!("preset.player.{key}"),
                message: "is set by the preset for each of its player slots; leave it out".into(),
            });
        }
    }
    let mut template = template.clone();
    // a named transport in the template defines the whole stack: the preset's defaults would
    // otherwise override it (explicit `tcp` keys win over a transport)
    if !slot_tcp.is_empty() && !template.contains_key("transport") {
        let mut tcp = slot_tcp.clone();
        match template.get("tcp") {
            Some(Value::Object(own)) => tcp.extend(own.clone()),
            Some(_) => {
                return Err(ScenarioError {
                    path: "preset.player.tcp".into(),
                    message: "must be a table of TCP options (like [flow.tcp])".into(),
                })
            }
            None => {}
        }
        template.insert("tcp".into(), Value::Object(tcp));
    }
    slots
        .iter()
        .map(|sl| {
            let mut v = template.clone();
            v.insert("name".into(), json!(sl.name));
            v.insert("client".into(), json!(sl.client));
            v.insert("server".into(), json!(sl.server));
            v.insert("start".into(), json!(format!("{}ns", sl.start_ns)));
            if let Some(stop) = sl.stop_ns {
                v.insert("stop".into(), json!(format!("{stop}ns")));
            }
            serde_json::from_value(Value::Object(v)).map_err(|e| ScenarioError {
                path: "preset.player".into(),
                message: e.to_string(),
            })
        })
        .collect()
}

/// `to_plan` of a scenario with a preset: the file's entries plus the preset's, then the slots.
pub(super) fn plan_with_preset(s: &Scenario, spec: &PresetSpec) -> Result<Plan, ScenarioError> {
    let mut x = expand(spec)?;
    if x.slot_jitter_ns > 0 {
        for sl in &mut x.slots {
            let mut draw = Stream::new(s.seed, &format!("preset.start_jitter/{}", sl.name));
            sl.start_ns += (draw.uniform() * x.slot_jitter_ns as f64) as u64;
        }
    }
    let counts = [
        ("node", s.nodes.len()),
        ("link", s.links.len()),
        ("flow", s.flows.len()),
        ("traffic", s.traffic.len()),
        ("loss_event", s.loss_events.len()),
        ("player", s.players.len()),
    ];
    let mut merged = s.clone();
    merged.preset = None;
    if let Some(template) = &spec.player {
        merged
            .players
            .extend(fill_slots(template, &x.slots, &x.slot_tcp)?);
    }
    merged.nodes.extend(x.nodes.iter().cloned());
    merged.links.extend(x.links.iter().cloned());
    merged.flows.extend(x.flows.iter().cloned());
    merged.traffic.extend(x.traffic.iter().cloned());
    merged.loss_events.extend(x.loss_events.iter().cloned());
    let mut plan = merged
        .to_plan()
        .map_err(|e| remap(e, &counts, &spec.name))?;
    let index = |name: &str| {
        plan.nodes
            .iter()
            .position(|n| n.name == name)
            .expect("a slot names a node of its preset")
    };
    let mut slots = Vec::with_capacity(x.slots.len());
    for sl in &x.slots {
        slots.push(PlayerSlot {
            name: sl.name.clone(),
            client: index(&sl.client),
            server: index(&sl.server),
            start_ns: sl.start_ns,
            stop_ns: sl.stop_ns,
        });
    }
    plan.preset = Some(PresetPlan {
        name: spec.name.clone(),
        params: x.params,
        player_slots: slots,
    });
    Ok(plan)
}
