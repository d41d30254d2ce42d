//! What the plugin declares: the `opencode` target, what it carries, where its store lives, and
//! how the live tier runs OpenCode 1.18.33 against a fake provider.

use handoff_sdk::dialect::Dialect;
use handoff_sdk::live::{Injected, LiveRecipe};
use handoff_sdk::{DefaultRoot, Feature, TargetKind, TargetManifest};

use crate::TARGET;

/// The OpenCode version the writer follows and the live tier pins.
pub const OPENCODE_VERSION: &str = "1.18.33";
/// The npm package of OpenCode.
pub const OPENCODE_PACKAGE: &str = "opencode-ai";

/// The `opencode` target.
pub fn target() -> TargetManifest {
    TargetManifest {
        name: TARGET.to_owned(),
        kind: TargetKind::Cli,
        // OpenCode resumes with whatever model its configuration names.
        provider: "any".to_owned(),
        carries: Feature::all_except(&[
            Feature::ImageUrl,
            Feature::ToolResultImage,
            Feature::Compaction,
            Feature::Author,
            Feature::TextAfterToolCall,
            Feature::PreciseNumbers,
            Feature::WebSearch,
        ]),
        // OpenCode sends a reasoning part to another model than the one that made it as plain
        // text, and to its own model as reasoning, with its signature.
        thinking_from: vec![
            "anthropic".to_owned(),
            "openai".to_owned(),
            "google".to_owned(),
        ],
        notes: notes(),
        live: Some(live_recipe()),
        default_root: Some(DefaultRoot::home(None, ".local/share/opencode")),
        dialect: Some(Dialect::OpenaiChat),
    }
}

fn notes() -> Vec<String> {
    [
        "A session is rows of opencode.db (SQLite, WAL): a session row, message rows and their part \
         rows. A write is one transaction (busy timeout 5 s, OpenCode's own), so a running OpenCode \
         sees the old store or the whole new session. A database whose migrations are not exactly \
         OpenCode 1.18.33's is refused, naming the migration.",
        "An assistant turn is one message; each of its tool calls is one `tool` part that also holds \
         the result (completed or error), so a result must follow its call's turn, in the calls' \
         order, and a call without a result is refused. A result is one text (OpenCode's tool output \
         is a string).",
        "Thinking is a reasoning part; OpenCode sends it to the model that made it as reasoning \
         and to any other as plain text. A signature is kept where OpenCode's provider of its maker \
         keeps it in the part's metadata (Anthropic `signature` / `redactedData`, OpenAI \
         `reasoningEncryptedContent`, Google `thoughtSignature`); another provider's is refused.",
        "A freeform tool call (Codex's apply_patch) is a tool part whose input is {\"input\": \
         <its text>}, marked in the part's `handoff` member, and reads back as the freeform call; \
         OpenCode sends it as that call.",
        "Images are file parts with a data URL. Images by URL, images in tool results, compactions \
         and authors are refused.",
        "The reader follows OpenCode's own history: reverted messages (session.revert) and assistant \
         turns that failed are left out, a compaction's summary replaces what it summarised, and a \
         tool call left pending or running reads as the error OpenCode sends for it.",
        "A session's handle, <root>/handoff-sessions/<id>.json, is the file the host's journal and \
         lock act on; one handoff created holds the ownership marker (no row of OpenCode's carries \
         handoff's data, and a user's session, which has no handle, is never owned). Removing a \
         session deletes exactly its rows and its handle.",
        "Resume runs `opencode run --session <id> WORDS…` in the session's directory with \
         OPENCODE_DB naming the database; the prompt goes as its space-separated words, since \
         `run` quotes an argument that holds a space (a prompt with a double, leading or trailing \
         space, or a word starting with '-', is refused).",
    ]
    .into_iter()
    .map(str::to_owned)
    .collect()
}

/// OpenCode 1.18.33 against a fake OpenAI Chat Completions provider at `{base_url}/v1`.
///
/// The fake model declares image input: for a model without it, OpenCode sends a user image as
/// the text `[Attached image/png: <file>]` (`stripMedia`).
pub fn live_recipe() -> LiveRecipe {
    let config = r#"{"autoupdate":false,"share":"disabled","provider":{"fake":{"npm":"@ai-sdk/openai-compatible","name":"fake","options":{"baseURL":"{base_url}/v1","apiKey":"dummy"},"models":{"fake-model":{"name":"fake","attachment":true,"modalities":{"input":["text","image"],"output":["text"]}}}}}}
"#;
    let pair = |k: &str, v: &str| (k.to_owned(), v.to_owned());
    LiveRecipe {
        npm_package: OPENCODE_PACKAGE.to_owned(),
        version: OPENCODE_VERSION.to_owned(),
        program: "opencode".to_owned(),
        dialect: Dialect::OpenaiChat,
        store_root: ".local/share/opencode".to_owned(),
        // Nothing from the network: no models.dev catalogue, no default plugins (npm), no
        // update check, no LSP downloads.
        env: vec![
            pair("OPENCODE_DISABLE_MODELS_FETCH", "1"),
            pair("OPENCODE_DISABLE_DEFAULT_PLUGINS", "1"),
            pair("OPENCODE_DISABLE_AUTOUPDATE", "1"),
            pair("OPENCODE_DISABLE_LSP_DOWNLOAD", "1"),
        ],
        files: vec![pair(".config/opencode/opencode.json", config)],
        extra_args: ["-m", "fake/fake-model"]
            .into_iter()
            .map(str::to_owned)
            .collect(),
        injected: vec![
            // OpenCode's instructions and environment (role system).
            Injected::SystemPrompt,
            // bash, edit, glob, grep, read, skill, task, todowrite, webfetch, write.
            Injected::ToolDefinitions,
        ],
        injected_in: Vec::new(),
        verified: None,
    }
}
