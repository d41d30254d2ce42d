//! What the plugin declares: the `pi` target, what it carries, where its store lives, and how the
//! live tier runs pi (0.73.1 to 1.6.0) against a fake provider.

use handoff_sdk::dialect::Dialect;
use handoff_sdk::live::{Injected, LiveRecipe, VerifiedRange, VersionedInjected};
use handoff_sdk::{DefaultRoot, Feature, TargetKind, TargetManifest};

use crate::pi::{AGENT_DIR_ENV, TARGET};

/// The pi version the writer follows and the live tier pins.
pub const PI_VERSION: &str = "0.73.1";
/// The npm package of pi.
pub const PI_PACKAGE: &str = "@mariozechner/pi-coding-agent";
/// The newest pi the live tier proved (its package moved to `@earendil-works/pi-coding-agent`).
pub const PI_NEWEST: &str = "1.6.0";

/// The `pi` target.
pub fn target() -> TargetManifest {
    TargetManifest {
        name: TARGET.to_owned(),
        kind: TargetKind::Cli,
        // pi resumes with any provider's model: the plan names the one the session used.
        provider: "any".to_owned(),
        carries: Feature::all_except(&[
            Feature::ImageUrl,
            Feature::PreciseNumbers,
            Feature::WebSearch,
        ]),
        thinking_from: vec![
            "anthropic".to_owned(),
            "openai".to_owned(),
            "google".to_owned(),
        ],
        notes: notes(),
        live: Some(live_recipe()),
        default_root: Some(DefaultRoot::home(Some(AGENT_DIR_ENV), ".pi/agent")),
        dialect: Some(Dialect::OpenaiChat),
    }
}

fn notes() -> Vec<String> {
    [
        "pi's messages are provider-neutral: each assistant turn keeps its provider, model and API, and \
         pi re-serialises the history into the wire of whatever model resumes it. The dialect declared \
         here is the one of the live recipe (an OpenAI Chat Completions provider).",
        "Thinking of any provider is kept with its turn. Its signature is written only when the turn's \
         own provider (and model, where the signature names one) made it; pi replays a signature only to \
         that model. Thinking made by another model than the one resuming is sent as plain text up to \
         pi 1.2 and not sent at all from pi 1.3.0 on (the file keeps it either way).",
        "Images by URL are refused: pi keeps images as base64 data with a MIME type.",
        "Tool arguments with numbers JavaScript would change (integers beyond 2^53, `1.0`, `1e5`) are \
         refused: pi parses the session with JSON.parse and re-serialises the arguments. Tool arguments \
         must be a JSON object (pi's toolCall.arguments).",
        "A freeform tool call (Codex's apply_patch) is a toolCall whose arguments are {\"input\": <its \
         text>}, its block index listed in `x-handoff-event.freeform_calls`, and reads back as the \
         freeform call; pi sends it as that toolCall. Web searches are refused: pi has no form of them.",
        "Authors, origins pi cannot spell (none, or no model or API) and signature models ride in an \
         `x-handoff-event` member of the entry, which pi ignores and never sends to a model.",
        "Compaction is pi's own `compaction` entry; pi sends its summary inside a preamble of its own \
         (\"The conversation history before this point was compacted…\"). A compaction that a later one \
         keeps in view is refused: pi shows only the last compaction's summary; so is a last compaction \
         with events between what it replaces and itself: pi shows a summary before what it keeps.",
        "What pi sends as user text (custom_message, branch_summary, bashExecution) is read as user \
         events with exactly that text, and written back as the same entry. Entries pi never sends \
         (assistant turns that stopped with error/aborted, model and thinking-level changes, labels, \
         session names, extension data) are carried opaquely on the next event; entries off the path \
         from the leaf (abandoned branches) are not part of the conversation.",
        "The session header carries the ownership marker and must fit pi's 512-byte header read: a \
         working directory (plus locator) too long for that is refused.",
        "Resume runs `pi --session-dir <folder> --session <full id> --provider <p> --model <m> -p PROMPT` \
         in the session's cwd; the session file's path replaces the id when another session's id starts \
         with it (pi matches ids by prefix). A prompt starting with `-` or `@` is refused (pi would read \
         it as an option or a file).",
    ]
    .into_iter()
    .map(str::to_owned)
    .collect()
}

