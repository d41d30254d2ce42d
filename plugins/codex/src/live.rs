//! How Codex resumes a session, and how it runs against a loopback fake provider.

use handoff_sdk::serde_json::{self, json, Value};
use handoff_sdk::{ResumePlan, StoreRoot};

/// `codex exec resume <uuid> <prompt>` in the session's cwd, with `CODEX_HOME` set to the store
/// root and stdin closed (Codex waits on an open stdin). A prompt that starts with `-` goes after
/// `--` so it is never taken for an option.
pub fn resume_plan(root: &StoreRoot, id: &str, cwd: &str, prompt: &str) -> ResumePlan {
    let mut args: Vec<String> = ["exec", "--skip-git-repo-check", "resume", id]
        .into_iter()
        .map(str::to_owned)
        .collect();
    if prompt.starts_with('-') {
        args.push("--".to_owned());
    }
    args.push(prompt.to_owned());
    ResumePlan::Command {
        program: "codex".to_owned(),
        args,
        env: vec![(
            "CODEX_HOME".to_owned(),
            root.path().to_string_lossy().into_owned(),
        )],
        cwd: Some(cwd.into()),
        close_stdin: true,
    }
}

/// Codex 0.171.0 against a fake OpenAI Responses provider at `{base_url}/v1`, in the JSON form of
/// core's `LiveRecipe` (the SDK does not re-export that type; the manifest field infers it).
pub fn recipe_json() -> Value {
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
    json!({
        "npm_package": "@openai/codex",
        "version": "0.171.0",
        "program": "codex",
        "dialect": handoff_sdk::dialect::openai_responses::DIALECT,
        "store_root": "codex",
        "env": [["CODEX_HOME", "{home}/codex"], ["FAKE_API_KEY", "dummy"]],
        "files": [["codex/config.toml", config]],
        "extra_args": [],
        "injected": [
            "developer messages: the base instructions, permissions and skills (role developer)",
            "a user message holding only <environment_context>…</environment_context> before the new prompt"
        ]
    })
}

/// The recipe, typed as the manifest field wants it.
pub fn recipe<T: serde::de::DeserializeOwned>() -> Result<T, serde_json::Error> {
    serde_json::from_value(recipe_json())
}
