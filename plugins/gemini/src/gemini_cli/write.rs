//! Canonical events → Gemini CLI message records, in the "modern" form the CLI sends verbatim.
//!
//! - a user event is one `user` message: `content` = its parts (`text`, `inlineData`);
//! - an assistant event is one `gemini` message: `content` = its parts in order (text, Google
//!   thinking as thought parts, calls as `functionCall` parts with our ids), `thoughts` = the ones a Gemini CLI session had
//!   (`opaque["gemini-cli"].thoughts`, never sent by the CLI) or `[]`, and its thought parts
//!   (`thoughtParts`) back at their places in `content`,
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
//! message), text after an image in a tool result (the response holds its texts before its images).
//! An empty text in a tool result is no content (a tool that printed nothing): written as Gemini
//! CLI itself writes it, `{"output": ""}`, and compared as no text (`transcript::Comparison`).

use handoff_sdk::serde_json::{self, Map, Value};
use handoff_sdk::{AssistantPart, Body, Event, Origin, Part, PluginError, ToolCall};

use super::parts::{self, PROVIDER};
use super::read::API;
use super::record_types::{Extras, GeminiRec, Rec, ToolCallRec, UserRec, WPart};

/// The message left open for results: its calls that have no result yet, and the record.
pub(crate) struct Open<'a> {
    pub record: OpenRecord<'a>,
    pub pending: Vec<ToolCall>,
}

/// A `gemini` record being written, or one already in the file (written again, whole, when
/// results are added: the later line with the same id replaces it in place).
pub(crate) enum OpenRecord<'a> {
    New(GeminiRec<'a>),
    Existing {
        record: Map<String, Value>,
        changed: bool,
    },
}

fn refuse(index: usize, event: &Event, message: impl std::fmt::Display) -> PluginError {
    PluginError::InvalidTranscript(format!("event {index} ({}): {message}", event.id))
}

/// The records for `events` (whose first has index `offset` in the whole transcript), after the
/// message `open` left open by what is already written.
pub(crate) fn records<'a>(
    events: &'a [Event],
    offset: usize,
    mut open: Option<Open<'a>>,
) -> Result<Vec<Rec<'a>>, PluginError> {
    let mut out = Vec::with_capacity(events.len());
    for (k, event) in events.iter().enumerate() {
        let index = offset + k;
        match &event.body {
            Body::User { content } => {
                close(&mut open, &mut out);
                out.push(Rec::User(user(index, event, content)?));
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
                add_result(&mut o.record, index, event, call, content, *is_error)?;
            }
            Body::Compaction { .. } => {
                return Err(refuse(index, event, "Gemini CLI has no compaction record"));
            }
        }
    }
    close(&mut open, &mut out);
    Ok(out)
}

fn add_result<'a>(
    record: &mut OpenRecord<'a>,
    index: usize,
    event: &'a Event,
    call: ToolCall,
    content: &'a [Part],
    is_error: bool,
) -> Result<(), PluginError> {
    check_result(index, event, content)?;
    match record {
        OpenRecord::New(rec) => {
            // The call is the record's own (borrowed from the same event list).
            let own = rec_call(rec, &call.id);
            rec.tool_calls
                .push(tool_call(event, own, content, is_error));
        }
        OpenRecord::Existing { record, changed } => {
            let value = serde_json::to_value(tool_call(event, &call, content, is_error))
                .expect("a tool call record serialises");
            let list = record
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
                Some(i) => list[i] = value,
                None => list.push(value),
            }
            *changed = true;
        }
    }
    Ok(())
}

/// The call `id` as the record borrows it.
fn rec_call<'a>(rec: &GeminiRec<'a>, id: &str) -> &'a ToolCall {
    rec.calls
        .iter()
        .copied()
        .find(|c| c.id == id)
        .expect("a pending call is the record's own")
}

fn close<'a>(open: &mut Option<Open<'a>>, out: &mut Vec<Rec<'a>>) {
    match open.take().map(|o| o.record) {
        Some(OpenRecord::New(rec)) => out.push(Rec::Gemini(rec)),
        Some(OpenRecord::Existing {
            record,
            changed: true,
        }) => out.push(Rec::Raw(Value::Object(record))),
        _ => {}
    }
}

fn user<'a>(
    index: usize,
    event: &'a Event,
    content: &'a [Part],
) -> Result<UserRec<'a>, PluginError> {
    for (k, p) in content.iter().enumerate() {
        if matches!(p, Part::Text { text } if text.is_empty()) {
            return Err(refuse(
                index,
                event,
                format!("body.content[{k}]: an empty text part (Gemini rule G7)"),
            ));
        }
    }
    if parts::skipped_user_text(&parts::text_form_start(content)) {
        return Err(refuse(
            index,
            event,
            "Gemini CLI drops a user message whose text starts with '/', '?', <session_context> or <hook_context>, or is blank: it would never reach the model",
        ));
    }
    Ok(UserRec {
        id: &event.id,
        timestamp: event.timestamp.to_rfc3339(),
        kind: "user",
        content: content.iter().map(parts::user_part).collect(),
        extras: Extras {
            author: event.author.as_ref(),
            ..Extras::default()
        },
    })
}

