//! The conformance suite on the template, in-process: every offline check passes. (`conformance
//! run target/debug/libhandoff_plugin_template.so` runs the same checks on the built library, each
//! in its own process, and writes the certificate a host needs.)

#[test]
fn every_offline_check_passes() {
    let plugin = &handoff_plugin_template::TemplatePlugin;
    handoff_conformance::run(plugin, &handoff_conformance::Options::default()).assert_passed();
}
