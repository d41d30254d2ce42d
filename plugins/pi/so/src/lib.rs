//! `libhandoff_plugin_pi.so`: the pi plugin exported over the frozen ABI for hosts that load it.
handoff_sdk::export_plugin!(handoff_pi::PiPlugin);
