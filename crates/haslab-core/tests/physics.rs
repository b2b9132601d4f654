//! Physics of the simulated TCP: utilisation, fairness, the Mathis model, RTO backoff,
//! restart after idle. Each test states the property it checks and where it comes from.

use haslab_core::metrics::{ColumnData, SimResult, Table};
use haslab_core::scenario::plan_from_toml;
use haslab_core::world::World;
use haslab_core::{run_plan, RunOptions};

const S: u64 = 1_000_000_000;

/// A dumbbell scenario: `pairs` bulk flows, 8 Mbps bottleneck, 100 ms RTT (access 5 ms +
/// bottleneck 40 ms each way), bottleneck queue `queue`, extra `[flow]` and top-level lines.
fn dumbbell(
    pairs: usize,
    rate: &str,
    queue: &str,
    duration: &str,
    flow_extra: &str,
    extra: &str,
) -> String {
    format!(
        r#"
seed = 1
duration = "{duration}"
{extra}
[dumbbell]
pairs = {pairs}
bottleneck_rate = "{rate}"
bottleneck_delay = "40ms"
bottleneck_queue = "{queue}"
access_rate = "1Gbps"
access_delay = "5ms"
[[flow]]
name = "f{{i}}"
count = {pairs}
src = "left{{i}}"
dst = "right{{i}}"
app = "bulk"
{flow_extra}
"#
    )
}

fn u64s(t: &Table, c: &str) -> Vec<u64> {
    match t.column(c).unwrap() {
        ColumnData::U64(v) => v.clone(),
        ColumnData::U32(v) => v.iter().map(|&x| x as u64).collect(),
        ColumnData::F64(_) => panic!("{c} is f64"),
    }
}

/// Bytes delivered to each flow's receiver in (from_ns, to_ns], from the goodput table.
fn delivered_between(r: &SimResult, from_ns: u64, to_ns: u64) -> Vec<u64> {
    let t = r.table("goodput").unwrap();
    let (time, flow, bytes) = (u64s(t, "time_ns"), u64s(t, "flow"), u64s(t, "bytes"));
    let mut out = vec![0; r.flows.len()];
    for i in 0..time.len() {
        if time[i] > from_ns && time[i] <= to_ns {
            out[flow[i] as usize] += bytes[i];
        }
    }
    out
}

fn jain(x: &[u64]) -> f64 {
    let s: f64 = x.iter().map(|&v| v as f64).sum();
    let s2: f64 = x.iter().map(|&v| (v as f64).powi(2)).sum();
    s * s / (x.len() as f64 * s2)
}

/// Bottleneck utilisation over (from, end]: busy time of r1->r2 measured by running the
/// world to `from`, then to the end.
fn bottleneck_utilisation_after(text: &str, from_ns: u64) -> (f64, SimResult) {
    let plan = plan_from_toml(text).unwrap();
    let mut w = World::new(&plan, &RunOptions::default()).unwrap();
    let ld = w.link_dir_index("r1->r2").unwrap();
    w.run_until(from_ns);
    let before = w.link_summaries()[ld].tx_bytes;
    let r = w.finish().unwrap();
    let l = &r.links[ld];
    let bytes = l.tx_bytes - before;
    let capacity = l.rate_bps as f64 / 8.0 * (r.duration_ns - from_ns) as f64 / 1e9;
    (bytes as f64 / capacity, r)
}

#[test]
fn one_flow_fills_the_link_with_a_bdp_queue() {
    // 8 Mbps × 100 ms = 100 kB ≈ 67 packets of 1500 B: Reno's sawtooth never drains the link
    let (u, r) =
        bottleneck_utilisation_after(&dumbbell(1, "8Mbps", "67pkts", "60s", "", ""), 10 * S);
    assert!(u >= 0.95, "utilisation after slow start {u:.3}");
    assert!(
        r.flows[0].loss.fast_recovery_count >= 1,
        "the queue must overflow at least once"
    );
    assert_eq!(
        r.flows[0].loss.rto_count, 0,
        "no timeouts in steady state: {:?}",
        r.flows[0]
    );
}

#[test]
fn a_quarter_bdp_queue_costs_utilisation_but_keeps_75_percent() {
    let (u_small, _) =
        bottleneck_utilisation_after(&dumbbell(1, "8Mbps", "17pkts", "60s", "", ""), 10 * S);
    let (u_bdp, _) =
        bottleneck_utilisation_after(&dumbbell(1, "8Mbps", "67pkts", "60s", "", ""), 10 * S);
    assert!(u_small >= 0.75, "utilisation with BDP/4 queue {u_small:.3}");
    assert!(
        u_small < u_bdp,
        "a smaller buffer must cost utilisation: {u_small:.3} vs {u_bdp:.3}"
    );
}

