//! The native records: a header line, then one canonical [`handoff_sdk::Event`] per line (the
//! events need no record type of their own).

use handoff_sdk::marker::{OwnershipMarker, MARKER_KEY};
use serde::{Deserialize, Serialize};

/// The header's `type`.
pub(super) const HEADER: &str = "header";

/// The first line of a session file.
#[derive(Serialize, Deserialize)]
pub(super) struct Header {
    /// Always [`HEADER`].
    #[serde(rename = "type")]
    pub kind: String,
    /// The session id.
    pub id: String,
    /// The session's working directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// The ownership marker.
    #[serde(rename = "x-handoff", default, skip_serializing_if = "Option::is_none")]
    pub marker: Option<OwnershipMarker>,
}

impl Header {
    /// The header of a new session.
    pub fn new(id: &str, cwd: Option<String>, marker: OwnershipMarker) -> Self {
        Header {
            kind: HEADER.into(),
            id: id.into(),
            cwd,
            marker: Some(marker),
        }
    }
}

// Keep the marker key and the header field name in step.
const _: () = assert!(matches!(MARKER_KEY.as_bytes(), b"x-handoff"));
