//! A crash at each exact point of a continuation, made deterministic: this test binary runs
//! itself as a child ([`crash_child`]) that continues a conversation through a plugin wrapper
//! which aborts the process at the chosen point (after tearing the file, for a torn append). The
//! parent then runs the next `handoff` command and checks what it left.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use handoff_claude::ClaudePlugin;
use handoff_codex::CodexPlugin;
use handoff_host::continuation::{continue_conversation, ContinueRequest};
use handoff_host::seal::Seal;
use handoff_host::{
    CreateOptions, Event, Plugin, PluginError, ReadFrom, ReadOutcome, Reader, Resumer, SessionInfo,
    SessionRef, StoreRoot, Transcript, Writer,
};

use crate::support::*;

const TURNS: usize = 60;
const LOCATOR: &str = "crash-test";

/// Where the child aborts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Point {
    /// In `append`, before the plugin writes (the journal is on disk).
    AppendBefore,
    /// In `append`, after the plugin wrote 90 % of the new bytes + 17 (a torn last line).
    AppendTorn,
    /// After the plugin appended everything, before the read-back.
    AppendDone,
    /// Halfway through the read-back of an append.
    AppendVerify,
    /// In `create`, with a half-written temp file in the session folder.
    CreateTemp,
    /// Right after the plugin created the session, before the journal names it.
    CreateReturned,
    /// Halfway through the read-back of a create.
    CreateVerify,
}

impl Point {
    fn name(self) -> &'static str {
        match self {
            Point::AppendBefore => "append-before",
            Point::AppendTorn => "append-torn",
            Point::AppendDone => "append-done",
            Point::AppendVerify => "append-verify",
            Point::CreateTemp => "create-temp",
            Point::CreateReturned => "create-returned",
            Point::CreateVerify => "create-verify",
        }
    }

    fn parse(name: &str) -> Point {
        [
            Point::AppendBefore,
            Point::AppendTorn,
            Point::AppendDone,
            Point::AppendVerify,
            Point::CreateTemp,
            Point::CreateReturned,
            Point::CreateVerify,
        ]
        .into_iter()
        .find(|p| p.name() == name)
        .unwrap_or_else(|| panic!("unknown crash point {name}"))
    }
}

/// A plugin that behaves like `inner` until `point`, where it ends the process as a kill would.
struct Crashing {
    inner: Arc<dyn Plugin>,
    point: Point,
}

fn die() -> ! {
    std::process::abort()
}

impl Plugin for Crashing {
    fn manifest(&self) -> handoff_host::Manifest {
        self.inner.manifest()
    }
    fn writer(&self) -> &dyn Writer {
        self
    }
    fn reader(&self) -> &dyn Reader {
        self
    }
    fn resumer(&self) -> &dyn Resumer {
        self.inner.resumer()
    }
}

impl Writer for Crashing {
    fn create(
        &self,
        root: &StoreRoot,
        target: &str,
        transcript: &Transcript,
        options: &CreateOptions,
    ) -> Result<SessionRef, PluginError> {
        if self.point == Point::CreateTemp {
            let dir = root.path().join("sessions/2026/11/30");
            std::fs::create_dir_all(&dir).unwrap();
            let temp = dir.join(format!(".handoff-tmp-{}-crash", std::process::id()));
            std::fs::write(temp, b"{\"type\":\"session_meta\",\"payl").unwrap();
            die();
        }
        let session = self
            .inner
            .writer()
            .create(root, target, transcript, options)?;
        if self.point == Point::CreateReturned {
            die();
        }
        Ok(session)
    }

    fn append(
        &self,
        root: &StoreRoot,
        session: &SessionRef,
        events: &[Event],
    ) -> Result<SessionRef, PluginError> {
        if self.point == Point::AppendBefore {
            die();
        }
        let before = std::fs::metadata(&session.path).unwrap().len();
        let done = self.inner.writer().append(root, session, events)?;
        let after = std::fs::metadata(&session.path).unwrap().len();
        match self.point {
            Point::AppendTorn => {
                let torn = before + (after - before) * 9 / 10 + 17;
                let file = std::fs::OpenOptions::new()
                    .write(true)
                    .open(&session.path)
                    .unwrap();
                file.set_len(torn.min(after - 1)).unwrap();
                die();
            }
            Point::AppendDone => die(),
            _ => Ok(done),
        }
    }

    fn remove(&self, root: &StoreRoot, session: &SessionRef) -> Result<(), PluginError> {
        self.inner.writer().remove(root, session)
    }
}

