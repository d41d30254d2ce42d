//! The continuation engine with a source given as a file: streamed into the target's writer on
//! a second thread, checked event by event, verified by fingerprints; and every way that can go
//! wrong ends with nothing written.

use std::path::{Path, PathBuf};
use std::time::Duration;

use handoff_conformance::corpus;
use handoff_host::continuation::{
    continue_conversation, Action, ContinueError, ContinueRequest, Continued, Source, SourceFile,
};
use handoff_host::{
    Body, Comparison, CreateOptions, Event, EventStream, Part, PluginError, ReadFrom, ReadOutcome,
    Reader, SessionInfo, SessionRef, StoreRoot, Timestamp, Transcript, Writer,
};
use handoff_reference::{ReferencePlugin, NAME};

mod common;
use common::{lossy_reader, with_both, with_reader, with_writer, AlteredReadBack};

/// A source session file of `t`, written by the reference plugin under `dir`.
fn source_file(dir: &Path, t: &Transcript) -> PathBuf {
    let root = StoreRoot::new(dir.join("source")).unwrap();
    ReferencePlugin
        .create(&root, NAME, t, &CreateOptions::default())
        .unwrap()
        .path
}

/// `t` as canonical JSON in the file `name` under `dir`: a source the test readers here read.
fn json_file(dir: &Path, name: &str, t: &Transcript) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, t.to_json_pretty()).unwrap();
    path
}

fn request<'a>(reader: &'a dyn Reader, path: &'a Path, root: &'a StoreRoot) -> ContinueRequest<'a> {
    ContinueRequest {
        source: Source::File(SourceFile {
            reader,
            target: NAME,
            path,
            cli_version: None,
        }),
        locator: None,
        target: NAME,
        root,
        seal: handoff_host::seal::Seal::of_this_process(),
        cwd: Some("/home/dev/proj".into()),
        prompt: "go on",
        drop: &[],
        lock_wait: Duration::from_secs(10),
        into: None,
    }
}

fn scratch() -> (tempfile::TempDir, StoreRoot) {
    let dir = tempfile::tempdir().unwrap();
    let root = StoreRoot::new(dir.path().join("store")).unwrap();
    (dir, root)
}

fn user(id: &str, ms: i64, text: &str) -> Event {
    Event::new(id, Timestamp::from_millis(ms), Body::user_text(text))
}

fn sessions(root: &StoreRoot) -> Vec<SessionInfo> {
    ReferencePlugin.list(root, NAME).unwrap_or_default()
}

/// How a [`Streaming`] writer misbehaves, if it does.
#[derive(Clone, Copy, PartialEq)]
enum Take {
    /// Every event, one at a time.
    All,
    /// Only this many events, then it returns as if done.
    StopAfter(usize),
    /// This many events, then the whole transcript (as a writer that meets a compaction does).
    WholeAfter(usize),
}

/// The reference plugin with a writer that takes its events from the stream one at a time.
struct Streaming(Take);

impl Writer for Streaming {
    fn create(
        &self,
        root: &StoreRoot,
        target: &str,
        transcript: &Transcript,
        options: &CreateOptions,
    ) -> Result<SessionRef, PluginError> {
        ReferencePlugin.create(root, target, transcript, options)
    }
    fn append(
        &self,
        root: &StoreRoot,
        session: &SessionRef,
        events: &[Event],
    ) -> Result<SessionRef, PluginError> {
        ReferencePlugin.append(root, session, events)
    }
    fn remove(&self, root: &StoreRoot, session: &SessionRef) -> Result<(), PluginError> {
        ReferencePlugin.remove(root, session)
    }
    fn create_streamed(
        &self,
        root: &StoreRoot,
        target: &str,
        events: &mut dyn EventStream,
        options: &CreateOptions,
    ) -> Result<SessionRef, PluginError> {
        let mut taken = Vec::new();
        while let Some(event) = events.next_event()? {
            taken.push(event);
            match self.0 {
                Take::StopAfter(n) if taken.len() == n => break,
                Take::WholeAfter(n) if taken.len() == n => {
                    return self.create(root, target, events.whole()?, options);
                }
                _ => {}
            }
        }
        self.create(root, target, &Transcript::new(taken), options)
    }
}

