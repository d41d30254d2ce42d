//! Facts about an event that have no native home, kept in an extra `handoff` member next to the
//! native data (Claude Code ignores members it does not know).

use handoff_sdk::serde_json;
use handoff_sdk::{Author, Event, Origin};
use serde::{Deserialize, Serialize};

/// The member name (the SDK's, shared by every plugin that keeps one).
pub(crate) use handoff_sdk::EXTRAS_KEY;

/// What rides in the `handoff` member. Every field is written only when the native data would
/// read back differently without it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Extras {
    /// Who said it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<Author>,
    /// The assistant turn's origin, when it is not "Anthropic, message.model, anthropic-messages"
    /// (`null` for a turn of unknown origin).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "handoff_sdk::present"
    )]
    pub origin: Option<Option<Origin>>,
    /// The model on a thinking signature, when it is not the message's model.
    #[serde(
        default,
        rename = "signatureModel",
        skip_serializing_if = "Option::is_none",
        deserialize_with = "handoff_sdk::present"
    )]
    pub signature_model: Option<Option<String>>,
    /// The record's `tool_use` is a freeform call: its `input` is `{"input": <text>}`, the
    /// structured form of that text (Claude Code's tools take JSON objects only).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub freeform: bool,
    /// The record opens an assistant event that goes on the message of the assistant event
    /// before it (same `message.id`): Claude Code sends consecutive assistant records as one
    /// message only when they share the id, and the API wants roles to alternate (rule A10).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub joined: bool,
}

impl Extras {
    pub(crate) fn is_empty(&self) -> bool {
        self == &Extras::default()
    }
}

/// The key of this plugin's native fields in `Event::opaque` (those with no canonical home that
/// a Claude Code → Claude Code round trip must keep).
pub(crate) const OPAQUE_KEY: &str = "claude";

/// `isMeta` in `opaque["claude"]`: a user record Claude Code wrote for itself (the caveat before
/// local command output, an expanded slash-command prompt, its resume prompt). It sends them to
/// the model like any user message; the flag only hides them from its own display.
const IS_META: &str = "isMeta";

/// Marks `event` as read from an `isMeta` record.
pub(crate) fn mark_meta(event: &mut Event) {
    event
        .opaque
        .insert(OPAQUE_KEY.to_owned(), serde_json::json!({ IS_META: true }));
}

/// Whether `event` came from an `isMeta` record (its `opaque["claude"].isMeta` is `true`).
pub(crate) fn is_meta(event: &Event) -> bool {
    event
        .opaque
        .get(OPAQUE_KEY)
        .and_then(|o| o.get(IS_META))
        .and_then(serde_json::Value::as_bool)
        == Some(true)
}

/// The origin a reader assumes for an assistant turn with no `handoff.origin`.
pub(crate) fn default_origin(model: Option<&str>) -> Origin {
    Origin {
        provider: "anthropic".to_owned(),
        model: model.map(str::to_owned),
        api: Some("anthropic-messages".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use handoff_sdk::serde_json::{self, json};

    use super::*;

    #[test]
    fn null_origin_is_kept_apart_from_missing() {
        let e: Extras = serde_json::from_value(json!({"origin": null})).unwrap();
        assert_eq!(e.origin, Some(None));
        let e: Extras = serde_json::from_value(json!({})).unwrap();
        assert!(e.is_empty());
        let back = serde_json::to_value(Extras {
            origin: Some(None),
            ..Extras::default()
        })
        .unwrap();
        assert_eq!(back, json!({"origin": null}));
    }
}
