//! pi 0.73.1: a v3 session tree. pi resumes from the *last* entry in the file (its leaf) and
//! walks `parentId` up to the root, whatever the file order; a compaction on that path replaces
//! what lies before its `firstKeptEntryId` with its summary; an assistant message that stopped
//! with `error` / `aborted` is not sent; a tool call left without a result is answered by pi-ai's
//! `transformMessages` with "No result provided" (an error).

use std::path::PathBuf;

use handoff_live::differential::{generic, no_side_files, Case, Mutation, GENUINE};
use serde_json::{json, Value};

use super::{cases_of_samples, check, records, sample, to_bytes, Expect};

const PI_TWO: &str = "pi/2026-11-30T00-41-45-653Z_01a229e6-8fb3-71bc-b7eb-e70473137487.jsonl";
const PI_TWO_ID: &str = "01a229e6-8fb3-71bc-b7eb-e70473137487";
const PI_TOOL: &str = "pi/2026-11-30T00-41-56-911Z_01a229e6-bba6-74e0-b59d-5af60023ff26.jsonl";
const PI_TOOL_ID: &str = "01a229e6-bba6-74e0-b59d-5af60023ff26";

/// `<store>/sessions/--<cwd without its leading slash, / turned into ->--/<file name>`.
fn pi_place(file: &'static str) -> impl Fn(&str) -> PathBuf {
    move |cwd: &str| {
        let folder = format!("--{}--", cwd.trim_start_matches('/').replace('/', "-"));
        let name = file.rsplit('/').next().unwrap();
        PathBuf::from("sessions").join(folder).join(name)
    }
}

fn is_message(r: &Value, role: &str) -> bool {
    r["type"] == "message" && r["message"]["role"] == role
}

/// Indices of the entries that are messages of `role`.
fn messages(r: &[Value], role: &str) -> Vec<usize> {
    (0..r.len()).filter(|&i| is_message(&r[i], role)).collect()
}

/// A copy of a message entry under a new id, with a new parent and its text replaced.
fn fork(r: &Value, id: &str, parent: &Value, text: &str) -> Value {
    let mut copy = r.clone();
    copy["id"] = json!(id);
    copy["parentId"] = parent.clone();
    if let Some(blocks) = copy["message"]["content"].as_array_mut() {
        for b in blocks {
            if b["type"] == "text" {
                b["text"] = json!(text);
            }
        }
    }
    copy
}

/// The first user message and its answer swapped in file order (a child before its parent);
/// the last line, pi's leaf, stays last.
const CHILD_BEFORE_PARENT: Mutation = Mutation {
    name: "child-before-parent",
    apply: |b| {
        let mut r = records(b);
        let (user, answer) = (messages(&r, "user")[0], messages(&r, "assistant")[0]);
        r.swap(user, answer);
        to_bytes(&r)
    },
};

/// The last entry written again at the end (same id twice; the later wins, the leaf is the same).
const REPEAT_LAST: Mutation = Mutation {
    name: "repeat-last",
    apply: |b| {
        let mut r = records(b);
        r.push(r[r.len() - 1].clone());
        to_bytes(&r)
    },
};

/// The first answer written again at the end: pi's leaf is the last line, so it resumes from
/// the first answer and the second turn becomes an abandoned branch.
const REPEAT_FIRST_ANSWER_AT_END: Mutation = Mutation {
    name: "repeat-first-answer-at-end",
    apply: |b| {
        let mut r = records(b);
        let first = messages(&r, "assistant")[0];
        r.push(r[first].clone());
        to_bytes(&r)
    },
};

/// An abandoned branch before the live one: an earlier attempt at the second turn (same parent,
/// other ids and texts), then the genuine second turn.
const ABANDONED_BRANCH: Mutation = Mutation {
    name: "abandoned-branch",
    apply: |b| {
        let r = records(b);
        let (user2, asst2) = (messages(&r, "user")[1], messages(&r, "assistant")[1]);
        let u = fork(
            &r[user2],
            "aaaa0001",
            &r[user2]["parentId"],
            "an abandoned question",
        );
        let a = fork(&r[asst2], "aaaa0002", &u["id"], "an abandoned answer");
        let mut out = r.clone();
        out.insert(user2, a);
        out.insert(user2, u);
        to_bytes(&out)
    },
};

