//! Reading a session as OpenCode 1.18.33 sends it to the model when it resumes it.
//!
//! OpenCode's history (`MessageV2.toModelMessages` over `filterCompacted`, read from the bundled
//! source of the pinned binary; `docs/formats/opencode.md`):
//! - messages in `(time_created, id)` order, parts in id order; a message with no parts is left out;
//! - a reverted tail (`session.revert`: from its message, or from its part within that message)
//!   is what OpenCode deletes before the next prompt, so it is left out;
//! - a user message sends its text parts (not `ignored`, not empty; synthetic ones too), its
//!   file parts other than text/plain and directories, "What did we do so far?" for a
//!   compaction part and a fixed text for a subtask part;
//! - an assistant message that failed is left out (unless it was aborted after it said
//!   something); it sends its text, reasoning and tool parts in order; a completed tool part is a
//!   call and its output, an error part a call and its error, a pending or running one a call and
//!   the error "[Tool execution was interrupted]";
//! - the newest finished compaction replaces everything before the user message that asked for
//!   it: OpenCode sends that message as "What did we do so far?" and the summary as the
//!   assistant's answer, so the reader makes the question the compaction's summary and the
//!   summary an assistant turn after it.

use std::path::Path;

use base64::Engine as _;
use handoff_sdk::serde_json::{self, Value};
use handoff_sdk::{
    AssistantPart, Body, CheckedSink, Event, IdDigest, Origin, Part, PluginError, Signature,
    Thinking, Timestamp, ToolCall, ToolInput, Validator, EXTRAS_KEY,
};
use rusqlite::{Connection, OptionalExtension};

use crate::schema::db_error;

/// What OpenCode sends for a compaction part of a user message.
pub const COMPACTION_QUESTION: &str = "What did we do so far?";
/// What OpenCode sends for a subtask part of a user message.
pub const SUBTASK_TEXT: &str = "The following tool was executed by the user";
/// What OpenCode sends as the result of a call left pending or running.
pub const INTERRUPTED: &str = "[Tool execution was interrupted]";
/// What OpenCode sends as the output of a tool result it pruned.
pub const CLEARED: &str = "[Old tool result content cleared]";

/// One stored message with its parts.
pub struct Stored {
    pub id: String,
    pub time_created: i64,
    pub data: Value,
    pub parts: Vec<(String, Value)>,
}

/// The session row's members the reader and the resumer need.
pub struct SessionRow {
    pub directory: String,
    pub revert: Option<Value>,
}

fn malformed(path: &Path, field: String, message: impl Into<String>) -> PluginError {
    PluginError::Malformed {
        file: path.to_owned(),
        line: None,
        field: Some(field),
        message: message.into(),
    }
}

fn parse_json(path: &Path, field: String, text: &str) -> Result<Value, PluginError> {
    serde_json::from_str(text).map_err(|e| malformed(path, field, format!("not JSON: {e}")))
}

/// The session row of `id`, or `None`.
pub fn session_row(
    path: &Path,
    connection: &Connection,
    id: &str,
) -> Result<Option<SessionRow>, PluginError> {
    let row = connection
        .query_row(
            "SELECT directory, revert FROM session WHERE id = ?1",
            [id],
            |row| Ok((row.get::<_, String>(0)?, row.get::<_, Option<String>>(1)?)),
        )
        .optional()
        .map_err(|e| db_error(path, e))?;
    let Some((directory, revert)) = row else {
        return Ok(None);
    };
    let revert = match revert {
        Some(text) => Some(parse_json(path, format!("session {id}.revert"), &text)?),
        None => None,
    };
    Ok(Some(SessionRow { directory, revert }))
}

/// The messages of session `?1` in OpenCode's order (each pass selects the columns it needs).
const MESSAGES: &str = "FROM message WHERE session_id = ?1 ORDER BY time_created, id";

/// The parts of one message of the session, in id order.
const PARTS: &str =
    "SELECT id, data FROM part WHERE message_id = ?1 AND session_id = ?2 ORDER BY id";

