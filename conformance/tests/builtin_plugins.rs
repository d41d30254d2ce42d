//! Built-in plugins: linked into the host and registered by it, certified on first use and keyed
//! by the host binary's hash.

use std::sync::Arc;

use handoff_host::registry::{builtin, Availability, Registry, RegistryConfig, Subject};
use handoff_host::Plugin;

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
    let certificate: handoff_host::registry::Certificate =
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

/// The reference plugin under another plugin name and target name, so one host links several.
struct Renamed {
    name: &'static str,
}

impl Renamed {
    fn target(&self) -> String {
        format!("{}-target", self.name)
    }
}

impl Plugin for Renamed {
    fn manifest(&self) -> handoff_host::Manifest {
        let mut manifest = handoff_reference::ReferencePlugin.manifest();
        manifest.name = self.name.to_owned();
        for target in &mut manifest.targets {
            target.name = self.target();
        }
        manifest
    }
    fn writer(&self) -> &dyn handoff_host::Writer {
        handoff_reference::ReferencePlugin.writer()
    }
    fn reader(&self) -> &dyn handoff_host::Reader {
        handoff_reference::ReferencePlugin.reader()
    }
    fn resumer(&self) -> &dyn handoff_host::Resumer {
        handoff_reference::ReferencePlugin.resumer()
    }
}

/// A suite outcome that passes, without running the suite (these tests are about which built-ins
/// are certified, and when).
fn passed() -> handoff_host::registry::SuiteOutcome {
    handoff_host::registry::SuiteOutcome {
        suite_version: handoff_conformance::SUITE_VERSION.into(),
        checks: vec![handoff_host::registry::CertifiedCheck {
            id: "manifest".into(),
            status: "pass".into(),
        }],
    }
}

fn with_builtins(certs: &std::path::Path, names: &[&'static str]) -> Registry {
    let mut registry = registry(certs);
    for &name in names {
        registry.add_builtin(Arc::new(Renamed { name }));
    }
    registry
}

fn verified(registry: &Registry) -> Vec<String> {
    registry
        .verified_targets()
        .into_iter()
        .map(|l| l.plugin)
        .collect()
}

#[test]
fn only_the_builtins_offering_the_targets_used_are_certified() {
    let certs = tempfile::tempdir().unwrap();
    let certified = std::sync::Mutex::new(Vec::new());
    let certify = |plugin: &dyn Plugin| {
        certified.lock().unwrap().push(plugin.manifest().name);
        passed()
    };
    let mut registry = with_builtins(certs.path(), &["alpha", "beta", "gamma"]);
    assert_eq!(
        registry.uncertified_builtins_for(&["alpha-target", "no-such-target"]),
        ["alpha"]
    );
    let written = registry
        .certify_builtins_for(&["alpha-target"], certify)
        .unwrap();
    assert_eq!(written.len(), 1);
    assert_eq!(*certified.lock().unwrap(), ["alpha"]);
    assert_eq!(verified(&registry), ["alpha"]);
    assert!(registry.plugin_for("beta-target").is_err());

    // alpha is certified already; only beta runs.
    registry
        .certify_builtins_for(&["alpha-target", "beta-target"], certify)
        .unwrap();
    assert_eq!(*certified.lock().unwrap(), ["alpha", "beta"]);

    // Another run of this host finds both certificates and certifies only what is left.
    let mut next = with_builtins(certs.path(), &["alpha", "beta", "gamma"]);
    assert_eq!(verified(&next), ["alpha", "beta"]);
    assert_eq!(next.uncertified_builtins(), ["gamma"]);
    next.certify_builtins(certify).unwrap();
    assert_eq!(*certified.lock().unwrap(), ["alpha", "beta", "gamma"]);
    assert_eq!(verified(&next), ["alpha", "beta", "gamma"]);
}

#[test]
fn builtins_are_certified_in_parallel() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::{Duration, Instant};
    let certs = tempfile::tempdir().unwrap();
    let mut registry = with_builtins(certs.path(), &["alpha", "beta"]);
    let (running, most) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let written = registry
        .certify_builtins_for(&["alpha-target", "beta-target"], |_| {
            let now = running.fetch_add(1, Ordering::SeqCst) + 1;
            most.fetch_max(now, Ordering::SeqCst);
            // Run one after the other, each would wait here alone until the deadline.
            let deadline = Instant::now() + Duration::from_secs(20);
            while most.load(Ordering::SeqCst) < 2 && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(1));
            }
            running.fetch_sub(1, Ordering::SeqCst);
            passed()
        })
        .unwrap();
    assert_eq!(written.len(), 2);
    assert_eq!(
        most.load(Ordering::SeqCst),
        2,
        "the two ran one after the other"
    );
    assert_eq!(verified(&registry), ["alpha", "beta"]);
}
