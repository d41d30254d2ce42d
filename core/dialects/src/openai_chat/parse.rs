//! Chat Completions `messages` → canonical events.

use serde_json::{Map, Value};

use super::{DIALECT, PROVIDER};
use crate::{history_of, image_part, kind_of, string_member, ParseError, Parsed};
use handoff_transcript::{
    AssistantPart, Body, Event, Origin, Part, Timestamp, ToolCall, Transcript,
};

/// Parses a body with `messages` (or a bare array): system and developer messages become the
/// system prompt, each other message one event with id `messages[i]`. An empty string is no
/// content. Fails on a role or part with no canonical form, and on tool-call arguments that are
/// not JSON, naming the path.
pub fn parse(body: &Value) -> Result<Parsed, ParseError> {
    let messages = history_of(body, "messages")?;
    let model = body.get("model").and_then(Value::as_str).map(str::to_owned);
    let mut system = Vec::new();
    let mut events = Vec::with_capacity(messages.len());
    for (i, message) in messages.iter().enumerate() {
        let at = format!("messages[{i}]");
        let map = message
            .as_object()
            .ok_or_else(|| ParseError::new(&at, "a message must be an object"))?;
        let parsed = match string_member(map, "role").map_err(|e| e.under(&at))? {
            "system" | "developer" => {
                system.extend(texts(map).map_err(|e| e.under(&at))?);
                continue;
            }
            "user" => Body::User {
                content: user_content(map).map_err(|e| e.under(&at))?,
            },
            "assistant" => assistant(map, model.as_deref()).map_err(|e| e.under(&at))?,
            "tool" => Body::ToolResult {
                call_id: string_member(map, "tool_call_id")
                    .map_err(|e| e.under(&at))?
                    .to_owned(),
                content: texts(map)
                    .map_err(|e| e.under(&at))?
                    .into_iter()
                    .map(Part::text)
                    .collect(),
                is_error: false,
            },
            other => {
                return Err(ParseError::new(
                    format!("{at}.role"),
                    format!("role {other:?} has no canonical form"),
                ))
            }
        };
        events.push(Event::new(at, Timestamp::from_millis(0), parsed));
    }
    Ok(Parsed {
        model,
        system,
        transcript: Transcript::new(events),
    })
}

/// The texts of a `content` that holds text only (string, array of text parts, or null).
fn texts(map: &Map<String, Value>) -> Result<Vec<String>, ParseError> {
    match map.get("content") {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::String(s)) if s.is_empty() => Ok(Vec::new()),
        Some(Value::String(s)) => Ok(vec![s.clone()]),
        Some(Value::Array(parts)) => parts
            .iter()
            .enumerate()
            .map(|(j, p)| {
                let text = match p.get("type").and_then(Value::as_str) {
                    Some("text") => p.get("text"),
                    Some("refusal") => p.get("refusal"),
                    other => {
                        return Err(ParseError::new(
                            format!("content[{j}].type"),
                            format!("a {other:?} part has no canonical form here"),
                        ))
                    }
                };
                text.and_then(Value::as_str)
                    .map(str::to_owned)
                    .ok_or_else(|| ParseError::new(format!("content[{j}]"), "text is missing"))
            })
            .collect(),
        Some(other) => Err(ParseError::new(
            "content",
            format!("expected a string or an array, found {}", kind_of(other)),
        )),
    }
}

/// A user `content`: a string, or text and `image_url` parts (`data:` URLs become bytes).
fn user_content(map: &Map<String, Value>) -> Result<Vec<Part>, ParseError> {
    let Some(Value::Array(parts)) = map.get("content") else {
        return Ok(texts(map)?.into_iter().map(Part::text).collect());
    };
    let mut out = Vec::with_capacity(parts.len());
    for (j, p) in parts.iter().enumerate() {
        let fail =
            |field: &str, message: String| ParseError::new(format!("content[{j}]{field}"), message);
        match p.get("type").and_then(Value::as_str) {
            Some("text") => out.push(Part::text(
                p.get("text")
                    .and_then(Value::as_str)
                    .ok_or_else(|| fail(".text", "missing or not a string".into()))?,
            )),
            Some("image_url") => {
                let url = p
                    .pointer("/image_url/url")
                    .and_then(Value::as_str)
                    .ok_or_else(|| fail(".image_url.url", "missing or not a string".into()))?;
                out.push(image_part(url).map_err(|m| fail(".image_url.url", m))?);
            }
            other => {
                return Err(fail(
                    ".type",
                    format!("a {other:?} part has no canonical form"),
                ))
            }
        }
    }
    Ok(out)
}

