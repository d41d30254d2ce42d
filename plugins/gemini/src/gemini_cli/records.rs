//! Loading a session file whole the way Gemini CLI 0.61.0's `loadConversationRecord` does, but
//! strictly: how a legacy record is read, and (in the tests) what the two passes of
//! [`super::chat`], which apply the same rules to positions, must read alike; and the pieces both
//! share.
//!
//! Lines are classified in the CLI's order: `{"$rewindTo"}`, a message (string `id`), `{"$set"}`,
//! a metadata line (string `sessionId` and `projectHash`). A later message with the same id
//! replaces the earlier one in place; `$rewindTo` deletes that message and everything after it (all
//! messages for an unknown id); `$set.messages` is a checkpoint that replaces all messages. A file
//! with no metadata line is read as one legacy JSON record. Blank lines, and JSON objects of none
//! of these kinds, are skipped, as the CLI skips them (nothing of the conversation is in them).
//! Unlike the CLI, which also skips what it cannot parse, every other line must be a whole JSON
//! object: anything else is `PluginError::Malformed` naming the file and the 1-based line.

use std::collections::HashMap;
use std::path::Path;

use handoff_sdk::marker::{OwnershipMarker, MARKER_KEY};
use handoff_sdk::serde_json::{self, Map, Value};
use serde::Deserialize as _;

use super::record_types::{LineIn, MessageBody};
use handoff_sdk::PluginError;

/// A message as it stands after every line was applied.
#[derive(Clone)]
pub(crate) struct Message {
    /// The 1-based line its current version came from.
    pub line: usize,
    pub id: String,
    pub body: MessageBody,
}

impl Message {
    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn kind(&self) -> Option<&str> {
        self.body.kind.as_deref()
    }
}

/// A session loaded whole: a legacy record, and (in the tests) what [`super::chat`]'s two passes
/// must read alike.
#[derive(Default)]
pub(crate) struct Loaded {
    /// The merged metadata (first line, later metadata lines and every `$set`).
    pub meta: Map<String, Value>,
    /// The live messages, in the CLI's order.
    pub messages: Vec<Message>,
}

/// The live messages: a vector of slots (a deleted one is `None`) and an id index.
#[derive(Default)]
struct Messages {
    slots: Vec<Option<Message>>,
    index: HashMap<String, usize>,
}

impl Messages {
    fn upsert(&mut self, message: Message) {
        let id = message.id().to_owned();
        match self.index.get(&id) {
            Some(&i) => self.slots[i] = Some(message),
            None => {
                self.index.insert(id, self.slots.len());
                self.slots.push(Some(message));
            }
        }
    }

    fn rewind(&mut self, id: &str) {
        let cut = self.index.get(id).copied().unwrap_or(0);
        for slot in self.slots.drain(cut..).flatten() {
            self.index.remove(slot.id());
        }
    }

    fn clear(&mut self) {
        self.slots.clear();
        self.index.clear();
    }

    fn into_vec(self) -> Vec<Message> {
        self.slots.into_iter().flatten().collect()
    }
}

/// The session id and ownership marker of a session file, from its first line alone (the whole
/// file for a legacy record).
pub(crate) fn header(
    path: &Path,
) -> Result<(Option<String>, Option<OwnershipMarker>), PluginError> {
    use std::io::BufRead as _;
    let file = std::fs::File::open(path).map_err(|e| PluginError::io(path, &e))?;
    let mut first = Vec::new();
    std::io::BufReader::new(file)
        .read_until(b'\n', &mut first)
        .map_err(|e| PluginError::io(path, &e))?;
    let meta = match serde_json::from_slice::<Value>(&first) {
        Ok(Value::Object(m)) if m.get("projectHash").is_some_and(Value::is_string) => m,
        _ => super::chat::index(path)?.meta,
    };
    let id = meta
        .get("sessionId")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let marker = meta
        .get(MARKER_KEY)
        .and_then(|m| serde_json::from_value(m.clone()).ok());
    Ok((id, marker))
}

/// The error of a last line without its newline.
pub(crate) fn torn(path: &Path, n: usize) -> PluginError {
    PluginError::malformed_line(path, n, None, "the last line has no newline (a torn write)")
}

/// A session's metadata must have come from a metadata line (string sessionId and projectHash).
pub(crate) fn check_meta(path: &Path, meta: &Map<String, Value>) -> Result<(), PluginError> {
    if meta.get("sessionId").is_some_and(Value::is_string)
        && meta.get("projectHash").is_some_and(Value::is_string)
    {
        return Ok(());
    }
    Err(PluginError::malformed_line(
        path,
        1,
        Some("sessionId"),
        "no metadata line (string sessionId and projectHash)",
    ))
}

