//! Where a gemini-api session lives: `<root>/<uuid>.json`, one file per session.

use std::path::PathBuf;

use handoff_sdk::store::validate_component;
use handoff_sdk::{PluginError, StoreRoot};

/// The file of session `id`.
pub(crate) fn session_path(root: &StoreRoot, id: &str) -> Result<PathBuf, PluginError> {
    validate_component("session id", id)?;
    Ok(root.join(&[&format!("{id}.json")])?)
}

/// Every session file (`*.json` directly under the root, named by a valid id), sorted.
pub(crate) fn session_files(root: &StoreRoot) -> Result<Vec<(String, PathBuf)>, PluginError> {
    handoff_sdk::session_files(root.path(), 0, |name| {
        name.strip_suffix(".json")
            .filter(|id| validate_component("session id", id).is_ok())
    })
}
