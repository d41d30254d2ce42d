//! Where histories live: `<root>/anthropic-messages/<id>.json`.

use std::path::PathBuf;

use handoff_sdk::store::validate_component;
use handoff_sdk::{PluginError, StoreRoot};

const DIR: &str = "anthropic-messages";
const SUFFIX: &str = ".json";

/// The folder that holds every history.
pub(super) fn sessions_dir(root: &StoreRoot) -> PathBuf {
    root.path().join(DIR)
}

/// The file of history `id`.
pub(super) fn session_path(root: &StoreRoot, id: &str) -> Result<PathBuf, PluginError> {
    validate_component("session id", id)?;
    Ok(root.join(&[DIR, &format!("{id}{SUFFIX}")])?)
}

/// Every history file, with its id.
pub(super) fn session_files(root: &StoreRoot) -> Result<Vec<(String, PathBuf)>, PluginError> {
    handoff_sdk::session_files(&sessions_dir(root), 0, |name| name.strip_suffix(SUFFIX))
}