/// A resumed older branch: at the end, a turn that goes on from the first answer (the person
/// navigated the tree back past the second turn), with the `branch_summary` pi writes on
/// navigation.
const RESUMED_OLDER_BRANCH: Mutation = Mutation {
    name: "resumed-older-branch",
    apply: |b| {
        let r = records(b);
        let (asst1, user2, asst2) = (
            messages(&r, "assistant")[0],
            messages(&r, "user")[1],
            messages(&r, "assistant")[1],
        );
        let summary = json!({"type": "branch_summary", "id": "bbbb0000",
            "parentId": r[asst1]["id"], "timestamp": r[asst2]["timestamp"],
            "fromId": r[asst2]["id"], "summary": "The abandoned branch asked to continue."});
        let u = fork(&r[user2], "bbbb0001", &summary["id"], "a newer question");
        let a = fork(&r[asst2], "bbbb0002", &u["id"], "a newer answer");
        let mut out = r.clone();
        out.extend([summary, u, a]);
        to_bytes(&out)
    },
};

/// Entries of kinds pi does not send, and one no version of pi writes: a `label`, a
/// `session_info`, a `custom` (extension state), an unknown type, mid-path.
const UNKNOWN_KINDS: Mutation = Mutation {
    name: "unknown-kinds",
    apply: |b| {
        let r = records(b);
        let asst1 = messages(&r, "assistant")[0];
        let id = r[asst1]["id"].clone();
        let ts = r[asst1]["timestamp"].clone();
        let extra = [
            json!({"type": "label", "id": "cccc0001", "parentId": id, "timestamp": ts,
                "targetId": id, "label": "checkpoint"}),
            json!({"type": "session_info", "id": "cccc0002", "parentId": "cccc0001",
                "timestamp": ts, "name": "a named session"}),
            json!({"type": "custom", "id": "cccc0003", "parentId": "cccc0002", "timestamp": ts,
                "customType": "x-extension", "data": {"n": 1}}),
            json!({"type": "x-future-kind", "id": "cccc0004", "parentId": "cccc0003",
                "timestamp": ts, "data": {"n": 2}}),
        ];
        let mut out = r.clone();
        // The next entry now hangs below the new ones.
        out[asst1 + 1]["parentId"] = json!("cccc0004");
        for (k, e) in extra.into_iter().enumerate() {
            out.insert(asst1 + 1 + k, e);
        }
        to_bytes(&out)
    },
};

/// A compaction after the first turn, keeping the second turn (pi's own `/compact` writes it as
/// the newest entry, below the last one; then the session goes on).
const COMPACTION: Mutation = Mutation {
    name: "compaction",
    apply: |b| {
        let r = records(b);
        let (user2, asst2) = (messages(&r, "user")[1], messages(&r, "assistant")[1]);
        let compaction = json!({"type": "compaction", "id": "dddd0001",
            "parentId": r[asst2]["id"], "timestamp": r[asst2]["timestamp"],
            "summary": "The user said hi and asked to continue; the assistant said ok twice.",
            "firstKeptEntryId": r[user2]["id"], "tokensBefore": 42});
        let u = fork(
            &r[user2],
            "dddd0002",
            &compaction["id"],
            "after the compaction",
        );
        let a = fork(&r[asst2], "dddd0003", &u["id"], "ok after the compaction");
        let mut out = r.clone();
        out.extend([compaction, u, a]);
        to_bytes(&out)
    },
};

/// Two compactions: the one above, then a second after the new turn keeping only that turn (the
/// last compaction on the path governs; the first shows no more).
const TWO_COMPACTIONS: Mutation = Mutation {
    name: "two-compactions",
    apply: |b| {
        let r = records(&(COMPACTION.apply)(b));
        let last = r.len() - 1;
        let compaction = json!({"type": "compaction", "id": "dddd0021",
            "parentId": r[last]["id"], "timestamp": r[last]["timestamp"],
            "summary": "Everything up to the compaction, and after it, summarised again.",
            "firstKeptEntryId": "dddd0002", "tokensBefore": 84});
        let mut out = r.clone();
        out.push(compaction);
        to_bytes(&out)
    },
};

/// A compaction that keeps nothing before it (its `firstKeptEntryId` is the compaction's own
/// next entry's: none found before it), as the last entry.
const COMPACTION_KEEPS_NOTHING: Mutation = Mutation {
    name: "compaction-keeps-nothing",
    apply: |b| {
        let r = records(b);
        let last = r.len() - 1;
        let compaction = json!({"type": "compaction", "id": "dddd0011",
            "parentId": r[last]["id"], "timestamp": r[last]["timestamp"],
            "summary": "Everything so far, summarised.", "firstKeptEntryId": "dddd0011",
            "tokensBefore": 42});
        let mut out = r.clone();
        out.push(compaction);
        to_bytes(&out)
    },
};

