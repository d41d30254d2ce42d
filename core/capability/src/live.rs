//! How a CLI target runs for real against a loopback fake provider (the live tier).
//!
//! A plugin declares one [`LiveRecipe`] per CLI target in its manifest. The conformance suite's live
//! checks install nothing themselves: they find the program (see `scripts/install-clis.sh`), make a
//! temporary HOME, write the recipe's files into it, and run the target's resume plan with the
//! recipe's environment, then read the first request the fake provider received.

use serde::{Deserialize, Serialize};

/// How to run a CLI target against a fake provider. Strings may contain the placeholders
/// `{base_url}` (e.g. `http://127.0.0.1:PORT`), `{home}` (the temporary HOME) and `{store_root}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LiveRecipe {
    /// The npm package that provides the CLI, e.g. `@anthropic-ai/claude-code`.
    pub npm_package: String,
    /// The pinned version the target is tested against, e.g. `2.1.197`.
    pub version: String,
    /// The program name, e.g. `claude`.
    pub program: String,
    /// The wire dialect the CLI speaks to the provider.
    pub dialect: handoff_dialects::Dialect,
    /// The store root relative to the temporary HOME, e.g. `.claude`.
    pub store_root: String,
    /// Environment to set (after HOME).
    #[serde(default)]
    pub env: Vec<(String, String)>,
    /// Files to write, as (path relative to HOME, contents).
    #[serde(default)]
    pub files: Vec<(String, String)>,
    /// Arguments to add to the resume plan's arguments (e.g. a pinned model).
    #[serde(default)]
    pub extra_args: Vec<String>,
    /// What the CLI sends by itself besides the session's history, as rules the live check
    /// applies: exactly these are set aside, and anything else in the request must be the
    /// transcript plus the prompt.
    #[serde(default)]
    pub injected: Vec<Injected>,
    /// Rules that hold for part of the verified range only (a CLI that changed what it sends
    /// between releases): the live tier applies each to the versions it names, by the version
    /// of the CLI it runs ([`LiveRecipe::at_version`]), beside every rule of [`injected`].
    ///
    /// [`injected`]: LiveRecipe::injected
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub injected_in: Vec<VersionedInjected>,
    /// The versions of the CLI the live tier has proven, both ends included (`handoff doctor`
    /// and `continue` name an installed CLI outside it). Absent: the pinned [`version`] alone.
    ///
    /// [`version`]: LiveRecipe::version
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verified: Option<VerifiedRange>,
}

/// The oldest and the newest version of a CLI that the live tier ran against, both proven.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerifiedRange {
    /// The oldest version proven, e.g. `2.1.197`.
    pub oldest: String,
    /// The newest version proven, e.g. `2.1.332`.
    pub newest: String,
}

impl LiveRecipe {
    /// The range proven: [`LiveRecipe::verified`], or the pinned version alone.
    pub fn verified_range(&self) -> VerifiedRange {
        self.verified.clone().unwrap_or_else(|| VerifiedRange {
            oldest: self.version.clone(),
            newest: self.version.clone(),
        })
    }

    /// The rules that hold for `version` of the CLI: every rule of [`LiveRecipe::injected`],
    /// then each of [`LiveRecipe::injected_in`] whose versions take in `version`.
    pub fn injected_for(&self, version: &str) -> Vec<Injected> {
        let mut rules = self.injected.clone();
        rules.extend(
            self.injected_in
                .iter()
                .filter(|versioned| versioned.holds_for(version))
                .map(|versioned| versioned.rule.clone()),
        );
        rules
    }

    /// This recipe as it holds for `version` of the CLI: its `injected` rules are
    /// [`LiveRecipe::injected_for`] that version, and no rule is left to a version.
    pub fn at_version(&self, version: &str) -> LiveRecipe {
        LiveRecipe {
            injected: self.injected_for(version),
            injected_in: Vec::new(),
            ..self.clone()
        }
    }
}

/// An [`Injected`] rule that holds for some versions of the CLI only, e.g. pi's placeholder for
/// an empty tool output since 0.80.4.
///
/// In JSON: `{"since": "0.80.4", "rule": {"tool_result_text": "(no tool output)"}}`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct VersionedInjected {
    /// The first version the rule holds for (absent: every version before [`before`]).
    ///
    /// [`before`]: VersionedInjected::before
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    /// The first version it no longer holds for (absent: every version from [`since`] on).
    ///
    /// [`since`]: VersionedInjected::since
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<String>,
    /// The rule.
    pub rule: Injected,
}

