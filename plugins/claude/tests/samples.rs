//! Every sample session (written by the real Claude Code 2.1.197, and claude-code-viewer's public
//! mock folder) reads without error, with what it must contain.

use std::path::PathBuf;

use handoff_claude::{ClaudePlugin, CLAUDE_CODE};
use handoff_live::harness::{self, shape};
use handoff_sdk::{AssistantPart, Body, Part, Plugin, ReadFrom, Transcript};

fn sample(folder: &str, file: &str) -> PathBuf {
    harness::sample(env!("CARGO_MANIFEST_DIR"), folder, file)
}

fn read(folder: &str, file: &str) -> Transcript {
    let path = sample(folder, file);
    let t = ClaudePlugin
        .reader()
        .read(ReadFrom::File(CLAUDE_CODE, &path))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    t.validate().unwrap();
    t
}

fn calls(t: &Transcript) -> Vec<String> {
    t.events
        .iter()
        .flat_map(|e| match &e.body {
            Body::Assistant { content, .. } => content
                .iter()
                .filter_map(|p| match p {
                    AssistantPart::ToolCall(c) => Some(c.id.clone()),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        })
        .collect()
}

fn results(t: &Transcript) -> Vec<String> {
    t.events
        .iter()
        .filter_map(|e| match &e.body {
            Body::ToolResult { call_id, .. } => Some(call_id.clone()),
            _ => None,
        })
        .collect()
}

fn user_text(t: &Transcript, index: usize) -> &str {
    match &t.events[index].body {
        Body::User { content } => match &content[..] {
            [Part::Text { text }] => text,
            other => panic!("not one text part: {other:?}"),
        },
        other => panic!("not a user event: {other:?}"),
    }
}

fn assistant_parts(t: &Transcript, index: usize) -> &[AssistantPart] {
    match &t.events[index].body {
        Body::Assistant { content, .. } => content,
        other => panic!("not an assistant event: {other:?}"),
    }
}

#[test]
fn genuine_plain_turn_resumed_once() {
    // hi → ok, then (resumed in the same file) continue → ok; queue, attachment, last-prompt and
    // mode records are not conversation.
    let t = read(
        "genuine-2.1.197",
        "7ab6d42f-f51c-4eb0-8cba-032f2fa35adf.jsonl",
    );
    assert_eq!(shape(&t), "UAUA");
    assert_eq!(user_text(&t, 0), "hi");
    assert_eq!(user_text(&t, 2), "continue");
    assert_eq!(assistant_parts(&t, 3), [AssistantPart::text("ok")]);
    assert_eq!(t.cwd.as_deref(), Some("/home/dev/proj"));
    let Body::Assistant { origin, .. } = &t.events[1].body else {
        unreachable!()
    };
    let origin = origin.as_ref().unwrap();
    assert_eq!(
        (origin.provider.as_str(), origin.model.as_deref()),
        ("anthropic", Some("claude-opus-4-8"))
    );
    assert_eq!(t.events[0].id, "28270725-6690-4346-a55d-98bc186ad941");
    assert_eq!(
        t.events[0].timestamp.to_rfc3339(),
        "2026-11-30T00:41:45.005Z"
    );
}

#[test]
fn genuine_tool_turn() {
    let t = read(
        "genuine-2.1.197",
        "31c027dc-f6fd-435e-b40a-e98d9514124a.jsonl",
    );
    assert_eq!(shape(&t), "UARA");
    assert_eq!(user_text(&t, 0), "TOOLME");
    assert_eq!(calls(&t), ["toolu_fake1795999314120"]);
    assert_eq!(results(&t), ["toolu_fake1795999314120"]);
    let AssistantPart::ToolCall(call) = &assistant_parts(&t, 1)[0] else {
        panic!()
    };
    assert_eq!(call.name, "Bash");
    assert_eq!(call.arguments().unwrap()["command"], "echo hi-from-tool");
    let Body::ToolResult { content, .. } = &t.events[2].body else {
        unreachable!()
    };
    assert_eq!(content, &[Part::text("hi-from-tool")]);
}

#[test]
fn viewer_init_session_with_parallel_calls() {
    // The /init command record, its expanded prompt (an `isMeta` record: Claude Code sends it, so
    // it is read, marked for a Claude Code round trip), then turns of up to five parallel calls
    // whose results are chained one after another (the older layout).
    let t = read(
        "claude-code-viewer",
        "1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl",
    );
    assert_eq!(shape(&t), "UUARARRRRRARRRARAEARA");
    assert!(user_text(&t, 0).starts_with("<command-message>init is analyzing"));
    assert!(user_text(&t, 1).starts_with("Please analyze this codebase"));
    assert_eq!(
        t.events[1].opaque["claude"],
        serde_json::json!({"isMeta": true})
    );
    assert!(t.events[0].opaque.is_empty());
    // Streamed records of one message are one turn: text then tool_use.
    assert!(matches!(
        assistant_parts(&t, 2),
        [AssistantPart::Text { .. }, AssistantPart::ToolCall(_)]
    ));
    assert_eq!(assistant_parts(&t, 4).len(), 5);
    assert_eq!(calls(&t).len(), 12);
    let mut sorted_calls = calls(&t);
    let mut sorted_results = results(&t);
    sorted_calls.sort();
    sorted_results.sort();
    assert_eq!(sorted_calls, sorted_results, "every call has its result");
    // Results keep file order, not call order.
    assert_eq!(results(&t)[1], "toolu_01MEJ7TRMeoTyDi6EZLHM2zY");
    let Body::ToolResult { call_id, .. } = &t.events[17].body else {
        unreachable!()
    };
    assert_eq!(call_id, "toolu_01LM7vfs6eMdhHJokVajzJA1");
    // An empty tool output reads as one empty text.
    let Body::ToolResult { content, .. } = &t.events[7].body else {
        unreachable!()
    };
    assert_eq!(content, &[Part::text("")]);
}

#[test]
fn viewer_session_with_subagents_interleaved() {
    // Sidechain (Task subagent) records sit between the main thread's results; they are not part
    // of the conversation.
    let t = read(
        "claude-code-viewer",
        "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl",
    );
    assert_eq!(shape(&t), "UUARARRRAERRARARAEARARARA");
    assert!(user_text(&t, 0).starts_with("<command-message>orchestrator is running"));
    assert!(
        !calls(&t).contains(&"toolu_01Jcrb8BoK8qgGGsycHsPYNo".to_owned()),
        "sidechain call leaked"
    );
    let errors: Vec<_> = t
        .events
        .iter()
        .filter_map(|e| match e.body.as_tool_result()? {
            (call_id, _, true) => Some(call_id),
            _ => None,
        })
        .collect();
    assert_eq!(
        errors,
        [
            "toolu_018t5jce2ZNoGr2ADsHGQife",
            "toolu_019ctBEHhLKehUi4xPDkYwvc"
        ]
    );
    assert_eq!(calls(&t).len(), results(&t).len());
}

#[test]
fn viewer_subagent_file_reads_its_sidechain() {
    // A subagent's own file holds sidechain records only: that thread is its conversation.
    let t = read("claude-code-viewer", "agent-test-hash-123.jsonl");
    assert_eq!(shape(&t), "UA");
    assert_eq!(user_text(&t, 0), "Run the test suite");
    assert_eq!(
        assistant_parts(&t, 1),
        [AssistantPart::text("I'll run the test suite for you.")]
    );
}

#[test]
fn bundled_example_session() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/sessions/claude-code/4f6c2a8e-1b7d-4c3a-9e55-2d0f8a6b7c11.jsonl");
    if !path.exists() {
        return; // the example lives in the repository; a copied crate may not have it
    }
    let t = ClaudePlugin
        .reader()
        .read(ReadFrom::File(CLAUDE_CODE, &path))
        .unwrap();
    // Parallel calls: each result hangs on its own tool_use record, the next turn on the last.
    assert_eq!(shape(&t), "UAREAUA");
    assert_eq!(calls(&t), results(&t));
}
