//! handoff-codex: the `codex` target, the rollout JSONL store of the Codex CLI 0.171.0.
//!
//! A session is `<root>/sessions/YYYY/MM/DD/rollout-<local time>-<uuid>.jsonl` where `<root>` is
//! `CODEX_HOME`. The writer produces what the real CLI needs to list, draw and resume it (a
//! `session_meta`, per turn `task_started` + `turn_context`, the `response_item`s the model sees,
//! the `event_msg` copies the UI draws, `task_complete`), and registers the thread in Codex's state
//! database when it exists. Canonical fields Codex has no place for (event ids, authors, origins,
//! the error flag of a tool result) ride in an `x-handoff-event` member that Codex ignores and
//! never sends to the model. Every mapping choice is in `docs/formats/codex.md`.
//!
//! The crate has the shape every plugin crate has (`docs/plugin-authoring.md`): this file is the
//! plugin and its dispatch; `manifest.rs` is what it declares; `codex/` is the target (`mod.rs`
//! over `layout`, `records`, `read` and `write`, plus what only Codex has: `state_db`, `config`,
//! `time`, `live`).
#![deny(missing_docs)]

mod codex;
mod manifest;

use std::path::Path;

use handoff_sdk::{
    CreateOptions, Event, EventStream, Manifest, Plugin, PluginError, Reader, ResumePlan, Resumer,
    SessionInfo, SessionRef, StoreRoot, TargetManifest, Transcript, Writer, WrittenFile,
};

pub use codex::image_part;
pub(crate) use manifest::THINKING_PROVIDER;
pub use manifest::{manifest, PLUGIN, TARGET};

/// The Codex plugin.
#[derive(Clone, Copy, Debug, Default)]
pub struct CodexPlugin;

impl CodexPlugin {
    /// The plugin.
    pub fn new() -> Self {
        CodexPlugin
    }

    /// The manifest of the `codex` target.
    pub fn target_manifest() -> TargetManifest {
        manifest::target_manifest()
    }
}

/// Refuses a target this plugin does not offer.
fn check_target(target: &str) -> Result<(), PluginError> {
    if target == TARGET {
        Ok(())
    } else {
        Err(PluginError::UnknownTarget {
            target: target.to_owned(),
        })
    }
}

impl Plugin for CodexPlugin {
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

impl Writer for CodexPlugin {
    fn create(
        &self,
        root: &StoreRoot,
        target: &str,
        transcript: &Transcript,
        options: &CreateOptions,
    ) -> Result<SessionRef, PluginError> {
        check_target(target)?;
        codex::create(root, transcript, options)
    }

    fn append(
        &self,
        root: &StoreRoot,
        session: &SessionRef,
        events: &[Event],
    ) -> Result<SessionRef, PluginError> {
        check_target(&session.target)?;
        codex::append(root, session, events)
    }

    fn remove(&self, root: &StoreRoot, session: &SessionRef) -> Result<(), PluginError> {
        check_target(&session.target)?;
        codex::remove(root, session)
    }

    /// Writes each event as it arrives; see [`codex::create_streamed`].
    fn create_streamed(
        &self,
        root: &StoreRoot,
        target: &str,
        events: &mut dyn EventStream,
        options: &CreateOptions,
    ) -> Result<SessionRef, PluginError> {
        check_target(target)?;
        codex::create_streamed(root, events, options)
    }
}

impl Reader for CodexPlugin {
    fn read(&self, root: &StoreRoot, session: &SessionRef) -> Result<Transcript, PluginError> {
        check_target(&session.target)?;
        codex::read(root, session)
    }

    fn read_path(&self, target: &str, path: &Path) -> Result<Transcript, PluginError> {
        check_target(target)?;
        codex::read_path(path)
    }

    /// Streams the rollout: each event goes to `sink` as soon as no later line can change it, so
    /// the continuation engine verifies a long session without a second copy of it in memory.
    fn read_each(
        &self,
        root: &StoreRoot,
        session: &SessionRef,
        sink: &mut dyn FnMut(Event) -> bool,
    ) -> Result<(), PluginError> {
        check_target(&session.target)?;
        codex::read_each(root, session, sink)
    }

    /// The `session_meta` line's cwd, the first line only.
    fn read_path_cwd(&self, target: &str, path: &Path) -> Result<Option<String>, PluginError> {
        check_target(target)?;
        codex::read_path_cwd(path)
    }

    /// Streams the rollout as [`Reader::read_path`] reads it (as Codex sends it on resume).
    fn read_path_each(
        &self,
        target: &str,
        path: &Path,
        sink: &mut dyn FnMut(Event) -> bool,
    ) -> Result<(), PluginError> {
        check_target(target)?;
        codex::read_path_each(path, sink)
    }

    /// Streams the rollout as its writer writes it (the continuation engine's verify).
    fn read_written_each(
        &self,
        target: &str,
        file: &dyn WrittenFile,
        sink: &mut dyn FnMut(Event) -> bool,
    ) -> Result<bool, PluginError> {
        check_target(target)?;
        codex::read_written_each(file, sink)?;
        Ok(true)
    }

    fn list(&self, root: &StoreRoot, target: &str) -> Result<Vec<SessionInfo>, PluginError> {
        check_target(target)?;
        codex::list(root)
    }

    /// Reads headers newest first and stops at the first of ours with this locator: in a store of
    /// thousands of rollouts a continuation reads only those created after its own session.
    fn find_owned(
        &self,
        root: &StoreRoot,
        target: &str,
        locator: &str,
    ) -> Result<Option<SessionRef>, PluginError> {
        check_target(target)?;
        codex::find_owned(root, locator)
    }
}

impl Resumer for CodexPlugin {
    fn resolve(&self, root: &StoreRoot, target: &str, id: &str) -> Result<SessionRef, PluginError> {
        check_target(target)?;
        codex::resolve(root, id)
    }

    fn plan(
        &self,
        root: &StoreRoot,
        session: &SessionRef,
        prompt: &str,
    ) -> Result<ResumePlan, PluginError> {
        check_target(&session.target)?;
        codex::plan(root, session, prompt)
    }
}

// Makes the plugin a built-in of any host that links this crate; `so/` exports it as a shared
// library.
handoff_sdk::register_builtin!(CodexPlugin);
