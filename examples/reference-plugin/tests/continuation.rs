//! The continuation engine, driven through the reference plugin: create, reuse, append, diverge,
//! fail closed, and two continuations at once.

use handoff_host::ById;
use std::time::Duration;

use handoff_conformance::corpus;
use handoff_host::continuation::{continue_conversation, Action, ContinueError, ContinueRequest};
use handoff_host::{
    Body, CreateOptions, Event, PluginError, Reader, SessionRef, StoreRoot, Timestamp, Transcript,
    Writer,
};
use handoff_reference::{ReferencePlugin, NAME};

mod common;
use common::{lossy_reader, with_reader, with_writer};

fn request<'a>(t: &'a Transcript, root: &'a StoreRoot) -> ContinueRequest<'a> {
    ContinueRequest {
        source: t.into(),
        locator: Some("claude-code:conversation-1"),
        target: NAME,
        root,
        seal: handoff_host::seal::Seal::of_this_process(),
        cwd: None,
        prompt: "go on",
        drop: &[],
        lock_wait: Duration::from_secs(10),
        into: None,
    }
}

fn with_more(t: &Transcript, n: usize) -> Transcript {
    let mut t = t.clone();
    let last = t.events.last().unwrap().timestamp.millis();
    for i in 0..n {
        t.events.push(Event::new(
            format!("more-{i}"),
            Timestamp::from_millis(last + 1_000 * (i as i64 + 1)),
            Body::user_text(format!("more {i}")),
        ));
    }
    t
}

fn scratch() -> (tempfile::TempDir, StoreRoot) {
    let dir = tempfile::tempdir().unwrap();
    let root = StoreRoot::new(dir.path().join("store")).unwrap();
    (dir, root)
}

#[test]
fn creates_then_reuses_then_appends_to_the_same_id() {
    let (_dir, root) = scratch();
    let base = &corpus::entry("parallel-tool-calls").unwrap().transcript;
    let first = continue_conversation(&ReferencePlugin, &request(base, &root)).unwrap();
    assert_eq!(first.action, Action::Created);
    let command = first.plan.command().expect("a command");
    assert!(command.args.iter().any(|a| a.contains(&first.session.id)));

    let again = continue_conversation(&ReferencePlugin, &request(base, &root)).unwrap();
    assert_eq!(
        (again.action, &again.session),
        (Action::Unchanged, &first.session)
    );

    let longer = with_more(base, 2);
    let appended = continue_conversation(&ReferencePlugin, &request(&longer, &root)).unwrap();
    assert_eq!(appended.action, Action::Appended { events: 2 });
    assert_eq!(appended.session.id, first.session.id);
    let back = ReferencePlugin
        .read_id(&root, NAME, &first.session.id)
        .unwrap();
    handoff_host::Comparison::exact()
        .diff(&longer, &back)
        .unwrap();
    assert_eq!(ReferencePlugin.list(&root, NAME).unwrap().len(), 1);
}

#[test]
fn a_diverged_session_is_left_alone_and_a_new_one_created() {
    let (_dir, root) = scratch();
    let base = &corpus::entry("plain-chat").unwrap().transcript;
    let first = continue_conversation(&ReferencePlugin, &request(base, &root)).unwrap();
    let before = std::fs::read(&first.session.path).unwrap();
    let mut edited = base.clone();
    edited.events[1].body = Body::user_text("history was rewritten");
    let second = continue_conversation(&ReferencePlugin, &request(&edited, &root)).unwrap();
    assert_eq!(second.action, Action::Created);
    assert_ne!(second.session.id, first.session.id);
    assert_eq!(second.diverged_from.as_ref(), Some(&first.session));
    assert_eq!(std::fs::read(&first.session.path).unwrap(), before);
}

#[test]
fn other_conversations_are_never_reused() {
    let (_dir, root) = scratch();
    let base = &corpus::entry("plain-chat").unwrap().transcript;
    let a = continue_conversation(&ReferencePlugin, &request(base, &root)).unwrap();
    let mut other = request(base, &root);
    other.locator = Some("claude-code:conversation-2");
    let b = continue_conversation(&ReferencePlugin, &other).unwrap();
    assert_ne!(a.session.id, b.session.id);
    assert_eq!(b.action, Action::Created);
}

