//! Message content parts (`input_text`, `output_text`, `input_image`) and function-call outputs,
//! both ways.

use serde_json::{json, Map, Value};

use crate::{image_part, image_url, ParseError};
use handoff_transcript::Part;

/// The content parts of user-side canonical parts.
pub(super) fn parts(content: &[Part]) -> Vec<Value> {
    content
        .iter()
        .map(|p| match p {
            Part::Text { text } => json!({"type": "input_text", "text": text}),
            image => json!({"type": "input_image", "image_url": image_url(image)}),
        })
        .collect()
}

/// A function-call output: one text as a string, anything else as an array of parts.
pub(super) fn output(content: &[Part]) -> Value {
    match content {
        [Part::Text { text }] => Value::String(text.clone()),
        parts_ => Value::Array(parts(parts_)),
    }
}

/// The content of a message item (a string, or an array of parts), as canonical parts.
pub(super) fn message_content(obj: &Map<String, Value>) -> Result<Vec<Part>, ParseError> {
    match obj.get("content") {
        Some(Value::String(text)) => Ok(vec![Part::text(text.clone())]),
        Some(Value::Array(items)) => content_parts(items).map_err(|e| e.under("content")),
        _ => Err(ParseError::new("content", "must be a string or an array")),
    }
}

/// The `output` of a `function_call_output` item, as canonical parts.
pub(super) fn output_content(obj: &Map<String, Value>) -> Result<Vec<Part>, ParseError> {
    match obj.get("output") {
        Some(Value::String(text)) => Ok(vec![Part::text(text.clone())]),
        Some(Value::Array(items)) => content_parts(items).map_err(|e| e.under("output")),
        _ => Err(ParseError::new("output", "must be a string or an array")),
    }
}

/// Content parts as canonical parts; paths in errors are `[i]` relative to the array.
fn content_parts(items: &[Value]) -> Result<Vec<Part>, ParseError> {
    let mut parts = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let fail = |message: String| ParseError::new(format!("[{i}]"), message);
        match item.get("type").and_then(Value::as_str) {
            Some("input_text" | "output_text") => {
                let text = item
                    .get("text")
                    .and_then(Value::as_str)
                    .ok_or_else(|| fail("text is missing".into()))?;
                parts.push(Part::text(text));
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
