//! The reference plugin passes every check of the suite.

use handoff_conformance::{run, Options, Status};
use handoff_reference::ReferencePlugin;

#[test]
fn reference_plugin_passes_every_check() {
    let report = run(&ReferencePlugin, &Options::default());
    for c in &report.checks {
        eprintln!("{}: {:?}", c.id, c.evidence);
    }
    assert!(report.passed(), "{}", report.table());
    assert_eq!(report.checks.len(), 7);
    assert!(report.checks.iter().all(|c| c.status == Status::Pass));
}
