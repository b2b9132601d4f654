use haslab_core::scenario::plan_from_toml;
use haslab_core::{run_plan, RunOptions};

#[test]
fn smoke() {
    let plan = plan_from_toml(r#"
seed = 1
duration = "20s"
[dumbbell]
pairs = 1
bottleneck_rate = "8Mbps"
bottleneck_delay = "40ms"
bottleneck_queue = "67pkts"
access_rate = "100Mbps"
access_delay = "5ms"
[[flow]]
src = "left0"
dst = "right0"
app = "bulk"
[trace]
queues = ["r1->r2"]
"#).unwrap();
    let t = std::time::Instant::now();
    let r = run_plan(&plan, &RunOptions::default()).unwrap();
    eprintln!("wall {:?} events {}", t.elapsed(), r.events);
    eprintln!("{:#?}", r.flows);
    for l in &r.links { if l.tx_packets > 0 { eprintln!("{} util {:.3} drops {} max_q {}", l.name, l.utilization, l.dropped_packets, l.max_queue_packets); } }
}
