//! A JSON description of a resolved [`Plan`]: what `haslab validate` and `haslab describe`
//! print and what `Simulation.plan` returns in Python (built when it is read, part by part:
//! [`Describer`]).
//!
//! Besides the plan's own numbers (nodes; each link direction's rate, delay, loss and queue;
//! flows, traffic, loss events, capacity schedules, the preset's player slots, traces) it
//! derives, for every flow, generator and player slot, the **path**: the link directions the
//! data crosses (routes as the simulator computes them: fewest hops, ties to the lower link
//! index), the one-way and round-trip propagation delays, the bottleneck (the slowest
//! direction on the data path, the first one on a tie), the bandwidth-delay product
//! `bottleneck rate × RTT / 8` and the bottleneck queue relative to it. A queue limited in
//! packets is counted as that many 1500-byte packets when compared with bytes.

use super::plan::*;
use super::plan_traffic::*;
use crate::net::routing::{Edge, Routes, NO_ROUTE};
use crate::tcp::cc::CcConfig;
use crate::tcp::config::TcpConfig;
use serde::Serialize;
use serde_json::{json, Map, Value};

/// Bytes per packet when a packet-limited queue is compared with a byte count.
pub const QUEUE_PACKET_BYTES: u64 = 1500;

/// `"from->to"` for one link direction.
pub fn dir_name(plan: &Plan, d: LinkDirRef) -> String {
    let link = &plan.links[d.link];
    let (from, to) = if d.reverse {
        (link.b, link.a)
    } else {
        (link.a, link.b)
    };
    format!("{}->{}", plan.nodes[from].name, plan.nodes[to].name)
}

fn dir_plan(plan: &Plan, d: LinkDirRef) -> &LinkDirPlan {
    let l = &plan.links[d.link];
    if d.reverse {
        &l.ba
    } else {
        &l.ab
    }
}

/// A queue limit in bytes (packets × 1500).
pub fn queue_bytes(q: &QueuePlan) -> u64 {
    match q {
        QueuePlan::DropTail {
            limit: QueueLimit::Packets(p),
        } => *p as u64 * QUEUE_PACKET_BYTES,
        QueuePlan::DropTail {
            limit: QueueLimit::Bytes(b),
        } => *b,
    }
}

fn queue_json(q: &QueuePlan) -> Value {
    match q {
        QueuePlan::DropTail {
            limit: QueueLimit::Packets(p),
        } => json!({"kind": "droptail", "limit_packets": p}),
        QueuePlan::DropTail {
            limit: QueueLimit::Bytes(b),
        } => json!({"kind": "droptail", "limit_bytes": b}),
    }
}

/// The capacity schedule of each link direction (index 2·link + reverse), if any.
fn capacities(plan: &Plan) -> Vec<Option<&CapacityPlan>> {
    let mut v = vec![None; plan.links.len() * 2];
    for c in &plan.dynamics.capacity {
        v[2 * c.at.link + c.at.reverse as usize] = Some(c);
    }
    v
}

/// The rate a direction starts with (a Mahimahi trace: its mean rate).
fn effective_rate(plan: &Plan, caps: &[Option<&CapacityPlan>], d: LinkDirRef) -> u64 {
    match caps[2 * d.link + d.reverse as usize].map(|c| &c.service) {
        Some(ServicePlan::Mahimahi { trace, .. }) => trace.mean_rate_bps(),
        Some(ServicePlan::Steps(steps)) if steps.first().is_some_and(|s| s.0 == 0) => steps[0].1,
        _ => dir_plan(plan, d).rate_bps,
    }
}

struct Paths {
    routes: Routes,
}

impl Paths {
    fn new(plan: &Plan) -> Self {
        let mut edges = Vec::with_capacity(plan.links.len() * 2);
        for (i, l) in plan.links.iter().enumerate() {
            edges.push(Edge {
                from: l.a as u32,
                to: l.b as u32,
                link_dir: 2 * i as u32,
            });
            edges.push(Edge {
                from: l.b as u32,
                to: l.a as u32,
                link_dir: 2 * i as u32 + 1,
            });
        }
        let mut dests: Vec<u32> = Vec::new();
        for f in &plan.flows {
            dests.extend([f.src as u32, f.dst as u32]);
        }
        for t in &plan.traffic {
            dests.extend([t.src as u32, t.dst as u32]);
        }
        if let Some(p) = &plan.preset {
            for s in &p.player_slots {
                dests.extend([s.client as u32, s.server as u32]);
            }
        }
        Paths {
            routes: Routes::compute(plan.nodes.len(), &edges, &dests),
        }
    }
}

