//! The event-log vocabulary both directions share: event types, members, and the texts the CLI
//! itself puts in the history it sends (measured against Copilot CLI 1.0.102, see
//! `docs/formats/copilot-cli.md`).

/// The first event of every log.
pub const SESSION_START: &str = "session.start";
/// A user turn.
pub const USER_MESSAGE: &str = "user.message";
/// An assistant turn: text, reasoning text and tool calls.
pub const ASSISTANT_MESSAGE: &str = "assistant.message";
/// A tool call's result.
pub const TOOL_COMPLETE: &str = "tool.execution_complete";
/// The end of a compaction, with the summary that replaces what came before.
pub const COMPACTION_COMPLETE: &str = "session.compaction_complete";

/// The member of `session.start`'s data that holds the ownership marker (the CLI ignores it).
pub const MARKER_KEY: &str = "x-handoff";

/// The member of `assistant.message`'s data that keeps the turn's origin (provider, model, API),
/// which the CLI's own members cannot spell; the CLI ignores it.
pub const ORIGIN_KEY: &str = "x-handoff-origin";

/// The member of a `toolRequests` item that marks a freeform call (Codex's `apply_patch`), written
/// in its structured form `{"input": <text>}`, which the CLI sends as it is; the CLI ignores it.
pub const FREEFORM_KEY: &str = "x-handoff-freeform";

/// What the CLI sends as the result of a call that has none when another turn follows it.
pub const INTERRUPTED_BEFORE_NEXT_TURN: &str =
    "The execution of this tool, or a previous tool was interrupted.";
/// What the CLI sends as the result of a call that has none at the end of the log.
pub const INTERRUPTED_AT_END: &str = "Tool execution was interrupted before a result was \
recorded. Its effects may be absent, partial, or already complete, and other tools may have \
completed successfully. Check the current state before retrying; do not assume success or replay \
this operation blindly.";

/// The user message the CLI sends in place of everything a compaction replaced: the earlier
/// user messages, then the summary.
pub fn compaction_message(user_messages: &[String], summary: &str) -> String {
    let mut text = String::from(
        "Some of the conversation history has been summarized to free up context.\n\nYou were \
         originally given instructions from a user over one or more turns. Here were the user \
         messages:\n",
    );
    for message in user_messages {
        text.push_str("<user_message>\n");
        text.push_str(message);
        text.push_str("\n</user_message>\n");
    }
    text.push_str("\nHere is a summary of the prior context:\n<summary>\n");
    text.push_str(summary);
    text.push_str("\n</summary>\n");
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_compaction_message_is_the_measured_one() {
        // What Copilot CLI 1.0.102 sent for a log with one user message before the compaction.
        assert_eq!(
            compaction_message(&["old one".into()], "SUMMARY OF OLD"),
            "Some of the conversation history has been summarized to free up context.\n\nYou \
             were originally given instructions from a user over one or more turns. Here were \
             the user messages:\n<user_message>\nold one\n</user_message>\n\nHere is a summary \
             of the prior context:\n<summary>\nSUMMARY OF OLD\n</summary>\n"
        );
    }
}
