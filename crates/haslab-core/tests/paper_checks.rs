//! The papers' own claims about their server-side transports, each asserted as a property on
//! the paper's preset network with the named transports, and printed with its numbers
//! (`cargo test --test paper_checks -- --nocapture`).
//!
//! - TcpHas paper §IV-C/D (Figs. 2–3): 8 RBB players on `tcphas-home`;
//! - Enhancing-TCP paper §4.1 (Fig. 5): one player on `enhancing-dumbbell`, standard CUBIC vs
//!   enhanced (novel pacing + RTL), with RACK-TLP as a third line;
//! - newCWV paper §4 (Figs. 3–5): one persistent DASH player on `newcwv-single`, NewReno vs
//!   newCWV vs newCWV + pacing.
//!
//! Runs are kept to the papers' durations where they are short (180 s for TcpHas) and cut
//! where they are long (600 s → 120–200 s); every test runs in a few seconds with the test
//! profile (opt-level 2).

use haslab_core::metrics::{ColumnData, LinkDirSummary, SimResult, Table};
use haslab_core::scenario::plan_from_toml;
use haslab_core::{run_plan, RunOptions};

const S: u64 = 1_000_000_000;

fn run(text: &str) -> SimResult {
    let plan = plan_from_toml(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    run_plan(&plan, &RunOptions::default()).unwrap()
}

fn col(t: &Table, c: &str) -> Vec<f64> {
    match t.column(c).unwrap_or_else(|| panic!("no column {c}")) {
        ColumnData::U64(v) => v.iter().map(|&x| x as f64).collect(),
        ColumnData::U32(v) => v.iter().map(|&x| x as f64).collect(),
        ColumnData::F64(v) => v.clone(),
    }
}

fn link<'a>(r: &'a SimResult, name: &str) -> &'a LinkDirSummary {
    r.links
        .iter()
        .find(|l| l.name == name)
        .unwrap_or_else(|| panic!("no link direction {name}"))
}

// ---------------------------------------------------------------------------------------------
// TcpHas

/// What the TcpHas paper measures for one run of N players over K seconds.
#[derive(Debug)]
struct HasRun {
    /// share of steady-state seconds at the optimal level n° 2 (928 kbps), mean over players
    at_level2: f64,
    /// level switches between consecutive segments in the steady state, mean per player
    switches: f64,
    /// the paper's instability (C2: % of seconds whose level differs from the previous
    /// second's), over the whole run, mean over players
    instability_pct: f64,
    /// the same over the steady state only
    steady_instability_pct: f64,
    /// mean queuing delay at the bottleneck (DSLAM → HG), ms
    queue_ms: f64,
    /// packets dropped at the bottleneck per second (the paper's DropPkt(K) without its ×100)
    drops_per_s: f64,
}

/// 8 RBB players with the TcpHas ladder on `tcphas-home` (8 Mbps, 1-BDP queue, 100 ms RTT,
/// 40 Mbps PPBP), `cc` on every server, K = 180 s. The steady state starts at 60 s.
fn tcphas_home(cc: &str, seed: u64) -> HasRun {
    let k = 180;
    let text = format!(
        "seed = {seed}\nduration = \"{k}s\"\n[preset]\nname = \"tcphas-home\"\nclients = 8\n\
         player = {{ abr = \"rbb\", video = \"tcphas\", cc = \"{cc}\" }}\n"
    );
    let r = run(&text);
    let steady = 60 * S;
    let t = r.table("players").unwrap();
    let (time, pl, lv) = (col(t, "time_ns"), col(t, "player"), col(t, "level"));
    let n = r.players.len();
    assert_eq!(n, 8);
    let (mut at2, mut inst) = (0.0, 0.0);
    for p in 0..n {
        let levels: Vec<u32> = (0..time.len())
            .filter(|&i| pl[i] as usize == p && time[i] >= steady as f64)
            .map(|i| lv[i] as u32)
            .collect();
        at2 += levels.iter().filter(|&&l| l == 2).count() as f64 / levels.len() as f64;
        if std::env::var("PAPER_DEBUG").is_ok() {
            let hist: Vec<usize> = (0..5)
                .map(|k| levels.iter().filter(|&&l| l == k).count())
                .collect();
            println!("{cc} seed {seed} player {p}: steady levels histogram {hist:?}");
        }
        inst += haslab_core::metrics::qoe::instability_pct(&levels).unwrap();
    }
    let seg = r.table("segments").unwrap();
    let (sp, sl, sr) = (
        col(seg, "player"),
        col(seg, "level"),
        col(seg, "request_ns"),
    );
    let mut switches = 0.0;
    for p in 0..n {
        let lv: Vec<f64> = (0..sp.len())
            .filter(|&i| sp[i] as usize == p && sr[i] >= steady as f64)
            .map(|i| sl[i])
            .collect();
        switches += lv.windows(2).filter(|w| w[0] != w[1]).count() as f64;
    }
    let bn = link(&r, "DSLAM->HG");
    HasRun {
        at_level2: at2 / n as f64,
        switches: switches / n as f64,
        instability_pct: r
            .players
            .iter()
            .map(|p| p.instability_pct.unwrap())
            .sum::<f64>()
            / n as f64,
        steady_instability_pct: inst / n as f64,
        queue_ms: bn.sojourn_mean_ns / 1e6,
        drops_per_s: bn.dropped_packets as f64 / k as f64,
    }
}

