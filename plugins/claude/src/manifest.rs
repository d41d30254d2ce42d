//! What the plugin declares: its targets, what each carries, and how the live tier runs Claude Code.

use handoff_sdk::dialect::Dialect;
use handoff_sdk::live::{
    Injected, LiveRecipe, ResumeTurn, TrailingTurn, TurnRole, VerifiedRange, VersionedInjected,
};
use handoff_sdk::{DefaultRoot, Feature, TargetKind, TargetManifest};

/// The plugin name written into ownership markers.
pub const PLUGIN_NAME: &str = "claude";
/// The Claude Code CLI target.
pub const CLAUDE_CODE: &str = "claude-code";
/// The Anthropic Messages API target.
pub const MESSAGES: &str = "anthropic-messages";
/// The Claude Code version records are written as, and the live tier pins.
pub const CLAUDE_CODE_VERSION: &str = "2.1.197";
/// The newest Claude Code the live tier proves (`HANDOFF_LIVE_END=newest`): it resumes what
/// this plugin writes as [`CLAUDE_CODE_VERSION`] writes it.
pub const CLAUDE_CODE_NEWEST: &str = "2.1.332";

pub(crate) fn claude_code() -> TargetManifest {
    TargetManifest {
        name: CLAUDE_CODE.to_owned(),
        kind: TargetKind::Cli,
        provider: "anthropic".to_owned(),
        carries: Feature::all_except(&[Feature::ImageUrl, Feature::TextAfterToolCall, Feature::PreciseNumbers, Feature::WebSearch]),
        thinking_from: vec!["anthropic".to_owned()],
        notes: vec![
            "Thinking goes back only with its Anthropic signature; thinking made by any other provider is display-only and is set aside on write (an assistant turn of nothing else is not written). Unsigned Anthropic thinking is refused: the API requires the signature.".to_owned(),
            "Tool-call ids the API rejects (not ^[a-zA-Z0-9_-]+$) are written as hx_<base64url(id)> and mapped back on read.".to_owned(),
            "Authors, non-Anthropic origins and signature models that differ from message.model ride in an extra record member `handoff`, which Claude Code ignores.".to_owned(),
            "A freeform tool call (Codex's apply_patch) is a tool_use whose input is {\"input\": <its text>}, the record marked `handoff.freeform`, and reads back as the freeform call; Claude Code sends it as that tool_use. Web searches are refused: the Messages API has no form of OpenAI's.".to_owned(),
            "Images by URL are refused: Claude Code keeps images as base64 sources.".to_owned(),
            "A compaction is written as a system compact_boundary record right after the event it replaces through, the events it keeps (Codex keeps user messages there), then an isCompactSummary user record: Claude Code sends the kept messages, then the summary. Refused, naming the event: kept events an append would put after records already written, a kept compaction, a kept tool result whose call the compaction replaces.".to_owned(),
            "An empty transcript is refused: Claude Code cannot find a session without a message.".to_owned(),
            "Text after a tool call in one assistant turn is refused: Claude Code 2.1.197 moves the tool calls to the end of the turn when it resumes (seen by the live tier).".to_owned(),
            "Tool arguments with numbers JavaScript would change (integers beyond 2^53, `1.0`, `1e5`) are refused: Claude Code parses the session as JavaScript and sends 12345678901234567890123 as 1.2345678901234568e+22 (seen by the live tier).".to_owned(),
        ],
        live: Some(live_recipe()),
        default_root: Some(DefaultRoot::home(Some("CLAUDE_CONFIG_DIR"), ".claude")),
        dialect: Some(Dialect::AnthropicMessages),
    }
}

pub(crate) fn messages() -> TargetManifest {
    TargetManifest {
        name: MESSAGES.to_owned(),
        kind: TargetKind::Api,
        provider: "anthropic".to_owned(),
        carries: Feature::all_except(&[Feature::Compaction, Feature::FreeformToolCall, Feature::WebSearch]),
        thinking_from: vec!["anthropic".to_owned()],
        notes: vec![
            "The store is the Messages request history (one JSON file per session); per-event ids, timestamps, authors, origins and turn boundaries ride in a separate `handoff` member, never inside messages.".to_owned(),
            "Thinking goes back only with its Anthropic signature; other thinking is display-only and set aside on write.".to_owned(),
            "Compaction is refused: a stateless history would have to drop the events it replaces.".to_owned(),
            "A history the API would reject (rules A1-A15 of wire-rules.md, e.g. empty text) is refused with the rule named.".to_owned(),
            "Tool-call ids the API rejects are sent as hx_<base64url(id)> and mapped back on read.".to_owned(),
        ],
        live: None,
        default_root: Some(DefaultRoot::handoff_data(MESSAGES)),
        dialect: Some(Dialect::AnthropicMessages),
    }
}

