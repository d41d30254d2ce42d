//! The `.so` path streams: a loaded plugin that offers the v3 ids hands what it reads to the host
//! in batches of the binary form and receives what it writes in it; the events are exactly the
//! built-in's; a sink that stops stops the plugin's read; an older plugin (v2 or v1 only) still
//! works; a panic on either side of a streamed call is an error or the host's own, never the end
//! of the host.

mod support;

use std::io::Write as _;
use std::panic::{catch_unwind, AssertUnwindSafe};

use handoff_abi::{READER_V1, READER_V2, RESUME_V1, RESUME_V2};
use handoff_abi::{WRITER_V1, WRITER_V2};
use handoff_host::{
    Body, CreateOptions, Event, Plugin, PluginError, ReadFrom, SessionRef, StoreRoot, Timestamp,
};

use support::{load, load_newest, long_transcript_with_calls};

fn read_each_all(
    plugin: &dyn Plugin,
    root: &StoreRoot,
    session: &SessionRef,
) -> Result<Vec<Event>, PluginError> {
    let mut events = Vec::new();
    plugin
        .reader()
        .read_each(ReadFrom::Session(root, session), &mut |event| {
            events.push(event);
            true
        })?;
    Ok(events)
}

/// For every corpus transcript the target carries: the loaded plugin's `read`, `read_path` and
/// `read_each` give exactly what the built-in's `read` gives, and a session the loaded plugin
/// wrote reads back (through the built-in) exactly as one the built-in wrote.
fn streams_exactly_what_the_builtin_reads(builtin: &dyn Plugin, package: &str, target: &str) {
    let loaded = load_newest(package);
    let dir = tempfile::tempdir().unwrap();
    let root = StoreRoot::new(dir.path().join("store")).unwrap();
    let mut compared = 0;
    for entry in handoff_conformance::corpus::entries() {
        let options = CreateOptions {
            cwd: Some("/work".into()),
            locator: None,
        };
        let by_builtin = match builtin
            .writer()
            .create(&root, target, &entry.transcript, &options)
        {
            Ok(session) => session,
            Err(PluginError::NotCarried { .. }) => continue,
            Err(e) => panic!("{target}/{}: {e}", entry.name),
        };
        let expected = builtin
            .reader()
            .read(ReadFrom::Session(&root, &by_builtin))
            .unwrap();
        let name = format!("{package}: {}", entry.name);
        assert_eq!(
            loaded
                .reader()
                .read(ReadFrom::Session(&root, &by_builtin))
                .unwrap(),
            expected,
            "{name}"
        );
        assert_eq!(
            loaded
                .reader()
                .read(ReadFrom::File(target, &by_builtin.path))
                .unwrap(),
            expected,
            "{name}"
        );
        assert_eq!(
            read_each_all(&loaded, &root, &by_builtin).unwrap(),
            expected.events,
            "{name}"
        );

        let by_loaded = loaded
            .writer()
            .create(&root, target, &entry.transcript, &options)
            .unwrap();
        let written = builtin
            .reader()
            .read(ReadFrom::Session(&root, &by_loaded))
            .unwrap();
        // A writer may make ids of its own; the comparison the engine uses decides.
        let comparison = builtin.manifest().target(target).unwrap().comparison();
        comparison
            .diff(&entry.transcript, &written)
            .unwrap_or_else(|d| panic!("{name}: {d}"));

        // An append through the loaded plugin arrives intact.
        let last = written.events.last().unwrap().timestamp.millis();
        let added = one_more(last);
        loaded
            .writer()
            .append(&root, &by_loaded, std::slice::from_ref(&added))
            .unwrap();
        let back = builtin
            .reader()
            .read(ReadFrom::Session(&root, &by_loaded))
            .unwrap();
        assert_eq!(back.events.len(), written.events.len() + 1, "{name}");
        assert_eq!(back.events.last().unwrap().body, added.body, "{name}");
        compared += 1;
    }
    assert!(compared >= 5, "{package}: only {compared} corpus entries");
}

