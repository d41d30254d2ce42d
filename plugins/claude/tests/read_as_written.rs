//! The `claude-code` reader's read of a session as its writer writes it (what the verify of a new
//! session reads): its events are made in file order as the lines arrive, and only count when
//! the walk Claude Code takes is that order. So every session this plugin writes is read so, to
//! exactly the whole read's events; any other file is read so to the same events or declined
//! with an error (the verify then reads it whole), never to other events.

use std::path::{Path, PathBuf};

use handoff_claude::{ClaudePlugin, ClaudePluginReadingAs, CLAUDE_CODE};
use handoff_conformance::{corpus, LentInSteps};
use handoff_live::session_files::session_files;
use handoff_sdk::{
    AssistantPart, Body, CreateOptions, Event, Part, Plugin, ReadFrom, ReadOutcome, StoreRoot,
    Timestamp, ToolCall, Transcript,
};
use proptest::prelude::*;

/// The events of the session file at `path` read whole, or the error.
fn whole(path: &Path) -> Result<Vec<Event>, String> {
    let mut events = Vec::new();
    ClaudePlugin
        .reader()
        .read_each(ReadFrom::File(CLAUDE_CODE, path), &mut |e| {
            events.push(e);
            true
        })
        .map(|_| events)
        .map_err(|e| e.to_string())
}

/// The events of `path` read as if its writer were writing it, `step` bytes at a time.
fn as_written(path: &Path, step: u64) -> Result<Vec<Event>, String> {
    let file = LentInSteps::new(path, step).unwrap();
    let mut events = Vec::new();
    let outcome = ClaudePlugin
        .reader()
        .read_each(ReadFrom::Written(CLAUDE_CODE, &file), &mut |e| {
            events.push(e);
            true
        })
        .map_err(|e| e.to_string())?;
    assert_eq!(outcome, ReadOutcome::Read);
    Ok(events)
}

/// `t` written by the plugin into a fresh store under `dir`: the session file.
fn written(dir: &Path, t: &Transcript) -> Option<PathBuf> {
    let root = StoreRoot::new(dir.join("store")).unwrap();
    let options = CreateOptions {
        cwd: Some("/home/dev/as-written".into()),
        locator: None,
    };
    let session = ClaudePlugin
        .writer()
        .create(&root, CLAUDE_CODE, t, &options)
        .ok()?;
    Some(session.path)
}

fn at(seconds: i64) -> Timestamp {
    Timestamp::from_millis(1_764_547_200_000 + seconds * 1000)
}

fn event(id: &str, seconds: i64, body: Body) -> Event {
    Event::new(id, at(seconds), body)
}

fn user(id: &str, seconds: i64, text: &str) -> Event {
    let content = vec![Part::Text { text: text.into() }];
    event(id, seconds, Body::User { content })
}

fn answer(id: &str, seconds: i64, parts: Vec<AssistantPart>) -> Event {
    let body = Body::Assistant {
        content: parts,
        origin: None,
    };
    event(id, seconds, body)
}

fn text(text: &str) -> AssistantPart {
    AssistantPart::Text { text: text.into() }
}

fn call(id: &str) -> AssistantPart {
    let arguments = handoff_sdk::serde_json::json!({ "path": id });
    AssistantPart::ToolCall(ToolCall::new(id, "Read", arguments))
}

fn result(id: &str, seconds: i64, call_id: &str) -> Event {
    let body = Body::ToolResult {
        call_id: call_id.into(),
        content: vec![Part::Text {
            text: format!("contents of {call_id}"),
        }],
        is_error: false,
    };
    event(id, seconds, body)
}

/// The shapes the writer lays out other than a chain of one record an event: parallel calls
/// answered in time order (results on their calls) and against it (results chained), answers
/// joined into one message, a call the session ends on.
fn shapes() -> Vec<(&'static str, Transcript)> {
    let parallel = |first: i64, second: i64| {
        Transcript::new(vec![
            user("u1", 0, "read three files"),
            answer(
                "a1",
                1,
                vec![text("reading"), call("c1"), call("c2"), call("c3")],
            ),
            result("r1", first, "c1"),
            result("r2", second, "c2"),
            result("r3", 9, "c3"),
            answer("a2", 10, vec![text("done")]),
            user("u2", 11, "thanks"),
        ])
    };
    vec![
        ("parallel results in time order", parallel(2, 3)),
        ("parallel results against time order", parallel(5, 3)),
        (
            "answers joined into one message",
            Transcript::new(vec![
                user("u1", 0, "hello"),
                answer("a1", 1, vec![text("one")]),
                answer("a2", 2, vec![text("two")]),
                answer("a3", 3, vec![text("three"), call("c1")]),
                result("r1", 4, "c1"),
                answer("a4", 5, vec![text("four")]),
            ]),
        ),
        (
            "a call the session ends on",
            Transcript::new(vec![
                user("u1", 0, "run it"),
                answer("a1", 1, vec![call("c1"), call("c2")]),
                result("r1", 2, "c1"),
            ]),
        ),
    ]
}

