//! Mahimahi packet-delivery traces (`mm-link UPLINK DOWNLINK`), read and served exactly as
//! Mahimahi's `LinkQueue` does (ravinet/mahimahi `src/frontend/link_queue.cc`).
//!
//! **File.** One delivery opportunity per line: a non-negative decimal integer, a time in
//! milliseconds. Parsed as `strtol(…, 10)` with nothing after the number: leading whitespace
//! and a sign are accepted; a trailing `\r` (CRLF files), trailing spaces, comments, fractions
//! and empty lines are errors. Times must be non-decreasing, there must be at least one line,
//! and the last time must be > 0 (it is the period). A single newline at the end of the file
//! is fine.
//!
//! **Service** (implemented in [`super::link::LinkDir`]):
//! 1. each opportunity lets up to [`OPPORTUNITY_BYTES`] bytes leave the queue, per byte: one
//!    opportunity can finish several small packets, and a packet can span opportunities (it
//!    departs at the one that sends its last byte);
//! 2. bytes of an opportunity that find the queue empty are lost;
//! 3. a packet that arrives during millisecond t is first served at an opportunity of a
//!    millisecond ≥ t + 1 (Mahimahi uses up every opportunity ≤ now before queueing an
//!    arrival);
//! 4. the trace repeats with period = its last time (not last + 1), unless `once` is set, in
//!    which case the link stops delivering after the last line (`mm-link --once`);
//! 5. several lines with the same time are that many opportunities in that millisecond.
//!
//! **Opportunity size.** Mahimahi's code uses 1504 bytes (its TUN MTU); its documentation and
//! the traces' usual reading ("one line per ms = 12 Mbit/s") use 1500. haslab uses 1500, so a
//! trace's rate is `lines × 1500 × 8 / period`. Packets larger than one opportunity are dropped
//! at the queue, as Mahimahi rejects them.

use std::fmt;

/// Bytes one delivery opportunity lets through.
pub const OPPORTUNITY_BYTES: u32 = 1500;

/// Longest trace period accepted: 10 days in ms (the longest run).
pub const MAX_TRACE_MS: u64 = 10 * 86_400 * 1000;

/// A parsed trace.
#[derive(Clone, Debug, PartialEq)]
pub struct MahimahiTrace {
    /// Distinct opportunity times within one period and how many opportunities each has.
    /// Looping traces fold a time equal to the period onto 0 of the next period; `once`
    /// traces keep times as written.
    times_ms: Vec<u64>,
    counts: Vec<u32>,
    /// The last time of the file.
    pub period_ms: u64,
    /// Number of lines (delivery opportunities per period).
    pub lines: u64,
    /// Stop after one pass instead of looping.
    pub once: bool,
}

/// Why a trace file is malformed: 1-based line (0 for the file as a whole) and reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceError {
    pub line: usize,
    pub reason: String,
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        if self.line == 0 {
            f.write_str(&self.reason)
        } else {
            write!(f, "line {}: {}", self.line, self.reason)
        }
    }
}

fn bad(line: usize, reason: impl Into<String>) -> TraceError {
    TraceError {
        line,
        reason: reason.into(),
    }
}

/// Parses one line as Mahimahi does (strtol base 10, nothing after the number).
fn parse_line(text: &str, n: usize) -> Result<u64, TraceError> {
    if text.is_empty() {
        return Err(bad(n, "empty line (every line must hold one time in ms)"));
    }
    // strtol skips leading white space (isspace) and takes an optional sign
    let s = text.trim_start_matches([' ', '\t', '\x0b', '\x0c', '\r']);
    let (neg, s) = match s.as_bytes().first() {
        Some(b'+') => (false, &s[1..]),
        Some(b'-') => (true, &s[1..]),
        _ => (false, s),
    };
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 && s.starts_with('#') {
        return Err(bad(
            n,
            "a comment line; Mahimahi traces have no comments, only one time per line",
        ));
    }
    if digits == 0 {
        let shown: String = text.chars().take(40).collect();
        return Err(bad(
            n,
            format!("{shown:?} is not a number (expected a whole number of milliseconds)"),
        ));
    }
    let rest = &s[digits..];
    if let Some(c) = rest.chars().next() {
        let after_space = rest.trim_start_matches([' ', '\t']);
        let why = match c {
            ' ' | '\t' if after_space.starts_with('#') => {
                "a comment after the number; Mahimahi traces have no comments".to_string()
            }
            '\r' => "a carriage return ends the line (CRLF line ends are not accepted; convert the file to LF)".to_string(),
            ' ' | '\t' => "trailing white space after the number".to_string(),
            '.' | ',' => "a fraction; times are whole milliseconds".to_string(),
            'e' | 'E' => "an exponent; write the time as a plain integer".to_string(),
            '#' => "a comment after the number; Mahimahi traces have no comments".to_string(),
            'x' | 'X' if s[..digits] == *"0" => {
                "a hexadecimal number; times are decimal".to_string()
            }
            _ => format!("unexpected character {c:?} after the number"),
        };
        return Err(bad(n, why));
    }
    let v: u64 = s[..digits]
        .parse()
        .map_err(|_| bad(n, format!("{} is too large for a time in ms", &s[..digits])))?;
    if neg && v != 0 {
        return Err(bad(
            n,
            format!("negative time -{v}; times are non-negative"),
        ));
    }
    if v > MAX_TRACE_MS {
        return Err(bad(
            n,
            format!("{v} ms is longer than 10 days, the longest run"),
        ));
    }
    Ok(v)
}

