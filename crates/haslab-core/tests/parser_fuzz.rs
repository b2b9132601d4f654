//! Property tests of the two input-file parsers, the DASH MPD (`has::mpd::load_str`) and the
//! Mahimahi trace (`net::mahimahi::MahimahiTrace::parse`): whatever the bytes, no panic (the
//! tests run in the debug profile, so an arithmetic overflow is a panic too), an error with a
//! message, or a video/trace that keeps its invariants.
//!
//! Inputs: random bytes; random mutations of valid documents (delete, duplicate or swap bytes
//! and lines, replace attribute values and numbers with nasty tokens: empty, negative, 2^64,
//! 400 digits, NaN, exponents, durations of a million years, entities).

use haslab_core::has::mpd::{load_str, MpdOptions};
use haslab_core::has::video::MAX_SEGMENTS;
use haslab_core::net::mahimahi::MahimahiTrace;
use proptest::prelude::*;

const MPD_TEMPLATE: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT9.5S" minBufferTime="PT2S">
  <Period id="p0" start="PT0S">
    <AdaptationSet mimeType="video/mp4" startWithSAP="1">
      <SegmentTemplate media="v_$Number$.m4s" timescale="1000" duration="2000" startNumber="1"/>
      <Representation id="a" bandwidth="500000"/>
      <Representation id="b" bandwidth="1000000"/>
    </AdaptationSet>
    <AdaptationSet mimeType="audio/mp4" lang="en" startWithSAP="1">
      <Representation id="au" bandwidth="128000"/>
    </AdaptationSet>
  </Period>
</MPD>"#;

const MPD_TIMELINE: &str = r#"<MPD type="static"><Period duration="PT30S"><AdaptationSet contentType="video">
<Representation id="a" bandwidth="1000"><SegmentTemplate media="$Time$.m4s" timescale="90000">
<SegmentTimeline><S t="0" d="180000" r="3"/><S d="90000" r="-1"/></SegmentTimeline>
</SegmentTemplate></Representation></AdaptationSet></Period></MPD>"#;

const MPD_LIST: &str = r#"<MPD type="static" mediaPresentationDuration="PT5S"><Period><AdaptationSet mimeType="video/mp4">
<Representation id="a" bandwidth="1000"><SegmentList duration="4" timescale="2">
<SegmentURL media="a.mp4" mediaRange="0-99"/><SegmentURL media="a.mp4" mediaRange="100-349"/><SegmentURL media="a.mp4" mediaRange="350-351"/>
</SegmentList></Representation></AdaptationSet></Period></MPD>"#;

const TRACE: &str = "1\n1\n2\n5\n5\n5\n9\n12\n";

/// Tokens that replace values.
const NASTY: &[&str] = &[
    "",
    " ",
    "0",
    "-1",
    "1",
    "18446744073709551615",
    "18446744073709551616",
    "-9223372036854775808",
    "99999999999999999999999999999999999999999999999999999999999999999999999999999999",
    "NaN",
    "inf",
    "1e308",
    "0.5",
    "PT0S",
    "-PT10S",
    "P1000000Y",
    "P99999999999999999999Y",
    "PT1e308S",
    "P",
    "&lt;",
    "&ent;",
    "$Number$",
    "$Time$",
    "0-18446744073709551615",
    "18446744073709551615-0",
    "video/mp4",
    "audio/mp4",
    "\u{feff}",
    "🙂",
];

fn check_mpd(text: &str) -> Result<(), TestCaseError> {
    match load_str(text, "fuzz", &MpdOptions::default()) {
        Err(e) => prop_assert!(!e.trim().is_empty(), "empty message"),
        Ok(v) => {
            prop_assert!(!v.bitrates_bps.is_empty());
            prop_assert!(v.bitrates_bps.windows(2).all(|w| w[0] < w[1]));
            prop_assert!(v.bitrates_bps[0] > 0);
            let n = v.durations_ns.len();
            prop_assert!(n > 0 && n <= MAX_SEGMENTS);
            prop_assert!(v.durations_ns.iter().all(|&d| d > 0));
            prop_assert_eq!(v.sizes_bytes.len(), v.bitrates_bps.len());
            for s in &v.sizes_bytes {
                prop_assert_eq!(s.len(), n);
                prop_assert!(s.iter().all(|&b| b > 0));
            }
        }
    }
    Ok(())
}

