//! The verify of a new session, read while its writer writes it: the writer's create is watched
//! ([`handoff_store::tap`]), and the target's reader reads the temp file as it grows
//! ([`handoff_capability::Reader::read_batches`] of a [`handoff_capability::ReadFrom::Written`]) on a thread of its own, fingerprinting each event.
//! So the wall time is about the longest of reading the source, writing and reading back, not the
//! first two and then the third.
//!
//! What is read is trusted only once the writer's file has turned out to be the session: the
//! session file is the very file that was read (same device and inode: the temp file renamed into
//! place), of the length read, not modified since its writer ended. Anything else (the writer wrote no
//! watched file, started over, failed; the reader cannot read a file as it is written, or failed)
//! leaves the verify to read the whole session as before.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, OnceLock};

use super::batches::{read_beside, ReaderName};

use handoff_capability::{fd_path, Growth, ReadFrom, ReadOutcome, Reader, SessionRef, WrittenFile};
use handoff_store::tap::WriteTap;
use handoff_transcript::{Comparison, Fingerprinter, PrintChain};

/// The writer's file as the verify's thread follows it.
#[derive(Default)]
pub(super) struct WriteWatch {
    /// The temp file, opened for reading when the writer began it, and its path.
    file: OnceLock<(File, PathBuf)>,
    state: Mutex<State>,
    changed: Condvar,
}

#[derive(Default)]
struct State {
    /// Bytes written so far.
    len: u64,
    /// The file's modification time when its writer ended: a write after that (in place, of the
    /// same length) would change it.
    modified: Option<std::time::SystemTime>,
    end: End,
    /// The length a waiting reader is woken at, if one waits.
    wake_at: Option<u64>,
}

/// How far the writer gets ahead of a reader that caught up before the reader is woken: one
/// wake-up per write of the writer's buffer would cost more than the reading.
const WAKE_AFTER: u64 = 1 << 20;

#[derive(Default, Clone, Copy, PartialEq, Eq)]
enum End {
    #[default]
    Writing,
    /// Every byte written; the writer has not returned yet.
    Written,
    /// The writer returned and its session is that file.
    Session,
    Abandoned,
}

/// What the verify's thread read of the written file.
pub(super) enum ReadWritten {
    /// The fingerprints of every event read, and the first event's id.
    Read(PrintChain, Option<String>),
    /// Nothing to trust (the reason, for the log): the verify reads the session whole.
    NotRead(String),
}

impl WriteWatch {
    /// The tap to hand [`handoff_store::tap::watched`].
    pub(super) fn tap(self: &Arc<Self>) -> Box<dyn WriteTap> {
        Box::new(Tap(Arc::clone(self)))
    }

