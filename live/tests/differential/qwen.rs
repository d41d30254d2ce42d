//! Qwen Code 0.24.4: a `.jsonl` chat of records chained by `parentUuid`. On resume the CLI walks
//! the chain from the last conversation record (whatever the file order), joins the records of
//! one uuid (their parts in file order), skips records of unknown types, and builds the history
//! from the records' messages: a `chat_compression` with a `compressedHistory` replaces what came
//! before it, other system records add nothing.

use std::path::PathBuf;

use handoff_live::differential::{generic, no_side_files, Mutation, GENUINE};
use serde_json::{json, Value};

use super::{cases_of_samples, check, records, sample, to_bytes, Expect};

const QWEN_TWO: &str = "qwen-code/6ea846e1-9004-4260-a571-79a629de940e.jsonl";
const QWEN_TWO_ID: &str = "6ea846e1-9004-4260-a571-79a629de940e";
const QWEN_TOOL: &str = "qwen-code/7da3d710-5632-46df-bb43-bead8f22b422.jsonl";
const QWEN_TOOL_ID: &str = "7da3d710-5632-46df-bb43-bead8f22b422";
/// Two parallel shell calls, each result in a record of its own.
const QWEN_PARALLEL: &str = "qwen-code/b441854e-94e1-4402-911b-f15a48a9dbc2.jsonl";
const QWEN_PARALLEL_ID: &str = "b441854e-94e1-4402-911b-f15a48a9dbc2";
/// A shell call that failed (exit 3): its result is `response.error`.
const QWEN_FAILED: &str = "qwen-code/0ff9bdbd-357b-4e34-906a-79823671e09f.jsonl";
const QWEN_FAILED_ID: &str = "0ff9bdbd-357b-4e34-906a-79823671e09f";

/// `<store>/projects/<cwd, every character but ASCII letters and digits as '-'>/chats/<file>`.
fn qwen_place(file: &'static str) -> impl Fn(&str) -> PathBuf {
    move |cwd: &str| {
        let slug: String = cwd
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        let name = file.rsplit('/').next().unwrap();
        PathBuf::from("projects")
            .join(slug)
            .join("chats")
            .join(name)
    }
}

/// Indices of the records of `kind` (`user`, `assistant`, `tool_result`, `system`).
fn of_type(r: &[Value], kind: &str) -> Vec<usize> {
    (0..r.len()).filter(|&i| r[i]["type"] == kind).collect()
}

/// A copy of a record under a new uuid, with a new parent and its text parts replaced.
fn fork(r: &Value, uuid: &str, parent: &Value, text: &str) -> Value {
    let mut copy = r.clone();
    copy["uuid"] = json!(uuid);
    copy["parentUuid"] = parent.clone();
    if let Some(parts) = copy["message"]["parts"].as_array_mut() {
        for p in parts.iter_mut().filter(|p| p.get("text").is_some()) {
            p["text"] = json!(text);
        }
    }
    copy
}

/// The last answer written again at the end with another text: one uuid, two records, whose
/// parts the CLI joins.
const REPEAT_LAST_ANSWER: Mutation = Mutation {
    name: "repeat-last-answer",
    apply: |b| {
        let mut r = records(b);
        let last = *of_type(&r, "assistant").last().unwrap();
        let mut again = r[last].clone();
        again["message"]["parts"] = json!([{"text": " (and more)"}]);
        r.push(again);
        to_bytes(&r)
    },
};

/// The first answer written again at the end: the chain now ends there, and the second turn is
/// an abandoned branch.
const REPEAT_FIRST_ANSWER_AT_END: Mutation = Mutation {
    name: "repeat-first-answer-at-end",
    apply: |b| {
        let mut r = records(b);
        let first = of_type(&r, "assistant")[0];
        r.push(r[first].clone());
        to_bytes(&r)
    },
};

/// A newer branch at the end: a turn that goes on from the first answer (the person rewound
/// past the second turn).
const NEWER_BRANCH: Mutation = Mutation {
    name: "newer-branch",
    apply: |b| {
        let r = records(b);
        let answers = of_type(&r, "assistant");
        let users = of_type(&r, "user");
        let (first_answer, last_answer, second_user) =
            (answers[0], answers[answers.len() - 1], users[1]);
        let u = fork(
            &r[second_user],
            "bbbb0000-0000-4000-8000-000000000001",
            &r[first_answer]["uuid"],
            "a newer question",
        );
        let a = fork(
            &r[last_answer],
            "bbbb0000-0000-4000-8000-000000000002",
            &u["uuid"],
            "a newer answer",
        );
        let mut out = r.clone();
        out.extend([u, a]);
        to_bytes(&out)
    },
};

