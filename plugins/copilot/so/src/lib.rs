//! `libhandoff_plugin_copilot.so`: the Copilot CLI plugin exported over the frozen ABI for hosts
//! that load it.
handoff_sdk::export_plugin!(handoff_copilot::CopilotPlugin);