/// The session of the lines applied, if they held its metadata.
fn loaded(
    path: &Path,
    meta: Map<String, Value>,
    messages: Messages,
) -> Result<Loaded, PluginError> {
    check_meta(path, &meta)?;
    Ok(Loaded {
        meta,
        messages: messages.into_vec(),
    })
}

/// A line's text; a line not UTF-8 is malformed.
pub(crate) fn utf8<'l>(path: &Path, n: usize, line: &'l [u8]) -> Result<&'l str, PluginError> {
    std::str::from_utf8(line)
        .map_err(|e| PluginError::malformed_line(path, n, None, format!("not UTF-8 ({e})")))
}

/// A line that does not parse as a record.
pub(crate) fn not_a_record(path: &Path, n: usize, e: &serde_json::Error) -> PluginError {
    PluginError::malformed_line(path, n, None, format!("not a Gemini CLI record ({e})"))
}

/// Message `i` of the list `field` of line `n`: a record with a string id.
pub(crate) fn list_message(
    path: &Path,
    n: usize,
    field: &str,
    i: usize,
    m: &Value,
) -> Result<(String, MessageBody), PluginError> {
    let bad = |e: String| PluginError::malformed_line(path, n, Some(&format!("{field}[{i}]")), e);
    let record = LineIn::deserialize(m).map_err(|e| bad(e.to_string()))?;
    record
        .into_message()
        .map_err(|_| bad("a message without a string id".into()))
}

/// Loads a session from its bytes (`path` only names it in errors).
pub(crate) fn load_bytes(path: &Path, bytes: &[u8]) -> Result<Loaded, PluginError> {
    if bytes.is_empty() {
        return Err(PluginError::Malformed {
            file: path.to_owned(),
            line: None,
            field: None,
            message: "the file is empty (Gemini CLI cannot load it and deletes it)".into(),
        });
    }
    if let Some(loaded) = legacy(bytes) {
        return Ok(loaded);
    }
    let mut meta = Map::new();
    let mut messages = Messages::default();
    let mut rest = bytes;
    let mut n = 0;
    while !rest.is_empty() {
        n += 1;
        let (line, tail) = match rest.iter().position(|&b| b == b'\n') {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => return Err(torn(path, n)),
        };
        rest = tail;
        apply_line(path, n, line, &mut meta, &mut messages)?;
    }
    loaded(path, meta, messages)
}

fn apply_line(
    path: &Path,
    n: usize,
    line: &[u8],
    meta: &mut Map<String, Value>,
    messages: &mut Messages,
) -> Result<(), PluginError> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Ok(());
    }
    let text = utf8(path, n, line)?;
    let record: LineIn = serde_json::from_str(text).map_err(|e| not_a_record(path, n, &e))?;
    if let Some(Value::String(id)) = &record.rewind_to {
        messages.rewind(id);
        return Ok(());
    }
    let record = match record.into_message() {
        Ok((id, body)) => {
            messages.upsert(Message { line: n, id, body });
            return Ok(());
        }
        Err(record) => record,
    };
    if let Some(Value::Object(set)) = record.set {
        for (k, v) in set {
            if k == "messages" {
                if let Value::Array(list) = &v {
                    messages.clear();
                    add_all(path, n, "$set.messages", list, messages)?;
                }
            } else {
                meta.insert(k, v);
            }
        }
    } else if record.session_id.as_ref().is_some_and(Value::is_string)
        && record.project_hash.as_ref().is_some_and(Value::is_string)
    {
        if let Some(Value::Array(list)) = &record.messages {
            add_all(path, n, "messages", list, messages)?;
        }
        let members = [
            ("sessionId", record.session_id),
            ("projectHash", record.project_hash),
            ("startTime", record.start_time),
            ("lastUpdated", record.last_updated),
            ("kind", record.meta_kind),
            (MARKER_KEY, record.marker),
        ];
        for (k, v) in members {
            if let Some(v) = v {
                meta.insert(k.to_owned(), v);
            }
        }
    }
    // Any other object is a record of a kind the CLI does not know either: it skips it.
    Ok(())
}

fn add_all(
    path: &Path,
    n: usize,
    field: &str,
    list: &[Value],
    messages: &mut Messages,
) -> Result<(), PluginError> {
    for (i, m) in list.iter().enumerate() {
        let (id, body) = list_message(path, n, field, i, m)?;
        messages.upsert(Message { line: n, id, body });
    }
    Ok(())
}

