//! The abi_stable root module: a capability directory frozen at v1.
//!
//! This crate holds exactly the types whose layout abi_stable checks when a plugin library loads,
//! and nothing else; `handoff-abi` re-exports them. Its package is named `handoff-core` because
//! that name is recorded in every plugin built so far (see `Cargo.toml`).
//!
//! The root module never grows plain prefix fields for new features (a newer host would then
//! refuse an older plugin). New abilities are new capability ids answered by
//! [`PluginModule::get_capability`]; the [`Capability`] object is the same for every id and
//! carries one JSON request per call (see `handoff_abi::wire`).

// abi_stable's `#[sabi_trait]` expansion implements a foreign trait inside a const block.
#![allow(non_local_definitions)]
#![deny(missing_docs)]

use abi_stable::library::{
    __call_root_module_loader, CheckTypeLayout, LibHeader, RootModule, RootModuleResult,
};
use abi_stable::sabi_types::VersionStrings;
use abi_stable::std_types::{RBox, ROption, RResult, RStr, RString};
use abi_stable::{declare_root_module_statics, sabi_trait, StableAbi};

/// The version of the root module's layout. Frozen: a new ability is a new capability id, never a
/// new field here.
pub const ROOT_MODULE_VERSION: &str = "1.0.0";

/// A capability object. One JSON request in, one JSON answer out: `Ok` carries the method's
/// value, `Err` a serialised `PluginError`. What requests a capability id accepts is
/// fixed by its id (`transcript.writer.v1`, …).
#[sabi_trait]
pub trait Capability: Send + Sync {
    /// The capability id this object answers, e.g. `transcript.writer.v1`.
    fn id(&self) -> RString;

    /// Handles one request (a JSON object with a `method` tag).
    #[sabi(last_prefix_field)]
    fn call(&self, request: RStr<'_>) -> RResult<RString, RString>;
}

/// A boxed capability object as it crosses the boundary.
pub type CapabilityBox = Capability_TO<'static, RBox<()>>;

/// The host's log callback: the plugin's `tracing` events are forwarded to it (each shared
/// library has its own `tracing` globals, so the host's subscriber never sees them otherwise).
#[repr(C)]
#[derive(StableAbi, Clone, Copy)]
pub struct HostLogger {
    /// Called once per event: plugin name, level (1 error … 5 trace), target, message.
    pub log: extern "C" fn(plugin: RStr<'_>, level: u8, target: RStr<'_>, message: RStr<'_>),
    /// The most verbose level the host wants (0 off, 1 error … 5 trace).
    pub max_level: u8,
}

/// The root module every plugin library exports.
#[repr(C)]
#[derive(StableAbi)]
#[sabi(kind(Prefix(prefix_ref = PluginModuleRef)))]
#[sabi(missing_field(panic))]
pub struct PluginModule {
    /// The manifest as JSON (a serialised `Manifest`), or a serialised
    /// `PluginError`.
    pub manifest_json: extern "C" fn() -> RResult<RString, RString>,
    /// Installs the host's log callback.
    pub set_host_logger: extern "C" fn(HostLogger),
    /// The capability with this id, or none when the plugin does not offer it.
    #[sabi(last_prefix_field)]
    pub get_capability: extern "C" fn(RStr<'_>) -> ROption<CapabilityBox>,
}

impl RootModule for PluginModuleRef {
    declare_root_module_statics! {PluginModuleRef}
    const BASE_NAME: &'static str = "handoff_plugin";
    const NAME: &'static str = "handoff plugin";
    const VERSION_STRINGS: VersionStrings = VersionStrings::new(ROOT_MODULE_VERSION);
}

/// The library header a plugin exports (the SDK's export macro uses this; abi_stable's own
/// `#[export_root_module]` would need abi_stable as a direct dependency of every plugin).
#[doc(hidden)]
pub const fn lib_header(constructor: extern "C" fn() -> RootModuleResult) -> LibHeader {
    // SAFETY: `constructor` is always built by `call_root_module_loader` below, which returns a
    // `PluginModuleRef` erased by abi_stable itself.
    unsafe { LibHeader::from_constructor::<PluginModuleRef>(constructor, CheckTypeLayout::Yes) }
}

/// Runs the plugin's root module constructor the way abi_stable's own export does (panics become
/// an error value).
#[doc(hidden)]
pub fn call_root_module_loader(make: fn() -> PluginModuleRef) -> RootModuleResult {
    __call_root_module_loader(make)
}

/// The exported name of the library header, as abi_stable looks it up. The SDK's macro spells it
/// literally (a `#[no_mangle]` static needs an identifier); a test checks the two agree.
#[doc(hidden)]
pub const LIB_HEADER_SYMBOL: &str = abi_stable::library::ROOT_MODULE_LOADER_NAME;

#[cfg(test)]
mod tests {
    use super::*;

    /// The SDK's export macro spells this name literally; if abi_stable ever changes it, this
    /// fails before any plugin silently stops loading.
    /// Every plugin built so far records `handoff-core` as the package of these types; a host
    /// expecting another package refuses them all ("mismatched package").
    #[test]
    fn the_frozen_types_keep_the_package_every_plugin_recorded() {
        // (The root module's own layout is abi_stable's prefix wrapper; its fields are ours and
        // come from this crate like this one.)
        let layout = <HostLogger as StableAbi>::LAYOUT;
        assert_eq!(layout.item_info().package(), "handoff-core");
    }

    #[test]
    fn the_sdk_spells_the_library_header_symbol_right() {
        assert_eq!(LIB_HEADER_SYMBOL, "_1as_0lib_1header_0root_bmodule_bloader");
    }
}
