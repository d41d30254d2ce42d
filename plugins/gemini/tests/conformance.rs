//! The conformance suite on the Gemini plugin, both targets: offline, live (the real Gemini CLI
//! 0.61.0 resuming what the plugin wrote) and on its shared library.
handoff_live::plugin_tests!(handoff_gemini::GeminiPlugin, "handoff_plugin_gemini");
