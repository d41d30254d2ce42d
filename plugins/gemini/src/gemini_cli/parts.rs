//! Gemini content parts ↔ canonical parts, as Gemini CLI 0.61.0 stores and sends them.
//!
//! - user: `{text}`, `{inlineData: {mimeType, data}}` (images by bytes);
//! - model: `{text}`, `{text, thought: true, thoughtSignature?}` (thinking), `{functionCall: {id,
//!   name, args}}`; a `thoughtSignature` on a text or call part is a signature-only thinking part
//!   (`Thinking { text: "", signature }`) just before it;
//! - a tool result: one `functionResponse {id, name, response, parts?}` where `response` is
//!   `{"output": text}` (success), `{"error": text}` (failure) or `{}` (success, no text), and
//!   images are `parts: [{inlineData}]`.

use base64::Engine as _;
use handoff_sdk::serde_json::{json, Map, Value};
use handoff_sdk::{AssistantPart, Part, Signature, Thinking, ToolCall};

use super::record_types::{CallRef, FileRef, Inline, ResponseBody, ResponseRef, Texts, WPart};

/// The provider that makes Gemini thinking and signatures.
pub const PROVIDER: &str = "google";

fn b64() -> base64::engine::GeneralPurpose {
    base64::engine::general_purpose::STANDARD
}

/// The Gemini form of a user part.
pub(crate) fn user_part(part: &Part) -> WPart<'_> {
    match part {
        Part::Text { text } => WPart::Text {
            text,
            thought: None,
            signature: None,
        },
        Part::Image { media_type, data } => WPart::Inline {
            inline: Inline {
                mime_type: media_type,
                data: b64().encode(data),
            },
        },
        Part::ImageUrl { url } => WPart::File {
            file: FileRef { file_uri: url },
        },
    }
}

/// Whether a thinking part goes to Gemini (its maker is Google); other thinking is display-only.
pub(crate) fn is_google(thinking: &Thinking, origin_provider: Option<&str>) -> bool {
    thinking
        .signature
        .as_ref()
        .map(|s| s.provider.as_str())
        .or(origin_provider)
        == Some(PROVIDER)
}

fn signature_only(signature: &str) -> WPart<'_> {
    WPart::Text {
        text: "",
        thought: Some(true),
        signature: Some(signature),
    }
}

/// The model parts of an assistant event, in order, as core's Gemini dialect renders them:
/// Google thinking as thought parts with their signature, a signature without thinking text on
/// the next part; foreign thinking is left out.
pub(crate) fn model_parts<'a>(
    content: &'a [AssistantPart],
    origin_provider: Option<&str>,
) -> Vec<WPart<'a>> {
    let mut parts = Vec::with_capacity(content.len());
    let mut pending: Option<&'a str> = None;
    for part in content {
        let mut wire = match part {
            AssistantPart::Text { text } => WPart::Text {
                text,
                thought: None,
                signature: None,
            },
            AssistantPart::ToolCall(call) => WPart::Call {
                call: CallRef {
                    id: &call.id,
                    name: &call.name,
                    args: &call.arguments,
                },
                signature: None,
            },
            AssistantPart::Thinking(t) if !is_google(t, origin_provider) => continue,
            AssistantPart::Thinking(t) if t.text.is_empty() && t.signature.is_some() => {
                let sig = t
                    .signature
                    .as_ref()
                    .map(|s| s.value.as_str())
                    .unwrap_or_default();
                if let Some(earlier) = pending.replace(sig) {
                    parts.push(signature_only(earlier));
                }
                continue;
            }
            AssistantPart::Thinking(t) => WPart::Text {
                text: &t.text,
                thought: Some(true),
                signature: t.signature.as_ref().map(|s| s.value.as_str()),
            },
        };
        if let Some(sig) = pending.take() {
            match &mut wire {
                WPart::Text {
                    thought: None,
                    signature,
                    ..
                }
                | WPart::Call { signature, .. } => *signature = Some(sig),
                _ => parts.push(signature_only(sig)),
            }
        }
        parts.push(wire);
    }
    if let Some(sig) = pending {
        parts.push(signature_only(sig));
    }
    parts
}

