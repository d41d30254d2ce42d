//! OpenCode's database: where it is, the schema version it must have, how the plugin opens it.
//!
//! OpenCode keeps its applied migrations in the `migration` table (one row per migration id,
//! drizzle's names). This plugin knows exactly the migrations of OpenCode 1.18.33 (the tables
//! were renamed within the 1.18 line): a database with another one, or without one of them, is
//! refused naming it, before anything is read or written.

use std::path::{Path, PathBuf};
use std::time::Duration;

use handoff_sdk::PluginError;
use rusqlite::{Connection, OpenFlags};

/// The database file inside the store root.
pub const DB_FILE: &str = "opencode.db";

/// How long a statement waits for a lock another connection (a running OpenCode) holds:
/// OpenCode's own `busy_timeout`.
pub const BUSY_TIMEOUT: Duration = Duration::from_millis(5000);

/// The migration ids of OpenCode 1.18.33, oldest first (its `migration` table).
pub const KNOWN_MIGRATIONS: &[&str] = &[
    "20260127222353_familiar_lady_ursula",
    "20260211171708_add_project_commands",
    "20260213144116_wakeful_the_professor",
    "20260225215848_workspace",
    "20260227213759_add_session_workspace_id",
    "20260228203230_blue_harpoon",
    "20260303231226_add_workspace_fields",
    "20260309230000_move_org_to_state",
    "20260312043431_session_message_cursor",
    "20260323234822_events",
    "20260410174513_workspace-name",
    "20260413175956_chief_energizer",
    "20260423070820_add_icon_url_override",
    "20260427172553_slow_nightmare",
    "20260428004200_add_session_path",
    "20260501142318_next_venus",
    "20260504145000_add_sync_owner",
    "20260507164347_add_workspace_time",
    "20260510033149_session_usage",
    "20260511000411_data_migration_state",
    "20260511173437_session-metadata",
    "20260601010001_normalize_storage_paths",
    "20260601202201_amazing_prowler",
    "20260602002951_lowly_union_jack",
    "20260602182828_add_project_directories",
    "20260603001617_session_message_projection_indexes",
    "20260603040000_session_message_projection_order",
    "20260603141458_session_input_inbox",
    "20260603160727_jittery_ezekiel_stane",
    "20260604172448_event_sourced_session_input",
    "20260605003541_add_session_context_snapshot",
    "20260605042240_add_context_epoch_agent",
    "20260611035744_credential",
    "20260611192811_lush_chimera",
    "20260612174303_project_dir_strategy",
    "20260622142730_simplify_session_context_epoch",
    "20260622170816_reset_v2_session_state",
    "20260622202450_simplify_session_input",
];

/// The schema OpenCode 1.18.33 creates, read from a database it made.
const SCHEMA_SQL: &str = include_str!("schema-1.18.33.sql");

/// An error of the database at `path`.
pub fn db_error(path: &Path, error: rusqlite::Error) -> PluginError {
    PluginError::Io {
        path: path.to_owned(),
        message: format!("SQLite: {error}"),
    }
}

/// The store's database file.
pub fn db_path(root: &Path) -> PathBuf {
    root.join(DB_FILE)
}

fn configure(path: &Path, connection: &Connection) -> Result<(), PluginError> {
    connection
        .busy_timeout(BUSY_TIMEOUT)
        .map_err(|e| db_error(path, e))?;
    // Deletes of a session's rows reach its events, todos and shares as OpenCode's own do.
    connection
        .pragma_update(None, "foreign_keys", "ON")
        .map_err(|e| db_error(path, e))?;
    Ok(())
}

/// Opens an existing database for reading and checks its schema.
///
/// The connection is read-write but `query_only`: a read-only connection to a WAL database
/// cannot remove the `-wal` and `-shm` files it creates, and would leave them behind in a store
/// no OpenCode has open; this one, the last to close, removes them as OpenCode's own does.
pub fn open_read(path: &Path) -> Result<Connection, PluginError> {
    if !path.is_file() {
        return Err(PluginError::Io {
            path: path.to_owned(),
            message: "no OpenCode database here".into(),
        });
    }
    let connection = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| db_error(path, e))?;
    configure(path, &connection)?;
    connection
        .pragma_update(None, "query_only", "ON")
        .map_err(|e| db_error(path, e))?;
    check_schema(path, &connection)?;
    Ok(connection)
}

