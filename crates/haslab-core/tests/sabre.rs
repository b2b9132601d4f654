//! Sabre's input files (github.com/UMass-LIDS/sabre, `src/sabre.py`): a network trace becomes
//! a looped capacity schedule, a movie a video with the movie's exact segment sizes.

use haslab_core::has::video::Video;
use haslab_core::sabre::{read_movie, read_network, steps};
use haslab_core::scenario::plan_from_toml_in;
use haslab_core::world::World;
use haslab_core::RunOptions;
use std::path::PathBuf;

const S: u64 = 1_000_000_000;

fn examples() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

#[test]
fn the_example_network_trace_loops_as_sabre_plays_it() {
    let periods = read_network(&examples().join("sabre/network.json")).unwrap();
    let kbps: Vec<u64> = periods.iter().map(|p| p.rate_bps / 1000).collect();
    assert_eq!(kbps, [4000, 1500, 800, 2500]);
    // 20 + 20 + 10 + 20 = 70 s, then again from the first period
    let s = steps(&periods, 120 * S).unwrap();
    let at_s: Vec<(u64, u64)> = s.iter().map(|&(t, r)| (t / S, r / 1000)).collect();
    assert_eq!(
        at_s,
        [
            (0, 4000),
            (20, 1500),
            (40, 800),
            (50, 2500),
            (70, 4000),
            (90, 1500),
            (110, 800)
        ]
    );
}

#[test]
fn the_example_movie_keeps_every_segment_size() {
    let text = std::fs::read_to_string(examples().join("sabre/movie.json")).unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let v: Video = read_movie(&examples().join("sabre/movie.json")).unwrap();
    assert_eq!(v.bitrates_bps, [300_000, 750_000, 1_500_000, 3_000_000]);
    let rows = json["segment_sizes_bits"].as_array().unwrap();
    assert_eq!(v.segments(), rows.len());
    assert!(v.durations_ns.iter().all(|&d| d == 3 * S));
    for (s, row) in rows.iter().enumerate() {
        for (l, bits) in row.as_array().unwrap().iter().enumerate() {
            assert_eq!(
                v.size(l, s) * 8,
                bits.as_u64().unwrap(),
                "segment {s} level {l}"
            );
        }
    }
}

#[test]
fn the_link_carries_at_most_the_trace_rate_in_each_period() {
    // examples/sabre.toml: the player's downloads cross router->client, whose rate follows the
    // trace; in every period the bytes the link sends are at most rate × period (plus one
    // packet in transmission at the boundary).
    let text = std::fs::read_to_string(examples().join("sabre.toml")).unwrap();
    let plan = plan_from_toml_in(&text, Some(&examples())).unwrap();
    let mut w = World::new(&plan, &RunOptions::default()).unwrap();
    let ld = w.link_dir_index("router->client").unwrap();
    let periods = [
        (0, 20, 4000),
        (20, 40, 1500),
        (40, 50, 800),
        (50, 70, 2500),
        (70, 90, 4000),
    ];
    let mut sent_before = 0;
    let mut busy = 0;
    for (from, to, kbps) in periods {
        w.run_until(to * S);
        let sent = w.link_summaries()[ld].tx_bytes;
        let cap = kbps * 1000 / 8 * (to - from);
        assert!(
            sent - sent_before <= cap + 1500,
            "{from}-{to} s: {} > {cap}",
            sent - sent_before
        );
        if sent - sent_before > cap / 2 {
            busy += 1;
        }
        sent_before = sent;
    }
    assert!(busy >= 3, "the player keeps the link busy in most periods");
    let r = w.finish().unwrap();
    assert_eq!(r.players.len(), 1);
    assert!(r.players[0].avg_bitrate_bps > 0.0);
}