#[test]
fn identical_flows_share_fairly() {
    for n in [2usize, 4, 8] {
        let text = dumbbell(n, "8Mbps", &format!("{}pkts", 67), "120s", "", "");
        let r = run_plan(&plan_from_toml(&text).unwrap(), &RunOptions::default()).unwrap();
        let last_half = delivered_between(&r, 60 * S, 120 * S);
        let j = jain(&last_half);
        assert!(j >= 0.9, "{n} flows: Jain {j:.3} over {last_half:?}");
        // and together they still use the link: ≥ 90 % of 8 Mbps in goodput terms
        let total: u64 = last_half.iter().sum();
        assert!(
            total as f64 * 8.0 / 60.0 >= 0.9 * 8e6 * 1448.0 / 1500.0,
            "{n} flows: {total} B"
        );
    }
}

#[test]
fn goodput_under_random_loss_follows_the_mathis_model() {
    // Mathis et al. 1997: rate = MSS/RTT · √(3/2) / √p, for periodic losses without
    // timeouts. Loss only on the data direction of a fast link (no queueing, RTT = 100 ms).
    for p in [0.005f64, 0.01, 0.02] {
        let text = format!(
            r#"
seed = 3
duration = "300s"
[[node]]
name = "a"
[[node]]
name = "b"
[[link]]
a = "a"
b = "b"
rate = "1Gbps"
delay = "50ms"
queue = "10000pkts"
[link.ab]
loss = {p}
[[flow]]
src = "a"
dst = "b"
app = "bulk"
"#
        );
        let r = run_plan(&plan_from_toml(&text).unwrap(), &RunOptions::default()).unwrap();
        let got = delivered_between(&r, 20 * S, 300 * S)[0] as f64 * 8.0 / 280.0;
        let model = 1448.0 * 8.0 / 0.1 * (1.5f64).sqrt() / p.sqrt();
        let ratio = got / model;
        assert!(
            (0.75..=1.25).contains(&ratio),
            "p = {p}: {got:.0} bps vs Mathis {model:.0} bps (ratio {ratio:.2})"
        );
    }
}

#[test]
fn a_five_second_path_cut_backs_off_and_recovers() {
    let text = dumbbell(1, "8Mbps", "67pkts", "40s", "", "");
    let plan = plan_from_toml(&text).unwrap();
    let mut w = World::new(&plan, &RunOptions::default()).unwrap();
    let ld = w.link_dir_index("r1->r2").unwrap();
    w.run_until(15 * S);
    let delivered_before_cut = bytes_out_of_the_receiver_link(&mut w);
    w.set_link_loss(ld, 1.0);
    w.run_until(20 * S);
    w.set_link_loss(ld, 0.0);
    w.run_until(40 * S);
    let r = w.finish().unwrap();
    let f = &r.flows[0];
    // Exponential backoff: with an RTO of at least 200 ms, consecutive expiries at RTO,
    // 2·RTO, 4·RTO… fit at most log2(5 s / 200 ms) + 1 ≈ 5.6 times in the 5 s cut (without
    // backoff it would be ≥ 25), and at least 3.
    assert!(
        (3..=6).contains(&f.loss.rto_count),
        "RTOs during the cut: {}",
        f.loss.rto_count
    );
    // recovery: after the cut the flow delivers again at ≥ 80 % of the link within 15 s
    let after = delivered_between(&r, 25 * S, 40 * S)[0] as f64 * 8.0 / 15.0;
    assert!(
        after >= 0.8 * 8e6 * 1448.0 / 1500.0,
        "goodput after the cut {after:.0} bps"
    );
    assert!(delivered_before_cut > 0);
    // nothing delivered during the cut (beyond what was already in flight past the cut)
    let during = delivered_between(&r, 16 * S, 20 * S)[0];
    assert_eq!(during, 0, "bytes delivered through a cut link");
}

fn bytes_out_of_the_receiver_link(w: &mut World) -> u64 {
    // the goodput table is only available at the end: use the last hop's counters
    let ld = w.link_dir_index("r2->right0").unwrap();
    w.link_summaries()[ld].tx_bytes
}

/// cwnd samples of flow 0 as (time, cwnd, ssthresh).
fn cwnd_trace(r: &SimResult) -> Vec<(u64, u64, u64)> {
    let t = r.table("cwnd").unwrap();
    let (time, cwnd, ss) = (
        u64s(t, "time_ns"),
        u64s(t, "cwnd_pkts"),
        u64s(t, "ssthresh_pkts"),
    );
    (0..time.len()).map(|i| (time[i], cwnd[i], ss[i])).collect()
}