#[test]
fn a_failed_verify_of_a_new_session_removes_it() {
    let (_dir, root) = scratch();
    let base = &corpus::entry("plain-chat").unwrap().transcript;
    let err =
        continue_conversation(&with_reader(lossy_reader(0)), &request(base, &root)).unwrap_err();
    match &err {
        ContinueError::Mismatch { diff, undo, .. } => {
            assert_eq!(diff.index, base.events.len() - 1, "{err}");
            assert!(undo.contains("removed"));
        }
        other => panic!("expected a mismatch, got {other}"),
    }
    assert!(ReferencePlugin.list(&root, NAME).unwrap().is_empty());
}

#[test]
fn a_failed_verify_of_an_append_restores_the_exact_bytes() {
    let (_dir, root) = scratch();
    let base = &corpus::entry("plain-chat").unwrap().transcript;
    let first = continue_conversation(&ReferencePlugin, &request(base, &root)).unwrap();
    let before = std::fs::read(&first.session.path).unwrap();
    let longer = with_more(base, 2);
    let lossy = with_reader(lossy_reader(base.events.len()));
    let err = continue_conversation(&lossy, &request(&longer, &root)).unwrap_err();
    assert!(matches!(err, ContinueError::Mismatch { .. }), "{err}");
    assert_eq!(std::fs::read(&first.session.path).unwrap(), before);
    assert_eq!(ReferencePlugin.list(&root, NAME).unwrap().len(), 1);
}

#[test]
fn a_refused_transcript_writes_nothing() {
    let (dir, root) = scratch();
    let orphan = Transcript::new(vec![Event::new(
        "r",
        Timestamp::from_millis(0),
        Body::ToolResult {
            call_id: "nobody".into(),
            content: vec![],
            is_error: false,
        },
    )]);
    let err = continue_conversation(&ReferencePlugin, &request(&orphan, &root)).unwrap_err();
    assert!(
        err.to_string().contains("answers no earlier tool call"),
        "{err}"
    );
    assert!(!dir.path().join("store").exists());
}

#[test]
fn two_continuations_at_once_end_with_one_session() {
    let (_dir, root) = scratch();
    let base = corpus::entry("tool-error").unwrap().transcript.clone();
    let results: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..2)
            .map(|_| s.spawn(|| continue_conversation(&ReferencePlugin, &request(&base, &root))))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let results: Vec<_> = results.into_iter().map(Result::unwrap).collect();
    let mut actions: Vec<_> = results.iter().map(|r| r.action.clone()).collect();
    actions.sort_by_key(|a| format!("{a:?}"));
    assert_eq!(actions, vec![Action::Created, Action::Unchanged]);
    assert_eq!(results[0].session.id, results[1].session.id);
    assert_eq!(ReferencePlugin.list(&root, NAME).unwrap().len(), 1);
}

#[test]
fn a_busy_conversation_is_a_clear_error() {
    let (_dir, root) = scratch();
    let base = &corpus::entry("plain-chat").unwrap().transcript;
    std::fs::create_dir_all(root.path()).unwrap();
    let slow = with_writer(SlowWriter);
    let req = request(base, &root);
    std::thread::scope(|s| {
        let first = s.spawn(|| continue_conversation(&slow, &req));
        std::thread::sleep(Duration::from_millis(100));
        let mut impatient = request(base, &root);
        impatient.lock_wait = Duration::from_millis(10);
        let err = continue_conversation(&ReferencePlugin, &impatient).unwrap_err();
        assert!(matches!(err, ContinueError::Busy { .. }), "{err}");
        first.join().unwrap().unwrap();
    });
}

/// A writer that takes its time, so another continuation meets the lock.
struct SlowWriter;

impl Writer for SlowWriter {
    fn create(
        &self,
        root: &StoreRoot,
        target: &str,
        transcript: &Transcript,
        options: &CreateOptions,
    ) -> Result<SessionRef, PluginError> {
        std::thread::sleep(Duration::from_millis(400));
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
}
