//! The three networks of the Enhancing-TCP paper (Liu, Men, Zhang, "Enhancing TCP to improve
//! throughput of HTTP adaptive streaming", §4): `enhancing-dumbbell` (Fig. 4, HAS without
//! cross-traffic), `enhancing-cross` (Fig. 9, with exponential on/off and CBR cross-traffic)
//! and `enhancing-tcp-flow` (Fig. 12, HAS against a TCP flow).
//!
//! What the text fixes: switches with drop-tail ports of 30 KB; the link switch1–switch2 is the
//! bottleneck; uniform loss of 1 % on it (§4.1 and §4.3); 600 s runs; one HAS client; the
//! sweeps RTT 20–200 ms, bottleneck 2–10 Mbps, loss 1–10 %, CBR 500–3000 kbps; on/off
//! cross-traffic with mean on 500 ms, mean off 500 ms, 5 Mbps while on.
//!
//! The figures' numbers are not in the text; haslab's choices (docs/topologies.md), made so the
//! text's statements hold:
//! - bottleneck 10 Mbps: the top of the bandwidth sweep, and the 9.7 Mbps throughput quoted at
//!   20 ms RTT, and Table 1's HAS + TCP sums of 9.4–10 Mbps, need it;
//! - RTT 100 ms by default, all of it on the bottleneck (access links 100 Mbps, no delay): then
//!   the BDP is below the 30 KB buffer at 20 ms RTT and 10 Mbps (25 KB) and at 2 Mbps and
//!   100 ms (25 KB), and above it at 10 Mbps and 100 ms (125 KB), as §4.1 says;
//! - every port of both switches has the 30 KB queue; the hosts' own queues (a host's output
//!   towards its switch) are NS-2's default `Queue set limit_ 50` packets (ns-default.tcl;
//!   `host_queue`), since §4.1 sizes only "each port" of the switch. The server's queue does
//!   fill: a chunk's initial burst of a whole cwnd enters it at once (docs/topologies.md);
//! - the random loss applies to one direction of the bottleneck (NS-2's ErrorModel drops on
//!   one simplex link; the paper does not say which): `loss_direction = "data"` (switch1 →
//!   switch2, default) or `"ack"` (switch2 → switch1); `enhancing-cross` has none by default
//!   (§4.2 does not mention loss);
//! - the cross-traffic sends 1500-byte datagrams; the CBR rate defaults to 500 kbps (the first
//!   point of Fig. 10);
//! - the TCP source of Fig. 12 runs NewReno unless `competitor_cc` says otherwise (the paper
//!   does not say; its HAS server runs CUBIC).

use super::*;

const ACCESS_BPS: u64 = 100_000_000;

/// NS-2's default drop-tail limit (`Queue set limit_ 50`, tcl/lib/ns-default.tcl).
const NS2_QUEUE_PKTS: u32 = 50;

/// Which direction of the bottleneck the random loss hits.
#[derive(Clone, Copy, PartialEq, Eq)]
enum LossDirection {
    /// switch1 → switch2: the server's data packets.
    Data,
    /// switch2 → switch1: the client's ACKs.
    Ack,
}

struct Common {
    rtt: u64,
    bn: u64,
    queue: QueueLimit,
    host_queue: QueueLimit,
    loss: f64,
    loss_direction: LossDirection,
}

fn common(
    spec: &PresetSpec,
    default_loss: f64,
    x: &mut Expansion,
) -> Result<Common, ScenarioError> {
    let rtt = rtt_param(spec, 100_000_000)?;
    let bn = rate_param(spec.bottleneck_rate, "bottleneck_rate", 10_000_000)?;
    let queue = queue_param(spec.bottleneck_queue, QueueLimit::Bytes(30_000));
    let host_queue = queue_param(spec.host_queue, QueueLimit::Packets(NS2_QUEUE_PKTS));
    let loss = loss_param(spec.loss, default_loss)?;
    let loss_direction = match spec.loss_direction.as_deref() {
        None | Some("data") => LossDirection::Data,
        Some("ack") => LossDirection::Ack,
        Some(other) => {
            return Err(perr(
                "loss_direction",
                format!("{other:?} is not a direction: \"data\" (switch1 → switch2) or \"ack\" (switch2 → switch1)"),
            ))
        }
    };
    x.param("rtt", ns_text(rtt));
    x.param("bottleneck_rate", rate_text(bn));
    x.param("bottleneck_queue", queue_text(queue));
    x.param("host_queue", queue_text(host_queue));
    x.param("loss", loss.to_string());
    x.param(
        "loss_direction",
        match loss_direction {
            LossDirection::Data => "data",
            LossDirection::Ack => "ack",
        },
    );
    Ok(Common {
        rtt,
        bn,
        queue,
        host_queue,
        loss,
        loss_direction,
    })
}

