//! The v4 capability ids through real plugin files: a loaded plugin's `read_path_each`,
//! `read_path_cwd` and `create_streamed` cross the boundary as a built-in's run (the reader streams
//! as it reads, the writer pulls events as it takes them), the whole-restart protocol works, an
//! error of the host's events reaches the plugin's writer and comes back intact, panics on either
//! side end no host, and a v3-only plugin or a host that asks for v3 only still works.

mod support;

use std::io::Write as _;
use std::panic::{catch_unwind, AssertUnwindSafe};

use handoff_abi::{READER_V3, RESUME_V2, WRITER_V3};
use handoff_host::loader::{self, LoadedPlugin};
use handoff_host::{
    CreateOptions, Event, EventBatch, EventStream, HeldEvents, Plugin, PluginError, ReadFrom,
    SessionRef, StoreRoot, Transcript,
};

const REFERENCE: &str = handoff_reference::NAME;

use support::{load, load_newest, long_transcript, read_path_each_all};

/// The events of `read`, which hands them in batches, each decoded as it is taken.
fn batched_events(
    read: impl FnOnce(&mut dyn FnMut(EventBatch) -> bool) -> Result<(), PluginError>,
) -> Result<Vec<Event>, PluginError> {
    let mut batches = Vec::new();
    read(&mut |batch| {
        batches.push(batch);
        true
    })?;
    let mut events = Vec::new();
    for batch in batches {
        events.extend(batch.into_events()?);
    }
    Ok(events)
}

fn options(cwd: Option<&str>, locator: Option<&str>) -> CreateOptions {
    CreateOptions {
        cwd: cwd.map(str::to_owned),
        locator: locator.map(str::to_owned),
    }
}

/// The host's events, as the continuation engine hands them: counted, and failing or panicking
/// at a given event when asked.
struct HostEvents<'t> {
    held: HeldEvents<'t>,
    handed: usize,
    wholes: usize,
    fail_at: Option<(usize, PluginError)>,
    panic_at: Option<usize>,
}

impl<'t> HostEvents<'t> {
    fn new(transcript: &'t Transcript) -> Self {
        HostEvents {
            held: HeldEvents::new(transcript),
            handed: 0,
            wholes: 0,
            fail_at: None,
            panic_at: None,
        }
    }
}

impl EventStream for HostEvents<'_> {
    fn next_event(&mut self) -> Result<Option<Event>, PluginError> {
        if let Some((at, error)) = &self.fail_at {
            if self.handed == *at {
                return Err(error.clone());
            }
        }
        if self.panic_at == Some(self.handed) {
            panic!("the host's events panicked");
        }
        let event = self.held.next_event()?;
        self.handed += usize::from(event.is_some());
        Ok(event)
    }

    fn whole(&mut self) -> Result<&Transcript, PluginError> {
        self.wholes += 1;
        self.held.whole()
    }
}

/// For every corpus transcript the target carries, through the plugin file: `read_path_each`
/// yields exactly the built-in's `read_path` events, `read_path_cwd` its cwd, and
/// `create_streamed` writes a session equal (by the target's Comparison) to the one `create`
/// writes.
fn streams_as_the_builtin(builtin: &dyn Plugin, package: &str, target: &str) {
    let loaded = load_newest(package);
    let comparison = builtin.manifest().target(target).unwrap().comparison();
    let dir = tempfile::tempdir().unwrap();
    let root = StoreRoot::new(dir.path().join("store")).unwrap();
    let mut compared = 0;
    for entry in handoff_conformance::corpus::entries() {
        let name = format!("{package}: {}", entry.name);
        let options = options(Some("/work"), None);
        let by_create = match builtin
            .writer()
            .create(&root, target, &entry.transcript, &options)
        {
            Ok(session) => session,
            Err(PluginError::NotCarried { .. }) => continue,
            Err(e) => panic!("{name}: {e}"),
        };
        let expected = builtin
            .reader()
            .read(ReadFrom::File(target, &by_create.path))
            .unwrap();
        assert_eq!(
            read_path_each_all(&loaded, target, &by_create.path).unwrap(),
            expected.events,
            "{name}"
        );
        assert_eq!(
            loaded
                .reader()
                .cwd(ReadFrom::File(target, &by_create.path))
                .unwrap(),
            expected.cwd,
            "{name}"
        );
        // In batches decoded where they are taken (the continuation engine's threads).
        let batched = batched_events(|sink| {
            loaded
                .reader()
                .read_batches(ReadFrom::File(target, &by_create.path), sink)
                .map(drop)
        });
        assert_eq!(batched.unwrap(), expected.events, "{name}");
        let batched = batched_events(|sink| {
            loaded
                .reader()
                .read_batches(ReadFrom::Session(&root, &by_create), sink)
                .map(drop)
        });
        assert_eq!(batched.unwrap(), expected.events, "{name}");

        let mut events = HostEvents::new(&entry.transcript);
        let streamed = loaded
            .writer()
            .create_streamed(&root, target, &mut events, &options)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_ne!(streamed.path, by_create.path, "{name}");
        let written = builtin
            .reader()
            .read(ReadFrom::File(target, &streamed.path))
            .unwrap();
        comparison
            .diff(&expected, &written)
            .unwrap_or_else(|d| panic!("{name}: {d}"));
        // Every event was pulled, unless the writer started over with the whole transcript.
        assert!(
            events.handed == entry.transcript.events.len() || events.wholes == 1,
            "{name}: {} of {} events handed, {} wholes",
            events.handed,
            entry.transcript.events.len(),
            events.wholes
        );
        compared += 1;
    }
    assert!(compared >= 5, "{package}: only {compared} corpus entries");
}