/// What the first pass over a session's messages finds (only their `data`, never their parts):
/// which messages OpenCode sends and where the newest compaction is. It keeps the finished
/// summaries' positions and parents, nothing a message.
struct Index {
    /// The messages before the revert point, in order (the rest OpenCode deletes).
    kept: usize,
    /// A revert from a part on: the message it cuts (the last kept one) and the part.
    cut_inside: Option<(usize, String)>,
    /// The user message that asked for the newest finished compaction.
    compaction: Option<usize>,
    /// The newest `time_created` and the last user message of all the messages (for an append).
    last_time: i64,
    last_user: Option<String>,
}

impl Index {
    /// The first pass over session `id`, whose row's `revert` is `revert`.
    fn of(
        path: &Path,
        connection: &Connection,
        id: &str,
        revert: Option<&Value>,
    ) -> Result<Index, PluginError> {
        let reverted_at = revert
            .and_then(|r| r.get("messageID"))
            .and_then(Value::as_str);
        let mut statement = connection
            .prepare(&format!("SELECT id, time_created, data {MESSAGES}"))
            .map_err(|e| db_error(path, e))?;
        let mut rows = statement.query([id]).map_err(|e| db_error(path, e))?;
        let (mut count, mut revert_at) = (0, None);
        let mut summaries = Vec::new();
        let (mut last_time, mut last_user) = (i64::MIN, None);
        while let Some(row) = rows.next().map_err(|e| db_error(path, e))? {
            let (message_id, time_created, data) = message_row(path, row)?;
            if revert_at.is_none() && reverted_at == Some(message_id.as_str()) {
                revert_at = Some(count);
            }
            if is_summary(&data) {
                let parent = data.get("parentID").and_then(Value::as_str);
                summaries.push((count, parent.map(str::to_owned)));
            }
            last_time = last_time.max(time_created);
            if data.get("role").and_then(Value::as_str) == Some("user") {
                last_user = Some(message_id);
            }
            count += 1;
        }
        let part_cut = revert.and_then(|r| r.get("partID")).and_then(Value::as_str);
        let (kept, cut_inside) = match (revert_at, part_cut) {
            (Some(at), Some(part)) => (at + 1, Some((at, part.to_owned()))),
            (Some(at), None) => (at, None),
            (None, _) => (count, None),
        };
        let mut index = Index {
            kept,
            cut_inside,
            compaction: None,
            last_time,
            last_user,
        };
        summaries.retain(|(at, parent)| *at < kept && parent.is_some());
        index.compaction = index.newest_compaction(path, connection, id, &summaries)?;
        Ok(index)
    }

    /// The user message with a `compaction` part that the newest kept summary answers.
    fn newest_compaction(
        &self,
        path: &Path,
        connection: &Connection,
        id: &str,
        summaries: &[(usize, Option<String>)],
    ) -> Result<Option<usize>, PluginError> {
        if summaries.is_empty() {
            return Ok(None);
        }
        // Where each summary's parent is: the ids alone, read again.
        let mut parents: std::collections::HashMap<&str, usize> = summaries
            .iter()
            .filter_map(|(_, parent)| parent.as_deref())
            .map(|parent| (parent, usize::MAX))
            .collect();
        let mut statement = connection
            .prepare(&format!("SELECT id {MESSAGES}"))
            .map_err(|e| db_error(path, e))?;
        let mut rows = statement.query([id]).map_err(|e| db_error(path, e))?;
        let mut at = 0;
        while let Some(row) = rows.next().map_err(|e| db_error(path, e))? {
            let message_id: String = row.get(0).map_err(|e| db_error(path, e))?;
            if let Some(position) = parents.get_mut(message_id.as_str()) {
                *position = (*position).min(at);
            }
            at += 1;
        }
        for (_, parent) in summaries.iter().rev() {
            let Some(parent) = parent.as_deref() else {
                continue;
            };
            let at = parents[parent];
            if at >= self.kept {
                continue;
            }
            let parts = self.parts(path, connection, id, at, parent)?;
            if parts.iter().any(|(_, p)| part_type(p) == "compaction") {
                return Ok(Some(at));
            }
        }
        Ok(None)
    }

