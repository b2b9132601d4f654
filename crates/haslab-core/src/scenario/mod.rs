//! The one scenario schema shared by the CLI (TOML files) and Python (dicts passed as JSON).
//!
//! - [`units`]: human units (`"8Mbps"`, `"100ms"`, `"30KB"`, `"1%"`).
//! - `spec`: the serde structs of the file ([`Scenario`] and its tables), which also give
//!   the JSON Schema ([`json_schema`]).
//! - `validate`: [`Scenario::to_plan`], the semantic checks and the resolution into a
//!   [`Plan`] (dumbbell expansion, `count` replication, defaults, names → indices).
//! - [`plan`]: the resolved scenario the simulator builds.
//!
//! Every error is a [`ScenarioError`] whose `path` names the offending field the way the file
//! spells it (`flow[2].tcp.min_rto`, `link[0].rate`, `trace.queues[1]`) and whose message says
//! what is accepted. No input makes these functions panic.

pub mod catalog;
pub mod describe;
mod flows;
pub mod plan;
mod plan_traffic;
mod player_spec;
mod players;
pub mod presets;
mod spec;
mod spec_traffic;
pub mod transport;
mod validate;
mod validate_traffic;

/// The units vocabulary lives in [`crate::sim::units`]; scenario files speak it.
pub use crate::sim::units;
pub use crate::sim::units::{MAX_DURATION_NS, MAX_RATE_BPS};
pub use describe::{describe, Describer, FLOW_OPTION_KEYS};
pub use plan::*;
pub use plan_traffic::*;
pub use player_spec::*;
pub use players::{MAX_PARALLEL, MAX_PLAYERS};
pub use spec::*;
pub use spec_traffic::*;
pub use validate::{check_name, MAX_APP_BYTES, MAX_FLOWS, MAX_NAME_LEN, MAX_NODES, SNAPLEN_RANGE};

use std::fmt;

/// A scenario that cannot be run: where (`path`, empty when the whole document is at fault,
/// e.g. a syntax error) and why.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioError {
    /// Field path as in the file: `flow[2].tcp.min_rto`, `dumbbell.pairs`, `trace.pcap[0]`.
    pub path: String,
    pub message: String,
}

/// Longest run of non-blank characters an error shows whole (a name, a value echoed back).
const MAX_SHOWN_WORD: usize = 120;

/// `s` with every run of non-blank characters longer than `MAX_SHOWN_WORD` cut to its first
/// 60 characters and a count of the rest, so that a 10 MB value does not come back whole.
pub fn shorten_long_words(s: &str) -> std::borrow::Cow<'_, str> {
    if !s
        .split_whitespace()
        .any(|w| w.chars().count() > MAX_SHOWN_WORD)
    {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::new();
    let mut word = String::new();
    let flush = |out: &mut String, word: &mut String| {
        let n = word.chars().count();
        if n > MAX_SHOWN_WORD {
            out.extend(word.chars().take(60));
            out.push_str(&format!("…[{} more characters]", n - 60));
        } else {
            out.push_str(word);
        }
        word.clear();
    };
    for c in s.chars() {
        if c.is_whitespace() {
            flush(&mut out, &mut word);
            out.push(c);
        } else {
            word.push(c);
        }
    }
    flush(&mut out, &mut word);
    std::borrow::Cow::Owned(out)
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let message = shorten_long_words(&self.message);
        if self.path.is_empty() {
            f.write_str(&message)
        } else {
            write!(f, "{}: {message}", shorten_long_words(&self.path))
        }
    }
}

impl std::error::Error for ScenarioError {}

fn path_string(p: &serde_path_to_error::Path) -> String {
    let s = p.to_string();
    if s == "." {
        String::new()
    } else {
        s
    }
}

/// 1-based line and column of byte offset `at` in `text`.
fn line_col(text: &str, at: usize) -> Option<(usize, usize)> {
    let before = text.get(..at)?;
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    Some((line, col))
}

