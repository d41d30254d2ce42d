//! The conformance suite on the opencode plugin: offline, live (the real OpenCode 1.18.33
//! resuming what the plugin wrote, against a fake provider) and on its shared library.
handoff_live::plugin_tests!(handoff_opencode::OpencodePlugin, "handoff_plugin_opencode");
