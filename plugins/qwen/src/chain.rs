//! A chat file's records, and the history Qwen Code 0.24.4 builds of them when it resumes:
//! `prepareTranscriptRecords` (which records count, the chain, records of one uuid joined) and
//! `SessionApiHistoryAccumulator` (what each record adds to the history it sends).

use std::io::{BufRead as _, BufReader};
use std::path::Path;

use handoff_sdk::marker::{OwnershipMarker, MARKER_KEY};
use handoff_sdk::serde_json::{self, Map, Value};
use handoff_sdk::{IdMap, IdSet, PluginError};

/// The record types Qwen Code knows (`RECORD_TYPES`); a record of another type is skipped.
const RECORD_TYPES: &[&str] = &["user", "assistant", "tool_result", "system"];
/// System subtypes that are no part of the conversation chain (`NON_CONVERSATION_RECORD_SUBTYPES`
/// and the artifact records): never a leaf, never a link.
const OFF_CHAIN_SUBTYPES: &[&str] = &[
    "session_sources_snapshot",
    "managed_session_header_v1",
    "managed_session_event_v1",
    "managed_session_commit_v1",
    "session_artifact_event",
    "session_artifact_snapshot",
];

/// One record of a chat file that Qwen Code accepts (`validateTranscriptRecord`): an object with
/// a non-empty `uuid`, a `parentUuid` (string or null), a non-empty `sessionId` and a known `type`.
pub(crate) struct Record {
    /// Its line in the file (1-based).
    pub line: usize,
    /// The record.
    pub value: Map<String, Value>,
}

impl Record {
    pub fn str(&self, key: &str) -> Option<&str> {
        self.value.get(key).and_then(Value::as_str)
    }

    fn uuid(&self) -> &str {
        self.str("uuid").unwrap_or_default()
    }

    fn parent(&self) -> Option<&str> {
        self.str("parentUuid").filter(|p| !p.is_empty())
    }

    fn subtype(&self) -> Option<&str> {
        self.str("subtype")
    }

    fn on_chain(&self) -> bool {
        !(self.str("type") == Some("system")
            && self
                .subtype()
                .is_some_and(|s| OFF_CHAIN_SUBTYPES.contains(&s)))
    }
}

/// A chat file's accepted records, in file order.
pub(crate) struct Loaded {
    pub records: Vec<Record>,
}

impl Loaded {
    /// The session id every record names.
    pub fn session_id(&self) -> Option<&str> {
        self.records.first().and_then(|r| r.str("sessionId"))
    }

    /// The working directory of the first record (what the CLI checks a resume against).
    pub fn cwd(&self) -> Option<&str> {
        self.records.first().and_then(|r| r.str("cwd"))
    }

    /// The ownership marker on the first record.
    pub fn marker(&self) -> Option<OwnershipMarker> {
        self.records
            .first()
            .and_then(|r| OwnershipMarker::find(&Value::Object(r.value.clone())))
    }

    /// The uuid of the last conversation record: where the CLI's chain starts, and what a
    /// record appended after it names as its parent.
    pub fn leaf(&self) -> Option<&str> {
        self.records
            .iter()
            .rev()
            .find(|r| r.on_chain())
            .map(Record::uuid)
    }
}

/// Reads a chat file. A line that is not JSON is an error naming it; records Qwen Code skips
/// (not an object, no identity, an unknown type) are skipped; records of two sessions are an
/// error, as the CLI refuses them.
pub(crate) fn load(path: &Path) -> Result<Loaded, PluginError> {
    let file = std::fs::File::open(path).map_err(|e| PluginError::io(path, &e))?;
    let mut records = Vec::new();
    for (index, line) in BufReader::new(file).lines().enumerate() {
        let line_no = index + 1;
        let line = line.map_err(|e| PluginError::io(path, &e))?;
        // A byte order mark before the first record: the CLI's reader reads past it.
        let line = match (index, line.strip_prefix('\u{feff}')) {
            (0, Some(rest)) => rest.to_owned(),
            _ => line,
        };
        if line.trim().is_empty() {
            continue;
        }
        let value: Value = serde_json::from_str(&line).map_err(|e| {
            PluginError::malformed_line(path, line_no, None, format!("not a JSON record: {e}"))
        })?;
        let Value::Object(value) = value else {
            continue;
        };
        let record = Record {
            line: line_no,
            value,
        };
        let identity = record.str("uuid").is_some_and(|u| !u.is_empty())
            && matches!(
                record.value.get("parentUuid"),
                Some(Value::String(_) | Value::Null)
            )
            && record.str("sessionId").is_some_and(|s| !s.is_empty());
        if !identity
            || !record
                .str("type")
                .is_some_and(|t| RECORD_TYPES.contains(&t))
        {
            continue;
        }
        if let Some(first) = records.first().and_then(|r: &Record| r.str("sessionId")) {
            if record.str("sessionId") != Some(first) {
                return Err(PluginError::malformed_line(
                    path,
                    line_no,
                    Some("sessionId"),
                    format!(
                        "records of two sessions ({first} and {}); Qwen Code refuses the file",
                        record.str("sessionId").unwrap_or_default()
                    ),
                ));
            }
        }
        records.push(record);
    }
    Ok(Loaded { records })
}

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

