//! Every genuine Gemini CLI 0.61.0 sample file reads, each with what it holds asserted.

use std::path::{Path, PathBuf};

use handoff_gemini::GeminiPlugin;
use handoff_sdk::{AssistantPart, Body, Part, Plugin, ReadFrom, Transcript};

fn sample(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/samples")
        .join(name)
}

fn read(name: &str) -> Transcript {
    GeminiPlugin
        .reader()
        .read(ReadFrom::File("gemini-cli", &sample(name)))
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn texts(t: &Transcript) -> Vec<(String, String)> {
    t.events
        .iter()
        .map(|e| match &e.body {
            Body::User { content } => (
                "user".into(),
                content
                    .iter()
                    .map(|p| match p {
                        Part::Text { text } => text.clone(),
                        _ => "<image>".into(),
                    })
                    .collect(),
            ),
            Body::Assistant { content, .. } => (
                "assistant".into(),
                content
                    .iter()
                    .map(|p| match p {
                        AssistantPart::Text { text } => text.clone(),
                        AssistantPart::ToolCall(c) => format!("<call {} {}>", c.id, c.name),
                        AssistantPart::Thinking(_) => "<thinking>".into(),
                        AssistantPart::WebSearch(_) => "<web search>".into(),
                    })
                    .collect(),
            ),
            Body::ToolResult {
                call_id,
                content,
                is_error,
            } => (
                format!("result {call_id} {is_error}"),
                content
                    .iter()
                    .map(|p| match p {
                        Part::Text { text } => text.clone(),
                        _ => "<image>".into(),
                    })
                    .collect(),
            ),
            Body::Compaction { .. } => ("compaction".into(), String::new()),
        })
        .collect()
}

/// A session resumed once: its `<session_context>` checkpoint is not conversation, the resume's
/// checkpoint re-lists the first turn (replacing it in place, content now an array), and the new
/// turn follows.
#[test]
fn resumed_plain_session() {
    let t = read("session-2026-11-30T00-41-c903aa87.jsonl");
    let pairs: Vec<(&str, &str)> = texts(&t)
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .map(|(a, b)| (a.to_owned(), b.to_owned()))
        .map(|(a, b)| {
            (
                Box::leak(a.into_boxed_str()) as &str,
                Box::leak(b.into_boxed_str()) as &str,
            )
        })
        .collect();
    assert_eq!(
        pairs,
        [
            ("user", "hi"),
            ("assistant", "ok"),
            ("user", "continue"),
            ("assistant", "ok")
        ]
    );
    assert_eq!(t.events[0].id, "5568330e-34da-43e1-91e5-5fc8627aee8e");
    assert_eq!(
        t.events[0].timestamp.to_rfc3339(),
        "2026-11-30T00:41:51.075Z"
    );
    assert_eq!(
        t.events[3].timestamp.to_rfc3339(),
        "2026-11-30T00:42:02.485Z"
    );
    let Body::Assistant {
        origin: Some(o), ..
    } = &t.events[1].body
    else {
        panic!("origin")
    };
    assert_eq!(
        (o.provider.as_str(), o.model.as_deref(), o.api.as_deref()),
        ("google", Some("gemini-2.5-flash"), Some("gemini"))
    );
    assert_eq!(
        t.cwd, None,
        "a sample file outside a store has no project marker"
    );
}

/// The stub the CLI leaves when it resumes in a later minute: metadata and its `<session_context>`
/// only, which is no conversation at all.
#[test]
fn resume_stub_has_no_conversation() {
    let t = read("session-2026-11-30T00-42-c903aa87.jsonl");
    assert!(t.events.is_empty(), "{:?}", t.events);
}

/// A tool turn: the call from `toolCalls` (legacy content), its result from the call record (at
/// the call record's time), the CLI's separate functionResponse `user` message dropped as the
/// duplicate it is, then the answer. The file keeps the call id as
/// `list_directory__list_directory_…`; the CLI sends it without its `<tool name>__` prefix.
#[test]
fn tool_session() {
    let t = read("session-2026-11-30T00-42-d0a744dc.jsonl");
    let call = "list_directory_1795999332025_0";
    let got = texts(&t);
    assert_eq!(got.len(), 4, "{got:?}");
    assert_eq!(got[0], ("user".into(), "TOOLME".into()));
    assert_eq!(
        got[1],
        ("assistant".into(), format!("<call {call} list_directory>"))
    );
    assert_eq!(
        got[2],
        (
            format!("result {call} false"),
            "Directory /home/dev/proj is empty.".into()
        )
    );
    assert_eq!(got[3], ("assistant".into(), "ok".into()));
    let Body::Assistant { content, .. } = &t.events[1].body else {
        panic!()
    };
    let AssistantPart::ToolCall(c) = &content[0] else {
        panic!()
    };
    assert_eq!(
        c.arguments(),
        Some(&handoff_sdk::serde_json::json!({"dir_path": "."}))
    );
    assert_eq!(
        t.events[2].timestamp.to_rfc3339(),
        "2026-11-30T00:42:12.211Z"
    );
}

/// The registry sample is not a session: reading it as one is an error that names it.
#[test]
fn projects_json_is_not_a_session() {
    let e = GeminiPlugin
        .reader()
        .read(ReadFrom::File("gemini-cli", &sample("projects.json")))
        .unwrap_err();
    assert!(e.to_string().contains("projects.json"), "{e}");
}
