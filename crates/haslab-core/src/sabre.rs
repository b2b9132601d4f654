//! Sabre's input files (Spiteri, Sitaraman and Sparacio, "From Theory to Practice: Improving
//! Bitrate Adaptation in the DASH Reference Player", ACM MMSys 2018; the simulator
//! `src/sabre.py` of github.com/UMass-LIDS/sabre, which reads them with `json.load`):
//!
//! - a network trace, `network.json`: a list of periods
//!   `{"duration_ms": 30000, "bandwidth_kbps": 5000, "latency_ms": 75}` that Sabre plays in a
//!   loop (`NetworkModel.next_network_period` wraps its index to 0);
//! - a movie, `movie.json`: `{"segment_duration_ms": 3000, "bitrates_kbps": [...],
//!   "segment_sizes_bits": [[...], ...]}` with one list of sizes (one per bitrate) per segment.
//!
//! haslab reads a network trace as a capacity schedule of a link direction (rate steps, looped
//! to the end of the run) and a movie as a video. Sabre's `latency_ms` is a delay Sabre adds to
//! every request; haslab's latency is the path's propagation delay, set on the links, so the
//! field is checked and not used (docs/traffic.md). Values are exact: a duration must be a whole
//! number of milliseconds' nanoseconds and a bitrate a whole number of bit/s, sizes whole bytes.
//! Errors name the field (`[3].bandwidth_kbps`, `segment_sizes_bits[7][2]`).

use crate::has::video::Video;
use crate::input::read_capped;
use serde::Deserialize;
use serde_json::Number;
use std::path::Path;

/// Largest Sabre file read (bytes), network trace or movie.
pub const MAX_SABRE_BYTES: u64 = 64 << 20;
/// Most periods in a network trace.
pub const MAX_PERIODS: usize = 1_000_000;
/// Most rate steps a looped network trace may become over a run.
pub const MAX_STEPS: usize = 10_000_000;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PeriodJson {
    duration_ms: Number,
    bandwidth_kbps: Number,
    latency_ms: Number,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MovieJson {
    segment_duration_ms: Number,
    bitrates_kbps: Vec<Number>,
    segment_sizes_bits: Vec<Vec<Number>>,
}

/// One period of a Sabre network trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Period {
    pub duration_ns: u64,
    pub rate_bps: u64,
    pub latency_ns: u64,
}

/// `n × 10^scale` when it is a whole number that fits in a u64 (a JSON number such as `1285`,
/// `1285.5` or `1.2855e3`, read exactly from its decimal text).
fn scaled(n: &Number, scale: u32, unit: &str) -> Result<u64, String> {
    let text = n.to_string();
    let bad = || format!("{text} {unit} is not a non-negative number");
    let (mantissa, exp) = match text.split_once(['e', 'E']) {
        Some((m, e)) => (m, e.parse::<i64>().map_err(|_| bad())?),
        None => (text.as_str(), 0),
    };
    if mantissa.starts_with('-') {
        return Err(format!("{text} {unit} is negative"));
    }
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = format!("{int}{frac}");
    // value = digits × 10^(exp + scale − len(frac))
    let shift = exp + i64::from(scale) - frac.len() as i64;
    let digits = digits.trim_start_matches('0');
    let digits = if digits.is_empty() { "0" } else { digits };
    let base_unit = match scale {
        3 => "bit/s",
        6 => "ns",
        _ => "the base unit",
    };
    if shift < 0 {
        let cut = (-shift) as usize;
        if digits == "0" {
            return Ok(0);
        }
        if cut >= digits.len() || digits[digits.len() - cut..].bytes().any(|b| b != b'0') {
            return Err(format!("{text} {unit} is a fraction of a {base_unit}"));
        }
        return digits[..digits.len() - cut].parse().map_err(|_| bad());
    }
    if shift > 30 {
        return Err(format!("{text} {unit} is too large"));
    }
    let padded = format!("{digits}{}", "0".repeat(shift as usize));
    padded
        .parse::<u64>()
        .map_err(|_| format!("{text} {unit} is too large"))
}

