//! Every file in `tests/bad_scenarios/` is a scenario that must be rejected. Each starts with
//! one or more `# expect: <substring>` lines; every substring must appear in the error's
//! Display (which is "<path>: <message>"), so the expectations pin both the field path and the
//! wording. Scenarios that parse but fail validation are also checked through JSON: the same
//! scenario serialised to JSON must fail with the same error.

use haslab_core::scenario::{parse_toml, plan_from_json, plan_from_toml};
use std::path::PathBuf;

#[test]
fn every_bad_scenario_is_rejected_with_the_expected_error() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/bad_scenarios");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/bad_scenarios exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    assert!(files.len() >= 55, "only {} bad scenarios", files.len());

    let mut failures = Vec::new();
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(path).expect("readable file");
        let expects: Vec<&str> = text
            .lines()
            .take_while(|l| l.starts_with('#'))
            .filter_map(|l| l.strip_prefix("# expect:"))
            .map(str::trim)
            .collect();
        if expects.is_empty() {
            failures.push(format!("{name}: no `# expect:` line"));
            continue;
        }
        let err = match plan_from_toml(&text) {
            Ok(_) => {
                failures.push(format!("{name}: accepted"));
                continue;
            }
            Err(e) => e,
        };
        let shown = err.to_string();
        println!("{name}: {shown}");
        for want in &expects {
            if !shown.contains(want) {
                failures.push(format!("{name}: error {shown:?} lacks {want:?}"));
            }
        }
        if err.message.is_empty() {
            failures.push(format!("{name}: empty message"));
        }
        // Semantic errors must be the same when the scenario comes as JSON.
        if let Ok(scenario) = parse_toml(&text) {
            let json = serde_json::to_string(&scenario).expect("a parsed scenario serialises");
            match plan_from_json(&json) {
                Ok(_) => failures.push(format!("{name}: accepted as JSON {json}")),
                Err(e) if e != err => failures.push(format!(
                    "{name}: JSON error {e} differs from TOML error {err}"
                )),
                Err(_) => {}
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} bad scenarios failed:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}
