//! `libhandoff_plugin_claude.so`: the claude plugin exported over the frozen ABI for hosts that load it.
handoff_sdk::export_plugin!(handoff_claude::ClaudePlugin);

/// The plugin's own allocator: what it allocates never changes hands across the ABI (the host
/// copies the bytes it is handed), and a reader's many small strings and reallocs cost about
/// 1.4× as much under glibc's malloc (`docs/abi.md`, "Allocators").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