/// The record of message `id` as line `line` of the file holds it, whole (every member), for
/// writing it again.
pub(crate) fn raw_message(
    path: &Path,
    line: usize,
    id: &str,
) -> Result<Map<String, Value>, PluginError> {
    use std::io::BufRead as _;
    let io = |e: std::io::Error| PluginError::io(path, &e);
    // Lines up to this one are read and passed over; a legacy record (its messages all on "line
    // 1", which is no JSON of its own) is parsed whole.
    let mut reader = std::io::BufReader::new(std::fs::File::open(path).map_err(io)?);
    let mut text = Vec::new();
    for _ in 0..line {
        text.clear();
        reader.read_until(b'\n', &mut text).map_err(io)?;
    }
    let value: Value = match serde_json::from_slice(&text) {
        Ok(v) => v,
        Err(_) => {
            let bytes = std::fs::read(path).map_err(io)?;
            serde_json::from_slice(&bytes)
                .map_err(|e| PluginError::malformed_line(path, line, None, e.to_string()))?
        }
    };
    let find = |list: Option<&Value>| {
        list.and_then(Value::as_array)?
            .iter()
            .rev()
            .find(|m| m.get("id").and_then(Value::as_str) == Some(id))
            .and_then(Value::as_object)
            .cloned()
    };
    match value {
        Value::Object(m) if m.get("id").and_then(Value::as_str) == Some(id) => Ok(m),
        v => find(v.get("$set").and_then(|s| s.get("messages")))
            .or_else(|| find(v.get("messages")))
            .ok_or_else(|| {
                PluginError::malformed_line(path, line, Some(id), "the message is not on this line")
            }),
    }
}

/// A legacy session: the whole file is one JSON `ConversationRecord` spread over several lines
/// (a record on one line is read by the line rules, as the CLI does).
fn legacy(bytes: &[u8]) -> Option<Loaded> {
    let first_line = bytes.split(|&b| b == b'\n').next()?;
    if serde_json::from_slice::<Value>(first_line).is_ok() {
        return None;
    }
    let Value::Object(mut record) = serde_json::from_slice::<Value>(bytes).ok()? else {
        return None;
    };
    if !record.get("sessionId").is_some_and(Value::is_string) {
        return None;
    }
    let mut messages = Messages::default();
    if let Some(Value::Array(list)) = record.remove("messages") {
        for m in &list {
            let Ok(line) = LineIn::deserialize(m) else {
                continue;
            };
            if let Ok((id, body)) = line.into_message() {
                messages.upsert(Message { line: 1, id, body });
            }
        }
    }
    Some(Loaded {
        meta: record,
        messages: messages.into_vec(),
    })
}

#[cfg(test)]
mod tests {
    use handoff_live::session_files::{has_extension, session_files};

    use super::super::chat::{index_spilling_past, Chat};
    use super::*;

    const NAME: &str = "/s/session-x.jsonl";

    /// A read as text: its metadata, each message's line and id, and the transcript it reads as
    /// (or the error, `folder` shown as `/s`).
    fn shown(chat: Result<Chat, PluginError>, path: &Path, folder: &Path) -> String {
        let read = |chat: Chat| -> Result<String, PluginError> {
            let meta = format!("{:?}", chat.meta);
            let lines: Vec<(usize, String)> = chat
                .messages(path)?
                .into_iter()
                .map(|m| (m.line, m.id))
                .collect();
            let read = super::super::read::transcript(path, &chat, None);
            Ok(format!("{meta}\n{lines:?}\n{read:?}"))
        };
        let shown = match chat.and_then(read) {
            Ok(shown) => shown,
            Err(e) => format!("error: {e}"),
        };
        shown.replace(&*folder.to_string_lossy(), "/s")
    }

    /// The file at `path` read in two passes (its ids spilled past 0, 3 and the default), as it
    /// is read loaded whole (`load_bytes`).
    fn assert_two_passes_read_as_whole(path: &Path, folder: &Path) {
        let bytes = std::fs::read(path).unwrap();
        let whole = shown(load_bytes(path, &bytes).map(Chat::held), path, folder);
        for spill_after in [0, 3, usize::MAX] {
            assert_eq!(
                shown(index_spilling_past(path, spill_after), path, folder),
                whole,
                "{} spilled past {spill_after}",
                path.display()
            );
        }
    }

