//! A source file handed to its reader as a file already written ([`ReadFrom::Written`] whose
//! writer is done): a reader that reads a growing file in one pass (Claude Code's, which makes
//! each record's events from the line its index pass just read, and checks once the file is
//! whole that this was Claude Code's order) reads the source so, instead of in two passes.
//!
//! [`ReadFrom::Written`]: handoff_capability::ReadFrom::Written

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use super::written::reopen;
use handoff_capability::{Growth, WrittenFile};

/// The file at a path as it was when it was opened: every read opens that same file (wherever it
/// is renamed meanwhile) and ends at the length it had then, so a CLI appending to it or
/// replacing it while it is read cannot give one read two files.
pub(super) struct WholeFile {
    file: File,
    path: PathBuf,
    len: u64,
}

impl WholeFile {
    pub(super) fn open(path: &Path) -> io::Result<Self> {
        let file = File::open(path)?;
        let len = file.metadata()?.len();
        Ok(WholeFile {
            file,
            path: path.to_owned(),
            len,
        })
    }
}

impl WrittenFile for WholeFile {
    fn open(&self) -> io::Result<File> {
        // Where the file cannot be followed (no `/proc`), its path is the next best.
        reopen(&self.file).or_else(|_| File::open(&self.path))
    }

    fn name(&self) -> &Path {
        &self.path
    }

    fn wait_past(&self, _len: u64) -> Growth {
        Growth::Whole(self.len)
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};

    use handoff_capability::GrowingRead;

    use super::*;

    #[test]
    fn a_read_ends_where_the_file_ended_when_it_was_opened_and_follows_it_when_renamed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, b"one\ntwo\n").unwrap();
        let whole = WholeFile::open(&path).unwrap();
        // Appended and renamed after it was opened: neither reaches the read.
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"three\n")
            .unwrap();
        let moved = dir.path().join("moved.jsonl");
        std::fs::rename(&path, &moved).unwrap();
        std::fs::write(&path, b"another file\n").unwrap();
        let mut read = Vec::new();
        GrowingRead::open(&whole)
            .unwrap()
            .read_to_end(&mut read)
            .unwrap();
        assert_eq!(read, b"one\ntwo\n");
        assert_eq!(whole.name(), path);
    }
}