/// The path of data from `src` to `dst` (ACKs back): hops, delays, bottleneck, BDP.
fn path_json(
    plan: &Plan,
    paths: &Paths,
    caps: &[Option<&CapacityPlan>],
    src: usize,
    dst: usize,
) -> Value {
    let node_after = |d: LinkDirRef| {
        let l = &plan.links[d.link];
        if d.reverse {
            l.a
        } else {
            l.b
        }
    };
    let follow = |a: usize, b: usize| -> Option<Vec<LinkDirRef>> {
        let mut v = Vec::new();
        let mut node = a;
        while node != b {
            let ld = paths.routes.next_hop(node as u32, b as u32);
            if ld == NO_ROUTE || v.len() > plan.links.len() * 2 {
                return None;
            }
            let d = LinkDirRef {
                link: ld as usize / 2,
                reverse: ld % 2 == 1,
            };
            v.push(d);
            node = node_after(d);
        }
        Some(v)
    };
    let (Some(fwd), Some(back)) = (follow(src, dst), follow(dst, src)) else {
        return Value::Null;
    };
    let one_way: u64 = fwd.iter().map(|&d| dir_plan(plan, d).delay_ns).sum();
    let back_delay: u64 = back.iter().map(|&d| dir_plan(plan, d).delay_ns).sum();
    let rtt = one_way + back_delay;
    let bottleneck = fwd
        .iter()
        .copied()
        .min_by_key(|&d| effective_rate(plan, caps, d))
        .expect("a path between two different nodes has a hop");
    let rate = effective_rate(plan, caps, bottleneck);
    let bdp = (rate as u128 * rtt as u128 / 8 / 1_000_000_000) as u64;
    let q = &dir_plan(plan, bottleneck).queue;
    let qb = queue_bytes(q);
    json!({
        "hops": fwd.iter().map(|&d| dir_name(plan, d)).collect::<Vec<_>>(),
        "one_way_delay_ns": one_way,
        "rtt_ns": rtt,
        "bottleneck": dir_name(plan, bottleneck),
        "bottleneck_rate_bps": rate,
        "bdp_bytes": bdp,
        "bottleneck_queue": queue_json(q),
        "bottleneck_queue_bytes": qb,
        "queue_over_bdp": if bdp > 0 { Value::from(qb as f64 / bdp as f64) } else { Value::Null },
    })
}

fn app_json(app: &AppPlan) -> Value {
    match app {
        AppPlan::Bulk {
            start_ns,
            stop_ns,
            bytes,
        } => json!({"kind": "bulk", "start_ns": start_ns, "stop_ns": stop_ns, "bytes": bytes}),
        AppPlan::Chunks {
            start_ns,
            stop_ns,
            chunk_bytes,
            interval_ns,
        } => json!({"kind": "chunks", "start_ns": start_ns, "stop_ns": stop_ns,
                    "chunk_bytes": chunk_bytes, "interval_ns": interval_ns}),
    }
}

fn generator_json(g: &GeneratorPlan) -> Value {
    match g {
        GeneratorPlan::Ppbp {
            mean_rate_bps,
            hurst,
            burst_rate_bps,
            burst_arrivals_per_s,
            mean_burst_ns,
        } => json!({"mean_rate_bps": mean_rate_bps, "hurst": hurst,
                    "burst_rate_bps": burst_rate_bps, "burst_arrivals_per_s": burst_arrivals_per_s,
                    "mean_burst_ns": mean_burst_ns, "pareto_shape": 3.0 - 2.0 * hurst}),
        GeneratorPlan::OnOff {
            rate_bps,
            mean_on_ns,
            mean_off_ns,
        } => json!({"rate_bps": rate_bps, "mean_on_ns": mean_on_ns, "mean_off_ns": mean_off_ns}),
        GeneratorPlan::Cbr { rate_bps } => json!({"rate_bps": rate_bps}),
        GeneratorPlan::Web {
            mean_rate_bps,
            mean_size_bytes,
            size_shape,
            max_size_bytes,
            cc,
            ..
        } => json!({"mean_rate_bps": mean_rate_bps, "mean_size_bytes": mean_size_bytes,
                    "size_shape": size_shape, "max_size_bytes": max_size_bytes, "cc": cc.name()}),
    }
}

