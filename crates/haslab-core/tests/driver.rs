//! The player driver (`has::driver`, run by the simulator's sessions and by live mode's client)
//! depends on nothing but the times it is given: replaying a simulated session's download
//! timings through a fresh `PlayerDriver` gives the same segment, level, request time and buffer
//! at every step, for every player algorithm.

use haslab_core::has::driver::{Next, PlayerDriver};
use haslab_core::metrics::{ColumnData, SimResult, Table};
use haslab_core::scenario::plan_from_toml;
use haslab_core::{run_plan, RunOptions};
use std::sync::Arc;

fn col(t: &Table, c: &str) -> Vec<u64> {
    match t.column(c).unwrap_or_else(|| panic!("no column {c}")) {
        ColumnData::U64(v) => v.clone(),
        ColumnData::U32(v) => v.iter().map(|&x| x as u64).collect(),
        ColumnData::F64(v) => v.iter().map(|&x| x as u64).collect(),
    }
}

fn scenario(abr: &str, extra: &str) -> String {
    let mut t = String::from(
        r#"
seed = 4
duration = "60s"
[dumbbell]
pairs = 3
bottleneck_rate = "3Mbps"
bottleneck_delay = "30ms"
bottleneck_queue = "40pkts"
"#,
    );
    for k in 0..3 {
        t += &format!(
            "[[player]]\nname = \"p{k}\"\nclient = \"right{k}\"\nserver = \"left{k}\"\nabr = {abr}\n\
             video = \"tcphas\"\nstart = \"{}ms\"\n{extra}\n",
            k * 700
        );
    }
    t
}

/// Replays player `p` of `r` through a fresh driver and checks every decision.
fn replay(text: &str, r: &SimResult, p: usize) -> usize {
    let plan = plan_from_toml(text).unwrap();
    let pp = Arc::new(plan.players[p].clone());
    let mut d = PlayerDriver::new(pp.clone(), plan.seed);
    let t = r.table("segments").unwrap();
    let (pl, idx, lv) = (col(t, "player"), col(t, "index"), col(t, "level"));
    let (req, done, flow) = (col(t, "request_ns"), col(t, "done_ns"), col(t, "flow"));
    let (bb, ba) = (col(t, "buffer_before_ns"), col(t, "buffer_after_ns"));
    let fb = col(t, "first_byte_ns");
    let rows: Vec<usize> = (0..pl.len()).filter(|&i| pl[i] as usize == p).collect();
    assert!(
        rows.len() > 5,
        "player {p} downloaded too little to compare"
    );
    let mut now = pp.start_ns;
    for &i in &rows {
        // ask at the earliest time the driver allows; waits come from the buffer cap
        let step = loop {
            match d.next(now) {
                Next::WaitUntil(t) => {
                    assert!(t > now && t != u64::MAX, "wait without a time at {now}");
                    now = t;
                }
                other => break other,
            }
        };
        let Next::Request {
            segment,
            level,
            slot,
            ..
        } = step
        else {
            panic!("player {p} row {i}: {step:?}, not a request");
        };
        assert_eq!(
            (segment, level),
            (idx[i] as usize, lv[i] as usize),
            "player {p} row {i}"
        );
        assert_eq!(now, req[i], "player {p} segment {}: request time", idx[i]);
        let c = d
            .completed(slot, segment, level, done[i], flow[i] as u32, Some(fb[i]))
            .expect("the request is in flight");
        now = c.wake_ns;
    }
    let log = d.take_log(r.duration_ns);
    for (k, &i) in rows.iter().enumerate() {
        let s = &log.segments[k];
        assert_eq!(
            (s.buffer_before_ns, s.buffer_after_ns),
            (bb[i], ba[i]),
            "buffers"
        );
    }
    rows.len()
}

#[test]
fn the_driver_replays_the_simulators_decisions_for_every_player() {
    // a replay from the segments table has no progress events to show a player: the players
    // that abandon are replayed with abandonment off
    for abr in [
        "\"rbb\"",
        "\"conventional\"",
        "\"panda\"",
        "\"elastic\"",
        "\"festive\"",
        "\"bba\"",
        "\"bola\"",
        "{ algorithm = \"bola-e\", abandon = false }",
        "{ algorithm = \"dashjs-throughput\", abandon_requests_rule = false }",
        "{ algorithm = \"dashjs-bola\", abandon_requests_rule = false }",
        "{ algorithm = \"dashjs-dynamic\", abandon_requests_rule = false }",
        "\"robustmpc\"",
        "\"fastmpc\"",
    ] {
        let text = scenario(abr, "buffer = \"20s\"");
        let plan = plan_from_toml(&text).unwrap();
        let r = run_plan(&plan, &RunOptions::default()).unwrap();
        for p in 0..3 {
            let n = replay(&text, &r, p);
            assert!(n > 5, "{abr}: {n}");
        }
    }
}

#[test]
fn the_refill_scheduler_is_the_same_in_both() {
    let text = scenario("\"conventional\"", "buffer = \"20s\"\nrefill = \"12s\"");
    let plan = plan_from_toml(&text).unwrap();
    let r = run_plan(&plan, &RunOptions::default()).unwrap();
    for p in 0..3 {
        replay(&text, &r, p);
    }
}
