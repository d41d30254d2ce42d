//! Single parts both ways: user-side parts (text, `inlineData`, `fileData`) and the
//! `functionResponse` of a tool result.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use serde_json::{json, Map, Value};

use crate::{kind_of, result_text, ParseError};
use handoff_transcript::Part;

/// The data fields of a Part; exactly one must be set.
pub(super) const DATA_FIELDS: &[&str] = &[
    "text",
    "inlineData",
    "fileData",
    "functionCall",
    "functionResponse",
    "executableCode",
    "codeExecutionResult",
];

/// A user-side part, or `None` for an empty text (rule G7).
pub(super) fn user_part(part: &Part) -> Option<Value> {
    match part {
        Part::Text { text } if text.is_empty() => None,
        Part::Text { text } => Some(json!({ "text": text })),
        Part::Image { media_type, data } => {
            Some(json!({"inlineData": {"mimeType": media_type, "data": STANDARD.encode(data)}}))
        }
        Part::ImageUrl { url } => Some(json!({"fileData": {"fileUri": url}})),
    }
}

/// An `inlineData` or `fileData` part as a canonical image; paths in errors are relative to
/// the part.
pub(super) fn media_part(part: &Map<String, Value>) -> Result<Option<Part>, ParseError> {
    if let Some(inline) = part.get("inlineData") {
        let field = |key: &str| {
            inline.get(key).and_then(Value::as_str).ok_or_else(|| {
                ParseError::new(format!("inlineData.{key}"), "missing or not a string")
            })
        };
        let data = STANDARD
            .decode(field("data")?)
            .map_err(|e| ParseError::new("inlineData.data", format!("not base64: {e}")))?;
        return Ok(Some(Part::Image {
            media_type: field("mimeType")?.to_owned(),
            data,
        }));
    }
    if let Some(file) = part.get("fileData") {
        let url = file
            .get("fileUri")
            .and_then(Value::as_str)
            .ok_or_else(|| ParseError::new("fileData.fileUri", "missing or not a string"))?;
        return Ok(Some(Part::ImageUrl {
            url: url.to_owned(),
        }));
    }
    Ok(None)
}

/// The `functionResponse` of a tool result: its texts under `response.output` (or
/// `response.error` when the tool failed) — no text is `""`, one text a string, several an
/// array of strings — and its images as `parts`.
pub(super) fn function_response(id: &str, name: &str, content: &[Part], is_error: bool) -> Value {
    let value = result_text(content, |several| Value::from(several.to_vec()));
    let key = if is_error { "error" } else { "output" };
    let mut response = Map::new();
    response.insert("id".into(), Value::from(id));
    response.insert("name".into(), Value::from(name));
    response.insert("response".into(), json!({ key: value }));
    let media: Vec<Value> = content
        .iter()
        .filter(|p| !matches!(p, Part::Text { .. }))
        .filter_map(user_part)
        .collect();
    if !media.is_empty() {
        response.insert("parts".into(), Value::Array(media));
    }
    json!({ "functionResponse": response })
}

/// A `functionResponse` object read back: its content and whether the tool failed. A response
/// with only an `error` member is a failure; with only `output`, a success; anything else is the
/// whole response as JSON text.
pub(super) fn response_content(
    response: &Map<String, Value>,
) -> Result<(Vec<Part>, bool), ParseError> {
    let result = match response.get("response") {
        Some(Value::Object(r)) => r,
        Some(other) => {
            return Err(ParseError::new(
                "response",
                format!("expected an object, found {}", kind_of(other)),
            ))
        }
        None => return Err(ParseError::new("response", "missing")),
    };
    let keys: Vec<&str> = result.keys().map(String::as_str).collect();
    let (mut content, is_error) = match keys.as_slice() {
        ["output"] => (texts_of(&result["output"]), false),
        ["error"] => (texts_of(&result["error"]), true),
        _ => (
            vec![Part::text(Value::Object(result.clone()).to_string())],
            false,
        ),
    };
    if let Some(parts) = response.get("parts") {
        let parts = parts
            .as_array()
            .ok_or_else(|| ParseError::new("parts", "expected an array"))?;
        for (i, p) in parts.iter().enumerate() {
            let media = p
                .as_object()
                .map(media_part)
                .transpose()
                .map_err(|e| e.under(&format!("parts[{i}]")))?
                .flatten()
                .ok_or_else(|| {
                    ParseError::new(format!("parts[{i}]"), "expected inlineData or fileData")
                })?;
            content.push(media);
        }
    }
    Ok((content, is_error))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_round_trip_with_their_error_flag_and_images() {
        let image = Part::Image {
            media_type: "image/png".into(),
            data: vec![9, 8],
        };
        for (content, is_error) in [
            (vec![], false),
            (vec![Part::text("a")], true),
            (vec![Part::text("a"), Part::text("b"), image.clone()], false),
        ] {
            let wire = function_response("c1", "ls", &content, is_error);
            let map = wire["functionResponse"].as_object().unwrap();
            assert_eq!(map["name"], "ls");
            assert_eq!(response_content(map).unwrap(), (content, is_error));
        }
    }

    #[test]
    fn a_response_of_another_shape_is_its_json_text() {
        let map = json!({"name": "f", "response": {"files": ["a"]}});
        let (content, is_error) = response_content(map.as_object().unwrap()).unwrap();
        assert_eq!(content, [Part::text(r#"{"files":["a"]}"#)]);
        assert!(!is_error);
        let bad = json!({"name": "f", "response": "text"});
        assert_eq!(
            response_content(bad.as_object().unwrap()).unwrap_err().path,
            "response"
        );
    }
}
