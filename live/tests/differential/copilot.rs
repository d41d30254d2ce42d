//! GitHub Copilot CLI 1.0.102: an event log per session (`session-state/<id>/events.jsonl`).
//! On resume the CLI sends `user.message` (its `transformedContent`), `assistant.message` (text
//! and tool calls) and `tool.execution_complete` (in the order of the calls; a call without one
//! gets the CLI's "interrupted" text); a successful `session.compaction_complete` replaces what
//! came before it with a message of its own; every other event is not sent.

use std::path::PathBuf;

use handoff_live::differential::{generic, no_side_files, Case, Mutation, GENUINE};
use serde_json::{json, Value};

use super::{cases_of_samples, check, records, sample, to_bytes, Expect};

const TWO: &str = "copilot-cli/two-turns-28848013-0da2-4f34-839e-dd3f174bb83d.jsonl";
const TWO_ID: &str = "28848013-0da2-4f34-839e-dd3f174bb83d";
const TOOL: &str = "copilot-cli/tool-call-47b96759-ac88-45c7-9a85-535ffc1687d5.jsonl";
const TOOL_ID: &str = "47b96759-ac88-45c7-9a85-535ffc1687d5";

/// `<store>/session-state/<id>/events.jsonl`, whatever the cwd.
fn copilot_place(id: &'static str) -> impl Fn(&str) -> PathBuf {
    move |_cwd: &str| PathBuf::from("session-state").join(id).join("events.jsonl")
}

/// Indices of the events of `kind`.
fn of(r: &[Value], kind: &str) -> Vec<usize> {
    (0..r.len()).filter(|&i| r[i]["type"] == kind).collect()
}

/// An event of `kind` with `data`, after `parent` (taking its timestamp).
fn event(kind: &str, id: &str, parent: &Value, data: Value) -> Value {
    json!({"type": kind, "data": data, "id": id, "timestamp": parent["timestamp"],
        "parentId": parent["id"]})
}

/// A successful compaction before the second user message: the CLI sends its own message (the
/// user messages before it and the summary) in place of the first turn.
const COMPACTION: Mutation = Mutation {
    name: "compaction",
    apply: |b| {
        let mut r = records(b);
        let second = of(&r, "user.message")[1];
        let before = r[second - 1].clone();
        let start = event(
            "session.compaction_start",
            "d0000000-0000-4000-8000-000000000001",
            &before,
            json!({}),
        );
        let complete = event(
            "session.compaction_complete",
            "d0000000-0000-4000-8000-000000000002",
            &start,
            json!({"success": true, "summaryContent": "The user said hi; the assistant said ok."}),
        );
        r.insert(second, complete);
        r.insert(second, start);
        to_bytes(&r)
    },
};

/// The compaction above, then a second one at the end: only the last is sent, naming every user
/// message before it (those before the first compaction too).
const TWO_COMPACTIONS: Mutation = Mutation {
    name: "two-compactions",
    apply: |b| {
        let mut r = records(&(COMPACTION.apply)(b));
        let last = r[r.len() - 1].clone();
        r.push(event(
            "session.compaction_complete",
            "d0000000-0000-4000-8000-000000000004",
            &last,
            json!({"success": true, "summaryContent": "Everything, summarised again."}),
        ));
        to_bytes(&r)
    },
};

/// A compaction that failed: nothing is replaced.
const FAILED_COMPACTION: Mutation = Mutation {
    name: "failed-compaction",
    apply: |b| {
        let mut r = records(b);
        let second = of(&r, "user.message")[1];
        let complete = event(
            "session.compaction_complete",
            "d0000000-0000-4000-8000-000000000003",
            &r[second - 1],
            json!({"success": false, "error": "the model refused"}),
        );
        r.insert(second, complete);
        to_bytes(&r)
    },
};

/// Records the CLI writes and never sends, mid-log: a rewind (the CLI removes the rewound events
/// from the log itself; the record only reports it), a truncation report, an unknown kind.
const UNSENT_RECORDS: Mutation = Mutation {
    name: "unsent-records",
    apply: |b| {
        let mut r = records(b);
        let second = of(&r, "user.message")[1];
        let at = r[second - 1].clone();
        let extra = [
            event(
                "session.snapshot_rewind",
                "e0000000-0000-4000-8000-000000000001",
                &at,
                json!({"upToEventId": r[second]["id"], "eventsRemoved": 3}),
            ),
            event(
                "session.truncation",
                "e0000000-0000-4000-8000-000000000002",
                &at,
                json!({"tokenLimit": 100, "preTruncationTokensInMessages": 10,
                    "preTruncationMessagesLength": 2, "postTruncationTokensInMessages": 10,
                    "postTruncationMessagesLength": 2, "tokensRemovedDuringTruncation": 0,
                    "messagesRemovedDuringTruncation": 0, "performedBy": "BasicTruncator"}),
            ),
            event(
                "x.future_kind",
                "e0000000-0000-4000-8000-000000000003",
                &at,
                json!({"n": 1}),
            ),
        ];
        for (k, e) in extra.into_iter().enumerate() {
            r.insert(second + k, e);
        }
        to_bytes(&r)
    },
};

