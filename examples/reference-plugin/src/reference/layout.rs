//! Where sessions live: `<root>/reference/<id>.jsonl`.

use std::path::PathBuf;

use handoff_sdk::{PluginError, StoreRoot};

const DIR: &str = "reference";
const SUFFIX: &str = ".jsonl";

/// The folder that holds every session.
pub(super) fn sessions_dir(root: &StoreRoot) -> PathBuf {
    root.path().join(DIR)
}

/// The file of session `id` (refused unless `id` is one safe file name).
pub(super) fn session_path(root: &StoreRoot, id: &str) -> Result<PathBuf, PluginError> {
    Ok(root.join(&[DIR, &format!("{id}{SUFFIX}")])?)
}

/// Every session file, with its id.
pub(super) fn session_files(root: &StoreRoot) -> Result<Vec<(String, PathBuf)>, PluginError> {
    handoff_sdk::session_files(&sessions_dir(root), 0, |name| name.strip_suffix(SUFFIX))
}
