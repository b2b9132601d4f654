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
        assert_eq!(est["accepts"], "\"linux\" | \"ns3\"");
    }
}
