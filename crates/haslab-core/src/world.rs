//! The world: builds a [`Plan`] into nodes, link directions, connections and applications,
//! runs the event loop, and collects a [`SimResult`].
//!
//! The event loop dispatches on a small `Copy` enum of component indices; there is no
//! dynamic dispatch on the per-packet path (links, queues, forwarding, TCP segment
//! handling). Congestion controls and applications are trait objects, called once per ACK or
//! per application event.

use crate::app::{App, AppAction, AppApi, AppReport, OpenSpec};
use crate::has::session::HasSession;
use crate::metrics::delay::DelayStats;
use crate::metrics::series::{CwndSeries, GoodputSeries, QueueSeries, WindowTotals};
use crate::metrics::{FlowSummary, LinkDirSummary, SimResult};
use crate::net::link::{LinkAction, LinkDir};
use crate::net::packet::{Frame, Packet, PacketStore, Transport};
use crate::net::pcap::PcapWriter;
use crate::net::queue::DropTail;
use crate::net::routing::{Edge, Routes, NO_ROUTE};
use crate::scenario::{Plan, QueuePlan};
use crate::sim::events::EventQueue;
use crate::sim::rng::Stream;
use crate::tcp::cc::CcConfig;
use crate::tcp::cc::CongestionControl;
use crate::tcp::config::TcpConfig;
use crate::tcp::conn::Connection;
use crate::tcp::cwv::CwndValidation;
use crate::tcp::endpoint::{Endpoint, Notice, Output, TimerKind, TransferCounters};
use std::path::PathBuf;
use std::sync::Arc;

#[cfg(test)]
mod tests;
mod traffic;

/// Options of a run that are not part of the scenario.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Directory for pcap files (pcaps the scenario asks for are skipped when None).
    pub out_dir: Option<PathBuf>,
    /// Serve every fixed-rate link direction in the event form (an end-of-serialisation event
    /// per packet), even where the scheduled form applies: for checking that both forms give the
    /// same run (`net::link`).
    pub event_form_links: bool,
}

#[derive(Clone, Copy, Debug)]
enum Ev {
    /// serialisation on link direction ends
    TxDone(u32),
    /// the head of link direction's pipe arrives
    Arrive(u32),
    /// a TCP timer entry
    Tcp {
        conn: u32,
        side: u8,
        kind: TimerKind,
    },
    AppStart(u32),
    AppTimer {
        app: u32,
        token: u64,
    },
    /// close a goodput window
    GoodputTick,
    // --- cross-traffic and dynamics (world/traffic.rs) ---
    /// a datagram generator is due
    Traffic(u32),
    /// a web generator starts a transfer
    WebArrival(u32),
    /// a scheduled link change (loss event, capacity step)
    Dyn(u32),
    /// a Mahimahi delivery opportunity on a link direction
    Opportunity(u32),
    /// a closed-form generator's datagram reaches its first shared link
    Inject(u32),
}

/// Port of the accepting side of every flow (as iperf's default).
const SERVER_PORT: u16 = 5201;

pub struct World {
    q: EventQueue<Ev>,
    duration_ns: u64,
    seed: u64,
    node_names: Vec<String>,
    links: Vec<LinkDir>,
    link_names: Vec<String>,
    /// scenario name of each link (both directions share it)
    link_plan_names: Vec<String>,
    routes: Routes,
    conns: Vec<Connection>,
    /// app of each connection side
    conn_apps: Vec<[Option<u32>; 2]>,
    /// side of each connection that carries its main data (0 for `[[flow]]`s, 1 for HTTP
    /// downloads): the "sender" of summaries, cwnd and goodput traces
    data_side: Vec<u8>,
    /// Per connection (same length as `data_side`): its data-carrying side's segments dropped by
    /// a drop-tail queue.
    data_queue_drops: Vec<u64>,
    /// Per connection: one-way delay, jitter and loss of its data packets.
    data_delay: Vec<DelayStats>,
    /// The flow (index into `flow_names`) each connection reports as, if any: web transfers
    /// of `[[traffic]]` are connections without a flow.
    conn_flow: Vec<Option<u32>>,
    /// The connection of each flow.
    flow_conns: Vec<u32>,
    /// app id of each player session, and the bottleneck of its server → client path
    /// (link direction, rate)
    player_apps: Vec<u32>,
    player_paths: Vec<Option<(u32, u64)>>,
    apps: Vec<Box<dyn App>>,
    flow_names: Vec<String>,
    flow_cc: Vec<String>,
    out: Output,
    /// The packets in the network; links carry their frames (`net::packet`).
    packets: PacketStore,
    /// Whether a datagram generator crosses the end of its path in closed form (then
    /// forwarding checks each datagram for the start of that part).
    closed_suffixes: bool,
    /// A spare buffer for the notices `after_tcp` hands to applications, reused so that
    /// draining TCP's output allocates nothing.
    notices: Vec<Notice>,
    actions: Vec<AppAction>,
    pcaps: Vec<Option<PcapWriter>>,
    cwnd: Option<CwndSeries>,
    goodput: GoodputSeries,
    last_goodput_ns: u64,
    queues: QueueSeries,
    unroutable: u64,
    /// Packets that have reached a link direction's queue so far (wrapping): each packet's
    /// [`Frame::stamp`], which orders the arrivals of one nanosecond (`sim::events`).
    enqueues: u32,
    finished: bool,
    /// The plan's input warnings (players' videos), in scenario order, without repeats.
    warnings: Vec<String>,
    /// cross-traffic generators and link dynamics (world/traffic.rs)
    traffic: traffic::TrafficState,
}

