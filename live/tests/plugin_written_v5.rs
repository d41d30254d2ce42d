//! The v5 capability ids through real plugin files: a loaded plugin's create reports the file it
//! writes as it writes it, and its reader reads a file as its writer writes it, exactly as the
//! built-in reads it whole; a file abandoned midway is an error, not a short read; a host that
//! knows v4 only gets neither.

mod support;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use handoff_capability::WrittenFile;
use handoff_conformance::LentInSteps;
use handoff_host::loader;
use handoff_host::{
    CreateOptions, Event, HeldEvents, Plugin, PluginError, ReadFrom, ReadOutcome, StoreRoot,
};
use handoff_store::tap::{self, WriteTap};

use support::{load_newest, long_transcript, read_path_each_all};

/// What a tap was told: the temp file, each length, the end.
#[derive(Clone, Default)]
struct Reports(Arc<Mutex<Told>>);

type Told = (Option<PathBuf>, Vec<u64>, Option<bool>);

impl WriteTap for Reports {
    fn began(&mut self, temp: &Path) {
        self.0.lock().unwrap().0 = Some(temp.to_owned());
    }
    fn written(&mut self, len: u64) {
        self.0.lock().unwrap().1.push(len);
    }
    fn ended(&mut self, whole: bool) {
        self.0.lock().unwrap().2 = Some(whole);
    }
}

fn read_written(
    plugin: &dyn Plugin,
    target: &str,
    file: &dyn WrittenFile,
) -> Result<(bool, Vec<Event>), PluginError> {
    let mut events = Vec::new();
    let read = plugin
        .reader()
        .read_each(ReadFrom::Written(target, file), &mut |e| {
            events.push(e);
            true
        })?;
    Ok((read == ReadOutcome::Read, events))
}

/// `reads_as_a_version`: whether the built-in reads a file as written as a version of its CLI
/// (the SDK declines it for a target that does not say how).
fn reports_and_reads_as_written(
    builtin: &dyn Plugin,
    package: &str,
    target: &str,
    reads_as_a_version: bool,
) {
    let loaded = load_newest(package);
    let dir = tempfile::tempdir().unwrap();
    let root = StoreRoot::new(dir.path().join("store")).unwrap();
    // Claude Code's writer writes about 1 MiB at a time: a file of several writes.
    let transcript = long_transcript(3_000);
    let options = CreateOptions {
        cwd: Some("/work".into()),
        locator: Some("v5".into()),
    };
    let reports = Reports::default();
    let session = tap::watched(Box::new(reports.clone()), || {
        loaded
            .writer()
            .create_streamed(&root, target, &mut HeldEvents::new(&transcript), &options)
    })
    .unwrap();
    let (temp, lengths, ended) = reports.0.lock().unwrap().clone();
    let temp = temp.expect("the plugin's create reported its temp file");
    assert_eq!(temp.parent(), session.path.parent(), "{package}");
    assert!(
        temp.file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with(".handoff-tmp-"),
        "{package}: {}",
        temp.display()
    );
    assert!(lengths.len() >= 4, "{package}: {lengths:?}");
    assert!(lengths.windows(2).all(|w| w[0] < w[1]), "{package}");
    let len = std::fs::metadata(&session.path).unwrap().len();
    assert_eq!(lengths.last(), Some(&len), "{package}");
    assert_eq!(ended, Some(true), "{package}");

    // Read as it is written, in small steps of growth: the built-in's whole read, exactly.
    let whole = read_path_each_all(builtin, target, &session.path).unwrap();
    for step in [4_096, 1 << 20] {
        let file = LentInSteps::new(&session.path, step).unwrap();
        let (read, events) = read_written(&loaded, target, &file).unwrap();
        assert!(read, "{package}");
        assert_eq!(events, whole, "{package}, steps of {step}");
        assert!(file.waits() >= (len / step) as usize, "{package}");
    }
    // The built-in reads the same as the plugin file.
    let lent = LentInSteps::new(&session.path, 65_536).unwrap();
    let (read, events) = read_written(builtin, target, &lent).unwrap();
    assert!(read);
    assert_eq!(events, whole, "{package} built in");

    // Read as a version of its CLI (as a host reads a source): the wire's read of a file being
    // written names no version, so the plugin file declines it, reading nothing (the host then
    // reads the file whole, as that version).
    let as_version = loaded.reader().reading_as("2.1.197").unwrap();
    let lent = LentInSteps::new(&session.path, 65_536).unwrap();
    let outcome = as_version
        .read_each(ReadFrom::Written(target, &lent), &mut |_| {
            panic!("{package}: an event read as written as a version")
        })
        .unwrap();
    assert_eq!(outcome, ReadOutcome::NotSupported, "{package}");
    let as_version = builtin.reader().reading_as("2.1.197").unwrap();
    let lent = LentInSteps::new(&session.path, 65_536).unwrap();
    let mut events = Vec::new();
    let outcome = as_version
        .read_each(ReadFrom::Written(target, &lent), &mut |e| {
            events.push(e);
            true
        })
        .unwrap();
    if reads_as_a_version {
        assert_eq!(outcome, ReadOutcome::Read, "{package} built in");
        let mut whole = Vec::new();
        as_version
            .read_each(ReadFrom::File(target, &session.path), &mut |e| {
                whole.push(e);
                true
            })
            .unwrap();
        assert_eq!(events, whole, "{package} built in, as a version");
    } else {
        assert_eq!(outcome, ReadOutcome::NotSupported, "{package} built in");
        assert!(events.is_empty(), "{package} built in");
    }

    // Abandoned midway: an error, never the events of a short file.
    let file = LentInSteps::new(&session.path, 65_536)
        .unwrap()
        .abandoned_at(len / 2);
    let err = read_written(&loaded, target, &file).unwrap_err();
    assert!(err.to_string().contains("abandoned"), "{package}: {err}");
}

#[test]
fn the_codex_plugin_file_reports_its_rollout_and_reads_one_as_written() {
    reports_and_reads_as_written(
        &handoff_codex::CodexPlugin,
        "handoff-plugin-codex",
        "codex",
        false,
    );
}

#[test]
fn the_claude_plugin_file_reports_its_session_and_reads_one_as_written() {
    reports_and_reads_as_written(
        &handoff_claude::ClaudePlugin,
        "handoff-plugin-claude",
        "claude-code",
        true,
    );
}

#[test]
fn a_host_that_knows_v4_only_gets_no_reports_and_no_read_as_written() {
    let loaded = loader::load_up_to(&support::plugin("handoff-plugin-codex"), 4).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let root = StoreRoot::new(dir.path().join("store")).unwrap();
    let transcript = long_transcript(3);
    let reports = Reports::default();
    let session = tap::watched(Box::new(reports.clone()), || {
        let session = loaded.writer().create_streamed(
            &root,
            "codex",
            &mut HeldEvents::new(&transcript),
            &CreateOptions {
                cwd: Some("/work".into()),
                locator: None,
            },
        );
        // The host's own create took no tap: it is still there.
        assert!(tap::take().is_some());
        session
    })
    .unwrap();
    assert_eq!(reports.0.lock().unwrap().0, None);
    let (read, events) = read_written(
        &loaded,
        "codex",
        &LentInSteps::new(&session.path, 4_096).unwrap(),
    )
    .unwrap();
    assert!(!read);
    assert!(events.is_empty());
}