/// The session ends on the assistant's tool call: its result and everything after are gone.
const INTERRUPTED_CALL: Mutation = Mutation {
    name: "interrupted-call",
    apply: |b| {
        let r = records(b);
        let result = messages(&r, "toolResult")[0];
        to_bytes(&r[..result])
    },
};

/// The tool call's result is gone, and the person typed on: a user message follows the call.
const INTERRUPTED_CALL_THEN_USER: Mutation = Mutation {
    name: "interrupted-call-then-user",
    apply: |b| {
        let r = records(b);
        let result = messages(&r, "toolResult")[0];
        let call = result - 1;
        let user = fork(
            &r[messages(&r, "user")[0]],
            "eeee0001",
            &r[call]["id"],
            "go on",
        );
        let mut out = r[..result].to_vec();
        out.push(user);
        to_bytes(&out)
    },
};

/// The person pressed Escape while the tool ran: pi writes the turn as an assistant message that
/// stopped with `aborted` (pi does not send it), after the unanswered call.
const ABORTED_AFTER_CALL: Mutation = Mutation {
    name: "aborted-after-call",
    apply: |b| {
        let r = records(b);
        let result = messages(&r, "toolResult")[0];
        let call = result - 1;
        let mut aborted = fork(&r[r.len() - 1], "eeee0002", &r[call]["id"], "");
        aborted["message"]["content"] = json!([]);
        aborted["message"]["stopReason"] = json!("aborted");
        aborted["message"]["errorMessage"] = json!("Request was aborted");
        let mut out = r[..result].to_vec();
        out.push(aborted);
        to_bytes(&out)
    },
};

pub(super) fn pi_cases<'a>(
    two: &'a [u8],
    tool: &'a [u8],
    two_place: &'a dyn Fn(&str) -> PathBuf,
    tool_place: &'a dyn Fn(&str) -> PathBuf,
) -> Vec<(Case<'a>, Expect)> {
    const TORN: &str = "a torn last line is what a killed writer leaves; pi skips a line it \
                        cannot parse, our reader names it rather than guess that nothing was lost";
    let on_two = [
        (GENUINE, Expect::Agree),
        (CHILD_BEFORE_PARENT, Expect::Agree),
        (generic::SWAP_LAST_TWO, Expect::Agree),
        (REPEAT_LAST, Expect::Agree),
        (REPEAT_FIRST_ANSWER_AT_END, Expect::Agree),
        (ABANDONED_BRANCH, Expect::Agree),
        (RESUMED_OLDER_BRANCH, Expect::Agree),
        (UNKNOWN_KINDS, Expect::Agree),
        (COMPACTION, Expect::Agree),
        (COMPACTION_KEEPS_NOTHING, Expect::Agree),
        (TWO_COMPACTIONS, Expect::Agree),
        (generic::TORN_LAST_LINE, Expect::DeliberateReaderFails(TORN)),
        (generic::BLANK_LINE, Expect::Agree),
        (generic::BOM, bom_expected()),
        (generic::CRLF, Expect::Agree),
    ];
    let on_tool = [
        (GENUINE, Expect::Agree),
        (INTERRUPTED_CALL, Expect::Agree),
        (INTERRUPTED_CALL_THEN_USER, Expect::Agree),
        (ABORTED_AFTER_CALL, Expect::Agree),
    ];
    cases_of_samples(
        "pi",
        &no_side_files,
        vec![
            ("two-turns", PI_TWO_ID, two, two_place, on_two.into()),
            ("tool-call", PI_TOOL_ID, tool, tool_place, on_tool.into()),
        ],
    )
}

/// A file that starts with a UTF-8 byte-order mark: pi 0.73.1 resumes it; pi 1.6.0 finds no
/// session (its header scan `JSON.parse`s the first line as it is, and the mark makes that no
/// JSON), so at the newest end the reader reading it is a deliberate superset.
fn bom_expected() -> Expect {
    match handoff_live::CliEnd::from_env() {
        handoff_live::CliEnd::Oldest => Expect::Agree,
        handoff_live::CliEnd::Newest | handoff_live::CliEnd::Candidate => {
            Expect::DeliberateCliFails(
                "pi 1.6.0 finds no session in a file that starts with a byte-order mark \
             (\"No session found matching\"); 0.73.1 resumes it, so the reader reads it",
            )
        }
    }
}

#[test]
fn pi_reader_agrees_with_pi() {
    let two = sample(PI_TWO);
    let tool = sample(PI_TOOL);
    let two_place = pi_place(PI_TWO);
    let tool_place = pi_place(PI_TOOL);
    check(
        &handoff_pi::PiPlugin,
        pi_cases(&two, &tool, &two_place, &tool_place),
    );
}
