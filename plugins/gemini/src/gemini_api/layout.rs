//! Where a gemini-api session lives: `<root>/<uuid>.json`, one file per session.

use std::path::PathBuf;

use handoff_sdk::store::validate_component;
use handoff_sdk::{PluginError, StoreRoot};

/// The file of session `id`.
pub(crate) fn session_path(root: &StoreRoot, id: &str) -> Result<PathBuf, PluginError> {
    validate_component("session id", id)?;
    Ok(root.join(&[&format!("{id}.json")])?)
}

/// Every session file (`*.json` directly under the root), sorted.
pub(crate) fn session_files(root: &StoreRoot) -> Result<Vec<(String, PathBuf)>, PluginError> {
    let mut files = Vec::new();
    let entries = match std::fs::read_dir(root.path()) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(files),
        Err(e) => return Err(PluginError::io(root.path(), &e)),
    };
    for entry in entries {
        let entry = entry.map_err(|e| PluginError::io(root.path(), &e))?;
        let name = entry.file_name();
        let Some(id) = name.to_str().and_then(|n| n.strip_suffix(".json")) else {
            continue;
        };
        if entry.path().is_file() && validate_component("session id", id).is_ok() {
            files.push((id.to_owned(), entry.path()));
        }
    }
    files.sort();
    Ok(files)
}
