//! The world's cross-traffic and network dynamics: datagram generators and their sinks, web
//! transfers (one TCP connection each, opened while the run goes), loss events, capacity steps
//! and Mahimahi-served link directions. Kept apart from `world.rs`, which calls in here from a
//! few hooks.
//!
//! Datagrams carry `Transport::Udp`; their `conn` field is the generator's index (the TCP path
//! never sees them). A web transfer is a connection appended after the scenario's flows; it is
//! counted in its generator's summary, not in `flows`.

use super::{Ev, World};
use crate::app::bulk::BulkSender;
use crate::metrics::delay::DelayStats;
use crate::metrics::traffic::{TrafficSeries, TrafficSummary};
use crate::net::closed_form::ClosedFormHop;
use crate::net::link::LinkDir;
use crate::net::packet::{Packet, Transport};
use crate::net::routing::{Routes, NO_ROUTE};
use crate::scenario::{GeneratorPlan, Plan, ServicePlan};
use crate::sim::events::EventQueue;
use crate::sim::rng::Stream;
use crate::tcp::cc::CcConfig;
use crate::tcp::config::TcpConfig;
use crate::tcp::conn::Connection;
use crate::tcp::endpoint::Endpoint;
use crate::traffic::web::WebArrivals;
use crate::traffic::{Generator, UDP_IP_HEADER_BYTES};
use std::collections::VecDeque;

/// Destination port of every datagram (the discard service, RFC 863).
const SINK_PORT: u16 = 9;
/// Port of the accepting side of web transfers (HTTP).
const WEB_PORT: u16 = 80;

/// A change to a link direction at a given time.
#[derive(Clone, Copy, Debug)]
pub(super) enum DynAction {
    SetRate { ld: u32, rate_bps: u64 },
    SetLoss { ld: u32, loss: f64 },
}

struct WebSource {
    arrivals: WebArrivals,
    tcp: TcpConfig,
    cc: CcConfig,
    isn: Stream,
    /// (connection, start time) of each transfer
    transfers: Vec<(u32, u64)>,
}

struct Source {
    name: String,
    kind: &'static str,
    src: u32,
    dst: u32,
    start_ns: u64,
    stop_ns: Option<u64>,
    target_mean_bps: f64,
    packet_bytes: u32,
    src_port: u16,
    gen: Option<Box<dyn Generator>>,
    web: Option<WebSource>,
    sent_packets: u64,
    sent_bytes: u64,
    received_packets: u64,
    received_bytes: u64,
    /// `private_links = "closed-form"`: the link directions of the path crossed in closed form
    closed: Option<Box<ClosedPath>>,
}

/// A datagram generator's private links crossed in closed form (`net/closed_form.rs`).
#[derive(Default)]
struct ClosedPath {
    /// the leading private link directions (from the source)
    prefix: Vec<(u32, ClosedFormHop)>,
    /// where the datagrams enter the event form after the prefix (None: the whole path is
    /// private, the sink counts them at their computed arrival)
    inject_node: Option<u32>,
    /// datagrams past the prefix, with the time they reach `inject_node`
    inject: VecDeque<(u64, Packet)>,
    /// the trailing private link directions, from this node to the sink
    suffix_start: Option<u32>,
    suffix: Vec<(u32, ClosedFormHop)>,
    /// datagrams on their way to the sink in closed form: (arrival time, bytes)
    arrivals: VecDeque<(u64, u32)>,
}

/// Everything the world keeps for traffic and dynamics.
pub(super) struct TrafficState {
    sources: Vec<Source>,
    actions: Vec<(u64, DynAction)>,
    series: TrafficSeries,
}

