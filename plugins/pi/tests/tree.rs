//! The reader follows pi's own semantics: the leaf, the path, what pi sends for each entry kind,
//! compaction, v1/v2 files; and what it carries comes back on a pi → pi round trip.

mod common;

use common::*;
use handoff_pi::{PiPlugin, OPAQUE_KEY, TARGET};
use handoff_sdk::serde_json::{json, Value};
use handoff_sdk::{AssistantPart, Body, Event, Plugin, ReadFrom, Transcript};

const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEElEQVR4nGP4z8AARAwQCgAf7gP9i18U1AAAAABJRU5ErkJggg==";

fn read(root: &handoff_sdk::StoreRoot, id: &str) -> Transcript {
    use handoff_sdk::ById;
    PiPlugin
        .read_id(root, TARGET, id)
        .unwrap_or_else(|e| panic!("{e}"))
}

fn entry(kind: &str, id: &str, parent: &str, n: u32, members: Value) -> Value {
    let mut e = json!({"type": kind, "id": id, "parentId": parent, "timestamp": ts(n)});
    for (k, v) in members.as_object().unwrap() {
        e[k] = v.clone();
    }
    e
}

fn message(id: &str, parent: &str, n: u32, message: Value) -> Value {
    entry("message", id, parent, n, json!({ "message": message }))
}

fn pi_assistant(content: Value, provider: &str, model: &str, api: &str, stop: &str) -> Value {
    json!({"role": "assistant", "content": content, "api": api, "provider": provider, "model": model,
           "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
                     "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
           "stopReason": stop, "timestamp": T0, "responseId": "r1"})
}

/// Every entry kind pi 0.73.1 has, on one path with an abandoned branch: the session the
/// experiment in docs/formats/pi.md resumed with the real pi.
fn every_kind(id: &str) -> Vec<Value> {
    vec![
        header(id),
        message("b0000001", "", 1, json!({"role": "user", "content": [{"type": "text", "text": "U1 first"},
            {"type": "image", "data": PNG, "mimeType": "image/png"}], "timestamp": T0})),
        message("b0000002", "b0000001", 2, pi_assistant(json!([
            {"type": "thinking", "thinking": "T-other", "thinkingSignature": "SIG-OTHER"},
            {"type": "text", "text": "A1", "textSignature": "msg_1"},
            {"type": "toolCall", "id": "call_1", "name": "bash", "arguments": {"command": "ls"}},
            {"type": "toolCall", "id": "call_2", "name": "bash", "arguments": {"command": "false"}}]),
            "anthropic", "claude-sonnet-4-5", "anthropic-messages", "toolUse")),
        message("b0000003", "b0000002", 3, json!({"role": "toolResult", "toolCallId": "call_1", "toolName": "bash",
            "content": [{"type": "text", "text": "R1"}, {"type": "image", "data": PNG, "mimeType": "image/png"}],
            "isError": false, "timestamp": T0, "details": {"exit": 0}})),
        message("b0000004", "b0000003", 4, json!({"role": "toolResult", "toolCallId": "call_2", "toolName": "bash",
            "content": [{"type": "text", "text": "R2 failed"}], "isError": true, "timestamp": T0})),
        message("b0000005", "b0000004", 5, pi_assistant(json!([{"type": "text", "text": "ABANDONED"}]),
            "fake", "fake-model", "openai-completions", "stop")),
        entry("branch_summary", "b0000006", "b0000004", 6, json!({"fromId": "b0000005", "summary": "BRANCH SUMMARY TEXT"})),
        entry("custom_message", "b0000007", "b0000006", 7, json!({"customType": "ext", "content": "CUSTOM MSG", "display": true})),
        entry("custom_message", "b0000008", "b0000007", 8, json!({"customType": "ext",
            "content": [{"type": "text", "text": "CUSTOM ARR"}], "display": false, "details": {"k": 1}})),
        entry("custom", "b0000009", "b0000008", 9, json!({"customType": "ext", "data": {"x": 1}})),
        entry("label", "b000000a", "b0000009", 10, json!({"targetId": "b0000001", "label": "LBL"})),
        entry("session_info", "b000000b", "b000000a", 11, json!({"name": "My Session"})),
        message("b000000c", "b000000b", 12, json!({"role": "bashExecution", "command": "echo hi", "output": "hi",
            "exitCode": 3, "cancelled": false, "truncated": false, "timestamp": T0 + 12})),
        message("b000000d", "b000000c", 13, json!({"role": "bashExecution", "command": "echo x", "output": "x",
            "exitCode": 0, "cancelled": false, "truncated": false, "excludeFromContext": true, "timestamp": T0 + 13})),
        message("b000000e", "b000000d", 14, pi_assistant(json!([
            {"type": "thinking", "thinking": "T-same", "thinkingSignature": "SIG-SAME"},
            {"type": "text", "text": "A2"}]), "fake", "fake-model", "openai-completions", "stop")),
        message("b000000f", "b000000e", 15, pi_assistant(json!([{"type": "text", "text": "A3 errored"}]),
            "fake", "fake-model", "openai-completions", "error")),
        message("b0000010", "b000000f", 16, json!({"role": "user", "content": "U2 string", "timestamp": T0 + 16})),
        message("b0000011", "b0000010", 17, pi_assistant(json!([{"type": "text", "text": "A4"}]),
            "fake", "fake-model", "openai-completions", "stop")),
    ]
    .into_iter()
    .map(|mut e| {
        if e["parentId"] == "" {
            e["parentId"] = Value::Null;
        }
        e
    })
    .collect()
}

