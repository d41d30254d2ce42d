//! What the plugin declares: its two stateless API targets.

use handoff_sdk::Manifest;

/// The plugin name written into ownership markers.
pub const PLUGIN_NAME: &str = "openai";

/// The plugin's manifest.
pub fn manifest() -> Manifest {
    Manifest {
        name: PLUGIN_NAME.to_owned(),
        version: env!("CARGO_PKG_VERSION").to_owned(),
        api_requirement: handoff_sdk::API_REQUIREMENT.to_owned(),
        targets: vec![
            crate::openai_chat::manifest(),
            crate::openai_responses::manifest(),
        ],
    }
}

#[cfg(test)]
mod tests {
    use handoff_sdk::dialect::Dialect;
    use handoff_sdk::{Feature, TargetKind};

    use super::*;

    #[test]
    fn both_targets_are_stateless_apis_that_say_what_they_cannot_carry() {
        let m = manifest();
        let chat = m.target("openai-chat").unwrap();
        let responses = m.target("openai-responses").unwrap();
        for (t, dialect) in [
            (chat, Dialect::OpenaiChat),
            (responses, Dialect::OpenaiResponses),
        ] {
            assert_eq!(t.kind, TargetKind::Api);
            assert_eq!(t.dialect, Some(dialect));
            assert!(t.live.is_none());
            assert_eq!(t.default_root.as_ref().unwrap().path, t.name);
            assert!(!t.carries(Feature::Compaction));
        }
        assert!(chat.thinking_from.is_empty(), "Chat carries no thinking");
        assert!(!chat.carries(Feature::TextAfterToolCall));
        assert_eq!(responses.thinking_from, ["openai"]);
        assert!(responses.carries(Feature::TextAfterToolCall));
    }
}