impl TrafficState {
    /// Builds the generators and the schedule of link changes, and puts Mahimahi service on
    /// the directions that have a trace.
    pub(super) fn new(plan: &Plan, links: &mut [LinkDir]) -> TrafficState {
        let ld = |at: crate::scenario::LinkDirRef| (2 * at.link + at.reverse as usize) as u32;
        let mut actions: Vec<(u64, DynAction)> = Vec::new();
        let mut restores: Vec<(u64, DynAction)> = Vec::new();
        for c in &plan.dynamics.capacity {
            match &c.service {
                ServicePlan::Mahimahi { trace, .. } => {
                    links[ld(c.at) as usize].set_trace(trace.clone())
                }
                ServicePlan::Steps(steps) => {
                    for &(t, rate_bps) in steps {
                        actions.push((
                            t,
                            DynAction::SetRate {
                                ld: ld(c.at),
                                rate_bps,
                            },
                        ));
                    }
                }
            }
        }
        for e in &plan.dynamics.loss_events {
            let l = &plan.links[e.at.link];
            let base = if e.at.reverse { l.ba.loss } else { l.ab.loss };
            let ld = ld(e.at);
            restores.push((e.stop_ns, DynAction::SetLoss { ld, loss: base }));
            actions.push((e.start_ns, DynAction::SetLoss { ld, loss: e.loss }));
        }
        // at equal times, an event's end (restoring the base loss) comes before the start of
        // the next one; otherwise plan order
        restores.append(&mut actions);
        let mut actions = restores;
        actions.sort_by_key(|&(t, _)| t);

        let sources = plan
            .traffic
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let web = match &t.kind {
                    GeneratorPlan::Web {
                        mean_rate_bps,
                        mean_size_bytes,
                        size_shape,
                        max_size_bytes,
                        cc,
                        tcp,
                    } => Some(WebSource {
                        arrivals: WebArrivals::new(
                            *mean_rate_bps,
                            *mean_size_bytes,
                            *size_shape,
                            *max_size_bytes,
                            crate::traffic::stream(plan.seed, &t.name),
                        ),
                        tcp: (**tcp).clone(),
                        cc: cc.clone(),
                        isn: Stream::new(plan.seed, &format!("traffic:{}:isn", t.name)),
                        transfers: Vec::new(),
                    }),
                    _ => None,
                };
                Source {
                    name: t.name.clone(),
                    kind: t.kind.kind(),
                    src: t.src as u32,
                    dst: t.dst as u32,
                    start_ns: t.start_ns,
                    stop_ns: t.stop_ns,
                    target_mean_bps: t.kind.mean_rate_bps(),
                    packet_bytes: t.packet_bytes,
                    src_port: 40_000 + (i % 20_000) as u16,
                    gen: crate::traffic::build(t, plan.seed),
                    web,
                    sent_packets: 0,
                    sent_bytes: 0,
                    received_packets: 0,
                    received_bytes: 0,
                    closed: t.closed_form_private_links.then(Box::default),
                }
            })
            .collect::<Vec<_>>();
        TrafficState {
            series: TrafficSeries::new(sources.len()),
            sources,
            actions,
        }
    }

    /// Finds the private link directions of the generators that cross them in closed form: on
    /// the generator's path, used by no flow, player, web transfer or other generator, and
    /// without capacity dynamics, Mahimahi service, loss events, pcap or queue trace.
    pub(super) fn plan_private_links(&mut self, plan: &Plan, routes: &Routes, links: &[LinkDir]) {
        if self.sources.iter().all(|s| s.closed.is_none()) {
            return;
        }
        const UNUSED: u32 = u32::MAX;
        const SHARED: u32 = u32::MAX - 1;
        let path = |src: u32, dst: u32| {
            let mut out = Vec::new();
            let mut at = src;
            while at != dst && out.len() <= plan.nodes.len() {
                let ld = routes.next_hop(at, dst);
                if ld == NO_ROUTE {
                    break;
                }
                out.push(ld);
                at = links[ld as usize].to;
            }
            out
        };
        let mut owner = vec![UNUSED; links.len()];
        let mut mark = |lds: &[u32], who: u32| {
            for &ld in lds {
                let o = &mut owner[ld as usize];
                *o = if *o == UNUSED || *o == who {
                    who
                } else {
                    SHARED
                };
            }
        };
        for f in &plan.flows {
            mark(&path(f.src as u32, f.dst as u32), SHARED);
            mark(&path(f.dst as u32, f.src as u32), SHARED);
        }
        for p in &plan.players {
            mark(&path(p.client as u32, p.server as u32), SHARED);
            mark(&path(p.server as u32, p.client as u32), SHARED);
        }
        for (g, s) in self.sources.iter().enumerate() {
            mark(&path(s.src, s.dst), g as u32);
            if s.web.is_some() {
                mark(&path(s.dst, s.src), SHARED);
                mark(&path(s.src, s.dst), SHARED);
            }
        }
        let ld = |at: crate::scenario::LinkDirRef| 2 * at.link + at.reverse as usize;
        for c in &plan.dynamics.capacity {
            owner[ld(c.at)] = SHARED;
        }
        for e in &plan.dynamics.loss_events {
            owner[ld(e.at)] = SHARED;
        }
        for r in &plan.trace.queues {
            owner[2 * r.link + r.reverse as usize] = SHARED;
        }
        for p in &plan.trace.pcaps {
            owner[ld(p.at)] = SHARED;
        }
        for (g, s) in self.sources.iter_mut().enumerate() {
            let Some(c) = s.closed.as_mut() else {
                continue;
            };
            let lds = path(s.src, s.dst);
            let private = |ld: &u32| owner[*ld as usize] == g as u32;
            let n_prefix = lds.iter().take_while(|ld| private(ld)).count();
            c.prefix = lds[..n_prefix]
                .iter()
                .map(|&ld| (ld, ClosedFormHop::default()))
                .collect();
            if n_prefix == lds.len() {
                continue; // the whole path is private
            }
            c.inject_node = Some(if n_prefix == 0 {
                s.src
            } else {
                links[lds[n_prefix - 1] as usize].to
            });
            let n_suffix = lds[n_prefix..]
                .iter()
                .rev()
                .take_while(|ld| private(ld))
                .count();
            if n_suffix > 0 {
                let first = lds.len() - n_suffix;
                c.suffix_start = Some(links[lds[first] as usize].from);
                c.suffix = lds[first..]
                    .iter()
                    .map(|&ld| (ld, ClosedFormHop::default()))
                    .collect();
            }
        }
    }

    /// The node from which generator `g`'s datagrams cross the rest of their path in closed
    /// form, if any.
    #[inline]
    pub(super) fn suffix_start(&self, g: u32) -> Option<u32> {
        self.sources.get(g as usize)?.closed.as_ref()?.suffix_start
    }

    /// Whether any generator's datagrams cross the end of their path in closed form.
    pub(super) fn has_closed_suffixes(&self) -> bool {
        self.sources
            .iter()
            .any(|s| s.closed.as_ref().is_some_and(|c| c.suffix_start.is_some()))
    }

    /// Nodes that must be routable destinations.
    pub(super) fn dests(&self) -> impl Iterator<Item = u32> + '_ {
        self.sources.iter().flat_map(|s| [s.dst, s.src])
    }

    /// Schedules the generators' starts and the link changes.
    pub(super) fn schedule(&mut self, q: &mut EventQueue<Ev>) {
        for (i, s) in self.sources.iter_mut().enumerate() {
            match &mut s.web {
                Some(w) => q.schedule(
                    s.start_ns.saturating_add(w.arrivals.gap_ns()),
                    Ev::WebArrival(i as u32),
                ),
                None => q.schedule(s.start_ns, Ev::Traffic(i as u32)),
            }
        }
        for (i, &(t, _)) in self.actions.iter().enumerate() {
            q.schedule(t, Ev::Dyn(i as u32));
        }
    }
}

