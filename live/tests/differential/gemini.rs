//! Gemini CLI 0.61.0: a `.jsonl` chat of records. Messages keep their first position when a
//! record with the same id replaces them; `{"$rewindTo": id}` drops that message and every later
//! one (all of them when the id is unknown); `{"$set": {"messages": …}}` replaces them all; lines
//! that do not parse are skipped. The CLI compresses history in memory only: a chat file holds
//! no compaction of its own.

use std::path::PathBuf;

use handoff_host::ReadFrom;
use handoff_live::differential::{generic, Case, Mutation, SideFile, GENUINE};
use serde_json::{json, Value};

use super::{cases_of_samples, check, records, sample, to_bytes, Expect};

const GEMINI_TWO: &str = "gemini-cli/session-2026-11-30T00-41-c903aa87.jsonl";
const GEMINI_TWO_ID: &str = "c903aa87-fdf1-4d9e-b67f-47f65da5078b";
const GEMINI_TOOL: &str = "gemini-cli/session-2026-11-30T00-42-d0a744dc.jsonl";
const GEMINI_TOOL_ID: &str = "d0a744dc-84a3-4432-8003-1b841eb843d3";

/// The project's short id: the scene's project folder is named `proj`.
const SHORT_ID: &str = "proj";

fn gemini_place(file: &'static str) -> impl Fn(&str) -> PathBuf {
    move |_cwd: &str| {
        let name = file.rsplit('/').next().unwrap();
        PathBuf::from("tmp").join(SHORT_ID).join("chats").join(name)
    }
}

/// The project registry and the project folders' ownership markers, as the CLI leaves them.
fn gemini_side_files(cwd: &str) -> Vec<SideFile> {
    let registry = json!({"projects": {cwd: SHORT_ID}});
    vec![
        (
            PathBuf::from("projects.json"),
            serde_json::to_vec_pretty(&registry).unwrap(),
        ),
        (
            PathBuf::from("tmp").join(SHORT_ID).join(".project_root"),
            cwd.as_bytes().to_vec(),
        ),
        (
            PathBuf::from("history")
                .join(SHORT_ID)
                .join(".project_root"),
            cwd.as_bytes().to_vec(),
        ),
    ]
}

fn is_message(r: &Value, kind: &str) -> bool {
    r["id"].is_string() && r["type"] == kind
}

/// Indices of the message records of `kind` (`user` / `gemini`), in file order.
fn messages(r: &[Value], kind: &str) -> Vec<usize> {
    (0..r.len()).filter(|&i| is_message(&r[i], kind)).collect()
}

/// A copy of a message record under a new id, its text replaced.
fn fork(r: &Value, id: &str, text: &str) -> Value {
    let mut copy = r.clone();
    copy["id"] = json!(id);
    copy["content"] = match &r["content"] {
        Value::String(_) => json!(text),
        _ => json!([{ "text": text }]),
    };
    copy
}

/// The last two message records swapped in file order (the CLI keeps file order).
const SWAP_LAST_TWO_MESSAGES: Mutation = Mutation {
    name: "swap-last-two-messages",
    apply: |b| {
        let mut r = records(b);
        let at: Vec<usize> = (0..r.len()).filter(|&i| r[i]["id"].is_string()).collect();
        r.swap(at[at.len() - 2], at[at.len() - 1]);
        to_bytes(&r)
    },
};

/// The first answer written again at the end: it replaces the first, in the first's place.
const REPEAT_FIRST_ANSWER_AT_END: Mutation = Mutation {
    name: "repeat-first-answer-at-end",
    apply: |b| {
        let mut r = records(b);
        let first = messages(&r, "gemini")[0];
        let mut again = r[first].clone();
        again["content"] = json!("ok, said again");
        r.push(again);
        to_bytes(&r)
    },
};

/// An earlier version of the first answer that no reader could parse as a message (a number for
/// its content and timestamp) before the version the file ends with: the CLI sends only the
/// live version, and a read must not stop at one it never sends.
const MALFORMED_SUPERSEDED: Mutation = Mutation {
    name: "malformed-superseded-version",
    apply: |b| {
        let mut r = records(b);
        let first = messages(&r, "gemini")[0];
        let mut earlier = r[first].clone();
        earlier["content"] = json!(5);
        earlier["timestamp"] = json!(5);
        r.insert(first, earlier);
        to_bytes(&r)
    },
};

