//! The `anthropic-messages` target: the stateless Messages API, whose native store is its request
//! history, one JSON file per session at `<root>/anthropic-messages/<uuid>.json`.
//!
//! `messages` is exactly what is sent; what no message can hold (event ids, timestamps, authors,
//! origins, where merged turns begin and end) is in the separate `handoff` member ([`records`]).
//! Resuming is the next request: the history plus the new user message.

mod layout;
mod read;
mod records;
mod write;

use std::path::Path;

use handoff_sdk::atomic;
use handoff_sdk::dialect::anthropic::validate;
use handoff_sdk::marker::{OwnershipMarker, MARKER_KEY};
use handoff_sdk::serde_json::{json, Value};
use handoff_sdk::{
    require_owned, session_lock, sessions_newest_first, CreateOptions, Event, PluginError,
    ResumePlan, SessionInfo, SessionRef, StoreRoot, Transcript,
};

use crate::extras::EXTRAS_KEY;
use crate::manifest::{MESSAGES, PLUGIN_NAME};
use read::{bad, load, parse_store};
use write::{render_store, write_body};

/// Creates a new history file holding `transcript`.
pub(crate) fn create(
    root: &StoreRoot,
    transcript: &Transcript,
    options: &CreateOptions,
) -> Result<SessionRef, PluginError> {
    let mut transcript = std::borrow::Cow::Borrowed(transcript);
    if let Some(cwd) = &options.cwd {
        transcript.to_mut().cwd = Some(cwd.clone());
    }
    let body = render_store(&transcript)?;
    let id = uuid::Uuid::new_v4().to_string();
    let path = layout::session_path(root, &id)?;
    let marker = OwnershipMarker {
        plugin: PLUGIN_NAME.to_owned(),
        locator: options.locator.clone(),
    };
    root.create_file(&path, |out| write_body(out, &marker, &body))?;
    Ok(SessionRef {
        target: MESSAGES.to_owned(),
        id,
        path,
    })
}

/// Appends `events`: the whole history is rendered again and replaces the file atomically.
pub(crate) fn append(
    root: &StoreRoot,
    session: &SessionRef,
    events: &[Event],
) -> Result<SessionRef, PluginError> {
    let path = session.check(root, MESSAGES)?;
    let _lock = session_lock(root, session)?;
    let map = load(path)?;
    let marker = require_owned(path, read::marker(&map), PLUGIN_NAME)?;
    let mut whole = parse_store(path, map)?;
    whole.events.extend_from_slice(events);
    let body = render_store(&whole)?;
    atomic::replace(path, |out| write_body(out, &marker, &body))
        .map_err(|e| PluginError::io(path, &e))?;
    Ok(session.clone())
}

/// Removes a history this plugin made; refuses any other.
pub(crate) fn remove(root: &StoreRoot, session: &SessionRef) -> Result<(), PluginError> {
    let path = session.check(root, MESSAGES)?;
    let _lock = session_lock(root, session)?;
    require_owned(path, read::marker(&load(path)?), PLUGIN_NAME)?;
    std::fs::remove_file(path).map_err(|e| PluginError::io(path, &e))
}

/// The history file named exactly `id`.
pub(crate) fn resolve(root: &StoreRoot, id: &str) -> Result<SessionRef, PluginError> {
    let path = layout::session_path(root, id)?;
    if !path.is_file() {
        return Err(PluginError::NotFound {
            target: MESSAGES.to_owned(),
            id: id.to_owned(),
            searched: layout::sessions_dir(root),
        });
    }
    Ok(SessionRef {
        target: MESSAGES.to_owned(),
        id: id.to_owned(),
        path,
    })
}

/// Reads a resolved history.
pub(crate) fn read(root: &StoreRoot, session: &SessionRef) -> Result<Transcript, PluginError> {
    read_path(session.check(root, MESSAGES)?)
}

/// Reads a history file.
pub(crate) fn read_path(path: &Path) -> Result<Transcript, PluginError> {
    parse_store(path, load(path)?)
}

/// Every history in the store, newest first (the marker read without building the document).
pub(crate) fn list(root: &StoreRoot) -> Result<Vec<SessionInfo>, PluginError> {
    let files = layout::session_files(root)?;
    Ok(sessions_newest_first(
        MESSAGES,
        PLUGIN_NAME,
        files,
        handoff_sdk::document_marker,
    ))
}

/// The next request: the stored history plus `prompt` as a user message (merged into a trailing
/// user message, after its tool results), validated against A1–A15.
pub(crate) fn plan(
    root: &StoreRoot,
    session: &SessionRef,
    prompt: &str,
) -> Result<ResumePlan, PluginError> {
    let path = session.check(root, MESSAGES)?;
    let mut map = load(path)?;
    // Reading first proves the history is whole and ours to interpret.
    parse_store(path, map.clone())?;
    map.shift_remove(MARKER_KEY);
    map.shift_remove(EXTRAS_KEY);
    let Some(Value::Array(messages)) = map.get_mut("messages") else {
        return Err(bad(path, "messages".into(), "missing or not an array"));
    };
    let text = json!({"type": "text", "text": prompt});
    match messages.last_mut() {
        Some(last) if last["role"] == "user" => match last.get_mut("content") {
            Some(Value::Array(blocks)) => blocks.push(text),
            Some(content) => {
                let previous = std::mem::take(content);
                *content = json!([{"type": "text", "text": previous}, text]);
            }
            None => return Err(bad(path, "messages[-1].content".into(), "missing")),
        },
        _ => messages.push(json!({"role": "user", "content": [text]})),
    }
    let body = Value::Object(map);
    validate(&body).map_err(|v| {
        PluginError::Other(format!(
            "{}: the next request would be rejected: {v}",
            path.display()
        ))
    })?;
    Ok(ResumePlan::Request {
        dialect: handoff_sdk::dialect::Dialect::AnthropicMessages,
        body,
    })
}
