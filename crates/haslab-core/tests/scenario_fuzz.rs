//! Property tests of the scenario front end: no input makes parsing or validation panic, every
//! rejection carries a message, and every accepted plan is internally consistent (indices in
//! range, flows between two distinct nodes).
//!
//! (a) arbitrary strings (random Unicode, and TOML/JSON-looking noise) into `parse_toml`,
//!     `plan_from_toml` and `plan_from_json`;
//! (b) mutations of a valid scenario: delete, duplicate or swap lines, replace values with
//!     nasty tokens (overflowing numbers, empty strings, wrong types, extreme units);
//! (c) the same for the JSON form: random leaves of the valid scenario replaced by nasty JSON.

use haslab_core::scenario::{parse_toml, plan_from_json, plan_from_toml, Plan, ScenarioError};
use proptest::prelude::*;

const VALID: &str = r#"seed = 7
duration = "20s"
[dumbbell]
pairs = 3
bottleneck_rate = "8Mbps"
bottleneck_delay = "40ms"
bottleneck_queue = "67pkts"
bottleneck_loss = "0.1%"
access_rate = "100Mbps"
access_delay = "5ms"
access_queue = "64KB"
[[node]]
name = "server"
[[link]]
name = "uplink"
a = "server"
b = "r1"
rate = "50Mbps"
delay = "2ms"
loss = "0%"
queue = "100pkts"
[link.ab]
rate = "40Mbps"
queue = "30KB"
[link.ba]
delay = "3ms"
loss = "1%"
[defaults]
cc = "newreno"
tcp = { min_rto = "1s", initial_cwnd = 4 }
[[flow]]
name = "bulk{i}"
count = 3
src = "left{i}"
dst = "right{i}"
app = "bulk"
start = "0s"
stop = "15s"
bytes = "10MB"
[[flow]]
name = "video"
src = "server"
dst = "right2"
app = "chunks"
chunk = "1MB"
interval = "2s"
start = "1s"
cc = { algorithm = "newreno", grow_when_app_limited = true }
[flow.tcp]
mss = 1448
min_rto = "200ms"
delayed_ack = "off"
rwnd = "1MB"
[trace]
cwnd = true
cwnd_interval = "10ms"
queues = ["r1->r2", "uplink:ba", "*"]
queue_interval = "1ms"
goodput_window = "1s"
pcap = ["bottleneck:ab", "server->r1"]
snaplen = 96
[[traffic]]
name = "bg"
kind = "ppbp"
src = "server"
dst = "right0"
rate = "20Mbps"
hurst = 0.8
burst_rate = "2Mbps"
mean_burst = "50ms"
stop = "15s"
[[traffic]]
kind = "onoff"
src = "left1"
dst = "right1"
rate = "5Mbps"
mean_on = "500ms"
mean_off = "1s"
packet = "1000B"
[[traffic]]
kind = "web"
src = "server"
dst = "left2"
rate = "2Mbps"
mean_size = "50KB"
tcp = { mss = 1000 }
[[loss_event]]
link = "bottleneck"
loss = "50%"
start = "5s"
stop = "6s"
[[capacity]]
link = "uplink:ab"
steps = [{ at = "2s", rate = "10Mbps" }, { at = "4s", rate = "30Mbps" }]
"#;

const NASTY: &[&str] = &[
    "-1",
    "0",
    "1",
    "1e309",
    "-1e309",
    "18446744073709551616",
    "9223372036854775807",
    "-9223372036854775808",
    "1.5",
    "nan",
    "inf",
    "true",
    "\"\"",
    "\"🙂\"",
    "\"\\u0000\"",
    "[]",
    "{}",
    "[[]]",
    "\"999999999999999min\"",
    "\"18446744073709551615ns\"",
    "\"1000000s\"",
    "\"0s\"",
    "\"0bps\"",
    "\"0pkts\"",
    "\"4294967296pkts\"",
    "\"1499B\"",
    "\"100%\"",
    "\"101%\"",
    "\"1e3Mbps\"",
    "\"-0ms\"",
    "\"*\"",
    "\"r1->r2\"",
    "\"r1->r1\"",
    "\"bottleneck:ba\"",
    "\"x:ab\"",
    "\"{i}\"",
    "\"left{i}\"",
    "\"r1\"",
    "\"newreno\"",
    "\"chunks\"",
    "{ algorithm = \"newreno\" }",
    "{ algorithm = 3 }",
    "[\"*\"]",
    "1000000",
    "49999",
    "65536",
];