/// A rewind to the second user message (the person went back), then a new second turn.
const REWIND: Mutation = Mutation {
    name: "rewind",
    apply: |b| {
        let r = records(b);
        let user2 = *messages(&r, "user").last().unwrap();
        let answer = *messages(&r, "gemini").last().unwrap();
        let mut out = r.clone();
        out.push(json!({"$rewindTo": r[user2]["id"]}));
        out.push(fork(&r[user2], "rewound-user", "a newer question"));
        out.push(fork(&r[answer], "rewound-answer", "a newer answer"));
        to_bytes(&out)
    },
};

/// A rewind to an id the file does not hold: the CLI drops every message before it.
const REWIND_TO_UNKNOWN: Mutation = Mutation {
    name: "rewind-to-unknown",
    apply: |b| {
        let r = records(b);
        let user2 = *messages(&r, "user").last().unwrap();
        let answer = *messages(&r, "gemini").last().unwrap();
        let mut out = r.clone();
        out.push(json!({"$rewindTo": "no-such-message"}));
        out.push(fork(&r[user2], "after-user", "a question after the rewind"));
        out.push(fork(
            &r[answer],
            "after-answer",
            "an answer after the rewind",
        ));
        to_bytes(&out)
    },
};

/// A `$set` checkpoint of the messages that holds only the last turn (the messages are replaced
/// by it, as after the CLI's own checkpoints).
const SET_MESSAGES: Mutation = Mutation {
    name: "set-messages",
    apply: |b| {
        let r = records(b);
        let user2 = *messages(&r, "user").last().unwrap();
        let answer = *messages(&r, "gemini").last().unwrap();
        let mut out = r.clone();
        out.push(json!({"$set": {"messages": [r[user2], r[answer]],
            "lastUpdated": r[answer]["timestamp"]}}));
        to_bytes(&out)
    },
};

/// Records the CLI does not send or does not know: `info` / `error` / `warning` messages, a
/// message of an unknown type, a line of unknown shape, a `$set` of an unknown member.
const UNKNOWN_KINDS: Mutation = Mutation {
    name: "unknown-kinds",
    apply: |b| {
        let mut r = records(b);
        let ts = r[messages(&r, "user")[0]]["timestamp"].clone();
        let at = r.len() / 2;
        let extra = [
            json!({"id": "info-1", "timestamp": ts, "type": "info", "content": "an info"}),
            json!({"id": "error-1", "timestamp": ts, "type": "error", "content": "an error"}),
            json!({"id": "warn-1", "timestamp": ts, "type": "warning", "content": "a warning"}),
            json!({"id": "future-1", "timestamp": ts, "type": "x-future", "content": "?"}),
            json!({"x-future-record": {"n": 1}}),
            json!({"$set": {"x-future-member": 1}}),
        ];
        for (k, e) in extra.into_iter().enumerate() {
            r.insert(at + k, e);
        }
        to_bytes(&r)
    },
};

/// The session ends while the tool runs: the model's record carries the call with no result,
/// and neither the response record nor anything after it was written.
const INTERRUPTED_CALL: Mutation = Mutation {
    name: "interrupted-call",
    apply: |b| {
        let r = records(b);
        let call = r
            .iter()
            .position(|x| x["toolCalls"].is_array())
            .expect("a record with tool calls");
        let mut out = r[..=call].to_vec();
        for c in out[call]["toolCalls"].as_array_mut().unwrap() {
            let c = c.as_object_mut().unwrap();
            c.remove("result");
            c.remove("resultDisplay");
            c.insert("status".into(), json!("executing"));
        }
        to_bytes(&out)
    },
};

/// Thought summaries on every answer (`thoughts`, as Gemini CLI ≤ 0.3x wrote them): the CLI turns
/// them into thought parts and strips those before it sends the history.
const LEGACY_THOUGHTS: Mutation = Mutation {
    name: "legacy-thoughts",
    apply: |b| {
        let mut r = records(b);
        for i in messages(&r, "gemini") {
            r[i]["thoughts"] = json!([
                {"subject": "Reading the question", "description": "It asks for one word.",
                 "timestamp": r[i]["timestamp"].clone()},
                {"subject": "", "description": "Answer briefly."}
            ]);
        }
        to_bytes(&r)
    },
};

