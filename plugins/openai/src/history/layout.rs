//! Where sessions live: `<root>/<target>/<uuid>.json`, the id being the file stem. Resolving an id
//! looks at exactly that file; nothing else is ever taken for it.

use std::path::{Path, PathBuf};

use handoff_sdk::marker::{OwnershipMarker, MARKER_KEY};
use handoff_sdk::serde_json::{self, Map, Value};
use handoff_sdk::store::validate_component;
use handoff_sdk::{PluginError, SessionInfo, SessionRef, StoreRoot};

use super::ApiTarget;
use crate::manifest::PLUGIN_NAME;

/// The file of session `id`.
pub(crate) fn session_path(
    root: &StoreRoot,
    target: &ApiTarget,
    id: &str,
) -> Result<PathBuf, PluginError> {
    validate_component("session id", id)?;
    Ok(root.join(&[target.name, &format!("{id}.json")])?)
}

/// The session named exactly `id`; a missing one is `NotFound`.
pub(crate) fn resolve(
    root: &StoreRoot,
    target: &ApiTarget,
    id: &str,
) -> Result<SessionRef, PluginError> {
    let path = session_path(root, target, id)?;
    handoff_sdk::session_at(target.name, id, path, &root.path().join(target.name))
}

/// Every session file of the target, newest first; owned when it carries this plugin's marker.
pub(crate) fn list(root: &StoreRoot, target: &ApiTarget) -> Result<Vec<SessionInfo>, PluginError> {
    let files = handoff_sdk::session_files(&root.path().join(target.name), 0, |name| {
        name.strip_suffix(".json")
            .filter(|id| validate_component("session id", id).is_ok())
    })?;
    // The marker only: the document is not built.
    Ok(handoff_sdk::sessions_newest_first(
        target.name,
        PLUGIN_NAME,
        files,
        handoff_sdk::document_marker,
    ))
}

/// Loads a session file as a JSON object; a file that is not one is `Malformed`, naming it and
/// what is wrong (`handoff_sdk::parse_document`).
pub(crate) fn load(path: &Path) -> Result<Map<String, Value>, PluginError> {
    let bytes = std::fs::read(path).map_err(|e| PluginError::io(path, &e))?;
    handoff_sdk::parse_document(path, &bytes)
}

/// The ownership marker of a session file, if it has one; a file that is no JSON object is
/// `Malformed`.
pub(crate) fn marker(path: &Path) -> Result<Option<OwnershipMarker>, PluginError> {
    Ok(load(path)?
        .get(MARKER_KEY)
        .and_then(|m| serde_json::from_value::<OwnershipMarker>(m.clone()).ok()))
}
