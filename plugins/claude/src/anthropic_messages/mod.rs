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
    each_event, sessions_newest_first, Checked, Event, EventSink, New, Owned, PluginError, Result,
    ResumePlan, SessionInfo, SessionRef, StoreRoot, Stored, Target, TargetManifest, Transcript,
};

use crate::extras::EXTRAS_KEY;
use crate::manifest::{MESSAGES, PLUGIN_NAME};
use read::{bad, load, parse_store};
use write::{render_store, write_body};

/// The `anthropic-messages` target.
pub(crate) struct AnthropicMessages;

impl Target for AnthropicMessages {
    fn manifest(&self) -> TargetManifest {
        crate::manifest::messages()
    }

    fn create(&self, new: New<'_>, transcript: &Transcript) -> Result<SessionRef> {
        let New { root, options } = new;
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

    /// The history's `x-handoff` member; a file that is no JSON object is `Malformed`.
    fn owner(&self, session: Checked<'_>) -> Result<Option<OwnershipMarker>> {
        Ok(read::marker(&load(&session.path)?))
    }

    /// The whole history is rendered again and replaces the file atomically.
    fn append(&self, session: Owned<'_>, events: &[Event]) -> Result<()> {
        let marker = session.marker();
        let path = session.path.as_path();
        let mut whole = parse_store(path, load(path)?)?;
        whole.events.extend_from_slice(events);
        whole.validate()?;
        let body = render_store(&whole)?;
        atomic::replace(path, |out| write_body(out, marker, &body))
            .map_err(|e| PluginError::io(path, &e))?;
        Ok(())
    }

    fn read_each(&self, from: Stored<'_>, sink: EventSink<'_>) -> Result<Option<String>> {
        let path = from.path();
        Ok(each_event(parse_store(path, load(path)?)?, sink))
    }

    /// The history's `handoff.cwd`, the history not built.
    fn cwd(&self, path: &Path) -> Result<Option<String>> {
        handoff_sdk::document_cwd(path)
    }

    /// Every history in the store, newest first (the marker read without building the document).
    fn list(&self, root: &StoreRoot) -> Result<Vec<SessionInfo>> {
        let files = layout::session_files(root)?;
        Ok(sessions_newest_first(
            MESSAGES,
            PLUGIN_NAME,
            files,
            handoff_sdk::document_marker,
        ))
    }

    /// The history file named exactly `id`.
    fn resolve(&self, root: &StoreRoot, id: &str) -> Result<SessionRef> {
        let path = layout::session_path(root, id)?;
        handoff_sdk::session_at(MESSAGES, id, path, &layout::sessions_dir(root))
    }

    fn plan(&self, session: Checked<'_>, prompt: &str) -> Result<ResumePlan> {
        plan(&session.path, prompt)
    }
}

/// The next request: the stored history plus `prompt` as a user message (merged into a trailing
/// user message, after its tool results), validated against A1–A15.
fn plan(path: &Path, prompt: &str) -> Result<ResumePlan, PluginError> {
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