#[test]
fn a_file_source_streams_into_a_new_session_then_appends() {
    let (dir, root) = scratch();
    let base = &corpus::entry("parallel-tool-calls").unwrap().transcript;
    let path = source_file(dir.path(), base);
    let plugin = with_writer(Streaming(Take::All));
    let first = continue_conversation(&plugin, &request(&ReferencePlugin, &path, &root)).unwrap();
    assert_eq!(first.action, Action::Created);
    assert_eq!(first.events, base.events.len());
    assert_eq!(first.locator, format!("{NAME}:{}", base.events[0].id));
    let back = ReferencePlugin
        .read(ReadFrom::Session(&root, &first.session))
        .unwrap();
    Comparison::exact().diff(base, &back).unwrap();

    // The same conversation, longer: the existing session is a prefix, so it is appended to.
    let mut longer = base.clone();
    longer
        .events
        .push(user("more", 9_999_999_999_999, "and then?"));
    let path = source_file(dir.path(), &longer);
    let second = continue_conversation(&plugin, &request(&ReferencePlugin, &path, &root)).unwrap();
    assert_eq!(second.action, Action::Appended { events: 1 });
    assert_eq!(second.session.id, first.session.id);
    assert_eq!(second.events, longer.events.len());
    assert_eq!(sessions(&root).len(), 1);
}

#[test]
fn a_writer_that_asks_for_the_whole_transcript_midway_is_verified_against_it() {
    let (dir, root) = scratch();
    let base = &corpus::entry("parallel-tool-calls").unwrap().transcript;
    let path = source_file(dir.path(), base);
    for take in [Take::WholeAfter(0), Take::WholeAfter(2)] {
        let mut req = request(&ReferencePlugin, &path, &root);
        let locator = format!("whole-{}", sessions(&root).len());
        req.locator = Some(&locator);
        let done = continue_conversation(&with_writer(Streaming(take)), &req).unwrap();
        assert_eq!(done.action, Action::Created);
        assert_eq!(done.events, base.events.len());
        let back = ReferencePlugin
            .read(ReadFrom::Session(&root, &done.session))
            .unwrap();
        Comparison::exact().diff(base, &back).unwrap();
    }
}

/// `drop`: the kinds go as the events stream, whichever way the writer takes them, and the
/// session verifies against the source minus them; the same drop later finds it whole.
#[test]
fn dropped_tool_calls_go_with_their_results_however_the_writer_takes_the_stream() {
    use handoff_host::{DropFilter, Feature};
    let (dir, root) = scratch();
    let base = &corpus::entry("parallel-tool-calls").unwrap().transcript;
    let path = source_file(dir.path(), base);
    let mut filter = DropFilter::new(&[Feature::ToolCall]).unwrap();
    let expected = filter.apply_all(base.clone());
    let dropped = filter.take_dropped();
    assert!(expected.events.len() < base.events.len());
    assert!(!expected.features().contains(&Feature::ToolResult));
    for take in [Take::All, Take::WholeAfter(0), Take::WholeAfter(1)] {
        let mut req = request(&ReferencePlugin, &path, &root);
        let locator = format!("drop-{}", sessions(&root).len());
        req.locator = Some(&locator);
        req.drop = &[Feature::ToolCall];
        let plugin = with_writer(Streaming(take));
        let done = continue_conversation(&plugin, &req).unwrap();
        assert_eq!(done.action, Action::Created);
        assert_eq!(done.events, expected.events.len());
        assert_eq!(done.dropped, dropped);
        let back = ReferencePlugin
            .read(ReadFrom::Session(&root, &done.session))
            .unwrap();
        Comparison::exact().diff(&expected, &back).unwrap();
        // Again with the same drop: the session holds it all, and the report says what it lacks.
        let again = continue_conversation(&plugin, &req).unwrap();
        assert_eq!(again.action, Action::Unchanged);
        assert_eq!(again.session.id, done.session.id);
        assert_eq!(again.dropped, dropped);
    }
}

#[test]
fn a_writer_that_stops_early_is_refused_and_its_session_removed() {
    let (dir, root) = scratch();
    let base = &corpus::entry("parallel-tool-calls").unwrap().transcript;
    let path = source_file(dir.path(), base);
    let err = continue_conversation(
        &with_writer(Streaming(Take::StopAfter(2))),
        &request(&ReferencePlugin, &path, &root),
    )
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("returned before it took every event"),
        "{err}"
    );
    assert!(sessions(&root).is_empty());
}