    /// The parts of message `message_id`, at `at`, OpenCode keeps (a revert from a part on drops
    /// that part and those after it).
    fn parts(
        &self,
        path: &Path,
        connection: &Connection,
        id: &str,
        at: usize,
        message_id: &str,
    ) -> Result<Vec<(String, Value)>, PluginError> {
        let mut statement = connection
            .prepare_cached(PARTS)
            .map_err(|e| db_error(path, e))?;
        let mut rows = statement
            .query([message_id, id])
            .map_err(|e| db_error(path, e))?;
        let mut parts = Vec::new();
        while let Some(row) = rows.next().map_err(|e| db_error(path, e))? {
            let part_id: String = row.get(0).map_err(|e| db_error(path, e))?;
            let data: String = row.get(1).map_err(|e| db_error(path, e))?;
            let data = parse_json(path, format!("part {part_id}.data"), &data)?;
            parts.push((part_id, data));
        }
        if let Some((cut, part)) = &self.cut_inside {
            if *cut == at {
                parts.retain(|(part_id, _)| part_id.as_str() < part.as_str());
            }
        }
        Ok(parts)
    }
}

fn message_row(path: &Path, row: &rusqlite::Row<'_>) -> Result<(String, i64, Value), PluginError> {
    let message_id: String = row.get(0).map_err(|e| db_error(path, e))?;
    let time_created: i64 = row.get(1).map_err(|e| db_error(path, e))?;
    let data: String = row.get(2).map_err(|e| db_error(path, e))?;
    let data = parse_json(path, format!("message {message_id}.data"), &data)?;
    Ok((message_id, time_created, data))
}

/// A session read message by message: what OpenCode sends of it, and what an append needs.
pub struct Read {
    /// The session's directory.
    pub cwd: String,
    /// The events read, validated one by one: an append goes on validating with it.
    pub validator: Validator<IdDigest>,
    /// The newest `time_created` of its messages, and its last user message.
    pub last_time: i64,
    pub last_user: Option<String>,
}

/// Reads session `id` of the database at `path` as OpenCode sends it, handing each event to
/// `sink` until it returns `false`. Two passes over the messages: the first reads only their
/// `data` (the revert, the newest compaction), the second each message with its parts, one at a
/// time, so nothing but the message at hand is held.
pub fn each(
    path: &Path,
    connection: &Connection,
    id: &str,
    sink: &mut dyn FnMut(Event) -> bool,
) -> Result<Read, PluginError> {
    let row = session_row(path, connection, id)?.ok_or_else(|| PluginError::NotFound {
        target: crate::TARGET.into(),
        id: id.to_owned(),
        searched: path.to_owned(),
    })?;
    let index = Index::of(path, connection, id, row.revert.as_ref())?;
    let mut out = CheckedSink::new(sink, |e| PluginError::Malformed {
        file: path.to_owned(),
        line: None,
        field: Some(e.field.clone()),
        message: format!("session {id}: {e}"),
    });
    let mut statement = connection
        .prepare(&format!("SELECT id, time_created, data {MESSAGES}"))
        .map_err(|e| db_error(path, e))?;
    let mut rows = statement.query([id]).map_err(|e| db_error(path, e))?;
    let mut at = 0;
    while let Some(row) = rows.next().map_err(|e| db_error(path, e))? {
        if !out.is_open() {
            break;
        }
        let (message_id, time_created, data) = message_row(path, row)?;
        let parts = index.parts(path, connection, id, at, &message_id)?;
        // A reverted message's parts are read (a malformed one is an error, as in a kept
        // message), not sent.
        if at < index.kept {
            let message = Stored {
                id: message_id,
                time_created,
                data,
                parts,
            };
            message_events(path, &message, index.compaction == Some(at), &mut out)?;
        }
        at += 1;
    }
    if out.is_open() {
        parts_of_no_message(path, connection, id)?;
    }
    Ok(Read {
        cwd: row.directory,
        validator: out.into_validator(),
        last_time: index.last_time,
        last_user: index.last_user,
    })
}

