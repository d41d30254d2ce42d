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
//! plugin (its one target handed to the SDK's `targets!`); `manifest.rs` is what it declares; `codex/` is the target (`mod.rs`
//! over `layout`, `records`, `read` and `write`, plus what only Codex has: `state_db`, `config`,
//! `time`, `live`).
#![deny(missing_docs)]

mod codex;
mod manifest;

use handoff_sdk::TargetManifest;

pub use codex::image_part;
pub(crate) use manifest::THINKING_PROVIDER;
pub use manifest::{PLUGIN, TARGET};

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

handoff_sdk::targets!(CodexPlugin, PLUGIN, [codex::Codex]);

// Makes the plugin a built-in of any host that links this crate; `so/` exports it as a shared
// library.
handoff_sdk::register_builtin!(CodexPlugin);