/// TcpHas paper §IV-C/D: with TcpHas on the servers the 8 players switch far less than with
/// Westwood+ (Fig. 2) — asserted: fewer than half the switches per player, and a lower
/// instability. The paper's other claims here (most of the steady state at the optimal level
/// n° 2, 928 kbps; queuing delay and drop rate below Westwood+'s and TIBET's, Fig. 3b, 3c) are
/// printed, not asserted; the comments below say why. Two seeds each.
#[test]
fn tcphas_players_switch_less_than_westwood_and_tcphas_drops_less() {
    let mut rows = Vec::new();
    for cc in ["westwood", "tibet", "trickle", "tcphas"] {
        let runs: Vec<HasRun> = [1, 2].iter().map(|&s| tcphas_home(cc, s)).collect();
        let m = |f: fn(&HasRun) -> f64| runs.iter().map(f).sum::<f64>() / runs.len() as f64;
        rows.push((
            cc,
            m(|r| r.at_level2),
            m(|r| r.switches),
            m(|r| r.instability_pct),
            m(|r| r.steady_instability_pct),
            m(|r| r.queue_ms),
            m(|r| r.drops_per_s),
        ));
    }
    println!("cc        at n°2  switches/player  instability %  (steady)  queue ms  drops/s");
    for (cc, a, sw, i, si, q, d) in &rows {
        println!(
            "{cc:9} {:5.0} % {sw:16.1} {i:14.1} {si:9.1} {q:9.1} {d:8.2}",
            a * 100.0
        );
    }
    let get = |name: &str| *rows.iter().find(|r| r.0 == name).unwrap();
    let (w, t, h) = (get("westwood"), get("tibet"), get("tcphas"));
    // §IV-C "TcpHas player is stable at the optimal quality level" and §IV-D "less than 4 %"
    // are printed, not asserted: with RBB's buffering state asking for the lowest level (the
    // paper's §IV-C, docs/has.md) TcpHas's players lock at different levels (a flow shaped at
    // level n cannot reach level n + 1, docs/algorithms/tcphas.md), about half of the
    // player-seconds at n° 2, and `haslab reproduce tcphas-fig2/fig3` report both claims as not
    // holding with that reason.
    assert!(
        h.2 < 0.5 * w.2,
        "switches: TcpHas {:.1} vs Westwood+ {:.1}",
        h.2,
        w.2
    );
    assert!(
        h.3 < w.3,
        "instability: TcpHas {:.1} vs Westwood+ {:.1}",
        h.3,
        w.3
    );
    // Fig. 3b (TcpHas's queuing delay about half Westwood+'s) does not hold here and is not
    // asserted: Algorithm 7 sets cwnd = shaping rate × RTT̂ on the first ACK after a loss
    // (ssthresh = rate × RTT_min is always below it), so a loss does not drain the queue while
    // the shaped rates (8 × 1.2 × 928 kbps > 8 Mbps when all players are ON) exceed the
    // bottleneck; docs/algorithms/tcphas.md.
    // against TIBET the drop rates are close and their order is not stable across sender
    // fixes (TcpHas 6.41/s vs TIBET 6.10/s on the current sender): printed, not asserted
    println!(
        "drops/s: TcpHas {:.2}, Westwood+ {:.2}, TIBET {:.2}",
        h.6, w.6, t.6
    );
    assert!(
        h.6 < w.6,
        "drops/s: TcpHas {:.2}, Westwood+ {:.2}",
        h.6,
        w.6
    );
}

