//! handoff-copilot: the `copilot-cli` target, the session store of GitHub Copilot CLI 1.0.102.
//!
//! A session is `<root>/session-state/<uuid>/events.jsonl` where `<root>` is Copilot's home
//! (`COPILOT_HOME`, default `~/.copilot`): one JSON event a line (`type`, `data`, `id`,
//! `timestamp`, `parentId`), starting with `session.start`. The reader gives what the CLI sends to
//! the model when it resumes the session; the writer writes the events the CLI needs for that and
//! nothing else; the resumer names the session by its exact id. Every mapping choice, with where
//! it comes from, is in `docs/formats/copilot-cli.md`.
#![deny(missing_docs)]

mod copilot_cli;
mod manifest;

pub use copilot_cli::{EVENTS_FILE, HOME_ENV, PLUGIN, SESSIONS_DIR, TARGET};
pub use manifest::{live_recipe, target as target_manifest, COPILOT_PACKAGE, COPILOT_VERSION};

/// The Copilot CLI plugin: its one target, dispatched, checked, locked and owner-checked by the
/// SDK.
#[derive(Clone, Copy, Debug, Default)]
pub struct CopilotPlugin;

handoff_sdk::targets!(CopilotPlugin, PLUGIN, [copilot_cli::CopilotCli]);

handoff_sdk::register_builtin!(CopilotPlugin);
