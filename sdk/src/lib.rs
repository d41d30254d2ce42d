//! handoff-sdk: everything a plugin author needs, and nothing else.
//!
//! A plugin depends on this crate only. Each of its targets implements [`Target`] (its format and
//! nothing else) and [`targets!`] makes the plugin of them: the SDK dispatches by target name,
//! checks every session handed in and every input before anything is written, takes the session
//! lock and checks the owner (see [`Targets`]). What a target is handed says so in its type: a
//! [`New`] session's place, a [`Checked`] session, an [`Owned`] one (locked, this plugin's), which
//! only the SDK makes. The plugin exports itself with one line:
//!
//! ```ignore
//! handoff_sdk::export_plugin!(MyPlugin);              // MyPlugin: Plugin + Default
//! handoff_sdk::export_plugin!(MyPlugin, MyPlugin::new()); // or any expression
//! ```
//!
//! The macro emits the declaration static the host reads before any plugin code runs and the
//! abi_stable root module; every exported method runs behind `catch_unwind`, and the plugin's
//! `tracing` events reach the host's subscriber. It belongs in the crate that builds the `.so` (a
//! `cdylib`), once per library.
//!
//! A plugin that a host may also link in as a built-in says [`register_builtin!`] in its `rlib`;
//! a host that links the crate registers its `handoff_builtin()`. The two never exclude each
//! other, so every build makes loadable plugins and the host keeps its built-ins. See
//! `docs/plugin-authoring.md`.
//!
//! (A plugin may still implement the plain traits re-exported here, [`Plugin`], [`Writer`],
//! [`Reader`], [`Resumer`], itself; [`parts_are_self!`] writes the three accessors of a plugin type
//! that is all three.) Beside them, the helpers every target uses the same way: [`session_lock`]
//! (the writer lock of one session), [`session_files`] and [`sessions_newest_first`] (a store's
//! listing), [`session_at`] (resolve in a store of one file per id), [`FilePerId`] (the whole of
//! such a store: new ids, lookup, listing, marker), [`load_json`] / [`write_json_line`] (a store of
//! JSON documents), [`require_owned`] (the owner check), and [`IdMap`] / [`IdSet`] (fast seeded
//! maps for the ids of one session file), and [`HoldUntilAnswered`] (a reader's sink that holds a
//! turn's calls until they are answered). A plugin checks every [`SessionRef`] it is handed with
//! [`SessionRef::check`].
#![deny(missing_docs)]

pub use handoff_capability::*;
/// The wire dialects. Without the SDK's `dialects` feature only the [`dialect::Dialect`] names a
/// manifest or a resume plan carries; with it their codecs (render, parse, validate).
pub use handoff_dialects as dialect;
pub use handoff_store::{self as store, atomic, lock, marker, StoreRoot};
pub use handoff_transcript::{self as transcript, *};
pub use serde_json;

mod checked_sink;
mod cwd;
mod document;
#[doc(hidden)]
pub mod export;
mod export_binary;
mod export_written;
mod file_per_id;
mod handed;
pub mod held;
pub mod ids;
pub mod lines;
mod listing;
mod log_bridge;
mod ownership;
mod session_lock;
pub mod stream_stop;
mod target;

pub use checked_sink::CheckedSink;
pub use cwd::{dashed_cwd, physical_cwd};
pub use document::{
    document_cwd, document_error, document_marker, load_json, parse_document, present,
    write_json_line, DOCUMENT_DEPTH_LIMIT, EXTRAS_KEY,
};
pub use file_per_id::FilePerId;
pub use handed::{Checked, EventSink, New, Owned};
pub use held::HoldUntilAnswered;
pub use ids::{IdMap, IdSet};
pub use listing::{session_at, session_files, sessions_newest_first, subdirs};
pub use ownership::{own_marker, require_owned};
pub use session_lock::{session_lock, SESSION_LOCK_WAIT};
pub use target::{each_event, Stored, Target, Targets};

/// A result whose error is a [`PluginError`] unless it says otherwise: what every target method
/// returns.
pub type Result<T, E = PluginError> = std::result::Result<T, E>;

/// The plugin-API requirement a plugin built against this SDK declares.
pub const API_REQUIREMENT: &str = "^1";