impl VersionedInjected {
    /// `rule` from version `since` on.
    pub fn since(since: &str, rule: Injected) -> VersionedInjected {
        VersionedInjected {
            since: Some(since.to_owned()),
            before: None,
            rule,
        }
    }

    /// Whether the rule holds for `version` (`1.6.0`, `v1.6.0`): at or after `since`, before
    /// `before`. A version that is no version (unreadable) is in no bounded range.
    pub fn holds_for(&self, version: &str) -> bool {
        let from = self
            .since
            .as_deref()
            .is_none_or(|since| version_at_least(version, since));
        let until = self.before.as_deref().is_none_or(|before| {
            parse_version(version).is_some() && !version_at_least(version, before)
        });
        from && until
    }
}

/// Whether `version` (`22.23.5`, `v22.23.5`) is `min` or newer, as semantic versions; `false`
/// when either is no version. The one comparison of CLI and Node.js versions (the host's
/// `installed::at_least` is this).
pub fn version_at_least(version: &str, min: &str) -> bool {
    matches!((parse_version(version), parse_version(min)), (Some(v), Some(m)) if v >= m)
}

/// `version` (`22.23.5`, `v22.23.5`, surrounding blanks allowed) as a semantic version.
pub fn parse_version(version: &str) -> Option<semver::Version> {
    semver::Version::parse(version.trim().trim_start_matches('v')).ok()
}

/// One kind of thing a CLI puts into its model requests by itself.
///
/// In JSON: `"system_prompt"`, `"tool_definitions"`, `{"user_text_prefix": "<system-reminder>"}`,
/// `{"tool_result_text": "(see attached image)"}`, `{"merged_user_text_suffix": "\n"}`,
/// `{"resume_turn": {"after": "tool_result", "role": "assistant", "text": "…"}}`,
/// `"thinking_of_other_models_left_out"`, `{"tool_output_middle_truncated": {"max_bytes": 12000}}`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Injected {
    /// Its own system prompt: the top-level one (Anthropic `system`, Responses `instructions`,
    /// Gemini `systemInstruction`) and messages of roles other than user and assistant
    /// (`system`, `developer`). Undeclared, a request that has one fails the check.
    SystemPrompt,
    /// Its own tool definitions (the request's `tools`). Undeclared, a request that has some
    /// fails the check.
    ToolDefinitions,
    /// User text parts that start with this text (leading whitespace aside), e.g.
    /// `<system-reminder>` or `<environment_context>`; a user turn left empty goes too.
    UserTextPrefix(String),
    /// Tool-result text parts that are exactly this text: a placeholder the CLI sends for a
    /// result that has no text (e.g. `(see attached image)`).
    ToolResultText(String),
    /// Where the CLI sends consecutive user messages as one, it ends each text part but the last
    /// with this text (Claude Code: a newline): one such ending is set aside.
    MergedUserTextSuffix(String),
    /// A turn the CLI adds on resume between a history that ends on an `after` turn and the new
    /// prompt (Claude Code's "No response requested.", Gemini CLI's placeholder for an
    /// interrupted response). The live check expects exactly this turn there, and nowhere else.
    ResumeTurn(ResumeTurn),
    /// The CLI leaves out the signed thinking of an assistant turn made by a model other than
    /// the request's (a signature is valid only for the model that made it; Claude Code). The
    /// live check expects that thinking left out, given the model the request names.
    ThinkingOfOtherModelsLeftOut,
    /// The CLI sends a tool output longer than `max_bytes` (UTF-8) as its first `max_bytes / 2`
    /// bytes and its last `max_bytes - max_bytes / 2`, each cut back to a character boundary,
    /// with `…N chars truncated…` between them (N: the characters left out). Codex does this to
    /// every function output it loads into the history it sends, its own sessions' included, by
    /// its model's truncation budget; the live check expects exactly that for the recipe's model.
    ToolOutputMiddleTruncated {
        /// The budget, in bytes.
        max_bytes: usize,
    },
    /// The CLI sends no thinking of an assistant turn made by another model than the request's,
    /// signed or not (pi since 1.3.0: a signature holds only for the model that made it, and
    /// readable thinking sent as text would read as part of the other model's reply). The maker
    /// is the turn's model (its origin; a turn without one is another model's); names compare
    /// as [`Injected::ThinkingOfOtherModelsLeftOut`] compares them. The live check expects
    /// that thinking left out, given the model the request names.
    AllThinkingOfOtherModelsLeftOut,
    /// The CLI may send an older tool output masked: replaced by
    /// `<tool_output_masked>\n{preview}\n\nOutput too large. Full output available at: {path}\n</tool_output_masked>`,
    /// the whole output saved in a file of its own. Gemini CLI does this once a history's tool
    /// outputs pass its context budget (`ToolOutputMaskingService`: 50,000 tokens kept whole, then
    /// at least 30,000 more to mask, by its own token estimate). The live check accepts a masked
    /// output exactly when its preview is the one the CLI makes of the expected output (the shell
    /// tool's sections, or the first and last 250 UTF-16 units of the response's JSON); which
    /// outputs the budget picks is not checked.
    ToolOutputMasked,
    /// The CLI puts `<tag>…</tag>` and a blank line before the text of the new prompt (GitHub
    /// Copilot CLI's `<current_datetime>…</current_datetime>`): the live check takes that off
    /// the first text of the request's last user turn, and nowhere else (a history's own user
    /// texts are the session's, tags and all).
    PromptLeadingTag(String),
}

