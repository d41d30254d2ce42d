//! The stored document: the Messages request body (`model`, `max_tokens`, `messages`) with the
//! ownership marker first and, in a separate `handoff` member, what no message can hold.
//!
//! ```json
//! {"x-handoff": {...}, "model": "...", "max_tokens": 8192, "messages": [...],
//!  "handoff": {"cwd": "...", "events": [{"id", "timestamp", "kind", "message", "first", "blocks", ...}]}}
//! ```
//!
//! `messages` is `dialect::anthropic`'s wire form, kept as JSON values; only the `handoff` member
//! has types of its own.

use handoff_sdk::{Author, Origin, Timestamp};
use serde::{Deserialize, Serialize};

/// The model a history names when no turn says which Claude model made it.
pub(super) const DEFAULT_MODEL: &str = "claude-sonnet-4-5";
/// The `max_tokens` of a stored history.
pub(super) const MAX_TOKENS: u64 = 8192;

/// Where one event's blocks are, and what no block can say.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(super) struct EventMeta {
    pub(super) id: String,
    pub(super) timestamp: Timestamp,
    /// `user`, `assistant` or `tool_result`.
    pub(super) kind: String,
    /// Its blocks are `messages[message].content[first..first + blocks]`.
    pub(super) message: usize,
    pub(super) first: usize,
    pub(super) blocks: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) author: Option<Author>,
    /// The assistant turn's origin (`null` when unknown: present, so it is not read as absent,
    /// which a reader takes for the default Anthropic origin).
    #[serde(
        default,
        skip_serializing_if = "is_absent",
        deserialize_with = "handoff_sdk::present"
    )]
    pub(super) origin: Option<Option<Origin>>,
    /// The model on each written thinking signature, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(super) signature_models: Vec<Option<String>>,
}

fn is_absent(o: &Option<Option<Origin>>) -> bool {
    o.is_none()
}

/// The `handoff` member.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(super) struct Meta {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) cwd: Option<String>,
    pub(super) events: Vec<EventMeta>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use handoff_sdk::serde_json::{self, json};

    #[test]
    fn an_unknown_origin_reads_back_unknown_not_absent() {
        let meta = |origin: Option<Option<Origin>>| EventMeta {
            id: "e1".into(),
            timestamp: Timestamp::from_millis(0),
            kind: "assistant".into(),
            message: 1,
            first: 0,
            blocks: 1,
            author: None,
            origin,
            signature_models: Vec::new(),
        };
        for origin in [None, Some(None)] {
            let written = serde_json::to_value(meta(origin.clone())).unwrap();
            let read: EventMeta = serde_json::from_value(written).unwrap();
            assert_eq!(read.origin, origin);
        }
        let written = serde_json::to_value(meta(Some(None))).unwrap();
        assert_eq!(written["origin"], json!(null));
    }
}
