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

pub use manifest::{live_recipe, target as target_manifest, PI_PACKAGE, PI_VERSION};
pub use pi::{summary, Summary, AGENT_DIR_ENV, HEADER_LIMIT, OPAQUE_KEY, PLUGIN, TARGET};

/// The pi plugin: its one target, dispatched, checked, locked and owner-checked by the SDK.
#[derive(Clone, Copy, Debug, Default)]
pub struct PiPlugin;

impl PiPlugin {
    /// The plugin.
    pub fn new() -> Self {
        PiPlugin
    }
}

handoff_sdk::targets!(PiPlugin, PLUGIN, [pi::Pi]);

handoff_sdk::register_builtin!(PiPlugin);
