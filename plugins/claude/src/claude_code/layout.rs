//! Where Claude Code keeps sessions: `<root>/projects/<cwd slug>/<session id>.jsonl`.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use handoff_sdk::marker::OwnershipMarker;
use handoff_sdk::serde_json::{self, Value};
use handoff_sdk::store::validate_component;
use handoff_sdk::{PluginError, SessionInfo, SessionRef, StoreRoot};

use crate::manifest::{CLAUDE_CODE, PLUGIN_NAME};

/// The longest slug Claude Code 2.1.197 uses as is; a longer one is cut there and suffixed with a
/// hash of the cwd (read from the CLI's bundle: `rtt=200`).
const MAX_SLUG: usize = 200;

/// The project folder name for `cwd`, as Claude Code 2.1.197 makes it: every character that is not
/// an ASCII letter or digit becomes `-` (so `/home/dev/my.proj` is `-home-dev-my-proj`); Claude
/// Code is JavaScript, so a character outside the BMP (two UTF-16 units) becomes two dashes. A slug
/// longer than 200 is cut to 200, then `-` and the base-36 absolute value of the cwd's 32-bit
/// string hash (`h = h * 31 + unit` over UTF-16 units) is added.
pub(crate) fn slug(cwd: &str) -> String {
    let mut out = String::with_capacity(cwd.len());
    for c in cwd.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else {
            out.extend(std::iter::repeat_n('-', c.len_utf16()));
        }
    }
    if out.len() > MAX_SLUG {
        out.truncate(MAX_SLUG);
        out.push('-');
        out.push_str(&base36(u64::from(js_string_hash(cwd).unsigned_abs())));
    }
    out
}

/// JavaScript's `h = (h << 5) - h + s.charCodeAt(i) | 0` over the UTF-16 units of `s`.
fn js_string_hash(s: &str) -> i32 {
    s.encode_utf16().fold(0i32, |h, unit| {
        (h << 5).wrapping_sub(h).wrapping_add(i32::from(unit))
    })
}

/// `n.toString(36)`.
fn base36(mut n: u64) -> String {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    loop {
        out.push(DIGITS[(n % 36) as usize]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8(out).expect("ASCII digits")
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
            sessions.push(SessionInfo::of_file(
                CLAUDE_CODE,
                id,
                &path,
                own_marker(&path),
            ));
        }
    }
    SessionInfo::sort_newest_first(&mut sessions);
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

    #[test]
    fn long_slugs_are_cut_and_hashed_like_claude_code() {
        // Expected value computed by Claude Code 2.1.197's own function, run in node.
        let cwd = format!(
            "/home/dev/{}proj",
            "very-long-directory-name-ü😀/".repeat(8)
        );
        let expected = format!(
            "-home-dev-{}very-long-direct-38xytk",
            "very-long-directory-name-----".repeat(6)
        );
        assert_eq!(slug(&cwd), expected);
        assert_eq!(
            slug(&"/a".repeat(100)).len(),
            200,
            "exactly 200 is kept as is"
        );
    }
}
