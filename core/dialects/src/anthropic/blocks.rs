//! Anthropic content blocks: written from canonical parts without copying them ([`WireBlock`]),
//! and parsed back into canonical parts ([`parse_block`]) by taking the strings out of the JSON.

use std::borrow::Cow;

use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

use super::ids::{canonical_tool_id, wire_tool_id};
use super::PROVIDER;
use crate::kind_of;
use handoff_transcript::{AssistantPart, Part, Signature, Thinking, ToolCall};

/// One content block as the API takes it, borrowing canonical data.
#[derive(Clone, Debug, PartialEq)]
pub enum WireBlock<'a> {
    /// `{"type":"text","text":…}`.
    Text(&'a str),
    /// `{"type":"image","source":{"type":"base64",…}}`.
    Image {
        /// The media type.
        media_type: &'a str,
        /// The bytes (base64-encoded on output).
        data: &'a [u8],
    },
    /// `{"type":"image","source":{"type":"url","url":…}}`.
    ImageUrl(&'a str),
    /// `{"type":"thinking","thinking":…,"signature":…}`.
    Thinking {
        /// The reasoning text.
        thinking: &'a str,
        /// The signature, exactly as Anthropic sent it.
        signature: &'a str,
    },
    /// `{"type":"redacted_thinking","data":…}`.
    RedactedThinking(&'a str),
    /// `{"type":"tool_use","id":…,"name":…,"input":{…}}`; the id already mapped for the wire.
    ToolUse {
        /// The wire id.
        id: Cow<'a, str>,
        /// The tool name.
        name: &'a str,
        /// The arguments (a JSON object).
        input: std::borrow::Cow<'a, Value>,
    },
    /// `{"type":"tool_result","tool_use_id":…,"content":…,"is_error":…}`.
    ToolResult {
        /// The wire id of the call it answers.
        tool_use_id: Cow<'a, str>,
        /// The result content.
        content: ToolResultContent<'a>,
        /// Whether the tool failed.
        is_error: bool,
        /// Write `is_error` even when false (Claude Code does); else only when true.
        always_flag: bool,
    },
}

/// The content of a `tool_result`: one text part as a plain string (as Claude Code writes it),
/// anything else as an array of blocks (`[]` when empty).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ToolResultContent<'a>(pub &'a [Part]);

impl<'a> WireBlock<'a> {
    /// The block for a user-side part (text or image).
    pub fn from_part(part: &'a Part) -> Self {
        match part {
            Part::Text { text } => WireBlock::Text(text),
            Part::Image { media_type, data } => WireBlock::Image { media_type, data },
            Part::ImageUrl { url } => WireBlock::ImageUrl(url),
        }
    }

    /// The `tool_use` block for a canonical call.
    pub fn tool_use(call: &'a ToolCall) -> Self {
        WireBlock::ToolUse {
            id: wire_tool_id(&call.id),
            name: &call.name,
            // A freeform call goes as its structured form (Messages tools take JSON input).
            input: call.structured_arguments(),
        }
    }

    /// The `tool_result` block for a canonical result.
    pub fn tool_result(
        call_id: &'a str,
        content: &'a [Part],
        is_error: bool,
        always_flag: bool,
    ) -> Self {
        WireBlock::ToolResult {
            tool_use_id: wire_tool_id(call_id),
            content: ToolResultContent(content),
            is_error,
            always_flag,
        }
    }

    /// The block type name.
    pub fn kind(&self) -> &'static str {
        match self {
            WireBlock::Text(_) => "text",
            WireBlock::Image { .. } | WireBlock::ImageUrl(_) => "image",
            WireBlock::Thinking { .. } => "thinking",
            WireBlock::RedactedThinking(_) => "redacted_thinking",
            WireBlock::ToolUse { .. } => "tool_use",
            WireBlock::ToolResult { .. } => "tool_result",
        }
    }
}

/// Bytes written as their base64 string. The string is made in its JSON form and written as
/// it is: base64 has nothing to escape, and serde_json's escaping scans a string byte by byte,
/// which for a 64 KiB image cost more than encoding it.
struct Base64<'a>(&'a [u8]);

impl Serialize for Base64<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut json = String::with_capacity(self.0.len().div_ceil(3) * 4 + 2);
        json.push('"');
        handoff_transcript::base64::encode_into(self.0, &mut json);
        json.push('"');
        serde_json::value::RawValue::from_string(json)
            .map_err(serde::ser::Error::custom)?
            .serialize(s)
    }
}

struct ImageSource<'a>(&'a WireBlock<'a>);

