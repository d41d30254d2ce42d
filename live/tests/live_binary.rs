//! `conformance run PLUGIN.so --live`: the live tier through the binary, each check in its own
//! process, on the Codex plugin built as a shared library.

mod support;

use std::process::Command;

use handoff_live::{cli::find_cli, skips_are_failures};

#[test]
fn conformance_run_live_resumes_with_the_real_cli() {
    if let Err(why) = find_cli("codex", "@openai/codex", None) {
        assert!(!skips_are_failures(), "HANDOFF_LIVE_REQUIRED=1 but {why}");
        eprintln!("SKIP: {why}");
        return;
    }
    let plugin = support::plugin("handoff-plugin-codex");
    let scratch = tempfile::tempdir().unwrap();
    let report = scratch.path().join("report.json");
    let out = Command::new(env!("CARGO_BIN_EXE_conformance"))
        .arg("run")
        .arg(&plugin)
        .args([
            "--live",
            "--check",
            "live/codex/parallel-tool-calls",
            "--check",
            "live/codex/missing-id",
        ])
        .arg("--cert-dir")
        .arg(scratch.path().join("certificates"))
        .arg("--json")
        .arg(&report)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let checks: Vec<(&str, &str)> = json["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["id"].as_str().unwrap(), c["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        checks,
        vec![
            ("probe", "pass"),
            ("load", "pass"),
            ("live/codex/parallel-tool-calls", "pass"),
            ("live/codex/missing-id", "pass"),
        ],
        "{stderr}"
    );
    // A partial run certifies nothing.
    assert!(json["certificate"].is_null());
}
