//! The world's packet store: a packet keeps its slot from the moment it is sent until it is
//! delivered, lost or dropped (`net::packet`), so at any moment between events the store holds
//! exactly the packets in the links' queues, transmitters and pipes. A path that forgets to
//! release a slot would leak it silently (the run's results do not read the store's size).

use super::World;
use crate::scenario::{plan_from_toml, plan_from_toml_in, Plan};
use crate::RunOptions;

/// The packets the links hold: waiting in a queue, being serialised, or propagating.
fn packets_on_links(w: &World) -> usize {
    w.links
        .iter()
        .map(|l| l.queue.len_pkts() as usize + usize::from(l.in_tx.is_some()) + l.pipe.len())
        .sum()
}

/// Runs `plan` to its end in `checks` steps and checks the store after each; returns the
/// packets dropped by queues and lost to random loss over the run.
fn check_store(what: &str, plan: &Plan, event_form_links: bool, checks: u64) -> (u64, u64) {
    let opts = RunOptions {
        event_form_links,
        ..Default::default()
    };
    let mut w = World::new(plan, &opts).expect("the world builds");
    let end = w.duration_ns();
    for k in 1..=checks {
        // times that fall between events, not on round numbers
        let t = (end / checks * k - 1_234).min(end);
        let t = if k == checks { end } else { t };
        w.run_until(t);
        assert_eq!(
            w.packets.live(),
            packets_on_links(&w),
            "{what} (event form: {event_form_links}) at {t} ns: packets stored vs on the links"
        );
    }
    let dropped = w.links.iter().map(|l| l.queue.dropped).sum();
    let lost = w.links.iter().map(|l| l.lost_packets).sum();
    (dropped, lost)
}

/// A dumbbell with every way a packet leaves the network: small access queues (drops at the
/// first hop) and a small bottleneck queue, random loss on every link, TCP flows with and
/// without SACK, PPBP datagrams packet by packet, on/off datagrams whose private links (both access
/// links of their pair) are in closed form, web transfers the other way, a capacity step on the reverse bottleneck and a
/// queue trace on the forward one (both then in the event form).
const MIXED: &str = r#"
seed = 7
duration = "12s"
[dumbbell]
pairs = 5
bottleneck_rate = "10Mbps"
bottleneck_delay = "20ms"
bottleneck_queue = "20pkts"
bottleneck_loss = "0.5%"
access_rate = "100Mbps"
access_delay = "2ms"
access_queue = "8pkts"
access_loss = "0.2%"
[[flow]]
name = "reno{i}"
count = 2
src = "left{i}"
dst = "right{i}"
app = "bulk"
[[flow]]
name = "cubic"
src = "left2"
dst = "right2"
app = "bulk"
cc = "cubic"
tcp = { sack = true, rack = true, tlp = true }
[[traffic]]
name = "ppbp"
kind = "ppbp"
src = "left3"
dst = "right3"
rate = "3Mbps"
[[traffic]]
name = "onoff"
kind = "onoff"
src = "left4"
dst = "right4"
rate = "4Mbps"
private_links = "closed-form"
[[traffic]]
name = "web"
kind = "web"
src = "right3"
dst = "left3"
rate = "2Mbps"
[[capacity]]
link = "r2->r1"
steps = [{ at = "5s", rate = "5Mbps" }]
[trace]
cwnd = false
queues = ["r1->r2"]
"#;

#[test]
fn the_packet_store_holds_exactly_the_packets_on_the_links() {
    let mixed = plan_from_toml(MIXED).expect("the mixed scenario is valid");
    // a link served by a Mahimahi trace, with a loss event; its queue made small enough to drop
    let examples = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples");
    let text = std::fs::read_to_string(format!("{examples}/mahimahi.toml")).expect("the example");
    assert!(text.contains("queue = \"100pkts\""), "the example's queue");
    let text = text.replace("queue = \"100pkts\"", "queue = \"20pkts\"");
    let mahimahi = plan_from_toml_in(&text, Some(std::path::Path::new(examples)))
        .expect("the Mahimahi example is valid");
    for event_form in [false, true] {
        let (dropped, lost) = check_store("mixed", &mixed, event_form, 7);
        assert!(
            dropped > 0 && lost > 0,
            "the mixed scenario drops ({dropped}) and loses ({lost}) packets"
        );
        let (dropped, lost) = check_store("mahimahi", &mahimahi, event_form, 5);
        assert!(
            dropped > 0 && lost > 0,
            "the Mahimahi example drops ({dropped}) and loses ({lost}) packets"
        );
    }
}