/// For each chunk start after the first (t = k·2 s + the handshake), the cwnd just before
/// and just after the first transmission of the chunk.
fn cwnd_around_chunk_starts(r: &SimResult) -> Vec<(u64, u64, u64)> {
    let trace = cwnd_trace(r);
    let est = r.flows[0].established_ns.unwrap();
    let mut out = vec![];
    for k in 1..9u64 {
        let t0 = est + 2 * k * S;
        let before = trace.iter().rev().find(|s| s.0 < t0).map(|s| s.1).unwrap();
        let at = trace
            .iter()
            .find(|s| s.0 >= t0)
            .filter(|s| s.0 == t0)
            .map(|s| s.1)
            .unwrap_or(before);
        let ss_at = trace
            .iter()
            .find(|s| s.0 >= t0)
            .filter(|s| s.0 == t0)
            .map(|s| s.2)
            .unwrap_or(0);
        out.push((before, at, ss_at));
    }
    out
}

fn onoff(mode: &str) -> SimResult {
    // 20 Mbps and a queue that never overflows: without SACK, a slow-start overshoot into a
    // BDP queue costs NewReno one RTT per lost segment, and the chunk would not end in time.
    let text = dumbbell(
        1,
        "20Mbps",
        "1000pkts",
        "20s",
        &format!("app = \"chunks\"\nchunk = \"1MB\"\ninterval = \"2s\"\n[flow.tcp]\nidle_restart = \"{mode}\""),
        "",
    )
    .replace("app = \"bulk\"\n", "");
    run_plan(&plan_from_toml(&text).unwrap(), &RunOptions::default()).unwrap()
}

#[test]
fn restart_after_idle_modes_do_what_their_names_say() {
    // 1 MB every 2 s at 20 Mbps: ~0.7 s ON, ~1.3 s idle: several RTOs
    let off = cwnd_around_chunk_starts(&onoff("off"));
    let rfc = cwnd_around_chunk_starts(&onoff("rfc5681"));
    let linux = cwnd_around_chunk_starts(&onoff("linux"));
    for (before, at, _) in &off {
        assert_eq!(before, at, "off: cwnd kept across idle ({off:?})");
    }
    for (before, at, _) in &rfc {
        assert_eq!(
            *at,
            (*before).min(10),
            "rfc5681: cwnd = min(IW, cwnd) ({rfc:?})"
        );
    }
    let mut decayed = 0;
    for (before, at, ss) in &linux {
        assert!(
            *at <= *before && *at >= (*before).min(10),
            "linux: {linux:?}"
        );
        if at < before {
            decayed += 1;
            // halvings only: cwnd = before >> k or the restart window
            assert!(
                (1..8).any(|k| before >> k == *at) || *at == 10,
                "linux: not a halving {linux:?}"
            );
            assert!(
                *ss >= (before >> 1) + (before >> 2),
                "ssthresh ≥ ¾·cwnd: {linux:?}"
            );
        }
    }
    assert!(
        decayed >= 4,
        "linux decays cwnd after idle periods of ~3 RTOs: {linux:?}"
    );
    // and the three differ: off keeps the largest windows
    let mean = |v: &Vec<(u64, u64, u64)>| v.iter().map(|x| x.1).sum::<u64>();
    assert!(
        mean(&off) > mean(&linux) && mean(&linux) > mean(&rfc),
        "{off:?} {linux:?} {rfc:?}"
    );
}

#[test]
fn same_seed_same_result_different_seed_different_result() {
    let text = dumbbell(3, "8Mbps", "30pkts", "20s", "", "").replace("seed = 1", "seed = 7");
    let lossy = text.replace("[dumbbell]", "[dumbbell]\nbottleneck_loss = \"0.5%\"");
    let a = run_plan(&plan_from_toml(&lossy).unwrap(), &RunOptions::default()).unwrap();
    let b = run_plan(&plan_from_toml(&lossy).unwrap(), &RunOptions::default()).unwrap();
    let c = run_plan(
        &plan_from_toml(&lossy.replace("seed = 7", "seed = 8")).unwrap(),
        &RunOptions::default(),
    )
    .unwrap();
    let json = |r: &SimResult| serde_json::to_string(r).unwrap();
    assert_eq!(json(&a), json(&b));
    assert_eq!(a.tables, b.tables);
    assert_ne!(json(&a), json(&c));
}

#[test]
fn a_lost_syn_is_retransmitted_after_one_second_then_two() {
    for (cut_ns, expected_syn_ns) in [(S / 2, S), (3 * S / 2, 3 * S)] {
        let plan = plan_from_toml(&dumbbell(1, "8Mbps", "67pkts", "10s", "", "")).unwrap();
        let mut w = World::new(&plan, &RunOptions::default()).unwrap();
        let ld = w.link_dir_index("r1->r2").unwrap();
        w.set_link_loss(ld, 1.0);
        w.run_until(cut_ns);
        w.set_link_loss(ld, 0.0);
        let r = w.finish().unwrap();
        let est = r.flows[0].established_ns.unwrap();
        // the SYN that gets through leaves at 1 s (then 1 + 2 s); the handshake takes one
        // RTT of 100 ms plus serialisation
        assert!(
            est > expected_syn_ns + 100_000_000 && est < expected_syn_ns + 101_000_000,
            "established at {est}"
        );
        assert!(r.flows[0].transfer.bytes_received > 0);
    }
}