/// Every transcript of the conformance corpus the target carries, and every shape of the
/// writer's layout, is read as it is written, in small steps and large, to exactly the whole
/// read's events (a decline here would send every verify of such a session to a second read).
#[test]
fn every_session_the_writer_writes_is_read_as_it_is_written() {
    let corpus = corpus::entries()
        .iter()
        .map(|e| (e.name, e.transcript.clone()));
    let mut read = 0;
    for (name, t) in corpus.chain(shapes()) {
        let dir = tempfile::tempdir().unwrap();
        let Some(path) = written(dir.path(), &t) else {
            continue; // a transcript the target refuses
        };
        let whole = whole(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
        for step in [97, 1 << 16] {
            let read = as_written(&path, step).unwrap_or_else(|e| panic!("{name} ({step}): {e}"));
            assert_eq!(read, whole, "{name} ({step})");
        }
        read += 1;
    }
    assert!(read >= 15, "{read} sessions written and read");
}

/// Every Claude Code session at hand (genuine ones, public samples, the live differential's
/// mutations, real users' files) is read as it is written to the whole read's events, or declined
/// with an error: never to other events, never to events where the whole read fails.
#[test]
fn any_other_session_is_read_as_written_to_the_same_events_or_declined() {
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/samples");
    let files = session_files(&samples, "claude-code", |_| true);
    let (mut same, mut declined) = (0, 0);
    for path in &files {
        match (whole(path), as_written(path, 4096)) {
            (Ok(whole), Ok(read)) => {
                assert_eq!(read, whole, "{}", path.display());
                same += 1;
            }
            (whole, Err(e)) => {
                // At a line: the walk at the end is left to decline none of these.
                assert!(
                    !e.contains("walk"),
                    "{}: declined at the end: {e}",
                    path.display()
                );
                declined += 1;
                drop(whole);
            }
            (Err(whole), Ok(read)) => panic!(
                "{}: read as written to {} events, where the whole read fails: {whole}",
                path.display(),
                read.len()
            ),
        }
    }
    assert!(files.len() >= 15, "{} session files", files.len());
    // Claude Code's own sessions are mostly in file order too; the rest are declined.
    assert!(
        same >= 5 && declined >= 1,
        "{same} read as written, {declined} declined"
    );
}

/// A rewind (a prompt hung on a record before the last turn, as Claude Code's `/rewind` writes
/// it) is declined at its own line, not after the whole file: a source read in one pass that
/// declines is read again whole, so the earlier, the cheaper.
#[test]
fn a_rewind_is_declined_at_its_prompt() {
    use handoff_sdk::serde_json::{self, Value};
    let dir = tempfile::tempdir().unwrap();
    let t = Transcript::new(vec![
        user("u1", 0, "first"),
        answer("a1", 1, vec![text("one")]),
        user("u2", 2, "second"),
        answer("a2", 3, vec![text("two")]),
    ]);
    let path = written(dir.path(), &t).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // The prompt asked again after the first answer: a new branch off `a1`.
    let mut again = lines[2].clone();
    again["uuid"] = "0b8f0a4e-5c1a-4d3e-9f00-000000000001".into();
    again["parentUuid"] = lines[1]["uuid"].clone();
    again["message"]["content"] = "second, asked again".into();
    let rewound = format!("{text}{again}\n");
    std::fs::write(&path, rewound).unwrap();

    let whole = whole(&path).unwrap();
    assert_eq!(whole.len(), 3, "the walk takes the new branch: {whole:?}");
    let declined = as_written(&path, 1 << 16).unwrap_err();
    let line = lines.len() + 1;
    assert!(
        declined.contains(&format!(":{line}: a prompt off the records before it")),
        "{declined}"
    );
}

/// Read as written (what the host does first with a source file), a session is read as the Claude
/// Code version asked for sends it, as its whole read is: where the versions' rules give other
/// events, the old version's are read.
#[test]
fn a_session_read_as_written_is_read_as_the_version_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    // Claude Code 2.1.197 sends a `KillShell` call as `TaskStop`; 2.1.332 as it is recorded.
    let arguments = handoff_sdk::serde_json::json!({ "shell_id": "s1" });
    let task = ToolCall::new("t1", "KillShell", arguments);
    let t = Transcript::new(vec![
        user("u1", 0, "delegate it"),
        answer("a1", 1, vec![AssistantPart::ToolCall(task)]),
        result("r1", 2, "t1"),
        answer("a2", 3, vec![text("done")]),
    ]);
    let written = written(dir.path(), &t).unwrap();
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/samples");
    let mut files = session_files(&samples, "claude-code", |_| true);
    files.push(written.clone());
    // The host's way (the SDK's reader as a version) and the live tier's.
    let sdk = ClaudePlugin.reader().reading_as("2.1.197").unwrap();
    let live = ClaudePluginReadingAs::version("2.1.197");
    for old in [&*sdk, live.reader()] {
        let read_as = |from: ReadFrom<'_>| {
            let mut events = Vec::new();
            old.read_each(from, &mut |e| {
                events.push(e);
                true
            })
            .map(|_| events)
            .map_err(|e| e.to_string())
        };
        let differing = read_as_written_to_the_whole_reads_events(&files, read_as);
        assert!(differing.contains(&written), "{differing:?}");
    }
}

