//! The conformance suite on the Copilot CLI plugin: offline, live (the real GitHub Copilot CLI
//! 1.0.102 resuming what the plugin wrote, against a fake provider) and on its shared library.
handoff_live::plugin_tests!(handoff_copilot::CopilotPlugin, "handoff_plugin_copilot");
