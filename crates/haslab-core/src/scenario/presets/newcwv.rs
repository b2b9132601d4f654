//! The newCWV paper's test bed (Nazir, Hossain, Secchi, Broadbent, Petlund, Fairhurst,
//! "Performance evaluation of congestion window validation for DASH transport", §3–5,
//! Figs. 1 and 6): a Linux router emulating a 1 Mbps bottleneck with
//! 200 ms of propagation delay and a 30 KB drop-tail queue (token bucket + netem).
//!
//! - `newcwv-single` (Fig. 1): one DASH server and client across the bottleneck;
//! - `newcwv-shared` (Fig. 6): a second server/client pair runs an FTP transfer (TCP bulk,
//!   NewReno) that starts 60 s after the DASH flow; the DASH flow stops at 400 s.
//!
//! haslab's reading (docs/topologies.md): the 200 ms is the round trip (100 ms each way on the
//! bottleneck), so that BDP = 25 KB fits the 30 KB queue; the bottleneck limits both directions;
//! hosts sit on 100 Mbps links without delay; the router is drawn as two nodes, `router1` on the
//! servers' side and `router2` on the clients'.

use super::*;

const COMMON: [&str; 3] = ["rtt", "bottleneck_rate", "bottleneck_queue"];

fn build(spec: &PresetSpec, pairs: u64, x: &mut Expansion) -> Result<(), ScenarioError> {
    let rtt = rtt_param(spec, 200_000_000)?;
    let bn = rate_param(spec.bottleneck_rate, "bottleneck_rate", 1_000_000)?;
    let queue = queue_param(spec.bottleneck_queue, QueueLimit::Bytes(30_000));
    x.param("rtt", ns_text(rtt));
    x.param("bottleneck_rate", rate_text(bn));
    x.param("bottleneck_queue", queue_text(queue));
    for i in 1..=pairs {
        x.node(&format!("server{i}"));
    }
    x.node("router1");
    x.node("router2");
    for i in 1..=pairs {
        x.node(&format!("client{i}"));
    }
    let lan = QueueLimit::Packets(1000);
    for i in 1..=pairs {
        x.link(
            &format!("server{i}-router1"),
            &format!("server{i}"),
            "router1",
            100_000_000,
            0,
            lan,
        );
    }
    x.link("bottleneck", "router1", "router2", bn, rtt / 2, queue);
    for i in 1..=pairs {
        x.link(
            &format!("router2-client{i}"),
            "router2",
            &format!("client{i}"),
            100_000_000,
            0,
            lan,
        );
    }
    Ok(())
}

/// Fig. 1.
pub fn single(spec: &PresetSpec) -> Result<Expansion, ScenarioError> {
    only_params(spec, &COMMON)?;
    let mut x = Expansion::default();
    build(spec, 1, &mut x)?;
    x.slot("dash", "client1", "server1", 0, None);
    Ok(x)
}

/// Fig. 6.
pub fn shared(spec: &PresetSpec) -> Result<Expansion, ScenarioError> {
    let mut allowed = COMMON.to_vec();
    allowed.extend(["ftp_start", "competitor_cc", "player_stop"]);
    only_params(spec, &allowed)?;
    let mut x = Expansion::default();
    build(spec, 2, &mut x)?;
    let ftp_start = spec.ftp_start.map_or(60_000_000_000, |d| d.0);
    let stop = spec.player_stop.map_or(400_000_000_000, |d| d.0);
    if stop == 0 {
        return Err(perr("player_stop", "must be greater than zero"));
    }
    let cc = spec.competitor_cc.as_ref().map_or_else(
        || json!("newreno"),
        |c| serde_json::to_value(c).expect("serialises"),
    );
    x.param("ftp_start", ns_text(ftp_start));
    x.param("player_stop", ns_text(stop));
    x.param("competitor_cc", cc.to_string());
    x.bulk_flow("ftp", "server2", "client2", ftp_start, cc);
    x.slot("dash", "client1", "server1", 0, Some(stop));
    Ok(x)
}