/// A reader whose read-back changes one text: a difference the fingerprints see, which the
/// engine then names field by field.
fn altered_read_back() -> AlteredReadBack<impl Fn(&mut Transcript) + Send + Sync> {
    AlteredReadBack(|t: &mut Transcript| {
        if let Body::User { content } = &mut t.events[0].body {
            content.push(Part::text("!"));
        }
    })
}

#[test]
fn a_read_back_that_differs_removes_the_new_session_and_names_the_difference() {
    let (dir, root) = scratch();
    let base = &corpus::entry("plain-chat").unwrap().transcript;
    let path = source_file(dir.path(), base);
    let lost = continue_conversation(
        &with_reader(lossy_reader(0)),
        &request(&ReferencePlugin, &path, &root),
    )
    .unwrap_err();
    match &lost {
        ContinueError::Mismatch { diff, undo, .. } => {
            assert_eq!(diff.index, base.events.len() - 1, "{lost}");
            assert!(undo.contains("removed"));
        }
        other => panic!("expected a mismatch, got {other}"),
    }
    let altered = continue_conversation(
        &with_both(Streaming(Take::All), altered_read_back()),
        &request(&ReferencePlugin, &path, &root),
    )
    .unwrap_err();
    match &altered {
        ContinueError::Mismatch { diff, .. } => {
            assert_eq!(diff.index, 0, "{altered}");
            assert!(diff.field.starts_with("body.content"), "{altered}");
        }
        other => panic!("expected a mismatch, got {other}"),
    }
    assert!(sessions(&root).is_empty());
}

#[test]
fn an_invalid_event_midway_writes_nothing_and_names_it() {
    let (dir, root) = scratch();
    let mut t = corpus::entry("plain-chat").unwrap().transcript.clone();
    t.events.push(Event::new(
        "orphan",
        Timestamp::from_millis(9_999_999_999_999),
        Body::ToolResult {
            call_id: "nobody".into(),
            content: vec![],
            is_error: false,
        },
    ));
    // The reference reader refuses such a file itself; a source reader that does not check is
    // what the engine's own checks are for.
    let path = json_file(dir.path(), "orphan.json", &t);
    let err = continue_conversation(
        &with_writer(Streaming(Take::All)),
        &request(&Unchecked, &path, &root),
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("answers no earlier tool call")
            && err.to_string().contains("orphan"),
        "{err}"
    );
    assert!(sessions(&root).is_empty());
}

/// A source reader of canonical JSON files that checks nothing, and one that panics midway.
struct Unchecked;

impl Unchecked {
    fn whole(path: &Path) -> Result<Transcript, PluginError> {
        let text = std::fs::read_to_string(path).map_err(|e| PluginError::io(path, &e))?;
        Transcript::from_json(&text).map_err(|e| PluginError::Other(e.to_string()))
    }
}

impl Reader for Unchecked {
    fn read_each(
        &self,
        from: ReadFrom<'_>,
        sink: &mut dyn FnMut(Event) -> bool,
    ) -> Result<ReadOutcome, PluginError> {
        if let ReadFrom::Written(..) = from {
            return Ok(ReadOutcome::NotSupported);
        }
        let path = from.path();
        for (i, event) in Self::whole(path)?.events.into_iter().enumerate() {
            if path.ends_with("panics.json") && i == 2 {
                panic!("the source reader broke at event {i}");
            }
            if !sink(event) {
                break;
            }
        }
        Ok(ReadOutcome::Read)
    }
    fn cwd(&self, from: ReadFrom<'_>) -> Result<Option<String>, PluginError> {
        Ok(Self::whole(from.path())?.cwd)
    }
    fn list(&self, _root: &StoreRoot, _target: &str) -> Result<Vec<SessionInfo>, PluginError> {
        Ok(Vec::new())
    }
}

