//! Messages request body → blocks and canonical bodies.

use serde_json::Value;

use super::blocks::{parse_block, ParsedBlock};
use crate::kind_of;
use handoff_transcript::{AssistantPart, Body, Origin, Part};

pub use crate::ParseError;

/// A parsed request.
#[derive(Clone, Debug, PartialEq)]
pub struct ParsedRequest {
    /// Its `model`, if any.
    pub model: Option<String>,
    /// The texts of the top-level `system` (a string is one text).
    pub system: Vec<String>,
    /// The messages, in order.
    pub messages: Vec<ParsedMessage>,
}

/// A parsed message.
#[derive(Clone, Debug, PartialEq)]
pub struct ParsedMessage {
    /// Its role as sent (`user`, `assistant`; clients sometimes send others, e.g. `system`).
    pub role: String,
    /// Its blocks, in order (string content is one text block).
    pub blocks: Vec<ParsedBlock>,
}

impl ParsedMessage {
    /// The canonical bodies of this message with the natural grouping: in a user message each
    /// `tool_result` is its own [`Body::ToolResult`] and each run of other blocks one
    /// [`Body::User`]; an assistant message is one [`Body::Assistant`] whose origin is Anthropic
    /// with `model`. Fails on a block with no canonical home, naming its index.
    pub fn bodies(&self, model: Option<&str>) -> Result<Vec<Body>, (usize, String)> {
        let mut out = Vec::new();
        if self.role == "assistant" {
            let mut content = Vec::with_capacity(self.blocks.len());
            for (i, b) in self.blocks.iter().enumerate() {
                content.push(
                    b.clone()
                        .into_assistant_part()
                        .map_err(|b| (i, unsupported(&b, "an assistant message")))?,
                );
            }
            out.push(Body::Assistant {
                content,
                origin: Some(Origin {
                    provider: super::PROVIDER.to_owned(),
                    model: model.map(str::to_owned),
                    api: Some(super::DIALECT.to_owned()),
                }),
            });
            return Ok(out);
        }
        let mut run: Vec<Part> = Vec::new();
        for (i, b) in self.blocks.iter().enumerate() {
            match b {
                ParsedBlock::ToolResult {
                    call_id,
                    content,
                    is_error,
                } => {
                    if !run.is_empty() {
                        out.push(Body::User {
                            content: std::mem::take(&mut run),
                        });
                    }
                    out.push(Body::ToolResult {
                        call_id: call_id.clone(),
                        content: content.clone(),
                        is_error: *is_error,
                    });
                }
                other => run.push(
                    other
                        .clone()
                        .into_part()
                        .map_err(|b| (i, unsupported(&b, "a user message")))?,
                ),
            }
        }
        if !run.is_empty() || out.is_empty() {
            out.push(Body::User { content: run });
        }
        Ok(out)
    }

    /// The assistant parts of this message, if it is an assistant message of known blocks.
    pub fn assistant_parts(&self) -> Option<Vec<AssistantPart>> {
        self.blocks
            .iter()
            .map(|b| b.clone().into_assistant_part().ok())
            .collect()
    }
}

fn unsupported(b: &ParsedBlock, place: &str) -> String {
    match b {
        ParsedBlock::Other { kind, .. } => format!("a {kind:?} block has no canonical form"),
        ParsedBlock::ToolResult { .. } => format!("a tool_result block cannot be in {place}"),
        ParsedBlock::ToolCall(_) => format!("a tool_use block cannot be in {place}"),
        ParsedBlock::Thinking(_) => format!("a thinking block cannot be in {place}"),
        ParsedBlock::Image(_) => format!("an image block cannot be in {place}"),
        ParsedBlock::Text(_) => format!("a text block cannot be in {place}"),
    }
}

/// Parses a request body (an object with `messages`) or a bare `messages` array.
pub fn parse(body: &Value) -> Result<ParsedRequest, ParseError> {
    let (model, system, messages) = match body {
        Value::Array(messages) => (None, None, messages),
        Value::Object(map) => {
            let messages = match map.get("messages") {
                Some(Value::Array(m)) => m,
                Some(other) => {
                    return Err(perr(
                        "messages",
                        format!("expected an array, found {}", kind_of(other)),
                    ))
                }
                None => return Err(perr("messages", "missing")),
            };
            let model = map.get("model").and_then(Value::as_str).map(str::to_owned);
            (model, map.get("system"), messages)
        }
        other => {
            return Err(perr(
                "",
                format!("expected an object or an array, found {}", kind_of(other)),
            ))
        }
    };
    let system = match system {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(blocks)) => blocks
            .iter()
            .enumerate()
            .map(|(i, b)| match b.get("text").and_then(Value::as_str) {
                Some(t) => Ok(t.to_owned()),
                None => Err(perr(format!("system[{i}].text"), "missing or not a string")),
            })
            .collect::<Result<_, _>>()?,
        Some(other) => {
            return Err(perr(
                "system",
                format!("expected a string or an array, found {}", kind_of(other)),
            ))
        }
    };
    let messages = messages
        .iter()
        .enumerate()
        .map(|(i, m)| parse_message(m.clone(), model.as_deref()).map_err(|e| prefix(i, e)))
        .collect::<Result<_, _>>()?;
    Ok(ParsedRequest {
        model,
        system,
        messages,
    })
}

