//! `Writer::create_streamed`: the log written line by line as its events arrive is the one
//! `create` writes, byte for byte but for the uuids drawn at random (an image, thinking and a
//! failed call, the conformance corpus, a synthetic long session), never asks for the whole
//! transcript, and a refused event or a stream that fails midway leaves nothing behind.

use std::path::Path;

use handoff_copilot::CopilotPlugin;
use handoff_sdk::serde_json::{self, json, Value};
use handoff_sdk::{
    AssistantPart, Body, CreateOptions, Event, EventStream, HeldEvents, Origin, Part, Plugin,
    PluginError, ReadFrom, StoreRoot, Timestamp, ToolCall, Transcript,
};

use handoff_copilot::TARGET;

/// A held transcript that counts its `whole` calls and can fail after some events.
struct Probe<'a> {
    held: HeldEvents<'a>,
    taken: usize,
    fail_after: Option<usize>,
    wholes: usize,
}

impl<'a> Probe<'a> {
    fn new(t: &'a Transcript) -> Self {
        Probe {
            held: HeldEvents::new(t),
            taken: 0,
            fail_after: None,
            wholes: 0,
        }
    }
}

impl EventStream for Probe<'_> {
    fn next_event(&mut self) -> Result<Option<Event>, PluginError> {
        if self.fail_after == Some(self.taken) {
            return Err(PluginError::Other("the source broke off".into()));
        }
        self.taken += 1;
        self.held.next_event()
    }

    fn whole(&mut self) -> Result<&Transcript, PluginError> {
        self.wholes += 1;
        self.held.whole()
    }
}

fn options() -> CreateOptions {
    CreateOptions {
        cwd: Some("/home/dev/streamed".into()),
        locator: Some("conv-s".into()),
    }
}

