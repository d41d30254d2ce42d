//! The OpenAI plugin of handoff, with two stateless API targets:
//!
//! - `openai-chat`: Chat Completions; the store is the request's `messages`;
//! - `openai-responses`: Responses; the store is the request's `input` items.
//!
//! A session is one JSON file, `<root>/<target>/<uuid>.json`, holding the provider's own request
//! history and, in a `handoff` member the API never sees, what the wire has no room for. Both
//! render, parse and validate through core's dialects (`handoff_sdk::dialect`), so the store, the
//! resume body and the checks agree. Resuming is the exact next request body: the history plus
//! the new user message, for the model the session used. Every mapping choice is in
//! `docs/formats/openai.md`.

#![deny(missing_docs)]

mod history;
mod manifest;
pub mod openai_chat;
pub mod openai_responses;

use std::path::Path;

use handoff_sdk::{
    CreateOptions, Event, Manifest, Plugin, PluginError, Reader, ResumePlan, Resumer, SessionInfo,
    SessionRef, StoreRoot, Transcript, Writer,
};

use history::ApiTarget;
pub use history::DEFAULT_MODEL;
pub use manifest::{manifest, PLUGIN_NAME};

/// The OpenAI plugin: both targets behind the capability traits.
#[derive(Clone, Copy, Debug, Default)]
pub struct OpenaiPlugin;

fn target(name: &str) -> Result<&'static ApiTarget, PluginError> {
    match name {
        openai_chat::NAME => Ok(&openai_chat::TARGET),
        openai_responses::NAME => Ok(&openai_responses::TARGET),
        _ => Err(PluginError::UnknownTarget {
            target: name.to_owned(),
        }),
    }
}

impl Plugin for OpenaiPlugin {
    fn manifest(&self) -> Manifest {
        manifest()
    }
    fn writer(&self) -> &dyn Writer {
        self
    }
    fn reader(&self) -> &dyn Reader {
        self
    }
    fn resumer(&self) -> &dyn Resumer {
        self
    }
}

impl Writer for OpenaiPlugin {
    fn create(
        &self,
        root: &StoreRoot,
        target_name: &str,
        transcript: &Transcript,
        options: &CreateOptions,
    ) -> Result<SessionRef, PluginError> {
        history::create(root, target(target_name)?, transcript, options)
    }

    fn append(
        &self,
        root: &StoreRoot,
        session: &SessionRef,
        events: &[Event],
    ) -> Result<SessionRef, PluginError> {
        history::append(root, target(&session.target)?, session, events)
    }

    fn remove(&self, root: &StoreRoot, session: &SessionRef) -> Result<(), PluginError> {
        history::remove(root, target(&session.target)?, session)
    }
}

impl Reader for OpenaiPlugin {
    fn read(&self, root: &StoreRoot, session: &SessionRef) -> Result<Transcript, PluginError> {
        let target = target(&session.target)?;
        history::read(target, session.check(root, target.name)?)
    }

    fn read_path(&self, target_name: &str, path: &Path) -> Result<Transcript, PluginError> {
        history::read(target(target_name)?, path)
    }

    /// The history's `handoff.cwd`, the history not built.
    fn read_path_cwd(&self, target_name: &str, path: &Path) -> Result<Option<String>, PluginError> {
        target(target_name)?;
        handoff_sdk::document_cwd(path)
    }

    fn list(&self, root: &StoreRoot, target_name: &str) -> Result<Vec<SessionInfo>, PluginError> {
        history::list(root, target(target_name)?)
    }
}

impl Resumer for OpenaiPlugin {
    fn resolve(
        &self,
        root: &StoreRoot,
        target_name: &str,
        id: &str,
    ) -> Result<SessionRef, PluginError> {
        history::resolve(root, target(target_name)?, id)
    }

    fn plan(
        &self,
        root: &StoreRoot,
        session: &SessionRef,
        prompt: &str,
    ) -> Result<ResumePlan, PluginError> {
        history::plan(root, target(&session.target)?, session, prompt)
    }
}

// Registers the plugin with a host that links this crate; `so/` exports it as a shared library.
handoff_sdk::register_builtin!(OpenaiPlugin);