/// The whole file in reverse line order: the last conversation record is now the first user
/// prompt, so the CLI resumes a history of that one prompt.
const REVERSED: Mutation = Mutation {
    name: "reversed",
    apply: |b| {
        let mut r = records(b);
        r.reverse();
        to_bytes(&r)
    },
};

/// A compression before the second prompt, as `/compress` records it: its history (a summary
/// and the model's acknowledgement) replaces the first turn.
const COMPRESSION: Mutation = Mutation {
    name: "compression",
    apply: |b| {
        let mut r = records(b);
        let second_user = of_type(&r, "user")[1];
        let compression = json!({"uuid": "cccc0000-0000-4000-8000-000000000001",
            "parentUuid": r[second_user]["parentUuid"], "sessionId": r[0]["sessionId"],
            "timestamp": r[second_user]["timestamp"], "type": "system", "provenance": "system",
            "cwd": r[0]["cwd"], "version": "0.24.4", "subtype": "chat_compression",
            "systemPayload": {"info": {"originalTokenCount": 40, "newTokenCount": 10},
                "compressedHistory": [
                    {"role": "user", "parts": [{"text": "The user greeted; the assistant said ok."}]},
                    {"role": "model", "parts": [{"text": "Got it. Thanks for the additional context!"}]}]}});
        r[second_user]["parentUuid"] = compression["uuid"].clone();
        r.insert(second_user, compression);
        to_bytes(&r)
    },
};

/// A compression whose `compressedHistory` is no list, after the first prompt: the CLI resumes
/// nothing.
const BAD_COMPRESSION: Mutation = Mutation {
    name: "bad-compression",
    apply: |b| {
        let mut r = records(b);
        let first_user = of_type(&r, "user")[0];
        let payload = json!({"info": {"originalTokenCount": 40, "newTokenCount": 10},
            "compressedHistory": "not a list"});
        let bad = system_record(
            "cccc0000-0000-4000-8000-000000000002",
            "chat_compression",
            payload,
        );
        insert_on_chain(&mut r, first_user, bad);
        to_bytes(&r)
    },
};

/// The bad compression, then the good one above: the CLI goes on from the later one's history,
/// never looking at the first.
const BAD_THEN_GOOD_COMPRESSION: Mutation = Mutation {
    name: "bad-then-good-compression",
    apply: |b| (BAD_COMPRESSION.apply)(&(COMPRESSION.apply)(b)),
};

/// Records Qwen Code skips: an unknown type and a record without a session id, off the chain at
/// the end; a system record of an unknown subtype on the chain, mid-path.
const UNKNOWN_KINDS: Mutation = Mutation {
    name: "unknown-kinds",
    apply: |b| {
        let mut r = records(b);
        let first_answer = of_type(&r, "assistant")[0];
        let mut unknown = r[first_answer].clone();
        unknown["uuid"] = json!("dddd0000-0000-4000-8000-000000000001");
        unknown["type"] = json!("system");
        unknown["parentUuid"] = r[first_answer]["uuid"].clone();
        unknown["subtype"] = json!("x-future-subtype");
        unknown.as_object_mut().unwrap().remove("message");
        r[first_answer + 1]["parentUuid"] = unknown["uuid"].clone();
        r.insert(first_answer + 1, unknown);
        r.push(
            json!({"uuid": "dddd0000-0000-4000-8000-000000000002", "parentUuid": null,
            "sessionId": r[0]["sessionId"], "type": "x-future-kind", "data": {"n": 1}}),
        );
        r.push(
            json!({"uuid": "dddd0000-0000-4000-8000-000000000003", "type": "user",
            "message": {"role": "user", "parts": [{"text": "no session id"}]}}),
        );
        to_bytes(&r)
    },
};