#[test]
fn the_reference_plugin_streams_as_the_builtin() {
    streams_as_the_builtin(
        &handoff_reference::ReferencePlugin,
        "handoff-plugin-reference",
        REFERENCE,
    );
}

#[test]
fn the_codex_plugin_streams_as_the_builtin() {
    streams_as_the_builtin(&handoff_codex::CodexPlugin, "handoff-plugin-codex", "codex");
}

#[test]
fn the_claude_plugin_streams_as_the_builtin() {
    streams_as_the_builtin(
        &handoff_claude::ClaudePlugin,
        "handoff-plugin-claude",
        "claude-code",
    );
}

#[test]
fn the_streaming_fixture_streams_as_the_builtin() {
    streams_as_the_builtin(
        &handoff_reference::ReferencePlugin,
        "handoff-fixture-streaming",
        REFERENCE,
    );
}

/// A reference session of `turns` turns written by the built-in, with a malformed last line:
/// a whole read fails, a streamed read that stops before the end never gets there.
fn session_with_a_bad_last_line(root: &StoreRoot, turns: usize) -> SessionRef {
    let session = handoff_reference::ReferencePlugin
        .writer()
        .create(
            root,
            REFERENCE,
            &long_transcript(turns),
            &options(None, None),
        )
        .unwrap();
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&session.path)
        .unwrap();
    file.write_all(b"{not json\n").unwrap();
    session
}

/// The plugin's reader streams as it reads and stops when the host's sink does (within a batch):
/// the events before the stop arrive, the malformed line after them is never read.
#[test]
fn read_path_each_stops_the_plugins_reader_when_the_sink_says_so() {
    let loaded = load("handoff-fixture-streaming");
    let dir = tempfile::tempdir().unwrap();
    let root = StoreRoot::new(dir.path().join("store")).unwrap();
    let session = session_with_a_bad_last_line(&root, 500);
    let whole = loaded
        .reader()
        .read(ReadFrom::File(REFERENCE, &session.path))
        .unwrap_err();
    assert!(matches!(whole, PluginError::Malformed { .. }), "{whole}");
    let every = read_path_each_all(&loaded, REFERENCE, &session.path).unwrap_err();
    assert!(
        matches!(
            &every,
            PluginError::Malformed {
                line: Some(1002),
                ..
            }
        ),
        "{every}"
    );
    // Events cross in batches of ~64 KiB (~60 of these), so the plugin reads up to a batch past
    // the stop: 900 stops well before the bad line.
    for wanted in [1, 70, 900] {
        let mut seen = Vec::new();
        loaded
            .reader()
            .read_each(ReadFrom::File(REFERENCE, &session.path), &mut |event| {
                seen.push(event.id);
                seen.len() < wanted
            })
            .unwrap();
        assert_eq!(seen.len(), wanted);
        assert_eq!(
            seen.last().unwrap(),
            &long_transcript(500).events[wanted - 1].id
        );
    }
    assert_eq!(
        loaded
            .reader()
            .cwd(ReadFrom::File(REFERENCE, &session.path))
            .unwrap()
            .as_deref(),
        Some("/from/the/transcript"),
        "the header alone gives the cwd, the bad line is not read"
    );
    // In batches: a sink that takes one batch and stops stops the plugin's reader there too
    // (this fixture's `read_each` reads the whole file, so only `read_path_batches` can stop
    // before the bad line).
    let mut first = None;
    loaded
        .reader()
        .read_batches(ReadFrom::File(REFERENCE, &session.path), &mut |batch| {
            first = Some(batch);
            false
        })
        .unwrap();
    let events = first.unwrap().into_events().unwrap();
    assert!(!events.is_empty() && events.len() < 900);
    assert_eq!(events, long_transcript(500).events[..events.len()]);
}

