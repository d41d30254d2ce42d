//! The `reference` target: the canonical transcript as JSONL, `<root>/reference/<uuid>.jsonl`.
//!
//! Each operation is the contract in a few lines: check what is handed over
//! ([`SessionRef::check`]), take the session's writer lock before a change
//! ([`handoff_sdk::session_lock`]), refuse a session this plugin did not create
//! ([`handoff_sdk::require_owned`]), validate before anything touches the disk, and write whole
//! or nothing.

mod layout;
mod read;
mod records;
mod write;

use std::io::Read;
use std::path::{Path, PathBuf};

use handoff_sdk::marker::OwnershipMarker;
use handoff_sdk::{
    atomic, require_owned, session_lock, sessions_newest_first, CreateOptions, Event, GrowingRead,
    PluginError, ResumeCommand, ResumePlan, SessionInfo, SessionRef, StoreRoot, Transcript,
    WrittenFile,
};

use crate::manifest::{self, NAME};
use records::Header;

/// Creates a new session holding `transcript`, marked as this plugin's own.
pub(crate) fn create(
    root: &StoreRoot,
    transcript: &Transcript,
    options: &CreateOptions,
) -> Result<SessionRef, PluginError> {
    transcript.validate()?;
    manifest::target().check_carried(transcript)?;
    let id = uuid::Uuid::new_v4().to_string();
    let path = layout::session_path(root, &id)?;
    let header = Header::new(
        &id,
        options.cwd.clone().or_else(|| transcript.cwd.clone()),
        OwnershipMarker {
            plugin: NAME.into(),
            locator: options.locator.clone(),
        },
    );
    // Whole or nothing: no half-written file and no new empty folder on failure.
    root.create_file(&path, |out| {
        write::session(out, &header, &transcript.events)
    })?;
    Ok(SessionRef {
        target: NAME.into(),
        id,
        path,
    })
}

/// Appends `events` to a session this plugin created.
pub(crate) fn append(
    root: &StoreRoot,
    session: &SessionRef,
    events: &[Event],
) -> Result<SessionRef, PluginError> {
    let path = session.check(root, NAME)?;
    let _lock = session_lock(root, session)?;
    let (header, mut transcript) = read::file(path)?;
    require_owned(path, header.marker, NAME)?;
    transcript.events.extend_from_slice(events);
    transcript.validate()?;
    manifest::target().check_carried(&transcript)?;
    atomic::append(path, |out| write::events(out, events))
        .map_err(|e| PluginError::io(path, &e))?;
    Ok(session.clone())
}

/// Removes a session this plugin created; refuses any other.
pub(crate) fn remove(root: &StoreRoot, session: &SessionRef) -> Result<(), PluginError> {
    let path = session.check(root, NAME)?;
    let _lock = session_lock(root, session)?;
    let (header, _) = read::file(path)?;
    require_owned(path, header.marker, NAME)?;
    std::fs::remove_file(path).map_err(|e| PluginError::io(path, &e))
}

/// Reads a resolved session.
pub(crate) fn read(root: &StoreRoot, session: &SessionRef) -> Result<Transcript, PluginError> {
    read_path(session.check(root, NAME)?)
}

/// Reads a session file.
pub(crate) fn read_path(path: &Path) -> Result<Transcript, PluginError> {
    Ok(read::file(path)?.1)
}

/// Reads a session file its writer is still writing: its bytes as they come, then the whole.
pub(crate) fn read_written(file: &dyn WrittenFile) -> Result<Transcript, PluginError> {
    let mut bytes = Vec::new();
    GrowingRead::open(file)
        .and_then(|mut input| input.read_to_end(&mut bytes))
        .map_err(|e| PluginError::io(file.name(), &e))?;
    Ok(read::bytes(file.name(), &bytes)?.1)
}

/// Every session in the store, newest first; one that does not read is listed as not owned.
pub(crate) fn list(root: &StoreRoot) -> Result<Vec<SessionInfo>, PluginError> {
    let files = layout::session_files(root)?;
    Ok(sessions_newest_first(NAME, NAME, files, |path| {
        read::file(path).ok().and_then(|(header, _)| header.marker)
    }))
}

/// The session named exactly `id`.
pub(crate) fn resolve(root: &StoreRoot, id: &str) -> Result<SessionRef, PluginError> {
    let path = layout::session_path(root, id)?;
    if !path.is_file() {
        return Err(PluginError::NotFound {
            target: NAME.into(),
            id: id.into(),
            searched: layout::sessions_dir(root),
        });
    }
    Ok(SessionRef {
        target: NAME.into(),
        id: id.into(),
        path,
    })
}

/// A command that would resume the session (the reference store has no real CLI).
pub(crate) fn plan(
    root: &StoreRoot,
    session: &SessionRef,
    prompt: &str,
) -> Result<ResumePlan, PluginError> {
    let path = session.check(root, NAME)?;
    let (header, _) = read::file(path)?;
    Ok(ResumePlan::Command(ResumeCommand {
        program: "handoff-reference-agent".into(),
        args: vec![
            "--session".into(),
            path.display().to_string(),
            prompt.into(),
        ],
        env: Vec::new(),
        cwd: header.cwd.map(PathBuf::from),
        close_stdin: true,
        interactive_args: None,
    }))
}
