//! `libhandoff_plugin_codex.so`: the codex plugin exported over the frozen ABI for hosts that load it.
handoff_sdk::export_plugin!(handoff_codex::CodexPlugin);