/// Each of `files` that `read_as` reads whole and as written: asserted to be the same events.
/// The files where those are not the events of the newest Claude Code's whole read.
fn read_as_written_to_the_whole_reads_events(
    files: &[PathBuf],
    read_as: impl Fn(ReadFrom<'_>) -> Result<Vec<Event>, String>,
) -> Vec<PathBuf> {
    let mut differing = Vec::new();
    for path in files {
        let file = LentInSteps::new(path, 1 << 16).unwrap();
        let (Ok(old_whole), Ok(old_written)) = (
            read_as(ReadFrom::File(CLAUDE_CODE, path)),
            read_as(ReadFrom::Written(CLAUDE_CODE, &file)),
        ) else {
            continue;
        };
        assert_eq!(old_written, old_whole, "{}", path.display());
        if whole(path).is_ok_and(|newest| newest != old_whole) {
            differing.push(path.clone());
        }
    }
    differing
}

/// A change to one line of a session the writer wrote.
#[derive(Clone, Debug)]
enum Change {
    /// Lines `a` and `b` trade places.
    Swap(usize, usize),
    /// Line `a` is written again after line `b`.
    Repeat(usize, usize),
    /// Line `a` is gone.
    Drop(usize),
    /// Line `a`'s parent becomes line `b`'s record.
    Reparent(usize, usize),
}

fn changed(lines: &[String], change: &Change) -> Vec<String> {
    let n = lines.len();
    let mut lines = lines.to_vec();
    match *change {
        Change::Swap(a, b) => lines.swap(a % n, b % n),
        Change::Repeat(a, b) => {
            let line = lines[a % n].clone();
            lines.insert(b % n + 1, line);
        }
        Change::Drop(a) => {
            lines.remove(a % n);
        }
        Change::Reparent(a, b) => {
            let parent: handoff_sdk::serde_json::Value =
                handoff_sdk::serde_json::from_str(&lines[b % n]).unwrap();
            let mut record: handoff_sdk::serde_json::Value =
                handoff_sdk::serde_json::from_str(&lines[a % n]).unwrap();
            record["parentUuid"] = parent["uuid"].clone();
            lines[a % n] = record.to_string();
        }
    }
    lines
}

fn change() -> impl Strategy<Value = Change> {
    let line = 0usize..64;
    prop_oneof![
        (line.clone(), line.clone()).prop_map(|(a, b)| Change::Swap(a, b)),
        (line.clone(), line.clone()).prop_map(|(a, b)| Change::Repeat(a, b)),
        line.clone().prop_map(Change::Drop),
        (line.clone(), line).prop_map(|(a, b)| Change::Reparent(a, b)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Sessions the writer wrote, then changed (lines swapped, repeated, dropped, re-parented:
    /// branches, records before their parents, uuids written again): read as written to the
    /// whole read's events, or declined.
    #[test]
    fn a_changed_session_is_read_as_written_to_the_same_events_or_declined(
        shape in 0usize..3,
        changes in proptest::collection::vec(change(), 1..3),
    ) {
        let t = match shape {
            0 => corpus::entry("parallel-tool-calls").unwrap().transcript.clone(),
            1 => corpus::entry("compaction").unwrap().transcript.clone(),
            _ => shapes().swap_remove(1).1,
        };
        let dir = tempfile::tempdir().unwrap();
        let path = written(dir.path(), &t).unwrap();
        let lines: Vec<String> =
            std::fs::read_to_string(&path).unwrap().lines().map(str::to_owned).collect();
        let lines = changes.iter().fold(lines, |lines, c| changed(&lines, c));
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        match (whole(&path), as_written(&path, 257)) {
            (Ok(whole), Ok(read)) => prop_assert_eq!(read, whole),
            (_, Err(_)) => {}
            (Err(whole), Ok(read)) => prop_assert!(
                false,
                "read as written to {} events, where the whole read fails: {}",
                read.len(),
                whole
            ),
        }
    }
}