impl World {
    /// A datagram generator is due: send what it says and schedule its next wake-up.
    pub(super) fn on_traffic(&mut self, g: u32, now: u64) {
        let s = &mut self.traffic.sources[g as usize];
        let gen = s.gen.as_mut().expect("a datagram generator");
        let w = gen.wake(now);
        let (src, dst, size, port) = (s.src, s.dst, s.packet_bytes, s.src_port);
        s.sent_packets += w.packets as u64;
        s.sent_bytes += w.packets as u64 * size as u64;
        if let Some(t) = w.next_ns {
            if s.stop_ns.is_none_or(|stop| t < stop) {
                self.q.schedule(t, Ev::Traffic(g));
            }
        }
        let closed = s.closed.is_some();
        for _ in 0..w.packets {
            let pkt = Packet {
                src,
                dst,
                size_bytes: size,
                conn: g,
                to_server: false,
                sent_ns: 0,
                transport: Transport::Udp {
                    src_port: port,
                    dst_port: SINK_PORT,
                    payload_bytes: size - UDP_IP_HEADER_BYTES,
                },
            };
            if closed {
                self.send_closed_form(g, pkt, now);
            } else {
                let frame = self.packets.put(&pkt);
                self.forward(src, frame, now);
            }
        }
    }

    /// A datagram of a generator with closed-form private links: across its prefix now, then
    /// into the event form at the time it reaches the first shared link (or to its sink).
    fn send_closed_form(&mut self, g: u32, pkt: Packet, now: u64) {
        let links = &mut self.links;
        let c = self.traffic.sources[g as usize]
            .closed
            .as_mut()
            .expect("a closed-form generator");
        let Some(t) = cross_hops(&mut c.prefix, links, pkt.size_bytes, now) else {
            return;
        };
        match c.inject_node {
            None => c.arrivals.push_back((t, pkt.size_bytes)),
            Some(node) if c.prefix.is_empty() => {
                let frame = self.packets.put(&pkt);
                self.forward(node, frame, now);
            }
            Some(_) => {
                c.inject.push_back((t, pkt));
                if c.inject.len() == 1 {
                    self.q.schedule(t, Ev::Inject(g));
                }
            }
        }
    }

