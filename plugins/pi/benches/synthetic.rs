//! The synthetic session both benchmarks use: 5,000 turns of user → assistant (signed thinking,
//! text, a tool call) → ~1.3 KB tool output → assistant text, as a Claude Code session read by
//! handoff would hand it over (about 19 MB as a pi session).

use handoff_sdk::{
    AssistantPart, Body, Event, Origin, Part, Signature, Thinking, Timestamp, ToolCall, Transcript,
};
use serde_json::json;

/// The number of turns.
pub const TURNS: usize = 5_000;

/// Builds the transcript.
pub fn transcript() -> Transcript {
    let output: String =
        "drwxr-xr-x  2 dev dev 4096 Nov 30 00:41 src/main.rs and some more text\n".repeat(18);
    let origin = Some(Origin {
        provider: "anthropic".into(),
        model: Some("claude-sonnet-4-5".into()),
        api: Some("anthropic-messages".into()),
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
                    AssistantPart::Thinking(Thinking {
                        text: "The user wants the listing; run ls in src and compare with the last one.".into(),
                        signature: Some(Signature {
                            provider: "anthropic".into(),
                            model: None,
                            value: format!("EqQBCkgIBxABGAIiQ{turn:08}FakeSignatureForTheBenchmark=="),
                            redacted: false,
                        }),
                    }),
                    AssistantPart::text("I will list the files in the project directory first, then compare."),
                    AssistantPart::ToolCall(ToolCall::new(format!("toolu_{turn:06}"), "Bash", json!({"command": "ls -la src", "description": "List the sources", "timeout": 10000}))),
                ],
                origin: origin.clone(),
            },
        ));
        events.push(Event::new(
            format!("r{turn}"),
            next(),
            Body::ToolResult {
                call_id: format!("toolu_{turn:06}"),
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
