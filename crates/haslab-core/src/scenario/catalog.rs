//! A self-description of the transport and player options for `haslab cc list` and
//! `haslab abr`: every congestion-control algorithm with its source and parameters, every
//! `[flow.tcp]` option, every named transport and every player algorithm, each with its
//! default and description. Everything is read from the config types themselves (serde
//! defaults and the JSON Schema of their doc comments, through [`crate::sim::fields`]), so a
//! new option appears without edits here.

use crate::sim::fields::fields;
use crate::tcp::cc::CcConfig;
use crate::tcp::config::TcpConfig;
use serde_json::{json, Value};

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
        assert_eq!(est["accepts"], "\"linux\" | \"ns3\" | \"ns3.17\"");
    }

    /// The `algorithm` constants of the schema's tables for family `def` ("CcConfig").
    fn schema_names(def: &str) -> Vec<String> {
        let schema: Value = serde_json::from_str(&crate::scenario::json_schema()).unwrap();
        schema["$defs"][def]["oneOf"]
            .as_array()
            .unwrap_or_else(|| panic!("{def} has no oneOf"))
            .iter()
            .map(|t| {
                t["properties"]["algorithm"]["const"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect()
    }

    /// Every registered algorithm, under its name and each alias, is found, listed in the
    /// catalog and the schema, and its default config goes through the scenario's table form
    /// (serialise, parse back) unchanged.
    fn check_family<R>(names: &[&str], catalog: &[(String, Vec<String>)], schema: &[String])
    where
        R: crate::sim::registry::Registry
            + serde::Serialize
            + serde::de::DeserializeOwned
            + PartialEq
            + std::fmt::Debug,
    {
        assert!(!names.is_empty());
        let listed: Vec<&str> = catalog.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            listed, names,
            "the catalog lists every algorithm in registry order"
        );
        assert_eq!(schema, names, "the schema has one table per algorithm");
        for (name, aliases) in catalog {
            let cfg = R::by_name(name).unwrap_or_else(|| panic!("{name} is not found"));
            assert_eq!(cfg.canonical(), name);
            for a in aliases {
                assert_eq!(
                    R::by_name(a).map(|c| c.canonical()),
                    Some(name.as_str()),
                    "{a}"
                );
            }
            let table = serde_json::to_value(&cfg).unwrap();
            assert_eq!(
                table["algorithm"],
                json!(name),
                "the table names its algorithm first"
            );
            let back: R = serde_json::from_value(table).unwrap();
            assert_eq!(
                back, cfg,
                "{name}: the default table parses back to the same config"
            );
        }
    }

    #[test]
    fn every_registered_algorithm_is_listed_found_and_in_the_schema() {
        let cc: Vec<(String, Vec<String>)> = CcConfig::catalog()
            .iter()
            .map(|a| {
                (
                    a.name.to_string(),
                    a.aliases.iter().map(|s| s.to_string()).collect(),
                )
            })
            .collect();
        check_family::<CcConfig>(CcConfig::NAMES, &cc, &schema_names("CcConfig"));
        let listed = catalog_json();
        let abr: Vec<(String, Vec<String>)> = listed["players"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                let aliases = p["aliases"].as_array().unwrap();
                (
                    p["name"].as_str().unwrap().to_string(),
                    aliases
                        .iter()
                        .map(|a| a.as_str().unwrap().to_string())
                        .collect(),
                )
            })
            .collect();
        use crate::has::players::AbrConfig;
        check_family::<AbrConfig>(AbrConfig::NAMES, &abr, &schema_names("AbrConfig"));
        assert_eq!(
            listed["algorithms"].as_array().unwrap().len(),
            CcConfig::NAMES.len()
        );
    }

    #[test]
    fn an_unknown_algorithm_or_a_bad_parameter_is_named_in_the_error() {
        let e = serde_json::from_value::<CcConfig>(json!({"algorithm": "vegas"})).unwrap_err();
        assert!(
            e.to_string()
                .contains("unknown congestion control \"vegas\""),
            "{e}"
        );
        assert!(e.to_string().contains("\"cubic\""), "{e}");
        let e = serde_json::from_value::<CcConfig>(json!({"algorithm": "cubic", "beta": "x"}))
            .unwrap_err();
        assert!(e.to_string().contains("parameter `beta`"), "{e}");
        let e = CcConfig::with_params("vegas", json!({})).unwrap_err();
        assert!(e.to_string().contains("unknown congestion control"), "{e}");
    }
}