impl Serialize for ImageSource<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(3))?;
        match self.0 {
            WireBlock::Image { media_type, data } => {
                m.serialize_entry("type", "base64")?;
                m.serialize_entry("media_type", media_type)?;
                m.serialize_entry("data", &Base64(data))?;
            }
            WireBlock::ImageUrl(url) => {
                m.serialize_entry("type", "url")?;
                m.serialize_entry("url", url)?;
            }
            _ => {}
        }
        m.end()
    }
}

impl Serialize for ToolResultContent<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            [Part::Text { text }] => s.serialize_str(text),
            parts => {
                let mut seq = s.serialize_seq(Some(parts.len()))?;
                for part in parts {
                    seq.serialize_element(&WireBlock::from_part(part))?;
                }
                seq.end()
            }
        }
    }
}

impl Serialize for WireBlock<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        match self {
            WireBlock::Text(text) => {
                m.serialize_entry("type", "text")?;
                m.serialize_entry("text", text)?;
            }
            WireBlock::Image { .. } | WireBlock::ImageUrl(_) => {
                m.serialize_entry("type", "image")?;
                m.serialize_entry("source", &ImageSource(self))?;
            }
            WireBlock::Thinking {
                thinking,
                signature,
            } => {
                m.serialize_entry("type", "thinking")?;
                m.serialize_entry("thinking", thinking)?;
                m.serialize_entry("signature", signature)?;
            }
            WireBlock::RedactedThinking(data) => {
                m.serialize_entry("type", "redacted_thinking")?;
                m.serialize_entry("data", data)?;
            }
            WireBlock::ToolUse { id, name, input } => {
                m.serialize_entry("type", "tool_use")?;
                m.serialize_entry("id", id)?;
                m.serialize_entry("name", name)?;
                m.serialize_entry("input", input.as_ref())?;
            }
            WireBlock::ToolResult {
                tool_use_id,
                content,
                is_error,
                always_flag,
            } => {
                m.serialize_entry("type", "tool_result")?;
                m.serialize_entry("tool_use_id", tool_use_id)?;
                m.serialize_entry("content", content)?;
                if *is_error || *always_flag {
                    m.serialize_entry("is_error", is_error)?;
                }
            }
        }
        m.end()
    }
}

/// A content block parsed into canonical form.
#[derive(Clone, Debug, PartialEq)]
pub enum ParsedBlock {
    /// A text block (either side).
    Text(String),
    /// An image block (base64 or URL source).
    Image(Part),
    /// A `thinking` or `redacted_thinking` block.
    Thinking(Thinking),
    /// A `tool_use` block, its id mapped back to the canonical id.
    ToolCall(ToolCall),
    /// A `tool_result` block.
    ToolResult {
        /// The canonical id of the call it answers.
        call_id: String,
        /// Its content.
        content: Vec<Part>,
        /// Whether the tool failed (`is_error`, false when absent).
        is_error: bool,
    },
    /// A block type with no canonical home (`document`, server tools, …), kept verbatim.
    Other {
        /// Its `type`.
        kind: String,
        /// The whole block.
        block: Value,
    },
}

impl ParsedBlock {
    /// The canonical user-side part, for text and image blocks.
    pub fn into_part(self) -> Result<Part, ParsedBlock> {
        match self {
            ParsedBlock::Text(text) => Ok(Part::Text { text }),
            ParsedBlock::Image(part) => Ok(part),
            other => Err(other),
        }
    }

    /// The canonical assistant-side part, for text, thinking and tool-use blocks.
    pub fn into_assistant_part(self) -> Result<AssistantPart, ParsedBlock> {
        match self {
            ParsedBlock::Text(text) => Ok(AssistantPart::Text { text }),
            ParsedBlock::Thinking(t) => Ok(AssistantPart::Thinking(t)),
            ParsedBlock::ToolCall(c) => Ok(AssistantPart::ToolCall(c)),
            other => Err(other),
        }
    }
}

/// Why a block could not be parsed: the field (relative to the block) and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct BlockError {
    /// The field path inside the block, e.g. `source.data`.
    pub field: String,
    /// What is wrong.
    pub message: String,
}

fn err(field: impl Into<String>, message: impl Into<String>) -> BlockError {
    BlockError {
        field: field.into(),
        message: message.into(),
    }
}

