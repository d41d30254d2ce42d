//! Whole-or-nothing file writes.

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::Path;

use super::tap::WriteTap;

/// Every temp file a write makes starts with this, then the writing process's id and a dash
/// (`.handoff-tmp-<pid>-XXXXXX`), so what a killed writer leaves can be told apart from a live
/// writer's and removed (see the host's journal).
pub const TEMP_PREFIX: &str = ".handoff-tmp-";

/// The temp-file prefix of process `pid`: `.handoff-tmp-<pid>-`.
pub fn temp_prefix(pid: u32) -> String {
    format!("{TEMP_PREFIX}{pid}-")
}

/// Creates `path`, which must not exist, with the bytes `write` produces: they go to a temp file in
/// the same directory, which is synced and then renamed into place without replacing anything, and
/// the directory is synced. On any error nothing is left behind. Inside [`super::tap::watched`]
/// its temp file is reported to the tap as it is written.
pub fn create_new(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    let temp = match super::tap::take() {
        Some(mut tap) => {
            let temp = write_temp(path, Some(&mut *tap), None, write);
            tap.ended(temp.is_ok());
            temp?
        }
        None => write_temp(path, None, None, write)?,
    };
    temp.persist_noclobber(path).map_err(|e| e.error)?;
    sync_parent(path)
}

/// Replaces `path` (or creates it) atomically with the bytes `write` produces. The new file keeps
/// the mode of the file it replaces and, where this process may give them, its owner and group,
/// as an in-place append would: a rename must not widen, narrow or re-own what someone set.
pub fn replace(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    let old = std::fs::symlink_metadata(path)
        .ok()
        .filter(|meta| meta.is_file());
    let temp = write_temp(path, None, old.as_ref(), write)?;
    temp.persist(path).map_err(|e| e.error)?;
    sync_parent(path)
}

fn write_temp(
    path: &Path,
    mut tap: Option<&mut dyn WriteTap>,
    like: Option<&std::fs::Metadata>,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<tempfile::NamedTempFile> {
    let dir = parent_dir(path)?;
    let temp = tempfile::Builder::new()
        .prefix(&temp_prefix(std::process::id()))
        .tempfile_in(dir)?;
    if let Some(old) = like {
        keep_mode_and_owner(temp.as_file(), old)?;
    }
    if let Some(tap) = tap.as_deref_mut() {
        tap.began(temp.path());
    }
    {
        let file = EarlyWriteback {
            file: temp.as_file(),
            written: 0,
            started: 0,
            tap,
        };
        let mut out = BufWriter::with_capacity(1 << 16, file);
        write(&mut out)?;
        out.flush()?;
    }
    temp.as_file().sync_all()?;
    Ok(temp)
}

/// Gives `file` the mode of `old` and, where permitted, its owner and group. Only the group is
/// tried when the owner cannot be given (a user may give a file any group of theirs); where
/// neither can, the file stays the writer's, as a file this user created would be. The owner is
/// set before the mode, since a change of owner clears the set-id bits.
fn keep_mode_and_owner(file: &File, old: &std::fs::Metadata) -> io::Result<()> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    if std::os::unix::fs::fchown(file, Some(old.uid()), Some(old.gid())).is_err() {
        let _ = std::os::unix::fs::fchown(file, None, Some(old.gid()));
    }
    file.set_permissions(std::fs::Permissions::from_mode(old.mode() & 0o7777))
}

/// How many written bytes the kernel is asked to start writing back at a time.
const WRITEBACK_EVERY: u64 = 1 << 20;

/// A file being written whose pages are handed to the disk as they are written (Linux's
/// `sync_file_range` without waiting), so the `fsync` that must come before the rename waits for
/// the last stretch only, not for the whole file (measured: an 18 MB session's fsync 10-18 ms →
/// 1-3 ms, a 90 MB one's 26-37 ms → 1-4 ms). Only a hint: durability is still the `fsync`'s.
/// A watched create also tells its tap how far the file is written.
struct EarlyWriteback<'f, 't> {
    file: &'f File,
    written: u64,
    /// The bytes before this offset were handed to the disk.
    started: u64,
    tap: Option<&'t mut dyn WriteTap>,
}