impl World {
    pub fn new(plan: &Plan, opts: &RunOptions) -> Result<World, String> {
        let n_nodes = plan.nodes.len();
        let mut links = Vec::with_capacity(plan.links.len() * 2);
        let mut link_names = Vec::with_capacity(plan.links.len() * 2);
        let mut edges = Vec::with_capacity(plan.links.len() * 2);
        for l in &plan.links {
            for (rev, d) in [(false, &l.ab), (true, &l.ba)] {
                let (from, to) = if rev { (l.b, l.a) } else { (l.a, l.b) };
                let name = format!("{}->{}", plan.nodes[from].name, plan.nodes[to].name);
                let QueuePlan::DropTail { limit } = d.queue;
                let rng = Stream::new(
                    plan.seed,
                    &format!("link:{}:{}:loss", l.name, if rev { "ba" } else { "ab" }),
                );
                edges.push(Edge {
                    from: from as u32,
                    to: to as u32,
                    link_dir: links.len() as u32,
                });
                links.push(LinkDir::new(
                    from as u32,
                    to as u32,
                    d.rate_bps,
                    d.delay_ns,
                    d.loss,
                    DropTail::new(limit),
                    rng,
                ));
                link_names.push(name);
            }
        }
        let mut traffic = traffic::TrafficState::new(plan, &mut links);
        if !opts.event_form_links {
            use_scheduled_form(plan, &mut links);
        }
        let mut dests: Vec<u32> = Vec::new();
        for f in &plan.flows {
            dests.push(f.dst as u32);
            dests.push(f.src as u32);
        }
        for p in &plan.players {
            dests.push(p.client as u32);
            dests.push(p.server as u32);
        }
        dests.extend(traffic.dests());
        let routes = Routes::compute(n_nodes, &edges, &dests);
        traffic.plan_private_links(plan, &routes, &links);
        for p in &plan.players {
            if routes.next_hop(p.client as u32, p.server as u32) == NO_ROUTE
                || routes.next_hop(p.server as u32, p.client as u32) == NO_ROUTE
            {
                return Err(format!("player {:?}: no route between its nodes", p.name));
            }
        }
        for f in &plan.flows {
            if routes.next_hop(f.src as u32, f.dst as u32) == NO_ROUTE
                || routes.next_hop(f.dst as u32, f.src as u32) == NO_ROUTE
            {
                return Err(format!("flow {:?}: no route between its nodes", f.name));
            }
        }

        let mut q = EventQueue::new();
        let mut conns = Vec::with_capacity(plan.flows.len());
        let mut conn_apps = Vec::with_capacity(plan.flows.len());
        let mut apps: Vec<Box<dyn App>> = Vec::with_capacity(plan.flows.len());
        for (i, f) in plan.flows.iter().enumerate() {
            let conn = i as u32;
            conns.push(make_connection(
                plan.seed,
                conn,
                &f.name,
                [f.src as u32, f.dst as u32],
                SERVER_PORT,
                &f.tcp,
                &f.cc,
            ));
            let (app, start_ns) = (f.app.build(conn), f.app.start_ns());
            let app_id = apps.len() as u32;
            apps.push(app);
            conn_apps.push([Some(app_id), None]);
            q.schedule(start_ns, Ev::AppStart(app_id));
        }

        // HAS players: one session app each; their connections are opened at run time.
        let mut player_apps = Vec::with_capacity(plan.players.len());
        let mut player_paths = Vec::with_capacity(plan.players.len());
        for p in &plan.players {
            let app_id = apps.len() as u32;
            apps.push(Box::new(HasSession::new(Arc::new(p.clone()), plan.seed)));
            player_apps.push(app_id);
            q.schedule(p.start_ns, Ev::AppStart(app_id));
            let slowest =
                slowest_on_path(&routes, &links, p.server as u32, p.client as u32, n_nodes);
            player_paths.push(slowest);
        }

        let mut pcaps: Vec<Option<PcapWriter>> = (0..links.len()).map(|_| None).collect();
        if let Some(dir) = &opts.out_dir {
            if !plan.trace.pcaps.is_empty() {
                std::fs::create_dir_all(dir)
                    .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
            }
            for p in &plan.trace.pcaps {
                let ld = 2 * p.at.link + p.at.reverse as usize;
                let path = dir.join(&p.file);
                let w = PcapWriter::create(&path, p.snaplen)
                    .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
                pcaps[ld] = Some(w);
            }
        }
        let traced: Vec<usize> = plan
            .trace
            .queues
            .iter()
            .map(|r| 2 * r.link + r.reverse as usize)
            .collect();
        traffic.schedule(&mut q);
        let goodput_window_ns = plan.trace.goodput_window_ns.max(1);
        q.schedule(goodput_window_ns.min(plan.duration_ns), Ev::GoodputTick);
        Ok(World {
            q,
            duration_ns: plan.duration_ns,
            seed: plan.seed,
            node_names: plan.nodes.iter().map(|n| n.name.clone()).collect(),
            queues: QueueSeries::new(links.len(), &traced, plan.trace.queue_interval_ns),
            links,
            link_names,
            link_plan_names: plan.links.iter().map(|l| l.name.clone()).collect(),
            routes,
            data_side: vec![0; conns.len()],
            data_queue_drops: vec![0; conns.len()],
            data_delay: vec![DelayStats::default(); conns.len()],
            conn_flow: (0..conns.len() as u32).map(Some).collect(),
            flow_conns: (0..conns.len() as u32).collect(),
            conns,
            conn_apps,
            player_apps,
            player_paths,
            apps,
            flow_names: plan.flows.iter().map(|f| f.name.clone()).collect(),
            flow_cc: plan.flows.iter().map(|f| f.cc.name().to_string()).collect(),
            out: Output::default(),
            packets: PacketStore::default(),
            closed_suffixes: traffic.has_closed_suffixes(),
            notices: Vec::new(),
            actions: Vec::new(),
            pcaps,
            cwnd: plan
                .trace
                .cwnd
                .then(|| CwndSeries::new(plan.flows.len(), plan.trace.cwnd_interval_ns)),
            goodput: GoodputSeries::new(plan.flows.len(), goodput_window_ns),
            last_goodput_ns: 0,
            unroutable: 0,
            enqueues: 0,
            finished: false,
            warnings: plan.input_warnings(),
            traffic,
        })
    }

