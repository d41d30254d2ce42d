//! What Claude Code's own session list shows for a session file, read as cheaply as the CLI reads
//! it: only the file's head and tail (64 KiB each, the head's first line whole; the whole file
//! when it is smaller than both).
//!
//! The title is Claude Code 2.1.197's (`agentName || customTitle || aiTitle || summary ||
//! firstPrompt`, measured in its bundled code): the latest `agent-name`, `custom-title`,
//! `ai-title` or `summary` record, which the CLI appends to the file, so the tail holds them; else
//! the first prompt the user typed, from the head. The cwd is the first record that names one.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use handoff_sdk::marker::OwnershipMarker;
use serde_json::Value;

/// How much of each end of a file is read.
const END_BYTES: u64 = 64 * 1024;

/// The longest first prompt shown, in characters (longer ones are cut and end with `…`).
const PROMPT_CHARS: usize = 200;

/// What the listing shows of one session file.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Details {
    /// The ownership marker on the first record.
    pub marker: Option<OwnershipMarker>,
    pub cwd: Option<String>,
    pub title: Option<String>,
}

/// The listing's details of the session file at `path`; a file it cannot read has none.
pub(crate) fn details(path: &Path) -> Details {
    let Ok((head, tail)) = ends(path) else {
        return Details::default();
    };
    let mut titles = Titles::default();
    let mut cwd = None;
    let mut marker = None;
    let mut first_prompt = None;
    let mut command = None;
    for (n, line) in whole_lines(&head, false).enumerate() {
        let Ok(line) = std::str::from_utf8(line) else {
            continue;
        };
        // Only a line that can hold what is still missing is parsed (most lines of a long head
        // are not): the first (the marker), the first naming a cwd, the user records up to the
        // first prompt, title records.
        let wanted = n == 0
            || (cwd.is_none() && line.contains("\"cwd\""))
            || (first_prompt.is_none() && line.contains("\"user\""))
            || may_hold_title(line);
        if !wanted {
            continue;
        }
        let Ok(record) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if n == 0 {
            marker = OwnershipMarker::find(&record);
        }
        if cwd.is_none() {
            cwd = record.get("cwd").and_then(Value::as_str).map(str::to_owned);
        }
        if first_prompt.is_none() {
            first_prompt = prompt_of(&record, &mut command);
        }
        titles.note(&record);
    }
    if let Some(tail) = &tail {
        for line in whole_lines(tail, true) {
            let Ok(line) = std::str::from_utf8(line) else {
                continue;
            };
            if !may_hold_title(line) {
                continue;
            }
            if let Ok(record) = serde_json::from_str::<Value>(line) {
                titles.note(&record);
            }
        }
    }
    Details {
        marker,
        cwd,
        title: titles.best().or(first_prompt).or(command),
    }
}

/// The file's head — its first line whole, however long (it holds the ownership marker), then up
/// to 64 KiB more — and its tail, the last 64 KiB after the head, when the file goes on.
fn ends(path: &Path) -> std::io::Result<(Vec<u8>, Option<Vec<u8>>)> {
    let mut file = BufReader::new(File::open(path)?);
    let len = file.get_ref().metadata()?.len();
    let mut head = Vec::new();
    file.read_until(b'\n', &mut head)?;
    (&mut file).take(END_BYTES).read_to_end(&mut head)?;
    let head_len = head.len() as u64;
    if len <= head_len {
        return Ok((head, None));
    }
    let start = len.saturating_sub(END_BYTES).max(head_len);
    let mut file = file.into_inner();
    file.seek(SeekFrom::Start(start))?;
    let mut tail = Vec::new();
    file.take(END_BYTES).read_to_end(&mut tail)?;
    // A tail that starts where the head ends after a whole line starts with a whole line.
    if start == head_len && head.last() == Some(&b'\n') {
        tail.insert(0, b'\n');
    }
    Ok((head, Some(tail)))
}