#[test]
fn the_reference_plugin_streams_exactly_what_the_builtin_reads() {
    streams_exactly_what_the_builtin_reads(
        &handoff_reference::ReferencePlugin,
        "handoff-plugin-reference",
        handoff_reference::NAME,
    );
}

#[test]
fn the_codex_plugin_streams_exactly_what_the_builtin_reads() {
    streams_exactly_what_the_builtin_reads(
        &handoff_codex::CodexPlugin,
        "handoff-plugin-codex",
        "codex",
    );
}

#[test]
fn the_claude_plugin_streams_exactly_what_the_builtin_reads() {
    streams_exactly_what_the_builtin_reads(
        &handoff_claude::ClaudePlugin,
        "handoff-plugin-claude",
        "claude-code",
    );
}

/// A user message a second after `millis`, to append.
fn one_more(millis: i64) -> Event {
    Event::new(
        "appended",
        Timestamp::from_millis(millis + 1_000),
        Body::user_text("one more thing"),
    )
}

/// The plugin's reader stops when the host's sink does: a session whose last line is garbage
/// cannot be read whole, but a streamed read that stops after the first event never gets there,
/// exactly as with the built-in.
#[test]
fn a_sink_that_stops_stops_the_plugins_read() {
    let loaded = load("handoff-plugin-codex");
    let builtin = handoff_codex::CodexPlugin;
    let dir = tempfile::tempdir().unwrap();
    let root = StoreRoot::new(dir.path().join("codex")).unwrap();
    let session = builtin
        .writer()
        .create(
            &root,
            "codex",
            &long_transcript_with_calls(2_000),
            &CreateOptions::default(),
        )
        .unwrap();
    let size = std::fs::metadata(&session.path).unwrap().len();
    assert!(size > 20 * 64 * 1024, "{size} bytes: too few batches");
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&session.path)
        .unwrap();
    file.write_all(b"{not json\n").unwrap();
    drop(file);

    for plugin in [&loaded as &dyn Plugin, &builtin] {
        let whole = plugin
            .reader()
            .read(ReadFrom::Session(&root, &session))
            .unwrap_err();
        assert!(matches!(whole, PluginError::Malformed { .. }), "{whole}");
        let mut seen = Vec::new();
        plugin
            .reader()
            .read_each(ReadFrom::Session(&root, &session), &mut |event| {
                seen.push(event.id);
                false
            })
            .unwrap();
        assert_eq!(seen, vec!["u0".to_owned()]);
    }
}

