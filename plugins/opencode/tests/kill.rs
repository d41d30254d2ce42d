//! SIGKILL of a write into OpenCode's database at points spread over the write, while a running
//! OpenCode holds the database open (`opencode serve` with `OPENCODE_DB` naming it, when the
//! pinned OpenCode is installed; its connections are checked in `/proc`) and another connection
//! reads it every few milliseconds: afterwards the database passes SQLite's integrity check and
//! holds the old session or the complete new one, never part of one.
//!
//! The writer is this test binary run again as a child (`HANDOFF_OPENCODE_KILL_CHILD`), so the
//! kill lands in the plugin's own code. Sizes: `HANDOFF_KILL_TURNS` turns (5 events each),
//! `HANDOFF_KILLS` kills per kind of write.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;
use handoff_opencode::{OpencodePlugin, DB_FILE, TARGET};
use handoff_sdk::{Comparison, Plugin, StoreRoot};
use rusqlite::Connection;

const CHILD: &str = "HANDOFF_OPENCODE_KILL_CHILD";

fn number(var: &str, default: usize) -> usize {
    std::env::var(var)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn turns() -> usize {
    number("HANDOFF_KILL_TURNS", 1500)
}

/// The child: `create <root>` writes the whole conversation; `append <root> <id>` appends its
/// second half to the session holding its first.
#[test]
fn child_writer() {
    let Ok(job) = std::env::var(CHILD) else {
        return;
    };
    let args: Vec<&str> = job.split('\t').collect();
    let root = StoreRoot::new(args[1]).unwrap();
    let whole = conversation(turns());
    match args[0] {
        "create" => {
            create(&root, &whole);
        }
        "append" => {
            let half = whole.events.len() / 2;
            let session = OpencodePlugin
                .resumer()
                .resolve(&root, TARGET, args[2])
                .unwrap();
            OpencodePlugin
                .writer()
                .append(&root, &session, &whole.events[half..])
                .unwrap();
        }
        other => panic!("unknown job {other}"),
    }
}

fn child(job: &str) -> Command {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args(["--exact", "child_writer", "--nocapture", "--test-threads=1"])
        .env(CHILD, job)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    command
}

/// Runs `job` to its end; how long it took.
fn timed(job: &str) -> Duration {
    let start = Instant::now();
    assert!(child(job).status().unwrap().success(), "{job} failed");
    start.elapsed()
}

/// Runs `job` and SIGKILLs it after `after`; whether it had finished by then.
fn killed(job: &str, after: Duration) -> bool {
    let mut running = child(job).spawn().unwrap();
    let deadline = Instant::now() + after;
    while Instant::now() < deadline {
        if running.try_wait().unwrap().is_some() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    running.kill().unwrap();
    running.wait().unwrap();
    false
}

/// A connection that stays open and reads the sessions every few milliseconds, as a running
/// OpenCode's does; stops when dropped.
struct RunningReader {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl RunningReader {
    fn open(db: &Path) -> Self {
        let connection = Connection::open(db).unwrap();
        connection.busy_timeout(Duration::from_secs(5)).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            while !flag.load(Ordering::Relaxed) {
                let _: i64 = connection
                    .query_row("SELECT count(*) FROM part", [], |r| r.get(0))
                    .unwrap();
                std::thread::sleep(Duration::from_millis(3));
            }
        });
        RunningReader {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for RunningReader {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// `opencode serve` (the pinned OpenCode, when installed) on `db`, in a scratch HOME, running
/// until dropped; `None` when OpenCode is not installed at the pinned version.
struct Serve {
    child: std::process::Child,
    _home: tempfile::TempDir,
}

impl Serve {
    fn start(db: &Path) -> Option<Serve> {
        let found =
            handoff_live::cli::find_cli("opencode", handoff_opencode::OPENCODE_PACKAGE, None)
                .ok()?;
        if found.version.as_deref() != Some(handoff_opencode::OPENCODE_VERSION) {
            return None;
        }
        let home = tempfile::tempdir().unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(&found.path)
            .args([
                "serve",
                "--hostname",
                "127.0.0.1",
                "--port",
                &port.to_string(),
            ])
            .current_dir(home.path())
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", home.path())
            .env("XDG_CONFIG_HOME", home.path().join(".config"))
            .env("XDG_DATA_HOME", home.path().join(".local/share"))
            .env("XDG_STATE_HOME", home.path().join(".local/state"))
            .env("XDG_CACHE_HOME", home.path().join(".cache"))
            .env("OPENCODE_DB", db)
            .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
            .env("OPENCODE_DISABLE_DEFAULT_PLUGINS", "1")
            .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
            .env("OPENCODE_DISABLE_LSP_DOWNLOAD", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let mut serve = Serve { child, _home: home };
        // Running means holding the database: wait for its descriptor.
        let deadline = Instant::now() + Duration::from_secs(30);
        while !serve.holds(db) {
            assert!(
                Instant::now() < deadline,
                "opencode serve did not open {}",
                db.display()
            );
            assert!(
                serve.child.try_wait().unwrap().is_none(),
                "opencode serve exited"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Some(serve)
    }

    /// Whether the server process has `db` open.
    fn holds(&self, db: &Path) -> bool {
        let Ok(fds) = std::fs::read_dir(format!("/proc/{}/fd", self.child.id())) else {
            return false;
        };
        fds.flatten()
            .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|target| target == db))
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn integrity(db: &Path) {
    let conn = Connection::open(db).unwrap();
    let ok: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok", "{}", db.display());
}

fn sessions(db: &Path) -> Vec<String> {
    let conn = Connection::open(db).unwrap();
    let mut st = conn.prepare("SELECT id FROM session ORDER BY id").unwrap();
    st.query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// What holds the database open while the kills happen.
fn running_opencode(db: &Path) -> (Option<Serve>, RunningReader, &'static str) {
    let serve = Serve::start(db);
    let what = if serve.is_some() {
        "opencode serve and a reading connection"
    } else {
        "a reading connection (OpenCode is not installed at the pinned version)"
    };
    (serve, RunningReader::open(db), what)
}

#[test]
fn killed_creates_leave_the_old_store_or_the_complete_session() {
    if std::env::var(CHILD).is_ok() {
        return;
    }
    let whole = conversation(turns());
    let dir = tempfile::tempdir().unwrap();
    let root = StoreRoot::new(dir.path().join("opencode")).unwrap();
    let earlier = create(&root, &conversation(2));
    let db = root.path().join(DB_FILE);
    let (serve, reader, holder) = running_opencode(&db);
    let job = format!("create\t{}", root.path().display());
    let total = timed(&job);
    let kills = number("HANDOFF_KILLS", 10);
    let (mut old, mut complete) = (0, 0);
    for k in 0..kills {
        let before = sessions(&db);
        let finished = killed(&job, total.mul_f64((k as f64 + 0.5) / kills as f64));
        integrity(&db);
        let after = sessions(&db);
        let new: Vec<&String> = after.iter().filter(|id| !before.contains(id)).collect();
        assert!(
            before.iter().all(|id| after.contains(id)),
            "kill {k}: a session went"
        );
        match new.as_slice() {
            [] => {
                assert!(!finished, "kill {k}: a finished create left no session");
                old += 1;
            }
            [id] => {
                Comparison::default()
                    .diff(&whole, &read(&root, id))
                    .unwrap();
                complete += 1;
            }
            more => panic!("kill {k}: {} new sessions", more.len()),
        }
        // The session that was there is whole, whatever happened.
        assert_eq!(
            read(&root, &earlier.id).events.len(),
            conversation(2).events.len()
        );
    }
    drop((reader, serve));
    integrity(&db);
    eprintln!(
        "create of {} events ({total:?}), held open by {holder}: {old} killed before the commit, {complete} after",
        whole.events.len()
    );
    assert!(
        old > 0,
        "no kill landed before the commit: the write is too short to test"
    );
}

#[test]
fn killed_appends_leave_the_old_or_the_complete_session() {
    if std::env::var(CHILD).is_ok() {
        return;
    }
    let whole = conversation(turns());
    let half = whole.events.len() / 2;
    let mut first = whole.clone();
    first.events.truncate(half);
    let dir = tempfile::tempdir().unwrap();
    let root = StoreRoot::new(dir.path().join("opencode")).unwrap();
    let db = root.path().join(DB_FILE);
    let reference = create(&root, &first);
    let (serve, reader, holder) = running_opencode(&db);
    let total = timed(&format!(
        "append\t{}\t{}",
        root.path().display(),
        reference.id
    ));
    let kills = number("HANDOFF_KILLS", 10);
    let (mut old, mut complete) = (0, 0);
    for k in 0..kills {
        let session = create(&root, &first);
        let job = format!("append\t{}\t{}", root.path().display(), session.id);
        let finished = killed(&job, total.mul_f64((k as f64 + 0.5) / kills as f64));
        integrity(&db);
        let back = read(&root, &session.id);
        if back.events.len() == first.events.len() {
            assert!(
                !finished,
                "kill {k}: a finished append left the old session"
            );
            Comparison::default().diff(&first, &back).unwrap();
            old += 1;
        } else {
            Comparison::default().diff(&whole, &back).unwrap();
            complete += 1;
        }
    }
    drop((reader, serve));
    integrity(&db);
    eprintln!(
        "append of {} events ({total:?}), held open by {holder}: {old} killed before the commit, {complete} after",
        whole.events.len() - half
    );
    assert!(
        old > 0,
        "no kill landed before the commit: the write is too short to test"
    );
}