/// A writer that takes some events and then asks for the whole transcript: the plugin cannot
/// pull them again, so it answers "whole needed" and the host calls `create` with its own whole
/// transcript. The host handed only what the writer pulled (a batch at a time) before that.
#[test]
fn a_writer_that_restarts_gets_the_whole_transcript_from_the_host() {
    let loaded = load("handoff-fixture-streaming");
    let builtin = handoff_reference::ReferencePlugin;
    let transcript = long_transcript(1_000);
    let dir = tempfile::tempdir().unwrap();
    let root = StoreRoot::new(dir.path().join("store")).unwrap();
    let mut events = HostEvents::new(&transcript);
    let session = loaded
        .writer()
        .create_streamed(
            &root,
            REFERENCE,
            &mut events,
            &options(Some("/work"), Some("restart-after:5")),
        )
        .unwrap();
    assert_eq!(events.wholes, 1);
    assert!(
        (5..200).contains(&events.handed),
        "the host handed {} events before the restart: more than the batch the writer pulled",
        events.handed
    );
    let written = builtin
        .reader()
        .read(ReadFrom::Session(&root, &session))
        .unwrap();
    assert_eq!(written.events, transcript.events);
    assert_eq!(written.cwd.as_deref(), Some("/work"));
    assert!(!handoff_fixture_begun(&root).exists());
}

fn handoff_fixture_begun(root: &StoreRoot) -> std::path::PathBuf {
    // The streaming fixture's partial file (its `begun_file`).
    root.path().join("streaming-fixture-begun.jsonl")
}

/// A writer that asks for the whole transcript first (every plugin without a streaming writer:
/// the trait's default): with a cwd in the options the plugin pulls every event and builds it
/// itself, and the host's `whole` is never called; without one, the transcript's own cwd is
/// needed, which only the host has, so the host supplies the whole transcript.
#[test]
fn a_writer_that_wants_the_whole_transcript_first_gets_it_either_way() {
    let loaded = load("handoff-plugin-reference");
    let builtin = handoff_reference::ReferencePlugin;
    let transcript = long_transcript(300);
    let dir = tempfile::tempdir().unwrap();
    let root = StoreRoot::new(dir.path().join("store")).unwrap();
    for (cwd, wholes, expected_cwd) in [
        (Some("/work"), 0, "/work"),
        (None, 1, "/from/the/transcript"),
    ] {
        let mut events = HostEvents::new(&transcript);
        let session = loaded
            .writer()
            .create_streamed(&root, REFERENCE, &mut events, &options(cwd, None))
            .unwrap();
        assert_eq!(events.wholes, wholes, "{cwd:?}");
        let written = builtin
            .reader()
            .read(ReadFrom::Session(&root, &session))
            .unwrap();
        assert_eq!(written.events, transcript.events, "{cwd:?}");
        assert_eq!(written.cwd.as_deref(), Some(expected_cwd), "{cwd:?}");
    }
}