    pub fn now_ns(&self) -> u64 {
        self.q.now_ns()
    }
    pub fn duration_ns(&self) -> u64 {
        self.duration_ns
    }
    /// Events processed so far.
    pub fn events(&self) -> u64 {
        self.q.processed()
    }

    /// Advances the simulation to `t_ns` (at most the scenario's duration).
    pub fn run_until(&mut self, t_ns: u64) {
        let until = t_ns.min(self.duration_ns);
        while let Some(ev) = self.q.pop_until(until) {
            self.handle(ev);
        }
        self.q.advance_to(until);
    }

    fn handle(&mut self, ev: Ev) {
        let now = self.q.now_ns();
        match ev {
            Ev::Arrive(ld) => {
                let link = &mut self.links[ld as usize];
                let to = link.to;
                let (pkt, delivered, next) = link.arrive();
                if let Some((t, stamp)) = next {
                    // the next packet has been the next to arrive since now
                    let alone_ns = link.delay_ns.min(t - now);
                    self.q.schedule_arrival(t, alone_ns, stamp, Ev::Arrive(ld));
                }
                if delivered {
                    self.receive(to, pkt, now);
                } else {
                    // lost to the link's random loss
                    if let Some(c) = self.data_conn(self.packets.get(pkt.slot)) {
                        self.data_delay[c].on_lost();
                    }
                    self.packets.release(pkt.slot);
                }
            }
            Ev::Tcp { conn, side, kind } => {
                self.conns[conn as usize].ends[side as usize].on_timer_entry(
                    kind,
                    now,
                    &mut self.out,
                );
                self.after_tcp(conn, now);
            }
            _ => self.handle_other(ev, now),
        }
    }

