//! The core's benchmark scenarios, without Python: `cargo run --release --example bench [a|b]`.
//! (a) 8 NewReno flows, 8 Mbps, 100 ms RTT, BDP queue, 60 s;
//! (b) 1000 flows on a 10 Gbps / 20 ms RTT dumbbell, BDP queue, 10 s.
//! `haslab bench` runs the same scenarios and also reports peak memory.

use haslab_core::scenario::plan_from_toml;
use haslab_core::{run_plan, RunOptions};

pub fn scenario(case: &str) -> String {
    let (pairs, rate, delay, queue, duration) = match case {
        "a" => (8, "8Mbps", "40ms", "67pkts", "60s"),
        _ => (1000, "10Gbps", "5ms", "16667pkts", "10s"),
    };
    format!(
        r#"
duration = "{duration}"
[dumbbell]
pairs = {pairs}
bottleneck_rate = "{rate}"
bottleneck_delay = "{delay}"
bottleneck_queue = "{queue}"
access_rate = "100Gbps"
access_delay = "5ms"
[[flow]]
name = "f{{i}}"
count = {pairs}
src = "left{{i}}"
dst = "right{{i}}"
app = "bulk"
[trace]
cwnd = false
"#
    )
}

fn main() {
    let cases: Vec<String> = std::env::args().skip(1).collect();
    let cases = if cases.is_empty() {
        vec!["a".to_string(), "b".to_string()]
    } else {
        cases
    };
    for case in cases {
        let plan = plan_from_toml(&scenario(&case)).expect("benchmark scenario");
        let t = std::time::Instant::now();
        let r = run_plan(&plan, &RunOptions::default()).expect("run");
        let wall = t.elapsed().as_secs_f64();
        let goodput: f64 = r
            .flows
            .iter()
            .map(|f| f.bytes_received as f64 * 8.0)
            .sum::<f64>()
            / (r.duration_ns as f64 / 1e9);
        println!(
            "case {case}: wall {wall:.3} s, {} events ({:.2} M/s), {} link transmissions ({:.2} M/s), aggregate goodput {:.1} Mbps",
            r.events,
            r.events as f64 / wall / 1e6,
            r.link_transmissions,
            r.link_transmissions as f64 / wall / 1e6,
            goodput / 1e6
        );
    }
}
