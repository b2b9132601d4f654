//! Reliable delivery: every byte an application writes reaches the peer exactly once and in
//! order, whatever the random loss (0–10 %, both directions, handshake included), with and
//! without delayed ACKs, with sequence numbers that wrap, with or without SACK, RACK-TLP and
//! pacing.

use haslab_core::scenario::plan_from_toml;
use haslab_core::{run_plan, RunOptions};
use proptest::prelude::*;

#[allow(clippy::too_many_arguments)]
fn scenario(
    seed: u64,
    loss_pct: f64,
    delayed_ack: bool,
    chunks: u32,
    chunk_kb: u32,
    isn: Option<u32>,
    prr: bool,
    options: u8,
) -> String {
    // 0: no SACK; 1: SACK; 2: SACK + RACK-TLP; 3: SACK + RACK-TLP + Linux pacing
    let extra = match options {
        0 => "",
        1 => "sack = true",
        2 => "sack = true\ntlp = true",
        _ => "sack = true\ntlp = true\npacing = \"linux\"",
    };
    let isn = isn.map(|v| format!("isn = {v}")).unwrap_or_default();
    format!(
        r#"
seed = {seed}
duration = "600s"
[[node]]
name = "a"
[[node]]
name = "r"
[[node]]
name = "b"
[[link]]
a = "a"
b = "r"
rate = "100Mbps"
delay = "2ms"
[[link]]
a = "r"
b = "b"
rate = "10Mbps"
delay = "20ms"
loss = {loss}
queue = "40pkts"
[[flow]]
src = "a"
dst = "b"
app = "chunks"
chunk = "{chunk_kb}KB"
interval = "2s"
stop = "{stop}s"
[flow.tcp]
delayed_ack = "{da}"
recovery = "{recovery}"
{isn}
{extra}
"#,
        loss = loss_pct / 100.0,
        stop = 2 * chunks + 15, // room for SYN retransmissions (1 s, 2 s, 4 s…)
        da = if delayed_ack { "on" } else { "off" },
        recovery = if prr { "prr" } else { "classic" },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, .. ProptestConfig::default() })]
    #[test]
    fn every_written_byte_arrives_once_in_order(
        seed in 0u64..1_000_000,
        // no random loss in about a third of the cases: a uniform draw never gives exactly 0
        loss_pct in prop_oneof![Just(0.0f64), 0.0f64..10.0],
        delayed_ack: bool,
        chunks in 1u32..6,
        chunk_kb in 1u32..400,
        wrap in proptest::option::of(Just(u32::MAX - 5000)),
        prr: bool,
        options in 0u8..4,
    ) {
        let text = scenario(seed, loss_pct, delayed_ack, chunks, chunk_kb, wrap, prr, options);
        let r = run_plan(&plan_from_toml(&text).unwrap(), &RunOptions::default()).unwrap();
        let f = &r.flows[0];
        // a lost SYN delays the start, so the number of chunks before the stop time varies
        let chunk = chunk_kb as u64 * 1000;
        let written = f.transfer.bytes_written;
        prop_assert!(written > 0 && written.is_multiple_of(chunk), "{:?}", f);
        prop_assert_eq!(f.transfer.bytes_received, written, "delivered ≠ written: {:?}", f);
        prop_assert_eq!(f.transfer.bytes_acked, written);
        prop_assert_eq!(f.transfer.messages_received, written / chunk, "messages out of order or lost: {:?}", f);
        prop_assert!(f.completed_ns.is_some());
        // the sender never sent less than it delivered, and resent only what the network lost
        // (random loss or a full queue): no spurious retransmission. Not with the tail loss
        // probe, whose probe resends the last segment when its ACK is only late (RFC 8985 §7)
        prop_assert!(f.transfer.bytes_sent >= written);
        let lost: u64 = r.links.iter().map(|l| l.lost_packets + l.dropped_packets).sum();
        if lost == 0 && options < 2 {
            prop_assert_eq!(f.transfer.retransmitted_segments, 0, "nothing lost: {:?}", f);
        }
    }
}

/// The sender's (sequence number, TCP flags) of every TCP packet in a pcap file written with
/// `LINKTYPE_RAW` (each record an IPv4 packet; `net::pcap`).
fn pcap_tcp_seqs(path: &std::path::Path) -> Vec<(u32, u8)> {
    let b = std::fs::read(path).unwrap();
    let mut at = 24; // the global header
    let mut out = Vec::new();
    while at + 16 <= b.len() {
        let caplen = u32::from_le_bytes(b[at + 8..at + 12].try_into().unwrap()) as usize;
        let ip = &b[at + 16..at + 16 + caplen];
        at += 16 + caplen;
        let ihl = (ip[0] & 0x0f) as usize * 4;
        if ip[9] != 6 {
            continue;
        }
        let tcp = &ip[ihl..];
        out.push((u32::from_be_bytes(tcp[4..8].try_into().unwrap()), tcp[13]));
    }
    out
}

#[test]
fn sequence_numbers_wrap_during_a_transfer() {
    // 10 MB from an ISN 5000 below 2^32: the wire sequence wraps after 5 kB
    let isn = u32::MAX - 5000;
    let text = scenario(1, 1.0, true, 1, 10_000, Some(isn), false, 1)
        + "[trace]\ncwnd = false\npcap = [\"a->r\"]\n";
    let dir = std::env::temp_dir().join(format!("haslab-wrap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let opts = RunOptions {
        out_dir: Some(dir.clone()),
        ..RunOptions::default()
    };
    let r = run_plan(&plan_from_toml(&text).unwrap(), &opts).unwrap();
    let f = &r.flows[0];
    assert!(f.transfer.bytes_written >= 10_000_000);
    assert_eq!(f.transfer.bytes_received, f.transfer.bytes_written);
    assert!(
        r.flows[0].transfer.retransmitted_segments > 0,
        "1 % loss must cause retransmissions"
    );
    // on the wire: the SYN carries the configured ISN, and later segments' sequence numbers
    // went past 2^32 and start again near 0
    let seqs = pcap_tcp_seqs(&dir.join("a-r.pcap"));
    std::fs::remove_dir_all(&dir).unwrap();
    const SYN: u8 = 0x02;
    assert_eq!(
        seqs[0],
        (isn, SYN),
        "the first packet is the SYN with the ISN"
    );
    assert!(
        seqs.iter().any(|&(seq, _)| seq < 1_000_000),
        "the sequence numbers wrapped"
    );
}