// ---------------------------------------------------------------------------------------------
// Enhancing TCP: novel pacing + RTL

/// One player run of the Enhancing-TCP paper's single-client network.
#[derive(Debug, Clone, Copy, Default)]
struct EnhRun {
    /// the paper's HAS throughput: mean of the chunks' size / download time, Mbps
    has_mbps: f64,
    rtos: f64,
    fast_recoveries: f64,
    retransmits: f64,
    tlp_probes: f64,
    rtl_dummies: f64,
    paced_chunks: f64,
    chunks: f64,
    /// packets dropped by the 30 KB queues (server port and bottleneck)
    queue_drops: f64,
}

/// `transport` on the server of `enhancing-dumbbell` (10 Mbps, 30 KB ports, 1 % loss) at
/// `rtt`, one player fetching 1000 KB chunks (a one-level 4 Mbps video of 2 s segments, the
/// paper's fifth chunk size) for `secs` seconds.
fn enhancing(transport: &str, rtt_ms: u64, seed: u64, secs: u64) -> EnhRun {
    let text = format!(
        "seed = {seed}\nduration = \"{secs}s\"\n[preset]\nname = \"enhancing-dumbbell\"\nrtt = \"{rtt_ms}ms\"\n\
         player = {{ abr = \"conventional\", video = {{ bitrates = [\"4Mbps\"], segment = \"2s\", duration = \"600s\" }}, transport = \"{transport}\" }}\n"
    );
    let r = run(&text);
    let seg = r.table("segments").unwrap();
    let thr = col(seg, "throughput_bps");
    let f = r
        .flows
        .iter()
        .find(|f| f.src == "server")
        .expect("the player's flow");
    EnhRun {
        has_mbps: thr.iter().sum::<f64>() / thr.len() as f64 / 1e6,
        rtos: f.loss.rto_count as f64,
        fast_recoveries: f.loss.fast_recovery_count as f64,
        retransmits: f.transfer.retransmitted_segments as f64,
        tlp_probes: f.loss.tlp_probes as f64,
        rtl_dummies: f.loss.rtl_dummies as f64,
        paced_chunks: f.loss.novel_paced_chunks as f64,
        chunks: thr.len() as f64,
        queue_drops: (link(&r, "server->switch1").dropped_packets
            + link(&r, "switch1->switch2").dropped_packets) as f64,
    }
}

fn mean_runs(runs: &[EnhRun]) -> EnhRun {
    let n = runs.len() as f64;
    let m = |f: fn(&EnhRun) -> f64| runs.iter().map(f).sum::<f64>() / n;
    EnhRun {
        has_mbps: m(|r| r.has_mbps),
        rtos: m(|r| r.rtos),
        fast_recoveries: m(|r| r.fast_recoveries),
        retransmits: m(|r| r.retransmits),
        tlp_probes: m(|r| r.tlp_probes),
        rtl_dummies: m(|r| r.rtl_dummies),
        paced_chunks: m(|r| r.paced_chunks),
        chunks: m(|r| r.chunks),
        queue_drops: m(|r| r.queue_drops),
    }
}

