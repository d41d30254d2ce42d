//! The Claude Code reader's rules per Claude Code version (`ReadRules`), each measured with the
//! real CLI at both ends of the verified range (docs/live.md, "Claude Code 2.1.332 and the
//! differential"; the differential cases in `live/tests/differential.rs`): the genuine two-turn
//! session, changed as the measured case changes it, read as 2.1.197 and as 2.1.332 send it.

use std::path::Path;

use handoff_claude::{ClaudePluginReadingAs, CLAUDE_CODE, CLAUDE_CODE_NEWEST, CLAUDE_CODE_VERSION};
use handoff_sdk::serde_json::{self, json, Value};
use handoff_sdk::{AssistantPart, Body, Part, PluginError, ReadFrom, Reader};

/// The genuine Claude Code 2.1.197 session of two turns: its message records are lines 3 (`hi`),
/// 6 (`ok`), 10 (`continue`) and 11 (`ok`), with two attachments after the first prompt.
const TWO_TURNS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/samples/genuine-2.1.197/7ab6d42f-f51c-4eb0-8cba-032f2fa35adf.jsonl"
);
/// The genuine session with a tool call: lines 3 (`TOOLME`), 6 (the call), 7 (its result), 8
/// (the answer).
const TOOL_CALL: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/samples/genuine-2.1.197/31c027dc-f6fd-435e-b40a-e98d9514124a.jsonl"
);

fn records(sample: &str) -> Vec<Value> {
    std::fs::read_to_string(sample)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The index of the record at 1-based `line`.
fn at(line: usize) -> usize {
    line - 1
}

/// `records` written to a file and read as Claude Code `version` sends them: one line per event
/// (`user: hi`, `assistant: ok`, `call`, `result`), or the error.
fn read_as(version: &str, records: &[Value]) -> Result<Vec<String>, PluginError> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let text: String = records.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(&path, text).unwrap();
    read_file_as(version, &path)
}

fn read_file_as(version: &str, path: &Path) -> Result<Vec<String>, PluginError> {
    let mut events = Vec::new();
    ClaudePluginReadingAs::version(version).read_each(
        ReadFrom::File(CLAUDE_CODE, path),
        &mut |e| {
            events.push(match e.body {
                Body::User { content } => {
                    let texts: Vec<String> = content
                        .iter()
                        .map(|p| match p {
                            Part::Text { text } => text.clone(),
                            _ => "image".into(),
                        })
                        .collect();
                    format!("user: {}", texts.join(" + "))
                }
                Body::Assistant { content, .. } => {
                    let parts: Vec<String> = content
                        .iter()
                        .map(|p| match p {
                            AssistantPart::Text { text } => text.clone(),
                            AssistantPart::ToolCall(_) => "call".into(),
                            _ => "other".into(),
                        })
                        .collect();
                    format!("assistant: {}", parts.join(" + "))
                }
                Body::ToolResult { .. } => "result".into(),
                other => format!("{other:?}"),
            });
            true
        },
    )?;
    Ok(events)
}

const WHOLE: [&str; 4] = [
    "user: hi",
    "assistant: ok",
    "user: continue",
    "assistant: ok",
];

/// Moves the record `minutes` later (the second turn out of the 5 s Claude Code looks back).
fn later(record: &mut Value, minutes: u32) {
    let ts = record["timestamp"].as_str().unwrap().to_owned();
    let minute: u32 = ts[14..16].parse().unwrap();
    record["timestamp"] = json!(format!("{}{:02}{}", &ts[..14], minute + minutes, &ts[16..]));
}

/// The second prompt's parent lost, and a `system` `file_snapshot` record (a root) written just
/// before it: 2.1.197 goes on to the snapshot, so the first turn is not sent; 2.1.332 passes over
/// it to the first answer, 3.7 s before (measured at both ends: differential case
/// `by-time-skips-file-snapshot`). A system record of another subtype is gone on to at both ends
/// (measured with `informational` and `local_command`).
#[test]
fn the_newest_end_passes_over_a_file_snapshot_when_it_goes_on_by_time() {
    let with = |subtype: &str| {
        let mut r = records(TWO_TURNS);
        r[at(10)]["parentUuid"] = json!("00000000-0000-4000-8000-00000000dead");
        let mut snapshot = json!({"parentUuid": null, "isSidechain": false, "type": "system",
            "subtype": subtype, "content": "File snapshot", "level": "info", "isMeta": true,
            "timestamp": "2026-11-30T00:41:48.900Z",
            "uuid": "11111111-2222-4333-8444-555555555555", "userType": "external"});
        snapshot["cwd"] = r[at(10)]["cwd"].clone();
        snapshot["sessionId"] = r[at(10)]["sessionId"].clone();
        r.insert(at(10), snapshot);
        r
    };
    let second_turn_only = ["user: continue", "assistant: ok"];
    let snapshot = with("file_snapshot");
    assert_eq!(
        read_as(CLAUDE_CODE_VERSION, &snapshot).unwrap(),
        second_turn_only
    );
    assert_eq!(read_as(CLAUDE_CODE_NEWEST, &snapshot).unwrap(), WHOLE);
    let informational = with("informational");
    for version in [CLAUDE_CODE_VERSION, CLAUDE_CODE_NEWEST] {
        assert_eq!(
            read_as(version, &informational).unwrap(),
            second_turn_only,
            "{version}"
        );
    }
}

