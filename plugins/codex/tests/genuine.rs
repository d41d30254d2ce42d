//! The reader on sessions the real Codex 0.171.0 wrote (copies of
//! `shared/samples/genuine/codex-0.171.0/`, cwd rewritten to /home/dev/proj).

use std::path::PathBuf;

use handoff_codex::{CodexPlugin, TARGET};
use handoff_sdk::{AssistantPart, Body, Part, Plugin, ReadFrom, StoreRoot, Transcript};
use serde_json::json;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn read(name: &str) -> Transcript {
    CodexPlugin
        .reader()
        .read(ReadFrom::File(TARGET, &fixture(name)))
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn user_text(body: &Body) -> &str {
    match body {
        Body::User { content } => match content.as_slice() {
            [Part::Text { text }] => text,
            other => panic!("expected one text part, got {other:?}"),
        },
        other => panic!("expected a user event, got {other:?}"),
    }
}

fn assistant_parts(body: &Body) -> &[AssistantPart] {
    match body {
        Body::Assistant { content, .. } => content,
        other => panic!("expected an assistant event, got {other:?}"),
    }
}

#[test]
fn plain_session_two_turns() {
    let t = read("rollout-2026-11-30T00-41-43-01a229e6-854b-7501-91aa-ee582218765e.jsonl");
    assert_eq!(t.cwd.as_deref(), Some("/home/dev/proj"));
    // developer message and the injected <environment_context> user message are set aside.
    assert_eq!(t.events.len(), 4, "{}", t.to_json_pretty());
    assert_eq!(user_text(&t.events[0].body), "hi");
    assert_eq!(
        t.events[0].timestamp.to_rfc3339(),
        "2026-11-30T00:41:43.460Z"
    );
    assert_eq!(t.events[0].id, "msg_01a229e6-8724-7411-9579-125839a8cdd7");
    assert_eq!(
        assistant_parts(&t.events[1].body),
        &[AssistantPart::text("ok")]
    );
    assert_eq!(
        t.events[1].timestamp.to_rfc3339(),
        "2026-11-30T00:41:43.688Z"
    );
    match &t.events[1].body {
        Body::Assistant { origin, .. } => {
            let origin = origin.as_ref().unwrap();
            assert_eq!(
                (
                    origin.provider.as_str(),
                    origin.model.as_deref(),
                    origin.api.as_deref()
                ),
                ("fake", Some("fake-model"), Some("openai-responses"))
            );
        }
        _ => unreachable!(),
    }
    assert_eq!(user_text(&t.events[2].body), "continue");
    assert_eq!(
        assistant_parts(&t.events[3].body),
        &[AssistantPart::text("ok")]
    );
    assert_eq!(
        t.events[3].timestamp.to_rfc3339(),
        "2026-11-30T00:41:45.266Z"
    );
}

#[test]
fn tool_session_call_and_output() {
    let t = read("rollout-2026-11-30T00-41-46-01a229e6-93f2-7540-95e0-5ee20bf368fe.jsonl");
    assert_eq!(t.events.len(), 4, "{}", t.to_json_pretty());
    assert_eq!(user_text(&t.events[0].body), "TOOLME");
    match assistant_parts(&t.events[1].body) {
        [AssistantPart::ToolCall(call)] => {
            assert_eq!(call.id, "call_resp_fake1795999307089");
            assert_eq!(call.name, "exec_command");
            assert_eq!(call.arguments(), Some(&json!({"cmd": "echo hi-from-tool"})));
        }
        other => panic!("{other:?}"),
    }
    match &t.events[2].body {
        Body::ToolResult {
            call_id,
            content,
            is_error,
        } => {
            assert_eq!(call_id, "call_resp_fake1795999307089");
            assert!(
                !is_error,
                "the CLI's item_completed says completed, exit code 0"
            );
            assert_eq!(
                content,
                &vec![Part::text(
                    "Chunk ID: 3cde67\nWall time: 0.0000 seconds\nProcess exited with code 0\nOriginal token count: 4\nOutput:\nhi-from-tool\n"
                )]
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        t.events[2].timestamp.to_rfc3339(),
        "2026-11-30T00:41:47.198Z"
    );
    assert_eq!(
        assistant_parts(&t.events[3].body),
        &[AssistantPart::text("ok")]
    );
}

#[test]
fn a_failed_item_completed_marks_the_tool_result_as_an_error() {
    let source = std::fs::read_to_string(fixture(
        "rollout-2026-11-30T00-41-46-01a229e6-93f2-7540-95e0-5ee20bf368fe.jsonl",
    ))
    .unwrap();
    let failed = source.replace(
        "\"status\":\"completed\",\"aggregated_output\"",
        "\"status\":\"failed\",\"aggregated_output\"",
    );
    assert_ne!(failed, source);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("failed.jsonl");
    std::fs::write(&path, failed).unwrap();
    let t = CodexPlugin
        .reader()
        .read(ReadFrom::File(TARGET, &path))
        .unwrap();
    assert!(matches!(
        t.events[2].body,
        Body::ToolResult { is_error: true, .. }
    ));
}

#[test]
fn genuine_sessions_resolve_by_their_exact_id() {
    let dir = tempfile::tempdir().unwrap();
    let day = dir.path().join("sessions/2026/11/30");
    std::fs::create_dir_all(&day).unwrap();
    for name in [
        "rollout-2026-11-30T00-41-43-01a229e6-854b-7501-91aa-ee582218765e.jsonl",
        "rollout-2026-11-30T00-41-46-01a229e6-93f2-7540-95e0-5ee20bf368fe.jsonl",
    ] {
        std::fs::copy(fixture(name), day.join(name)).unwrap();
    }
    let root = StoreRoot::new(dir.path()).unwrap();
    let found = CodexPlugin
        .resumer()
        .resolve(&root, TARGET, "01a229e6-854b-7501-91aa-ee582218765e")
        .unwrap();
    assert!(found
        .path
        .ends_with("rollout-2026-11-30T00-41-43-01a229e6-854b-7501-91aa-ee582218765e.jsonl"));
    let listed = CodexPlugin.reader().list(&root, TARGET).unwrap();
    assert_eq!(listed.len(), 2);
    assert!(
        listed.iter().all(|s| !s.owned),
        "genuine sessions are not ours"
    );
}