/// Enhancing-TCP paper §4.1 (Fig. 5): on the single-client network (30 KB buffer, 1 % loss),
/// enhanced TCP (CUBIC + novel pacing + RTL) has fewer queue drops than standard CUBIC at 100
/// and 200 ms RTT (asserted), and runs its mechanisms (RTL dummies and paced chunks, asserted;
/// RACK-TLP, the third line, none). The paper's fewer RTOs and higher HAS throughput at 200 ms
/// (2.4×) are printed, not asserted: at 1 % random loss the throughput is loss-limited and RTOs
/// are a small share of the loss events (docs/algorithms/enhancing-tcp.md; `haslab reproduce
/// enhancing-fig5` reports them). Prints the RTL-vs-TLP table of the doc. 3 seeds × 300 s.
#[test]
fn enhanced_tcp_drops_fewer_packets_than_standard_cubic() {
    println!("| RTT | transport | HAS throughput (Mbps) | chunks | RTOs | fast recoveries | retransmitted | queue drops | TLP probes | RTL dummies | paced chunks |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    for rtt in [100, 200] {
        let mut res = Vec::new();
        for t in ["cubic-standard", "cubic-enhanced", "cubic-tlp"] {
            let runs: Vec<EnhRun> = (1..=3).map(|s| enhancing(t, rtt, s, 300)).collect();
            let m = mean_runs(&runs);
            println!(
                "| {rtt} ms | {t} | {:.2} | {:.0} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} |",
                m.has_mbps,
                m.chunks,
                m.rtos,
                m.fast_recoveries,
                m.retransmits,
                m.queue_drops,
                m.tlp_probes,
                m.rtl_dummies,
                m.paced_chunks
            );
            res.push(m);
        }
        let (std, enh, tlp) = (res[0], res[1], res[2]);
        // with NS-2's TCP defaults (IW 2, an ACK per segment) and 1 % loss on the data, standard
        // and enhanced CUBIC take the same 2-4 RTOs per 300 s: the paper's "fewer RTOs" and its
        // throughput factors are reported by `haslab reproduce enhancing-fig5` (both loss
        // directions), not asserted here; the novel pacing's effect on the burst drops is
        assert!(
            enh.queue_drops < std.queue_drops,
            "{rtt} ms: queue drops enhanced {:.1} vs standard {:.1}",
            enh.queue_drops,
            std.queue_drops
        );
        assert!(enh.rtl_dummies > 0.0 && enh.paced_chunks > 0.0);
        assert!(tlp.rtl_dummies == 0.0 && tlp.paced_chunks == 0.0);
    }
}

// ---------------------------------------------------------------------------------------------
// newCWV + pacing

/// One DASH player on `newcwv-single` (1 Mbps, 200 ms RTT, 30 KB queue) like the paper's VLC:
/// four persistent connections used in rotation, the refill policy (30 s buffer, request again
/// when drained by a third), RBB's rate rule from the second segment on (`buffering =
/// "estimate"`: the newCWV paper gives VLC no lowest-level buffering rule; the lowest-level rule
/// is the TcpHas paper's), `transport` on the server, `secs` seconds. Returns (cwnd before each OFF period, cwnd at the first send
/// after it, bottleneck drops per second).
/// The newCWV paper's test bed hosts (§3: Linux, 3.12's pacing): Linux 3.x defaults under each
/// transport (python/haslab/reproduce/newcwv.py `LINUX_STACK`).
const LINUX_3_STACK: &str = "[defaults.tcp]\nsack = true\nrecovery = \"prr\"\n\
    prr_variant = \"linux-3\"\ntlp = true\ndelayed_ack = \"linux-3\"\ncwnd_growth = \"linux-3\"\n";

