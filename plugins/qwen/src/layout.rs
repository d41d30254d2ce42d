//! Where Qwen Code 0.24.4 keeps a session: `<root>/projects/<cwd slug>/chats/<session id>.jsonl`.

use std::path::PathBuf;

use handoff_sdk::{dashed_cwd, subdirs, PluginError, StoreRoot};

/// The folder of per-project state in the root.
pub(crate) const PROJECTS: &str = "projects";
/// The chats folder of a project.
pub(crate) const CHATS: &str = "chats";
/// A session file's extension.
pub(crate) const EXTENSION: &str = ".jsonl";

/// The working directory as Qwen Code records it (`process.cwd()`, see
/// [`handoff_sdk::physical_cwd`]).
pub(crate) fn project_root(cwd: &str) -> Result<String, PluginError> {
    handoff_sdk::physical_cwd(cwd, "Qwen Code")
}

/// The session file of `id` in the project of `cwd` (its folder named by `sanitizeCwd`:
/// [`dashed_cwd`]).
pub(crate) fn session_path(root: &StoreRoot, cwd: &str, id: &str) -> Result<PathBuf, PluginError> {
    Ok(root.join(&[
        PROJECTS,
        &dashed_cwd(cwd),
        CHATS,
        &format!("{id}{EXTENSION}"),
    ])?)
}

/// The session id a file name holds: the CLI's `SESSION_FILE_PATTERN`,
/// `^[0-9a-fA-F-]{32,36}\.jsonl$`.
pub(crate) fn id_of(name: &str) -> Option<&str> {
    let id = name.strip_suffix(EXTENSION)?;
    let fits =
        (32..=36).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-');
    fits.then_some(id)
}

/// Every session file of the store: `(id, path)`, in every project's chats, sorted by path.
pub(crate) fn all_sessions(root: &StoreRoot) -> Result<Vec<(String, PathBuf)>, PluginError> {
    let mut found = Vec::new();
    for project in subdirs(&root.path().join(PROJECTS))? {
        let chats = project.join(CHATS);
        found.extend(handoff_sdk::session_files(&chats, 0, id_of)?);
    }
    found.sort_by(|a, b| a.1.cmp(&b.1));
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_uuid_names_are_sessions() {
        assert_eq!(
            id_of("7da3d710-5632-46df-bb43-bead8f22b422.jsonl"),
            Some("7da3d710-5632-46df-bb43-bead8f22b422")
        );
        assert_eq!(id_of("7da3d710-5632-46df-bb43-bead8f22b422.json"), None);
        assert_eq!(id_of("notes.jsonl"), None);
    }
}