/// The host's events fail at event 700 (the engine's validation refusing it, say): the plugin's
/// writer gets that error, removes what it began, and the host gets the same error back; nothing
/// is left in the store. Also for a writer that takes the whole transcript first.
#[test]
fn an_error_of_the_hosts_events_reaches_the_writer_and_comes_back_intact() {
    let transcript = long_transcript(1_000);
    let refused = PluginError::InvalidTranscript("event 700 (u350): refused by the host".into());
    for package in ["handoff-fixture-streaming", "handoff-plugin-reference"] {
        let loaded = load(package);
        let dir = tempfile::tempdir().unwrap();
        let root = StoreRoot::new(dir.path().join("store")).unwrap();
        let mut events = HostEvents::new(&transcript);
        events.fail_at = Some((700, refused.clone()));
        let error = loaded
            .writer()
            .create_streamed(&root, REFERENCE, &mut events, &options(Some("/w"), None))
            .unwrap_err();
        assert_eq!(error, refused, "{package}");
        assert_eq!(events.wholes, 0, "{package}");
        assert!(!handoff_fixture_begun(&root).exists(), "{package}");
        assert_eq!(
            loaded.reader().list(&root, REFERENCE).unwrap(),
            vec![],
            "{package}"
        );
    }
}

/// A writer that ignores the host's error and creates a session from part of the events (or asks
/// to start over with the whole transcript) broke the contract: the host still fails with its own
/// error, and removes the session such a writer made.
#[test]
fn a_writer_that_ignores_the_hosts_error_still_fails_with_it() {
    let loaded = load("handoff-fixture-streaming");
    let transcript = long_transcript(200);
    let refused = PluginError::InvalidTranscript("event 9: refused".into());
    for locator in ["ignore-errors", "ignore-errors-restart"] {
        let dir = tempfile::tempdir().unwrap();
        let root = StoreRoot::new(dir.path().join("store")).unwrap();
        let mut events = HostEvents::new(&transcript);
        events.fail_at = Some((9, refused.clone()));
        let error = loaded
            .writer()
            .create_streamed(
                &root,
                REFERENCE,
                &mut events,
                &options(Some("/w"), Some(locator)),
            )
            .unwrap_err();
        assert_eq!(error, refused, "{locator}");
        assert_eq!(events.wholes, 0, "{locator}");
        assert_eq!(
            loaded.reader().list(&root, REFERENCE).unwrap(),
            vec![],
            "{locator}"
        );
    }
}

/// A plugin that panics in `create_streamed` or `read_path_each` is `Panicked` naming the method;
/// the host goes on, and so does the plugin.
#[test]
fn a_plugin_panic_in_a_streamed_call_is_an_error() {
    let loaded = load("handoff-fixture-streaming");
    let transcript = long_transcript(100);
    let dir = tempfile::tempdir().unwrap();
    let root = StoreRoot::new(dir.path().join("store")).unwrap();
    let error = loaded
        .writer()
        .create_streamed(
            &root,
            REFERENCE,
            &mut HostEvents::new(&transcript),
            &options(Some("/w"), Some("panic-after:3")),
        )
        .unwrap_err();
    let PluginError::Panicked {
        plugin,
        method,
        message,
    } = &error
    else {
        panic!("not a panic: {error}");
    };
    assert_eq!(
        (plugin.as_str(), method.as_str()),
        ("streaming-fixture", "create_streamed")
    );
    assert!(message.contains("after 3 events"), "{message}");

    let session = handoff_reference::ReferencePlugin
        .writer()
        .create(&root, REFERENCE, &transcript, &options(None, None))
        .unwrap();
    let panicking = root.path().join("panic.jsonl");
    std::fs::copy(&session.path, &panicking).unwrap();
    let mut seen = 0;
    let error = loaded
        .reader()
        .read_each(ReadFrom::File(REFERENCE, &panicking), &mut |_| {
            seen += 1;
            true
        })
        .unwrap_err();
    assert!(
        matches!(&error, PluginError::Panicked { method, .. } if method == "read_path_each"),
        "{error}"
    );
    assert!(seen <= 1, "{seen}");
    // Both go on.
    assert_eq!(
        read_path_each_all(&loaded, REFERENCE, &session.path)
            .unwrap()
            .len(),
        200
    );
}

