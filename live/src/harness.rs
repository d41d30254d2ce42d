//! The standard tests of a plugin crate, so every provider folder is tested the same way.
//!
//! A plugin's `tests/conformance.rs` is one line:
//!
//! ```ignore
//! handoff_live::plugin_tests!(handoff_codex::CodexPlugin, "handoff_plugin_codex");
//! ```
//!
//! It makes three tests: the offline suite on the plugin linked in; the live tier on each of its CLI
//! targets (the real CLI resuming what the plugin wrote; a skip fails under
//! `HANDOFF_LIVE_REQUIRED=1`); and the offline suite again on the plugin's shared library, loaded
//! from the `.so` that its `so/` crate builds (a `cdylib` dev-dependency of the plugin crate,
//! built beside the test executable) — the file a host actually loads.
//!
//! Beside them, what a plugin's reader tests look at the same way: a sample file of the crate
//! ([`sample`]), a transcript's shape in letters ([`shape`]), an event's text ([`text_of`]).

use std::path::{Path, PathBuf};

use handoff_host::Plugin;
use handoff_transcript::{AssistantPart, Body, Event, Part, Transcript};

use crate::{run_live_checks, skips_are_failures, LiveOptions};
use handoff_conformance::{run, CheckResult, Options, Status};

/// Runs the offline suite and panics with the table and evidence of every failed check.
pub fn assert_offline(plugin: &dyn Plugin) {
    let report = run(plugin, &Options::default());
    let manifest = plugin.manifest();
    for target in &manifest.targets {
        assert!(
            report
                .checks
                .iter()
                .any(|c| c.id.ends_with(&format!("/{}", target.name))),
            "no check ran on {}:\n{}",
            target.name,
            report.table()
        );
    }
    report.assert_passed();
}

/// Runs the live tier on every CLI target of `plugin` and judges it with [`judge_live`]. A plugin
/// with no CLI target has nothing to run.
pub fn assert_live(plugin: &dyn Plugin) {
    let has_cli = plugin.manifest().targets.iter().any(|t| t.live.is_some());
    if !has_cli {
        eprintln!("no CLI target: the live tier has nothing to run");
        return;
    }
    judge_live(&run_live_checks(plugin, &LiveOptions::default()));
}

/// Prints every live result; panics on any failure, and on any skip when
/// `HANDOFF_LIVE_REQUIRED=1`.
pub fn judge_live(results: &[CheckResult]) {
    assert!(!results.is_empty(), "no live check ran");
    for r in results {
        eprintln!("{:?} {} ({:.0} ms)", r.status, r.id, r.duration_ms);
        for line in &r.evidence {
            eprintln!("    {line}");
        }
    }
    let failed: Vec<String> = results
        .iter()
        .filter(|r| r.status == Status::Fail)
        .map(|r| format!("{}:\n    {}", r.id, r.evidence.join("\n    ")))
        .collect();
    assert!(
        failed.is_empty(),
        "{} live check(s) failed:\n{}",
        failed.len(),
        failed.join("\n")
    );
    let skipped: Vec<&CheckResult> = results
        .iter()
        .filter(|r| r.status == Status::Skip)
        .collect();
    if let Some(first) = skipped.first() {
        let reason = first.evidence.join("; ");
        assert!(
            !skips_are_failures(),
            "HANDOFF_LIVE_REQUIRED=1 and {} live check(s) skipped: {reason}",
            skipped.len()
        );
        eprintln!("SKIP {} live check(s): {reason}", skipped.len());
    }
}

/// The shared library `lib<name>.so` built beside the running test executable (by a `cdylib`
/// dev-dependency of the crate under test).
pub fn library_beside_tests(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test executable has a path");
    let deps = exe.parent().expect("the executable is in a folder");
    let file = format!("lib{name}.so");
    [deps.join(&file), deps.join("..").join(&file)]
        .into_iter()
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!(
                "{file} is not beside {}: the plugin crate needs its so/ crate as a dev-dependency",
                exe.display()
            )
        })
}

