//! What the plugin declares: its one target, what it carries, and how the live tier runs Codex.

use handoff_sdk::dialect::Dialect;
use handoff_sdk::{DefaultRoot, Feature, TargetKind, TargetManifest};

/// The plugin name (also the `plugin` of the ownership marker).
pub const PLUGIN: &str = "codex";
/// The one target this plugin offers.
pub const TARGET: &str = "codex";
/// The provider whose reasoning Codex sessions carry (and the provider of the target).
pub(crate) const THINKING_PROVIDER: &str = "openai";

/// The manifest of the `codex` target.
pub fn target_manifest() -> TargetManifest {
    TargetManifest {
        name: TARGET.to_owned(),
        kind: TargetKind::Cli,
        provider: THINKING_PROVIDER.to_owned(),
        carries: Feature::ALL.to_vec(),
        thinking_from: vec![THINKING_PROVIDER.to_owned()],
        notes: vec![
            "Thinking from providers other than openai is display-only: it is not written.".into(),
            "Tool errors, event ids, authors and assistant origins ride in an `x-handoff-event` member \
             of each response_item, which Codex ignores and never sends to the model; the model sees a \
             failure only in the output text, as with Codex's own tools."
                .into(),
            "Compaction is a native `compacted` record whose replacement_history is the items after \
             the replaced events, then the summary (as a user message): Codex's own order."
                .into(),
            "Freeform tool calls are native `custom_tool_call` items (their results \
             `custom_tool_call_output`); web searches are native `web_search_call` items."
                .into(),
            "Sessions are recorded with the model provider <CODEX_HOME>/config.toml selects (default \
             openai): Codex 0.171.0 refuses to resume a thread under another provider."
                .into(),
        ],
        live: Some(crate::codex::live::recipe()),
        default_root: Some(DefaultRoot::home(Some("CODEX_HOME"), ".codex")),
        dialect: Some(Dialect::OpenaiResponses),
    }
}
