//! The reader's errors: every one names the file, the 1-based line and, where one is at fault,
//! the field.

use handoff_sdk::dialect::anthropic::ParsedBlock;
use handoff_sdk::serde_json::{self, Value};

/// Names the field at fault in a line that parsed as JSON but not as a record.
pub(super) fn diagnose(text: &[u8]) -> Option<String> {
    let value: Value = serde_json::from_slice(text).ok()?;
    let obj = value.as_object()?;
    let strings = [
        "type",
        "uuid",
        "parentUuid",
        "logicalParentUuid",
        "subtype",
        "timestamp",
        "cwd",
        "sessionId",
    ];
    for key in strings {
        if obj.get(key).is_some_and(|v| !v.is_string() && !v.is_null()) {
            return Some(key.to_owned());
        }
    }
    for key in ["isSidechain", "isMeta", "isCompactSummary"] {
        if obj
            .get(key)
            .is_some_and(|v| !v.is_boolean() && !v.is_null())
        {
            return Some(key.to_owned());
        }
    }
    if let Some(m) = obj.get("message") {
        let Some(m) = m.as_object() else {
            return Some("message".into());
        };
        for key in ["id", "model"] {
            if m.get(key).is_some_and(|v| !v.is_string() && !v.is_null()) {
                return Some(format!("message.{key}"));
            }
        }
    }
    if obj.get("handoff").is_some() {
        return Some("handoff".into());
    }
    None
}

pub(super) fn unsupported(b: &ParsedBlock) -> String {
    match b {
        // Claude Code 2.1.197 and 2.1.332 send such a block as it is (measured: differential
        // cases `unknown-block-type`, `document-block`); the transcript cannot name it, so a
        // target could not carry it, and dropping it would lose what the CLI sends.
        ParsedBlock::Other { kind, .. } => format!(
            "a {kind:?} block has no canonical form (Claude Code sends it as it is; no target \
             could carry it, so the session is refused rather than read without it)"
        ),
        ParsedBlock::ToolResult { .. } => "a tool_result block in an assistant record".into(),
        ParsedBlock::Image(_) => "an image block in an assistant record".into(),
        ParsedBlock::ToolCall(_) => "a tool_use block in a user record".into(),
        ParsedBlock::Thinking(_) => "a thinking block in a user record".into(),
        ParsedBlock::Text(_) => "a text block where none can be".into(),
    }
}