/// The session's parts whose message is not one of its messages are never sent; read all the
/// same, a malformed one is an error.
fn parts_of_no_message(path: &Path, connection: &Connection, id: &str) -> Result<(), PluginError> {
    let mut statement = connection
        .prepare(
            "SELECT id, data FROM part WHERE session_id = ?1 AND message_id NOT IN \
             (SELECT id FROM message WHERE session_id = ?1) ORDER BY message_id, id",
        )
        .map_err(|e| db_error(path, e))?;
    let mut rows = statement.query([id]).map_err(|e| db_error(path, e))?;
    while let Some(row) = rows.next().map_err(|e| db_error(path, e))? {
        let part_id: String = row.get(0).map_err(|e| db_error(path, e))?;
        let data: String = row.get(1).map_err(|e| db_error(path, e))?;
        parse_json(path, format!("part {part_id}.data"), &data)?;
    }
    Ok(())
}

fn text_of(value: &Value, key: &str) -> Option<String> {
    value.get(key).and_then(Value::as_str).map(str::to_owned)
}

fn part_type(part: &Value) -> &str {
    part.get("type").and_then(Value::as_str).unwrap_or("")
}

/// A finished compaction summary: an assistant message with `summary`, `finish`, no error.
fn is_summary(info: &Value) -> bool {
    info.get("role").and_then(Value::as_str) == Some("assistant")
        && info.get("summary").and_then(Value::as_bool) == Some(true)
        && info.get("finish").is_some_and(|f| !f.is_null())
        && info.get("error").is_none_or(Value::is_null)
}

/// The extras of a message or part (`handoff` member), as written by this plugin.
fn extras(data: &Value) -> Option<&Value> {
    data.get(EXTRAS_KEY)
}

fn timestamp_of(message: &Stored) -> Timestamp {
    let ms = extras(&message.data)
        .and_then(|x| x.get("timestamp"))
        .and_then(Value::as_i64)
        .or_else(|| {
            message
                .data
                .pointer("/time/created")
                .and_then(Value::as_i64)
        })
        .unwrap_or(message.time_created);
    Timestamp::from_millis(ms)
}

/// The events of `message`; `compaction`: it is the user message that asked for the newest
/// compaction.
fn message_events(
    path: &Path,
    message: &Stored,
    compaction: bool,
    out: &mut CheckedSink<'_>,
) -> Result<(), PluginError> {
    if compaction {
        if let Some((part_id, part)) = message
            .parts
            .iter()
            .find(|(_, p)| part_type(p) == "compaction")
        {
            if part.get("tail_start_id").is_some_and(|t| !t.is_null()) {
                return Err(malformed(
                    path,
                    format!("part {part_id}.tail_start_id"),
                    "a compaction that keeps a tail of recent turns is not read: \
                     OpenCode reorders that tail around its summary",
                ));
            }
        }
        // OpenCode sends, in place of everything before it, the compaction's question as a
        // user turn, then the summary as the assistant's answer (an ordinary assistant message,
        // read next). The question is what the summary replaces the earlier turns with; with no
        // earlier turn it is a plain user turn.
        let body = match out.last_id().map(str::to_owned) {
            Some(last) => Body::Compaction {
                summary: COMPACTION_QUESTION.to_owned(),
                replaces_through: last,
            },
            None => Body::user_text(COMPACTION_QUESTION),
        };
        return out.push(Event::new(message.id.clone(), timestamp_of(message), body));
    }
    match message.data.get("role").and_then(Value::as_str) {
        Some("user") => match user_event(path, message)? {
            Some(event) => out.push(event),
            None => Ok(()),
        },
        Some("assistant") => {
            let mut events = Vec::new();
            assistant_events(path, message, &mut events)?;
            events.into_iter().try_for_each(|event| out.push(event))
        }
        other => Err(malformed(
            path,
            format!("message {}.data.role", message.id),
            format!("role {other:?} is neither user nor assistant"),
        )),
    }
}

