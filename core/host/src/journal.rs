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
//!   ([`handoff_store::atomic::append`]) or replaces the file by a rename ([`handoff_store::atomic::replace`]): an
//!   in-place append is undone by cutting the file back to its old length, a replacement by renaming
//!   the old inode back. Nothing is copied, so a backup never fills a disk.
//! - A **create** records the conversation and, once the plugin returns, the new session; rolling it
//!   back removes that session (through the plugin, see `continuation::recover`).
//! - Temp files of the dead run (`.handoff-tmp-<pid>-…`, see [`handoff_store::atomic::temp_prefix`]) are
//!   removed from the session's folder, or from the whole store when the new session's folder is
//!   not known.
//!
//! A journal is named `<key>.<txn>` where `<key>` is the key of the conversation lock its run held
//! ([`handoff_store::lock::Lock::key`]). That lock is the liveness test: a journal is hot exactly when its
//! conversation lock is free (or held by the caller, which is about to write that conversation).
//!
//! **A journal is trusted only if it is sealed** ([`crate::seal`]) by this user's key for this
//! store root and run. The journal folder is inside the store root, where anyone who can write the
//! folder (a downloaded session folder, a shared store) can plant files: a journal that does not
//! verify is ignored, named in a warning, and left where it is. Even a sealed journal is acted on
//! only inside its store root (links resolved) and on files whose identity and bytes are the ones
//! it recorded (`rollback`).

mod on_disk;
mod rollback;

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use serde::{Deserialize, Serialize};

use handoff_store::lock::{named, Lock};
use handoff_store::StoreRoot;

use crate::seal::Seal;
use handoff_capability::SessionRef;
use on_disk::{read_record, remove_txn, sync_dir, txn_of, write_record};
pub use on_disk::{verify, Verdict};
pub use rollback::{remove_temps_in, remove_temps_under, resolve_inside};

/// The schema of a journal file. `/1` journals carried no seal; this host ignores them.
pub const JOURNAL_SCHEMA: &str = "handoff.journal/2";

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
    /// The seal over the store root, the run's name and the rest of this record
    /// (`on_disk`); empty while it is computed.
    #[serde(default)]
    pub seal: String,
}

/// A file's identity: its device and inode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileId {
    /// The device.
    pub dev: u64,
    /// The inode.
    pub ino: u64,
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
        /// The identity of its file then: a rollback removes that file and no other.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        created_file: Option<FileId>,
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

/// The conversation a run journals its writes for.
#[derive(Clone, Copy)]
pub struct Conversation<'a> {
    /// The store root written.
    pub root: &'a StoreRoot,
    /// The key that seals the journal.
    pub seal: &'a Seal,
    /// The key of the conversation lock the run holds.
    pub key: &'a str,
    /// The target written.
    pub target: &'a str,
    /// The conversation.
    pub locator: &'a str,
}

/// The journal of the running write; see the module documentation.
#[derive(Debug)]
pub struct Journal {
    dir: PathBuf,
    /// The store root resolved: what the seal names and what a rollback stays inside.
    root: PathBuf,
    seal: Seal,
    name: String,
    record: Record,
}

impl Journal {
    /// Begins an append to `session`: writes the journal, durably, and keeps the file's old bytes.
    /// Returns only when both are on disk.
    pub fn begin_append(of: Conversation<'_>, session: &SessionRef) -> io::Result<Journal> {
        Journal::begin_append_keeping(of, session, true)
    }

