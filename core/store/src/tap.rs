//! A watch on the next file [`super::atomic::create_new`] writes on this thread, so another thread
//! can read it as it is written (the continuation engine's verify reads a new session while its
//! writer still writes it).
//!
//! A thread-local slot, not a parameter: every writer that creates its file through
//! `create_new` (the SDK's way, so every plugin's) is watched without a change to its code or to
//! the `Writer` trait, and a plugin file's writer is watched through the same slot on its side of
//! the boundary (`docs/abi.md`). The slot is taken by the first `create_new` inside
//! [`watched`]: a writer that starts over writes its second file unwatched.

use std::cell::RefCell;
use std::path::Path;

/// What a watched create reports, in this order: [`WriteTap::began`] once, [`WriteTap::written`]
/// as bytes reach the file, then [`WriteTap::ended`] once.
pub trait WriteTap {
    /// The create writes the temp file `temp`, which exists and is empty. The writer's thread
    /// waits in this call, so the file cannot have been renamed yet.
    fn began(&mut self, temp: &Path);
    /// The file's first `len` bytes are written (a reader of the file sees them).
    fn written(&mut self, len: u64);
    /// Every byte is written and synced (`whole`), about to be renamed into place; or the create
    /// failed and the temp file is removed.
    fn ended(&mut self, whole: bool);
}

thread_local! {
    static NEXT: RefCell<Option<Box<dyn WriteTap>>> = const { RefCell::new(None) };
}

/// Runs `f` with `tap` watching the first file `create_new` writes on this thread within it. A
/// tap no create took is dropped when `f` returns.
pub fn watched<T>(tap: Box<dyn WriteTap>, f: impl FnOnce() -> T) -> T {
    struct Restore(Option<Box<dyn WriteTap>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take();
            NEXT.with(|next| *next.borrow_mut() = previous);
        }
    }
    let _restore = Restore(NEXT.with(|next| next.borrow_mut().replace(tap)));
    f()
}

/// The tap of the enclosing [`watched`], taken (so it watches one file only).
pub fn take() -> Option<Box<dyn WriteTap>> {
    NEXT.with(|next| next.borrow_mut().take())
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;
    use crate::atomic;

    /// What a tap was told, shared with the test.
    #[derive(Clone, Default)]
    struct Log(Arc<Mutex<Vec<String>>>);

    impl WriteTap for Log {
        fn began(&mut self, temp: &Path) {
            let name = temp.file_name().unwrap().to_string_lossy();
            let kind = if name.starts_with(".handoff-tmp-") {
                "a temp file"
            } else {
                "the file itself"
            };
            self.0.lock().unwrap().push(format!("began {kind}"));
        }
        fn written(&mut self, len: u64) {
            self.0.lock().unwrap().push(format!("written {len}"));
        }
        fn ended(&mut self, whole: bool) {
            self.0.lock().unwrap().push(format!("ended {whole}"));
        }
    }

    impl Log {
        fn take(&self) -> Vec<String> {
            std::mem::take(&mut self.0.lock().unwrap())
        }
    }

    #[test]
    fn a_watched_create_reports_its_temp_file_as_it_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let log = Log::default();
        let big = vec![b'x'; 100_000];
        watched(Box::new(log.clone()), || {
            atomic::create_new(&dir.path().join("a"), |out| {
                out.write_all(b"first\n")?;
                out.write_all(&big)
            })
        })
        .unwrap();
        // The buffered writer hands the file its bytes as its buffer fills, then the rest.
        let steps = log.take();
        assert_eq!(steps.first().map(String::as_str), Some("began a temp file"));
        assert_eq!(steps.last().map(String::as_str), Some("ended true"));
        let lengths: Vec<u64> = steps[1..steps.len() - 1]
            .iter()
            .map(|s| s.strip_prefix("written ").unwrap().parse().unwrap())
            .collect();
        assert!(lengths.windows(2).all(|w| w[0] < w[1]), "{lengths:?}");
        assert_eq!(lengths.last(), Some(&100_006));
        assert_eq!(
            std::fs::metadata(dir.path().join("a")).unwrap().len(),
            100_006
        );
    }

    #[test]
    fn only_the_first_create_is_watched_and_a_failed_one_ends_unwhole() {
        let dir = tempfile::tempdir().unwrap();
        let log = Log::default();
        watched(Box::new(log.clone()), || {
            let failed = atomic::create_new(&dir.path().join("a"), |out| {
                out.write_all(b"part")?;
                Err(std::io::Error::other("stop"))
            });
            assert!(failed.is_err());
            // A writer starting over writes its second file unwatched.
            atomic::create_new(&dir.path().join("b"), |out| out.write_all(b"whole\n")).unwrap();
        });
        assert_eq!(
            log.take(),
            ["began a temp file", "written 4", "ended false"]
        );
        // Outside `watched`, nothing is watched, and the slot is empty again.
        atomic::create_new(&dir.path().join("c"), |out| out.write_all(b"c\n")).unwrap();
        assert!(take().is_none());
        assert!(log.take().is_empty());
    }

    #[test]
    fn a_tap_no_create_took_is_gone_after_watched() {
        let log = Log::default();
        watched(Box::new(log.clone()), || {});
        assert!(take().is_none());
        // Nested: the inner tap is the one taken; the outer one is back after.
        watched(Box::new(log.clone()), || {
            let inner = Log::default();
            watched(Box::new(inner.clone()), || {
                take().unwrap().ended(true);
            });
            assert!(inner.take() == ["ended true"]);
            assert!(take().is_some());
        });
    }
}