fn check_trace(bytes: &[u8]) -> Result<(), TestCaseError> {
    for once in [false, true] {
        match MahimahiTrace::parse(bytes, once) {
            Err(e) => prop_assert!(!e.to_string().trim().is_empty()),
            Ok(t) => {
                prop_assert!(t.period_ms > 0 && t.lines > 0);
                prop_assert!(t.mean_rate_bps() > 0);
                // the next opportunity is strictly later, or none after a `once` trace
                for at in [0, 1, t.period_ms, 3 * t.period_ms + 1] {
                    if let Some((next, count)) = t.next_after(at) {
                        prop_assert!(next > at && count > 0);
                    } else {
                        prop_assert!(once);
                    }
                }
            }
        }
    }
    Ok(())
}

#[derive(Clone, Debug)]
enum Mutation {
    /// replace the value of the `.0`-th `"…"` (attribute value) or number with NASTY[.1]
    Value(usize, usize),
    DeleteLine(usize),
    DuplicateLine(usize),
    SwapLines(usize, usize),
    /// delete `.1` bytes at `.0`
    DeleteBytes(usize, usize),
    /// insert NASTY[.1] at byte `.0`
    Insert(usize, usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let at = 0usize..4096;
    let nasty = 0..NASTY.len();
    prop_oneof![
        6 => (at.clone(), nasty.clone()).prop_map(|(a, k)| Mutation::Value(a, k)),
        1 => at.clone().prop_map(Mutation::DeleteLine),
        1 => at.clone().prop_map(Mutation::DuplicateLine),
        1 => (at.clone(), at.clone()).prop_map(|(a, b)| Mutation::SwapLines(a, b)),
        1 => (at.clone(), 1usize..20).prop_map(|(a, n)| Mutation::DeleteBytes(a, n)),
        1 => (at, nasty).prop_map(|(a, k)| Mutation::Insert(a, k)),
    ]
}

/// Byte ranges of the values a mutation may replace: attribute values and runs of digits.
fn values(text: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'"' {
            if let Some(j) = text[i + 1..].find('"') {
                out.push((i + 1, i + 1 + j));
                i += j + 2;
                continue;
            }
        } else if b[i].is_ascii_digit() {
            let j = b[i..]
                .iter()
                .position(|c| !c.is_ascii_digit())
                .map_or(b.len(), |k| i + k);
            out.push((i, j));
            i = j;
            continue;
        }
        i += 1;
    }
    out
}

