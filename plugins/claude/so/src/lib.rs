//! `libhandoff_plugin_claude.so`: the claude plugin exported over the frozen ABI for hosts that load it.
handoff_sdk::export_plugin!(handoff_claude::ClaudePlugin);

/// The plugin's own allocator: what it allocates never crosses the ABI (the host gets encoded
/// bytes and frees its own copies), and glibc's malloc makes the readers' many small strings and
/// reallocs about 1.4× slower than the host's jemalloc does for the built-ins
/// (`docs/continuation.md`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
