//! `Writer::create_streamed`: the session written event by event is the one `create` writes, byte
//! for byte but for the ids drawn at random (the samples read back, the conformance corpus, the
//! synthetic long sessions); it asks for the whole transcript only when a compaction keeps
//! events before it; and a refused event or a stream that fails midway leaves nothing behind.

mod common;

use std::path::PathBuf;

use common::*;
use handoff_live::streamed::{files_under, Probe, StreamedWrite};
use handoff_pi::{PiPlugin, TARGET};
use handoff_sdk::serde_json::json;
use handoff_sdk::{CreateOptions, Origin, Part, Plugin, StoreRoot, Transcript};

/// The ids (the header's, each entry's `id`, `parentId` and `firstKeptEntryId`) are drawn at
/// random.
fn write() -> StreamedWrite<'static> {
    StreamedWrite {
        plugin: &PiPlugin,
        target: TARGET,
        options: options(),
        ids: &["/id", "/parentId", "/firstKeptEntryId"],
    }
}

fn options() -> CreateOptions {
    CreateOptions {
        cwd: Some(CWD.into()),
        locator: Some("conv-s".into()),
    }
}

/// Both writes refuse `t` alike, or write it alike and it reads back with every event. How
/// often the stream was asked for the whole transcript.
fn same_as_create(name: &str, t: &Transcript) -> usize {
    let compared = write().same_as_create(name, t);
    if let Some(read) = compared.read_back {
        assert_eq!(read.events.len(), t.events.len(), "{name}");
    }
    compared.wholes
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
    Origin::new("anthropic", "claude-sonnet-4-5", "anthropic-messages")
}

#[test]
fn every_sample_read_back_is_written_alike_without_the_whole_transcript() {
    let files = samples();
    assert!(files.len() >= 5, "{files:?}");
    for path in files {
        let t = write().read(&path).unwrap();
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
    let written = handoff_live::streamed::each_corpus_entry_carried(&carries, |name, t| {
        same_as_create(name, t);
    });
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
    write().assert_broken_streams_leave_nothing(&good, &[0, 1, 2, 7, good.events.len()]);
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
