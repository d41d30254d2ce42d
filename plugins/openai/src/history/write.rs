//! Canonical transcript → session file, whole or nothing.
//!
//! The history is rendered by core's dialect (thinking kept only from the providers the target's
//! comparison keeps) and checked against the provider's rules as a stored history; `handoff.events`
//! places every event in it ([`super::place`]); and before anything is written the file is read
//! back in memory and compared with the transcript, so a session that would not read back as
//! written is refused, naming the first difference.

use std::io::Write;

use handoff_sdk::atomic;
use handoff_sdk::dialect::RenderOptions;
use handoff_sdk::marker::{OwnershipMarker, MARKER_KEY};
use handoff_sdk::serde_json::{self, Map, Value};
use handoff_sdk::{CreateOptions, Event, PluginError, SessionRef, StoreRoot, Transcript};

use super::entries::parse_entries;
use super::layout::{load, session_path};
use super::place::place;
use super::read::{assemble, from_map};
use super::records::{Meta, EXTRAS_KEY};
use super::{session_model, ApiTarget};

/// The file body for `transcript` (without the marker): `model`, the history, `handoff`.
pub(crate) fn render_file(
    target: &ApiTarget,
    transcript: &Transcript,
) -> Result<Map<String, Value>, PluginError> {
    let manifest = (target.manifest)();
    let dialect = target.dialect;
    let options = RenderOptions {
        thinking_from: Some(manifest.thinking_from.clone()),
        ..RenderOptions::default()
    };
    let history = dialect
        .render_history(transcript, &options)
        .map_err(|e| PluginError::InvalidTranscript(format!("{}: {e}", target.name)))?;
    let field = dialect.history_field();
    let mut body = Map::new();
    body.insert("model".into(), Value::from(session_model(transcript)));
    body.insert(field.into(), Value::Array(history));
    let body = Value::Object(body);
    dialect.validate_history(&body).map_err(|v| {
        PluginError::InvalidTranscript(format!(
            "{}: the provider would reject this history: {v}",
            target.name
        ))
    })?;
    let Value::Object(mut body) = body else {
        unreachable!("built as an object")
    };
    let history = body[field].as_array().expect("inserted as an array");
    let entries = parse_entries(dialect, history.iter().cloned()).map_err(|(path, m)| {
        PluginError::InvalidTranscript(format!(
            "{}: the rendered history does not parse back: {path}: {m}",
            target.name
        ))
    })?;
    let keeps =
        |maker: Option<&str>| maker.is_some_and(|m| manifest.thinking_from.iter().any(|p| p == m));
    let events = place(target.name, transcript, &entries, &keeps)?;
    let meta = Meta {
        cwd: transcript.cwd.clone(),
        events,
    };
    let back = assemble(target, entries, meta.clone())
        .map_err(|(f, m)| PluginError::InvalidTranscript(format!("{}: {f}: {m}", target.name)))?;
    manifest.comparison().diff(transcript, &back).map_err(|d| {
        PluginError::InvalidTranscript(format!(
            "{} cannot hold this transcript exactly: read back, {d}",
            target.name
        ))
    })?;
    body.insert(
        EXTRAS_KEY.into(),
        serde_json::to_value(meta).map_err(|e| PluginError::Other(e.to_string()))?,
    );
    Ok(body)
}

/// One line of JSON: the marker first, then the body.
fn write_file(
    out: &mut dyn Write,
    marker: &OwnershipMarker,
    body: Map<String, Value>,
) -> std::io::Result<()> {
    let mut file = Map::with_capacity(body.len() + 1);
    file.insert(
        MARKER_KEY.into(),
        serde_json::to_value(marker).map_err(std::io::Error::other)?,
    );
    file.extend(body);
    serde_json::to_writer(&mut *out, &file).map_err(std::io::Error::other)?;
    out.write_all(b"\n")
}

/// Creates a new session holding `transcript`; refused before anything is written when the
/// target cannot hold it exactly.
pub(crate) fn create(
    root: &StoreRoot,
    target: &ApiTarget,
    transcript: &Transcript,
    options: &CreateOptions,
) -> Result<SessionRef, PluginError> {
    let mut transcript = std::borrow::Cow::Borrowed(transcript);
    if let Some(cwd) = &options.cwd {
        transcript.to_mut().cwd = Some(cwd.clone());
    }
    let body = render_file(target, &transcript)?;
    let id = uuid::Uuid::new_v4().to_string();
    let path = session_path(root, target, &id)?;
    let marker = OwnershipMarker {
        plugin: crate::manifest::PLUGIN_NAME.to_owned(),
        locator: options.locator.clone(),
    };
    root.create_file(&path, |out| write_file(out, &marker, body))?;
    Ok(SessionRef {
        target: target.name.to_owned(),
        id,
        path,
    })
}

/// Appends `events` to the session (marked `marker`): the whole history is rendered again and
/// atomically replaces the file.
pub(crate) fn append(
    target: &ApiTarget,
    session: &SessionRef,
    marker: &OwnershipMarker,
    events: &[Event],
) -> Result<(), PluginError> {
    let mut whole = from_map(target, &session.path, load(&session.path)?)?;
    whole.events.extend_from_slice(events);
    whole.validate()?;
    let body = render_file(target, &whole)?;
    atomic::replace(&session.path, |out| write_file(out, marker, body))
        .map_err(|e| PluginError::io(&session.path, &e))?;
    Ok(())
}
