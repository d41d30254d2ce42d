//! `Writer::create_streamed`: the events are spooled as they arrive and the rows written once the
//! stream has ended, so the session reads back as `create`'s does, the stream is never asked for
//! the whole transcript, a running OpenCode can write to the database while the source is still
//! being read, and a refused event or a stream that breaks off leaves nothing behind.

mod common;

use common::*;
use handoff_live::streamed::{each_corpus_entry_carried, files_under, Probe};
use handoff_opencode::{OpencodePlugin, DB_FILE, TARGET};
use handoff_sdk::{
    Body, CreateOptions, Event, EventStream, Plugin, PluginError, ReadFrom, StoreRoot, Transcript,
};
use rusqlite::Connection;

fn options() -> CreateOptions {
    CreateOptions {
        cwd: Some("/home/dev/proj".into()),
        locator: Some("conv-1".into()),
    }
}

fn store() -> (tempfile::TempDir, StoreRoot) {
    let dir = tempfile::tempdir().unwrap();
    let root = StoreRoot::new(dir.path().join("opencode")).unwrap();
    (dir, root)
}

/// `create` and `create_streamed` of `t` into two fresh stores: both read back alike (or both
/// refuse `t` alike, the streamed one leaving nothing), without the whole transcript.
fn same_as_create(name: &str, t: &Transcript) {
    let ((_held_dir, held), (streamed_dir, streamed)) = (store(), store());
    let writer = OpencodePlugin.writer();
    let whole = writer.create(&held, TARGET, t, &options());
    let mut probe = Probe::new(t);
    let each = writer.create_streamed(&streamed, TARGET, &mut probe, &options());
    assert_eq!(probe.wholes(), 0, "{name}");
    match (whole, each) {
        (Ok(a), Ok(b)) => {
            let read = |root: &StoreRoot, id: &str| {
                OpencodePlugin
                    .reader()
                    .read(ReadFrom::Session(
                        root,
                        &handoff_sdk::SessionRef {
                            target: TARGET.into(),
                            id: id.to_owned(),
                            path: root
                                .path()
                                .join("handoff-sessions")
                                .join(format!("{id}.json")),
                        },
                    ))
                    .unwrap_or_else(|e| panic!("{name}: {e}"))
            };
            // OpenCode names each message and part itself: the events compare but for their ids.
            let (held, streamed) = (read(&held, &a.id), read(&streamed, &b.id));
            let unnamed = |t: &Transcript| {
                t.events
                    .iter()
                    .map(|e| (e.timestamp, e.author.clone(), e.body.clone()))
                    .collect::<Vec<_>>()
            };
            assert_eq!(unnamed(&held), unnamed(&streamed), "{name}");
            assert_eq!(held.cwd, streamed.cwd, "{name}");
        }
        (Err(a), Err(b)) => {
            assert_eq!(a.to_string(), b.to_string(), "{name}");
            let handles = streamed_dir.path().join("opencode/handoff-sessions");
            assert_eq!(files_under(&handles), [""; 0], "{name}");
        }
        (a, b) => panic!("{name}: create {a:?}, create_streamed {b:?}"),
    }
}

#[test]
fn every_corpus_entry_opencode_carries_reads_back_as_creates_does() {
    let carries = handoff_opencode::target_manifest().carries;
    let checked = each_corpus_entry_carried(&carries, same_as_create);
    assert!(checked >= 5, "only {checked} corpus entries carried");
}

#[test]
fn a_long_session_and_a_refused_one_are_written_as_create_writes_them() {
    same_as_create("long", &conversation(200));
    // A user turn between a call and its result: OpenCode keeps a result inside its call.
    let mut refused = conversation(3);
    let user = refused.events.remove(10);
    refused.events.insert(7, user);
    refused.validate().unwrap();
    same_as_create("a turn between a call and its result", &refused);
}

#[test]
fn a_stream_that_breaks_off_leaves_nothing() {
    let t = conversation(3);
    for n in [0, 1, 7, t.events.len()] {
        let (dir, root) = store();
        let mut probe = Probe::failing_after(&t, n);
        let e = OpencodePlugin
            .writer()
            .create_streamed(&root, TARGET, &mut probe, &options())
            .expect_err("a stream that broke off");
        assert!(e.to_string().contains("broke off"), "after {n}: {e}");
        assert_eq!(files_under(dir.path()), [""; 0], "after {n}");
    }
}

/// A stream that, before handing out each event, tries to take the database's write lock at once
/// (no busy timeout), as a running OpenCode writing its own session would.
struct ContendedStream<'a> {
    events: Probe<'a>,
    db: Connection,
    writes: usize,
}

impl EventStream for ContendedStream<'_> {
    fn next_event(&mut self) -> Result<Option<Event>, PluginError> {
        self.db
            .execute_batch("BEGIN IMMEDIATE; UPDATE session SET title = title; COMMIT;")
            .map_err(|e| PluginError::Other(format!("a running OpenCode could not write: {e}")))?;
        self.writes += 1;
        self.events.next_event()
    }

    fn whole(&mut self) -> Result<&Transcript, PluginError> {
        self.events.whole()
    }
}

#[test]
fn a_running_opencode_writes_while_the_source_is_read() {
    let (_dir, root) = store();
    // A session of the person's own, so the database exists.
    create(&root, &conversation(1));
    let t = conversation(20);
    let db = Connection::open(root.path().join(DB_FILE)).unwrap();
    db.busy_timeout(std::time::Duration::ZERO).unwrap();
    let mut stream = ContendedStream {
        events: Probe::new(&t),
        db,
        writes: 0,
    };
    let session = OpencodePlugin
        .writer()
        .create_streamed(&root, TARGET, &mut stream, &options())
        .unwrap();
    assert_eq!(stream.writes, t.events.len() + 1);
    let back = read(&root, &session.id);
    assert_eq!(back.events.len(), t.events.len());
    assert!(matches!(back.events[0].body, Body::User { .. }));
}