    fn begin_append_keeping(
        of: Conversation<'_>,
        session: &SessionRef,
        link: bool,
    ) -> io::Result<Journal> {
        let path = &session.path;
        let mut file = File::open(path).map_err(|e| named(path, e))?;
        let meta = file.metadata().map_err(|e| named(path, e))?;
        let len = meta.len();
        let tail_sha256 = rollback::tail_digest(&mut file, len).map_err(|e| named(path, e))?;
        let id = FileId::of(&meta);
        let mut journal = Journal::new(
            of,
            Op::Append {
                session: session.clone(),
                len,
                dev: id.dev,
                ino: id.ino,
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

    /// Begins creating a session of the conversation (the session `previous` of it exists and is
    /// left alone): writes the journal, durably.
    pub fn begin_create(of: Conversation<'_>, previous: Option<&str>) -> io::Result<Journal> {
        let mut journal = Journal::new(
            of,
            Op::Create {
                previous: previous.map(str::to_owned),
                created: None,
                created_file: None,
            },
        )?;
        journal.write()?;
        Ok(journal)
    }

    fn new(of: Conversation<'_>, op: Op) -> io::Result<Self> {
        let dir = dir(of.root);
        std::fs::create_dir_all(&dir).map_err(|e| named(&dir, e))?;
        let started_ms = chrono::Utc::now().timestamp_millis();
        let pid = std::process::id();
        let nonce = uuid::Uuid::new_v4().simple().to_string();
        Ok(Journal {
            name: format!("{}.{started_ms}-{pid}-{}", of.key, &nonce[..12]),
            dir,
            root: on_disk::root_id(of.root),
            seal: of.seal.clone(),
            record: Record {
                schema: JOURNAL_SCHEMA.to_owned(),
                pid,
                started_ms,
                target: of.target.to_owned(),
                locator: of.locator.to_owned(),
                op,
                seal: String::new(),
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

    /// Records the session a create made, and its file's identity, so a rollback removes exactly
    /// that file.
    pub fn created(&mut self, session: &SessionRef) -> io::Result<()> {
        let file = std::fs::symlink_metadata(&session.path)
            .ok()
            .filter(|m| m.is_file())
            .map(|m| FileId::of(&m));
        if let Op::Create {
            created,
            created_file,
            ..
        } = &mut self.record.op
        {
            *created = Some(session.clone());
            *created_file = file;
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
        let done = rollback::roll_back_files(&self.root, &self.dir, &self.name, &self.record)?;
        if !matches!(done, Rollback::Create { .. }) {
            self.remove_files()?;
        }
        Ok(done)
    }

    /// Deletes the journal after the caller undid a create.
    pub fn discard(self) -> io::Result<()> {
        self.remove_files()
    }

    fn write(&mut self) -> io::Result<()> {
        write_record(
            &self.seal,
            &self.root,
            &self.dir,
            &self.name,
            &mut self.record,
        )
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
    /// The store root resolved.
    root: PathBuf,
    name: String,
    /// What it says (sealed); `None` when the run died before its journal was whole (nothing was
    /// written then, only the journal's own files are left).
    pub record: Option<Record>,
    _lock: Option<Rc<Lock>>,
}

impl HotJournal {
    /// The journal file.
    pub fn path(&self) -> PathBuf {
        self.dir.join(format!("{}.json", self.name))
    }

    /// The store root it belongs to, resolved: nothing outside it is touched.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Rolls the file-level part back (an append is undone; for a create the caller removes the
    /// session) and removes the dead run's temp files from the session's folder.
    pub fn roll_back(&self) -> io::Result<Option<Rollback>> {
        match &self.record {
            None => Ok(None),
            Some(record) => {
                rollback::roll_back_files(&self.root, &self.dir, &self.name, record).map(Some)
            }
        }
    }

    /// Deletes the journal and everything of its run beside it.
    pub fn finish(self) -> io::Result<()> {
        remove_txn(&self.dir, &self.name)
    }
}

/// A file in the journal folder that handoff cannot prove it wrote: left alone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ignored {
    /// The file.
    pub path: PathBuf,
    /// Why it is not trusted.
    pub reason: String,
}

/// The journals of a store root that a run may act on, and those it must leave alone.
#[derive(Debug, Default)]
pub struct Hot {
    /// Sealed journals of runs that are gone, each held.
    pub journals: Vec<HotJournal>,
    /// Journals that do not verify under this user's key: never acted on.
    pub ignored: Vec<Ignored>,
}

/// Every hot journal of `root`, each held: those of conversations nobody holds, and those of
/// `held` (the conversation lock key the caller holds). A journal whose conversation another run
/// holds is that run's to roll back, and is skipped; one that is not sealed by `seal` for this
/// root and run is [`Ignored`]. Creates nothing when there is no journal.
pub fn hot(root: &StoreRoot, seal: &Seal, held: Option<&str>) -> io::Result<Hot> {
    let dir = dir(root);
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Hot::default()),
        Err(e) => return Err(named(&dir, e)),
    };
    let mut names: Vec<String> = entries
        .flatten()
        .filter_map(|e| e.file_name().to_str().and_then(txn_of).map(str::to_owned))
        .collect();
    names.sort();
    names.dedup();
    let root_id = on_disk::root_id(root);
    let mut found = Hot::default();
    // A journal folder that leads out of the store root (a planted link) is not handoff's.
    if !std::fs::canonicalize(&dir).is_ok_and(|d| d.starts_with(&root_id)) {
        found.ignored.push(Ignored {
            path: dir,
            reason: "the journal folder leads out of the store root".into(),
        });
        return Ok(found);
    }
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
        let record = match read_record(seal, &root_id, &dir, &name)? {
            Verdict::Missing => None,
            Verdict::Sealed(record) => Some(*record),
            Verdict::Untrusted(reason) => {
                found.ignored.push(Ignored {
                    path: dir.join(format!("{name}.json")),
                    reason,
                });
                continue;
            }
        };
        found.journals.push(HotJournal {
            dir: dir.clone(),
            root: root_id.clone(),
            name,
            record,
            _lock: lock,
        });
    }
    Ok(found)
}

/// The journal files in `root`'s journal folder, read for nothing: what a read-only command names
/// in a warning (a run is writing there, or was interrupted and the next write rolls it back).
pub fn pending(root: &StoreRoot) -> Vec<PathBuf> {
    let dir = dir(root);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.extension().is_some_and(|e| e == "json")
                && p.file_name()
                    .and_then(|n| n.to_str())
                    .and_then(txn_of)
                    .is_some()
        })
        .collect();
    files.sort();
    files
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

#[cfg(test)]
mod tests;
