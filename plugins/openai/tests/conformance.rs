//! The conformance suite on the OpenAI plugin: every offline check passes on both targets.

use handoff_conformance::{run, Options};
use handoff_openai::OpenaiPlugin;

#[test]
fn every_offline_check_passes_on_both_targets() {
    let report = run(&OpenaiPlugin, &Options::default());
    for target in ["openai-chat", "openai-responses"] {
        let ran = report
            .checks
            .iter()
            .filter(|c| c.id.ends_with(&format!("/{target}")))
            .count();
        assert_eq!(
            ran,
            handoff_conformance::TARGET_CHECKS.len(),
            "not every check ran on {target}:\n{}",
            report.table()
        );
    }
    let failures: Vec<String> = report
        .failures()
        .map(|c| format!("{}: {}", c.id, c.evidence.join("\n  ")))
        .collect();
    assert!(
        failures.is_empty(),
        "{}\n{}",
        report.table(),
        failures.join("\n")
    );
}
