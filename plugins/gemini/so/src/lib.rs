//! `libhandoff_plugin_gemini.so`: the gemini plugin exported over the frozen ABI for hosts that load it.
handoff_sdk::export_plugin!(handoff_gemini::GeminiPlugin);
