//! handoff-opencode: the `opencode` target, the SQLite session store of OpenCode 1.18.33.
//!
//! A store root is OpenCode's data folder (`$XDG_DATA_HOME/opencode`, default
//! `~/.local/share/opencode`); its sessions are rows of `<root>/opencode.db` (WAL mode): a
//! `session` row, its `message` rows and their `part` rows, each message and part a JSON `data`
//! column. The reader rebuilds a session the way OpenCode builds the history it sends to the
//! model on resume; the writer writes one session in one transaction; the resumer names the
//! session by its exact id. Every mapping choice is in `docs/formats/opencode.md`.
#![deny(missing_docs)]

mod ids;
mod manifest;
mod read;
mod schema;
mod spool;
mod store;
mod write;

pub use manifest::{live_recipe, target as target_manifest, OPENCODE_PACKAGE, OPENCODE_VERSION};
pub use schema::{DB_FILE, KNOWN_MIGRATIONS};

/// The plugin's name (its ownership markers' `plugin`).
pub const PLUGIN: &str = "opencode";
/// Its one target.
pub const TARGET: &str = "opencode";

/// The opencode plugin: its one target, dispatched, checked, locked and owner-checked by the SDK.
#[derive(Clone, Copy, Debug, Default)]
pub struct OpencodePlugin;

handoff_sdk::targets!(OpencodePlugin, PLUGIN, [store::Opencode]);

handoff_sdk::register_builtin!(OpencodePlugin);
