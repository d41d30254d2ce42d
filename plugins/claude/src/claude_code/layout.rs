//! Where Claude Code keeps sessions: `<root>/projects/<cwd slug>/<session id>.jsonl`.

use std::path::PathBuf;

use handoff_sdk::store::validate_component;
use handoff_sdk::{subdirs, PluginError, SessionRef, StoreRoot};

use crate::manifest::CLAUDE_CODE;

/// The longest slug Claude Code 2.1.197 uses as is; a longer one is cut there and suffixed with a
/// hash of the cwd (read from the CLI's bundle: `rtt=200`).
const MAX_SLUG: usize = 200;

/// The project folder name for `cwd`, as Claude Code 2.1.197 makes it: every character that is not
/// an ASCII letter or digit becomes `-` (so `/home/dev/my.proj` is `-home-dev-my-proj`); Claude
/// Code is JavaScript, so a character outside the BMP (two UTF-16 units) becomes two dashes. A slug
/// longer than 200 is cut to 200, then `-` and the base-36 absolute value of the cwd's 32-bit
/// string hash (`h = h * 31 + unit` over UTF-16 units) is added.
pub(crate) fn slug(cwd: &str) -> String {
    let mut out = handoff_sdk::dashed_cwd(cwd);
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

/// The folder of every project folder.
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
    for dir in subdirs(&projects)? {
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

/// Every session file with its id: `<id>.jsonl` in a project folder. Subagent transcripts
/// (`agent-*.jsonl`) are not sessions.
pub(crate) fn session_files(root: &StoreRoot) -> Result<Vec<(String, PathBuf)>, PluginError> {
    handoff_sdk::session_files(&projects_dir(root), 1, |name| {
        name.strip_suffix(".jsonl")
            .filter(|id| !id.starts_with("agent-"))
    })
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
