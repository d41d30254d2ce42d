//! What the qwen plugin says about itself: its target, what it carries, where its store lives by
//! default, and how the real Qwen Code runs against a fake provider.

use handoff_sdk::dialect::Dialect;
use handoff_sdk::live::{Injected, LiveRecipe};
use handoff_sdk::{DefaultRoot, Feature, TargetKind, TargetManifest};

/// The plugin name (also the ownership marker's `plugin`).
pub const PLUGIN_NAME: &str = "qwen";
/// The Qwen Code chats target.
pub const QWEN_CODE: &str = "qwen-code";
/// The npm package of Qwen Code.
pub const CLI_PACKAGE: &str = "@qwen-code/qwen-code";
/// The Qwen Code version whose store this target writes (its records carry it as `version`).
pub const CLI_VERSION: &str = "0.24.4";
/// The provider a Qwen Code assistant record is read as made by when nothing else is recorded:
/// its `openai` auth type speaks OpenAI Chat Completions.
pub const PROVIDER: &str = "openai";
/// The wire API of that provider, as an origin's `api`.
pub const API: &str = "openai-chat";

/// The manifest of the `qwen-code` target.
pub fn target_manifest() -> TargetManifest {
    TargetManifest {
        name: QWEN_CODE.to_owned(),
        kind: TargetKind::Cli,
        provider: "qwen".to_owned(),
        carries: Feature::all_except(&[
            Feature::Image,
            Feature::ImageUrl,
            Feature::ToolResultImage,
            Feature::Compaction,
            Feature::TextAfterToolCall,
            Feature::PreciseNumbers,
            Feature::FreeformToolCall,
            Feature::WebSearch,
        ]),
        // Qwen Code sends thought parts as Chat Completions' `reasoning_content`, which the
        // openai-chat dialect does not model: thinking is kept, written and read back, but no
        // thinking counts as reaching the model through this target.
        thinking_from: Vec::new(),
        notes: vec![
            "Store: <root>/projects/<cwd, every character but ASCII letters and digits as '-'>/chats/<uuid>.jsonl, one record a line: {uuid, parentUuid, sessionId, timestamp, type (user, assistant, tool_result, system), cwd, version, message: a Gemini Content}. The first record carries the ownership marker.".into(),
            "Read as Qwen Code 0.24.4 resumes: the chain of parentUuid from the last conversation record; records sharing a uuid are one (parts joined); a chat_compression's compressedHistory replaces what came before; system records otherwise add nothing; a mid_turn_user_message joins the user turn before it.".into(),
            "Default root ~/.qwen; a plan for another root sets QWEN_RUNTIME_DIR to it (where Qwen Code keeps its projects), settings stay in ~/.qwen.".into(),
            "Origin: an assistant record is read as OpenAI Chat Completions' (the openai auth type) with its `model`; another origin or an author is kept in the record's `handoff` member, which Qwen Code keeps and ignores.".into(),
            "Thinking is written as the thought parts Qwen Code keeps (it sends them as reasoning_content), each exactly (signature and all) in the record's `handoff` member; it is display-only here (the openai-chat wire has no reasoning field).".into(),
            "Not carried: images (sent only to models it knows take them), text after a tool call in one turn (Chat Completions sends the text before the calls), compaction, web searches, freeform calls, non-object call arguments, precise numbers.".into(),
        ],
        live: Some(live_recipe()),
        default_root: Some(DefaultRoot::home(None, ".qwen")),
        dialect: Some(Dialect::OpenaiChat),
    }
}

/// Qwen Code 0.24.4 against a fake OpenAI Chat Completions endpoint at `{base_url}/v1`.
pub fn live_recipe() -> LiveRecipe {
    // The fake model's context window is large enough for any session of the corpus: Qwen Code
    // refuses to send a history beyond the window it assumes for a model it does not know.
    let settings = r#"{ "security": { "auth": { "selectedType": "openai" } },
  "model": { "generationConfig": { "contextWindowSize": 100000000 } },
  "general": { "disableAutoUpdate": true },
  "telemetry": { "enabled": false }, "privacy": { "usageStatisticsEnabled": false } }
"#;
    let pair = |k: &str, v: &str| (k.to_owned(), v.to_owned());
    LiveRecipe {
        npm_package: CLI_PACKAGE.to_owned(),
        version: CLI_VERSION.to_owned(),
        program: "qwen".to_owned(),
        dialect: Dialect::OpenaiChat,
        store_root: ".qwen".to_owned(),
        env: vec![
            pair("OPENAI_BASE_URL", "{base_url}/v1"),
            pair("OPENAI_API_KEY", "dummy"),
            pair("OPENAI_MODEL", "fake-model"),
        ],
        files: vec![pair(".qwen/settings.json", settings)],
        extra_args: Vec::new(),
        injected: vec![
            // Its instructions (role system).
            Injected::SystemPrompt,
            // Its tools.
            Injected::ToolDefinitions,
            // The skills, the environment and the deferred tools before the first user text,
            // and the current date before the new prompt.
            Injected::UserTextPrefix("<system-reminder>".to_owned()),
        ],
        injected_in: Vec::new(),
        verified: None,
    }
}
