//! handoff-pi: the `pi` target, the session store of the pi coding agent 0.73.1.
//!
//! A session is `<root>/sessions/--<encoded cwd>--/<time>_<uuid>.jsonl` where `<root>` is pi's
//! agent directory (`PI_CODING_AGENT_DIR`, default `~/.pi/agent`): a `session` header line, then
//! entries on an `id`/`parentId` tree. The reader follows pi's own semantics (the leaf is the last
//! entry, the conversation is the path from it to the root, compaction, what pi sends for its own
//! message kinds); the writer writes what pi itself writes; the resumer names exactly one session
//! for pi's loose `--session` matching. Every mapping choice is in `docs/formats/pi.md`.
#![deny(missing_docs)]

mod manifest;
mod pi;

use std::path::Path;

use handoff_sdk::{
    CreateOptions, Event, Manifest, Plugin, PluginError, Reader, ResumePlan, Resumer, SessionInfo,
    SessionRef, StoreRoot, TargetManifest, Transcript, Writer,
};

pub use manifest::{live_recipe, manifest, target as target_manifest, PI_PACKAGE, PI_VERSION};
pub use pi::{summary, Summary, AGENT_DIR_ENV, HEADER_LIMIT, OPAQUE_KEY, PLUGIN, TARGET};

/// The pi plugin.
#[derive(Clone, Copy, Debug, Default)]
pub struct PiPlugin;

impl PiPlugin {
    /// The plugin.
    pub fn new() -> Self {
        PiPlugin
    }
}

/// The target's manifest, or `UnknownTarget`.
fn check_target(target: &str) -> Result<TargetManifest, PluginError> {
    if target == TARGET {
        Ok(manifest::target())
    } else {
        Err(PluginError::UnknownTarget {
            target: target.to_owned(),
        })
    }
}

impl Plugin for PiPlugin {
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

impl Writer for PiPlugin {
    fn create(
        &self,
        root: &StoreRoot,
        target: &str,
        transcript: &Transcript,
        options: &CreateOptions,
    ) -> Result<SessionRef, PluginError> {
        let manifest = check_target(target)?;
        transcript.validate()?;
        manifest.check_carried(transcript)?;
        pi::create(root, transcript, options)
    }

    fn append(
        &self,
        root: &StoreRoot,
        session: &SessionRef,
        events: &[Event],
    ) -> Result<SessionRef, PluginError> {
        let manifest = check_target(&session.target)?;
        pi::append(root, session, events, &manifest)
    }

    fn remove(&self, root: &StoreRoot, session: &SessionRef) -> Result<(), PluginError> {
        check_target(&session.target)?;
        pi::remove(root, session)
    }
}

impl Reader for PiPlugin {
    fn read(&self, root: &StoreRoot, session: &SessionRef) -> Result<Transcript, PluginError> {
        check_target(&session.target)?;
        pi::read(session.check(root, TARGET)?)
    }

    fn read_path(&self, target: &str, path: &Path) -> Result<Transcript, PluginError> {
        check_target(target)?;
        pi::read(path)
    }

    fn read_each(
        &self,
        root: &StoreRoot,
        session: &SessionRef,
        sink: &mut dyn FnMut(Event) -> bool,
    ) -> Result<(), PluginError> {
        check_target(&session.target)?;
        pi::read_each(session.check(root, TARGET)?, sink).map(drop)
    }

    /// The session header's cwd (the first line), or the whole read's where the header alone
    /// cannot be read.
    fn read_path_cwd(&self, target: &str, path: &Path) -> Result<Option<String>, PluginError> {
        check_target(target)?;
        pi::read_cwd(path)
    }

    fn read_path_each(
        &self,
        target: &str,
        path: &Path,
        sink: &mut dyn FnMut(Event) -> bool,
    ) -> Result<(), PluginError> {
        check_target(target)?;
        pi::read_each(path, sink).map(drop)
    }

    fn list(&self, root: &StoreRoot, target: &str) -> Result<Vec<SessionInfo>, PluginError> {
        check_target(target)?;
        pi::list(root)
    }

    fn find_owned(
        &self,
        root: &StoreRoot,
        target: &str,
        locator: &str,
    ) -> Result<Option<SessionRef>, PluginError> {
        check_target(target)?;
        pi::find_owned(root, locator)
    }
}

impl Resumer for PiPlugin {
    fn resolve(&self, root: &StoreRoot, target: &str, id: &str) -> Result<SessionRef, PluginError> {
        check_target(target)?;
        pi::resolve(root, id)
    }

    fn plan(
        &self,
        root: &StoreRoot,
        session: &SessionRef,
        prompt: &str,
    ) -> Result<ResumePlan, PluginError> {
        check_target(&session.target)?;
        pi::plan(root, session, prompt)
    }
}

handoff_sdk::register_builtin!(PiPlugin);
