//! The export glue behind [`export_plugin!`](crate::export_plugin): the FFI side of a plugin
//! library. Plugin authors never touch it.
//!
//! One plugin per shared library: the instance lives in this crate's statics (each `.so` has its
//! own copy of them). Every entry point runs behind `catch_unwind`; a panic comes back as
//! [`PluginError::Panicked`] naming the plugin and the method, and the host lives on.

use std::borrow::Cow;
use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;

use handoff_abi::abi_stable::prefix_type::PrefixTypeTrait;
use handoff_abi::abi_stable::sabi_trait::TD_Opaque;
use handoff_abi::abi_stable::std_types::{ROption, RResult, RStr, RString};
use handoff_abi::module::{Capability, CapabilityBox, Capability_TO, HostLogger};
use handoff_abi::wire::{
    encode_error, ReaderRequest, ReaderRequestV2, ResumeRequest, ResumeRequestV2, WriterRequest,
    WriterRequestV2,
};
use handoff_abi::{
    PluginModule, PluginModuleRef, READER_V1, READER_V2, READER_V3, READER_V4, READER_V5,
    RESUME_V1, RESUME_V2, WRITER_V1, WRITER_V2, WRITER_V3, WRITER_V4, WRITER_V5,
};
use handoff_capability::{Plugin, PluginError, ReadFrom, SessionRef};
use handoff_store::StoreRoot;
use serde::Serialize;

static MAKE: OnceLock<fn() -> Box<dyn Plugin>> = OnceLock::new();
static CRATE_NAME: OnceLock<&'static str> = OnceLock::new();
static INSTANCE: OnceLock<Result<Box<dyn Plugin>, PluginError>> = OnceLock::new();
static PLUGIN_NAME: OnceLock<String> = OnceLock::new();
/// Which capability ids the library offers, when not all: test fixtures that stand for older
/// plugins (only v1, only v2) say so through [`offer_only`].
static OFFERED: OnceLock<fn() -> &'static [&'static str]> = OnceLock::new();

/// Builds the root module. Called once, by abi_stable, when the host loads the library.
pub fn root_module(make: fn() -> Box<dyn Plugin>, crate_name: &'static str) -> PluginModuleRef {
    let _ = MAKE.set(make);
    let _ = CRATE_NAME.set(crate_name);
    install_panic_hook();
    PluginModule {
        manifest_json,
        set_host_logger,
        get_capability,
    }
    .leak_into_prefix()
}

/// Offers only the capability ids `offered` returns (asked each time a host looks one up), as an
/// older plugin would. For test fixtures; call it before the host loads the library's capabilities
/// (from the plugin's constructor or `Default`).
#[doc(hidden)]
pub fn offer_only(offered: fn() -> &'static [&'static str]) {
    let _ = OFFERED.set(offered);
}

/// The name used in panic errors: the manifest's name once known, the crate's before.
pub(crate) fn plugin_name() -> String {
    PLUGIN_NAME
        .get()
        .cloned()
        .unwrap_or_else(|| CRATE_NAME.get().copied().unwrap_or("plugin").to_owned())
}

thread_local! {
    /// How many guarded calls this thread is inside.
    static GUARDED: Cell<u32> = const { Cell::new(0) };
}

/// A panic inside a guarded call is returned to the host as `PluginError::Panicked`, so its
/// location goes to the log bridge instead of being printed over the host's stderr. Any other
/// panic goes to the hook that was there before.
fn install_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if GUARDED.with(Cell::get) > 0 {
                tracing::debug!(target: "handoff::panic", "{info}");
            } else {
                previous(info);
            }
        }));
    });
}

/// Runs `f`, turning a panic into [`PluginError::Panicked`].
pub(crate) fn guarded<T>(
    method: &str,
    f: impl FnOnce() -> Result<T, PluginError>,
) -> Result<T, PluginError> {
    GUARDED.with(|g| g.set(g.get() + 1));
    let outcome = catch_unwind(AssertUnwindSafe(f));
    GUARDED.with(|g| g.set(g.get() - 1));
    match outcome {
        Ok(result) => result,
        Err(payload) => Err(PluginError::panicked(&plugin_name(), method, &*payload)),
    }
}

