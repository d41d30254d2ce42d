//! The `claude-code` target's streamed seams: `create_streamed` writes what `create` writes (the
//! same records but for fresh ids), starts over with the whole transcript only when an event
//! needs look-ahead, and leaves nothing behind when it fails; `read_path_each` and
//! `read_path_cwd` give what `read_path` gives.

use std::path::{Path, PathBuf};

use handoff_claude::{ClaudePlugin, CLAUDE_CODE};
use handoff_conformance::corpus;
use handoff_live::streamed::{files_under, Probe};
use handoff_sdk::serde_json::{self, Value};
use handoff_sdk::{
    AssistantPart, Body, CreateOptions, Event, Plugin, PluginError, ReadFrom, Signature, StoreRoot,
    Thinking, Timestamp, Transcript,
};

const CWD: &str = "/home/dev/streamed";

fn options() -> CreateOptions {
    CreateOptions {
        cwd: Some(CWD.into()),
        locator: Some("conv-s".into()),
    }
}

/// A record with its ids (record uuids, session id, message ids) numbered by first appearance,
/// so two writes of one transcript compare equal exactly when they wrote the same records.
fn normalised(path: &Path) -> Vec<Value> {
    let mut seen: Vec<String> = Vec::new();
    let mut number = |v: &mut Value| {
        if let Some(s) = v.as_str() {
            let n = seen.iter().position(|x| x == s).unwrap_or_else(|| {
                seen.push(s.to_owned());
                seen.len() - 1
            });
            *v = Value::from(format!("id#{n}"));
        }
    };
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|line| {
            let mut r: Value = serde_json::from_str(line).unwrap();
            for key in [
                "uuid",
                "parentUuid",
                "logicalParentUuid",
                "sourceToolAssistantUUID",
                "sessionId",
            ] {
                if let Some(v) = r.get_mut(key) {
                    number(v);
                }
            }
            if let Some(v) = r.pointer_mut("/message/id") {
                number(v);
            }
            r
        })
        .collect()
}

/// `create` and `create_streamed` of `t` in two fresh stores: both refuse it with the same error,
/// or both write the same records, which read back equal (under the target's comparison, to `t`
/// too). Returns how often the stream was asked for the whole transcript.
fn same_as_create(name: &str, t: &Transcript) -> usize {
    let dirs = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let held = StoreRoot::new(dirs.0.path().join("store")).unwrap();
    let streamed = StoreRoot::new(dirs.1.path().join("store")).unwrap();
    let whole = ClaudePlugin
        .writer()
        .create(&held, CLAUDE_CODE, t, &options());
    let mut probe = Probe::new(t);
    let before = files_under(dirs.1.path());
    let each =
        ClaudePlugin
            .writer()
            .create_streamed(&streamed, CLAUDE_CODE, &mut probe, &options());
    let (whole, each) = match (whole, each) {
        (Err(a), Err(b)) => {
            assert_eq!(a.to_string(), b.to_string(), "{name}");
            assert_eq!(files_under(dirs.1.path()), before, "{name}: left behind");
            return probe.wholes();
        }
        (Ok(a), Ok(b)) => (a, b),
        (a, b) => panic!("{name}: create {a:?}, create_streamed {b:?}"),
    };
    assert_eq!(
        normalised(&whole.path),
        normalised(&each.path),
        "{name}: the records differ"
    );
    let read = |p: &Path| {
        ClaudePlugin
            .reader()
            .read(ReadFrom::File(CLAUDE_CODE, p))
            .unwrap()
    };
    let (a, b) = (read(&whole.path), read(&each.path));
    let target = handoff_sdk::Plugin::manifest(&handoff_claude::ClaudePlugin);
    let cmp = target.target(CLAUDE_CODE).unwrap().comparison();
    cmp.diff(&a, &b).unwrap_or_else(|d| panic!("{name}: {d}"));
    cmp.diff(t, &b).unwrap_or_else(|d| panic!("{name}: {d}"));
    probe.wholes()
}

/// The transcripts the engine would hand over: valid, with no part the target does not carry.
fn writable(t: &Transcript) -> bool {
    t.validate().is_ok()
        && handoff_sdk::Plugin::manifest(&handoff_claude::ClaudePlugin)
            .target(CLAUDE_CODE)
            .unwrap()
            .check_carried(t)
            .is_ok()
}

