//! HTTP adaptive streaming end to end: players over the simulated TCP on dumbbells. Each test
//! states the property it checks (issue 4's "How it will be checked").

use haslab_core::metrics::qoe::PlayerSummary;
use haslab_core::metrics::{ColumnData, SimResult};
use haslab_core::scenario::plan_from_toml;
use haslab_core::{run_plan, RunOptions};

const S: u64 = 1_000_000_000;

/// `pairs` players (one per dumbbell pair, server left{i} → client right{i}) on a bottleneck of
/// `rate` with 100 ms RTT and a 1-BDP-ish queue.
fn scenario(pairs: usize, rate: &str, duration: &str, player: &str) -> String {
    format!(
        r#"
seed = 1
duration = "{duration}"
[dumbbell]
pairs = {pairs}
bottleneck_rate = "{rate}"
bottleneck_delay = "40ms"
bottleneck_queue = "100pkts"
access_rate = "100Mbps"
access_delay = "5ms"
[[player]]
name = "p{{i}}"
count = {pairs}
client = "right{{i}}"
server = "left{{i}}"
{player}
"#
    )
}

fn run(text: &str) -> SimResult {
    let plan = plan_from_toml(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    run_plan(&plan, &RunOptions::default()).unwrap()
}

fn show(p: &PlayerSummary) -> String {
    format!(
        "{} {}: segs {} avg {:.0} kbps lvl {:.2} stalls {} ({:.1}s) rebuf {:.3} inst {:?} sw {} startup {:?} buf {:.1}s",
        p.name,
        p.algorithm,
        p.segments,
        p.avg_bitrate_bps / 1e3,
        p.avg_level,
        p.stalls,
        p.stall_ns as f64 / 1e9,
        p.rebuffering_ratio,
        p.instability_pct,
        p.switches,
        p.startup_delay_ns.map(|d| d as f64 / 1e9),
        p.avg_buffer_ns / 1e9
    )
}

#[test]
fn smoke() {
    for abr in [
        "rbb",
        "conventional",
        "panda",
        "elastic",
        "festive",
        "bba",
        "bola",
    ] {
        let r = run(&scenario(
            1,
            "43Mbps",
            "60s",
            &format!("abr = \"{abr}\"\nvideo = \"tcphas\""),
        ));
        for p in &r.players {
            println!("{}", show(p));
        }
    }
}

#[test]
fn debug_rbb() {
    let r = run(&scenario(
        1,
        "43Mbps",
        "60s",
        "abr = \"rbb\"\nvideo = \"tcphas\"",
    ));
    let t = r.table("segments").unwrap();
    let get = |c: &str| match t.column(c).unwrap() {
        ColumnData::U64(v) => v.clone(),
        ColumnData::U32(v) => v.iter().map(|&x| x as u64).collect(),
        ColumnData::F64(v) => v.iter().map(|&x| x as u64).collect(),
    };
    let (lv, req, done, bb) = (
        get("level"),
        get("request_ns"),
        get("done_ns"),
        get("buffer_before_ns"),
    );
    for i in 0..lv.len() {
        println!(
            "{i} lvl {} req {:.3} done {:.3} dl {:.3} buf {:.2}",
            lv[i],
            req[i] as f64 / 1e9,
            done[i] as f64 / 1e9,
            (done[i] - req[i]) as f64 / 1e9,
            bb[i] as f64 / 1e9
        );
    }
    println!(
        "{:?}",
        r.flows
            .iter()
            .map(|f| (f.name.clone(), f.retransmitted_segments, f.rto_count))
            .collect::<Vec<_>>()
    );
}
