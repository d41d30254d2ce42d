//! The writer: the events Copilot CLI needs to send a history when it resumes it, and nothing
//! else (the CLI adds its own records, the session's row in session-store.db and workspace.yaml
//! when it resumes).

use base64::Engine as _;
use handoff_sdk::marker::OwnershipMarker;
use handoff_sdk::serde_json::{self, json, Map, Value};
use handoff_sdk::stream_stop::Stop;
use handoff_sdk::{
    AssistantPart, Body, Event, EventStream, Part, PluginError, Timestamp, ToolCall, ToolInput,
};

use super::records::*;
use super::TARGET;
use crate::manifest::COPILOT_VERSION;

/// The lines of a new log: `session.start` (with the marker), then the events.
pub fn session(
    id: &str,
    cwd: Option<&str>,
    marker: &OwnershipMarker,
    events: &[Event],
) -> Result<Vec<Value>, PluginError> {
    let started = events.first().map_or_else(Timestamp::now, |e| e.timestamp);
    let start = start_line(id, cwd, marker, started)?;
    let parent = start["id"].as_str().map(str::to_owned);
    let mut lines = vec![start];
    lines.extend(continuation(parent, &mut CallOrder::default(), events)?);
    Ok(lines)
}

/// Writes a new log as its events arrive: `session.start`, dated by `first`, then `first` and
/// every event after it in `events`, each line as its event comes. Between events it keeps the
/// parent's id and the latest assistant turn's call ids ([`CallOrder`]), nothing more.
pub fn write_stream(
    out: &mut dyn std::io::Write,
    (id, cwd, marker): (&str, Option<&str>, &OwnershipMarker),
    first: Event,
    events: &mut dyn EventStream,
) -> Result<(), Stop> {
    let start = start_line(id, cwd, marker, first.timestamp).map_err(Stop::Refused)?;
    lines(out, std::slice::from_ref(&start))?;
    let mut parent = start["id"].as_str().map(str::to_owned);
    let mut order = CallOrder::default();
    let mut next = Some(first);
    let mut index = 0;
    while let Some(event) = next {
        let written =
            event_line(index, &event, parent.take(), &mut order).map_err(Stop::Refused)?;
        lines(out, std::slice::from_ref(&written))?;
        parent = written["id"].as_str().map(str::to_owned);
        index += 1;
        next = events.next_event().map_err(Stop::Refused)?;
    }
    Ok(())
}

/// `session.start`, its marker in its data.
fn start_line(
    id: &str,
    cwd: Option<&str>,
    marker: &OwnershipMarker,
    started: Timestamp,
) -> Result<Value, PluginError> {
    let mut data = json!({
        "sessionId": id,
        "version": 1,
        "producer": "copilot-agent",
        "copilotVersion": COPILOT_VERSION,
        "startTime": started.to_rfc3339(),
        "alreadyInUse": false,
        "remoteSteerable": false,
    });
    if let Some(cwd) = cwd {
        data["context"] = json!({ "cwd": cwd });
    }
    data[MARKER_KEY] =
        serde_json::to_value(marker).map_err(|e| PluginError::Other(e.to_string()))?;
    Ok(line(SESSION_START, data, started, None))
}

/// Where the results of the latest assistant turn's calls stand: the CLI sends results right
/// after their turn, in the order of the calls, whatever order the log has them in.
#[derive(Default)]
pub struct CallOrder {
    calls: Vec<String>,
    /// The position (in `calls`) of the last call answered.
    answered: Option<usize>,
}

impl CallOrder {
    /// Takes `body` in; why the CLI would send it elsewhere than here, if it would.
    pub fn see(&mut self, body: &Body) -> Result<(), String> {
        match body {
            Body::Assistant { content, .. } => {
                self.calls = content
                    .iter()
                    .filter_map(|p| match p {
                        AssistantPart::ToolCall(call) => Some(call.id.clone()),
                        _ => None,
                    })
                    .collect();
                self.answered = None;
            }
            Body::ToolResult { call_id, .. } => {
                let Some(at) = self.calls.iter().position(|c| c == call_id) else {
                    return Err(format!(
                        "a result of call {call_id}, which is not a call of the assistant turn \
                         just before it (the CLI sends results only right after their turn)"
                    ));
                };
                if self.answered.is_some_and(|done| at <= done) {
                    return Err(format!(
                        "the result of call {call_id} after the result of a later call of its \
                         turn (the CLI sends results in the order of the calls)"
                    ));
                }
                self.answered = Some(at);
            }
            Body::User { .. } | Body::Compaction { .. } => {
                self.calls.clear();
                self.answered = None;
            }
        }
        Ok(())
    }
}

/// The lines of `events`, the first a child of `parent`; `order` is where the session's calls
/// stand before them.
pub fn continuation(
    mut parent: Option<String>,
    order: &mut CallOrder,
    events: &[Event],
) -> Result<Vec<Value>, PluginError> {
    let mut lines = Vec::with_capacity(events.len());
    for (index, event) in events.iter().enumerate() {
        let written = event_line(index, event, parent.take(), order)?;
        parent = written["id"].as_str().map(str::to_owned);
        lines.push(written);
    }
    Ok(lines)
}