fn samples() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/samples");
    let mut files: Vec<PathBuf> = std::fs::read_dir(root)
        .unwrap()
        .flat_map(|d| std::fs::read_dir(d.unwrap().path()).unwrap())
        .map(|f| f.unwrap().path())
        .collect();
    files.sort();
    files
}

fn ev(id: &str, body: Body) -> Event {
    Event::new(id, Timestamp::from_millis(1_764_000_000_000), body)
}

fn user(id: &str) -> Event {
    ev(id, Body::user_text(format!("prompt {id}")))
}

fn reply(id: &str) -> Event {
    ev(
        id,
        Body::assistant(vec![AssistantPart::text(format!("reply {id}"))]),
    )
}

fn compaction(id: &str, through: &str) -> Event {
    ev(
        id,
        Body::Compaction {
            summary: format!("summary {id}"),
            replaces_through: through.into(),
        },
    )
}

/// Thinking by another provider only: a turn Claude Code is not given (nothing is written).
fn foreign_thinking(id: &str) -> Event {
    ev(
        id,
        Body::assistant(vec![AssistantPart::Thinking(Thinking {
            text: "hmm".into(),
            signature: Some(Signature {
                provider: "openai".into(),
                model: None,
                value: "enc".into(),
                redacted: false,
            }),
        })]),
    )
}

fn transcript(events: Vec<Event>) -> Transcript {
    let mut t = Transcript::new(events);
    t.cwd = Some(CWD.into());
    t
}

#[test]
fn every_corpus_entry_and_sample_is_written_as_create_writes_it_without_starting_over() {
    let mut compared = 0;
    for entry in corpus::entries() {
        if writable(&entry.transcript) {
            assert_eq!(
                same_as_create(entry.name, &entry.transcript),
                0,
                "{}",
                entry.name
            );
            compared += 1;
        }
    }
    for path in samples() {
        let t = ClaudePlugin
            .reader()
            .read(ReadFrom::File(CLAUDE_CODE, &path))
            .unwrap();
        if writable(&t) {
            let name = path.display().to_string();
            assert_eq!(same_as_create(&name, &t), 0, "{name}");
            compared += 1;
        }
    }
    // The corpus's compaction, images, signed thinking and parallel calls among them.
    assert!(compared >= 14, "{compared} compared");
}

#[test]
fn only_a_compaction_that_keeps_events_starts_over() {
    // Replacing through the event just written, or through an unwritten one after it: no
    // look-ahead.
    let plain = transcript(vec![
        user("u"),
        reply("a"),
        compaction("c", "a"),
        user("u2"),
    ]);
    assert_eq!(same_as_create("plain", &plain), 0);
    let after_unwritten = transcript(vec![
        user("u"),
        reply("a"),
        foreign_thinking("t"),
        compaction("c", "t"),
        compaction("c2", "c"),
        user("u2"),
    ]);
    assert_eq!(same_as_create("after unwritten", &after_unwritten), 0);
    let through_written = transcript(vec![
        user("u"),
        reply("a"),
        foreign_thinking("t"),
        compaction("c", "a"),
        user("u2"),
    ]);
    assert_eq!(
        same_as_create("through the last written", &through_written),
        0
    );
    // Keeping `a` (and, further on, `u2` and `b`): the boundary belongs before them.
    let keeps = transcript(vec![
        user("u"),
        reply("a"),
        compaction("c", "u"),
        user("u2"),
        reply("b"),
        compaction("c2", "c"),
    ]);
    assert_eq!(same_as_create("keeps", &keeps), 1);
    // A refused compaction is refused the same way after starting over.
    let orphan = transcript(vec![
        user("u"),
        reply("a"),
        compaction("c", "u"),
        compaction("c2", "u"),
    ]);
    assert_eq!(same_as_create("keeps another compaction", &orphan), 1);
    let first = transcript(vec![foreign_thinking("t"), compaction("c", "t"), user("u")]);
    assert_eq!(same_as_create("replaces nothing", &first), 0);
}

