//! Human units in scenario files: `"8Mbps"`, `"100ms"`, `"30KB"`, `"1%"`.
//!
//! Each quantity is a newtype over an integer in the base unit that its name states
//! (`Rate` = bits per second, `Duration` = nanoseconds, `Size` = bytes) or a probability in
//! [0, 1]. Deserialising reports the accepted forms when a value is malformed, so the error
//! that reaches the user names the field (via `serde_path_to_error`) and what is accepted.
//!
//! Conventions: decimal SI prefixes (k = 1000) for rates and sizes (`KB` = 1000 bytes, as
//! network papers use them); binary prefixes are spelled `KiB`, `MiB`, `GiB`.

use schemars::JsonSchema;
use serde::{de, Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// Longest run, and longest duration anywhere in a scenario: 10 days.
pub const MAX_DURATION_NS: u64 = 10 * 86_400 * 1_000_000_000;
/// Fastest link direction: 1 Tbps.
pub const MAX_RATE_BPS: u64 = 1_000_000_000_000;

/// A bit rate in bits per second. Accepted: `"8Mbps"`, `"500kbps"`, `"10Gbps"`, `"1200bps"`,
/// also with a space or as `Mbit/s`; must be > 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Rate(pub u64);

/// A time span in nanoseconds. Accepted: `"100ms"`, `"1.5s"`, `"250us"`, `"10ns"`, `"2min"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Duration(pub u64);

/// A size in bytes. Accepted: `"30KB"`, `"1.5MB"`, `"64KiB"`, `"1448B"`, or a bare integer (bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Size(pub u64);

/// A probability. Accepted: `"1%"`, `"0.5%"` (text with its unit), or a bare number in
/// [0, 1], which is a fraction (`0.005` is 0.5 %). Text without the unit (`"0.5"`) is refused:
/// whether it means 0.5 % or 50 % is the reader's guess.
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd, Default)]
pub struct Probability(pub f64);

pub const RATE_FORMS: &str =
    "a positive rate such as \"8Mbps\", \"500kbps\", \"1Gbps\" or \"1200bps\"";
pub const DURATION_FORMS: &str =
    "a duration such as \"100ms\", \"1.5s\", \"250us\", \"10ns\" or \"2min\" (a bare 0 is also accepted)";
pub const SIZE_FORMS: &str =
    "a size such as \"30KB\", \"1.5MB\", \"64KiB\", \"1448B\" or a whole number of bytes";
pub const PROBABILITY_FORMS: &str =
    "a probability such as \"1%\" or \"0.5%\", or a fraction written as a bare number from 0 to 1 (0.005)";

/// Splits `"12.5 Mbps"` into (12.5, "Mbps"), rejecting signs, NaN and exponents.
fn split_number(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(end);
    if num.is_empty() || num.starts_with('.') && num.len() == 1 || num.matches('.').count() > 1 {
        return None;
    }
    let v: f64 = num.parse().ok()?;
    v.is_finite().then_some((v, unit.trim()))
}

fn scaled(v: f64, mult: f64) -> Option<u64> {
    let x = (v * mult).round();
    (0.0..1.8e19).contains(&x).then_some(x as u64)
}

/// An error when `v` × `mult` is not (to 1 ppm) a whole number of the base unit `base`: such a
/// value would be rounded silently ("0.5bps" to 1 bit/s, "1.5ns" to 2 ns).
fn fraction(s: &str, what: &str, v: f64, mult: f64, base: &str) -> Result<(), String> {
    let x = v * mult;
    if (x - x.round()).abs() > 1e-6 * x.max(1.0) {
        return Err(format!(
            "invalid {what} {s:?}: {x} {base} is not a whole number of {base}, the smallest step"
        ));
    }
    Ok(())
}

pub fn parse_rate(s: &str) -> Result<Rate, String> {
    let bad = || format!("invalid rate {s:?}: expected {RATE_FORMS}");
    let (v, unit) = split_number(s).ok_or_else(bad)?;
    let mult = match unit {
        "bps" | "bit/s" | "b/s" => 1.0,
        "kbps" | "Kbps" | "kbit/s" | "Kbit/s" => 1e3,
        "Mbps" | "mbps" | "Mbit/s" => 1e6,
        "Gbps" | "gbps" | "Gbit/s" => 1e9,
        "" => {
            return Err(format!(
                "invalid rate {s:?}: a unit is required; expected {RATE_FORMS}"
            ))
        }
        _ => return Err(bad()),
    };
    fraction(s, "rate", v, mult, "bit/s")?;
    match scaled(v, mult) {
        Some(0) => Err(format!("invalid rate {s:?}: must be greater than zero")),
        Some(x) => Ok(Rate(x)),
        None => Err(bad()),
    }
}

pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let bad = || format!("invalid duration {s:?}: expected {DURATION_FORMS}");
    let (v, unit) = split_number(s).ok_or_else(bad)?;
    let mult = match unit {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        "min" => 60e9,
        "" if v == 0.0 => 1.0,
        "" => {
            return Err(format!(
                "invalid duration {s:?}: a unit is required; expected {DURATION_FORMS}"
            ))
        }
        _ => return Err(bad()),
    };
    fraction(s, "duration", v, mult, "ns")?;
    scaled(v, mult).map(Duration).ok_or_else(bad)
}

pub fn parse_size(s: &str) -> Result<Size, String> {
    let bad = || format!("invalid size {s:?}: expected {SIZE_FORMS}");
    let (v, unit) = split_number(s).ok_or_else(bad)?;
    let mult = match unit {
        "" | "B" => 1.0,
        "KB" | "kB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        _ => return Err(bad()),
    };
    fraction(s, "size", v, mult, "bytes")?;
    scaled(v, mult).map(Size).ok_or_else(bad)
}

pub fn parse_probability(s: &str) -> Result<Probability, String> {
    let bad = || format!("invalid probability {s:?}: expected {PROBABILITY_FORMS}");
    let (v, unit) = split_number(s).ok_or_else(bad)?;
    let p = match unit {
        "%" => v / 100.0,
        "" => {
            return Err(format!(
                "invalid probability {s:?}: text needs the unit %, as in \"{v}%\"; \
                 a fraction is a bare number without quotes ({v})"
            ))
        }
        _ => return Err(bad()),
    };
    probability(p, s)
}

/// A fraction given as a bare number (`0.005` is 0.5 %).
fn probability_from_number(v: f64) -> Result<Probability, String> {
    probability(v, &v.to_string())
}

fn probability(p: f64, s: &str) -> Result<Probability, String> {
    if (0.0..=1.0).contains(&p) {
        Ok(Probability(p))
    } else {
        Err(format!(
            "invalid probability {s:?}: must be between 0 and 1 (0% and 100%)"
        ))
    }
}

/// Accepts a string, or a bare number where the unit allows it.
struct UnitVisitor<T> {
    parse: fn(&str) -> Result<T, String>,
    forms: &'static str,
    /// how a bare number is interpreted (None: bare numbers are refused)
    from_number: Option<fn(f64) -> Result<T, String>>,
}

impl<T> de::Visitor<'_> for UnitVisitor<T> {
    type Value = T;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.forms)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
        (self.parse)(v).map_err(E::custom)
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<T, E> {
        match self.from_number {
            Some(f) => f(v).map_err(E::custom),
            None => Err(E::custom(format!(
                "invalid value {v}: a unit is required; expected {}",
                self.forms
            ))),
        }
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<T, E> {
        self.visit_f64(v as f64)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<T, E> {
        self.visit_f64(v as f64)
    }
}

/// How a unit value is written back: in a form its parser accepts again.
enum Written {
    Text(String),
    Number(f64),
}

macro_rules! unit_serde {
    ($ty:ident, $parse:ident, $forms:ident, $from_number:expr, $display:expr, $pattern:expr, $number_schema:expr) => {
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                d.deserialize_any(UnitVisitor { parse: $parse, forms: $forms, from_number: $from_number })
            }
        }
        impl Serialize for $ty {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let f: fn(&$ty) -> Written = $display;
                match f(self) {
                    Written::Text(t) => s.serialize_str(&t),
                    Written::Number(x) => s.serialize_f64(x),
                }
            }
        }
        impl JsonSchema for $ty {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($ty).into()
            }
            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                match $number_schema {
                    Some(n) => schemars::json_schema!({
                        "description": $forms,
                        "anyOf": [{"type": "string", "pattern": $pattern}, n]
                    }),
                    None => schemars::json_schema!({
                        "description": $forms,
                        "type": "string",
                        "pattern": $pattern
                    }),
                }
            }
        }
        impl std::str::FromStr for $ty {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, String> {
                $parse(s)
            }
        }
    };
}