/// The line of `event` (event `index` of those written), a child of `parent`; `order` is where
/// the session's calls stand before it.
fn event_line(
    index: usize,
    event: &Event,
    parent: Option<String>,
    order: &mut CallOrder,
) -> Result<Value, PluginError> {
    let refuse = |why: &str| {
        PluginError::Other(format!(
            "{TARGET} cannot carry event {index} ({}): {why}",
            event.id
        ))
    };
    order.see(&event.body).map_err(|why| refuse(&why))?;
    let (kind, data) = match &event.body {
        Body::User { content } => (USER_MESSAGE, user(content).map_err(|w| refuse(&w))?),
        Body::Assistant { content, origin } => {
            let mut data = assistant(content).map_err(|w| refuse(&w))?;
            if let Some(origin) = origin {
                data[ORIGIN_KEY] =
                    serde_json::to_value(origin).map_err(|e| PluginError::Other(e.to_string()))?;
            }
            (ASSISTANT_MESSAGE, data)
        }
        Body::ToolResult {
            call_id,
            content,
            is_error,
        } => (
            TOOL_COMPLETE,
            tool_result(call_id, content, *is_error).map_err(|w| refuse(&w))?,
        ),
        Body::Compaction { .. } => {
            return Err(refuse(
                "a compaction (the CLI wraps a summary in a message of its own)",
            ))
        }
    };
    Ok(line(kind, data, event.timestamp, parent))
}

fn line(kind: &str, data: Value, timestamp: Timestamp, parent: Option<String>) -> Value {
    json!({
        "type": kind,
        "data": data,
        "id": uuid::Uuid::new_v4().to_string(),
        "timestamp": timestamp.to_rfc3339(),
        "parentId": parent,
    })
}

/// `user.message`: one text (`content`, which the CLI sends as it is), then images as blob
/// attachments (the CLI sends them after the text).
fn user(content: &[Part]) -> Result<Value, String> {
    let mut text: Option<&str> = None;
    let mut attachments = Vec::new();
    for part in content {
        match part {
            Part::Text { text: t } if text.is_none() && attachments.is_empty() => text = Some(t),
            Part::Text { .. } if attachments.is_empty() => {
                return Err("a user turn of several texts (a user.message has one)".into())
            }
            Part::Text { .. } => {
                return Err("text after an image (the CLI sends attachments after the text)".into())
            }
            Part::Image { media_type, data } => attachments.push(json!({
                "type": "blob",
                "data": base64::engine::general_purpose::STANDARD.encode(data),
                "mimeType": media_type,
            })),
            Part::ImageUrl { .. } => return Err("an image by URL".into()),
        }
    }
    let mut data = Map::new();
    data.insert(
        "content".into(),
        Value::String(text.unwrap_or("").to_owned()),
    );
    if !attachments.is_empty() {
        data.insert("attachments".into(), Value::Array(attachments));
    }
    Ok(Value::Object(data))
}

/// `assistant.message`: reasoning text, one text, then tool calls, in that order.
fn assistant(content: &[AssistantPart]) -> Result<Value, String> {
    let mut reasoning: Option<&str> = None;
    let mut text: Option<&str> = None;
    let mut calls: Vec<&ToolCall> = Vec::new();
    for part in content {
        match part {
            AssistantPart::Thinking(thinking) => {
                if reasoning.is_some() || text.is_some() || !calls.is_empty() {
                    return Err(
                        "thinking after other parts, or twice (an assistant.message has \
                                one reasoningText, before its text)"
                            .into(),
                    );
                }
                if thinking.signature.is_some() {
                    return Err("signed thinking".into());
                }
                reasoning = Some(&thinking.text);
            }
            AssistantPart::Text { text: t } => {
                if text.is_some() || !calls.is_empty() {
                    return Err("a second text, or text after a tool call (an \
                                assistant.message has one content, before its tool calls)"
                        .into());
                }
                text = Some(t);
            }
            AssistantPart::ToolCall(call) => {
                // The CLI sends `JSON.stringify(arguments)`: an object, as every tool takes (a
                // freeform call's structured form is one).
                if !call.structured_arguments().is_object() {
                    return Err(format!(
                        "tool call {} has arguments that are not a JSON object",
                        call.id
                    ));
                }
                calls.push(call);
            }
            AssistantPart::WebSearch(_) => return Err("a web search".into()),
        }
    }
    let requests: Vec<Value> = calls
        .iter()
        .map(|call| {
            let mut request = json!({
                "toolCallId": call.id,
                "name": call.name,
                "arguments": call.structured_arguments(),
                "type": "function",
            });
            if matches!(call.input, ToolInput::Freeform(_)) {
                request[FREEFORM_KEY] = Value::Bool(true);
            }
            request
        })
        .collect();
    let mut data = Map::new();
    data.insert(
        "messageId".into(),
        Value::String(uuid::Uuid::new_v4().to_string()),
    );
    data.insert(
        "content".into(),
        Value::String(text.unwrap_or("").to_owned()),
    );
    data.insert("toolRequests".into(), Value::Array(requests));
    if let Some(reasoning) = reasoning {
        data.insert("reasoningText".into(), Value::String(reasoning.to_owned()));
    }
    Ok(Value::Object(data))
}

/// `tool.execution_complete`: the output as `result.content`, or as `error.message` for a
/// failed call.
fn tool_result(call_id: &str, content: &[Part], is_error: bool) -> Result<Value, String> {
    let text = match content {
        [] => "",
        [Part::Text { text }] => text,
        _ => {
            return Err(
                "a tool result of several parts or an image (the CLI keeps one text)".into(),
            )
        }
    };
    Ok(if is_error {
        json!({ "toolCallId": call_id, "success": false, "error": { "message": text } })
    } else {
        json!({ "toolCallId": call_id, "success": true, "result": { "content": text } })
    })
}

/// Writes `lines` as JSONL.
pub fn lines(out: &mut dyn std::io::Write, lines: &[Value]) -> std::io::Result<()> {
    for line in lines {
        serde_json::to_writer(&mut *out, line)?;
        out.write_all(b"\n")?;
    }
    Ok(())
}
