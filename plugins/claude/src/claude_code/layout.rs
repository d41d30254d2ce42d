//! Where Claude Code keeps sessions: `<root>/projects/<cwd slug>/<session id>.jsonl`.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use handoff_sdk::marker::OwnershipMarker;
use handoff_sdk::serde_json::{self, Value};
use handoff_sdk::store::validate_component;
use handoff_sdk::{PluginError, SessionInfo, SessionRef, StoreRoot};

use crate::manifest::{CLAUDE_CODE, PLUGIN_NAME};

/// The project folder name for `cwd`: every character that is not an ASCII letter or digit becomes
/// `-` (so `/home/dev/my.proj` is `-home-dev-my-proj`), as Claude Code names it. Claude Code is
/// JavaScript, so a character outside the BMP (two UTF-16 units) becomes two dashes.
pub(crate) fn slug(cwd: &str) -> String {
    let mut out = String::with_capacity(cwd.len());
    for c in cwd.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else {
            out.extend(std::iter::repeat_n('-', c.len_utf16()));
        }
    }
    out
}

pub(crate) fn projects_dir(root: &StoreRoot) -> PathBuf {
    root.path().join("projects")
}

/// The file of session `id` in the project of `cwd`.
pub(crate) fn session_path(root: &StoreRoot, cwd: &str, id: &str) -> Result<PathBuf, PluginError> {
    validate_component("session id", id)?;
    Ok(root.join(&["projects", &slug(cwd), &format!("{id}.jsonl")])?)
}

/// The one session named exactly `id`, in whichever project folder holds it.
pub(crate) fn resolve(root: &StoreRoot, id: &str) -> Result<SessionRef, PluginError> {
    validate_component("session id", id)?;
    let projects = projects_dir(root);
    let file_name = format!("{id}.jsonl");
    let mut found = Vec::new();
    for dir in project_dirs(&projects)? {
        let candidate = dir.join(&file_name);
        if candidate.is_file() {
            found.push(candidate);
        }
    }
    match found.len() {
        0 => Err(PluginError::NotFound {
            target: CLAUDE_CODE.to_owned(),
            id: id.to_owned(),
            searched: projects,
        }),
        1 => Ok(SessionRef {
            target: CLAUDE_CODE.to_owned(),
            id: id.to_owned(),
            path: found.remove(0),
        }),
        _ => Err(PluginError::Other(format!(
            "{CLAUDE_CODE}: session id {id:?} is in {} project folders ({}); refusing to guess",
            found.len(),
            found
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

fn project_dirs(projects: &Path) -> Result<Vec<PathBuf>, PluginError> {
    let entries = match std::fs::read_dir(projects) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(PluginError::io(projects, &e)),
    };
    let mut dirs = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| PluginError::io(projects, &e))?;
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            dirs.push(entry.path());
        }
    }
    dirs.sort();
    Ok(dirs)
}

/// The first line of a session file, parsed (where the ownership marker is).
pub(crate) fn first_record(path: &Path) -> Result<Option<Value>, PluginError> {
    let file = File::open(path).map_err(|e| PluginError::io(path, &e))?;
    let mut line = Vec::new();
    BufReader::new(file)
        .read_until(b'\n', &mut line)
        .map_err(|e| PluginError::io(path, &e))?;
    if line.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    serde_json::from_slice(&line)
        .map(Some)
        .map_err(|e| PluginError::malformed_line(path, 1, None, format!("not JSON: {e}")))
}

/// The marker on a session's first record, if this plugin made it.
pub(crate) fn own_marker(path: &Path) -> Option<OwnershipMarker> {
    first_record(path)
        .ok()
        .flatten()
        .and_then(|r| OwnershipMarker::find(&r))
        .filter(|m| m.plugin == PLUGIN_NAME)
}

/// Every session file, newest first. Subagent transcripts (`agent-*.jsonl`) are not sessions.
pub(crate) fn list(root: &StoreRoot) -> Result<Vec<SessionInfo>, PluginError> {
    let mut sessions = Vec::new();
    for dir in project_dirs(&projects_dir(root))? {
        let entries = std::fs::read_dir(&dir).map_err(|e| PluginError::io(&dir, &e))?;
        for entry in entries {
            let entry = entry.map_err(|e| PluginError::io(&dir, &e))?;
            let path = entry.path();
            let Some(id) = path
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_suffix(".jsonl"))
            else {
                continue;
            };
            if id.starts_with("agent-") || !path.is_file() {
                continue;
            }
            let updated_ms = entry
                .metadata()
                .ok()
                .and_then(|m| m.modified().ok())
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_millis() as i64);
            let marker = own_marker(&path);
            sessions.push(SessionInfo {
                session: SessionRef {
                    target: CLAUDE_CODE.to_owned(),
                    id: id.to_owned(),
                    path: path.clone(),
                },
                owned: marker.is_some(),
                locator: marker.and_then(|m| m.locator),
                updated_ms,
            });
        }
    }
    sessions.sort_by(|a, b| {
        b.updated_ms
            .cmp(&a.updated_ms)
            .then_with(|| a.session.id.cmp(&b.session.id))
    });
    Ok(sessions)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slug_replaces_every_non_alphanumeric() {
        assert_eq!(slug("/home/murphy/temp"), "-home-murphy-temp");
        assert_eq!(slug("/a/b.c_d e~f"), "-a-b-c-d-e-f");
        assert_eq!(slug("/ü"), "--");
        assert_eq!(slug("/😀"), "---");
    }
}