fn no_panic_and_consistent(result: Result<Plan, ScenarioError>) -> Result<(), TestCaseError> {
    match result {
        Err(e) => {
            prop_assert!(
                !e.message.trim().is_empty(),
                "empty message for path {:?}",
                e.path
            );
            prop_assert!(!e.to_string().is_empty());
        }
        Ok(p) => {
            let (n, l) = (p.nodes.len(), p.links.len());
            prop_assert!(p.duration_ns > 0);
            for link in &p.links {
                prop_assert!(link.a < n && link.b < n && link.a != link.b);
                prop_assert!(link.ab.rate_bps > 0 && link.ba.rate_bps > 0);
                prop_assert!(
                    (0.0..=1.0).contains(&link.ab.loss) && (0.0..=1.0).contains(&link.ba.loss)
                );
            }
            for f in &p.flows {
                prop_assert!(
                    f.src < n && f.dst < n && f.src != f.dst,
                    "bad flow {}",
                    f.name
                );
                prop_assert!(f.tcp.check().is_ok());
            }
            for q in &p.trace.queues {
                prop_assert!(q.link < l);
            }
            for c in &p.trace.pcaps {
                prop_assert!(c.at.link < l && (40..=65535).contains(&c.snaplen));
            }
            prop_assert!(p.trace.goodput_window_ns > 0);
            for t in &p.traffic {
                prop_assert!(t.src < n && t.dst < n && t.src != t.dst);
                prop_assert!(t.start_ns < p.duration_ns);
                prop_assert!(t.stop_ns.is_none_or(|s| s > t.start_ns));
                prop_assert!((29..=1500).contains(&t.packet_bytes));
                prop_assert!(t.kind.mean_rate_bps() > 0.0);
            }
            for e in &p.dynamics.loss_events {
                prop_assert!(e.at.link < l && e.start_ns < e.stop_ns);
                prop_assert!((0.0..=1.0).contains(&e.loss));
            }
            for c in &p.dynamics.capacity {
                prop_assert!(c.at.link < l);
            }
        }
    }
    Ok(())
}

#[derive(Clone, Debug)]
enum Mutation {
    Delete(usize),
    Duplicate(usize),
    Swap(usize, usize),
    /// replace the value of line `.0` (the text after `=`, or the whole line) with NASTY[.1]
    Replace(usize, usize),
    /// insert `key = NASTY[.1]` after line `.0`, with key taken from line `.2`
    InsertKey(usize, usize, usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let line = 0usize..200;
    let nasty = 0..NASTY.len();
    prop_oneof![
        1 => line.clone().prop_map(Mutation::Delete),
        1 => line.clone().prop_map(Mutation::Duplicate),
        1 => (line.clone(), line.clone()).prop_map(|(a, b)| Mutation::Swap(a, b)),
        4 => (line.clone(), nasty.clone()).prop_map(|(a, k)| Mutation::Replace(a, k)),
        1 => (line.clone(), nasty, line).prop_map(|(a, k, b)| Mutation::InsertKey(a, k, b)),
    ]
}

fn apply(text: &str, muts: &[Mutation]) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    for m in muts {
        if lines.is_empty() {
            break;
        }
        let at = |i: usize| i % lines.len();
        match *m {
            Mutation::Delete(i) => {
                let i = at(i);
                lines.remove(i);
            }
            Mutation::Duplicate(i) => {
                let i = at(i);
                let l = lines[i].clone();
                lines.insert(i, l);
            }
            Mutation::Swap(i, j) => {
                let (i, j) = (at(i), at(j));
                lines.swap(i, j);
            }
            Mutation::Replace(i, k) => {
                let i = at(i);
                lines[i] = match lines[i].split_once('=') {
                    Some((key, _)) => format!("{key}= {}", NASTY[k]),
                    None => NASTY[k].to_string(),
                };
            }
            Mutation::InsertKey(i, k, j) => {
                let (i, j) = (at(i), at(j));
                let key = lines[j]
                    .split_once('=')
                    .map_or("x", |(key, _)| key.trim())
                    .to_string();
                lines.insert(i + 1, format!("{key} = {}", NASTY[k]));
            }
        }
    }
    lines.join("\n")
}

/// Nasty JSON values for leaves of the JSON form.
fn nasty_json() -> Vec<serde_json::Value> {
    use serde_json::json;
    vec![
        json!(-1),
        json!(0),
        json!(u64::MAX),
        json!(i64::MIN),
        json!(1.5),
        json!(1e300),
        json!(null),
        json!(true),
        json!(""),
        json!("🙂"),
        json!([]),
        json!({}),
        json!("999999999999999min"),
        json!("0s"),
        json!("0pkts"),
        json!("1499B"),
        json!("101%"),
        json!("*"),
        json!("r1->r2"),
        json!("{i}"),
        json!({"algorithm": "cubic"}),
        json!(1000000),
    ]
}

/// Replaces the `k`-th leaf (depth-first) of `v`, counting modulo the number of leaves.
fn replace_leaf(v: &mut serde_json::Value, k: usize, with: serde_json::Value) {
    fn leaves(v: &serde_json::Value) -> usize {
        match v {
            serde_json::Value::Object(m) if !m.is_empty() => m.values().map(leaves).sum(),
            serde_json::Value::Array(a) if !a.is_empty() => a.iter().map(leaves).sum(),
            _ => 1,
        }
    }
    fn go(v: &mut serde_json::Value, k: &mut usize, with: &mut Option<serde_json::Value>) {
        match v {
            serde_json::Value::Object(m) if !m.is_empty() => {
                m.values_mut().for_each(|c| go(c, k, with))
            }
            serde_json::Value::Array(a) if !a.is_empty() => {
                a.iter_mut().for_each(|c| go(c, k, with))
            }
            leaf => {
                if *k == 0 {
                    if let Some(w) = with.take() {
                        *leaf = w;
                    }
                }
                *k = k.wrapping_sub(1);
            }
        }
    }
    let mut k = k % leaves(v);
    go(v, &mut k, &mut Some(with));
}

