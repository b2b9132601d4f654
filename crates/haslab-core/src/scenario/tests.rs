//! Unit tests of parsing and [`Scenario::to_plan`] on good scenarios (the bad ones live in
//! `tests/bad_scenarios/`).

use super::*;
use crate::tcp::cc::CcConfig;
use crate::tcp::config::TcpConfig;

fn plan(text: &str) -> Plan {
    match plan_from_toml(text) {
        Ok(p) => p,
        Err(e) => panic!("scenario should be valid, got: {e}\n{text}"),
    }
}

fn plan_err(text: &str) -> ScenarioError {
    match plan_from_toml(text) {
        Ok(_) => panic!("scenario should be rejected:\n{text}"),
        Err(e) => e,
    }
}

fn node_names(p: &Plan) -> Vec<&str> {
    p.nodes.iter().map(|n| n.name.as_str()).collect()
}

fn link<'a>(p: &'a Plan, name: &str) -> &'a LinkPlan {
    p.links
        .iter()
        .find(|l| l.name == name)
        .unwrap_or_else(|| panic!("no link {name}"))
}

const MS: u64 = 1_000_000;

#[test]
fn dumbbell_expands_into_nodes_and_links() {
    let p = plan(
        r#"
duration = "10s"
[dumbbell]
pairs = 2
bottleneck_rate = "8Mbps"
bottleneck_delay = "40ms"
bottleneck_queue = "67pkts"
access_rate = "100Mbps"
access_delay = "5ms"
"#,
    );
    assert_eq!(
        node_names(&p),
        ["left0", "left1", "right0", "right1", "r1", "r2"]
    );
    let names: Vec<&str> = p.links.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names, ["bottleneck", "left0", "left1", "right0", "right1"]);
    let bn = link(&p, "bottleneck");
    assert_eq!(
        (p.nodes[bn.a].name.as_str(), p.nodes[bn.b].name.as_str()),
        ("r1", "r2")
    );
    for d in [&bn.ab, &bn.ba] {
        assert_eq!(d.rate_bps, 8_000_000);
        assert_eq!(d.delay_ns, 40 * MS);
        assert_eq!(
            d.queue,
            QueuePlan::DropTail {
                limit: QueueLimit::Packets(67)
            }
        );
        assert_eq!(d.loss, 0.0);
    }
    let l1 = link(&p, "left1");
    assert_eq!(
        (p.nodes[l1.a].name.as_str(), p.nodes[l1.b].name.as_str()),
        ("left1", "r1")
    );
    let r0 = link(&p, "right0");
    assert_eq!(
        (p.nodes[r0.a].name.as_str(), p.nodes[r0.b].name.as_str()),
        ("r2", "right0")
    );
    for d in [&l1.ab, &l1.ba, &r0.ab, &r0.ba] {
        assert_eq!(d.rate_bps, 100_000_000);
        assert_eq!(d.delay_ns, 5 * MS);
        assert_eq!(
            d.queue,
            QueuePlan::DropTail {
                limit: QueueLimit::Packets(1000)
            }
        );
    }
    // defaults
    assert_eq!(p.seed, 1);
    assert_eq!(p.duration_ns, 10_000 * MS);
    assert!(p.flows.is_empty());
    assert!(p.trace.cwnd);
    assert_eq!(p.trace.queue_interval_ns, MS);
    assert_eq!(p.trace.goodput_window_ns, 1000 * MS);
}

#[test]
fn dumbbell_access_rate_defaults_to_1gbps_and_mixes_with_explicit_entries() {
    let p = plan(
        r#"
duration = "1s"
[dumbbell]
pairs = 1
bottleneck_rate = "1Mbps"
[[node]]
name = "server"
[[link]]
a = "server"
b = "r1"
rate = "10Mbps"
[[flow]]
src = "server"
dst = "right0"
app = "bulk"
"#,
    );
    assert_eq!(node_names(&p), ["left0", "right0", "r1", "r2", "server"]);
    assert_eq!(link(&p, "left0").ab.rate_bps, 1_000_000_000);
    let extra = link(&p, "server-r1");
    assert_eq!(extra.ab.rate_bps, 10_000_000);
    assert_eq!(p.flows[0].name, "flow0");
    assert_eq!(p.nodes[p.flows[0].src].name, "server");
}

