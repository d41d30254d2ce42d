//! Undoing what a sealed journal says was begun, and nothing else.
//!
//! Even a journal handoff wrote is acted on only inside its store root, links resolved, and only
//! on a file whose identity and bytes are the ones it recorded: an append is cut back only on the
//! same inode with the same old bytes, a replaced file gets back only the inode (or the checked
//! copy) kept beside the journal.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::on_disk::remove_if_present;
use super::{Backup, FileId, Op, Record, Rollback, TAIL};
use handoff_store::lock::named;
use handoff_store::StoreRoot;

/// `path` with its folder's links resolved, if it lies inside the store root `root` (itself
/// resolved) and is not a link itself: the only kind of path recovery acts on. A path whose folder
/// is gone comes back as it is (there is nothing there to act on).
pub fn resolve_inside(root: &Path, path: &Path) -> io::Result<PathBuf> {
    let outside = |why: &str| {
        io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{}: {why}; recovery acts only inside the store root {}, and leaves it alone",
                path.display(),
                root.display()
            ),
        )
    };
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(outside("not a file path"));
    };
    let parent = match std::fs::canonicalize(parent) {
        Ok(parent) => parent,
        // No folder, no file: nothing there to act on, and nothing to refuse.
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(path.to_owned()),
        Err(e) => return Err(named(parent, e)),
    };
    let resolved = parent.join(name);
    if !resolved.starts_with(root) || resolved == root {
        return Err(outside("outside the store root"));
    }
    if std::fs::symlink_metadata(&resolved).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(outside("a symbolic link"));
    }
    Ok(resolved)
}

/// Undoes what `record` says was begun (file level), and removes the run's temp files from the
/// session's folder. `root` is the store root resolved.
pub(super) fn roll_back_files(
    root: &Path,
    dir: &Path,
    name: &str,
    record: &Record,
) -> io::Result<Rollback> {
    match &record.op {
        Op::Append {
            session,
            len,
            dev,
            ino,
            tail_sha256,
            backup,
        } => {
            let path = resolve_inside(root, &session.path)?;
            let backup_path = dir.join(format!("{name}.orig"));
            let old = Old {
                len: *len,
                id: FileId {
                    dev: *dev,
                    ino: *ino,
                },
                tail_sha256,
                backup: *backup,
            };
            let done = restore(&path, &old, &backup_path)?;
            remove_temps_in(path.parent(), record.pid)?;
            Ok(done)
        }
        Op::Create {
            created, previous, ..
        } => {
            if let Some(created) = created {
                let path = resolve_inside(root, &created.path)?;
                remove_temps_in(path.parent(), record.pid)?;
            }
            Ok(Rollback::Create {
                created: created.clone(),
                previous: previous.clone(),
            })
        }
    }
}

/// What an appended file was before the append, as its journal recorded it.
struct Old<'a> {
    len: u64,
    id: FileId,
    tail_sha256: &'a str,
    backup: Backup,
}

/// Puts the old bytes of an appended file back: cut back in place (same inode, the old bytes
/// checked by their tail digest), or the kept old inode (or checked copy) renamed back over a
/// replacement.
fn restore(path: &Path, old: &Old<'_>, backup_path: &Path) -> io::Result<Rollback> {
    // Opened without following a link; identity and bytes are checked on this very handle.
    let current = match OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
    {
        Ok(file) => Some(file),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(named(path, e)),
    };
    if let Some(mut file) = current {
        let meta = file.metadata().map_err(|e| named(path, e))?;
        if FileId::of(&meta) == old.id {
            let from = meta.len();
            if from >= old.len && tail_digest(&mut file, old.len)? == old.tail_sha256 {
                if from > old.len {
                    file.set_len(old.len).map_err(|e| named(path, e))?;
                    file.sync_all().map_err(|e| named(path, e))?;
                }
                return Ok(Rollback::CutBack {
                    path: path.to_owned(),
                    from,
                    to: old.len,
                });
            }
            if old.backup == Backup::Link {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!(
                        "{}: cannot undo the interrupted append: the file's first {} bytes were changed in place (it is {from} bytes now); its journal is kept in {}",
                        path.display(),
                        old.len,
                        backup_path.parent().unwrap_or(backup_path).display()
                    ),
                ));
            }
        }
    }
    check_backup(path, old, backup_path)?;
    std::fs::rename(backup_path, path).map_err(|e| named(path, e))?;
    handoff_store::atomic::sync_parent(path).map_err(|e| named(path, e))?;
    Ok(Rollback::Restored {
        path: path.to_owned(),
    })
}

