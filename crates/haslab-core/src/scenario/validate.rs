//! Semantic validation of a [`Scenario`] and its resolution into a [`Plan`]: dumbbell
//! expansion, `count` replication, merging of `[defaults]`, name → index resolution, routing
//! feasibility and trace references. Every error names the path of the offending field in the
//! file (`link[1].rate`, `flow[0].tcp.min_rto`, `trace.queues[0]`, ...); flow paths use the
//! index of the `[[flow]]` entry in the file, not of the expanded flow.

use super::plan::*;
use super::spec::*;
use super::ScenarioError;
use crate::sim::units::{MAX_DURATION_NS, MAX_RATE_BPS};
use crate::tcp::cc::CcConfig;
use crate::tcp::config::TcpConfig;
use std::cell::OnceCell;
use std::collections::{HashMap, HashSet};

/// Most flows in a scenario after `count` replication. Building a run takes about 19 kB per
/// flow (1.9 GB for 100 000 bulk flows, measured), and describing a plan about as much again,
/// so a million flows would not fit the memory of the machines the simulator runs on.
pub const MAX_FLOWS: u64 = 100_000;
/// Most nodes in a scenario (explicit and dumbbell together): a dumbbell of one flow per host
/// pair at the flow limit (`MAX_FLOWS` pairs and its two routers) fits.
pub const MAX_NODES: usize = 2 * MAX_FLOWS as usize + 2;
/// Most rows of the goodput trace (one per flow or player connection per `trace.goodput_window`;
/// about 44 bytes each, so at most about 440 MB).
pub const MAX_GOODPUT_ROWS: u64 = 10_000_000;
/// Longest node or flow name (a link's name may be `2 × MAX_NAME_LEN + 1` long, as its default
/// `<a>-<b>` is), so that pcap and other output file names stay under 255 bytes.
pub const MAX_NAME_LEN: usize = 64;
/// Most bytes one application may write over a run (`bytes`, or `chunk` × the number of
/// chunks): 1 PB, so no byte counter of the simulator can overflow.
pub const MAX_APP_BYTES: u64 = 1_000_000_000_000_000;
/// Accepted range of `trace.snaplen`.
pub const SNAPLEN_RANGE: std::ops::RangeInclusive<u64> = 40..=65_535;

pub(super) fn err(path: impl Into<String>, message: impl Into<String>) -> ScenarioError {
    ScenarioError {
        path: path.into(),
        message: message.into(),
    }
}

/// Checks the character set and length of a node or flow name (and of an explicit link name).
pub fn check_name(name: &str) -> Result<(), String> {
    check_name_len(name, MAX_NAME_LEN)
}

fn check_name_len(name: &str, max: usize) -> Result<(), String> {
    if name.is_empty() {
        return Err("a name must not be empty".into());
    }
    if name.chars().count() > max {
        return Err(format!("name {name:?} is longer than {max} characters"));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')))
    {
        return Err(format!(
            "invalid name {name:?}: character {c:?} is not allowed; use only A-Z, a-z, 0-9, '_', '.' and '-'"
        ));
    }
    if name.starts_with('.') {
        return Err(format!("invalid name {name:?}: must not start with '.'"));
    }
    Ok(())
}

pub(super) fn check_duration(path: &str, d: u64) -> Result<(), ScenarioError> {
    if d > MAX_DURATION_NS {
        return Err(err(
            path,
            format!("{} is too long: at most 10 days", show_ns(d)),
        ));
    }
    Ok(())
}

pub(super) fn check_rate(path: &str, bps: u64) -> Result<(), ScenarioError> {
    if bps == 0 {
        return Err(err(path, "must be greater than zero"));
    }
    if bps > MAX_RATE_BPS {
        return Err(err(path, format!("{bps}bps is too fast: at most 1Tbps")));
    }
    Ok(())
}

pub(super) fn check_loss(path: &str, p: f64) -> Result<(), ScenarioError> {
    if !(0.0..=1.0).contains(&p) {
        return Err(err(
            path,
            "must be a probability between 0 and 1 (0% and 100%)",
        ));
    }
    Ok(())
}

/// A duration for messages: "60s", "250ms", "17ns".
pub(super) fn show_ns(ns: u64) -> String {
    if ns.is_multiple_of(1_000_000_000) {
        format!("{}s", ns / 1_000_000_000)
    } else if ns.is_multiple_of(1_000_000) {
        format!("{}ms", ns / 1_000_000)
    } else if ns.is_multiple_of(1_000) {
        format!("{}us", ns / 1_000)
    } else {
        format!("{ns}ns")
    }
}

/// "a, b, c" (at most 10 names, then "...").
fn some_names<'a>(names: impl Iterator<Item = &'a str>) -> String {
    let mut v: Vec<String> = names.take(11).map(|n| format!("{n:?}")).collect();
    if v.len() > 10 {
        v.truncate(10);
        v.push("...".into());
    }
    if v.is_empty() {
        "none".into()
    } else {
        v.join(", ")
    }
}

