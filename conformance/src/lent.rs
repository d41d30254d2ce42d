//! A finished file lent as if its writer were still writing it: what a reader's
//! [`handoff_host::Reader::read_written_each`] is checked with (and what a plugin's own tests
//! can check theirs with).

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use handoff_capability::{Growth, WrittenFile};

/// The file at `path`, its length lent `step` bytes at a time, then whole; or abandoned once
/// the growth would reach `abandon_at`.
pub struct LentInSteps {
    path: PathBuf,
    len: u64,
    step: u64,
    abandon_at: Option<u64>,
    waits: AtomicUsize,
}

impl LentInSteps {
    /// The file at `path`, lent `step` bytes at a time.
    pub fn new(path: &Path, step: u64) -> std::io::Result<Self> {
        Ok(LentInSteps {
            path: path.to_owned(),
            len: std::fs::metadata(path)?.len(),
            step: step.max(1),
            abandon_at: None,
            waits: AtomicUsize::new(0),
        })
    }

    /// The same, abandoned by its writer once the growth would reach `at` bytes.
    pub fn abandoned_at(mut self, at: u64) -> Self {
        self.abandon_at = Some(at);
        self
    }

    /// How many times a reader waited for growth.
    pub fn waits(&self) -> usize {
        self.waits.load(Ordering::Relaxed)
    }
}

impl WrittenFile for LentInSteps {
    fn open(&self) -> std::io::Result<File> {
        File::open(&self.path)
    }

    fn name(&self) -> &Path {
        &self.path
    }

    fn wait_past(&self, len: u64) -> Growth {
        self.waits.fetch_add(1, Ordering::Relaxed);
        let next = len.saturating_add(self.step);
        match self.abandon_at {
            Some(at) if next >= at => Growth::Abandoned,
            _ if next >= self.len => Growth::Whole(self.len),
            _ => Growth::Grown(next),
        }
    }
}
