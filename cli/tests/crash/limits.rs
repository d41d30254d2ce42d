//! A full disk and a read-only store root: a clear error naming the path, the session and the free
//! space as they were, nothing left behind, and a rerun that goes through once the cause is gone.
//!
//! The real cases need a small tmpfs and a read-only bind mount, so root and a sandbox that allows
//! `mount`; elsewhere they say SKIP and why. A writer that fails as a full disk does (in process,
//! no mount) runs everywhere.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use handoff_codex::CodexPlugin;
use handoff_host::continuation::{continue_conversation, ContinueError, ContinueRequest};
use handoff_host::{
    CreateOptions, Event, Plugin, PluginError, Reader, Resumer, SessionRef, StoreRoot, Transcript,
    Writer,
};

use crate::support::*;

/// A mount made for a test, undone (lazily) when dropped.
struct Mount(PathBuf);

impl Mount {
    fn run(args: &[&str], at: &Path) -> Result<(), String> {
        let out = Command::new("mount")
            .args(args)
            .arg(at)
            .output()
            .map_err(|e| e.to_string())?;
        if out.status.success() {
            Ok(())
        } else {
            Err(String::from_utf8_lossy(&out.stderr).trim().to_owned())
        }
    }

    /// A tmpfs of `size` (e.g. `8m`) at `at`.
    fn tmpfs(at: &Path, size: &str) -> Result<Mount, String> {
        std::fs::create_dir_all(at).unwrap();
        Mount::run(&["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"], at)?;
        Ok(Mount(at.to_owned()))
    }

