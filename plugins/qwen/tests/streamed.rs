//! `Writer::create_streamed`: the chat written record by record as its events arrive is the one
//! `create` writes, byte for byte but for the uuids drawn at random (the genuine sample read
//! back, the conformance corpus, a synthetic long session), never asks for the whole
//! transcript, and a refused event or a stream that fails midway leaves nothing behind.

use std::path::{Path, PathBuf};

use handoff_qwen::QwenPlugin;
use handoff_sdk::serde_json::{self, json, Value};
use handoff_sdk::{
    AssistantPart, Body, CreateOptions, Event, EventStream, HeldEvents, Origin, Part, Plugin,
    PluginError, ReadFrom, StoreRoot, Timestamp, ToolCall, Transcript,
};

const TARGET: &str = "qwen-code";

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

/// The file's text with every uuid (`uuid`, `parentUuid`, `sessionId`) replaced by its number
/// in order of first appearance.
fn text_without_ids(path: &Path) -> String {
    let mut seen: Vec<String> = Vec::new();
    let mut out = String::new();
    for line in std::fs::read_to_string(path).unwrap().lines() {
        let record: Value = serde_json::from_str(line).unwrap();
        let mut line = line.to_owned();
        for key in ["sessionId", "uuid", "parentUuid"] {
            let Some(id) = record.get(key).and_then(Value::as_str) else {
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
    let whole = QwenPlugin.writer().create(&held, TARGET, t, &options());
    let mut probe = Probe::new(t);
    let each = QwenPlugin
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
            QwenPlugin
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
fn the_genuine_sample_read_back_is_written_alike() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/samples/7da3d710-5632-46df-bb43-bead8f22b422.jsonl");
    let t = QwenPlugin
        .reader()
        .read(ReadFrom::File(TARGET, &path))
        .unwrap();
    assert!(t.events.len() >= 4);
    assert_eq!(same_as_create("genuine", &t), None);
}

#[test]
fn every_corpus_entry_qwen_code_carries_is_written_alike() {
    let carries = handoff_qwen::manifest::target_manifest().carries;
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
                    "run_shell_command",
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
        let e = QwenPlugin
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
    // An assistant turn of an empty text only, in the eighth event: nothing Qwen Code would
    // send, refused by both.
    let mut bad = good.clone();
    bad.events[7].body = Body::Assistant {
        content: vec![AssistantPart::text("")],
        origin: Some(origin()),
    };
    bad.events.remove(8);
    let refused = same_as_create("an empty turn", &bad).expect("refused");
    assert!(refused.contains("event a2 (assistant)"), "{refused}");
}