    /// The head datagram of generator `g`'s prefix reaches the first shared link.
    pub(super) fn on_inject(&mut self, g: u32, now: u64) {
        let c = self.traffic.sources[g as usize]
            .closed
            .as_mut()
            .expect("a closed-form generator");
        let (_, pkt) = c.inject.pop_front().expect("a datagram to inject");
        let node = c.inject_node.expect("an injection node");
        if let Some(&(t, _)) = c.inject.front() {
            self.q.schedule(t, Ev::Inject(g));
        }
        let frame = self.packets.put(&pkt);
        self.forward(node, frame, now);
    }

    /// A datagram of generator `g` reached the start of its closed-form suffix.
    pub(super) fn finish_closed_form(&mut self, g: u32, size_bytes: u32, now: u64) {
        let links = &mut self.links;
        let c = self.traffic.sources[g as usize]
            .closed
            .as_mut()
            .expect("a closed-form generator");
        if let Some(t) = cross_hops(&mut c.suffix, links, size_bytes, now) {
            c.arrivals.push_back((t, size_bytes));
        }
    }

    /// Counts the closed-form datagrams that have reached their sink by `now`.
    fn credit_arrivals(&mut self, now: u64) {
        for s in &mut self.traffic.sources {
            if let Some(c) = s.closed.as_mut() {
                while c.arrivals.front().is_some_and(|&(t, _)| t <= now) {
                    let (_, b) = c.arrivals.pop_front().expect("an arrival");
                    s.received_packets += 1;
                    s.received_bytes += b as u64;
                }
            }
        }
    }

    /// A datagram of generator `g` reached its sink.
    #[inline]
    pub(super) fn on_datagram(&mut self, g: u32, size_bytes: u32) {
        let s = &mut self.traffic.sources[g as usize];
        s.received_packets += 1;
        s.received_bytes += size_bytes as u64;
    }

    /// A web transfer starts: a new connection whose sender writes the transfer's size.
    pub(super) fn on_web_arrival(&mut self, g: u32, now: u64) {
        let conn = self.conns.len() as u32;
        let s = &mut self.traffic.sources[g as usize];
        if s.stop_ns.is_some_and(|stop| now >= stop) {
            return;
        }
        let (src, dst) = (s.src, s.dst);
        let w = s.web.as_mut().expect("a web generator");
        let bytes = w.arrivals.size_bytes();
        let next = now.saturating_add(w.arrivals.gap_ns());
        let (isn_c, isn_s) = match w.tcp.isn {
            Some(isn) => (isn, isn),
            None => (w.isn.next_u32(), w.isn.next_u32()),
        };
        let client_port = 32768 + (conn % 28232) as u16;
        let k = w.transfers.len();
        let cc_stream = |side: u8| format!("traffic:{}:{k}:cc:{side}", s.name);
        let client = Endpoint::new(
            conn,
            0,
            src,
            dst,
            client_port,
            WEB_PORT,
            w.tcp.clone(),
            w.cc.build_seeded(self.seed, &cc_stream(0)),
            isn_c,
        );
        let server = Endpoint::new(
            conn,
            1,
            dst,
            src,
            WEB_PORT,
            client_port,
            w.tcp.clone(),
            w.cc.build_seeded(self.seed, &cc_stream(1)),
            isn_s,
        );
        w.transfers.push((conn, now));
        s.sent_packets += 1;
        s.sent_bytes += bytes;
        self.conns.push(Connection::new(client, server));
        // a web transfer is a connection without a flow; its sender is side 0
        self.data_side.push(0);
        self.data_queue_drops.push(0);
        self.data_delay.push(DelayStats::default());
        self.conn_flow.push(None);
        let app = self.apps.len() as u32;
        self.apps
            .push(Box::new(BulkSender::new(conn, Some(bytes), None)));
        self.conn_apps.push([Some(app), None]);
        self.q.schedule(now, Ev::AppStart(app));
        self.q.schedule(next, Ev::WebArrival(g));
    }

