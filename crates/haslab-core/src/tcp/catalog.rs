//! A self-description of the transport options for `haslab cc list`: every congestion-control
//! algorithm with its source and parameters, and every `[flow.tcp]` option, each with its
//! default and description. Everything is read from the config types themselves (serde
//! defaults and the JSON Schema of their doc comments), so a new option appears without edits
//! here.

use super::cc::CcConfig;
use super::config::TcpConfig;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{json, Value};

/// One option or parameter of a config struct.
#[derive(Clone, Debug, Serialize)]
pub struct FieldInfo {
    pub name: String,
    /// The default, as it would be written in a scenario (JSON; null when absent by default).
    pub default: Value,
    /// What is accepted: the enum's values, or the value type.
    pub accepts: String,
    /// The field's doc comment.
    pub description: String,
}

/// The fields of config struct `T` (`#[serde(default)]`, with a JSON Schema), in schema order.
pub fn fields<T: JsonSchema + Serialize + Default>() -> Vec<FieldInfo> {
    let schema = serde_json::to_value(schemars::schema_for!(T)).expect("a schema serialises");
    let defaults = serde_json::to_value(T::default()).expect("a default config serialises");
    let defs = schema.get("$defs").cloned().unwrap_or(Value::Null);
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    props
        .iter()
        .map(|(name, p)| FieldInfo {
            name: name.clone(),
            default: defaults.get(name).cloned().unwrap_or(Value::Null),
            accepts: accepts(p, &defs),
            description: p
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or("")
                .replace('\n', " "),
        })
        .collect()
}

/// A short description of the values a property accepts.
fn accepts(p: &Value, defs: &Value) -> String {
    if let Some(r) = p.get("$ref").and_then(Value::as_str) {
        let name = r.rsplit('/').next().unwrap_or(r);
        let def = &defs[name];
        let consts: Vec<String> = def
            .get("oneOf")
            .or_else(|| def.get("anyOf"))
            .and_then(Value::as_array)
            .map(|alts| {
                alts.iter()
                    .filter_map(|a| {
                        a.get("const")
                            .or_else(|| a.get("enum").and_then(|e| e.get(0)))
                    })
                    .filter_map(Value::as_str)
                    .map(|s| format!("\"{s}\""))
                    .collect()
            })
            .unwrap_or_default();
        if let Some(e) = def.get("enum").and_then(Value::as_array) {
            return e
                .iter()
                .filter_map(Value::as_str)
                .map(|s| format!("\"{s}\""))
                .collect::<Vec<_>>()
                .join(" | ");
        }
        return if consts.is_empty() {
            name.to_lowercase()
        } else {
            consts.join(" | ")
        };
    }
    if let Some(alts) = p.get("anyOf").and_then(Value::as_array) {
        let parts: Vec<String> = alts
            .iter()
            .filter(|a| a.get("type") != Some(&json!("null")))
            .map(|a| accepts(a, defs))
            .collect();
        return format!("{} (optional)", parts.join(" | "));
    }
    match p.get("type") {
        Some(Value::String(t)) => match t.as_str() {
            "integer" => "integer".into(),
            "number" => "number".into(),
            "boolean" => "true | false".into(),
            other => other.into(),
        },
        Some(Value::Array(ts)) => {
            let main: Vec<&str> = ts
                .iter()
                .filter_map(Value::as_str)
                .filter(|t| *t != "null")
                .collect();
            format!("{} (optional)", main.join(" | "))
        }
        _ => "value".into(),
    }
}

/// `{ "algorithms": [...], "tcp_options": [...], "transports": [...], "players": [...] }`:
/// what `haslab cc list` prints (transports: [`super::transport::TRANSPORTS`]) and the player
/// algorithms `haslab abr` prints ([`crate::has::players::AbrConfig::catalog_json`]).
pub fn catalog_json() -> Value {
    json!({
        "algorithms": CcConfig::catalog(),
        "tcp_options": fields::<TcpConfig>(),
        "transports": super::transport::catalog(),
        "players": crate::has::players::AbrConfig::catalog_json(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tcp_option_is_listed_with_its_default() {
        let opts = fields::<TcpConfig>();
        let defaults = serde_json::to_value(TcpConfig::default()).unwrap();
        let names: Vec<&str> = opts.iter().map(|o| o.name.as_str()).collect();
        for key in defaults.as_object().unwrap().keys() {
            assert!(names.contains(&key.as_str()), "{key} missing");
        }
        let mss = opts.iter().find(|o| o.name == "mss").unwrap();
        assert_eq!(mss.default, json!(1448));
        assert!(!mss.description.is_empty());
        let recovery = opts.iter().find(|o| o.name == "recovery").unwrap();
        assert!(recovery.accepts.contains("\"prr\""), "{}", recovery.accepts);
    }

    #[test]
    fn the_catalog_lists_every_algorithm_and_its_parameters() {
        let c = catalog_json();
        let algs = c["algorithms"].as_array().unwrap();
        assert_eq!(algs.len(), CcConfig::NAMES.len());
        let cubic = algs.iter().find(|a| a["name"] == "cubic").unwrap();
        let params = cubic["parameters"].as_array().unwrap();
        let beta = params.iter().find(|p| p["name"] == "beta").unwrap();
        assert_eq!(beta["default"], json!(717.0 / 1024.0));
        let ww = algs.iter().find(|a| a["name"] == "westwood+").unwrap();
        let est = ww["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == "estimator")
            .unwrap();
        assert_eq!(est["accepts"], "\"linux\" | \"ns3\"");
    }
}
