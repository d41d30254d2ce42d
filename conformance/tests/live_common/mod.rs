//! Shared by the live tests: judge a list of live check results.

use handoff_conformance::live::skips_are_failures;
use handoff_conformance::{CheckResult, Status};

/// Prints every result; panics on any failure, and on any skip when `HANDOFF_LIVE_REQUIRED=1`.
pub fn judge(results: &[CheckResult]) {
    assert!(!results.is_empty(), "no live check ran");
    for r in results {
        eprintln!("{:?} {} ({:.0} ms)", r.status, r.id, r.duration_ms);
        for line in &r.evidence {
            eprintln!("    {line}");
        }
    }
    let failed: Vec<_> = results
        .iter()
        .filter(|r| r.status == Status::Fail)
        .collect();
    let skipped: Vec<_> = results
        .iter()
        .filter(|r| r.status == Status::Skip)
        .collect();
    if !failed.is_empty() {
        let lines: Vec<String> = failed
            .iter()
            .map(|r| format!("{}:\n    {}", r.id, r.evidence.join("\n    ")))
            .collect();
        panic!(
            "{} live check(s) failed:\n{}",
            failed.len(),
            lines.join("\n")
        );
    }
    if !skipped.is_empty() {
        let reason = skipped[0].evidence.join("; ");
        if skips_are_failures() {
            panic!(
                "HANDOFF_LIVE_REQUIRED=1 and {} live check(s) skipped: {reason}",
                skipped.len()
            );
        }
        eprintln!("SKIP {} live check(s): {reason}", skipped.len());
    }
}

/// True (after saying why) when the CLI is absent and that is allowed: the caller returns early.
/// Under `HANDOFF_LIVE_REQUIRED=1` an absent CLI panics instead.
#[allow(dead_code)] // not every live test file uses it
pub fn cli_absent(results: &[CheckResult]) -> bool {
    let Some(skip) = results.iter().find(|r| r.status == Status::Skip) else {
        return false;
    };
    let reason = skip.evidence.join("; ");
    assert!(
        !skips_are_failures(),
        "HANDOFF_LIVE_REQUIRED=1 and the CLI is absent: {reason}"
    );
    eprintln!("SKIP: {reason}");
    true
}