    fn update(&self, f: impl FnOnce(&mut State)) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut state);
        self.changed.notify_all();
    }

    /// Ends the watch without a session (the write failed or is being undone): a reader waiting
    /// for bytes stops.
    pub(super) fn abandon(&self) {
        self.update(|state| state.end = End::Abandoned);
    }

    /// The writer returned `session`: its file must be the one that was read, whole.
    pub(super) fn confirm(&self, session: &SessionRef) {
        let same = self.file.get().is_some_and(|(file, _)| {
            let (Ok(read), Ok(session)) = (file.metadata(), std::fs::metadata(&session.path))
            else {
                return false;
            };
            same_file(&read, &session) && {
                let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
                state.end == End::Written
                    && state.len == session.len()
                    && state.modified.is_some()
                    && state.modified == session.modified().ok()
            }
        });
        self.update(|state| {
            state.end = if same { End::Session } else { End::Abandoned };
        });
    }

    /// Waits until the writer began its file (true) or ended without one (false).
    fn began(&self) -> bool {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if self.file.get().is_some() {
                return true;
            }
            if state.end != End::Writing {
                return false;
            }
            state = self.changed.wait(state).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Waits until the writer's file is confirmed as the session (true) or not (false).
    fn settled(&self) -> bool {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            match state.end {
                End::Session => return true,
                End::Abandoned => return false,
                End::Writing | End::Written => {}
            }
            state = self.changed.wait(state).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Reads the writer's file with `reader` as it is written and fingerprints its events; run on
    /// the verify's thread, while the writer writes on another.
    pub(super) fn read(
        &self,
        reader: &dyn Reader,
        target: &str,
        comparison: &Comparison,
    ) -> ReadWritten {
        if !self.began() {
            return ReadWritten::NotRead("the writer wrote no watched file".into());
        }
        // The reading on a thread of its own, the fingerprints on this one: once the writer is
        // done, the reader would otherwise have the machine's second core idle beside it.
        let name = ReaderName {
            target,
            method: "read_written_each",
            what: self.name().display().to_string(),
        };
        let mut fingerprinter = Fingerprinter::new(comparison);
        let mut prints = PrintChain::default();
        let mut first = None;
        let mut whole = false;
        let read = read_beside(
            "handoff-verify-read",
            name,
            |sink| {
                whole = reader.read_batches(ReadFrom::Written(target, self), sink)?
                    == ReadOutcome::Read;
                Ok(())
            },
            |event| {
                if first.is_none() {
                    first = Some(event.id.clone());
                }
                if let Some(print) = fingerprinter.push(&event) {
                    prints.push(print);
                }
                true
            },
        );
        match read {
            Err(e) => ReadWritten::NotRead(e.to_string()),
            Ok(()) if !whole => ReadWritten::NotRead("the reader reads whole files only".into()),
            Ok(()) if self.settled() => ReadWritten::Read(prints, first),
            Ok(()) => ReadWritten::NotRead("the file read is not the session".into()),
        }
    }
}

impl WrittenFile for WriteWatch {
    fn open(&self) -> std::io::Result<File> {
        let (file, _) = self
            .file
            .get()
            .ok_or_else(|| std::io::Error::other("the writer has not begun a file"))?;
        reopen(file)
    }

    fn name(&self) -> &Path {
        self.file.get().map_or(Path::new(""), |(_, path)| path)
    }

    fn wait_past(&self, len: u64) -> Growth {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            match state.end {
                End::Abandoned => return Growth::Abandoned,
                End::Written | End::Session => return Growth::Whole(state.len),
                End::Writing if state.len > len => return Growth::Grown(state.len),
                End::Writing => {}
            }
            state.wake_at = Some(len + WAKE_AFTER);
            state = self.changed.wait(state).unwrap_or_else(|e| e.into_inner());
            state.wake_at = None;
        }
    }
}

/// The watch as the writer's create reports to it.
struct Tap(Arc<WriteWatch>);

impl WriteTap for Tap {
    fn began(&mut self, temp: &Path) {
        // Opened now, while the writer waits: the file cannot be renamed away yet, and this
        // handle follows it when it is.
        match File::open(temp) {
            Ok(file) => {
                let _ = self.0.file.set((file, temp.to_owned()));
                self.0.update(|_| {});
            }
            Err(e) => {
                tracing::debug!(path = %temp.display(), error = %e, "cannot follow the file being written");
                self.0.abandon();
            }
        }
    }

    fn written(&mut self, len: u64) {
        super::progress::written(len);
        let watch = &self.0;
        let mut state = watch.state.lock().unwrap_or_else(|e| e.into_inner());
        state.len = len;
        if state.wake_at.is_some_and(|at| len >= at) {
            watch.changed.notify_all();
        }
    }

    fn ended(&mut self, whole: bool) {
        let modified = self
            .0
            .file
            .get()
            .and_then(|(file, _)| file.metadata().and_then(|m| m.modified()).ok());
        self.0.update(|state| {
            if state.end == End::Writing {
                state.end = if whole { End::Written } else { End::Abandoned };
                state.modified = modified;
            }
        });
    }
}

/// A second handle on `file` with a position of its own (the writer may have renamed it).
pub(super) fn reopen(file: &File) -> std::io::Result<File> {
    let path = fd_path(file)
        .ok_or_else(|| std::io::Error::other("following a file being written needs Linux"))?;
    File::open(path)
}

#[cfg(unix)]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino()
}

