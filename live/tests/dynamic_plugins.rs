//! Plugins as shared libraries: the loader's refusals, panics contained, distinct plugins in one
//! process, the conformance binary's exit codes and reports, certificates and verified targets.
//!
//! The fixtures are real `.so` files built from `tests/fixtures/` (see `support`).

mod support;

use handoff_host::ById;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

use handoff_host::loader::{self, LoadError};
use handoff_host::registry::{Availability, Registry, RegistryConfig};
use handoff_host::{
    Body, CreateOptions, Event, Plugin, PluginError, StoreRoot, Timestamp, Transcript,
};

fn load_error(path: &Path) -> LoadError {
    match loader::load(path) {
        Ok(plugin) => panic!("{} loaded: {:?}", path.display(), plugin.file()),
        Err(e) => e,
    }
}

/// Loading `path` is refused with the error `is`, whose one line says `why`.
fn refused(path: &Path, is: fn(&LoadError) -> bool, why: &str) -> LoadError {
    let e = load_error(path);
    assert!(is(&e), "{e:?}");
    assert!(e.to_string().contains(why), "{e}");
    assert_one_line(&e);
    e
}

/// A refusal is one line: never a layout dump.
fn assert_one_line(e: &LoadError) {
    let text = e.to_string();
    assert!(!text.contains('\n'), "not one line: {text}");
}

#[test]
fn a_missing_file_is_refused() {
    refused(
        Path::new("/nonexistent/handoff/plugin.so"),
        |e| matches!(e, LoadError::Unreadable { .. }),
        "cannot read the plugin file",
    );
}

#[test]
fn a_file_that_is_not_elf_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("plugin.so");
    std::fs::write(&path, "#!/bin/sh\necho not a library\n").unwrap();
    refused(
        &path,
        |e| matches!(e, LoadError::NotElf { .. }),
        "not a shared library",
    );
}

/// The dynamic loader maps segments past the end of a truncated file and the host dies of
/// SIGBUS; the probe refuses it first.
#[test]
fn a_truncated_library_is_refused_before_the_dynamic_loader_sees_it() {
    let dir = tempfile::tempdir().unwrap();
    let original = std::fs::read(support::plugin("handoff-plugin-reference")).unwrap();
    let path = dir.path().join("truncated.so");
    for cut in [40, 4096, original.len() / 2, original.len() - 1] {
        std::fs::write(&path, &original[..cut]).unwrap();
        refused(&path, |e| matches!(e, LoadError::Open { .. }), "truncated");
    }
}

#[test]
fn a_plain_cdylib_is_not_a_plugin() {
    refused(
        &support::plugin("handoff-fixture-not-a-plugin"),
        |e| matches!(e, LoadError::NotAPlugin { .. }),
        "not a handoff plugin",
    );
}

#[test]
fn a_plugin_for_another_api_major_is_refused_before_it_runs() {
    let e = load_error(&support::plugin("handoff-fixture-api-major-2"));
    let text = e.to_string();
    assert!(matches!(e, LoadError::ApiMismatch { .. }), "{e}");
    assert!(
        text.contains("needs plugin API ^2, this host is 1.0.0"),
        "{text}"
    );
    assert_one_line(&e);
}

#[test]
fn a_plugin_built_with_panic_abort_is_refused() {
    refused(
        &support::panic_abort_plugin(),
        |e| matches!(e, LoadError::PanicAbort { .. }),
        "built with panic=abort",
    );
}

#[test]
fn a_root_module_of_another_layout_is_summarised_in_one_line() {
    let e = refused(
        &support::plugin("handoff-fixture-abi-mismatch"),
        |e| matches!(e, LoadError::Abi { .. }),
        "incompatible plugin ABI: mismatched package (expected handoff-core, found handoff-fixture-abi-mismatch)",
    );
    assert!(
        e.to_string().len() < 600,
        "a layout dump, not a summary: {e}"
    );
}

fn one_message() -> Transcript {
    Transcript {
        schema: handoff_host::SCHEMA.into(),
        cwd: Some("/work".into()),
        events: vec![Event {
            id: "e1".into(),
            timestamp: Timestamp::from_millis(1_700_000_000_000),
            author: None,
            body: Body::user_text("hello"),
            opaque: Default::default(),
        }],
    }
}