/// An interrupted turn: the file ends on the call (the CLI answers it with a failed result of its
/// own on resume).
const INTERRUPTED_CALL: Mutation = Mutation {
    name: "interrupted-call",
    apply: |b| {
        let mut r = records(b);
        let call = of_type(&r, "assistant")[0];
        r.truncate(call + 1);
        to_bytes(&r)
    },
};

/// A user message between the call and its result (typed while the tool ran): the CLI moves the
/// result up, before that message.
const RESULT_AFTER_A_MESSAGE: Mutation = Mutation {
    name: "result-after-a-message",
    apply: |b| {
        let mut r = records(b);
        let call = of_type(&r, "assistant")[0];
        let result = of_type(&r, "tool_result")[0];
        let message = fork(
            &r[0],
            "ffff0000-0000-4000-8000-000000000001",
            &r[call]["uuid"],
            "meanwhile, a question",
        );
        r[call + 1]["parentUuid"] = message["uuid"].clone();
        r.insert(result, message);
        to_bytes(&r)
    },
};

/// A record of another session in the middle: the CLI refuses the file.
const TWO_SESSIONS: Mutation = Mutation {
    name: "two-sessions",
    apply: |b| {
        let mut r = records(b);
        let at = r.len() / 2;
        r[at]["sessionId"] = json!("eeee0000-0000-4000-8000-000000000001");
        to_bytes(&r)
    },
};

/// Why a torn last line is refused.
const TORN: &str = "a torn last line is what a killed writer leaves; Qwen Code skips a line it \
                    cannot parse, our reader names it rather than guess that nothing was lost";

/// The second result of a parallel turn dropped (the CLI answers that call with its failed "not
/// recorded" result).
const SECOND_RESULT_LOST: Mutation = Mutation {
    name: "second-result-lost",
    apply: |b| {
        let mut r = records(b);
        let results = of_type(&r, "tool_result");
        let second = results[1];
        let after = r[second]["uuid"].clone();
        let parent = r[second]["parentUuid"].clone();
        r.remove(second);
        for x in r.iter_mut().filter(|x| x["parentUuid"] == after) {
            x["parentUuid"] = parent.clone();
        }
        to_bytes(&r)
    },
};

/// A system record of `subtype`, as Qwen Code 0.24.4 writes it, for [`insert_on_chain`].
fn system_record(uuid: &str, subtype: &str, payload: Value) -> Value {
    json!({"uuid": uuid, "type": "system", "provenance": "system", "version": "0.24.4",
        "subtype": subtype, "systemPayload": payload})
}

/// `record` put on the chain right after record `at`: the record that followed it follows
/// `record` now.
fn insert_on_chain(r: &mut Vec<Value>, at: usize, mut record: Value) {
    let uuid = r[at]["uuid"].clone();
    for x in r.iter_mut().filter(|x| x["parentUuid"] == uuid) {
        x["parentUuid"] = record["uuid"].clone();
    }
    record["parentUuid"] = uuid;
    record["sessionId"] = r[0]["sessionId"].clone();
    record["timestamp"] = r[at]["timestamp"].clone();
    record["cwd"] = r[0]["cwd"].clone();
    r.insert(at + 1, record);
}

/// A slash command typed after the first answer, its result only shown: the prompt is recorded
/// as a user record, then the command's result, and the CLI takes the prompt back out of the
/// history it sends (no model turn answered it).
const SLASH_COMMAND_SHOWN: Mutation = Mutation {
    name: "slash-command-shown",
    apply: |b| {
        let mut r = records(b);
        let first_answer = of_type(&r, "assistant")[0];
        let typed = json!({"uuid": "abab0000-0000-4000-8000-000000000001", "type": "user",
            "provenance": "real_user", "version": "0.24.4",
            "message": {"role": "user", "parts": [{"text": "/stats"}]}});
        insert_on_chain(&mut r, first_answer, typed);
        let payload = json!({"phase": "result", "rawCommand": "/stats",
            "outputHistoryItems": [{"type": "assistant", "text": "shown, not sent"}]});
        let result = system_record(
            "abab0000-0000-4000-8000-000000000003",
            "slash_command",
            payload,
        );
        insert_on_chain(&mut r, first_answer + 1, result);
        to_bytes(&r)
    },
};

