//! The host app as a user runs it: the reference plugin's `.so` (built beside this test by its
//! cdylib dev-dependency) is certified with the conformance library as the `conformance` binary
//! would; the app lists it as verified with what it carries, lists an uncertified copy as not
//! offered, and continues a transcript on it, printing a plan that names the new session.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use handoff_conformance::certificate::certify_file;
use handoff_conformance::{run, Options};
use handoff_host::registry::CertificateStore;
use handoff_host::Plugin;
use handoff_live::harness::library_beside_tests;
use serde_json::Value;

const TARGET: &str = "reference";

fn host_app(args: &[&Path]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_host-app"))
        .args(args)
        .output()
        .expect("host-app runs")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A plugin folder with the reference `.so` (certified into `certs`) and a copy of it one byte
/// longer (so another file, with no certificate).
fn plugin_folder(dir: &Path, certs: &Path) -> PathBuf {
    let plugins = dir.join("plugins");
    std::fs::create_dir_all(&plugins).unwrap();
    let built = library_beside_tests("handoff_plugin_reference");
    let certified = plugins.join("libhandoff_plugin_reference.so");
    std::fs::copy(&built, &certified).unwrap();
    let mut other = std::fs::read(&built).unwrap();
    other.push(0);
    std::fs::write(plugins.join("libuncertified.so"), other).unwrap();

    let loaded = handoff_host::loader::load(&certified).expect("the reference .so loads");
    let report = run(&loaded, &Options::default());
    assert!(report.passed(), "{}", report.table());
    certify_file(
        &CertificateStore::new(certs),
        loaded.file(),
        &loaded.manifest(),
        &report,
    )
    .unwrap();
    plugins
}

#[test]
fn the_host_accepts_certificates_of_this_suite_version() {
    assert_eq!(
        handoff_host_app_suite_version(),
        handoff_conformance::SUITE_VERSION
    );
}

/// The binary's `SUITE_VERSION` (a binary crate has no library to import it from).
fn handoff_host_app_suite_version() -> String {
    let main = include_str!("../src/main.rs");
    let line = main
        .lines()
        .find(|l| l.starts_with("pub const SUITE_VERSION"))
        .unwrap();
    line.split('"').nth(1).unwrap().to_owned()
}

#[test]
fn lists_the_certified_plugin_as_verified_and_the_other_as_not_offered() {
    let dir = tempfile::tempdir().unwrap();
    let certs = dir.path().join("certs");
    let plugins = plugin_folder(dir.path(), &certs);
    let out = host_app(&[&plugins, &certs]);
    assert!(out.status.success(), "{out:?}");
    let text = stdout(&out);
    let (verified, others) = text.split_once("not offered:").expect("both sections");
    assert!(
        verified.contains(&format!("  {TARGET}  (reference, "))
            && verified.contains("libhandoff_plugin_reference.so"),
        "{text}"
    );
    let carries = handoff_reference::manifest()
        .target(TARGET)
        .unwrap()
        .carries
        .iter()
        .map(|f| f.name())
        .collect::<Vec<_>>()
        .join(", ");
    assert!(verified.contains(&format!("carries: {carries}")), "{text}");
    assert!(
        others.contains("libuncertified.so") && others.contains("not certified"),
        "{text}"
    );
    assert!(!verified.contains("libuncertified.so"), "{text}");

    // Without the certificate, nothing is offered.
    let out = host_app(&[&plugins, &dir.path().join("no-certs")]);
    let text = stdout(&out);
    let (verified, _) = text.split_once("not offered:").unwrap();
    assert!(verified.contains("(none)"), "{text}");
}

#[test]
fn continues_a_transcript_and_prints_a_plan_naming_the_new_session() {
    let dir = tempfile::tempdir().unwrap();
    let certs = dir.path().join("certs");
    let plugins = plugin_folder(dir.path(), &certs);
    let transcript = dir.path().join("transcript.json");
    let entry = handoff_conformance::corpus::entry("parallel-tool-calls").unwrap();
    std::fs::write(&transcript, entry.transcript.to_json_pretty()).unwrap();
    let store = dir.path().join("store");
    let continue_on = |target: &str| {
        host_app(&[
            &plugins,
            &certs,
            Path::new("--continue"),
            &transcript,
            Path::new("--to"),
            Path::new(target),
            Path::new("--store-root"),
            &store,
        ])
    };
    let out = continue_on(TARGET);
    assert!(out.status.success(), "{out:?}");
    let text = stdout(&out);
    let json = text.split_once("continued:\n").expect("a plan").1;
    let continued: Value = serde_json::from_str(json).unwrap();
    assert_eq!(continued["action"]["kind"], "created");
    let id = continued["session"]["id"].as_str().unwrap();
    assert!(Path::new(continued["session"]["path"].as_str().unwrap()).starts_with(&store));
    assert!(
        continued["plan"].to_string().contains(id),
        "the plan does not name session {id}: {}",
        continued["plan"]
    );
    // Again: the same session, unchanged.
    let again: Value = serde_json::from_str(
        stdout(&continue_on(TARGET))
            .split_once("continued:\n")
            .unwrap()
            .1,
    )
    .unwrap();
    assert_eq!(
        (
            again["action"]["kind"].as_str(),
            again["session"]["id"].as_str()
        ),
        (Some("unchanged"), Some(id))
    );
    // A target no certified plugin offers is refused, saying so.
    let out = continue_on("openai-chat");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("openai-chat"));
}