#[test]
fn a_panicking_method_is_an_error_naming_plugin_and_method_and_the_host_lives_on() {
    let plugin = loader::load(&support::plugin("handoff-fixture-panicking")).unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let root = StoreRoot::new(scratch.path()).unwrap();
    for _ in 0..2 {
        let e = plugin
            .writer()
            .create(&root, "panicky", &one_message(), &CreateOptions::default())
            .unwrap_err();
        support::assert_fixture_panicked(&e, "create");
    }
    // Still alive, and the other methods still answer.
    assert_eq!(plugin.reader().list(&root, "panicky").unwrap(), vec![]);
}

#[test]
fn two_plugins_loaded_in_one_process_stay_distinct() {
    let reference = loader::load(&support::plugin("handoff-plugin-reference")).unwrap();
    let panicking = loader::load(&support::plugin("handoff-fixture-panicking")).unwrap();
    assert_eq!(reference.manifest().name, "reference");
    assert_eq!(panicking.manifest().name, "panicking");
    assert_ne!(reference.file().sha256, panicking.file().sha256);
    assert_eq!(reference.capabilities().len(), 3);

    let scratch = tempfile::tempdir().unwrap();
    let root = StoreRoot::new(scratch.path()).unwrap();
    let target = reference.manifest().targets[0].name.clone();
    let written = reference
        .writer()
        .create(&root, &target, &one_message(), &CreateOptions::default())
        .unwrap();
    let back = reference.read_id(&root, &target, &written.id).unwrap();
    assert_eq!(back.events.len(), 1);
    assert!(matches!(
        panicking
            .writer()
            .create(&root, "panicky", &one_message(), &CreateOptions::default()),
        Err(PluginError::Panicked { .. })
    ));
    // Loading the first again still gives the first (no per-type module cache).
    let again = loader::load(&support::plugin("handoff-plugin-reference")).unwrap();
    assert_eq!(again.manifest().name, "reference");
}

#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn plugin_logs_reach_the_host_subscriber() {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::INFO)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    tracing::subscriber::with_default(subscriber, || {
        let plugin = loader::load(&support::plugin("handoff-fixture-panicking")).unwrap();
        let scratch = tempfile::tempdir().unwrap();
        let root = StoreRoot::new(scratch.path()).unwrap();
        plugin.reader().list(&root, "panicky").unwrap();
    });
    let logs = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    assert!(logs.contains("listing an empty store"), "{logs}");
    assert!(logs.contains("plugin=\"panicking\""), "{logs}");
}

fn conformance() -> Command {
    Command::new(env!("CARGO_BIN_EXE_conformance"))
}

struct Run {
    code: i32,
    stderr: String,
    json: serde_json::Value,
}

fn run_conformance(plugin: &Path, extra: &[&str], env: &[(&str, &str)], certs: &Path) -> Run {
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("report.json");
    let junit = out.path().join("report.xml");
    let mut command = conformance();
    command
        .arg("run")
        .arg(plugin)
        .arg("--json")
        .arg(&json)
        .arg("--junit")
        .arg(&junit)
        .arg("--cert-dir")
        .arg(certs)
        .args(extra)
        .envs(env.iter().copied());
    let output = command.output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let json: serde_json::Value = serde_json::from_slice(
        &std::fs::read(&json).unwrap_or_else(|e| panic!("no JSON report ({e}):\n{stderr}")),
    )
    .unwrap();
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.starts_with("<?xml"), "{xml}");
    Run {
        code: output.status.code().unwrap_or(-1),
        stderr,
        json,
    }
}

/// How many files the certificate directory holds (0 when it was never made).
fn certificates_in(dir: &Path) -> usize {
    std::fs::read_dir(dir).map(|d| d.count()).unwrap_or(0)
}

/// Check `id` of `run` failed, its evidence naming `why`.
fn failed_with(run: &Run, id: &str, why: &str) {
    let check = check(run, id);
    assert_eq!(check["status"], "fail", "{check}");
    assert!(check["evidence"].to_string().contains(why), "{check}");
}

fn check<'a>(run: &'a Run, id: &str) -> &'a serde_json::Value {
    run.json["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("no check {id} in {}", run.json))
}

