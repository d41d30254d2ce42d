//! The rollback journal: how a write that a killed run left half done is undone by the next run.
//!
//! Like SQLite's rollback journal. Before the continuation engine lets a plugin change a store, it
//! writes a journal under `<root>/.handoff/journal/` saying what it is about to do, makes it
//! durable, and only then calls the plugin; when the write is verified, deleting the journal is the
//! commit. A journal whose run is gone is *hot*: the next run that opens the store root rolls it
//! back before anything else, so a session has exactly its old bytes or its complete new ones.
//!
//! - An **append** records the session file's length, identity (device and inode) and a digest of
//!   its last bytes, and keeps the file's old inode alive as a hard link `<name>.orig` (a copy where
//!   the file system has no hard links). A plugin either appends whole lines in place
//!   ([`super::atomic::append`]) or replaces the file by a rename ([`super::atomic::replace`]): an
//!   in-place append is undone by cutting the file back to its old length, a replacement by renaming
//!   the old inode back. Nothing is copied, so a backup never fills a disk.
//! - A **create** records the conversation and, once the plugin returns, the new session; rolling it
//!   back removes that session (through the plugin, see `continuation::recover`).
//! - Temp files of the dead run (`.handoff-tmp-<pid>-…`, see [`super::atomic::temp_prefix`]) are
//!   removed from the session's folder, or from the whole store when the new session's folder is
//!   not known.
//!
//! A journal is named `<key>.<txn>` where `<key>` is the key of the conversation lock its run held
//! ([`super::lock::Lock::key`]). That lock is the liveness test: a journal is hot exactly when its
//! conversation lock is free (or held by the caller, which is about to write that conversation).

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::lock::{named, Lock};
use super::StoreRoot;
use crate::capability::SessionRef;

/// The schema of a journal file.
pub const JOURNAL_SCHEMA: &str = "handoff.journal/1";

/// How many bytes before the old end of an appended file the journal keeps a digest of, to check
/// that an in-place append left what was there alone before cutting it back.
const TAIL: u64 = 64 * 1024;

/// The folder of the journals of `root`.
pub fn dir(root: &StoreRoot) -> PathBuf {
    root.path().join(".handoff").join("journal")
}

/// What a journal says.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    /// Always [`JOURNAL_SCHEMA`].
    pub schema: String,
    /// The process that wrote it (its temp files carry this id).
    pub pid: u32,
    /// When the run began, in milliseconds since the epoch.
    pub started_ms: i64,
    /// The target written.
    pub target: String,
    /// The conversation.
    pub locator: String,
    /// What the run was doing.
    pub op: Op,
}

/// What a run was doing to the store.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Op {
    /// Appending to an existing session.
    Append {
        /// The session.
        session: SessionRef,
        /// Its file's length before.
        len: u64,
        /// Its file's device before.
        dev: u64,
        /// Its file's inode before.
        ino: u64,
        /// The sha256 of the last (up to 64 KiB) bytes before `len`.
        tail_sha256: String,
        /// How the old bytes are kept.
        backup: Backup,
    },
    /// Creating a new session.
    Create {
        /// The session of this conversation that existed before (left alone), if any.
        previous: Option<String>,
        /// The session created, once the plugin returned it.
        created: Option<SessionRef>,
    },
}

/// How an append's old bytes are kept beside the journal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Backup {
    /// A hard link to the old inode (no bytes copied).
    Link,
    /// A full copy (where hard links are not possible).
    Copy,
}

/// What rolling a journal back did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rollback {
    /// An append was cut back to the old length.
    CutBack {
        /// The session file.
        path: PathBuf,
        /// The length it had.
        from: u64,
        /// The length it has again.
        to: u64,
    },
    /// A replaced session got its old file back.
    Restored {
        /// The session file.
        path: PathBuf,
    },
    /// The created session (if any) must be removed by the caller; nothing else was left.
    Create {
        /// The session the journal names, if the plugin had returned it.
        created: Option<SessionRef>,
        /// The session that existed before.
        previous: Option<String>,
    },
}