    /// [`World::handle`] for the events other than arrivals and TCP timers.
    #[inline(never)]
    fn handle_other(&mut self, ev: Ev, now: u64) {
        match ev {
            Ev::Arrive(_) | Ev::Tcp { .. } => unreachable!("handled by World::handle"),
            Ev::TxDone(ld) => {
                let link = &mut self.links[ld as usize];
                let (pkt, pipe_was_empty, next) = link.tx_done(now);
                if pipe_was_empty {
                    let t = now + link.delay_ns;
                    self.q
                        .schedule_arrival(t, link.delay_ns, pkt.stamp, Ev::Arrive(ld));
                }
                if let LinkAction::TxDoneAt(t) = next {
                    self.q.schedule_departure(t, ld, Ev::TxDone(ld));
                }
                if let Some(w) = &mut self.pcaps[ld as usize] {
                    // a failing disk must not stop the simulation; the error surfaces at finish
                    w.write_packet(now, self.packets.get(pkt.slot)).ok();
                }
                self.trace_queue(ld as usize, now);
            }
            Ev::AppStart(app) => {
                let mut actions = std::mem::take(&mut self.actions);
                let next = self.conns.len() as u32;
                self.apps[app as usize].start(&mut AppApi::with_next_conn(now, &mut actions, next));
                self.actions = actions;
                self.apply_actions(app, now);
            }
            Ev::AppTimer { app, token } => {
                let mut actions = std::mem::take(&mut self.actions);
                let next = self.conns.len() as u32;
                self.apps[app as usize]
                    .on_timer(&mut AppApi::with_next_conn(now, &mut actions, next), token);
                self.actions = actions;
                self.apply_actions(app, now);
            }
            Ev::GoodputTick => {
                let len = now - self.last_goodput_ns;
                self.last_goodput_ns = now;
                let (sides, conns, drops) = (&self.data_side, &self.conns, &self.data_queue_drops);
                self.goodput.close_window(
                    now,
                    len,
                    self.flow_conns.iter().map(|&c| {
                        let side = sides[c as usize] as usize;
                        let tx = &conns[c as usize].ends[side].stats.transfer;
                        WindowTotals {
                            received: conns[c as usize].ends[1 - side]
                                .stats
                                .transfer
                                .bytes_received,
                            sent: tx.bytes_sent,
                            retransmits: tx.retransmitted_segments,
                            queue_drops: drops[c as usize],
                        }
                    }),
                );
                self.traffic_window(now);
                if now < self.duration_ns {
                    let next = (now + self.goodput.window_ns).min(self.duration_ns);
                    self.q.schedule(next, Ev::GoodputTick);
                }
            }
            Ev::Traffic(g) => self.on_traffic(g, now),
            Ev::WebArrival(g) => self.on_web_arrival(g, now),
            Ev::Dyn(i) => self.on_dyn(i),
            Ev::Inject(g) => self.on_inject(g, now),
            Ev::Opportunity(ld) => {
                let link = &mut self.links[ld as usize];
                let (departed, pipe_was_empty, next) = link.serve_opportunity(now);
                if pipe_was_empty && departed > 0 {
                    let head = &link.pipe[link.pipe.len() - departed].1;
                    let t = now + link.delay_ns;
                    self.q
                        .schedule_arrival(t, link.delay_ns, head.stamp, Ev::Arrive(ld));
                }
                if let LinkAction::OpportunityAt(t) = next {
                    self.q.schedule(t, Ev::Opportunity(ld));
                }
                if let Some(w) = &mut self.pcaps[ld as usize] {
                    let pipe = &link.pipe;
                    for (_, p) in pipe.iter().skip(pipe.len() - departed) {
                        w.write_packet(now, self.packets.get(p.slot)).ok();
                    }
                }
                self.trace_queue(ld as usize, now);
            }
        }
    }

    /// A packet arrives at `node`: deliver it or forward it.
    #[inline]
    fn receive(&mut self, node: u32, frame: Frame, now: u64) {
        if frame.dst == node {
            // read in its slot, which is free again once the endpoint has read it
            let pkt = self.packets.get(frame.slot);
            if let Some(c) = self.data_conn(pkt) {
                self.data_delay[c].on_received(now - pkt.sent_ns);
            }
            let conn = pkt.conn;
            if let Transport::Tcp(h) = &pkt.transport {
                let side = pkt.to_server as usize;
                self.conns[conn as usize].ends[side].on_segment(h, now, &mut self.out);
                self.packets.release(frame.slot);
                self.after_tcp(conn, now);
            } else {
                self.packets.release(frame.slot);
                self.on_datagram(conn, frame.size_bytes);
            }
            return;
        }
        self.forward(node, frame, now);
    }

