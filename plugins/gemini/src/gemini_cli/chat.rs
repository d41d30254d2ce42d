//! A session file read the way Gemini CLI 0.61.0's `loadConversationRecord` reads it, but
//! strictly, in two passes, so that a read holds where each live message is rather than the
//! messages (issue 30): about 24 bytes a live message, whatever the messages hold.
//!
//! Lines are classified in the CLI's order: `{"$rewindTo"}`, a message (string `id`), `{"$set"}`,
//! a metadata line (string `sessionId` and `projectHash`). A later message with the same id
//! replaces the earlier one in place; `$rewindTo` deletes that message and everything after it (all
//! messages for an unknown id); `$set.messages` is a checkpoint that replaces all messages. A file
//! whose first line is no JSON is read as one legacy JSON record when it is one. Blank lines, and
//! JSON objects of none of these kinds, are skipped, as the CLI skips them (nothing of the
//! conversation is in them). Unlike the CLI, which also skips what it cannot parse, every other
//! line must be a whole JSON object: anything else is `PluginError::Malformed` naming the file and
//! the 1-based line.
//!
//! The first pass ([`index`]) applies these rules to positions: each live message is a [`Slot`] (its current
//! version's line, by offset and number, and its index when that line holds a list), and each id
//! a digest in a [`SpillMap`] pointing at its slot. A `SpillMap` cannot forget an id, so a rewind
//! or a checkpoint cuts the slots and starts a new epoch: an id's entry counts only while its slot
//! still holds the epoch the entry was made in (a slot made again after a cut is newer).
//!
//! The first pass parses of a line only what says what it is (its id, `$rewindTo`, `$set`, the
//! metadata members); a message is parsed when the second pass ([`Chat::each_message`]) reads
//! its live version. So a malformed version that a later line replaced or rewound away (which
//! the CLI never sends) no longer stops the read, as it did while the file was loaded whole; a
//! malformed live version still does, naming its line.
//!
//! A legacy file (one JSON record over many lines) is loaded whole ([`records::legacy`]) and
//! held.

use std::fs::File;
use std::io::{BufRead as _, BufReader};
use std::path::Path;

use handoff_sdk::marker::{OwnershipMarker, MARKER_KEY};
use handoff_sdk::serde_json::{self, Map, Value};
use handoff_sdk::spill::{spill_ids, SpillMap};
use handoff_sdk::{IdSeeds, PluginError};
use serde::Deserialize;

use super::record_types::{LineIn, MessageBody};
use super::records::{self, Message};

/// A session file: its merged metadata and where its live messages are.
pub(crate) struct Chat {
    /// The merged metadata (first line, later metadata lines and every `$set`).
    pub meta: Map<String, Value>,
    live: Live,
}

enum Live {
    /// The live messages' current versions, in the CLI's order.
    Indexed(Vec<Slot>),
    /// A legacy record's messages.
    Held(Vec<Message>),
}

/// Where a live message's current version is.
#[derive(Clone, Copy)]
struct Slot {
    /// The byte offset of its line.
    offset: u64,
    /// The 1-based line number.
    line: u32,
    /// The epoch the slot was made in (see the module's doc).
    epoch: u32,
    /// Its index in the line's list, for a list line.
    item: u32,
    list: List,
}

/// Which list of its line a message is in.
#[derive(Clone, Copy, PartialEq, Eq)]
enum List {
    /// The line is the message.
    None,
    /// `$set.messages`.
    Set,
    /// A metadata line's `messages`.
    Meta,
}

impl List {
    /// The list as errors name it.
    fn field(self) -> &'static str {
        match self {
            List::Set => "$set.messages",
            _ => "messages",
        }
    }
}