/// A message typed while the tool ran, recorded as a mid-turn message after the result: the CLI
/// joins its parts to the result's content.
const MID_TURN_MESSAGE: Mutation = Mutation {
    name: "mid-turn-message",
    apply: |b| {
        let mut r = records(b);
        let result = of_type(&r, "tool_result")[0];
        let message = json!({"uuid": "abab0000-0000-4000-8000-000000000002", "type": "user",
            "provenance": "real_user", "version": "0.24.4", "subtype": "mid_turn_user_message",
            "message": {"role": "user", "parts": [{"text": "also, say hello"}]}});
        insert_on_chain(&mut r, result, message);
        to_bytes(&r)
    },
};

/// A genuine sample's bytes and where the CLI finds it.
type Placed<'a> = (&'a [u8], &'a dyn Fn(&str) -> PathBuf);

/// The genuine samples of Qwen Code, by name.
struct Samples<'a> {
    two: Placed<'a>,
    tool: Placed<'a>,
    parallel: Placed<'a>,
    failed: Placed<'a>,
}

fn qwen_cases<'a>(s: &Samples<'a>) -> Vec<(super::Case<'a>, Expect)> {
    let on_two = [
        (GENUINE, Expect::Agree),
        (generic::SWAP_LAST_TWO, Expect::Agree),
        (REPEAT_LAST_ANSWER, Expect::Agree),
        (REPEAT_FIRST_ANSWER_AT_END, Expect::Agree),
        (NEWER_BRANCH, Expect::Agree),
        (REVERSED, Expect::Agree),
        (COMPRESSION, Expect::Agree),
        (BAD_THEN_GOOD_COMPRESSION, Expect::Agree),
        (BAD_COMPRESSION, Expect::BothFail),
        (UNKNOWN_KINDS, Expect::Agree),
        (SLASH_COMMAND_SHOWN, Expect::Agree),
        (TWO_SESSIONS, Expect::BothFail),
        (generic::BLANK_LINE, Expect::Agree),
        (generic::CRLF, Expect::Agree),
        (generic::TORN_LAST_LINE, Expect::DeliberateReaderFails(TORN)),
        (generic::BOM, Expect::Agree),
    ];
    let on_tool = [
        (GENUINE, Expect::Agree),
        (generic::SWAP_LAST_TWO, Expect::Agree),
        (REPEAT_LAST_ANSWER, Expect::Agree),
        (UNKNOWN_KINDS, Expect::Agree),
        (INTERRUPTED_CALL, Expect::Agree),
        (RESULT_AFTER_A_MESSAGE, Expect::Agree),
        (MID_TURN_MESSAGE, Expect::Agree),
    ];
    let on_parallel = [
        (GENUINE, Expect::Agree),
        (generic::SWAP_LAST_TWO, Expect::Agree),
        (SECOND_RESULT_LOST, Expect::Agree),
    ];
    let on_failed = [(GENUINE, Expect::Agree)];
    cases_of_samples(
        "qwen-code",
        &no_side_files,
        vec![
            ("two-turns", QWEN_TWO_ID, s.two.0, s.two.1, on_two.into()),
            (
                "tool-call",
                QWEN_TOOL_ID,
                s.tool.0,
                s.tool.1,
                on_tool.into(),
            ),
            (
                "parallel-calls",
                QWEN_PARALLEL_ID,
                s.parallel.0,
                s.parallel.1,
                on_parallel.into(),
            ),
            (
                "failed-call",
                QWEN_FAILED_ID,
                s.failed.0,
                s.failed.1,
                on_failed.into(),
            ),
        ],
    )
}

#[test]
fn qwen_code_reader_agrees_with_qwen_code() {
    let (two, tool) = (sample(QWEN_TWO), sample(QWEN_TOOL));
    let (parallel, failed) = (sample(QWEN_PARALLEL), sample(QWEN_FAILED));
    let (two_place, tool_place) = (qwen_place(QWEN_TWO), qwen_place(QWEN_TOOL));
    let (parallel_place, failed_place) = (qwen_place(QWEN_PARALLEL), qwen_place(QWEN_FAILED));
    let samples = Samples {
        two: (&two, &two_place),
        tool: (&tool, &tool_place),
        parallel: (&parallel, &parallel_place),
        failed: (&failed, &failed_place),
    };
    check(&handoff_qwen::QwenPlugin, qwen_cases(&samples));
}
