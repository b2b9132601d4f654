//! The comparison players against published properties, on the Mahimahi traces the project ships
//! (`examples/traces/`, made by `make_traces.py` there), and the session mechanics they need:
//! parallel downloads, first-byte times, abandonment. Every run prints what it measured; a
//! property that does not hold is reported by its test with the numbers.

use haslab_core::metrics::qoe::PlayerSummary;
use haslab_core::metrics::{ColumnData, SimResult, Table};
use haslab_core::scenario::plan_from_toml;
use haslab_core::{run_plan, RunOptions};
use std::path::PathBuf;

fn trace(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/traces")
        .join(name)
        .to_str()
        .unwrap()
        .to_string()
}

/// One player (server → router → client) whose last hop is served by a Mahimahi trace; 40 ms
/// RTT, 100-packet drop-tail queue (as `examples/mahimahi.toml`); the `tcphas` ladder.
fn on_trace(trace_file: &str, duration: &str, player: &str) -> String {
    format!(
        r#"
seed = 1
duration = "{duration}"
[[node]]
name = "server"
[[node]]
name = "router"
[[node]]
name = "client"
[[link]]
a = "server"
b = "router"
rate = "1Gbps"
delay = "10ms"
[[link]]
a = "router"
b = "client"
rate = "1Gbps"
delay = "10ms"
queue = "100pkts"
[[capacity]]
link = "router->client"
mahimahi = "{}"
[[player]]
name = "p"
client = "client"
server = "server"
video = {{ preset = "tcphas", duration = "{duration}" }}
{player}
"#,
        trace(trace_file)
    )
}

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

fn show(p: &PlayerSummary) -> String {
    format!(
        "{:<18} segs {:>3} avg {:>5.0} kbps switches {:>3} stalls {} ({:>5.1} s) startup {:>4.1} s buf {:>4.1} s",
        p.algorithm,
        p.segments,
        p.avg_bitrate_bps / 1e3,
        p.switches,
        p.stalls,
        p.stall_ns as f64 / 1e9,
        p.startup_delay_ns.unwrap_or(0) as f64 / 1e9,
        p.avg_buffer_ns / 1e9
    )
}

/// The MPC paper's linear QoE (Yin et al. 2015, eq. 5), in Mbit/s units, with the weights the
/// MPC players optimise by default: Σ r − λ Σ |Δr| − μ T_rebuffer, λ = 1, μ = top bitrate in
/// Mbit/s (4.256 for `tcphas`), startup excluded, per segment.
fn qoe_mpc(r: &SimResult, p: &PlayerSummary) -> f64 {
    let t = r.table("segments").unwrap();
    let br: Vec<f64> = col(t, "bitrate_bps").iter().map(|b| b / 1e6).collect();
    let sum: f64 = br.iter().sum();
    let smooth: f64 = br.windows(2).map(|w| (w[1] - w[0]).abs()).sum();
    let rebuf = p.stall_ns as f64 / 1e9;
    (sum - smooth - 4.256 * rebuf) / br.len() as f64
}

/// Spiteri et al. (MMSys 2018): BOLA-E's abandonment and insufficient-buffer rule avoid the
/// rebuffering BOLA-BASIC suffers when the network drops sharply under a high-bitrate download.
///
/// **Does not hold here** (ignored; run with `--ignored` to see the numbers): on
/// `stepdown.trace` both stall about 3.5 s when the rate drops from 8 to 0.28 Mbit/s under a
/// top-level download requested with 28 s of buffer (the download takes 31.5 s), and BOLA-E
/// stalls 4 s more at start-up. (1) At the drop BOLA-E does not abandon: Sabre's
/// `check_abandon` scores with the effective buffer B + P, and the placeholder P is 7.85 s
/// (grown by the buffer-cap waits, capped by V_p(υ_M + γp) − B_was = 37.06 − 29.2 s), so even
/// at B = 0 the effective buffer (≈ 7.9 s) keeps the top level's score above every lower
/// level's (unit test `the_placeholder_keeps_a_late_top_level_download`); Sabre does not
/// empty P on a stall. (2) At start-up the estimate of the first 62 kB segment, measured in
/// slow start (4.8 Mbit/s), sends BOLA-E's start-up rule to the top level with 2 s of buffer;
/// the 1 MB download meets slow-start losses in the 100-packet queue and takes 5.9 s (Sabre's
/// start-up has no insufficient-buffer rule).
#[test]
#[ignore = "does not hold here: BOLA-E's placeholder keeps the top level at the drop (see the doc comment)"]
fn bola_e_rebuffers_less_than_bola_basic_on_a_step_down() {
    let mut stall = Vec::new();
    for abr in ["bola", "bola-e"] {
        let r = run(&on_trace(
            "stepdown.trace",
            "120s",
            &format!("abr = \"{abr}\""),
        ));
        let p = &r.players[0];
        let abandoned = r.table("abandons").map_or(0, |t| t.rows());
        println!("{}  abandoned {abandoned}", show(p));
        stall.push(p.stall_ns);
    }
    assert!(
        stall[1] < stall[0],
        "BOLA-E stalled {:.1} s, BOLA-BASIC {:.1} s",
        stall[1] as f64 / 1e9,
        stall[0] as f64 / 1e9
    );
}

