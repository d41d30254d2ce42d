//! A file pi would half-read (it skips what it cannot parse) is refused, naming the file, the
//! line and the field.

mod common;

use common::*;
use handoff_pi::{PiPlugin, TARGET};
use handoff_sdk::serde_json::json;
use handoff_sdk::Plugin;
use handoff_sdk::PluginError;
use handoff_sdk::ReadFrom;

/// Writes `lines` (raw text, one per line) and reads the file; the error must be `Malformed`
/// naming it, `line` and `field`.
fn refused<L: AsRef<[u8]> + std::fmt::Debug>(
    raw: &[L],
    line: usize,
    field: Option<&str>,
    says: &str,
) {
    let (_dir, root) = root();
    let dir = root.path().join("sessions/--home-dev-proj--");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("2026-11-30T00-00-00-000Z_01a22fc4-0000-7000-8000-0000000bad00.jsonl");
    let bytes: Vec<u8> = raw.iter().flat_map(|l| l.as_ref().to_vec()).collect();
    std::fs::write(&path, bytes).unwrap();
    match PiPlugin.reader().read(ReadFrom::File(TARGET, &path)) {
        Err(PluginError::Malformed {
            file,
            line: l,
            field: f,
            message,
        }) => {
            assert_eq!(file, path);
            assert_eq!(l, Some(line), "{message}");
            assert_eq!(f.as_deref(), field, "{message}");
            assert!(message.contains(says), "{message:?} does not say {says:?}");
        }
        other => panic!("{raw:?}: {other:?}"),
    }
}

fn line(v: handoff_sdk::serde_json::Value) -> String {
    format!("{v}\n")
}

fn head() -> String {
    line(header("01a22fc4-0000-7000-8000-0000000bad00"))
}

fn first() -> String {
    line(user_entry("a0000001", None, 1, "hi"))
}

#[test]
fn bad_json_names_its_line() {
    refused(
        &[
            head(),
            first(),
            "{\"type\": \"message\", \"message\": {\n".into(),
        ],
        3,
        Some("message"),
        "EOF",
    );
}

#[test]
fn a_torn_last_line_is_refused() {
    let mut torn = first();
    torn.pop();
    refused(&[head(), torn], 2, None, "torn");
}

#[test]
fn invalid_utf8_is_refused() {
    let mut bytes = first().into_bytes();
    bytes.splice(10..10, [0xff, 0xfe]);
    refused(&[head().into_bytes(), bytes], 2, None, "UTF-8");
}

#[test]
fn the_first_line_must_be_the_header() {
    refused(&[first(), head()], 1, Some("type"), "session header");
    refused(
        &[line(
            json!({"type": "session", "version": 3, "timestamp": ts(0)}),
        )],
        1,
        Some("id"),
        "no id",
    );
    refused(
        &[line(json!({"type": "session", "version": 4, "id": "x"}))],
        1,
        Some("version"),
        "version 4",
    );
    refused::<String>(&[], 1, None, "empty");
}

#[test]
fn a_wrong_member_names_its_path() {
    let mut bad = user_entry("a0000002", Some("a0000001"), 2, "x");
    bad["message"]["content"] = json!([{"type": "text", "text": "ok"}, {"type": "image", "data": 7, "mimeType": "image/png"}]);
    refused(
        &[head(), first(), line(bad)],
        3,
        Some("message.content[1].data"),
        "invalid type",
    );
    let mut unknown = user_entry("a0000002", Some("a0000001"), 2, "x");
    unknown["message"]["content"] = json!([{"type": "audio", "data": "AA=="}]);
    refused(
        &[head(), first(), line(unknown)],
        3,
        Some("message.content[0].type"),
        "audio",
    );
    let mut not_base64 = user_entry("a0000002", Some("a0000001"), 2, "x");
    not_base64["message"]["content"] =
        json!([{"type": "image", "data": "***", "mimeType": "image/png"}]);
    refused(
        &[head(), first(), line(not_base64)],
        3,
        Some("message.content[0].data"),
        "base64",
    );
}

#[test]
fn an_entry_without_an_id_is_refused() {
    let mut no_id = user_entry("a0000002", Some("a0000001"), 2, "x");
    no_id.as_object_mut().unwrap().remove("id");
    refused(&[head(), first(), line(no_id)], 3, Some("id"), "no id");
}

#[test]
fn a_result_of_no_call_pi_sends_is_refused() {
    // The call is on an assistant message that stopped with an error: pi does not send it, so
    // its result would answer nothing.
    let aborted = assistant_entry(
        "a0000002",
        Some("a0000001"),
        2,
        json!([{"type": "toolCall", "id": "c1", "name": "bash", "arguments": {}}]),
        "aborted",
    );
    let result = json!({"type": "message", "id": "a0000003", "parentId": "a0000002", "timestamp": ts(3),
        "message": {"role": "toolResult", "toolCallId": "c1", "toolName": "bash", "content": [], "isError": false, "timestamp": 1}});
    refused(
        &[head(), first(), line(aborted), line(result)],
        4,
        Some("message.toolCallId"),
        "answers no tool call",
    );
}

#[test]
fn a_parent_loop_is_refused() {
    let a = user_entry("a0000001", Some("a0000002"), 1, "a");
    let b = user_entry("a0000002", Some("a0000001"), 2, "b");
    refused(&[head(), line(a), line(b)], 2, Some("parentId"), "loops");
}

#[test]
fn a_governing_compaction_needs_a_summary() {
    let c = json!({"type": "compaction", "id": "a0000002", "parentId": "a0000001", "timestamp": ts(2),
                   "firstKeptEntryId": "a0000002", "tokensBefore": 1});
    refused(
        &[head(), first(), line(c)],
        3,
        Some("summary"),
        "no summary",
    );
}

#[test]
fn an_assistant_message_needs_blocks() {
    let a = assistant_entry(
        "a0000002",
        Some("a0000001"),
        2,
        json!("just a string"),
        "stop",
    );
    refused(
        &[head(), first(), line(a)],
        3,
        Some("message.content"),
        "array of blocks",
    );
}
