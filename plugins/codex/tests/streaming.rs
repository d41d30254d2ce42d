//! `Reader::read_each`: the streamed read hands out the same events as the whole read, hands
//! them out before the file ends, stops when asked, and refuses what the whole read refuses.

use handoff_sdk::ById;
use std::path::{Path, PathBuf};

use handoff_codex::{CodexPlugin, TARGET};
use handoff_sdk::{
    AssistantPart, Body, CreateOptions, Event, Origin, Part, Plugin, PluginError, ReadFrom,
    StoreRoot, Timestamp, ToolCall, Transcript,
};
use serde_json::json;

const GENUINE: [&str; 2] = [
    "rollout-2026-11-30T00-41-43-01a229e6-854b-7501-91aa-ee582218765e.jsonl",
    "rollout-2026-11-30T00-41-46-01a229e6-93f2-7540-95e0-5ee20bf368fe.jsonl",
];
const WITH_TOOL: &str = "01a229e6-93f2-7540-95e0-5ee20bf368fe";

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// A store root holding `files` (name → text) as Codex lays them out.
fn store(files: &[(&str, String)]) -> (tempfile::TempDir, StoreRoot) {
    let dir = tempfile::tempdir().unwrap();
    let root = StoreRoot::new(dir.path().join("codex")).unwrap();
    let day = root.path().join("sessions/2026/11/30");
    std::fs::create_dir_all(&day).unwrap();
    for (name, text) in files {
        std::fs::write(day.join(name), text).unwrap();
    }
    (dir, root)
}

fn genuine(name: &str) -> String {
    std::fs::read_to_string(fixture(name)).unwrap()
}

fn streamed(root: &StoreRoot, id: &str) -> Result<Vec<Event>, PluginError> {
    let mut events = Vec::new();
    CodexPlugin
        .read_each_id(root, TARGET, id, &mut |e| {
            events.push(e);
            true
        })
        .map(|()| events)
}

/// 40 turns of user → text + call → output → text, written by the plugin.
fn conversation() -> Transcript {
    let origin = Some(Origin::new("openai", "gpt-5", "openai-responses"));
    let mut events = Vec::new();
    let mut ms = 1_795_999_300_000i64;
    let mut next = |events: &mut Vec<Event>, body| {
        ms += 1_001;
        let id = format!("e{}", events.len());
        events.push(Event::new(id, Timestamp::from_millis(ms), body));
    };
    for turn in 0..40 {
        next(
            &mut events,
            Body::user_text(format!("turn {turn}: \"quoted\"\nline two")),
        );
        next(
            &mut events,
            Body::Assistant {
                content: vec![
                    AssistantPart::text("Looking."),
                    AssistantPart::ToolCall(ToolCall::new(
                        format!("call_{turn}"),
                        "exec_command",
                        json!({"cmd": ["ls", "-la"], "n": turn}),
                    )),
                ],
                origin: origin.clone(),
            },
        );
        next(
            &mut events,
            Body::ToolResult {
                call_id: format!("call_{turn}"),
                content: vec![Part::text("a\tb\nc ✓\n".repeat(20))],
                is_error: turn % 7 == 3,
            },
        );
        next(
            &mut events,
            Body::Assistant {
                content: vec![AssistantPart::text(format!("Done with {turn}."))],
                origin: origin.clone(),
            },
        );
    }
    let mut t = Transcript::new(events);
    t.cwd = Some("/home/dev/proj".into());
    t
}

#[test]
fn streams_the_same_events_as_the_whole_read() {
    let dir = tempfile::tempdir().unwrap();
    let root = StoreRoot::new(dir.path().join("codex")).unwrap();
    let t = conversation();
    let session = CodexPlugin
        .writer()
        .create(&root, TARGET, &t, &CreateOptions::default())
        .unwrap();
    let whole = CodexPlugin.read_id(&root, TARGET, &session.id).unwrap();
    assert_eq!(whole.events, t.events);
    assert_eq!(streamed(&root, &session.id).unwrap(), whole.events);

    let files: Vec<_> = GENUINE.iter().map(|n| (*n, genuine(n))).collect();
    let (_dir, root) = store(&files);
    for name in GENUINE {
        let whole = CodexPlugin
            .reader()
            .read(ReadFrom::File(TARGET, &fixture(name)))
            .unwrap();
        let id = &name["rollout-2026-11-30T00-41-43-".len()..name.len() - ".jsonl".len()];
        assert_eq!(streamed(&root, id).unwrap(), whole.events, "{name}");
    }
}