    /// A packet (its frame) reaches `node` on its way: onto the next link's queue, or dropped.
    #[inline]
    fn forward(&mut self, node: u32, mut pkt: Frame, now: u64) {
        if self.closed_suffixes {
            let p = self.packets.get(pkt.slot);
            let g = p.conn;
            if matches!(p.transport, Transport::Udp { .. })
                && self.traffic.suffix_start(g) == Some(node)
            {
                self.finish_closed_form(g, pkt.size_bytes, now);
                self.packets.release(pkt.slot);
                return;
            }
        }
        let ld = self.routes.next_hop(node, pkt.dst);
        if ld == NO_ROUTE {
            self.unroutable += 1;
            self.packets.release(pkt.slot);
            return;
        }
        let slot = pkt.slot;
        let stamp = self.enqueues;
        self.enqueues = stamp.wrapping_add(1);
        pkt.stamp = stamp;
        match self.links[ld as usize].enqueue(pkt, now) {
            LinkAction::TxDoneAt(t) => self.q.schedule_departure(t, ld, Ev::TxDone(ld)),
            LinkAction::ArriveAt(t) => {
                // an empty pipe: the packet is the next to arrive from its departure on
                let delay_ns = self.links[ld as usize].delay_ns;
                self.q.schedule_arrival(t, delay_ns, stamp, Ev::Arrive(ld))
            }
            LinkAction::OpportunityAt(t) => self.q.schedule(t, Ev::Opportunity(ld)),
            LinkAction::None => {}
            LinkAction::Dropped => {
                if let Some(c) = self.data_conn(self.packets.get(slot)) {
                    self.data_queue_drops[c] += 1;
                    self.data_delay[c].on_lost();
                }
                self.packets.release(slot);
            }
        }
        self.trace_queue(ld as usize, now);
    }

    /// The connection of a data segment from its connection's data-carrying side (towards the
    /// server means from the connecting side 0); None for other packets.
    #[inline]
    fn data_conn(&self, pkt: &Packet) -> Option<usize> {
        self.data_conn_of(pkt.conn, pkt.to_server, pkt.tcp_payload_bytes())
    }

    /// [`World::data_conn`] from the packet's connection, direction and TCP payload.
    #[inline]
    fn data_conn_of(&self, conn: u32, to_server: bool, tcp_payload_bytes: u32) -> Option<usize> {
        (tcp_payload_bytes > 0 && self.data_side.get(conn as usize) == Some(&u8::from(!to_server)))
            .then_some(conn as usize)
    }

    #[inline(always)]
    fn trace_queue(&mut self, ld: usize, now: u64) {
        if self.queues.is_traced(ld) {
            let q = &self.links[ld].queue;
            self.queues.observe(now, ld, q.len_pkts(), q.len_bytes());
        }
    }

    /// Drains what TCP produced for connection `conn`: packets onto the network, timers into
    /// the event list, notices to the applications (whose actions may produce more).
    fn after_tcp(&mut self, conn: u32, now: u64) {
        loop {
            // read in place rather than taking `self.out`: forwarding and scheduling never
            // touch it, so each buffer is walked by index and cleared once
            for i in 0..self.out.packets.len() {
                let p = &self.out.packets[i];
                if let Some(c) = self.data_conn(p) {
                    self.data_delay[c].on_sent();
                }
                let src = p.src;
                let frame = self.packets.put_sent(p, now);
                self.forward(src, frame, now);
            }
            self.out.packets.clear();
            for i in 0..self.out.timers.len() {
                let (t, c, s, kind) = self.out.timers[i];
                self.q.schedule(
                    t,
                    Ev::Tcp {
                        conn: c,
                        side: s,
                        kind,
                    },
                );
            }
            self.out.timers.clear();
            if self.cwnd.is_some() {
                self.observe_cwnd(conn, now);
            }
            if self.out.notices.is_empty() {
                return;
            }
            self.deliver_notices(now);
        }
    }

    /// Records the congestion window of connection `conn`'s data sender, if its flow is traced
    /// and it has data to send.
    #[inline(never)]
    fn observe_cwnd(&mut self, conn: u32, now: u64) {
        if let (Some(cw), Some(flow)) = (self.cwnd.as_mut(), self.conn_flow[conn as usize]) {
            let ep = &self.conns[conn as usize].ends[self.data_side[conn as usize] as usize];
            if ep.stats.transfer.bytes_written > 0 {
                cw.observe(
                    now,
                    flow,
                    ep.tp.cwnd_pkts,
                    ep.tp.ssthresh_pkts,
                    ep.tp.srtt_ns,
                );
            }
        }
    }

    /// Hands the notices TCP produced to the applications (whose actions may produce more
    /// output, which [`World::after_tcp`] drains next).
    #[inline(never)]
    fn deliver_notices(&mut self, now: u64) {
        let mut notices = std::mem::take(&mut self.notices);
        std::mem::swap(&mut notices, &mut self.out.notices);
        for &n in &notices {
            if let Some(app) = self.conn_apps[n.conn as usize][n.side as usize] {
                let mut actions = std::mem::take(&mut self.actions);
                let next = self.conns.len() as u32;
                self.apps[app as usize]
                    .on_notice(&mut AppApi::with_next_conn(now, &mut actions, next), &n);
                self.actions = actions;
                self.apply_actions_no_drain(app, now);
            }
        }
        notices.clear();
        self.notices = notices;
    }

