//! What the last reads of whole sessions found that a resume plan needs: the header's id and
//! working directory and the model of the path, each for the file exactly as it was read.
//!
//! A continuation into pi reads the new session back whole (its verify) and then asks for the
//! plan, which must name the session's model and must be made only for a session this reader
//! accepts. Reading the file a third time for that was about a third of a 2 GB continuation's
//! time; the verify's read already found all of it. So a read that reached the end of a session
//! remembers what it found, keyed by the file's identity and version when the read began (its
//! length, modification and change times, device and inode, and a digest of its first and last
//! 64 KiB), and the plan takes it when the file is still that version; any other plan (another
//! file, a file written since) reads the session as before. A few files are remembered, the
//! newest first: a few strings each.
//!
//! The times are the kernel's coarse clock (a few milliseconds): a rewrite to the same length
//! within that tick, changing neither the header nor the last 64 KiB, would go unseen. pi and
//! this plugin only append (which changes the length) or write a new file (a new inode).

use std::fs::File;
use std::hash::Hasher;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

/// What a plan needs of a session the reader accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Accepted {
    /// The session id the header names.
    pub id: String,
    /// The working directory the header names.
    pub cwd: Option<String>,
    /// The provider and model of the last entry on the path that names one.
    pub model: Option<(String, String)>,
}

/// A file as it is now: a write to it changes its length or its times (the change time cannot
/// be set back by a writer), a replacement its inode.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Version {
    path: PathBuf,
    len: u64,
    modified: Option<SystemTime>,
    #[cfg(unix)]
    inode: (u64, u64, i64, i64),
    /// A digest of the first and last [`ENDS`] bytes.
    ends: u64,
}

/// How much of each end of the file [`Version`] digests.
const ENDS: u64 = 64 << 10;

/// A digest of the first and last `ENDS` bytes of `file` (of `len` bytes).
fn ends(file: &mut File, len: u64) -> std::io::Result<u64> {
    let mut hasher = std::hash::DefaultHasher::new();
    let mut buffer = Vec::with_capacity(ENDS as usize);
    file.by_ref().take(ENDS).read_to_end(&mut buffer)?;
    hasher.write(&buffer);
    if len > ENDS {
        buffer.clear();
        file.seek(SeekFrom::Start(len.saturating_sub(ENDS).max(ENDS)))?;
        file.by_ref().take(ENDS).read_to_end(&mut buffer)?;
        hasher.write(&buffer);
    }
    Ok(hasher.finish())
}

impl Version {
    /// The version of `path` now; `None` when its metadata cannot be read (nothing is
    /// remembered then).
    pub fn of(path: &Path) -> Option<Version> {
        let mut file = File::open(path).ok()?;
        let meta = file.metadata().ok()?;
        let ends = ends(&mut file, meta.len()).ok()?;
        #[cfg(unix)]
        let inode = {
            use std::os::unix::fs::MetadataExt;
            (meta.dev(), meta.ino(), meta.ctime(), meta.ctime_nsec())
        };
        Some(Version {
            path: path.to_owned(),
            len: meta.len(),
            modified: meta.modified().ok(),
            #[cfg(unix)]
            inode,
            ends,
        })
    }
}

/// How many files are remembered.
const KEPT: usize = 4;

static REMEMBERED: Mutex<Vec<(Version, Accepted)>> = Mutex::new(Vec::new());

/// Remembers what a read of the whole file found, for the file's `version` when it began.
pub fn remember(version: Version, accepted: Accepted) {
    let mut remembered = REMEMBERED.lock().unwrap_or_else(|e| e.into_inner());
    remembered.retain(|(v, _)| v.path != version.path);
    remembered.insert(0, (version, accepted));
    remembered.truncate(KEPT);
}

/// What a read of `path` found, if the file is still the version that read saw.
pub fn recall(path: &Path) -> Option<Accepted> {
    let now = Version::of(path)?;
    let remembered = REMEMBERED.lock().unwrap_or_else(|e| e.into_inner());
    remembered
        .iter()
        .find(|(v, _)| *v == now)
        .map(|(_, accepted)| accepted.clone())
}