const COMMON: [&str; 6] = [
    "rtt",
    "bottleneck_rate",
    "bottleneck_queue",
    "host_queue",
    "loss",
    "loss_direction",
];

/// switch1 — switch2 bottleneck with `left` hosts on switch1 and `right` hosts on switch2.
fn switches(x: &mut Expansion, c: &Common, s1: &str, s2: &str, left: &[&str], right: &[&str]) {
    for n in left.iter().chain([s1, s2].iter()).chain(right.iter()) {
        x.node(n);
    }
    // a host's output is its own queue (NS-2's default), the switch's side is a 30 KB port
    for h in left {
        x.link(&format!("{h}-{s1}"), h, s1, ACCESS_BPS, 0, c.queue);
        x.queue_ab(c.host_queue);
    }
    x.link("bottleneck", s1, s2, c.bn, c.rtt / 2, c.queue);
    if c.loss > 0.0 {
        match c.loss_direction {
            LossDirection::Data => x.loss_ab(c.loss),
            LossDirection::Ack => x.loss_ba(c.loss),
        }
    }
    for h in right {
        x.link(&format!("{s2}-{h}"), s2, h, ACCESS_BPS, 0, c.queue);
        x.queue_ba(c.host_queue);
    }
}

/// Fig. 4: server — switch1 — switch2 — client.
pub fn dumbbell(spec: &PresetSpec) -> Result<Expansion, ScenarioError> {
    only_params(spec, &COMMON)?;
    let mut x = Expansion::default();
    let c = common(spec, 0.01, &mut x)?;
    switches(&mut x, &c, "switch1", "switch2", &["server"], &["client"]);
    x.slot("player", "client", "server", 0, None);
    Ok(x)
}

/// Fig. 9: the HAS pair, an exponential on/off pair and a CBR pair across switch_1 — switch_2.
pub fn cross(spec: &PresetSpec) -> Result<Expansion, ScenarioError> {
    let mut allowed = COMMON.to_vec();
    allowed.push("cbr_rate");
    only_params(spec, &allowed)?;
    let mut x = Expansion::default();
    let c = common(spec, 0.0, &mut x)?;
    let cbr = rate_param(spec.cbr_rate, "cbr_rate", 500_000)?;
    x.param("cbr_rate", rate_text(cbr));
    switches(
        &mut x,
        &c,
        "switch_1",
        "switch_2",
        &["server", "Exp_S", "CBR_S"],
        &["client", "Exp_R", "CBR_R"],
    );
    x.traffic(json!({
        "name": "exp", "kind": "onoff", "src": "Exp_S", "dst": "Exp_R",
        "rate": "5Mbps", "mean_on": "500ms", "mean_off": "500ms",
    }));
    x.traffic(json!({
        "name": "cbr", "kind": "cbr", "src": "CBR_S", "dst": "CBR_R",
        "rate": format!("{cbr}bps"),
    }));
    x.slot("player", "client", "server", 0, None);
    Ok(x)
}

/// Fig. 12: the HAS pair and a bulk TCP flow TCP → sink across switch1 — switch2.
pub fn tcp_flow(spec: &PresetSpec) -> Result<Expansion, ScenarioError> {
    let mut allowed = COMMON.to_vec();
    allowed.push("competitor_cc");
    only_params(spec, &allowed)?;
    let mut x = Expansion::default();
    let c = common(spec, 0.01, &mut x)?;
    let cc = spec.competitor_cc.as_ref().map_or_else(
        || json!("newreno"),
        |c| serde_json::to_value(c).expect("serialises"),
    );
    x.param("competitor_cc", cc.to_string());
    switches(
        &mut x,
        &c,
        "switch1",
        "switch2",
        &["server", "TCP"],
        &["client", "sink"],
    );
    x.bulk_flow("tcp", "TCP", "sink", 0, cc);
    x.slot("player", "client", "server", 0, None);
    Ok(x)
}
