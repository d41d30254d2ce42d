//! The conformance suite on the Codex plugin: offline, live (the real Codex resuming what the
//! plugin wrote) and on its shared library.
handoff_live::plugin_tests!(handoff_codex::CodexPlugin, "handoff_plugin_codex");
