//! `libhandoff_plugin_qwen.so`: the qwen plugin exported over the frozen ABI for hosts that load it.
handoff_sdk::export_plugin!(handoff_qwen::QwenPlugin);

/// The plugin's own allocator: what it allocates never changes hands across the ABI (the host
/// copies the bytes it is handed; `docs/abi.md`, "Allocators").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
