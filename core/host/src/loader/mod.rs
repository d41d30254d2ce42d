//! Loading plugin shared libraries.
//!
//! Three steps, each refusing in one line:
//!
//! 1. [`probe`]: the file exists, is ELF, hashes to a sha256; it is opened with libloading and its
//!    declaration static is read **before any plugin function is called**: magic, declaration
//!    version, plugin-API requirement (checked with `VersionReq::matches` against
//!    [`handoff_capability::PLUGIN_API_VERSION`]), panic strategy.
//! 2. [`load`]: abi_stable's `lib_header_from_path(..).init_root_module()` checks the root module's
//!    version and layout (a mismatch is summarised to its `Error:` lines; the full report goes to
//!    the debug log), then the manifest is read and the capabilities are fetched.
//! 3. The result, a [`LoadedPlugin`], implements the same [`handoff_capability::Plugin`] trait a linked-in
//!    plugin does.
//!
//! The library that is loaded is a sealed copy (a memfd nobody can change) of exactly the bytes
//! that were hashed, so what a certificate vouches for is what runs, even if the file is replaced
//! while the host runs. A host that has read and hashed the file itself (to look its certificate
//! up) hands those bytes to [`load_bytes`], so the file is read once: a file swapped between the
//! hash and the mapping never runs, not even its ELF initialisers. Never
//! `load_from_file` / `load_from_directory`: they cache one module per type, so a second plugin
//! would silently become the first.

mod encoded_read;
mod layout;
mod log;
mod probe;
#[cfg(test)]
pub(crate) mod test_libs;
mod wrap;
mod written;

pub use layout::summarise_layout_error;
pub use probe::{probe, probe_bytes, Probe};
pub use wrap::LoadedPlugin;

use std::path::{Path, PathBuf};

#[cfg(test)]
use sha2::Digest as _;

use handoff_abi::declaration::Declaration;

/// Why a plugin file was not loaded. Each variant displays as one line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoadError {
    /// The file does not exist or cannot be read.
    #[error("{}: cannot read the plugin file: {message}", path.display())]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// The OS error.
        message: String,
    },
    /// The file is not an ELF shared library.
    #[error("{}: not a shared library (no ELF header)", path.display())]
    NotElf {
        /// The file.
        path: PathBuf,
    },
    /// The dynamic loader refused the file.
    #[error("{}: cannot be opened as a shared library: {message}", path.display())]
    Open {
        /// The file.
        path: PathBuf,
        /// The loader's message.
        message: String,
    },
    /// The library has no (valid) handoff declaration.
    #[error("{}: not a handoff plugin ({reason})", path.display())]
    NotAPlugin {
        /// The file.
        path: PathBuf,
        /// What is missing or wrong.
        reason: String,
    },
    /// The plugin needs a plugin API this host does not implement.
    #[error("{}: {name} {version} needs plugin API {requirement}, this host is {host}", path.display())]
    ApiMismatch {
        /// The file.
        path: PathBuf,
        /// The plugin name.
        name: String,
        /// The plugin version.
        version: String,
        /// Its requirement.
        requirement: String,
        /// The host's plugin API version.
        host: String,
    },
    /// The plugin was built with `panic=abort`, so a panic would end the host.
    #[error("{}: {name} {version} was built with panic=abort; rebuild it with panic=unwind (a panic would end the host)", path.display())]
    PanicAbort {
        /// The file.
        path: PathBuf,
        /// The plugin name.
        name: String,
        /// The plugin version.
        version: String,
    },
    /// abi_stable refused the root module (version or layout).
    #[error("{}: incompatible plugin ABI: {summary}", path.display())]
    Abi {
        /// The file.
        path: PathBuf,
        /// The `Error:` lines of abi_stable's report, joined.
        summary: String,
    },
    /// The plugin's manifest could not be read.
    #[error("{}: bad manifest: {message}", path.display())]
    Manifest {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

impl LoadError {
    /// A short machine-readable kind, for reports.
    pub fn kind(&self) -> &'static str {
        match self {
            LoadError::Unreadable { .. } => "unreadable",
            LoadError::NotElf { .. } => "not_elf",
            LoadError::Open { .. } => "open",
            LoadError::NotAPlugin { .. } => "not_a_plugin",
            LoadError::ApiMismatch { .. } => "api_mismatch",
            LoadError::PanicAbort { .. } => "panic_abort",
            LoadError::Abi { .. } => "abi",
            LoadError::Manifest { .. } => "manifest",
        }
    }
}

/// Probes and loads the plugin at `path`, wrapping it into the plain [`handoff_capability::Plugin`] trait.
pub fn load(path: &Path) -> Result<LoadedPlugin, LoadError> {
    let probe = probe(path)?;
    LoadedPlugin::load_probed(probe)
}

/// [`load`] as an older host would: one that knows the capability ids up to version `newest`
/// only. For tests that prove a newer plugin still serves an older host.
#[doc(hidden)]
pub fn load_up_to(path: &Path, newest: u8) -> Result<LoadedPlugin, LoadError> {
    LoadedPlugin::load_probed_up_to(probe(path)?, newest)
}

/// [`load`] of bytes the caller already read from `path` (and hashed): the file is not read again.
pub fn load_bytes(path: &Path, bytes: Vec<u8>) -> Result<LoadedPlugin, LoadError> {
    LoadedPlugin::load_probed(probe_bytes(path, bytes)?)
}

/// What the loader knows about a plugin file before and after loading it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PluginFile {
    /// The file it came from.
    pub path: PathBuf,
    /// The sha256 of its bytes, lowercase hex.
    pub sha256: String,
    /// Its declaration.
    pub declaration: Declaration,
}

#[cfg(test)]
mod tests {
    use super::test_libs::{build, evil_marker};
    use super::*;

    #[test]
    fn a_file_swapped_after_it_was_read_never_runs() {
        let dir = tempfile::tempdir().unwrap();
        let Some((good, evil)) = build(dir.path()) else {
            return;
        };
        let marker = evil_marker(dir.path());
        let path = dir.path().join("plugin.so");
        std::fs::copy(&good, &path).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let hashed = hex::encode(sha2::Sha256::digest(&bytes));
        // The window: between the read (and hash) and the mapping, the file is replaced.
        std::fs::copy(&evil, &path).unwrap();
        let err = probe_bytes(&path, bytes).unwrap_err();
        assert!(matches!(err, LoadError::NotAPlugin { .. }), "{err}");
        assert!(err.to_string().contains("plugin.so"), "{err}");
        assert!(!marker.exists(), "the swapped-in file's initialiser ran");
        assert_ne!(
            hashed,
            hex::encode(sha2::Sha256::digest(std::fs::read(&path).unwrap()))
        );
        // Control: mapping the file as it is now does run its initialiser.
        let _ = probe(&path);
        assert!(
            marker.exists(),
            "the test library's initialiser is not observable"
        );
    }
}
