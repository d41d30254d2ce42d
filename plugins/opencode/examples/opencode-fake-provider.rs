//! The fake provider as a process, answering a user turn with two parallel `bash` calls and the
//! turn after them with "ok": how the genuine OpenCode sessions of `tests/samples/` were
//! recorded (docs/formats/opencode.md, "Genuine sessions"). Prints its base URL, appends every
//! request to the log file as one JSON line, and serves until killed.
//!
//! `cargo run -p handoff-opencode --example opencode-fake-provider -- <log file>`

use handoff_live::fake_provider::{FakeProvider, FakeProviderOptions};
use serde_json::json;

fn main() {
    let log = std::env::args_os()
        .nth(1)
        .expect("usage: opencode-fake-provider <log file>");
    let fake = FakeProvider::start_with(FakeProviderOptions {
        log_file: Some(log.into()),
        tool_calls: vec![
            (
                "bash".into(),
                json!({"command": "echo one", "description": "Print one"}),
            ),
            (
                "bash".into(),
                json!({"command": "ls /nonexistent-dir", "description": "List a missing folder"}),
            ),
        ],
        ..FakeProviderOptions::default()
    })
    .expect("the fake provider starts");
    println!("{}", fake.base_url());
    loop {
        std::thread::park();
    }
}
