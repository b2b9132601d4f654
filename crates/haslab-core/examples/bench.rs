//! The core's benchmark scenarios, without Python: `cargo run --release --example bench [a|b]`.
//! (a) 8 NewReno flows, 8 Mbps, 100 ms RTT, BDP queue, 60 s;
//! (b) 1000 flows on a 10 Gbps / 20 ms RTT dumbbell, BDP queue, 10 s.
//! `haslab bench` runs the same scenarios and also reports peak memory.
//!
//! Congestion control:
//! - `bench a --cc cubic` runs case (a) (or b) with another algorithm (any scenario name);
//! - `bench --cc-all [--reps N]` runs case (a) with every algorithm, N times each (default 15),
//!   and prints the best wall time of each relative to NewReno's (the bar: at most
//!   1.5×). The runs are interleaved (one of each algorithm per repetition) so that a change of
//!   machine load affects all algorithms alike.
//! - `--event-form` serves every fixed-rate link direction with an end-of-serialisation event
//!   per packet (the scheduled form's departures computed at enqueue are the default where
//!   they apply: `net::link`), which gives the same run with more events.
//! - `bench --file SCENARIO.toml` runs any scenario file once (with its own traces), which is
//!   the convenient form for profiling a paper's setting (`perf record -g`).
//! - `bench --setup N [--reps R]` builds `haslab bench --scale N`'s scenario (N NewReno flows on a
//!   dumbbell of max(N/1000, 10) Gbps) without running it and prints the time and memory of each
//!   part of the set-up (parsing, validation into a plan, building the world) and of the plan's
//!   description (what `sim.plan` and `haslab describe` build; `--no-describe` leaves it out,
//!   e.g. for `perf record`).

use haslab_core::scenario::{plan_from_json, plan_from_toml, GeneratorPlan};
use haslab_core::tcp::cc::CcConfig;
use haslab_core::{run_plan, RunOptions};

/// The scenarios of `haslab bench` (python/haslab/bench.py, `Case.scenario`): one NewReno flow
/// per host pair, 1/10 of the one-way delay on each access link, a one-BDP drop-tail bottleneck
/// queue in bytes, seed 1.
pub fn scenario(case: &str, cc: &str) -> String {
    // (pairs, bottleneck rate, bottleneck delay, queue, access rate, access delay, duration)
    let (pairs, rate, delay, queue, access_rate, access_delay, duration) = match case {
        // 100 ms RTT: 2 × (5 + 40 + 5) ms; BDP 8 Mbps × 100 ms = 100,000 B
        "a" => (8, "8Mbps", "40ms", "100000B", "100Mbps", "5ms", "60s"),
        // 20 ms RTT: 2 × (1 + 8 + 1) ms; BDP 10 Gbps × 20 ms = 25,000,000 B
        _ => (1000, "10Gbps", "8ms", "25000000B", "1Gbps", "1ms", "10s"),
    };
    format!(
        r#"
seed = 1
duration = "{duration}"
[dumbbell]
pairs = {pairs}
bottleneck_rate = "{rate}"
bottleneck_delay = "{delay}"
bottleneck_queue = "{queue}"
access_rate = "{access_rate}"
access_delay = "{access_delay}"
[[flow]]
name = "f{{i}}"
count = {pairs}
src = "left{{i}}"
dst = "right{{i}}"
app = "bulk"
cc = "{cc}"
[trace]
cwnd = false
"#
    )
}

/// `--event-form`: every fixed-rate link direction with an end-of-serialisation event per
/// packet (`RunOptions::event_form_links`), for comparing with the scheduled form.
static EVENT_FORM: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

struct Run {
    wall: f64,
    events: u64,
    link_transmissions: u64,
    goodput_bps: f64,
}

fn run(case: &str, cc: &str) -> Run {
    run_toml(&scenario(case, cc))
}

fn run_toml(text: &str) -> Run {
    run_toml_with(text, false)
}