/// The host's own code panics inside a streamed call (its sink, or its events while the plugin
/// pulls): the unwind never crosses the plugin's frames; the plugin is told to stop (a writer
/// sees its events fail and removes what it began), and the panic goes on in the host.
#[test]
fn a_host_panic_inside_a_streamed_call_unwinds_in_the_host() {
    let loaded = load("handoff-fixture-streaming");
    let transcript = long_transcript(500);
    let dir = tempfile::tempdir().unwrap();
    let root = StoreRoot::new(dir.path().join("store")).unwrap();
    let session = handoff_reference::ReferencePlugin
        .writer()
        .create(&root, REFERENCE, &transcript, &options(None, None))
        .unwrap();

    let caught = catch_unwind(AssertUnwindSafe(|| {
        let _ = loaded
            .reader()
            .read_each(ReadFrom::File(REFERENCE, &session.path), &mut |_| {
                panic!("the host's sink panicked")
            });
    }))
    .unwrap_err();
    assert_eq!(
        caught.downcast_ref::<&str>(),
        Some(&"the host's sink panicked")
    );

    let caught = catch_unwind(AssertUnwindSafe(|| {
        let mut events = HostEvents::new(&transcript);
        events.panic_at = Some(400);
        let _ = loaded.writer().create_streamed(
            &root,
            REFERENCE,
            &mut events,
            &options(Some("/w"), None),
        );
    }))
    .unwrap_err();
    assert_eq!(
        caught.downcast_ref::<&str>(),
        Some(&"the host's events panicked")
    );
    assert!(!handoff_fixture_begun(&root).exists());
    assert_eq!(loaded.reader().list(&root, REFERENCE).unwrap().len(), 1);
    assert_eq!(
        read_path_each_all(&loaded, REFERENCE, &session.path)
            .unwrap()
            .len(),
        1_000
    );
}

/// Checks the three new calls through a plugin that does not serve v4 to this host: they work
/// through the trait's defaults (a whole read, a whole create).
fn works_without_v4(loaded: &LoadedPlugin, what: &str) {
    let builtin = handoff_reference::ReferencePlugin;
    let transcript = long_transcript(300);
    let dir = tempfile::tempdir().unwrap();
    let root = StoreRoot::new(dir.path().join("store")).unwrap();
    let session = builtin
        .writer()
        .create(&root, REFERENCE, &transcript, &options(None, None))
        .unwrap();
    assert_eq!(
        read_path_each_all(loaded, REFERENCE, &session.path).unwrap(),
        transcript.events,
        "{what}"
    );
    // A read as a CLI version (the v3 requests' `cli_version`): a plugin whose reader reads
    // every version alike reads as it always did.
    let as_version = loaded.reader().reading_as("2.1.197").unwrap();
    assert_eq!(
        as_version
            .read(ReadFrom::File(REFERENCE, &session.path))
            .unwrap()
            .events,
        transcript.events,
        "{what}"
    );
    let mut first = Vec::new();
    loaded
        .reader()
        .read_each(ReadFrom::File(REFERENCE, &session.path), &mut |event| {
            first.push(event.id);
            false
        })
        .unwrap();
    assert_eq!(first, vec!["u0".to_owned()], "{what}");
    assert_eq!(
        loaded
            .reader()
            .cwd(ReadFrom::File(REFERENCE, &session.path))
            .unwrap()
            .as_deref(),
        Some("/from/the/transcript"),
        "{what}"
    );
    let mut events = HostEvents::new(&transcript);
    let created = loaded
        .writer()
        .create_streamed(
            &root,
            REFERENCE,
            &mut events,
            &options(Some("/w"), Some("restart-after:5")),
        )
        .unwrap();
    assert_eq!(events.wholes, 1, "{what}");
    assert_eq!(events.handed, 0, "{what}");
    assert_eq!(
        builtin
            .reader()
            .read(ReadFrom::Session(&root, &created))
            .unwrap()
            .events,
        transcript.events,
        "{what}"
    );
}

/// A plugin built before v4 (offering v3 ids only) loads and serves the new calls through the
/// defaults; a v4 plugin still serves a host that knows v3 only.
#[test]
fn a_v3_plugin_and_a_v3_host_still_work() {
    std::env::set_var("HANDOFF_FIXTURE_OFFER", "v3");
    let older = load("handoff-fixture-older-plugin");
    std::env::remove_var("HANDOFF_FIXTURE_OFFER");
    assert_eq!(older.capabilities(), vec![WRITER_V3, READER_V3, RESUME_V2]);
    works_without_v4(&older, "v3 plugin");

    let newer = loader::load_up_to(&support::plugin("handoff-fixture-streaming"), 3).unwrap();
    assert_eq!(newer.capabilities(), vec![WRITER_V3, READER_V3, RESUME_V2]);
    works_without_v4(&newer, "v3 host");
}
