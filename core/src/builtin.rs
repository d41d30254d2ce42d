//! Built-in plugins: plugin crates linked into a host register here through `inventory`.
//!
//! A plugin crate says `handoff_sdk::register_builtin!(ItsPlugin)` in its `rlib`; that submits a
//! [`StaticPlugin`] and emits no FFI symbol, so a binary links any number of plugins. Its
//! loadable form (a thin `cdylib` crate with `export_plugin!`) is built alongside, never instead.

use crate::capability::Plugin;

/// A plugin linked into the host.
pub struct StaticPlugin {
    /// Makes the plugin.
    pub make: fn() -> Box<dyn Plugin>,
}

inventory::collect!(StaticPlugin);

/// Every plugin linked into this binary.
pub fn builtins() -> impl Iterator<Item = &'static StaticPlugin> {
    inventory::iter::<StaticPlugin>.into_iter()
}
