//! Built-in plugins: linked into the host and registered by it, certified on first use and keyed
//! by the host binary's hash.

use std::sync::Arc;

use handoff_core::registry::{builtin, Availability, Registry, RegistryConfig, Subject};
use handoff_core::Plugin;

fn registry(certs: &std::path::Path) -> Registry {
    Registry::open(RegistryConfig {
        plugin_dirs: vec![],
        plugin_files: vec![],
        certificate_dir: certs.to_owned(),
        suite_version: handoff_conformance::SUITE_VERSION.into(),
    })
}

fn linked_reference_plugin() -> Arc<dyn Plugin> {
    // The reference plugin's crate is a dev-dependency; `register_builtin!` gave it this function.
    Arc::from(handoff_reference::handoff_builtin())
}

#[test]
fn a_builtin_is_certified_on_first_use_and_then_offered() {
    let certs = tempfile::tempdir().unwrap();
    let mut first = registry(certs.path());
    first.add_builtin(linked_reference_plugin());
    let listing = &first.targets()[0];
    assert_eq!(listing.target.as_deref(), Some("reference"));
    match &listing.availability {
        Availability::NotOffered { reason } => {
            assert!(reason.contains("certified on first use"), "{reason}")
        }
        other => panic!("offered before certification: {other:?}"),
    }

    let written = first
        .certify_builtins(|plugin| {
            handoff_conformance::certificate::outcome(&handoff_conformance::run(
                plugin,
                &handoff_conformance::Options::default(),
            ))
        })
        .unwrap();
    assert_eq!(written.len(), 1);
    assert!(first.targets()[0].is_verified(), "{:?}", first.targets());

    // The certificate names this host binary: a second registry in the same binary trusts it
    // without running the suite again.
    let certificate: handoff_core::registry::Certificate =
        serde_json::from_slice(&std::fs::read(&written[0]).unwrap()).unwrap();
    match &certificate.subject {
        Subject::BuiltIn {
            name, host_sha256, ..
        } => {
            assert_eq!(name, "reference");
            assert_eq!(host_sha256, &builtin::host_sha256().unwrap());
        }
        other => panic!("{other:?}"),
    }
    let mut second = registry(certs.path());
    second.add_builtin(linked_reference_plugin());
    assert!(second.targets()[0].is_verified());
    assert!(second
        .certify_builtins(|_| panic!("already certified"))
        .unwrap()
        .is_empty());
    assert_eq!(
        second.plugin_for("reference").unwrap().manifest().name,
        "reference"
    );
}
