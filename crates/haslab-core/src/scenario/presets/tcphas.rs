//! `tcphas-home`: the network of the TcpHas paper (Ben Ameur, Mory, Cousin, Dedu, "TcpHas: TCP
//! for HTTP adaptive streaming", IEEE ICC 2017, §IV-A and Fig. 1).
//!
//! What the paper's text fixes:
//! - N clients `C{i}` in a home network of 100 Mbps behind the home gateway `HG`;
//! - the bottleneck HG–DSLAM at 8 Mbps, drop-tail, queue of one bandwidth-delay product;
//! - DSLAM–BNG (`AggLine`), BNG–IR (`ISPLink`) and IR–server (`NetLink{i}`) at 100 Mbps with
//!   1000-packet queues;
//! - PPBP cross-traffic of 40 Mbps (40 % of ISPLink) crossing ISPLink and AggLine;
//! - round-trip propagation delay between `S{i}` and `C{i}` of 100 ms; 1 to 9 clients (8 in
//!   the detailed scenario), 180 s runs.
//!
//! What it does not, and haslab's choice (docs/topologies.md): the split of the 50 ms one-way
//! delay over the hops (home 2 %, bottleneck 10 %, AggLine 8 %, ISPLink 20 %, NetLink the rest:
//! 1, 5, 4, 10 and 30 ms at the default RTT); the home network's queues (1000 packets); the
//! PPBP burst parameters (1 Mbps per burst, 200 ms mean burst, H = 0.7: Ammar's ns-3 PPBP application's
//! ns-3 defaults); and where the PPBP source and sink sit: `PPBP_S` behind IR and `PPBP_R`
//! behind DSLAM, on 1 Gbps links, so the traffic crosses exactly ISPLink and AggLine, in the
//! direction of the video.

use super::*;

pub fn home(spec: &PresetSpec) -> Result<Expansion, ScenarioError> {
    only_params(
        spec,
        &[
            "clients",
            "rtt",
            "bottleneck_rate",
            "bottleneck_queue",
            "ppbp_rate",
            "hurst",
        ],
    )?;
    let n = spec.clients.unwrap_or(8);
    if !(1..=100).contains(&n) {
        return Err(perr("clients", format!("{n} clients: must be 1 to 100")));
    }
    let rtt = rtt_param(spec, 100_000_000)?;
    let bn = rate_param(spec.bottleneck_rate, "bottleneck_rate", 8_000_000)?;
    let bdp = bdp_bytes(bn, rtt);
    let bn_queue = queue_param(spec.bottleneck_queue, QueueLimit::Bytes(bdp));
    let ppbp = rate_param(spec.ppbp_rate, "ppbp_rate", 40_000_000)?;
    let hurst = spec.hurst.unwrap_or(0.7);
    if !(hurst > 0.5 && hurst < 1.0) {
        return Err(perr(
            "hurst",
            format!(
                "{hurst} is out of range: the Hurst parameter must be strictly between 0.5 and 1"
            ),
        ));
    }

    const FAST: u64 = 100_000_000;
    const BIG: QueueLimit = QueueLimit::Packets(1000);
    let one_way = rtt / 2;
    let home = one_way * 2 / 100;
    let dsl = one_way * 10 / 100;
    let agg = one_way * 8 / 100;
    let isp = one_way * 20 / 100;
    let net = one_way - home - dsl - agg - isp;

    let mut x = Expansion::default();
    x.param("clients", n.to_string());
    x.param("rtt", ns_text(rtt));
    x.param("bottleneck_rate", rate_text(bn));
    x.param("bottleneck_queue", queue_text(bn_queue));
    x.param("ppbp_rate", rate_text(ppbp));
    x.param("hurst", hurst.to_string());

    for i in 0..n {
        x.node(&format!("C{i}"));
    }
    for name in ["HG", "DSLAM", "BNG", "IR"] {
        x.node(name);
    }
    for i in 0..n {
        x.node(&format!("S{i}"));
    }
    x.node("PPBP_S");
    x.node("PPBP_R");

    for i in 0..n {
        x.link(&format!("home{i}"), &format!("C{i}"), "HG", FAST, home, BIG);
    }
    x.link("bottleneck", "HG", "DSLAM", bn, dsl, bn_queue);
    x.link("AggLine", "DSLAM", "BNG", FAST, agg, BIG);
    x.link("ISPLink", "BNG", "IR", FAST, isp, BIG);
    for i in 0..n {
        x.link(
            &format!("NetLink{i}"),
            "IR",
            &format!("S{i}"),
            FAST,
            net,
            BIG,
        );
    }
    x.link("ppbp_in", "PPBP_S", "IR", 1_000_000_000, 0, BIG);
    x.link("ppbp_out", "DSLAM", "PPBP_R", 1_000_000_000, 0, BIG);

    x.traffic(json!({
        "name": "ppbp", "kind": "ppbp", "src": "PPBP_S", "dst": "PPBP_R",
        "rate": format!("{ppbp}bps"), "hurst": hurst,
    }));
    for i in 0..n {
        x.slot(
            &format!("player{i}"),
            &format!("C{i}"),
            &format!("S{i}"),
            0,
            None,
        );
    }
    Ok(x)
}
