//! The reader: a log as the CLI sends it to the model when it resumes it.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::Path;

use base64::Engine as _;
use handoff_sdk::marker::OwnershipMarker;
use handoff_sdk::serde_json::{self, Map, Value};
use handoff_sdk::{
    AssistantPart, Body, CheckedSink, Event, IdDigest, Part, PluginError, Thinking, Timestamp,
    ToolCall, ToolInput, Validator,
};

use super::records::*;

/// What `session.start` says.
pub struct Start {
    /// The session id.
    pub session_id: String,
    /// The working directory.
    pub cwd: Option<String>,
    /// The ownership marker, when handoff wrote the session.
    pub marker: Option<OwnershipMarker>,
}

fn malformed(path: &Path, line: usize, field: &str, message: impl Into<String>) -> PluginError {
    PluginError::malformed_line(path, line, Some(field), message)
}

/// One event line: its type, id, timestamp and data.
struct Line {
    kind: String,
    id: String,
    timestamp: Timestamp,
    data: Map<String, Value>,
    /// Whether a sub-agent wrote it (`agentId`: "absent for events from the root/main agent"):
    /// a sub-agent's conversation is its own, not the session's.
    sub_agent: bool,
}

fn parse_line(path: &Path, number: usize, text: &str) -> Result<Line, PluginError> {
    let value: Value = serde_json::from_str(text)
        .map_err(|e| PluginError::malformed_line(path, number, None, e.to_string()))?;
    let Value::Object(mut object) = value else {
        return Err(PluginError::malformed_line(
            path,
            number,
            None,
            "an event is a JSON object",
        ));
    };
    let string = |object: &Map<String, Value>, field: &str| {
        object
            .get(field)
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| malformed(path, number, field, "missing or not a string"))
    };
    let kind = string(&object, "type")?;
    let id = string(&object, "id")?;
    let timestamp = Timestamp::parse(&string(&object, "timestamp")?)
        .map_err(|e| malformed(path, number, "timestamp", e))?;
    let data = match object.remove("data") {
        Some(Value::Object(data)) => data,
        _ => return Err(malformed(path, number, "data", "missing or not an object")),
    };
    let sub_agent = object.get("agentId").is_some_and(|a| !a.is_null())
        || data.get("parentToolCallId").is_some_and(|p| !p.is_null());
    Ok(Line {
        kind,
        id,
        timestamp,
        data,
        sub_agent,
    })
}

