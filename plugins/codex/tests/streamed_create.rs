//! `Writer::create_streamed`: the rollout written event by event is the one `create` writes
//! (line for line, but for the ids drawn at random), it asks for the whole transcript only when a
//! compaction keeps events before it, and a stream that fails midway leaves nothing behind.

use std::path::Path;

use handoff_codex::{CodexPlugin, TARGET};
use handoff_live::streamed::{files_under, Probe};
use handoff_sdk::ById;
use handoff_sdk::{
    AssistantPart, Body, CreateOptions, Event, Origin, Part, Plugin, PluginError, StoreRoot,
    Timestamp, ToolCall, Transcript,
};
use serde_json::{json, Value};

fn event(id: &str, ms: i64, body: Body) -> Event {
    Event::new(id, Timestamp::from_millis(1_795_999_300_000 + ms), body)
}

/// `turns` turns of user → text + call → result → text, each with its own model.
fn conversation(turns: usize) -> Transcript {
    let mut events = Vec::new();
    for t in 0..turns {
        let ms = t as i64 * 100;
        events.push(event(
            &format!("u{t}"),
            ms,
            Body::user_text(format!("question {t}")),
        ));
        events.push(event(
            &format!("a{t}"),
            ms + 1,
            Body::Assistant {
                content: vec![
                    AssistantPart::text(format!("looking {t}")),
                    AssistantPart::ToolCall(ToolCall::new(
                        format!("call_{t}"),
                        "shell",
                        json!({"command": ["ls", format!("dir{t}")]}),
                    )),
                ],
                origin: Some(Origin {
                    provider: "openai".into(),
                    model: Some(format!("gpt-5.{t}")),
                    api: Some("openai-responses".into()),
                }),
            },
        ));
        events.push(event(
            &format!("r{t}"),
            ms + 2,
            Body::ToolResult {
                call_id: format!("call_{t}"),
                content: vec![Part::text(format!("file{t}"))],
                is_error: t % 2 == 1,
            },
        ));
        events.push(event(
            &format!("c{t}"),
            ms + 3,
            Body::assistant(vec![AssistantPart::text(format!("done {t}"))]),
        ));
    }
    let mut t = Transcript::new(events);
    t.cwd = Some("/home/dev/proj".into());
    t
}

fn compaction(id: &str, ms: i64, through: &str) -> Event {
    event(
        id,
        ms,
        Body::Compaction {
            summary: "the story so far".into(),
            replaces_through: through.into(),
        },
    )
}

fn options() -> CreateOptions {
    CreateOptions {
        cwd: Some("/home/dev/proj".into()),
        locator: Some("streamed".into()),
    }
}

fn root() -> (tempfile::TempDir, StoreRoot) {
    let dir = tempfile::tempdir().unwrap();
    let root = StoreRoot::new(dir.path().join("codex")).unwrap();
    (dir, root)
}

/// Every line as JSON, with what is drawn at random (the session id, turn ids) blanked.
fn lines_without_ids(path: &Path, id: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap().replace(id, "ID");
    text.lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            if let Some(p) = v.get_mut("payload").and_then(Value::as_object_mut) {
                if p.contains_key("turn_id") {
                    p.insert("turn_id".into(), json!("TURN"));
                }
            }
            v
        })
        .collect()
}

#[test]
fn a_streamed_rollout_is_the_one_create_writes() {
    let t = conversation(30);
    let (_dir, root) = root();
    let whole = CodexPlugin
        .writer()
        .create(&root, TARGET, &t, &options())
        .unwrap();
    let mut stream = Probe::new(&t);
    let streamed = CodexPlugin
        .writer()
        .create_streamed(&root, TARGET, &mut stream, &options())
        .unwrap();
    assert_eq!(
        stream.wholes(),
        0,
        "no compaction: never the whole transcript"
    );
    assert_eq!(
        lines_without_ids(&streamed.path, &streamed.id),
        lines_without_ids(&whole.path, &whole.id)
    );
    let back = CodexPlugin.read_id(&root, TARGET, &streamed.id).unwrap();
    let comparison = CodexPlugin::target_manifest().comparison();
    comparison.diff(&t, &back).unwrap();
    // The thread row Codex lists it by: the last model, the first user text.
    let listed = CodexPlugin.reader().list(&root, TARGET).unwrap();
    let row = listed.iter().find(|s| s.session.id == streamed.id).unwrap();
    assert_eq!(row.title.as_deref(), Some("question 0"));
}

#[test]
fn only_a_compaction_that_keeps_events_asks_for_the_whole_transcript() {
    let comparison = CodexPlugin::target_manifest().comparison();
    // Replacing through the event just before it: nothing kept, streamed through.
    let mut right_after = conversation(3);
    right_after.events.push(compaction("k", 900, "c2"));
    // Replacing through an earlier event: the last turn is kept in its replacement history.
    let mut keeping = conversation(3);
    keeping.events.push(compaction("k", 900, "c1"));
    for (t, wholes) in [(&right_after, 0), (&keeping, 1)] {
        let (_dir, root) = root();
        let mut stream = Probe::new(t);
        let session = CodexPlugin
            .writer()
            .create_streamed(&root, TARGET, &mut stream, &options())
            .unwrap();
        assert_eq!(stream.wholes(), wholes);
        let back = CodexPlugin.read_id(&root, TARGET, &session.id).unwrap();
        comparison.diff(t, &back).unwrap();
        let created = CodexPlugin
            .writer()
            .create(&root, TARGET, t, &options())
            .unwrap();
        assert_eq!(
            lines_without_ids(&session.path, &session.id),
            lines_without_ids(&created.path, &created.id)
        );
        // The restart left no second rollout behind.
        assert_eq!(CodexPlugin.reader().list(&root, TARGET).unwrap().len(), 2);
    }
}

#[test]
fn a_stream_that_fails_midway_leaves_nothing_behind() {
    let t = conversation(20);
    let mut refused = t.clone();
    if let Body::Assistant { content, .. } = &mut refused.events[41].body {
        content.push(AssistantPart::ToolCall(ToolCall::new(
            "x".repeat(65),
            "ls",
            json!({}),
        )));
    }
    for (name, transcript, fail_at) in [("stream error", &t, Some(50)), ("refused", &refused, None)]
    {
        let (dir, root) = root();
        let mut stream = match fail_at {
            Some(n) => Probe::failing_after(transcript, n),
            None => Probe::new(transcript),
        };
        let err = CodexPlugin
            .writer()
            .create_streamed(&root, TARGET, &mut stream, &options())
            .unwrap_err();
        match name {
            "stream error" => assert_eq!(err, PluginError::Other("the source broke off".into())),
            _ => assert!(err.to_string().contains("event 41 (a10)"), "{err}"),
        }
        let left = files_under(dir.path());
        assert!(left.is_empty(), "{name}: left {left:?}");
    }
}
