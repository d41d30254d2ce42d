//! The `opencode` target: a session is its rows in `<root>/opencode.db`.
//!
//! handoff's file model (a session is a file: the journal, the session lock and the suites act on
//! `SessionRef::path`) meets OpenCode's one database through a **handle**: every `SessionRef`
//! names `<root>/handoff-sessions/<session id>.json`. A session handoff created has that file,
//! written before the rows and holding the ownership marker (so no row of OpenCode's carries
//! handoff's data, and a user's rows are never touched); a user's session has none, is resolved
//! and read by its id all the same, and is never owned. The rows are written in one SQLite
//! transaction, so the host's journal, which acts on the handle, never needs to undo a byte of
//! the database.

use std::path::{Path, PathBuf};

use handoff_sdk::marker::OwnershipMarker;
use handoff_sdk::serde_json;
use handoff_sdk::stream_stop;
use handoff_sdk::{
    Checked, CreateOptions, Event, EventSink, EventStream, New, Owned, PluginError, Result,
    ResumeCommand, ResumePlan, SessionInfo, SessionRef, StoreRoot, Stored, Target, TargetManifest,
    Transcript,
};
use rusqlite::{params, Transaction};
use serde::{Deserialize, Serialize};

use crate::ids::{now_ms, Ids};
use crate::read::{self, session_row};
use crate::schema::{self, db_error, db_path};
use crate::spool;
use crate::write::{self, Rows};
use crate::{PLUGIN, TARGET};

/// The folder of the handles, inside the store root.
pub const HANDLES: &str = "handoff-sessions";

/// The `opencode` target.
pub struct Opencode;

/// A handle: which session of which database, and whose it is.
#[derive(Serialize, Deserialize)]
struct Handle {
    #[serde(rename = "x-handoff")]
    marker: Option<OwnershipMarker>,
    session: String,
    /// The database, relative to the store root.
    database: String,
}

fn not_found(path: &Path, id: &str) -> PluginError {
    PluginError::NotFound {
        target: TARGET.into(),
        id: id.to_owned(),
        searched: path.to_owned(),
    }
}

fn handle_path(root: &Path, id: &str) -> PathBuf {
    root.join(HANDLES).join(format!("{id}.json"))
}

/// The database a handle path belongs to: `<root>/opencode.db` for
/// `<root>/handoff-sessions/<id>.json`.
fn db_of(handle: &Path) -> PathBuf {
    let root = handle
        .parent()
        .and_then(Path::parent)
        .unwrap_or(Path::new("/"));
    db_path(root)
}

fn load_handle(path: &Path) -> Result<Handle, PluginError> {
    let bytes = std::fs::read(path).map_err(|e| PluginError::io(path, &e))?;
    let handle: Handle = serde_json::from_slice(&bytes).map_err(|e| PluginError::Malformed {
        file: path.to_owned(),
        line: Some(e.line()),
        field: None,
        message: e.to_string(),
    })?;
    let named = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    if handle.session != named || handle.database != schema::DB_FILE {
        return Err(PluginError::Malformed {
            file: path.to_owned(),
            line: None,
            field: Some("session".into()),
            message: format!(
                "the handle names session {:?} of {:?}, not {named:?} of {:?}",
                handle.session,
                handle.database,
                schema::DB_FILE
            ),
        });
    }
    Ok(handle)
}

/// The words of a prompt as `opencode run` arguments. OpenCode 1.18.33 joins its message
/// arguments with spaces and wraps each that holds a space in double quotes, so the prompt is
/// handed over split at its spaces: the join gives it back exactly.
fn prompt_words(prompt: &str) -> Result<Vec<String>, PluginError> {
    let refuse = |why: &str| {
        Err(PluginError::Other(format!(
            "OpenCode {} cannot be handed the prompt {prompt:?} exactly: {why}; reword it",
            crate::OPENCODE_VERSION
        )))
    };
    if prompt.trim().is_empty() {
        return refuse("it is empty");
    }
    let words: Vec<String> = prompt.split(' ').map(str::to_owned).collect();
    if words.iter().any(String::is_empty) {
        return refuse("it has a leading, trailing or double space, which its argument join loses");
    }
    if words.iter().any(|w| w.starts_with('-')) {
        return refuse("a word starts with '-' and would be read as an option");
    }
    Ok(words)
}