/// dash.js's AbandonRequestsRule on the step-down (8 → 0.28 Mbit/s at 40 s): after the drop a
/// download is abandoned, and every abandonment goes to a lower level with fewer than all bytes
/// received. (Which one is abandoned depends on the buffer when the rule looks: in this run the
/// download under way at 40 s completes and a later one, requested once the buffer has run
/// down, is abandoned; the table is printed.)
#[test]
fn dashjs_abandons_requests_on_a_step_down() {
    let r = run(&on_trace(
        "stepdown.trace",
        "120s",
        "abr = \"dashjs-dynamic\"",
    ));
    println!("{}", show(&r.players[0]));
    let t = r.table("abandons").expect("an abandons table");
    let (lv, to, loaded, total, at, req) = (
        col(t, "level"),
        col(t, "to_level"),
        col(t, "bytes_loaded"),
        col(t, "bytes_total"),
        col(t, "abandon_ns"),
        col(t, "request_ns"),
    );
    for i in 0..lv.len() {
        println!(
            "requested at {:.2} s, abandoned at {:.2} s: level {} -> {}, {} of {} bytes",
            req[i] / 1e9,
            at[i] / 1e9,
            lv[i],
            to[i],
            loaded[i],
            total[i]
        );
        assert!(to[i] < lv[i] && loaded[i] < total[i]);
    }
    assert!(
        (0..lv.len()).any(|i| at[i] > 40e9),
        "nothing abandoned after the drop"
    );
}

/// Yin et al. (SIGCOMM 2015, §7): MPC (RobustMPC and FastMPC) achieves a higher QoE than
/// rate-based adaptation under varying throughput. Compared with dash.js's ThroughputRule and
/// the QoE paper's conventional player, on the variable trace.
#[test]
fn mpc_beats_throughput_based_players_on_a_variable_trace() {
    let mut q = Vec::new();
    for abr in [
        "robustmpc",
        "fastmpc",
        "dashjs-throughput",
        "conventional",
        "dashjs-dynamic",
        "bola-e",
    ] {
        let r = run(&on_trace(
            "variable.trace",
            "180s",
            &format!("abr = \"{abr}\""),
        ));
        let p = &r.players[0];
        let v = qoe_mpc(&r, p);
        println!("{}  QoE {v:.3}", show(p));
        q.push((abr, v));
    }
    let robust = q[0].1;
    let fast = q[1].1;
    for &(abr, v) in &q[2..4] {
        assert!(robust > v, "RobustMPC {robust:.3} ≤ {abr} {v:.3}");
        assert!(fast > v, "FastMPC {fast:.3} ≤ {abr} {v:.3}");
    }
}

/// Spiteri et al. (TOMM 2019) and the dash.js DYNAMIC strategy: BOLA in steady state avoids the
/// oscillations of the throughput rule. On the variable trace DYNAMIC switches less often
/// than THROUGHPUT.
#[test]
fn dashjs_dynamic_switches_less_than_dashjs_throughput_on_a_variable_trace() {
    let mut sw = Vec::new();
    for abr in ["dashjs-throughput", "dashjs-dynamic"] {
        let r = run(&on_trace(
            "variable.trace",
            "180s",
            &format!("abr = \"{abr}\""),
        ));
        let p = &r.players[0];
        println!("{}", show(p));
        sw.push(p.switches);
    }
    assert!(sw[1] < sw[0], "dynamic {} vs throughput {}", sw[1], sw[0]);
}

