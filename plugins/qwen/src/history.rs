//! The history Qwen Code 0.24.4 sends when it resumes a chat file
//! (`SessionApiHistoryAccumulator`: what each record of the chain adds to it, then
//! `repairOrphanedToolUseTurns`), built as the chain is read and handed out in blocks
//! ([`each_block`]): a block is final once nothing that comes later can change it.
//!
//! What can change an entry already made: a slash command's result takes the last prompt back
//! out, a mid-turn message joins the last user content, and the repair moves and makes up the
//! results of a model content's calls in the user contents that follow it, up to the next model
//! content. So the entries since the last model content are held (with the one before the last,
//! which a mid-turn message joins once the last was taken back), and a compression's history,
//! which replaces all before it, is found before the read starts: the read builds from the last
//! one on, and only checks the records before it.

use std::path::Path;

use handoff_sdk::serde_json::{self, Map, Value};
use handoff_sdk::PluginError;

use crate::chain::{Index, Lines, Record};

/// One content of the history the CLI sends, with the record it came from.
pub(crate) struct Entry {
    /// The record's uuid (for a content of a compression's history: `<its uuid>/<index>`).
    pub id: String,
    /// The record's line.
    pub line: usize,
    /// The record's `timestamp` (the latest of its fragments').
    pub timestamp: Option<String>,
    /// The record's `model`.
    pub model: Option<String>,
    /// The record's `handoff` member: what handoff keeps that Qwen Code has no field for.
    pub extras: Option<Value>,
    /// The Gemini `Content`: `{role, parts}`.
    pub content: Value,
    /// Per part, where a part came from when it is not this record's (a result the CLI moved up
    /// into this content, or one it made up); shorter than the parts (or empty) where the rest
    /// are the record's own.
    pub part_origins: Vec<Option<PartOrigin>>,
}

/// The record a part of another content came from (see [`repair_unanswered`]).
#[derive(Clone)]
pub(crate) struct PartOrigin {
    /// The id of its event.
    pub id: String,
    /// Its record's `timestamp`.
    pub timestamp: Option<String>,
    /// Its record's `handoff` member.
    pub extras: Option<Value>,
}

impl Entry {
    /// Where part `k` came from: `None` for the record's own.
    pub fn part_origin(&self, k: usize) -> Option<&PartOrigin> {
        self.part_origins.get(k).and_then(Option::as_ref)
    }

    /// Part `k`'s origin, the record's own (its id, `#part<k>` after the first) when it has
    /// none of another.
    fn origin_of(&self, k: usize) -> PartOrigin {
        self.part_origin(k).cloned().unwrap_or_else(|| PartOrigin {
            id: match k {
                0 => self.id.clone(),
                k => format!("{}#part{k}", self.id),
            },
            timestamp: self.timestamp.clone(),
            extras: self.extras.clone(),
        })
    }

    /// `part_origins`, as long as the parts.
    fn origins_mut(&mut self) -> &mut Vec<Option<PartOrigin>> {
        let len = parts_of(self).len();
        if self.part_origins.len() < len {
            self.part_origins.resize(len, None);
        }
        &mut self.part_origins
    }

    /// Takes part `k` out, with its origin; the record's own parts after it keep the identity
    /// they had (so no two events of the history share an id).
    fn remove_part(&mut self, k: usize) {
        let len = parts_of(self).len();
        let kept: Vec<Option<PartOrigin>> = (0..len)
            .map(|p| match p > k {
                true => Some(self.origin_of(p)),
                false => self.part_origin(p).cloned(),
            })
            .collect();
        self.part_origins = kept;
        self.part_origins.remove(k);
        if let Some(parts) = self.content["parts"].as_array_mut() {
            parts.remove(k);
        }
    }
}

