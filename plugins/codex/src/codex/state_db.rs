//! The thread row in Codex's state database (`<CODEX_HOME>/state_5.sqlite`, Codex 0.171.0).
//!
//! Measured with the real CLI: resuming by id finds a rollout without a row, but once the database
//! exists and its first backfill is done, `codex resume` / `--last` list threads from the database
//! only. So a session written here gets a row when the database exists (a row Codex's own reader
//! accepts: `history_mode = 'legacy'` means "read the rollout file"), and loses it on removal. When
//! the database does not exist yet, Codex builds it from the files on its first start, and nothing
//! is written.

use std::path::{Path, PathBuf};
use std::time::Duration;

use handoff_sdk::{PluginError, StoreRoot};
use rusqlite::{params, Connection, OpenFlags, OptionalExtension};

use crate::codex::records::{CLI_VERSION, ORIGINATOR, SOURCE};

/// The state database file of Codex 0.171.0.
pub const STATE_DB: &str = "state_5.sqlite";

/// What a thread row says.
pub struct ThreadRow<'a> {
    pub id: &'a str,
    pub rollout_path: &'a Path,
    pub created_ms: i64,
    pub updated_ms: i64,
    pub cwd: &'a str,
    pub model_provider: &'a str,
    pub first_user_message: &'a str,
    pub model: &'a str,
}

fn db_path(root: &StoreRoot) -> PathBuf {
    root.path().join(STATE_DB)
}

/// Opens the database if it exists and has a `threads` table.
fn open(root: &StoreRoot) -> Result<Option<Connection>, PluginError> {
    let path = db_path(root);
    if !path.is_file() {
        return Ok(None);
    }
    let error = |e: rusqlite::Error| PluginError::Other(format!("{}: {e}", path.display()));
    let conn =
        Connection::open_with_flags(&path, OpenFlags::SQLITE_OPEN_READ_WRITE).map_err(error)?;
    conn.busy_timeout(Duration::from_secs(5)).map_err(error)?;
    let has_threads: Option<String> = conn
        .query_row(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'threads'",
            [],
            |r| r.get(0),
        )
        .optional()
        .map_err(error)?;
    Ok(has_threads.map(|_| conn))
}

/// Registers (or refreshes) the row of a session. Returns whether a row was written.
pub fn register(root: &StoreRoot, row: &ThreadRow<'_>) -> Result<bool, PluginError> {
    let Some(conn) = open(root)? else {
        return Ok(false);
    };
    let path = db_path(root);
    let title: String = row.first_user_message.chars().take(200).collect();
    conn.execute(
        "INSERT INTO threads (id, rollout_path, created_at, updated_at, source, model_provider, cwd,
             title, sandbox_policy, approval_mode, has_user_event, cli_version, first_user_message,
             preview, model, created_at_ms, updated_at_ms, thread_source, history_mode, originator)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, '{\"type\":\"read-only\"}', 'on-request', ?9, ?10,
             ?11, ?8, ?12, ?13, ?14, 'user', 'legacy', ?15)
         ON CONFLICT(id) DO UPDATE SET updated_at = excluded.updated_at,
             updated_at_ms = excluded.updated_at_ms, recency_at = excluded.updated_at,
             recency_at_ms = excluded.updated_at_ms, has_user_event = excluded.has_user_event,
             title = CASE WHEN threads.title = '' THEN excluded.title ELSE threads.title END,
             preview = CASE WHEN threads.preview = '' THEN excluded.preview ELSE threads.preview END,
             first_user_message = CASE WHEN threads.first_user_message = ''
                 THEN excluded.first_user_message ELSE threads.first_user_message END",
        params![
            row.id,
            row.rollout_path.to_string_lossy(),
            row.created_ms.div_euclid(1000),
            row.updated_ms.div_euclid(1000),
            SOURCE,
            row.model_provider,
            row.cwd,
            title,
            !row.first_user_message.is_empty(),
            CLI_VERSION,
            row.first_user_message,
            row.model,
            row.created_ms,
            row.updated_ms,
            ORIGINATOR,
        ],
    )
    .map_err(|e| PluginError::Other(format!("{}: registering thread {}: {e}", path.display(), row.id)))?;
    Ok(true)
}

/// Removes the row of a session, if the database and the row exist.
pub fn unregister(root: &StoreRoot, id: &str) -> Result<(), PluginError> {
    let Some(conn) = open(root)? else {
        return Ok(());
    };
    conn.execute("DELETE FROM threads WHERE id = ?1", params![id])
        .map_err(|e| {
            PluginError::Other(format!(
                "{}: removing thread {id}: {e}",
                db_path(root).display()
            ))
        })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registers_and_unregisters_only_when_the_database_exists() {
        let tmp = tempfile::tempdir().unwrap();
        let root = StoreRoot::new(tmp.path()).unwrap();
        let row = ThreadRow {
            id: "t1",
            rollout_path: Path::new("/x/rollout.jsonl"),
            created_ms: 1_000,
            updated_ms: 2_000,
            cwd: "/p",
            model_provider: "openai",
            first_user_message: "hello",
            model: "gpt-5",
        };
        assert!(!register(&root, &row).unwrap());
        assert!(
            !tmp.path().join(STATE_DB).exists(),
            "never creates Codex's database"
        );
        let conn = Connection::open(tmp.path().join(STATE_DB)).unwrap();
        conn.execute_batch(include_str!("../../tests/state_5_threads.sql"))
            .unwrap();
        assert!(register(&root, &row).unwrap());
        assert!(register(
            &root,
            &ThreadRow {
                updated_ms: 3_000,
                ..row
            }
        )
        .unwrap());
        let (preview, updated): (String, i64) = conn
            .query_row(
                "SELECT preview, updated_at_ms FROM threads WHERE id='t1'",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        assert_eq!((preview.as_str(), updated), ("hello", 3_000));
        unregister(&root, "t1").unwrap();
        let n: i64 = conn
            .query_row("SELECT count(*) FROM threads", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 0);
    }
}