/// The file's text with every uuid (each line's `id` and `parentId`, the data's `sessionId` and
/// `messageId`) replaced by its number in order of first appearance.
fn text_without_ids(path: &Path) -> String {
    let mut seen: Vec<String> = Vec::new();
    let mut out = String::new();
    for line in std::fs::read_to_string(path).unwrap().lines() {
        let record: Value = serde_json::from_str(line).unwrap();
        let mut line = line.to_owned();
        for key in ["/id", "/parentId", "/data/sessionId", "/data/messageId"] {
            let Some(id) = record.pointer(key).and_then(Value::as_str) else {
                continue;
            };
            if !seen.iter().any(|s| s == id) {
                seen.push(id.to_owned());
            }
        }
        for (n, id) in seen.iter().enumerate() {
            line = line.replace(&format!("\"{id}\""), &format!("\"id#{n}\""));
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// Everything under `dir`, as paths relative to it.
fn files_under(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten() {
            let p = e.unwrap().path();
            out.push(p.strip_prefix(dir).unwrap().display().to_string());
            if p.is_dir() {
                stack.push(p);
            }
        }
    }
    out.sort();
    out
}

/// `create` and `create_streamed` of `t` into two fresh stores: both refuse it with the same
/// error (the streamed one leaving nothing behind), or both write the same bytes; the stream is
/// never asked for the whole transcript. Returns the refusal, if they refused it.
fn same_as_create(name: &str, t: &Transcript) -> Option<String> {
    let (held_dir, streamed_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let held = StoreRoot::new(held_dir.path()).unwrap();
    let streamed = StoreRoot::new(streamed_dir.path()).unwrap();
    let whole = CopilotPlugin.writer().create(&held, TARGET, t, &options());
    let mut probe = Probe::new(t);
    let each = CopilotPlugin
        .writer()
        .create_streamed(&streamed, TARGET, &mut probe, &options());
    let refused = match (whole, each) {
        (Err(a), Err(b)) => {
            assert_eq!(a.to_string(), b.to_string(), "{name}");
            assert_eq!(
                files_under(streamed_dir.path()),
                Vec::<String>::new(),
                "{name}"
            );
            Some(a.to_string())
        }
        (Ok(a), Ok(b)) => {
            assert_eq!(
                text_without_ids(&a.path),
                text_without_ids(&b.path),
                "{name}: the streamed write differs"
            );
            CopilotPlugin
                .reader()
                .read(ReadFrom::File(TARGET, &b.path))
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            None
        }
        (a, b) => panic!("{name}: create {a:?}, create_streamed {b:?}"),
    };
    assert_eq!(probe.wholes, 0, "{name}");
    refused
}

fn origin() -> Origin {
    Origin {
        provider: "anthropic".into(),
        model: Some("claude-sonnet-4-5".into()),
        api: Some("anthropic-messages".into()),
    }
}

#[test]
fn an_image_thinking_and_a_failed_call_are_written_alike() {
    let mut t = turns(2);
    if let Body::User { content } = &mut t.events[0].body {
        content.push(Part::Image {
            media_type: "image/png".into(),
            data: vec![0x89, b'P', b'N', b'G', 0, 1, 2],
        });
    }
    if let Body::Assistant { content, .. } = &mut t.events[1].body {
        content.insert(0, AssistantPart::text("Let me look."));
        content.insert(
            0,
            AssistantPart::Thinking(handoff_sdk::Thinking {
                text: "A tiny picture.".into(),
                signature: None,
            }),
        );
    }
    assert_eq!(same_as_create("image, thinking, failed call", &t), None);
}

#[test]
fn every_corpus_entry_copilot_cli_carries_is_written_alike() {
    let carries = handoff_copilot::target_manifest().carries;
    let mut written = 0;
    for entry in handoff_conformance::corpus::entries() {
        if entry.transcript.first_uncarried(&carries).is_some() {
            continue;
        }
        same_as_create(entry.name, &entry.transcript);
        written += 1;
    }
    assert!(written >= 5, "only {written} corpus entries carried");
}

#[test]
fn a_long_synthetic_session_is_written_alike_as_it_streams() {
    let t = handoff_sdk::transcript::synthetic::tool_turns(300, &origin());
    assert_eq!(same_as_create("tool turns", &t), None);
}

fn event(id: &str, ms: i64, body: Body) -> Event {
    Event::new(id, Timestamp::from_millis(1_795_999_300_000 + ms), body)
}

fn turns(n: usize) -> Transcript {
    let mut events = Vec::new();
    for i in 0..n {
        let ms = i as i64 * 10;
        events.push(event(
            &format!("u{i}"),
            ms,
            Body::User {
                content: vec![Part::text(format!("question {i}"))],
            },
        ));
        events.push(event(
            &format!("a{i}"),
            ms + 1,
            Body::Assistant {
                content: vec![AssistantPart::ToolCall(ToolCall::new(
                    format!("call_{i}"),
                    "bash",
                    json!({"command": "ls"}),
                ))],
                origin: Some(origin()),
            },
        ));
        events.push(event(
            &format!("r{i}"),
            ms + 2,
            Body::ToolResult {
                call_id: format!("call_{i}"),
                content: vec![Part::text("a.txt")],
                is_error: i % 2 == 1,
            },
        ));
    }
    Transcript::new(events)
}

#[test]
fn a_refused_event_or_a_failing_stream_leaves_nothing_behind() {
    let good = turns(4);
    for fail_after in [0, 1, 5, good.events.len()] {
        let dir = tempfile::tempdir().unwrap();
        let root = StoreRoot::new(dir.path()).unwrap();
        let mut probe = Probe {
            fail_after: Some(fail_after),
            ..Probe::new(&good)
        };
        let e = CopilotPlugin
            .writer()
            .create_streamed(&root, TARGET, &mut probe, &options())
            .unwrap_err();
        assert!(e.to_string().contains("broke off"), "{fail_after}: {e}");
        assert_eq!(
            files_under(dir.path()),
            Vec::<String>::new(),
            "{fail_after}"
        );
    }
    // The eighth event calls twice and the later call is answered first: the CLI sends results
    // in the order of the calls, so the tenth event is refused by both.
    let mut bad = good.clone();
    if let Body::Assistant { content, .. } = &mut bad.events[7].body {
        content.push(AssistantPart::ToolCall(ToolCall::new(
            "call_2b",
            "bash",
            json!({"command": "pwd"}),
        )));
    }
    let mut first_answer = bad.events[8].clone();
    first_answer.id = "r2b".into();
    first_answer.body = Body::ToolResult {
        call_id: "call_2b".into(),
        content: vec![Part::text("/")],
        is_error: false,
    };
    bad.events.insert(8, first_answer);
    bad.validate().unwrap();
    let refused = same_as_create("results out of the calls' order", &bad).expect("refused");
    assert!(refused.contains("event 9 (r2)"), "{refused}");
}