/// Claude Code 2.1.197 against a loopback fake provider (see live-oracles.md).
fn live_recipe() -> LiveRecipe {
    let env = |k: &str, v: &str| (k.to_owned(), v.to_owned());
    LiveRecipe {
        npm_package: "@anthropic-ai/claude-code".to_owned(),
        version: CLAUDE_CODE_VERSION.to_owned(),
        program: "claude".to_owned(),
        dialect: Dialect::AnthropicMessages,
        store_root: ".claude".to_owned(),
        env: vec![
            env("ANTHROPIC_BASE_URL", "{base_url}"),
            env("ANTHROPIC_API_KEY", "dummy"),
            env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
            env("DISABLE_AUTOUPDATER", "1"),
            env("DISABLE_TELEMETRY", "1"),
        ],
        // What a person's Claude Code has after its first run, so its terminal UI (the
        // interactive resume) opens the session instead of onboarding, a connectivity check
        // against api.anthropic.com, the folder-trust question and the API-key question. The
        // headless `-p` run asks none of them.
        files: vec![(
            ".claude/.claude.json".to_owned(),
            r#"{"hasCompletedOnboarding": true, "customApiKeyResponses": {"approved": ["dummy"], "rejected": []}, "projects": {"{home}/proj": {"hasTrustDialogAccepted": true}}}"#.to_owned(),
        )],
        // Options go after the plan's arguments; the plan keeps them honoured (see resume_args).
        extra_args: ["--model", "claude-sonnet-4-5", "--output-format", "json"]
            .map(str::to_owned)
            .to_vec(),
        // The top-level system prompt and a role:"system" agent listing after the first user
        // turn; tool definitions; <system-reminder> texts (context, skills, agent listings).
        injected: vec![
            Injected::SystemPrompt,
            Injected::ToolDefinitions,
            Injected::UserTextPrefix("<system-reminder>".to_owned()),
            // Consecutive user messages go as one, each text but the last ending in a newline
            // (seen with a compaction that keeps messages: kept messages, then the summary).
            Injected::MergedUserTextSuffix("\n".to_owned()),
            // The request builder strips the signed thinking of every assistant message whose
            // `message.model` is neither the request's model nor `<synthetic>` (2.1.197), so
            // thinking goes back only when the session resumes with the model that made it.
            Injected::ThinkingOfOtherModelsLeftOut,
        ],
        // The turns added on resume, in the order they apply (rules of some versions go after
        // every unversioned rule, so both are here).
        injected_in: vec![
            // On resume (`deserializeMessages`), a history that ends on tool results is an
            // interrupted turn: Claude Code 2.1.197 adds its resume prompt as a user message
            // (`CLAUDE_CODE_RESUME_PROMPT` replaces it), except after a result of the tools that
            // end a turn by design. 2.1.332 no longer adds it (measured: after the tool result it
            // writes and sends only the turn below); no version between was measured, so the
            // rule ends at the newest end.
            VersionedInjected {
                since: None,
                before: Some(CLAUDE_CODE_NEWEST.to_owned()),
                rule: Injected::ResumeTurn(ResumeTurn {
                    after: TrailingTurn::ToolResult,
                    role: TurnRole::User,
                    text: "Continue from where you left off.".to_owned(),
                    unless_answering: ["SendUserMessage", "Brief", "SendUserFile"]
                        .map(str::to_owned)
                        .to_vec(),
                }),
            },
            // Then, whatever the user turn the history ends on, an assistant "No response
            // requested." (written into the session too) before the new prompt: every version.
            VersionedInjected {
                since: None,
                before: None,
                rule: Injected::ResumeTurn(ResumeTurn {
                    after: TrailingTurn::UserOrToolResult,
                    role: TurnRole::Assistant,
                    text: "No response requested.".to_owned(),
                    unless_answering: Vec::new(),
                }),
            },
        ],
        verified: Some(VerifiedRange {
            oldest: CLAUDE_CODE_VERSION.to_owned(),
            newest: CLAUDE_CODE_NEWEST.to_owned(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_resume_prompt_turn_holds_before_the_newest_end_only() {
        let recipe = live_recipe();
        let turns = |version: &str| -> Vec<String> {
            recipe
                .injected_for(version)
                .into_iter()
                .filter_map(|rule| match rule {
                    Injected::ResumeTurn(turn) => Some(turn.text),
                    _ => None,
                })
                .collect()
        };
        assert_eq!(
            turns(CLAUDE_CODE_VERSION),
            [
                "Continue from where you left off.",
                "No response requested."
            ]
        );
        assert_eq!(turns(CLAUDE_CODE_NEWEST), ["No response requested."]);
    }

    #[test]
    fn claude_code_declares_its_live_recipe() {
        let m = handoff_sdk::Plugin::manifest(&crate::ClaudePlugin);
        let live = m
            .target(CLAUDE_CODE)
            .unwrap()
            .live
            .as_ref()
            .expect("a CLI target has a recipe");
        assert_eq!(
            (live.program.as_str(), live.version.as_str()),
            ("claude", CLAUDE_CODE_VERSION)
        );
        assert!(live
            .env
            .iter()
            .any(|(k, v)| k == "ANTHROPIC_BASE_URL" && v == "{base_url}"));
        assert!(m.target(MESSAGES).unwrap().live.is_none());
    }

    #[test]
    fn foreign_thinking_and_urls_are_declared() {
        let m = handoff_sdk::Plugin::manifest(&crate::ClaudePlugin);
        let code = m.target(CLAUDE_CODE).unwrap();
        assert_eq!(code.thinking_from, ["anthropic"]);
        assert!(!code.carries(Feature::ImageUrl));
        let api = m.target(MESSAGES).unwrap();
        assert!(api.carries(Feature::ImageUrl) && !api.carries(Feature::Compaction));
    }
}
