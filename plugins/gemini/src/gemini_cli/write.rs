//! Canonical events → Gemini CLI message records, in the "modern" form the CLI sends verbatim.
//!
//! - a user event is one `user` message: `content` = its parts (`text`, `inlineData`);
//! - an assistant event is one `gemini` message: `content` = its parts in order (text, Google
//!   thinking as thought parts, calls as `functionCall` parts with our ids), `thoughts: []`,
//!   `model` = the origin's model; foreign thinking is display-only and not written;
//! - each tool result goes into that message's `toolCalls` (in result order): `{id, name, args,
//!   result: [functionResponse], status, timestamp}` — the CLI rebuilds the function-response turn
//!   from it; no separate functionResponse `user` message is written (the CLI would send it twice);
//! - what no record field holds (event ids of results, authors, a non-Gemini origin, signature
//!   models) is in the member `x-handoff-event`, which the CLI keeps and never sends.
//!
//! Refused before anything is written, naming the event: a user message the CLI would skip on
//! resume (text form starting with `/`, `?`, `<session_context>`, `<hook_context>`, or blank), an
//! empty text part (Gemini rule G7), call arguments that are not a JSON object (G3), a tool result
//! that does not directly follow its call's assistant event (the CLI keeps results inside that
//! message), empty texts or text after an image in a tool result (the response holds its texts before its images).

use handoff_sdk::serde_json::{json, Map, Value};
use handoff_sdk::{AssistantPart, Body, Event, Origin, Part, PluginError, ToolCall};

use super::parts::{self, PROVIDER};
use super::read::API;
use super::records::EVENT_KEY;

/// The message left open for results: a `gemini` record and its calls that have no result yet.
pub(crate) struct Open {
    pub record: Map<String, Value>,
    /// Whether it is already in the file (then it is written again, whole, when results are added:
    /// the later line with the same id replaces it).
    pub existing: bool,
    pub changed: bool,
    pub pending: Vec<ToolCall>,
}

fn refuse(index: usize, event: &Event, message: impl std::fmt::Display) -> PluginError {
    PluginError::InvalidTranscript(format!("event {index} ({}): {message}", event.id))
}

/// The records for `events` (whose first has index `offset` in the whole transcript), after the
/// message `open` left open by what is already written.
pub(crate) fn records(
    events: &[Event],
    offset: usize,
    mut open: Option<Open>,
) -> Result<Vec<Value>, PluginError> {
    let mut out = Vec::with_capacity(events.len());
    for (k, event) in events.iter().enumerate() {
        let index = offset + k;
        match &event.body {
            Body::User { content } => {
                close(&mut open, &mut out);
                out.push(user(index, event, content)?);
            }
            Body::Assistant { content, origin } => {
                close(&mut open, &mut out);
                open = assistant(index, event, content, origin.as_ref())?;
            }
            Body::ToolResult {
                call_id,
                content,
                is_error,
            } => {
                let Some(o) = open.as_mut() else {
                    return Err(refuse(index, event, "a tool result must directly follow the assistant event of its call (Gemini CLI keeps results inside that message)"));
                };
                let Some(at) = o.pending.iter().position(|c| &c.id == call_id) else {
                    return Err(refuse(index, event, format!("the result of {call_id:?} does not directly follow the assistant event that calls it (Gemini CLI keeps results inside that message)")));
                };
                let call = o.pending.remove(at);
                let record = tool_call(index, event, &call, content, *is_error)?;
                let list = o
                    .record
                    .entry("toolCalls")
                    .or_insert_with(|| Value::Array(Vec::new()));
                if !list.is_array() {
                    *list = Value::Array(Vec::new());
                }
                let list = list.as_array_mut().expect("toolCalls is an array");
                // A legacy message lists its pending call here already: the result completes it.
                match list
                    .iter()
                    .position(|tc| tc.get("id").and_then(Value::as_str) == Some(call.id.as_str()))
                {
                    Some(i) => list[i] = record,
                    None => list.push(record),
                }
                o.changed = true;
            }
            Body::Compaction { .. } => {
                return Err(refuse(index, event, "Gemini CLI has no compaction record"));
            }
        }
    }
    close(&mut open, &mut out);
    Ok(out)
}

fn close(open: &mut Option<Open>, out: &mut Vec<Value>) {
    if let Some(o) = open.take() {
        if !o.existing || o.changed {
            out.push(Value::Object(o.record));
        }
    }
}

fn extras(event: &Event) -> Map<String, Value> {
    let mut m = Map::new();
    if let Some(a) = &event.author {
        m.insert("author".into(), json!(a));
    }
    m
}