fn floor_char(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn apply(text: &str, muts: &[Mutation]) -> String {
    let mut s = text.to_string();
    for m in muts {
        if s.is_empty() {
            break;
        }
        match *m {
            Mutation::Value(k, n) => {
                let v = values(&s);
                if let Some(&(a, b)) = v.get(k % v.len().max(1)) {
                    s.replace_range(a..b, NASTY[n]);
                }
            }
            Mutation::DeleteLine(i) | Mutation::DuplicateLine(i) | Mutation::SwapLines(i, _) => {
                let mut lines: Vec<String> = s.split('\n').map(str::to_string).collect();
                let n = lines.len();
                match *m {
                    Mutation::DeleteLine(_) => {
                        lines.remove(i % n);
                    }
                    Mutation::DuplicateLine(_) => {
                        let l = lines[i % n].clone();
                        lines.insert(i % n, l);
                    }
                    Mutation::SwapLines(_, j) => lines.swap(i % n, j % n),
                    _ => unreachable!(),
                }
                s = lines.join("\n");
            }
            Mutation::DeleteBytes(at, n) => {
                let a = floor_char(&s, at % s.len());
                let b = floor_char(&s, a + n);
                s.replace_range(a..b, "");
            }
            Mutation::Insert(at, k) => {
                let a = floor_char(&s, at % (s.len() + 1));
                s.insert_str(a, NASTY[k]);
            }
        }
    }
    s
}

const SABRE_NETWORK: &str = include_str!("../../../examples/sabre/network.json");
const SABRE_MOVIE: &str = include_str!("../../../examples/sabre/movie.json");

/// A Sabre file parses into something that keeps its invariants, or gives an error with a
/// message; looping a parsed trace over a minute never panics either.
fn check_sabre(bytes: &[u8]) -> Result<(), TestCaseError> {
    match haslab_core::sabre::parse_network(bytes, "fuzz") {
        Err(e) => prop_assert!(!e.trim().is_empty()),
        Ok(periods) => {
            prop_assert!(!periods.is_empty());
            prop_assert!(periods.iter().all(|p| p.duration_ns > 0 && p.rate_bps > 0));
            if let Ok(steps) = haslab_core::sabre::steps(&periods, 60_000_000_000) {
                prop_assert!(steps
                    .windows(2)
                    .all(|w| w[0].0 < w[1].0 && w[0].1 != w[1].1));
            }
        }
    }
    match haslab_core::sabre::parse_movie(bytes, "fuzz") {
        Err(e) => prop_assert!(!e.trim().is_empty()),
        Ok(v) => {
            prop_assert!(v.bitrates_bps.windows(2).all(|w| w[0] < w[1]));
            prop_assert!(v
                .sizes_bytes
                .iter()
                .all(|r| r.len() == v.segments() && r.iter().all(|&b| b > 0)));
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic_either_parser(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        check_trace(&bytes)?;
        check_mpd(&String::from_utf8_lossy(&bytes))?;
    }

    #[test]
    fn random_xml_like_text_never_panics(s in "(<[A-Za-z:]{1,12}( [a-zA-Z]{1,10}=\"[^\"<]{0,12}\")*/?>|</[A-Za-z]{1,10}>|[^<]{0,8}){0,30}") {
        check_mpd(&s)?;
        check_mpd(&format!("<MPD type=\"static\">{s}</MPD>"))?;
    }

    #[test]
    fn mutated_mpds_load_or_fail_cleanly(
        which in 0usize..3,
        muts in proptest::collection::vec(mutation(), 1..6),
    ) {
        let base = [MPD_TEMPLATE, MPD_TIMELINE, MPD_LIST][which];
        check_mpd(&apply(base, &muts))?;
    }

    #[test]
    fn mutated_traces_parse_or_fail_cleanly(muts in proptest::collection::vec(mutation(), 1..6)) {
        check_trace(apply(TRACE, &muts).as_bytes())?;
    }

    #[test]
    fn mutated_sabre_files_parse_or_fail_cleanly(
        which in 0usize..2,
        muts in proptest::collection::vec(mutation(), 1..6),
    ) {
        check_sabre(apply([SABRE_NETWORK, SABRE_MOVIE][which], &muts).as_bytes())?;
    }

    #[test]
    fn random_bytes_never_panic_the_sabre_parsers(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        check_sabre(&bytes)?;
    }
}

/// The valid documents the mutations start from are valid (else the properties above would
/// only ever see errors).
#[test]
fn the_seed_documents_load() {
    for m in [MPD_TEMPLATE, MPD_TIMELINE, MPD_LIST] {
        load_str(m, "seed", &MpdOptions::default()).unwrap();
    }
    MahimahiTrace::parse(TRACE.as_bytes(), false).unwrap();
    haslab_core::sabre::parse_network(SABRE_NETWORK.as_bytes(), "seed").unwrap();
    haslab_core::sabre::parse_movie(SABRE_MOVIE.as_bytes(), "seed").unwrap();
}