#[test]
fn count_replicates_and_substitutes_i() {
    let p = plan(
        r#"
duration = "30s"
[dumbbell]
pairs = 3
bottleneck_rate = "8Mbps"
[[flow]]
name = "solo"
src = "left0"
dst = "right0"
app = "bulk"
bytes = "1MB"
[[flow]]
name = "video{i}"
count = 3
src = "left{i}"
dst = "right{i}"
app = "chunks"
chunk = "500KB"
interval = "2s"
start = "1s"
stop = "20s"
[[flow]]
count = 2
src = "left2"
dst = "right1"
app = "bulk"
"#,
    );
    let names: Vec<&str> = p.flows.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(
        names,
        ["solo", "video0", "video1", "video2", "flow4", "flow5"]
    );
    for (k, f) in p.flows[1..4].iter().enumerate() {
        assert_eq!(p.nodes[f.src].name, format!("left{k}"));
        assert_eq!(p.nodes[f.dst].name, format!("right{k}"));
        assert_eq!(
            f.app,
            AppPlan::Chunks {
                start_ns: 1000 * MS,
                stop_ns: Some(20_000 * MS),
                chunk_bytes: 500_000,
                interval_ns: 2000 * MS
            }
        );
    }
    assert_eq!(
        p.flows[0].app,
        AppPlan::Bulk {
            start_ns: 0,
            stop_ns: None,
            bytes: Some(1_000_000)
        }
    );
    assert_eq!(p.nodes[p.flows[5].src].name, "left2");
}

#[test]
fn defaults_merge_under_the_flow_and_the_flow_wins() {
    let p = plan(
        r#"
duration = "10s"
[dumbbell]
pairs = 2
bottleneck_rate = "8Mbps"
[defaults]
tcp = { min_rto = "1s", initial_cwnd = 4 }
cc = { algorithm = "newreno", grow_when_app_limited = true }
[[flow]]
src = "left0"
dst = "right0"
app = "bulk"
[[flow]]
src = "left1"
dst = "right1"
app = "bulk"
cc = "newreno"
[flow.tcp]
min_rto = "300ms"
timestamps = false
"#,
    );
    let (f0, f1) = (&p.flows[0], &p.flows[1]);
    assert_eq!(f0.tcp.min_rto.0, 1000 * MS);
    assert_eq!(f0.tcp.initial_cwnd, 4);
    assert!(f0.tcp.timestamps);
    assert_eq!(f0.tcp.mss, TcpConfig::default().mss);
    assert_eq!(f1.tcp.min_rto.0, 300 * MS, "the flow's own value wins");
    assert_eq!(
        f1.tcp.initial_cwnd, 4,
        "keys the flow does not set come from the defaults"
    );
    assert!(!f1.tcp.timestamps);
    let grows = |c: &CcConfig| match c {
        CcConfig::NewReno(n) => n.grow_when_app_limited,
        other => panic!("unexpected {other:?}"),
    };
    assert!(grows(&f0.cc), "defaults.cc applies");
    assert!(!grows(&f1.cc), "the flow's cc replaces defaults.cc");
}

#[test]
fn per_direction_overrides_and_queue_units() {
    let p = plan(
        r#"
duration = "10s"
[[node]]
name = "a"
[[node]]
name = "b"
[[link]]
name = "wan"
a = "a"
b = "b"
rate = "10Mbps"
delay = "20ms"
loss = "0.5%"
queue = "30KB"
[link.ab]
loss = "1%"
queue = "64KiB"
[link.ba]
rate = "1Mbps"
delay = "30ms"
queue = "10 pkts"
[[link]]
a = "b"
b = "a"
rate = "2.5Gbps"
queue = "1500B"
"#,
    );
    let wan = link(&p, "wan");
    assert_eq!(wan.ab.rate_bps, 10_000_000);
    assert_eq!(wan.ab.delay_ns, 20 * MS);
    assert_eq!(wan.ab.loss, 0.01);
    assert_eq!(
        wan.ab.queue,
        QueuePlan::DropTail {
            limit: QueueLimit::Bytes(65_536)
        }
    );
    assert_eq!(wan.ba.rate_bps, 1_000_000);
    assert_eq!(wan.ba.delay_ns, 30 * MS);
    assert_eq!(wan.ba.loss, 0.005);
    assert_eq!(
        wan.ba.queue,
        QueuePlan::DropTail {
            limit: QueueLimit::Packets(10)
        }
    );
    let other = link(&p, "b-a");
    assert_eq!(other.ab.rate_bps, 2_500_000_000);
    assert_eq!(
        other.ba.queue,
        QueuePlan::DropTail {
            limit: QueueLimit::Bytes(1500)
        }
    );
    assert_eq!(
        parse_queue("100pkts"),
        Ok(QueueSize(QueueLimit::Packets(100)))
    );
    assert_eq!(
        parse_queue("30KB"),
        Ok(QueueSize(QueueLimit::Bytes(30_000)))
    );
    assert!(parse_queue("1499B")
        .unwrap_err()
        .contains("full-sized packet"));
    assert!(parse_queue("0pkts")
        .unwrap_err()
        .contains("at least 1 packet"));
    assert!(parse_queue("100").unwrap_err().contains("unit is required"));
}

