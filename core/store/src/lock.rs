//! Advisory locks for writers of one session or one conversation.
//!
//! Lock files live under `<root>/.handoff/locks/`, a directory no CLI reads. The lock is the OS
//! advisory lock on that file (released when the process dies), so a crashed writer never leaves a
//! stale lock. Two opens of one lock file conflict even inside one process, so two threads are
//! kept apart like two processes.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use super::StoreRoot;

/// A held lock; released on drop.
#[derive(Debug)]
pub struct Lock {
    _file: File,
    path: PathBuf,
}

impl Lock {
    /// Takes the lock named `name` under `root`, waiting up to `wait`. Names are hashed, so any
    /// string (a session id, a conversation locator) is safe.
    ///
    /// A lock another holder keeps past `wait` is an error of kind [`io::ErrorKind::WouldBlock`];
    /// any other error (a read-only or full store root) says which path it is about.
    pub fn acquire(root: &StoreRoot, name: &str, wait: Duration) -> io::Result<Lock> {
        Lock::acquire_file(&Lock::path_of(root, &Lock::key(name)), wait)
    }

    /// The lock file's key for `name`: the lowercase hex sha256 of the name.
    pub fn key(name: &str) -> String {
        hex::encode(Sha256::digest(name.as_bytes()))
    }

    /// The lock file of `key` under `root`.
    pub fn path_of(root: &StoreRoot, key: &str) -> PathBuf {
        root.path()
            .join(".handoff")
            .join("locks")
            .join(format!("{key}.lock"))
    }

    /// Takes the lock of `key` (see [`Lock::key`]) if nobody holds it, without waiting and without
    /// creating anything: `Ok(None)` when another holder has it or its file does not exist.
    pub fn try_key(root: &StoreRoot, key: &str) -> io::Result<Option<Lock>> {
        let path = Lock::path_of(root, key);
        let file = match OpenOptions::new().write(true).open(&path) {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(named(&path, e)),
        };
        match file.try_lock() {
            Ok(()) => Ok(Some(Lock { _file: file, path })),
            Err(std::fs::TryLockError::WouldBlock) => Ok(None),
            Err(std::fs::TryLockError::Error(e)) => Err(named(&path, e)),
        }
    }

    /// Takes the lock on the file `path` (made, with its directory, if missing), waiting up to
    /// `wait`. For locks outside a store root (certificates, scratch folders).
    pub fn acquire_file(path: &Path, wait: Duration) -> io::Result<Lock> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| named(dir, e))?;
        }
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)
            .map_err(|e| named(path, e))?;
        let deadline = Instant::now() + wait;
        loop {
            match file.try_lock() {
                Ok(()) => {
                    return Ok(Lock {
                        _file: file,
                        path: path.to_owned(),
                    })
                }
                Err(std::fs::TryLockError::WouldBlock) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(std::fs::TryLockError::WouldBlock) => {
                    return Err(io::Error::new(
                        io::ErrorKind::WouldBlock,
                        format!("{} is held by another writer", path.display()),
                    ))
                }
                Err(std::fs::TryLockError::Error(e)) => return Err(named(path, e)),
            }
        }
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// `error`, of the same kind, with `path` in its message.
pub fn named(path: &Path, error: io::Error) -> io::Error {
    io::Error::new(error.kind(), format!("{}: {error}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_holder_waits_then_fails() {
        let tmp = tempfile::tempdir().unwrap();
        let root = StoreRoot::new(tmp.path()).unwrap();
        let held = Lock::acquire(&root, "conversation-1", Duration::ZERO).unwrap();
        let err = Lock::acquire(&root, "conversation-1", Duration::from_millis(50)).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::WouldBlock);
        Lock::acquire(&root, "conversation-2", Duration::ZERO).unwrap();
        let key = Lock::key("conversation-1");
        assert!(Lock::try_key(&root, &key).unwrap().is_none());
        drop(held);
        assert!(Lock::try_key(&root, &key).unwrap().is_some());
        assert!(Lock::try_key(&root, &Lock::key("never-taken"))
            .unwrap()
            .is_none());
        Lock::acquire(&root, "conversation-1", Duration::ZERO).unwrap();
    }

    #[test]
    fn an_unwritable_place_is_an_error_naming_the_path() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("a-file");
        std::fs::write(&file, b"x").unwrap();
        // The store root's `.handoff` would have to be made inside a plain file.
        let err = Lock::acquire_file(&file.join("locks/x.lock"), Duration::ZERO).unwrap_err();
        assert_ne!(err.kind(), io::ErrorKind::WouldBlock);
        assert!(err.to_string().contains("a-file"), "{err}");
    }
}