#[test]
fn conformance_exits_2_with_one_line_for_what_cannot_load() {
    let certs = tempfile::tempdir().unwrap();
    for (library, expected) in [
        (
            support::plugin("handoff-fixture-not-a-plugin"),
            "not a handoff plugin",
        ),
        (
            support::plugin("handoff-fixture-api-major-2"),
            "needs plugin API ^2, this host is 1.0.0",
        ),
        (support::panic_abort_plugin(), "built with panic=abort"),
    ] {
        let run = run_conformance(&library, &[], &[], certs.path());
        assert_eq!(run.code, 2, "{}", run.stderr);
        assert_eq!(run.json["outcome"], "not_loaded");
        let message = run.json["load_error"]["message"].as_str().unwrap();
        assert!(message.contains(expected), "{message}");
        assert!(!message.contains('\n'), "{message}");
        assert!(
            run.stderr
                .lines()
                .any(|l| l.starts_with("could not load:") && l.contains(expected)),
            "{}",
            run.stderr
        );
    }
    assert_eq!(certificates_in(certs.path()), 0);
}

#[test]
fn conformance_fails_a_panicking_plugin_and_survives_an_abort() {
    let certs = tempfile::tempdir().unwrap();
    let library = support::plugin("handoff-fixture-panicking");

    let run = run_conformance(&library, &[], &[], certs.path());
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(run.json["schema"], "handoff.conformance-run/1");
    assert_eq!(run.json["outcome"], "fail");
    assert_eq!(check(&run, "probe")["status"], "pass");
    assert_eq!(check(&run, "load")["status"], "pass");
    failed_with(&run, "round_trip/panicky", "panicked in create");

    // An abort inside the plugin kills only the check's process.
    let run = run_conformance(
        &library,
        &["--check", "round_trip"],
        &[("HANDOFF_FIXTURE_ABORT", "1")],
        certs.path(),
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    failed_with(&run, "round_trip/panicky", "signal 6 (SIGABRT)");
    assert_eq!(certificates_in(certs.path()), 0);
}

#[test]
fn conformance_kills_a_check_that_hangs() {
    let certs = tempfile::tempdir().unwrap();
    let run = run_conformance(
        &support::plugin("handoff-fixture-panicking"),
        &["--check", "round_trip", "--timeout", "3"],
        &[("HANDOFF_FIXTURE_HANG", "1")],
        certs.path(),
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    failed_with(&run, "round_trip/panicky", "timed out after 3.0 s");
}

fn registry(dir: &Path, certs: &Path) -> Registry {
    Registry::open(RegistryConfig {
        plugin_dirs: vec![dir.to_owned()],
        plugin_files: vec![],
        certificate_dir: certs.to_owned(),
        suite_version: handoff_conformance::SUITE_VERSION.into(),
    })
}

fn reason(registry: &Registry) -> String {
    match &registry.targets()[0].availability {
        Availability::NotOffered { reason } => reason.clone(),
        Availability::Verified { .. } => panic!("offered: {:?}", registry.targets()),
    }
}

/// The reference plugin's file copied into `<scratch>/plugins`, and a certificate folder
/// `<scratch>/certs`: (plugin folder, certificate folder, the file).
fn reference_in_a_plugin_folder(scratch: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let plugins = scratch.join("plugins");
    let library = support::copy_to(
        &support::plugin("handoff-plugin-reference"),
        &plugins,
        "libreference.so",
    );
    (plugins, scratch.join("certs"), library)
}

#[test]
fn the_reference_plugin_certifies_and_a_rebuilt_file_is_not_offered_until_certified_again() {
    let scratch = tempfile::tempdir().unwrap();
    let (plugins, certs, library) = reference_in_a_plugin_folder(scratch.path());

    // Before certification: known, not offered, never opened.
    let before = registry(&plugins, &certs);
    assert!(before.verified_targets().is_empty());
    assert!(
        reason(&before).starts_with("not certified"),
        "{}",
        reason(&before)
    );

    let run = run_conformance(&library, &[], &[], &certs);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.json["outcome"], "pass");
    assert_eq!(
        run.json["suite_version"],
        handoff_conformance::SUITE_VERSION
    );
    assert_eq!(
        run.json["host_api_version"],
        handoff_host::PLUGIN_API_VERSION
    );
    let sha = run.json["plugin"]["sha256"].as_str().unwrap().to_owned();
    let certificate = run.json["certificate"].as_str().unwrap();
    assert!(certificate.contains(&sha), "{certificate}");
    assert!(run.json["checks"].as_array().unwrap().len() >= 9);

    let certified = registry(&plugins, &certs);
    let verified = certified.verified_targets();
    assert_eq!(verified.len(), 1, "{:?}", certified.targets());
    assert_eq!(verified[0].target.as_deref(), Some("reference"));
    let plugin = certified.plugin_for("reference").unwrap();
    assert_eq!(plugin.manifest().name, "reference");

    // "Rebuilt": different bytes at the same path.
    let mut bytes = std::fs::read(&library).unwrap();
    bytes.extend_from_slice(b"rebuilt");
    std::fs::write(&library, &bytes).unwrap();
    let rebuilt = registry(&plugins, &certs);
    assert!(rebuilt.verified_targets().is_empty());
    let why = reason(&rebuilt);
    assert!(why.contains("changed since it was certified"), "{why}");
    assert_eq!(rebuilt.targets()[0].target.as_deref(), Some("reference"));
    assert!(rebuilt.plugin_for("reference").is_err());

    // Certified again: offered again.
    let run = run_conformance(&library, &[], &[], &certs);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(registry(&plugins, &certs).verified_targets().len(), 1);
}

#[test]
fn a_partial_run_writes_no_certificate() {
    let certs = tempfile::tempdir().unwrap();
    let run = run_conformance(
        &support::plugin("handoff-plugin-reference"),
        &["--check", "manifest"],
        &[],
        certs.path(),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.json["partial"], true);
    assert!(run.json["certificate"].is_null());
    assert_eq!(certificates_in(certs.path()), 0);
}

#[test]
fn a_plugin_file_shadows_a_builtin_offering_the_same_target() {
    let scratch = tempfile::tempdir().unwrap();
    let (plugins, certs, library) = reference_in_a_plugin_folder(scratch.path());
    let run = run_conformance(&library, &[], &[], &certs);
    assert_eq!(run.code, 0, "{}", run.stderr);

    let mut registry = registry(&plugins, &certs);
    let linked_plugin: Arc<dyn handoff_host::Plugin> = Arc::new(handoff_reference::ReferencePlugin);
    registry.add_builtin(linked_plugin.clone());
    registry
        .certify_builtins(|plugin| {
            handoff_conformance::certificate::outcome(&handoff_conformance::run(
                plugin,
                &handoff_conformance::Options::default(),
            ))
        })
        .unwrap();

    let listings = registry.targets();
    let of = |builtin: bool| {
        listings
            .iter()
            .find(|l| (l.source == handoff_host::registry::PluginSource::BuiltIn) == builtin)
            .unwrap_or_else(|| panic!("no listing (built-in: {builtin}): {listings:?}"))
    };
    let (file, linked) = (of(false), of(true));
    assert!(file.is_verified() && linked.is_verified(), "{listings:?}");
    assert!(file.in_use(), "the plugin file is the one used: {file:?}");
    assert!(!linked.in_use(), "the built-in is shadowed: {linked:?}");
    let winner = linked.shadowed_by.as_deref().unwrap();
    assert!(winner.contains("libreference.so"), "{winner}");

    // What runs is the plugin listed in use, every time: the loaded file, not the built-in.
    for _ in 0..3 {
        let chosen = registry.plugin_for("reference").unwrap();
        assert!(
            !Arc::ptr_eq(&chosen, &linked_plugin),
            "the built-in was chosen"
        );
    }
    assert_eq!(registry.verified_targets().len(), 2);
}

/// `--json rel.json` and `--junit rel.xml`: bare file names are written in the working directory
/// (their parent is `.`, not the empty path), and the run still exits 0.
#[test]
fn reports_named_by_a_bare_file_name_land_in_the_working_directory() {
    let cwd = tempfile::tempdir().unwrap();
    let output = conformance()
        .current_dir(cwd.path())
        .arg("run")
        .arg(support::plugin("handoff-plugin-reference"))
        .args([
            "--check", "manifest", "--json", "rel.json", "--junit", "rel.xml",
        ])
        .arg("--cert-dir")
        .arg(cwd.path().join("certs"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(cwd.path().join("rel.json")).unwrap()).unwrap();
    assert_eq!(report["outcome"], "pass", "{report:#}");
    assert!(cwd.path().join("rel.xml").is_file());
}
