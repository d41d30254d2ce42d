//! The `openai-chat` target: the stateless Chat Completions API (`POST /v1/chat/completions`).
//! Its store is the request's `messages`, one JSON file per session at
//! `<root>/openai-chat/<uuid>.json`; resuming is the next request body.
//!
//! The wire (core's `openai_chat` dialect): an assistant message holds its text, then its
//! `tool_calls` (arguments as JSON strings); one `tool` message per call right after its assistant
//! message; the images tool results held go in a user message after the tool messages; user
//! images are `image_url` parts (bytes as `data:` URLs). Thinking has no field at all.

use handoff_sdk::dialect::Dialect;
use handoff_sdk::{DefaultRoot, Feature, TargetKind, TargetManifest};

use crate::history::{ApiTarget, DEFAULT_MODEL};

/// The target name.
pub const NAME: &str = "openai-chat";

pub(crate) const TARGET: ApiTarget = ApiTarget {
    name: NAME,
    dialect: Dialect::OpenaiChat,
    manifest,
};

/// What the target declares.
pub fn manifest() -> TargetManifest {
    TargetManifest {
        name: NAME.to_owned(),
        kind: TargetKind::Api,
        provider: "openai".to_owned(),
        carries: Feature::all_except(&[Feature::Compaction, Feature::TextAfterToolCall, Feature::FreeformToolCall, Feature::WebSearch]),
        thinking_from: Vec::new(),
        notes: vec![
            format!("The store is the Chat Completions request history (`messages`, one JSON file per session); event ids, timestamps, authors, assistant origins, tool errors and where each event's parts are ride in a separate `handoff` member, never inside a message. The resume plan is the next request body: that history plus the new user message, for the model the session used (the last OpenAI model in the transcript, else {DEFAULT_MODEL})."),
            "Thinking is not carried: the Chat Completions wire has no reasoning field. All thinking, any provider's, is display-only: accepted, never sent, set aside on write and by comparison (an assistant turn of nothing else is not written).".to_owned(),
            "Tool errors have no flag on the wire: the model sees only the output text; the flag is kept in `handoff`.".to_owned(),
            "Images inside tool results travel in a user message right after the tool messages (tool messages take text only); `handoff` keeps which result each belongs to.".to_owned(),
            "Text after a tool call inside one assistant turn is refused: a Chat assistant message holds its text before its tool_calls.".to_owned(),
            "Compaction is refused: a stateless history would have to drop the events it replaces.".to_owned(),
            "Empty texts are not sent (an empty string is no content); `handoff` keeps where they were.".to_owned(),
            "A history the API would reject (rules C1-C5 of wire-rules.md, e.g. a tool-call id over 40 characters) is refused with the rule named.".to_owned(),
        ],
        live: None,
        default_root: Some(DefaultRoot::handoff_data(NAME)),
        dialect: Some(Dialect::OpenaiChat),
    }
}