fn start_of(path: &Path, line: &Line) -> Result<Start, PluginError> {
    if line.kind != SESSION_START {
        return Err(malformed(
            path,
            1,
            "type",
            format!("the log starts with {:?}, not {SESSION_START:?}", line.kind),
        ));
    }
    let session_id = line
        .data
        .get("sessionId")
        .and_then(Value::as_str)
        .ok_or_else(|| malformed(path, 1, "data.sessionId", "missing or not a string"))?
        .to_owned();
    let cwd = line
        .data
        .get("context")
        .and_then(|c| c.get("cwd"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let marker = match line.data.get(MARKER_KEY) {
        None => None,
        Some(value) => Some(
            serde_json::from_value(value.clone())
                .map_err(|e| malformed(path, 1, &format!("data.{MARKER_KEY}"), e.to_string()))?,
        ),
    };
    Ok(Start {
        session_id,
        cwd,
        marker,
    })
}

/// The first line's `session.start`.
pub fn start(path: &Path) -> Result<Start, PluginError> {
    let file = std::fs::File::open(path).map_err(|e| PluginError::io(path, &e))?;
    let mut first = String::new();
    BufReader::new(file)
        .read_line(&mut first)
        .map_err(|e| PluginError::io(path, &e))?;
    // The CLI reads a log that starts with a byte order mark (measured); so does this reader.
    let first = first.strip_prefix('\u{feff}').unwrap_or(&first);
    if first.trim().is_empty() {
        return Err(PluginError::malformed_line(
            path,
            1,
            None,
            "the log is empty",
        ));
    }
    start_of(path, &parse_line(path, 1, first.trim_end())?)
}

/// The id of the log's last event (the parent of what is appended).
pub fn last_event_id(path: &Path) -> Result<String, PluginError> {
    let text = std::fs::read_to_string(path).map_err(|e| PluginError::io(path, &e))?;
    let (number, last) = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .last()
        .ok_or_else(|| PluginError::malformed_line(path, 1, None, "the log is empty"))?;
    Ok(parse_line(path, number + 1, last)?.id)
}

/// The tool calls of the latest assistant turn, in order, with the results read so far.
#[derive(Default)]
struct OpenCalls {
    /// The assistant event's id (synthesised results are named after it).
    turn: String,
    calls: Vec<String>,
    results: HashMap<String, Event>,
}

impl OpenCalls {
    /// The results in the order of the calls, as the CLI sends them; a call without one gets
    /// the CLI's `interrupted` text, as a failed result.
    fn close(
        &mut self,
        interrupted: &str,
        timestamp: Timestamp,
        out: &mut CheckedSink<'_>,
    ) -> Result<(), PluginError> {
        for call in std::mem::take(&mut self.calls) {
            let result = self.results.remove(&call).unwrap_or_else(|| {
                Event::new(
                    format!("{}:{call}:interrupted", self.turn),
                    timestamp,
                    Body::tool_error(call.clone(), interrupted),
                )
            });
            out.push(result)?;
        }
        self.results.clear();
        Ok(())
    }
}

/// A log read event by event: its working directory, and the events validated so far (an
/// append goes on validating with it).
pub struct Read {
    /// The working directory `session.start` names.
    pub cwd: Option<String>,
    /// The validator the log's events went through.
    pub validator: Validator<IdDigest>,
}

/// Reads a log line by line, handing each event to `sink` until it returns `false`: what is
/// held is the latest assistant turn's calls and results, and the user messages' texts (every
/// compaction message repeats them all).
pub fn read_each(path: &Path, sink: &mut dyn FnMut(Event) -> bool) -> Result<Read, PluginError> {
    let file = std::fs::File::open(path).map_err(|e| PluginError::io(path, &e))?;
    let mut out = CheckedSink::new(sink, |e| PluginError::invalid_in(path, e));
    let mut start: Option<Start> = None;
    let mut open = OpenCalls::default();
    // The texts of the user messages so far, for a compaction's message.
    let mut user_messages: Vec<String> = Vec::new();
    let mut last_timestamp = Timestamp::from_millis(0);
    for (index, raw) in BufReader::new(file).lines().enumerate() {
        if !out.is_open() {
            break;
        }
        let number = index + 1;
        let raw = raw.map_err(|e| PluginError::io(path, &e))?;
        let raw = match (index, raw.strip_prefix('\u{feff}')) {
            (0, Some(rest)) => rest,
            _ => raw.as_str(),
        };
        if raw.trim().is_empty() {
            continue;
        }
        let line = parse_line(path, number, raw)?;
        last_timestamp = line.timestamp;
        if start.is_none() {
            start = Some(start_of(path, &line)?);
            continue;
        }
        if line.sub_agent {
            continue;
        }
        match line.kind.as_str() {
            USER_MESSAGE => {
                open.close(INTERRUPTED_BEFORE_NEXT_TURN, line.timestamp, &mut out)?;
                let (event, typed) = user_message(path, number, line)?;
                user_messages.push(typed);
                out.push(event)?;
            }
            ASSISTANT_MESSAGE => {
                open.close(INTERRUPTED_BEFORE_NEXT_TURN, line.timestamp, &mut out)?;
                if let Some((event, calls)) = assistant_message(path, number, line)? {
                    open.turn = event.id.clone();
                    open.calls = calls;
                    out.push(event)?;
                }
            }
            TOOL_COMPLETE => {
                let (call, event) = tool_result(path, number, line)?;
                if !open.calls.contains(&call) {
                    return Err(malformed(
                        path,
                        number,
                        "data.toolCallId",
                        format!("{call:?} answers no call of the assistant turn before it"),
                    ));
                }
                open.results.insert(call, event);
            }
            COMPACTION_COMPLETE => {
                let succeeded = line.data.get("success").and_then(Value::as_bool) == Some(true);
                let summary = line.data.get("summaryContent").and_then(Value::as_str);
                let Some(summary) = summary.filter(|_| succeeded) else {
                    continue;
                };
                open.close(INTERRUPTED_BEFORE_NEXT_TURN, line.timestamp, &mut out)?;
                let message = compaction_message(&user_messages, summary);
                let body = match out.last_id().map(str::to_owned) {
                    Some(last) => Body::Compaction {
                        summary: message,
                        replaces_through: last,
                    },
                    None => Body::user_text(message),
                };
                out.push(Event::new(line.id, line.timestamp, body))?;
            }
            // Everything else is never sent to the model (see docs/formats/copilot-cli.md).
            _ => {}
        }
    }
    let start =
        start.ok_or_else(|| PluginError::malformed_line(path, 1, None, "the log is empty"))?;
    open.close(INTERRUPTED_AT_END, last_timestamp, &mut out)?;
    Ok(Read {
        cwd: start.cwd,
        validator: out.into_validator(),
    })
}

/// A user turn and the text the user typed (`content`).
fn user_message(path: &Path, number: usize, line: Line) -> Result<(Event, String), PluginError> {
    let typed = line
        .data
        .get("content")
        .and_then(Value::as_str)
        .ok_or_else(|| malformed(path, number, "data.content", "missing or not a string"))?
        .to_owned();
    // The CLI sends the transformed text (its own tags around what was typed) when there is one.
    let sent = match line.data.get("transformedContent") {
        None => typed.clone(),
        Some(Value::String(text)) => text.clone(),
        Some(_) => {
            return Err(malformed(
                path,
                number,
                "data.transformedContent",
                "not a string",
            ))
        }
    };
    let mut images = Vec::new();
    if let Some(attachments) = line.data.get("attachments") {
        let attachments = attachments
            .as_array()
            .ok_or_else(|| malformed(path, number, "data.attachments", "not an array"))?;
        for (i, attachment) in attachments.iter().enumerate() {
            images.push(image(path, number, i, attachment)?);
        }
    }
    let mut content = Vec::with_capacity(1 + images.len());
    if !sent.is_empty() || images.is_empty() {
        content.push(Part::text(sent));
    }
    content.extend(images);
    Ok((
        Event::new(line.id, line.timestamp, Body::User { content }),
        typed,
    ))
}

/// An image attachment: a blob with its bytes inline (the only attachment the reader knows).
fn image(
    path: &Path,
    number: usize,
    index: usize,
    attachment: &Value,
) -> Result<Part, PluginError> {
    let field = |name: &str| format!("data.attachments[{index}].{name}");
    let kind = attachment.get("type").and_then(Value::as_str).unwrap_or("");
    let media_type = attachment
        .get("mimeType")
        .and_then(Value::as_str)
        .unwrap_or("");
    if kind != "blob" || !media_type.starts_with("image/") {
        return Err(malformed(
            path,
            number,
            &field("type"),
            format!("a {kind:?} attachment of type {media_type:?} is not read (only image blobs)"),
        ));
    }
    let data = attachment
        .get("data")
        .and_then(Value::as_str)
        .ok_or_else(|| {
            malformed(
                path,
                number,
                &field("data"),
                "an image blob without inline data",
            )
        })?;
    let data = base64::engine::general_purpose::STANDARD
        .decode(data)
        .map_err(|e| malformed(path, number, &field("data"), e.to_string()))?;
    Ok(Part::Image {
        media_type: media_type.to_owned(),
        data,
    })
}

/// An assistant turn and the ids of its tool calls; `None` when it holds nothing the CLI sends.
fn assistant_message(
    path: &Path,
    number: usize,
    line: Line,
) -> Result<Option<(Event, Vec<String>)>, PluginError> {
    let mut content = Vec::new();
    match line.data.get("reasoningText") {
        None => {}
        Some(Value::String(text)) => content.push(AssistantPart::Thinking(Thinking {
            text: text.clone(),
            signature: None,
        })),
        Some(_) => {
            return Err(malformed(
                path,
                number,
                "data.reasoningText",
                "not a string",
            ))
        }
    }
    match line.data.get("content") {
        Some(Value::String(text)) if text.is_empty() => {}
        Some(Value::String(text)) => content.push(AssistantPart::text(text.clone())),
        _ => {
            return Err(malformed(
                path,
                number,
                "data.content",
                "missing or not a string",
            ))
        }
    }
    let mut calls = Vec::new();
    if let Some(requests) = line.data.get("toolRequests") {
        let requests = requests
            .as_array()
            .ok_or_else(|| malformed(path, number, "data.toolRequests", "not an array"))?;
        for (i, request) in requests.iter().enumerate() {
            let member = |name: &str| {
                request.get(name).and_then(Value::as_str).ok_or_else(|| {
                    malformed(
                        path,
                        number,
                        &format!("data.toolRequests[{i}].{name}"),
                        "missing or not a string",
                    )
                })
            };
            let id = member("toolCallId")?.to_owned();
            let name = member("name")?;
            let arguments = request
                .get("arguments")
                .cloned()
                .unwrap_or_else(|| Value::Object(Map::new()));
            let mut call = ToolCall::new(id.clone(), name, arguments);
            if request.get(FREEFORM_KEY) == Some(&Value::Bool(true)) {
                let text = call
                    .arguments()
                    .and_then(ToolInput::freeform_from_structured)
                    .ok_or_else(|| {
                        malformed(
                            path,
                            number,
                            &format!("data.toolRequests[{i}].arguments"),
                            format!("a call marked {FREEFORM_KEY} must have arguments {{\"input\": <text>}}"),
                        )
                    })?;
                call.input = ToolInput::Freeform(text);
            }
            calls.push(id);
            content.push(AssistantPart::ToolCall(call));
        }
    }
    if content.is_empty() {
        return Ok(None);
    }
    let origin =
        match line.data.get(ORIGIN_KEY) {
            None => None,
            Some(value) => Some(serde_json::from_value(value.clone()).map_err(|e| {
                malformed(path, number, &format!("data.{ORIGIN_KEY}"), e.to_string())
            })?),
        };
    let event = Event::new(line.id, line.timestamp, Body::Assistant { content, origin });
    Ok(Some((event, calls)))
}

/// A tool result and the id of the call it answers.
fn tool_result(path: &Path, number: usize, line: Line) -> Result<(String, Event), PluginError> {
    let call = line
        .data
        .get("toolCallId")
        .and_then(Value::as_str)
        .ok_or_else(|| malformed(path, number, "data.toolCallId", "missing or not a string"))?
        .to_owned();
    let success = line
        .data
        .get("success")
        .and_then(Value::as_bool)
        .ok_or_else(|| malformed(path, number, "data.success", "missing or not a boolean"))?;
    let (holder, member) = if success {
        ("result", "content")
    } else {
        ("error", "message")
    };
    let text = line
        .data
        .get(holder)
        .and_then(|h| h.get(member))
        .and_then(Value::as_str)
        .ok_or_else(|| {
            malformed(
                path,
                number,
                &format!("data.{holder}.{member}"),
                "missing or not a string",
            )
        })?;
    let body = Body::ToolResult {
        call_id: call.clone(),
        // An empty output is no part (the CLI sends it as "").
        content: if text.is_empty() {
            Vec::new()
        } else {
            vec![Part::text(text)]
        },
        is_error: !success,
    };
    Ok((call, Event::new(line.id, line.timestamp, body)))
}
