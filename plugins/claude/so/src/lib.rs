//! `libhandoff_plugin_claude.so`: the claude plugin exported over the frozen ABI for hosts that load it.
handoff_sdk::export_plugin!(handoff_claude::ClaudePlugin);
