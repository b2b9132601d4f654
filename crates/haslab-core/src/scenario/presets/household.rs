//! `household`: the home network of the QoE-of-legacy-TCP paper (Khan, Goodridge, "QoE
//! evaluation of legacy TCP variants over DASH", §IV): a video server, a household router
//! with a fixed 20 Mbps, and the family's viewers, each watching its own 10-minute video.
//!
//! Environments (§IV-A), parameter `environment`:
//! 1. all five viewers start together and watch for 10 min;
//! 2. viewer i starts at 2·i min (i = 0..4) and all watch until 10 min;
//! 3. all five start together; the last leaves at 2 min, the next at 4 min, ..., the first
//!    watches alone for the last 2 min (until 10 min);
//! 4. one viewer for 10 min; at 30 s, 50 % of the packets the server receives are lost for 1 s
//!    (a loss event on the router → server direction).
//!
//! With `clients` = N other than 5, environments 2 and 3 step by 10/N min.
//!
//! The paper gives neither delays nor queue sizes; haslab's choices (docs/topologies.md): the
//! 20 Mbps is the server–router link (both ways) with a 20 ms round trip on it, the router's
//! queue holds 1000 packets (Linux's default txqueuelen), and the viewers hang off the router on
//! 100 Mbps links without delay.
//!
//! Transport: the paper's testbed is real Ubuntu 15.04 hosts (Linux 3.19) with Apache, so the
//! players' connections default to that kernel's loss recovery: SACK (`tcp_sack = 1`), PRR
//! (RFC 6937, Linux's only recovery since 3.2; `prr_variant = "linux-3"`, the SSRB form of
//! net/ipv4/tcp_input.c before 4.3) and tail loss probes (`tcp_early_retrans = 3`; the probe's
//! own rules are 3.19's, `tlp_variant = "linux-3.19"`: its timeout, and no episode for a probe
//! of new data; the losses it reveals are found by RACK, RFC 8985, which Linux gained in 4.4,
//! where 3.19 still marks them by duplicate ACKs, FACK and early retransmit) and Linux's
//! restart after idle. The
//! sender's congestion-control plumbing follows the 3.19 tree (net/ipv4/tcp_input.c,
//! tcp_output.c, tcp_cong.c, include/net/tcp.h) where haslab models it:
//! - cwnd growth (`cwnd_growth = "linux-3.19"`): 3.19 already counts packets in Reno's and
//!   CUBIC's increase — `tcp_cong_avoid_ai(tp, w, acked)`, the stretch-ACK form — but its
//!   algorithms stay in slow start while cwnd ≤ ssthresh and stop it at ssthresh + 1, and
//!   YeAH's Reno mode still counts one per ACK;
//! - what that growth counts and when (`growth_count = "linux-3.19"`): the segments the
//!   cumulative ACK removes, SACKed before or not, counted before the recovery state machine
//!   runs, so nothing on the ACK that ends a fast recovery;
//! - the cwnd-limited test (`cwnd_limited = "linux-3.19"`): in slow start, cwnd ≤ ssthresh,
//!   only cwnd below twice the largest flight of the window counts, and the test's flag changes
//!   only when new data leaves;
//! - the algorithms' RTT sample (`ca_sample = "linux-3.19"`): the newest never-retransmitted
//!   segment the cumulative ACK removes, SACKed long before or not;
//! - the undo of a spurious RTO (`undo_cwnd = "linux-3.19"`: Westwood+, YeAH and Illinois have
//!   no `undo_cwnd` there, so cwnd = max(cwnd, 2 × the reduced ssthresh); `prior_ssthresh =
//!   "linux"`: ssthresh back to at least ¾ of the pre-RTO cwnd);
//! - `CA_EVENT_TX_START` on any data segment sent with nothing in flight (`tx_start =
//!   "linux"`: YeAH forgets its base RTT at each RTO's retransmission);
//! - the timers (`timer_clock = "linux-3.19"`, `hz = 250`, tcp/timer_clock.rs): the RTO, the
//!   probe and the delayed ACK run in jiffies on 3.19's cascading timer wheel, at Ubuntu's
//!   generic kernel's CONFIG_HZ of 250 (4 ms), the value CUBIC's clock takes too.
//!
//! The viewers acknowledge as Linux 3.19 receivers (`delayed_ack = "linux-3"`: quick ACKs at
//! a connection's first data and after a gap longer than the RTO, every second segment
//! otherwise, the adaptive timeout, interactive mode after a request sent within it; haslab's
//! default `on` acknowledges every second segment from the start). The receive window stays
//! the fixed default: haslab models Linux 6.18's receive-buffer autotuning, not 3.19's.
//! Without SACK, one hole is repaired per round trip and the delay-based algorithms (YeAH,
//! Illinois) and Westwood+ stall for seconds after a slow-start overshoot into the 1000-packet
//! queue, which no Linux host of the paper's era would do. A `tcp` table in the `player`
//! template overrides any of these keys.