/// The kept old bytes must be what the journal recorded: the very old inode (a link) or a copy of
/// the old length, either with the old tail.
fn check_backup(path: &Path, old: &Old<'_>, backup_path: &Path) -> io::Result<()> {
    let cannot = |why: String| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "{}: cannot undo the interrupted append: {why}",
                path.display()
            ),
        )
    };
    let mut kept = match OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(backup_path)
    {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(cannot(format!(
                "the file was replaced and its old bytes ({}) are missing",
                backup_path.display()
            )))
        }
        Err(e) => return Err(named(backup_path, e)),
    };
    let meta = kept.metadata().map_err(|e| named(backup_path, e))?;
    let same = match old.backup {
        Backup::Link => FileId::of(&meta) == old.id,
        Backup::Copy => meta.is_file() && meta.len() == old.len,
    } && meta.len() >= old.len
        && tail_digest(&mut kept, old.len)? == old.tail_sha256;
    if !same {
        return Err(cannot(format!(
            "{} is not the old file its journal recorded; nothing was changed",
            backup_path.display()
        )));
    }
    Ok(())
}

/// The sha256 of the (up to [`TAIL`]) bytes of `file` before offset `len`.
pub(super) fn tail_digest(file: &mut File, len: u64) -> io::Result<String> {
    let start = len.saturating_sub(TAIL);
    file.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::with_capacity((len - start) as usize);
    file.take(len - start).read_to_end(&mut bytes)?;
    if (bytes.len() as u64) < len - start {
        return Ok(String::from("short"));
    }
    Ok(hex::encode(Sha256::digest(&bytes)))
}

/// Removes the temp files process `pid` left in `dir` (not in its subfolders). Returns how many.
pub fn remove_temps_in(dir: Option<&Path>, pid: u32) -> io::Result<usize> {
    let Some(dir) = dir else { return Ok(0) };
    let prefix = handoff_store::atomic::temp_prefix(pid);
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(named(dir, e)),
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let is_file = entry.file_type().is_ok_and(|t| t.is_file());
        if is_file && entry.file_name().to_string_lossy().starts_with(&prefix) {
            remove_if_present(&entry.path())?;
            removed += 1;
        }
    }
    Ok(removed)
}

/// Removes the temp files process `pid` left anywhere under `root` (not following symbolic
/// links, not inside `.handoff`): for a create that died before the plugin said where its session
/// goes. Returns how many.
pub fn remove_temps_under(root: &StoreRoot, pid: u32) -> io::Result<usize> {
    fn walk(dir: &Path, pid: u32, depth: usize, removed: &mut usize) -> io::Result<()> {
        *removed += remove_temps_in(Some(dir), pid)?;
        if depth == 0 {
            return Ok(());
        }
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Ok(());
        };
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) && entry.file_name() != ".handoff" {
                walk(&entry.path(), pid, depth - 1, removed)?;
            }
        }
        Ok(())
    }
    let mut removed = 0;
    walk(root.path(), pid, 12, &mut removed)?;
    Ok(removed)
}

impl FileId {
    /// The identity of the file `meta` describes.
    pub fn of(meta: &std::fs::Metadata) -> FileId {
        FileId {
            dev: meta.dev(),
            ino: meta.ino(),
        }
    }
}
