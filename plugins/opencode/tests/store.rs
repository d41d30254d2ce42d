//! The SQLite store: schema version, ownership by handle, exact removal, appends, a running
//! OpenCode's lock.

mod common;

use std::time::{Duration, Instant};

use common::*;
use handoff_opencode::{OpencodePlugin, DB_FILE, KNOWN_MIGRATIONS, TARGET};
use handoff_sdk::{ById, Plugin, PluginError, StoreRoot, Transcript};
use rusqlite::Connection;

fn store() -> (tempfile::TempDir, StoreRoot) {
    let dir = tempfile::tempdir().unwrap();
    let root = StoreRoot::new(dir.path().join("opencode")).unwrap();
    (dir, root)
}

fn db(root: &StoreRoot) -> Connection {
    Connection::open(root.path().join(DB_FILE)).unwrap()
}

#[test]
fn an_unknown_or_missing_migration_is_refused_naming_it() {
    let (_dir, root) = store();
    let session = create(&root, &conversation(1));
    db(&root)
        .execute(
            "INSERT INTO migration VALUES ('20991231000000_next', 0)",
            [],
        )
        .unwrap();
    let err = OpencodePlugin
        .read_id(&root, TARGET, &session.id)
        .unwrap_err();
    assert!(err.to_string().contains("20991231000000_next"), "{err}");
    let conn = db(&root);
    conn.execute("DELETE FROM migration WHERE id = '20991231000000_next'", [])
        .unwrap();
    conn.execute("DELETE FROM migration WHERE id = ?1", [KNOWN_MIGRATIONS[5]])
        .unwrap();
    drop(conn);
    let err = OpencodePlugin
        .read_id(&root, TARGET, &session.id)
        .unwrap_err();
    assert!(err.to_string().contains(KNOWN_MIGRATIONS[5]), "{err}");
}

#[test]
fn a_users_session_is_read_by_id_and_never_removed() {
    let (_dir, root) = store();
    let ours = create(&root, &conversation(1));
    // A session OpenCode made: the same rows under another id, no handle.
    let conn = db(&root);
    conn.execute_batch(&format!(
        "INSERT INTO session SELECT 'ses_users', project_id, workspace_id, parent_id, slug, directory, path, title, version, share_url, summary_additions, summary_deletions, summary_files, summary_diffs, metadata, cost, tokens_input, tokens_output, tokens_reasoning, tokens_cache_read, tokens_cache_write, revert, permission, agent, model, time_created, time_updated, time_compacting, time_archived FROM session WHERE id = '{0}';
         INSERT INTO message SELECT 'u' || id, 'ses_users', time_created, time_updated, data FROM message WHERE session_id = '{0}';
         INSERT INTO part SELECT 'u' || id, 'u' || message_id, 'ses_users', time_created, time_updated, data FROM part WHERE session_id = '{0}';",
        ours.id
    ))
    .unwrap();
    drop(conn);
    handoff_sdk::Comparison::default()
        .diff(&read(&root, &ours.id), &read(&root, "ses_users"))
        .unwrap();
    let users = OpencodePlugin
        .resumer()
        .resolve(&root, TARGET, "ses_users")
        .unwrap();
    assert!(!users.path.exists(), "a user's session has no handle");
    match OpencodePlugin.writer().remove(&root, &users) {
        Err(PluginError::NotOwned { .. }) => {}
        other => panic!("expected NotOwned, got {other:?}"),
    }
    let listed = OpencodePlugin.reader().list(&root, TARGET).unwrap();
    let owned: Vec<_> = listed
        .iter()
        .map(|s| (s.session.id.as_str(), s.owned))
        .collect();
    assert!(owned.contains(&("ses_users", false)) && owned.contains(&(ours.id.as_str(), true)));
    // Removing ours deletes exactly its rows and its handle.
    OpencodePlugin.writer().remove(&root, &ours).unwrap();
    let conn = db(&root);
    let count = |sql: &str| conn.query_row(sql, [], |r| r.get::<_, i64>(0)).unwrap();
    assert_eq!(count("SELECT count(*) FROM session"), 1);
    assert_eq!(
        count(&format!(
            "SELECT count(*) FROM part WHERE session_id = '{}'",
            ours.id
        )),
        0
    );
    assert!(count("SELECT count(*) FROM part WHERE session_id = 'ses_users'") > 0);
    assert!(!ours.path.exists());
    assert_eq!(
        read(&root, "ses_users").events.len(),
        conversation(1).events.len()
    );
}