/// What the first pass reads of a line: what says which kind of line it is, and the members a
/// `$set` or a metadata line merges. Members of a message are not parsed here.
#[derive(Deserialize)]
struct LineKind {
    #[serde(default, rename = "$rewindTo")]
    rewind_to: Option<Value>,
    #[serde(default, rename = "$set")]
    set: Option<Value>,
    #[serde(default)]
    id: Option<Value>,
    #[serde(default, rename = "sessionId")]
    session_id: Option<Value>,
    #[serde(default, rename = "projectHash")]
    project_hash: Option<Value>,
    #[serde(default, rename = "startTime")]
    start_time: Option<Value>,
    #[serde(default, rename = "lastUpdated")]
    last_updated: Option<Value>,
    #[serde(default, rename = "kind")]
    meta_kind: Option<Value>,
    #[serde(default, rename = "x-handoff")]
    marker: Option<Value>,
    #[serde(default)]
    messages: Option<Value>,
}

impl Chat {
    /// A session loaded whole.
    pub fn held(loaded: records::Loaded) -> Self {
        Chat {
            meta: loaded.meta,
            live: Live::Held(loaded.messages),
        }
    }

    pub fn session_id(&self) -> Option<&str> {
        self.meta.get("sessionId").and_then(Value::as_str)
    }

    pub fn marker(&self) -> Option<OwnershipMarker> {
        self.meta
            .get(MARKER_KEY)
            .and_then(|m| serde_json::from_value(m.clone()).ok())
    }

    pub fn is_subagent(&self) -> bool {
        self.meta.get("kind").and_then(Value::as_str) == Some("subagent")
    }

    /// Hands each live message, read from its current version, to `each` in the CLI's order,
    /// until it returns `false`. `path` is the file [`index`] read.
    pub fn each_message(
        &self,
        path: &Path,
        each: &mut dyn FnMut(Message) -> Result<bool, PluginError>,
    ) -> Result<(), PluginError> {
        match &self.live {
            Live::Held(messages) => {
                for message in messages {
                    if !each(message.clone())? {
                        break;
                    }
                }
            }
            Live::Indexed(slots) => {
                let mut lines = Lines::open(path)?;
                for slot in slots {
                    if !each(lines.message(slot)?)? {
                        break;
                    }
                }
            }
        }
        Ok(())
    }

    /// The last live message, read alone.
    pub fn last_message(&self, path: &Path) -> Result<Option<Message>, PluginError> {
        match &self.live {
            Live::Held(messages) => Ok(messages.last().cloned()),
            Live::Indexed(slots) => slots
                .last()
                .map(|slot| Lines::open(path)?.message(slot))
                .transpose(),
        }
    }

    /// Every live message (a whole read, for the tests).
    #[cfg(test)]
    pub fn messages(&self, path: &Path) -> Result<Vec<Message>, PluginError> {
        let mut all = Vec::new();
        self.each_message(path, &mut |m| {
            all.push(m);
            Ok(true)
        })?;
        Ok(all)
    }
}

/// The first pass over the session file at `path`: its metadata and where its live messages
/// are. An empty file, or one whose first line is not JSON (a legacy record over many lines), is
/// loaded whole.
pub(crate) fn index(path: &Path) -> Result<Chat, PluginError> {
    index_spilling_past(path, spill_ids())
}

/// [`index`] with the id index written out past `spill_after` ids (the tests: 0 and 3).
pub(crate) fn index_spilling_past(path: &Path, spill_after: usize) -> Result<Chat, PluginError> {
    let io = |e: std::io::Error| PluginError::io(path, &e);
    let file = File::open(path).map_err(io)?;
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let mut line = Vec::new();
    reader.read_until(b'\n', &mut line).map_err(io)?;
    let first = line.strip_suffix(b"\n").unwrap_or(&line);
    if line.is_empty() || serde_json::from_slice::<serde::de::IgnoredAny>(first).is_err() {
        let bytes = std::fs::read(path).map_err(io)?;
        if bytes.is_empty() {
            return Err(empty(path));
        }
        if let Some(loaded) = records::legacy(&bytes) {
            return Ok(Chat::held(loaded));
        }
        // Any other file is read by the line rules (a blank first line is passed over, a line
        // that is no record named).
    }
    let mut indexer = Indexer {
        path,
        meta: Map::new(),
        slots: Vec::new(),
        ids: SpillMap::with_threshold(spill_after),
        seeds: IdSeeds::default(),
        epoch: 0,
    };
    let (mut offset, mut n) = (0u64, 0usize);
    while !line.is_empty() {
        n += 1;
        let length = line.len() as u64;
        if line.pop() != Some(b'\n') {
            return Err(torn(path, n));
        }
        indexer.apply(offset, n, &line)?;
        offset += length;
        line.clear();
        reader.read_until(b'\n', &mut line).map_err(io)?;
    }
    check_meta(path, &indexer.meta)?;
    Ok(Chat {
        meta: indexer.meta,
        live: Live::Indexed(indexer.slots),
    })
}

