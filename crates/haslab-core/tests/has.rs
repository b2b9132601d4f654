//! HTTP adaptive streaming end to end: players over the simulated TCP on dumbbells. Each test
//! states the property it checks.

use haslab_core::has::players::AbrConfig;
use haslab_core::metrics::qoe::PlayerSummary;
use haslab_core::metrics::{ColumnData, SimResult, Table};
use haslab_core::scenario::plan_from_toml;
use haslab_core::{run_plan, RunOptions};

const S: u64 = 1_000_000_000;

/// `pairs` players (server left{i} → client right{i}) on a dumbbell with 100 ms RTT.
fn scenario(pairs: usize, rate: &str, queue: &str, duration: &str, player: &str) -> String {
    format!(
        r#"
seed = 1
duration = "{duration}"
[dumbbell]
pairs = {pairs}
bottleneck_rate = "{rate}"
bottleneck_delay = "40ms"
bottleneck_queue = "{queue}"
access_rate = "100Mbps"
access_delay = "5ms"
[[player]]
name = "p{{i}}"
count = {pairs}
client = "right{{i}}"
server = "left{{i}}"
{player}
"#
    )
}

fn run(text: &str) -> SimResult {
    let plan = plan_from_toml(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    run_plan(&plan, &RunOptions::default()).unwrap()
}

fn col(t: &Table, c: &str) -> Vec<f64> {
    match t.column(c).unwrap_or_else(|| panic!("no column {c}")) {
        ColumnData::U64(v) => v.iter().map(|&x| x as f64).collect(),
        ColumnData::U32(v) => v.iter().map(|&x| x as f64).collect(),
        ColumnData::F64(v) => v.clone(),
    }
}

/// Levels of player `p`'s segments requested in [from_ns, to_ns).
fn levels_between(r: &SimResult, p: usize, from_ns: u64, to_ns: u64) -> Vec<u32> {
    let t = r.table("segments").unwrap();
    let (pl, lv, req) = (col(t, "player"), col(t, "level"), col(t, "request_ns"));
    (0..pl.len())
        .filter(|&i| pl[i] as usize == p && req[i] >= from_ns as f64 && req[i] < to_ns as f64)
        .map(|i| lv[i] as u32)
        .collect()
}

fn show(p: &PlayerSummary) -> String {
    format!(
        "{} {}: segs {} avg {:.0} kbps stalls {} ({:.1} s) rebuf {:.3} inst {:?} sw {} buf {:.1} s",
        p.name,
        p.algorithm,
        p.segments,
        p.avg_bitrate_bps / 1e3,
        p.stalls,
        p.stall_ns as f64 / 1e9,
        p.rebuffering_ratio,
        p.instability_pct,
        p.switches,
        p.avg_buffer_ns / 1e9
    )
}

/// One player alone on a constant link at 10× the top bitrate reaches the top level, stays
/// there, and never stalls — for every algorithm. (200 s: PANDA's additive probing climbs by
/// κ·w = 42 kbps per second.)
#[test]
fn a_lone_player_on_a_fast_link_reaches_the_top_level_without_stalling() {
    for abr in AbrConfig::NAMES {
        let r = run(&scenario(
            1,
            "42.56Mbps",
            "1000pkts",
            "200s",
            &format!("abr = \"{abr}\"\nvideo = \"tcphas\""),
        ));
        let p = &r.players[0];
        println!("{}", show(p));
        assert_eq!(p.stalls, 0, "{abr} stalled: {}", show(p));
        let last = levels_between(&r, 0, 180 * S, 200 * S);
        assert!(!last.is_empty());
        assert!(last.iter().all(|&l| l == 4), "{abr}: last levels {last:?}");
    }
}

/// On a link below the lowest bitrate the player stalls, and its rebuffering ratio matches the
/// deficit: it can play only (media goodput / r_1) of the time.
#[test]
fn a_link_below_the_lowest_bitrate_gives_the_rebuffering_ratio_of_the_deficit() {
    for abr in AbrConfig::NAMES {
        let r = run(&scenario(
            1,
            "200kbps",
            "1000pkts",
            "120s",
            &format!("abr = \"{abr}\"\nvideo = \"tcphas\""),
        ));
        let p = &r.players[0];
        println!("{}", show(p));
        assert!(p.stalls > 0, "{abr}: no stall");
        assert!(p.avg_level == 0.0, "{abr}: above the lowest level");
        // The media the link can carry: payload share of a 1500-byte packet (1448 B of TCP
        // payload with timestamps) minus HTTP headers (600 B per ~62 KB segment).
        let segment_bytes = 248_000.0 * 2.0 / 8.0;
        let efficiency = 1448.0 / 1500.0 * segment_bytes / (segment_bytes + 600.0);
        let expected = 1.0 - 200_000.0 * efficiency / 248_000.0;
        assert!(
            (p.rebuffering_ratio - expected).abs() < 0.04,
            "{abr}: rebuffering ratio {:.3}, expected {expected:.3} from the deficit",
            p.rebuffering_ratio
        );
    }
}

/// Conservation: downloaded media = played + buffered + discarded, exactly, for every player
/// and seed; the bytes the clients received are the responses (header + segment) they
/// completed, plus at most one response in flight, and the servers wrote no more than that.
#[test]
fn downloaded_media_is_played_buffered_or_discarded() {
    for seed in [1, 2, 3] {
        let n = AbrConfig::NAMES.len();
        let text = scenario(
            n,
            "6Mbps",
            "60pkts",
            "60s",
            "abr = \"conventional\"\nvideo = { preset = \"tcphas\", duration = \"40s\" }",
        )
        .replace("seed = 1", &format!("seed = {seed}"))
        .replace(
            "bottleneck_queue",
            "bottleneck_loss = \"0.5%\"\nbottleneck_queue",
        );
        // each player its own algorithm and connection policy; some join late, some leave early
        let mut players = String::new();
        for (i, abr) in AbrConfig::NAMES.iter().enumerate() {
            let stop = if i % 3 == 1 { "stop = \"35s\"\n" } else { "" };
            let connection = [
                "persistent",
                "per-request",
                "parallel",
                "renew\"\nrenew_every = 3\n#\"",
            ][i % 4];
            players.push_str(&format!(
                "[[player]]\nname = \"q{i}\"\nclient = \"right{i}\"\nserver = \"left{i}\"\nabr = \"{abr}\"\n\
                 video = {{ preset = \"tcphas\", duration = \"40s\" }}\nstart = \"{}s\"\n{stop}connection = \"{connection}\"\n",
                i * 2
            ));
        }
        let text = text.split("[[player]]").next().unwrap().to_string() + &players;
        let r = run(&text);
        assert_eq!(r.players.len(), n);
        for (k, p) in r.players.iter().enumerate() {
            println!("seed {seed}: {}", show(p));
            assert!(p.segments > 0);
            assert_eq!(
                p.downloaded_ns,
                p.played_ns + p.buffered_ns + p.discarded_ns,
                "seed {seed} {}",
                p.name
            );
            let t = r.table("segments").unwrap();
            let (pl, media, bytes) = (col(t, "player"), col(t, "media_ns"), col(t, "bytes"));
            let mine: Vec<usize> = (0..pl.len()).filter(|&i| pl[i] as usize == k).collect();
            let media_sum: f64 = mine.iter().map(|&i| media[i]).sum();
            assert_eq!(media_sum as u64, p.downloaded_ns);
            let body: f64 = mine.iter().map(|&i| bytes[i]).sum();
            let responses = body as u64 + 300 * p.segments;
            let conns: Vec<_> = r
                .flows
                .iter()
                .filter(|f| f.name.starts_with(&format!("{}.c", p.name)))
                .collect();
            assert_eq!(conns.len() as u32, p.connections);
            let received: u64 = conns.iter().map(|f| f.transfer.bytes_received).sum();
            // in flight at the end: one response per connection of the policy at most
            let biggest = 4_256_000 * 2 / 8 + 300;
            let in_flight = biggest * if k % 4 == 2 { 4 } else { 1 };
            // abandoned responses: received in part (at most whole), then discarded
            let abandoned: u64 = r.table("abandons").map_or(0, |a| {
                let (apl, tot) = (col(a, "player"), col(a, "bytes_total"));
                (0..apl.len())
                    .filter(|&i| apl[i] as usize == k)
                    .map(|i| tot[i] as u64 + 300)
                    .sum()
            });
            let written: u64 = conns.iter().map(|f| f.transfer.bytes_written).sum();
            assert!(
                written >= received && written <= responses + abandoned + in_flight,
                "seed {seed} {}: written {written}, received {received}, responses {responses}, abandoned {abandoned}",
                p.name
            );
            assert!(
                received >= responses && received <= responses + abandoned + in_flight,
                "seed {seed} {}: received {received}, completed responses {responses}",
                p.name
            );
            if p.stop_ns.is_some() {
                assert_eq!(p.buffered_ns, 0);
            }
        }
    }
}

/// Over the samples and segments after `warmup_ns`: the mean TcpHas-paper instability
/// (percent of seconds whose requested level differs from the previous second's), and the mean
/// of segment throughput / fair share and of the player's estimate / fair share.
fn instability_and_overestimation(r: &SimResult, fair_bps: f64, warmup_ns: u64) -> (f64, f64, f64) {
    let t = r.table("players").unwrap();
    let (time, pl, lv) = (col(t, "time_ns"), col(t, "player"), col(t, "level"));
    let mut inst = 0.0;
    for p in 0..r.players.len() {
        let levels: Vec<u32> = (0..time.len())
            .filter(|&i| pl[i] as usize == p && time[i] >= warmup_ns as f64)
            .map(|i| lv[i] as u32)
            .collect();
        inst += haslab_core::metrics::qoe::instability_pct(&levels).unwrap();
    }
    let t = r.table("segments").unwrap();
    let (req, thr, est) = (
        col(t, "request_ns"),
        col(t, "throughput_bps"),
        col(t, "estimate_bps"),
    );
    let late: Vec<usize> = (0..req.len())
        .filter(|&i| req[i] >= warmup_ns as f64)
        .collect();
    let mean = |v: &[f64]| late.iter().map(|&i| v[i] / fair_bps).sum::<f64>() / late.len() as f64;
    (inst / r.players.len() as f64, mean(&thr), mean(&est))
}

/// 8 players share a 16 Mbps bottleneck (100 ms RTT, 1-BDP queue) with the QoE paper's ladder:
/// the fair share, 2 Mbps, lies between 1500 and 2400 kbps. Conventional players measure their
/// throughput during ON periods, when fewer competitors are active: their estimates exceed the
/// fair share, they step up to 2400 kbps, congest the link and fall back — the ON-OFF
/// overestimation and oscillation of the PANDA paper (§II) and the QoE paper (§II-A). PANDA in
/// the same setting (its instability is printed beside the Conventional players'). Players join within the
/// first 5 s; instability counts after 30 s.
#[test]
fn conventional_players_overestimate_the_fair_share_and_step_above_it() {
    let run8 = |abr: &str| {
        let mut text = String::from(
            r#"
seed = 1
duration = "150s"
[dumbbell]
pairs = 8
bottleneck_rate = "16Mbps"
bottleneck_delay = "40ms"
bottleneck_queue = "133pkts"
access_rate = "100Mbps"
access_delay = "5ms"
"#,
        );
        for k in 0..8 {
            text += &format!(
                "[[player]]\nname = \"p{k}\"\nclient = \"right{k}\"\nserver = \"left{k}\"\n\
                 abr = \"{abr}\"\nvideo = \"qoe\"\nstart = \"{}ms\"\n",
                k * 731 % 5000
            );
        }
        run(&text)
    };
    let conv = run8("conventional");
    let panda = run8("panda");
    let fair = 2e6;
    let (ci, co, ce) = instability_and_overestimation(&conv, fair, 30 * S);
    let (pi, _, _) = instability_and_overestimation(&panda, fair, 30 * S);
    for p in conv.players.iter().chain(&panda.players) {
        println!("{}", show(p));
    }
    println!("conventional: instability {ci:.2} %, throughput / fair share {co:.2}, estimate / fair share {ce:.2}");
    println!("panda: instability {pi:.2} %");
    assert!(
        ce > 1.15,
        "conventional estimates should exceed the fair share: {ce:.2}"
    );
    let up = conv
        .table("segments")
        .map(|t| col(t, "bitrate_bps"))
        .unwrap();
    assert!(
        up.iter().any(|&b| b >= 2.4e6),
        "conventional players step above the fair share"
    );
    // The PANDA paper's "PANDA oscillates less" is printed above, not asserted: on this one
    // seed the steady-state instability of the Conventional players moved with each sender
    // fix (1.56 %, 1.35 %, 1.04 % against PANDA's 1.15 %), so a single run does not decide it;
    // `haslab reproduce qoe-*` compares the players over its sweep of settings.
}

/// PANDA alone on a link between two levels (3 Mbps: between 1632 and 4256 kbps) settles on
/// the lower one and stays there.
#[test]
fn panda_alone_between_two_levels_settles_on_the_lower_one() {
    let r = run(&scenario(
        1,
        "3Mbps",
        "1000pkts",
        "200s",
        "abr = \"panda\"\nvideo = \"tcphas\"",
    ));
    println!("{}", show(&r.players[0]));
    let late = levels_between(&r, 0, 100 * S, 200 * S);
    println!("{late:?}");
    assert!(late.len() > 30);
    assert!(late.iter().all(|&l| l == 3), "levels after 100 s: {late:?}");
    assert_eq!(r.players[0].stalls, 0);
}

/// The TcpHas paper's setting (§IV: 8 RBB players, 8 Mbps, 100 ms RTT, 1-BDP queue, the TcpHas
/// ladder, 180 s): with TcpHas on the servers — which shapes to the encoding ladder the HTTP
/// server passes down through the app-data hook — the players' instability is clearly below
/// that with Westwood+ (Fig. 3a; the paper reports < 4 % for TcpHas, we get less than 0.7×
/// Westwood+'s).
#[test]
fn tcphas_servers_stabilise_rbb_players() {
    let run8 = |cc: &str| {
        let mut text = String::from(
            "seed = 1\nduration = \"180s\"\n[dumbbell]\npairs = 8\nbottleneck_rate = \"8Mbps\"\n\
             bottleneck_delay = \"40ms\"\nbottleneck_queue = \"67pkts\"\naccess_rate = \"100Mbps\"\n\
             access_delay = \"5ms\"\n",
        );
        for k in 0..8 {
            text += &format!(
                "[[player]]\nname = \"p{k}\"\nclient = \"right{k}\"\nserver = \"left{k}\"\nabr = \"rbb\"\n\
                 video = \"tcphas\"\ncc = \"{cc}\"\nstart = \"{}ms\"\n",
                k * 731 % 5000
            );
        }
        let r = run(&text);
        let (inst, _, _) = instability_and_overestimation(&r, 1e6, 30 * S);
        let infid = r
            .players
            .iter()
            .map(|p| p.infidelity_pct.unwrap())
            .sum::<f64>()
            / 8.0;
        (inst, infid)
    };
    let (wi, wf) = run8("westwood");
    let (ti, tf) = run8("tcphas");
    println!(
        "westwood+: instability {wi:.1} %, infidelity {wf:.0} %; tcphas: {ti:.1} %, {tf:.0} %"
    );
    assert!(
        ti < 0.7 * wi,
        "instability: TcpHas {ti:.1} % vs Westwood+ {wi:.1} %"
    );
    // the infidelity (share of seconds off the optimal level) is printed, not asserted: with
    // RBB's buffering state asking for the lowest level (the TcpHas paper's §IV-C, docs/has.md)
    // TcpHas's players lock at different levels (a flow shaped at level n cannot reach level
    // n + 1: docs/algorithms/tcphas.md), and `haslab reproduce tcphas-fig2` reports the paper's
    // "stable at the optimal level" as not holding with that reason
    let _ = (tf, wf);
}

/// Connection policies open the connections they promise: one persistent; one per segment;
/// N used in turn (`rotate`); a new one every k segments. Same scenario, same results.
#[test]
fn connection_policies_open_the_promised_connections_and_runs_repeat_exactly() {
    let policy = |c: &str| {
        run(&scenario(
            1,
            "20Mbps",
            "1000pkts",
            "30s",
            &format!("abr = \"bba\"\nvideo = {{ preset = \"tcphas\", duration = \"20s\" }}\n{c}"),
        ))
    };
    let segs = 10;
    let flows_of = |r: &SimResult| -> Vec<u32> {
        let t = r.table("segments").unwrap();
        col(t, "flow").iter().map(|&f| f as u32).collect()
    };
    let r = policy("connection = \"persistent\"");
    assert_eq!((r.players[0].segments, r.players[0].connections), (segs, 1));
    let r = policy("connection = \"per-request\"");
    assert_eq!(r.players[0].connections as u64, segs);
    let f = flows_of(&r);
    assert!(
        f.windows(2).all(|w| w[0] != w[1]),
        "a new connection per segment"
    );
    let r = policy("connection = \"rotate\"\nconnections = 3");
    assert_eq!(r.players[0].connections, 3);
    let f = flows_of(&r);
    assert!(
        f.iter().enumerate().all(|(i, &c)| c == f[i % 3]),
        "used in turn: {f:?}"
    );
    let r = policy("connection = \"renew\"\nrenew_every = 4");
    assert_eq!(r.players[0].connections, 3, "10 segments, 4 per connection");
    let f = flows_of(&r);
    assert_eq!(f.iter().filter(|&&c| c == f[0]).count(), 4);
    // the handshake of a new connection per request costs a round trip per segment
    let per_req = policy("connection = \"per-request\"").players[0].avg_throughput_bps;
    let persistent = policy("connection = \"persistent\"").players[0].avg_throughput_bps;
    assert!(per_req < persistent, "{per_req} vs {persistent}");

    let a = policy("connection = \"parallel\"\nconnections = 2");
    let b = policy("connection = \"parallel\"\nconnections = 2");
    // bit for bit (NaN estimates compare equal as bits)
    let bits = |r: &SimResult| -> Vec<(String, Vec<u64>)> {
        r.tables
            .iter()
            .flat_map(|t| {
                t.columns
                    .iter()
                    .map(move |(n, c)| (format!("{}.{n}", t.name), c))
            })
            .map(|(n, c)| {
                let v = match c {
                    ColumnData::U64(v) => v.clone(),
                    ColumnData::U32(v) => v.iter().map(|&x| x as u64).collect(),
                    ColumnData::F64(v) => v.iter().map(|x| x.to_bits()).collect(),
                };
                (n, v)
            })
            .collect()
    };
    assert_eq!(bits(&a), bits(&b));
    assert_eq!(
        serde_json::to_string(&a).unwrap(),
        serde_json::to_string(&b).unwrap()
    );
}

#[test]
fn players_and_web_transfers_share_a_run_without_mixing_their_connections() {
    // web transfers are connections opened during the run, as are per-request player
    // connections: each player's downloads must still be reported under its own flows, and
    // the web transfers under the traffic generator, whatever their interleaving
    let mut text = scenario(
        2,
        "8Mbps",
        "67pkts",
        "40s",
        "abr = \"bba\"\nvideo = \"tcphas\"\nconnection = \"per-request\"",
    );
    text.push_str(
        r#"
[[traffic]]
name = "web"
kind = "web"
src = "left1"
dst = "right1"
rate = "1Mbps"
mean_size = "50KB"
"#,
    );
    let r = run(&text);
    assert_eq!(r.players.len(), 2);
    for p in &r.players {
        assert!(p.segments >= 10, "{}", show(p));
        // one connection per request, each reported as a flow named after the player
        let flows: Vec<_> = r
            .flows
            .iter()
            .filter(|f| f.name.starts_with(&format!("{}.", p.name)))
            .collect();
        assert_eq!(flows.len() as u32, p.connections, "{}", show(p));
        let bytes: u64 = flows.iter().map(|f| f.transfer.bytes_received).sum();
        assert!(
            bytes >= p.media_bytes,
            "flows {bytes} B < media {} B",
            p.media_bytes
        );
    }
    // no web transfer is counted as a flow
    assert_eq!(
        r.flows.len() as u32,
        r.players.iter().map(|p| p.connections).sum::<u32>()
    );
    let web = &r.traffic[0];
    assert!(web.received_bytes > 0 && web.received_bytes <= web.sent_bytes);
}
