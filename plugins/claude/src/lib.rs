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

#![deny(missing_docs)]

mod claude_code;
mod manifest;
mod messages;
mod record;

use std::path::Path;

use handoff_sdk::{
    CreateOptions, Event, Manifest, Plugin, PluginError, Reader, ResumePlan, Resumer, SessionInfo,
    SessionRef, StoreRoot, Transcript, Writer,
};

pub use manifest::{manifest, CLAUDE_CODE, CLAUDE_CODE_VERSION, MESSAGES, PLUGIN_NAME};

/// Takes the writer lock of one session, so two appends never both continue from the same end
/// (for `anthropic-messages`, a read-modify-replace, the second would drop the first's events).
fn lock_session(
    root: &StoreRoot,
    target: &str,
    id: &str,
) -> Result<handoff_sdk::lock::Lock, PluginError> {
    handoff_sdk::lock::Lock::acquire(
        root,
        &format!("claude-session\0{target}\0{id}"),
        std::time::Duration::from_secs(10),
    )
    .map_err(|e| match e.kind() {
        std::io::ErrorKind::WouldBlock => PluginError::Locked {
            path: root.path().join(".handoff/locks"),
        },
        _ => PluginError::io(&root.path().join(".handoff/locks"), &e),
    })
}

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
            Target::Messages => messages::create(root, transcript, options),
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
            Target::Messages => messages::append(root, session, events),
        }
    }

    fn remove(&self, root: &StoreRoot, session: &SessionRef) -> Result<(), PluginError> {
        match target(&session.target)? {
            Target::Code => claude_code::remove(root, session),
            Target::Messages => messages::remove(root, session),
        }
    }
}

impl Reader for ClaudePlugin {
    fn read(&self, root: &StoreRoot, session: &SessionRef) -> Result<Transcript, PluginError> {
        let path = session.check(root, &session.target)?;
        match target(&session.target)? {
            Target::Code => claude_code::read(path),
            Target::Messages => messages::read(path),
        }
    }

    fn read_path(&self, target_name: &str, path: &Path) -> Result<Transcript, PluginError> {
        match target(target_name)? {
            Target::Code => claude_code::read(path),
            Target::Messages => messages::read(path),
        }
    }

    fn read_each(
        &self,
        root: &StoreRoot,
        session: &SessionRef,
        sink: &mut dyn FnMut(Event) -> bool,
    ) -> Result<(), PluginError> {
        let path = session.check(root, &session.target)?;
        match target(&session.target)? {
            Target::Code => claude_code::read_each(path, sink),
            Target::Messages => {
                for event in messages::read(path)?.events {
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
            Target::Messages => messages::list(root),
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
            Target::Messages => messages::resolve(root, id),
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
            Target::Messages => messages::plan(root, session, prompt),
        }
    }
}

// Registers the plugin with a host that links this crate; `so/` exports it as a shared library.
handoff_sdk::register_builtin!(ClaudePlugin);