#[test]
fn trace_references_resolve() {
    let p = plan(
        r#"
duration = "10s"
[dumbbell]
pairs = 1
bottleneck_rate = "8Mbps"
[trace]
cwnd = false
cwnd_interval = "10ms"
queues = ["r1->r2", "r2 -> r1", "left0:ba", "r1->r2"]
queue_interval = "5ms"
goodput_window = "500ms"
pcap = ["bottleneck:ab", "right0->r2"]
snaplen = 128
"#,
    );
    let bn = p.links.iter().position(|l| l.name == "bottleneck").unwrap();
    let left0 = p.links.iter().position(|l| l.name == "left0").unwrap();
    let right0 = p.links.iter().position(|l| l.name == "right0").unwrap();
    let t = &p.trace;
    assert!(!t.cwnd);
    assert_eq!(t.cwnd_interval_ns, 10 * MS);
    assert_eq!(t.queue_interval_ns, 5 * MS);
    assert_eq!(t.goodput_window_ns, 500 * MS);
    assert_eq!(
        t.queues,
        [
            LinkDirRef {
                link: bn,
                reverse: false
            },
            LinkDirRef {
                link: bn,
                reverse: true
            },
            LinkDirRef {
                link: left0,
                reverse: true
            },
        ],
        "duplicates are dropped"
    );
    assert_eq!(t.pcaps.len(), 2);
    assert_eq!(
        t.pcaps[0].at,
        LinkDirRef {
            link: bn,
            reverse: false
        }
    );
    assert_eq!(t.pcaps[0].file, "r1-r2.pcap");
    assert_eq!(
        t.pcaps[1].at,
        LinkDirRef {
            link: right0,
            reverse: true
        }
    );
    assert_eq!(t.pcaps[1].file, "right0-r2.pcap");
    assert!(t.pcaps.iter().all(|c| c.snaplen == 128));

    let all = plan(
        r#"
duration = "10s"
[dumbbell]
pairs = 2
bottleneck_rate = "8Mbps"
[trace]
queues = ["*", "r1->r2"]
pcap = ["*"]
"#,
    );
    assert_eq!(all.trace.queues.len(), 2 * all.links.len());
    assert_eq!(all.trace.pcaps.len(), 2 * all.links.len());
    let mut files: Vec<&str> = all.trace.pcaps.iter().map(|c| c.file.as_str()).collect();
    files.sort();
    files.dedup();
    assert_eq!(
        files.len(),
        2 * all.links.len(),
        "pcap file names are distinct"
    );
}

#[test]
fn parallel_links_make_a_to_b_ambiguous_but_names_work() {
    let base = r#"
duration = "10s"
[[node]]
name = "x"
[[node]]
name = "y"
[[link]]
name = "one"
a = "x"
b = "y"
rate = "1Mbps"
[[link]]
name = "two"
a = "y"
b = "x"
rate = "1Mbps"
"#;
    let e = plan_err(&format!("{base}[trace]\nqueues = [\"x->y\"]\n"));
    assert_eq!(e.path, "trace.queues[0]");
    assert!(e.message.contains("ambiguous"), "{e}");
    let p = plan(&format!(
        "{base}[trace]\nqueues = [\"two:ba\"]\npcap = [\"one:ab\", \"two:ba\"]\n"
    ));
    assert_eq!(
        p.trace.queues,
        [LinkDirRef {
            link: 1,
            reverse: true
        }]
    );
    assert_eq!(p.trace.pcaps[0].file, "x-y.one.pcap");
    assert_eq!(p.trace.pcaps[1].file, "x-y.two.pcap");
}

