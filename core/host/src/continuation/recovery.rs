//! Rolling back what killed runs left: the hot journals of a store root (see
//! [`crate::journal`]).

use std::path::PathBuf;

use crate::journal::{self, FileId, HotJournal, Op, Record, Rollback};
use crate::seal::Seal;
use handoff_capability::{Plugin, SessionRef};
use handoff_store::StoreRoot;

use super::{store_error, ContinueError};

/// What was rolled back for one hot journal.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Recovered {
    /// The journal it came from (now deleted).
    pub journal: PathBuf,
    /// The target it wrote, if the journal was whole.
    pub target: Option<String>,
    /// The conversation, if the journal was whole.
    pub locator: Option<String>,
    /// What was done, naming the file.
    pub what: String,
}

/// Rolls back every hot journal of `root` (those of runs that are gone) before anything else
/// touches it: an interrupted append gets its old bytes back, an interrupted create's session is
/// removed (through the plugin in `plugins` that offers its target, so its side files go too),
/// and the dead run's temp files are removed. Journals of runs still going are left to them.
///
/// Only journals sealed by `seal` for this store root are acted on; any other is left where it is,
/// named in a warning ([`journal`]). A journal that cannot be rolled back stays where it is, and is
/// an error naming it.
pub fn recover(
    root: &StoreRoot,
    seal: &Seal,
    plugins: &[&dyn Plugin],
) -> Result<Vec<Recovered>, ContinueError> {
    recover_holding(root, seal, plugins, None)
}

/// [`recover`] by a run that holds the conversation lock `held`: its journals are hot too. A
/// journal of another conversation that cannot be rolled back is logged, not an error.
pub(super) fn recover_holding(
    root: &StoreRoot,
    seal: &Seal,
    plugins: &[&dyn Plugin],
    held: Option<&str>,
) -> Result<Vec<Recovered>, ContinueError> {
    let hot = journal::hot(root, seal, held).map_err(|e| store_error(root, &e))?;
    for ignored in &hot.ignored {
        tracing::warn!(
            "ignoring {}: {}; it is not acted on and is left where it is",
            ignored.path.display(),
            ignored.reason
        );
    }
    crate::episodes::remove_stale_temps(root, held);
    let mut recovered = Vec::new();
    for journal in hot.journals {
        let path = journal.path();
        let mine = held.is_some_and(|key| {
            path.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(key))
        });
        match roll_back(root, plugins, &journal) {
            Ok(what) => {
                let record = journal.record.clone();
                journal.finish().map_err(|e| store_error(root, &e))?;
                tracing::warn!(
                    "rolled back an interrupted write: {what} (journal {})",
                    path.display()
                );
                recovered.push(Recovered {
                    journal: path,
                    target: record.as_ref().map(|r| r.target.clone()),
                    locator: record.as_ref().map(|r| r.locator.clone()),
                    what,
                });
            }
            Err(message) if mine || held.is_none() => {
                return Err(ContinueError::Recovery {
                    journal: path,
                    message,
                })
            }
            Err(message) => {
                tracing::error!(
                    "cannot roll back the interrupted write recorded in {}: {message}",
                    path.display()
                );
            }
        }
    }
    Ok(recovered)
}

/// Rolls one hot journal back; says what was done, or why it could not be.
fn roll_back(
    root: &StoreRoot,
    plugins: &[&dyn Plugin],
    hot: &HotJournal,
) -> Result<String, String> {
    let Some(record) = &hot.record else {
        return Ok(
            "a run killed before it wrote anything; its unfinished journal was removed".into(),
        );
    };
    match hot.roll_back().map_err(|e| e.to_string())? {
        Some(Rollback::Create { created, previous }) => {
            let plugin = plugins
                .iter()
                .copied()
                .find(|p| p.manifest().target(&record.target).is_some());
            let created_file = match &record.op {
                Op::Create { created_file, .. } => *created_file,
                Op::Append { .. } => None,
            };
            let created = created.map(|session| (session, created_file));
            undo_create(
                root,
                hot.root(),
                plugin,
                record,
                created,
                previous.as_deref(),
            )
        }
        Some(done) => Ok(format!("interrupted append: {done}")),
        None => Ok(String::new()),
    }
}

/// Removes what an interrupted create made: the session it names (if its file is still the one
/// the run made), or (killed before the plugin returned) every session of that conversation newer
/// than the run that the plugin lists and that is not the one that existed before; then the run's
/// temp files anywhere in the store.
fn undo_create(
    root: &StoreRoot,
    resolved_root: &std::path::Path,
    plugin: Option<&dyn Plugin>,
    record: &Record,
    created: Option<(SessionRef, Option<FileId>)>,
    previous: Option<&str>,
) -> Result<String, String> {
    let walk = created.is_none();
    let sessions = match (created, plugin) {
        (Some((session, file)), _) => vec![(session, file)],
        (None, Some(plugin)) => plugin
            .reader()
            .list(root, &record.target)
            .map_err(|e| format!("cannot list the {} sessions to find the one being created: {e}", record.target))?
            .into_iter()
            .filter(|s| {
                s.owned
                    && s.locator.as_deref() == Some(record.locator.as_str())
                    && Some(s.session.id.as_str()) != previous
                    && s.updated_ms + 1_000 >= record.started_ms
            })
            .map(|s| (s.session, None))
            .collect(),
        (None, None) => {
            return Err(format!(
                "an interrupted create on target {} needs its plugin to find the session; run `handoff continue` to {} again",
                record.target, record.target
            ))
        }
    };
    let mut removed = Vec::new();
    for (session, file) in &sessions {
        let path =
            journal::resolve_inside(resolved_root, &session.path).map_err(|e| e.to_string())?;
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        // The file the run made, and no other: a session named by the journal but since replaced
        // by someone else is left alone.
        if !walk && *file != Some(FileId::of(&meta)) {
            return Err(format!(
                "{} is not the file the interrupted create made; it is left alone",
                path.display()
            ));
        }
        let by_plugin = plugin.map(|p| p.writer().remove(root, session));
        match by_plugin {
            Some(Ok(())) => {}
            Some(Err(e)) if path.exists() => {
                tracing::warn!("{e}; removing {} directly", path.display());
                remove_file(&path)?;
            }
            Some(Err(_)) => {}
            None => remove_file(&path)?,
        }
        removed.push(format!("{} ({})", session.id, path.display()));
    }
    // With the session known, its folder's temp files went with the journal's rollback.
    let temps = if walk {
        journal::remove_temps_under(root, record.pid).map_err(|e| e.to_string())?
    } else {
        0
    };
    let mut what = if removed.is_empty() {
        "interrupted create: no session had been made".to_owned()
    } else {
        format!("interrupted create: removed session {}", removed.join(", "))
    };
    if temps > 0 {
        what += &format!(" and {temps} temp file(s)");
    }
    Ok(what)
}

fn remove_file(path: &std::path::Path) -> Result<(), String> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(format!("{}: {e}", path.display()))
        }
        _ => Ok(()),
    }
}
