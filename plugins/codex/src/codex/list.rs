//! What Codex's own session list shows for a rollout, read cheaply: its cwd (the `session_meta`
//! line), and its title — the thread name `codex` keeps in `<CODEX_HOME>/session_index.jsonl`
//! (the newest entry for the id wins), else the first user message (the `user_message` event, or
//! Codex 0.171.0's `item_completed` `UserMessage` copy), looked for only in the rollout's head.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use handoff_sdk::serde_json::{self, Value};
use handoff_sdk::StoreRoot;

/// The thread names file Codex keeps beside `sessions/`.
const SESSION_INDEX: &str = "session_index.jsonl";

/// How far into a rollout the first user message is looked for: it follows the session_meta
/// line (the base instructions, tens of KB) and the injected context, so a rollout without one
/// there has none the listing shows.
const HEAD_BYTES: u64 = 1 << 20;

/// The thread names of the store, by id (a later line replaces an earlier one; a line that is
/// not a name entry is skipped, as Codex skips it).
pub fn thread_names(root: &StoreRoot) -> HashMap<String, String> {
    let mut names = HashMap::new();
    let Ok(file) = std::fs::File::open(root.path().join(SESSION_INDEX)) else {
        return names;
    };
    for line in BufReader::new(file).lines() {
        let Ok(line) = line else { break };
        let Ok(entry) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let id = entry.get("id").and_then(Value::as_str);
        let name = entry.get("thread_name").and_then(Value::as_str);
        if let (Some(id), Some(name)) = (id, name.map(str::trim).filter(|n| !n.is_empty())) {
            names.insert(id.to_owned(), name.to_owned());
        }
    }
    names
}

/// The first user message of the rollout at `path`, from its head; lines that cannot hold one
/// are not parsed.
pub fn first_user_message(path: &Path) -> Option<String> {
    let file = std::fs::File::open(path).ok()?;
    let mut head = BufReader::new(file.take(HEAD_BYTES));
    let mut line = Vec::new();
    loop {
        line.clear();
        if head.read_until(b'\n', &mut line).ok()? == 0 {
            return None;
        }
        let Ok(text) = std::str::from_utf8(&line) else {
            continue;
        };
        if !(text.contains("\"user_message\"") || text.contains("\"UserMessage\"")) {
            continue;
        }
        let Ok(record) = serde_json::from_str::<Value>(text) else {
            continue;
        };
        if let Some(text) = user_text(&record).filter(|t| !t.trim().is_empty()) {
            return Some(text);
        }
    }
}

/// A user message event's text: `user_message.message`, or an `item_completed` `UserMessage`'s
/// text items joined.
fn user_text(record: &Value) -> Option<String> {
    if record.get("type")?.as_str()? != "event_msg" {
        return None;
    }
    let payload = record.get("payload")?;
    match payload.get("type")?.as_str()? {
        "user_message" => payload.get("message")?.as_str().map(str::to_owned),
        "item_completed" => {
            let item = payload.get("item")?;
            if item.get("type")?.as_str()? != "UserMessage" {
                return None;
            }
            let texts: Vec<&str> = item
                .get("content")?
                .as_array()?
                .iter()
                .filter(|c| c.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|c| c.get("text").and_then(Value::as_str))
                .collect();
            Some(texts.join(" "))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_title_is_the_thread_name_else_the_first_user_message() {
        let tmp = tempfile::tempdir().unwrap();
        let root = StoreRoot::new(tmp.path()).unwrap();
        std::fs::write(
            tmp.path().join(SESSION_INDEX),
            concat!(
                r#"{"id":"a","thread_name":"old name","updated_at":"2026-01-01T00:00:00Z"}"#,
                "\nnot json\n",
                r#"{"id":"a","thread_name":"new name","updated_at":"2026-01-02T00:00:00Z"}"#,
                "\n",
                r#"{"id":"b","thread_name":"  ","updated_at":"2026-01-02T00:00:00Z"}"#,
                "\n"
            ),
        )
        .unwrap();
        let names = thread_names(&root);
        assert_eq!(names.get("a").map(String::as_str), Some("new name"));
        assert!(!names.contains_key("b"));

        // Written by Codex 0.171.0: its first user message is only in `item_completed`.
        let genuine = Path::new(env!("CARGO_MANIFEST_DIR")).join(
            "tests/fixtures/rollout-2026-11-30T00-41-46-01a229e6-93f2-7540-95e0-5ee20bf368fe.jsonl",
        );
        assert_eq!(first_user_message(&genuine).as_deref(), Some("TOOLME"));
        let ours = tmp.path().join("r.jsonl");
        std::fs::write(
            &ours,
            concat!(
                r#"{"timestamp":"t","type":"session_meta","payload":{"id":"x","cwd":"/p"}}"#,
                "\n",
                r#"{"timestamp":"t","type":"event_msg","payload":{"type":"user_message","message":"fix the bug"}}"#,
                "\n"
            ),
        )
        .unwrap();
        assert_eq!(first_user_message(&ours).as_deref(), Some("fix the bug"));
        std::fs::write(&ours, "{\"type\":\"session_meta\"}\n").unwrap();
        assert_eq!(first_user_message(&ours), None);
    }
}