/// The history Qwen Code sends when it resumes the file: the chain from the last conversation
/// record back through `parentUuid` (the first record of a uuid is the link; all records of
/// that uuid are one, their parts joined in file order), then each record's message in order,
/// as `SessionApiHistoryAccumulator` adds them.
pub(crate) fn history(path: &Path, loaded: &Loaded) -> Result<Vec<Entry>, PluginError> {
    let chain = chain(loaded);
    let mut history: Vec<Entry> = Vec::new();
    // The last record that added to the history (a slash command's result may take its prompt
    // back out).
    let mut last_material: Option<&Record> = None;
    for fragments in chain {
        let record = fragments[0];
        if record.str("type") == Some("system") {
            match record.subtype() {
                Some("slash_command") => {
                    if takes_back_prompt(record, last_material) {
                        history.pop();
                    }
                    if last_material.is_some_and(|r| r.str("type") == Some("user")) {
                        last_material = None;
                    }
                }
                Some("chat_compression") => {
                    if let Some(compressed) = compressed_history(path, record)? {
                        history = compressed;
                        last_material = None;
                    }
                }
                _ => {}
            }
            continue;
        }
        let Some(content) = joined_message(path, &fragments)? else {
            continue;
        };
        if record.subtype() == Some("realtime_message") {
            continue;
        }
        if record.subtype() == Some("mid_turn_user_message") {
            if let Some(previous) = history.last_mut().filter(|e| e.content["role"] == "user") {
                if let (Some(into), Some(more)) = (
                    previous.content["parts"].as_array_mut(),
                    content["parts"].as_array(),
                ) {
                    into.extend(more.iter().cloned());
                    last_material = Some(record);
                    continue;
                }
            }
        }
        history.push(Entry {
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
        });
        last_material = Some(record);
    }
    Ok(history)
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

/// The chain, leaf last: each link's records (the first of its uuid first).
fn chain(loaded: &Loaded) -> Vec<Vec<&Record>> {
    let mut by_uuid: IdMap<&str, Vec<&Record>> = IdMap::default();
    for record in loaded.records.iter().filter(|r| r.on_chain()) {
        by_uuid.entry(record.uuid()).or_default().push(record);
    }
    let mut links = Vec::new();
    let mut seen = IdSet::default();
    let mut at = loaded.leaf();
    while let Some(uuid) = at {
        if !seen.insert(uuid) {
            break; // a cycle: the CLI stops there too
        }
        let Some(fragments) = by_uuid.get(uuid) else {
            break; // a missing parent: the CLI keeps what it walked
        };
        links.push(fragments.clone());
        at = fragments[0].parent();
    }
    links.reverse();
    links
}

/// The message of a link: its records' parts joined (`aggregateTranscriptRecordFragments`), the
/// role the first message's. `None` when no record of it has a message.
fn joined_message(path: &Path, fragments: &[&Record]) -> Result<Option<Value>, PluginError> {
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

/// A `slash_command` result that was shown, not sent, takes back the prompt that typed it: the
/// last record added was a plain user record whose one part is exactly the command's text.
fn takes_back_prompt(record: &Record, last_material: Option<&Record>) -> bool {
    let Some(payload) = record.value.get("systemPayload") else {
        return false;
    };
    let Some(previous) = last_material else {
        return false;
    };
    let shown_only = payload["phase"] == "result"
        && payload["sentToModel"] != Value::Bool(true)
        && payload["outputHistoryItems"]
            .as_array()
            .is_some_and(|items| {
                !items.is_empty() && items.iter().all(|i| i["type"] == "assistant")
            });
    let parts = previous
        .value
        .get("message")
        .and_then(|m| m.get("parts"))
        .and_then(Value::as_array);
    let typed = previous.str("type") == Some("user")
        && previous.subtype().is_none()
        && previous.value.get("message").and_then(|m| m.get("role")) == Some(&Value::from("user"))
        && parts.is_some_and(|p| {
            p.len() == 1
                && p[0].as_object().is_some_and(|o| o.len() == 1)
                && p[0].get("text").and_then(Value::as_str).is_some()
                && p[0]["text"] == payload["rawCommand"]
        });
    shown_only && typed
}

/// A compression's history (`systemPayload.compressedHistory`), which replaces everything before
/// it; `None` when the record has none.
fn compressed_history(path: &Path, record: &Record) -> Result<Option<Vec<Entry>>, PluginError> {
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
    Ok(Some(
        contents
            .iter()
            .enumerate()
            .map(|(k, content)| Entry {
                id: format!("{}/{k}", record.uuid()),
                line: record.line,
                timestamp: record.str("timestamp").map(str::to_owned),
                model: None,
                extras: None,
                content: content.clone(),
                part_origins: Vec::new(),
            })
            .collect(),
    ))
}

/// The ownership marker of a record, as written.
pub(crate) fn marker_member(marker: &OwnershipMarker) -> (String, Value) {
    (
        MARKER_KEY.to_owned(),
        serde_json::to_value(marker).unwrap_or(Value::Null),
    )
}
