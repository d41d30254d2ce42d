//! handoff-abi: the frozen FFI contract between a host and a plugin shared library.
//!
//! Two layers, read in this order by the loader:
//!
//! 1. [`declaration`]: a plain `#[repr(C)]` static named [`DECLARATION_SYMBOL`], read with
//!    libloading **before any plugin code runs**. It says whether the file is a handoff plugin at
//!    all, which plugin API it needs, whether it was built with `panic=unwind`, and by which rustc.
//!    Anything wrong there is refused in one line.
//! 2. [`module`]: the abi_stable root module, frozen at v1 as a small capability directory: the
//!    manifest as JSON, a host log callback, and `get_capability(id)` returning a versioned
//!    capability object or none. A new capability gets a new id, so a newer host still loads older
//!    plugins.
//!
//! What crosses the boundary is described in [`wire`]: every call is one JSON request and one JSON
//! answer (`Ok` value or a serialised [`PluginError`](handoff_capability::PluginError)), except the v3 ids'
//! transcripts, which travel in the binary form of [`codec`] and, when read, in batches (the v4
//! ids add the streamed create and the streamed read of a file, the v5 ids the read of a file
//! as it is written).
//!
//! Architecture invariant: abi_stable types appear only here, in the SDK's export glue and in
//! the loader. Hosts and plugin authors see the plain traits of `handoff-capability`.
#![deny(missing_docs)]

/// The abi_stable crate itself, for the SDK's export glue (plugins never name it).
#[doc(hidden)]
pub use abi_stable;

pub mod binary_call;
pub mod codec;
pub mod declaration;
pub mod growth;
/// The frozen abi_stable types (their own crate: see its docs).
pub use handoff_abi_layout as module;
pub mod wire;

pub use declaration::{
    DeclStr, PluginDeclaration, DECLARATION_MAGIC, DECLARATION_SYMBOL, DECLARATION_VERSION,
};
pub use module::{
    Capability, CapabilityBox, Capability_TO, HostLogger, PluginModule, PluginModuleRef,
    ROOT_MODULE_VERSION,
};

/// Capability id of the writer ([`handoff_capability::Writer`]), version 1.
pub const WRITER_V1: &str = "transcript.writer.v1";
/// Capability id of the reader ([`handoff_capability::Reader`]), version 1.
pub const READER_V1: &str = "transcript.reader.v1";
/// Capability id of the resumer ([`handoff_capability::Resumer`]), version 1.
pub const RESUME_V1: &str = "resume.v1";
/// Capability id of the writer, version 2: sessions arrive resolved ([`wire::WriterRequestV2`]).
pub const WRITER_V2: &str = "transcript.writer.v2";
/// Capability id of the reader, version 2 ([`wire::ReaderRequestV2`]).
pub const READER_V2: &str = "transcript.reader.v2";
/// Capability id of the resumer, version 2 ([`wire::ResumeRequestV2`]).
pub const RESUME_V2: &str = "resume.v2";
/// Capability id of the writer, version 3: v2's requests, plus `create` and `append` as binary
/// calls whose events travel in the binary form of [`codec`] ([`wire::WriterRequestV3`]).
pub const WRITER_V3: &str = "transcript.writer.v3";
/// Capability id of the reader, version 3: v2's requests, plus `read`, `read_path` and
/// `read_each` as binary calls that stream the events back in batches
/// ([`wire::ReaderRequestV3`]).
pub const READER_V3: &str = "transcript.reader.v3";
/// Capability id of the writer, version 4: v3's requests, plus `create_streamed` as a binary call
/// whose events the plugin pulls lazily as its writer takes them ([`wire::WriterRequestV4`]).
pub const WRITER_V4: &str = "transcript.writer.v4";
/// Capability id of the reader, version 4: v3's requests, plus `read_path_each` as a binary call
/// that streams the events as the plugin reads them, and `read_path_cwd` as JSON
/// ([`wire::ReaderRequestV4`]).
pub const READER_V4: &str = "transcript.reader.v4";

/// Capability id of the writer, version 5: v4's requests; its `create_streamed` also reports the
/// growth of the file it writes (see [`growth`]), so the host can read it as it is written.
pub const WRITER_V5: &str = "transcript.writer.v5";
/// Capability id of the reader, version 5: v4's requests, plus `read_written_each` as a binary
/// call: the plugin's reader reads a file the host's writer is still writing, waiting for its
/// growth through the call's `pull` ([`wire::ReaderRequestV5`], [`growth`]).
pub const READER_V5: &str = "transcript.reader.v5";

/// The major version of the host's plugin API ([`handoff_capability::PLUGIN_API_VERSION`]); certificates are
/// keyed by it.
pub fn api_major() -> u64 {
    semver::Version::parse(handoff_capability::PLUGIN_API_VERSION)
        .map(|v| v.major)
        .unwrap_or(0)
}