fn toml_message(text: &str, e: &toml::de::Error, syntax: bool) -> String {
    let at = e.span().and_then(|s| line_col(text, s.start));
    match (syntax, at) {
        (true, Some((l, c))) => {
            format!("TOML syntax error at line {l}, column {c}: {}", e.message())
        }
        (true, None) => format!("TOML syntax error: {}", e.message()),
        (false, Some((l, c))) => format!("{} (line {l}, column {c})", e.message()),
        (false, None) => e.message().to_string(),
    }
}

/// Parses a TOML scenario (types and units only; see [`Scenario::to_plan`] for the rest).
pub fn parse_toml(text: &str) -> Result<Scenario, ScenarioError> {
    let de = toml::Deserializer::parse(text).map_err(|e| ScenarioError {
        path: String::new(),
        message: toml_message(text, &e, true),
    })?;
    let scenario: Scenario = serde_path_to_error::deserialize(de).map_err(|e| ScenarioError {
        path: path_string(e.path()),
        message: toml_message(text, e.inner(), false),
    })?;
    scenario.check_tables()?;
    Ok(scenario)
}

/// Parses a JSON scenario: the same shape as the TOML file (`"flow": [{...}]`, ...).
pub fn parse_json(text: &str) -> Result<Scenario, ScenarioError> {
    // serde would read a list as the scenario's fields in order: only an object is a scenario
    let first = text.trim_start_matches(|c: char| c.is_whitespace() || c == '\u{feff}');
    if let Some(c) = first.chars().next().filter(|&c| c != '{') {
        let kind = match c {
            '[' => "a list",
            '"' => "a string",
            't' | 'f' => "a boolean",
            'n' => "null",
            '-' | '0'..='9' => "a number",
            _ => "not JSON",
        };
        return Err(ScenarioError {
            path: String::new(),
            message: format!(
                "a JSON scenario is an object ({{\"duration\": …, …}}), and this document is {kind}"
            ),
        });
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let scenario: Scenario = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = path_string(e.path());
        let inner = e.into_inner();
        let message = if inner.is_syntax() || inner.is_eof() {
            format!("JSON syntax error: {inner}")
        } else {
            inner.to_string()
        };
        ScenarioError { path, message }
    })?;
    de.end().map_err(|e| ScenarioError {
        path: String::new(),
        message: format!("JSON syntax error: {e}"),
    })?;
    scenario.check_tables()?;
    Ok(scenario)
}

/// Parses and validates a TOML scenario.
pub fn plan_from_toml(text: &str) -> Result<Plan, ScenarioError> {
    parse_toml(text)?.to_plan()
}

/// Parses and validates a JSON scenario.
pub fn plan_from_json(text: &str) -> Result<Plan, ScenarioError> {
    parse_json(text)?.to_plan()
}

/// Parses and validates a TOML scenario whose relative paths (MPD files, Mahimahi traces) are
/// relative to `base` (the directory of the scenario file).
pub fn plan_from_toml_in(
    text: &str,
    base: Option<&std::path::Path>,
) -> Result<Plan, ScenarioError> {
    parse_toml(text)?.to_plan_in(base)
}

/// [`plan_from_json`] with relative paths resolved against `base`.
pub fn plan_from_json_in(
    text: &str,
    base: Option<&std::path::Path>,
) -> Result<Plan, ScenarioError> {
    parse_json(text)?.to_plan_in(base)
}

/// The JSON Schema of [`Scenario`] (draft 2020-12), pretty-printed.
pub fn json_schema() -> String {
    let schema = schemars::schema_for!(Scenario);
    serde_json::to_string_pretty(&schema).expect("a JSON Schema always serialises")
}

impl Scenario {
    /// Type-checks the `tcp` tables, which are kept as raw tables until `to_plan` merges them.
    fn check_tables(&self) -> Result<(), ScenarioError> {
        validate::tcp_from_table(&self.defaults.tcp, "defaults.tcp")?;
        for (i, f) in self.flows.iter().enumerate() {
            validate::tcp_from_table(&f.tcp, &format!("flow[{i}].tcp"))?;
        }
        for (i, p) in self.players.iter().enumerate() {
            validate::tcp_from_table(&p.tcp, &format!("player[{i}].tcp"))?;
        }
        for (i, t) in self.traffic.iter().enumerate() {
            validate::tcp_from_table(&t.tcp, &format!("traffic[{i}].tcp"))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