/// pi (0.73.1 to 1.6.0) against a fake OpenAI Chat Completions provider at `{base_url}/v1`.
pub fn live_recipe() -> LiveRecipe {
    let models = r#"{
  "providers": {
    "fake": {
      "baseUrl": "{base_url}/v1",
      "api": "openai-completions",
      "apiKey": "dummy",
      "compat": { "supportsDeveloperRole": false, "supportsReasoningEffort": false },
      "models": [ { "id": "fake-model", "reasoning": false, "input": ["text", "image"],
                    "contextWindow": 100000000 } ]
    }
  }
}
"#;
    let pair = |k: &str, v: &str| (k.to_owned(), v.to_owned());
    LiveRecipe {
        npm_package: PI_PACKAGE.to_owned(),
        version: PI_VERSION.to_owned(),
        program: "pi".to_owned(),
        dialect: Dialect::OpenaiChat,
        store_root: ".pi/agent".to_owned(),
        env: vec![pair("PI_OFFLINE", "1")],
        files: vec![pair(".pi/agent/models.json", models)],
        // The fake model's context window is large enough for any session of the corpus: with
        // pi's default (128k) a real session's last usage overflows it and pi compacts the
        // history (a summary the fake provider writes) before it sends the prompt, a step of
        // the resume's model, not of the file.
        extra_args: ["--provider", "fake", "--model", "fake-model"]
            .into_iter()
            .map(str::to_owned)
            .collect(),
        // The system prompt (role system: pi's instructions, tool list, context files); tool
        // definitions; after tool results that hold images, a user message "Attached image(s)
        // from tool result:" with those images (pi's Chat Completions form of them).
        injected: vec![
            // pi's instructions, tool list and context files (role system).
            Injected::SystemPrompt,
            // bash, read, edit, write.
            Injected::ToolDefinitions,
            // pi's Chat Completions form of tool-result images: after the tool messages, a user
            // message with this text and the images.
            Injected::UserTextPrefix("Attached image(s) from tool result:".to_owned()),
            // What pi sends as the text of a tool result that has none (from 0.80.4 on, of one
            // that has images only).
            Injected::ToolResultText("(see attached image)".to_owned()),
        ],
        // What later releases send differently (pi-ai's `openai-completions.js` and
        // `transform-messages.js` of each version; docs/live.md, "Both ends of a verified range").
        injected_in: vec![
            // From 0.80.4 on, a tool result with no text and no image is sent as this text.
            VersionedInjected::since(
                "0.80.4",
                Injected::ToolResultText("(no tool output)".to_owned()),
            ),
            // From 1.3.0 on, thinking of a turn another model made is not sent at all.
            VersionedInjected::since("1.3.0", Injected::AllThinkingOfOtherModelsLeftOut),
        ],
        verified: Some(VerifiedRange {
            oldest: PI_VERSION.to_owned(),
            newest: PI_NEWEST.to_owned(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declares_what_pi_cannot_carry() {
        let t = target();
        assert!(!t.carries(Feature::ImageUrl));
        assert!(!t.carries(Feature::PreciseNumbers));
        assert!(t.carries(Feature::Author) && t.carries(Feature::Compaction));
        let root = t.default_root.unwrap();
        assert_eq!(root.env.as_deref(), Some("PI_CODING_AGENT_DIR"));
        assert_eq!(root.path, ".pi/agent");
        let live = t.live.unwrap();
        assert_eq!(live.version, PI_VERSION);
        assert!(live.files[0].1.contains("{base_url}/v1"));
    }

    #[test]
    fn the_rules_of_later_releases_hold_from_their_versions_on() {
        let recipe = live_recipe();
        let range = recipe.verified_range();
        assert_eq!(
            (range.oldest.as_str(), range.newest.as_str()),
            ("0.73.1", "1.6.0")
        );
        let no_output = Injected::ToolResultText("(no tool output)".to_owned());
        let oldest = recipe.injected_for(&range.oldest);
        assert_eq!(oldest, recipe.injected);
        assert!(!oldest.contains(&no_output));
        assert!(!oldest.contains(&Injected::AllThinkingOfOtherModelsLeftOut));
        // 0.80.4 sends the placeholder, and still the thinking of other models as text.
        let middle = recipe.injected_for("0.87.1");
        assert!(middle.contains(&no_output));
        assert!(!middle.contains(&Injected::AllThinkingOfOtherModelsLeftOut));
        let newest = recipe.injected_for(&range.newest);
        assert!(newest.contains(&no_output));
        assert!(newest.contains(&Injected::AllThinkingOfOtherModelsLeftOut));
    }
}
