//! The `openai-responses` target: the stateless Responses API (`POST /v1/responses`). Its store is
//! the request's `input` items, one JSON file per session at `<root>/openai-responses/<uuid>.json`;
//! resuming is the next request body (`store: false`, reasoning replayed encrypted).
//!
//! The wire (core's `openai_responses` dialect): user and assistant `message` items
//! (`input_text`, `input_image`, `output_text`), one `function_call` per call and one
//! `function_call_output` per result paired by `call_id` (`custom_tool_call` /
//! `custom_tool_call_output` for a freeform call), `web_search_call` items for the provider's own
//! web searches, and OpenAI reasoning as `reasoning`
//! items with `encrypted_content`, each in the order it happened.

use handoff_sdk::dialect::Dialect;
use handoff_sdk::{DefaultRoot, Feature, TargetKind, TargetManifest};

use crate::history::{ApiTarget, DEFAULT_MODEL};

/// The target name.
pub const NAME: &str = "openai-responses";

pub(crate) const TARGET: ApiTarget = ApiTarget {
    name: NAME,
    dialect: Dialect::OpenaiResponses,
    manifest,
};

/// What the target declares.
pub fn manifest() -> TargetManifest {
    TargetManifest {
        name: NAME.to_owned(),
        kind: TargetKind::Api,
        provider: "openai".to_owned(),
        carries: Feature::all_except(&[Feature::Compaction]),
        thinking_from: vec!["openai".to_owned()],
        notes: vec![
            format!("The store is the Responses request history (`input` items, one JSON file per session); event ids, timestamps, authors, assistant origins, tool errors, the model of each reasoning blob and where each event's parts are ride in a separate `handoff` member, never inside an item. The resume plan is the next request body: that history plus the new user message, for the model the session used (the last OpenAI model in the transcript, else {DEFAULT_MODEL}), with store: false and include: [reasoning.encrypted_content]."),
            "Reasoning goes back only as OpenAI encrypted content (a reasoning item), and in the resume plan only to the model that made it (rule R5). Thinking made by any other provider is display-only: set aside on write. OpenAI reasoning without its encrypted content is refused: it cannot be sent back.".to_owned(),
            "Tool errors have no flag on the wire: the model sees only the output text; the flag is kept in `handoff`.".to_owned(),
            "Compaction is refused: a stateless history would have to drop the events it replaces.".to_owned(),
            "A history the API would reject (rules R1-R7 of wire-rules.md, e.g. a call_id over 64 characters) is refused with the rule named.".to_owned(),
        ],
        live: None,
        default_root: Some(DefaultRoot::handoff_data(NAME)),
        dialect: Some(Dialect::OpenaiResponses),
    }
}
