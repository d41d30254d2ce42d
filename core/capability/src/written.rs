//! A session file read while its writer still writes it ([`super::ReadFrom::Written`]):
//! the continuation engine's verify reads a new session as it is written, so reading it back
//! overlaps writing it instead of following it.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

/// How far a [`WrittenFile`] is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Growth {
    /// It holds this many bytes now; its writer goes on.
    Grown(u64),
    /// Its writer wrote every byte: this is its length.
    Whole(u64),
    /// Its writer failed or started over: this file is not the session.
    Abandoned,
}

/// A file another thread is writing.
pub trait WrittenFile {
    /// The file, opened again for reading from its start (a position of its own).
    fn open(&self) -> io::Result<File>;
    /// Its name for errors (the writer's temp file: the session's own name comes when it is
    /// renamed into place).
    fn name(&self) -> &Path;
    /// Waits until the file holds more than `len` bytes or its writer ended.
    fn wait_past(&self, len: u64) -> Growth;
}

/// A path that opens the file `handle` has open, wherever it was renamed, as long as `handle`
/// is open (Linux's `/proc/self/fd`); `None` where there is no such path.
pub fn fd_path(handle: &File) -> Option<std::path::PathBuf> {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::io::AsRawFd;
        Some(format!("/proc/self/fd/{}", handle.as_raw_fd()).into())
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = handle;
        None
    }
}

/// What a [`GrowingRead`] fails with when the writer abandons its file.
pub const ABANDONED: &str = "the writer abandoned the file it was writing";

/// A [`WrittenFile`] as a [`Read`]: at the end of what is written so far it waits for more, and
/// its end is the end of the writer's bytes. It reads no byte the writer has not reported.
pub struct GrowingRead<'w> {
    file: File,
    written: &'w dyn WrittenFile,
    /// The bytes read so far.
    at: u64,
    /// The bytes known to be written.
    known: u64,
    whole: bool,
}

impl<'w> GrowingRead<'w> {
    /// `written` from its first byte.
    pub fn open(written: &'w dyn WrittenFile) -> io::Result<Self> {
        Ok(GrowingRead {
            file: written.open()?,
            written,
            at: 0,
            known: 0,
            whole: false,
        })
    }
}

impl Read for GrowingRead<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            if self.at < self.known {
                let want = buf
                    .len()
                    .min(usize::try_from(self.known - self.at).unwrap_or(usize::MAX));
                let n = self.file.read(&mut buf[..want])?;
                if n == 0 && want > 0 {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the file is shorter than its writer reported",
                    ));
                }
                self.at += n as u64;
                return Ok(n);
            }
            if self.whole {
                return Ok(0);
            }
            match self.written.wait_past(self.known) {
                Growth::Grown(len) => self.known = len.max(self.known),
                Growth::Whole(len) if len >= self.at => {
                    self.known = len;
                    self.whole = true;
                }
                Growth::Whole(_) => {
                    return Err(io::Error::other("the file is shorter than what was read"))
                }
                Growth::Abandoned => return Err(io::Error::other(ABANDONED)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::sync::{Condvar, Mutex};

    use super::*;

    /// A file written by the test, its growth reported by hand.
    struct Fake {
        path: std::path::PathBuf,
        growth: Mutex<Vec<Growth>>,
        next: Condvar,
    }

    impl WrittenFile for Fake {
        fn open(&self) -> io::Result<File> {
            File::open(&self.path)
        }
        fn name(&self) -> &Path {
            &self.path
        }
        fn wait_past(&self, _: u64) -> Growth {
            let mut growth = self.growth.lock().unwrap();
            while growth.is_empty() {
                growth = self.next.wait(growth).unwrap();
            }
            growth.remove(0)
        }
    }

    fn fake(dir: &tempfile::TempDir, bytes: &[u8], growth: Vec<Growth>) -> Fake {
        let path = dir.path().join("f");
        File::create(&path).unwrap().write_all(bytes).unwrap();
        Fake {
            path,
            growth: Mutex::new(growth),
            next: Condvar::new(),
        }
    }

    #[test]
    fn reads_only_what_the_writer_reported_and_ends_with_it() {
        let dir = tempfile::tempdir().unwrap();
        // Bytes past the reported length exist but are not the writer's yet.
        let file = fake(
            &dir,
            b"line one\nline two\nnot yet",
            vec![Growth::Grown(9), Growth::Whole(18)],
        );
        let mut read = Vec::new();
        GrowingRead::open(&file)
            .unwrap()
            .read_to_end(&mut read)
            .unwrap();
        assert_eq!(read, b"line one\nline two\n");
    }

    #[test]
    fn an_abandoned_file_is_an_error_not_an_end() {
        let dir = tempfile::tempdir().unwrap();
        let file = fake(
            &dir,
            b"line one\n",
            vec![Growth::Grown(9), Growth::Abandoned],
        );
        let mut read = Vec::new();
        let err = GrowingRead::open(&file)
            .unwrap()
            .read_to_end(&mut read)
            .unwrap_err();
        assert_eq!(err.to_string(), ABANDONED);
    }

    #[test]
    fn a_file_shorter_than_reported_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let file = fake(&dir, b"line", vec![Growth::Whole(9)]);
        let err = GrowingRead::open(&file)
            .unwrap()
            .read_to_end(&mut Vec::new())
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
    }
}