impl std::fmt::Display for Rollback {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Rollback::CutBack { path, from, to } if from == to => {
                write!(f, "{} was left as it was ({to} bytes)", path.display())
            }
            Rollback::CutBack { path, from, to } => {
                write!(f, "{} cut back from {from} to {to} bytes", path.display())
            }
            Rollback::Restored { path } => {
                write!(f, "{} restored from its old file", path.display())
            }
            Rollback::Create {
                created: Some(s), ..
            } => {
                write!(f, "new session {} ({})", s.id, s.path.display())
            }
            Rollback::Create { created: None, .. } => f.write_str("a session being created"),
        }
    }
}

/// The journal of the running write; see the module documentation.
#[derive(Debug)]
pub struct Journal {
    dir: PathBuf,
    name: String,
    record: Record,
}

impl Journal {
    /// Begins an append to `session` by the run holding the conversation lock `key`: writes the
    /// journal, durably, and keeps the file's old bytes. Returns only when both are on disk.
    pub fn begin_append(
        root: &StoreRoot,
        key: &str,
        target: &str,
        locator: &str,
        session: &SessionRef,
    ) -> io::Result<Journal> {
        Journal::begin_append_keeping(root, key, target, locator, session, true)
    }

    fn begin_append_keeping(
        root: &StoreRoot,
        key: &str,
        target: &str,
        locator: &str,
        session: &SessionRef,
        link: bool,
    ) -> io::Result<Journal> {
        let path = &session.path;
        let meta = std::fs::metadata(path).map_err(|e| named(path, e))?;
        let len = meta.len();
        let tail_sha256 = tail_digest(path, len)?;
        let mut journal = Journal::new(
            root,
            key,
            target,
            locator,
            Op::Append {
                session: session.clone(),
                len,
                dev: meta.dev(),
                ino: meta.ino(),
                tail_sha256,
                backup: Backup::Link,
            },
        )?;
        journal.write()?;
        let backup = journal.backup_path();
        let linked = if link {
            std::fs::hard_link(path, &backup)
        } else {
            Err(io::Error::from(io::ErrorKind::Unsupported))
        };
        let kind = match linked {
            Ok(()) => Backup::Link,
            Err(e) if no_hard_links(&e) => {
                if let Err(e) = copy_durably(path, &backup) {
                    let _ = journal.remove_files();
                    return Err(e);
                }
                Backup::Copy
            }
            Err(e) => {
                let e = io::Error::new(
                    e.kind(),
                    format!(
                        "cannot keep the old bytes of {} as {}: {e}",
                        path.display(),
                        backup.display()
                    ),
                );
                let _ = journal.remove_files();
                return Err(e);
            }
        };
        if kind == Backup::Copy {
            if let Op::Append { backup, .. } = &mut journal.record.op {
                *backup = Backup::Copy;
            }
            journal.write()?;
        }
        sync_dir(&journal.dir)?;
        Ok(journal)
    }

    /// Begins creating a session of `locator` (the session `previous` of it exists and is left
    /// alone): writes the journal, durably.
    pub fn begin_create(
        root: &StoreRoot,
        key: &str,
        target: &str,
        locator: &str,
        previous: Option<&str>,
    ) -> io::Result<Journal> {
        let journal = Journal::new(
            root,
            key,
            target,
            locator,
            Op::Create {
                previous: previous.map(str::to_owned),
                created: None,
            },
        )?;
        journal.write()?;
        Ok(journal)
    }

    fn new(root: &StoreRoot, key: &str, target: &str, locator: &str, op: Op) -> io::Result<Self> {
        let dir = dir(root);
        std::fs::create_dir_all(&dir).map_err(|e| named(&dir, e))?;
        let started_ms = chrono::Utc::now().timestamp_millis();
        let pid = std::process::id();
        let nonce = uuid::Uuid::new_v4().simple().to_string();
        Ok(Journal {
            name: format!("{key}.{started_ms}-{pid}-{}", &nonce[..12]),
            dir,
            record: Record {
                schema: JOURNAL_SCHEMA.to_owned(),
                pid,
                started_ms,
                target: target.to_owned(),
                locator: locator.to_owned(),
                op,
            },
        })
    }