fn opaque_kinds(e: &Event, key: &str) -> Vec<String> {
    e.opaque
        .get(OPAQUE_KEY)
        .and_then(|p| p.get(key))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|x| x["type"].as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn the_conversation_is_what_pi_sends() {
    let (_dir, root) = root();
    let id = "01a22fc4-0000-7000-8000-00000000e1e1";
    write_session(&root, id, &every_kind(id));
    let t = read(&root, id);
    assert_eq!(shape(&t), "UAREUUUUAUA");
    let texts: Vec<String> = t.events.iter().map(text_of).collect();
    // Exactly the user texts pi 0.73.1 sent for these entries (docs/formats/pi.md, [x]).
    assert_eq!(
        texts,
        [
            "U1 first",
            "A1",
            "R1",
            "R2 failed",
            "The following is a summary of a branch that this conversation came back from:\n\n<summary>\nBRANCH SUMMARY TEXT</summary>",
            "CUSTOM MSG",
            "CUSTOM ARR",
            "Ran `echo hi`\n```\nhi\n```\n\nCommand exited with code 3",
            "A2",
            "U2 string",
            "A4"
        ]
    );
    // Not sent, so carried on the next event: extension data, label, name; the `!!` run; the
    // assistant that stopped with an error. The abandoned branch is not part of it at all.
    assert_eq!(
        opaque_kinds(&t.events[7], "before"),
        ["custom", "label", "session_info"]
    );
    assert_eq!(opaque_kinds(&t.events[8], "before"), ["message"]);
    assert_eq!(opaque_kinds(&t.events[9], "before"), ["message"]);
    assert!(!serde_json_text(&t).contains("ABANDONED"));
    // Thinking keeps its signature with the turn's maker.
    let Body::Assistant { content, .. } = &t.events[1].body else {
        panic!()
    };
    let AssistantPart::Thinking(th) = &content[0] else {
        panic!()
    };
    let sig = th.signature.as_ref().unwrap();
    assert_eq!(
        (
            sig.provider.as_str(),
            sig.model.as_deref(),
            sig.value.as_str()
        ),
        ("anthropic", Some("claude-sonnet-4-5"), "SIG-OTHER")
    );
    assert_eq!(
        t.events[7].timestamp.millis(),
        T0 + 12,
        "bash runs keep their own time"
    );
    assert_eq!(
        t.events[4].timestamp.to_rfc3339(),
        ts(6),
        "summaries take the entry's time"
    );
}

fn serde_json_text(t: &Transcript) -> String {
    handoff_sdk::serde_json::to_string(t).unwrap()
}

#[test]
fn a_pi_session_written_back_is_the_same_session() {
    let (_dir, root) = root();
    let id = "01a22fc4-0000-7000-8000-00000000e1e2";
    let original = write_session(&root, id, &every_kind(id));
    let first = read(&root, id);
    let copy = create(&root, &first);
    let second = PiPlugin
        .reader()
        .read(ReadFrom::Session(&root, &copy))
        .unwrap();
    assert_eq!(
        second.events, first.events,
        "ids, bodies, authors and carried fields"
    );
    // Entry for entry, the copy is the original's path (the abandoned branch aside).
    let path_lines: Vec<Value> = lines(&original)[1..]
        .iter()
        .filter(|e| e["id"] != "b0000005")
        .cloned()
        .collect();
    assert_eq!(lines(&copy.path)[1..].to_vec(), path_lines);
}

#[test]
fn the_leaf_is_the_last_line_even_on_an_older_branch() {
    let (_dir, root) = root();
    let id = "01a22fc4-0000-7000-8000-00000000e1e3";
    write_session(
        &root,
        id,
        &[
            header(id),
            user_entry("c0000001", None, 1, "u1"),
            assistant_entry(
                "c0000002",
                Some("c0000001"),
                2,
                json!([{"type": "text", "text": "a1"}]),
                "stop",
            ),
            user_entry("c0000003", Some("c0000002"), 3, "u2"),
            assistant_entry(
                "c0000004",
                Some("c0000003"),
                4,
                json!([{"type": "text", "text": "a2"}]),
                "stop",
            ),
            // Written last, on a1: pi's leaf is this entry, so u2/a2 are an abandoned branch.
            entry(
                "label",
                "c0000005",
                "c0000002",
                5,
                json!({"targetId": "c0000001", "label": "start"}),
            ),
        ],
    );
    let t = read(&root, id);
    assert_eq!(shape(&t), "UA");
    assert_eq!(opaque_kinds(&t.events[1], "after"), ["label"]);

    // A parent that names no entry ends the path there, as in pi.
    let id = "01a22fc4-0000-7000-8000-00000000e1e4";
    write_session(
        &root,
        id,
        &[
            header(id),
            user_entry("c0000001", None, 1, "lost"),
            user_entry("c0000002", Some("feedbeef"), 2, "kept"),
        ],
    );
    assert_eq!(read(&root, id).events.len(), 1);
}

fn compacted(id: &str, first_kept: &str) -> Vec<Value> {
    vec![
        header(id),
        user_entry("d0000001", None, 1, "U1"),
        assistant_entry(
            "d0000002",
            Some("d0000001"),
            2,
            json!([{"type": "text", "text": "A1"}]),
            "stop",
        ),
        user_entry("d0000003", Some("d0000002"), 3, "U2"),
        assistant_entry(
            "d0000004",
            Some("d0000003"),
            4,
            json!([{"type": "text", "text": "A2"}]),
            "stop",
        ),
        entry(
            "compaction",
            "d0000005",
            "d0000004",
            5,
            json!({"summary": "SUMMARY", "firstKeptEntryId": first_kept, "tokensBefore": 100}),
        ),
        user_entry("d0000006", Some("d0000005"), 6, "U3"),
        assistant_entry(
            "d0000007",
            Some("d0000006"),
            7,
            json!([{"type": "text", "text": "A3"}]),
            "stop",
        ),
    ]
}

#[test]
fn compaction_replaces_what_pi_leaves_out() {
    let (_dir, root) = root();
    // (firstKeptEntryId, what pi sent after the summary — docs/formats/pi.md [x])
    for (n, (first_kept, replaced_through)) in [
        ("d0000005", Some("d0000004")), // its own id: nothing before it kept
        ("deadbeef", Some("d0000004")), // unknown: likewise
        ("d0000003", Some("d0000002")), // U2 onwards kept
        ("d0000001", None),             // everything kept: no canonical form, carried
    ]
    .into_iter()
    .enumerate()
    {
        let id = format!("01a22fc4-0000-7000-8000-0000000c000{n}");
        write_session(&root, &id, &compacted(&id, first_kept));
        let t = read(&root, &id);
        match replaced_through {
            Some(through) => {
                // pi shows the summary first, then what it keeps: the compaction goes right
                // after what it replaces.
                let (expected, at) = if through == "d0000002" {
                    ("UACUAUA", 2)
                } else {
                    ("UAUACUA", 4)
                };
                assert_eq!(shape(&t), expected, "{first_kept}");
                let Body::Compaction {
                    summary,
                    replaces_through,
                } = &t.events[at].body
                else {
                    panic!()
                };
                assert_eq!(
                    (summary.as_str(), replaces_through.as_str()),
                    ("SUMMARY", through)
                );
            }
            None => {
                assert_eq!(shape(&t), "UAUAUA", "{first_kept}");
                assert_eq!(opaque_kinds(&t.events[4], "before"), ["compaction"]);
            }
        }
    }
}

#[test]
fn v1_and_v2_files_read_as_pi_migrates_them_and_stay_untouched() {
    let (_dir, root) = root();
    let id = "ffae836b-0000-4060-ac13-7745215f90ff";
    let v1 = [
        json!({"type": "session", "id": id, "timestamp": ts(0), "cwd": CWD, "provider": "anthropic", "modelId": "m"}),
        json!({"type": "message", "timestamp": ts(1), "message": {"role": "user", "content": [{"type": "text", "text": "U1"}], "timestamp": T0}}),
        json!({"type": "message", "timestamp": ts(2), "message": {"role": "assistant", "content": [{"type": "text", "text": "A1"}],
               "api": "anthropic-messages", "provider": "anthropic", "model": "m", "usage": {}, "stopReason": "stop", "timestamp": T0}}),
        json!({"type": "thinking_level_change", "timestamp": ts(3), "thinkingLevel": "high"}),
        json!({"type": "message", "timestamp": ts(4), "message": {"role": "user", "content": [{"type": "text", "text": "U2"}], "timestamp": T0}}),
        // Index 4 counts the header as 0: line 5, the user message "U2".
        json!({"type": "compaction", "timestamp": ts(5), "summary": "S", "firstKeptEntryIndex": 4, "tokensBefore": 9}),
        json!({"type": "message", "timestamp": ts(6), "message": {"role": "user", "content": "U3", "timestamp": T0}}),
    ];
    let path = write_session(&root, id, &v1);
    let bytes = std::fs::read(&path).unwrap();
    let t = read(&root, id);
    // The compaction (line 6) right after what it replaces: pi shows its summary before U2.
    assert_eq!(shape(&t), "UACUU");
    let ids: Vec<&str> = t.events.iter().map(|e| e.id.as_str()).collect();
    assert_eq!(ids, ["L2", "L3", "L6", "L5", "L7"]);
    let Body::Compaction {
        replaces_through, ..
    } = &t.events[2].body
    else {
        panic!()
    };
    assert_eq!(replaces_through, "L3", "U2 and after stay in view");
    assert_eq!(
        std::fs::read(&path).unwrap(),
        bytes,
        "pi rewrites a v1 file; we never do"
    );

    let id = "01a22fc4-0000-7000-8000-0000000000b2";
    let mut h = header(id);
    h["version"] = json!(2);
    let path = write_session(
        &root,
        id,
        &[
            h,
            user_entry("e0000001", None, 1, "U1"),
            message(
                "e0000002",
                "e0000001",
                2,
                json!({"role": "hookMessage", "customType": "hook",
                "content": "from a hook", "display": true, "timestamp": T0 + 2}),
            ),
        ],
    );
    let bytes = std::fs::read(&path).unwrap();
    let t = read(&root, id);
    assert_eq!(shape(&t), "UU");
    assert_eq!(text_of(&t.events[1]), "from a hook");
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
    // A v3 file's hookMessage is a role pi does not send.
    let id = "01a22fc4-0000-7000-8000-0000000000b3";
    write_session(
        &root,
        id,
        &[
            header(id),
            user_entry("e0000001", None, 1, "U1"),
            message(
                "e0000002",
                "e0000001",
                2,
                json!({"role": "hookMessage", "content": "x", "timestamp": T0}),
            ),
        ],
    );
    assert_eq!(shape(&read(&root, id)), "U");
}

/// `read` (one pass) and `read_each` (two passes, streamed) are two ways to the same events.
#[test]
fn read_and_read_each_agree() {
    use handoff_sdk::ById;
    let (_dir, root) = root();
    let id = "01a22fc4-0000-7000-8000-00000000e1e5";
    let mut lines = every_kind(id);
    // Off the path, a member of the wrong type: not part of the conversation, so no error.
    lines.insert(
        5,
        message(
            "b00000ff",
            "b0000004",
            5,
            json!({"role": "user", "content": [{"type": "image", "data": 7}], "timestamp": T0}),
        ),
    );
    write_session(&root, id, &lines);
    let whole = read(&root, id);
    let mut streamed = Vec::new();
    PiPlugin
        .read_each_id(&root, TARGET, id, &mut |e| {
            streamed.push(e);
            true
        })
        .unwrap();
    assert_eq!(streamed, whole.events);
    // A sink that stops early gets exactly what it asked for.
    let mut first_two = Vec::new();
    PiPlugin
        .read_each_id(&root, TARGET, id, &mut |e| {
            first_two.push(e);
            first_two.len() < 2
        })
        .unwrap();
    assert_eq!(first_two, whole.events[..2]);
    for dir in [
        "genuine-pi-0.73.1",
        "public-pi-mono",
        "pi-0.73.1-compaction",
    ] {
        let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/samples")
            .join(dir);
        for file in std::fs::read_dir(folder).unwrap() {
            let path = file.unwrap().path();
            let whole = PiPlugin
                .reader()
                .read(ReadFrom::File(TARGET, &path))
                .unwrap();
            let session = handoff_sdk::SessionRef {
                target: TARGET.into(),
                id: "sample".into(),
                path: path.clone(),
            };
            let parent = path.parent().unwrap().to_owned();
            let sample_root = handoff_sdk::StoreRoot::new(parent).unwrap();
            let mut streamed = Vec::new();
            PiPlugin
                .reader()
                .read_each(ReadFrom::Session(&sample_root, &session), &mut |e| {
                    streamed.push(e);
                    true
                })
                .unwrap();
            assert_eq!(streamed, whole.events, "{}", path.display());
        }
    }
}

/// A call the file holds no result for gets the one pi-ai's `transformMessages` sends: "No
/// result provided", an error, before the next user or assistant message or at the end
/// (differential cases pi/tool-call/interrupted-call*).
#[test]
fn an_unanswered_call_gets_the_result_pi_sends() {
    let (_dir, root) = root();
    let calls = |a: &str, b: &str| {
        json!([
            {"type": "toolCall", "id": a, "name": "bash", "arguments": {"command": "ls"}},
            {"type": "toolCall", "id": b, "name": "bash", "arguments": {"command": "pwd"}}
        ])
    };
    let answered_one = json!({"role": "toolResult", "toolCallId": "call_1", "toolName": "bash",
        "content": [{"type": "text", "text": "R1"}], "isError": false, "timestamp": T0});
    let id = "01a22fc4-0000-7000-8000-00000000e1f1";
    write_session(
        &root,
        id,
        &[
            header(id),
            user_entry("d0000001", None, 1, "u1"),
            assistant_entry(
                "d0000002",
                Some("d0000001"),
                2,
                calls("call_1", "call_2"),
                "toolUse",
            ),
            message("d0000003", "d0000002", 3, answered_one),
            user_entry("d0000004", Some("d0000003"), 4, "u2"),
            assistant_entry(
                "d0000005",
                Some("d0000004"),
                5,
                calls("call_3", "call_4"),
                "toolUse",
            ),
        ],
    );
    let t = read(&root, id);
    assert_eq!(shape(&t), "UAREUAEE");
    let results: Vec<(&str, String, bool)> = t
        .events
        .iter()
        .filter_map(|e| e.body.as_tool_result())
        .map(|(call_id, content, is_error)| (call_id, format!("{content:?}"), is_error))
        .collect();
    assert_eq!(results[0].0, "call_1");
    assert!(!results[0].2 && results[0].1.contains("R1"));
    for (call_id, content, is_error) in &results[1..] {
        assert!(*is_error, "{call_id}");
        assert!(content.contains("No result provided"), "{content}");
    }
    assert_eq!(
        results.iter().map(|r| r.0).collect::<Vec<_>>(),
        ["call_1", "call_2", "call_3", "call_4"]
    );
}

/// pi trims the text it reads, and JavaScript's `trim` takes a BOM: a BOM before the header is
/// skipped (differential case pi/two-turns/bom).
#[test]
fn a_bom_before_the_header_is_skipped() {
    let (_dir, root) = root();
    let id = "01a22fc4-0000-7000-8000-00000000e1f2";
    let path = write_session(
        &root,
        id,
        &[header(id), user_entry("d0000011", None, 1, "u1")],
    );
    let mut bytes = b"\xEF\xBB\xBF".to_vec();
    bytes.extend(std::fs::read(&path).unwrap());
    std::fs::write(&path, bytes).unwrap();
    assert_eq!(shape(&read(&root, id)), "U");
}

/// An append sees the file as written: it may answer a call the file holds no result for, and
/// then pi sends that result (no synthetic one).
#[test]
fn an_append_may_answer_an_open_call() {
    let (_dir, root) = root();
    let t = transcript(vec![
        user("f1", 0, "run it"),
        assistant(
            "f2",
            1,
            vec![call("call_9", "bash", json!({"command": "ls"}))],
            None,
        ),
    ]);
    let session = create(&root, &t);
    assert_eq!(shape(&read(&root, &session.id)), "UAE");
    PiPlugin
        .writer()
        .append(
            &root,
            &session,
            &[result(
                "f3",
                2,
                "call_9",
                vec![handoff_sdk::Part::text("ok")],
                false,
            )],
        )
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(shape(&read(&root, &session.id)), "UAR");
}