#[test]
fn an_append_continues_the_session_in_order() {
    let (_dir, root) = store();
    let whole = conversation(3);
    let mut prefix = whole.clone();
    prefix.events.truncate(5);
    let session = create(&root, &prefix);
    OpencodePlugin
        .writer()
        .append(&root, &session, &whole.events[5..])
        .unwrap();
    let back = read(&root, &session.id);
    handoff_sdk::Comparison::default()
        .diff(&whole, &back)
        .unwrap();
}

#[test]
fn what_opencode_cannot_carry_fails_naming_the_event() {
    let (_dir, root) = store();
    let mut unanswered = conversation(1);
    unanswered.events.truncate(3); // the second call has no result
    let err = OpencodePlugin
        .writer()
        .create(&root, TARGET, &unanswered, &Default::default())
        .unwrap_err();
    assert!(err.to_string().contains("c0b"), "{err}");
    let mut swapped = conversation(1);
    swapped.events.swap(2, 3); // results out of the calls' order
    let err = OpencodePlugin
        .writer()
        .create(&root, TARGET, &swapped, &Default::default())
        .unwrap_err();
    assert!(err.to_string().contains("event 2 (r0b"), "{err}");
    // Nothing of either was left.
    let conn = db(&root);
    let sessions: i64 = conn
        .query_row("SELECT count(*) FROM session", [], |r| r.get(0))
        .unwrap();
    assert_eq!(sessions, 0);
    assert_eq!(
        std::fs::read_dir(root.path().join("handoff-sessions"))
            .unwrap()
            .count(),
        0
    );
}

#[test]
fn a_write_waits_for_a_running_opencodes_write_lock() {
    let (_dir, root) = store();
    create(&root, &conversation(1));
    // OpenCode in the middle of its own write transaction.
    let opencode = db(&root);
    opencode
        .execute_batch("BEGIN IMMEDIATE; UPDATE project SET time_updated = 1;")
        .unwrap();
    let holder = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(700));
        opencode.execute_batch("COMMIT").unwrap();
    });
    let start = Instant::now();
    let session = create(&root, &conversation(2));
    assert!(
        start.elapsed() >= Duration::from_millis(600),
        "did not wait: {:?}",
        start.elapsed()
    );
    holder.join().unwrap();
    let back: Transcript = read(&root, &session.id);
    assert_eq!(back.events.len(), conversation(2).events.len());
}

#[test]
fn timestamps_out_of_order_or_in_the_future_read_back_as_written() {
    let (_dir, root) = store();
    let mut transcript = conversation(2);
    // A clock that went back between turns, and one ahead of this machine's.
    let second = transcript.events[5].timestamp.millis();
    transcript.events[5].timestamp = handoff_sdk::Timestamp::from_millis(second - 3_600_000);
    let last = transcript.events.len() - 1;
    transcript.events[last].timestamp = handoff_sdk::Timestamp::from_millis(4_000_000_000_000);
    let session = create(&root, &transcript);
    handoff_sdk::Comparison::default()
        .diff(&transcript, &read(&root, &session.id))
        .unwrap();
    // The rows themselves are in order and not in the future.
    let conn = db(&root);
    let mut st = conn
        .prepare("SELECT time_created FROM message ORDER BY time_created, id")
        .unwrap();
    let times: Vec<i64> = st
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]));
    assert!(*times.last().unwrap() < 4_000_000_000_000);
}
