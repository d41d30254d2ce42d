//! The synthetic session both benchmarks use: `handoff_live::bench::tool_session` (5,000 turns,
//! about 18 MB as a rollout), each turn calling Codex's shell tool.

use handoff_live::bench::{tool_session, BenchCall};
use handoff_sdk::serde_json::json;
use handoff_sdk::{Origin, Transcript};

/// Builds the transcript.
pub fn transcript() -> Transcript {
    let origin = Origin::new("openai", "gpt-5", "openai-responses");
    let call = BenchCall {
        id_prefix: "call_",
        name: "exec_command",
        arguments: json!({"cmd": "ls -la src", "workdir": "/home/dev/proj", "timeout_ms": 10000}),
    };
    tool_session(origin, &call)
}
