//! The real Gemini CLI 0.61.0 resumes chats written turn by turn: the live tier (every corpus
//! entry the target carries, docs/live.md) run on the gemini plugin with `create` replaced by
//! its `create_streamed` over the held transcript.

use handoff_gemini::GeminiPlugin;
use handoff_live::harness::{judge_live, CreateStreamed};
use handoff_live::{run_live_target, LiveOptions};

#[test]
fn gemini_cli_resumes_what_create_streamed_wrote() {
    judge_live(&run_live_target(
        &CreateStreamed(&GeminiPlugin),
        "gemini-cli",
        &LiveOptions::default(),
    ));
}