/// dash.js's ThroughputRule picks the highest level at most 0.9 × the measured throughput,
/// discounted by latency/τ: alone on a constant 12 Mbit/s trace (Mahimahi `12mbps.trace`) it
/// settles at the top level (4256 kbit/s ≤ 0.9 × ~11.4 Mbit/s × (1 − latency/2 s)), and on the
/// step-down trace it ends at the lowest level after the drop.
#[test]
fn dashjs_throughput_follows_the_safe_throughput() {
    let r = run(&on_trace(
        "12mbps.trace",
        "60s",
        "abr = \"dashjs-throughput\"",
    ));
    let t = r.table("segments").unwrap();
    let (lv, req) = (col(t, "level"), col(t, "request_ns"));
    println!("{}", show(&r.players[0]));
    let late: Vec<f64> = (0..lv.len())
        .filter(|&i| req[i] >= 20e9)
        .map(|i| lv[i])
        .collect();
    assert!(
        !late.is_empty() && late.iter().all(|&l| l == 4.0),
        "{late:?}"
    );
    let r = run(&on_trace(
        "stepdown.trace",
        "120s",
        "abr = \"dashjs-throughput\"",
    ));
    let t = r.table("segments").unwrap();
    let (lv, req) = (col(t, "level"), col(t, "request_ns"));
    println!("{}", show(&r.players[0]));
    let after: Vec<f64> = (0..lv.len())
        .filter(|&i| req[i] >= 80e9)
        .map(|i| lv[i])
        .collect();
    assert!(
        !after.is_empty() && after.iter().all(|&l| l == 0.0),
        "{after:?}"
    );
}

/// The `parallel` policy keeps N requests in flight at once.
#[test]
fn parallel_connections_download_at_the_same_time() {
    let text = on_trace(
        "12mbps.trace",
        "40s",
        "abr = \"bba\"\nconnection = \"parallel\"\nconnections = 3\nbuffer = \"30s\"",
    );
    let r = run(&text);
    let t = r.table("segments").unwrap();
    let (req, done, flow, idx) = (
        col(t, "request_ns"),
        col(t, "done_ns"),
        col(t, "flow"),
        col(t, "index"),
    );
    // the most requests in flight at any request time
    let mut most = 0;
    for i in 0..req.len() {
        let n = (0..req.len())
            .filter(|&j| req[j] <= req[i] && done[j] > req[i])
            .count();
        most = most.max(n);
    }
    println!("{}  most in flight {most}", show(&r.players[0]));
    assert_eq!(most, 3, "3 connections, one request each");
    // every segment once, over 3 different connections
    let mut seen: Vec<u64> = idx.iter().map(|&x| x as u64).collect();
    seen.sort_unstable();
    seen.dedup();
    assert_eq!(seen.len(), idx.len());
    let mut flows: Vec<u64> = flow.iter().map(|&x| x as u64).collect();
    flows.sort_unstable();
    flows.dedup();
    assert_eq!(flows.len(), 3);
    // conservation of media with segments arriving out of order
    let p = &r.players[0];
    assert_eq!(
        p.downloaded_ns,
        p.played_ns + p.buffered_ns + p.discarded_ns
    );
}

/// Every segment's first byte comes after its request and before its last byte, at least one
/// round trip after the request (40 ms here), and on a persistent connection the time to
/// first byte is about one RTT when the link is idle.
#[test]
fn first_byte_times_lie_between_request_and_completion() {
    let r = run(&on_trace("12mbps.trace", "30s", "abr = \"bba\""));
    let t = r.table("segments").unwrap();
    let (req, fb, done, ttfb) = (
        col(t, "request_ns"),
        col(t, "first_byte_ns"),
        col(t, "done_ns"),
        col(t, "ttfb_ns"),
    );
    for i in 0..req.len() {
        assert!(req[i] <= fb[i] && fb[i] <= done[i], "segment {i}");
        assert_eq!(ttfb[i], fb[i] - req[i]);
        // the GET needs half an RTT up and the response half an RTT down: ≥ 40 ms
        assert!(ttfb[i] >= 40e6, "segment {i}: {} ms", ttfb[i] / 1e6);
    }
    // the first request opens the connection: handshake + GET ≈ 2 RTT
    assert!(ttfb[0] >= 80e6, "{}", ttfb[0] / 1e6);
    // later requests go out on the idle persistent connection (one player, one download at a
    // time): one RTT over the 1 Gbit/s links, plus the wait of the response's first packet for
    // a delivery opportunity of the router→client trace (12 Mbit/s: one 1500-byte packet per
    // ms), at most 1 ms
    for (i, &t) in ttfb.iter().enumerate().skip(1) {
        assert!(t <= 41.1e6, "segment {i}: {} ms", t / 1e6);
    }
}