/// The congestion control and `[flow.tcp]` options of the named transport `name` (none:
/// nothing); an unknown name is an error at `<p>.transport` listing the accepted names.
pub(super) fn resolve_transport(
    name: Option<&str>,
    p: &str,
) -> Result<(Option<CcConfig>, TcpTable), ScenarioError> {
    let Some(name) = name else {
        return Ok((None, TcpTable::new()));
    };
    let t = super::transport::by_name(name).ok_or_else(|| {
        err(
            format!("{p}.transport"),
            format!(
                "unknown transport {name:?}: expected one of {}",
                super::transport::names()
            ),
        )
    })?;
    Ok((Some(t.cc_config()), t.tcp_table()))
}

/// Deserialises a TCP table into a [`TcpConfig`]; an error's path is `prefix.<field>`.
pub(crate) fn tcp_from_table(table: &TcpTable, prefix: &str) -> Result<TcpConfig, ScenarioError> {
    let value = serde_json::Value::Object(table.clone());
    serde_path_to_error::deserialize::<_, TcpConfig>(value).map_err(|e| {
        let inner = e.path().to_string();
        let path = if inner == "." || inner.is_empty() {
            prefix.to_string()
        } else {
            format!("{prefix}.{inner}")
        };
        err(path, e.into_inner().to_string())
    })
}

pub(super) struct Net {
    pub(super) nodes: Vec<NodePlan>,
    pub(super) node_index: HashMap<String, usize>,
    pub(super) links: Vec<LinkPlan>,
    pub(super) link_index: HashMap<String, usize>,
    /// See [`Net::between`].
    between: OnceCell<HashMap<(usize, usize), Vec<LinkDirRef>>>,
}

impl Net {
    pub(super) fn new() -> Self {
        Net {
            nodes: Vec::new(),
            node_index: HashMap::new(),
            links: Vec::new(),
            link_index: HashMap::new(),
            between: OnceCell::new(),
        }
    }

    /// The link directions from node `a` to node `b`, by `(a, b)`: built once, when a trace or a
    /// link dynamic first names a direction by its end nodes (after every link is added).
    pub(super) fn between(&self) -> &HashMap<(usize, usize), Vec<LinkDirRef>> {
        self.between.get_or_init(|| {
            let mut between: HashMap<(usize, usize), Vec<LinkDirRef>> = HashMap::new();
            for (li, l) in self.links.iter().enumerate() {
                between.entry((l.a, l.b)).or_default().push(LinkDirRef {
                    link: li,
                    reverse: false,
                });
                between.entry((l.b, l.a)).or_default().push(LinkDirRef {
                    link: li,
                    reverse: true,
                });
            }
            between
        })
    }

    pub(super) fn node(&self, name: &str, path: &str) -> Result<usize, ScenarioError> {
        self.node_index.get(name).copied().ok_or_else(|| {
            err(
                path,
                format!(
                    "unknown node {name:?}; nodes are: {}",
                    some_names(self.nodes.iter().map(|n| n.name.as_str()))
                ),
            )
        })
    }

    fn add_node(&mut self, name: String, path: &str, why: &str) -> Result<(), ScenarioError> {
        check_name(&name).map_err(|m| err(path, m))?;
        if self.nodes.len() >= MAX_NODES {
            return Err(err(path, format!("too many nodes: at most {MAX_NODES}")));
        }
        if self.node_index.contains_key(&name) {
            return Err(err(path, format!("duplicate node name {name:?}{why}")));
        }
        self.node_index.insert(name.clone(), self.nodes.len());
        self.nodes.push(NodePlan { name });
        Ok(())
    }

