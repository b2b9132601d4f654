//! What a config struct accepts, read from the struct itself: each field's name, default,
//! accepted values and doc comment, from its serde default and its JSON Schema (`schemars`).
//! The catalogs (`haslab cc list`, `haslab abr`) and the algorithms' parameter lists use it,
//! so a new option or parameter describes itself.

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