    /// Applies an application's actions and drains the resulting TCP output.
    fn apply_actions(&mut self, app: u32, now: u64) {
        let touched = self.apply_actions_no_drain(app, now);
        if let Some(conn) = touched {
            self.after_tcp(conn, now);
        }
    }

    /// Applies an application's actions; returns a connection it touched (its output sits
    /// in `self.out` until drained).
    fn apply_actions_no_drain(&mut self, app: u32, now: u64) -> Option<u32> {
        let mut touched = None;
        let actions = std::mem::take(&mut self.actions);
        let mut out = std::mem::take(&mut self.out);
        for a in &actions {
            match *a {
                AppAction::Connect { conn } => {
                    self.conns[conn as usize].ends[0].connect(now, &mut out);
                    touched = Some(conn);
                }
                AppAction::Write {
                    conn,
                    side,
                    bytes,
                    tag,
                } => {
                    self.conns[conn as usize].write(side, bytes, tag, now, &mut out);
                    touched = Some(conn);
                }
                AppAction::WithdrawUnsent { conn, side } => {
                    self.conns[conn as usize].ends[side as usize].withdraw_unsent();
                }
                AppAction::Close { conn, side } => {
                    self.conns[conn as usize].ends[side as usize].close(now, &mut out);
                    touched = Some(conn);
                }
                AppAction::Timer { at_ns, token } => {
                    self.q.schedule(at_ns, Ev::AppTimer { app, token })
                }
                AppAction::SetAppData {
                    conn,
                    side,
                    ref data,
                } => {
                    self.conns[conn as usize].set_app_data(side, data);
                }
                AppAction::Open { conn, ref spec } => {
                    self.open_connection(conn, spec, app);
                }
                AppAction::SetProgressNotices {
                    conn,
                    side,
                    every_ns,
                } => {
                    self.conns[conn as usize].ends[side as usize].set_progress_every(every_ns);
                }
                AppAction::SetCwndClampRate {
                    conn,
                    side,
                    rate_bps,
                } => {
                    self.conns[conn as usize].ends[side as usize].set_cwnd_clamp_rate(rate_bps);
                }
            }
        }
        self.out = out;
        let mut actions = actions;
        actions.clear();
        self.actions = actions;
        touched
    }

    /// Creates connection `conn` (which must be the next id) for application `app`.
    fn open_connection(&mut self, conn: u32, spec: &OpenSpec, app: u32) {
        debug_assert_eq!(
            conn as usize,
            self.conns.len(),
            "connection ids are assigned in order"
        );
        self.conns.push(make_connection(
            self.seed,
            conn,
            &spec.name,
            [spec.client_node, spec.server_node],
            spec.server_port,
            &spec.tcp,
            &spec.cc,
        ));
        self.conn_apps.push([Some(app), spec.serve.then_some(app)]);
        self.data_side.push(spec.data_side.min(1));
        self.data_queue_drops.push(0);
        self.data_delay.push(DelayStats::default());
        self.conn_flow.push(Some(self.flow_names.len() as u32));
        self.flow_conns.push(conn);
        self.flow_names.push(spec.name.clone());
        self.flow_cc.push(spec.cc.name().to_string());
        self.goodput.add_flow();
        if let Some(c) = &mut self.cwnd {
            c.add_flow();
        }
    }

