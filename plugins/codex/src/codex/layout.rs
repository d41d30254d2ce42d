//! Where rollouts live: `<root>/sessions/YYYY/MM/DD/rollout-<local time>-<uuid>.jsonl`.

use std::path::{Path, PathBuf};

use chrono::{DateTime, Local};
use handoff_sdk::{PluginError, StoreRoot};

use crate::manifest::TARGET;

const PREFIX: &str = "rollout-";
const SUFFIX: &str = ".jsonl";
/// `YYYY-MM-DDThh-mm-ss`.
const STAMP_LEN: usize = 19;

/// The directory and file name of a new rollout created at `local` with this id.
pub fn rollout_path(
    root: &StoreRoot,
    local: &DateTime<Local>,
    id: &str,
) -> Result<(PathBuf, PathBuf), PluginError> {
    let dir = root.join(&[
        "sessions",
        &local.format("%Y").to_string(),
        &local.format("%m").to_string(),
        &local.format("%d").to_string(),
    ])?;
    let name = format!("{PREFIX}{}-{id}{SUFFIX}", local.format("%Y-%m-%dT%H-%M-%S"));
    handoff_sdk::store::validate_component("rollout file name", &name)?;
    let file = dir.join(name);
    Ok((dir, file))
}

/// The session id a rollout file name carries, if the name has the exact Codex shape.
pub fn id_from_file_name(name: &str) -> Option<&str> {
    let rest = name.strip_prefix(PREFIX)?.strip_suffix(SUFFIX)?;
    let (stamp, id) = (rest.get(..STAMP_LEN)?, rest.get(STAMP_LEN..)?);
    let id = id.strip_prefix('-')?;
    let stamp_ok = stamp.bytes().enumerate().all(|(i, b)| match i {
        4 | 7 | 13 | 16 => b == b'-',
        10 => b == b'T',
        _ => b.is_ascii_digit(),
    });
    (stamp_ok && !id.is_empty()).then_some(id)
}

/// Every rollout file under `<root>/sessions` (three date levels deep), with its id.
pub fn all_rollouts(root: &StoreRoot) -> Result<Vec<(String, PathBuf)>, PluginError> {
    handoff_sdk::session_files(&root.path().join("sessions"), 3, id_from_file_name)
}

/// Every rollout, newest first by the creation time its date folders and file name carry (ties by
/// id): the order in which a search for the latest session of a conversation can stop early.
pub fn rollouts_newest_first(root: &StoreRoot) -> Result<Vec<(String, PathBuf)>, PluginError> {
    let mut found = all_rollouts(root)?;
    found.sort_unstable_by(|a, b| b.1.cmp(&a.1));
    Ok(found)
}

/// The one rollout whose file name carries exactly `id`; a missing id is [`PluginError::NotFound`].
pub fn resolve(root: &StoreRoot, id: &str) -> Result<PathBuf, PluginError> {
    handoff_sdk::store::validate_component("session id", id)?;
    let mut matches: Vec<PathBuf> = all_rollouts(root)?
        .into_iter()
        .filter(|(found, _)| found == id)
        .map(|(_, path)| path)
        .collect();
    match matches.len() {
        0 => Err(PluginError::NotFound {
            target: TARGET.to_owned(),
            id: id.to_owned(),
            searched: root.path().join("sessions"),
        }),
        1 => Ok(matches.remove(0)),
        _ => Err(PluginError::Other(format!(
            "{TARGET}: {} rollout files carry the id {id:?} ({}); refusing to guess",
            matches.len(),
            matches
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// Removes the empty date directories above a removed rollout (never `sessions` itself).
pub fn remove_empty_date_dirs(root: &StoreRoot, file: &Path) {
    let sessions = root.path().join("sessions");
    let mut dir = file.parent();
    while let Some(d) = dir {
        if d == sessions || !d.starts_with(&sessions) || root.check_inside(d).is_err() {
            break;
        }
        if std::fs::remove_dir(d).is_err() {
            break;
        }
        dir = d.parent();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_only_the_exact_file_name_shape() {
        assert_eq!(
            id_from_file_name(
                "rollout-2026-11-30T00-41-43-01a229e6-854b-7501-91aa-ee582218765e.jsonl"
            ),
            Some("01a229e6-854b-7501-91aa-ee582218765e")
        );
        for bad in [
            "rollout-2026-11-30T00-41-43-.jsonl",
            "rollout-2026-11-30T00:41:43-x.jsonl",
            "rollout-2026-11-30-x.jsonl",
            "session-2026-11-30T00-41-43-x.jsonl",
            "rollout-2026-11-30T00-41-43-x.json",
        ] {
            assert_eq!(id_from_file_name(bad), None, "{bad}");
        }
    }

    #[test]
    fn resolve_finds_exactly_that_id_and_refuses_missing_ones() {
        let tmp = tempfile::tempdir().unwrap();
        let root = StoreRoot::new(tmp.path()).unwrap();
        let day = tmp.path().join("sessions/2026/11/30");
        std::fs::create_dir_all(&day).unwrap();
        for id in ["aaaa", "aaaab", "baaaa"] {
            std::fs::write(
                day.join(format!("rollout-2026-11-30T00-00-00-{id}.jsonl")),
                "",
            )
            .unwrap();
        }
        assert!(resolve(&root, "aaaa")
            .unwrap()
            .ends_with("rollout-2026-11-30T00-00-00-aaaa.jsonl"));
        assert!(matches!(
            resolve(&root, "aaa"),
            Err(PluginError::NotFound { .. })
        ));
        assert!(resolve(&root, "../x").is_err());
    }
}
