//! What the plugin declares: the `copilot-cli` target, what it carries, where its store lives,
//! and how the live tier runs GitHub Copilot CLI 1.0.102 against a fake provider.

use handoff_sdk::dialect::Dialect;
use handoff_sdk::live::{Injected, LiveRecipe};
use handoff_sdk::{DefaultRoot, Feature, TargetKind, TargetManifest};

use crate::copilot_cli::{HOME_ENV, TARGET};

/// The Copilot CLI version the writer follows and the live tier pins.
pub const COPILOT_VERSION: &str = "1.0.102";
/// The npm package of Copilot CLI.
pub const COPILOT_PACKAGE: &str = "@github/copilot";

/// The `copilot-cli` target.
pub fn target() -> TargetManifest {
    TargetManifest {
        name: TARGET.to_owned(),
        kind: TargetKind::Cli,
        // Copilot CLI resumes with whatever model it is configured for (GitHub's or a BYOK
        // provider's): the history is provider-neutral.
        provider: "any".to_owned(),
        carries: Feature::all_except(&[
            Feature::ImageUrl,
            Feature::ThinkingSignature,
            Feature::ToolResultImage,
            Feature::Compaction,
            Feature::Author,
            Feature::TextAfterToolCall,
            Feature::PreciseNumbers,
            Feature::WebSearch,
        ]),
        // Copilot CLI keeps reasoning text in the session but sends none of it back to an
        // OpenAI-compatible provider (measured: `reasoningText` never reaches the request).
        thinking_from: vec![],
        notes: notes(),
        live: Some(live_recipe()),
        default_root: Some(DefaultRoot::home(Some(HOME_ENV), ".copilot")),
        dialect: Some(Dialect::OpenaiChat),
    }
}

fn notes() -> Vec<String> {
    [
        "A user turn is one `user.message`: its one text (the CLI sends `transformedContent` when \
         present, else `content`) then its images as blob attachments; a turn of several texts, or \
         an image before the text, is refused. The CLI puts a label text before each attached image \
         (its displayName, or \"Attached image\").",
        "An assistant turn is one `assistant.message`: its thinking (`reasoningText`, kept but never \
         sent to the model), its one text (`content`), then its tool calls (`toolRequests`); text \
         after a tool call, or several texts, is refused.",
        "A freeform tool call (Codex's apply_patch) is a toolRequest whose arguments are \
         {\"input\": <its text>}, marked `x-handoff-freeform`, and reads back as the freeform call; \
         the CLI sends it as that function call.",
        "A tool result is `tool.execution_complete`: `result.content` when it succeeded, \
         `error.message` when it failed (`success: false`). The CLI sends results in the order of \
         the calls; a call without a result is sent with the CLI's own \"interrupted\" text, which the \
         reader gives as a failed result.",
        "A successful `session.compaction_complete` replaces what came before it with the CLI's own \
         user message (the earlier user messages and the summary); the reader gives it as a \
         compaction with that exact text. The writer does not write compactions.",
        "Events the CLI does not send to the model (system.message, turn and usage records, \
         session.resume/shutdown, tool.execution_start, assistant.reasoning, snapshot_rewind: a \
         rewind removes the events from the log itself) are skipped.",
        "The ownership marker is an `x-handoff` member of `session.start`'s data, which the CLI \
         ignores. The CLI adds the session's row in session-store.db and workspace.yaml itself \
         when it resumes it; neither is needed to resume.",
        "Resume runs `copilot --resume=<id> -p PROMPT` in the session's cwd with COPILOT_HOME = the \
         store root.",
    ]
    .into_iter()
    .map(str::to_owned)
    .collect()
}

/// Copilot CLI 1.0.102 in offline mode against a fake OpenAI Chat Completions provider at
/// `{base_url}/v1` (BYOK: no GitHub login).
pub fn live_recipe() -> LiveRecipe {
    let pair = |k: &str, v: &str| (k.to_owned(), v.to_owned());
    LiveRecipe {
        npm_package: COPILOT_PACKAGE.to_owned(),
        version: COPILOT_VERSION.to_owned(),
        program: "copilot".to_owned(),
        dialect: Dialect::OpenaiChat,
        store_root: ".copilot".to_owned(),
        env: vec![
            pair("COPILOT_OFFLINE", "true"),
            pair("COPILOT_AUTO_UPDATE", "false"),
            pair("COPILOT_PROVIDER_BASE_URL", "{base_url}/v1"),
            pair("COPILOT_PROVIDER_API_KEY", "dummy"),
            pair("COPILOT_MODEL", "fake-model"),
            // A context window large enough for any session of the corpus: with the default an
            // unknown model gets (128k prompt tokens) the CLI drops the oldest turns of a long
            // history before it sends it, a step of the resume's model, not of the file.
            pair("COPILOT_PROVIDER_MAX_PROMPT_TOKENS", "100000000"),
        ],
        files: vec![],
        extra_args: vec![],
        injected: vec![
            // Its instructions (role system).
            Injected::SystemPrompt,
            // bash, view, edit, grep, … .
            Injected::ToolDefinitions,
            // The label it puts before an attached image that has no displayName.
            Injected::UserTextPrefix("Attached image".to_owned()),
            // `<current_datetime>…</current_datetime>` and a blank line before the new prompt.
            Injected::PromptLeadingTag("current_datetime".to_owned()),
        ],
        injected_in: Vec::new(),
        verified: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declares_what_copilot_cannot_carry() {
        let t = target();
        assert!(!t.carries(Feature::ImageUrl));
        assert!(!t.carries(Feature::Compaction));
        assert!(!t.carries(Feature::TextAfterToolCall));
        assert!(t.carries(Feature::ToolError) && t.carries(Feature::Thinking));
        let root = t.default_root.unwrap();
        assert_eq!(root.env.as_deref(), Some(HOME_ENV));
        assert_eq!(root.path, ".copilot");
        let live = t.live.unwrap();
        assert_eq!(live.version, COPILOT_VERSION);
        assert!(live.env.iter().any(|(_, v)| v == "{base_url}/v1"));
    }
}