    /// Runs to the end (if needed), closes pcap files and returns the result.
    pub fn finish(mut self) -> Result<SimResult, String> {
        self.run_until(self.duration_ns);
        self.finished = true;
        for l in &mut self.links {
            l.settle(self.duration_ns);
        }
        let dur = self.duration_ns.max(1);
        for w in self.pcaps.iter_mut().filter_map(Option::take) {
            w.finish().map_err(|e| format!("writing pcap: {e}"))?;
        }
        let flows = self
            .flow_conns
            .iter()
            .enumerate()
            .map(|(i, &conn)| {
                let c = &self.conns[conn as usize];
                let ds = self.data_side[conn as usize] as usize;
                let (tx, rx) = (&c.ends[ds], &c.ends[1 - ds]);
                let start = tx.stats.established_ns;
                let end = tx
                    .stats
                    .completed_ns
                    .filter(|_| tx.unacked_written_bytes() == 0)
                    .unwrap_or(dur);
                let goodput_bps = match start {
                    Some(s) if end > s => {
                        rx.stats.transfer.bytes_received as f64 * 8e9 / (end - s) as f64
                    }
                    _ => 0.0,
                };
                FlowSummary {
                    name: self.flow_names[i].clone(),
                    src: self.node_names[tx_node(c, ds)].clone(),
                    dst: self.node_names[tx_node(c, 1 - ds)].clone(),
                    cc: self.flow_cc[i].clone(),
                    transfer: TransferCounters {
                        bytes_received: rx.stats.transfer.bytes_received,
                        messages_received: rx.stats.transfer.messages_received,
                        ..tx.stats.transfer.clone()
                    },
                    queue_dropped_packets: self.data_queue_drops[conn as usize],
                    loss: tx.stats.loss.clone(),
                    established_ns: tx.stats.established_ns,
                    completed_ns: tx
                        .stats
                        .completed_ns
                        .filter(|_| tx.unacked_written_bytes() == 0),
                    goodput_bps,
                    final_cwnd_pkts: tx.tp.cwnd_pkts,
                    final_ssthresh_pkts: tx.tp.ssthresh_pkts,
                    min_rtt_ns: tx.rtt.has_sample().then_some(tx.rtt.min_rtt_ns),
                    mean_srtt_ns: tx.rtt.mean_srtt_ns(),
                    delay: self.data_delay[conn as usize].summary(),
                }
            })
            .collect();
        let links = self.link_summaries();
        // player logs → QoE metrics
        let mut logs = Vec::with_capacity(self.player_apps.len());
        for &a in &self.player_apps {
            if let Some(AppReport::Player(log)) = self.apps[a as usize].finish(self.duration_ns) {
                logs.push(*log);
            }
        }
        let paths: Vec<Option<(String, u64)>> = self
            .player_paths
            .iter()
            .map(|p| p.map(|(ld, r)| (self.link_names[ld as usize].clone(), r)))
            .collect();
        let node_names = &self.node_names;
        let qoe = crate::metrics::qoe::evaluate(&logs, &paths, |n| node_names[n as usize].clone());
        let link_transmissions = self.links.iter().map(|l| l.tx_packets).sum();
        let mut tables = Vec::new();
        if let Some(c) = self.cwnd.take() {
            tables.push(c.into_table());
        }
        tables.push(std::mem::take(&mut self.goodput).into_table());
        tables.push(std::mem::take(&mut self.queues).into_table());
        if !logs.is_empty() {
            tables.extend(qoe.tables);
        }
        let (traffic, traffic_table) = self.traffic_results();
        tables.extend(traffic_table);
        Ok(SimResult {
            seed: self.seed,
            duration_ns: self.duration_ns,
            events: self.q.processed(),
            link_transmissions,
            unroutable_packets: self.unroutable,
            flows,
            links,
            players: qoe.players,
            has: qoe.has,
            traffic,
            warnings: std::mem::take(&mut self.warnings),
            tables,
        })
    }

    /// Replaces the congestion control of one side of flow `flow`'s connection (before the
    /// run starts): the extension point for algorithms not in the scenario schema.
    pub fn set_congestion_control(
        &mut self,
        flow: usize,
        side: u8,
        cc: Box<dyn CongestionControl>,
    ) {
        self.conns[flow].ends[side as usize].set_congestion_control(cc);
    }

    /// Replaces the cwnd-validation policy of one side of a flow's connection.
    pub fn set_cwnd_validation(&mut self, flow: usize, side: u8, policy: Box<dyn CwndValidation>) {
        self.conns[flow].ends[side as usize].set_cwnd_validation(policy);
    }

    /// Replaces the sending application of flow `flow` (before the run starts).
    pub fn set_app(&mut self, flow: usize, app: Box<dyn App>) {
        if let Some(id) = self.conn_apps[flow][0] {
            self.apps[id as usize] = app;
        }
    }

    /// One endpoint of flow `flow`'s connection (side 0 sends, side 1 receives), for
    /// inspection.
    pub fn endpoint(&self, flow: usize, side: u8) -> &Endpoint {
        &self.conns[flow].ends[side as usize]
    }

    /// Whether link direction `link_dir` computes its departures at enqueue (the scheduled form,
    /// one event per packet) rather than with an end-of-serialisation event (`net::link`).
    pub fn is_scheduled_form(&self, link_dir: usize) -> bool {
        self.links[link_dir].scheduled.is_some()
    }

    /// Index of the link direction called `"from->to"`.
    pub fn link_dir_index(&self, name: &str) -> Option<usize> {
        self.link_names.iter().position(|n| n == name)
    }

    /// Changes the random-loss probability of a link direction from now on (path cuts, loss
    /// bursts).
    pub fn set_link_loss(&mut self, link_dir: usize, p: f64) {
        self.links[link_dir].loss = p.clamp(0.0, 1.0);
    }