    /// What the journal says.
    pub fn record(&self) -> &Record {
        &self.record
    }

    /// The journal file.
    pub fn path(&self) -> PathBuf {
        self.dir.join(format!("{}.json", self.name))
    }

    fn backup_path(&self) -> PathBuf {
        self.dir.join(format!("{}.orig", self.name))
    }

    /// Records the session a create made, so a rollback removes exactly it.
    pub fn created(&mut self, session: &SessionRef) -> io::Result<()> {
        if let Op::Create { created, .. } = &mut self.record.op {
            *created = Some(session.clone());
        }
        self.write()
    }

    /// The write was verified: deletes the journal (the commit point), then the old bytes. The
    /// session file is synced first, so what was verified is what a crash leaves.
    pub fn commit(self) -> io::Result<()> {
        let session = match &self.record.op {
            Op::Append { session, .. } => Some(session),
            Op::Create { created, .. } => created.as_ref(),
        };
        if let Some(session) = session {
            File::open(&session.path)
                .and_then(|f| f.sync_all())
                .map_err(|e| named(&session.path, e))?;
        }
        self.remove_files()
    }

    /// Undoes the write in this process (a refused or mismatched write): as the next run would.
    /// For a create the caller removes the session it names, then calls [`Journal::discard`].
    pub fn roll_back(self) -> io::Result<Rollback> {
        let done = roll_back_files(&self.dir, &self.name, &self.record)?;
        if !matches!(done, Rollback::Create { .. }) {
            self.remove_files()?;
        }
        Ok(done)
    }

    /// Deletes the journal after the caller undid a create.
    pub fn discard(self) -> io::Result<()> {
        self.remove_files()
    }

    fn write(&self) -> io::Result<()> {
        write_record(&self.dir, &self.name, &self.record)
    }

    fn remove_files(&self) -> io::Result<()> {
        remove_txn(&self.dir, &self.name)
    }
}

/// A hot journal: its run is gone. Hold it (the conversation lock is kept while it lives) and
/// roll it back with [`HotJournal::roll_back`], then [`HotJournal::finish`].
#[derive(Debug)]
pub struct HotJournal {
    dir: PathBuf,
    name: String,
    /// What it says; `None` when the run died before its journal was whole (nothing was written
    /// then, only the journal's own files are left).
    pub record: Option<Record>,
    _lock: Option<Rc<Lock>>,
}

impl HotJournal {
    /// The journal file.
    pub fn path(&self) -> PathBuf {
        self.dir.join(format!("{}.json", self.name))
    }

    /// Rolls the file-level part back (an append is undone; for a create the caller removes the
    /// session) and removes the dead run's temp files from the session's folder.
    pub fn roll_back(&self) -> io::Result<Option<Rollback>> {
        match &self.record {
            None => Ok(None),
            Some(record) => roll_back_files(&self.dir, &self.name, record).map(Some),
        }
    }

    /// Deletes the journal and everything of its run beside it.
    pub fn finish(self) -> io::Result<()> {
        remove_txn(&self.dir, &self.name)
    }
}

