//! SIGKILL of a write into OpenCode's database at points spread over the write, while another
//! connection holds the database open and reads it as a running OpenCode does: afterwards the
//! database passes SQLite's integrity check and holds the old session or the complete new one,
//! never part of one.
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
use handoff_sdk::{Comparison, Plugin, SessionRef, StoreRoot};
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

/// A store holding one small session OpenCode's "user" made earlier (the old content).
fn base(dir: &Path) -> (StoreRoot, SessionRef) {
    let root = StoreRoot::new(dir.join("opencode")).unwrap();
    let earlier = create(&root, &conversation(2));
    (root, earlier)
}

#[test]
fn killed_creates_leave_the_old_store_or_the_complete_session() {
    if std::env::var(CHILD).is_ok() {
        return;
    }
    let whole = conversation(turns());
    let dir = tempfile::tempdir().unwrap();
    let (reference, _) = base(&dir.path().join("reference"));
    let total = timed(&format!("create\t{}", reference.path().display()));
    let kills = number("HANDOFF_KILLS", 10);
    let (mut old, mut complete) = (0, 0);
    for k in 0..kills {
        let (root, earlier) = base(&dir.path().join(format!("create-{k}")));
        let db = root.path().join(DB_FILE);
        let reader = RunningReader::open(&db);
        let after = total.mul_f64((k as f64 + 0.5) / kills as f64);
        let finished = killed(&format!("create\t{}", root.path().display()), after);
        drop(reader);
        integrity(&db);
        let ids = sessions(&db);
        // The earlier session is whole, whatever happened.
        assert_eq!(
            read(&root, &earlier.id).events.len(),
            conversation(2).events.len()
        );
        match ids.iter().find(|id| **id != earlier.id) {
            None => {
                assert!(!finished, "kill {k}: a finished create left no session");
                old += 1;
            }
            Some(id) => {
                Comparison::default()
                    .diff(&whole, &read(&root, id))
                    .unwrap();
                complete += 1;
            }
        }
        assert!(ids.len() <= 2, "kill {k}: {ids:?}");
    }
    eprintln!(
        "create of {} events ({total:?}): {old} killed before the commit, {complete} after",
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
    let prepare = |name: &str| {
        let root = StoreRoot::new(dir.path().join(name).join("opencode")).unwrap();
        let session = create(&root, &first);
        (root, session)
    };
    let (reference, session) = prepare("reference");
    let total = timed(&format!(
        "append\t{}\t{}",
        reference.path().display(),
        session.id
    ));
    let kills = number("HANDOFF_KILLS", 10);
    let (mut old, mut complete) = (0, 0);
    for k in 0..kills {
        let (root, session) = prepare(&format!("append-{k}"));
        let db = root.path().join(DB_FILE);
        let reader = RunningReader::open(&db);
        let after = total.mul_f64((k as f64 + 0.5) / kills as f64);
        let finished = killed(
            &format!("append\t{}\t{}", root.path().display(), session.id),
            after,
        );
        drop(reader);
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
    eprintln!(
        "append of {} events ({total:?}): {old} killed before the commit, {complete} after",
        whole.events.len() - half
    );
    assert!(
        old > 0,
        "no kill landed before the commit: the write is too short to test"
    );
}