fn take_string(map: &mut Map<String, Value>, key: &str, path: &str) -> Result<String, BlockError> {
    match map.swap_remove(key) {
        Some(Value::String(s)) => Ok(s),
        Some(other) => Err(err(
            join(path, key),
            format!("expected a string, found {}", kind_of(&other)),
        )),
        None => Err(err(join(path, key), "missing")),
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

/// Parses one content block, taking its strings out of `block`. `model` is the model of the
/// message it came in, recorded on thinking signatures.
pub fn parse_block(block: Value, model: Option<&str>) -> Result<ParsedBlock, BlockError> {
    let Value::Object(mut map) = block else {
        return match block {
            // Claude Code's schema allows bare strings in user content.
            Value::String(s) => Ok(ParsedBlock::Text(s)),
            other => Err(err(
                "",
                format!("expected a block object, found {}", kind_of(&other)),
            )),
        };
    };
    let kind = take_string(&mut map, "type", "")?;
    match kind.as_str() {
        "text" => Ok(ParsedBlock::Text(take_string(&mut map, "text", "")?)),
        "image" => parse_image(&mut map, "").map(ParsedBlock::Image),
        "thinking" => {
            let text = take_string(&mut map, "thinking", "")?;
            let signature = match map.swap_remove("signature") {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) if s.is_empty() => None,
                Some(Value::String(value)) => Some(Signature {
                    provider: PROVIDER.to_owned(),
                    model: model.map(str::to_owned),
                    value,
                    redacted: false,
                }),
                Some(other) => {
                    return Err(err(
                        "signature",
                        format!("expected a string, found {}", kind_of(&other)),
                    ))
                }
            };
            Ok(ParsedBlock::Thinking(Thinking { text, signature }))
        }
        "redacted_thinking" => Ok(ParsedBlock::Thinking(Thinking {
            text: String::new(),
            signature: Some(Signature {
                provider: PROVIDER.to_owned(),
                model: model.map(str::to_owned),
                value: take_string(&mut map, "data", "")?,
                redacted: true,
            }),
        })),
        "tool_use" => {
            let id = take_string(&mut map, "id", "")?;
            let name = take_string(&mut map, "name", "")?;
            let arguments = map
                .swap_remove("input")
                .ok_or_else(|| err("input", "missing"))?;
            Ok(ParsedBlock::ToolCall(ToolCall::new(
                canonical_tool_id(&id).into_owned(),
                name,
                arguments,
            )))
        }
        "tool_result" => {
            let id = take_string(&mut map, "tool_use_id", "")?;
            let content = match map.swap_remove("content") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::String(text)) => vec![Part::Text { text }],
                Some(Value::Array(items)) => parse_result_items(items)?,
                Some(other) => {
                    return Err(err(
                        "content",
                        format!("expected a string or an array, found {}", kind_of(&other)),
                    ))
                }
            };
            let is_error = match map.swap_remove("is_error") {
                None | Some(Value::Null) => false,
                Some(Value::Bool(b)) => b,
                Some(other) => {
                    return Err(err(
                        "is_error",
                        format!("expected a boolean, found {}", kind_of(&other)),
                    ))
                }
            };
            Ok(ParsedBlock::ToolResult {
                call_id: canonical_tool_id(&id).into_owned(),
                content,
                is_error,
            })
        }
        _ => {
            map.insert("type".into(), Value::String(kind.clone()));
            Ok(ParsedBlock::Other {
                kind,
                block: Value::Object(map),
            })
        }
    }
}

fn parse_result_items(items: Vec<Value>) -> Result<Vec<Part>, BlockError> {
    let mut parts = Vec::with_capacity(items.len());
    for (i, item) in items.into_iter().enumerate() {
        let path = format!("content[{i}]");
        let Value::Object(mut map) = item else {
            return Err(err(path, "expected a block object"));
        };
        let kind = take_string(&mut map, "type", &path)?;
        match kind.as_str() {
            "text" => parts.push(Part::Text {
                text: take_string(&mut map, "text", &path)?,
            }),
            "image" => parts.push(parse_image(&mut map, &path)?),
            other => {
                return Err(err(
                    join(&path, "type"),
                    format!("a {other:?} block inside a tool result has no canonical form"),
                ))
            }
        }
    }
    Ok(parts)
}

