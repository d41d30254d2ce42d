//! Built-in plugins: plugin crates linked into the host and registered by it. A plugin crate says
//! `handoff_sdk::register_builtin!(ItsPlugin)`, which defines `pub fn handoff_builtin() -> Box<dyn
//! Plugin>` and nothing else: no FFI symbol (so any number of plugin crates link into one binary)
//! and no ELF initialiser (so the crate's shared library, built alongside by its thin `so/` crate,
//! runs no code when it is opened). Built-ins are certified like files, but keyed by the host executable's sha256 (the code that runs is the host binary) plus the
//! plugin's name and version; see [`super::Registry::certify_builtins`].

use std::sync::OnceLock;

use sha2::{Digest, Sha256};

pub use handoff_capability::MakePlugin;

/// The sha256 of the running executable, computed once.
pub fn host_sha256() -> Result<String, String> {
    static HASH: OnceLock<Result<String, String>> = OnceLock::new();
    HASH.get_or_init(|| {
        let exe =
            std::env::current_exe().map_err(|e| format!("cannot find the host executable: {e}"))?;
        // Streamed through the hash, never read whole: a debug build's executable (140 MB) was
        // most of a continuation's peak memory.
        let cannot =
            |e: std::io::Error| format!("cannot read the host executable {}: {e}", exe.display());
        let mut file = std::fs::File::open(&exe).map_err(cannot)?;
        let mut hash = Sha256::new();
        std::io::copy(&mut file, &mut hash).map_err(cannot)?;
        Ok(hex::encode(hash.finalize()))
    })
    .clone()
}