/// OpenCode's title of a session whose first user text is `text`: its first line, at most 50
/// characters.
fn title_of(text: Option<String>) -> String {
    let text = text.unwrap_or_else(|| "handoff session".into());
    let line = text.lines().next().unwrap_or("").trim();
    line.chars().take(50).collect::<String>()
}

/// A session about to be created: its row's directory, title and creation time.
struct NewSession {
    directory: String,
    title: String,
    created: i64,
}

impl NewSession {
    /// Creates the session: its handle, then its rows in one transaction, `rows` writing the
    /// messages. A failure removes the handle (the transaction is rolled back).
    fn create(
        self,
        root: &StoreRoot,
        options: &CreateOptions,
        rows: impl FnOnce(&Transaction<'_>, &mut Rows<'_>) -> Result<(), PluginError>,
    ) -> Result<SessionRef, PluginError> {
        let db = root.join(&[schema::DB_FILE])?;
        let mut connection = schema::open_write(&db)?;
        let id = Ids::new().descending("ses");
        let marker = OwnershipMarker {
            plugin: PLUGIN.into(),
            locator: options.locator.clone(),
        };
        // The handle first: a run killed after it leaves a handle of no session (listed
        // nowhere, removed with `remove`), never rows that no marker claims.
        let handle = root.join(&[HANDLES, &format!("{id}.json")])?;
        let document = Handle {
            marker: Some(marker),
            session: id.clone(),
            database: schema::DB_FILE.into(),
        };
        root.create_file(&handle, |out| {
            serde_json::to_writer_pretty(&mut *out, &document)?;
            out.write_all(b"\n")
        })?;
        let written = (|| {
            let tx = write::begin(&db, &mut connection)?;
            write::insert_session(&db, &tx, &id, &self.directory, &self.title, self.created)?;
            let mut messages = Rows::new(&db, &id, &self.directory, i64::MIN, None);
            rows(&tx, &mut messages)?;
            tx.commit().map_err(|e| db_error(&db, e))
        })();
        if let Err(e) = written {
            let _ = std::fs::remove_file(&handle);
            return Err(e);
        }
        Ok(SessionRef {
            target: TARGET.into(),
            id,
            path: handle,
        })
    }
}

impl Opencode {
    /// Reads a session, by its handle in the store or a file read directly (the database of one
    /// session, or a session's handle), event by event.
    fn read_each(
        &self,
        from: Stored<'_>,
        sink: &mut dyn FnMut(Event) -> bool,
    ) -> Result<read::Read, PluginError> {
        let (db, id) = match from {
            Stored::Session(session) => (db_path(session.root().path()), session.id.clone()),
            Stored::File(path)
                if path.file_name().and_then(|n| n.to_str()) == Some(schema::DB_FILE) =>
            {
                let connection = schema::open_read(path)?;
                (path.to_owned(), only_session(path, &connection)?)
            }
            Stored::File(path) => (db_of(path), load_handle(path)?.session),
        };
        let connection = schema::open_read(&db)?;
        read::each(&db, &connection, &id, sink)
    }
}

impl Target for Opencode {
    fn manifest(&self) -> TargetManifest {
        crate::manifest::target()
    }

    fn create(&self, new: New<'_>, transcript: &Transcript) -> Result<SessionRef> {
        let New { root, options } = new;
        let directory = new.cwd(transcript).unwrap_or("/").to_owned();
        let session = NewSession {
            directory,
            title: title_of(transcript.events.iter().find_map(spool::user_text)),
            created: transcript
                .events
                .first()
                .map_or_else(now_ms, |e| e.timestamp.millis()),
        };
        session.create(root, options, |tx, rows| {
            rows.write(tx, &transcript.events, 0)
        })
    }

