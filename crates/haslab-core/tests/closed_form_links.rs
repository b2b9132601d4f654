//! `[[traffic]].private_links = "closed-form"`: a datagram generator's own links crossed without
//! events. The queueing it causes on the links it shares with TCP must be the same as with the
//! packet-by-packet form: the only difference allowed is the order of events at the same
//! nanosecond (the closed form schedules a datagram's arrival at the shared link when it is
//! sent, not when its serialisation ends), so the statistics agree within the stated tolerances
//! while the private links cost no events.

use haslab_core::metrics::SimResult;
use haslab_core::scenario::plan_from_toml;
use haslab_core::{run_plan, RunOptions};

/// PPBP (40 Mbps, H = 0.8) from S to K over S->R1 (1 Gbps, its own), R1->R2 (100 Mbps, 100
/// packets, shared with a NewReno flow C -> D) and R2->K (1 Gbps, its own).
fn scenario(private_links: &str, seed: u64) -> String {
    format!(
        r#"
seed = {seed}
duration = "30s"
[[node]]
name = "S"
[[node]]
name = "C"
[[node]]
name = "R1"
[[node]]
name = "R2"
[[node]]
name = "D"
[[node]]
name = "K"
[[link]]
a = "S"
b = "R1"
rate = "1Gbps"
delay = "1ms"
[[link]]
a = "C"
b = "R1"
rate = "100Mbps"
delay = "1ms"
[[link]]
a = "R1"
b = "R2"
rate = "100Mbps"
delay = "10ms"
queue = "100pkts"
[[link]]
a = "R2"
b = "D"
rate = "100Mbps"
delay = "1ms"
[[link]]
a = "R2"
b = "K"
rate = "1Gbps"
delay = "1ms"
[[flow]]
name = "tcp"
src = "C"
dst = "D"
app = "bulk"
cc = "newreno"
[[traffic]]
name = "ppbp"
kind = "ppbp"
src = "S"
dst = "K"
rate = "40Mbps"
hurst = 0.8
private_links = "{private_links}"
[trace]
cwnd = false
"#
    )
}

fn run(private_links: &str, seed: u64) -> SimResult {
    let plan = plan_from_toml(&scenario(private_links, seed)).expect("a valid scenario");
    run_plan(&plan, &RunOptions::default()).expect("a run")
}

fn within(what: &str, a: f64, b: f64, rel: f64) {
    assert!(
        (a - b).abs() <= rel * b.abs().max(1e-9),
        "{what}: closed form {a} vs packets {b} (tolerance {:.0} %)",
        rel * 100.0
    );
}

#[test]
fn queueing_on_the_shared_link_agrees_and_the_private_links_cost_no_events() {
    for seed in [1, 2] {
        let packets = run("packets", seed);
        let closed = run("closed-form", seed);
        let link = |r: &SimResult, name: &str| {
            r.links
                .iter()
                .find(|l| l.name == name)
                .cloned()
                .expect("a link")
        };
        let (p, c) = (link(&packets, "R1->R2"), link(&closed, "R1->R2"));
        // the shared queue: utilisation, mean and 99th-percentile queuing delay, drops
        within("R1->R2 utilization", c.utilization, p.utilization, 0.01);
        within(
            "R1->R2 mean queuing delay",
            c.sojourn_mean_ns,
            p.sojourn_mean_ns,
            0.05,
        );
        within(
            "R1->R2 p99 queuing delay",
            c.sojourn_p99_ns as f64,
            p.sojourn_p99_ns as f64,
            0.10,
        );
        within(
            "R1->R2 drops",
            c.dropped_packets as f64,
            p.dropped_packets as f64,
            0.10,
        );
        within(
            "tcp goodput",
            closed.flows[0].goodput_bps,
            packets.flows[0].goodput_bps,
            0.03,
        );
        // the datagrams: the same ones are sent; as many arrive within the drops' difference
        let (tp, tc) = (&packets.traffic[0], &closed.traffic[0]);
        assert_eq!(tc.sent_packets, tp.sent_packets);
        within(
            "ppbp received bytes",
            tc.received_bytes as f64,
            tp.received_bytes as f64,
            0.01,
        );
        // the private links carry every datagram (counted when sent in closed form, so those
        // still in flight at the end count too) and queue nothing at 4 % load behind 1 Gbps
        for name in ["S->R1", "R2->K"] {
            let (p, c) = (link(&packets, name), link(&closed, name));
            within(
                &format!("{name} packets"),
                c.tx_packets as f64,
                p.tx_packets as f64,
                0.001,
            );
            within(
                &format!("{name} utilization"),
                c.utilization,
                p.utilization,
                0.01,
            );
            assert_eq!(c.dropped_packets, p.dropped_packets, "{name} drops");
        }
        // per datagram, the private links cost one event (reaching R1) instead of two in the
        // packet form, whose links are in the scheduled form (one event per packet per hop,
        // `net::link`): the sink's link costs none (less for the datagrams R1->R2 drops, which
        // never reach the sink's link); against links in the event form (two events per
        // packet per hop), three of the four events are saved
        let saved = packets.events - closed.events;
        assert!(
            saved as f64 >= 0.9 * tp.sent_packets as f64,
            "saved {saved} events for {} datagrams",
            tp.sent_packets
        );
        let event_form = |private_links| {
            let plan = plan_from_toml(&scenario(private_links, seed)).expect("a valid scenario");
            let opts = RunOptions {
                event_form_links: true,
                ..Default::default()
            };
            run_plan(&plan, &opts).expect("a run").events
        };
        let saved = event_form("packets") - event_form("closed-form");
        assert!(
            saved as f64 >= 0.9 * 3.0 * tp.sent_packets as f64,
            "saved {saved} events for {} datagrams against the event form",
            tp.sent_packets
        );
    }
}

#[test]
fn a_web_generator_cannot_use_closed_form_private_links() {
    let text = scenario("closed-form", 1)
        .replace("kind = \"ppbp\"", "kind = \"web\"")
        .replace("hurst = 0.8\n", "");
    let e = plan_from_toml(&text).expect_err("web with closed-form private links");
    assert_eq!(e.path, "traffic[0].private_links", "{e}");
}
