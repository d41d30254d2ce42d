//! Built-in plugins: plugin crates linked into a host.
//!
//! A plugin crate says `handoff_sdk::register_builtin!(ItsPlugin)`, which defines
//! `pub fn handoff_builtin() -> Box<dyn Plugin>` and nothing else: no FFI symbol (so any number of
//! plugin crates link into one binary) and no ELF initialiser (so the crate's shared library, built
//! alongside by its thin `so/` crate, runs no code when it is opened). A host registers each
//! built-in it links explicitly, with [`crate::registry::Registry::add_builtin`].

use crate::capability::Plugin;

/// Makes a built-in plugin: a plugin crate's `handoff_builtin`.
pub type MakePlugin = fn() -> Box<dyn Plugin>;