    /// The events are spooled as they arrive (`spool`): the rows go in once the stream has
    /// ended, in one transaction, as `create` writes them.
    fn create_streamed(&self, new: New<'_>, events: &mut dyn EventStream) -> Result<SessionRef> {
        let New { root, options } = new;
        let Some((cwd, first)) = stream_stop::begin(events, options)? else {
            return self.create(new, events.whole()?);
        };
        let spooled = spool::spool(first, events)?;
        let session = NewSession {
            directory: cwd.to_owned(),
            title: title_of(spooled.title.clone()),
            created: spooled.first_ms,
        };
        session.create(root, options, |tx, rows| {
            spooled.each(|index, event| rows.push(tx, event, index))?;
            rows.finish()
        })
    }

    fn owner(&self, session: Checked<'_>) -> Result<Option<OwnershipMarker>> {
        if !session.path.is_file() {
            // A user's session: OpenCode made it, handoff holds no handle of it.
            return Ok(None);
        }
        Ok(load_handle(&session.path)?.marker)
    }

    fn append(&self, session: Owned<'_>, events: &[Event]) -> Result<()> {
        let path = &db_of(&session.path);
        let mut connection = schema::open_write(path)?;
        let tx = write::begin(path, &mut connection)?;
        // Read under the write lock: what the new events are checked against cannot change.
        let row =
            session_row(path, &tx, &session.id)?.ok_or_else(|| not_found(path, &session.id))?;
        if row.revert.as_ref().is_some_and(|r| !r.is_null()) {
            return Err(PluginError::Other(format!(
                "{}: session {} has a pending revert; OpenCode deletes the reverted messages at \
                 its next prompt, so nothing is appended after them",
                path.display(),
                session.id
            )));
        }
        // The session as OpenCode sends it, validated event by event; the new events go on
        // from there.
        let mut read = read::each(path, &tx, &session.id, &mut |_| true)?;
        let before = read.validator.checked();
        for event in events {
            read.validator.push(event)?;
        }
        let (last_time, last_user) = (read.last_time, read.last_user);
        let mut rows = Rows::new(path, &session.id, &row.directory, last_time, last_user);
        rows.write(&tx, events, before)?;
        tx.execute(
            "UPDATE session SET time_updated = ?1 WHERE id = ?2",
            params![now_ms(), session.id],
        )
        .map_err(|e| db_error(path, e))?;
        tx.commit().map_err(|e| db_error(path, e))?;
        Ok(())
    }

    fn remove(&self, session: Owned<'_>) -> Result<()> {
        let path = &db_of(&session.path);
        if path.is_file() {
            let mut connection = schema::open_write(path)?;
            let tx = write::begin(path, &mut connection)?;
            // Exactly this session's rows; its events, todos and shares go with it (ON DELETE
            // CASCADE), and the event log OpenCode keeps of it too.
            for statement in [
                "DELETE FROM part WHERE session_id = ?1",
                "DELETE FROM message WHERE session_id = ?1",
                "DELETE FROM event_sequence WHERE aggregate_id = ?1",
                "DELETE FROM session WHERE id = ?1",
            ] {
                tx.execute(statement, params![session.id])
                    .map_err(|e| db_error(path, e))?;
            }
            tx.commit().map_err(|e| db_error(path, e))?;
        }
        std::fs::remove_file(&session.path).map_err(|e| PluginError::io(&session.path, &e))
    }

    fn read_each(&self, from: Stored<'_>, sink: EventSink<'_>) -> Result<Option<String>> {
        Opencode::read_each(self, from, sink).map(|read| Some(read.cwd))
    }