fn parse<T: for<'de> Deserialize<'de>>(bytes: &[u8], what: &str, shown: &str) -> Result<T, String> {
    let de = &mut serde_json::Deserializer::from_slice(bytes);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let at = if path == "." {
            String::new()
        } else {
            format!("{path}: ")
        };
        format!("{what} {shown}: {at}{}", e.inner())
    })
}

/// Reads a Sabre network trace: at least one period, each of a positive duration and a
/// positive bandwidth.
pub fn read_network(path: &Path) -> Result<Vec<Period>, String> {
    let bytes = read_capped(path, "Sabre network trace", MAX_SABRE_BYTES)?;
    parse_network(&bytes, &path.display().to_string())
}

/// [`read_network`] of bytes already read (`shown` names them in messages).
pub fn parse_network(bytes: &[u8], shown: &str) -> Result<Vec<Period>, String> {
    let raw: Vec<PeriodJson> = parse(bytes, "Sabre network trace", shown)?;
    if raw.is_empty() {
        return Err(format!(
            "Sabre network trace {shown}: the list of periods is empty"
        ));
    }
    if raw.len() > MAX_PERIODS {
        return Err(format!(
            "Sabre network trace {shown}: {} periods is too many: at most {MAX_PERIODS}",
            raw.len()
        ));
    }
    raw.iter()
        .enumerate()
        .map(|(i, p)| {
            let field = |name: &str, m: String| format!("Sabre network trace {shown}: [{i}].{name}: {m}");
            let duration_ns = scaled(&p.duration_ms, 6, "ms").map_err(|m| field("duration_ms", m))?;
            if duration_ns == 0 {
                return Err(field("duration_ms", "must be greater than zero".into()));
            }
            let rate_bps = scaled(&p.bandwidth_kbps, 3, "kbps").map_err(|m| field("bandwidth_kbps", m))?;
            if rate_bps == 0 {
                return Err(field(
                    "bandwidth_kbps",
                    "must be greater than zero (a link has a positive rate; model an outage with a [[loss_event]] of 100%)".into(),
                ));
            }
            let latency_ns = scaled(&p.latency_ms, 6, "ms").map_err(|m| field("latency_ms", m))?;
            Ok(Period {
                duration_ns,
                rate_bps,
                latency_ns,
            })
        })
        .collect()
}

/// The rate steps `(at_ns, rate_bps)` of `periods` played in a loop from time 0 until
/// `duration_ns` (Sabre loops its trace); at most [`MAX_STEPS`] periods are played.
pub fn steps(periods: &[Period], duration_ns: u64) -> Result<Vec<(u64, u64)>, String> {
    let mut out: Vec<(u64, u64)> = Vec::new();
    let mut t = 0u64;
    // periods played, merged or not: a trace of many tiny periods of one rate is bounded too
    let mut played = 0usize;
    'outer: loop {
        for p in periods {
            if t >= duration_ns && !out.is_empty() {
                break 'outer;
            }
            played += 1;
            if played > MAX_STEPS {
                return Err(format!(
                    "the trace played in a loop to the end of the run is more than {MAX_STEPS} periods: use longer periods or a shorter run"
                ));
            }
            // two periods of the same rate make one step
            if out.last().map(|s| s.1) != Some(p.rate_bps) {
                out.push((t, p.rate_bps));
            }
            t = t.saturating_add(p.duration_ns);
        }
    }
    Ok(out)
}

/// Reads a Sabre movie as a video: the ladder `bitrates_kbps` (strictly ascending), segments
/// of `segment_duration_ms`, and the size of each segment at each bitrate.
pub fn read_movie(path: &Path) -> Result<Video, String> {
    let bytes = read_capped(path, "Sabre movie", MAX_SABRE_BYTES)?;
    parse_movie(&bytes, &path.display().to_string())
}