fn is_default_origin(origin: &Origin) -> bool {
    origin.provider == PROVIDER && origin.api.as_deref() == Some(API)
}

fn assistant<'a>(
    index: usize,
    event: &'a Event,
    content: &'a [AssistantPart],
    origin: Option<&'a Origin>,
) -> Result<Option<Open<'a>>, PluginError> {
    let provider = origin.map(|o| o.provider.as_str());
    let model = origin.and_then(|o| o.model.as_deref());
    let mut pending = Vec::new();
    let mut calls = Vec::new();
    let mut signature_models = Vec::new();
    let mut freeform_calls = Vec::new();
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
                if call.arguments().is_some_and(|a| !a.is_object()) {
                    return Err(refuse(index, event, format!("body.content[{k}]: the arguments of {:?} are not a JSON object (Gemini rule G3)", call.id)));
                }
                if call.arguments().is_none() {
                    freeform_calls.push(calls.len());
                }
                pending.push(call.clone());
                calls.push(call);
            }
            AssistantPart::WebSearch(_) => {
                return Err(refuse(
                    index,
                    event,
                    format!("body.content[{k}]: an OpenAI web search has no Gemini CLI form"),
                ));
            }
            AssistantPart::Thinking(t) if parts::is_google(t, provider) => {
                if let Some(s) = &t.signature {
                    signature_models.push(s.model.as_deref());
                }
            }
            _ => {}
        }
    }
    let mut model_parts = parts::model_parts(content, provider);
    if model_parts.is_empty() {
        return Ok(None); // only thinking Gemini cannot carry: nothing of it is written
    }
    for (at, part) in native_thought_parts(event) {
        model_parts.insert(at.min(model_parts.len()), WPart::Verbatim(part));
    }
    let keep_origin = !origin.is_some_and(is_default_origin);
    let rec = GeminiRec {
        id: &event.id,
        timestamp: event.timestamp.to_rfc3339(),
        kind: "gemini",
        content: model_parts,
        thoughts: native_thoughts(event),
        model,
        extras: Extras {
            author: event.author.as_ref(),
            origin: keep_origin.then_some(origin),
            signature_models: if signature_models.iter().any(|m| *m != model) {
                signature_models
            } else {
                Vec::new()
            },
            freeform_calls,
            ..Extras::default()
        },
        tool_calls: Vec::new(),
        calls,
    };
    Ok(Some(Open {
        record: OpenRecord::New(rec),
        pending,
    }))
}

/// The `thoughts` a Gemini CLI session had on this message (read into its opaque fields).
fn native_thoughts(event: &Event) -> &[Value] {
    event
        .opaque
        .get(super::OPAQUE_KEY)
        .and_then(|o| o.get(super::THOUGHTS))
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// The thought parts a Gemini CLI session had in this message's `content`, with their index
/// there, in order (read into its opaque fields).
fn native_thought_parts(event: &Event) -> impl Iterator<Item = (usize, &Value)> {
    event
        .opaque
        .get(super::OPAQUE_KEY)
        .and_then(|o| o.get(super::THOUGHT_PARTS))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|entry| {
            let at = usize::try_from(entry.get("at")?.as_u64()?).ok()?;
            Some((at, entry.get("part")?))
        })
}

fn check_result(index: usize, event: &Event, content: &[Part]) -> Result<(), PluginError> {
    let mut seen_image = false;
    for (k, p) in content.iter().enumerate() {
        match p {
            Part::Text { .. } if seen_image => {
                return Err(refuse(index, event, format!("body.content[{k}]: text after an image in a tool result (a Gemini function response holds its text before its images)")));
            }
            Part::Text { .. } => {}
            _ => seen_image = true,
        }
    }
    Ok(())
}

fn tool_call<'a>(
    event: &'a Event,
    call: &'a ToolCall,
    content: &'a [Part],
    is_error: bool,
) -> ToolCallRec<'a> {
    ToolCallRec {
        id: &call.id,
        name: &call.name,
        args: call.structured_arguments(),
        result: [parts::result_part(call, content, is_error)],
        status: if is_error { "error" } else { "success" },
        timestamp: event.timestamp.to_rfc3339(),
        extras: Extras {
            id: Some(&event.id),
            author: event.author.as_ref(),
            ..Extras::default()
        },
    }
}