/// Opens the database for writing, creating it with OpenCode 1.18.33's schema when the file does
/// not exist yet or holds no table, and checks its schema.
pub fn open_write(path: &Path) -> Result<Connection, PluginError> {
    if let Some(folder) = path.parent() {
        std::fs::create_dir_all(folder).map_err(|e| PluginError::io(folder, &e))?;
    }
    let connection = Connection::open(path).map_err(|e| db_error(path, e))?;
    configure(path, &connection)?;
    // WAL is what OpenCode sets; a database it made is in WAL already (the mode is persistent).
    connection
        .pragma_update(None, "journal_mode", "WAL")
        .map_err(|e| db_error(path, e))?;
    // A writer never checkpoints: the WAL is folded into the file by OpenCode (or the next
    // reader), so the database file is never rewritten in place under a write of ours.
    connection
        .pragma_update(None, "wal_autocheckpoint", 0)
        .map_err(|e| db_error(path, e))?;
    let tables: i64 = connection
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table'",
            [],
            |row| row.get(0),
        )
        .map_err(|e| db_error(path, e))?;
    if tables == 0 {
        create_schema(path, &connection)?;
    }
    check_schema(path, &connection)?;
    Ok(connection)
}

fn create_schema(path: &Path, connection: &Connection) -> Result<(), PluginError> {
    let now = crate::ids::now_ms();
    let mut batch = String::from("BEGIN IMMEDIATE;\n");
    batch.push_str(SCHEMA_SQL);
    for id in KNOWN_MIGRATIONS {
        batch.push_str(&format!(
            "INSERT INTO migration (id, time_completed) VALUES ('{id}', {now});\n"
        ));
    }
    batch.push_str("COMMIT;\n");
    connection
        .execute_batch(&batch)
        .map_err(|e| db_error(path, e))
}

/// Refuses a database whose applied migrations are not exactly OpenCode 1.18.33's, naming the
/// first one that differs.
pub fn check_schema(path: &Path, connection: &Connection) -> Result<(), PluginError> {
    let refuse = |message: String| PluginError::Malformed {
        file: path.to_owned(),
        line: None,
        field: Some("migration".into()),
        message,
    };
    let has_table: i64 = connection
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'migration'",
            [],
            |row| row.get(0),
        )
        .map_err(|e| db_error(path, e))?;
    if has_table == 0 {
        return Err(refuse(
            "no `migration` table: not a database of OpenCode 1.18 (older releases kept \
             sessions as JSON files under storage/)"
                .into(),
        ));
    }
    let mut statement = connection
        .prepare("SELECT id FROM migration ORDER BY id")
        .map_err(|e| db_error(path, e))?;
    let applied: Vec<String> = statement
        .query_map([], |row| row.get(0))
        .map_err(|e| db_error(path, e))?
        .collect::<Result<_, _>>()
        .map_err(|e| db_error(path, e))?;
    if let Some(unknown) = applied
        .iter()
        .find(|id| !KNOWN_MIGRATIONS.contains(&id.as_str()))
    {
        return Err(refuse(format!(
            "schema migration {unknown:?} is unknown: this plugin reads and writes the schema \
             of OpenCode {} (its newest migration is {:?})",
            crate::OPENCODE_VERSION,
            KNOWN_MIGRATIONS[KNOWN_MIGRATIONS.len() - 1]
        )));
    }
    if let Some(missing) = KNOWN_MIGRATIONS
        .iter()
        .find(|id| !applied.iter().any(|a| a == *id))
    {
        return Err(refuse(format!(
            "schema migration {missing:?} of OpenCode {} has not been applied: an older \
             OpenCode made this database (run the pinned OpenCode once to migrate it)",
            crate::OPENCODE_VERSION
        )));
    }
    Ok(())
}