/// Whether a flow's options (its `tcp` or `cc_config`) equal the previous flow's: the copies a
/// `count` makes hold equal options, whose JSON is then made once (serialising every copy's would
/// be most of the time and allocations of describing 100,000 flows). Equal options give equal
/// JSON, so the description is the same either way.
struct Previous<'a, T> {
    last: Option<&'a T>,
}

impl<'a, T: PartialEq> Previous<'a, T> {
    fn new() -> Self {
        Previous { last: None }
    }

    fn same(&mut self, x: &'a T) -> bool {
        let same = self.last.is_some_and(|p| p == x);
        self.last = Some(x);
        same
    }
}

/// The two keys of a flow's description that hold its options.
pub const FLOW_OPTION_KEYS: [&str; 2] = ["tcp", "cc_config"];

/// The description of a plan (see the module documentation).
pub fn describe(plan: &Plan) -> Value {
    let mut d = Describer::new(plan);
    let mut v = d.skeleton();
    v["links"] = Value::Array(d.link_dirs().map(|at| d.link_dir(at)).collect());
    v["flows"] = Value::Array(plan.flows.iter().map(|f| d.flow(f)).collect());
    v
}

/// [`describe`] part by part, for a consumer that converts each link direction's and each flow's
/// description and drops it before the next (the Python binding: a plan of 100,000 flows has
/// 400,000 link directions, and its description as one JSON value takes gigabytes).
/// `skeleton()` with `link_dir(d)` for each of `link_dirs()` at `"links"` and `flow(f)` for each
/// of the plan's flows in order at `"flows"` is [`describe`]'s value.
pub struct Describer<'a> {
    plan: &'a Plan,
    paths: Paths,
    caps: Vec<Option<&'a CapacityPlan>>,
    tcp: Previous<'a, TcpConfig>,
    cc: Previous<'a, CcConfig>,
    /// The JSON of the last flow's options ([`FLOW_OPTION_KEYS`]), for [`Describer::flow`].
    options: [Value; 2],
}

impl<'a> Describer<'a> {
    pub fn new(plan: &'a Plan) -> Self {
        Describer {
            plan,
            paths: Paths::new(plan),
            caps: capacities(plan),
            tcp: Previous::new(),
            cc: Previous::new(),
            options: [Value::Null, Value::Null],
        }
    }

    /// The description of one flow of the plan (flows may come in any order; consecutive flows
    /// with equal options share their serialisation).
    pub fn flow(&mut self, f: &'a FlowPlan) -> Value {
        let (mut v, same) = self.flow_sharing(f);
        for (i, key) in FLOW_OPTION_KEYS.into_iter().enumerate() {
            if same[i] {
                v[key] = self.options[i].clone();
            } else {
                self.options[i] = v[key].clone();
            }
        }
        v
    }

    /// [`Describer::flow`], but with null at each of [`FLOW_OPTION_KEYS`] whose options equal
    /// the previous flow's (`true` at its index): the caller reuses what it made of them.
    pub fn flow_sharing(&mut self, f: &'a FlowPlan) -> (Value, [bool; 2]) {
        let plan = self.plan;
        let same = [self.tcp.same(&f.tcp), self.cc.same(&f.cc)];
        fn options<T: Serialize>(same: bool, x: &T) -> Value {
            if same {
                Value::Null
            } else {
                serde_json::to_value(x).unwrap_or(Value::Null)
            }
        }
        let v = json!({
            "name": f.name,
            "src": plan.nodes[f.src].name,
            "dst": plan.nodes[f.dst].name,
            "cc": f.cc.name(),
            "transport": f.transport,
            "mss": f.tcp.mss,
            "app": app_json(&f.app),
            "path": path_json(plan, &self.paths, &self.caps, f.src, f.dst),
            // the resolved options, for tools that reproduce the flow elsewhere (live mode)
            "tcp": options(same[0], &f.tcp),
            "cc_config": options(same[1], &f.cc),
        });
        (v, same)
    }