struct Indexer<'p> {
    path: &'p Path,
    meta: Map<String, Value>,
    slots: Vec<Slot>,
    /// An id's digest → its slot's index (high 32 bits) and the epoch it was made in (low).
    ids: SpillMap<u64>,
    seeds: IdSeeds,
    epoch: u32,
}

impl Indexer<'_> {
    fn apply(&mut self, offset: u64, n: usize, line: &[u8]) -> Result<(), PluginError> {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.iter().all(u8::is_ascii_whitespace) {
            return Ok(());
        }
        let text = utf8(self.path, n, line)?;
        // A line that is no record is said as the whole record's parse says it.
        let kind: LineKind = serde_json::from_str(text).map_err(|e| {
            let e = serde_json::from_str::<LineIn>(text).err().unwrap_or(e);
            not_a_record(self.path, n, &e)
        })?;
        let at = |item: usize, list: List| Slot {
            offset,
            line: u32::try_from(n).unwrap_or(u32::MAX),
            epoch: 0,
            item: u32::try_from(item).unwrap_or(u32::MAX),
            list,
        };
        if let Some(Value::String(id)) = &kind.rewind_to {
            self.rewind(id);
            return Ok(());
        }
        if let Some(Value::String(id)) = &kind.id {
            self.upsert(id, at(0, List::None));
            return Ok(());
        }
        if let Some(Value::Object(set)) = kind.set {
            for (k, v) in set {
                if k == "messages" {
                    if let Value::Array(list) = &v {
                        self.cut(0);
                        self.add_all(n, list, |i| at(i, List::Set))?;
                    }
                } else {
                    self.meta.insert(k, v);
                }
            }
        } else if kind.session_id.as_ref().is_some_and(Value::is_string)
            && kind.project_hash.as_ref().is_some_and(Value::is_string)
        {
            if let Some(Value::Array(list)) = &kind.messages {
                self.add_all(n, list, |i| at(i, List::Meta))?;
            }
            let members = [
                ("sessionId", kind.session_id),
                ("projectHash", kind.project_hash),
                ("startTime", kind.start_time),
                ("lastUpdated", kind.last_updated),
                ("kind", kind.meta_kind),
                (MARKER_KEY, kind.marker),
            ];
            for (k, v) in members {
                if let Some(v) = v {
                    self.meta.insert(k.to_owned(), v);
                }
            }
        }
        // Any other object is a record of a kind the CLI does not know either: it skips it.
        Ok(())
    }

    /// The messages of a list line, each checked as the whole load checks it.
    fn add_all(
        &mut self,
        n: usize,
        list: &[Value],
        at: impl Fn(usize) -> Slot,
    ) -> Result<(), PluginError> {
        for (i, m) in list.iter().enumerate() {
            let slot = at(i);
            let (id, _) = list_message(self.path, n, slot.list.field(), i, m)?;
            self.upsert(&id, slot);
        }
        Ok(())
    }

    /// The slot of a live message `id`.
    fn find(&self, id: &str) -> Option<usize> {
        let entry = self.ids.get(&self.seeds.digest(id))?;
        let (i, epoch) = ((entry >> 32) as usize, entry as u32);
        self.slots.get(i).filter(|s| s.epoch == epoch).map(|_| i)
    }

    fn upsert(&mut self, id: &str, mut slot: Slot) {
        if let Some(i) = self.find(id) {
            slot.epoch = self.slots[i].epoch;
            self.slots[i] = slot;
            return;
        }
        slot.epoch = self.epoch;
        let i = self.slots.len() as u64;
        self.ids
            .insert(self.seeds.digest(id), (i << 32) | u64::from(self.epoch));
        self.slots.push(slot);
    }

    /// `$rewindTo`: that message and every later one go (all of them for an unknown id).
    fn rewind(&mut self, id: &str) {
        self.cut(self.find(id).unwrap_or(0));
    }

    /// The live messages from slot `at` on go, and a new epoch begins.
    fn cut(&mut self, at: usize) {
        self.slots.truncate(at);
        self.epoch += 1;
    }
}

