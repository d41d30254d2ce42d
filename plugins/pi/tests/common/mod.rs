//! Helpers of the store tests: transcripts, hand-written pi files, the session lines.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use handoff_pi::{PiPlugin, TARGET};
use handoff_sdk::serde_json::{self, json, Value};
use handoff_sdk::{
    AssistantPart, Body, CreateOptions, Event, Origin, Part, Plugin, SessionRef, Signature,
    StoreRoot, Thinking, Timestamp, ToolCall, Transcript,
};

pub const CWD: &str = "/home/dev/proj";
pub const T0: i64 = 1_795_999_300_000;

pub fn root() -> (tempfile::TempDir, StoreRoot) {
    let dir = tempfile::tempdir().unwrap();
    let root = StoreRoot::new(dir.path()).unwrap();
    (dir, root)
}

pub fn at(i: i64) -> Timestamp {
    Timestamp::from_millis(T0 + i * 1037)
}

pub fn user(id: &str, i: i64, text: &str) -> Event {
    Event::new(id, at(i), Body::user_text(text))
}

pub fn claude() -> Option<Origin> {
    Some(Origin::new(
        "anthropic",
        "claude-sonnet-4-5",
        "anthropic-messages",
    ))
}

pub fn gpt() -> Option<Origin> {
    Some(Origin::new("openai", "gpt-5", "openai-responses"))
}

pub fn assistant(id: &str, i: i64, content: Vec<AssistantPart>, origin: Option<Origin>) -> Event {
    Event::new(id, at(i), Body::Assistant { content, origin })
}

pub fn text(t: &str) -> AssistantPart {
    AssistantPart::text(t)
}

pub fn call(id: &str, name: &str, arguments: Value) -> AssistantPart {
    AssistantPart::ToolCall(ToolCall::new(id, name, arguments))
}

pub fn thinking(t: &str, provider: &str, value: &str) -> AssistantPart {
    AssistantPart::Thinking(Thinking {
        text: t.into(),
        signature: Some(Signature {
            provider: provider.into(),
            model: None,
            value: value.into(),
            redacted: false,
        }),
    })
}

pub fn result(id: &str, i: i64, call_id: &str, content: Vec<Part>, is_error: bool) -> Event {
    Event::new(
        id,
        at(i),
        Body::ToolResult {
            call_id: call_id.into(),
            content,
            is_error,
        },
    )
}

pub fn compaction(id: &str, i: i64, summary: &str, through: &str) -> Event {
    Event::new(
        id,
        at(i),
        Body::Compaction {
            summary: summary.into(),
            replaces_through: through.into(),
        },
    )
}

pub fn transcript(events: Vec<Event>) -> Transcript {
    let mut t = Transcript::new(events);
    t.cwd = Some(CWD.into());
    t
}

pub fn create(root: &StoreRoot, t: &Transcript) -> SessionRef {
    PiPlugin
        .writer()
        .create(root, TARGET, t, &CreateOptions::default())
        .unwrap_or_else(|e| panic!("create: {e}"))
}

/// The lines of a session file as JSON values.
pub fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Writes `lines` as a session file of `cwd`'s folder named for `id`.
pub fn write_session(root: &StoreRoot, id: &str, lines: &[Value]) -> PathBuf {
    let dir = root.path().join("sessions").join("--home-dev-proj--");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("2026-11-30T00-00-00-000Z_{id}.jsonl"));
    let mut text = String::new();
    for l in lines {
        text.push_str(&l.to_string());
        text.push('\n');
    }
    std::fs::write(&path, text).unwrap();
    path
}

pub fn header(id: &str) -> Value {
    json!({"type": "session", "version": 3, "id": id, "timestamp": "2026-11-30T00:00:00.000Z", "cwd": CWD})
}

pub fn ts(n: u32) -> String {
    format!("2026-11-30T00:00:{:02}.000Z", n % 60)
}

pub fn user_entry(id: &str, parent: Option<&str>, n: u32, text: &str) -> Value {
    json!({"type": "message", "id": id, "parentId": parent, "timestamp": ts(n),
           "message": {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": T0 + i64::from(n) * 1000}})
}

pub fn assistant_entry(
    id: &str,
    parent: Option<&str>,
    n: u32,
    content: Value,
    stop: &str,
) -> Value {
    json!({"type": "message", "id": id, "parentId": parent, "timestamp": ts(n),
           "message": {"role": "assistant", "content": content, "api": "openai-completions",
                       "provider": "fake", "model": "fake-model",
                       "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
                                 "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
                       "stopReason": stop, "timestamp": T0 + i64::from(n) * 1000}})
}

// Not every test file that includes this module looks at shapes or texts.
#[allow(unused_imports)]
pub use handoff_live::harness::{shape, text_of};
