//! The ownership mark that survives Codex's own rewrite of a rollout.
//!
//! The marker lives in the `session_meta` line (`x-handoff`), but `codex migrate-rollouts
//! --apply` (Codex 0.171, paginated thread history) rewrites every rollout in place and keeps
//! only the members Codex knows: the marker and every event's extras are gone. So a rollout this
//! plugin creates also gets a copy of its marker beside the store's own files,
//! `<root>/.handoff/owned/codex/<thread id>.json`, written once the rollout is in place and
//! removed with it. The owner check takes the in-file marker, and this copy only for a rollout
//! Codex rewrote (`history_mode: "paginated"` in its `session_meta`, the marker gone): a rollout
//! whose marker was stripped otherwise stays foreign. A copy is no more and no less trusted than
//! the in-file marker (both are in the store root).

use std::path::PathBuf;

use handoff_sdk::marker::OwnershipMarker;
use handoff_sdk::{PluginError, StoreRoot};

use crate::manifest::PLUGIN;

fn path(root: &StoreRoot, id: &str) -> Result<PathBuf, PluginError> {
    Ok(root.join(&[".handoff", "owned", PLUGIN, &format!("{id}.json")])?)
}

/// Writes the copy of `marker` for thread `id` (atomically).
pub(crate) fn record(
    root: &StoreRoot,
    id: &str,
    marker: &OwnershipMarker,
) -> Result<(), PluginError> {
    let file = path(root, id)?;
    let dir = file.parent().expect("a file in a folder").to_owned();
    let io = |e: std::io::Error| PluginError::Io {
        path: file.clone(),
        message: e.to_string(),
    };
    std::fs::create_dir_all(&dir).map_err(io)?;
    let json = serde_json::to_vec(marker).map_err(|e| io(std::io::Error::other(e)))?;
    handoff_sdk::atomic::replace(&file, |out| out.write_all(&json)).map_err(io)
}

/// The copy of the marker of thread `id`, if there is one.
pub(crate) fn find(root: &StoreRoot, id: &str) -> Option<OwnershipMarker> {
    let file = path(root, id).ok()?;
    let meta = std::fs::symlink_metadata(&file).ok()?;
    if !meta.is_file() || meta.len() > 64 * 1024 {
        return None;
    }
    serde_json::from_slice(&std::fs::read(&file).ok()?).ok()
}

/// Removes the copy of thread `id`'s marker, with its rollout.
pub(crate) fn remove(root: &StoreRoot, id: &str) -> Result<(), PluginError> {
    let file = path(root, id)?;
    match std::fs::remove_file(&file) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(PluginError::Io {
            path: file,
            message: e.to_string(),
        }),
    }
}