/// A turn a CLI adds on resume after a history that ends a certain way (see
/// [`Injected::ResumeTurn`]). Rules apply in the recipe's order, each to the history as the
/// rules before it left it, so a CLI that adds two turns declares two rules.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ResumeTurn {
    /// How the history must end for the CLI to add the turn.
    pub after: TrailingTurn,
    /// The role of the turn it adds.
    pub role: TurnRole,
    /// The turn's one text.
    pub text: String,
    /// Tool names whose result, ending the history, does not make the CLI add the turn.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unless_answering: Vec<String>,
}

/// How a history ends, for a [`ResumeTurn`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TrailingTurn {
    /// A user turn: a user message or tool results.
    UserOrToolResult,
    /// Tool results.
    ToolResult,
}

/// The role of a turn a CLI adds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnRole {
    /// A user message.
    User,
    /// An assistant message.
    Assistant,
}

impl Injected {
    /// Whether this rule sets aside the user text part `text`.
    pub fn covers_user_text(&self, text: &str) -> bool {
        match self {
            Injected::UserTextPrefix(prefix) => text.trim_start().starts_with(prefix.as_str()),
            _ => false,
        }
    }

    /// Whether this rule sets aside the tool-result text part `text`.
    pub fn covers_result_text(&self, text: &str) -> bool {
        matches!(self, Injected::ToolResultText(placeholder) if placeholder == text)
    }

