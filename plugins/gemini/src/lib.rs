//! handoff-gemini: the Gemini targets.
//!
//! - `gemini-cli`: Gemini CLI 0.61.0's JSONL chats, `<root>/tmp/<short id>/chats/session-….jsonl`,
//!   written so the CLI lists, keeps and resumes them (`gemini --resume <uuid>`), read with the
//!   CLI's own semantics (replacement by id, `$set`, `$rewindTo`, legacy `.json`).
//!
//! The facts behind every choice are in `docs/formats/gemini.md`.

pub mod gemini_cli;
pub mod manifest;

use std::path::Path;

use handoff_sdk::{
    CreateOptions, Event, Manifest, Plugin, PluginError, Reader, ResumePlan, Resumer, SessionInfo,
    SessionRef, StoreRoot, Transcript, Writer,
};

use manifest::GEMINI_CLI;

/// The gemini plugin.
#[derive(Clone, Copy, Debug, Default)]
pub struct GeminiPlugin;

enum Target {
    Cli,
}

fn target(name: &str) -> Result<Target, PluginError> {
    match name {
        GEMINI_CLI => Ok(Target::Cli),
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
        }
    }

    fn remove(&self, root: &StoreRoot, session: &SessionRef) -> Result<(), PluginError> {
        match target(&session.target)? {
            Target::Cli => gemini_cli::remove(root, session),
        }
    }
}

impl Reader for GeminiPlugin {
    fn read(&self, root: &StoreRoot, session: &SessionRef) -> Result<Transcript, PluginError> {
        match target(&session.target)? {
            Target::Cli => gemini_cli::read(root, session),
        }
    }

    fn read_path(&self, target_name: &str, path: &Path) -> Result<Transcript, PluginError> {
        match target(target_name)? {
            Target::Cli => gemini_cli::read_path(path),
        }
    }

    fn list(&self, root: &StoreRoot, target_name: &str) -> Result<Vec<SessionInfo>, PluginError> {
        match target(target_name)? {
            Target::Cli => gemini_cli::list(root),
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
        }
    }
}

handoff_sdk::register_builtin!(GeminiPlugin);
