//! The conformance suite on the qwen plugin: offline, live (the real Qwen Code 0.24.4 resuming
//! what the plugin wrote) and on its shared library.
handoff_live::plugin_tests!(handoff_qwen::QwenPlugin, "handoff_plugin_qwen");