/// The first answer in the modern form: a thought part with its signature, then the text, which
/// carries a signature of its own.
const THOUGHT_PARTS: Mutation = Mutation {
    name: "thought-parts",
    apply: |b| {
        let mut r = records(b);
        let first = messages(&r, "gemini")[0];
        let text = match &r[first]["content"] {
            Value::String(t) => t.clone(),
            other => other[0]["text"].as_str().unwrap().to_owned(),
        };
        r[first]["content"] = json!([
            {"text": "**Thinking** about the answer", "thought": true, "thoughtSignature": "c2lnLTE="},
            {"text": text, "thoughtSignature": "c2lnLTI="}
        ]);
        to_bytes(&r)
    },
};

pub(super) fn gemini_cases<'a>(
    two: &'a [u8],
    tool: &'a [u8],
    two_place: &'a dyn Fn(&str) -> PathBuf,
    tool_place: &'a dyn Fn(&str) -> PathBuf,
) -> Vec<(Case<'a>, Expect)> {
    const DOUBLE_RESULT: &str = "Gemini CLI 0.61.0 sends a tool result twice (from the call \
                                 record's toolCalls[].result and from the functionResponse user \
                                 record it also writes), which the Gemini API refuses (G2); our \
                                 reader reads the one result";
    const UNANSWERED: &str = "Gemini CLI sends an unanswered call as it is, which the Gemini API \
                              refuses (G2); our reader reads the same history";
    const TORN: &str = "a torn last line is what a killed writer leaves; Gemini CLI skips a \
                        line it cannot parse, our reader names it rather than guess that nothing \
                        was lost";
    let on_two = [
        (GENUINE, Expect::Agree),
        (SWAP_LAST_TWO_MESSAGES, Expect::Agree),
        (REPEAT_FIRST_ANSWER_AT_END, Expect::Agree),
        (MALFORMED_SUPERSEDED, Expect::Agree),
        (REWIND, Expect::Agree),
        (REWIND_TO_UNKNOWN, Expect::Agree),
        (SET_MESSAGES, Expect::Agree),
        (UNKNOWN_KINDS, Expect::Agree),
        (generic::TORN_LAST_LINE, Expect::DeliberateReaderFails(TORN)),
        (generic::BLANK_LINE, Expect::Agree),
        (generic::BOM, Expect::BothFail),
        (generic::CRLF, Expect::Agree),
        (LEGACY_THOUGHTS, Expect::Agree),
        (THOUGHT_PARTS, Expect::Agree),
    ];
    let refused = |same, why| Expect::ProviderRefuses { same, why };
    let on_tool = [
        (GENUINE, refused(false, DOUBLE_RESULT)),
        (SWAP_LAST_TWO_MESSAGES, refused(false, DOUBLE_RESULT)),
        (INTERRUPTED_CALL, refused(true, UNANSWERED)),
        (generic::SWAP_LAST_TWO, refused(false, DOUBLE_RESULT)),
    ];
    cases_of_samples(
        "gemini-cli",
        &gemini_side_files,
        vec![
            ("two-turns", GEMINI_TWO_ID, two, two_place, on_two.into()),
            (
                "tool-call",
                GEMINI_TOOL_ID,
                tool,
                tool_place,
                on_tool.into(),
            ),
        ],
    )
}

#[test]
fn gemini_cli_reader_agrees_with_gemini_cli() {
    let two = sample(GEMINI_TWO);
    let tool = sample(GEMINI_TOOL);
    let two_place = gemini_place(GEMINI_TWO);
    let tool_place = gemini_place(GEMINI_TOOL);
    check(
        &handoff_gemini::GeminiPlugin,
        gemini_cases(&two, &tool, &two_place, &tool_place),
    );
}

