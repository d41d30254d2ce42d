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
    AssistantPart, Body, Event, Origin, Part, PluginError, Signature, Thinking, Timestamp,
    ToolCall, ToolInput, Transcript, EXTRAS_KEY,
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

/// Every message of session `id` with its parts, in OpenCode's order.
pub fn messages(
    path: &Path,
    connection: &Connection,
    id: &str,
) -> Result<Vec<Stored>, PluginError> {
    let mut statement = connection
        .prepare(
            "SELECT id, time_created, data FROM message WHERE session_id = ?1 \
             ORDER BY time_created, id",
        )
        .map_err(|e| db_error(path, e))?;
    let rows: Vec<(String, i64, String)> = statement
        .query_map([id], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
        .map_err(|e| db_error(path, e))?
        .collect::<Result<_, _>>()
        .map_err(|e| db_error(path, e))?;
    let mut out = Vec::with_capacity(rows.len());
    let mut index = std::collections::HashMap::new();
    for (message_id, time_created, data) in rows {
        let data = parse_json(path, format!("message {message_id}.data"), &data)?;
        index.insert(message_id.clone(), out.len());
        out.push(Stored {
            id: message_id,
            time_created,
            data,
            parts: Vec::new(),
        });
    }
    let mut statement = connection
        .prepare(
            "SELECT id, message_id, data FROM part WHERE session_id = ?1 ORDER BY message_id, id",
        )
        .map_err(|e| db_error(path, e))?;
    let parts = statement
        .query_map([id], |row| {
            Ok((
                row.get::<_, String>(0)?,
                row.get::<_, String>(1)?,
                row.get::<_, String>(2)?,
            ))
        })
        .map_err(|e| db_error(path, e))?;
    for part in parts {
        let (part_id, message_id, data) = part.map_err(|e| db_error(path, e))?;
        let data = parse_json(path, format!("part {part_id}.data"), &data)?;
        if let Some(&at) = index.get(&message_id) {
            out[at].parts.push((part_id, data));
        }
    }
    Ok(out)
}

/// Leaves out what `session.revert` reverted: from its message on, or (with a `partID`) that
/// message's parts from that part on and every later message.
fn apply_revert(messages: &mut Vec<Stored>, revert: Option<&Value>) {
    let Some(revert) = revert else { return };
    let Some(message_id) = revert.get("messageID").and_then(Value::as_str) else {
        return;
    };
    let Some(at) = messages.iter().position(|m| m.id == message_id) else {
        return;
    };
    match revert.get("partID").and_then(Value::as_str) {
        Some(part_id) => {
            messages.truncate(at + 1);
            messages[at].parts.retain(|(id, _)| id.as_str() < part_id);
        }
        None => messages.truncate(at),
    }
}

fn text_of(value: &Value, key: &str) -> Option<String> {
    value.get(key).and_then(Value::as_str).map(str::to_owned)
}

fn part_type(part: &Value) -> &str {
    part.get("type").and_then(Value::as_str).unwrap_or("")
}

/// A finished compaction summary: an assistant message with `summary`, `finish`, no error.
fn is_summary(message: &Stored) -> bool {
    let info = &message.data;
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

/// Reads session `id` of the database at `path`.
pub fn read_session(
    path: &Path,
    connection: &Connection,
    id: &str,
) -> Result<Transcript, PluginError> {
    let row = session_row(path, connection, id)?.ok_or_else(|| PluginError::NotFound {
        target: crate::TARGET.into(),
        id: id.to_owned(),
        searched: path.to_owned(),
    })?;
    let mut stored = messages(path, connection, id)?;
    apply_revert(&mut stored, row.revert.as_ref());
    let mut transcript = Transcript::new(events(path, &stored)?);
    transcript.cwd = Some(row.directory);
    transcript.validate().map_err(|e| PluginError::Malformed {
        file: path.to_owned(),
        line: None,
        field: Some(e.field.clone()),
        message: format!("session {id}: {e}"),
    })?;
    Ok(transcript)
}

/// The canonical events of `stored` (revert applied).
pub fn events(path: &Path, stored: &[Stored]) -> Result<Vec<Event>, PluginError> {
    // The user message that asked for the newest finished summary.
    let compaction = stored.iter().rev().find_map(|message| {
        if !is_summary(message) {
            return None;
        }
        let parent = message.data.get("parentID").and_then(Value::as_str)?;
        let user = stored.iter().position(|m| {
            m.id == parent && m.parts.iter().any(|(_, p)| part_type(p) == "compaction")
        })?;
        Some(user)
    });
    let mut out = Vec::new();
    for (at, message) in stored.iter().enumerate() {
        if let Some(user) = compaction {
            if at == user {
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
                // OpenCode sends, in place of everything before it, the compaction's question
                // as a user turn, then the summary as the assistant's answer (an ordinary
                // assistant message, read below). The question is what the summary replaces
                // the earlier turns with; with no earlier turn it is a plain user turn.
                match out.last().map(|e: &Event| e.id.clone()) {
                    Some(last) => out.push(Event::new(
                        message.id.clone(),
                        timestamp_of(message),
                        Body::Compaction {
                            summary: COMPACTION_QUESTION.to_owned(),
                            replaces_through: last,
                        },
                    )),
                    None => out.push(Event::new(
                        message.id.clone(),
                        timestamp_of(message),
                        Body::user_text(COMPACTION_QUESTION),
                    )),
                }
                continue;
            }
        }
        match message.data.get("role").and_then(Value::as_str) {
            Some("user") => {
                if let Some(event) = user_event(path, message)? {
                    out.push(event);
                }
            }
            Some("assistant") => assistant_events(path, message, &mut out)?,
            other => {
                return Err(malformed(
                    path,
                    format!("message {}.data.role", message.id),
                    format!("role {other:?} is neither user nor assistant"),
                ))
            }
        }
    }
    Ok(out)
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