/// The `rustc --version` that built this SDK (and so the plugin).
pub const RUSTC_VERSION: &str = env!("HANDOFF_SDK_RUSTC_VERSION");

/// Paths the export macro expands to. Not part of the API.
#[doc(hidden)]
pub mod __private {
    pub use handoff_abi::abi_stable::library::{LibHeader, RootModuleResult};
    pub use handoff_abi::declaration::{
        DeclStr, PluginDeclaration, DECLARATION_MAGIC, DECLARATION_VERSION,
    };
    pub use handoff_abi::module::{call_root_module_loader, lib_header};
    pub use handoff_abi::PluginModuleRef;
}

/// Exports a plugin. `export_plugin!(MyPlugin)` needs `MyPlugin: Plugin + Default`;
/// `export_plugin!(MyPlugin, expr)` makes it with `expr`. An optional `api = "^1"` argument
/// overrides the declared plugin-API requirement (default [`API_REQUIREMENT`]).
///
/// It emits the declaration static and the root module: use it in the `cdylib` crate only.
#[macro_export]
macro_rules! export_plugin {
    ($ty:ty) => {
        $crate::export_plugin!($ty, <$ty as ::core::default::Default>::default());
    };
    ($ty:ty, api = $api:expr) => {
        $crate::export_plugin!(
            $ty,
            <$ty as ::core::default::Default>::default(),
            api = $api
        );
    };
    ($ty:ty, $make:expr) => {
        $crate::export_plugin!($ty, $make, api = $crate::API_REQUIREMENT);
    };
    ($ty:ty, $make:expr, api = $api:expr) => {
        /// What the host reads before any plugin code runs.
        #[unsafe(no_mangle)]
        pub static HANDOFF_PLUGIN_DECLARATION: $crate::__private::PluginDeclaration =
            $crate::__private::PluginDeclaration {
                magic: $crate::__private::DECLARATION_MAGIC,
                declaration_version: $crate::__private::DECLARATION_VERSION,
                // Evaluated in the plugin crate: it says how *this* library was built.
                panic_unwind: if cfg!(panic = "unwind") { 1 } else { 0 },
                api_requirement: $crate::__private::DeclStr::new($api),
                rustc_version: $crate::__private::DeclStr::new($crate::RUSTC_VERSION),
                name: $crate::__private::DeclStr::new(env!("CARGO_PKG_NAME")),
                version: $crate::__private::DeclStr::new(env!("CARGO_PKG_VERSION")),
            };

        /// The abi_stable library header (abi_stable looks it up by this exact name).
        #[allow(non_upper_case_globals)]
        #[unsafe(no_mangle)]
        pub static _1as_0lib_1header_0root_bmodule_bloader: $crate::__private::LibHeader = {
            extern "C" fn __handoff_root_module() -> $crate::__private::RootModuleResult {
                fn make_module() -> $crate::__private::PluginModuleRef {
                    fn make_plugin() -> ::std::boxed::Box<dyn $crate::Plugin> {
                        let plugin: $ty = $make;
                        ::std::boxed::Box::new(plugin)
                    }
                    $crate::export::root_module(make_plugin, env!("CARGO_PKG_NAME"))
                }
                $crate::__private::call_root_module_loader(make_module)
            }
            $crate::__private::lib_header(__handoff_root_module)
        };
    };
}

/// Makes a plugin a built-in for any host that links its crate: defines
/// `pub fn handoff_builtin() -> Box<dyn Plugin>`, which the host registers. It emits no FFI symbol
/// and no initialiser, so any number of plugin crates link into one binary and the crate's shared
/// library runs no code when it is opened. `register_builtin!(MyPlugin)` needs
/// `MyPlugin: Plugin + Default`; `register_builtin!(MyPlugin, expr)` makes it with `expr`.
#[macro_export]
macro_rules! register_builtin {
    ($ty:ty) => {
        $crate::register_builtin!($ty, <$ty as ::core::default::Default>::default());
    };
    ($ty:ty, $make:expr) => {
        /// This crate's plugin, for a host that links it as a built-in.
        pub fn handoff_builtin() -> ::std::boxed::Box<dyn $crate::Plugin> {
            let plugin: $ty = $make;
            ::std::boxed::Box::new(plugin)
        }
    };
}