    fn add_link(&mut self, link: LinkPlan, path: &str, why: &str) -> Result<(), ScenarioError> {
        // a default link name "<a>-<b>" may be as long as two node names
        check_name_len(&link.name, 2 * MAX_NAME_LEN + 1).map_err(|m| err(path, m))?;
        if self.link_index.contains_key(&link.name) {
            return Err(err(
                path,
                format!("duplicate link name {:?}{why}", link.name),
            ));
        }
        self.link_index.insert(link.name.clone(), self.links.len());
        self.links.push(link);
        Ok(())
    }
}

fn dir_plan(rate: u64, delay: u64, loss: f64, queue: QueueSize) -> LinkDirPlan {
    LinkDirPlan {
        rate_bps: rate,
        delay_ns: delay,
        loss,
        queue: QueuePlan::DropTail { limit: queue.0 },
    }
}

/// Connected components (links carry both directions, so a route src → dst exists iff one
/// dst → src does).
pub(super) struct Components {
    parent: Vec<usize>,
}

impl Components {
    pub(super) fn new(n: usize, links: &[LinkPlan]) -> Self {
        let mut c = Components {
            parent: (0..n).collect(),
        };
        for l in links {
            let (x, y) = (c.find(l.a), c.find(l.b));
            if x != y {
                c.parent[x] = y;
            }
        }
        c
    }
    pub(super) fn find(&mut self, mut x: usize) -> usize {
        let mut root = x;
        while self.parent[root] != root {
            root = self.parent[root];
        }
        while self.parent[x] != root {
            let next = self.parent[x];
            self.parent[x] = root;
            x = next;
        }
        root
    }
}

/// An entry's `start` is before the end of the run and its `stop`, if any, after its start
/// (and within the longest duration). `p` is the entry's path, `what` names it ("a flow").
pub(super) fn check_start_stop(
    p: &str,
    start_ns: u64,
    stop_ns: Option<u64>,
    duration_ns: u64,
    what: &str,
) -> Result<(), ScenarioError> {
    if start_ns >= duration_ns {
        return Err(err(
            format!("{p}.start"),
            format!(
                "{} is not before the end of the run (duration = {}): {what} must start before the run ends",
                show_ns(start_ns),
                show_ns(duration_ns)
            ),
        ));
    }
    if let Some(stop) = stop_ns {
        if stop <= start_ns {
            return Err(err(
                format!("{p}.stop"),
                format!(
                    "{} must be after start ({})",
                    show_ns(stop),
                    show_ns(start_ns)
                ),
            ));
        }
        check_duration(&format!("{p}.stop"), stop)?;
    }
    Ok(())
}

/// The two ends of a flow, a player or a generator: both known nodes, different, and joined by
/// a chain of links. `p` is the entry's path (`flow[2]`), `keys` its two fields (`src`/`dst`,
/// `client`/`server`) and `names` their values; `sender_first` says which end sends (the route
/// is named from it); `what` names the entry in the message ("a flow"), and `copy` names the
/// `count` copy (empty when there is none).
#[allow(clippy::too_many_arguments)]
pub(super) fn resolve_endpoints(
    net: &Net,
    comps: &mut Components,
    p: &str,
    keys: (&str, &str),
    names: (&str, &str),
    sender_first: bool,
    what: &str,
    copy: &str,
) -> Result<(usize, usize), ScenarioError> {
    let with_copy = |mut e: ScenarioError| {
        e.message.push_str(copy);
        e
    };
    let a = net
        .node(names.0, &format!("{p}.{}", keys.0))
        .map_err(with_copy)?;
    let b = net
        .node(names.1, &format!("{p}.{}", keys.1))
        .map_err(with_copy)?;
    if a == b {
        return Err(err(
            format!("{p}.{}", keys.1),
            format!(
                "{} and {} are both {:?}: {what} needs two different nodes{copy}",
                keys.0, keys.1, names.0
            ),
        ));
    }
    if comps.find(a) != comps.find(b) {
        let (from, to) = if sender_first {
            names
        } else {
            (names.1, names.0)
        };
        return Err(err(
            p.to_string(),
            format!("no route from {from:?} to {to:?}: no chain of links joins them{copy}"),
        ));
    }
    Ok((a, b))
}

