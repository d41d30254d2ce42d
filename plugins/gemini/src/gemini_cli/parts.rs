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
use handoff_sdk::serde_json::{Map, Value};
use handoff_sdk::{AssistantPart, Part, Signature, Thinking, ToolCall};

use super::record_types::{
    CallRef, FileRef, Inline, InlineIn, PartIn, ResponseBody, ResponseIn, ResponseRef, Texts, WPart,
};

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
                    args: call.structured_arguments(),
                },
                signature: None,
            },
            AssistantPart::Thinking(t) if !is_google(t, origin_provider) => continue,
            // Refused before anything is written (the writer's check of each assistant event).
            AssistantPart::WebSearch(_) => continue,
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

fn field_err(field: impl std::fmt::Display, message: impl Into<String>) -> PartError {
    (field.to_string(), message.into())
}

/// An `inlineData` image.
fn image(v: InlineIn, field: impl std::fmt::Display) -> Result<Part, PartError> {
    let mime = v.mime_type.unwrap_or_default();
    if !mime.starts_with("image/") {
        return Err(field_err(
            format!("{field}.mimeType"),
            format!("inline data of type {mime:?} has no canonical form (images only)"),
        ));
    }
    let bytes = b64()
        .decode(v.data.unwrap_or_default())
        .map_err(|e| field_err(format!("{field}.data"), format!("not base64 ({e})")))?;
    Ok(Part::Image {
        media_type: mime,
        data: bytes,
    })
}

/// Reads one part (taking its strings). `model` is the turn's model (the default maker of its
/// signatures); `field` names the part in errors (only formatted when one occurs).
pub(crate) fn read_part(
    part: PartIn,
    field: &dyn std::fmt::Display,
    model: Option<&str>,
    out: &mut Vec<ReadPart>,
) -> Result<(), PartError> {
    let signature = part.signature.map(|value| Signature {
        provider: PROVIDER.to_owned(),
        model: model.map(str::to_owned),
        value,
        redacted: false,
    });
    // As core's Gemini dialect reads it: a signature with no thinking text is redacted thinking.
    if part.thought.as_ref().and_then(Value::as_bool) == Some(true) {
        let text = part.text.unwrap_or_default();
        let signature = signature.map(|s| Signature {
            redacted: text.is_empty(),
            ..s
        });
        out.push(ReadPart::Model(AssistantPart::Thinking(Thinking {
            text,
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
    if let Some(text) = part.text {
        out.push(ReadPart::User(Part::Text { text }));
    } else if let Some(data) = part.inline {
        out.push(ReadPart::User(image(
            data,
            format_args!("{field}.inlineData"),
        )?));
    } else if let Some(file) = part.file {
        let url = file
            .file_uri
            .ok_or_else(|| field_err(format_args!("{field}.fileData.fileUri"), "missing"))?;
        out.push(ReadPart::User(Part::ImageUrl { url }));
    } else if let Some(call) = part.call {
        let name = call
            .name
            .ok_or_else(|| field_err(format_args!("{field}.functionCall.name"), "missing"))?;
        out.push(ReadPart::Model(AssistantPart::ToolCall(ToolCall::new(
            call.id.unwrap_or_default(),
            name,
            call.args.unwrap_or_else(|| Value::Object(Map::new())),
        ))));
    } else if let Some(resp) = part.response {
        out.push(function_response(
            resp,
            format_args!("{field}.functionResponse"),
        )?);
    } else {
        let kind = if part.video.is_some() {
            "videoMetadata"
        } else if part.code.is_some() {
            "executableCode"
        } else if part.code_result.is_some() {
            "codeExecutionResult"
        } else {
            "unknown"
        };
        return Err(field_err(
            field,
            format!("a {kind:?} part has no canonical form"),
        ));
    }
    Ok(())
}

fn function_response(v: ResponseIn, field: std::fmt::Arguments<'_>) -> Result<ReadPart, PartError> {
    let name = v
        .name
        .ok_or_else(|| field_err(format_args!("{field}.name"), "missing"))?;
    // As core's Gemini dialect reads it; `{}` (what the CLI writes for a tool with no text) and
    // a missing response are no text.
    let (mut content, is_error) = match v.response {
        None | Some(Value::Null) => (Vec::new(), false),
        Some(Value::Object(o)) if o.is_empty() => (Vec::new(), false),
        Some(Value::Object(mut o)) if o.len() == 1 && o.contains_key("output") => {
            (texts_of(o.swap_remove("output").unwrap_or_default()), false)
        }
        Some(Value::Object(mut o)) if o.len() == 1 && o.contains_key("error") => {
            (texts_of(o.swap_remove("error").unwrap_or_default()), true)
        }
        Some(other) => (vec![Part::text(other.to_string())], false),
    };
    for (i, p) in v.parts.unwrap_or_default().into_iter().enumerate() {
        let data = p.inline.ok_or_else(|| {
            field_err(
                format_args!("{field}.parts[{i}]"),
                "only inlineData images are read in a function response",
            )
        })?;
        content.push(image(data, format_args!("{field}.parts[{i}].inlineData"))?);
    }
    Ok(ReadPart::Response {
        id: v.id,
        name,
        content,
        is_error,
    })
}

fn texts_of(value: Value) -> Vec<Part> {
    match value {
        Value::String(s) if s.is_empty() => Vec::new(),
        Value::String(s) => vec![Part::Text { text: s }],
        Value::Array(items) if items.iter().all(Value::is_string) => items
            .into_iter()
            .filter_map(|v| match v {
                Value::String(s) => Some(Part::Text { text: s }),
                _ => None,
            })
            .collect(),
        other => vec![Part::text(other.to_string())],
    }
}

/// The CLI's `partToString(content, {verbose: true})`: how it sees a message as text (used to
/// decide which user messages it skips, and what it lists).
pub(crate) fn text_form(parts: &[PartIn]) -> String {
    let mut out = String::new();
    for p in parts {
        if p.video.is_some() {
            out.push_str("[Video Metadata]");
        } else if let Some(t) = &p.thought {
            out.push_str(&format!("[Thought: {t}]"));
        } else if p.code_result.is_some() {
            out.push_str("[Code Execution Result]");
        } else if p.code.is_some() {
            out.push_str("[Executable Code]");
        } else if p.file.is_some() {
            out.push_str("[File Data]");
        } else if let Some(c) = &p.call {
            out.push_str(&format!(
                "[Function Call: {}]",
                c.name.as_deref().unwrap_or("undefined")
            ));
        } else if let Some(r) = &p.response {
            out.push_str(&format!(
                "[Function Response: {}]",
                r.name.as_deref().unwrap_or("undefined")
            ));
        } else if let Some(d) = &p.inline {
            let mime = d.mime_type.as_deref().unwrap_or("unknown");
            let len = d.data.as_deref().map_or(0, str::len);
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
        } else if let Some(t) = &p.text {
            out.push_str(t);
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
    use handoff_sdk::serde_json::json;

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
        let parts: Vec<PartIn> = handoff_sdk::serde_json::from_value(json!([
            {"inlineData": {"mimeType": "image/png", "data": "AAAA"}},
            {"text": "/x"}
        ]))
        .unwrap();
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
            AssistantPart::ToolCall(ToolCall::new("c", "ls", json!({}))),
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