fn parse_image(map: &mut Map<String, Value>, path: &str) -> Result<Part, BlockError> {
    let source_path = join(path, "source");
    let Some(Value::Object(mut source)) = map.swap_remove("source") else {
        return Err(err(source_path, "missing or not an object"));
    };
    let kind = take_string(&mut source, "type", &source_path)?;
    match kind.as_str() {
        "base64" => {
            let media_type = take_string(&mut source, "media_type", &source_path)?;
            let data = take_string(&mut source, "data", &source_path)?;
            let data = handoff_transcript::base64::decode(data.as_bytes())
                .map_err(|e| err(join(&source_path, "data"), format!("not base64: {e}")))?;
            Ok(Part::Image { media_type, data })
        }
        "url" => Ok(Part::ImageUrl {
            url: take_string(&mut source, "url", &source_path)?,
        }),
        other => Err(err(
            join(&source_path, "type"),
            format!("image source {other:?} has no canonical form"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use base64::Engine as _;
    use serde_json::json;

    use super::*;

    fn round(block: &WireBlock<'_>) -> ParsedBlock {
        parse_block(serde_json::to_value(block).unwrap(), Some("m")).unwrap()
    }

    #[test]
    fn blocks_round_trip() {
        let image = Part::Image {
            media_type: "image/png".into(),
            data: vec![0, 1, 2, 255],
        };
        assert_eq!(
            round(&WireBlock::from_part(&image)),
            ParsedBlock::Image(image.clone())
        );
        let call = ToolCall::new("functions.read:3", "read", json!({"path": "a", "n": 1}));
        let wire = serde_json::to_value(WireBlock::tool_use(&call)).unwrap();
        assert!(wire["id"]
            .as_str()
            .unwrap()
            .starts_with(super::super::MAPPED_ID_PREFIX));
        assert_eq!(
            round(&WireBlock::tool_use(&call)),
            ParsedBlock::ToolCall(call)
        );
        let content = vec![Part::text("out"), image];
        let result = WireBlock::tool_result("c|1", &content, true, false);
        assert_eq!(
            round(&result),
            ParsedBlock::ToolResult {
                call_id: "c|1".into(),
                content,
                is_error: true
            }
        );
    }

    #[test]
    fn tool_result_content_forms() {
        let one = [Part::text("")];
        let v = serde_json::to_value(WireBlock::tool_result("t", &one, false, true)).unwrap();
        assert_eq!(
            v,
            json!({"type":"tool_result","tool_use_id":"t","content":"","is_error":false})
        );
        let v = serde_json::to_value(WireBlock::tool_result("t", &[], false, false)).unwrap();
        assert_eq!(
            v,
            json!({"type":"tool_result","tool_use_id":"t","content":[]})
        );
        let parsed = parse_block(json!({"type":"tool_result","tool_use_id":"t"}), None).unwrap();
        assert!(
            matches!(parsed, ParsedBlock::ToolResult { ref content, is_error: false, .. } if content.is_empty())
        );
    }

    #[test]
    fn thinking_carries_anthropic_signature_and_model() {
        let b = parse_block(
            json!({"type":"thinking","thinking":"hm","signature":"sig","cache_control":{"type":"ephemeral"}}),
            Some("claude-x"),
        )
        .unwrap();
        let ParsedBlock::Thinking(t) = b else {
            panic!()
        };
        let s = t.signature.unwrap();
        assert_eq!(
            (s.provider.as_str(), s.model.as_deref(), s.value.as_str()),
            ("anthropic", Some("claude-x"), "sig")
        );
        let b = parse_block(json!({"type":"redacted_thinking","data":"opaque"}), None).unwrap();
        let ParsedBlock::Thinking(t) = b else {
            panic!()
        };
        assert!(t.signature.unwrap().redacted);
    }

    #[test]
    fn errors_name_the_field() {
        let e = parse_block(
            json!({"type":"image","source":{"type":"base64","media_type":"image/png","data":"!!"}}),
            None,
        )
        .unwrap_err();
        assert_eq!(e.field, "source.data");
        let e = parse_block(json!({"type":"tool_use","id":"a","name":"n"}), None).unwrap_err();
        assert_eq!(e.field, "input");
        let e = parse_block(
            json!({"type":"tool_result","tool_use_id":"a","is_error":"yes"}),
            None,
        )
        .unwrap_err();
        assert_eq!(e.field, "is_error");
        let e = parse_block(json!({"text":"no type"}), None).unwrap_err();
        assert_eq!(e.field, "type");
    }

    #[test]
    fn unknown_blocks_are_kept_verbatim() {
        let b = parse_block(json!({"type":"document","source":{}}), None).unwrap();
        assert!(matches!(b, ParsedBlock::Other { ref kind, .. } if kind == "document"));
    }

    /// An image's data spelled out in its JSON form is what serialising its base64 as a
    /// string writes, for bytes of every length modulo 3, and it reads back as the same bytes.
    #[test]
    fn image_data_is_written_as_its_base64_string_would_be() {
        for len in [0, 1, 2, 3, 4, 5, 1000] {
            let data: Vec<u8> = (0..len).map(|i| (i * 37 % 256) as u8).collect();
            assert_eq!(
                serde_json::to_string(&Base64(&data)).unwrap(),
                serde_json::to_string(&base64::engine::general_purpose::STANDARD.encode(&data))
                    .unwrap()
            );
            let image = Part::Image {
                media_type: "image/png".into(),
                data,
            };
            assert_eq!(
                round(&WireBlock::from_part(&image)),
                ParsedBlock::Image(image)
            );
        }
    }
}
