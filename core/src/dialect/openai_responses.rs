//! The OpenAI Responses dialect: a transcript as the `input` items of `POST /v1/responses`.
//!
//! - [`render`] turns a canonical transcript into the `input` items a stateless client sends
//!   (`store: false`, no item ids, encrypted reasoning replayed only to the model that made it).
//! - [`parse`] reads a real request's `input` back into canonical events. It accepts what the Codex
//!   CLI sends: developer and system messages (instructions, set aside), the injected
//!   `<environment_context>` user message (set aside, see [`is_environment_context`]), item `id`s
//!   and members it does not know.
//! - [`validate`] checks `input` items against the rules R1–R7 of `wire-rules.md` §3 that can be
//!   checked on the wire; [`check_reasoning_portable`] checks R5, which needs the canonical maker of
//!   each reasoning blob; [`validate_request`] adds the request-level rule R6.
//!
//! The wire carries no timestamps, authors or model origins: parsed events have timestamp 0, no
//! author and no origin, and ids taken from the item `id` where there is one.

use std::collections::{HashMap, HashSet};

use base64::Engine as _;
use serde_json::{json, Map, Value};

use crate::transcript::{
    AssistantPart, Body, Event, Part, Signature, Thinking, Timestamp, ToolCall, Transcript,
};

/// The dialect name used in resume plans and live recipes.
pub const DIALECT: &str = "openai-responses";
/// The provider whose reasoning this dialect replays.
pub const PROVIDER: &str = "openai";

/// A rule of `wire-rules.md` §3 that a history breaks.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{rule}: input[{index}]: {message}")]
pub struct RuleViolation {
    /// The rule, e.g. `R1`.
    pub rule: &'static str,
    /// The index of the offending item in `input` (or of the event, for [`check_reasoning_portable`]).
    pub index: usize,
    /// What is wrong.
    pub message: String,
}

/// Why `input` could not be parsed into canonical events.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("input[{index}]: {field}: {message}")]
pub struct ParseError {
    /// The index of the offending item.
    pub index: usize,
    /// The field at fault (`type`, `content[1].image_url`, …).
    pub field: String,
    /// What is wrong.
    pub message: String,
}

/// Whether `text` is the environment context the Codex CLI injects as a user message: exactly one
/// `<environment_context>…</environment_context>` element (surrounding whitespace aside).
pub fn is_environment_context(text: &str) -> bool {
    let t = text.trim();
    t.starts_with("<environment_context>") && t.ends_with("</environment_context>")
}

/// Renders `transcript` as the `input` items the model should see, for `model` (when known).
///
/// Compactions are applied (the summary, as a user message, stands in for the events it
/// replaces). Thinking goes back only as encrypted reasoning to the provider and model that made
/// it; any other thinking is display-only and left out.
pub fn render(transcript: &Transcript, model: Option<&str>) -> Vec<Value> {
    // (event index, its items); a compaction drops the entries it replaces.
    let mut rendered: Vec<(usize, Vec<Value>)> = Vec::with_capacity(transcript.events.len());
    for (index, event) in transcript.events.iter().enumerate() {
        match &event.body {
            Body::User { content } => rendered.push((
                index,
                vec![json!({"type": "message", "role": "user", "content": parts(content)})],
            )),
            Body::Assistant { content, .. } => {
                let items = assistant_items(content, model);
                if !items.is_empty() {
                    rendered.push((index, items));
                }
            }
            Body::ToolResult {
                call_id, content, ..
            } => rendered.push((
                index,
                vec![json!({"type": "function_call_output", "call_id": call_id, "output": output(content)})],
            )),
            Body::Compaction {
                summary,
                replaces_through,
            } => {
                let through = transcript.position(replaces_through).unwrap_or(index);
                rendered.retain(|(i, _)| *i > through);
                rendered.insert(
                    0,
                    (
                        index,
                        vec![json!({"type": "message", "role": "user",
                            "content": [{"type": "input_text", "text": summary}]})],
                    ),
                );
            }
        }
    }
    rendered.into_iter().flat_map(|(_, items)| items).collect()
}

