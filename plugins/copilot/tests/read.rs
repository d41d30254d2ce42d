//! The reader on logs shaped as Copilot CLI 1.0.102 writes them: what it gives is what the CLI
//! sends on resume (measured; `docs/formats/copilot-cli.md`), and what it cannot read is an error
//! naming the file, line and field.

use std::path::PathBuf;

use handoff_copilot::{CopilotPlugin, TARGET};
use handoff_sdk::serde_json::{json, Value};
use handoff_sdk::{Body, Part, Plugin, PluginError, ReadFrom, Transcript};

const ID: &str = "11111111-2222-4333-8444-555555555555";

fn event(n: usize, kind: &str, data: Value) -> Value {
    json!({"type": kind, "data": data, "id": format!("e{n}"),
        "timestamp": format!("2026-12-02T06:30:{:02}.000Z", n), "parentId": null})
}

fn log(events: &[(&str, Value)]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.jsonl");
    let mut lines = vec![event(
        0,
        "session.start",
        json!({"sessionId": ID, "version": 1, "producer": "copilot-agent",
            "copilotVersion": "1.0.102", "startTime": "2026-12-02T06:30:00.000Z",
            "context": {"cwd": "/home/dev/proj"}}),
    )
    .to_string()];
    for (n, (kind, data)) in events.iter().enumerate() {
        lines.push(event(n + 1, kind, data.clone()).to_string());
    }
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    (dir, path)
}

fn read(events: &[(&str, Value)]) -> Result<Transcript, PluginError> {
    let (_dir, path) = log(events);
    CopilotPlugin.reader().read(ReadFrom::File(TARGET, &path))
}

fn texts(part: &[Part]) -> Vec<&str> {
    part.iter()
        .filter_map(|p| match p {
            Part::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

fn calls(ids: &[&str]) -> Value {
    json!({"messageId": "m", "content": "", "toolRequests": ids.iter()
        .map(|id| json!({"toolCallId": id, "name": "bash", "arguments": {"command": "ls"}}))
        .collect::<Vec<_>>()})
}

fn ok(id: &str, text: &str) -> Value {
    json!({"toolCallId": id, "success": true, "result": {"content": text, "detailedContent": "x"}})
}

#[test]
fn a_user_turn_is_the_transformed_text_the_cli_sends() {
    let t = read(&[(
        "user.message",
        json!({"content": "hi", "transformedContent": "<current_datetime>x</current_datetime>\n\nhi"}),
    )])
    .unwrap();
    let Body::User { content } = &t.events[0].body else {
        panic!("{:?}", t.events[0])
    };
    assert_eq!(
        texts(content),
        ["<current_datetime>x</current_datetime>\n\nhi"]
    );
    assert_eq!(t.cwd.as_deref(), Some("/home/dev/proj"));
}

#[test]
fn results_come_in_the_order_of_the_calls_and_a_missing_one_is_the_clis_interrupted_text() {
    let t = read(&[
        ("user.message", json!({"content": "go"})),
        ("assistant.message", calls(&["a", "b", "c"])),
        ("tool.execution_complete", ok("c", "third")),
        (
            "tool.execution_complete",
            json!({"toolCallId": "a", "success": false, "error": {"message": "boom"}}),
        ),
        ("assistant.message", calls(&["d"])),
    ])
    .unwrap();
    let results: Vec<(String, Vec<&str>, bool)> = t
        .events
        .iter()
        .filter_map(|e| e.body.as_tool_result())
        .map(|(call_id, content, is_error)| (call_id.to_owned(), texts(content), is_error))
        .collect();
    let before_next = "The execution of this tool, or a previous tool was interrupted.";
    assert_eq!(results[0], ("a".into(), vec!["boom"], true));
    assert_eq!(results[1], ("b".into(), vec![before_next], true));
    assert_eq!(results[2], ("c".into(), vec!["third"], false));
    assert_eq!(results[3].0, "d");
    assert!(results[3].1[0].starts_with("Tool execution was interrupted before a result"));
}

#[test]
fn a_compaction_replaces_what_came_before_with_the_clis_message() {
    let t = read(&[
        ("user.message", json!({"content": "old one"})),
        (
            "assistant.message",
            json!({"messageId": "m", "content": "old answer"}),
        ),
        (
            "session.compaction_complete",
            json!({"success": true, "summaryContent": "SUMMARY"}),
        ),
        ("user.message", json!({"content": "new one"})),
    ])
    .unwrap();
    let Body::Compaction {
        summary,
        replaces_through,
    } = &t.events[2].body
    else {
        panic!("{:?}", t.events[2])
    };
    assert_eq!(replaces_through, &t.events[1].id);
    assert!(summary.contains("<user_message>\nold one\n</user_message>"));
    assert!(summary.ends_with("<summary>\nSUMMARY\n</summary>\n"));
}

#[test]
fn records_the_cli_does_not_send_are_skipped() {
    let t = read(&[
        (
            "system.message",
            json!({"role": "system", "content": "You are"}),
        ),
        ("user.message", json!({"content": "hi"})),
        ("assistant.turn_start", json!({"turnId": "0"})),
        (
            "assistant.reasoning",
            json!({"reasoningId": "r", "content": "hmm"}),
        ),
        (
            "assistant.message",
            json!({"messageId": "m", "content": "ok"}),
        ),
        (
            "session.snapshot_rewind",
            json!({"upToEventId": "e2", "eventsRemoved": 2}),
        ),
        ("session.shutdown", json!({})),
    ])
    .unwrap();
    let kinds: Vec<&str> = t.events.iter().map(|e| e.body.kind()).collect();
    assert_eq!(kinds, ["user", "assistant"]);
}

#[test]
fn what_the_reader_cannot_read_names_the_line_and_field() {
    let file_attachment = read(&[(
        "user.message",
        json!({"content": "see", "attachments": [{"type": "file", "path": "/x"}]}),
    )])
    .unwrap_err()
    .to_string();
    assert!(
        file_attachment.contains(":2: data.attachments[0].type:"),
        "{file_attachment}"
    );
    let stray = read(&[("tool.execution_complete", ok("nobody", "x"))])
        .unwrap_err()
        .to_string();
    assert!(stray.contains(":2: data.toolCallId:"), "{stray}");
    let no_content = read(&[("user.message", json!({}))])
        .unwrap_err()
        .to_string();
    assert!(no_content.contains(":2: data.content:"), "{no_content}");
}

#[test]
fn a_log_that_does_not_start_with_session_start_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.jsonl");
    std::fs::write(
        &path,
        event(1, "user.message", json!({"content": "hi"})).to_string() + "\n",
    )
    .unwrap();
    let e = CopilotPlugin
        .reader()
        .read(ReadFrom::File(TARGET, &path))
        .unwrap_err()
        .to_string();
    assert!(e.contains(":1: type:"), "{e}");
}