/// Runs a scenario; `closed_form` puts every datagram generator's private links in closed form
/// (`private_links = "closed-form"`, also for generators a preset adds).
fn run_toml_with(text: &str, closed_form: bool) -> Run {
    // a JSON scenario (as `haslab bench --vs-ns3` writes) starts with '{'; TOML cannot
    let parsed = if text.trim_start().starts_with('{') {
        plan_from_json(text)
    } else {
        plan_from_toml(text)
    };
    let mut plan = match parsed {
        Ok(p) => p,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    if closed_form {
        for t in &mut plan.traffic {
            t.closed_form_private_links = !matches!(t.kind, GeneratorPlan::Web { .. });
        }
    }
    let opts = RunOptions {
        event_form_links: EVENT_FORM.load(std::sync::atomic::Ordering::Relaxed),
        ..Default::default()
    };
    let t = std::time::Instant::now();
    let r = run_plan(&plan, &opts).expect("run");
    let wall = t.elapsed().as_secs_f64();
    let goodput_bps = r
        .flows
        .iter()
        .map(|f| f.transfer.bytes_received as f64 * 8.0)
        .sum::<f64>()
        / (r.duration_ns as f64 / 1e9);
    Run {
        wall,
        events: r.events,
        link_transmissions: r.link_transmissions,
        goodput_bps,
    }
}

/// `haslab bench --scale N`'s scenario (python/haslab/bench.py), as JSON.
fn scale_scenario(pairs: u64) -> String {
    let rate_bps = (pairs / 1000).max(10) as f64 * 1e9;
    let bdp_bytes = (rate_bps * 0.020 / 8.0) as u64;
    format!(
        r#"{{"seed": 1, "duration": "0.5s",
 "dumbbell": {{"pairs": {pairs}, "bottleneck_rate": "{}Gbps", "bottleneck_delay": "8ms",
   "bottleneck_queue": "{bdp_bytes}B", "access_rate": "1Gbps", "access_delay": "1ms"}},
 "flow": [{{"name": "f{{i}}", "count": {pairs}, "src": "left{{i}}", "dst": "right{{i}}",
   "app": "bulk", "cc": "newreno"}}],
 "trace": {{"cwnd": false, "queues": [], "pcap": []}}}}"#,
        rate_bps / 1e9
    )
}

/// This process's resident memory, MiB (Linux; 0 elsewhere).
fn rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<f64>().ok())
        .map_or(0.0, |pages| pages * 4096.0 / 1048576.0)
}

/// Times the parts of the set-up of the scale scenario with `pairs` flows, best of `reps`.
fn setup(pairs: u64, reps: usize, with_description: bool) {
    use haslab_core::scenario::{describe, parse_json};
    use haslab_core::world::World;
    let text = scale_scenario(pairs);
    let mut best = [f64::INFINITY; 4];
    let mut rss = [0.0; 4];
    for _ in 0..reps {
        let base = rss_mib();
        let t = std::time::Instant::now();
        let scenario = parse_json(&text).expect("the scale scenario parses");
        let t1 = t.elapsed().as_secs_f64();
        let plan = scenario.to_plan().expect("the scale scenario is valid");
        let t2 = t.elapsed().as_secs_f64();
        let with_plan = rss_mib();
        let world = World::new(&plan, &RunOptions::default()).expect("the world builds");
        let t3 = t.elapsed().as_secs_f64();
        let with_world = rss_mib();
        let description = with_description.then(|| describe(&plan));
        let t4 = t.elapsed().as_secs_f64();
        rss = [
            with_plan - base,
            with_world - with_plan,
            rss_mib() - with_world,
            0.0,
        ];
        drop((world, description, plan, scenario));
        for (b, x) in best.iter_mut().zip([t1, t2 - t1, t3 - t2, t4 - t3]) {
            *b = b.min(x);
        }
    }
    let [parse, plan, world, describe] = best;
    let per_flow = |mib: f64| mib * 1048576.0 / pairs as f64 / 1000.0;
    println!(
        "set-up of {pairs} flows (best of {reps}): parse {parse:.3} s, plan {plan:.3} s \
         (+{:.0} MiB, {:.1} kB/flow), world {world:.3} s (+{:.0} MiB, {:.1} kB/flow); set-up \
         {:.3} s. The plan's description (`sim.plan`): {describe:.3} s (+{:.0} MiB, {:.1} kB/flow)",
        rss[0],
        per_flow(rss[0]),
        rss[1],
        per_flow(rss[1]),
        parse + plan + world,
        rss[2],
        per_flow(rss[2]),
    );
}

fn usage() -> ! {
    eprintln!(
        "usage: bench [a|b]... [--cc NAME]   |   bench --cc-all [--reps N]   |   bench --file SCENARIO.toml [--closed-form]   |   bench --empty-loop   |   bench --setup N [--reps R]"
    );
    std::process::exit(2);
}

