//! The conformance suite on the OpenAI plugin, both targets: offline, live (no CLI target: nothing
//! to run; see tests/fake_provider.rs for what stands in) and on its shared library.
handoff_live::plugin_tests!(handoff_openai::OpenaiPlugin, "handoff_plugin_openai");
