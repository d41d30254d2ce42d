use handoff_host::ById;

use crate::corpus;
use crate::sandbox::{changes, is_bookkeeping, snapshot};

use super::copies::{copy_with_new_id, strip_markers};
use super::{Ctx, Outcome};

/// remove deletes only sessions the plugin marked as its own; foreign files stay byte for byte.
pub(crate) fn check(ctx: &Ctx<'_>) -> Outcome {
    let transcript = &corpus::entry("plain-chat").expect("in corpus").transcript;
    let owned = ctx.create("owned session", transcript)?;
    let kept = ctx.create("another owned session", transcript)?;
    // In a store whose sessions share one SQLite database, removing a session
    // rewrites that database: there, the other session must read back as before instead.
    let kept_before = ctx.plugin.read_id(ctx.root(), ctx.name(), &kept.id).ok();
    // A foreign session: the same native content, without the marker, under a new id.
    let foreign = copy_with_new_id(&owned, strip_markers).map_err(|e| vec![e])?;
    let mut evidence = vec![format!("foreign copy {}", foreign.path.display())];
    let mut failures = Vec::new();

    let before = snapshot(ctx.root().path());
    // The foreign copy is resolved like any session, then handed to remove.
    let removed = ctx
        .plugin
        .resumer()
        .resolve(ctx.root(), ctx.name(), &foreign.id)
        .and_then(|session| ctx.plugin.writer().remove(ctx.root(), &session));
    match removed {
        Ok(()) => failures.push(format!(
            "remove({}) deleted a session the plugin did not create",
            foreign.id
        )),
        Err(e) => evidence.push(format!("remove of the foreign session refused: {e}")),
    }
    let after_refusal = snapshot(ctx.root().path());
    let touched = changes(&before, &after_refusal, |p| is_bookkeeping(ctx.root(), p));
    if !touched.is_empty() {
        failures.push(format!(
            "refusing the foreign session still changed: {}",
            touched.join("; ")
        ));
    }

    match ctx.plugin.writer().remove(ctx.root(), &owned) {
        Err(e) => failures.push(format!(
            "remove({}) of its own session failed: {e}",
            owned.id
        )),
        Ok(()) => {
            let after = snapshot(ctx.root().path());
            let changed: Vec<String> = changes(&after_refusal, &after, |p| {
                is_bookkeeping(ctx.root(), p)
                    || (is_shared_database(p)
                        && kept_before.is_some()
                        && ctx.plugin.read_id(ctx.root(), ctx.name(), &kept.id).ok() == kept_before)
            })
            .into_iter()
            .filter(|c| c != &format!("removed {}", owned.path.display()))
            .collect();
            if owned.path.exists() {
                failures.push(format!(
                    "{} still exists after remove",
                    owned.path.display()
                ));
            }
            if !changed.is_empty()
                && changed
                    .iter()
                    .any(|c| !c.starts_with("removed ") || !is_empty_dir_of(c, &owned.path))
            {
                failures.push(format!(
                    "remove touched other files: {}",
                    changed.join("; ")
                ));
            }
            match ctx.plugin.read_id(ctx.root(), ctx.name(), &owned.id) {
                Ok(_) => failures.push(format!(
                    "read({}) still finds the removed session",
                    owned.id
                )),
                Err(_) => evidence.push(format!("removed {} and only it", owned.id)),
            }
        }
    }
    if !kept.path.exists() || !foreign.path.exists() {
        failures.push("another session disappeared".into());
    }
    if failures.is_empty() {
        Ok(evidence)
    } else {
        Err(failures)
    }
}

/// Whether `path` is a SQLite database, or its `-wal` / `-shm` file: a store file every session
/// of the store lives in, not one session's.
fn is_shared_database(path: &std::path::Path) -> bool {
    use std::io::Read as _;
    let name = path.to_string_lossy();
    let database = ["-wal", "-shm"]
        .iter()
        .find_map(|suffix| name.strip_suffix(suffix))
        .map_or_else(|| path.to_owned(), std::path::PathBuf::from);
    let mut header = [0u8; 16];
    std::fs::File::open(&database)
        .and_then(|mut f| f.read_exact(&mut header))
        .is_ok_and(|()| &header == b"SQLite format 3\0")
}

/// `removed <dir>` where dir is an (emptied) parent directory of the removed session.
fn is_empty_dir_of(change: &str, session: &std::path::Path) -> bool {
    change
        .strip_prefix("removed ")
        .is_some_and(|p| session.starts_with(p))
}