    /// The description of one link direction (link directions in the plan's order: each link's
    /// `ab` then its `ba`).
    pub fn link_dir(&self, at: LinkDirRef) -> Value {
        let plan = self.plan;
        let l = &plan.links[at.link];
        let d = dir_plan(plan, at);
        let qb = queue_bytes(&d.queue);
        let rate = effective_rate(plan, &self.caps, at);
        let capacity = match self.caps[2 * at.link + at.reverse as usize].map(|c| &c.service) {
            None => Value::Null,
            Some(ServicePlan::Steps(s)) => json!({
                "kind": "steps",
                "steps": s.iter().map(|&(t, r)| json!({"at_ns": t, "rate_bps": r})).collect::<Vec<_>>(),
            }),
            Some(ServicePlan::Mahimahi { file, trace }) => json!({
                "kind": "mahimahi", "file": file, "mean_rate_bps": trace.mean_rate_bps(),
                "period_ms": trace.period_ms, "lines": trace.lines, "once": trace.once,
            }),
        };
        json!({
            "name": dir_name(plan, at),
            "link": l.name,
            "rate_bps": d.rate_bps,
            "effective_rate_bps": rate,
            "delay_ns": d.delay_ns,
            "loss": d.loss,
            "queue": queue_json(&d.queue),
            "queue_bytes": qb,
            "queue_delay_ns": (qb as u128 * 8 * 1_000_000_000 / rate.max(1) as u128) as u64,
            "capacity": capacity,
        })
    }

