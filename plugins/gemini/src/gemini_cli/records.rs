//! Beside the line rules of [`super::chat`]: a message as read, a legacy record (one JSON record
//! over many lines, loaded whole), a session file's header, and a message's record read again
//! whole for an append.

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

/// A legacy record, loaded whole.
#[derive(Default)]
pub(crate) struct Loaded {
    /// The merged metadata (first line, later metadata lines and every `$set`).
    pub meta: Map<String, Value>,
    /// The live messages, in the CLI's order.
    pub messages: Vec<Message>,
}

/// A legacy record's messages: a later one of the same id replaces the earlier in place.
#[derive(Default)]
struct Messages {
    slots: Vec<Message>,
    index: HashMap<String, usize>,
}

impl Messages {
    fn upsert(&mut self, message: Message) {
        let id = message.id().to_owned();
        match self.index.get(&id) {
            Some(&i) => self.slots[i] = message,
            None => {
                self.index.insert(id, self.slots.len());
                self.slots.push(message);
            }
        }
    }

    fn into_vec(self) -> Vec<Message> {
        self.slots
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
pub(crate) fn legacy(bytes: &[u8]) -> Option<Loaded> {
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
            if let Some((id, body)) = line.into_message() {
                messages.upsert(Message { line: 1, id, body });
            }
        }
    }
    Some(Loaded {
        meta: record,
        messages: messages.into_vec(),
    })
}