/// The mean rate of `lines` opportunities per `period_ms`, in whole bits per second.
fn rate_bps(lines: u64, period_ms: u64) -> u64 {
    (lines as u128 * OPPORTUNITY_BYTES as u128 * 8 * 1000 / period_ms as u128) as u64
}

impl MahimahiTrace {
    /// Parses a trace file's bytes.
    pub fn parse(bytes: &[u8], once: bool) -> Result<Self, TraceError> {
        let text = std::str::from_utf8(bytes).map_err(|e| {
            let line = bytes[..e.valid_up_to()]
                .iter()
                .filter(|&&b| b == b'\n')
                .count()
                + 1;
            bad(
                line,
                "not text: the bytes are not valid UTF-8 (is this a binary file?)",
            )
        })?;
        if text.is_empty() {
            return Err(bad(0, "the file is empty: a trace needs at least one line"));
        }
        // One trailing newline ends the last line; anything else splits lines.
        let body = text.strip_suffix('\n').unwrap_or(text);
        let mut times: Vec<u64> = Vec::new();
        for (i, line) in body.split('\n').enumerate() {
            let n = i + 1;
            if line.contains('\0') {
                return Err(bad(n, "NUL byte in the line (is this a binary file?)"));
            }
            let v = parse_line(line, n)?;
            if let Some(&prev) = times.last() {
                if v < prev {
                    return Err(bad(
                        n,
                        format!(
                            "time {v} ms is before the previous line's {prev} ms; times must be non-decreasing"
                        ),
                    ));
                }
            }
            times.push(v);
        }
        let period = *times.last().expect("at least one line");
        if period == 0 {
            return Err(bad(
                times.len(),
                "the last time is 0: it must be > 0, as it is the trace's period",
            ));
        }
        let lines = times.len() as u64;
        // The rate is counted in whole bits per second (`mean_rate_bps`): a trace must carry at
        // least one, i.e. 1500 bytes per 12,000,000 ms.
        if rate_bps(lines, period) == 0 {
            return Err(bad(
                times.len(),
                format!(
                    "{lines} delivery opportunities over a period of {period} ms average below \
                     1 bit/s; a trace must average at least 1 bit/s"
                ),
            ));
        }
        // Fold and merge.
        let mut folded: Vec<u64> = times
            .iter()
            .map(|&t| if !once && t == period { 0 } else { t })
            .collect();
        folded.sort_unstable();
        let mut times_ms = Vec::new();
        let mut counts: Vec<u32> = Vec::new();
        for t in folded {
            if times_ms.last() == Some(&t) {
                *counts.last_mut().expect("parallel vectors") += 1;
            } else {
                times_ms.push(t);
                counts.push(1);
            }
        }
        Ok(MahimahiTrace {
            times_ms,
            counts,
            period_ms: period,
            lines,
            once,
        })
    }