fn user_event(path: &Path, message: &Stored) -> Result<Option<Event>, PluginError> {
    let mut content = Vec::new();
    for (part_id, part) in &message.parts {
        match part_type(part) {
            "text" => {
                let ignored = part.get("ignored").and_then(Value::as_bool) == Some(true);
                let text = text_of(part, "text").unwrap_or_default();
                if !ignored && !text.is_empty() {
                    content.push(Part::Text { text });
                }
            }
            "file" => {
                let mime = text_of(part, "mime").unwrap_or_default();
                if mime == "text/plain" || mime == "application/x-directory" {
                    continue;
                }
                content.push(file_part(path, part_id, part, &mime)?);
            }
            "compaction" => content.push(Part::text(COMPACTION_QUESTION)),
            "subtask" => content.push(Part::text(SUBTASK_TEXT)),
            _ => {}
        }
    }
    if content.is_empty() {
        return Ok(None);
    }
    Ok(Some(Event::new(
        message.id.clone(),
        timestamp_of(message),
        Body::User { content },
    )))
}

fn file_part(path: &Path, part_id: &str, part: &Value, mime: &str) -> Result<Part, PluginError> {
    let url = text_of(part, "url").unwrap_or_default();
    let field = format!("part {part_id}.url");
    if !mime.starts_with("image/") {
        return Err(malformed(
            path,
            format!("part {part_id}.mime"),
            format!("a {mime} file: the transcript holds images only"),
        ));
    }
    let Some(rest) = url.strip_prefix("data:") else {
        return Ok(Part::ImageUrl { url });
    };
    let (_, data) = rest
        .split_once(";base64,")
        .ok_or_else(|| malformed(path, field.clone(), "a data URL without ;base64,"))?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data)
        .map_err(|e| malformed(path, field, format!("bad base64: {e}")))?;
    Ok(Part::Image {
        media_type: mime.to_owned(),
        data: bytes,
    })
}

/// The signature of a reasoning part, where OpenCode's provider of its maker keeps it
/// (`write::signature_metadata`); its model and redaction as the writer recorded them, else the
/// message's model.
fn signature_of(message: &Stored, part: &Value) -> Option<Signature> {
    let (provider, value, redacted) = [
        ("anthropic", "signature", false),
        ("anthropic", "redactedData", true),
        ("openai", "reasoningEncryptedContent", false),
        ("google", "thoughtSignature", false),
    ]
    .into_iter()
    .find_map(|(provider, member, redacted)| {
        let value = part.get("metadata")?.get(provider)?.get(member)?.as_str()?;
        Some((provider, value, redacted))
    })?;
    let recorded = extras(part);
    let model = match recorded.and_then(|x| x.get("signature_model")) {
        Some(model) => model.as_str().map(str::to_owned),
        None => text_of(&message.data, "modelID"),
    };
    let redacted = recorded
        .and_then(|x| x.get("redacted"))
        .and_then(Value::as_bool)
        .unwrap_or(redacted);
    Some(Signature {
        provider: provider.into(),
        model,
        value: value.to_owned(),
        redacted,
    })
}

fn origin_of(message: &Stored) -> Option<Origin> {
    if let Some(origin) = extras(&message.data).and_then(|x| x.get("origin")) {
        return serde_json::from_value(origin.clone()).ok().flatten();
    }
    let provider = text_of(&message.data, "providerID")?;
    Some(Origin {
        provider,
        model: text_of(&message.data, "modelID"),
        api: None,
    })
}