/// Loads the plugin's shared library the way a host does and runs the offline suite on it; its
/// manifest must be the linked plugin's.
pub fn assert_library(linked: &dyn Plugin, name: &str) {
    let path = library_beside_tests(name);
    let loaded = handoff_host::loader::load(&path)
        .unwrap_or_else(|e| panic!("{} does not load: {e}", path.display()));
    assert_eq!(
        loaded.manifest(),
        linked.manifest(),
        "the library's manifest differs from the linked plugin's"
    );
    assert_offline(&loaded);
}

/// The standard tests of a plugin crate: `plugin_tests!(PluginValue, "lib_name_without_lib")`.
#[macro_export]
macro_rules! plugin_tests {
    ($plugin:expr, $library:literal) => {
        #[test]
        fn offline_suite_passes() {
            $crate::harness::assert_offline(&$plugin);
        }

        #[test]
        fn live_tier_passes() {
            $crate::harness::assert_live(&$plugin);
        }

        #[test]
        fn shared_library_passes() {
            $crate::harness::assert_library(&$plugin, $library);
        }
    };
}

/// `plugin` with a writer whose `create` is its own `create_streamed` over the held transcript:
/// the live tier run on it proves the real CLI resumes what the streamed create writes (the
/// continuation engine creates every session from a source file so).
pub struct CreateStreamed<'p>(pub &'p dyn Plugin);

impl Plugin for CreateStreamed<'_> {
    fn manifest(&self) -> handoff_host::Manifest {
        self.0.manifest()
    }
    fn writer(&self) -> &dyn handoff_host::Writer {
        self
    }
    fn reader(&self) -> &dyn handoff_host::Reader {
        self.0.reader()
    }
    fn resumer(&self) -> &dyn handoff_host::Resumer {
        self.0.resumer()
    }
}

impl handoff_host::Writer for CreateStreamed<'_> {
    fn create(
        &self,
        root: &handoff_host::StoreRoot,
        target: &str,
        transcript: &handoff_host::Transcript,
        options: &handoff_host::CreateOptions,
    ) -> Result<handoff_host::SessionRef, handoff_host::PluginError> {
        let mut events = handoff_host::HeldEvents::new(transcript);
        self.0
            .writer()
            .create_streamed(root, target, &mut events, options)
    }

    fn append(
        &self,
        root: &handoff_host::StoreRoot,
        session: &handoff_host::SessionRef,
        events: &[handoff_host::Event],
    ) -> Result<handoff_host::SessionRef, handoff_host::PluginError> {
        self.0.writer().append(root, session, events)
    }

    fn remove(
        &self,
        root: &handoff_host::StoreRoot,
        session: &handoff_host::SessionRef,
    ) -> Result<(), handoff_host::PluginError> {
        self.0.writer().remove(root, session)
    }
}

/// `tests/samples/<folder>/<file>` of the crate at `crate_dir` (its `CARGO_MANIFEST_DIR`).
pub fn sample(crate_dir: &str, folder: &str, file: &str) -> PathBuf {
    Path::new(crate_dir)
        .join("tests/samples")
        .join(folder)
        .join(file)
}

/// One letter per event: U user, A assistant, R tool result (E a failed one), C compaction.
pub fn shape(t: &Transcript) -> String {
    t.events
        .iter()
        .map(|e| match &e.body {
            Body::User { .. } => 'U',
            Body::Assistant { .. } => 'A',
            Body::ToolResult {
                is_error: false, ..
            } => 'R',
            Body::ToolResult { is_error: true, .. } => 'E',
            Body::Compaction { .. } => 'C',
        })
        .collect()
}

/// The text of an event: its text parts joined (a compaction's summary).
pub fn text_of(e: &Event) -> String {
    match &e.body {
        Body::User { content } | Body::ToolResult { content, .. } => {
            content.iter().filter_map(part_text).collect()
        }
        Body::Assistant { content, .. } => content.iter().filter_map(assistant_text).collect(),
        Body::Compaction { summary, .. } => summary.clone(),
    }
}

fn part_text(part: &Part) -> Option<&str> {
    match part {
        Part::Text { text } => Some(text),
        _ => None,
    }
}

fn assistant_text(part: &AssistantPart) -> Option<&str> {
    match part {
        AssistantPart::Text { text } => Some(text),
        _ => None,
    }
}