impl Reader for Crashing {
    /// A session read back by the verify dies midway; a file still being written is not read
    /// (the verify reads the session once it is whole), and any other read is the inner one.
    fn read_each(
        &self,
        from: ReadFrom<'_>,
        sink: &mut dyn FnMut(Event) -> bool,
    ) -> Result<ReadOutcome, PluginError> {
        match from {
            ReadFrom::Session(..) => {}
            ReadFrom::Written(..) => return Ok(ReadOutcome::NotSupported),
            ReadFrom::File(..) => return self.inner.reader().read_each(from, sink),
        }
        let mut seen = 0;
        let verify = matches!(self.point, Point::AppendVerify | Point::CreateVerify);
        self.inner.reader().read_each(from, &mut |event| {
            seen += 1;
            if verify && seen == TURNS * 2 {
                die();
            }
            sink(event)
        })
    }

    fn cwd(&self, from: ReadFrom<'_>) -> Result<Option<String>, PluginError> {
        self.inner.reader().cwd(from)
    }

    fn read(&self, from: ReadFrom<'_>) -> Result<Transcript, PluginError> {
        self.inner.reader().read(from)
    }

    fn list(&self, root: &StoreRoot, target: &str) -> Result<Vec<SessionInfo>, PluginError> {
        self.inner.reader().list(root, target)
    }

    fn find_owned(
        &self,
        root: &StoreRoot,
        target: &str,
        locator: &str,
    ) -> Result<Option<SessionRef>, PluginError> {
        self.inner.reader().find_owned(root, target, locator)
    }
}

fn plugin_for(target: &str) -> Arc<dyn Plugin> {
    match target {
        "codex" => Arc::new(CodexPlugin),
        _ => Arc::new(ClaudePlugin),
    }
}

/// The child: continues `CRASH_SOURCE` on `CRASH_TARGET` in `CRASH_ROOT` and aborts at
/// `CRASH_POINT`. Does nothing in an ordinary test run.
#[test]
fn crash_child() {
    let Ok(point) = std::env::var("CRASH_POINT") else {
        return;
    };
    let var = |name: &str| std::env::var(name).unwrap();
    let target = var("CRASH_TARGET");
    let transcript = read_source(Path::new(&var("CRASH_SOURCE")));
    let root = StoreRoot::new(var("CRASH_ROOT")).unwrap();
    // The key of the certificate folder the `handoff` runs use, so they trust this run's journals.
    let seal = Seal::open(Path::new(&var("CRASH_CERTS"))).unwrap();
    let plugin = Crashing {
        inner: plugin_for(&target),
        point: Point::parse(&point),
    };
    let result = continue_conversation(
        &plugin,
        &ContinueRequest {
            source: (&transcript).into(),
            locator: Some(LOCATOR),
            target: &target,
            root: &root,
            seal: &seal,
            cwd: None,
            prompt: "go on",
            drop: &[],
            lock_wait: Duration::from_secs(10),
            into: None,
        },
    );
    panic!("the crash point {point} was never reached: {result:?}");
}

/// Runs the child to `point`; it must end by abort.
fn crash(point: Point, target: &str, source: &Path, root: &Path) {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "points::crash_child", "--nocapture"])
        .env("CRASH_POINT", point.name())
        .env("CRASH_TARGET", target)
        .env("CRASH_SOURCE", source)
        .env("CRASH_ROOT", root)
        .env("CRASH_CERTS", &shared().certificates)
        .stdout(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        None,
        "{point:?}: the child was meant to abort: {}",
        stderr(&out)
    );
}

struct Setup {
    scratch: Scratch,
    whole: Transcript,
    prefix_source: PathBuf,
    whole_source: PathBuf,
}

fn setup() -> Setup {
    let scratch = Scratch::new();
    let whole = conversation(TURNS);
    let mut prefix = whole.clone();
    prefix.events.truncate(whole.events.len() / 2);
    let prefix_source = claude_source(&scratch.path("claude-prefix"), &prefix);
    let whole_source = claude_source(&scratch.path("claude-whole"), &whole);
    let whole = read_source(&whole_source);
    Setup {
        scratch,
        whole,
        prefix_source,
        whole_source,
    }
}

fn continue_on(target: &str, s: &Setup, source: &Path, root: &Path) -> serde_json::Value {
    let mut command = handoff(&shared().config, &s.scratch.tmp());
    command
        .args(["continue", "--to", target, "--locator", LOCATOR, "--json"])
        .arg("--from")
        .arg(format!("claude-code:{}", source.display()))
        .arg("--store-root")
        .arg(root);
    continued(&command.output().unwrap())
}

fn assert_clean(root: &Path, s: &Setup, context: &str) {
    let left = leftovers(root, &s.scratch.tmp(), &shared().certificates);
    assert!(left.is_empty(), "{context}: left behind: {left:#?}");
}