impl Scenario {
    /// Validates the scenario and resolves it into a [`Plan`]: expands the dumbbell and
    /// `count` replication, merges `[defaults]`, resolves names and trace references, and
    /// checks that every flow has a route.
    pub fn to_plan(&self) -> Result<Plan, ScenarioError> {
        self.to_plan_in(self.base_dir.as_deref())
    }

    /// [`Scenario::to_plan`], with relative file paths (a player's MPD, a Mahimahi trace) taken
    /// from `base` (the scenario file's folder) rather than the working directory.
    pub fn to_plan_in(&self, base: Option<&std::path::Path>) -> Result<Plan, ScenarioError> {
        if base.is_some() && self.base_dir.as_deref() != base {
            let mut s = self.clone();
            s.base_dir = base.map(|p| p.to_path_buf());
            return s.to_plan_in(base);
        }
        // A preset expands into nodes, links, traffic and flows appended to the file's own.
        if let Some(preset) = &self.preset {
            return super::presets::plan_with_preset(self, preset);
        }
        // Run length.
        if self.duration.0 == 0 {
            return Err(err("duration", "must be greater than zero, e.g. \"60s\""));
        }
        check_duration("duration", self.duration.0)?;
        let duration_ns = self.duration.0;

        let mut net = Net::new();

        // Dumbbell.
        if let Some(d) = &self.dumbbell {
            self.expand_dumbbell(d, &mut net)?;
        }
        // Nodes and links made so far come from the dumbbell.
        let (db_nodes, db_links) = (net.nodes.len(), net.links.len());
        const BY_DUMBBELL: &str = " (the dumbbell already creates it)";

        // Explicit nodes.
        for (i, n) in self.nodes.iter().enumerate() {
            net.add_node(
                n.name.clone(),
                &format!("node[{i}].name"),
                match net.node_index.get(&n.name) {
                    Some(&k) if k < db_nodes => BY_DUMBBELL,
                    _ => "",
                },
            )?;
        }

        // Explicit links.
        for (i, l) in self.links.iter().enumerate() {
            let p = format!("link[{i}]");
            let a = net.node(&l.a, &format!("{p}.a"))?;
            let b = net.node(&l.b, &format!("{p}.b"))?;
            if a == b {
                return Err(err(
                    format!("{p}.b"),
                    format!(
                        "a link cannot join node {:?} to itself (a and b must differ)",
                        l.a
                    ),
                ));
            }
            check_rate(&format!("{p}.rate"), l.rate.0)?;
            check_duration(&format!("{p}.delay"), l.delay.0)?;
            check_loss(&format!("{p}.loss"), l.loss.0)?;
            let both = dir_plan(l.rate.0, l.delay.0, l.loss.0, l.queue);
            let mut dirs = [both.clone(), both];
            for (k, (key, over)) in [("ab", &l.ab), ("ba", &l.ba)].into_iter().enumerate() {
                let Some(o) = over else { continue };
                let dp = format!("{p}.{key}");
                if let Some(r) = o.rate {
                    check_rate(&format!("{dp}.rate"), r.0)?;
                    dirs[k].rate_bps = r.0;
                }
                if let Some(d) = o.delay {
                    check_duration(&format!("{dp}.delay"), d.0)?;
                    dirs[k].delay_ns = d.0;
                }
                if let Some(x) = o.loss {
                    check_loss(&format!("{dp}.loss"), x.0)?;
                    dirs[k].loss = x.0;
                }
                if let Some(q) = o.queue {
                    dirs[k].queue = QueuePlan::DropTail { limit: q.0 };
                }
            }
            let (name, default) = match &l.name {
                Some(n) => (n.clone(), false),
                None => (format!("{}-{}", l.a, l.b), true),
            };
            let why = match (net.link_index.get(&name), default) {
                (Some(&k), _) if k < db_links => BY_DUMBBELL,
                (_, true) => {
                    " (it is this link's default name \"<a>-<b>\"; give the link a distinct `name`)"
                }
                _ => "",
            };
            let [ab, ba] = dirs;
            net.add_link(LinkPlan { name, a, b, ab, ba }, &format!("{p}.name"), why)?;
        }

        // Flows.
        let flows = self.resolve_flows(&net, duration_ns)?;

        // Players.
        let flow_names: HashSet<&str> = flows.iter().map(|f| f.name.as_str()).collect();
        let players = self.resolve_players(&net, duration_ns, &flow_names, base)?;

        // Trace.
        let trace = self.resolve_trace(&net)?;
        check_goodput_rows(
            self.trace.goodput_window.0,
            duration_ns,
            flows.len() as u64 + players.len() as u64,
        )?;

        // Cross-traffic and dynamics (validate_traffic.rs).
        let traffic = self.resolve_traffic(&net, duration_ns)?;
        let dynamics = self.resolve_dynamics(&net, duration_ns)?;

        Ok(Plan {
            seed: self.seed,
            duration_ns,
            nodes: net.nodes,
            links: net.links,
            flows,
            players,
            trace,
            traffic,
            dynamics,
            preset: None,
        })
    }