/// A sub-agent's own turn mid-log (`agentId`, and `parentToolCallId` naming the call that
/// started it), as the `task` tool writes one: not the session's conversation.
const SUB_AGENT_TURN: Mutation = Mutation {
    name: "sub-agent-turn",
    apply: |b| {
        let mut r = records(b);
        let second = of(&r, "user.message")[1];
        let at = r[second - 1].clone();
        let mut user = event(
            "user.message",
            "f0000000-0000-4000-8000-000000000001",
            &at,
            json!({"content": "a sub-agent's task"}),
        );
        user["agentId"] = json!("sub-agent-1");
        let mut answer = event(
            "assistant.message",
            "f0000000-0000-4000-8000-000000000002",
            &user,
            json!({"messageId": "f1", "content": "the sub-agent's answer",
                "parentToolCallId": "call_task_1"}),
        );
        answer["agentId"] = json!("sub-agent-1");
        r.insert(second, answer);
        r.insert(second, user);
        to_bytes(&r)
    },
};

/// The two results written in the other order (the second call finished first): the CLI sends
/// them in the order of the calls.
const RESULTS_REVERSED: Mutation = Mutation {
    name: "results-reversed",
    apply: |b| {
        let mut r = records(b);
        let results = of(&r, "tool.execution_complete");
        r.swap(results[0], results[1]);
        to_bytes(&r)
    },
};

/// The second call failed (`success: false`, `error.message`).
const FAILED_RESULT: Mutation = Mutation {
    name: "failed-result",
    apply: |b| {
        let mut r = records(b);
        let second = of(&r, "tool.execution_complete")[1];
        let data = r[second]["data"].as_object_mut().unwrap();
        data.remove("result");
        data.insert("success".into(), json!(false));
        data.insert(
            "error".into(),
            json!({"message": "Command failed with exit code 3", "code": "failure"}),
        );
        to_bytes(&r)
    },
};

/// The log ends on the assistant's tool calls: their results and everything after are gone.
const INTERRUPTED_AT_END: Mutation = Mutation {
    name: "interrupted-at-end",
    apply: |b| {
        let r = records(b);
        let calls = of(&r, "assistant.message")[0];
        to_bytes(&r[..=calls])
    },
};

/// The first result is gone and the session went on: the CLI answers the call with its
/// "interrupted" text before the next turn.
const INTERRUPTED_THEN_ANSWER: Mutation = Mutation {
    name: "interrupted-then-answer",
    apply: |b| {
        let mut r = records(b);
        let first = of(&r, "tool.execution_complete")[0];
        r.remove(first);
        to_bytes(&r)
    },
};

pub(super) fn copilot_cases<'a>(
    two: &'a [u8],
    tool: &'a [u8],
    two_place: &'a dyn Fn(&str) -> PathBuf,
    tool_place: &'a dyn Fn(&str) -> PathBuf,
) -> Vec<(Case<'a>, Expect)> {
    const TORN: &str = "a torn last line is what a killed writer leaves; the CLI skips a line it \
                        cannot parse, our reader names it rather than guess that nothing was lost";
    let on_two = [
        (GENUINE, Expect::Agree),
        (COMPACTION, Expect::Agree),
        (TWO_COMPACTIONS, Expect::Agree),
        (FAILED_COMPACTION, Expect::Agree),
        (UNSENT_RECORDS, Expect::Agree),
        (SUB_AGENT_TURN, Expect::Agree),
        (generic::BLANK_LINE, Expect::Agree),
        (generic::CRLF, Expect::Agree),
        (generic::BOM, Expect::Agree),
        (generic::TORN_LAST_LINE, Expect::DeliberateReaderFails(TORN)),
        (generic::SWAP_LAST_TWO, Expect::Agree),
    ];
    let on_tool = [
        (GENUINE, Expect::Agree),
        (RESULTS_REVERSED, Expect::Agree),
        (FAILED_RESULT, Expect::Agree),
        (INTERRUPTED_AT_END, Expect::Agree),
        (INTERRUPTED_THEN_ANSWER, Expect::Agree),
    ];
    cases_of_samples(
        "copilot-cli",
        &no_side_files,
        vec![
            ("two-turns", TWO_ID, two, two_place, on_two.into()),
            ("tool-call", TOOL_ID, tool, tool_place, on_tool.into()),
        ],
    )
}

#[test]
fn copilot_reader_agrees_with_copilot_cli() {
    let two = sample(TWO);
    let tool = sample(TOOL);
    let two_place = copilot_place(TWO_ID);
    let tool_place = copilot_place(TOOL_ID);
    check(
        &handoff_copilot::CopilotPlugin,
        copilot_cases(&two, &tool, &two_place, &tool_place),
    );
}