fn assistant_items(content: &[AssistantPart], model: Option<&str>) -> Vec<Value> {
    let mut items = Vec::new();
    let mut texts: Vec<Value> = Vec::new();
    let flush = |texts: &mut Vec<Value>, items: &mut Vec<Value>| {
        if !texts.is_empty() {
            items.push(
                json!({"type": "message", "role": "assistant", "content": std::mem::take(texts)}),
            );
        }
    };
    for part in content {
        match part {
            AssistantPart::Text { text } => {
                texts.push(json!({"type": "output_text", "text": text}))
            }
            AssistantPart::Thinking(thinking) => {
                let Some(signature) = &thinking.signature else {
                    continue;
                };
                if !replayable(signature, model) {
                    continue;
                }
                flush(&mut texts, &mut items);
                let summary: Vec<Value> = if thinking.text.is_empty() {
                    Vec::new()
                } else {
                    vec![json!({"type": "summary_text", "text": thinking.text})]
                };
                items.push(json!({"type": "reasoning", "summary": summary,
                    "encrypted_content": signature.value}));
            }
            AssistantPart::ToolCall(call) => {
                flush(&mut texts, &mut items);
                items.push(
                    json!({"type": "function_call", "call_id": call.id, "name": call.name,
                    "arguments": call.arguments.to_string()}),
                );
            }
        }
    }
    flush(&mut texts, &mut items);
    items
}

fn replayable(signature: &Signature, model: Option<&str>) -> bool {
    signature.provider == PROVIDER
        && match (&signature.model, model) {
            (Some(made_by), Some(target)) => made_by == target,
            _ => true,
        }
}

fn parts(content: &[Part]) -> Vec<Value> {
    content
        .iter()
        .map(|p| match p {
            Part::Text { text } => json!({"type": "input_text", "text": text}),
            Part::Image { media_type, data } => json!({"type": "input_image", "image_url":
                format!("data:{media_type};base64,{}", base64::engine::general_purpose::STANDARD.encode(data))}),
            Part::ImageUrl { url } => json!({"type": "input_image", "image_url": url}),
        })
        .collect()
}

fn output(content: &[Part]) -> Value {
    match content {
        [Part::Text { text }] => Value::String(text.clone()),
        parts_ => Value::Array(parts(parts_)),
    }
}

/// Parses a request's `input` items into canonical events (see the module docs for what is set
/// aside). Consecutive assistant-side items (reasoning, assistant messages, function calls) form
/// one assistant event, as one model response produced them.
pub fn parse(input: &[Value]) -> Result<Transcript, ParseError> {
    let mut b = Builder::default();
    for (index, item) in input.iter().enumerate() {
        let fail = |field: &str, message: String| ParseError {
            index,
            field: field.to_owned(),
            message,
        };
        let obj = item
            .as_object()
            .ok_or_else(|| fail("", "an input item must be an object".into()))?;
        let kind = match obj.get("type").and_then(Value::as_str) {
            Some(kind) => kind,
            // EasyInputMessage may omit the type.
            None if obj.contains_key("role") => "message",
            None => return Err(fail("type", "missing".into())),
        };
        let item_id = obj.get("id").and_then(Value::as_str);
        match kind {
            "message" => {
                let role = obj
                    .get("role")
                    .and_then(Value::as_str)
                    .ok_or_else(|| fail("role", "missing".into()))?;
                match role {
                    "developer" | "system" => {}
                    "user" => {
                        let content = message_content(obj, index)?;
                        let injected = matches!(content.as_slice(),
                            [Part::Text { text }] if is_environment_context(text));
                        if !injected {
                            b.event(index, item_id, Body::User { content });
                        }
                    }
                    "assistant" => {
                        for part in message_content(obj, index)? {
                            match part {
                                Part::Text { text } => {
                                    b.assistant_part(index, item_id, AssistantPart::Text { text })
                                }
                                _ => {
                                    return Err(fail(
                                        "content",
                                        "an assistant message holds only text".into(),
                                    ))
                                }
                            }
                        }
                    }
                    other => return Err(fail("role", format!("unknown role {other:?}"))),
                }
            }
            "reasoning" => {
                let text = obj
                    .get("summary")
                    .and_then(Value::as_array)
                    .map(|s| {
                        s.iter()
                            .filter_map(|p| p.get("text").and_then(Value::as_str))
                            .collect::<Vec<_>>()
                            .join("\n\n")
                    })
                    .unwrap_or_default();
                let signature = obj
                    .get("encrypted_content")
                    .and_then(Value::as_str)
                    .map(|value| Signature {
                        provider: PROVIDER.to_owned(),
                        model: None,
                        value: value.to_owned(),
                        redacted: text.is_empty(),
                    });
                b.assistant_part(
                    index,
                    item_id,
                    AssistantPart::Thinking(Thinking { text, signature }),
                );
            }
            "function_call" => {
                let get = |field: &str| {
                    obj.get(field)
                        .and_then(Value::as_str)
                        .ok_or_else(|| fail(field, "missing or not a string".into()))
                };
                let arguments = serde_json::from_str(get("arguments")?)
                    .map_err(|e| fail("arguments", format!("not a JSON document: {e}")))?;
                let call = ToolCall {
                    id: get("call_id")?.to_owned(),
                    name: get("name")?.to_owned(),
                    arguments,
                };
                b.assistant_part(index, item_id, AssistantPart::ToolCall(call));
            }
            "function_call_output" => {
                let call_id = obj
                    .get("call_id")
                    .and_then(Value::as_str)
                    .ok_or_else(|| fail("call_id", "missing or not a string".into()))?
                    .to_owned();
                let content = match obj.get("output") {
                    Some(Value::String(text)) => vec![Part::Text { text: text.clone() }],
                    Some(Value::Array(items)) => content_parts(items, index, "output")?,
                    _ => return Err(fail("output", "must be a string or an array".into())),
                };
                b.event(
                    index,
                    item_id,
                    Body::ToolResult {
                        call_id,
                        content,
                        is_error: false,
                    },
                );
            }
            other => {
                return Err(fail(
                    "type",
                    format!("item type {other:?} has no canonical form"),
                ))
            }
        }
    }
    Ok(Transcript::new(b.events))
}

