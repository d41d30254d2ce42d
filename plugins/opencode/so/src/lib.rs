//! `libhandoff_plugin_opencode.so`: the opencode plugin exported over the frozen ABI for hosts
//! that load it.
handoff_sdk::export_plugin!(handoff_opencode::OpencodePlugin);

/// The plugin's own allocator (as every provider's .so: `docs/abi.md`, "Allocators").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
