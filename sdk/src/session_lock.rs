//! The writer lock of one session: held by `append` and `remove` while they read, check and
//! change the session, so two handoff writers never both continue from the same end (and a
//! read-modify-replace store never loses the other writer's events).
//!
//! It is the store's advisory lock ([`crate::lock`], under `<root>/.handoff/locks/`, released
//! when the holder dies), under one name per session for every plugin, `session\0<target>\0<id>`.
//! It keeps handoff writers apart; it cannot stop the provider's own CLI writing the same file.

use std::time::Duration;

use handoff_capability::{PluginError, SessionRef};
use handoff_store::lock::Lock;
use handoff_store::StoreRoot;

/// How long a writer waits for another writer of the same session before it fails with
/// [`PluginError::Locked`].
///
/// The holder is an `append` or a `remove`: it reads the whole session, checks it and writes (an
/// API history store re-renders and replaces the whole file). Measured here, reading a 92 MB
/// (25,000-turn) Claude Code session takes 0.5–0.9 s and writing its Codex form about 0.7 s on a
/// loaded two-core machine, so a long append holds the lock for a second or two. Ten seconds
/// outlasts an append to a session several times that size on a slow disk, so a waiter does not
/// fail a write that would have gone through; and it still ends the wait in bounded time when the
/// holder is alive but stuck (a dead holder's lock is released by the OS at once).
pub const SESSION_LOCK_WAIT: Duration = Duration::from_secs(10);

/// Takes the writer lock of `session`, waiting up to [`SESSION_LOCK_WAIT`]; released when the
/// returned [`Lock`] is dropped. Another writer still holding it then is
/// [`PluginError::Locked`] naming the session's file.
///
/// Take it first in `append` and `remove` (after [`SessionRef::check`]), then check the owner
/// ([`crate::require_owned`]) and read: what was checked cannot change before the write.
pub fn session_lock(root: &StoreRoot, session: &SessionRef) -> Result<Lock, PluginError> {
    session_lock_waiting(root, session, SESSION_LOCK_WAIT)
}

fn session_lock_waiting(
    root: &StoreRoot,
    session: &SessionRef,
    wait: Duration,
) -> Result<Lock, PluginError> {
    let name = format!("session\0{}\0{}", session.target, session.id);
    Lock::acquire(root, &name, wait).map_err(|e| match e.kind() {
        std::io::ErrorKind::WouldBlock => PluginError::Locked {
            path: session.path.clone(),
        },
        _ => PluginError::io(&root.path().join(".handoff").join("locks"), &e),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(root: &StoreRoot, target: &str, id: &str) -> SessionRef {
        SessionRef {
            target: target.into(),
            id: id.into(),
            path: root.path().join(format!("{target}/{id}.jsonl")),
        }
    }

    #[test]
    fn one_writer_per_session_and_the_error_names_its_file() {
        let tmp = tempfile::tempdir().unwrap();
        let root = StoreRoot::new(tmp.path()).unwrap();
        let a = session(&root, "claude-code", "s1");
        let held = session_lock(&root, &a).unwrap();
        let short = Duration::from_millis(40);
        match session_lock_waiting(&root, &a, short) {
            Err(PluginError::Locked { path }) => assert_eq!(path, a.path),
            other => panic!("expected Locked, got {other:?}"),
        }
        // Another session, or the same id of another target, is another lock.
        session_lock_waiting(&root, &session(&root, "claude-code", "s2"), short).unwrap();
        session_lock_waiting(&root, &session(&root, "codex", "s1"), short).unwrap();
        drop(held);
        session_lock_waiting(&root, &a, short).unwrap();
        assert!(root.path().join(".handoff/locks").is_dir());
    }

    #[test]
    fn a_waiter_gets_the_lock_once_it_is_released() {
        let tmp = tempfile::tempdir().unwrap();
        let root = StoreRoot::new(tmp.path()).unwrap();
        let a = session(&root, "codex", "s1");
        let held = session_lock(&root, &a).unwrap();
        let release = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            drop(held);
        });
        session_lock_waiting(&root, &a, Duration::from_secs(5)).unwrap();
        release.join().unwrap();
    }
}