    /// `text` without the leading `<tag>…</tag>` and blank line this rule sets aside from the
    /// new prompt; `None` when the rule is another or `text` does not start so.
    pub fn strip_prompt_tag<'t>(&self, text: &'t str) -> Option<&'t str> {
        let Injected::PromptLeadingTag(tag) = self else {
            return None;
        };
        let rest = text.strip_prefix(&format!("<{tag}>"))?;
        let close = format!("</{tag}>\n\n");
        let end = rest.find(&close)?;
        Some(&rest[end + close.len()..])
    }

    /// The suffix this rule sets aside from a merged user turn's text parts but the last.
    pub fn merged_user_text_suffix(&self) -> Option<&str> {
        match self {
            Injected::MergedUserTextSuffix(suffix) if !suffix.is_empty() => Some(suffix),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn injected_rules_have_a_plain_json_form() {
        let rules = vec![
            Injected::SystemPrompt,
            Injected::ToolDefinitions,
            Injected::UserTextPrefix("<system-reminder>".into()),
        ];
        let json = serde_json::to_value(&rules).unwrap();
        assert_eq!(
            json,
            serde_json::json!(["system_prompt", "tool_definitions", {"user_text_prefix": "<system-reminder>"}])
        );
        assert_eq!(
            serde_json::from_value::<Vec<Injected>>(json).unwrap(),
            rules
        );
    }

    #[test]
    fn a_versioned_rule_holds_for_its_versions_only() {
        let placeholder = Injected::ToolResultText("(no tool output)".into());
        let since = VersionedInjected::since("0.80.4", placeholder.clone());
        assert!(!since.holds_for("0.73.1"));
        assert!(!since.holds_for("0.80.3"));
        assert!(since.holds_for("0.80.4") && since.holds_for("v1.6.0"));
        let until = VersionedInjected {
            since: Some("1.0.0".into()),
            before: Some("1.3.0".into()),
            rule: Injected::AllThinkingOfOtherModelsLeftOut,
        };
        assert!(!until.holds_for("0.99.2") && until.holds_for("1.2.9"));
        assert!(!until.holds_for("1.3.0") && !until.holds_for("2.0.0"));
        // An unreadable version is in no bounded range.
        assert!(!since.holds_for("unknown") && !until.holds_for(""));
        let open = VersionedInjected {
            since: None,
            before: None,
            rule: Injected::SystemPrompt,
        };
        assert!(open.holds_for("0.0.1") && open.holds_for("garbage"));

        let recipe = LiveRecipe {
            npm_package: "@x/cli".into(),
            version: "0.73.1".into(),
            program: "cli".into(),
            dialect: handoff_dialects::Dialect::OpenaiChat,
            store_root: ".cli".into(),
            env: Vec::new(),
            files: Vec::new(),
            extra_args: Vec::new(),
            injected: vec![Injected::SystemPrompt],
            injected_in: vec![since, until],
            verified: None,
        };
        assert_eq!(recipe.injected_for("0.73.1"), vec![Injected::SystemPrompt]);
        assert_eq!(
            recipe.injected_for("1.1.0"),
            vec![
                Injected::SystemPrompt,
                placeholder.clone(),
                Injected::AllThinkingOfOtherModelsLeftOut
            ]
        );
        let newest = recipe.at_version("1.6.0");
        assert_eq!(newest.injected, vec![Injected::SystemPrompt, placeholder]);
        assert!(newest.injected_in.is_empty());

        // The JSON form, and a recipe of a plugin built before versioned rules reads as none.
        let json = serde_json::to_value(&recipe.injected_in[0]).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"since": "0.80.4", "rule": {"tool_result_text": "(no tool output)"}})
        );
        let mut older = serde_json::to_value(&recipe).unwrap();
        older.as_object_mut().unwrap().remove("injected_in");
        let read: LiveRecipe = serde_json::from_value(older).unwrap();
        assert!(read.injected_in.is_empty());
    }

    #[test]
    fn versions_compare_as_semantic_versions() {
        assert!(version_at_least("v22.23.5", "22.19.0"));
        assert!(!version_at_least("20.20.2", "22.0.0"));
        assert!(version_at_least("1.10.0", "1.9.9"));
        assert!(!version_at_least("not a version", "0.0.0"));
    }

    #[test]
    fn a_resume_turn_has_a_plain_json_form() {
        let rule = Injected::ResumeTurn(ResumeTurn {
            after: TrailingTurn::ToolResult,
            role: TurnRole::User,
            text: "go on".into(),
            unless_answering: vec!["Brief".into()],
        });
        let json = serde_json::to_value(&rule).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"resume_turn": {"after": "tool_result", "role": "user", "text": "go on", "unless_answering": ["Brief"]}})
        );
        assert_eq!(serde_json::from_value::<Injected>(json).unwrap(), rule);
    }

    #[test]
    fn a_prefix_rule_covers_user_texts_that_start_with_it() {
        let tag = Injected::PromptLeadingTag("current_datetime".into());
        assert_eq!(
            tag.strip_prompt_tag("<current_datetime>2026-12-02T06:22</current_datetime>\n\nnext"),
            Some("next")
        );
        assert_eq!(
            tag.strip_prompt_tag("next <current_datetime>x</current_datetime>\n\n"),
            None
        );
        assert_eq!(tag.strip_prompt_tag("<current_datetime>unclosed"), None);
        assert_eq!(
            Injected::SystemPrompt.strip_prompt_tag("<x>y</x>\n\nz"),
            None
        );
        let rule = Injected::UserTextPrefix("<environment_context>".into());
        assert!(
            rule.covers_user_text("\n  <environment_context><cwd>/p</cwd></environment_context>")
        );
        assert!(!rule.covers_user_text("see <environment_context>"));
        assert!(!Injected::SystemPrompt.covers_user_text("<environment_context>"));
        let placeholder = Injected::ToolResultText("(see attached image)".into());
        assert!(placeholder.covers_result_text("(see attached image)"));
        assert!(!placeholder.covers_result_text("(see attached image) and more"));
        assert!(!placeholder.covers_user_text("(see attached image)"));
    }
}
