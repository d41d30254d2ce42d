//! Scratch folders whose leftovers the next run removes.
//!
//! A scratch folder `<parent>/<name>/` lives beside its lock file `<parent>/<name>.lock`, held
//! while the folder is in use (the OS releases it when the process dies). Making a new one first
//! sweeps `parent`: every folder whose lock is free, or that has no lock file, belongs to a run
//! that is gone and is removed. So a killed run's scratch never outlives the next run.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::lock::named;

/// A scratch folder in use; removed on drop.
#[derive(Debug)]
pub struct ScratchDir {
    path: PathBuf,
    lock_path: PathBuf,
    _lock: File,
}

impl ScratchDir {
    /// Sweeps `parent` (see [`ScratchDir::sweep`]), then makes a fresh folder in it.
    pub fn new(parent: &Path) -> io::Result<ScratchDir> {
        ScratchDir::sweep(parent)?;
        std::fs::create_dir_all(parent).map_err(|e| named(parent, e))?;
        loop {
            let name = format!(
                "{}-{}",
                std::process::id(),
                &uuid::Uuid::new_v4().simple().to_string()[..12]
            );
            let lock_path = parent.join(format!("{name}.lock"));
            let lock = match OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&lock_path)
            {
                Ok(file) => file,
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(named(&lock_path, e)),
            };
            lock.lock().map_err(|e| named(&lock_path, e))?;
            // A sweeper may have taken and removed the file between its creation and the lock:
            // then this lock guards nothing, and another name is tried.
            let same = std::fs::metadata(&lock_path)
                .ok()
                .zip(lock.metadata().ok())
                .is_some_and(|(a, b)| (a.dev(), a.ino()) == (b.dev(), b.ino()));
            if !same {
                continue;
            }
            let path = parent.join(&name);
            std::fs::create_dir(&path).map_err(|e| named(&path, e))?;
            return Ok(ScratchDir {
                path,
                lock_path,
                _lock: lock,
            });
        }
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Removes every scratch folder in `parent` whose run is gone. Returns how many.
    pub fn sweep(parent: &Path) -> io::Result<usize> {
        let entries = match std::fs::read_dir(parent) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
            Err(e) => return Err(named(parent, e)),
        };
        let mut removed = 0;
        for entry in entries.flatten() {
            let path = entry.path();
            if !entry.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            let lock_path = path.with_extension("lock");
            let held = match OpenOptions::new().write(true).open(&lock_path) {
                Ok(file) => match file.try_lock() {
                    Ok(()) => Some(file),
                    Err(std::fs::TryLockError::WouldBlock) => continue,
                    Err(std::fs::TryLockError::Error(e)) => return Err(named(&lock_path, e)),
                },
                Err(e) if e.kind() == io::ErrorKind::NotFound => None,
                Err(e) => return Err(named(&lock_path, e)),
            };
            match std::fs::remove_dir_all(&path) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(named(&path, e)),
                _ => {}
            }
            if held.is_some() {
                let _ = std::fs::remove_file(&lock_path);
            }
            removed += 1;
        }
        Ok(removed)
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_dir_all(&self.path) {
            tracing::warn!(
                "cannot remove the scratch folder {}: {e}",
                self.path.display()
            );
        }
        let _ = std::fs::remove_file(&self.lock_path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dead_runs_scratch_is_swept_and_a_live_one_is_not() {
        let tmp = tempfile::tempdir().unwrap();
        let parent = tmp.path().join("scratch");
        let live = ScratchDir::new(&parent).unwrap();
        std::fs::write(live.path().join("f"), b"x").unwrap();
        // A dead run's folder: its lock file is there but nobody holds it.
        let dead = parent.join("123-dead");
        std::fs::create_dir_all(dead.join("store")).unwrap();
        std::fs::write(parent.join("123-dead.lock"), b"").unwrap();
        // One whose run died before it made its lock file.
        std::fs::create_dir(parent.join("456-nolock")).unwrap();
        let other = ScratchDir::new(&parent).unwrap();
        assert!(!dead.exists());
        assert!(!parent.join("123-dead.lock").exists());
        assert!(!parent.join("456-nolock").exists());
        assert!(live.path().join("f").exists(), "a live run's folder stays");
        let (a, b) = (live.path().to_owned(), other.path().to_owned());
        drop(live);
        drop(other);
        assert!(!a.exists() && !b.exists());
        assert_eq!(std::fs::read_dir(&parent).unwrap().count(), 0);
    }
}
