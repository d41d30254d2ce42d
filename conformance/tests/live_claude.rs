//! Live tier for the claude-code target: real Claude Code (pinned, see scripts/cli-versions.env)
//! resumes every corpus transcript the claude plugin wrote, against the loopback fake provider.
//! Skips when Claude Code is not installed (`scripts/install-clis.sh`), fails instead under
//! `HANDOFF_LIVE_REQUIRED=1`.

mod live_common;

use handoff_conformance::live::{run_live_target, LiveOptions};
use handoff_plugin_claude::ClaudePlugin;

#[test]
fn claude_code_resumes_what_the_claude_plugin_wrote() {
    let results = run_live_target(&ClaudePlugin, "claude-code", &LiveOptions::default());
    live_common::judge(&results);
}