fn newcwv_single(transport: &str, seed: u64, secs: u64, stack: &str) -> (Vec<u32>, Vec<u32>, f64) {
    let text = format!(
        "seed = {seed}\nduration = \"{secs}s\"\n{stack}[preset]\nname = \"newcwv-single\"\n\
         player = {{ abr = {{ algorithm = \"rbb\", buffering = \"estimate\" }}, video = \"newcwv\", refill = \"20s\", connection = \"rotate\", connections = 4, transport = \"{transport}\" }}\n"
    );
    let r = run(&text);
    let seg = r.table("segments").unwrap();
    let (req, done, flow) = (
        col(seg, "request_ns"),
        col(seg, "done_ns"),
        col(seg, "flow"),
    );
    if std::env::var("PAPER_DEBUG").is_ok() {
        let (lv, ba) = (col(seg, "level"), col(seg, "buffer_after_ns"));
        for i in 0..req.len() {
            println!(
                "{transport} seg {i}: req {:.1} s done {:.1} s level {} buffer {:.1} s",
                req[i] / 1e9,
                done[i] / 1e9,
                lv[i],
                ba[i] / 1e9
            );
        }
    }
    let cw = r.table("cwnd").unwrap();
    let (ct, cf, cc) = (col(cw, "time_ns"), col(cw, "flow"), col(cw, "cwnd_pkts"));
    let (mut before, mut after) = (vec![], vec![]);
    for i in 0..req.len() {
        // an OFF period of this segment's connection: its previous segment ended more than 2 s
        // before this request
        let f = flow[i];
        let Some(prev) = (0..i).rfind(|&j| flow[j] == f) else {
            continue;
        };
        if req[i] - done[prev] < 2e9 {
            continue;
        }
        let last_before = (0..ct.len()).rfind(|&j| cf[j] == f && ct[j] <= req[i]);
        // the request reaches the server half an RTT later; the restart happens at its
        // first send: the smallest cwnd within one RTT of the request
        let first_after = (0..ct.len())
            .filter(|&j| cf[j] == f && ct[j] > req[i] && ct[j] <= req[i] + 0.3e9)
            .map(|j| cc[j] as u32)
            .min();
        if let Some(b) = last_before {
            before.push(cc[b] as u32);
            after.push(first_after.unwrap_or(cc[b] as u32));
        }
    }
    let bn = link(&r, "router1->router2");
    (before, after, bn.dropped_packets as f64 / secs as f64)
}

fn median(v: &[u32]) -> u32 {
    let mut v = v.to_vec();
    v.sort_unstable();
    v.get(v.len() / 2).copied().unwrap_or(0)
}

/// newCWV paper §4 (Figs. 3 and 5): across the OFF periods of a persistent DASH connection
/// NewReno's cwnd collapses (RFC 5681 and Linux restarts) while newCWV keeps it; and newCWV with
/// pacing at cwnd/RTT loses fewer packets per second than newCWV without pacing. 200 s runs,
/// 2 seeds, on the test bed's Linux 3.x stack and on haslab's defaults (no SACK).
#[test]
fn newcwv_keeps_cwnd_across_off_periods_and_pacing_cuts_its_losses() {
    for stack in [LINUX_3_STACK, ""] {
        newcwv_claims_on(stack);
    }
}

fn newcwv_claims_on(stack: &str) {
    let mut rows = Vec::new();
    println!("stack: {stack:?}");
    for t in ["newreno-rfc5681", "newreno-linux", "newcwv", "newcwv-paced"] {
        let (mut b, mut a, mut d) = (vec![], vec![], 0.0);
        for seed in [1, 2] {
            let (bb, aa, dd) = newcwv_single(t, seed, 200, stack);
            b.extend(bb);
            a.extend(aa);
            d += dd / 2.0;
        }
        println!(
            "{t:16} OFF periods {:3}  median cwnd before {:3}  after {:3}  drops/s {d:.3}",
            b.len(),
            median(&b),
            median(&a)
        );
        rows.push((t, b, a, d));
    }
    for (t, b, a, _) in &rows {
        assert!(b.len() >= 4, "{t}: only {} OFF periods", b.len());
        let kept = a.iter().zip(b).filter(|(a, b)| **a >= **b).count() as f64 / b.len() as f64;
        if t.starts_with("newcwv") {
            assert!(
                kept > 0.8,
                "{t} keeps cwnd after {:.0} % of OFF periods",
                kept * 100.0
            );
        } else {
            // restart to (at most) the initial window, 10 packets
            assert!(
                median(a) <= 10 && median(a) * 2 <= median(b),
                "{t}: cwnd {} before, {} after",
                median(b),
                median(a)
            );
        }
    }
    let drops = |n: &str| rows.iter().find(|r| r.0 == n).unwrap().3;
    assert!(
        drops("newcwv-paced") < drops("newcwv"),
        "drops/s: paced {:.3} vs unpaced {:.3}",
        drops("newcwv-paced"),
        drops("newcwv")
    );
}
