//! Per-flow one-way delay, jitter and loss of the data packets (ns-3 FlowMonitor's statistics,
//! `src/flow-monitor/model/flow-monitor.cc`; haslab's definitions in `metrics/delay.rs`).

use haslab_core::scenario::plan_from_toml;
use haslab_core::{run_plan, RunOptions};

const MS: u64 = 1_000_000;

/// Data packet on the wire: 1000 bytes of payload + TCP header 20 + timestamps option 12
/// (RFC 7323, on by default) + IPv4 header 20.
const PKT_BYTES: u64 = 1000 + 20 + 12 + 20;

fn ser_ns(bytes: u64, rate_bps: u64) -> u64 {
    bytes * 8 * 1_000_000_000 / rate_bps
}

#[test]
fn spaced_packets_take_propagation_plus_serialisation_on_every_hop() {
    // One 1000-byte write every 200 ms over three hops: each is delivered and acknowledged
    // long before the next, so no packet ever waits in a queue.
    let text = r#"
seed = 3
duration = "10s"
[[node]]
name = "a"
[[node]]
name = "r"
[[node]]
name = "s"
[[node]]
name = "b"
[[link]]
a = "a"
b = "r"
rate = "100Mbps"
delay = "1ms"
[[link]]
a = "r"
b = "s"
rate = "2Mbps"
delay = "20ms"
[[link]]
a = "s"
b = "b"
rate = "10Mbps"
delay = "3ms"
[[flow]]
name = "f"
src = "a"
dst = "b"
app = "chunks"
chunk = "1000B"
interval = "200ms"
start = "1s"
"#;
    let r = run_plan(&plan_from_toml(text).unwrap(), &RunOptions::default()).unwrap();
    let f = &r.flows[0];
    let d = &f.delay;
    let expected = 24 * MS
        + ser_ns(PKT_BYTES, 100_000_000)
        + ser_ns(PKT_BYTES, 2_000_000)
        + ser_ns(PKT_BYTES, 10_000_000);
    // The first data segment leaves together with the ACK that ends the handshake (52 bytes:
    // IPv4 20 + TCP 20 + timestamps 12) and waits behind it at the 2 Mbps link: the ACK's
    // serialisation there, less the head start the ACK had on the 100 Mbps link.
    let first_wait =
        ser_ns(52, 2_000_000) - (ser_ns(PKT_BYTES, 100_000_000) - ser_ns(52, 100_000_000));
    assert_eq!(
        d.data_packets_sent, 45,
        "one packet per write from 1 s to 10 s"
    );
    assert_eq!(d.data_packets_received, d.data_packets_sent);
    assert_eq!((d.data_packets_lost, d.data_loss_fraction), (0, 0.0));
    assert_eq!(d.min_one_way_delay_ns, Some(expected));
    assert_eq!(d.max_one_way_delay_ns, Some(expected + first_wait));
    let n = d.data_packets_received;
    assert_eq!(
        d.mean_one_way_delay_ns,
        Some((n * expected + first_wait) as f64 / n as f64)
    );
    // one difference of consecutive delays is not zero: the first packet's wait
    assert_eq!(d.mean_jitter_ns, Some(first_wait as f64 / (n - 1) as f64));
}

/// Bulk transfers of `bytes` over the 8 Mbps, 100 ms dumbbell with `loss` on the bottleneck.
fn dumbbell(pairs: usize, loss: &str, bytes: &str, duration: &str) -> String {
    format!(
        r#"
seed = 7
duration = "{duration}"
[dumbbell]
pairs = {pairs}
bottleneck_rate = "8Mbps"
bottleneck_delay = "40ms"
bottleneck_queue = "67pkts"
bottleneck_loss = "{loss}"
access_rate = "1Gbps"
access_delay = "5ms"
[[flow]]
name = "f{{i}}"
count = {pairs}
src = "left{{i}}"
dst = "right{{i}}"
app = "bulk"
bytes = "{bytes}"
"#
    )
}

#[test]
fn every_data_packet_sent_is_received_or_lost_once_transfers_complete() {
    let text = dumbbell(3, "1%", "3MB", "40s");
    let r = run_plan(&plan_from_toml(&text).unwrap(), &RunOptions::default()).unwrap();
    let bottleneck = r.links.iter().find(|l| l.name == "r1->r2").unwrap();
    let mut random_lost = 0;
    for f in &r.flows {
        let d = &f.delay;
        assert!(
            f.completed_ns.is_some(),
            "{}: the transfer must complete",
            f.name
        );
        assert_eq!(
            d.data_packets_sent,
            d.data_packets_received + d.data_packets_lost,
            "{}",
            f.name
        );
        assert!(d.data_packets_lost >= f.queue_dropped_packets);
        random_lost += d.data_packets_lost - f.queue_dropped_packets;
        assert_eq!(
            d.data_loss_fraction,
            d.data_packets_lost as f64 / d.data_packets_sent as f64
        );
    }
    // Random loss on r1->r2 hits the data packets and the few other packets each connection
    // sends that way (its SYN and the ACK ending the handshake).
    assert!(random_lost <= bottleneck.lost_packets);
    assert!(random_lost + 2 * r.flows.len() as u64 >= bottleneck.lost_packets);
    // and takes 1 % of the data packets, within four standard deviations of a binomial
    let sent: u64 = r.flows.iter().map(|f| f.delay.data_packets_sent).sum();
    let (p, n) = (0.01, sent as f64);
    let sd = (p * (1.0 - p) / n).sqrt();
    assert!(
        (random_lost as f64 / n - p).abs() < 4.0 * sd,
        "{random_lost} of {sent} lost at random"
    );
}

#[test]
fn queuing_adds_to_the_one_way_delay_and_spreads_it() {
    // A bulk flow fills the one-BDP bottleneck queue: the one-way delay rises above the
    // empty-path delay by up to the queue's size in time (67 packets at 8 Mbps ≈ 100 ms), and
    // the mean jitter is at most the spread of the delays.
    let text = dumbbell(1, "0%", "4MB", "20s");
    let r = run_plan(&plan_from_toml(&text).unwrap(), &RunOptions::default()).unwrap();
    let d = &r.flows[0].delay;
    let full = 1448 + 52;
    let empty_path = 50 * MS + 2 * ser_ns(full, 1_000_000_000) + ser_ns(full, 8_000_000);
    let (min, max) = (
        d.min_one_way_delay_ns.unwrap(),
        d.max_one_way_delay_ns.unwrap(),
    );
    let queue_ns = 67 * ser_ns(full, 8_000_000);
    assert!(min >= empty_path, "{min} < {empty_path}");
    assert!(
        max <= empty_path + queue_ns + ser_ns(full, 8_000_000),
        "{max}"
    );
    assert!(max > empty_path + queue_ns / 2, "the queue fills: {max}");
    let mean = d.mean_one_way_delay_ns.unwrap();
    assert!(mean > min as f64 && mean < max as f64);
    assert!(d.mean_jitter_ns.unwrap() <= (max - min) as f64);
    // the bottleneck's mean queuing delay is what the mean one-way delay adds (the access
    // links' queues hold the sender's bursts for microseconds)
    let bn = r.links.iter().find(|l| l.name == "r1->r2").unwrap();
    let added = mean - empty_path as f64;
    assert!(
        (added - bn.sojourn_mean_ns).abs() < 0.02 * bn.sojourn_mean_ns,
        "mean one-way delay - empty path {added} vs bottleneck sojourn {}",
        bn.sojourn_mean_ns
    );
}
