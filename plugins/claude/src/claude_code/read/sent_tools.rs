//! Claude Code sends a tool call under the name of the tool it resolves to: a name that is now
//! an alias of a tool it has (the legacy names of renamed tools) goes out as that tool's name,
//! and an `Edit` call in the old multi-edit form loses its single-edit fields
//! (`normalizeMessagesForAPI`: the tool found by name or alias, then its input normalised).
//!
//! Measured with Claude Code 2.1.197 (`live/tests/differential.rs`, the `legacy-tool-*` cases),
//! the tools of a default session: `Task` → `Agent`; `KillShell`, `KillBash` → `TaskStop`;
//! `AgentOutputTool`, `BashOutputTool`, `AgentOutput`, `BashOutput` → `TaskOutput`;
//! `RunWorkflow` → `Workflow`. Aliases of tools a default session does not have (`Brief` of
//! `SendUserMessage`, `ListMcpResources`, `ReadMcpResourceDir` of the MCP resource tools) go out
//! unchanged, and so does `ExitPlanMode` with its legacy `plan`.

//!
//! Claude Code 2.1.332 has no aliases left for `TaskStop` and `TaskOutput`: it sends `KillShell`,
//! `KillBash` and `BashOutput` unchanged (measured at `HANDOFF_LIVE_END=newest`), so those
//! renames are rules of the versions before it ([`ReadRules`]).

use handoff_sdk::{AssistantPart, Body, Event, ToolInput};

use super::rules::ReadRules;

/// Legacy tool name → the name every verified Claude Code sends (2.1.197 and 2.1.332).
const RENAMED: &[(&str, &str)] = &[("Task", "Agent"), ("RunWorkflow", "Workflow")];

/// Legacy tool name → the name Claude Code sends before 2.1.332
/// ([`ReadRules::task_tool_aliases_renamed`]).
const RENAMED_BEFORE_2_1_332: &[(&str, &str)] = &[
    ("KillShell", "TaskStop"),
    ("KillBash", "TaskStop"),
    ("AgentOutputTool", "TaskOutput"),
    ("BashOutputTool", "TaskOutput"),
    ("AgentOutput", "TaskOutput"),
    ("BashOutput", "TaskOutput"),
];

/// The single-edit fields Claude Code drops from an `Edit` call whose input has `edits`.
const SINGLE_EDIT_FIELDS: &[&str] = &["old_string", "new_string", "replace_all"];

/// The tool calls of `event` as the Claude Code of `rules` sends them (see the module docs).
pub(super) fn as_sent(event: &mut Event, rules: ReadRules) {
    let Body::Assistant { content, .. } = &mut event.body else {
        return;
    };
    for part in content {
        let AssistantPart::ToolCall(call) = part else {
            continue;
        };
        let mut renamed = RENAMED.iter().chain(
            RENAMED_BEFORE_2_1_332
                .iter()
                .filter(|_| rules.task_tool_aliases_renamed),
        );
        if let Some((_, current)) = renamed.find(|(legacy, _)| *legacy == call.name) {
            call.name = (*current).to_owned();
        }
        if call.name == "Edit" {
            if let ToolInput::Arguments(arguments) = &mut call.input {
                if let Some(fields) = arguments.as_object_mut() {
                    if fields.contains_key("edits") {
                        fields.retain(|k, _| !SINGLE_EDIT_FIELDS.contains(&k.as_str()));
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use handoff_sdk::serde_json::json;
    use handoff_sdk::{Timestamp, ToolCall};

    use super::*;

    /// As Claude Code 2.1.197, the pinned end, sends it.
    fn sent(name: &str, input: handoff_sdk::serde_json::Value) -> ToolCall {
        sent_as(ReadRules::for_version("2.1.197"), name, input)
    }

    fn sent_as(rules: ReadRules, name: &str, input: handoff_sdk::serde_json::Value) -> ToolCall {
        let mut event = Event::new(
            "a",
            Timestamp::from_millis(0),
            Body::assistant(vec![AssistantPart::ToolCall(ToolCall::new(
                "t", name, input,
            ))]),
        );
        as_sent(&mut event, rules);
        let Body::Assistant { mut content, .. } = event.body else {
            unreachable!()
        };
        let Some(AssistantPart::ToolCall(call)) = content.pop() else {
            unreachable!()
        };
        call
    }

    #[test]
    fn legacy_names_go_out_as_the_tool_they_alias() {
        for (legacy, current) in [
            ("Task", "Agent"),
            ("KillShell", "TaskStop"),
            ("KillBash", "TaskStop"),
            ("BashOutput", "TaskOutput"),
            ("AgentOutputTool", "TaskOutput"),
            ("RunWorkflow", "Workflow"),
        ] {
            let call = sent(legacy, json!({"x": 1}));
            assert_eq!(
                (call.name.as_str(), call.arguments()),
                (current, Some(&json!({"x": 1})))
            );
        }
        for unchanged in [
            "Agent",
            "Bash",
            "Brief",
            "ListMcpResources",
            "ExitPlanMode",
            "task",
        ] {
            assert_eq!(sent(unchanged, json!({"plan": "p"})).name, unchanged);
        }
        assert_eq!(
            sent("ExitPlanMode", json!({"plan": "p"})).arguments(),
            Some(&json!({"plan": "p"}))
        );
    }

    #[test]
    fn the_newest_end_sends_the_task_tools_legacy_names_unchanged() {
        for unchanged in ["KillShell", "KillBash", "BashOutput", "AgentOutputTool"] {
            assert_eq!(
                sent_as(ReadRules::NEWEST, unchanged, json!({})).name,
                unchanged
            );
        }
        for (legacy, current) in [("Task", "Agent"), ("RunWorkflow", "Workflow")] {
            assert_eq!(sent_as(ReadRules::NEWEST, legacy, json!({})).name, current);
        }
    }

    #[test]
    fn a_multi_edit_call_loses_its_single_edit_fields() {
        let multi = json!({"file_path": "f", "old_string": "a", "new_string": "b",
                           "replace_all": true, "edits": []});
        assert_eq!(
            sent("Edit", multi).arguments(),
            Some(&json!({"file_path": "f", "edits": []}))
        );
        let single = json!({"file_path": "f", "old_string": "a", "new_string": "b"});
        assert_eq!(sent("Edit", single.clone()).arguments(), Some(&single));
    }
}
