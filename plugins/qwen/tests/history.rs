//! The history as Qwen Code 0.24.4 builds it, read a model turn at a time: what a later record
//! changes of an entry already made (a slash command's result takes its prompt back out, a
//! mid-turn message joins the user content before it, the repair makes up results), on chats
//! written here record by record.

use std::path::{Path, PathBuf};

use handoff_qwen::QwenPlugin;
use handoff_sdk::serde_json::{json, Value};
use handoff_sdk::{Body, Part, Plugin, ReadFrom, Transcript};

const TARGET: &str = "qwen-code";
const SESSION: &str = "5e551011-0000-4000-8000-000000000000";

/// A chat of `records`, each the child of the one before.
fn chat(dir: &Path, records: &[Value]) -> PathBuf {
    let mut parent = Value::Null;
    let mut text = String::new();
    for (n, r) in records.iter().enumerate() {
        let mut r = r.clone();
        let uuid = format!("00000000-0000-4000-8000-{n:012}");
        r["uuid"] = json!(uuid);
        r["parentUuid"] = parent;
        r["sessionId"] = json!(SESSION);
        r["timestamp"] = json!(format!(
            "2026-12-03T10:{:02}:{:02}.000Z",
            n / 60 % 60,
            n % 60
        ));
        r["cwd"] = json!("/home/dev/proj");
        parent = json!(uuid);
        text += &r.to_string();
        text.push('\n');
    }
    let path = dir.join(format!("{SESSION}.jsonl"));
    std::fs::write(&path, text).unwrap();
    path
}

fn user(text: &str) -> Value {
    json!({"type": "user", "message": {"role": "user", "parts": [{"text": text}]}})
}

fn answer(text: &str) -> Value {
    json!({"type": "assistant", "message": {"role": "model", "parts": [{"text": text}]}})
}

fn call(id: &str) -> Value {
    json!({"type": "assistant", "message": {"role": "model",
        "parts": [{"functionCall": {"id": id, "name": "ls", "args": {}}}]}})
}

fn result(id: &str) -> Value {
    json!({"type": "tool_result", "message": {"role": "user",
        "parts": [{"functionResponse": {"id": id, "name": "ls", "response": {"output": "a.txt"}}}]}})
}

fn shown_only(command: &str) -> Value {
    json!({"type": "system", "subtype": "slash_command", "systemPayload": {"phase": "result",
        "rawCommand": command, "outputHistoryItems": [{"type": "assistant", "text": "shown"}]}})
}

fn mid_turn(text: &str) -> Value {
    json!({"type": "user", "subtype": "mid_turn_user_message",
        "message": {"role": "user", "parts": [{"text": text}]}})
}

fn read(path: &Path) -> Transcript {
    QwenPlugin
        .reader()
        .read(ReadFrom::File(TARGET, path))
        .unwrap()
}

/// Each event as `kind:text` (a user event's texts joined by `+`).
fn shape(t: &Transcript) -> Vec<String> {
    t.events
        .iter()
        .map(|e| match &e.body {
            Body::User { content } => {
                let texts: Vec<&str> = content
                    .iter()
                    .map(|p| match p {
                        Part::Text { text } => text.as_str(),
                        _ => "?",
                    })
                    .collect();
                format!("user:{}", texts.join("+"))
            }
            Body::Assistant { .. } => "assistant".into(),
            Body::ToolResult {
                call_id, is_error, ..
            } => format!("result:{call_id}:{is_error}"),
            Body::Compaction { .. } => "compaction".into(),
        })
        .collect()
}

/// The prompt a shown-only command takes back was the last entry; the one before it is what a
/// mid-turn message then joins (the read holds it though no model turn is held).
#[test]
fn a_prompt_taken_back_leaves_the_one_before_it_for_a_mid_turn_message() {
    let dir = tempfile::tempdir().unwrap();
    let records = [
        user("first"),
        user("/stats"),
        shown_only("/stats"),
        mid_turn("and this"),
        answer("ok"),
    ];
    let t = read(&chat(dir.path(), &records));
    assert_eq!(shape(&t), ["user:first+and this", "assistant"]);
}

/// A command whose text is not the prompt's, or whose result went to the model, takes nothing.
#[test]
fn only_the_command_typed_and_shown_is_taken_back() {
    let dir = tempfile::tempdir().unwrap();
    let mut sent = shown_only("/stats");
    sent["systemPayload"]["sentToModel"] = json!(true);
    let records = [
        user("/stats"),
        shown_only("/other"),
        answer("ok"),
        user("/stats"),
        sent,
        answer("ok"),
    ];
    let t = read(&chat(dir.path(), &records));
    assert_eq!(
        shape(&t),
        ["user:/stats", "assistant", "user:/stats", "assistant"]
    );
}

/// A long chat whose every third call has no result and every fifth result comes after a
/// message typed meanwhile: each model turn is repaired on its own, in order, and a read that
/// stops early hands out exactly what was asked for.
#[test]
fn a_long_chat_is_repaired_a_model_turn_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    let mut records = vec![user("go")];
    let mut expected = vec!["user:go".to_owned()];
    for n in 0..3_000 {
        let id = format!("call_{n}");
        records.push(call(&id));
        expected.push("assistant".into());
        match n % 15 {
            k if k % 3 == 0 => {
                // No result recorded: the CLI answers the call with a failed one of its own.
                records.push(user(&format!("next {n}")));
                expected.push(format!("result:{id}:true"));
                expected.push(format!("user:next {n}"));
            }
            k if k % 5 == 1 => {
                // A message typed while the tool ran: the result is moved up before it.
                records.push(user(&format!("meanwhile {n}")));
                records.push(result(&id));
                expected.push(format!("result:{id}:false"));
                expected.push(format!("user:meanwhile {n}"));
            }
            _ => {
                records.push(result(&id));
                expected.push(format!("result:{id}:false"));
            }
        }
    }
    let path = chat(dir.path(), &records);
    let t = read(&path);
    assert_eq!(shape(&t), expected);
    let made_up = &t.events[2];
    assert_eq!(
        made_up.id,
        "00000000-0000-4000-8000-000000000001/unrecorded-result/call_0"
    );

    let mut seen = Vec::new();
    QwenPlugin
        .reader()
        .read_each(ReadFrom::File(TARGET, &path), &mut |e| {
            seen.push(e.id);
            seen.len() < 1_000
        })
        .unwrap();
    let ids: Vec<&str> = t.events[..1_000].iter().map(|e| e.id.as_str()).collect();
    assert_eq!(seen, ids);
}