/// An older plugin offers only v2 (or only v1) ids: the host falls back and every call works.
/// One test, because the fixture reads which ids to offer from the environment.
#[test]
fn older_plugins_still_load_and_work() {
    let builtin = handoff_reference::ReferencePlugin;
    let target = handoff_reference::NAME;
    let transcript = &handoff_conformance::corpus::entry("parallel-tool-calls")
        .unwrap()
        .transcript;
    for (offer, ids) in [
        ("v2", vec![WRITER_V2, READER_V2, RESUME_V2]),
        ("v1", vec![WRITER_V1, READER_V1, RESUME_V1]),
    ] {
        std::env::set_var("HANDOFF_FIXTURE_OFFER", offer);
        let older = load("handoff-fixture-older-plugin");
        assert_eq!(older.capabilities(), ids, "{offer}");
        let dir = tempfile::tempdir().unwrap();
        let root = StoreRoot::new(dir.path().join("store")).unwrap();
        let options = CreateOptions {
            cwd: None,
            locator: Some("conversation".into()),
        };
        let session = older
            .writer()
            .create(&root, target, transcript, &options)
            .unwrap();
        let expected = builtin
            .reader()
            .read(ReadFrom::Session(&root, &session))
            .unwrap();
        assert_eq!(
            older
                .reader()
                .read(ReadFrom::Session(&root, &session))
                .unwrap(),
            expected,
            "{offer}"
        );
        assert_eq!(
            read_each_all(&older, &root, &session).unwrap(),
            expected.events,
            "{offer}"
        );
        assert_eq!(
            older
                .reader()
                .read(ReadFrom::File(target, &session.path))
                .unwrap(),
            expected,
            "{offer}"
        );
        assert_eq!(
            older
                .reader()
                .find_owned(&root, target, "conversation")
                .unwrap(),
            Some(session.clone()),
            "{offer}"
        );
        // A read as a CLI version: a v2 or v1 plugin's reads have no such member, so it is
        // never sent one, and reads as it always did.
        let as_version = older.reader().reading_as("2.1.197").unwrap();
        assert_eq!(
            as_version.read(ReadFrom::Session(&root, &session)).unwrap(),
            expected,
            "{offer}"
        );
        let added = one_more(expected.events.last().unwrap().timestamp.millis());
        older
            .writer()
            .append(&root, &session, std::slice::from_ref(&added))
            .unwrap();
        let back = builtin
            .reader()
            .read(ReadFrom::Session(&root, &session))
            .unwrap();
        assert_eq!(back.events.last().unwrap().body, added.body, "{offer}");
        older.resumer().plan(&root, &session, "go on").unwrap();
        older.writer().remove(&root, &session).unwrap();
    }
    std::env::remove_var("HANDOFF_FIXTURE_OFFER");
}

fn panicky_session(root: &StoreRoot, id: &str) -> SessionRef {
    SessionRef {
        target: "panicky".into(),
        id: id.into(),
        path: root.path().join(id),
    }
}

/// A plugin that panics while it streams: the events it handed on before the panic may have
/// reached the host, the call is `Panicked` naming plugin and method, and the host goes on.
#[test]
fn a_plugin_panic_in_a_streamed_read_is_an_error() {
    let plugin = load("handoff-fixture-panicking");
    let dir = tempfile::tempdir().unwrap();
    let root = StoreRoot::new(dir.path().join("store")).unwrap();
    let session = panicky_session(&root, "stream-then-panic");
    let mut seen = 0;
    let error = plugin
        .reader()
        .read_each(ReadFrom::Session(&root, &session), &mut |_| {
            seen += 1;
            true
        })
        .unwrap_err();
    support::assert_fixture_panicked(&error, "read_each");
    assert!(seen <= 3, "{seen}");
    // The host and the plugin go on.
    let other = plugin
        .reader()
        .read_each(
            ReadFrom::Session(&root, &panicky_session(&root, "x")),
            &mut |_| true,
        )
        .unwrap_err();
    assert!(matches!(other, PluginError::NotFound { .. }), "{other}");
    assert_eq!(plugin.reader().list(&root, "panicky").unwrap(), vec![]);
}

/// The host's own sink panics while a plugin streams to it: the unwind never crosses the
/// plugin's frames (that would abort the process); the plugin's read stops, and the panic goes on
/// in the host, where it can be caught as any other.
#[test]
fn a_host_panic_in_the_sink_unwinds_in_the_host_and_the_plugin_goes_on() {
    let plugin = load("handoff-plugin-codex");
    let dir = tempfile::tempdir().unwrap();
    let root = StoreRoot::new(dir.path().join("codex")).unwrap();
    let session = plugin
        .writer()
        .create(
            &root,
            "codex",
            &long_transcript_with_calls(50),
            &CreateOptions::default(),
        )
        .unwrap();
    let caught = catch_unwind(AssertUnwindSafe(|| {
        let _ = plugin
            .reader()
            .read_each(ReadFrom::Session(&root, &session), &mut |_| {
                panic!("the host's sink panicked")
            });
    }))
    .unwrap_err();
    assert_eq!(
        caught.downcast_ref::<&str>(),
        Some(&"the host's sink panicked")
    );
    assert_eq!(read_each_all(&plugin, &root, &session).unwrap().len(), 150);
}
