//! The session file: the provider's own request history plus one member the API never sees.
//!
//! ```json
//! {"x-handoff": {"plugin": "openai", "locator": "…"},
//!  "model": "gpt-5",
//!  "messages": [ … ]            // openai-chat; `input` for openai-responses
//!  "handoff": {"cwd": "…", "events": [
//!    {"id": "e1", "timestamp": "…", "kind": "user", "parts": [[0, 0, 1]]},
//!    {"id": "e2", "timestamp": "…", "kind": "assistant", "parts": [[1, 0, 2]],
//!     "origin": {"provider": "anthropic", "model": "…"}},
//!    {"id": "e3", "timestamp": "…", "kind": "tool_result", "at": 2, "parts": [[2, 0, 1]], "is_error": true}]}}
//! ```
//!
//! The history is what is sent, byte for byte; `handoff` says, per canonical event, which parts of
//! which history entries are its own (`parts`: runs of `[entry, first part, count]`) and what no
//! entry can hold: event ids, timestamps, authors, the origin of assistant turns, tool errors, the
//! model on a reasoning blob, empty texts the wire does not send (`empty`: their positions). The wire is the truth for content; `handoff` only places it.

use handoff_sdk::{Author, Origin, Timestamp};
use serde::{Deserialize, Serialize};

/// The member that holds the extras (the SDK's, shared by every plugin that keeps one).
pub(crate) use handoff_sdk::EXTRAS_KEY;

/// What kind of canonical event an entry of `handoff.events` is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Kind {
    User,
    Assistant,
    ToolResult,
}

/// One canonical event: where its parts are in the history, and what the history cannot say.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct EventMeta {
    pub id: String,
    pub timestamp: Timestamp,
    pub kind: Kind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<Author>,
    /// A tool result: the history entry that answers its call (the call id is read from it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<usize>,
    /// The event's parts in order, as runs `[entry, first part, count]` of parsed history parts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<[usize; 3]>,
    /// Where in the event's content an empty text goes that the wire does not send (Chat sends no
    /// empty text), in ascending order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub empty: Vec<usize>,
    /// A tool result that failed (neither wire has an error flag).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
    /// An assistant turn's origin; `null` when unknown. Absent on other kinds.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "handoff_sdk::present"
    )]
    pub origin: Option<Option<Origin>>,
    /// Per sent signature (in part order): what the wire does not say about it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub signatures: Vec<SignatureMeta>,
}

/// What a reasoning item does not say about its encrypted content.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct SignatureMeta {
    /// The model that made it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Whether the reasoning itself is hidden.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub redacted: bool,
}

/// The `handoff` member.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Meta {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    pub events: Vec<EventMeta>,
}

#[cfg(test)]
mod tests {
    use handoff_sdk::serde_json::{self, json};

    use super::*;

    #[test]
    fn a_null_origin_is_kept_apart_from_none_and_defaults_are_not_written() {
        let e: EventMeta = serde_json::from_value(json!({
            "id": "a", "timestamp": "2026-11-30T00:41:40.000Z", "kind": "assistant", "origin": null
        }))
        .unwrap();
        assert_eq!(e.origin, Some(None));
        let back = serde_json::to_value(&e).unwrap();
        assert_eq!(back["origin"], json!(null));
        assert!(back.get("is_error").is_none() && back.get("parts").is_none());
        let user: EventMeta = serde_json::from_value(json!({
            "id": "u", "timestamp": "2026-11-30T00:41:40.000Z", "kind": "user"
        }))
        .unwrap();
        assert_eq!(user.origin, None);
    }
}
