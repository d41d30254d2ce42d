//! The Claude plugin of handoff, with two targets:
//!
//! - `claude-code`: Claude Code's project JSONL (`<root>/projects/<cwd slug>/<uuid>.jsonl`),
//!   written the way Claude Code 2.1.197 writes it and resumed with
//!   `claude -p --resume <uuid> PROMPT` in the session's cwd;
//! - `anthropic-messages`: the stateless Anthropic Messages API; the store is the request history
//!   as one JSON file per session (`<root>/anthropic-messages/<uuid>.json`), resumed by the next
//!   request body.
//!
//! Both render and parse Anthropic content blocks with core's dialect module
//! (`handoff_sdk::dialect::anthropic`), so the store, the wire and the live checks agree.
//!
//! The crate has the shape every plugin crate has (`docs/plugin-authoring.md`): this file is the
//! plugin and its dispatch to a module per target (`claude_code/`, `anthropic_messages/`, each
//! `mod.rs` over `layout`, `records`, `read` and `write`); `manifest.rs` is what it declares;
//! `extras.rs` is the `handoff` member both targets keep beside the native data.

#![deny(missing_docs)]

mod anthropic_messages;
mod claude_code;
mod extras;
mod manifest;

use std::path::Path;

use handoff_sdk::{
    CreateOptions, Event, EventStream, Manifest, Plugin, PluginError, Reader, ResumePlan, Resumer,
    SessionInfo, SessionRef, StoreRoot, Transcript, Writer, WrittenFile,
};

pub use manifest::{manifest, CLAUDE_CODE, CLAUDE_CODE_VERSION, MESSAGES, PLUGIN_NAME};

/// The Claude plugin: both targets behind the capability traits.
#[derive(Clone, Copy, Debug, Default)]
pub struct ClaudePlugin;

enum Target {
    Code,
    Messages,
}

fn target(name: &str) -> Result<Target, PluginError> {
    match name {
        CLAUDE_CODE => Ok(Target::Code),
        MESSAGES => Ok(Target::Messages),
        _ => Err(PluginError::UnknownTarget {
            target: name.to_owned(),
        }),
    }
}

impl Plugin for ClaudePlugin {
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

impl Writer for ClaudePlugin {
    fn create(
        &self,
        root: &StoreRoot,
        target_name: &str,
        transcript: &Transcript,
        options: &CreateOptions,
    ) -> Result<SessionRef, PluginError> {
        match target(target_name)? {
            Target::Code => claude_code::create(root, transcript, options),
            Target::Messages => anthropic_messages::create(root, transcript, options),
        }
    }

    fn append(
        &self,
        root: &StoreRoot,
        session: &SessionRef,
        events: &[Event],
    ) -> Result<SessionRef, PluginError> {
        match target(&session.target)? {
            Target::Code => claude_code::append(root, session, events),
            Target::Messages => anthropic_messages::append(root, session, events),
        }
    }

    fn create_streamed(
        &self,
        root: &StoreRoot,
        target_name: &str,
        events: &mut dyn EventStream,
        options: &CreateOptions,
    ) -> Result<SessionRef, PluginError> {
        match target(target_name)? {
            Target::Code => claude_code::create_streamed(root, events, options),
            Target::Messages => anthropic_messages::create(root, events.whole()?, options),
        }
    }

    fn remove(&self, root: &StoreRoot, session: &SessionRef) -> Result<(), PluginError> {
        match target(&session.target)? {
            Target::Code => claude_code::remove(root, session),
            Target::Messages => anthropic_messages::remove(root, session),
        }
    }
}

impl Reader for ClaudePlugin {
    fn read(&self, root: &StoreRoot, session: &SessionRef) -> Result<Transcript, PluginError> {
        match target(&session.target)? {
            Target::Code => claude_code::read(root, session),
            Target::Messages => anthropic_messages::read(root, session),
        }
    }

    fn read_path(&self, target_name: &str, path: &Path) -> Result<Transcript, PluginError> {
        match target(target_name)? {
            Target::Code => claude_code::read_path(path),
            Target::Messages => anthropic_messages::read_path(path),
        }
    }

    fn read_path_cwd(&self, target_name: &str, path: &Path) -> Result<Option<String>, PluginError> {
        match target(target_name)? {
            Target::Code => claude_code::read_path_cwd(path),
            // The history's `handoff.cwd`, the history not built.
            Target::Messages => handoff_sdk::document_cwd(path),
        }
    }

    fn read_path_each(
        &self,
        target_name: &str,
        path: &Path,
        sink: &mut dyn FnMut(Event) -> bool,
    ) -> Result<(), PluginError> {
        match target(target_name)? {
            Target::Code => claude_code::read_path_each(path, sink),
            Target::Messages => {
                for event in anthropic_messages::read_path(path)?.events {
                    if !sink(event) {
                        break;
                    }
                }
                Ok(())
            }
        }
    }

    /// Claude Code's sessions only (the index loaded as the file grows); an API history is
    /// one JSON document, read once it is whole.
    fn read_written_each(
        &self,
        target_name: &str,
        file: &dyn WrittenFile,
        sink: &mut dyn FnMut(Event) -> bool,
    ) -> Result<bool, PluginError> {
        match target(target_name)? {
            Target::Code => claude_code::read_written_each(file, sink).map(|()| true),
            Target::Messages => Ok(false),
        }
    }

    fn read_each(
        &self,
        root: &StoreRoot,
        session: &SessionRef,
        sink: &mut dyn FnMut(Event) -> bool,
    ) -> Result<(), PluginError> {
        match target(&session.target)? {
            Target::Code => claude_code::read_each(root, session, sink),
            Target::Messages => {
                for event in anthropic_messages::read(root, session)?.events {
                    if !sink(event) {
                        break;
                    }
                }
                Ok(())
            }
        }
    }

    fn list(&self, root: &StoreRoot, target_name: &str) -> Result<Vec<SessionInfo>, PluginError> {
        match target(target_name)? {
            Target::Code => claude_code::list(root),
            Target::Messages => anthropic_messages::list(root),
        }
    }

    fn find_owned(
        &self,
        root: &StoreRoot,
        target_name: &str,
        locator: &str,
    ) -> Result<Option<SessionRef>, PluginError> {
        match target(target_name)? {
            Target::Code => claude_code::find_owned(root, locator),
            Target::Messages => Ok(SessionInfo::newest_owned(
                anthropic_messages::list(root)?,
                locator,
            )),
        }
    }
}

impl Resumer for ClaudePlugin {
    fn resolve(
        &self,
        root: &StoreRoot,
        target_name: &str,
        id: &str,
    ) -> Result<SessionRef, PluginError> {
        match target(target_name)? {
            Target::Code => claude_code::resolve(root, id),
            Target::Messages => anthropic_messages::resolve(root, id),
        }
    }

    fn plan(
        &self,
        root: &StoreRoot,
        session: &SessionRef,
        prompt: &str,
    ) -> Result<ResumePlan, PluginError> {
        match target(&session.target)? {
            Target::Code => claude_code::plan(root, session, prompt),
            Target::Messages => anthropic_messages::plan(root, session, prompt),
        }
    }
}

// Makes the plugin a built-in of any host that links this crate; `so/` exports it as a shared
// library.
handoff_sdk::register_builtin!(ClaudePlugin);