#[test]
fn a_source_reader_that_panics_is_an_error_and_writes_nothing() {
    let (dir, root) = scratch();
    let t = &corpus::entry("parallel-tool-calls").unwrap().transcript;
    let path = json_file(dir.path(), "panics.json", t);
    let err = continue_conversation(
        &with_writer(Streaming(Take::All)),
        &request(&Unchecked, &path, &root),
    )
    .unwrap_err();
    match &err {
        ContinueError::Plugin(PluginError::Panicked {
            method, message, ..
        }) => {
            assert_eq!(method, "read_batches");
            assert!(message.contains("event 2"), "{message}");
        }
        other => panic!("expected a panic error, got {other}"),
    }
    assert!(sessions(&root).is_empty());
}

/// A reader whose read-back panics at its third event (a source read by path is the reference
/// plugin's).
fn panicky_read_back() -> AlteredReadBack<impl Fn(&mut Transcript) + Send + Sync> {
    AlteredReadBack(|t: &mut Transcript| {
        if t.events.len() > 2 {
            panic!("the read-back broke at event 2");
        }
    })
}

/// The verify reads on a thread of its own: a panic there is the reader's error, and the session
/// it was verifying is removed.
#[test]
fn a_read_back_that_panics_is_an_error_and_removes_the_new_session() {
    let (dir, root) = scratch();
    let t = &corpus::entry("parallel-tool-calls").unwrap().transcript;
    let path = source_file(dir.path(), t);
    let err = continue_conversation(
        &with_both(Streaming(Take::All), panicky_read_back()),
        &request(&ReferencePlugin, &path, &root),
    )
    .unwrap_err();
    match &err {
        ContinueError::Plugin(PluginError::Panicked {
            method, message, ..
        }) => {
            assert_eq!(method, "read_each");
            assert!(message.contains("event 2"), "{message}");
        }
        other => panic!("expected a panic error, got {other}"),
    }
    assert!(sessions(&root).is_empty());
}

#[test]
fn an_empty_source_without_a_locator_is_refused() {
    let (dir, root) = scratch();
    let path = json_file(dir.path(), "empty.json", &Transcript::new(Vec::new()));
    let err = continue_conversation(
        &with_writer(Streaming(Take::All)),
        &request(&Unchecked, &path, &root),
    )
    .unwrap_err();
    assert!(err.to_string().contains("has no events"), "{err}");
    assert!(!root.path().exists());
}

/// The reference reader, counting how the verify read the new session back; with
/// `drop_last_written`, what it reads as the session is written loses its last event.
#[derive(Default)]
struct Observed {
    as_written: std::sync::atomic::AtomicUsize,
    whole: std::sync::atomic::AtomicUsize,
    drop_last_written: bool,
}

impl Observed {
    fn counts(&self) -> (usize, usize) {
        use std::sync::atomic::Ordering::Relaxed;
        (self.as_written.load(Relaxed), self.whole.load(Relaxed))
    }
}

impl Reader for Observed {
    fn read_each(
        &self,
        from: ReadFrom<'_>,
        sink: &mut dyn FnMut(Event) -> bool,
    ) -> Result<ReadOutcome, PluginError> {
        let counter = match from {
            ReadFrom::File(..) => return ReferencePlugin.read_each(from, sink),
            ReadFrom::Session(..) => &self.whole,
            ReadFrom::Written(..) => &self.as_written,
        };
        counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut events = Vec::new();
        ReferencePlugin.read_each(from, &mut |e| {
            events.push(e);
            true
        })?;
        if self.drop_last_written && matches!(from, ReadFrom::Written(..)) {
            events.pop();
        }
        events.into_iter().all(sink);
        Ok(ReadOutcome::Read)
    }
    fn cwd(&self, from: ReadFrom<'_>) -> Result<Option<String>, PluginError> {
        ReferencePlugin.cwd(from)
    }
    fn list(&self, root: &StoreRoot, target: &str) -> Result<Vec<SessionInfo>, PluginError> {
        ReferencePlugin.list(root, target)
    }
}

#[test]
fn the_verify_reads_the_new_session_as_its_writer_writes_it() {
    let (dir, root) = scratch();
    let base = &corpus::entry("parallel-tool-calls").unwrap().transcript;
    let path = source_file(dir.path(), base);
    let plugin = with_both(Streaming(Take::All), Observed::default());
    let done = continue_conversation(&plugin, &request(&ReferencePlugin, &path, &root)).unwrap();
    assert_eq!(done.action, Action::Created);
    // Read once, as it was written; the fingerprints agreed, so not read again whole.
    assert_eq!(plugin.test_reader().counts(), (1, 0));
    let back = ReferencePlugin
        .read(ReadFrom::Session(&root, &done.session))
        .unwrap();
    Comparison::exact().diff(base, &back).unwrap();
}

