//! Where Qwen Code 0.24.4 keeps a session: `<root>/projects/<cwd slug>/chats/<session id>.jsonl`.

use std::path::PathBuf;

use handoff_sdk::{subdirs, PluginError, StoreRoot};

/// The folder of per-project state in the root.
pub(crate) const PROJECTS: &str = "projects";
/// The chats folder of a project.
pub(crate) const CHATS: &str = "chats";
/// A session file's extension.
pub(crate) const EXTENSION: &str = ".jsonl";

/// The project folder's name of a working directory: `sanitizeCwd`, every UTF-16 code unit that is
/// not an ASCII letter or digit replaced by `-` (a character outside the BMP gives two).
pub(crate) fn slug(cwd: &str) -> String {
    let mut out = String::with_capacity(cwd.len());
    for c in cwd.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else {
            (0..c.len_utf16()).for_each(|_| out.push('-'));
        }
    }
    out
}

/// The working directory as Qwen Code records it (`process.cwd()`, see
/// [`handoff_sdk::physical_cwd`]).
pub(crate) fn project_root(cwd: &str) -> Result<String, PluginError> {
    handoff_sdk::physical_cwd(cwd, "Qwen Code")
}

/// The session file of `id` in the project of `cwd`.
pub(crate) fn session_path(root: &StoreRoot, cwd: &str, id: &str) -> Result<PathBuf, PluginError> {
    Ok(root.join(&[PROJECTS, &slug(cwd), CHATS, &format!("{id}{EXTENSION}")])?)
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
    fn the_slug_replaces_each_utf16_unit_that_is_no_ascii_letter_or_digit() {
        assert_eq!(
            slug("/tmp/qwen-scratch/home/proj"),
            "-tmp-qwen-scratch-home-proj"
        );
        assert_eq!(slug("/a_b.c/é/😀"), "-a-b-c-----");
    }

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
