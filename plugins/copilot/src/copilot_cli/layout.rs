//! Where a session lives: `<root>/session-state/<id>/events.jsonl`, the CLI adding
//! `workspace.yaml`, `checkpoints/`, `files/` … beside the log when it runs the session.

use std::path::{Path, PathBuf};

use handoff_sdk::{subdirs, PluginError, StoreRoot};

use super::{EVENTS_FILE, SESSIONS_DIR};

/// The event log of session `id`.
pub fn events_path(root: &StoreRoot, id: &str) -> Result<PathBuf, PluginError> {
    Ok(root.join(&[SESSIONS_DIR, id, EVENTS_FILE])?)
}

/// The session folder of an event log.
pub fn session_dir(log: &Path) -> Result<&Path, PluginError> {
    log.parent()
        .ok_or_else(|| PluginError::Other(format!("{} has no folder", log.display())))
}

/// Every session folder's id and event log (a folder without a log is no session).
pub fn session_logs(root: &StoreRoot) -> Result<Vec<(String, PathBuf)>, PluginError> {
    let mut logs = Vec::new();
    for dir in subdirs(&root.path().join(SESSIONS_DIR))? {
        let log = dir.join(EVENTS_FILE);
        let id = dir.file_name().and_then(|n| n.to_str()).map(str::to_owned);
        if let (Some(id), true) = (id, log.is_file()) {
            logs.push((id, log));
        }
    }
    Ok(logs)
}
