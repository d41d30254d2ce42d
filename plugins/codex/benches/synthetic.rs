//! The synthetic session both benchmarks use: 5,000 turns of user → assistant text + call →
//! ~1.3 KB tool output → assistant text (about 18 MB as a rollout).

use handoff_sdk::{AssistantPart, Body, Event, Origin, Part, Timestamp, ToolCall, Transcript};
use serde_json::json;

/// The number of turns.
pub const TURNS: usize = 5_000;

/// Builds the transcript.
pub fn transcript() -> Transcript {
    let output: String =
        "drwxr-xr-x  2 dev dev 4096 Nov 30 00:41 src/main.rs and some more text\n".repeat(18);
    let origin = Some(Origin {
        provider: "openai".into(),
        model: Some("gpt-5".into()),
        api: Some("openai-responses".into()),
    });
    let mut events = Vec::with_capacity(TURNS * 4);
    let mut ms = 1_795_999_300_000i64;
    let mut next = || {
        ms += 7;
        Timestamp::from_millis(ms)
    };
    for turn in 0..TURNS {
        events.push(Event::new(
            format!("u{turn}"),
            next(),
            Body::User {
                content: vec![Part::text(format!(
                    "Turn {turn}: please list the files in the project and tell me what changed since the last turn."
                ))],
            },
        ));
        events.push(Event::new(
            format!("a{turn}"),
            next(),
            Body::Assistant {
                content: vec![
                    AssistantPart::text("I will list the files in the project directory first, then compare."),
                    AssistantPart::ToolCall(ToolCall::new(format!("call_{turn:06}"), "exec_command", json!({"cmd": "ls -la src", "workdir": "/home/dev/proj", "timeout_ms": 10000}))),
                ],
                origin: origin.clone(),
            },
        ));
        events.push(Event::new(
            format!("r{turn}"),
            next(),
            Body::ToolResult {
                call_id: format!("call_{turn:06}"),
                content: vec![Part::text(output.clone())],
                is_error: false,
            },
        ));
        events.push(Event::new(
            format!("b{turn}"),
            next(),
            Body::Assistant {
                content: vec![AssistantPart::text(
                    "The project has one source directory with the main file; nothing changed since the last turn, \
                     so the build should still pass. Let me know what you would like to do next.",
                )],
                origin: origin.clone(),
            },
        ));
    }
    let mut t = Transcript::new(events);
    t.cwd = Some("/home/dev/proj".into());
    t
}

/// The serde_json floor: parse every line into a `Value` and serialise it again.
#[allow(dead_code)] // used by the criterion bench, not by the memory bench
pub fn serde_floor(bytes: &[u8]) -> usize {
    let mut out = Vec::with_capacity(bytes.len());
    for line in bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
        let value: serde_json::Value = serde_json::from_slice(line).expect("valid line");
        serde_json::to_writer(&mut out, &value).expect("serialises");
        out.push(b'\n');
    }
    out.len()
}
