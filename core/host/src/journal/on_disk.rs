//! A journal's files in the journal folder: the sealed record, and the run's other files.
//!
//! A record is sealed ([`crate::seal`]) over the store root it belongs to, the run's name
//! (which carries the conversation lock's key) and the record itself: a journal that was planted,
//! edited, renamed to another conversation or copied from another store root does not verify, and
//! is never acted on.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::{Record, JOURNAL_SCHEMA};
use crate::seal::{Purpose, Seal, SealedRecord};
use handoff_store::lock::named;
use handoff_store::StoreRoot;

/// Journals never get this large; a larger file is refused unread.
const MAX_RECORD: u64 = 1 << 20;

/// The store root as its seal names it: resolved, so two spellings of one folder agree.
pub(super) fn root_id(root: &StoreRoot) -> PathBuf {
    std::fs::canonicalize(root.path()).unwrap_or_else(|_| root.path().to_owned())
}

/// The run name (`<key>.<txn>`) of a file in the journal folder, if it is one of a run's files.
pub(super) fn txn_of(file: &str) -> Option<&str> {
    let (key, rest) = file.split_once('.')?;
    if key.len() != 64 || !key.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let txn_len = rest.find('.').unwrap_or(rest.len());
    Some(&file[..key.len() + 1 + txn_len])
}

/// What the journal file of run `name` holds.
pub enum Verdict {
    /// No journal file: the run died before its journal was whole (a half-written journal is only
    /// ever the `.json.tmp` file; the `.json` appears by rename).
    Missing,
    /// A journal this user's handoff wrote for this store root and run.
    Sealed(Box<Record>),
    /// A file that is not a journal handoff can prove it wrote: why.
    Untrusted(String),
}

/// Reads and verifies the journal of run `name` in `dir`, which belongs to the store root `root`.
pub(super) fn read_record(seal: &Seal, root: &Path, dir: &Path, name: &str) -> io::Result<Verdict> {
    let path = dir.join(format!("{name}.json"));
    let meta = match std::fs::symlink_metadata(&path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Verdict::Missing),
        Err(e) => return Err(named(&path, e)),
    };
    if !meta.is_file() {
        return Ok(Verdict::Untrusted("not a regular file".into()));
    }
    if meta.len() > MAX_RECORD {
        return Ok(Verdict::Untrusted(format!(
            "{} bytes: larger than any journal",
            meta.len()
        )));
    }
    let bytes = std::fs::read(&path).map_err(|e| named(&path, e))?;
    Ok(verify(seal, root, name, &bytes))
}

/// The verdict on the bytes of the journal of run `name` of store root `root`.
pub fn verify(seal: &Seal, root: &Path, name: &str, bytes: &[u8]) -> Verdict {
    let record: Record = match serde_json::from_slice(bytes) {
        Ok(record) => record,
        Err(e) => return Verdict::Untrusted(format!("not a journal: {e}")),
    };
    if record.schema != JOURNAL_SCHEMA {
        return Verdict::Untrusted(format!(
            "journal schema {:?}, this host reads {JOURNAL_SCHEMA:?} (an older handoff's journal, or not handoff's)",
            record.schema
        ));
    }
    if record.seal.is_empty() {
        return Verdict::Untrusted("it carries no seal".into());
    }
    if !seal.verifies_record(root, name, &record) {
        return Verdict::Untrusted(
            "its seal does not verify under this user's key: not written by this user's handoff for this store root and run (planted, edited, moved, or made with another key)".into(),
        );
    }
    Verdict::Sealed(Box::new(record))
}

impl SealedRecord for Record {
    const PURPOSE: Purpose = Purpose::Journal;

    fn seal_mut(&mut self) -> &mut String {
        &mut self.seal
    }
}

/// Seals `record` and writes it as the journal of run `name`, durably (temp file, sync, rename).
pub(super) fn write_record(
    seal: &Seal,
    root: &Path,
    dir: &Path,
    name: &str,
    record: &mut Record,
) -> io::Result<()> {
    seal.seal_record(root, name, record)?;
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

/// Removes every file of run `name`: the journal first (the commit point), then the rest. Only
/// names in the journal folder are unlinked: a planted link there loses its name, never its
/// target.
pub(super) fn remove_txn(dir: &Path, name: &str) -> io::Result<()> {
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

pub(super) fn remove_if_present(path: &Path) -> io::Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(named(path, e)),
        _ => Ok(()),
    }
}

pub(super) fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| named(dir, e))
}