#[test]
fn without_a_cwd_in_the_options_it_starts_over_with_the_transcripts() {
    let t = transcript(vec![user("u"), reply("a")]);
    let dir = tempfile::tempdir().unwrap();
    let root = StoreRoot::new(dir.path().join("store")).unwrap();
    let mut probe = Probe::new(&t);
    let s = ClaudePlugin
        .writer()
        .create_streamed(&root, CLAUDE_CODE, &mut probe, &CreateOptions::default())
        .unwrap();
    assert_eq!(probe.wholes(), 1);
    let back = ClaudePlugin
        .reader()
        .read(ReadFrom::File(CLAUDE_CODE, &s.path))
        .unwrap();
    assert_eq!(back.cwd.as_deref(), Some(CWD));
    assert_eq!(back.events.len(), 2);
}

#[test]
fn a_failure_midway_leaves_no_file_and_no_folder() {
    let t = corpus::entry("parallel-tool-calls")
        .unwrap()
        .transcript
        .clone();
    assert!(t.events.len() > 3);
    let dir = tempfile::tempdir().unwrap();
    let root = StoreRoot::new(dir.path().join("store")).unwrap();
    let before = files_under(dir.path());
    let mut probe = Probe::failing_after(&t, 3);
    let err = ClaudePlugin
        .writer()
        .create_streamed(&root, CLAUDE_CODE, &mut probe, &options())
        .unwrap_err();
    assert_eq!(err, PluginError::Other("the source broke off".into()));
    assert_eq!(probe.taken(), 3, "it stops at the first error");
    assert_eq!(files_under(dir.path()), before, "nothing left behind");
    // An event it refuses midway (Anthropic thinking without its signature), named by its index.
    let mut refused = transcript(vec![user("u"), reply("a"), user("u2"), reply("b")]);
    refused.events[3].body = Body::Assistant {
        content: vec![AssistantPart::Thinking(Thinking {
            text: "hmm".into(),
            signature: None,
        })],
        origin: Some(handoff_sdk::Origin {
            provider: "anthropic".into(),
            model: None,
            api: None,
        }),
    };
    let err = ClaudePlugin
        .writer()
        .create_streamed(&root, CLAUDE_CODE, &mut Probe::new(&refused), &options())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("event 3 (b)") && err.contains("signature"),
        "{err}"
    );
    assert_eq!(files_under(dir.path()), before, "nothing left behind");
    // Nothing to write at all.
    let empty = transcript(vec![foreign_thinking("t")]);
    let err = ClaudePlugin
        .writer()
        .create_streamed(&root, CLAUDE_CODE, &mut Probe::new(&empty), &options())
        .unwrap_err()
        .to_string();
    assert!(err.contains("empty conversation"), "{err}");
    assert_eq!(files_under(dir.path()), before, "nothing left behind");
}

/// The files `read_path` is asked to read: the samples (the genuine 2.1.197 sessions among them,
/// the same files as /work/shared/samples/genuine/claude-code-2.1.197) and what `create` writes
/// of every corpus entry it carries.
fn files_to_read(store: &StoreRoot) -> Vec<PathBuf> {
    let mut files = samples();
    for entry in corpus::entries() {
        if let Ok(s) =
            ClaudePlugin
                .writer()
                .create(store, CLAUDE_CODE, &entry.transcript, &options())
        {
            files.push(s.path);
        }
    }
    files
}

#[test]
fn read_path_each_and_read_path_cwd_give_what_read_path_gives() {
    let dir = tempfile::tempdir().unwrap();
    let store = StoreRoot::new(dir.path().join("store")).unwrap();
    let files = files_to_read(&store);
    assert!(files.len() >= 15, "{} files", files.len());
    for path in files {
        let name = path.display();
        let whole = ClaudePlugin
            .reader()
            .read(ReadFrom::File(CLAUDE_CODE, &path))
            .unwrap();
        let mut each = Vec::new();
        ClaudePlugin
            .reader()
            .read_each(ReadFrom::File(CLAUDE_CODE, &path), &mut |e| {
                each.push(e);
                true
            })
            .unwrap();
        assert_eq!(each, whole.events, "{name}");
        let cwd = ClaudePlugin
            .reader()
            .cwd(ReadFrom::File(CLAUDE_CODE, &path))
            .unwrap();
        assert_eq!(cwd, whole.cwd, "{name}");
        // The sink can stop it.
        let mut taken = 0;
        ClaudePlugin
            .reader()
            .read_each(ReadFrom::File(CLAUDE_CODE, &path), &mut |_| {
                taken += 1;
                false
            })
            .unwrap();
        assert_eq!(taken, usize::from(!whole.events.is_empty()), "{name}");
    }
}