#[test]
fn hands_events_out_before_the_end_and_stops_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let root = StoreRoot::new(dir.path().join("codex")).unwrap();
    let t = conversation();
    let session = CodexPlugin
        .writer()
        .create(&root, TARGET, &t, &CreateOptions::default())
        .unwrap();

    // Stop after three events.
    let mut seen = 0;
    CodexPlugin
        .read_each_id(&root, TARGET, &session.id, &mut |_| {
            seen += 1;
            seen < 3
        })
        .unwrap();
    assert_eq!(seen, 3);

    // A bad last line: the streamed read has already handed out the events before it (the
    // whole read returns nothing), then fails naming the line.
    let mut text = std::fs::read_to_string(&session.path).unwrap();
    let lines = text.lines().count();
    text.push_str("{not json\n");
    std::fs::write(&session.path, &text).unwrap();
    let mut handed_out = 0;
    let err = CodexPlugin
        .read_each_id(&root, TARGET, &session.id, &mut |_| {
            handed_out += 1;
            true
        })
        .unwrap_err();
    assert!(
        matches!(err, PluginError::Malformed { line: Some(l), .. } if l == lines + 1),
        "{err}"
    );
    assert!(handed_out >= t.events.len() - 1, "{handed_out}");
}

#[test]
fn a_failed_item_completed_after_the_output_marks_it_within_the_turn() {
    let source = genuine(GENUINE[1]);
    let lines: Vec<&str> = source.lines().collect();
    let completed = lines
        .iter()
        .position(|l| l.contains("\"status\":\"completed\",\"aggregated_output\""))
        .unwrap();
    let output = lines
        .iter()
        .position(|l| l.contains("\"type\":\"function_call_output\""))
        .unwrap();
    let end_of_turn = lines
        .iter()
        .position(|l| l.contains("\"type\":\"task_complete\""))
        .unwrap();
    assert!(completed < output && output < end_of_turn);
    let failed = lines[completed].replace("\"status\":\"completed\"", "\"status\":\"failed\"");
    let moved_to = |at: usize| {
        let mut moved: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        moved.remove(completed);
        moved.insert(at - 1, failed.clone());
        moved.iter().map(|l| format!("{l}\n")).collect::<String>()
    };
    let name = GENUINE[1];
    let is_error = |text: String| {
        let (_dir, root) = store(&[(name, text)]);
        let whole = CodexPlugin.read_id(&root, TARGET, WITH_TOOL).unwrap();
        let events = streamed(&root, WITH_TOOL).unwrap();
        assert_eq!(events, whole.events);
        match &events[2].body {
            Body::ToolResult { is_error, .. } => *is_error,
            other => panic!("{other:?}"),
        }
    };
    // Just after the output, in the same turn: marked.
    assert!(is_error(moved_to(output + 1)));
    // After the turn ended: the result was final; not marked.
    assert!(!is_error(moved_to(end_of_turn + 1)));
}

#[test]
fn payload_before_type_reads_the_same() {
    let source = genuine(GENUINE[1]);
    let reordered: String = source
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            format!(
                "{{\"payload\":{},\"timestamp\":{},\"type\":{}}}\n",
                v["payload"], v["timestamp"], v["type"]
            )
        })
        .collect();
    let (_d1, original) = store(&[(GENUINE[1], source)]);
    let (_d2, moved) = store(&[(GENUINE[1], reordered)]);
    assert_eq!(
        streamed(&moved, WITH_TOOL).unwrap(),
        streamed(&original, WITH_TOOL).unwrap()
    );
}

#[test]
fn a_structural_error_names_the_line_of_the_event() {
    let dir = tempfile::tempdir().unwrap();
    let root = StoreRoot::new(dir.path().join("codex")).unwrap();
    let t = conversation();
    let session = CodexPlugin
        .writer()
        .create(&root, TARGET, &t, &CreateOptions::default())
        .unwrap();
    // The 5th call's output answers a call that does not exist.
    let text = std::fs::read_to_string(&session.path).unwrap();
    let orphan = text.replace(
        "\"call_id\":\"call_4\",\"output\"",
        "\"call_id\":\"call_x\",\"output\"",
    );
    assert_ne!(orphan, text);
    std::fs::write(&session.path, &orphan).unwrap();
    let line = orphan.lines().position(|l| l.contains("call_x")).unwrap() + 1;
    for err in [
        streamed(&root, &session.id).unwrap_err(),
        CodexPlugin.read_id(&root, TARGET, &session.id).unwrap_err(),
    ] {
        match &err {
            PluginError::Malformed {
                file,
                line: Some(l),
                field: Some(field),
                message,
            } => {
                assert_eq!((file.as_path(), *l), (Path::new(&session.path), line));
                assert_eq!(field, "body.call_id");
                assert!(
                    message.contains("answers no earlier tool call"),
                    "{message}"
                );
            }
            other => panic!("{other}"),
        }
    }
}