fn assistant_events(
    path: &Path,
    message: &Stored,
    out: &mut Vec<Event>,
) -> Result<(), PluginError> {
    let info = &message.data;
    if info.get("error").is_some_and(|e| !e.is_null()) {
        let aborted =
            info.pointer("/error/name").and_then(Value::as_str) == Some("MessageAbortedError");
        let said = message
            .parts
            .iter()
            .any(|(_, p)| !matches!(part_type(p), "step-start" | "reasoning"));
        if !(aborted && said) {
            return Ok(());
        }
    }
    let when = timestamp_of(message);
    let mut content = Vec::new();
    let mut results = Vec::new();
    for (part_id, part) in &message.parts {
        match part_type(part) {
            "text" => content.push(AssistantPart::Text {
                text: text_of(part, "text").unwrap_or_default(),
            }),
            "reasoning" => content.push(AssistantPart::Thinking(Thinking {
                text: text_of(part, "text").unwrap_or_default(),
                signature: signature_of(message, part),
            })),
            "tool" => {
                let field = |f: &str| format!("part {part_id}.{f}");
                let call_id = text_of(part, "callID").ok_or_else(|| {
                    malformed(path, field("callID"), "a tool part without a call id")
                })?;
                let name = text_of(part, "tool")
                    .ok_or_else(|| malformed(path, field("tool"), "a tool part without a tool"))?;
                let state = part.get("state").ok_or_else(|| {
                    malformed(path, field("state"), "a tool part without a state")
                })?;
                let input = state
                    .get("input")
                    .cloned()
                    .unwrap_or(Value::Object(Default::default()));
                let freeform = extras(part)
                    .and_then(|x| x.get("freeform"))
                    .and_then(Value::as_bool)
                    == Some(true);
                let call = match ToolInput::freeform_from_structured(&input) {
                    Some(text) if freeform => ToolCall {
                        id: call_id.clone(),
                        name,
                        input: ToolInput::Freeform(text),
                    },
                    _ => ToolCall::new(call_id.clone(), name, input),
                };
                content.push(AssistantPart::ToolCall(call));
                let (text, is_error) = tool_outcome(path, part_id, state)?;
                let ended = state
                    .pointer("/time/end")
                    .and_then(Value::as_i64)
                    .map(Timestamp::from_millis);
                let empty_text = extras(part)
                    .and_then(|x| x.get("empty_text"))
                    .and_then(Value::as_bool)
                    == Some(true);
                let result_content = if text.is_empty() && !empty_text {
                    Vec::new()
                } else {
                    vec![Part::Text { text }]
                };
                let mut event = Event::new(
                    part_id.clone(),
                    ended.unwrap_or(when),
                    Body::ToolResult {
                        call_id,
                        content: result_content,
                        is_error,
                    },
                );
                if let Some(ts) = extras(part)
                    .and_then(|x| x.get("timestamp"))
                    .and_then(Value::as_i64)
                {
                    event.timestamp = Timestamp::from_millis(ts);
                }
                results.push(event);
            }
            _ => {}
        }
    }
    if content.is_empty() {
        return Ok(());
    }
    out.push(Event::new(
        message.id.clone(),
        when,
        Body::Assistant {
            content,
            origin: origin_of(message),
        },
    ));
    out.extend(results);
    Ok(())
}

/// The text OpenCode sends as a tool part's result, and whether it is an error.
fn tool_outcome(path: &Path, part_id: &str, state: &Value) -> Result<(String, bool), PluginError> {
    let status = state.get("status").and_then(Value::as_str).unwrap_or("");
    match status {
        "completed" => {
            if state
                .get("attachments")
                .and_then(Value::as_array)
                .is_some_and(|a| !a.is_empty())
            {
                return Err(malformed(
                    path,
                    format!("part {part_id}.state.attachments"),
                    "a tool result with attachments: the transcript's tool results hold text only here",
                ));
            }
            if state
                .pointer("/time/compacted")
                .is_some_and(|c| !c.is_null())
            {
                return Ok((CLEARED.to_owned(), false));
            }
            Ok((text_of(state, "output").unwrap_or_default(), false))
        }
        "error" => {
            if state
                .pointer("/metadata/interrupted")
                .and_then(Value::as_bool)
                == Some(true)
            {
                if let Some(output) = state.pointer("/metadata/output").and_then(Value::as_str) {
                    return Ok((output.to_owned(), false));
                }
            }
            Ok((text_of(state, "error").unwrap_or_default(), true))
        }
        "pending" | "running" => Ok((INTERRUPTED.to_owned(), true)),
        other => Err(malformed(
            path,
            format!("part {part_id}.state.status"),
            format!("unknown tool status {other:?}"),
        )),
    }
}