    /// A scheduled link change.
    pub(super) fn on_dyn(&mut self, i: u32) {
        match self.traffic.actions[i as usize].1 {
            DynAction::SetRate { ld, rate_bps } => self.links[ld as usize].rate_bps = rate_bps,
            DynAction::SetLoss { ld, loss } => self.links[ld as usize].loss = loss,
        }
    }

    /// Bytes delivered so far by each generator (datagram sinks, or the web transfers'
    /// receivers).
    fn traffic_received(&self) -> Vec<u64> {
        self.traffic
            .sources
            .iter()
            .map(|s| match &s.web {
                Some(w) => w
                    .transfers
                    .iter()
                    .map(|&(c, _)| self.conns[c as usize].ends[1].stats.transfer.bytes_received)
                    .sum(),
                None => s.received_bytes,
            })
            .collect()
    }

    /// Closes a window of the `traffic` table.
    pub(super) fn traffic_window(&mut self, now: u64) {
        if self.traffic.sources.is_empty() {
            return;
        }
        self.credit_arrivals(now);
        let totals = self.traffic_received();
        self.traffic.series.close_window(now, totals.into_iter());
    }

    /// The summaries of the generators and the `traffic` table (at the end of the run; no table
    /// without generators).
    pub(super) fn traffic_results(
        &mut self,
    ) -> (Vec<TrafficSummary>, Option<crate::metrics::Table>) {
        self.credit_arrivals(self.duration_ns);
        let received = self.traffic_received();
        let dur = self.duration_ns;
        let summaries = self
            .traffic
            .sources
            .iter()
            .zip(received)
            .map(|(s, rx)| {
                let end = s.stop_ns.unwrap_or(dur).min(dur);
                let span = end.saturating_sub(s.start_ns).max(1) as f64 / 1e9;
                let (received_packets, mean_transfer_ns) = match &s.web {
                    Some(w) => {
                        let done: Vec<u64> = w
                            .transfers
                            .iter()
                            .filter_map(|&(c, t0)| {
                                let tx = &self.conns[c as usize].ends[0];
                                tx.stats
                                    .completed_ns
                                    .filter(|_| tx.unacked_written_bytes() == 0)
                                    .map(|t| t - t0)
                            })
                            .collect();
                        let mean = (!done.is_empty())
                            .then(|| done.iter().sum::<u64>() / done.len() as u64);
                        (done.len() as u64, mean)
                    }
                    None => (s.received_packets, None),
                };
                TrafficSummary {
                    name: s.name.clone(),
                    kind: s.kind.to_string(),
                    src: self.node_names[s.src as usize].clone(),
                    dst: self.node_names[s.dst as usize].clone(),
                    start_ns: s.start_ns,
                    end_ns: end,
                    target_mean_bps: s.target_mean_bps,
                    sent_packets: s.sent_packets,
                    sent_bytes: s.sent_bytes,
                    received_packets,
                    received_bytes: rx,
                    sent_mean_bps: s.sent_bytes as f64 * 8.0 / span,
                    received_mean_bps: rx as f64 * 8.0 / span,
                    mean_transfer_ns,
                }
            })
            .collect();
        let series = std::mem::take(&mut self.traffic.series);
        let table = (!self.traffic.sources.is_empty()).then(|| series.into_table());
        (summaries, table)
    }
}

/// Crosses closed-form hops in order from `at_ns`: when the datagram leaves the last one, or
/// None if a queue dropped it or random loss took it on the way.
fn cross_hops(
    hops: &mut [(u32, ClosedFormHop)],
    links: &mut [LinkDir],
    size_bytes: u32,
    at_ns: u64,
) -> Option<u64> {
    hops.iter_mut().try_fold(at_ns, |t, (ld, hop)| {
        hop.cross(&mut links[*ld as usize], size_bytes, t)
    })
}
