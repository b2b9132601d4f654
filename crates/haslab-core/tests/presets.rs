//! The topology presets: each builds with its paper's number of clients, runs for a short
//! time, and its description (what `haslab describe` prints) states the numbers of the
//! paper's text — rates, delays, queues, RTT, BDP, cross-traffic, player slots.

use haslab_core::scenario::{describe, plan_from_toml, Plan};
use haslab_core::{run_plan, RunOptions};
use serde_json::Value;

const S: u64 = 1_000_000_000;
const MS: u64 = 1_000_000;

fn plan(preset: &str, duration: &str) -> Plan {
    let text = format!("duration = \"{duration}\"\n[preset]\n{preset}\n");
    plan_from_toml(&text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// The description of one link direction "A->B".
fn link<'a>(d: &'a Value, name: &str) -> &'a Value {
    d["links"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["name"] == name)
        .unwrap_or_else(|| panic!("no link direction {name}"))
}

fn slots(d: &Value) -> &Vec<Value> {
    d["preset"]["player_slots"].as_array().unwrap()
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

fn hops(path: &Value) -> Vec<&str> {
    path["hops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h.as_str().unwrap())
        .collect()
}

#[test]
fn tcphas_home_is_fig_1_of_the_tcphas_paper() {
    let p = plan("name = \"tcphas-home\"\nclients = 8", "10s");
    let d = describe(&p);
    // 8 clients, HG, DSLAM, BNG, IR, 8 servers, the PPBP source and sink
    assert_eq!(d["nodes"].as_array().unwrap().len(), 8 + 4 + 8 + 2);
    // home network 100 Mbps
    assert_eq!(u(&link(&d, "C0->HG")["rate_bps"]), 100_000_000);
    // bottleneck HG–DSLAM 8 Mbps, drop-tail of one BDP (8 Mbps × 100 ms = 100 kB) at the DSLAM
    let bn = link(&d, "DSLAM->HG");
    assert_eq!(u(&bn["rate_bps"]), 8_000_000);
    assert_eq!(bn["queue"]["kind"], "droptail");
    assert_eq!(u(&bn["queue"]["limit_bytes"]), 100_000);
    // AggLine, ISPLink, NetLink: 100 Mbps with 1000-packet queues
    for l in [
        "DSLAM->BNG",
        "BNG->DSLAM",
        "BNG->IR",
        "IR->BNG",
        "IR->S3",
        "S3->IR",
    ] {
        assert_eq!(u(&link(&d, l)["rate_bps"]), 100_000_000, "{l}");
        assert_eq!(u(&link(&d, l)["queue"]["limit_packets"]), 1000, "{l}");
    }
    // every player: RTT 100 ms, bottleneck DSLAM->HG, BDP = queue = 100 kB
    let s = slots(&d);
    assert_eq!(s.len(), 8);
    for (i, sl) in s.iter().enumerate() {
        assert_eq!(sl["client"], format!("C{i}"));
        assert_eq!(sl["server"], format!("S{i}"));
        let path = &sl["path"];
        assert_eq!(u(&path["rtt_ns"]), 100 * MS);
        assert_eq!(path["bottleneck"], "DSLAM->HG");
        assert_eq!(u(&path["bdp_bytes"]), 100_000);
        assert_eq!(path["queue_over_bdp"].as_f64().unwrap(), 1.0);
        assert_eq!(
            hops(path),
            [
                format!("S{i}->IR").as_str(),
                "IR->BNG",
                "BNG->DSLAM",
                "DSLAM->HG",
                format!("HG->C{i}").as_str()
            ]
        );
    }
    // PPBP at 40 Mbps (40 % of ISPLink), crossing ISPLink and AggLine but not the bottleneck
    let t = &d["traffic"][0];
    assert_eq!(t["kind"], "ppbp");
    assert_eq!(t["mean_rate_bps"].as_f64().unwrap(), 40e6);
    assert_eq!(t["params"]["hurst"].as_f64().unwrap(), 0.7);
    let th = hops(&t["path"]);
    assert!(
        th.contains(&"IR->BNG") && th.contains(&"BNG->DSLAM"),
        "{th:?}"
    );
    assert!(!th.iter().any(|h| h.contains("HG")), "{th:?}");
    let ratio = t["mean_rate_bps"].as_f64().unwrap() / u(&link(&d, "IR->BNG")["rate_bps"]) as f64;
    assert_eq!(ratio, 0.4);

    // runs: the PPBP cross-traffic loads ISPLink and AggLine at about 40 Mbps
    let r = run_plan(&p, &RunOptions::default()).unwrap();
    let ppbp = &r.traffic[0];
    let rel = ppbp.received_mean_bps / 40e6;
    assert!((0.7..1.3).contains(&rel), "{ppbp:?}");
    let isp = r.links.iter().find(|l| l.name == "IR->BNG").unwrap();
    assert!(isp.tx_bytes >= ppbp.received_bytes);
    let bottleneck = r.links.iter().find(|l| l.name == "DSLAM->HG").unwrap();
    assert_eq!(
        bottleneck.tx_packets, 0,
        "nothing crosses the bottleneck without players"
    );
}

#[test]
fn tcphas_home_scales_with_its_parameters() {
    for n in [1u64, 9] {
        let p = plan(&format!("name = \"tcphas-home\"\nclients = {n}"), "1s");
        assert_eq!(p.preset.as_ref().unwrap().player_slots.len() as u64, n);
        assert_eq!(p.nodes.len() as u64, 2 * n + 6);
    }
    // a 4 Mbps bottleneck and a 200 ms RTT: the queue follows the BDP (100 kB again)
    let d = describe(&plan(
        "name = \"tcphas-home\"\nbottleneck_rate = \"4Mbps\"\nrtt = \"200ms\"",
        "1s",
    ));
    assert_eq!(u(&link(&d, "DSLAM->HG")["queue"]["limit_bytes"]), 100_000);
    assert_eq!(u(&slots(&d)[0]["path"]["rtt_ns"]), 200 * MS);
}

#[test]
fn enhancing_dumbbell_is_fig_4_with_30_kb_ports_and_1_percent_loss() {
    let p = plan("name = \"enhancing-dumbbell\"", "20s");
    let d = describe(&p);
    assert_eq!(
        d["nodes"],
        serde_json::json!(["server", "switch1", "switch2", "client"])
    );
    let bn = link(&d, "switch1->switch2");
    assert_eq!(u(&bn["rate_bps"]), 10_000_000);
    assert_eq!(bn["loss"].as_f64().unwrap(), 0.01);
    // every switch port: 30 KB drop-tail
    for l in [
        "switch1->switch2",
        "switch2->switch1",
        "switch1->server",
        "switch2->client",
    ] {
        assert_eq!(u(&link(&d, l)["queue"]["limit_bytes"]), 30_000, "{l}");
    }
    // the hosts' own output queues: NS-2's default 50 packets
    for l in ["server->switch1", "client->switch2"] {
        assert_eq!(u(&link(&d, l)["queue"]["limit_packets"]), 50, "{l}");
    }
    // the random loss on the data direction only, or on the ACKs with loss_direction = "ack"
    assert_eq!(link(&d, "switch2->switch1")["loss"].as_f64().unwrap(), 0.0);
    let a = describe(&plan(
        "name = \"enhancing-dumbbell\"\nloss_direction = \"ack\"",
        "1s",
    ));
    assert_eq!(link(&a, "switch1->switch2")["loss"].as_f64().unwrap(), 0.0);
    assert_eq!(link(&a, "switch2->switch1")["loss"].as_f64().unwrap(), 0.01);
    let e = plan_from_toml(
        "duration = \"1s\"\n[preset]\nname = \"enhancing-dumbbell\"\nloss_direction = \"up\"\n",
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("preset.loss_direction"), "{e}");
    let path = &slots(&d)[0]["path"];
    assert_eq!(u(&path["rtt_ns"]), 100 * MS);
    assert_eq!(path["bottleneck"], "switch1->switch2");
    // 10 Mbps × 100 ms = 125 KB > 30 KB
    assert_eq!(u(&path["bdp_bytes"]), 125_000);
    // §4.1: at 20 ms RTT the BDP (25 KB) is below the 30 KB buffer, and at 2 Mbps too
    for preset in [
        "name = \"enhancing-dumbbell\"\nrtt = \"20ms\"",
        "name = \"enhancing-dumbbell\"\nbottleneck_rate = \"2Mbps\"",
    ] {
        let d = describe(&plan(preset, "1s"));
        let path = &slots(&d)[0]["path"];
        assert_eq!(u(&path["bdp_bytes"]), 25_000, "{preset}");
        assert!(u(&path["bdp_bytes"]) < u(&path["bottleneck_queue_bytes"]));
    }
    run_plan(&p, &RunOptions::default()).unwrap();
}

#[test]
fn enhancing_cross_is_fig_9_with_on_off_and_cbr_across_the_bottleneck() {
    let p = plan("name = \"enhancing-cross\"\ncbr_rate = \"3000kbps\"", "30s");
    let d = describe(&p);
    assert_eq!(d["nodes"].as_array().unwrap().len(), 8);
    let t = d["traffic"].as_array().unwrap();
    let exp = &t[0];
    assert_eq!(exp["kind"], "onoff");
    assert_eq!(u(&exp["params"]["rate_bps"]), 5_000_000);
    assert_eq!(u(&exp["params"]["mean_on_ns"]), 500 * MS);
    assert_eq!(u(&exp["params"]["mean_off_ns"]), 500 * MS);
    // "the overall bit rate of the exponential traffic during the whole period is 2.5 Mbps"
    assert_eq!(exp["mean_rate_bps"].as_f64().unwrap(), 2.5e6);
    let cbr = &t[1];
    assert_eq!(cbr["kind"], "cbr");
    assert_eq!(cbr["mean_rate_bps"].as_f64().unwrap(), 3e6);
    for g in t {
        assert_eq!(g["path"]["bottleneck"], "switch_1->switch_2");
    }
    assert_eq!(slots(&d)[0]["path"]["bottleneck"], "switch_1->switch_2");
    let r = run_plan(&p, &RunOptions::default()).unwrap();
    // both generators load the bottleneck (which they share with nothing else yet)
    let cbr = &r.traffic[1];
    assert!((cbr.received_mean_bps / 3e6 - 1.0).abs() < 0.01, "{cbr:?}");
    let bn = r
        .links
        .iter()
        .find(|l| l.name == "switch_1->switch_2")
        .unwrap();
    assert!(bn.tx_bytes >= r.traffic[0].received_bytes + cbr.received_bytes);
}

#[test]
fn enhancing_tcp_flow_is_fig_12_with_a_bulk_tcp_competitor() {
    let p = plan("name = \"enhancing-tcp-flow\"", "30s");
    let d = describe(&p);
    let f = &d["flows"][0];
    assert_eq!(
        (f["src"].as_str(), f["dst"].as_str()),
        (Some("TCP"), Some("sink"))
    );
    assert_eq!(f["app"]["kind"], "bulk");
    assert_eq!(f["path"]["bottleneck"], "switch1->switch2");
    assert_eq!(link(&d, "switch1->switch2")["loss"].as_f64().unwrap(), 0.01);
    let r = run_plan(&p, &RunOptions::default()).unwrap();
    // alone with 1 % loss the flow gets a fraction of 10 Mbps (Table 1: 5–7 Mbps next to HAS)
    let g = r.flows[0].goodput_bps;
    assert!(g > 1e6 && g < 10e6, "{g}");
    assert!(
        r.links
            .iter()
            .find(|l| l.name == "switch1->switch2")
            .unwrap()
            .lost_packets
            > 0
    );
}

#[test]
fn household_environments_follow_the_qoe_paper() {
    let min = 60 * S;
    // environment 1: five viewers, together, 10 min, 20 Mbps router
    let d = describe(&plan("name = \"household\"", "600s"));
    assert_eq!(u(&link(&d, "server->router")["rate_bps"]), 20_000_000);
    let s = slots(&d);
    assert_eq!(s.len(), 5);
    for sl in s {
        assert_eq!((u(&sl["start_ns"]), u(&sl["stop_ns"])), (0, 10 * min));
        assert_eq!(sl["server"], "server");
        assert_eq!(sl["path"]["bottleneck"], "server->router");
    }
    // environment 2: a new viewer every 2 min, all watch until 10 min
    let d = describe(&plan("name = \"household\"\nenvironment = 2", "600s"));
    let starts: Vec<u64> = slots(&d).iter().map(|s| u(&s["start_ns"])).collect();
    assert_eq!(starts, [0, 2 * min, 4 * min, 6 * min, 8 * min]);
    // environment 3: all start together, one leaves every 2 min, the last one is alone for 2 min
    let d = describe(&plan("name = \"household\"\nenvironment = 3", "600s"));
    let stops: Vec<u64> = slots(&d).iter().map(|s| u(&s["stop_ns"])).collect();
    assert_eq!(stops, [10 * min, 8 * min, 6 * min, 4 * min, 2 * min]);
    // other numbers of viewers are spread evenly over the 10 minutes
    let d = describe(&plan(
        "name = \"household\"\nenvironment = 3\nclients = 10",
        "600s",
    ));
    let stops: Vec<u64> = slots(&d).iter().map(|s| u(&s["stop_ns"])).collect();
    assert_eq!(stops, (0..10).map(|i| (10 - i) * min).collect::<Vec<_>>());
    // environment 4: one viewer; 50 % of what the server receives is lost for 1 s at 30 s
    let p = plan("name = \"household\"\nenvironment = 4", "40s");
    let d = describe(&p);
    assert_eq!(slots(&d).len(), 1);
    let e = &d["loss_events"][0];
    assert_eq!(e["at"], "router->server");
    assert_eq!(e["loss"].as_f64().unwrap(), 0.5);
    assert_eq!((u(&e["start_ns"]), u(&e["stop_ns"])), (30 * S, 31 * S));
    run_plan(&p, &RunOptions::default()).unwrap();
}

/// `start_jitter`: each viewer starts within [its time, its time + jitter), one draw per
/// viewer from the scenario's seed, the same for the same seed; the player follows its slot;
/// without it the starts are the paper's.
#[test]
fn household_start_jitter_draws_each_viewers_start_from_the_seed() {
    let min = 60 * S;
    let starts = |seed: u64, extra: &str| -> Vec<u64> {
        let text = format!(
            "seed = {seed}\nduration = \"600s\"\n[preset]\nname = \"household\"\nenvironment = 2\n\
             player = {{ abr = \"panda\", video = \"qoe\" }}\n{extra}"
        );
        let p = plan_from_toml(&text).unwrap();
        let slots = &p.preset.as_ref().unwrap().player_slots;
        for (pl, sl) in p.players.iter().zip(slots) {
            assert_eq!(pl.start_ns, sl.start_ns);
        }
        slots.iter().map(|sl| sl.start_ns).collect()
    };
    let paper: Vec<u64> = (0..5).map(|i| i * 2 * min).collect();
    assert_eq!(starts(1, ""), paper);
    assert_eq!(starts(1, "start_jitter = \"0s\""), paper);
    let a = starts(1, "start_jitter = \"1s\"");
    for (t, p0) in a.iter().zip(&paper) {
        assert!(*t >= *p0 && *t < p0 + S, "{t} not within 1 s after {p0}");
    }
    let offsets: Vec<u64> = a.iter().zip(&paper).map(|(t, p0)| t - p0).collect();
    assert!(offsets.windows(2).any(|w| w[0] != w[1]), "{offsets:?}");
    assert_eq!(
        a,
        starts(1, "start_jitter = \"1s\""),
        "same seed, same starts"
    );
    assert_ne!(
        a,
        starts(2, "start_jitter = \"1s\""),
        "another seed, other starts"
    );
    // bounded by 60 s and by the environments' spacing (10 min / 5 viewers = 2 min)
    for (jitter, ok) in [("60s", true), ("61s", false), ("2min", false)] {
        let text = format!(
            "duration = \"600s\"\n[preset]\nname = \"household\"\nstart_jitter = \"{jitter}\"\n"
        );
        let r = plan_from_toml(&text);
        assert_eq!(r.is_ok(), ok, "{jitter}");
        if let Err(e) = r {
            assert!(e.to_string().contains("preset.start_jitter"), "{e}");
        }
    }
    let e = plan_from_toml(
        "duration = \"60s\"\n[preset]\nname = \"newcwv-single\"\nstart_jitter = \"1s\"\n",
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("preset.start_jitter") && e.contains("not a parameter"),
        "{e}"
    );
}

#[test]
fn newcwv_presets_are_figs_1_and_6() {
    let d = describe(&plan("name = \"newcwv-single\"", "10s"));
    let bn = link(&d, "router1->router2");
    assert_eq!(u(&bn["rate_bps"]), 1_000_000);
    assert_eq!(u(&bn["queue"]["limit_bytes"]), 30_000);
    let path = &slots(&d)[0]["path"];
    assert_eq!(u(&path["rtt_ns"]), 200 * MS);
    // 1 Mbps × 200 ms = 25 KB, under the 30 KB queue
    assert_eq!(u(&path["bdp_bytes"]), 25_000);
    assert_eq!(path["queue_over_bdp"].as_f64().unwrap(), 1.2);

    let p = plan("name = \"newcwv-shared\"", "90s");
    let d = describe(&p);
    let ftp = &d["flows"][0];
    assert_eq!(
        (ftp["src"].as_str(), ftp["dst"].as_str()),
        (Some("server2"), Some("client2"))
    );
    assert_eq!(ftp["cc"], "newreno");
    // FTP starts 1 min after DASH; DASH stops at 400 s
    assert_eq!(u(&ftp["app"]["start_ns"]), 60 * S);
    let dash = &slots(&d)[0];
    assert_eq!(
        (dash["client"].as_str(), dash["server"].as_str()),
        (Some("client1"), Some("server1"))
    );
    assert_eq!(u(&dash["stop_ns"]), 400 * S);
    assert_eq!(ftp["path"]["bottleneck"], "router1->router2");
    let r = run_plan(&p, &RunOptions::default()).unwrap();
    // alone after 60 s, the FTP flow fills most of the 1 Mbps bottleneck
    let f = &r.flows[0];
    assert!(f.established_ns.unwrap() >= 60 * S);
    assert!(f.goodput_bps > 0.7e6 && f.goodput_bps < 1e6, "{f:?}");
}

#[test]
fn queue_drops_are_split_by_flow_and_each_one_is_retransmitted() {
    // newCWV without pacing bursts its preserved cwnd into the 30 KB queue: drops happen
    let text = "seed = 1\nduration = \"120s\"\n[preset]\nname = \"newcwv-single\"\n\
        player = { abr = \"rbb\", video = \"newcwv\", refill = \"20s\", transport = \"newcwv\" }\n";
    let r = run_plan(&plan_from_toml(text).unwrap(), &RunOptions::default()).unwrap();
    let bn = r
        .links
        .iter()
        .find(|l| l.name == "router1->router2")
        .unwrap();
    let dash: Vec<_> = r.flows.iter().filter(|f| f.src == "server1").collect();
    let drops: u64 = dash.iter().map(|f| f.queue_dropped_packets).sum();
    assert!(drops > 0, "{bn:?}");
    // the data direction of the bottleneck carries the DASH data and the server's pure ACKs
    assert!(
        drops <= bn.dropped_packets,
        "{drops} > {}",
        bn.dropped_packets
    );
    for f in &dash {
        // without SACK every dropped segment is sent again (some still unrepaired at the end)
        assert!(
            f.queue_dropped_packets <= f.transfer.retransmitted_segments + f.final_cwnd_pkts as u64,
            "{f:?}"
        );
    }
}

#[test]
fn a_file_can_add_its_own_entries_to_a_preset() {
    // an extra CBR between two of the preset's nodes, and a loss event on its bottleneck
    let text = r#"
duration = "5s"
[preset]
name = "newcwv-single"
[[traffic]]
kind = "cbr"
src = "server1"
dst = "client1"
rate = "200kbps"
[[loss_event]]
link = "bottleneck"
loss = "10%"
start = "1s"
stop = "2s"
"#;
    let p = plan_from_toml(text).unwrap();
    assert_eq!(p.traffic.len(), 1);
    assert_eq!(p.dynamics.loss_events.len(), 2); // both directions of the bottleneck
    let r = run_plan(&p, &RunOptions::default()).unwrap();
    assert!(r.traffic[0].received_packets > 0);
}

/// The QoE paper's testbed is Linux 3.19: its player slots get SACK, PRR, tail loss probes,
/// 3.19's delayed-ACK rules, cwnd growth, cwnd-limited test, congestion-control RTT samples, undo
/// and TX_START unless the template's own `tcp` table says otherwise, key by key.
/// Presets of ns-3 papers keep haslab's defaults.
#[test]
fn household_players_default_to_the_linux_stack_of_the_testbed() {
    use haslab_core::tcp::config::{
        CaSample, CwndGrowth, CwndLimited, DelayedAckMode, GrowthCount, PriorSsthresh,
        RecoveryMode, TxStartEvent, UndoCwnd,
    };
    let p = plan(
        "name = \"household\"\nplayer = { abr = \"panda\", video = \"qoe\", cc = \"yeah\" }",
        "10s",
    );
    assert_eq!(p.players.len(), 5);
    for pl in &p.players {
        assert!(pl.tcp.sack && pl.tcp.tlp, "{}", pl.name);
        assert_eq!(pl.tcp.recovery, RecoveryMode::Prr);
        assert_eq!(pl.tcp.delayed_ack, DelayedAckMode::Linux3);
        assert_eq!(pl.tcp.cwnd_growth, CwndGrowth::Linux319);
        assert_eq!(pl.tcp.undo_cwnd, UndoCwnd::Linux319);
        assert_eq!(pl.tcp.prior_ssthresh, PriorSsthresh::Linux);
        assert_eq!(pl.tcp.tx_start, TxStartEvent::Linux);
        assert_eq!(pl.tcp.cwnd_limited, CwndLimited::Linux319);
        assert_eq!(pl.tcp.growth_count, GrowthCount::Linux319);
        assert_eq!(pl.tcp.ca_sample, CaSample::Linux319);
    }
    let p = plan(
        "name = \"household\"\nplayer = { abr = \"panda\", video = \"qoe\", tcp = { tlp = false, delayed_ack = \"on\" } }",
        "10s",
    );
    for pl in &p.players {
        assert!(pl.tcp.sack && !pl.tcp.tlp, "{}", pl.name);
        assert_eq!(pl.tcp.delayed_ack, DelayedAckMode::On);
    }
    let p = plan(
        "name = \"tcphas-home\"\nplayer = { abr = \"rbb\", video = \"tcphas\" }",
        "10s",
    );
    let default = haslab_core::tcp::config::TcpConfig::default();
    for pl in &p.players {
        assert_eq!(pl.tcp.sack, default.sack);
        assert_eq!(pl.tcp.tlp, default.tlp);
        assert_eq!(pl.tcp.delayed_ack, default.delayed_ack);
    }
    // a named transport is the whole stack: cubic-standard has no SACK
    let p = plan(
        "name = \"household\"\nplayer = { abr = \"panda\", video = \"qoe\", transport = \"cubic-standard\" }",
        "10s",
    );
    for pl in &p.players {
        assert!(!pl.tcp.sack && !pl.tcp.tlp, "{}", pl.name);
    }
    let text = "duration = \"10s\"\n[preset]\nname = \"household\"\nplayer = { abr = \"panda\", video = \"qoe\", tcp = 3 }\n";
    let e = plan_from_toml(text).unwrap_err().to_string();
    assert!(e.contains("preset.player.tcp"), "{e}");
}

#[test]
fn a_player_template_fills_every_slot_of_a_preset() {
    // the TcpHas paper's setting: 8 RBB players in the home network, PPBP cross-traffic
    let p = plan(
        "name = \"tcphas-home\"\nclients = 8\nplayer = { abr = \"rbb\", video = \"tcphas\" }",
        "60s",
    );
    let slots = &p.preset.as_ref().unwrap().player_slots;
    assert_eq!(p.players.len(), slots.len());
    for (pl, sl) in p.players.iter().zip(slots) {
        assert_eq!((pl.client, pl.server), (sl.client, sl.server));
        assert_eq!(pl.start_ns, sl.start_ns);
    }
    let r = haslab_core::run_plan(&p, &haslab_core::RunOptions::default()).unwrap();
    assert_eq!(r.players.len(), 8);
    for pl in &r.players {
        assert!(
            pl.segments >= 10,
            "{} downloaded {} segments",
            pl.name,
            pl.segments
        );
    }
    // the template may not set what the slots set
    let text = "duration = \"10s\"\n[preset]\nname = \"tcphas-home\"\nplayer = { abr = \"rbb\", video = \"tcphas\", client = \"C0\" }\n";
    let e = plan_from_toml(text).unwrap_err().to_string();
    assert!(e.contains("preset.player.client"), "{e}");
    let text = "duration = \"10s\"\n[preset]\nname = \"newcwv-single\"\nplayer = { abr = \"nope\", video = \"newcwv\" }\n";
    let e = plan_from_toml(text).unwrap_err().to_string();
    assert!(e.contains("preset.player"), "{e}");
}

#[test]
fn every_preset_runs_for_its_papers_duration_with_its_papers_players() {
    // (preset parameters, paper duration, player template): the TcpHas paper's K = 180 s with
    // 8 RBB players; the Enhancing-TCP runs of 600 s with one client; the QoE paper's 10 min
    // with 5 Conventional viewers (environment 3: viewers leave every 2 min); the newCWV
    // paper's DASH flow stopped at 400 s (with the FTP competitor from 60 s)
    let cases = [
        (
            "name = \"tcphas-home\"\nclients = 8",
            "180s",
            "abr = \"rbb\", video = \"tcphas\"",
        ),
        (
            "name = \"enhancing-dumbbell\"",
            "600s",
            "abr = \"conventional\", video = \"qoe\"",
        ),
        (
            "name = \"enhancing-cross\"",
            "600s",
            "abr = \"conventional\", video = \"qoe\"",
        ),
        (
            "name = \"enhancing-tcp-flow\"",
            "600s",
            "abr = \"conventional\", video = \"qoe\"",
        ),
        (
            "name = \"household\"\nenvironment = 3",
            "600s",
            "abr = \"panda\", video = \"qoe\"",
        ),
        (
            "name = \"newcwv-single\"",
            "400s",
            "abr = \"conventional\", video = \"newcwv\"",
        ),
        (
            "name = \"newcwv-shared\"",
            "420s",
            "abr = \"conventional\", video = \"newcwv\"",
        ),
    ];
    for (preset, duration, player) in cases {
        let p = plan(&format!("{preset}\nplayer = {{ {player} }}"), duration);
        let slots = p.preset.as_ref().unwrap().player_slots.clone();
        assert!(!slots.is_empty(), "{preset}");
        let r = haslab_core::run_plan(&p, &haslab_core::RunOptions::default()).unwrap();
        assert_eq!(r.players.len(), slots.len(), "{preset}");
        for (pl, sl) in r.players.iter().zip(&slots) {
            // every viewer streams through its slot: at least a third of its time's segments
            let watched_ns = sl.stop_ns.unwrap_or(p.duration_ns).min(p.duration_ns) - sl.start_ns;
            let expected = watched_ns / 2_000_000_000;
            assert!(
                pl.segments * 3 >= expected,
                "{preset}: {} got {} segments in {} s",
                pl.name,
                pl.segments,
                watched_ns / 1_000_000_000
            );
            assert!(pl.media_bytes > 0);
        }
    }
}
