//! Where Gemini CLI 0.61.0 keeps a session, and how ids map to files.
//!
//! `<root>/tmp/<short id>/chats/session-<YYYY-MM-DDTHH-MM>-<first 8 chars of the id>.jsonl`, where
//! the short id is the project's entry in `<root>/projects.json` (see `registry`). The file name
//! holds only 8 characters of the id, so finding a session means reading the candidates' ids.

use std::path::{Path, PathBuf};

use handoff_sdk::{subdirs, PluginError, StoreRoot, Timestamp};
use sha2::{Digest, Sha256};

/// The folder of per-project runtime state (chats live in it).
pub(crate) const TMP: &str = "tmp";
/// The registry's second base folder (the CLI writes `.project_root` markers there too).
pub(crate) const HISTORY: &str = "history";
/// The chats folder inside a project's folder.
pub(crate) const CHATS: &str = "chats";
/// The ownership marker of a project folder: the project root, no newline.
pub(crate) const PROJECT_ROOT_FILE: &str = ".project_root";
/// The project registry.
pub(crate) const REGISTRY: &str = "projects.json";
/// Every session file name starts with this.
pub(crate) const PREFIX: &str = "session-";

/// The project root as the CLI sees it: `path.resolve(process.cwd())`, the physical directory
/// ([`handoff_sdk::physical_cwd`]).
pub(crate) fn project_root(cwd: &str) -> Result<String, PluginError> {
    handoff_sdk::physical_cwd(cwd, "Gemini CLI")
}

/// `projectHash`: sha256 of the project root, lower-case hex.
pub(crate) fn project_hash(project_root: &str) -> String {
    hex::encode(Sha256::digest(project_root.as_bytes()))
}

/// The minute in a file name: `new Date().toISOString().slice(0, 16)` with `:` → `-` (UTC).
pub(crate) fn minute_stamp(t: Timestamp) -> String {
    let iso = t.to_rfc3339();
    iso.get(..16).unwrap_or(&iso).replace(':', "-")
}

/// The CLI's `sanitizeFilenamePart`: every character outside `[A-Za-z0-9_-]` becomes `_`.
pub(crate) fn sanitize(part: &str) -> String {
    part.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The 8 characters of a session id that its file name carries.
pub(crate) fn short_of(id: &str) -> String {
    sanitize(id).chars().take(8).collect()
}

/// The last 8 characters of a session id: the token a file of ours ends with.
pub(crate) fn tail_of(id: &str) -> String {
    let clean = sanitize(id);
    clean[clean.len().saturating_sub(8)..].to_owned()
}

/// `session-<minute>-<id>-<last 8 of the id>.jsonl`. The CLI finds a session by the id inside
/// the file, so the name only has to start with `session-`, end with `-<8 characters>.jsonl`
/// (its `--delete-session` takes the last 8 as the short id), and not end with the id's *first*
/// 8: the stub the CLI leaves when it resumes is named with those, and its retention cleanup
/// deletes every file sharing the stub's ending (see docs/formats/gemini.md).
pub(crate) fn file_name(minute: &str, id: &str) -> String {
    format!("{PREFIX}{minute}-{}-{}.jsonl", sanitize(id), tail_of(id))
}

/// Whether `name` is the file of session `id`: the CLI's own name (ending with the id's first 8
/// characters) or ours (holding the whole id).
pub(crate) fn may_hold(name: &str, id: &str) -> bool {
    let short = short_of(id);
    !short.is_empty()
        && (has_short_id(name, &short)
            || (is_session_file(name) && name.contains(&format!("-{}-", sanitize(id)))))
}

/// Whether `name` is a session file name (`session-*.json` or `session-*.jsonl`).
pub(crate) fn is_session_file(name: &str) -> bool {
    name.starts_with(PREFIX) && (name.ends_with(".jsonl") || name.ends_with(".json"))
}

/// Whether `name` is a session file of short id `short`.
pub(crate) fn has_short_id(name: &str, short: &str) -> bool {
    is_session_file(name)
        && (name.ends_with(&format!("-{short}.jsonl")) || name.ends_with(&format!("-{short}.json")))
}

/// `<root>/tmp/<short id>/chats`.
pub(crate) fn chats_dir(root: &StoreRoot, short_id: &str) -> Result<PathBuf, PluginError> {
    Ok(root.join(&[TMP, short_id, CHATS])?)
}

/// Every `<root>/tmp/*/chats` folder, sorted (the SDK's [`subdirs`]: links are not followed).
pub(crate) fn all_chats_dirs(root: &StoreRoot) -> Result<Vec<PathBuf>, PluginError> {
    let projects = subdirs(&root.path().join(TMP))?;
    Ok(projects
        .into_iter()
        .map(|project| project.join(CHATS))
        .filter(|chats| chats.is_dir())
        .collect())
}

/// The session files (top level only: subagent chats sit in sub-folders) of one chats folder whose
/// names pass `keep`, sorted by name (the SDK's [`handoff_sdk::session_files`] of the folder).
pub(crate) fn session_files(
    chats: &Path,
    keep: impl Fn(&str) -> bool,
) -> Result<Vec<PathBuf>, PluginError> {
    let files = handoff_sdk::session_files(chats, 0, |name| {
        (is_session_file(name) && keep(name)).then_some(name)
    })?;
    Ok(files.into_iter().map(|(_, path)| path).collect())
}

/// The project folder (`tmp/<short id>`) of a session file in its `chats` folder.
pub(crate) fn project_dir_of(session_file: &Path) -> Option<&Path> {
    let chats = session_file.parent()?;
    (chats.file_name()? == CHATS).then_some(())?;
    chats.parent()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_cli() {
        let t = Timestamp::parse("2026-11-30T00:41:50.978Z").unwrap();
        assert_eq!(minute_stamp(t), "2026-11-30T00-41");
        let id = "c903aa87-fdf1-4d9e-b67f-47f65da5078b";
        let ours = file_name("2026-11-30T00-41", id);
        assert_eq!(
            ours,
            format!("session-2026-11-30T00-41-{id}-5da5078b.jsonl")
        );
        assert!(may_hold(&ours, id));
        assert!(may_hold("session-2026-11-30T00-42-c903aa87.jsonl", id));
        assert!(!may_hold("session-2026-11-30T00-42-c903aa88.jsonl", id));
        assert!(
            !has_short_id(&ours, "c903aa87"),
            "the resume stub's cleanup must not match ours"
        );
        assert_eq!(sanitize("a.b/c"), "a_b_c");
        assert!(has_short_id(
            "session-2026-11-30T00-41-c903aa87.json",
            "c903aa87"
        ));
        assert!(!has_short_id(
            "session-2026-11-30T00-41-c903aa88.jsonl",
            "c903aa87"
        ));
        assert!(!is_session_file("logs.json"));
    }

    #[test]
    fn project_roots_are_absolute_and_normalised() {
        assert_eq!(
            project_root("/no/such/dir/../x/./y/").unwrap(),
            "/no/such/x/y"
        );
        assert!(project_root("relative/dir").is_err());
        let dir = tempfile::tempdir().unwrap();
        let real = std::fs::canonicalize(dir.path()).unwrap();
        assert_eq!(
            project_root(dir.path().to_str().unwrap()).unwrap(),
            real.to_str().unwrap()
        );
        assert_eq!(
            project_hash("/home/dev/proj"),
            "bb97ae4cdb5b0dd7e32b198a7ebcb35332fca3343779f0895ffb11258627aa8f"
        );
    }
}