#[test]
fn error_paths_name_the_field() {
    let e = plan_err(
        r#"
duration = "10s"
[dumbbell]
pairs = 1
bottleneck_rate = "8Mbps"
[[flow]]
src = "left0"
dst = "right0"
app = "bulk"
[[flow]]
src = "left0"
dst = "right0"
app = "bulk"
[[flow]]
src = "left0"
dst = "right0"
app = "bulk"
tcp = { min_rto = "soon" }
"#,
    );
    assert_eq!(e.path, "flow[2].tcp.min_rto");
    assert!(
        e.to_string()
            .starts_with("flow[2].tcp.min_rto: invalid duration"),
        "{e}"
    );

    let e = plan_err("duration = \"1s\"\n[[link]]\na = \"x\"\nb = \"y\"\nrate = \"1Mbps\"\n");
    assert_eq!(e.path, "link[0].a");

    // check() errors of values that come from the defaults point at the defaults
    let e = plan_err(
        r#"
duration = "10s"
[dumbbell]
pairs = 1
bottleneck_rate = "8Mbps"
[defaults.tcp]
mss = 10
[[flow]]
src = "left0"
dst = "right0"
app = "bulk"
"#,
    );
    assert_eq!(e.path, "defaults.tcp.mss");
    assert!(e.message.contains("flow[0]"), "{e}");

    let e = ScenarioError {
        path: String::new(),
        message: "oops".into(),
    };
    assert_eq!(e.to_string(), "oops");
}