    /// Every link direction of the plan, in order.
    pub fn link_dirs(&self) -> impl Iterator<Item = LinkDirRef> + 'static {
        (0..self.plan.links.len())
            .flat_map(|link| [false, true].map(move |reverse| LinkDirRef { link, reverse }))
    }

    /// The description with empty lists at `"links"` and `"flows"`.
    pub fn skeleton(&self) -> Value {
        let plan = self.plan;
        let (paths, caps) = (&self.paths, &self.caps[..]);
        let traffic: Vec<Value> = plan
            .traffic
            .iter()
            .map(|t| {
                json!({
                    "name": t.name,
                    "kind": t.kind.kind(),
                    "src": plan.nodes[t.src].name,
                    "dst": plan.nodes[t.dst].name,
                    "start_ns": t.start_ns,
                    "stop_ns": t.stop_ns,
                    "mean_rate_bps": t.kind.mean_rate_bps(),
                    "packet_bytes": t.packet_bytes,
                    "params": generator_json(&t.kind),
                    "path": path_json(plan, paths, caps, t.src, t.dst),
                })
            })
            .collect();
        let loss_events: Vec<Value> = plan
            .dynamics
            .loss_events
            .iter()
            .map(|e| {
                json!({"at": dir_name(plan, e.at), "loss": e.loss,
                       "start_ns": e.start_ns, "stop_ns": e.stop_ns})
            })
            .collect();
        let preset = match &plan.preset {
            None => Value::Null,
            Some(p) => {
                let mut params = Map::new();
                for (k, v) in &p.params {
                    params.insert(k.clone(), Value::from(v.clone()));
                }
                json!({
                    "name": p.name,
                    "params": params,
                    "player_slots": p.player_slots.iter().map(|s| json!({
                        "name": s.name,
                        "client": plan.nodes[s.client].name,
                        "server": plan.nodes[s.server].name,
                        "start_ns": s.start_ns,
                        "stop_ns": s.stop_ns,
                        "path": path_json(plan, paths, caps, s.server, s.client),
                    })).collect::<Vec<_>>(),
                })
            }
        };
        let players: Vec<Value> = plan
            .players
            .iter()
            .map(|p| {
                let connection = match p.connection {
                    ConnectionPolicy::Persistent => json!({"kind": "persistent"}),
                    ConnectionPolicy::PerRequest => json!({"kind": "per-request"}),
                    ConnectionPolicy::Parallel(n) => json!({"kind": "parallel", "connections": n}),
                    ConnectionPolicy::Rotate(n) => json!({"kind": "rotate", "connections": n}),
                    ConnectionPolicy::Renew(k) => json!({"kind": "renew", "renew_every": k}),
                };
                json!({
                    "name": p.name,
                    "client": plan.nodes[p.client].name,
                    "server": plan.nodes[p.server].name,
                    "abr": p.abr.name(),
                    "video": p.video.name,
                    "bitrates_bps": p.video.bitrates_bps,
                    "segments": p.video.segments(),
                    "segment_ns": p.video.segment_ns(),
                    "buffer_ns": p.buffer_ns,
                    "startup_ns": p.startup_ns,
                    "refill_ns": p.refill_low_ns,
                    "connection": connection,
                    "start_ns": p.start_ns,
                    "stop_ns": p.stop_ns,
                    "cc": p.cc.name(),
                    "transport": p.transport,
                    "tcp": serde_json::to_value(&p.tcp).unwrap_or(Value::Null),
                    "cc_config": serde_json::to_value(&p.cc).unwrap_or(Value::Null),
                })
            })
            .collect();
        let t = &plan.trace;
        json!({
            "seed": plan.seed,
            "duration_ns": plan.duration_ns,
            "nodes": plan.nodes.iter().map(|n| n.name.clone()).collect::<Vec<_>>(),
            "links": [],
            "flows": [],
            "players": players,
            "warnings": plan.input_warnings(),
            "traffic": traffic,
            "loss_events": loss_events,
            "preset": preset,
            "trace": {
                "cwnd": t.cwnd,
                "cwnd_interval_ns": t.cwnd_interval_ns,
                "queues": t.queues.iter().map(|&d| dir_name(plan, d)).collect::<Vec<_>>(),
                "queue_interval_ns": t.queue_interval_ns,
                "goodput_window_ns": t.goodput_window_ns,
                "pcaps": t.pcaps.iter().map(|p| json!({
                    "at": dir_name(plan, p.at), "file": p.file, "snaplen": p.snaplen,
                })).collect::<Vec<_>>(),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Serialising a run of equal options once gives every flow the JSON of its own options:
    /// copies made by `count`, flows of one named transport, alternating configurations and a
    /// flow whose options differ from its neighbours' by one field.
    #[test]
    fn shared_options_describe_each_flow_as_its_own() {
        let plan = crate::scenario::plan_from_toml(
            r#"
duration = "1s"
[dumbbell]
pairs = 3
bottleneck_rate = "10Mbps"
bottleneck_delay = "10ms"
[defaults]
tcp = { sack = true }
[[flow]]
name = "r{i}"
count = 3
src = "left{i}"
dst = "right{i}"
app = "bulk"
[[flow]]
name = "c{i}"
count = 2
src = "left{i}"
dst = "right{i}"
app = "bulk"
cc = { algorithm = "cubic", beta = 0.8 }
tcp = { min_rto = "300ms" }
[[flow]]
name = "n0"
src = "left0"
dst = "right0"
app = "bulk"
tcp = { min_rto = "300ms" }
[[flow]]
name = "t{i}"
count = 2
src = "left{i}"
dst = "right{i}"
app = "bulk"
transport = "cubic-standard"
[[flow]]
name = "x0"
src = "left1"
dst = "right1"
app = "bulk"
"#,
        )
        .expect("valid");
        let d = describe(&plan);
        let flows = d["flows"].as_array().expect("flows");
        assert_eq!(flows.len(), plan.flows.len());
        for (f, j) in plan.flows.iter().zip(flows) {
            assert_eq!(
                j["tcp"],
                serde_json::to_value(&f.tcp).unwrap(),
                "{}",
                f.name
            );
            assert_eq!(
                j["cc_config"],
                serde_json::to_value(&f.cc).unwrap(),
                "{}",
                f.name
            );
        }
        assert_ne!(flows[3]["cc_config"], flows[0]["cc_config"]);
        assert_ne!(flows[5]["tcp"], flows[6]["tcp"]);
        // the options are made once per run of equal ones: r0 c0 n0 t0 x0 anew; c0→n0 keeps the
        // tcp options (min_rto) but not the congestion control
        let mut d = Describer::new(&plan);
        let same: Vec<[bool; 2]> = plan.flows.iter().map(|f| d.flow_sharing(f).1).collect();
        let t = true;
        let f = false;
        assert_eq!(
            same,
            [
                [f, f],
                [t, t],
                [t, t],
                [f, f],
                [t, t],
                [t, f],
                [f, f],
                [t, t],
                [f, f]
            ]
        );
    }
}