/// The whole lines of a chunk: a line cut by the chunk's end is dropped, and in a tail chunk
/// (`cut_start`) so is the first, cut by its start.
fn whole_lines(chunk: &[u8], cut_start: bool) -> impl Iterator<Item = &[u8]> {
    let end = chunk.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    let start = if cut_start {
        chunk[..end]
            .iter()
            .position(|b| *b == b'\n')
            .map_or(end, |i| i + 1)
    } else {
        0
    };
    chunk[start..end]
        .split(|b| *b == b'\n')
        .filter(|l| !l.iter().all(u8::is_ascii_whitespace))
}

/// Whether a line may be a title record (checked before parsing it): one pass for `"type":"`,
/// then the kind after it (Claude Code writes compact JSON).
fn may_hold_title(line: &str) -> bool {
    const KINDS: [&str; 4] = ["summary\"", "custom-title\"", "ai-title\"", "agent-name\""];
    const TYPE: &str = "\"type\":\"";
    line.match_indices(TYPE).any(|(at, _)| {
        let kind = &line[at + TYPE.len()..];
        KINDS.iter().any(|k| kind.starts_with(k))
    })
}

/// The latest of each title record seen.
#[derive(Default)]
struct Titles {
    agent_name: Option<String>,
    custom: Option<String>,
    ai: Option<String>,
    summary: Option<String>,
}

impl Titles {
    fn note(&mut self, record: &Value) {
        let text = |key: &str| {
            record
                .get(key)
                .and_then(Value::as_str)
                .filter(|t| !t.is_empty())
                .map(str::to_owned)
        };
        let (slot, key) = match record.get("type").and_then(Value::as_str) {
            Some("agent-name") => (&mut self.agent_name, "agentName"),
            Some("custom-title") => (&mut self.custom, "customTitle"),
            Some("ai-title") => (&mut self.ai, "aiTitle"),
            Some("summary") => (&mut self.summary, "summary"),
            _ => return,
        };
        if let Some(t) = text(key) {
            *slot = Some(t);
        }
    }

    fn best(self) -> Option<String> {
        self.agent_name.or(self.custom).or(self.ai).or(self.summary)
    }
}

/// The prompt a user record shows as the session's first prompt, as Claude Code picks it: not a
/// meta or compact-summary record, not a tool result; the first text that is not markup
/// (`<tag …>`) or an interruption notice, newlines made spaces, cut at 200 characters. A slash
/// command's name is kept in `command`, the title when no prompt is found.
fn prompt_of(record: &Value, command: &mut Option<String>) -> Option<String> {
    if record.get("type")?.as_str()? != "user" {
        return None;
    }
    let flag = |k: &str| record.get(k).and_then(Value::as_bool) == Some(true);
    if flag("isMeta") || flag("isCompactSummary") {
        return None;
    }
    let content = record.get("message")?.get("content")?;
    let texts: Vec<&str> = match content {
        Value::String(s) => vec![s.as_str()],
        Value::Array(blocks) => {
            let mut texts = Vec::new();
            for block in blocks {
                match block.get("type").and_then(Value::as_str) {
                    Some("tool_result") => return None,
                    Some("text") => texts.extend(block.get("text").and_then(Value::as_str)),
                    _ => {}
                }
            }
            texts
        }
        _ => return None,
    };
    for text in texts {
        let line = text.replace('\n', " ");
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if let Some(name) = between(line, "<command-name>", "</command-name>") {
            command.get_or_insert_with(|| name.to_owned());
            continue;
        }
        if let Some(input) = between(line, "<bash-input>", "</bash-input>") {
            return Some(format!("! {}", input.trim()));
        }
        if is_markup(line) || line.starts_with("[Request interrupted by user") {
            continue;
        }
        return Some(match line.char_indices().nth(PROMPT_CHARS) {
            Some((cut, _)) => format!("{}\u{2026}", line[..cut].trim()),
            None => line.to_owned(),
        });
    }
    None
}

/// The text between the first `open` and the next `close`.
fn between<'a>(text: &'a str, open: &str, close: &str) -> Option<&'a str> {
    let from = text.find(open)? + open.len();
    let len = text[from..].find(close)?;
    Some(&text[from..from + len])
}