    /// Reads and parses a trace file; errors name the file.
    pub fn read(path: &std::path::Path, once: bool) -> Result<Self, String> {
        let bytes = crate::input::read_capped(path, "trace", crate::input::MAX_TRACE_BYTES)?;
        Self::parse(&bytes, once).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Mean rate at [`OPPORTUNITY_BYTES`] per opportunity, bits per second.
    pub fn mean_rate_bps(&self) -> u64 {
        rate_bps(self.lines, self.period_ms)
    }

    /// The first opportunity strictly after millisecond `t_ms`: its time (ms) and the number
    /// of opportunities at that time; None once a `once` trace has ended.
    pub fn next_after(&self, t_ms: u64) -> Option<(u64, u32)> {
        if self.once {
            let i = self.times_ms.partition_point(|&x| x <= t_ms);
            return (i < self.times_ms.len()).then(|| (self.times_ms[i], self.counts[i]));
        }
        let p = self.period_ms;
        let (k, r) = (t_ms / p, t_ms % p);
        let i = self.times_ms.partition_point(|&x| x <= r);
        Some(if i < self.times_ms.len() {
            (k * p + self.times_ms[i], self.counts[i])
        } else {
            ((k + 1) * p + self.times_ms[0], self.counts[0])
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<MahimahiTrace, TraceError> {
        MahimahiTrace::parse(s.as_bytes(), false)
    }

    #[test]
    fn one_line_of_1_is_12_mbps() {
        let t = parse("1\n").unwrap();
        assert_eq!(
            (t.period_ms, t.lines, t.mean_rate_bps()),
            (1, 1, 12_000_000)
        );
        // an opportunity every ms, strictly after the given ms
        assert_eq!(t.next_after(0), Some((1, 1)));
        assert_eq!(t.next_after(41), Some((42, 1)));
    }

    #[test]
    fn a_trace_averaging_below_one_bit_per_second_is_refused() {
        // one 1500-byte opportunity per 12,000 s is exactly 1 bit/s
        assert_eq!(parse("12000000\n").unwrap().mean_rate_bps(), 1);
        let e = parse("12000001\n").unwrap_err().to_string();
        assert!(e.contains("below 1 bit/s"), "{e}");
    }

    #[test]
    fn repeated_times_are_several_opportunities_and_the_period_is_the_last_time() {
        // "0 0 1 1": 2 per ms = 24 Mbit/s; period 1 folds 1 onto 0 of the next loop
        let t = parse("0\n0\n1\n1").unwrap();
        assert_eq!(t.mean_rate_bps(), 48_000_000); // 4 lines per 1 ms period
        assert_eq!(t.next_after(0), Some((1, 4)));
        let t = parse("5\n10\n10\n20\n").unwrap();
        assert_eq!(t.period_ms, 20);
        assert_eq!(t.next_after(4), Some((5, 1)));
        assert_eq!(t.next_after(5), Some((10, 2)));
        assert_eq!(t.next_after(10), Some((20, 1)));
        assert_eq!(t.next_after(20), Some((25, 1))); // second loop: base 20
        assert_eq!(t.next_after(39), Some((40, 1)));
        let once = MahimahiTrace::parse(b"5\n10\n20\n", true).unwrap();
        assert_eq!(once.next_after(10), Some((20, 1)));
        assert_eq!(once.next_after(20), None);
    }

    #[test]
    fn fifteen_malformed_traces_each_get_their_own_error() {
        // (file, line of the error, words the reason must contain)
        let cases: [(&[u8], usize, &str); 15] = [
            (b"", 0, "the file is empty"),
            (b"1\n\n2\n", 2, "empty line"),
            (b"1\n2\n\n", 3, "empty line"),
            (b"1\r\n2\r\n", 1, "carriage return"),
            (b"1\n2 \n", 2, "trailing white space"),
            (b"1\n2.5\n", 2, "fraction"),
            (b"1e3\n", 1, "exponent"),
            (b"# trace\n1\n", 1, "a comment line"),
            (b"1\n2 # two\n", 2, "a comment after the number"),
            (b"3\n-1\n", 2, "negative time"),
            (b"5\n3\n", 2, "non-decreasing"),
            (b"0\n0\n", 2, "last time is 0"),
            (b"99999999999999999999999\n", 1, "too large"),
            (b"1\n0x10\n", 2, "hexadecimal"),
            (b"1\n\xff\xfe\n", 2, "not valid UTF-8"),
        ];
        let mut seen = std::collections::HashSet::new();
        for (text, line, words) in cases {
            let e = MahimahiTrace::parse(text, false).expect_err(&format!("{text:?} is malformed"));
            assert_eq!(e.line, line, "{text:?}: {e}");
            assert!(e.reason.contains(words), "{text:?}: {e} lacks {words:?}");
            assert!(
                seen.insert(e.to_string()),
                "{text:?}: same error as another case: {e}"
            );
        }
        // more reasons than the 15: a number with a unit, a lone sign, a NUL byte, far too long
        for (text, words) in [
            (&b"12ms\n"[..], "unexpected character 'm'"),
            (b"+\n", "is not a number"),
            (b"1\n\x002\n", "NUL byte"),
            (b"864000001\n", "longer than 10 days"),
        ] {
            let e = MahimahiTrace::parse(text, false).unwrap_err();
            assert!(e.reason.contains(words), "{text:?}: {e}");
        }
    }

    #[test]
    fn strtol_leniency_is_kept() {
        assert_eq!(parse("  7\n+9\n").unwrap().period_ms, 9);
        assert!(parse("-0\n3").is_ok());
    }
}