#[test]
fn a_read_as_written_that_differs_is_read_again_whole_and_the_whole_read_decides() {
    let (dir, root) = scratch();
    let base = &corpus::entry("parallel-tool-calls").unwrap().transcript;
    let path = source_file(dir.path(), base);
    let reader = Observed {
        drop_last_written: true,
        ..Observed::default()
    };
    let plugin = with_both(Streaming(Take::All), reader);
    let done = continue_conversation(&plugin, &request(&ReferencePlugin, &path, &root)).unwrap();
    assert_eq!(plugin.test_reader().counts(), (1, 1));
    let back = ReferencePlugin
        .read(ReadFrom::Session(&root, &done.session))
        .unwrap();
    Comparison::exact().diff(base, &back).unwrap();
}

#[test]
fn a_writer_that_starts_over_is_verified_by_reading_its_session_whole() {
    let (dir, root) = scratch();
    let base = &corpus::entry("parallel-tool-calls").unwrap().transcript;
    let path = source_file(dir.path(), base);
    // The whole transcript after two events: the engine holds it and compares with it.
    let plugin = with_both(Streaming(Take::WholeAfter(2)), Observed::default());
    let done = continue_conversation(&plugin, &request(&ReferencePlugin, &path, &root)).unwrap();
    let (_, whole) = plugin.test_reader().counts();
    assert_eq!(whole, 1);
    let back = ReferencePlugin
        .read(ReadFrom::Session(&root, &done.session))
        .unwrap();
    Comparison::exact().diff(base, &back).unwrap();
}

/// How a [`Betting`] source reader's read in one pass goes.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Bet {
    /// It hands on the source's events and holds.
    Holds,
    /// It hands on other events (the first text changed), then fails at the end, where it checks.
    LostAtTheEnd,
    /// It hands on the first event twice, which the engine refuses before the read ends.
    LostToTheChecks,
    /// It hands on an event, then declines to read the file as written.
    DeclinedLate,
}

/// A source reader of canonical JSON files that reads a file as written in one pass as `bet`
/// says, and whole as [`Unchecked`] does; counting each way it was asked.
struct Betting {
    bet: Bet,
    in_one_pass: std::sync::atomic::AtomicUsize,
    whole: std::sync::atomic::AtomicUsize,
}

impl Betting {
    fn new(bet: Bet) -> Self {
        Betting {
            bet,
            in_one_pass: Default::default(),
            whole: Default::default(),
        }
    }

    fn counts(&self) -> (usize, usize) {
        use std::sync::atomic::Ordering::Relaxed;
        (self.in_one_pass.load(Relaxed), self.whole.load(Relaxed))
    }
}

/// The continuation of the source at `path` read by a [`Betting`] reader of `bet`, and its
/// reads (in one pass, whole).
fn continue_betting(
    bet: Bet,
    path: &Path,
    root: &StoreRoot,
) -> (Result<Continued, ContinueError>, (usize, usize)) {
    let reader = Betting::new(bet);
    let plugin = with_writer(Streaming(Take::All));
    let done = continue_conversation(&plugin, &request(&reader, path, root));
    (done, reader.counts())
}

impl Reader for Betting {
    fn read_each(
        &self,
        from: ReadFrom<'_>,
        sink: &mut dyn FnMut(Event) -> bool,
    ) -> Result<ReadOutcome, PluginError> {
        use std::io::Read;
        use std::sync::atomic::Ordering::Relaxed;
        let ReadFrom::Written(_, file) = from else {
            self.whole.fetch_add(1, Relaxed);
            return Unchecked.read_each(from, sink);
        };
        self.in_one_pass.fetch_add(1, Relaxed);
        let mut text = String::new();
        handoff_capability::GrowingRead::open(file)
            .and_then(|mut r| r.read_to_string(&mut text))
            .map_err(|e| PluginError::io(file.name(), &e))?;
        let mut events = Transcript::from_json(&text)
            .map_err(|e| PluginError::Other(format!("in one pass: {e}")))?
            .events;
        match self.bet {
            Bet::Holds => {}
            Bet::LostAtTheEnd => events[0].body = Body::user_text("a wrong guess"),
            Bet::LostToTheChecks => events.insert(1, events[0].clone()),
            Bet::DeclinedLate => {
                sink(events.remove(0));
                return Ok(ReadOutcome::NotSupported);
            }
        }
        if events.into_iter().all(sink) && self.bet == Bet::LostAtTheEnd {
            return Err(PluginError::Other("the walk is not the file order".into()));
        }
        Ok(ReadOutcome::Read)
    }
    fn cwd(&self, from: ReadFrom<'_>) -> Result<Option<String>, PluginError> {
        Unchecked.cwd(from)
    }
    fn list(&self, root: &StoreRoot, target: &str) -> Result<Vec<SessionInfo>, PluginError> {
        Unchecked.list(root, target)
    }
}

