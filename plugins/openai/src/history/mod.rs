//! The store both targets share: one JSON file per session holding the provider's own request
//! history (Chat Completions `messages`, Responses `input`) and, in a `handoff` member the API
//! never sees, what the wire has no room for. Targets differ only in their dialect and manifest
//! ([`ApiTarget`]).
//!
//! - [`layout`]: where files live, resolve, list, ownership;
//! - [`records`]: the file's shape and the `handoff` member;
//! - [`entries`]: the history parsed one entry at a time with core's dialect;
//! - [`place`]: where each canonical event's parts went (writing);
//! - [`read`]: file → transcript; [`write`]: transcript → file; [`plan`]: the next request.

mod entries;
mod layout;
mod place;
mod plan;
mod read;
mod records;
mod write;

use std::path::Path;

use handoff_sdk::dialect::Dialect;
use handoff_sdk::marker::OwnershipMarker;
use handoff_sdk::{
    each_event, Body, Checked, Event, EventSink, New, Owned, Result, ResumePlan, SessionInfo,
    SessionRef, StoreRoot, Stored, Target, TargetManifest, Transcript,
};

/// The model a body names when no turn of the transcript says which OpenAI model made it.
pub const DEFAULT_MODEL: &str = "gpt-5";

/// One stateless API target: its name (also its folder under the root), its wire, its manifest.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ApiTarget {
    pub name: &'static str,
    pub dialect: Dialect,
    pub manifest: fn() -> TargetManifest,
}

/// Both targets are this one store, told apart by their dialect and manifest.
impl Target for ApiTarget {
    fn manifest(&self) -> TargetManifest {
        (self.manifest)()
    }

    fn create(&self, new: New<'_>, transcript: &Transcript) -> Result<SessionRef> {
        let New { root, options } = new;
        write::create(root, self, transcript, options)
    }

    fn owner(&self, session: Checked<'_>) -> Result<Option<OwnershipMarker>> {
        layout::marker(&session.path)
    }

    fn append(&self, session: Owned<'_>, events: &[Event]) -> Result<()> {
        let marker = session.marker();
        write::append(self, &session, marker, events)
    }

    fn read_each(&self, from: Stored<'_>, sink: EventSink<'_>) -> Result<Option<String>> {
        Ok(each_event(read::read(self, from.path())?, sink))
    }

    /// The history's `handoff.cwd`, the history not built.
    fn cwd(&self, path: &Path) -> Result<Option<String>> {
        handoff_sdk::document_cwd(path)
    }

    fn list(&self, root: &StoreRoot) -> Result<Vec<SessionInfo>> {
        layout::list(root, self)
    }

    fn resolve(&self, root: &StoreRoot, id: &str) -> Result<SessionRef> {
        layout::resolve(root, self, id)
    }

    fn plan(&self, session: Checked<'_>, prompt: &str) -> Result<ResumePlan> {
        plan::plan(self, &session, prompt)
    }
}

/// The model the session used: that of the last assistant turn OpenAI made, else
/// [`DEFAULT_MODEL`].
pub(crate) fn session_model(transcript: &Transcript) -> &str {
    transcript
        .events
        .iter()
        .rev()
        .find_map(|e| match &e.body {
            Body::Assistant {
                origin: Some(origin),
                ..
            } if origin.provider == "openai" => origin.model.as_deref(),
            _ => None,
        })
        .unwrap_or(DEFAULT_MODEL)
}
