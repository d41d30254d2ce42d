//! What the plugin declares: its two stateless API targets.

/// The plugin name written into ownership markers.
pub const PLUGIN_NAME: &str = "openai";

#[cfg(test)]
mod tests {
    use handoff_sdk::dialect::Dialect;
    use handoff_sdk::{Feature, TargetKind};

    #[test]
    fn both_targets_are_stateless_apis_that_say_what_they_cannot_carry() {
        let m = handoff_sdk::Plugin::manifest(&crate::OpenaiPlugin);
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
