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

use handoff_sdk::dialect::Dialect;
use handoff_sdk::{Body, TargetManifest, Transcript};

pub(crate) use layout::{list, resolve};
pub(crate) use plan::plan;
pub(crate) use read::read;
pub(crate) use write::{append, create, remove};

/// The model a body names when no turn of the transcript says which OpenAI model made it.
pub const DEFAULT_MODEL: &str = "gpt-5";

/// One stateless API target: its name (also its folder under the root), its wire, its manifest.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ApiTarget {
    pub name: &'static str,
    pub dialect: Dialect,
    pub manifest: fn() -> TargetManifest,
}

impl ApiTarget {
    pub(crate) fn manifest(&self) -> TargetManifest {
        (self.manifest)()
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
