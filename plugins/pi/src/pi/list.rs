//! The title pi's session list shows (`buildSessionInfo`), read for a listing of thousands of
//! sessions: only the lines that can change it are parsed — `session_info` entries (the latest
//! name wins, an empty one clears it) and, until one has text, user messages (their text blocks
//! joined by a space). The name, else the first user text. [`super::summary`] reads the same
//! through the full entry parser; a test holds the two equal.

use std::io::{BufRead, BufReader};
use std::path::Path;

use handoff_sdk::serde_json::{self, Value};

/// The listing title of the session file at `path` (the header line is the caller's).
pub fn title(path: &Path) -> Option<String> {
    let file = std::fs::File::open(path).ok()?;
    let mut reader = BufReader::new(file);
    let mut line = String::new();
    let mut name = None;
    let mut first_text = None;
    loop {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let naming = line.contains("\"session_info\"");
        if !naming && (first_text.is_some() || !line.contains("\"user\"")) {
            continue;
        }
        let Ok(entry) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        match entry.get("type").and_then(Value::as_str) {
            Some("session_info") => {
                name = entry
                    .get("name")
                    .and_then(Value::as_str)
                    .map(str::trim)
                    .filter(|n| !n.is_empty())
                    .map(str::to_owned);
            }
            Some("message") if first_text.is_none() => first_text = user_text(&entry),
            _ => {}
        }
    }
    name.or(first_text)
}

/// A user message entry's text: its string content, or its text blocks joined by a space.
fn user_text(entry: &Value) -> Option<String> {
    let message = entry.get("message")?;
    if message.get("role")?.as_str()? != "user" {
        return None;
    }
    let text = match message.get("content")? {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(" "),
        _ => return None,
    };
    Some(text).filter(|t| !t.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fast_title_is_the_full_parsers() {
        let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/samples");
        let mut files = Vec::new();
        let mut dirs = vec![samples];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(dir).unwrap().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|e| e == "jsonl") {
                    files.push(path);
                }
            }
        }
        assert!(!files.is_empty());
        let tmp = tempfile::tempdir().unwrap();
        let named = tmp.path().join("named.jsonl");
        std::fs::write(
            &named,
            concat!(
                r#"{"type":"session","version":3,"id":"s","timestamp":"2026-11-30T00:00:00.000Z","cwd":"/p"}"#, "\n",
                r#"{"type":"message","id":"a","parentId":null,"timestamp":"2026-11-30T00:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"first"},{"type":"image","data":"x","mimeType":"image/png"},{"type":"text","text":"question"}],"timestamp":1}}"#, "\n",
                r#"{"type":"session_info","id":"b","parentId":"a","timestamp":"2026-11-30T00:00:02.000Z","name":"Triage"}"#, "\n",
                r#"{"type":"session_info","id":"c","parentId":"b","timestamp":"2026-11-30T00:00:03.000Z","name":"  "}"#, "\n",
            ),
        )
        .unwrap();
        files.push(named.clone());
        for file in &files {
            let Ok(full) = super::super::summary(file) else {
                continue;
            };
            assert_eq!(title(file), full.name.or(full.title), "{}", file.display());
        }
        assert_eq!(title(&named).as_deref(), Some("first question"));
    }
}
