//! The qwen-code reader and writer on a genuine Qwen Code 0.24.4 session (a shell call, its
//! result, an answer, then a resume with one more turn), and on files the CLI reads its own way.

use std::path::{Path, PathBuf};

use handoff_qwen::QwenPlugin;
use handoff_sdk::serde_json::{self, json, Value};
use handoff_sdk::{
    AssistantPart, Body, Comparison, CreateOptions, Part, Plugin, ReadFrom, StoreRoot,
};

const TARGET: &str = "qwen-code";
const GENUINE: &str = "tests/samples/7da3d710-5632-46df-bb43-bead8f22b422.jsonl";

fn sample() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(GENUINE)
}

fn read(path: &Path) -> Result<handoff_sdk::Transcript, handoff_sdk::PluginError> {
    QwenPlugin.reader().read(ReadFrom::File(TARGET, path))
}

fn records() -> Vec<Value> {
    std::fs::read_to_string(sample())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn write_records(dir: &Path, records: &[Value]) -> PathBuf {
    let path = dir.join("7da3d710-5632-46df-bb43-bead8f22b422.jsonl");
    let text: Vec<String> = records.iter().map(Value::to_string).collect();
    std::fs::write(&path, text.join("\n") + "\n").unwrap();
    path
}

fn texts(transcript: &handoff_sdk::Transcript) -> Vec<String> {
    transcript
        .events
        .iter()
        .map(|e| match &e.body {
            Body::User { content } => match &content[0] {
                Part::Text { text } => format!("user:{text}"),
                _ => "user:?".into(),
            },
            Body::Assistant { content, .. } => match &content[0] {
                AssistantPart::Text { text } => format!("assistant:{text}"),
                AssistantPart::ToolCall(c) => format!("call:{}", c.name),
                _ => "assistant:?".into(),
            },
            Body::ToolResult { is_error, .. } => format!("result:{is_error}"),
            Body::Compaction { .. } => "compaction".into(),
        })
        .collect()
}

#[test]
fn the_genuine_session_reads_as_the_cli_sends_it() {
    let transcript = read(&sample()).unwrap();
    assert_eq!(
        texts(&transcript),
        [
            "user:TOOLME please",
            "call:run_shell_command",
            "result:false",
            "assistant:ok",
            "user:continue",
            "assistant:ok"
        ]
    );
    assert_eq!(
        transcript.cwd.as_deref(),
        Some("/tmp/qwen-scratch/home/proj")
    );
    let Body::Assistant { origin, .. } = &transcript.events[1].body else {
        panic!("an assistant turn")
    };
    let origin = origin.as_ref().unwrap();
    assert_eq!(
        (origin.provider.as_str(), origin.model.as_deref()),
        ("openai", Some("fake-model"))
    );
    // The record's uuid and timestamp.
    assert_eq!(
        transcript.events[0].id,
        "20aebe4b-dd68-4533-866e-1a963f0d9157"
    );
    assert_eq!(
        transcript.events[0].timestamp.to_rfc3339(),
        "2026-12-02T06:13:03.989Z"
    );
}

#[test]
fn the_chain_runs_from_the_last_conversation_record() {
    let scratch = tempfile::tempdir().unwrap();
    let mut r = records();
    // A branch: the second user turn re-parented onto the first answer is abandoned when the
    // last record continues the first turn's tool result instead.
    let first_answer = r
        .iter()
        .position(|x| x["type"] == "assistant" && x["message"]["parts"][0]["text"] == "ok")
        .unwrap();
    let mut other = r[first_answer].clone();
    other["uuid"] = json!("branch-answer");
    other["parentUuid"] = r[first_answer]["parentUuid"].clone();
    other["message"]["parts"][0]["text"] = json!("another answer");
    r.push(other);
    let transcript = read(&write_records(scratch.path(), &r)).unwrap();
    assert_eq!(
        texts(&transcript),
        [
            "user:TOOLME please",
            "call:run_shell_command",
            "result:false",
            "assistant:another answer"
        ]
    );
}

#[test]
fn records_of_one_uuid_are_one_message_and_unknown_records_are_skipped() {
    let scratch = tempfile::tempdir().unwrap();
    let mut r = records();
    // The last answer written again with more parts (the CLI joins records of one uuid).
    let last = r.iter().rposition(|x| x["type"] == "assistant").unwrap();
    let mut more = r[last].clone();
    more["message"]["parts"] = json!([{"text": " and more"}]);
    r.push(more);
    r.insert(
        1,
        json!({"type": "nonsense", "uuid": "x", "parentUuid": null, "sessionId": "s"}),
    );
    r.insert(1, json!([1, 2]));
    let transcript = read(&write_records(scratch.path(), &r)).unwrap();
    let Body::Assistant { content, .. } = &transcript.events.last().unwrap().body else {
        panic!("an assistant turn last")
    };
    assert_eq!(
        content,
        &[AssistantPart::text("ok"), AssistantPart::text(" and more")]
    );
}

#[test]
fn a_compression_replaces_the_history_before_it() {
    let scratch = tempfile::tempdir().unwrap();
    let mut r = records();
    let at = r
        .iter()
        .position(|x| x["message"]["parts"][0]["text"] == "continue")
        .unwrap();
    let compression = json!({"uuid": "comp", "parentUuid": r[at - 1]["uuid"], "sessionId": r[0]["sessionId"],
        "timestamp": "2026-12-02T06:14:00.000Z", "type": "system", "subtype": "chat_compression",
        "systemPayload": {"compressedHistory": [{"role": "user", "parts": [{"text": "summary"}]},
                                                {"role": "model", "parts": [{"text": "Got it."}]}]}});
    r[at]["parentUuid"] = json!("comp");
    r.insert(at, compression);
    let transcript = read(&write_records(scratch.path(), &r)).unwrap();
    assert_eq!(
        texts(&transcript),
        [
            "user:summary",
            "assistant:Got it.",
            "user:continue",
            "assistant:ok"
        ]
    );
}

#[test]
fn a_line_that_is_no_json_is_named() {
    let scratch = tempfile::tempdir().unwrap();
    let path = write_records(scratch.path(), &records());
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str("{\"uuid\": \n");
    std::fs::write(&path, text).unwrap();
    let err = read(&path).unwrap_err().to_string();
    assert!(err.contains("14"), "{err}");
}

#[test]
fn what_the_writer_writes_reads_back_equal_and_resumes_by_its_id() {
    let scratch = tempfile::tempdir().unwrap();
    let cwd = scratch.path().join("proj");
    std::fs::create_dir(&cwd).unwrap();
    let root = StoreRoot::new(scratch.path().join("store")).unwrap();
    let transcript = read(&sample()).unwrap();
    let session = QwenPlugin
        .writer()
        .create(
            &root,
            TARGET,
            &transcript,
            &CreateOptions {
                cwd: Some(cwd.display().to_string()),
                locator: Some("conv-1".into()),
            },
        )
        .unwrap();
    let back = read(&session.path).unwrap();
    Comparison::exact().diff(&transcript, &back).unwrap();
    let slug = cwd
        .display()
        .to_string()
        .replace(|c: char| !c.is_ascii_alphanumeric(), "-");
    assert_eq!(
        session.path,
        root.path()
            .join("projects")
            .join(slug)
            .join("chats")
            .join(format!("{}.jsonl", session.id))
    );
    let listed = QwenPlugin.reader().list(&root, TARGET).unwrap();
    assert_eq!(listed.len(), 1);
    assert!(listed[0].owned);
    assert_eq!(listed[0].locator.as_deref(), Some("conv-1"));
    assert_eq!(listed[0].title.as_deref(), Some("TOOLME please"));
    assert_eq!(
        listed[0].cwd.as_deref(),
        Some(cwd.canonicalize().unwrap().to_str().unwrap())
    );
    let plan = QwenPlugin.resumer().plan(&root, &session, "go on").unwrap();
    let command = plan.command().expect("a command");
    assert_eq!(command.program, "qwen");
    assert_eq!(
        command.args,
        ["--resume", session.id.as_str(), "-p", "go on"]
    );
    assert_eq!(
        command.env,
        [(
            "QWEN_RUNTIME_DIR".to_owned(),
            root.path().display().to_string()
        )]
    );
}

/// Creates `transcript` in a store inside `scratch`.
fn create_in(
    scratch: &tempfile::TempDir,
    transcript: &handoff_sdk::Transcript,
) -> Result<handoff_sdk::SessionRef, handoff_sdk::PluginError> {
    let root = StoreRoot::new(scratch.path().join("store")).unwrap();
    QwenPlugin.writer().create(
        &root,
        TARGET,
        transcript,
        &CreateOptions {
            cwd: Some(scratch.path().display().to_string()),
            locator: None,
        },
    )
}

#[test]
fn what_qwen_code_cannot_carry_fails_the_write_naming_the_event() {
    let mut transcript = read(&sample()).unwrap();
    let Body::User { content } = &mut transcript.events[0].body else {
        panic!("the prompt")
    };
    content.push(Part::Image {
        media_type: "image/png".into(),
        data: vec![0x89, b'P', b'N', b'G'],
    });
    let err = create_in(&tempfile::tempdir().unwrap(), &transcript)
        .unwrap_err()
        .to_string();
    assert!(err.contains(&transcript.events[0].id), "{err}");

    let mut transcript = read(&sample()).unwrap();
    transcript.events[3].body = Body::assistant(vec![AssistantPart::text("")]);
    let err = create_in(&tempfile::tempdir().unwrap(), &transcript)
        .unwrap_err()
        .to_string();
    assert!(err.contains(&transcript.events[3].id), "{err}");
}

#[test]
fn another_origin_and_an_author_are_kept_beside_what_qwen_code_reads() {
    let mut transcript = read(&sample()).unwrap();
    let Body::Assistant { origin, .. } = &mut transcript.events[3].body else {
        panic!("the answer")
    };
    *origin = Some(handoff_sdk::Origin::new(
        "anthropic",
        "claude-sonnet-4-5",
        "anthropic-messages",
    ));
    transcript.events[4].author = Some(handoff_sdk::Author {
        kind: handoff_sdk::AuthorKind::Human,
        name: "ada".into(),
    });
    let scratch = tempfile::tempdir().unwrap();
    let session = create_in(&scratch, &transcript).unwrap();
    let back = read(&session.path).unwrap();
    Comparison::exact().diff(&transcript, &back).unwrap();
}

#[test]
fn thinking_is_written_as_thought_parts_and_read_back_exactly() {
    let mut transcript = read(&sample()).unwrap();
    let Body::Assistant { content, .. } = &mut transcript.events[3].body else {
        panic!("the answer")
    };
    let signed = |text: &str, value: &str| {
        AssistantPart::Thinking(handoff_sdk::Thinking {
            text: text.into(),
            signature: Some(handoff_sdk::Signature {
                provider: "anthropic".into(),
                model: Some("claude-sonnet-4-5".into()),
                value: value.into(),
                redacted: text.is_empty(),
            }),
        })
    };
    content.insert(0, signed("Let me think.", "sig-1"));
    content.push(signed("", "sig-2"));
    let scratch = tempfile::tempdir().unwrap();
    let session = create_in(&scratch, &transcript).unwrap();
    let back = read(&session.path).unwrap();
    Comparison::exact().diff(&transcript, &back).unwrap();
    // In the file, the thought part Qwen Code keeps (and sends as reasoning_content).
    let text = std::fs::read_to_string(&session.path).unwrap();
    assert!(
        text.contains(r#"{"text":"Let me think.","thought":true}"#),
        "{text}"
    );
}

/// A result that came after a user message, in a record that also holds a text: the CLI moves
/// the result up and leaves the text; every event read keeps an id of its own.
#[test]
fn a_moved_result_and_what_it_left_behind_keep_ids_of_their_own() {
    let scratch = tempfile::tempdir().unwrap();
    let mut r = records();
    let call = r.iter().position(|x| x["type"] == "assistant").unwrap();
    let result = r.iter().position(|x| x["type"] == "tool_result").unwrap();
    r[result]["message"]["parts"]
        .as_array_mut()
        .unwrap()
        .push(json!({"text": "left behind"}));
    // A user message between the call and its result.
    let mut message = r[0].clone();
    message["uuid"] = json!("ffff0000-0000-4000-8000-000000000001");
    message["parentUuid"] = r[call]["uuid"].clone();
    message["message"]["parts"] = json!([{"text": "meanwhile"}]);
    r[call + 1]["parentUuid"] = message["uuid"].clone();
    r.insert(call + 1, message);
    let transcript = read(&write_records(scratch.path(), &r)).unwrap();
    assert_eq!(
        texts(&transcript)[..5],
        [
            "user:TOOLME please",
            "call:run_shell_command",
            "result:false",
            "user:meanwhile",
            "user:left behind"
        ]
    );
    let mut ids: Vec<&str> = transcript.events.iter().map(|e| e.id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), transcript.events.len(), "{ids:?}");
    transcript.validate().unwrap();
}

#[test]
fn parents_later_in_the_file_make_the_same_chain() {
    let scratch = tempfile::tempdir().unwrap();
    let in_order = read(&sample()).unwrap();
    // Every record but the last (the chain's leaf) in reverse: each parent now comes after its
    // child, so the index links it only once the pass has seen the whole file.
    let mut r = records();
    let last = r.pop().unwrap();
    r.reverse();
    r.push(last);
    let reversed = read(&write_records(scratch.path(), &r)).unwrap();
    assert!(texts(&in_order).len() > 3, "{:?}", texts(&in_order));
    assert_eq!(texts(&reversed), texts(&in_order));
    assert_eq!(reversed.events, in_order.events);
}