#[test]
fn json_gives_the_same_plan_as_toml() {
    let toml_text = include_str!("../../../../examples/dumbbell.toml");
    let scenario = parse_toml(toml_text).unwrap();
    let json = serde_json::to_string(&scenario).unwrap();
    let from_json = plan_from_json(&json).unwrap();
    let from_toml = scenario.to_plan().unwrap();
    assert_eq!(format!("{from_json:?}"), format!("{from_toml:?}"));

    let e = plan_from_json(r#"{"duration": "1s", "flow": [{"src": "a", "dst": "b", "app": "bulk", "tcp": {"mss": "x"}}]}"#)
        .unwrap_err();
    assert_eq!(e.path, "flow[0].tcp.mss");
    let e = plan_from_json(r#"{"duration": "1s"} trailing"#).unwrap_err();
    assert!(e.message.contains("JSON syntax error"), "{e}");
}

#[test]
fn the_example_dumbbell_parses() {
    let p = plan(include_str!("../../../../examples/dumbbell.toml"));
    assert_eq!(p.flows.len(), 4);
    assert_eq!(p.nodes.len(), 10);
    assert_eq!(p.duration_ns, 60_000 * MS);
    let bn = link(&p, "bottleneck");
    assert_eq!(bn.ab.rate_bps, 8_000_000);
    let one_way = bn.ab.delay_ns + link(&p, "left0").ab.delay_ns + link(&p, "right0").ab.delay_ns;
    assert_eq!(one_way, 50 * MS, "RTT is 100 ms");
    assert_eq!(
        bn.ab.queue,
        QueuePlan::DropTail {
            limit: QueueLimit::Packets(67)
        }
    );
    assert!(p.trace.cwnd);
    let bi = p.links.iter().position(|l| l.name == "bottleneck").unwrap();
    assert_eq!(
        p.trace.queues,
        [LinkDirRef {
            link: bi,
            reverse: false
        }]
    );
    assert!(p
        .flows
        .iter()
        .all(|f| f.cc.name() == "newreno" && matches!(f.app, AppPlan::Bulk { .. })));
}

#[test]
fn json_schema_is_json_and_names_the_top_level_keys() {
    let s = json_schema();
    let v: serde_json::Value = serde_json::from_str(&s).expect("valid JSON");
    let props = v["properties"].as_object().expect("properties");
    for key in [
        "seed", "duration", "node", "link", "dumbbell", "defaults", "flow", "trace",
    ] {
        assert!(props.contains_key(key), "schema lacks {key}");
    }
    assert_eq!(v["additionalProperties"], serde_json::Value::Bool(false));
    assert!(v["required"]
        .as_array()
        .unwrap()
        .contains(&"duration".into()));
    // the tcp table is described by TcpConfig's fields
    assert!(s.contains("min_rto") && s.contains("initial_cwnd"));
    assert!(s.contains("newreno"));
}

/// Every string constant of the schema's `oneOf` / `anyOf` lists, with its description (None
/// when it has none), and every `enum` list of strings (which cannot describe its values), by
/// the schema path where it was found.
fn schema_values(
    v: &serde_json::Value,
    path: &str,
    consts: &mut Vec<(String, String, Option<String>)>,
    enums: &mut Vec<String>,
) {
    use serde_json::Value;
    match v {
        Value::Object(o) => {
            if o.get("enum")
                .and_then(Value::as_array)
                .is_some_and(|e| e.iter().any(Value::is_string))
            {
                enums.push(path.to_string());
            }
            for key in ["oneOf", "anyOf"] {
                for alt in o.get(key).and_then(Value::as_array).into_iter().flatten() {
                    if let Some(c) = alt.get("const").and_then(Value::as_str) {
                        let d = alt.get("description").and_then(Value::as_str);
                        consts.push((path.to_string(), c.to_string(), d.map(str::to_string)));
                    }
                }
            }
            for (k, x) in o {
                schema_values(x, &format!("{path}/{k}"), consts, enums);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                schema_values(x, &format!("{path}/{i}"), consts, enums);
            }
        }
        _ => {}
    }
}

#[test]
fn every_enum_value_has_its_description_in_the_schema() {
    let v: serde_json::Value = serde_json::from_str(&json_schema()).unwrap();
    let (mut consts, mut enums) = (Vec::new(), Vec::new());
    schema_values(&v, "", &mut consts, &mut enums);
    assert!(
        enums.is_empty(),
        "values listed without descriptions (an enum variant without a doc comment?): {enums:?}"
    );
    let undocumented: Vec<_> = consts
        .iter()
        .filter(|(_, _, d)| d.as_deref().is_none_or(|d| d.trim().is_empty()))
        .map(|(p, c, _)| format!("{p}: {c:?}"))
        .collect();
    assert!(
        undocumented.is_empty(),
        "values without a description: {undocumented:?}"
    );
    let described = |def: &str, value: &str| -> String {
        let path = format!("/$defs/{def}");
        consts
            .iter()
            .find(|(p, c, _)| p.starts_with(&path) && c == value)
            .and_then(|(_, _, d)| d.clone())
            .unwrap_or_else(|| panic!("{def} has no value {value:?}"))
    };
    // the doc comments of the variants, in the `[flow.tcp]` options, players and queues
    assert!(described("RecoveryMode", "prr").contains("RFC 6937"));
    assert!(described("PrrVariant", "linux-3").contains("Linux 3.2"));
    assert!(described("CwndGrowth", "per-ack").contains("TcpNewReno::SlowStart"));
    assert!(described("RtoSsthresh", "every-in-flight").contains("ReTxTimeout"));
    assert!(described("RtoFormula", "linux").contains("__tcp_set_rto"));
    assert!(described("ConnectionKind", "rotate").contains("in turn"));
    // a bare algorithm name is described by its algorithm's summary
    use crate::has::players::AbrConfig;
    use crate::sim::registry::Registry;
    for (def, names, summaries) in [
        (
            "CcSpec",
            CcConfig::NAMES,
            <CcConfig as Registry>::summaries(),
        ),
        (
            "AbrSpec",
            AbrConfig::NAMES,
            <AbrConfig as Registry>::summaries(),
        ),
    ] {
        assert_eq!(names.len(), summaries.len());
        for (name, summary) in names.iter().zip(summaries) {
            assert_eq!(&described(def, name), summary, "{def} {name}");
        }
    }
    // and each family's table by its type's doc comment
    for def in ["CcConfig", "AbrConfig"] {
        let d = v["$defs"][def]["description"].as_str().unwrap_or("");
        assert!(d.contains("algorithm and its parameters"), "{def}: {d:?}");
    }
}

#[test]
fn cc_accepts_a_name_a_table_or_an_alias() {
    let base = "duration = \"1s\"\n[dumbbell]\npairs = 1\nbottleneck_rate = \"1Mbps\"\n[[flow]]\nsrc = \"left0\"\ndst = \"right0\"\napp = \"bulk\"\n";
    for cc in [
        "\"newreno\"",
        "\"reno\"",
        "{ algorithm = \"reno\" }",
        "{ algorithm = \"newreno\", grow_when_app_limited = false }",
    ] {
        let p = plan(&format!("{base}cc = {cc}\n"));
        assert_eq!(p.flows[0].cc, CcConfig::default(), "{cc}");
    }
    let e = plan_err(&format!(
        "{base}cc = {{ algorithm = \"newreno\", grow_when_app_limited = \"yes\" }}\n"
    ));
    assert_eq!(e.path, "flow[0].cc");
    assert!(e.message.contains("boolean"), "{e}");
    // a duplicate explicit node that merely looks like a dumbbell name is not blamed on it
    let e = plan_err("duration = \"1s\"\n[dumbbell]\npairs = 1\nbottleneck_rate = \"1Mbps\"\n[[node]]\nname = \"left7\"\n[[node]]\nname = \"left7\"\n");
    assert_eq!(e.path, "node[1].name");
    assert!(!e.message.contains("dumbbell"), "{e}");
}