/// Collects parsed events; consecutive assistant-side items join one assistant event.
#[derive(Default)]
struct Builder {
    events: Vec<Event>,
    ids: HashSet<String>,
    assistant_open: bool,
}

impl Builder {
    fn event(&mut self, index: usize, item_id: Option<&str>, body: Body) {
        let id = match item_id {
            Some(id) if !self.ids.contains(id) => id.to_owned(),
            _ => format!("item-{index}"),
        };
        self.ids.insert(id.clone());
        self.assistant_open = matches!(body, Body::Assistant { .. });
        self.events
            .push(Event::new(id, Timestamp::from_millis(0), body));
    }

    fn assistant_part(&mut self, index: usize, item_id: Option<&str>, part: AssistantPart) {
        if self.assistant_open {
            if let Some(Event {
                body: Body::Assistant { content, .. },
                ..
            }) = self.events.last_mut()
            {
                content.push(part);
                return;
            }
        }
        self.event(
            index,
            item_id,
            Body::Assistant {
                content: vec![part],
                origin: None,
            },
        );
    }
}

fn message_content(obj: &Map<String, Value>, index: usize) -> Result<Vec<Part>, ParseError> {
    match obj.get("content") {
        Some(Value::String(text)) => Ok(vec![Part::Text { text: text.clone() }]),
        Some(Value::Array(items)) => content_parts(items, index, "content"),
        _ => Err(ParseError {
            index,
            field: "content".into(),
            message: "must be a string or an array".into(),
        }),
    }
}

fn content_parts(items: &[Value], index: usize, field: &str) -> Result<Vec<Part>, ParseError> {
    let mut parts = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let fail = |message: String| ParseError {
            index,
            field: format!("{field}[{i}]"),
            message,
        };
        let kind = item.get("type").and_then(Value::as_str);
        match kind {
            Some("input_text" | "output_text") => {
                let text = item
                    .get("text")
                    .and_then(Value::as_str)
                    .ok_or_else(|| fail("text is missing".into()))?;
                parts.push(Part::Text {
                    text: text.to_owned(),
                });
            }
            Some("input_image") => {
                let url = item
                    .get("image_url")
                    .and_then(Value::as_str)
                    .ok_or_else(|| {
                        fail("image_url is missing (file_id images are not supported)".into())
                    })?;
                parts.push(image_part(url).map_err(fail)?);
            }
            other => {
                return Err(fail(format!(
                    "content type {other:?} has no canonical form"
                )))
            }
        }
    }
    Ok(parts)
}

