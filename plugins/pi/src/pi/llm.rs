//! What pi 0.73.1 sends to a model for the entries that are not plain user / assistant / tool
//! result messages (`convertToLlm` and `buildSessionContext` in pi-coding-agent's
//! `core/messages.js` and `core/session-manager.js`): each becomes one user message, whose text
//! is made here exactly as pi makes it.

use handoff_sdk::serde_json::Value;
use handoff_sdk::{Part, PluginError, Timestamp};

use super::context::truthy;
use super::records::{Block, Content, Entry};

/// pi's preamble of a compaction summary (the canonical summary is the text between).
pub const COMPACTION_PREFIX: &str =
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
/// pi's closing of a compaction summary.
pub const COMPACTION_SUFFIX: &str = "\n</summary>";
/// pi's preamble of a branch summary.
pub const BRANCH_PREFIX: &str =
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n";
/// pi's closing of a branch summary.
pub const BRANCH_SUFFIX: &str = "</summary>";

/// A JSON value as JavaScript's template strings print it (numbers and strings as they are).
fn js_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => "null".to_owned(),
        other => other.to_string(),
    }
}

/// The user text of a `bashExecution` message (`bashExecutionToText`).
pub fn bash_text(
    command: &str,
    output: Option<&str>,
    exit_code: Option<&Value>,
    cancelled: bool,
    truncated: bool,
    full_output_path: Option<&Value>,
) -> String {
    let mut text = format!("Ran `{command}`\n");
    match output.filter(|o| !o.is_empty()) {
        Some(output) => {
            text.push_str("```\n");
            text.push_str(output);
            text.push_str("\n```");
        }
        None => text.push_str("(no output)"),
    }
    let failed = exit_code.filter(|c| !c.is_null() && c.as_f64() != Some(0.0));
    if cancelled {
        text.push_str("\n\n(command cancelled)");
    } else if let Some(code) = failed {
        text.push_str(&format!("\n\nCommand exited with code {}", js_text(code)));
    }
    if let Some(path) = full_output_path.filter(|p| truncated && truthy(p)) {
        text.push_str(&format!(
            "\n\n[Output truncated. Full output: {}]",
            js_text(path)
        ));
    }
    text
}

/// A field error of an entry: `(field, message)`.
pub type FieldError = (String, String);

/// A text or image block of user content, borrowed.
pub fn block_part(block: &Block, field: &str) -> Result<Part, FieldError> {
    match block.kind.as_deref() {
        Some("text") => Ok(Part::text(block.text.clone().ok_or_else(|| {
            (
                format!("{field}.text"),
                "a text block has no text".to_owned(),
            )
        })?)),
        Some("image") => image_part(block.data.as_deref(), block.mime_type.as_deref(), field),
        other => Err((
            format!("{field}.type"),
            format!(
                "{:?} is not a block pi sends in user content (text or image)",
                other.unwrap_or("(none)")
            ),
        )),
    }
}

/// An image block's part: its base64 bytes decoded.
pub fn image_part(data: Option<&str>, mime: Option<&str>, field: &str) -> Result<Part, FieldError> {
    use base64::Engine as _;
    let data = data.ok_or_else(|| {
        (
            format!("{field}.data"),
            "an image block has no data".to_owned(),
        )
    })?;
    let media_type = mime
        .ok_or_else(|| {
            (
                format!("{field}.mimeType"),
                "an image block has no mimeType".to_owned(),
            )
        })?
        .to_owned();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data)
        .map_err(|e| {
            (
                format!("{field}.data"),
                format!("the image data is not base64: {e}"),
            )
        })?;
    Ok(Part::Image {
        media_type,
        data: bytes,
    })
}

fn content_parts(content: Option<&Content>, field: &str) -> Result<Vec<Part>, FieldError> {
    match content {
        Some(Content::Text(text)) => Ok(vec![Part::text(text.clone())]),
        Some(Content::Blocks(blocks)) => blocks
            .iter()
            .enumerate()
            .map(|(i, b)| block_part(b, &format!("{field}[{i}]")))
            .collect(),
        None => Err((field.to_owned(), "the message has no content".to_owned())),
    }
}