fn user(index: usize, event: &Event, content: &[Part]) -> Result<Value, PluginError> {
    for (k, p) in content.iter().enumerate() {
        if matches!(p, Part::Text { text } if text.is_empty()) {
            return Err(refuse(
                index,
                event,
                format!("body.content[{k}]: an empty text part (Gemini rule G7)"),
            ));
        }
    }
    let parts: Vec<Value> = content.iter().map(parts::user_part).collect();
    if parts::skipped_user_text(&parts::text_form(&parts)) {
        return Err(refuse(
            index,
            event,
            "Gemini CLI drops a user message whose text starts with '/', '?', <session_context> or <hook_context>, or is blank: it would never reach the model",
        ));
    }
    let mut record = Map::new();
    record.insert("id".into(), json!(event.id));
    record.insert("timestamp".into(), json!(event.timestamp.to_rfc3339()));
    record.insert("type".into(), json!("user"));
    record.insert("content".into(), Value::Array(parts));
    let extras = extras(event);
    if !extras.is_empty() {
        record.insert(EVENT_KEY.into(), Value::Object(extras));
    }
    Ok(Value::Object(record))
}

fn default_origin(model: Option<&str>) -> Origin {
    Origin {
        provider: PROVIDER.to_owned(),
        model: model.map(str::to_owned),
        api: Some(API.to_owned()),
    }
}

fn assistant(
    index: usize,
    event: &Event,
    content: &[AssistantPart],
    origin: Option<&Origin>,
) -> Result<Option<Open>, PluginError> {
    let provider = origin.map(|o| o.provider.as_str());
    let model = origin.and_then(|o| o.model.as_deref());
    let mut pending = Vec::new();
    let mut signature_models = Vec::new();
    for (k, p) in content.iter().enumerate() {
        match p {
            AssistantPart::Text { text } if text.is_empty() => {
                return Err(refuse(
                    index,
                    event,
                    format!("body.content[{k}]: an empty text part (Gemini rule G7)"),
                ));
            }
            AssistantPart::ToolCall(call) => {
                if !call.arguments.is_object() {
                    return Err(refuse(index, event, format!("body.content[{k}]: the arguments of {:?} are not a JSON object (Gemini rule G3)", call.id)));
                }
                pending.push(call.clone());
            }
            AssistantPart::Thinking(t) if parts::is_google(t, provider) => {
                if let Some(s) = &t.signature {
                    signature_models.push(s.model.clone());
                }
            }
            _ => {}
        }
    }
    let model_parts = parts::model_parts(content, provider);
    if model_parts.is_empty() {
        return Ok(None); // only thinking Gemini cannot carry: nothing of it is written
    }
    let mut record = Map::new();
    record.insert("id".into(), json!(event.id));
    record.insert("timestamp".into(), json!(event.timestamp.to_rfc3339()));
    record.insert("type".into(), json!("gemini"));
    record.insert("content".into(), Value::Array(model_parts));
    record.insert("thoughts".into(), Value::Array(Vec::new()));
    if let Some(m) = model {
        record.insert("model".into(), json!(m));
    }
    let mut extras = extras(event);
    if origin != Some(&default_origin(model)) {
        extras.insert("origin".into(), json!(origin));
    }
    if signature_models.iter().any(|m| m.as_deref() != model) {
        extras.insert("signature_models".into(), json!(signature_models));
    }
    if !extras.is_empty() {
        record.insert(EVENT_KEY.into(), Value::Object(extras));
    }
    Ok(Some(Open {
        record,
        existing: false,
        changed: false,
        pending,
    }))
}

fn tool_call(
    index: usize,
    event: &Event,
    call: &ToolCall,
    content: &[Part],
    is_error: bool,
) -> Result<Value, PluginError> {
    let mut seen_image = false;
    for (k, p) in content.iter().enumerate() {
        match p {
            Part::Text { .. } if seen_image => {
                return Err(refuse(index, event, format!("body.content[{k}]: text after an image in a tool result (a Gemini function response holds its text before its images)")));
            }
            Part::Text { text } if text.is_empty() => {
                return Err(refuse(index, event, format!("body.content[{k}]: an empty text in a tool result (Gemini rule G7; the response would read back without it)")));
            }
            Part::Text { .. } => {}
            _ => seen_image = true,
        }
    }
    let mut extras = extras(event);
    extras.insert("id".into(), json!(event.id));
    Ok(json!({
        "id": call.id,
        "name": call.name,
        "args": call.arguments,
        "result": [parts::result_part(call, content, is_error)],
        "status": if is_error { "error" } else { "success" },
        "timestamp": event.timestamp.to_rfc3339(),
        EVENT_KEY: extras,
    }))
}