fn prefix(i: usize, e: ParseError) -> ParseError {
    let path = if e.path.is_empty() {
        format!("messages[{i}]")
    } else {
        format!("messages[{i}].{}", e.path)
    };
    ParseError { path, ..e }
}

/// Parses one message object (`{role, content}`), taking its strings; `model` goes on thinking
/// signatures. Paths in errors are relative to the message.
pub fn parse_message(message: Value, model: Option<&str>) -> Result<ParsedMessage, ParseError> {
    let Value::Object(mut map) = message else {
        return Err(perr(
            "",
            format!("expected a message object, found {}", kind_of(&message)),
        ));
    };
    let role = match map.swap_remove("role") {
        Some(Value::String(r)) => r,
        _ => return Err(perr("role", "missing or not a string")),
    };
    let blocks = match map.swap_remove("content") {
        Some(Value::String(text)) => vec![ParsedBlock::Text(text)],
        Some(Value::Array(items)) => {
            let mut blocks = Vec::with_capacity(items.len());
            for (i, item) in items.into_iter().enumerate() {
                blocks.push(parse_block(item, model).map_err(|e| {
                    let path = if e.field.is_empty() {
                        format!("content[{i}]")
                    } else {
                        format!("content[{i}].{}", e.field)
                    };
                    perr(path, e.message)
                })?);
            }
            blocks
        }
        Some(other) => {
            return Err(perr(
                "content",
                format!("expected a string or an array, found {}", kind_of(&other)),
            ))
        }
        None => return Err(perr("content", "missing")),
    };
    Ok(ParsedMessage { role, blocks })
}

fn perr(path: impl Into<String>, message: impl Into<String>) -> ParseError {
    ParseError {
        path: path.into(),
        message: message.into(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn accepts_what_claude_code_sends() {
        let body = json!({
            "model": "claude-opus-4-8",
            "system": [{"type":"text","text":"You are Claude Code.","cache_control":{"type":"ephemeral"}}],
            "messages": [
                {"role":"user","content":[{"type":"text","text":"<system-reminder>x</system-reminder>"},{"type":"text","text":"hi","cache_control":{"type":"ephemeral"}}]},
                {"role":"assistant","content":[{"type":"text","text":"ok"},{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls"}}]},
                {"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"a\nb","is_error":false}]},
                {"role":"system","content":"agents"},
                {"role":"user","content":"continue"}
            ]
        });
        let p = parse(&body).unwrap();
        assert_eq!(p.system, ["You are Claude Code."]);
        assert_eq!(p.messages.len(), 5);
        let bodies = p.messages[1].bodies(p.model.as_deref()).unwrap();
        let Body::Assistant { content, origin } = &bodies[0] else {
            panic!()
        };
        assert_eq!(content.len(), 2);
        assert_eq!(
            origin.as_ref().unwrap().model.as_deref(),
            Some("claude-opus-4-8")
        );
        let bodies = p.messages[2].bodies(None).unwrap();
        assert!(matches!(&bodies[..], [Body::ToolResult { call_id, .. }] if call_id == "toolu_1"));
        assert_eq!(p.messages[3].role, "system");
        assert_eq!(p.messages[4].blocks, [ParsedBlock::Text("continue".into())]);
    }

    #[test]
    fn user_messages_split_into_results_and_text() {
        let m = parse_message(
            json!({"role":"user","content":[
                {"type":"tool_result","tool_use_id":"a","content":"1"},
                {"type":"tool_result","tool_use_id":"b","content":"2"},
                {"type":"text","text":"and"}]}),
            None,
        )
        .unwrap();
        let kinds: Vec<_> = m.bodies(None).unwrap().iter().map(Body::kind).collect();
        assert_eq!(kinds, ["tool_result", "tool_result", "user"]);
    }

    #[test]
    fn errors_carry_the_path() {
        let e = parse(&json!({"messages":[{"role":"user","content":"x"},{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png"}}]}]}))
            .unwrap_err();
        assert_eq!(e.path, "messages[1].content[0].source.data");
        assert_eq!(parse(&json!({"model":"x"})).unwrap_err().path, "messages");
    }
}
