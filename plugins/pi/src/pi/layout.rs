//! Where pi keeps a session: `<root>/sessions/--<encoded cwd>--/<time>_<id>.jsonl`, `<root>` being
//! pi's agent directory (`PI_CODING_AGENT_DIR`, default `~/.pi/agent`).

use std::path::{Path, PathBuf};

use handoff_sdk::store::validate_component;
use handoff_sdk::{PluginError, StoreRoot};

use super::read;

/// The folder of every session folder under the root.
pub const SESSIONS: &str = "sessions";
/// The extension of session files.
const EXTENSION: &str = ".jsonl";

/// pi's folder name for a working directory (`getDefaultSessionDir`): the cwd without one leading
/// `/` or `\`, with `/`, `\` and `:` turned into `-`, between `--` and `--`.
pub fn folder_name(cwd: &str) -> String {
    let trimmed = cwd
        .strip_prefix('/')
        .or_else(|| cwd.strip_prefix('\\'))
        .unwrap_or(cwd);
    let body: String = trimmed
        .chars()
        .map(|c| {
            if matches!(c, '/' | '\\' | ':') {
                '-'
            } else {
                c
            }
        })
        .collect();
    format!("--{body}--")
}

/// pi's file name for a session: its creation time with `:` and `.` turned into `-`, then `_`
/// and the id.
pub fn file_name(created_iso: &str, id: &str) -> String {
    let time: String = created_iso
        .chars()
        .map(|c| if matches!(c, ':' | '.') { '-' } else { c })
        .collect();
    format!("{time}_{id}{EXTENSION}")
}

/// The session id a file name says, if it has pi's shape.
pub fn id_of_file_name(name: &str) -> Option<&str> {
    let stem = name.strip_suffix(EXTENSION)?;
    let (time, id) = stem.split_once('_')?;
    (!time.is_empty() && !id.is_empty()).then_some(id)
}

/// The session files of one folder (`*.jsonl`), sorted by name (the SDK's listing).
pub fn folder_files(dir: &Path) -> Result<Vec<PathBuf>, PluginError> {
    let files =
        handoff_sdk::session_files(dir, 0, |name| name.ends_with(EXTENSION).then_some(name))?;
    Ok(files.into_iter().map(|(_, path)| path).collect())
}

/// Every session folder under the root, sorted.
pub fn folders(root: &StoreRoot) -> Result<Vec<PathBuf>, PluginError> {
    handoff_sdk::subdirs(&root.path().join(SESSIONS))
}

/// Every session file of every folder.
pub fn all_files(root: &StoreRoot) -> Result<Vec<PathBuf>, PluginError> {
    let mut files = Vec::new();
    for dir in folders(root)? {
        files.extend(folder_files(&dir)?);
    }
    Ok(files)
}

/// The file of the session with exactly this id: its file name says the id and its header
/// agrees. None is `NotFound`; two are an error, never a guess.
pub fn find(root: &StoreRoot, id: &str) -> Result<PathBuf, PluginError> {
    validate_component("session id", id)?;
    let mut found: Vec<PathBuf> = Vec::new();
    for dir in folders(root)? {
        for file in folder_files(&dir)? {
            let named = file
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(id_of_file_name);
            if named == Some(id) {
                found.push(file);
            }
        }
    }
    let path = match found.len() {
        0 => {
            return Err(PluginError::NotFound {
                target: super::TARGET.to_owned(),
                id: id.to_owned(),
                searched: root.path().join(SESSIONS),
            })
        }
        1 => found.pop().expect("one"),
        _ => {
            let names: Vec<String> = found.iter().map(|p| p.display().to_string()).collect();
            return Err(PluginError::Other(format!(
                "pi session id {id} names {} files: {}; refusing to guess",
                found.len(),
                names.join(", ")
            )));
        }
    };
    let header = read::read_header(&path)?;
    if header.id != id {
        return Err(PluginError::malformed_line(
            &path,
            1,
            Some("id"),
            format!(
                "the file name says session {id} but the header says {}",
                header.id
            ),
        ));
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folder_names_are_pis() {
        assert_eq!(folder_name("/home/dev/proj"), "--home-dev-proj--");
        assert_eq!(folder_name("/Users/x/ws/proj"), "--Users-x-ws-proj--");
        assert_eq!(folder_name("C:\\work\\a"), "--C--work-a--");
        assert_eq!(folder_name("/"), "----");
    }

    #[test]
    fn file_names_are_pis() {
        let name = file_name(
            "2026-11-30T00:41:45.653Z",
            "01a229e6-8fb3-71bc-b7eb-e70473137487",
        );
        assert_eq!(
            name,
            "2026-11-30T00-41-45-653Z_01a229e6-8fb3-71bc-b7eb-e70473137487.jsonl"
        );
        assert_eq!(
            id_of_file_name(&name),
            Some("01a229e6-8fb3-71bc-b7eb-e70473137487")
        );
        assert_eq!(id_of_file_name("notes.jsonl"), None);
        assert_eq!(id_of_file_name("a_b.json"), None);
    }
}
