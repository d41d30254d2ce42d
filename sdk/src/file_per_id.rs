//! A store of one file per session in one folder, `<root>/<target>/<id><suffix>`: the layout of
//! the template and of a tool that keeps each conversation in a file named by its id. Its paths,
//! new ids, lookup, listing and marker are the same for every such store, so they are written
//! once, here.

use std::path::{Path, PathBuf};

use handoff_capability::{CreateOptions, PluginError, SessionInfo, SessionRef};
use handoff_store::marker::OwnershipMarker;
use handoff_store::StoreRoot;

use crate::{session_at, session_files, sessions_newest_first};

/// A store of one file per session id: `<root>/<target>/<id><suffix>`.
#[derive(Clone, Copy, Debug)]
pub struct FilePerId {
    /// The plugin whose marker marks its sessions.
    pub plugin: &'static str,
    /// The target, which is also the folder under the root.
    pub target: &'static str,
    /// What follows the id in a file's name, e.g. `.json`.
    pub suffix: &'static str,
}

impl FilePerId {
    /// The store of `plugin`'s sessions of `target`, each in `<root>/<target>/<id><suffix>`.
    pub const fn new(plugin: &'static str, target: &'static str, suffix: &'static str) -> Self {
        FilePerId {
            plugin,
            target,
            suffix,
        }
    }

    /// The folder of the sessions.
    pub fn folder(&self, root: &StoreRoot) -> PathBuf {
        root.path().join(self.target)
    }

    /// The file of session `id` (an id that would leave the folder is an error).
    pub fn path(&self, root: &StoreRoot, id: &str) -> Result<PathBuf, PluginError> {
        Ok(root.join(&[self.target, &format!("{id}{}", self.suffix)])?)
    }

    /// A new session: a fresh id (a random UUID) and its file, not yet written.
    pub fn new_session(&self, root: &StoreRoot) -> Result<SessionRef, PluginError> {
        let id = uuid::Uuid::new_v4().to_string();
        Ok(SessionRef {
            target: self.target.to_owned(),
            path: self.path(root, &id)?,
            id,
        })
    }

    /// The marker a session created with `options` carries: this plugin's, with the locator.
    pub fn marker(&self, options: &CreateOptions) -> OwnershipMarker {
        OwnershipMarker {
            plugin: self.plugin.to_owned(),
            locator: options.locator.clone(),
        }
    }

    /// The session of exactly this id; a missing file is [`PluginError::NotFound`].
    pub fn resolve(&self, root: &StoreRoot, id: &str) -> Result<SessionRef, PluginError> {
        session_at(self.target, id, self.path(root, id)?, &self.folder(root))
    }

    /// Every session file, newest first, owned when `marker_of` finds this plugin's marker in it.
    pub fn list(
        &self,
        root: &StoreRoot,
        marker_of: impl Fn(&Path) -> Option<OwnershipMarker>,
    ) -> Result<Vec<SessionInfo>, PluginError> {
        let files = session_files(&self.folder(root), 0, |name| name.strip_suffix(self.suffix))?;
        Ok(sessions_newest_first(
            self.target,
            self.plugin,
            files,
            marker_of,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOTES: FilePerId = FilePerId::new("me", "notes", ".json");

    #[test]
    fn a_new_session_resolves_and_lists_once_written_and_only_then() {
        let tmp = tempfile::tempdir().unwrap();
        let root = StoreRoot::new(tmp.path()).unwrap();
        let session = NOTES.new_session(&root).unwrap();
        assert_eq!(
            session.path,
            tmp.path()
                .join("notes")
                .join(format!("{}.json", session.id))
        );
        assert!(matches!(
            NOTES.resolve(&root, &session.id),
            Err(PluginError::NotFound { .. })
        ));
        assert!(NOTES.list(&root, |_| None).unwrap().is_empty());
        std::fs::create_dir_all(NOTES.folder(&root)).unwrap();
        std::fs::write(&session.path, "{}").unwrap();
        std::fs::write(NOTES.folder(&root).join("other.txt"), "").unwrap();
        assert_eq!(NOTES.resolve(&root, &session.id).unwrap(), session);
        let marker = NOTES.marker(&CreateOptions {
            cwd: None,
            locator: Some("conv".into()),
        });
        let listed = NOTES.list(&root, |_| Some(marker.clone())).unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].session, session);
        assert!(listed[0].owned);
        assert_eq!(listed[0].locator.as_deref(), Some("conv"));
        assert!(NOTES.path(&root, "../escape").is_err());
    }
}
