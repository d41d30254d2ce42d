//! Live tier for the codex target: real Codex (pinned, see scripts/cli-versions.env) resumes
//! every corpus transcript the codex plugin wrote, against the loopback fake provider.
//! Skips when Codex is not installed (`scripts/install-clis.sh`), fails instead under
//! `HANDOFF_LIVE_REQUIRED=1`.

mod live_common;

use handoff_codex::CodexPlugin;
use handoff_conformance::live::{run_live_target, LiveOptions};

#[test]
fn codex_resumes_what_the_codex_plugin_wrote() {
    let results = run_live_target(&CodexPlugin, "codex", &LiveOptions::default());
    live_common::judge(&results);
}
