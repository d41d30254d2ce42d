//! The conformance suite on the Claude plugin, both targets: offline, live (the real Claude Code
//! resuming what the plugin wrote) and on its shared library.
handoff_live::plugin_tests!(handoff_claude::ClaudePlugin, "handoff_plugin_claude");
