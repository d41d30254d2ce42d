//! The `gemini-api` target: the stateless Gemini API, whose native store is its request history.
//! One JSON file per session, `<root>/<uuid>.json` (see `records`); resuming is the next
//! `generateContent` request: the whole history plus the new user turn.

mod layout;
mod read;
mod records;
mod write;

use std::path::Path;

use handoff_sdk::dialect::{gemini, Dialect};
use handoff_sdk::marker::OwnershipMarker;
use handoff_sdk::serde_json::{self, json, Value};
use handoff_sdk::{
    atomic, Body, CreateOptions, Event, Part, PluginError, ResumePlan, SessionInfo, SessionRef,
    StoreRoot, Timestamp, Transcript,
};

use crate::manifest::{target_manifest, GEMINI_API, PLUGIN_NAME};
use records::SessionFile;

fn marker_value(locator: Option<String>) -> Value {
    json!(OwnershipMarker {
        plugin: PLUGIN_NAME.to_owned(),
        locator
    })
}

fn to_bytes(file: &SessionFile) -> Vec<u8> {
    let mut bytes = serde_json::to_vec(file).expect("a session file serialises");
    bytes.push(b'\n');
    bytes
}

fn load(path: &Path) -> Result<SessionFile, PluginError> {
    let bytes = std::fs::read(path).map_err(|e| PluginError::io(path, &e))?;
    read::parse_file(path, &bytes)
}

fn checked(transcript: &Transcript) -> Result<(), PluginError> {
    transcript.validate()?;
    target_manifest(GEMINI_API).check_carried(transcript)
}

/// Creates a new session holding `transcript`.
pub(crate) fn create(
    root: &StoreRoot,
    transcript: &Transcript,
    options: &CreateOptions,
) -> Result<SessionRef, PluginError> {
    checked(transcript)?;
    let mut transcript = transcript.clone();
    if options.cwd.is_some() {
        transcript.cwd = options.cwd.clone();
    }
    let file = write::session_file(&transcript, Some(marker_value(options.locator.clone())))?;
    let id = uuid::Uuid::new_v4().to_string();
    let path = layout::session_path(root, &id)?;
    let bytes = to_bytes(&file);
    root.create_file(&path, |w| w.write_all(&bytes))?;
    Ok(SessionRef {
        target: GEMINI_API.to_owned(),
        id,
        path,
    })
}

fn owned(session: &SessionRef, file: &SessionFile) -> Result<(), PluginError> {
    let marker = file
        .marker
        .as_ref()
        .and_then(|m| serde_json::from_value::<OwnershipMarker>(m.clone()).ok());
    handoff_sdk::require_owned(&session.path, marker, PLUGIN_NAME).map(drop)
}

/// The file of a session handed in: this target's, inside the root, named by its id.
fn path_of<'a>(root: &StoreRoot, session: &'a SessionRef) -> Result<&'a Path, PluginError> {
    let path = session.check(root, GEMINI_API)?;
    if layout::session_path(root, &session.id)? != path {
        return Err(PluginError::NotFound {
            target: GEMINI_API.to_owned(),
            id: session.id.clone(),
            searched: path.to_owned(),
        });
    }
    Ok(path)
}

/// Appends `events`: the whole history is rendered again and the file replaced whole.
pub(crate) fn append(
    root: &StoreRoot,
    session: &SessionRef,
    events: &[Event],
) -> Result<SessionRef, PluginError> {
    let path = path_of(root, session)?;
    owned(session, &load(path)?)?;
    let _lock = handoff_sdk::session_lock(root, session)?;
    let file = load(path)?;
    owned(session, &file)?;
    let mut whole = read::transcript(path, &file)?;
    whole.events.extend_from_slice(events);
    checked(&whole)?;
    let updated = write::session_file(&whole, file.marker.clone())?;
    let bytes = to_bytes(&updated);
    atomic::replace(path, |w| w.write_all(&bytes)).map_err(|e| PluginError::io(path, &e))?;
    Ok(session.clone())
}

/// Removes a session this plugin wrote.
pub(crate) fn remove(root: &StoreRoot, session: &SessionRef) -> Result<(), PluginError> {
    let path = path_of(root, session)?;
    owned(session, &load(path)?)?;
    let _lock = handoff_sdk::session_lock(root, session)?;
    std::fs::remove_file(path).map_err(|e| PluginError::io(path, &e))
}

/// Reads `session`.
pub(crate) fn read(root: &StoreRoot, session: &SessionRef) -> Result<Transcript, PluginError> {
    let path = path_of(root, session)?;
    read_path(path)
}

/// Reads a session file.
pub(crate) fn read_path(path: &Path) -> Result<Transcript, PluginError> {
    read::transcript(path, &load(path)?)
}

/// Every session file, newest first.
pub(crate) fn list(root: &StoreRoot) -> Result<Vec<SessionInfo>, PluginError> {
    let mut sessions = Vec::new();
    for (id, path) in layout::session_files(root)? {
        let Ok(file) = load(&path) else { continue };
        let marker = file
            .marker
            .and_then(|m| serde_json::from_value::<OwnershipMarker>(m).ok())
            .filter(|m| m.plugin == PLUGIN_NAME);
        sessions.push(SessionInfo::of_file(GEMINI_API, &id, &path, marker));
    }
    SessionInfo::sort_newest_first(&mut sessions);
    Ok(sessions)
}

/// The file of exactly this id; a missing one is `NotFound`.
pub(crate) fn resolve(root: &StoreRoot, id: &str) -> Result<SessionRef, PluginError> {
    let not_found = || PluginError::NotFound {
        target: GEMINI_API.to_owned(),
        id: id.to_owned(),
        searched: root.path().to_owned(),
    };
    let path = layout::session_path(root, id).map_err(|_| not_found())?;
    if !path.is_file() {
        return Err(not_found());
    }
    Ok(SessionRef {
        target: GEMINI_API.to_owned(),
        id: id.to_owned(),
        path,
    })
}

/// The next `generateContent` request: the history plus the new user turn, checked against G1–G7.
pub(crate) fn plan(
    root: &StoreRoot,
    session: &SessionRef,
    prompt: &str,
) -> Result<ResumePlan, PluginError> {
    let mut transcript = read(root, session)?;
    let id = format!("prompt-{}", transcript.events.len());
    transcript.events.push(Event::new(
        id,
        Timestamp::now(),
        Body::User {
            content: vec![Part::text(prompt)],
        },
    ));
    let contents = gemini::render(&transcript, &write::options())
        .map_err(|e| PluginError::InvalidTranscript(e.to_string()))?;
    let body = json!({ "contents": contents });
    gemini::validate(&body)
        .map_err(|v| PluginError::InvalidTranscript(format!("the request breaks {v}")))?;
    Ok(ResumePlan::Request {
        dialect: Dialect::Gemini,
        body,
    })
}