    /// `at`, made read-only by a bind mount onto itself.
    fn read_only(at: &Path) -> Result<Mount, String> {
        Mount::run(&["--bind", &at.display().to_string()], at)?;
        let mount = Mount(at.to_owned());
        Mount::run(&["-o", "remount,bind,ro"], at)?;
        Ok(mount)
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// Bytes free on the file system of `path` (as `df` counts them).
fn available(path: &Path) -> u64 {
    let out = Command::new("df")
        .args(["-B1", "--output=avail"])
        .arg(path)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .nth(1)
        .and_then(|l| l.trim().parse().ok())
        .expect("df output")
}

/// Fills the file system of `dir` with `filler` until at most `leave` bytes are free.
fn fill(filler: &Path, leave: u64) {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(filler)
        .unwrap();
    let chunk = vec![0u8; 16 * 1024];
    while file.write_all(&chunk).is_ok() {}
    let _ = file.flush();
    let len = std::fs::metadata(filler).unwrap().len();
    file.set_len(len.saturating_sub(leave)).unwrap();
}

struct Case {
    scratch: Scratch,
    prefix_source: PathBuf,
    whole_source: PathBuf,
}

fn case(turns: usize) -> Case {
    let scratch = Scratch::new();
    let whole = conversation(turns);
    let mut prefix = whole.clone();
    prefix.events.truncate(whole.events.len() / 2);
    Case {
        prefix_source: claude_source(&scratch.path("claude-prefix"), &prefix),
        whole_source: claude_source(&scratch.path("claude-whole"), &whole),
        scratch,
    }
}

#[test]
fn a_full_disk_fails_naming_the_path_and_leaves_session_and_space_as_they_were() {
    let shared = shared();
    let c = case(200);
    let fs = c.scratch.path("fs");
    let _mount = match Mount::tmpfs(&fs, "8m") {
        Ok(mount) => mount,
        Err(why) => {
            eprintln!(
                "SKIP: cannot mount a tmpfs ({why}); a_writer_failing_for_space covers the engine"
            );
            return;
        }
    };
    let root = fs.join("codex");
    let tmp = c.scratch.tmp();
    let first = continued(
        &continue_cmd(&shared.config, &tmp, &c.prefix_source, &root)
            .output()
            .unwrap(),
    );
    let session = PathBuf::from(first["session"]["path"].as_str().unwrap());
    let old = std::fs::read(&session).unwrap();
    let filler = fs.join("filler");

    // Room for the journal, not for the appended events (about 240 KB).
    fill(&filler, 48 * 1024);
    let free = available(&fs);
    let out = continue_cmd(&shared.config, &tmp, &c.whole_source, &root)
        .output()
        .unwrap();
    let message = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{message}");
    assert!(message.contains("No space left"), "{message}");
    assert!(
        message.contains(&session.display().to_string()),
        "{message}"
    );
    assert_eq!(std::fs::read(&session).unwrap(), old);
    assert_eq!(available(&fs), free, "the space the append took is back");
    let left = leftovers(&root, &tmp, &shared.certificates);
    assert!(left.is_empty(), "{left:#?}");

    // No room at all: the journal itself cannot be written, and the error names it.
    fill(&filler, 0);
    let out = continue_cmd(&shared.config, &tmp, &c.whole_source, &root)
        .output()
        .unwrap();
    let message = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{message}");
    assert!(message.contains("no space left"), "{message}");
    assert!(
        message.contains(&root.join(".handoff/journal").display().to_string()),
        "{message}"
    );
    assert_eq!(std::fs::read(&session).unwrap(), old);
    let left = leftovers(&root, &tmp, &shared.certificates);
    assert!(left.is_empty(), "{left:#?}");

    std::fs::remove_file(&filler).unwrap();
    let again = continued(
        &continue_cmd(&shared.config, &tmp, &c.whole_source, &root)
            .output()
            .unwrap(),
    );
    assert_eq!(again["session"]["id"], first["session"]["id"]);
    assert_eq!(again["action"]["kind"], "appended");

    // A new session streamed from the source runs out of room midway: the rollout begun is
    // removed, the space is back, and the other session is untouched.
    let fresh = fs.join("codex-fresh");
    let before = std::fs::read(&session).unwrap();
    fill(&filler, 48 * 1024);
    let free = available(&fs);
    let out = continue_cmd(&shared.config, &tmp, &c.whole_source, &fresh)
        .output()
        .unwrap();
    let message = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{message}");
    assert!(message.contains("No space left"), "{message}");
    assert!(message.contains(&fresh.display().to_string()), "{message}");
    assert_eq!(
        available(&fs),
        free,
        "the space the new session took is back"
    );
    assert_eq!(std::fs::read(&session).unwrap(), before);
    let left = leftovers(&fresh, &tmp, &shared.certificates);
    assert!(left.is_empty(), "{left:#?}");
    let mut files = Vec::new();
    walk(&fresh, &mut |p| {
        if p.is_file()
            && p.strip_prefix(fresh.join(".handoff/locks")).is_err()
            && p.strip_prefix(fresh.join(".handoff/episodes")).is_err()
        {
            files.push(p.to_owned());
        }
    });
    assert!(files.is_empty(), "no session file is left: {files:#?}");
}

#[test]
fn a_read_only_store_root_is_said_to_be_read_only() {
    let shared = shared();
    let c = case(20);
    let root = c.scratch.path("codex");
    let tmp = c.scratch.tmp();
    let first = continued(
        &continue_cmd(&shared.config, &tmp, &c.prefix_source, &root)
            .output()
            .unwrap(),
    );
    let id = first["session"]["id"].as_str().unwrap().to_owned();
    let mount = match Mount::read_only(&root) {
        Ok(mount) => mount,
        Err(why) => {
            eprintln!("SKIP: cannot bind-mount the store root read-only ({why})");
            return;
        }
    };
    let started = Instant::now();
    let out = continue_cmd(&shared.config, &tmp, &c.whole_source, &root)
        .output()
        .unwrap();
    let message = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{message}");
    assert!(message.contains("read-only"), "{message}");
    assert!(
        message.contains(&format!("store root {}", root.display())),
        "{message}"
    );
    assert!(!message.contains("another continuation"), "{message}");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "it did not wait for a lock"
    );
    // Reading needs no write.
    let read = handoff(&shared.config, &tmp)
        .args(["read", "codex", &id, "--json", "--store-root"])
        .arg(&root)
        .output()
        .unwrap();
    assert!(read.status.success(), "{}", stderr(&read));

    drop(mount);
    let again = continued(
        &continue_cmd(&shared.config, &tmp, &c.whole_source, &root)
            .output()
            .unwrap(),
    );
    assert_eq!(again["session"]["id"], id.as_str());
    assert_eq!(again["action"]["kind"], "appended");
}

/// A writer that writes its whole append, then fails as a full disk would (without cutting back).
struct FullDisk;

impl handoff_host::Plugin for FullDisk {
    fn manifest(&self) -> handoff_host::Manifest {
        CodexPlugin.manifest()
    }
    fn writer(&self) -> &dyn Writer {
        self
    }
    fn reader(&self) -> &dyn Reader {
        CodexPlugin.reader()
    }
    fn resumer(&self) -> &dyn Resumer {
        CodexPlugin.resumer()
    }
}

impl Writer for FullDisk {
    fn create(
        &self,
        root: &StoreRoot,
        target: &str,
        transcript: &Transcript,
        options: &CreateOptions,
    ) -> Result<SessionRef, PluginError> {
        CodexPlugin
            .writer()
            .create(root, target, transcript, options)
    }
    fn append(
        &self,
        root: &StoreRoot,
        session: &SessionRef,
        events: &[Event],
    ) -> Result<SessionRef, PluginError> {
        CodexPlugin.writer().append(root, session, events)?;
        Err(PluginError::Io {
            path: session.path.clone(),
            message: "No space left on device (os error 28)".into(),
        })
    }
    fn remove(&self, root: &StoreRoot, session: &SessionRef) -> Result<(), PluginError> {
        CodexPlugin.writer().remove(root, session)
    }
}

fn request<'a>(transcript: &'a Transcript, root: &'a StoreRoot) -> ContinueRequest<'a> {
    ContinueRequest {
        source: transcript.into(),
        locator: Some("full-disk"),
        target: "codex",
        root,
        seal: handoff_host::seal::Seal::of_this_process(),
        cwd: None,
        prompt: "go on",
        drop: &[],
        lock_wait: Duration::from_secs(5),
        into: None,
    }
}

#[test]
fn a_writer_failing_for_space_is_rolled_back_and_the_error_names_the_session() {
    let c = case(20);
    let root = StoreRoot::new(c.scratch.path("codex")).unwrap();
    let whole = read_source(&c.whole_source);
    let prefix = read_source(&c.prefix_source);
    let first = continue_conversation(&FullDisk, &request(&prefix, &root)).unwrap();
    let old = std::fs::read(&first.session.path).unwrap();
    let err = continue_conversation(&FullDisk, &request(&whole, &root)).unwrap_err();
    assert!(
        matches!(err, ContinueError::Plugin(PluginError::Io { .. })),
        "{err}"
    );
    assert!(
        err.to_string()
            .contains(&first.session.path.display().to_string()),
        "{err}"
    );
    assert_eq!(std::fs::read(&first.session.path).unwrap(), old);
    let left = leftovers(root.path(), &c.scratch.tmp(), &c.scratch.path("no-certs"));
    assert!(left.is_empty(), "{left:#?}");
    let again = continue_conversation(&CodexPlugin, &request(&whole, &root)).unwrap();
    assert_eq!(again.session, first.session);
}