/// A source is read in one pass where its reader can; events it handed on before its bet was
/// confirmed never make a session: whatever went wrong, the continuation is run again on the
/// source read whole, and that read decides.
#[test]
fn a_source_read_in_one_pass_counts_only_once_its_bet_is_confirmed() {
    let base = &corpus::entry("parallel-tool-calls").unwrap().transcript;
    for (bet, reads) in [
        (Bet::Holds, (1, 0)),
        (Bet::LostAtTheEnd, (1, 1)),
        (Bet::LostToTheChecks, (1, 1)),
        (Bet::DeclinedLate, (1, 1)),
    ] {
        let (dir, root) = scratch();
        let path = json_file(dir.path(), "source.json", base);
        let (done, counts) = continue_betting(bet, &path, &root);
        let done = done.unwrap_or_else(|e| panic!("{bet:?}: {e}"));
        assert_eq!(counts, reads, "{bet:?}");
        let back = ReferencePlugin
            .read(ReadFrom::Session(&root, &done.session))
            .unwrap();
        Comparison::exact()
            .diff(base, &back)
            .unwrap_or_else(|d| panic!("{bet:?}: {d}"));
        // The attempt on the lost bet left nothing: one session, the verified one.
        assert_eq!(sessions(&root).len(), 1, "{bet:?}");
        assert_eq!(done.events, base.events.len(), "{bet:?}");
    }
}

/// A fault of the source itself is reported once the whole read confirms it, as the whole read
/// names it.
#[test]
fn a_source_that_fails_in_one_pass_and_whole_fails_as_the_whole_read_says() {
    let (dir, root) = scratch();
    let path = dir.path().join("source.json");
    std::fs::write(&path, "{ not json").unwrap();
    let (done, counts) = continue_betting(Bet::Holds, &path, &root);
    let err = done.unwrap_err();
    assert_eq!(counts, (1, 1));
    let err = err.to_string();
    assert!(
        err.contains("key must be a string") && !err.contains("in one pass"),
        "{err}"
    );
    assert!(sessions(&root).is_empty());
}

/// A killed run's journal rolled back by an attempt on a lost bet is reported by the attempt on
/// the whole read, which ends the continuation (the rollback is done by then: that attempt finds
/// nothing left to roll back).
#[test]
fn what_a_first_attempt_rolled_back_is_reported_by_the_one_that_ends_the_continuation() {
    use handoff_host::journal::{Conversation, Journal};
    let (dir, root) = scratch();
    let base = &corpus::entry("plain-chat").unwrap().transcript;
    let path = json_file(dir.path(), "source.json", base);
    let killed = Conversation {
        root: &root,
        seal: handoff_host::seal::Seal::of_this_process(),
        // A lock key as the engine makes them (64 hex digits), of another conversation.
        key: &"a".repeat(64),
        target: NAME,
        locator: "another",
    };
    // Begun and never ended: what a run killed before it wrote leaves.
    let journal = Journal::begin_create(killed, None).unwrap();
    let journal_path = journal.path();
    std::mem::forget(journal);
    let (done, counts) = continue_betting(Bet::LostAtTheEnd, &path, &root);
    let done = done.unwrap();
    assert_eq!(counts, (1, 1));
    let journals: Vec<_> = done.recovered.iter().map(|r| &r.journal).collect();
    assert_eq!(journals, [&journal_path]);
    assert!(!journal_path.exists());
}
