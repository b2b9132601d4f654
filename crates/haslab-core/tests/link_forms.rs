//! The two forms of a fixed-rate link direction (`net::link`): the event form (an
//! end-of-serialisation event per packet) and the scheduled form (departures computed at
//! enqueue, one event per packet). With the event list's tie rule (departures first, then
//! arrivals by link, then other events in insertion order; `sim::events`) both give the same run, ties
//! included: every summary field but the event count, and every table, are equal. The scheduled
//! form is used only where it applies (no Mahimahi trace, capacity schedule, queue trace or
//! pcap on the direction).

use haslab_core::metrics::SimResult;
use haslab_core::scenario::{plan_from_toml, plan_from_toml_in, Plan};
use haslab_core::world::World;
use haslab_core::{run_plan, RunOptions};
use std::path::Path;

fn examples() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

fn example(name: &str) -> Plan {
    let path = examples().join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    plan_from_toml_in(&text, Some(&examples())).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn run(plan: &Plan, event_form_links: bool) -> SimResult {
    let opts = RunOptions {
        event_form_links,
        ..Default::default()
    };
    run_plan(plan, &opts).unwrap()
}

/// The summary as JSON without the event count, and the tables.
fn comparable(r: &SimResult) -> (serde_json::Value, String) {
    let mut v = serde_json::to_value(r).unwrap();
    v.as_object_mut().unwrap().remove("events");
    (v, format!("{:?}", r.tables))
}

/// Runs `plan` in both forms; asserts the same run and fewer events in the scheduled form
/// (when some direction uses it). Returns (events of the event form, of the scheduled form).
fn assert_same_run(what: &str, plan: &Plan) -> (u64, u64) {
    let event = run(plan, true);
    let scheduled = run(plan, false);
    let (a, b) = (comparable(&event), comparable(&scheduled));
    if a.0 != b.0 {
        // name the first differing field
        let (ao, bo) = (a.0.as_object().unwrap(), b.0.as_object().unwrap());
        let key = ao.keys().find(|k| ao[*k] != bo[*k]).unwrap();
        panic!("{what}: summaries differ in {key:?}");
    }
    assert!(a.1 == b.1, "{what}: tables differ");
    assert!(scheduled.events <= event.events, "{what}");
    (event.events, scheduled.events)
}

const TIES: &str = r#"
seed = 3
duration = "20s"
[dumbbell]
pairs = 6
bottleneck_rate = "12Mbps"
bottleneck_delay = "10ms"
bottleneck_queue = "12pkts"
access_rate = "12Mbps"
access_delay = "1ms"
[[flow]]
name = "f{i}"
count = 6
src = "left{i}"
dst = "right{i}"
app = "bulk"
[trace]
cwnd = true
"#;

/// Six identical flows starting together on identical access links as fast as the bottleneck
/// (1500 B in exactly 1 ms everywhere): packets reach the router at the same nanoseconds, and at
/// the nanosecond the bottleneck ends a serialisation, while the 12-packet queue overflows. With
/// ties broken by insertion order alone, the two forms give different runs here (checked when
/// the rule was written: 95,628 link transmissions in the event form, 94,829 in the
/// scheduled form).
#[test]
fn a_dumbbell_full_of_ties_runs_the_same_in_both_forms() {
    let plan = plan_from_toml(TIES).unwrap();
    let (event, scheduled) = assert_same_run("ties", &plan);
    let r = run(&plan, false);
    assert!(r.links.iter().map(|l| l.dropped_packets).sum::<u64>() > 100);
    // every direction is in the scheduled form: about one event per packet per hop
    assert!(scheduled < event * 6 / 10, "{scheduled} vs {event}");
    assert!(scheduled >= r.link_transmissions);
}

/// The examples as they are (their queue traces keep the traced bottleneck in the event form,
/// a Mahimahi or capacity-schedule direction stays in it too) and without queue traces.
#[test]
fn the_examples_run_the_same_in_both_forms() {
    for name in [
        "dumbbell.toml",
        "has.toml",
        "mahimahi.toml",
        "sabre.toml",
        "tcphas-home.toml",
    ] {
        let mut plan = example(name);
        if name == "tcphas-home.toml" {
            plan.duration_ns = 30_000_000_000;
        }
        assert_same_run(name, &plan);
        plan.trace.queues.clear();
        assert_same_run(&format!("{name} without queue traces"), &plan);
    }
}

/// Link counters read while the run goes (`World::link_summaries`) are those of the event form
/// at every step, although the scheduled form settles them lazily.
#[test]
fn link_summaries_during_the_run_agree() {
    let plan = plan_from_toml(TIES).unwrap();
    let mk = |event_form_links| {
        World::new(
            &plan,
            &RunOptions {
                event_form_links,
                ..Default::default()
            },
        )
        .unwrap()
    };
    let (mut e, mut s) = (mk(true), mk(false));
    // steps that fall inside serialisations and at odd nanoseconds
    let mut t = 0;
    while t < 3_000_000_000 {
        t += 37_123_457;
        e.run_until(t);
        s.run_until(t);
        let (a, b) = (e.link_summaries(), s.link_summaries());
        assert_eq!(
            serde_json::to_value(&a).unwrap(),
            serde_json::to_value(&b).unwrap(),
            "at {t} ns"
        );
    }
}

/// Which directions take the scheduled form: not a traced queue, a pcap, a capacity schedule or
/// a Mahimahi trace; all of them when the run asks for the event form.
#[test]
fn the_scheduled_form_is_taken_only_where_it_applies() {
    let text = format!(
        "{TIES}queues = [\"r1->r2\"]\npcap = [\"r2->right0\"]\n\
         [[capacity]]\nlink = \"right1->r2\"\nsteps = [{{ at = \"1s\", rate = \"50Mbps\" }}]\n"
    );
    let plan = plan_from_toml(&text).unwrap();
    let w = World::new(&plan, &RunOptions::default()).unwrap();
    let event_form: Vec<String> = (0..plan.links.len() * 2)
        .filter(|&ld| !w.is_scheduled_form(ld))
        .map(|ld| w.link_summaries()[ld].name.clone())
        .collect();
    assert_eq!(event_form, ["r1->r2", "r2->right0", "right1->r2"]);
    let w = World::new(
        &plan,
        &RunOptions {
            event_form_links: true,
            ..Default::default()
        },
    )
    .unwrap();
    assert!((0..plan.links.len() * 2).all(|ld| !w.is_scheduled_form(ld)));
    // the Mahimahi example: its trace-served direction and its traced queue
    let plan = example("mahimahi.toml");
    let w = World::new(&plan, &RunOptions::default()).unwrap();
    let names: Vec<String> = w.link_summaries().into_iter().map(|l| l.name).collect();
    for (ld, name) in names.iter().enumerate() {
        let expect_event = name == "router->client";
        assert_eq!(w.is_scheduled_form(ld), !expect_event, "{name}");
    }
}