#[test]
fn delayed_acks_acknowledge_every_second_segment() {
    let acks_per_segment = |da: &str| {
        // a queue that never overflows: every segment is acknowledged by the normal rule
        let text = dumbbell(
            1,
            "8Mbps",
            "2000pkts",
            "20s",
            &format!("bytes = \"2MB\"\n[flow.tcp]\ndelayed_ack = \"{da}\""),
            "",
        );
        let r = run_plan(&plan_from_toml(&text).unwrap(), &RunOptions::default()).unwrap();
        let data = r
            .links
            .iter()
            .find(|l| l.name == "r1->r2")
            .unwrap()
            .tx_packets;
        let acks = r
            .links
            .iter()
            .find(|l| l.name == "r2->r1")
            .unwrap()
            .tx_packets;
        assert_eq!(r.flows[0].transfer.bytes_received, 2_000_000);
        acks as f64 / data as f64
    };
    let on = acks_per_segment("on");
    let off = acks_per_segment("off");
    assert!(
        (0.48..0.56).contains(&on),
        "delayed ACKs: {on:.3} ACKs per data packet"
    );
    assert!(off > 0.99, "no delayed ACKs: {off:.3} ACKs per data packet");
}

#[test]
fn a_lone_segment_is_acknowledged_when_the_delayed_ack_timer_expires() {
    // one 100-byte chunk per second: nothing else arrives, so the ACK waits for the timer
    for (timeout_ms, expected_ms) in [(40u64, 40u64), (200, 200)] {
        let text = dumbbell(
            1,
            "8Mbps",
            "67pkts",
            "3s",
            &format!("app = \"chunks\"\nchunk = \"100B\"\ninterval = \"1s\"\n[flow.tcp]\ndelayed_ack_timeout = \"{timeout_ms}ms\""),
            "",
        )
        .replace("app = \"bulk\"\n", "");
        let mut w = World::new(&plan_from_toml(&text).unwrap(), &RunOptions::default()).unwrap();
        w.run_until(2_500_000_000);
        // the last RTT sample: network RTT (100 ms + serialisation) + the delayed-ACK wait
        let last_ms = w.endpoint(0, 0).tp.last_rtt_ns / 1_000_000;
        assert!(
            last_ms >= 100 + expected_ms && last_ms <= 102 + expected_ms,
            "{timeout_ms}: {last_ms} ms"
        );
    }
}

#[test]
fn prr_never_inflates_cwnd_above_its_value_before_recovery() {
    // four flows overshoot in slow start and recover many holes, one per RTT
    let max_cwnd_in_first_recovery = |recovery: &str| {
        let text = dumbbell(
            4,
            "8Mbps",
            "67pkts",
            "30s",
            &format!("[flow.tcp]\nrecovery = \"{recovery}\""),
            "",
        );
        let r = run_plan(&plan_from_toml(&text).unwrap(), &RunOptions::default()).unwrap();
        assert!(r
            .flows
            .iter()
            .all(|f| f.transfer.bytes_received > 1_000_000));
        let t = r.table("cwnd").unwrap();
        let (time, flow) = (u64s(t, "time_ns"), u64s(t, "flow"));
        let (cwnd, ss) = (u64s(t, "cwnd_pkts"), u64s(t, "ssthresh_pkts"));
        let mut worst = 0.0f64;
        for f in 0..4 {
            let rows: Vec<usize> = (0..flow.len()).filter(|&i| flow[i] == f).collect();
            let first = rows.iter().position(|&i| ss[i] < 0x7fff_ffff).unwrap();
            let (start, ss0) = (time[rows[first]], ss[rows[first]]);
            let before = cwnd[rows[first - 1]] as f64;
            // the first recovery episode: same ssthresh, until cwnd first settles at it
            let after = rows[first..]
                .iter()
                .take_while(|&&i| ss[i] == ss0 && time[i] < start + 2 * S && cwnd[i] != ss[i])
                .map(|&i| cwnd[i])
                .max()
                .unwrap_or(0) as f64;
            worst = worst.max(after / before);
        }
        worst
    };
    let prr = max_cwnd_in_first_recovery("prr");
    let classic = max_cwnd_in_first_recovery("classic");
    assert!(prr <= 1.0, "PRR: cwnd reached {prr:.2}× its pre-loss value");
    assert!(
        classic > 1.5,
        "classic inflation should exceed the pre-loss cwnd here: {classic:.2}×"
    );
}