/// Hands the history Qwen Code sends when it resumes the file (indexed as `index`) to `block`,
/// a block at a time in order, until it returns `false`. `repair`: with the results the CLI
/// makes up for calls that have none (what it sends), or as the records are (what an append
/// goes on from).
pub(crate) fn each_block(
    path: &Path,
    index: &Index,
    repair: bool,
    block: &mut dyn FnMut(Vec<Entry>) -> Result<bool, PluginError>,
) -> Result<(), PluginError> {
    let start = index.start_over_at();
    let mut lines = Lines::open(path)?;
    let mut held = Held {
        entries: Vec::new(),
        repair,
        block,
        open: true,
    };
    // The last record that added to the history (a slash command's result may take its prompt
    // back out).
    let mut last_added: Option<Added> = None;
    for (position, link) in index.links().enumerate() {
        if !held.open {
            return Ok(());
        }
        let fragments = link.read(&mut lines)?;
        let record = &fragments[0];
        // Replaced by a later compression's history: only checked.
        let replaced = start.is_some_and(|s| position < s);
        if record.str("type") == Some("system") {
            match record.subtype() {
                Some("slash_command") if !replaced => {
                    if takes_back_prompt(record, last_added.as_ref()) {
                        held.entries.pop();
                    }
                    if last_added.as_ref().is_some_and(|a| a.user) {
                        last_added = None;
                    }
                }
                // A replaced compression's history is never looked at by the CLI, whatever
                // it holds (measured: a later one's history is sent after one that is no list).
                Some("chat_compression") if !replaced => {
                    if let Some(contents) = compressed_history(path, record)? {
                        for (k, content) in contents.iter().enumerate() {
                            held.push(Entry {
                                id: format!("{}/{k}", record.uuid()),
                                line: record.line,
                                timestamp: record.str("timestamp").map(str::to_owned),
                                model: None,
                                extras: None,
                                content: content.clone(),
                                part_origins: Vec::new(),
                            })?;
                        }
                        last_added = None;
                    }
                }
                _ => {}
            }
            continue;
        }
        let Some(content) = joined_message(path, &fragments)? else {
            continue;
        };
        if replaced || record.subtype() == Some("realtime_message") {
            continue;
        }
        if record.subtype() == Some("mid_turn_user_message") {
            if let Some(previous) = held
                .entries
                .last_mut()
                .filter(|e| e.content["role"] == "user")
            {
                if let (Some(into), Some(more)) = (
                    previous.content["parts"].as_array_mut(),
                    content["parts"].as_array(),
                ) {
                    into.extend(more.iter().cloned());
                    last_added = Some(Added::of(record));
                    continue;
                }
            }
        }
        held.push(Entry {
            id: record.uuid().to_owned(),
            line: record.line,
            timestamp: fragments
                .iter()
                .filter_map(|r| r.str("timestamp"))
                .max()
                .map(str::to_owned),
            model: fragments
                .iter()
                .find_map(|r| r.str("model"))
                .map(str::to_owned),
            extras: record.value.get(handoff_sdk::EXTRAS_KEY).cloned(),
            content,
            part_origins: Vec::new(),
        })?;
        last_added = Some(Added::of(record));
    }
    held.flush(held.entries.len())
}

/// The entries not handed out yet, and where they go.
struct Held<'b> {
    entries: Vec<Entry>,
    repair: bool,
    block: &'b mut dyn FnMut(Vec<Entry>) -> Result<bool, PluginError>,
    open: bool,
}

impl Held<'_> {
    /// Adds `entry` to the history, handing out first what it makes final: a model content ends
    /// the repair's reach of the one before it; without a model content held, only the last
    /// entry can still change (see the module's doc).
    fn push(&mut self, entry: Entry) -> Result<(), PluginError> {
        if entry.content["role"] == "model" {
            self.flush(self.entries.len())?;
        } else if self
            .entries
            .first()
            .is_some_and(|e| e.content["role"] != "model")
        {
            self.flush(self.entries.len() - 1)?;
        }
        self.entries.push(entry);
        Ok(())
    }

    /// Hands out the first `n` entries held.
    fn flush(&mut self, n: usize) -> Result<(), PluginError> {
        if n == 0 || !self.open {
            return Ok(());
        }
        let mut out: Vec<Entry> = self.entries.drain(..n).collect();
        if self.repair {
            repair_unanswered(&mut out);
        }
        self.open = (self.block)(out)?;
        Ok(())
    }
}

/// What a slash command's result asks of the last record that added to the history.
struct Added {
    /// A `user` record.
    user: bool,
    /// The text of a prompt as typed: a plain user record whose message is one text part.
    typed: Option<Value>,
}

