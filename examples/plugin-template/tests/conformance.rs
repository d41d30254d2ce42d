//! The conformance suite on the template, in-process: every offline check passes. (`conformance
//! run target/debug/libhandoff_plugin_template.so` runs the same checks on the built library, each
//! in its own process, and writes the certificate a host needs.)

#[test]
fn every_offline_check_passes() {
    let report = handoff_conformance::run(
        &handoff_plugin_template::TemplatePlugin,
        &handoff_conformance::Options::default(),
    );
    let failures: Vec<String> = report
        .failures()
        .map(|c| format!("{}: {}", c.id, c.evidence.join("\n  ")))
        .collect();
    assert!(
        failures.is_empty(),
        "{}\n{}",
        report.table(),
        failures.join("\n")
    );
}
