//! `Writer::create_streamed`: the session written event by event is the one `create` writes, byte
//! for byte but for the ids drawn at random (the samples read back, the conformance corpus, the
//! synthetic long sessions); it asks for the whole transcript only when a compaction keeps
//! events before it; and a refused event or a stream that fails midway leaves nothing behind.

mod common;

use std::path::{Path, PathBuf};

use common::*;
use handoff_pi::{PiPlugin, TARGET};
use handoff_sdk::serde_json::{self, json, Value};
use handoff_sdk::{
    CreateOptions, Event, EventStream, HeldEvents, Origin, Part, Plugin, PluginError, ReadFrom,
    StoreRoot, Transcript,
};

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
        cwd: Some(CWD.into()),
        locator: Some("conv-s".into()),
    }
}

/// The file's text with every id (the header's, each entry's `id`, `parentId` and
/// `firstKeptEntryId`) replaced by its number in order of first appearance: two writes of one
/// transcript give the same text exactly when they wrote the same bytes but for fresh ids.
fn text_without_ids(path: &Path) -> String {
    let mut seen: Vec<String> = Vec::new();
    let mut out = String::new();
    for line in std::fs::read_to_string(path).unwrap().lines() {
        let entry: Value = serde_json::from_str(line).unwrap();
        let mut line = line.to_owned();
        for key in ["id", "parentId", "firstKeptEntryId"] {
            let Some(id) = entry.get(key).and_then(Value::as_str) else {
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
/// error (the streamed one leaving nothing behind), or both write the same bytes. Returns how
/// often the stream was asked for the whole transcript.
fn same_as_create(name: &str, t: &Transcript) -> usize {
    let (held_dir, streamed_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let held = StoreRoot::new(held_dir.path()).unwrap();
    let streamed = StoreRoot::new(streamed_dir.path()).unwrap();
    let whole = PiPlugin.writer().create(&held, TARGET, t, &options());
    let mut probe = Probe::new(t);
    let each = PiPlugin
        .writer()
        .create_streamed(&streamed, TARGET, &mut probe, &options());
    match (whole, each) {
        (Err(a), Err(b)) => {
            assert_eq!(a.to_string(), b.to_string(), "{name}");
            assert_eq!(
                files_under(streamed_dir.path()),
                Vec::<String>::new(),
                "{name}"
            );
        }
        (Ok(a), Ok(b)) => {
            assert_eq!(
                text_without_ids(&a.path),
                text_without_ids(&b.path),
                "{name}: the streamed write differs"
            );
            let read = PiPlugin
                .reader()
                .read(ReadFrom::File(TARGET, &b.path))
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(read.events.len(), t.events.len(), "{name}");
        }
        (a, b) => panic!("{name}: create {a:?}, create_streamed {b:?}"),
    }
    probe.wholes
}

fn samples() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/samples");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .flat_map(|d| std::fs::read_dir(d.unwrap().path()).into_iter().flatten())
        .map(|f| f.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    files
}

fn origin() -> Origin {
    Origin {
        provider: "anthropic".into(),
        model: Some("claude-sonnet-4-5".into()),
        api: Some("anthropic-messages".into()),
    }
}

#[test]
fn every_sample_read_back_is_written_alike_without_the_whole_transcript() {
    let files = samples();
    assert!(files.len() >= 5, "{files:?}");
    for path in files {
        let t = PiPlugin
            .reader()
            .read(ReadFrom::File(TARGET, &path))
            .unwrap();
        let name = path.display().to_string();
        let compaction_keeps = t.events.iter().enumerate().any(|(i, e)| {
            matches!(&e.body, handoff_sdk::Body::Compaction { replaces_through, .. }
                if t.events[i - 1].id != *replaces_through)
        });
        let wholes = same_as_create(&name, &t);
        assert_eq!(wholes, usize::from(compaction_keeps), "{name}");
    }
}

#[test]
fn every_corpus_entry_pi_carries_is_written_alike() {
    let carries = handoff_pi::target_manifest().carries;
    let mut written = 0;
    for entry in handoff_conformance::corpus::entries() {
        if entry.transcript.first_uncarried(&carries).is_some() {
            continue;
        }
        same_as_create(entry.name, &entry.transcript);
        written += 1;
    }
    assert!(written >= 10, "only {written} corpus entries carried");
}

#[test]
fn long_synthetic_sessions_are_written_alike_as_they_stream() {
    let tool_turns = handoff_sdk::transcript::synthetic::tool_turns(200, &origin());
    assert_eq!(same_as_create("tool turns", &tool_turns), 0);
    // Images every 7th turn, a compaction of everything before it every 50th.
    let long = Transcript::new(
        handoff_sdk::transcript::synthetic::LongSession::new(160, &origin(), (7, 3000), 50)
            .collect(),
    );
    assert_eq!(same_as_create("long session", &long), 0);
}

#[test]
fn the_first_model_change_waits_for_the_first_turn_that_names_its_model() {
    let no_model = Some(Origin {
        model: None,
        ..origin()
    });
    let late = transcript(vec![
        user("u1", 0, "one"),
        assistant("a1", 1, vec![text("no model")], no_model.clone()),
        user("u2", 2, "two"),
        assistant("a2", 3, vec![text("named")], claude()),
        assistant("a3", 4, vec![text("switched")], gpt()),
    ]);
    assert_eq!(same_as_create("late model", &late), 0);
    let never = transcript(vec![
        user("u1", 0, "one"),
        assistant("a1", 1, vec![text("no model")], no_model),
        user("u2", 2, "two"),
    ]);
    assert_eq!(same_as_create("no model", &never), 0);
}

#[test]
fn only_a_compaction_that_keeps_events_asks_for_the_whole_transcript() {
    let keeps_nothing = transcript(vec![
        user("u1", 0, "one"),
        assistant("a1", 1, vec![text("ok")], claude()),
        compaction("c1", 2, "one, ok", "a1"),
        user("u2", 3, "two"),
    ]);
    assert_eq!(same_as_create("keeps nothing", &keeps_nothing), 0);
    // A compaction that keeps u2 and a2, hidden by a later one that replaces through it.
    let hidden = transcript(vec![
        user("u1", 0, "one"),
        assistant("a1", 1, vec![text("ok")], claude()),
        user("u2", 2, "two"),
        assistant("a2", 3, vec![text("ok")], claude()),
        compaction("c1", 4, "one", "a1"),
        compaction("c2", 5, "all", "c1"),
        user("u3", 6, "three"),
    ]);
    assert_eq!(same_as_create("hidden keeping compaction", &hidden), 1);
    // The same as the last compaction: refused by both.
    let mut last = hidden.clone();
    last.events.truncate(5);
    assert_eq!(same_as_create("last compaction keeps events", &last), 1);
}

#[test]
fn a_refused_event_or_a_failing_stream_leaves_nothing_behind() {
    let mut events = vec![user("u1", 0, "one")];
    for i in 0..6 {
        events.push(assistant(
            &format!("a{i}"),
            2 * i + 1,
            vec![call(&format!("c{i}"), "Bash", json!({"command": "ls"}))],
            claude(),
        ));
        events.push(result(
            &format!("r{i}"),
            2 * i + 2,
            &format!("c{i}"),
            vec![Part::text("ok")],
            false,
        ));
    }
    let good = transcript(events);
    for fail_after in [0, 1, 2, 7, good.events.len()] {
        let dir = tempfile::tempdir().unwrap();
        let root = StoreRoot::new(dir.path()).unwrap();
        let mut probe = Probe {
            fail_after: Some(fail_after),
            ..Probe::new(&good)
        };
        let e = PiPlugin
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
    // Arguments pi cannot keep, in the ninth event: refused as `create` refuses them.
    let mut bad = good.clone();
    if let handoff_sdk::Body::Assistant { content, .. } = &mut bad.events[9].body {
        content[0] = call("c4", "Bash", json!(["not", "an", "object"]));
    }
    assert_eq!(same_as_create("non-object arguments", &bad), 0);
    let dir = tempfile::tempdir().unwrap();
    let root = StoreRoot::new(dir.path()).unwrap();
    let e = PiPlugin
        .writer()
        .create_streamed(&root, TARGET, &mut Probe::new(&bad), &options())
        .unwrap_err();
    assert!(e.to_string().contains("event 9 (a4)"), "{e}");
    assert_eq!(files_under(dir.path()), Vec::<String>::new());
}