/// Whether a line starts with an element tag (`<name>` or `<name attr…`), as system-made
/// prompts do.
fn is_markup(line: &str) -> bool {
    let Some(rest) = line.strip_prefix('<') else {
        return false;
    };
    let mut chars = rest.chars();
    if !chars.next().is_some_and(|c| c.is_ascii_lowercase()) {
        return false;
    }
    for c in chars {
        if c == '>' || c.is_whitespace() {
            return true;
        }
        if !(c.is_ascii_alphanumeric() || c == '_' || c == '-') {
            return false;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn user(content: Value) -> Value {
        json!({"type": "user", "cwd": "/p", "message": {"role": "user", "content": content}})
    }

    fn write(path: &Path, records: &[Value]) {
        let text: String = records.iter().map(|r| format!("{r}\n")).collect();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn the_first_prompt_is_the_first_typed_text() {
        let mut command = None;
        assert_eq!(
            prompt_of(&user(json!("fix\nthe bug")), &mut command).as_deref(),
            Some("fix the bug")
        );
        let blocks = json!([{"type": "text", "text": "<system-reminder>x</system-reminder>"}, {"type": "text", "text": "real"}]);
        assert_eq!(
            prompt_of(&user(blocks), &mut command).as_deref(),
            Some("real")
        );
        let result = json!([{"type": "tool_result", "tool_use_id": "t", "content": "x"}, {"type": "text", "text": "no"}]);
        assert_eq!(prompt_of(&user(result), &mut command), None);
        let mut meta = user(json!("caveat"));
        meta["isMeta"] = json!(true);
        assert_eq!(prompt_of(&meta, &mut command), None);
        assert_eq!(
            prompt_of(&user(json!("[Request interrupted by user]")), &mut command),
            None
        );
        assert_eq!(
            prompt_of(&user(json!("<bash-input> ls </bash-input>")), &mut command).as_deref(),
            Some("! ls")
        );
        assert_eq!(
            prompt_of(
                &user(json!("<command-name>/init</command-name>")),
                &mut command
            ),
            None
        );
        assert_eq!(command.as_deref(), Some("/init"));
        assert_eq!(
            prompt_of(&user(json!("a < b")), &mut None).as_deref(),
            Some("a < b")
        );
        let long = prompt_of(&user(json!("y".repeat(300))), &mut None).unwrap();
        assert_eq!(long.chars().count(), PROMPT_CHARS + 1);
        assert!(long.ends_with('\u{2026}'));
    }

    #[test]
    fn a_title_record_in_the_tail_beats_the_first_prompt() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("s.jsonl");
        let filler = json!({"type": "assistant", "message": {"content": "z".repeat(1000)}});
        let mut records = vec![user(json!("first prompt"))];
        records.extend(std::iter::repeat_n(filler, 300));
        records.push(json!({"type": "summary", "summary": "old summary", "leafUuid": "u"}));
        write(&path, &records);
        let listed = details(&path);
        assert_eq!(listed.title.as_deref(), Some("old summary"));
        assert_eq!(listed.cwd.as_deref(), Some("/p"));
        records.push(json!({"type": "custom-title", "customTitle": "my name", "sessionId": "s"}));
        records.push(json!({"type": "ai-title", "aiTitle": "ai name", "sessionId": "s"}));
        write(&path, &records);
        assert_eq!(details(&path).title.as_deref(), Some("my name"));
        // A title record in the middle of a long file is not read, as the CLI does not read it.
        records.truncate(1);
        let filler = json!({"type": "assistant", "message": {"content": "z".repeat(1000)}});
        records.extend(std::iter::repeat_n(filler.clone(), 100));
        records.push(json!({"type": "summary", "summary": "buried"}));
        records.extend(std::iter::repeat_n(filler, 100));
        write(&path, &records);
        assert_eq!(details(&path).title.as_deref(), Some("first prompt"));
        assert_eq!(
            details(&tmp.path().join("absent.jsonl")),
            Details::default()
        );
    }

    #[test]
    fn cut_lines_at_the_chunk_edges_are_dropped() {
        let lines: Vec<&[u8]> = whole_lines(b"cut\n{\"a\":1}\nhal", true).collect();
        assert_eq!(lines, [b"{\"a\":1}".as_slice()]);
        let lines: Vec<&[u8]> = whole_lines(b"{\"a\":1}\n\n{\"b\"", false).collect();
        assert_eq!(lines, [b"{\"a\":1}".as_slice()]);
    }
}