/// A `data:<type>;base64,<bytes>` URL becomes image bytes; any other URL stays a URL.
pub fn image_part(url: &str) -> Result<Part, String> {
    let Some(rest) = url.strip_prefix("data:") else {
        return Ok(Part::ImageUrl {
            url: url.to_owned(),
        });
    };
    let (media_type, data) = rest.split_once(";base64,").ok_or_else(|| {
        "a data: URL that is not base64 (expected data:<type>;base64,…)".to_owned()
    })?;
    let data = base64::engine::general_purpose::STANDARD
        .decode(data)
        .map_err(|e| format!("the image data is not base64: {e}"))?;
    Ok(Part::Image {
        media_type: media_type.to_owned(),
        data,
    })
}

fn is_assistant_side(item: &Value) -> bool {
    match item.get("type").and_then(Value::as_str) {
        Some("message") => item.get("role").and_then(Value::as_str) == Some("assistant"),
        Some(
            "reasoning" | "function_call" | "custom_tool_call" | "web_search_call"
            | "computer_call" | "local_shell_call" | "file_search_call",
        ) => true,
        _ => false,
    }
}

/// Checks `input` against the wire rules R1, R2, R3, R4 and R7 (the ones visible in `input`
/// alone, assuming `store: false` as a stateless client sends). The first violation is returned.
pub fn validate(input: &[Value]) -> Result<(), RuleViolation> {
    let violation = |rule: &'static str, index: usize, message: String| {
        Err(RuleViolation {
            rule,
            index,
            message,
        })
    };
    let kind = |item: &Value| item.get("type").and_then(Value::as_str).map(str::to_owned);
    // R1: every call has an output; every output answers a call before it.
    let mut calls: HashMap<String, (usize, bool)> = HashMap::new();
    let uses_reasoning = input
        .iter()
        .any(|i| kind(i).as_deref() == Some("reasoning"));
    for (index, item) in input.iter().enumerate() {
        let call_id = item.get("call_id").and_then(Value::as_str);
        match kind(item).as_deref() {
            Some("function_call") => {
                let Some(id) = call_id else {
                    return violation("R1", index, "a function_call without a call_id".into());
                };
                if calls.insert(id.to_owned(), (index, false)).is_some() {
                    return violation("R1", index, format!("call_id {id:?} is used by two calls"));
                }
            }
            Some("function_call_output") => {
                let Some(id) = call_id else {
                    return violation(
                        "R7",
                        index,
                        "a function_call_output without a call_id".into(),
                    );
                };
                // R7: call_id is 1–64 characters.
                let len = id.chars().count();
                if !(1..=64).contains(&len) {
                    return violation(
                        "R7",
                        index,
                        format!("call_id is {len} characters; the API takes 1 to 64"),
                    );
                }
                match calls.get_mut(id) {
                    Some((_, answered)) if !*answered => *answered = true,
                    Some(_) => {
                        return violation("R1", index, format!("a second output for call {id:?}"))
                    }
                    None => {
                        return violation(
                            "R1",
                            index,
                            format!(
                                "no tool call found for function call output with call_id {id:?}"
                            ),
                        )
                    }
                }
            }
            Some("reasoning") => {
                let has_id = item.get("id").and_then(Value::as_str).is_some();
                // R2: a reasoning item sent with its id needs the item it produced right after it.
                if has_id
                    && !input.get(index + 1).is_some_and(|next| {
                        is_assistant_side(next) && kind(next).as_deref() != Some("reasoning")
                    })
                {
                    return violation(
                        "R2",
                        index,
                        "a reasoning item with an id was provided without its required following item".into(),
                    );
                }
                // R4: with store=false an id cannot be looked up; the reasoning must travel
                // encrypted.
                if has_id
                    && item
                        .get("encrypted_content")
                        .and_then(Value::as_str)
                        .is_none()
                {
                    return violation(
                        "R4",
                        index,
                        "a reasoning item referenced by id without encrypted_content; items are not persisted with store=false".into(),
                    );
                }
            }
            Some("item_reference") => {
                return violation(
                    "R4",
                    index,
                    "item_reference cannot be resolved with store=false".into(),
                )
            }
            _ => {}
        }
        // R3: an output item sent with its server id needs its reasoning item (reasoning models:
        // the history contains reasoning).
        if uses_reasoning
            && is_assistant_side(item)
            && kind(item).as_deref() != Some("reasoning")
            && item.get("id").and_then(Value::as_str).is_some()
        {
            let mut back = index;
            let mut found = false;
            while back > 0 && is_assistant_side(&input[back - 1]) {
                back -= 1;
                if kind(&input[back]).as_deref() == Some("reasoning") {
                    found = true;
                    break;
                }
            }
            if !found {
                return violation(
                    "R3",
                    index,
                    "an item sent with its id was provided without its required reasoning item"
                        .into(),
                );
            }
        }
    }
    if let Some((id, (index, _))) = calls
        .iter()
        .filter(|(_, (_, answered))| !answered)
        .min_by_key(|(_, (index, _))| *index)
    {
        return violation(
            "R1",
            *index,
            format!("no tool output found for function call {id}"),
        );
    }
    // R7 for calls too: their ids come back in outputs.
    for (index, item) in input.iter().enumerate() {
        if kind(item).as_deref() == Some("function_call") {
            if let Some(id) = item.get("call_id").and_then(Value::as_str) {
                let len = id.chars().count();
                if !(1..=64).contains(&len) {
                    return violation(
                        "R7",
                        index,
                        format!("call_id is {len} characters; the API takes 1 to 64"),
                    );
                }
            }
        }
    }
    Ok(())
}