    /// `text` loaded whole (`load_bytes`); and checks that the two passes of [`index`] read a
    /// file of it alike.
    fn load_str(text: &str) -> Result<Loaded, PluginError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("session-x.jsonl");
        std::fs::write(&path, text).unwrap();
        assert_two_passes_read_as_whole(&path, dir.path());
        load_bytes(Path::new(NAME), text.as_bytes())
    }

    /// Every Gemini CLI chat the tests, the live tier and the corpus hold reads in two passes
    /// as it reads loaded whole.
    #[test]
    fn two_passes_read_as_a_load_whole() {
        let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/samples");
        let files = session_files(&samples, "gemini-cli", |p| {
            (has_extension(p, "jsonl") || has_extension(p, "json"))
                && p.file_name().is_some_and(|n| n != "projects.json")
        });
        assert!(files.len() >= 5, "{files:?}");
        for path in &files {
            assert_two_passes_read_as_whole(path, Path::new("/nowhere"));
        }
    }

    const META: &str =
        r#"{"sessionId":"s1","projectHash":"h","startTime":"t","lastUpdated":"t","kind":"main"}"#;

    fn ids(l: &Loaded) -> Vec<&str> {
        l.messages.iter().map(Message::id).collect()
    }

    #[test]
    fn replacement_keeps_the_first_position() {
        let text = format!(
            "{META}\n{}\n{}\n{}\n",
            r#"{"id":"a","type":"user","content":"1"}"#,
            r#"{"id":"b","type":"user","content":"2"}"#,
            r#"{"id":"a","type":"user","content":"3"}"#
        );
        let l = load_str(&text).unwrap();
        assert_eq!(ids(&l), ["a", "b"]);
        assert!(
            matches!(&l.messages[0].body.content, super::super::record_types::ContentIn::Text(t) if t == "3")
        );
        assert_eq!(l.messages[0].line, 4);
    }

    #[test]
    fn rewind_cuts_and_an_unknown_id_clears() {
        let m = |id: &str| format!(r#"{{"id":"{id}","type":"user","content":"x"}}"#);
        let text = format!(
            "{META}\n{}\n{}\n{}\n{}\n{}\n",
            m("a"),
            m("b"),
            m("c"),
            r#"{"$rewindTo":"b"}"#,
            m("b")
        );
        assert_eq!(ids(&load_str(&text).unwrap()), ["a", "b"]);
        let text = format!(
            "{META}\n{}\n{}\n{}\n",
            m("a"),
            r#"{"$rewindTo":"zz"}"#,
            m("c")
        );
        assert_eq!(ids(&load_str(&text).unwrap()), ["c"]);
    }

    #[test]
    fn set_merges_metadata_and_checkpoints_messages() {
        let text = format!(
            "{META}\n{}\n{}\n{}\n",
            r#"{"id":"a","type":"user","content":"x"}"#,
            r#"{"$set":{"summary":"s","messages":[{"id":"z","type":"user","content":"y"}]}}"#,
            r#"{"$set":{"lastUpdated":"later"}}"#
        );
        let l = load_str(&text).unwrap();
        assert_eq!(ids(&l), ["z"]);
        assert_eq!(l.meta["summary"], "s");
        assert_eq!(l.meta["lastUpdated"], "later");
        assert_eq!(l.meta["sessionId"], "s1");
    }

    #[test]
    fn bad_lines_are_named() {
        let cases = [
            (format!("{META}\n{{\"id\":\n"), 2, "EOF"),
            (format!("{META}\n\"x\"\n"), 2, "not a Gemini CLI record"),
            (format!("{META}\n{{\"id\":\"a\"}}"), 2, "newline"),
            ("{\"id\":\"a\"}\n".to_owned(), 1, "metadata"),
        ];
        for (text, line, what) in cases {
            let e = load_str(&text).err().expect("an error").to_string();
            assert!(e.contains(&format!("session-x.jsonl:{line}")), "{e}");
            assert!(e.contains(what), "{e}");
        }
        assert!(load_str("")
            .err()
            .expect("an error")
            .to_string()
            .contains("empty"));
    }

    #[test]
    fn blank_lines_and_records_of_unknown_kinds_are_skipped_as_the_cli_skips_them() {
        // Differential case gemini-cli/two-turns/{blank-line,unknown-kinds}.
        let text = format!(
            "{META}\n\n{}\n  \n{}\n{}\n",
            r#"{"id":"a","type":"user","content":"x"}"#,
            r#"{"x-future-record":{"n":1}}"#,
            r#"{"id":"b","type":"gemini","content":"y"}"#
        );
        assert_eq!(ids(&load_str(&text).unwrap()), ["a", "b"]);
    }

    /// Line ends the line-at-a-time load must treat as the whole one does (`load_str` compares).
    #[test]
    fn crlf_a_lone_metadata_line_and_a_legacy_first_line_load_alike() {
        let user = r#"{"id":"a","type":"user","content":"1"}"#;
        assert_eq!(
            ids(&load_str(&format!("{META}\r\n{user}\r\n")).unwrap()),
            ["a"]
        );
        assert!(load_str(META).is_err(), "a torn first line");
        assert!(load_str(&format!("{META}\n")).unwrap().messages.is_empty());
        assert!(
            load_str("{\n\"sessionId\": 1\n}\n").is_err(),
            "not a record"
        );
    }

    #[test]
    fn a_legacy_record_reads_whole() {
        let text = "{\n  \"sessionId\": \"s\",\n  \"projectHash\": \"h\",\n  \"messages\": [\n    {\"id\": \"m\", \"type\": \"user\", \"content\": \"hi\"}\n  ]\n}";
        let l = load_str(text).unwrap();
        assert_eq!(l.meta["sessionId"], "s");
        assert_eq!(ids(&l), ["m"]);
    }
}
