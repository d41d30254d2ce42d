//! The real Claude Code 2.1.197 resumes sessions written event by event: the live tier (every
//! corpus entry the target carries, docs/live.md) run on the Claude plugin with `create` replaced
//! by its `create_streamed` over the held transcript.

use handoff_claude::{ClaudePlugin, CLAUDE_CODE};
use handoff_live::harness::{judge_live, CreateStreamed};
use handoff_live::{run_live_target, LiveOptions};

#[test]
fn claude_code_resumes_what_create_streamed_wrote() {
    judge_live(&run_live_target(
        &CreateStreamed(&ClaudePlugin),
        CLAUDE_CODE,
        &LiveOptions::default(),
    ));
}
