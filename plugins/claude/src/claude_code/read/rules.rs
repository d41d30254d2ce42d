//! The reader's rules that differ across the Claude Code versions handoff verifies: a reader is
//! right when it reads what the Claude Code the user runs sends, so these are chosen by that
//! version, as the live recipe's `injected_in` rules are (`since`/`before`, both ends of the
//! verified range measured; no version between them was, so a rule that changed ends at the
//! newest end).
//!
//! The default is the newest end of the range ([`CLAUDE_CODE_NEWEST`]): a reader that is not
//! told which Claude Code it reads for reads as the newest proven one sends.

use handoff_sdk::live::{parse_version, version_at_least};

use crate::manifest::CLAUDE_CODE_NEWEST;

/// How the reader reads a Claude Code session: as the Claude Code of one version sends it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadRules {
    /// A call under a legacy name of a tool that was renamed (`KillShell`, `KillBash` of
    /// `TaskStop`; `BashOutput`, `AgentOutput`, `BashOutputTool`, `AgentOutputTool` of
    /// `TaskOutput`) is sent under the tool's current name: 2.1.197 (measured, `legacy-tool-*`);
    /// 2.1.332 sends the recorded name unchanged (measured for `KillShell`, `KillBash`,
    /// `BashOutput`; its bundle lists those tools without aliases).
    pub(crate) task_tool_aliases_renamed: bool,
    /// The result Claude Code sends for a call the session ended on (no result recorded, only
    /// results after its turn): `None`, the call is dropped (2.1.197, measured: `interrupted-call`,
    /// `interrupted-call-after-text`); 2.1.332 keeps the call and sends this error result for it
    /// (measured, both cases). A call left open with more of the conversation after it is dropped
    /// at every version (2.1.332 has another text for that, "Tool call did not complete…", not
    /// measured).
    pub(crate) open_call_at_end_answered: Option<&'static str>,
    /// When a record's parent is not found and Claude Code goes on to the record written just
    /// before it (`ParentByTime` in `assemble.rs`), a `system` record of subtype `file_snapshot`
    /// is passed over: 2.1.332 (its `fH`, the one kind its by-time step skips; measured, case
    /// `by-time-skips-file-snapshot`: a snapshot written last goes unsent, the first turn is
    /// sent); 2.1.197 goes on to it like any record (measured, same case).
    pub(crate) by_time_skips_file_snapshots: bool,
    /// A user or assistant record on the conversation whose `message` is missing or no object, or
    /// whose `message.content` is missing, `null`, or neither a string nor an array, is passed
    /// over: not sent, while its link in the chain holds, and the results answering no call sent
    /// before them are not sent either (2.1.332, measured: `malformed-on-conversation` on both
    /// samples, `message-not-an-object`, `result-content-a-number`, and each of those faults on
    /// an assistant record, most of them on a user and a tool-result record too).
    /// 2.1.197 fails on such a record (no request), and the reader names its file, line and
    /// field.
    pub(crate) malformed_message_passed_over: bool,
    /// A user record whose `message.content` is an empty array is not sent (its link in the
    /// chain holds): 2.1.332 (measured: differential case `empty-user-content`, where the
    /// provider then refuses two answers in a row); 2.1.197 sends it empty (which the provider
    /// refuses as empty), an empty user event.
    pub(crate) empty_user_content_dropped: bool,
    /// A content block that is a bare string (not a block object) is not sent: 2.1.332
    /// (measured: differential case `bare-string-block`); 2.1.197 sends it as it is (the
    /// provider refuses it), and the reader reads it as text.
    pub(crate) bare_string_blocks_dropped: bool,
    /// A user record whose content is an array of bare strings only (nothing to send once they
    /// are left out) is no leaf: with no `last-prompt` naming one, the conversation ends at the
    /// last record written before it that is one. 2.1.332 (measured: differential case
    /// `bare-string-root-prompt-at-end`, and claude-code-log's `edge_cases.jsonl`, whose last
    /// line is such a record); 2.1.197 resumes from it (same cases). A prompt of an empty array
    /// written last is not the same to 2.1.332 (it sends a history that starts with an answer;
    /// not modelled).
    pub(crate) bare_string_prompt_no_leaf: bool,
}

/// Claude Code 2.1.332's result for a call the session ended on.
pub(crate) const INTERRUPTED_CALL_RESULT: &str = "[Tool call interrupted: the session ended \
    before this call's result was recorded, so its outcome is unknown. Check whether it took \
    effect before relying on it or running it again.]";

impl ReadRules {
    /// As the newest Claude Code the live tier proves sends a session.
    pub const NEWEST: ReadRules = ReadRules {
        task_tool_aliases_renamed: false,
        open_call_at_end_answered: Some(INTERRUPTED_CALL_RESULT),
        by_time_skips_file_snapshots: true,
        malformed_message_passed_over: true,
        empty_user_content_dropped: true,
        bare_string_blocks_dropped: true,
        bare_string_prompt_no_leaf: true,
    };

    /// As Claude Code `cli_version` sends a session; without one, as the newest end of the
    /// verified range does.
    pub fn of(cli_version: Option<&str>) -> ReadRules {
        cli_version.map_or_else(ReadRules::default, ReadRules::for_version)
    }

    /// As Claude Code `version` (`2.1.197`, `v2.1.197`) sends a session. A version that is no
    /// version reads as [`ReadRules::NEWEST`].
    pub fn for_version(version: &str) -> ReadRules {
        let before_newest =
            parse_version(version).is_some() && !version_at_least(version, CLAUDE_CODE_NEWEST);
        if !before_newest {
            return ReadRules::NEWEST;
        }
        ReadRules {
            task_tool_aliases_renamed: true,
            open_call_at_end_answered: None,
            by_time_skips_file_snapshots: false,
            malformed_message_passed_over: false,
            empty_user_content_dropped: false,
            bare_string_blocks_dropped: false,
            bare_string_prompt_no_leaf: false,
        }
    }
}

impl Default for ReadRules {
    fn default() -> Self {
        ReadRules::NEWEST
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::CLAUDE_CODE_VERSION;

    #[test]
    fn each_end_of_the_range_has_its_rules_and_the_default_is_the_newest() {
        let oldest = ReadRules::for_version(CLAUDE_CODE_VERSION);
        assert!(oldest.task_tool_aliases_renamed);
        assert_eq!(oldest.open_call_at_end_answered, None);
        assert!(!oldest.by_time_skips_file_snapshots);
        let newest = ReadRules::for_version(CLAUDE_CODE_NEWEST);
        assert!(newest.by_time_skips_file_snapshots);
        assert!(!oldest.malformed_message_passed_over);
        assert!(newest.malformed_message_passed_over);
        assert!(newest.empty_user_content_dropped);
        assert!(!oldest.empty_user_content_dropped);
        assert!(newest.bare_string_blocks_dropped);
        assert!(!oldest.bare_string_blocks_dropped);
        assert!(newest.bare_string_prompt_no_leaf);
        assert!(!oldest.bare_string_prompt_no_leaf);
        assert!(ReadRules::NEWEST.open_call_at_end_answered.is_some());
        assert!(ReadRules::for_version("v2.1.331").task_tool_aliases_renamed);
        assert_eq!(
            ReadRules::for_version(CLAUDE_CODE_NEWEST),
            ReadRules::NEWEST
        );
        assert_eq!(ReadRules::for_version("2.2.0"), ReadRules::NEWEST);
        assert_eq!(ReadRules::for_version("unknown"), ReadRules::NEWEST);
        assert_eq!(ReadRules::default(), ReadRules::NEWEST);
    }
}
