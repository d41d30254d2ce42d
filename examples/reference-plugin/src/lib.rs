//! The reference plugin: the simplest complete handoff plugin.
//!
//! Its native store is the canonical transcript itself, as JSONL under
//! `<root>/reference/<uuid>.jsonl`: a header line (id, cwd, ownership marker), then one canonical
//! event per line. It exists to show a plugin author the whole contract, laid out the way every
//! plugin crate is (see "The shape of a plugin crate" in `docs/plugin-authoring.md`), and to prove
//! that the conformance suite passes a correct plugin (its broken variants, in the suite's tests,
//! prove each check can fail).
//!
//! - `lib.rs` (this file): the plugin and its dispatch to the target's module;
//! - `manifest.rs`: what the plugin declares;
//! - `reference/`: the one target, `mod.rs` (its operations) over `layout.rs` (where sessions
//!   live), `records.rs` (the native records), `read.rs` (file → transcript) and `write.rs`
//!   (transcript → file).

mod manifest;
mod reference;

use handoff_sdk::{
    each_event, CreateOptions, Event, Manifest, Plugin, PluginError, ReadFrom, ReadOutcome, Reader,
    ResumePlan, Resumer, SessionInfo, SessionRef, StoreRoot, Transcript, Writer,
};

pub use manifest::{manifest, NAME};

/// The reference plugin.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReferencePlugin;

/// Refuses a target this plugin does not offer. (A plugin with several targets matches the name
/// to pick the target's module here.)
fn check_target(target: &str) -> Result<(), PluginError> {
    if target == NAME {
        Ok(())
    } else {
        Err(PluginError::UnknownTarget {
            target: target.into(),
        })
    }
}

impl Plugin for ReferencePlugin {
    fn manifest(&self) -> Manifest {
        manifest()
    }

    handoff_sdk::parts_are_self!();
}

impl Writer for ReferencePlugin {
    fn create(
        &self,
        root: &StoreRoot,
        target: &str,
        transcript: &Transcript,
        options: &CreateOptions,
    ) -> Result<SessionRef, PluginError> {
        check_target(target)?;
        reference::create(root, transcript, options)
    }

    fn append(
        &self,
        root: &StoreRoot,
        session: &SessionRef,
        events: &[Event],
    ) -> Result<SessionRef, PluginError> {
        check_target(&session.target)?;
        reference::append(root, session, events)
    }

    fn remove(&self, root: &StoreRoot, session: &SessionRef) -> Result<(), PluginError> {
        check_target(&session.target)?;
        reference::remove(root, session)
    }
}

impl ReferencePlugin {
    /// The whole transcript of `from`. A session of this target is one small document, so even
    /// a file still being written (the continuation engine's verify reads a new session as its
    /// writer writes it) is taken as its bytes come and decoded once they are all there; a
    /// reader of a long format would decode as it goes.
    fn whole(&self, from: ReadFrom<'_>) -> Result<Transcript, PluginError> {
        check_target(from.target())?;
        match from {
            ReadFrom::Session(root, session) => reference::read(root, session),
            ReadFrom::File(_, path) => reference::read_path(path),
            ReadFrom::Written(_, file) => reference::read_written(file),
        }
    }
}

impl Reader for ReferencePlugin {
    fn read_each(
        &self,
        from: ReadFrom<'_>,
        sink: &mut dyn FnMut(Event) -> bool,
    ) -> Result<ReadOutcome, PluginError> {
        each_event(self.whole(from)?, sink);
        Ok(ReadOutcome::Read)
    }

    fn cwd(&self, from: ReadFrom<'_>) -> Result<Option<String>, PluginError> {
        Ok(self.whole(from)?.cwd)
    }

    /// One read, not [`Reader::cwd`]'s and [`Reader::read_each`]'s.
    fn read(&self, from: ReadFrom<'_>) -> Result<Transcript, PluginError> {
        self.whole(from)
    }

    fn list(&self, root: &StoreRoot, target: &str) -> Result<Vec<SessionInfo>, PluginError> {
        check_target(target)?;
        reference::list(root)
    }
}

impl Resumer for ReferencePlugin {
    fn resolve(&self, root: &StoreRoot, target: &str, id: &str) -> Result<SessionRef, PluginError> {
        check_target(target)?;
        reference::resolve(root, id)
    }

    fn plan(
        &self,
        root: &StoreRoot,
        session: &SessionRef,
        prompt: &str,
    ) -> Result<ResumePlan, PluginError> {
        check_target(&session.target)?;
        reference::plan(root, session, prompt)
    }
}

// Makes the plugin a built-in of any host that links this crate; `so/` exports it as a shared
// library.
handoff_sdk::register_builtin!(ReferencePlugin);
