//! Shared by the live tests: whether a CLI is absent (and allowed to be).

use handoff_conformance::{CheckResult, Status};
use handoff_live::skips_are_failures;

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