/// Checks a whole request body: `input` by [`validate`], plus R6 (`previous_response_id` cannot
/// be combined with `conversation`).
pub fn validate_request(body: &Value) -> Result<(), RuleViolation> {
    if body
        .get("previous_response_id")
        .is_some_and(|v| !v.is_null())
        && body.get("conversation").is_some_and(|v| !v.is_null())
    {
        return Err(RuleViolation {
            rule: "R6",
            index: 0,
            message: "previous_response_id cannot be used together with conversation".into(),
        });
    }
    match body.get("input") {
        Some(Value::Array(items)) => validate(items),
        _ => Ok(()),
    }
}

/// R5: encrypted reasoning is bound to the model (and provider) that made it. Returns the first
/// thinking part of `transcript` whose signature would be replayed to `model` although another
/// model or provider made it (events are indexed by position). [`render`] leaves those out.
pub fn check_reasoning_portable(transcript: &Transcript, model: &str) -> Result<(), RuleViolation> {
    for (index, event) in transcript.events.iter().enumerate() {
        if let Body::Assistant { content, .. } = &event.body {
            for part in content {
                if let AssistantPart::Thinking(Thinking {
                    signature: Some(signature),
                    ..
                }) = part
                {
                    let same_model = signature.model.as_deref().is_none_or(|m| m == model);
                    if signature.provider != PROVIDER || !same_model {
                        return Err(RuleViolation {
                            rule: "R5",
                            index,
                            message: format!(
                                "event {}: reasoning encrypted by {}/{} cannot be decrypted for model {model}",
                                event.id,
                                signature.provider,
                                signature.model.as_deref().unwrap_or("?")
                            ),
                        });
                    }
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::transcript::Comparison;

    fn ev(id: &str, body: Body) -> Event {
        Event::new(id, Timestamp::from_millis(0), body)
    }

    fn sample() -> Transcript {
        Transcript::new(vec![
            ev(
                "u1",
                Body::User {
                    content: vec![Part::text("list files")],
                },
            ),
            ev(
                "a1",
                Body::Assistant {
                    content: vec![
                        AssistantPart::Thinking(Thinking {
                            text: "use ls".into(),
                            signature: Some(Signature {
                                provider: "openai".into(),
                                model: Some("gpt-5".into()),
                                value: "enc".into(),
                                redacted: false,
                            }),
                        }),
                        AssistantPart::text("Listing."),
                        AssistantPart::ToolCall(ToolCall {
                            id: "call_1".into(),
                            name: "exec_command".into(),
                            arguments: json!({"cmd": "ls"}),
                        }),
                        AssistantPart::ToolCall(ToolCall {
                            id: "call_2".into(),
                            name: "exec_command".into(),
                            arguments: json!({"cmd": "date"}),
                        }),
                    ],
                    origin: None,
                },
            ),
            ev(
                "r1",
                Body::ToolResult {
                    call_id: "call_1".into(),
                    content: vec![Part::text("a.txt")],
                    is_error: false,
                },
            ),
            ev(
                "r2",
                Body::ToolResult {
                    call_id: "call_2".into(),
                    content: vec![
                        Part::text("now"),
                        Part::Image {
                            media_type: "image/png".into(),
                            data: vec![1, 2, 3],
                        },
                    ],
                    is_error: false,
                },
            ),
            ev(
                "a2",
                Body::Assistant {
                    content: vec![AssistantPart::text("Done.")],
                    origin: None,
                },
            ),
        ])
    }

    #[test]
    fn render_then_parse_round_trips_and_validates() {
        let t = sample();
        let input = render(&t, Some("gpt-5"));
        validate(&input).unwrap();
        assert_eq!(input[1]["type"], "reasoning");
        assert_eq!(input[3]["arguments"], "{\"cmd\":\"ls\"}");
        let mut parsed = parse(&input).unwrap();
        // The wire does not say which model made the reasoning.
        if let Body::Assistant { content, .. } = &mut parsed.events[1].body {
            if let AssistantPart::Thinking(th) = &mut content[0] {
                th.signature.as_mut().unwrap().model = Some("gpt-5".into());
            }
        }
        Comparison::exact().diff(&t, &parsed).unwrap();
    }

    #[test]
    fn render_leaves_out_reasoning_made_by_another_model() {
        let input = render(&sample(), Some("o3"));
        assert!(input.iter().all(|i| i["type"] != "reasoning"));
    }

    #[test]
    fn render_applies_compaction() {
        let t = Transcript::new(vec![
            ev(
                "u1",
                Body::User {
                    content: vec![Part::text("one")],
                },
            ),
            ev(
                "a1",
                Body::Assistant {
                    content: vec![AssistantPart::text("1")],
                    origin: None,
                },
            ),
            ev(
                "u2",
                Body::User {
                    content: vec![Part::text("two")],
                },
            ),
            ev(
                "c",
                Body::Compaction {
                    summary: "S".into(),
                    replaces_through: "a1".into(),
                },
            ),
            ev(
                "u3",
                Body::User {
                    content: vec![Part::text("three")],
                },
            ),
        ]);
        let input = render(&t, None);
        let texts: Vec<&str> = input
            .iter()
            .map(|i| i["content"][0]["text"].as_str().unwrap())
            .collect();
        assert_eq!(texts, ["S", "two", "three"]);
    }

    #[test]
    fn parse_accepts_what_codex_sends() {
        let input = vec![
            json!({"type": "message", "id": "msg_dev", "role": "developer", "content": [{"type": "input_text", "text": "You are Codex."}]}),
            json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}),
            json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok", "annotations": []}], "status": "completed"}),
            json!({"type": "message", "id": "msg_env", "role": "user", "content": [{"type": "input_text", "text": "<environment_context>\n  <cwd>/p</cwd>\n</environment_context>"}]}),
            json!({"type": "message", "id": "msg_u2", "role": "user", "content": [{"type": "input_text", "text": "continue"}], "extra": {"x": 1}}),
        ];
        let t = parse(&input).unwrap();
        assert_eq!(t.events.len(), 3);
        assert_eq!(t.events[2].id, "msg_u2");
        assert!(
            matches!(&t.events[1].body, Body::Assistant { content, .. } if content == &vec![AssistantPart::text("ok")])
        );
    }

    #[test]
    fn parse_names_the_bad_item() {
        let input = vec![
            json!({"type": "function_call", "call_id": "c", "name": "f", "arguments": "{not json"}),
        ];
        let err = parse(&input).unwrap_err();
        assert_eq!((err.index, err.field.as_str()), (0, "arguments"));
        assert!(parse(&[json!({"type": "item_reference", "id": "x"})]).is_err());
    }

    fn captured(text: &str) -> Vec<Value> {
        let request: Value = serde_json::from_str(text).unwrap();
        request["input"].as_array().unwrap().clone()
    }

    #[test]
    fn parses_and_validates_a_real_codex_request_with_images() {
        let input = captured(include_str!(
            "openai_responses/codex-0.171.0-resume-images.json"
        ));
        validate(&input).unwrap();
        let t = parse(&input).unwrap();
        let kinds: Vec<&str> = t.events.iter().map(|e| e.body.kind()).collect();
        // Developer messages and the environment context are set aside; the new prompt stays.
        assert_eq!(
            kinds,
            ["user", "assistant", "tool_result", "assistant", "user"]
        );
        match &t.events[2].body {
            Body::ToolResult {
                call_id, content, ..
            } => {
                assert_eq!(call_id, "toolu_img1");
                assert!(
                    matches!(&content[1], Part::Image { media_type, .. } if media_type == "image/png")
                );
            }
            other => panic!("{other:?}"),
        }
        assert!(
            matches!(&t.events[4].body, Body::User { content } if content == &vec![Part::text("continue")])
        );
        assert!(
            t.events[4].id.starts_with("msg_"),
            "item ids become event ids"
        );
    }

    #[test]
    fn parses_and_validates_a_real_codex_request_with_reasoning() {
        let input = captured(include_str!(
            "openai_responses/codex-0.171.0-resume-thinking-signed-openai.json"
        ));
        validate(&input).unwrap();
        let t = parse(&input).unwrap();
        match &t.events[1].body {
            Body::Assistant { content, .. } => {
                assert!(
                    matches!(&content[0], AssistantPart::Thinking(Thinking { signature: Some(s), .. })
                    if s.value == "gAAAAABfakeEncryptedReasoningForConformanceOnly")
                );
                assert_eq!(content[1], AssistantPart::text("Yes, 1013 is prime."));
            }
            other => panic!("{other:?}"),
        }
    }

    fn call(id: &str) -> Value {
        json!({"type": "function_call", "call_id": id, "name": "f", "arguments": "{}"})
    }

    fn out(id: &str) -> Value {
        json!({"type": "function_call_output", "call_id": id, "output": "x"})
    }

    #[test]
    fn r1_a_call_without_its_output_fails() {
        let err = validate(&[call("c1"), call("c2"), out("c1")]).unwrap_err();
        assert_eq!((err.rule, err.index), ("R1", 1));
        let err = validate(&[out("c9")]).unwrap_err();
        assert_eq!(err.rule, "R1");
    }

    #[test]
    fn r2_reasoning_with_id_needs_its_following_item() {
        let reasoning =
            json!({"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "e"});
        let user = json!({"type": "message", "role": "user", "content": "hi"});
        let err = validate(&[reasoning.clone(), user]).unwrap_err();
        assert_eq!((err.rule, err.index), ("R2", 0));
        validate(&[reasoning, call("c1"), out("c1")]).unwrap();
    }

    #[test]
    fn r3_item_with_server_id_needs_its_reasoning() {
        let reasoning = json!({"type": "reasoning", "summary": [], "encrypted_content": "e"});
        let user = json!({"type": "message", "role": "user", "content": "hi"});
        let fc = json!({"type": "function_call", "id": "fc_1", "call_id": "c1", "name": "f", "arguments": "{}"});
        let err = validate(&[reasoning.clone(), user.clone(), fc.clone(), out("c1")]).unwrap_err();
        assert_eq!((err.rule, err.index), ("R3", 2));
        validate(&[user, reasoning, fc, out("c1")]).unwrap();
    }

    #[test]
    fn r4_references_by_id_fail_without_storage() {
        let err = validate(&[json!({"type": "item_reference", "id": "rs_1"})]).unwrap_err();
        assert_eq!(err.rule, "R4");
        let bare = json!({"type": "reasoning", "id": "rs_1", "summary": []});
        let err = validate(&[bare, call("c1"), out("c1")]).unwrap_err();
        assert_eq!(err.rule, "R4");
    }

    #[test]
    fn r5_reasoning_goes_back_only_to_its_model() {
        let t = sample();
        check_reasoning_portable(&t, "gpt-5").unwrap();
        let err = check_reasoning_portable(&t, "o3").unwrap_err();
        assert_eq!((err.rule, err.index), ("R5", 1));
        let mut foreign = sample();
        if let Body::Assistant { content, .. } = &mut foreign.events[1].body {
            if let AssistantPart::Thinking(th) = &mut content[0] {
                th.signature.as_mut().unwrap().provider = "anthropic".into();
            }
        }
        assert_eq!(
            check_reasoning_portable(&foreign, "gpt-5")
                .unwrap_err()
                .rule,
            "R5"
        );
    }

    #[test]
    fn r6_previous_response_id_excludes_conversation() {
        let body = json!({"previous_response_id": "resp_1", "conversation": "conv_1", "input": []});
        assert_eq!(validate_request(&body).unwrap_err().rule, "R6");
        validate_request(&json!({"previous_response_id": "resp_1", "input": []})).unwrap();
    }

    #[test]
    fn r7_call_ids_are_one_to_sixty_four_characters() {
        let long = "c".repeat(65);
        let err = validate(&[call(&long), out(&long)]).unwrap_err();
        assert_eq!(err.rule, "R7");
        let err = validate(&[call(""), out("")]).unwrap_err();
        assert_eq!(err.rule, "R7");
    }
}
