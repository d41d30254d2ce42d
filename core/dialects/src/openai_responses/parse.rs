//! `input` items → canonical events.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::content::{message_content, output_content};
use super::PROVIDER;
use crate::{string_member, ParseError};
use handoff_transcript::{
    AssistantPart, Body, Event, Part, Signature, Thinking, Timestamp, ToolCall, ToolInput,
    Transcript, WebSearch,
};

/// `input` read back: the history, and the texts of the developer and system messages set apart.
#[derive(Clone, Debug, PartialEq)]
pub struct ParsedInput {
    /// The texts of developer and system messages, in order.
    pub system: Vec<String>,
    /// Everything else, as canonical events.
    pub transcript: Transcript,
}

/// Parses a request's `input` items into canonical events; developer and system messages (the
/// instructions) are set aside. Consecutive assistant-side items (reasoning, assistant messages,
/// function calls) form one assistant event, as one model response produced them.
pub fn parse(input: &[Value]) -> Result<Transcript, ParseError> {
    parse_input(input).map(|p| p.transcript)
}

/// Like [`parse`], also returning the developer and system texts.
pub fn parse_input(input: &[Value]) -> Result<ParsedInput, ParseError> {
    let mut b = Builder::default();
    for (index, item) in input.iter().enumerate() {
        item_into(&mut b, index, item).map_err(|e| e.under(&format!("input[{index}]")))?;
    }
    Ok(ParsedInput {
        system: b.system,
        transcript: Transcript::new(b.events),
    })
}

/// One item into the builder; paths in errors are relative to the item.
fn item_into(b: &mut Builder, index: usize, item: &Value) -> Result<(), ParseError> {
    let obj = item
        .as_object()
        .ok_or_else(|| ParseError::new("", "an input item must be an object"))?;
    let kind = match obj.get("type").and_then(Value::as_str) {
        Some(kind) => kind,
        // EasyInputMessage may omit the type.
        None if obj.contains_key("role") => "message",
        None => return Err(ParseError::new("type", "missing")),
    };
    let item_id = obj.get("id").and_then(Value::as_str);
    match kind {
        "message" => message(b, index, item_id, obj),
        "reasoning" => {
            b.assistant_part(index, item_id, AssistantPart::Thinking(reasoning(obj)));
            Ok(())
        }
        "function_call" => {
            let arguments = serde_json::from_str(string_member(obj, "arguments")?)
                .map_err(|e| ParseError::new("arguments", format!("not a JSON document: {e}")))?;
            let call = ToolCall::new(
                string_member(obj, "call_id")?.to_owned(),
                string_member(obj, "name")?.to_owned(),
                arguments,
            );
            b.assistant_part(index, item_id, AssistantPart::ToolCall(call));
            Ok(())
        }
        "custom_tool_call" => {
            let call = ToolCall {
                id: string_member(obj, "call_id")?.to_owned(),
                name: string_member(obj, "name")?.to_owned(),
                input: ToolInput::Freeform(string_member(obj, "input")?.to_owned()),
            };
            b.assistant_part(index, item_id, AssistantPart::ToolCall(call));
            Ok(())
        }
        "web_search_call" => {
            let optional = |key: &str| match obj.get(key) {
                None => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(_) => Err(ParseError::new(key, "must be a string")),
            };
            let search = WebSearch {
                id: optional("id")?,
                status: optional("status")?,
                action: obj
                    .get("action")
                    .filter(|a| a.get("type").and_then(Value::as_str).is_some())
                    .cloned()
                    .ok_or_else(|| ParseError::new("action", "missing, or without a type"))?,
            };
            b.assistant_part(index, item_id, AssistantPart::WebSearch(search));
            Ok(())
        }
        "function_call_output" | "custom_tool_call_output" => {
            let call_id = string_member(obj, "call_id")?.to_owned();
            let content = output_content(obj)?;
            b.event(
                index,
                item_id,
                Body::ToolResult {
                    call_id,
                    content,
                    is_error: false,
                },
            );
            Ok(())
        }
        other => Err(ParseError::new(
            "type",
            format!("item type {other:?} has no canonical form"),
        )),
    }
}

fn message(
    b: &mut Builder,
    index: usize,
    item_id: Option<&str>,
    obj: &Map<String, Value>,
) -> Result<(), ParseError> {
    match string_member(obj, "role")? {
        "developer" | "system" => {
            for part in message_content(obj)? {
                if let Part::Text { text } = part {
                    b.system.push(text);
                }
            }
        }
        "user" => {
            let content = message_content(obj)?;
            b.event(index, item_id, Body::User { content });
        }
        "assistant" => {
            for part in message_content(obj)? {
                match part {
                    Part::Text { text } => {
                        b.assistant_part(index, item_id, AssistantPart::Text { text })
                    }
                    _ => {
                        return Err(ParseError::new(
                            "content",
                            "an assistant message holds only text",
                        ))
                    }
                }
            }
        }
        other => return Err(ParseError::new("role", format!("unknown role {other:?}"))),
    }
    Ok(())
}

/// A reasoning item: its summary texts (joined by blank lines) and its encrypted content, which
/// is the signature (redacted when there is no summary).
fn reasoning(obj: &Map<String, Value>) -> Thinking {
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
    Thinking { text, signature }
}

/// Collects parsed events; consecutive assistant-side items join one assistant event.
#[derive(Default)]
struct Builder {
    system: Vec<String>,
    events: Vec<Event>,
    ids: HashSet<String>,
    assistant_open: bool,
}

impl Builder {
    fn event(&mut self, index: usize, item_id: Option<&str>, body: Body) {
        let id = match item_id {
            Some(id) if !self.ids.contains(id) => id.to_owned(),
            _ => format!("input[{index}]"),
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
        self.event(index, item_id, Body::assistant(vec![part]));
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn parse_keeps_injected_user_messages_and_sets_instructions_apart() {
        let input = vec![
            json!({"type": "message", "id": "msg_dev", "role": "developer", "content": [{"type": "input_text", "text": "You are Codex."}]}),
            json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}),
            json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok", "annotations": []}], "status": "completed"}),
            json!({"type": "message", "id": "msg_env", "role": "user", "content": [{"type": "input_text", "text": "<environment_context>\n  <cwd>/p</cwd>\n</environment_context>"}]}),
            json!({"type": "message", "id": "msg_u2", "role": "user", "content": [{"type": "input_text", "text": "continue"}], "extra": {"x": 1}}),
        ];
        let p = parse_input(&input).unwrap();
        assert_eq!(p.system, ["You are Codex."]);
        let t = p.transcript;
        assert_eq!(t.events.len(), 4);
        assert_eq!(t.events[2].id, "msg_env");
        assert_eq!(t.events[3].id, "msg_u2");
        assert_eq!(t.events[0].id, "input[1]");
        assert!(
            matches!(&t.events[1].body, Body::Assistant { content, .. } if content == &vec![AssistantPart::text("ok")])
        );
    }

    #[test]
    fn parse_names_the_bad_item_and_field() {
        let input = vec![
            json!({"type": "message", "role": "user", "content": "hi"}),
            json!({"type": "function_call", "call_id": "c", "name": "f", "arguments": "{not json"}),
        ];
        assert_eq!(parse(&input).unwrap_err().path, "input[1].arguments");
        let bad_image = vec![json!({"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "x"}, {"type": "input_image", "image_url": "data:image/png,raw"}]})];
        assert_eq!(parse(&bad_image).unwrap_err().path, "input[0].content[1]");
        let e = parse(&[json!({"type": "item_reference", "id": "x"})]).unwrap_err();
        assert_eq!(e.path, "input[0].type");
    }
}