/// The second pass: lines read back by offset (forward without a seek in the usual order), the
/// last list line parsed held while its messages are read.
struct Lines<'p> {
    path: &'p Path,
    reader: BufReader<File>,
    /// The offset the reader is at.
    at: u64,
    line: Vec<u8>,
    /// The offset of the list line last parsed, and its list.
    list: Option<(u64, Vec<Value>)>,
}

impl<'p> Lines<'p> {
    fn open(path: &'p Path) -> Result<Self, PluginError> {
        let file = File::open(path).map_err(|e| PluginError::io(path, &e))?;
        Ok(Lines {
            path,
            reader: BufReader::with_capacity(1 << 16, file),
            at: 0,
            line: Vec::new(),
            list: None,
        })
    }

    /// The text of the line at `offset`, without its line end.
    fn read(&mut self, slot: &Slot) -> Result<&str, PluginError> {
        let io = |e: std::io::Error| PluginError::io(self.path, &e);
        if slot.offset != self.at {
            let by = i64::try_from(slot.offset).unwrap_or(i64::MAX)
                - i64::try_from(self.at).unwrap_or(i64::MAX);
            self.reader.seek_relative(by).map_err(io)?;
            self.at = slot.offset;
        }
        self.line.clear();
        let read = self.reader.read_until(b'\n', &mut self.line).map_err(io)?;
        self.at += read as u64;
        let n = slot.line as usize;
        let Some(line) = self.line.strip_suffix(b"\n") else {
            return Err(changed(self.path, n));
        };
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        utf8(self.path, n, line)
    }

    fn message(&mut self, slot: &Slot) -> Result<Message, PluginError> {
        let (path, n) = (self.path, slot.line as usize);
        if slot.list == List::None {
            let record: LineIn =
                serde_json::from_str(self.read(slot)?).map_err(|e| not_a_record(path, n, &e))?;
            let (id, body) = record.into_message().ok_or_else(|| changed(path, n))?;
            return Ok(Message { line: n, id, body });
        }
        if self.list.as_ref().is_none_or(|(at, _)| *at != slot.offset) {
            let mut value: Value =
                serde_json::from_str(self.read(slot)?).map_err(|_| changed(path, n))?;
            let list = match slot.list {
                List::Set => value.get_mut("$set").and_then(|s| s.get_mut("messages")),
                _ => value.get_mut("messages"),
            };
            let Some(Value::Array(list)) = list.map(Value::take) else {
                return Err(changed(path, n));
            };
            self.list = Some((slot.offset, list));
        }
        let item = slot.item as usize;
        let m = self
            .list
            .as_ref()
            .and_then(|(_, list)| list.get(item))
            .ok_or_else(|| changed(path, n))?;
        let (id, body) = list_message(path, n, slot.list.field(), item, m)?;
        Ok(Message { line: n, id, body })
    }
}

/// The error of a last line without its newline.
fn torn(path: &Path, n: usize) -> PluginError {
    PluginError::malformed_line(path, n, None, "the last line has no newline (a torn write)")
}

/// A session's metadata must have come from a metadata line (string sessionId and projectHash).
fn check_meta(path: &Path, meta: &Map<String, Value>) -> Result<(), PluginError> {
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

/// A line's text; a line not UTF-8 is malformed.
fn utf8<'l>(path: &Path, n: usize, line: &'l [u8]) -> Result<&'l str, PluginError> {
    std::str::from_utf8(line)
        .map_err(|e| PluginError::malformed_line(path, n, None, format!("not UTF-8 ({e})")))
}