/// The `functionResponse` part of one result, as core's Gemini dialect renders it: the texts
/// under `response.output` (`response.error` for a failed tool) — none `""`, one a string,
/// several an array of strings — and the images as `parts`.
pub(crate) fn result_part<'a>(
    call: &'a ToolCall,
    content: &'a [Part],
    is_error: bool,
) -> WPart<'a> {
    let mut texts: Vec<&str> = content
        .iter()
        .filter_map(|p| match p {
            Part::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    let value = match texts.len() {
        0 => Texts::One(""),
        1 => Texts::One(texts.pop().unwrap_or_default()),
        _ => Texts::Many(texts),
    };
    WPart::Response {
        response: ResponseRef {
            id: &call.id,
            name: &call.name,
            response: if is_error {
                ResponseBody::Error(value)
            } else {
                ResponseBody::Output(value)
            },
            parts: content
                .iter()
                .filter(|p| !matches!(p, Part::Text { .. }))
                .map(user_part)
                .collect(),
        },
    }
}

/// The start of the CLI's text form of a user message made of these parts: the texts up to the
/// first other part, which the CLI shows as `[Image: …]` (enough to decide whether it skips it).
pub(crate) fn text_form_start(content: &[Part]) -> String {
    let mut out = String::new();
    for p in content {
        match p {
            Part::Text { text } => out.push_str(text),
            _ => {
                out.push('[');
                break;
            }
        }
    }
    out
}

/// A part Gemini sent or stored, read back.
pub(crate) enum ReadPart {
    User(Part),
    Model(AssistantPart),
    /// A `functionResponse`: call id (if any), name, content, error flag.
    Response {
        id: Option<String>,
        name: String,
        content: Vec<Part>,
        is_error: bool,
    },
}

/// Why a part cannot be read (the caller names file, line and field).
pub(crate) type PartError = (String, String);

fn field_err(field: &str, message: impl Into<String>) -> PartError {
    (field.to_owned(), message.into())
}

/// An `inlineData` image.
fn image(v: &Value, field: &str) -> Result<Part, PartError> {
    let mime = v
        .get("mimeType")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if !mime.starts_with("image/") {
        return Err(field_err(
            &format!("{field}.mimeType"),
            format!("inline data of type {mime:?} has no canonical form (images only)"),
        ));
    }
    let data = v.get("data").and_then(Value::as_str).unwrap_or_default();
    let bytes = b64()
        .decode(data)
        .map_err(|e| field_err(&format!("{field}.data"), format!("not base64 ({e})")))?;
    Ok(Part::Image {
        media_type: mime.to_owned(),
        data: bytes,
    })
}

/// Reads one part. `model` is the turn's model (the default maker of its signatures).
pub(crate) fn read_part(
    part: &Value,
    field: &str,
    model: Option<&str>,
    out: &mut Vec<ReadPart>,
) -> Result<(), PartError> {
    let obj = match part {
        Value::String(s) => {
            out.push(ReadPart::User(Part::text(s.clone())));
            return Ok(());
        }
        Value::Object(o) => o,
        _ => return Err(field_err(field, "a part is neither a string nor an object")),
    };
    let signature = obj
        .get("thoughtSignature")
        .and_then(Value::as_str)
        .map(|s| Signature {
            provider: PROVIDER.to_owned(),
            model: model.map(str::to_owned),
            value: s.to_owned(),
            redacted: false,
        });
    let thought = obj.get("thought").and_then(Value::as_bool) == Some(true);
    // As core's Gemini dialect reads it: a signature with no thinking text is redacted thinking.
    if thought {
        let text = obj.get("text").and_then(Value::as_str).unwrap_or_default();
        let signature = signature.map(|s| Signature {
            redacted: text.is_empty(),
            ..s
        });
        out.push(ReadPart::Model(AssistantPart::Thinking(Thinking {
            text: text.to_owned(),
            signature,
        })));
        return Ok(());
    }
    if let Some(sig) = signature {
        out.push(ReadPart::Model(AssistantPart::Thinking(Thinking {
            text: String::new(),
            signature: Some(Signature {
                redacted: true,
                ..sig
            }),
        })));
    }
    if let Some(text) = obj.get("text") {
        let text = text
            .as_str()
            .ok_or_else(|| field_err(&format!("{field}.text"), "not a string"))?;
        out.push(ReadPart::User(Part::text(text)));
    } else if let Some(data) = obj.get("inlineData") {
        out.push(ReadPart::User(image(data, &format!("{field}.inlineData"))?));
    } else if let Some(file) = obj.get("fileData") {
        let url = file
            .get("fileUri")
            .and_then(Value::as_str)
            .ok_or_else(|| field_err(&format!("{field}.fileData.fileUri"), "missing"))?;
        out.push(ReadPart::User(Part::ImageUrl {
            url: url.to_owned(),
        }));
    } else if let Some(call) = obj.get("functionCall") {
        out.push(ReadPart::Model(AssistantPart::ToolCall(function_call(
            call,
            &format!("{field}.functionCall"),
        )?)));
    } else if let Some(resp) = obj.get("functionResponse") {
        out.push(function_response(
            resp,
            &format!("{field}.functionResponse"),
        )?);
    } else {
        let kind = obj.keys().next().map(String::as_str).unwrap_or("{}");
        return Err(field_err(
            field,
            format!("a {kind:?} part has no canonical form"),
        ));
    }
    Ok(())
}

fn function_call(v: &Value, field: &str) -> Result<ToolCall, PartError> {
    let name = v
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| field_err(&format!("{field}.name"), "missing"))?;
    Ok(ToolCall {
        id: v
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        name: name.to_owned(),
        arguments: v
            .get("args")
            .cloned()
            .unwrap_or_else(|| Value::Object(Map::new())),
    })
}