/// The plugin instance, made on first use (inside the caller's guard).
pub(crate) fn instance() -> Result<&'static dyn Plugin, PluginError> {
    let made = INSTANCE.get_or_init(|| {
        let make = MAKE.get().ok_or_else(|| {
            PluginError::Other("the plugin's root module was never initialised".into())
        })?;
        guarded("new", || Ok(make()))
    });
    match made {
        Ok(plugin) => {
            if PLUGIN_NAME.get().is_none() {
                if let Ok(manifest) = guarded("manifest", || Ok(plugin.manifest())) {
                    let _ = PLUGIN_NAME.set(manifest.name);
                }
            }
            Ok(plugin.as_ref())
        }
        Err(e) => Err(e.clone()),
    }
}

fn answer(result: Result<String, PluginError>) -> RResult<RString, RString> {
    match result {
        Ok(json) => RResult::ROk(json.into()),
        Err(error) => RResult::RErr(encode_error(&error).into()),
    }
}

pub(crate) fn to_json(method: &str, value: &impl Serialize) -> Result<String, PluginError> {
    serde_json::to_string(value)
        .map_err(|e| PluginError::Other(format!("cannot encode the {method} answer: {e}")))
}

extern "C" fn manifest_json() -> RResult<RString, RString> {
    answer(guarded("manifest", || {
        to_json("manifest", &instance()?.manifest())
    }))
}

extern "C" fn set_host_logger(logger: HostLogger) {
    let _ = catch_unwind(|| crate::log_bridge::install(logger));
}

extern "C" fn get_capability(id: RStr<'_>) -> ROption<CapabilityBox> {
    let id = match id.as_str() {
        WRITER_V1 => WRITER_V1,
        READER_V1 => READER_V1,
        RESUME_V1 => RESUME_V1,
        WRITER_V2 => WRITER_V2,
        READER_V2 => READER_V2,
        RESUME_V2 => RESUME_V2,
        WRITER_V3 => WRITER_V3,
        READER_V3 => READER_V3,
        WRITER_V4 => WRITER_V4,
        READER_V4 => READER_V4,
        WRITER_V5 => WRITER_V5,
        READER_V5 => READER_V5,
        _ => return ROption::RNone,
    };
    if !OFFERED.get().is_none_or(|offered| offered().contains(&id)) {
        return ROption::RNone;
    }
    ROption::RSome(Capability_TO::from_value(Exported { id }, TD_Opaque))
}

/// One capability of the plugin, answering JSON requests.
struct Exported {
    id: &'static str,
}

impl Capability for Exported {
    fn id(&self) -> RString {
        self.id.into()
    }

    fn call(&self, request: RStr<'_>) -> RResult<RString, RString> {
        let request = request.as_str();
        if matches!(
            self.id,
            WRITER_V3 | READER_V3 | WRITER_V4 | READER_V4 | WRITER_V5 | READER_V5
        ) {
            // A binary call (or v4's `read_path_cwd`), else one of v2's JSON requests, which v3
            // and v4 answer too.
            if let Some(result) = crate::export_binary::answer(self.id, request) {
                return answer(result);
            }
        }
        answer(match self.id {
            WRITER_V1 => writer_call(request),
            READER_V1 => reader_call(request),
            RESUME_V1 => resume_call(request),
            // v3 answers v2's JSON requests; only create, append and the reads are binary.
            WRITER_V2 | WRITER_V3 | WRITER_V4 | WRITER_V5 => writer_call_v2(request),
            READER_V2 | READER_V3 | READER_V4 | READER_V5 => reader_call_v2(request),
            _ => resume_call_v2(request),
        })
    }
}

fn decode<'a, T: serde::Deserialize<'a>>(
    capability: &str,
    json: &'a str,
) -> Result<T, PluginError> {
    serde_json::from_str(json).map_err(|e| {
        PluginError::Other(format!(
            "plugin {} cannot read a {capability} request: {e}",
            plugin_name()
        ))
    })
}

pub(crate) fn root(path: std::borrow::Cow<'_, std::path::Path>) -> Result<StoreRoot, PluginError> {
    Ok(StoreRoot::new(path.into_owned())?)
}

/// The session a v1 request names by target and id: resolved, so the v1 request becomes the v2
/// request it stands for and one code path answers both.
fn resolved(
    root: &std::path::Path,
    target: &str,
    id: &str,
) -> Result<Cow<'static, SessionRef>, PluginError> {
    let root = StoreRoot::new(root.to_owned())?;
    Ok(Cow::Owned(
        instance()?.resumer().resolve(&root, target, id)?,
    ))
}

