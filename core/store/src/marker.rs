//! The ownership marker: how a plugin marks what it created, in a way the real CLI ignores.
//!
//! The marker is a JSON object under the member [`MARKER_KEY`] inside a record of the native file
//! (the first record that tolerates extra members). Real CLIs ignore unknown members. A plugin
//! changes or removes only sessions that carry its marker. The conformance suite relies on the key
//! being exactly this: it strips it to make an unmarked ("foreign") copy of a session.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The JSON member that holds the marker.
pub const MARKER_KEY: &str = "x-handoff";

/// What the marker says.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OwnershipMarker {
    /// The plugin that created the session.
    pub plugin: String,
    /// The conversation locator the continuation engine gave it, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locator: Option<String>,
}

impl OwnershipMarker {
    /// The marker found in `record` (a JSON object), if any.
    pub fn find(record: &Value) -> Option<OwnershipMarker> {
        record
            .get(MARKER_KEY)
            .and_then(|m| serde_json::from_value(m.clone()).ok())
    }

    /// Whether `record` is marked by `plugin`.
    pub fn is_marked_by(record: &Value, plugin: &str) -> bool {
        Self::find(record).is_some_and(|m| m.plugin == plugin)
    }
}

/// Removes every marker from a JSON value, recursively. Returns whether one was found.
pub fn strip(value: &mut Value) -> bool {
    match value {
        Value::Object(map) => {
            let mut found = map.shift_remove(MARKER_KEY).is_some();
            for v in map.values_mut() {
                found |= strip(v);
            }
            found
        }
        Value::Array(items) => items.iter_mut().fold(false, |f, v| strip(v) | f),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn finds_and_strips_markers() {
        let mut v = json!({"a": 1, "payload": {"x-handoff": {"plugin": "codex"}}});
        assert!(OwnershipMarker::find(&v).is_none());
        assert!(OwnershipMarker::is_marked_by(&v["payload"], "codex"));
        assert!(strip(&mut v));
        assert_eq!(v, json!({"a": 1, "payload": {}}));
        assert!(!strip(&mut v));
    }
}