/// Every hot journal of `root`, each held: those of conversations nobody holds, and those of
/// `held` (the conversation lock key the caller holds). A journal whose conversation another run
/// holds is that run's to roll back, and is skipped. Creates nothing when there is no journal.
pub fn hot(root: &StoreRoot, held: Option<&str>) -> io::Result<Vec<HotJournal>> {
    let dir = dir(root);
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(named(&dir, e)),
    };
    let mut names: Vec<String> = entries
        .flatten()
        .filter_map(|e| e.file_name().to_str().and_then(txn_of).map(str::to_owned))
        .collect();
    names.sort();
    names.dedup();
    let mut hot = Vec::new();
    let mut locks: Vec<(String, Option<Rc<Lock>>)> = Vec::new();
    for name in names {
        let key = name.split('.').next().unwrap_or_default().to_owned();
        let lock = match locks.iter().find(|(k, _)| *k == key) {
            Some((_, lock)) => lock.clone(),
            None => {
                let lock = if Some(key.as_str()) == held {
                    Some(None)
                } else {
                    take(root, &key)?.map(|l| Some(Rc::new(l)))
                };
                let Some(lock) = lock else {
                    continue; // a live run's: it rolls back its own
                };
                locks.push((key, lock.clone()));
                lock
            }
        };
        // Another run may have rolled it back between the listing and the lock.
        let gone = ["json", "json.tmp", "orig"]
            .iter()
            .all(|ext| !dir.join(format!("{name}.{ext}")).exists());
        if gone {
            continue;
        }
        let record = read_record(&dir.join(format!("{name}.json")))?;
        hot.push(HotJournal {
            dir: dir.clone(),
            name,
            record,
            _lock: lock,
        });
    }
    Ok(hot)
}

/// The conversation lock `key` if nobody holds it (made if its file is missing), else `None`.
fn take(root: &StoreRoot, key: &str) -> io::Result<Option<Lock>> {
    if let Some(lock) = Lock::try_key(root, key)? {
        return Ok(Some(lock));
    }
    let path = Lock::path_of(root, key);
    if path.exists() {
        return Ok(None);
    }
    match Lock::acquire_file(&path, std::time::Duration::ZERO) {
        Ok(lock) => Ok(Some(lock)),
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(None),
        Err(e) => Err(e),
    }
}

/// The run name (`<key>.<txn>`) of a file in the journal folder, if it is one of a run's files.
fn txn_of(file: &str) -> Option<&str> {
    let (key, rest) = file.split_once('.')?;
    if key.len() != 64 || !key.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let txn_len = rest.find('.').unwrap_or(rest.len());
    Some(&file[..key.len() + 1 + txn_len])
}

/// The journal at `path`, or `None` if it is missing or was never whole (a half-written journal
/// is only ever the `.json.tmp` file; the `.json` appears by rename).
fn read_record(path: &Path) -> io::Result<Option<Record>> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(named(path, e)),
    };
    let record: Record = serde_json::from_slice(&bytes).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{}: not a journal this host can read: {e}", path.display()),
        )
    })?;
    if record.schema != JOURNAL_SCHEMA {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "{}: journal schema {:?}; this host reads {JOURNAL_SCHEMA:?}",
                path.display(),
                record.schema
            ),
        ));
    }
    Ok(Some(record))
}

fn write_record(dir: &Path, name: &str, record: &Record) -> io::Result<()> {
    let path = dir.join(format!("{name}.json"));
    let temp = dir.join(format!("{name}.json.tmp"));
    let json = serde_json::to_vec_pretty(record).map_err(io::Error::other)?;
    let written = (|| {
        let mut file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&temp)?;
        file.write_all(&json)?;
        file.write_all(b"\n")?;
        file.sync_all()?;
        std::fs::rename(&temp, &path)?;
        sync_dir(dir)
    })();
    written.map_err(|e| {
        let _ = std::fs::remove_file(&temp);
        named(&path, e)
    })
}

/// Removes every file of run `name`: the journal first (the commit point), then the rest.
fn remove_txn(dir: &Path, name: &str) -> io::Result<()> {
    let journal = dir.join(format!("{name}.json"));
    remove_if_present(&journal)?;
    let entries = std::fs::read_dir(dir).map_err(|e| named(dir, e))?;
    for entry in entries.flatten() {
        let file = entry.file_name();
        if file.to_str().and_then(txn_of) == Some(name) {
            remove_if_present(&entry.path())?;
        }
    }
    sync_dir(dir)
}

fn remove_if_present(path: &Path) -> io::Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(named(path, e)),
        _ => Ok(()),
    }
}