impl Added {
    fn of(record: &Record) -> Self {
        let message = record.value.get("message");
        let parts = message
            .and_then(|m| m.get("parts"))
            .and_then(Value::as_array);
        let plain = record.str("type") == Some("user")
            && record.subtype().is_none()
            && message.and_then(|m| m.get("role")) == Some(&Value::from("user"));
        let typed = parts
            .filter(|p| {
                plain
                    && p.len() == 1
                    && p[0].as_object().is_some_and(|o| o.len() == 1)
                    && p[0].get("text").and_then(Value::as_str).is_some()
            })
            .map(|p| p[0]["text"].clone());
        Added {
            user: record.str("type") == Some("user"),
            typed,
        }
    }
}

/// A `slash_command` result that was shown, not sent, takes back the prompt that typed it: the
/// last record added was a plain user record whose one part is exactly the command's text.
fn takes_back_prompt(record: &Record, last_added: Option<&Added>) -> bool {
    let Some(payload) = record.value.get("systemPayload") else {
        return false;
    };
    let Some(typed) = last_added.and_then(|a| a.typed.as_ref()) else {
        return false;
    };
    let shown_only = payload["phase"] == "result"
        && payload["sentToModel"] != Value::Bool(true)
        && payload["outputHistoryItems"]
            .as_array()
            .is_some_and(|items| {
                !items.is_empty() && items.iter().all(|i| i["type"] == "assistant")
            });
    shown_only && *typed == payload["rawCommand"]
}

/// A compression's history (`systemPayload.compressedHistory`), which replaces everything before
/// it; `None` when the record has none.
fn compressed_history<'r>(
    path: &Path,
    record: &'r Record,
) -> Result<Option<&'r Vec<Value>>, PluginError> {
    let compressed = record
        .value
        .get("systemPayload")
        .and_then(|p| p.get("compressedHistory"));
    let truthy = match compressed {
        None | Some(Value::Null | Value::Bool(false)) => false,
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Number(n)) => n.as_f64() != Some(0.0),
        Some(_) => true,
    };
    if !truthy {
        return Ok(None);
    }
    let Some(Value::Array(contents)) = compressed else {
        return Err(PluginError::malformed_line(
            path,
            record.line,
            Some("systemPayload.compressedHistory"),
            "not an array of contents",
        ));
    };
    Ok(Some(contents))
}

/// What Qwen Code answers a call with when its result was never recorded
/// (`ORPHAN_TOOL_USE_REPAIR_REASON`), as a failed `functionResponse`.
pub(crate) const UNRECORDED_RESULT: &str = "Tool execution result was not recorded \u{2014} likely interrupted by network failure, abort, or process exit. Treat as failure and retry if needed.";

