//! Listing a store: its session files, and the [`SessionInfo`]s a reader's `list` returns.
//!
//! ```ignore
//! // <root>/projects/<project>/<id>.jsonl: files one folder below `projects`.
//! let files = session_files(&root.path().join("projects"), 1, |name| name.strip_suffix(".jsonl"))?;
//! Ok(sessions_newest_first(TARGET, PLUGIN, files, |path| marker_of(path)))
//! ```

use std::fs::DirEntry;
use std::path::{Path, PathBuf};

use handoff_capability::{PluginError, SessionInfo, SessionRef};
use handoff_store::marker::OwnershipMarker;

use crate::ownership::own_marker;

/// The entries of `dir`; a folder that does not exist has none.
fn entries(dir: &Path) -> Result<Vec<DirEntry>, PluginError> {
    let read = match std::fs::read_dir(dir) {
        Ok(read) => read,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(PluginError::io(dir, &e)),
    };
    read.map(|entry| entry.map_err(|e| PluginError::io(dir, &e)))
        .collect()
}

/// The folders directly in `dir` (symbolic links are not followed), sorted by name; a folder
/// that does not exist has none.
pub fn subdirs(dir: &Path) -> Result<Vec<PathBuf>, PluginError> {
    let mut dirs: Vec<PathBuf> = entries(dir)?
        .into_iter()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect();
    dirs.sort();
    Ok(dirs)
}

/// The session files of a store: every regular file exactly `levels` folders below `dir` (0: in
/// `dir` itself) whose name `id_of` accepts, with the session id `id_of` reads from the name,
/// sorted by path. Symbolic links are not followed; names that are not UTF-8 are not sessions; a
/// store whose `dir` does not exist yet has none. Any other I/O error is an error naming the
/// folder.
pub fn session_files(
    dir: &Path,
    levels: usize,
    id_of: impl Fn(&str) -> Option<&str>,
) -> Result<Vec<(String, PathBuf)>, PluginError> {
    let mut folders = vec![dir.to_owned()];
    for _ in 0..levels {
        let mut deeper = Vec::new();
        for folder in &folders {
            deeper.extend(subdirs(folder)?);
        }
        folders = deeper;
    }
    let mut found = Vec::new();
    for folder in &folders {
        for entry in entries(folder)? {
            let name = entry.file_name();
            let Some(id) = name.to_str().and_then(&id_of) else {
                continue;
            };
            if entry.file_type().is_ok_and(|t| t.is_file()) {
                found.push((id.to_owned(), entry.path()));
            }
        }
    }
    found.sort_by(|a, b| a.1.cmp(&b.1));
    Ok(found)
}

/// A reader's listing of `files` (as [`session_files`] gives them): each session of `target`
/// with its modification time, owned when `marker_of` finds `plugin`'s marker in the file (a
/// file it cannot read is listed, not owned), newest first.
pub fn sessions_newest_first(
    target: &str,
    plugin: &str,
    files: Vec<(String, PathBuf)>,
    mut marker_of: impl FnMut(&Path) -> Option<OwnershipMarker>,
) -> Vec<SessionInfo> {
    let mut sessions: Vec<SessionInfo> = files
        .iter()
        .map(|(id, path)| {
            let marker = own_marker(marker_of(path), plugin);
            SessionInfo::of_file(target, id, path, marker)
        })
        .collect();
    SessionInfo::sort_newest_first(&mut sessions);
    sessions
}

/// `resolve` of a store that keeps a session in one file named by its id: the session `id` of
/// `target` when `path` (the file its id names) is a file; otherwise [`PluginError::NotFound`]
/// naming `searched`, never a guess.
pub fn session_at(
    target: &str,
    id: &str,
    path: PathBuf,
    searched: &Path,
) -> Result<SessionRef, PluginError> {
    if !path.is_file() {
        return Err(PluginError::NotFound {
            target: target.to_owned(),
            id: id.to_owned(),
            searched: searched.to_owned(),
        });
    }
    Ok(SessionRef {
        target: target.to_owned(),
        id: id.to_owned(),
        path,
    })
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use super::*;

    fn touch(path: &Path, age_s: u64) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "{}\n").unwrap();
        let when = SystemTime::now() - Duration::from_secs(age_s);
        std::fs::File::options()
            .write(true)
            .open(path)
            .unwrap()
            .set_modified(when)
            .unwrap();
    }

    #[test]
    fn finds_files_at_exactly_the_given_depth() {
        let tmp = tempfile::tempdir().unwrap();
        let projects = tmp.path().join("projects");
        touch(&projects.join("-b/2.jsonl"), 0);
        touch(&projects.join("-a/1.jsonl"), 0);
        touch(&projects.join("-a/agent-x.jsonl"), 0);
        touch(&projects.join("-a/notes.txt"), 0);
        touch(&projects.join("top.jsonl"), 0);
        touch(&projects.join("-a/deeper/3.jsonl"), 0);
        std::fs::create_dir_all(projects.join("-a/dir.jsonl")).unwrap();
        fn id_of(name: &str) -> Option<&str> {
            name.strip_suffix(".jsonl")
                .filter(|id| !id.starts_with("agent-"))
        }
        let found = session_files(&projects, 1, id_of).unwrap();
        assert_eq!(
            found,
            vec![
                ("1".to_owned(), projects.join("-a/1.jsonl")),
                ("2".to_owned(), projects.join("-b/2.jsonl")),
            ]
        );
        let top = session_files(&projects, 0, id_of).unwrap();
        assert_eq!(top, vec![("top".to_owned(), projects.join("top.jsonl"))]);
        assert_eq!(session_files(&projects, 2, id_of).unwrap().len(), 1);
        assert!(session_files(&tmp.path().join("absent"), 3, id_of)
            .unwrap()
            .is_empty());
        assert_eq!(subdirs(&projects).unwrap().len(), 2);

        let found = session_at("t", "1", projects.join("-a/1.jsonl"), &projects).unwrap();
        assert_eq!((found.id.as_str(), found.target.as_str()), ("1", "t"));
        // A folder of the id's name is no session file.
        match session_at("t", "dir", projects.join("-a/dir.jsonl"), &projects) {
            Err(PluginError::NotFound { searched, id, .. }) => {
                assert_eq!((searched, id.as_str()), (projects.clone(), "dir"))
            }
            other => panic!("expected NotFound, got {other:?}"),
        }
    }

    #[test]
    fn lists_newest_first_and_owned_only_with_the_plugins_marker() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("store");
        touch(&dir.join("old.jsonl"), 300);
        touch(&dir.join("new.jsonl"), 0);
        touch(&dir.join("foreign.jsonl"), 100);
        let files = session_files(&dir, 0, |n| n.strip_suffix(".jsonl")).unwrap();
        let listed = sessions_newest_first("t", "me", files, |path| {
            let plugin = match path.file_stem()?.to_str()? {
                "foreign" => "someone-else",
                _ => "me",
            };
            Some(OwnershipMarker {
                plugin: plugin.into(),
                locator: None,
            })
        });
        let seen: Vec<(&str, bool)> = listed
            .iter()
            .map(|s| (s.session.id.as_str(), s.owned))
            .collect();
        assert_eq!(seen, [("new", true), ("foreign", false), ("old", true)]);
        assert!(listed.iter().all(|s| s.session.target == "t"));
    }
}
