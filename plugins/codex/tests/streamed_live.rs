//! The real Codex 0.171.0 resumes sessions written event by event: the live tier (every corpus
//! entry the target carries, docs/live.md) run on the Codex plugin with `create` replaced by its
//! `create_streamed` over the held transcript.

use handoff_codex::{CodexPlugin, TARGET};
use handoff_live::harness::{judge_live, CreateStreamed};
use handoff_live::{run_live_target, LiveOptions};

#[test]
fn codex_resumes_what_create_streamed_wrote() {
    judge_live(&run_live_target(
        &CreateStreamed(&CodexPlugin),
        TARGET,
        &LiveOptions::default(),
    ));
}