impl Write for EarlyWriteback<'_, '_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = (&mut &*self.file).write(buf)?;
        self.written += n as u64;
        if let Some(tap) = self.tap.as_deref_mut() {
            tap.written(self.written);
        }
        if self.written - self.started >= WRITEBACK_EVERY {
            start_writeback(self.file, self.started, self.written - self.started);
            self.started = self.written;
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        (&mut &*self.file).flush()
    }
}

#[cfg(target_os = "linux")]
fn start_writeback(file: &File, offset: u64, len: u64) {
    use std::os::unix::io::AsRawFd;
    extern "C" {
        fn sync_file_range(fd: i32, offset: i64, nbytes: i64, flags: u32) -> i32;
    }
    const SYNC_FILE_RANGE_WRITE: u32 = 2;
    // SAFETY: a plain system call on an open descriptor that `file` keeps alive; its result is
    // only a hint (an error here resurfaces in the fsync).
    unsafe {
        sync_file_range(
            file.as_raw_fd(),
            offset as i64,
            len as i64,
            SYNC_FILE_RANGE_WRITE,
        );
    }
}

#[cfg(not(target_os = "linux"))]
fn start_writeback(_: &File, _: u64, _: u64) {}

/// Appends the bytes `write` produces to the JSONL file `path`, as whole lines only.
///
/// The file must already end with a newline (a torn last line is an error, not something to build
/// on), and the new bytes must end with one. On any failure the file is cut back to its previous
/// length. Returns that previous length, so a caller can undo the append with [`truncate_to`].
pub fn append(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<u64> {
    let mut file = OpenOptions::new().read(true).write(true).open(path)?;
    let previous = file.metadata()?.len();
    if previous > 0 {
        file.seek(SeekFrom::Start(previous - 1))?;
        let mut last = [0u8; 1];
        file.read_exact(&mut last)?;
        if last[0] != b'\n' {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "the file ends in a torn line (no final newline); refusing to append to it",
            ));
        }
    }
    file.seek(SeekFrom::Start(previous))?;
    let result = (|| {
        let mut out = LastByte {
            inner: BufWriter::with_capacity(1 << 16, &file),
            last: None,
        };
        write(&mut out)?;
        out.flush()?;
        if out.last.is_some_and(|b| b != b'\n') {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "appended bytes must end with a newline (whole lines only)",
            ));
        }
        file.sync_all()
    })();
    if let Err(e) = result {
        // Cut back to the previous length: a torn line must never stay behind.
        let _ = file.set_len(previous);
        let _ = file.sync_all();
        return Err(e);
    }
    Ok(previous)
}

/// Cuts `path` back to `len` bytes and syncs it (undoes an [`append`]).
pub fn truncate_to(path: &Path, len: u64) -> io::Result<()> {
    let file = OpenOptions::new().write(true).open(path)?;
    file.set_len(len)?;
    file.sync_all()
}

/// The directory `path` is in: `.` for a bare file name (whose parent is the empty path).
fn parent_dir(path: &Path) -> io::Result<&Path> {
    match path.parent() {
        Some(dir) if dir.as_os_str().is_empty() => Ok(Path::new(".")),
        Some(dir) => Ok(dir),
        None => Err(io::Error::other("a file path needs a parent directory")),
    }
}

/// Syncs the directory `path` is in, so a rename or removal in it is durable.
pub fn sync_parent(path: &Path) -> io::Result<()> {
    File::open(parent_dir(path)?)?.sync_all()
}

struct LastByte<W> {
    inner: W,
    last: Option<u8>,
}