    /// Counters of every link direction so far (utilisation relative to the elapsed time).
    pub fn link_summaries(&self) -> Vec<LinkDirSummary> {
        let dur = if self.finished {
            self.duration_ns.max(1)
        } else {
            self.q.now_ns().max(1)
        };
        self.links
            .iter()
            .enumerate()
            .map(|(i, l)| {
                // the scheduled form's counters as of now (`dur` is now or the end)
                let c = l.counters_at(dur);
                LinkDirSummary {
                    name: self.link_names[i].clone(),
                    link: self.link_plan_names[i / 2].clone(),
                    rate_bps: l.rate_bps,
                    delay_ns: l.delay_ns,
                    tx_packets: c.tx_packets,
                    tx_bytes: c.tx_bytes,
                    utilization: c.busy_ns.min(dur) as f64 / dur as f64,
                    enqueued_packets: l.queue.enqueued,
                    dropped_packets: l.queue.dropped,
                    dropped_bytes: l.queue.dropped_bytes,
                    lost_packets: l.lost_packets,
                    max_queue_packets: l.queue.max_pkts,
                    max_queue_bytes: l.queue.max_bytes,
                    sojourn_mean_ns: c.sojourn.mean_ns(),
                    sojourn_p50_ns: c.sojourn.quantile_ns(0.5),
                    sojourn_p95_ns: c.sojourn.quantile_ns(0.95),
                    sojourn_p99_ns: c.sojourn.quantile_ns(0.99),
                    sojourn_max_ns: c.sojourn.max_ns,
                }
            })
            .collect()
    }
}

/// Puts in the scheduled form (`net::link`: departures computed at enqueue, one event per
/// packet) every fixed-rate link direction where it gives the event form's run: not served by a
/// Mahimahi trace nor given a capacity schedule (the rate must not change while packets wait),
/// and without a queue trace or pcap (which record the queue at each end of serialisation).
/// Every queue is a drop-tail FIFO (`QueuePlan`), and random loss is drawn at the far end in
/// pipe order by both forms.
fn use_scheduled_form(plan: &Plan, links: &mut [LinkDir]) {
    let ld = |at: crate::scenario::LinkDirRef| 2 * at.link + at.reverse as usize;
    let mut event_form = vec![false; links.len()];
    for c in &plan.dynamics.capacity {
        event_form[ld(c.at)] = true;
    }
    for r in &plan.trace.queues {
        event_form[ld(*r)] = true;
    }
    for p in &plan.trace.pcaps {
        event_form[ld(p.at)] = true;
    }
    for (l, event) in links.iter_mut().zip(event_form) {
        if !event && l.trace.is_none() {
            l.use_scheduled_form();
        }
    }
}

fn tx_node(c: &Connection, side: usize) -> usize {
    c.ends[side].node() as usize
}

/// The slowest link direction on the path `from` → `to` (its index and rate), the path's
/// bottleneck for a player's utilisation; None when there is no route (`max_hops` guards the
/// walk).
fn slowest_on_path(
    routes: &Routes,
    links: &[LinkDir],
    from: u32,
    to: u32,
    max_hops: usize,
) -> Option<(u32, u64)> {
    let mut at = from;
    let mut slowest: Option<(u32, u64)> = None;
    let mut hops = 0;
    while at != to && hops <= max_hops {
        let ld = routes.next_hop(at, to);
        if ld == NO_ROUTE {
            break;
        }
        let l = &links[ld as usize];
        if slowest.is_none_or(|(_, r)| l.rate_bps < r) {
            slowest = Some((ld, l.rate_bps));
        }
        at = l.to;
        hops += 1;
    }
    slowest
}

/// Builds and runs a plan to its end.
pub fn run_plan(plan: &Plan, opts: &RunOptions) -> Result<SimResult, String> {
    World::new(plan, opts)?.finish()
}

/// Builds both endpoints of connection `conn` between `nodes` = [client, server]. Initial
/// sequence numbers come from the stream "flow:<name>:isn" unless the TCP options fix them;
/// each side's congestion control draws from "flow:<name>:cc:<side>".
fn make_connection(
    seed: u64,
    conn: u32,
    name: &str,
    nodes: [u32; 2],
    server_port: u16,
    tcp: &TcpConfig,
    cc: &CcConfig,
) -> Connection {
    let mut isn_rng = Stream::new(seed, &format!("flow:{name}:isn"));
    let isns = match tcp.isn {
        Some(isn) => [isn, isn],
        None => [isn_rng.next_u32(), isn_rng.next_u32()],
    };
    let client_port = 32768 + (conn as usize % 28232) as u16; // Linux's ephemeral range 32768–60999
    let ports = [client_port, server_port];
    let [client, server] = [0usize, 1].map(|s| {
        let peer = 1 - s;
        Endpoint::new(
            conn,
            s as u8,
            nodes[s],
            nodes[peer],
            ports[s],
            ports[peer],
            tcp.clone(),
            cc.build_seeded(seed, &format!("flow:{name}:cc:{s}")),
            isns[s],
        )
    });
    Connection::new(client, server)
}