fn compare_all(reps: usize) {
    let names = CcConfig::NAMES;
    let mut best = vec![f64::INFINITY; names.len()];
    let mut last: Vec<Option<Run>> = names.iter().map(|_| None).collect();
    run("a", "newreno"); // warm-up
    for _ in 0..reps {
        for (i, cc) in names.iter().enumerate() {
            let r = run("a", cc);
            best[i] = best[i].min(r.wall);
            last[i] = Some(r);
        }
    }
    let base = best[0];
    println!("case a (8 flows, 8 Mbps, 100 ms RTT, 60 s), best of {reps} runs per algorithm:");
    println!(
        "{:<10} {:>9} {:>8} {:>10} {:>10} {:>9}",
        "cc", "wall ms", "vs reno", "events", "link tx", "Mbps"
    );
    let mut worst: f64 = 0.0;
    for (i, cc) in names.iter().enumerate() {
        let r = last[i].as_ref().expect("ran");
        let ratio = best[i] / base;
        worst = worst.max(ratio);
        println!(
            "{:<10} {:>9.2} {:>7.2}x {:>10} {:>10} {:>9.2}",
            cc,
            best[i] * 1e3,
            ratio,
            r.events,
            r.link_transmissions,
            r.goodput_bps / 1e6
        );
    }
    println!(
        "worst ratio {worst:.2}x NewReno ({})",
        if worst <= 1.5 {
            "within the 1.5x bar"
        } else {
            "ABOVE the 1.5x bar"
        }
    );
}

/// The machine's limit for the event list: an event loop that does nothing but pop an event and
/// schedule the next one, with as many entries pending as case (b) keeps (about 6,000: one per
/// busy link direction and armed timer), at the delays a packet sees (1–20 µs). Prints events/s.
fn empty_loop() {
    use haslab_core::sim::events::EventQueue;
    use haslab_core::sim::rng::Stream;
    let mut q: EventQueue<u32> = EventQueue::new();
    let mut rng = Stream::new(1, "empty-loop");
    for i in 0..6_000u32 {
        q.schedule(rng.next_u64() % 20_000, i);
    }
    let n = 50_000_000u64;
    let t = std::time::Instant::now();
    let mut sum = 0u64;
    for _ in 0..n {
        let e = q.pop_until(u64::MAX).expect("pending events");
        sum = sum.wrapping_add(e as u64);
        let now = q.now_ns();
        q.schedule(now + 1_000 + rng.next_u64() % 19_000, e);
    }
    let wall = t.elapsed().as_secs_f64();
    println!(
        "empty event loop: {n} events in {wall:.3} s ({:.1} M events/s, {} pending; checksum {sum})",
        n as f64 / wall / 1e6,
        q.len()
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut cases = Vec::new();
    let mut cc = "newreno".to_string();
    let mut all = false;
    let mut reps = 15usize;
    let mut reps_given = false;
    let mut file = None;
    let mut closed_form = false;
    let mut setup_pairs = None;
    let mut describe = true;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--cc" => cc = it.next().cloned().unwrap_or_else(|| usage()),
            "--cc-all" => all = true,
            "--file" => file = Some(it.next().cloned().unwrap_or_else(|| usage())),
            "--closed-form" => closed_form = true,
            "--event-form" => EVENT_FORM.store(true, std::sync::atomic::Ordering::Relaxed),
            "--setup" => {
                setup_pairs = Some(
                    it.next()
                        .and_then(|n| n.parse::<u64>().ok())
                        .filter(|&n| n > 0)
                        .unwrap_or_else(|| usage()),
                )
            }
            "--no-describe" => describe = false,
            "--empty-loop" => {
                empty_loop();
                return;
            }
            "--reps" => {
                reps_given = true;
                reps = it
                    .next()
                    .and_then(|n| n.parse().ok())
                    .filter(|&n| n > 0)
                    .unwrap_or_else(|| usage())
            }
            "a" | "b" => cases.push(a.clone()),
            _ => usage(),
        }
    }
    if CcConfig::by_name(&cc).is_none() {
        eprintln!(
            "unknown congestion control {cc:?}: expected one of {}",
            CcConfig::NAMES.join(", ")
        );
        std::process::exit(2);
    }
    if let Some(pairs) = setup_pairs {
        setup(pairs, if reps_given { reps } else { 1 }, describe);
        return;
    }
    if all {
        compare_all(reps);
        return;
    }
    if let Some(path) = file {
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            eprintln!("{path}: {e}");
            std::process::exit(2);
        });
        report(&path, &run_toml_with(&text, closed_form));
        if cases.is_empty() {
            return;
        }
    }
    if cases.is_empty() {
        cases = vec!["a".to_string(), "b".to_string()];
    }
    for case in cases {
        report(&format!("case {case} ({cc})"), &run(&case, &cc));
    }
}

fn report(what: &str, r: &Run) {
    println!(
            "{what}: wall {:.3} s, {} events ({:.2} M/s), {} link transmissions ({:.2} M/s), aggregate goodput {:.1} Mbps",
            r.wall,
            r.events,
            r.events as f64 / r.wall / 1e6,
            r.link_transmissions,
            r.link_transmissions as f64 / r.wall / 1e6,
            r.goodput_bps / 1e6
        );
}
