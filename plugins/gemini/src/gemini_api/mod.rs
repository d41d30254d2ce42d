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
    atomic, each_event, Body, Checked, Event, EventSink, New, Owned, PluginError, Result,
    ResumePlan, SessionInfo, SessionRef, StoreRoot, Stored, Target, TargetManifest, Timestamp,
    Transcript,
};

use crate::manifest::{GEMINI_API, PLUGIN_NAME};
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

/// The `gemini-api` target.
pub(crate) struct GeminiApi;

impl Target for GeminiApi {
    fn manifest(&self) -> TargetManifest {
        crate::manifest::api_target()
    }

    fn create(&self, new: New<'_>, transcript: &Transcript) -> Result<SessionRef> {
        let New { root, options } = new;
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

    /// The history's `x-handoff` member; a file that is not the one its id names is `NotFound`.
    fn owner(&self, session: Checked<'_>) -> Result<Option<OwnershipMarker>> {
        let file = load(path_of(session)?)?;
        Ok(file
            .marker
            .and_then(|m| serde_json::from_value::<OwnershipMarker>(m).ok()))
    }

    /// The whole history is rendered again and the file replaced whole.
    fn append(&self, session: Owned<'_>, events: &[Event]) -> Result<()> {
        let path = session.path.as_path();
        let file = load(path)?;
        let mut whole = read::transcript(path, &file)?;
        whole.events.extend_from_slice(events);
        whole.validate()?;
        let updated = write::session_file(&whole, file.marker.clone())?;
        let bytes = to_bytes(&updated);
        atomic::replace(path, |w| w.write_all(&bytes)).map_err(|e| PluginError::io(path, &e))?;
        Ok(())
    }

    fn read_each(&self, from: Stored<'_>, sink: EventSink<'_>) -> Result<Option<String>> {
        let path = match from {
            Stored::Session(session) => path_of(session)?,
            Stored::File(path) => path,
        };
        Ok(each_event(read::transcript(path, &load(path)?)?, sink))
    }

    /// The history's `handoff.cwd` (the history not built).
    fn cwd(&self, path: &Path) -> Result<Option<String>> {
        handoff_sdk::document_cwd(path)
    }

    /// Every history that parses (one that does not is no session of this target), newest first.
    fn list(&self, root: &StoreRoot) -> Result<Vec<SessionInfo>> {
        let mut files = layout::session_files(root)?;
        let mut markers = Vec::with_capacity(files.len());
        files.retain(|(_, path)| match load(path) {
            Ok(file) => {
                markers.push(file.marker);
                true
            }
            Err(_) => false,
        });
        let mut markers = markers.into_iter();
        Ok(handoff_sdk::sessions_newest_first(
            GEMINI_API,
            PLUGIN_NAME,
            files,
            |_| {
                markers
                    .next()
                    .flatten()
                    .and_then(|m| serde_json::from_value::<OwnershipMarker>(m).ok())
            },
        ))
    }

    /// The file of exactly this id; a missing one is `NotFound`.
    fn resolve(&self, root: &StoreRoot, id: &str) -> Result<SessionRef> {
        let not_found = || PluginError::NotFound {
            target: GEMINI_API.to_owned(),
            id: id.to_owned(),
            searched: root.path().to_owned(),
        };
        let path = layout::session_path(root, id).map_err(|_| not_found())?;
        handoff_sdk::session_at(GEMINI_API, id, path, root.path())
    }

    fn plan(&self, session: Checked<'_>, prompt: &str) -> Result<ResumePlan> {
        let path = path_of(session)?;
        plan(read::transcript(path, &load(path)?)?, prompt)
    }
}

/// The file of a session handed in (already checked inside the root), when it is the one its id
/// names.
fn path_of(session: Checked<'_>) -> Result<&Path> {
    let path = session.session().path.as_path();
    if layout::session_path(session.root(), &session.id)? != path {
        return Err(PluginError::NotFound {
            target: GEMINI_API.to_owned(),
            id: session.id.clone(),
            searched: path.to_owned(),
        });
    }
    Ok(path)
}

/// The next `generateContent` request: the history plus the new user turn, checked against G1–G7.
fn plan(mut transcript: Transcript, prompt: &str) -> Result<ResumePlan, PluginError> {
    let id = format!("prompt-{}", transcript.events.len());
    transcript
        .events
        .push(Event::new(id, Timestamp::now(), Body::user_text(prompt)));
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
