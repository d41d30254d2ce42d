//! handoff-gemini: the Gemini targets.
//!
//! - `gemini-cli`: Gemini CLI 0.61.0's JSONL chats, `<root>/tmp/<short id>/chats/session-….jsonl`,
//!   written so the CLI lists, keeps and resumes them (`gemini --resume <uuid>`), read with the
//!   CLI's own semantics (replacement by id, `$set`, `$rewindTo`, legacy `.json`).
//!
//! - `gemini-api`: the stateless generateContent history, one JSON file per session holding its
//!   `contents` (rendered and read by core's Gemini dialect); resuming is the next request body.
//!
//! The facts behind every choice are in `docs/formats/gemini.md`.

#![deny(missing_docs)]

pub mod gemini_api;
pub mod gemini_cli;
pub mod manifest;

use std::path::Path;

use handoff_sdk::{
    CreateOptions, Event, Manifest, Plugin, PluginError, Reader, ResumePlan, Resumer, SessionInfo,
    SessionRef, StoreRoot, Transcript, Writer,
};

use manifest::{GEMINI_API, GEMINI_CLI};

/// The gemini plugin.
#[derive(Clone, Copy, Debug, Default)]
pub struct GeminiPlugin;

enum Target {
    Cli,
    Api,
}

fn target(name: &str) -> Result<Target, PluginError> {
    match name {
        GEMINI_CLI => Ok(Target::Cli),
        GEMINI_API => Ok(Target::Api),
        other => Err(PluginError::UnknownTarget {
            target: other.to_owned(),
        }),
    }
}

impl Plugin for GeminiPlugin {
    fn manifest(&self) -> Manifest {
        manifest::manifest()
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

impl Writer for GeminiPlugin {
    fn create(
        &self,
        root: &StoreRoot,
        target_name: &str,
        transcript: &Transcript,
        options: &CreateOptions,
    ) -> Result<SessionRef, PluginError> {
        match target(target_name)? {
            Target::Cli => gemini_cli::create(root, transcript, options),
            Target::Api => gemini_api::create(root, transcript, options),
        }
    }

    fn append(
        &self,
        root: &StoreRoot,
        session: &SessionRef,
        events: &[Event],
    ) -> Result<SessionRef, PluginError> {
        match target(&session.target)? {
            Target::Cli => gemini_cli::append(root, session, events),
            Target::Api => gemini_api::append(root, session, events),
        }
    }

    fn remove(&self, root: &StoreRoot, session: &SessionRef) -> Result<(), PluginError> {
        match target(&session.target)? {
            Target::Cli => gemini_cli::remove(root, session),
            Target::Api => gemini_api::remove(root, session),
        }
    }
}

impl Reader for GeminiPlugin {
    fn read(&self, root: &StoreRoot, session: &SessionRef) -> Result<Transcript, PluginError> {
        match target(&session.target)? {
            Target::Cli => gemini_cli::read(root, session),
            Target::Api => gemini_api::read(root, session),
        }
    }

    fn read_path(&self, target_name: &str, path: &Path) -> Result<Transcript, PluginError> {
        match target(target_name)? {
            Target::Cli => gemini_cli::read_path(path),
            Target::Api => gemini_api::read_path(path),
        }
    }

    /// Gemini CLI: the project folder's `.project_root`, as `read_path` finds it (no chat read);
    /// the Gemini API: the history's `handoff.cwd` (the history not built).
    fn read_path_cwd(&self, target_name: &str, path: &Path) -> Result<Option<String>, PluginError> {
        match target(target_name)? {
            Target::Cli => Ok(gemini_cli::read_path_cwd(path)),
            Target::Api => handoff_sdk::document_cwd(path),
        }
    }

    fn list(&self, root: &StoreRoot, target_name: &str) -> Result<Vec<SessionInfo>, PluginError> {
        match target(target_name)? {
            Target::Cli => gemini_cli::list(root),
            Target::Api => gemini_api::list(root),
        }
    }
}

impl Resumer for GeminiPlugin {
    fn resolve(
        &self,
        root: &StoreRoot,
        target_name: &str,
        id: &str,
    ) -> Result<SessionRef, PluginError> {
        match target(target_name)? {
            Target::Cli => gemini_cli::resolve(root, id),
            Target::Api => gemini_api::resolve(root, id),
        }
    }

    fn plan(
        &self,
        root: &StoreRoot,
        session: &SessionRef,
        prompt: &str,
    ) -> Result<ResumePlan, PluginError> {
        match target(&session.target)? {
            Target::Cli => gemini_cli::plan(root, session, prompt),
            Target::Api => gemini_api::plan(root, session, prompt),
        }
    }
}

handoff_sdk::register_builtin!(GeminiPlugin);