impl<W: Write> Write for LastByte<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        if n > 0 {
            self.last = Some(buf[n - 1]);
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn create_new_never_replaces_and_leaves_no_temp_on_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        create_new(&path, |w: &mut dyn Write| w.write_all(b"a\n")).unwrap();
        assert!(create_new(&path, |w: &mut dyn Write| w.write_all(b"b\n")).is_err());
        assert_eq!(std::fs::read(&path).unwrap(), b"a\n");
        let other = dir.path().join("t.jsonl");
        let err = create_new(&other, |w: &mut dyn Write| {
            w.write_all(b"half")?;
            Err(io::Error::other("boom"))
        });
        assert!(err.is_err());
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("s.jsonl")]);
    }

    #[test]
    fn a_file_of_several_writeback_stretches_keeps_every_byte() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.jsonl");
        let line: Vec<u8> = (0..=254u8).chain([b'\n']).collect();
        let lines = (5 * WRITEBACK_EVERY as usize) / (line.len() - 2) + 7;
        create_new(&path, |w: &mut dyn Write| {
            (0..lines).try_for_each(|i| w.write_all(&line[i % 3..]))
        })
        .unwrap();
        let want: Vec<u8> = (0..lines).flat_map(|i| line[i % 3..].to_vec()).collect();
        assert!(want.len() as u64 > 5 * WRITEBACK_EVERY);
        assert!(std::fs::read(&path).unwrap() == want);
    }

    #[test]
    fn append_adds_whole_lines_and_cuts_back_on_failure() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, b"one\n").unwrap();
        assert_eq!(append(&path, |w| w.write_all(b"two\n")).unwrap(), 4);
        assert!(append(&path, |w| {
            w.write_all(b"three\n")?;
            Err(io::Error::other("disk full"))
        })
        .is_err());
        assert!(append(&path, |w| w.write_all(b"no newline")).is_err());
        assert_eq!(std::fs::read(&path).unwrap(), b"one\ntwo\n");
        truncate_to(&path, 4).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"one\n");
    }

    #[test]
    fn a_bare_file_name_is_in_the_current_directory() {
        // `conformance run … --json rel.json`: the parent of a bare name is the empty path.
        assert_eq!(parent_dir(Path::new("rel.json")).unwrap(), Path::new("."));
        assert_eq!(parent_dir(Path::new("a/rel.json")).unwrap(), Path::new("a"));
        assert!(parent_dir(Path::new("/")).is_err());
        sync_parent(Path::new("rel.json")).unwrap();
    }

    #[test]
    fn temp_files_carry_the_writers_pid() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let seen = std::cell::RefCell::new(Vec::new());
        create_new(&path, |w: &mut dyn Write| {
            for entry in std::fs::read_dir(dir.path()).unwrap() {
                seen.borrow_mut()
                    .push(entry.unwrap().file_name().to_string_lossy().into_owned());
            }
            w.write_all(b"a\n")
        })
        .unwrap();
        let seen = seen.into_inner();
        assert_eq!(seen.len(), 1, "{seen:?}");
        assert!(
            seen[0].starts_with(&temp_prefix(std::process::id())),
            "{seen:?}"
        );
    }

    #[test]
    fn replace_keeps_the_old_files_mode_owner_and_group() {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.json");
        std::fs::write(&path, b"{}").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        // Group `nobody` (`nogroup` on Debian) where this test may give it (as root), else the
        // file's own.
        let root = std::fs::metadata("/proc/self").unwrap().uid() == 0;
        let group = if root {
            65534
        } else {
            std::fs::metadata(&path).unwrap().gid()
        };
        std::os::unix::fs::chown(&path, None, Some(group)).unwrap();
        let before = std::fs::metadata(&path).unwrap();
        replace(&path, |w| w.write_all(b"{\"a\": 1}")).unwrap();
        let after = std::fs::metadata(&path).unwrap();
        assert_ne!(before.ino(), after.ino(), "replaced by a rename");
        assert_eq!(std::fs::read(&path).unwrap(), b"{\"a\": 1}");
        assert_eq!(after.mode() & 0o7777, 0o640);
        assert_eq!((after.uid(), after.gid()), (before.uid(), group));
        // A new file is the writer's own, readable by it alone (tempfile's 0600).
        let new = dir.path().join("new.json");
        replace(&new, |w| w.write_all(b"{}")).unwrap();
        assert_eq!(std::fs::metadata(&new).unwrap().mode() & 0o7777, 0o600);
    }

    #[test]
    fn append_refuses_a_torn_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, b"one\n{\"tor").unwrap();
        let err = append(&path, |w| w.write_all(b"two\n")).unwrap_err();
        assert!(err.to_string().contains("torn"), "{err}");
        assert_eq!(std::fs::read(&path).unwrap(), b"one\n{\"tor");
    }
}