    fn expand_dumbbell(&self, d: &DumbbellSpec, net: &mut Net) -> Result<(), ScenarioError> {
        let max_pairs = ((MAX_NODES - 2) / 2) as u64;
        if d.pairs == 0 {
            return Err(err("dumbbell.pairs", "must be at least 1"));
        }
        if d.pairs > max_pairs {
            return Err(err(
                "dumbbell.pairs",
                format!(
                    "{} pairs is too many: at most {max_pairs} ({MAX_NODES} nodes in all)",
                    d.pairs
                ),
            ));
        }
        check_rate("dumbbell.bottleneck_rate", d.bottleneck_rate.0)?;
        check_duration("dumbbell.bottleneck_delay", d.bottleneck_delay.0)?;
        check_loss("dumbbell.bottleneck_loss", d.bottleneck_loss.0)?;
        check_rate("dumbbell.access_rate", d.access_rate.0)?;
        check_duration("dumbbell.access_delay", d.access_delay.0)?;
        check_loss("dumbbell.access_loss", d.access_loss.0)?;
        let pairs = d.pairs as usize;
        net.nodes.reserve(2 * pairs + 2);
        net.node_index.reserve(2 * pairs + 2);
        net.links.reserve(2 * pairs + 1);
        net.link_index.reserve(2 * pairs + 1);
        for side in ["left", "right"] {
            for i in 0..pairs {
                net.add_node(format!("{side}{i}"), "dumbbell.pairs", "")?;
            }
        }
        net.add_node("r1".into(), "dumbbell", "")?;
        net.add_node("r2".into(), "dumbbell", "")?;
        let r1 = pairs * 2;
        let r2 = r1 + 1;
        let bn = dir_plan(
            d.bottleneck_rate.0,
            d.bottleneck_delay.0,
            d.bottleneck_loss.0,
            d.bottleneck_queue,
        );
        net.add_link(
            LinkPlan {
                name: "bottleneck".into(),
                a: r1,
                b: r2,
                ab: bn.clone(),
                ba: bn,
            },
            "dumbbell",
            "",
        )?;
        let acc = dir_plan(
            d.access_rate.0,
            d.access_delay.0,
            d.access_loss.0,
            d.access_queue,
        );
        for i in 0..pairs {
            let l = LinkPlan {
                name: format!("left{i}"),
                a: i,
                b: r1,
                ab: acc.clone(),
                ba: acc.clone(),
            };
            net.add_link(l, "dumbbell", "")?;
        }
        for i in 0..pairs {
            let l = LinkPlan {
                name: format!("right{i}"),
                a: r2,
                b: pairs + i,
                ab: acc.clone(),
                ba: acc.clone(),
            };
            net.add_link(l, "dumbbell", "")?;
        }
        Ok(())
    }