/// `repairOrphanedToolUseTurns`, which the CLI runs on the history it resumes: after each model
/// content with calls, the user contents that follow it are its results. A call without a
/// result gets a failed one ([`UNRECORDED_RESULT`]); a result that came later than the adjacent
/// user content moves into it; a second result of one call is dropped; a user content left
/// empty goes. The new results go into the adjacent user content before its first part that is
/// no result, or, without one, in a user content of their own (which takes the model record's
/// id and time).
pub(crate) fn repair_unanswered(history: &mut Vec<Entry>) {
    let mut i = 0;
    while i < history.len() {
        if history[i].content["role"] != "model" {
            i += 1;
            continue;
        }
        let expected: Vec<(String, Value)> = parts_of(&history[i])
            .iter()
            .filter_map(|p| {
                let call = p.get("functionCall")?;
                let id = call.get("id")?.as_str().filter(|id| !id.is_empty())?;
                let name = call.get("name").cloned().unwrap_or(Value::from("unknown"));
                Some((id.to_owned(), name))
            })
            .collect();
        if expected.is_empty() {
            i += 1;
            continue;
        }
        let adjacent = i + 1;
        let mut end = adjacent;
        // (call id, content, part) of every result of an expected call, in order.
        let mut found: Vec<(String, usize, usize)> = Vec::new();
        while end < history.len() && history[end].content["role"] == "user" {
            for (k, part) in parts_of(&history[end]).iter().enumerate() {
                let id = part
                    .get("functionResponse")
                    .and_then(|r| r.get("id"))
                    .and_then(Value::as_str);
                if let Some(id) = id.filter(|id| expected.iter().any(|(e, _)| e == id)) {
                    found.push((id.to_owned(), end, k));
                }
            }
            end += 1;
        }
        let model = &history[i];
        let mut inject: Vec<(Value, PartOrigin)> = Vec::new();
        let mut hoisted = Vec::new();
        let mut removals = Vec::new();
        for (id, name) in &expected {
            let mut at = found.iter().filter(|(f, _, _)| f == id);
            match at.next() {
                None => inject.push((
                    serde_json::json!({"functionResponse":
                        {"id": id, "name": name, "response": {"error": UNRECORDED_RESULT}}}),
                    PartOrigin {
                        id: format!("{}/unrecorded-result/{id}", model.id),
                        timestamp: model.timestamp.clone(),
                        extras: None,
                    },
                )),
                Some((_, c, k)) if *c != adjacent => {
                    let from = &history[*c];
                    hoisted.push((parts_of(from)[*k].clone(), from.origin_of(*k)));
                    removals.push((*c, *k));
                }
                Some(_) => {}
            }
            removals.extend(at.map(|(_, c, k)| (*c, *k)));
        }
        inject.extend(hoisted);
        if inject.is_empty() && removals.is_empty() {
            i += 1;
            continue;
        }
        removals.sort_unstable_by(|a, b| b.cmp(a));
        removals.dedup();
        for (c, k) in removals {
            history[c].remove_part(k);
        }
        for c in (adjacent + 1..end).rev() {
            if parts_of(&history[c]).is_empty() {
                history.remove(c);
            }
        }
        if !inject.is_empty() {
            let (parts, origins): (Vec<Value>, Vec<Option<PartOrigin>>) =
                inject.into_iter().map(|(p, o)| (p, Some(o))).unzip();
            match history
                .get_mut(adjacent)
                .filter(|e| e.content["role"] == "user")
            {
                Some(next) => {
                    let at = parts_of(next)
                        .iter()
                        .position(|p| p.get("functionResponse").is_none())
                        .unwrap_or(parts_of(next).len());
                    next.origins_mut().splice(at..at, origins);
                    if let Some(own) = next.content["parts"].as_array_mut() {
                        own.splice(at..at, parts);
                    }
                }
                None => {
                    let model = &history[i];
                    let entry = Entry {
                        id: format!("{}/unrecorded-results", model.id),
                        line: model.line,
                        timestamp: model.timestamp.clone(),
                        model: None,
                        extras: None,
                        content: serde_json::json!({"role": "user", "parts": parts}),
                        part_origins: origins,
                    };
                    history.insert(adjacent, entry);
                }
            }
        }
        i += 1;
    }
}

fn parts_of(entry: &Entry) -> &[Value] {
    entry.content["parts"].as_array().map_or(&[], Vec::as_slice)
}

/// The message of a link: its records' parts joined (`aggregateTranscriptRecordFragments`), the
/// role the first message's. `None` when no record of it has a message.
fn joined_message(path: &Path, fragments: &[Record]) -> Result<Option<Value>, PluginError> {
    let mut joined: Option<(Value, Vec<Value>)> = None;
    for record in fragments {
        let Some(message) = record.value.get("message") else {
            continue;
        };
        let Value::Object(message) = message else {
            return Err(PluginError::malformed_line(
                path,
                record.line,
                Some("message"),
                "not an object",
            ));
        };
        let parts = match message.get("parts") {
            None => Vec::new(),
            Some(Value::Array(parts)) => parts.clone(),
            Some(_) => {
                return Err(PluginError::malformed_line(
                    path,
                    record.line,
                    Some("message.parts"),
                    "not an array",
                ))
            }
        };
        match &mut joined {
            None => {
                let role = message.get("role").cloned().unwrap_or(Value::Null);
                joined = Some((role, parts));
            }
            Some((_, all)) => all.extend(parts),
        }
    }
    Ok(joined.map(|(role, parts)| {
        let mut content = Map::new();
        if !role.is_null() {
            content.insert("role".into(), role);
        }
        content.insert("parts".into(), Value::Array(parts));
        Value::Object(content)
    }))
}
