//! The writer beyond the conformance corpus: a user image, thinking and a failed call resumed by
//! the real Copilot CLI 1.0.102 (the live tier's check), and what it refuses, naming the event.

use handoff_conformance::corpus::Entry;
use handoff_copilot::{CopilotPlugin, TARGET};
use handoff_live::harness::judge_live;
use handoff_live::{run_live, LiveOptions};
use handoff_sdk::{CreateOptions, Plugin, StoreRoot, Transcript};

/// A 1×1 PNG.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

fn transcript(events: serde_json::Value) -> Transcript {
    Transcript::from_json(
        &serde_json::json!({"schema": "handoff.transcript/1", "events": events}).to_string(),
    )
    .unwrap()
}

fn user(id: &str, content: serde_json::Value) -> serde_json::Value {
    serde_json::json!({"id": id, "timestamp": "2026-12-02T06:30:00.000Z",
        "body": {"type": "user", "content": content}})
}

fn assistant(id: &str, content: serde_json::Value) -> serde_json::Value {
    serde_json::json!({"id": id, "timestamp": "2026-12-02T06:30:01.000Z",
        "body": {"type": "assistant", "content": content}})
}

fn result(id: &str, call: &str, text: &str, is_error: bool) -> serde_json::Value {
    serde_json::json!({"id": id, "timestamp": "2026-12-02T06:30:02.000Z",
        "body": {"type": "tool_result", "call_id": call,
            "content": [{"type": "text", "text": text}], "is_error": is_error}})
}

fn call(id: &str) -> serde_json::Value {
    serde_json::json!({"type": "tool_call", "id": id, "name": "bash",
        "arguments": {"command": "ls", "description": "list"}})
}

#[test]
fn an_image_thinking_and_a_failed_call_are_resumed_by_copilot_cli() {
    let t = transcript(serde_json::json!([
        user(
            "u1",
            serde_json::json!([{"type": "text", "text": "What is this?"},
            {"type": "image", "media_type": "image/png", "data": PNG}])
        ),
        assistant(
            "a1",
            serde_json::json!([{"type": "thinking", "text": "A tiny picture."},
            {"type": "text", "text": "Let me look."}, call("c1"), call("c2")])
        ),
        result("r1", "c1", "a.txt", false),
        result("r2", "c2", "permission denied", true),
        assistant(
            "a2",
            serde_json::json!([{"type": "text", "text": "One pixel."}])
        ),
    ]));
    let entry = Entry {
        name: "image-thinking-failed-call",
        transcript: t,
    };
    let results = run_live(&CopilotPlugin, TARGET, &[entry], &LiveOptions::default());
    judge_live(&results);
}

#[test]
fn what_copilot_cli_would_send_otherwise_is_refused_naming_the_event() {
    let root_dir = tempfile::tempdir().unwrap();
    let root = StoreRoot::new(root_dir.path()).unwrap();
    let refused = |t: &Transcript| {
        CopilotPlugin
            .writer()
            .create(&root, TARGET, t, &CreateOptions::default())
            .unwrap_err()
            .to_string()
    };
    let two_texts = transcript(serde_json::json!([user(
        "u1",
        serde_json::json!([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}])
    )]));
    let e = refused(&two_texts);
    assert!(
        e.contains("event 0 (u1)") && e.contains("several texts"),
        "{e}"
    );
    let reversed = transcript(serde_json::json!([
        user("u1", serde_json::json!([{"type": "text", "text": "go"}])),
        assistant("a1", serde_json::json!([call("c1"), call("c2")])),
        result("r2", "c2", "two", false),
        result("r1", "c1", "one", false),
    ]));
    let e = refused(&reversed);
    assert!(
        e.contains("event 3 (r1)") && e.contains("order of the calls"),
        "{e}"
    );
    // Nothing was left behind by the refusals.
    let sessions = root_dir.path().join("session-state");
    assert!(!sessions.exists() || std::fs::read_dir(&sessions).unwrap().next().is_none());
}
