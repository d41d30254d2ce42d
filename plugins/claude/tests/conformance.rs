//! The conformance suite on the Claude plugin: every offline check passes on both targets.

use handoff_claude::{ClaudePlugin, CLAUDE_CODE, MESSAGES};
use handoff_conformance::{run, Options};

#[test]
fn every_offline_check_passes_on_both_targets() {
    let report = run(&ClaudePlugin, &Options::default());
    for target in [CLAUDE_CODE, MESSAGES] {
        assert!(
            report
                .checks
                .iter()
                .any(|c| c.id.ends_with(&format!("/{target}"))),
            "no check ran on {target}:\n{}",
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