/// A line that does not parse as a record.
fn not_a_record(path: &Path, n: usize, e: &serde_json::Error) -> PluginError {
    PluginError::malformed_line(path, n, None, format!("not a Gemini CLI record ({e})"))
}

/// Message `i` of the list `field` of line `n`: a record with a string id.
fn list_message(
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
        .ok_or_else(|| bad("a message without a string id".into()))
}

/// The error of an empty file.
fn empty(path: &Path) -> PluginError {
    PluginError::Malformed {
        file: path.to_owned(),
        line: None,
        field: None,
        message: "the file is empty (Gemini CLI cannot load it and deletes it)".into(),
    }
}

/// A line the second pass finds other than the first pass read it.
fn changed(path: &Path, n: usize) -> PluginError {
    PluginError::malformed_line(
        path,
        n,
        None,
        "the file changed while it was read (this line is not what it was)",
    )
}

#[cfg(test)]
mod tests {
    use handoff_live::session_files::{assert_alike_spilled_or_not, has_extension, session_files};

    use super::super::records::{Loaded, Message};
    use super::*;

    /// A read as text: its metadata, each message's line and id, and the transcript it reads as
    /// (or the error).
    fn shown(chat: Result<Chat, PluginError>, path: &Path) -> String {
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
        match chat.and_then(read) {
            Ok(shown) => shown,
            Err(e) => format!("error: {e}"),
        }
    }

    /// The file at `path` reads alike with its ids spilled past 0 and 3 and kept in memory.
    fn assert_reads_alike_spilled_or_not(path: &Path) {
        assert_alike_spilled_or_not(&[path.to_owned()], &[0, 3], |path, spill_after| {
            shown(index_spilling_past(path, spill_after), path)
        });
    }

    /// A file of `text`, read (spilled or not alike): its metadata and live messages.
    fn load_str(text: &str) -> Result<Loaded, PluginError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("session-x.jsonl");
        std::fs::write(&path, text).unwrap();
        assert_reads_alike_spilled_or_not(&path);
        let chat = index(&path)?;
        Ok(Loaded {
            messages: chat.messages(&path)?,
            meta: chat.meta,
        })
    }

    /// Every Gemini CLI chat the tests, the live tier and the corpus hold reads alike with its
    /// ids spilled or in memory.
    #[test]
    fn every_chat_reads_alike_spilled_or_not() {
        let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/samples");
        let files = session_files(&samples, "gemini-cli", |p| {
            (has_extension(p, "jsonl") || has_extension(p, "json"))
                && p.file_name().is_some_and(|n| n != "projects.json")
        });
        assert!(files.len() >= 5, "{files:?}");
        for path in &files {
            assert_reads_alike_spilled_or_not(path);
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

    /// An id cut by a rewind or a checkpoint names a new message after the cut, wherever its old
    /// slot was (the epochs of the module's doc), also with its digest in a file.
    #[test]
    fn an_id_cut_away_is_a_new_message_after_the_cut() {
        let m =
            |id: &str, text: &str| format!(r#"{{"id":"{id}","type":"user","content":"{text}"}}"#);
        let text = format!(
            "{META}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n",
            m("a", "1"),
            m("b", "2"),
            r#"{"$rewindTo":"a"}"#,
            m("c", "3"),
            m("b", "4"),
            m("a", "5"),
            m("c", "6"),
        );
        let l = load_str(&text).unwrap();
        assert_eq!(ids(&l), ["c", "b", "a"]);
        let lines: Vec<usize> = l.messages.iter().map(|m| m.line).collect();
        assert_eq!(lines, [8, 6, 7], "c replaced in place by its later version");
        let text = format!(
            "{META}\n{}\n{}\n{}\n{}\n",
            m("a", "1"),
            r#"{"$set":{"messages":[{"id":"z","type":"user","content":"y"}]}}"#,
            m("a", "2"),
            m("z", "3"),
        );
        let l = load_str(&text).unwrap();
        assert_eq!(ids(&l), ["z", "a"]);
        let lines: Vec<usize> = l.messages.iter().map(|m| m.line).collect();
        assert_eq!(lines, [5, 4], "z of the checkpoint replaced by line 5");
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
