//! `libhandoff_plugin_reference.so`: the reference plugin exported over the frozen ABI.
handoff_sdk::export_plugin!(handoff_reference::ReferencePlugin);