/// Gemini CLI's second file for one session (issue 27): a `--resume` in a later minute leaves a
/// stub `session-<that minute>-<first 8 of the id>.jsonl` beside the chat (metadata and its
/// `<session_context>` only) and records into the old file. A handoff append after that must go
/// where the CLI looks next: the plugin resolves the id to the old file, not the stub, appends
/// there, and the real CLI, with the stub beside it, resumes the appended conversation. (Measured
/// too, by hand: with the stub's `lastUpdated` after the append's, 0.61.0 still resumes the chat.)
#[test]
fn an_append_beside_the_cli_resume_stub_is_what_gemini_cli_resumes() {
    use handoff_host::{Body, ById, CreateOptions, Event, Part, Plugin, StoreRoot, Timestamp};
    let plugin = handoff_gemini::GeminiPlugin;
    let scratch = tempfile::tempdir().unwrap();
    let genuine = scratch.path().join("genuine.jsonl");
    std::fs::write(&genuine, sample(GEMINI_TWO)).unwrap();
    let mut transcript = plugin
        .reader()
        .read(ReadFrom::File("gemini-cli", &genuine))
        .unwrap();
    transcript.cwd = Some(super::RECORDED_CWD.into());
    let root = StoreRoot::new(scratch.path().join(".gemini")).unwrap();
    let session = plugin
        .writer()
        .create(
            &root,
            "gemini-cli",
            &transcript,
            &CreateOptions {
                cwd: Some(super::RECORDED_CWD.into()),
                locator: None,
            },
        )
        .unwrap();
    // The CLI's stub of a later resume, as 0.61.0 writes it, older than the append below.
    let meta: Value = serde_json::from_str(
        std::fs::read_to_string(&session.path)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    let stub_name = format!("session-2026-11-30T23-59-{}.jsonl", &session.id[..8]);
    let stub = format!(
        "{}\n{}\n",
        json!({"sessionId": session.id, "projectHash": meta["projectHash"],
               "startTime": "2026-11-30T23:59:00.000Z", "lastUpdated": "2026-11-30T23:59:00.000Z",
               "kind": "main"}),
        json!({"$set": {"messages": [{"id": "ctx", "timestamp": "2026-11-30T23:59:00.000Z",
               "type": "user", "content": [{"text": "<session_context>\n</session_context>"}]}]}})
    );
    let chats = session.path.parent().unwrap();
    std::fs::write(chats.join(&stub_name), &stub).unwrap();
    let later = |id: &str, ms: i64, body| Event::new(id, Timestamp::from_millis(ms), body);
    let appended = plugin
        .append_id(
            &root,
            "gemini-cli",
            &session.id,
            &[
                later(
                    "added-user",
                    1_764_600_000_000,
                    Body::User {
                        content: vec![Part::text("One more thing: the appended turn.")],
                    },
                ),
                later(
                    "added-answer",
                    1_764_600_001_000,
                    Body::assistant(vec![handoff_host::AssistantPart::text("Noted.")]),
                ),
            ],
        )
        .unwrap();
    assert_eq!(
        appended.path, session.path,
        "the append goes to the chat, not the stub"
    );
    assert_eq!(
        std::fs::read_to_string(chats.join(&stub_name)).unwrap(),
        stub,
        "the stub is the CLI's: untouched"
    );
    // The real CLI resumes the id with the stub beside the chat: it must send the appended turn.
    let bytes = std::fs::read(&session.path).unwrap();
    let name = session.path.file_name().unwrap().to_owned();
    let place = move |_cwd: &str| {
        PathBuf::from("tmp")
            .join(SHORT_ID)
            .join("chats")
            .join(&name)
    };
    let side_files = move |cwd: &str| {
        let mut files = gemini_side_files(cwd);
        files.push((
            PathBuf::from("tmp")
                .join(SHORT_ID)
                .join("chats")
                .join(&stub_name),
            stub.clone().into_bytes(),
        ));
        files
    };
    let case = Case {
        name: "gemini-cli/appended-beside-resume-stub/genuine".into(),
        target: "gemini-cli",
        id: &session.id,
        genuine: &bytes,
        recorded_cwd: super::RECORDED_CWD,
        place: &place,
        side_files: &side_files,
        mutation: GENUINE,
    };
    let read = plugin
        .reader()
        .read(ReadFrom::File("gemini-cli", &session.path))
        .unwrap();
    assert!(
        read.events.iter().any(|e| matches!(&e.body, Body::User { content }
            if content.iter().any(|p| matches!(p, Part::Text { text } if text.contains("appended turn"))))),
        "the reader reads the appended turn"
    );
    check(&plugin, vec![(case, Expect::Agree)]);
}