/// Undoes what `record` says was begun (file level), and removes the run's temp files from the
/// session's folder.
fn roll_back_files(dir: &Path, name: &str, record: &Record) -> io::Result<Rollback> {
    match &record.op {
        Op::Append {
            session,
            len,
            dev,
            ino,
            tail_sha256,
            backup,
        } => {
            let backup_path = dir.join(format!("{name}.orig"));
            let done = restore(
                &session.path,
                *len,
                (*dev, *ino),
                tail_sha256,
                *backup,
                &backup_path,
            )?;
            remove_temps_in(session.path.parent(), record.pid)?;
            Ok(done)
        }
        Op::Create { created, previous } => {
            if let Some(created) = created {
                remove_temps_in(created.path.parent(), record.pid)?;
            }
            Ok(Rollback::Create {
                created: created.clone(),
                previous: previous.clone(),
            })
        }
    }
}

/// Puts the old bytes of an appended file back: cut back in place (same inode, the old bytes
/// checked by their tail digest), or the old inode renamed back over a replacement.
fn restore(
    path: &Path,
    len: u64,
    identity: (u64, u64),
    tail_sha256: &str,
    backup: Backup,
    backup_path: &Path,
) -> io::Result<Rollback> {
    let current = match std::fs::metadata(path) {
        Ok(meta) => Some(meta),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(named(path, e)),
    };
    let in_place = current
        .as_ref()
        .is_some_and(|m| (m.dev(), m.ino()) == identity);
    if let (true, Some(meta)) = (in_place, &current) {
        let from = meta.len();
        if from >= len && tail_digest(path, len)? == tail_sha256 {
            if from > len {
                let file = OpenOptions::new()
                    .write(true)
                    .open(path)
                    .map_err(|e| named(path, e))?;
                file.set_len(len).map_err(|e| named(path, e))?;
                file.sync_all().map_err(|e| named(path, e))?;
            }
            return Ok(Rollback::CutBack {
                path: path.to_owned(),
                from,
                to: len,
            });
        }
        if backup == Backup::Link {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{}: cannot undo the interrupted append: the file's first {len} bytes were changed in place (it is {from} bytes now); its journal is kept in {}",
                    path.display(),
                    backup_path.parent().unwrap_or(backup_path).display()
                ),
            ));
        }
    }
    match std::fs::metadata(backup_path) {
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!(
                    "{}: cannot undo the interrupted append: the file was replaced and its old bytes ({}) are missing",
                    path.display(),
                    backup_path.display()
                ),
            ))
        }
        Err(e) => return Err(named(backup_path, e)),
    }
    std::fs::rename(backup_path, path).map_err(|e| named(path, e))?;
    super::atomic::sync_parent(path).map_err(|e| named(path, e))?;
    Ok(Rollback::Restored {
        path: path.to_owned(),
    })
}

/// The sha256 of the (up to [`TAIL`]) bytes of `path` before offset `len`.
fn tail_digest(path: &Path, len: u64) -> io::Result<String> {
    let start = len.saturating_sub(TAIL);
    let mut file = File::open(path).map_err(|e| named(path, e))?;
    file.seek(SeekFrom::Start(start))
        .map_err(|e| named(path, e))?;
    let mut bytes = Vec::with_capacity((len - start) as usize);
    (&mut file)
        .take(len - start)
        .read_to_end(&mut bytes)
        .map_err(|e| named(path, e))?;
    if (bytes.len() as u64) < len - start {
        return Ok(String::from("short"));
    }
    Ok(hex::encode(Sha256::digest(&bytes)))
}

fn no_hard_links(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::CrossesDevices
            | io::ErrorKind::Unsupported
            | io::ErrorKind::PermissionDenied
    ) || e.raw_os_error() == Some(1) // EPERM: a file system without hard links
}

/// Copies `from` to `to` and syncs it; on failure (a full disk) removes the partial copy and says
/// which file it was.
fn copy_durably(from: &Path, to: &Path) -> io::Result<()> {
    let copied = std::fs::copy(from, to).and_then(|_| File::open(to)?.sync_all());
    copied.map_err(|e| {
        let _ = std::fs::remove_file(to);
        io::Error::new(
            e.kind(),
            format!(
                "cannot keep the old bytes of {} as {}: {e}",
                from.display(),
                to.display()
            ),
        )
    })
}

fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| named(dir, e))
}

/// Removes the temp files process `pid` left in `dir` (not in its subfolders). Returns how many.
pub fn remove_temps_in(dir: Option<&Path>, pid: u32) -> io::Result<usize> {
    let Some(dir) = dir else { return Ok(0) };
    let prefix = super::atomic::temp_prefix(pid);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn setup() -> (tempfile::TempDir, StoreRoot, SessionRef) {
        let tmp = tempfile::tempdir().unwrap();
        let root = StoreRoot::new(tmp.path().join("store")).unwrap();
        let path = root.path().join("sessions/s.jsonl");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, b"one\ntwo\n").unwrap();
        let session = SessionRef {
            target: "t".into(),
            id: "s".into(),
            path,
        };
        (tmp, root, session)
    }

    fn key() -> String {
        Lock::key("conversation")
    }

    #[test]
    fn an_in_place_append_is_cut_back_by_the_next_run() {
        let (_tmp, root, session) = setup();
        let journal = Journal::begin_append(&root, &key(), "t", "c", &session).unwrap();
        assert!(journal.path().is_file());
        std::mem::forget(journal); // the run is killed
        let mut file = OpenOptions::new().append(true).open(&session.path).unwrap();
        file.write_all(b"three\n{\"torn").unwrap();
        let temp = session.path.with_file_name(format!(
            "{}abc",
            super::super::atomic::temp_prefix(std::process::id())
        ));
        std::fs::write(&temp, b"half").unwrap();

        let hot = hot(&root, None).unwrap();
        assert_eq!(hot.len(), 1);
        let done = hot[0].roll_back().unwrap().unwrap();
        assert_eq!(
            done,
            Rollback::CutBack {
                path: session.path.clone(),
                from: 20,
                to: 8
            }
        );
        for h in hot {
            h.finish().unwrap();
        }
        assert_eq!(std::fs::read(&session.path).unwrap(), b"one\ntwo\n");
        assert!(!temp.exists());
        assert_eq!(std::fs::read_dir(dir(&root)).unwrap().count(), 0);
    }

    #[test]
    fn a_replaced_file_gets_its_old_inode_back() {
        let (_tmp, root, session) = setup();
        let journal = Journal::begin_append(&root, &key(), "t", "c", &session).unwrap();
        super::super::atomic::replace(&session.path, |w| w.write_all(b"other\n")).unwrap();
        let done = journal.roll_back().unwrap();
        assert_eq!(
            done,
            Rollback::Restored {
                path: session.path.clone()
            }
        );
        assert_eq!(std::fs::read(&session.path).unwrap(), b"one\ntwo\n");
        assert_eq!(std::fs::read_dir(dir(&root)).unwrap().count(), 0);
    }

    #[test]
    fn a_live_runs_journal_is_not_hot_and_a_commit_leaves_nothing() {
        let (_tmp, root, session) = setup();
        let lock = Lock::acquire(&root, "conversation", Default::default()).unwrap();
        let journal = Journal::begin_append(&root, &key(), "t", "c", &session).unwrap();
        assert!(hot(&root, None).unwrap().is_empty(), "its lock is held");
        assert_eq!(hot(&root, Some(&key())).unwrap().len(), 1, "held by me");
        std::fs::OpenOptions::new()
            .append(true)
            .open(&session.path)
            .unwrap()
            .write_all(b"three\n")
            .unwrap();
        journal.commit().unwrap();
        drop(lock);
        assert!(hot(&root, None).unwrap().is_empty());
        assert_eq!(std::fs::read_dir(dir(&root)).unwrap().count(), 0);
        assert_eq!(std::fs::read(&session.path).unwrap(), b"one\ntwo\nthree\n");
    }

    #[test]
    fn without_hard_links_a_copy_restores_even_a_file_changed_in_place() {
        let (_tmp, root, session) = setup();
        let journal =
            Journal::begin_append_keeping(&root, &key(), "t", "c", &session, false).unwrap();
        assert!(matches!(
            journal.record().op,
            Op::Append {
                backup: Backup::Copy,
                ..
            }
        ));
        let file = OpenOptions::new().write(true).open(&session.path).unwrap();
        std::os::unix::fs::FileExt::write_at(&file, b"ONE\ntwo\nthree\n", 0).unwrap();
        std::mem::forget(journal);
        let hot = hot(&root, None).unwrap();
        let done = hot[0].roll_back().unwrap().unwrap();
        assert!(matches!(done, Rollback::Restored { .. }), "{done:?}");
        for h in hot {
            h.finish().unwrap();
        }
        assert_eq!(std::fs::read(&session.path).unwrap(), b"one\ntwo\n");
        assert_eq!(std::fs::read_dir(dir(&root)).unwrap().count(), 0);
    }

    #[test]
    fn a_failed_copy_leaves_nothing_and_names_both_files() {
        let (tmp, _root, session) = setup();
        let to = tmp.path().join("missing-folder/copy");
        let err = copy_durably(&session.path, &to).unwrap_err();
        assert!(err.to_string().contains("s.jsonl"), "{err}");
        assert!(err.to_string().contains("missing-folder/copy"), "{err}");
        assert!(!to.exists());
    }

    #[test]
    fn a_file_changed_in_place_is_not_cut_back_blindly() {
        let (_tmp, root, session) = setup();
        let journal = Journal::begin_append(&root, &key(), "t", "c", &session).unwrap();
        std::mem::forget(journal);
        let file = OpenOptions::new().write(true).open(&session.path).unwrap();
        std::os::unix::fs::FileExt::write_at(&file, b"ONE\ntwo\nthree\n", 0).unwrap();
        let hot = hot(&root, None).unwrap();
        let err = hot[0].roll_back().unwrap_err();
        assert!(err.to_string().contains("changed in place"), "{err}");
        assert!(err.to_string().contains("s.jsonl"), "{err}");
        assert_eq!(
            std::fs::read(&session.path).unwrap(),
            b"ONE\ntwo\nthree\n",
            "left alone"
        );
    }

    #[test]
    fn a_create_journal_names_what_was_made_and_a_half_written_journal_is_cleared() {
        let (_tmp, root, session) = setup();
        let mut journal = Journal::begin_create(&root, &key(), "t", "c", Some("old")).unwrap();
        journal.created(&session).unwrap();
        std::mem::forget(journal);
        std::fs::write(
            dir(&root).join(format!("{}.1-2-x.json.tmp", Lock::key("other"))),
            b"{\"sch",
        )
        .unwrap();
        let hot = hot(&root, None).unwrap();
        assert_eq!(hot.len(), 2);
        let rollbacks: Vec<_> = hot.iter().map(|h| h.roll_back().unwrap()).collect();
        assert!(rollbacks.contains(&None));
        assert!(rollbacks.contains(&Some(Rollback::Create {
            created: Some(session.clone()),
            previous: Some("old".into())
        })));
        for h in hot {
            h.finish().unwrap();
        }
        assert_eq!(std::fs::read_dir(dir(&root)).unwrap().count(), 0);
    }

    #[test]
    fn temps_of_a_dead_run_are_found_anywhere_in_the_store() {
        let (_tmp, root, _session) = setup();
        let deep = root.path().join("a/b/c");
        std::fs::create_dir_all(&deep).unwrap();
        let prefix = super::super::atomic::temp_prefix(4_000_001);
        std::fs::write(deep.join(format!("{prefix}x")), b"").unwrap();
        std::fs::write(deep.join(".handoff-tmp-4000002-x"), b"").unwrap();
        assert_eq!(remove_temps_under(&root, 4_000_001).unwrap(), 1);
        assert_eq!(std::fs::read_dir(&deep).unwrap().count(), 1);
    }
}
