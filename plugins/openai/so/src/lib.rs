//! `libhandoff_plugin_openai.so`: the openai plugin exported over the frozen ABI for hosts that load it.
handoff_sdk::export_plugin!(handoff_openai::OpenaiPlugin);
