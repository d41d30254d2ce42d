//! What the gemini plugin says about itself: its two targets, what each carries, where each store
//! lives by default, and how the real Gemini CLI runs against a fake provider.

use handoff_sdk::dialect::Dialect;
use handoff_sdk::live::{Injected, LiveRecipe, ResumeTurn, TrailingTurn, TurnRole};
use handoff_sdk::{DefaultRoot, Feature, TargetKind, TargetManifest};

use crate::gemini_cli::{CLI_VERSION, PROVIDER};

/// The plugin name (also the ownership marker's `plugin`).
pub const PLUGIN_NAME: &str = "gemini";
/// The Gemini CLI chats target.
pub const GEMINI_CLI: &str = "gemini-cli";
/// The stateless Gemini API target.
pub const GEMINI_API: &str = "gemini-api";

/// The `gemini-cli` target.
pub(crate) fn cli_target() -> TargetManifest {
    TargetManifest {
        name: GEMINI_CLI.to_owned(),
        kind: TargetKind::Cli,
        provider: PROVIDER.to_owned(),
        carries: Feature::all_except(&[Feature::ImageUrl, Feature::Compaction, Feature::PreciseNumbers, Feature::WebSearch]),
        // Gemini CLI strips every thought part (and its signature) before it sends the history:
        // no thinking reaches the model through this target (docs/formats/gemini.md).
        thinking_from: Vec::new(),
        notes: vec![
            "A freeform tool call (Codex's apply_patch) is a functionCall whose args are {\"input\": <its text>}, the message's x-handoff-event listing it in freeform_calls, and reads back as the freeform call; the CLI sends it as that functionCall. Web searches are refused: Gemini has no form of OpenAI's.".into(),
            "Store: <root>/tmp/<project short id>/chats/session-<UTC minute>-<id[0:8]>.jsonl; the project is registered in <root>/projects.json and its .project_root markers as the CLI does, under the CLI's own lock (projects.json.lock).".into(),
            "Default root ~/.gemini; Gemini CLI reads $GEMINI_CLI_HOME/.gemini when GEMINI_CLI_HOME is set (it names the home, not the store), so a plan sets GEMINI_CLI_HOME to the parent of a root named .gemini; a root with another name cannot be resumed by the CLI.".into(),
            "Google thinking is stored as thought parts; Gemini CLI never sends thought parts (or a message's thoughts) to the model (it strips them, signature and all), so the reader keeps them as the session's native fields (opaque[\"gemini-cli\"]), not as canonical thinking, and writes them back to Gemini CLI; signatures on call and text parts are sent and read as canonical signatures.".into(),
            "Not carried: image URLs (Gemini needs a fileData URI it can fetch), compaction (the CLI has no record for it), precise numbers (the CLI re-parses arguments as JavaScript numbers).".into(),
            "Refused by name: a user message the CLI drops on resume (text starting with '/', '?', <session_context>, <hook_context>, or blank), empty text parts (G7), non-object call arguments (G3), a tool result not directly after its call's assistant event, empty texts or text after an image in a tool result.".into(),
            "Gemini CLI 0.61.0 leaves a stub file when it resumes in a later minute than the session was written; with retention on (its default) its next start deletes the stub and the resumed session with it. The CLI does this to its own sessions too; see docs/formats/gemini.md.".into(),
        ],
        live: Some(live_recipe()),
        default_root: Some(DefaultRoot::home(None, ".gemini")),
        dialect: Some(Dialect::Gemini),
    }
}

/// The `gemini-api` target.
pub(crate) fn api_target() -> TargetManifest {
    TargetManifest {
        name: GEMINI_API.to_owned(),
        kind: TargetKind::Api,
        provider: PROVIDER.to_owned(),
        carries: Feature::all_except(&[Feature::Compaction, Feature::FreeformToolCall, Feature::WebSearch]),
        thinking_from: vec![PROVIDER.to_owned()],
        notes: vec![
            "Store: <root>/<uuid>.json holding `contents` exactly as core's Gemini dialect renders them, and `handoff.events` (ids, timestamps, authors, origins, event boundaries) that the wire cannot hold.".into(),
            "Resume: the next generateContent body, `{contents}` = the history plus the new user turn, validated against G1-G7 (a call of the current turn without a signature gets skip_thought_signature_validator, rule G4).".into(),
            "Google thinking goes back as thought parts with its signature on the part it came on; other providers' thinking is display-only.".into(),
            "Not carried: compaction (the wire has the summary only, not the events it replaces). Refused by name: empty texts (G7), non-object arguments (G3), text after an image in a tool result.".into(),
        ],
        live: None,
        default_root: Some(DefaultRoot::handoff_data(GEMINI_API)),
        dialect: Some(Dialect::Gemini),
    }
}

/// Gemini CLI 0.61.0 against a fake Gemini API at `{base_url}`. Session retention is left at the
/// CLI's default (on), so the live check also proves the CLI keeps what we wrote.
pub fn live_recipe() -> LiveRecipe {
    let settings = r#"{ "security": { "auth": { "selectedType": "gemini-api-key" } },
  "telemetry": { "enabled": false }, "privacy": { "usageStatisticsEnabled": false },
  "general": { "disableAutoUpdate": true, "disableUpdateNag": true } }
"#;
    let pair = |k: &str, v: &str| (k.to_owned(), v.to_owned());
    LiveRecipe {
        npm_package: "@google/gemini-cli".to_owned(),
        version: CLI_VERSION.to_owned(),
        program: "gemini".to_owned(),
        dialect: Dialect::Gemini,
        store_root: ".gemini".to_owned(),
        env: vec![
            pair("GEMINI_API_KEY", "dummy"),
            pair("GOOGLE_GEMINI_BASE_URL", "{base_url}"),
            pair("GEMINI_CLI_TRUST_WORKSPACE", "true"),
        ],
        files: vec![pair(".gemini/settings.json", settings)],
        extra_args: vec!["-m".to_owned(), "gemini-2.5-flash".to_owned()],
        injected: vec![
            Injected::SystemPrompt,
            Injected::ToolDefinitions,
            Injected::UserTextPrefix("<session_context>".to_owned()),
            // A new prompt after a history that ends on tool results: Gemini CLI first closes
            // that turn with a model turn of its own (`closeUnansweredToolResponseTurn`).
            Injected::ResumeTurn(ResumeTurn {
                after: TrailingTurn::ToolResult,
                role: TurnRole::Assistant,
                text: "[The previous response was interrupted before it completed.]".to_owned(),
                unless_answering: Vec::new(),
            }),
            // A long history's older tool outputs go masked, each saved to a file of its own
            // (`ToolOutputMaskingService`; seen on a real pi session of 0.7 MB).
            Injected::ToolOutputMasked,
        ],
        injected_in: Vec::new(),
        verified: None,
    }
}
