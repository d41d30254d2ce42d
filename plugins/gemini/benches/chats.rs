//! Write + read of a synthetic 5,000-turn Gemini CLI session against the serde_json floor (parse
//! every line of the same file into a `Value` and serialise it again), measured in the same run
//! (`handoff_live::bench::store_group`): `cargo bench -p handoff-gemini --bench chats`.
//!
//! A turn: user text → assistant text + call → ~1.3 KB tool output → assistant text
//! (`handoff_live::bench::tool_session`, as the codex and pi benches, so they compare).

use criterion::{criterion_group, criterion_main, Criterion};
use handoff_live::bench::{tool_session, BenchCall};
use handoff_sdk::serde_json::json;
use handoff_sdk::{CreateOptions, Origin};

/// Each turn calls Gemini CLI's shell tool.
fn bench(c: &mut Criterion) {
    let call = BenchCall {
        id_prefix: "call_",
        name: "run_shell_command",
        arguments: json!({"command": "ls -la src", "dir_path": "/home/dev/proj", "timeout_ms": 10000}),
    };
    let transcript = tool_session(Origin::new("google", "gemini-2.5-flash", "gemini"), &call);
    let options = CreateOptions {
        cwd: Some("/home/dev/proj".into()),
        locator: None,
    };
    let plugin = &handoff_gemini::GeminiPlugin;
    handoff_live::bench::store_group(c, plugin, "gemini-cli", &transcript, &options);
}

criterion_group!(benches, bench);
criterion_main!(benches);