    /// Merges `defaults.tcp` under the flow's table and checks the result; errors point at the
    /// flow's key, or at `defaults.tcp.<key>` when only the defaults set it.
    pub(super) fn resolve_tcp(&self, own: &TcpTable, p: &str) -> Result<TcpConfig, ScenarioError> {
        self.resolve_tcp_over(own, &TcpTable::new(), p)
    }

    /// [`Self::resolve_tcp`] with a named transport's options between the defaults and the
    /// entry's own table (defaults < transport < own); a check failing on a key only the
    /// transport sets points at `<p>.transport`.
    pub(super) fn resolve_tcp_over(
        &self,
        own: &TcpTable,
        transport: &TcpTable,
        p: &str,
    ) -> Result<TcpConfig, ScenarioError> {
        let defaults = &self.defaults.tcp;
        // Type errors of each table on its own first, so the path names the table that has them.
        tcp_from_table(defaults, "defaults.tcp")?;
        tcp_from_table(own, &format!("{p}.tcp"))?;
        let mut merged = defaults.clone();
        for (k, v) in transport.iter().chain(own) {
            merged.insert(k.clone(), v.clone());
        }
        let cfg = tcp_from_table(&merged, &format!("{p}.tcp"))?;
        let at = |field: &str| -> String {
            if own.contains_key(field) {
                format!("{p}.tcp.{field}")
            } else if transport.contains_key(field) {
                format!("{p}.transport")
            } else if defaults.contains_key(field) {
                format!("defaults.tcp.{field}")
            } else {
                format!("{p}.tcp.{field}")
            }
        };
        if let Err((field, message)) = cfg.check() {
            let path = at(&field);
            let message = if path.starts_with("defaults") {
                format!("{message} (as applied to {p})")
            } else {
                message
            };
            return Err(err(path, message));
        }
        for (field, d) in [
            ("delayed_ack_timeout", cfg.delayed_ack_timeout.0),
            ("min_rto", cfg.min_rto.0),
            ("max_rto", cfg.max_rto.0),
            ("initial_rto", cfg.initial_rto.0),
        ] {
            check_duration(&at(field), d)?;
        }
        Ok(cfg)
    }

    fn resolve_trace(&self, net: &Net) -> Result<TracePlan, ScenarioError> {
        let t = &self.trace;
        check_duration("trace.cwnd_interval", t.cwnd_interval.0)?;
        check_duration("trace.queue_interval", t.queue_interval.0)?;
        if t.goodput_window.0 == 0 {
            return Err(err(
                "trace.goodput_window",
                "must be greater than zero, e.g. \"1s\"",
            ));
        }
        check_duration("trace.goodput_window", t.goodput_window.0)?;
        if !SNAPLEN_RANGE.contains(&t.snaplen) {
            return Err(err(
                "trace.snaplen",
                format!(
                    "{} is out of range: must be between {} and {} bytes",
                    t.snaplen,
                    SNAPLEN_RANGE.start(),
                    SNAPLEN_RANGE.end()
                ),
            ));
        }
        let snaplen = t.snaplen as u32;

        let resolve = |list: &[String], key: &str| -> Result<Vec<LinkDirRef>, ScenarioError> {
            let mut out = Vec::new();
            let mut seen = HashSet::new();
            for (j, r) in list.iter().enumerate() {
                let path = format!("trace.{key}[{j}]");
                for d in resolve_dir_ref(r, &path, net)? {
                    if seen.insert(d) {
                        out.push(d);
                    }
                }
            }
            Ok(out)
        };
        let queues = resolve(&t.queues, "queues")?;
        let mut pcaps = Vec::new();
        let mut files = HashSet::new();
        for at in resolve(&t.pcap, "pcap")? {
            let l = &net.links[at.link];
            let (from, to) = if at.reverse { (l.b, l.a) } else { (l.a, l.b) };
            let (from, to) = (&net.nodes[from].name, &net.nodes[to].name);
            let mut file = format!("{from}-{to}.pcap");
            if files.contains(&file) || net.between().get(&(l.a, l.b)).is_some_and(|v| v.len() > 1)
            {
                // parallel links: add the link's name (or its index when that is too long)
                let tag = if l.name.len() <= 100 {
                    l.name.clone()
                } else {
                    format!("link{}", at.link)
                };
                file = format!("{from}-{to}.{tag}.pcap");
                let mut n = 1;
                while files.contains(&file) {
                    file = format!("{from}-{to}.{tag}.{n}.pcap");
                    n += 1;
                }
            }
            files.insert(file.clone());
            pcaps.push(PcapPlan { at, file, snaplen });
        }
        Ok(TracePlan {
            cwnd: t.cwnd,
            cwnd_interval_ns: t.cwnd_interval.0,
            queues,
            queue_interval_ns: t.queue_interval.0,
            goodput_window_ns: t.goodput_window.0,
            pcaps,
        })
    }
}