fn appended_crash(target: &str, point: Point) {
    let s = setup();
    let root = s.scratch.path("root");
    let first = continue_on(target, &s, &s.prefix_source, &root);
    let session = PathBuf::from(first["session"]["path"].as_str().unwrap());
    let old = std::fs::read(&session).unwrap();
    let old_inode = std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(&session).unwrap());

    crash(point, target, &s.whole_source, &root);
    let context = format!("{target} {point:?}");
    assert!(
        std::fs::read_dir(root.join(".handoff/journal"))
            .unwrap()
            .count()
            > 0,
        "{context}: the dead run left its journal"
    );
    // A read changes nothing: it names the journal, and reads what is there.
    let crashed = std::fs::read(&session).unwrap();
    let read = handoff(&shared().config, &s.scratch.tmp())
        .args(["read", target])
        .arg(&session)
        .arg("--json")
        .output()
        .unwrap();
    assert!(
        stderr(&read).contains("journal(s) of handoff writes"),
        "{context}: {}",
        stderr(&read)
    );
    assert_eq!(
        std::fs::read(&session).unwrap(),
        crashed,
        "{context}: a read changed the session"
    );
    // The next write into the store root rolls back first.
    let next = continue_on(target, &s, &s.prefix_source, &root);
    let undone = match (target, point) {
        ("anthropic-messages", _) => "restored from its old file",
        (_, Point::AppendBefore) => "was left as it was",
        _ => "cut back from",
    };
    let recovered = next["recovered"].to_string();
    assert!(recovered.contains(undone), "{context}: {recovered}");
    assert_eq!(next["action"]["kind"], "unchanged", "{context}");
    assert_eq!(
        std::fs::read(&session).unwrap(),
        old,
        "{context}: not the old bytes"
    );
    assert_clean(&root, &s, &context);

    let again = continue_on(target, &s, &s.whole_source, &root);
    assert_eq!(again["session"]["id"], first["session"]["id"], "{context}");
    assert_eq!(again["action"]["kind"], "appended", "{context}");
    if target == "codex" {
        reads_as(&session, &s.whole).unwrap();
        // An in-place append keeps the file; a replacing one was renamed back.
        assert_eq!(
            std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(&session).unwrap()),
            old_inode
        );
    }
    assert_clean(&root, &s, &context);
}

fn created_crash(point: Point) {
    let s = setup();
    let root = s.scratch.path("root");
    crash(point, "codex", &s.whole_source, &root);
    let context = format!("codex {point:?}");
    // A read changes nothing; the next write into the store root rolls back first.
    let crashed = rollouts(&root);
    let read = handoff(&shared().config, &s.scratch.tmp())
        .args(["read", "codex", "00000000-0000-0000-0000-000000000000"])
        .arg("--store-root")
        .arg(&root)
        .output()
        .unwrap();
    assert!(
        stderr(&read).contains("journal(s) of handoff writes"),
        "{context}: {}",
        stderr(&read)
    );
    assert_eq!(
        rollouts(&root),
        crashed,
        "{context}: a read changed the store"
    );
    let again = continue_on("codex", &s, &s.whole_source, &root);
    let recovered = again["recovered"].to_string();
    assert!(
        recovered.contains("interrupted create"),
        "{context}: {recovered}"
    );
    assert_eq!(again["action"]["kind"], "created", "{context}");
    assert_eq!(rollouts(&root).len(), 1, "{context}");
    assert_clean(&root, &s, &context);
}

#[test]
fn a_crash_before_the_plugin_appends_leaves_the_old_bytes() {
    appended_crash("codex", Point::AppendBefore);
}

#[test]
fn a_torn_append_is_cut_back_to_the_old_bytes() {
    appended_crash("codex", Point::AppendTorn);
}

#[test]
fn a_whole_but_unverified_append_is_undone() {
    appended_crash("codex", Point::AppendDone);
}

#[test]
fn a_crash_during_the_verify_of_an_append_is_undone() {
    appended_crash("codex", Point::AppendVerify);
}

#[test]
fn a_replacing_append_gets_the_old_file_back() {
    // anthropic-messages rewrites its history file by rename on append.
    appended_crash("anthropic-messages", Point::AppendDone);
}

#[test]
fn a_half_written_temp_file_of_a_create_is_removed() {
    created_crash(Point::CreateTemp);
}

#[test]
fn a_session_created_before_the_journal_named_it_is_found_and_removed() {
    created_crash(Point::CreateReturned);
}

#[test]
fn a_crash_during_the_verify_of_a_create_removes_the_session() {
    created_crash(Point::CreateVerify);
}
