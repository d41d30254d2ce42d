//! How Codex resumes a session, and how it runs against a loopback fake provider.

use handoff_sdk::dialect::Dialect;
use handoff_sdk::live::{Injected, LiveRecipe};
use handoff_sdk::{ResumeCommand, ResumePlan, StoreRoot};

use crate::codex::records::CLI_VERSION;

/// `codex exec resume <uuid> <prompt>` (interactive: `codex resume <uuid>`) in the session's cwd, with `CODEX_HOME` set to the store
/// root and stdin closed (Codex waits on an open stdin). A prompt that starts with `-` goes after
/// `--` so it is never taken for an option.
pub fn resume_plan(root: &StoreRoot, id: &str, cwd: &str, prompt: &str) -> ResumePlan {
    // `codex resume <uuid>`: the same session in Codex's own terminal UI.
    let session = vec!["resume".to_owned(), id.to_owned()];
    let dashes = prompt.starts_with('-').then(|| "--".to_owned());
    let prompt = dashes.into_iter().chain([prompt.to_owned()]);
    let command = ResumeCommand::new("codex", session, prompt, Some(cwd.into()))
        .headless_after(&["exec", "--skip-git-repo-check"])
        .with_env("CODEX_HOME", root.path().to_string_lossy());
    ResumePlan::Command(command)
}

/// Codex 0.171.0 against a fake OpenAI Responses provider at `{base_url}/v1`.
pub fn recipe() -> LiveRecipe {
    let config = "model = \"fake-model\"\n\
                  model_provider = \"fake\"\n\
                  \n\
                  [model_providers.fake]\n\
                  name = \"fake\"\n\
                  base_url = \"{base_url}/v1\"\n\
                  env_key = \"FAKE_API_KEY\"\n\
                  wire_api = \"responses\"\n\
                  \n\
                  [analytics]\n\
                  enabled = false\n";
    let pair = |k: &str, v: &str| (k.to_owned(), v.to_owned());
    LiveRecipe {
        npm_package: "@openai/codex".to_owned(),
        version: CLI_VERSION.to_owned(),
        program: "codex".to_owned(),
        dialect: Dialect::OpenaiResponses,
        store_root: "codex".to_owned(),
        env: vec![
            pair("CODEX_HOME", "{home}/codex"),
            pair("FAKE_API_KEY", "dummy"),
        ],
        files: vec![pair("codex/config.toml", config)],
        extra_args: Vec::new(),
        // Instructions and developer messages (base instructions, permissions, skills); tool
        // definitions; a user message <environment_context>…</environment_context> before the
        // new prompt.
        injected: vec![
            Injected::SystemPrompt,
            Injected::ToolDefinitions,
            Injected::UserTextPrefix("<environment_context>".to_owned()),
            // Codex 0.171.0 loads every function output into the history it sends under its
            // model's truncation policy: `fake-model` has the fallback metadata (10,000 bytes),
            // scaled by 1.2 where the context manager records an item. Measured: an output of
            // 20,030 characters was sent as its first and last 6,000 with "…8030 chars
            // truncated…" between.
            Injected::ToolOutputMiddleTruncated { max_bytes: 12_000 },
        ],
        injected_in: Vec::new(),
        verified: None,
    }
}