/// The goodput trace has a row per connection per window: bound it before the run allocates it.
/// `conns`: the flows plus the players (each opens at least one connection).
pub(super) fn check_goodput_rows(
    window_ns: u64,
    duration_ns: u64,
    conns: u64,
) -> Result<(), ScenarioError> {
    let windows = (duration_ns / window_ns.max(1)) as u128;
    let per = conns.max(1) as u128;
    if windows * per <= MAX_GOODPUT_ROWS as u128 {
        return Ok(());
    }
    let min_window = (duration_ns as u128 * per).div_ceil(MAX_GOODPUT_ROWS as u128) as u64;
    Err(err(
        "trace.goodput_window",
        format!(
            "{} cuts the {} run into {windows} windows × {per} connection(s) = {} rows of the goodput trace; at most {MAX_GOODPUT_ROWS} are kept: use a window of at least {}",
            show_ns(window_ns),
            show_ns(duration_ns),
            windows * per,
            show_ns(min_window)
        ),
    ))
}

const DIR_FORMS: &str = "\"A->B\" (node names), \"LINK:ab\" or \"LINK:ba\" (link name and direction), or \"*\" (every link direction)";

/// Resolves one trace reference ("A->B", "LINK:ab", "LINK:ba" or "*").
pub(super) fn resolve_dir_ref(
    r: &str,
    path: &str,
    net: &Net,
) -> Result<Vec<LinkDirRef>, ScenarioError> {
    let s = r.trim();
    if s == "*" {
        return Ok((0..net.links.len())
            .flat_map(|link| {
                [
                    LinkDirRef {
                        link,
                        reverse: false,
                    },
                    LinkDirRef {
                        link,
                        reverse: true,
                    },
                ]
            })
            .collect());
    }
    if let Some((x, y)) = s.split_once("->") {
        let (x, y) = (x.trim(), y.trim());
        let a = net.node(x, path)?;
        let b = net.node(y, path)?;
        return match net
            .between()
            .get(&(a, b))
            .map(|v| v.as_slice())
            .unwrap_or(&[])
        {
            [] => Err(err(
                path,
                format!("no link joins {x:?} and {y:?}; expected {DIR_FORMS}"),
            )),
            [one] => Ok(vec![*one]),
            many => {
                let names: Vec<String> = many
                    .iter()
                    .map(|d| format!("{:?}", net.links[d.link].name))
                    .collect();
                let first = &net.links[many[0].link];
                let dir = if many[0].reverse { "ba" } else { "ab" };
                Err(err(
                    path,
                    format!(
                        "{r:?} is ambiguous: {} links join {x:?} and {y:?} ({}); name one as \"LINK:ab\" or \"LINK:ba\", e.g. \"{}:{dir}\"",
                        many.len(),
                        names.join(", "),
                        first.name
                    ),
                ))
            }
        };
    }
    if let Some((name, dir)) = s.rsplit_once(':') {
        let name = name.trim();
        let link = *net.link_index.get(name).ok_or_else(|| {
            err(
                path,
                format!(
                    "unknown link {name:?}; links are: {}",
                    some_names(net.links.iter().map(|l| l.name.as_str()))
                ),
            )
        })?;
        let reverse = match dir.trim() {
            "ab" => false,
            "ba" => true,
            other => {
                return Err(err(
                    path,
                    format!(
                    "unknown direction {other:?} after the link name: expected \"ab\" or \"ba\""
                ),
                ))
            }
        };
        return Ok(vec![LinkDirRef { link, reverse }]);
    }
    Err(err(
        path,
        format!("invalid link direction {r:?}: expected {DIR_FORMS}"),
    ))
}