fn function_response(v: &Value, field: &str) -> Result<ReadPart, PartError> {
    let name = v
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| field_err(&format!("{field}.name"), "missing"))?;
    let response = v.get("response").cloned().unwrap_or(Value::Null);
    // As core's Gemini dialect reads it; `{}` (what the CLI writes for a tool with no text) and
    // a missing response are no text.
    let (mut content, is_error) = match &response {
        Value::Null => (Vec::new(), false),
        Value::Object(o) if o.is_empty() => (Vec::new(), false),
        Value::Object(o) if o.len() == 1 && o.contains_key("output") => {
            (texts_of(&o["output"]), false)
        }
        Value::Object(o) if o.len() == 1 && o.contains_key("error") => {
            (texts_of(&o["error"]), true)
        }
        other => (vec![Part::text(other.to_string())], false),
    };
    if let Some(parts) = v.get("parts").and_then(Value::as_array) {
        for (i, p) in parts.iter().enumerate() {
            let f = format!("{field}.parts[{i}]");
            let data = p.get("inlineData").ok_or_else(|| {
                field_err(&f, "only inlineData images are read in a function response")
            })?;
            content.push(image(data, &format!("{f}.inlineData"))?);
        }
    }
    Ok(ReadPart::Response {
        id: v.get("id").and_then(Value::as_str).map(str::to_owned),
        name: name.to_owned(),
        content,
        is_error,
    })
}

fn texts_of(value: &Value) -> Vec<Part> {
    match value {
        Value::String(s) if s.is_empty() => Vec::new(),
        Value::String(s) => vec![Part::text(s.clone())],
        Value::Array(items) if items.iter().all(Value::is_string) => items
            .iter()
            .filter_map(Value::as_str)
            .map(Part::text)
            .collect(),
        other => vec![Part::text(other.to_string())],
    }
}

/// A message's `content` (a string, one part, or an array of parts and strings) as a list,
/// borrowed when it is already one.
pub(crate) fn content_list(content: Option<&Value>) -> std::borrow::Cow<'_, [Value]> {
    use std::borrow::Cow;
    match content {
        None | Some(Value::Null) => Cow::Borrowed(&[]),
        Some(Value::Array(items)) => Cow::Borrowed(items.as_slice()),
        Some(Value::String(s)) => Cow::Owned(vec![json!({ "text": s })]),
        Some(other) => Cow::Owned(vec![other.clone()]),
    }
}