fn writer_call(json: &str) -> Result<String, PluginError> {
    let request: WriterRequest<'_> = decode(WRITER_V1, json)?;
    let method = request.method();
    guarded(method, || {
        run_writer(match request {
            WriterRequest::Create {
                root,
                target,
                transcript,
                options,
            } => WriterRequestV2::Create {
                root,
                target,
                transcript,
                options,
            },
            WriterRequest::Append {
                root,
                target,
                id,
                events,
            } => WriterRequestV2::Append {
                session: resolved(&root, &target, &id)?,
                root,
                events,
            },
            WriterRequest::Remove { root, target, id } => WriterRequestV2::Remove {
                session: resolved(&root, &target, &id)?,
                root,
            },
        })
    })
}

fn reader_call(json: &str) -> Result<String, PluginError> {
    let request: ReaderRequest<'_> = decode(READER_V1, json)?;
    let method = request.method();
    guarded(method, || {
        run_reader(match request {
            ReaderRequest::Read { root, target, id } => ReaderRequestV2::Read {
                session: resolved(&root, &target, &id)?,
                root,
            },
            ReaderRequest::ReadPath { target, path } => ReaderRequestV2::ReadPath { target, path },
            ReaderRequest::List { root, target } => ReaderRequestV2::List { root, target },
        })
    })
}

fn resume_call(json: &str) -> Result<String, PluginError> {
    let request: ResumeRequest<'_> = decode(RESUME_V1, json)?;
    let method = request.method();
    guarded(method, || {
        run_resumer(match request {
            ResumeRequest::Resolve { root, target, id } => {
                ResumeRequestV2::Resolve { root, target, id }
            }
            ResumeRequest::Plan {
                root,
                target,
                id,
                prompt,
            } => ResumeRequestV2::Plan {
                session: resolved(&root, &target, &id)?,
                root,
                prompt,
            },
        })
    })
}

fn writer_call_v2(json: &str) -> Result<String, PluginError> {
    let request: WriterRequestV2<'_> = decode(WRITER_V2, json)?;
    guarded(request.method(), || run_writer(request))
}

fn reader_call_v2(json: &str) -> Result<String, PluginError> {
    let request: ReaderRequestV2<'_> = decode(READER_V2, json)?;
    guarded(request.method(), || run_reader(request))
}

fn resume_call_v2(json: &str) -> Result<String, PluginError> {
    let request: ResumeRequestV2<'_> = decode(RESUME_V2, json)?;
    guarded(request.method(), || run_resumer(request))
}

fn run_writer(request: WriterRequestV2<'_>) -> Result<String, PluginError> {
    let method = request.method();
    let writer = instance()?.writer();
    match request {
        WriterRequestV2::Create {
            root: r,
            target,
            transcript,
            options,
        } => to_json(
            method,
            &writer.create(&root(r)?, &target, &transcript, &options)?,
        ),
        WriterRequestV2::Append {
            root: r,
            session,
            events,
        } => to_json(method, &writer.append(&root(r)?, &session, &events)?),
        WriterRequestV2::Remove { root: r, session } => {
            to_json(method, &writer.remove(&root(r)?, &session)?)
        }
    }
}

fn run_reader(request: ReaderRequestV2<'_>) -> Result<String, PluginError> {
    let method = request.method();
    let reader = instance()?.reader();
    match request {
        ReaderRequestV2::Read { root: r, session } => to_json(
            method,
            &reader.read(ReadFrom::Session(&root(r)?, &session))?,
        ),
        ReaderRequestV2::ReadPath { target, path } => {
            to_json(method, &reader.read(ReadFrom::File(&target, &path))?)
        }
        ReaderRequestV2::List { root: r, target } => {
            to_json(method, &reader.list(&root(r)?, &target)?)
        }
        ReaderRequestV2::FindOwned {
            root: r,
            target,
            locator,
        } => to_json(method, &reader.find_owned(&root(r)?, &target, &locator)?),
    }
}

fn run_resumer(request: ResumeRequestV2<'_>) -> Result<String, PluginError> {
    let method = request.method();
    let resumer = instance()?.resumer();
    match request {
        ResumeRequestV2::Resolve {
            root: r,
            target,
            id,
        } => to_json(method, &resumer.resolve(&root(r)?, &target, &id)?),
        ResumeRequestV2::Plan {
            root: r,
            session,
            prompt,
        } => to_json(method, &resumer.plan(&root(r)?, &session, &prompt)?),
    }
}