unit_serde!(
    Rate,
    parse_rate,
    RATE_FORMS,
    None,
    |r| Written::Text(format!("{}bps", r.0)),
    r"^\s*[0-9.]+\s*([kKMGmg]?bps|[kKMG]?bit/s|b/s)\s*$",
    None::<serde_json::Value>
);
unit_serde!(
    Duration,
    parse_duration,
    DURATION_FORMS,
    Some(|v| if v == 0.0 {
        Ok(Duration(0))
    } else {
        Err(format!(
            "invalid duration {v}: a unit is required; expected {DURATION_FORMS}"
        ))
    }),
    |d| Written::Text(format!("{}ns", d.0)),
    r"^\s*([0-9.]+\s*(ns|us|µs|ms|s|min)|0)\s*$",
    Some(serde_json::json!({"const": 0}))
);
unit_serde!(
    Size,
    parse_size,
    SIZE_FORMS,
    Some(|v| if v >= 0.0 && v.fract() == 0.0 {
        Ok(Size(v as u64))
    } else {
        Err(format!("invalid size {v}: expected {SIZE_FORMS}"))
    }),
    |s| Written::Text(format!("{}B", s.0)),
    r"^\s*[0-9.]+\s*(B|KB|kB|MB|GB|KiB|MiB|GiB)?\s*$",
    Some(serde_json::json!({"type": "integer", "minimum": 0}))
);
unit_serde!(
    Probability,
    parse_probability,
    PROBABILITY_FORMS,
    Some(probability_from_number),
    |p| Written::Number(p.0),
    r"^\s*[0-9.]+\s*%\s*$",
    Some(serde_json::json!({"type": "number", "minimum": 0, "maximum": 1}))
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_documented_forms() {
        assert_eq!(parse_rate("8Mbps").unwrap(), Rate(8_000_000));
        assert_eq!(parse_rate("8 Mbit/s").unwrap(), Rate(8_000_000));
        assert_eq!(parse_rate("1.5Gbps").unwrap(), Rate(1_500_000_000));
        assert_eq!(parse_duration("100ms").unwrap(), Duration(100_000_000));
        assert_eq!(parse_duration("1.5s").unwrap(), Duration(1_500_000_000));
        assert_eq!(parse_duration("2min").unwrap(), Duration(120_000_000_000));
        assert_eq!(parse_size("30KB").unwrap(), Size(30_000));
        assert_eq!(parse_size("64KiB").unwrap(), Size(65_536));
        assert_eq!(parse_size("1448").unwrap(), Size(1448));
        assert_eq!(parse_probability("1%").unwrap(), Probability(0.01));
        assert_eq!(parse_probability("0.5%").unwrap(), Probability(0.005));
        assert_eq!(probability_from_number(0.25).unwrap(), Probability(0.25));
    }

    #[test]
    fn rejects_bad_values_with_the_accepted_forms() {
        for (bad, needle) in [
            ("-8Mbps", "expected"),
            ("8", "unit is required"),
            ("0Mbps", "greater than zero"),
            ("8 furlongs", "expected"),
            ("8MBps", "expected"),
            ("nan", "expected"),
            ("1e3bps", "expected"),
        ] {
            let e = parse_rate(bad).unwrap_err();
            assert!(e.contains(needle), "{bad}: {e}");
        }
        assert!(parse_duration("10")
            .unwrap_err()
            .contains("unit is required"));
        assert!(parse_duration("10 hours").is_err());
        assert!(parse_size("1.2.3KB").is_err());
        assert!(parse_probability("150%")
            .unwrap_err()
            .contains("between 0 and 1"));
        assert!(parse_probability("2").is_err());
        assert!(probability_from_number(2.0).is_err());
        // text without its unit: 0.5 % or 50 %? refused, with both spellings that are clear
        let e = parse_probability("0.5").unwrap_err();
        assert!(e.contains("\"0.5%\"") && e.contains("bare number"), "{e}");
    }

    #[test]
    fn a_probability_written_back_parses_to_the_same_value() {
        for p in [0.0, 0.005, 0.01, 1.0 / 3.0, 1.0] {
            let text = serde_json::to_string(&Probability(p)).unwrap();
            let back: Probability = serde_json::from_str(&text).unwrap();
            assert_eq!(back, Probability(p), "{text}");
        }
    }
}