/// A loop of parents, as each end resumes it (measured at both ends, the same: differential
/// cases `loop-*`): a parent already on the conversation is one Claude Code does not find, so it
/// goes on by time (the first answer, 3.7 s before the second prompt), or, with nothing written
/// in the 5 s before, the conversation starts at that record; a record on the loop may be the
/// leaf (named by the `last-prompt`, or written last).
#[test]
fn a_loop_of_parents_reads_as_both_ends_resume_it() {
    let changed = |change: &dyn Fn(&mut Vec<Value>)| {
        let mut r = records(TWO_TURNS);
        change(&mut r);
        r
    };
    let name = |r: &mut Vec<Value>, child: usize, parent: usize| {
        r[at(child)]["parentUuid"] = r[at(parent)]["uuid"].clone();
    };
    let second_turn_late = |r: &mut Vec<Value>| {
        later(&mut r[at(10)], 1);
        later(&mut r[at(11)], 1);
    };
    let without_last_prompts = |r: &mut Vec<Value>| r.retain(|x| x["type"] != "last-prompt");
    let second_turn = ["user: continue", "assistant: ok"];
    let cases: [(&str, Vec<Value>, &[&str]); 7] = [
        (
            "the second prompt names itself",
            changed(&|r| name(r, 10, 10)),
            &WHOLE,
        ),
        (
            "the second prompt names itself, a minute later",
            changed(&|r| {
                name(r, 10, 10);
                second_turn_late(r);
            }),
            &second_turn,
        ),
        (
            "the first prompt names itself",
            changed(&|r| name(r, 3, 3)),
            &WHOLE,
        ),
        (
            "the second turn's records name each other",
            changed(&|r| name(r, 10, 11)),
            &WHOLE,
        ),
        (
            "the same, a minute later",
            changed(&|r| {
                name(r, 10, 11);
                second_turn_late(r);
            }),
            &second_turn,
        ),
        (
            "the same without last-prompt records",
            changed(&|r| {
                name(r, 10, 11);
                without_last_prompts(r);
            }),
            &WHOLE,
        ),
        (
            "the first prompt names the last answer, without last-prompt records",
            changed(&|r| {
                name(r, 3, 11);
                without_last_prompts(r);
            }),
            &WHOLE,
        ),
    ];
    for (what, records, expected) in cases {
        for version in [CLAUDE_CODE_VERSION, CLAUDE_CODE_NEWEST] {
            assert_eq!(
                read_as(version, &records).unwrap_or_else(|e| panic!("{what}: {e}")),
                expected,
                "{what}, as {version}"
            );
        }
    }
}

/// A user or assistant record on the conversation with its `message` missing or no object, or
/// its `message.content` missing, `null`, or neither a string nor an array: 2.1.197 sends
/// nothing, and the reader names the file, line and field; 2.1.332 passes over the record (its
/// link holds) and sends no result whose call it did not send (measured for each fault below,
/// differential cases `malformed-on-conversation`, `message-not-an-object`,
/// `result-content-a-number`).
#[test]
fn the_newest_end_passes_over_a_record_whose_message_is_malformed() {
    type Change = fn(&mut Value);
    let faults: [(&str, Change); 6] = [
        ("message.content", |r| {
            let m = r["message"].as_object_mut().unwrap();
            let content = m.remove("content").unwrap();
            m.insert("contenst".into(), content);
        }),
        ("message.content", |r| r["message"]["content"] = Value::Null),
        ("message.content", |r| r["message"]["content"] = json!(42)),
        ("message.content", |r| {
            r["message"]["content"] = json!({"type": "text", "text": "x"})
        }),
        ("message", |r| r["message"] = json!("error")),
        ("message", |r| {
            r.as_object_mut().unwrap().remove("message");
        }),
    ];
    // On the call (line 6), its result (line 7) and the prompt (line 3) of the tool session; on
    // the first answer of the two turns (line 6), whose prompts 2.1.332 then sends together.
    let tool_answer = ["user: TOOLME", "assistant: ok"];
    let placed: [(&str, usize, &[&str]); 4] = [
        (TOOL_CALL, 6, &tool_answer),
        (TOOL_CALL, 7, &tool_answer),
        (
            TOOL_CALL,
            3,
            &["assistant: call", "result", "assistant: ok"],
        ),
        (
            TWO_TURNS,
            6,
            &["user: hi", "user: continue", "assistant: ok"],
        ),
    ];
    for (field, change) in faults {
        for (sample, line, sent) in placed {
            let mut r = records(sample);
            change(&mut r[at(line)]);
            let what = format!("{field} at line {line} of {sample}");
            match read_as(CLAUDE_CODE_VERSION, &r) {
                Err(PluginError::Malformed {
                    line: Some(l),
                    field: Some(f),
                    ..
                }) => {
                    assert_eq!((l, f.as_str()), (line, field), "{what}");
                }
                other => panic!("{what}: 2.1.197 fails, got {other:?}"),
            }
            assert_eq!(
                read_as(CLAUDE_CODE_NEWEST, &r).unwrap_or_else(|e| panic!("{what}: {e}")),
                sent,
                "{what}"
            );
        }
    }
    // A fault deeper in the message is no such record: an error at both ends.
    let mut r = records(TWO_TURNS);
    r[at(6)]["message"]["content"][0]["text"] = json!(1);
    for version in [CLAUDE_CODE_VERSION, CLAUDE_CODE_NEWEST] {
        assert!(
            matches!(read_as(version, &r), Err(PluginError::Malformed { field: Some(f), .. })
                if f == "message.content[0].text"),
            "{version}"
        );
    }
}
