//! Advisory locks for writers of one session or one conversation.
//!
//! Lock files live under `<root>/.handoff/locks/`, a directory no CLI reads. The lock is the OS
//! advisory lock on that file (released when the process dies), so a crashed writer never leaves a
//! stale lock.

use std::fs::{File, OpenOptions};
use std::path::PathBuf;
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
    pub fn acquire(root: &StoreRoot, name: &str, wait: Duration) -> std::io::Result<Lock> {
        let dir = root.path().join(".handoff").join("locks");
        std::fs::create_dir_all(&dir)?;
        let path = dir.join(format!(
            "{}.lock",
            hex::encode(Sha256::digest(name.as_bytes()))
        ));
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)?;
        let deadline = Instant::now() + wait;
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(Lock { _file: file, path }),
                Err(std::fs::TryLockError::WouldBlock) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(std::fs::TryLockError::WouldBlock) => {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::WouldBlock,
                        format!("{} is held by another writer", path.display()),
                    ))
                }
                Err(std::fs::TryLockError::Error(e)) => return Err(e),
            }
        }
    }

    /// The lock file.
    pub fn path(&self) -> &std::path::Path {
        &self.path
    }
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
        drop(held);
        Lock::acquire(&root, "conversation-1", Duration::ZERO).unwrap();
    }
}