use super::*;

const MIN_NS: u64 = 60_000_000_000;

pub fn household(spec: &PresetSpec) -> Result<Expansion, ScenarioError> {
    only_params(
        spec,
        &[
            "environment",
            "clients",
            "rtt",
            "bottleneck_rate",
            "bottleneck_queue",
            "start_jitter",
        ],
    )?;
    let env = spec.environment.unwrap_or(1);
    if !(1..=4).contains(&env) {
        return Err(perr(
            "environment",
            format!("{env}: the paper's environments are 1 (all together), 2 (joining every 2 min), 3 (leaving every 2 min) and 4 (a 1 s loss burst)"),
        ));
    }
    let default_clients = if env == 4 { 1 } else { 5 };
    let n = spec.clients.unwrap_or(default_clients);
    if !(1..=100).contains(&n) {
        return Err(perr("clients", format!("{n} viewers: must be 1 to 100")));
    }
    let rtt = rtt_param(spec, 20_000_000)?;
    let bn = rate_param(spec.bottleneck_rate, "bottleneck_rate", 20_000_000)?;
    let queue = queue_param(spec.bottleneck_queue, QueueLimit::Packets(1000));

    let mut x = Expansion::default();
    x.param("environment", env.to_string());
    x.param("clients", n.to_string());
    x.param("rtt", ns_text(rtt));
    x.param("bottleneck_rate", rate_text(bn));
    x.param("bottleneck_queue", queue_text(queue));
    let jitter = spec.start_jitter.map_or(0, |d| d.0);
    if jitter > 60_000_000_000 || jitter >= 10 * MIN_NS / n {
        return Err(perr(
            "start_jitter",
            format!(
                "{}: at most 60s and less than the environments' spacing, 10 min / {n} viewers",
                ns_text(jitter)
            ),
        ));
    }
    if jitter > 0 {
        x.param("start_jitter", ns_text(jitter));
        x.slot_jitter_ns = jitter;
    }

    x.node("server");
    x.node("router");
    for i in 0..n {
        x.node(&format!("viewer{i}"));
    }
    x.link("bottleneck", "server", "router", bn, rtt / 2, queue);
    for i in 0..n {
        x.link(
            &format!("lan{i}"),
            "router",
            &format!("viewer{i}"),
            100_000_000,
            0,
            QueueLimit::Packets(1000),
        );
    }
    // environments 2 and 3 stagger the viewers evenly over the 10-minute session: 2 min apart
    // for the paper's five
    let session = 10 * MIN_NS;
    let step = session / n;
    for i in 0..n {
        let (start, stop) = match env {
            2 => (step * i, session),
            3 => (0, session - step * i),
            _ => (0, session),
        };
        x.slot(
            &format!("viewer{i}"),
            &format!("viewer{i}"),
            "server",
            start,
            Some(stop),
        );
    }
    // Linux 3.19's defaults (module doc)
    x.slot_tcp("sack", json!(true));
    x.slot_tcp("recovery", json!("prr"));
    x.slot_tcp("prr_variant", json!("linux-3"));
    x.slot_tcp("tlp", json!(true));
    x.slot_tcp("tlp_variant", json!("linux-3.19"));
    x.slot_tcp("idle_restart", json!("linux"));
    x.slot_tcp("delayed_ack", json!("linux-3"));
    x.slot_tcp("cwnd_growth", json!("linux-3.19"));
    x.slot_tcp("undo_cwnd", json!("linux-3.19"));
    x.slot_tcp("prior_ssthresh", json!("linux"));
    x.slot_tcp("tx_start", json!("linux"));
    x.slot_tcp("cwnd_limited", json!("linux-3.19"));
    x.slot_tcp("growth_count", json!("linux-3.19"));
    x.slot_tcp("ca_sample", json!("linux-3.19"));
    x.slot_tcp("timer_clock", json!("linux-3.19"));
    x.slot_tcp("hz", json!(250));
    if env == 4 {
        x.loss_event("router->server", 0.5, 30_000_000_000, 31_000_000_000);
    }
    Ok(x)
}