#[test]
fn the_base_scenario_is_valid() {
    let p = plan_from_toml(VALID).expect("VALID is valid");
    assert_eq!(p.flows.len(), 4);
    assert_eq!(p.nodes.len(), 9);
    assert_eq!(p.links.len(), 8);
    assert_eq!(p.traffic.len(), 3);
    assert_eq!(p.dynamics.loss_events.len(), 2);
    assert_eq!(p.dynamics.capacity.len(), 1);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_unicode_never_panics(s in "\\PC{0,300}") {
        let _ = parse_toml(&s);
        no_panic_and_consistent(plan_from_toml(&s))?;
        no_panic_and_consistent(plan_from_json(&s))?;
    }

    #[test]
    fn toml_and_json_looking_noise_never_panics(
        s in "([a-z_{}\\[\\]=\",.:0-9 \n#-]|seed|duration|flow|link|node|dumbbell|trace|tcp|pairs|\"[0-9]+(ms|s|Mbps|pkts|KB|%)\"){0,80}"
    ) {
        no_panic_and_consistent(plan_from_toml(&s))?;
        no_panic_and_consistent(plan_from_json(&s))?;
    }

    #[test]
    fn mutated_scenarios_never_panic(muts in prop::collection::vec(mutation(), 1..4)) {
        let text = apply(VALID, &muts);
        no_panic_and_consistent(plan_from_toml(&text))?;
    }

    #[test]
    fn mutated_json_scenarios_never_panic(
        edits in prop::collection::vec((any::<usize>(), 0usize..22), 1..4)
    ) {
        let scenario = parse_toml(VALID).expect("VALID parses");
        let mut v = serde_json::to_value(&scenario).expect("serialises");
        let nasty = nasty_json();
        for (k, n) in edits {
            replace_leaf(&mut v, k, nasty[n % nasty.len()].clone());
        }
        let text = v.to_string();
        no_panic_and_consistent(plan_from_json(&text))?;
    }
}

/// Every single-value replacement of every line, exhaustively: none panics, and the set
/// reaches validation (some mutants are still valid, some fail only in `to_plan`).
#[test]
fn every_single_replacement_is_handled() {
    let lines = VALID.lines().count();
    let (mut ok, mut parse_err, mut plan_err) = (0, 0, 0);
    for i in 0..lines {
        for k in 0..NASTY.len() {
            let text = apply(VALID, &[Mutation::Replace(i, k)]);
            match parse_toml(&text) {
                Err(e) => {
                    assert!(!e.message.is_empty());
                    parse_err += 1;
                }
                Ok(s) => match s.to_plan() {
                    Ok(p) => {
                        no_panic_and_consistent(Ok(p)).unwrap();
                        ok += 1
                    }
                    Err(e) => {
                        assert!(!e.message.is_empty() && !e.path.is_empty(), "{text}\n{e}");
                        plan_err += 1;
                    }
                },
            }
        }
    }
    println!("ok {ok}, parse errors {parse_err}, plan errors {plan_err}");
    assert!(
        ok > 50 && parse_err > 500 && plan_err > 100,
        "ok {ok}, parse errors {parse_err}, plan errors {plan_err}"
    );
}

/// Deeply nested input must not overflow the stack.
#[test]
fn deep_nesting_is_rejected_without_overflow() {
    for depth in [1_000, 100_000] {
        let arrays = format!(
            "duration = \"1s\"\nseed = {}{}\n",
            "[".repeat(depth),
            "]".repeat(depth)
        );
        assert!(plan_from_toml(&arrays).is_err());
        let tables = format!(
            "duration = \"1s\"\nx = {}1{}\n",
            "{a=".repeat(depth),
            "}".repeat(depth)
        );
        assert!(plan_from_toml(&tables).is_err());
        let json = format!(
            "{{\"duration\": \"1s\", \"seed\": {}{}}}",
            "[".repeat(depth),
            "]".repeat(depth)
        );
        assert!(plan_from_json(&json).is_err());
        let tcp = format!(
            "{{\"duration\": \"1s\", \"defaults\": {{\"tcp\": {{\"isn\": {}{}}}}}}}",
            "[".repeat(depth),
            "]".repeat(depth)
        );
        assert!(plan_from_json(&tcp).is_err());
        let keys = format!("duration = \"1s\"\n{} = 1\n", vec!["a"; depth].join("."));
        assert!(plan_from_toml(&keys).is_err());
    }
}