    fn list(&self, root: &StoreRoot) -> Result<Vec<SessionInfo>> {
        let path = db_path(root.path());
        if !path.is_file() {
            return Ok(Vec::new());
        }
        let connection = schema::open_read(&path)?;
        let mut statement = connection
            .prepare(
                "SELECT id, title, directory, time_updated FROM session \
                 ORDER BY time_updated DESC, id",
            )
            .map_err(|e| db_error(&path, e))?;
        let rows: Vec<(String, String, String, i64)> = statement
            .query_map([], |row| {
                Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
            })
            .map_err(|e| db_error(&path, e))?
            .collect::<Result<_, _>>()
            .map_err(|e| db_error(&path, e))?;
        Ok(rows
            .into_iter()
            .map(|(id, title, directory, updated)| {
                let handle = handle_path(root.path(), &id);
                let marker = load_handle(&handle).ok().and_then(|h| h.marker);
                let marker = handoff_sdk::own_marker(marker, PLUGIN);
                SessionInfo {
                    session: SessionRef {
                        target: TARGET.into(),
                        id,
                        path: handle,
                    },
                    owned: marker.is_some(),
                    locator: marker.and_then(|m| m.locator),
                    updated_ms: updated,
                    title: Some(title),
                    cwd: Some(directory),
                    events: None,
                }
            })
            .collect())
    }

    fn resolve(&self, root: &StoreRoot, id: &str) -> Result<SessionRef> {
        let db = root.join(&[schema::DB_FILE])?;
        if !db.is_file() {
            return Err(not_found(&db, id));
        }
        let connection = schema::open_read(&db)?;
        session_row(&db, &connection, id)?.ok_or_else(|| not_found(&db, id))?;
        Ok(SessionRef {
            target: TARGET.into(),
            id: id.to_owned(),
            path: root.join(&[HANDLES, &format!("{id}.json")])?,
        })
    }

    fn plan(&self, session: Checked<'_>, prompt: &str) -> Result<ResumePlan> {
        let words = prompt_words(prompt)?;
        let db = db_of(&session.path);
        let connection = schema::open_read(&db)?;
        let row = session_row(&db, &connection, &session.id)?
            .ok_or_else(|| not_found(&db, &session.id))?;
        // `opencode --session <id>`: the same session in OpenCode's own terminal UI.
        let resume = vec!["--session".into(), session.id.clone()];
        let cwd = Some(PathBuf::from(row.directory));
        let command = ResumeCommand::new("opencode", resume, words, cwd)
            .headless_after(&["run"])
            .with_env("OPENCODE_DB", db.to_string_lossy());
        Ok(ResumePlan::Command(command))
    }
}

/// The one session of the database at `path`: a database names no session, so `read_path` of
/// the database itself reads it only when it holds exactly one.
fn only_session(path: &Path, connection: &rusqlite::Connection) -> Result<String, PluginError> {
    let mut statement = connection
        .prepare("SELECT id FROM session ORDER BY id LIMIT 2")
        .map_err(|e| db_error(path, e))?;
    let ids: Vec<String> = statement
        .query_map([], |row| row.get(0))
        .map_err(|e| db_error(path, e))?
        .collect::<Result<_, _>>()
        .map_err(|e| db_error(path, e))?;
    let refuse = |message: &str| PluginError::Malformed {
        file: path.to_owned(),
        line: None,
        field: Some("session".into()),
        message: message.into(),
    };
    match ids.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(refuse("the database holds no session")),
        _ => Err(refuse(
            "the database holds several sessions: read one by its id (or its handle)",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prompt_is_split_at_its_spaces_so_the_join_gives_it_back() {
        let words = prompt_words("reply with\tok\nnow").unwrap();
        assert_eq!(words, ["reply", "with\tok\nnow"]);
        assert_eq!(words.join(" "), "reply with\tok\nnow");
        for bad in ["", "  ", "two  spaces", " lead", "trail ", "a -flag"] {
            assert!(prompt_words(bad).is_err(), "{bad:?} accepted");
        }
    }
}