/// [`read_movie`] of bytes already read (`shown` names them in messages).
pub fn parse_movie(bytes: &[u8], shown: &str) -> Result<Video, String> {
    let raw: MovieJson = parse(bytes, "Sabre movie", shown)?;
    let field = |name: String, m: String| format!("Sabre movie {shown}: {name}: {m}");
    let segment_ns = scaled(&raw.segment_duration_ms, 6, "ms")
        .map_err(|m| field("segment_duration_ms".into(), m))?;
    if segment_ns == 0 {
        return Err(field(
            "segment_duration_ms".into(),
            "must be greater than zero".into(),
        ));
    }
    let ladder = raw
        .bitrates_kbps
        .iter()
        .enumerate()
        .map(|(i, b)| scaled(b, 3, "kbps").map_err(|m| field(format!("bitrates_kbps[{i}]"), m)))
        .collect::<Result<Vec<u64>, String>>()?;
    crate::has::video::check_ladder(&ladder).map_err(|m| field("bitrates_kbps".into(), m))?;
    if raw.segment_sizes_bits.len() > crate::has::video::MAX_SEGMENTS {
        return Err(field(
            "segment_sizes_bits".into(),
            format!(
                "{} segments is too many: at most {}",
                raw.segment_sizes_bits.len(),
                crate::has::video::MAX_SEGMENTS
            ),
        ));
    }
    let mut sizes = vec![Vec::with_capacity(raw.segment_sizes_bits.len()); ladder.len()];
    for (s, row) in raw.segment_sizes_bits.iter().enumerate() {
        if row.len() != ladder.len() {
            return Err(field(
                format!("segment_sizes_bits[{s}]"),
                format!(
                    "{} sizes, but bitrates_kbps has {} bitrates: give one size per bitrate",
                    row.len(),
                    ladder.len()
                ),
            ));
        }
        for (l, bits) in row.iter().enumerate() {
            let name = format!("segment_sizes_bits[{s}][{l}]");
            let bits = scaled(bits, 0, "bits").map_err(|m| field(name.clone(), m))?;
            if bits == 0 || bits % 8 != 0 {
                return Err(field(
                    name,
                    format!("{bits} bits: a size is a positive whole number of bytes (a multiple of 8 bits)"),
                ));
            }
            sizes[l].push(bits / 8);
        }
    }
    let n = raw.segment_sizes_bits.len();
    Video::from_durations("sabre", ladder, vec![segment_ns; n], Some(sizes))
        .map_err(|m| field("segment_sizes_bits".into(), m))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn num(s: &str) -> Number {
        serde_json::from_str(s).unwrap()
    }

    #[test]
    fn numbers_are_read_exactly_or_refused() {
        assert_eq!(scaled(&num("1285"), 3, "kbps"), Ok(1_285_000));
        assert_eq!(scaled(&num("1285.5"), 3, "kbps"), Ok(1_285_500));
        assert_eq!(scaled(&num("1.2855e3"), 3, "kbps"), Ok(1_285_500));
        assert_eq!(scaled(&num("0.1"), 6, "ms"), Ok(100_000));
        assert_eq!(scaled(&num("0"), 6, "ms"), Ok(0));
        assert!(scaled(&num("0.0001"), 3, "kbps")
            .unwrap_err()
            .contains("fraction of a bit/s"));
        assert!(scaled(&num("-5"), 3, "kbps")
            .unwrap_err()
            .contains("negative"));
        assert!(scaled(&num("1e40"), 3, "kbps")
            .unwrap_err()
            .contains("too large"));
        assert!(scaled(&num("18446744073709551615"), 3, "kbps")
            .unwrap_err()
            .contains("too large"));
    }

    #[test]
    fn a_trace_of_tiny_periods_is_refused_not_looped_forever() {
        let tiny = [Period {
            duration_ns: 1,
            rate_bps: 1000,
            latency_ns: 0,
        }];
        // one rate: every period merges into the first step, yet the loop is bounded
        let e = steps(&tiny, 3_600_000_000_000).unwrap_err();
        assert!(e.contains("more than 10000000 periods"), "{e}");
    }

    #[test]
    fn a_trace_loops_to_the_end_of_the_run_and_merges_equal_rates() {
        let p = |ms: u64, kbps: u64| Period {
            duration_ns: ms * 1_000_000,
            rate_bps: kbps * 1000,
            latency_ns: 0,
        };
        let trace = [p(1000, 5000), p(500, 3000), p(500, 3000), p(1000, 5000)];
        let s = steps(&trace, 5_000_000_000).unwrap();
        let ms = 1_000_000;
        assert_eq!(
            s,
            vec![
                (0, 5_000_000),
                (1000 * ms, 3_000_000),
                (2000 * ms, 5_000_000), // the last period and the first of the loop are one step
                (4000 * ms, 3_000_000),
            ]
        );
    }
}
