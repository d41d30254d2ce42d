//! The history one entry (Chat message, Responses item) at a time, parsed with core's dialect into
//! the pieces canonical events are made of. Both the reader and the writer's placement work on
//! these, so what is placed is exactly what is read back.

use handoff_sdk::dialect::Dialect;
use handoff_sdk::serde_json::Value;
use handoff_sdk::{AssistantPart, Body, Part};

/// One part of a parsed entry.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Piece {
    /// A part of a user message or of a tool result.
    Part(Part),
    /// A part of an assistant message (text, reasoning, tool call).
    Assistant(AssistantPart),
}

/// Which side of the conversation an entry is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Side {
    User,
    Assistant,
    Result,
}

/// One history entry, parsed.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct WireEntry {
    pub side: Side,
    /// The call a result answers.
    pub call_id: Option<String>,
    /// Its parts in order; `None` once an event has claimed one.
    pub pieces: Vec<Option<Piece>>,
}

/// Where parsing an entry failed: the JSON path (`messages[3].content[1]`) and why.
pub(crate) type EntryError = (String, String);

/// Parses every entry of a history with `dialect`, one at a time.
pub(crate) fn parse_entries(
    dialect: Dialect,
    history: impl IntoIterator<Item = Value>,
) -> Result<Vec<WireEntry>, EntryError> {
    history
        .into_iter()
        .enumerate()
        .map(|(i, entry)| parse_entry(dialect, i, entry))
        .collect()
}

fn parse_entry(dialect: Dialect, index: usize, entry: Value) -> Result<WireEntry, EntryError> {
    let field = dialect.history_field();
    let at = format!("{field}[{index}]");
    let parsed = dialect.parse(&Value::Array(vec![entry])).map_err(|e| {
        // The dialect saw a one-entry history: its paths say `[0]` where this entry is `[index]`.
        let path = match e.path.strip_prefix(&format!("{field}[0]")) {
            Some(rest) => format!("{at}{rest}"),
            None if e.path.is_empty() => at.clone(),
            None => format!("{at}.{}", e.path),
        };
        (path, e.message)
    })?;
    let mut events = parsed.transcript.events.into_iter();
    let (Some(event), None) = (events.next(), events.next()) else {
        let what = if parsed.system.is_empty() {
            "an entry that is no conversation turn"
        } else {
            "a system or developer message (a stored history holds none: instructions are not part of it)"
        };
        return Err((at, what.to_owned()));
    };
    Ok(match event.body {
        Body::User { content } => WireEntry {
            side: Side::User,
            call_id: None,
            pieces: content.into_iter().map(|p| Some(Piece::Part(p))).collect(),
        },
        Body::Assistant { content, .. } => WireEntry {
            side: Side::Assistant,
            call_id: None,
            pieces: content
                .into_iter()
                .map(|p| Some(Piece::Assistant(p)))
                .collect(),
        },
        Body::ToolResult {
            call_id, content, ..
        } => WireEntry {
            side: Side::Result,
            call_id: Some(call_id),
            pieces: content.into_iter().map(|p| Some(Piece::Part(p))).collect(),
        },
        Body::Compaction { .. } => {
            return Err((at, "a compaction has no place in a stored history".into()))
        }
    })
}

#[cfg(test)]
mod tests {
    use handoff_sdk::serde_json::json;

    use super::*;

    #[test]
    fn each_entry_is_parsed_alone_and_errors_name_its_index() {
        let history = vec![
            json!({"role": "user", "content": "hi"}),
            json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}),
            json!({"role": "tool", "tool_call_id": "c1", "content": "out"}),
        ];
        let entries = parse_entries(Dialect::OpenaiChat, history).unwrap();
        let sides: Vec<Side> = entries.iter().map(|e| e.side).collect();
        assert_eq!(sides, [Side::User, Side::Assistant, Side::Result]);
        assert_eq!(entries[2].call_id.as_deref(), Some("c1"));
        let bad = vec![
            json!({"role": "user", "content": "hi"}),
            json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{no"}}]}),
        ];
        let (path, _) = parse_entries(Dialect::OpenaiChat, bad).unwrap_err();
        assert_eq!(path, "messages[1].tool_calls[0].function.arguments");
        let system = vec![json!({"role": "system", "content": "be brief"})];
        let (path, why) = parse_entries(Dialect::OpenaiChat, system).unwrap_err();
        assert_eq!(path, "messages[0]");
        assert!(why.contains("system"), "{why}");
    }
}
