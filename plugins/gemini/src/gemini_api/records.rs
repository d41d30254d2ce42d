//! The gemini-api session file:
//!
//! ```json
//! {"x-handoff": {"plugin": "gemini", "locator": "…"},
//!  "contents": [{"role": "user", "parts": […]}, {"role": "model", "parts": […]}, …],
//!  "handoff": {"cwd": "…", "events": [{"id", "timestamp", "kind", "parts"?, "call_id"?,
//!                                     "author"?, "origin"?, "signature_models"?}, …]}}
//! ```
//!
//! `contents` is exactly the history core's Gemini dialect renders (what is sent). What no Gemini
//! part can hold is in `handoff`: each canonical event's id, timestamp, author and origin, and
//! where it begins and ends — `parts`, how many canonical parts it reads back as (consecutive
//! turns of one role are one content on the wire).

use handoff_sdk::serde_json::Value;
use handoff_sdk::{Author, Origin, Timestamp};
use serde::{Deserialize, Serialize};

/// The whole file.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct SessionFile {
    #[serde(rename = "x-handoff", default, skip_serializing_if = "Option::is_none")]
    pub marker: Option<Value>,
    pub contents: Vec<Value>,
    pub handoff: Meta,
}

/// What no Gemini part can hold.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(crate) struct Meta {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    pub events: Vec<EventMeta>,
}

/// One canonical event.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct EventMeta {
    pub id: String,
    pub timestamp: Timestamp,
    /// `user`, `assistant` or `tool_result`.
    pub kind: String,
    /// User and assistant events: how many canonical parts the event reads back as.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parts: Option<usize>,
    /// Tool results: the call they answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<Author>,
    /// The assistant turn's origin (`null` when it had none).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "handoff_sdk::present"
    )]
    pub origin: Option<Option<Origin>>,
    /// The model on each signature the event carries, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub signature_models: Vec<Option<String>>,
}