/// The CLI's `partToString(content, {verbose: true})`: how it sees a message as text (used to
/// decide which user messages it skips).
pub(crate) fn text_form(parts: &[Value]) -> String {
    let mut out = String::new();
    for p in parts {
        match p {
            Value::String(s) => out.push_str(s),
            Value::Object(o) => {
                if o.contains_key("videoMetadata") {
                    out.push_str("[Video Metadata]");
                } else if let Some(t) = o.get("thought") {
                    out.push_str(&format!("[Thought: {t}]"));
                } else if o.contains_key("codeExecutionResult") {
                    out.push_str("[Code Execution Result]");
                } else if o.contains_key("executableCode") {
                    out.push_str("[Executable Code]");
                } else if o.contains_key("fileData") {
                    out.push_str("[File Data]");
                } else if let Some(c) = o.get("functionCall") {
                    out.push_str(&format!(
                        "[Function Call: {}]",
                        c.get("name").and_then(Value::as_str).unwrap_or("undefined")
                    ));
                } else if let Some(r) = o.get("functionResponse") {
                    out.push_str(&format!(
                        "[Function Response: {}]",
                        r.get("name").and_then(Value::as_str).unwrap_or("undefined")
                    ));
                } else if let Some(d) = o.get("inlineData") {
                    let mime = d
                        .get("mimeType")
                        .and_then(Value::as_str)
                        .unwrap_or("unknown");
                    let len = d.get("data").and_then(Value::as_str).map_or(0, str::len);
                    let kb = ((len * 3).div_ceil(4)) as f64 / 1024.0;
                    let cat = if mime.starts_with("audio/") {
                        "Audio"
                    } else if mime.starts_with("video/") {
                        "Video"
                    } else if mime.starts_with("image/") {
                        "Image"
                    } else {
                        "Media"
                    };
                    out.push_str(&format!("[{cat}: {mime}, {kb:.1} KB]"));
                } else if let Some(t) = o.get("text").and_then(Value::as_str) {
                    out.push_str(t);
                }
            }
            _ => {}
        }
    }
    out
}

/// JavaScript's `String.prototype.trim` whitespace (WhiteSpace + LineTerminator).
fn js_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202f}'
                | '\u{205f}'
                | '\u{3000}'
                | '\u{feff}'
    )
}

/// The CLI's `isIgnoredUserContent` on a message's text form: such a user message is never sent
/// to the model on resume, never listed, and dropped from the file by the resume checkpoint.
pub(crate) fn skipped_user_text(text_form: &str) -> bool {
    let t = text_form.trim_matches(js_space);
    t.is_empty()
        || t.starts_with('/')
        || t.starts_with('?')
        || t.starts_with("<session_context>")
        || t.starts_with("<hook_context>")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cli_skips_commands_and_context() {
        for t in [
            "",
            " \u{feff}",
            "/help",
            "  ?x",
            "<session_context>\n…",
            "<hook_context>",
        ] {
            assert!(skipped_user_text(t), "{t:?}");
        }
        for t in ["hi", "[Image: image/png, 0.1 KB]/x", "a /b"] {
            assert!(!skipped_user_text(t), "{t:?}");
        }
        let parts = [
            json!({"inlineData": {"mimeType": "image/png", "data": "AAAA"}}),
            json!({"text": "/x"}),
        ];
        assert_eq!(text_form(&parts), "[Image: image/png, 0.0 KB]/x");
    }

    #[test]
    fn signature_only_thinking_rides_on_the_next_part() {
        let sig = |v: &str| Signature {
            provider: PROVIDER.into(),
            model: None,
            value: v.into(),
            redacted: false,
        };
        let content = [
            AssistantPart::Thinking(Thinking {
                text: "hm".into(),
                signature: Some(sig("S1")),
            }),
            AssistantPart::Thinking(Thinking {
                text: String::new(),
                signature: Some(sig("S2")),
            }),
            AssistantPart::ToolCall(ToolCall {
                id: "c".into(),
                name: "ls".into(),
                arguments: json!({}),
            }),
            AssistantPart::Thinking(Thinking {
                text: "other".into(),
                signature: Some(Signature {
                    provider: "anthropic".into(),
                    ..sig("X")
                }),
            }),
        ];
        let parts = model_parts(&content, Some(PROVIDER));
        assert_eq!(
            handoff_sdk::serde_json::to_value(&parts).unwrap(),
            json!([
                {"text": "hm", "thought": true, "thoughtSignature": "S1"},
                {"functionCall": {"id": "c", "name": "ls", "args": {}}, "thoughtSignature": "S2"}
            ])
        );
    }
}