/// An assistant message: its texts, then its tool calls (arguments parsed from their JSON text).
fn assistant(map: &Map<String, Value>, model: Option<&str>) -> Result<Body, ParseError> {
    let mut content: Vec<AssistantPart> =
        texts(map)?.into_iter().map(AssistantPart::text).collect();
    match map.get("tool_calls") {
        None | Some(Value::Null) => {}
        Some(Value::Array(calls)) => {
            for (j, call) in calls.iter().enumerate() {
                content.push(AssistantPart::ToolCall(
                    tool_call(call).map_err(|e| e.under(&format!("tool_calls[{j}]")))?,
                ));
            }
        }
        Some(other) => {
            return Err(ParseError::new(
                "tool_calls",
                format!("expected an array, found {}", kind_of(other)),
            ))
        }
    }
    Ok(Body::Assistant {
        content,
        origin: Some(Origin {
            provider: PROVIDER.to_owned(),
            model: model.map(str::to_owned),
            api: Some(DIALECT.to_owned()),
        }),
    })
}

fn tool_call(call: &Value) -> Result<ToolCall, ParseError> {
    let map = call
        .as_object()
        .ok_or_else(|| ParseError::new("", "a tool call must be an object"))?;
    let function = match map.get("function") {
        Some(Value::Object(f)) => f,
        _ => return Err(ParseError::new("function", "missing or not an object")),
    };
    let arguments = string_member(function, "arguments").map_err(|e| e.under("function"))?;
    Ok(ToolCall::new(
        string_member(map, "id")?.to_owned(),
        string_member(function, "name")
            .map_err(|e| e.under("function"))?
            .to_owned(),
        serde_json::from_str(arguments).map_err(|e| {
            ParseError::new("function.arguments", format!("not a JSON document: {e}"))
        })?,
    ))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn reads_what_pi_sends() {
        let body = json!({"model": "fake-model", "messages": [
            {"role": "system", "content": "You are pi."},
            {"role": "user", "content": [{"type": "text", "text": "hi"}]},
            {"role": "assistant", "content": "Listing.", "tool_calls": [
                {"id": "call_HAND001", "type": "function", "function": {"name": "bash", "arguments": "{\"command\":\"ls\"}"}}]},
            {"role": "tool", "tool_call_id": "call_HAND001", "content": "a.txt"},
            {"role": "assistant", "content": ""},
            {"role": "user", "content": "continue"}
        ]});
        let p = parse(&body).unwrap();
        assert_eq!(p.system, ["You are pi."]);
        assert_eq!(p.model.as_deref(), Some("fake-model"));
        let kinds: Vec<_> = p.transcript.events.iter().map(|e| e.body.kind()).collect();
        assert_eq!(
            kinds,
            ["user", "assistant", "tool_result", "assistant", "user"]
        );
        assert_eq!(p.transcript.events[1].id, "messages[2]");
        let Body::Assistant { content, origin } = &p.transcript.events[1].body else {
            panic!()
        };
        assert_eq!(content[0], AssistantPart::text("Listing."));
        assert!(
            matches!(&content[1], AssistantPart::ToolCall(c) if c.id == "call_HAND001" && c.arguments() == Some(&json!({"command": "ls"})))
        );
        assert_eq!(origin.as_ref().unwrap().api.as_deref(), Some(DIALECT));
        assert!(
            matches!(&p.transcript.events[3].body, Body::Assistant { content, .. } if content.is_empty())
        );
    }

    #[test]
    fn errors_name_the_path() {
        let bad_args = json!([{"role": "user", "content": "x"}, {"role": "assistant", "content": null,
            "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{no"}}]}]);
        assert_eq!(
            parse(&bad_args).unwrap_err().path,
            "messages[1].tool_calls[0].function.arguments"
        );
        let bad_image = json!([{"role": "user", "content": [{"type": "text", "text": "x"},
            {"type": "image_url", "image_url": {"url": "data:image/png,raw"}}]}]);
        assert_eq!(
            parse(&bad_image).unwrap_err().path,
            "messages[0].content[1].image_url.url"
        );
        let function_role = json!([{"role": "function", "name": "f", "content": "x"}]);
        assert_eq!(parse(&function_role).unwrap_err().path, "messages[0].role");
        assert_eq!(parse(&json!({"model": "m"})).unwrap_err().path, "messages");
    }
}