fn entry_time(entry: &Entry) -> Result<Timestamp, FieldError> {
    let text = entry.timestamp.as_deref().ok_or_else(|| {
        (
            "timestamp".to_owned(),
            "the entry has no timestamp".to_owned(),
        )
    })?;
    Timestamp::parse(text).map_err(|e| ("timestamp".to_owned(), e))
}

/// The time of a message: its own `timestamp` (Unix ms), else its entry's.
pub fn message_time(entry: &Entry) -> Result<Timestamp, FieldError> {
    match entry
        .message
        .as_ref()
        .and_then(|m| m.timestamp.as_ref())
        .and_then(|n| n.as_i64())
    {
        Some(ms) => Ok(Timestamp::from_millis(ms)),
        None => entry_time(entry).map_err(|(_, m)| ("message.timestamp".to_owned(), m)),
    }
}

/// The time and the user content pi sends for an entry that becomes user text.
pub fn as_user(entry: &Entry) -> Result<(Timestamp, Vec<Part>), FieldError> {
    let summary = |prefix: &str, s: Option<&String>, suffix: &str, field: &str| {
        s.map(|s| vec![Part::text(format!("{prefix}{s}{suffix}"))])
            .ok_or_else(|| (field.to_owned(), "the summary is missing".to_owned()))
    };
    match entry.kind.as_deref() {
        Some("custom_message") => Ok((
            entry_time(entry)?,
            content_parts(entry.content.as_ref(), "content")?,
        )),
        Some("branch_summary") => Ok((
            entry_time(entry)?,
            summary(
                BRANCH_PREFIX,
                entry.summary.as_ref(),
                BRANCH_SUFFIX,
                "summary",
            )?,
        )),
        Some("message") => {
            let message = entry
                .message
                .as_ref()
                .ok_or_else(|| ("message".to_owned(), "the entry has no message".to_owned()))?;
            let ts = message_time(entry)?;
            let parts = match message.role.as_deref().unwrap_or_default() {
                "bashExecution" => {
                    let command = message.command.as_deref().ok_or_else(|| {
                        (
                            "message.command".to_owned(),
                            "the bash run has no command".to_owned(),
                        )
                    })?;
                    vec![Part::text(bash_text(
                        command,
                        message.output.as_ref().and_then(|o| o.as_deref()),
                        message.exit_code.as_ref(),
                        message.cancelled.as_ref().is_some_and(truthy),
                        message.truncated.as_ref().is_some_and(truthy),
                        message.full_output_path.as_ref(),
                    ))]
                }
                "branchSummary" => summary(
                    BRANCH_PREFIX,
                    message.summary.as_ref(),
                    BRANCH_SUFFIX,
                    "message.summary",
                )?,
                "compactionSummary" => summary(
                    COMPACTION_PREFIX,
                    message.summary.as_ref(),
                    COMPACTION_SUFFIX,
                    "message.summary",
                )?,
                _ => content_parts(message.content.as_ref(), "message.content")?,
            };
            Ok((ts, parts))
        }
        other => Err((
            "type".to_owned(),
            format!("{other:?} entries are not sent as user text"),
        )),
    }
}

/// An error of an entry on `line` of `file`, from a [`FieldError`].
pub fn field_error(
    file: &std::path::Path,
    line: usize,
    (field, message): FieldError,
) -> PluginError {
    PluginError::malformed_line(file, line, Some(&field), message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use handoff_sdk::serde_json::json;

    #[test]
    fn bash_text_is_pis() {
        assert_eq!(
            bash_text("echo hi", Some("hi"), Some(&json!(3)), false, false, None),
            "Ran `echo hi`\n```\nhi\n```\n\nCommand exited with code 3"
        );
        assert_eq!(
            bash_text("ls", Some(""), Some(&json!(0)), true, true, Some(&json!("/tmp/o"))),
            "Ran `ls`\n(no output)\n\n(command cancelled)\n\n[Output truncated. Full output: /tmp/o]"
        );
        assert_eq!(
            bash_text("x", None, Some(&Value::Null), false, false, None),
            "Ran `x`\n(no output)"
        );
    }
}