#[cfg(not(unix))]
fn same_file(_: &std::fs::Metadata, _: &std::fs::Metadata) -> bool {
    false
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use std::io::{Read, Write};

    use super::*;
    use handoff_capability::{GrowingRead, ABANDONED};
    use handoff_store::{atomic, tap};

    fn session(path: &Path) -> SessionRef {
        SessionRef {
            target: "t".into(),
            id: "i".into(),
            path: path.to_owned(),
        }
    }

    /// Reads the watched file on another thread while `write` writes it.
    fn follow(watch: &Arc<WriteWatch>, write: impl FnOnce()) -> std::io::Result<Vec<u8>> {
        std::thread::scope(|scope| {
            let reader = scope.spawn(|| {
                assert!(watch.began());
                let mut bytes = Vec::new();
                GrowingRead::open(&**watch)?.read_to_end(&mut bytes)?;
                Ok(bytes)
            });
            write();
            reader.join().unwrap()
        })
    }

    #[test]
    fn a_reader_follows_the_file_to_its_end_and_the_session_is_confirmed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s");
        let watch = Arc::new(WriteWatch::default());
        let chunk = vec![b'x'; 300_000];
        let read = follow(&watch, || {
            tap::watched(watch.tap(), || {
                atomic::create_new(&path, |out| {
                    for _ in 0..5 {
                        out.write_all(&chunk)?;
                        out.flush()?;
                    }
                    out.write_all(b"\n")
                })
            })
            .unwrap();
            watch.confirm(&session(&path));
        })
        .unwrap();
        assert_eq!(read, std::fs::read(&path).unwrap());
        assert!(watch.settled());
    }

    #[test]
    fn a_session_that_is_not_the_file_read_is_not_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let (written, other) = (dir.path().join("s"), dir.path().join("other"));
        std::fs::write(&other, b"same length\n").unwrap();
        let watch = Arc::new(WriteWatch::default());
        // The reader may have read it all, or been stopped by the refusal: either way, untrusted.
        let read = follow(&watch, || {
            tap::watched(watch.tap(), || {
                atomic::create_new(&written, |out| out.write_all(b"same length\n"))
            })
            .unwrap();
            watch.confirm(&session(&other));
        });
        match read {
            Ok(bytes) => assert_eq!(bytes, b"same length\n"),
            Err(e) => assert_eq!(e.to_string(), ABANDONED),
        }
        assert!(!watch.settled());
    }

    #[test]
    fn a_file_written_again_after_its_writer_ended_is_not_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s");
        let watch = Arc::new(WriteWatch::default());
        let read = follow(&watch, || {
            tap::watched(watch.tap(), || {
                atomic::create_new(&path, |out| out.write_all(b"first\n"))
            })
            .unwrap();
            // The same length, other bytes, a moment later (mtime has nanoseconds here).
            std::thread::sleep(std::time::Duration::from_millis(20));
            std::fs::OpenOptions::new()
                .write(true)
                .open(&path)
                .unwrap()
                .write_all(b"other\n")
                .unwrap();
            watch.confirm(&session(&path));
        });
        assert!(read.is_ok() || read.is_err_and(|e| e.to_string() == ABANDONED));
        assert!(!watch.settled());
    }

    #[test]
    fn a_write_abandoned_midway_stops_the_reader_with_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s");
        let watch = Arc::new(WriteWatch::default());
        let err = follow(&watch, || {
            let failed = tap::watched(watch.tap(), || {
                atomic::create_new(&path, |out| {
                    out.write_all(&vec![b'x'; 200_000])?;
                    Err(std::io::Error::other("disk full"))
                })
            });
            assert!(failed.is_err());
        })
        .unwrap_err();
        assert_eq!(err.to_string(), ABANDONED);
        assert!(!path.exists());
    }

    #[test]
    fn a_writer_that_wrote_no_watched_file_lets_the_verify_go_on() {
        let watch = WriteWatch::default();
        std::thread::scope(|scope| {
            let began = scope.spawn(|| watch.began());
            watch.abandon();
            assert!(!began.join().unwrap());
        });
    }
}
