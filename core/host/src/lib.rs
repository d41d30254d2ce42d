//! handoff-host, the top layer: what only a host needs.
//!
//! A host finds plugins ([`loader`]: a plugin file is probed before any of its code runs, then
//! loaded through `handoff-abi`; built-ins are linked in), keeps the [`registry`] of targets with
//! their sealed certificates, and runs the [`continuation`] engine: read a source, write it into a
//! target's native store under the [`journal`] (sealed with this user's key, [`seal`]), read it
//! back, verify, resume. Plugins never depend on this crate.
//!
//! The vocabulary a host names most (the transcript, the capability traits, the store root) is
//! re-exported here from the layers below, so a host application can depend on this crate alone.
#![deny(missing_docs)]

pub mod continuation;
pub mod episodes;
pub mod installed;
pub mod journal;
pub mod loader;
pub mod registry;
pub mod seal;

pub use handoff_capability::live;
pub use handoff_capability::{
    ById, CreateOptions, EventBatch, EventStream, HeldEvents, MakePlugin, Manifest, Plugin,
    PluginError, ReadFrom, ReadOutcome, Reader, ResumeCommand, ResumePlan, Resumer, SessionInfo,
    SessionRef, TargetKind, TargetManifest, Writer, PLUGIN_API_VERSION,
};
pub use handoff_store::StoreRoot;
pub use handoff_transcript::{
    AssistantPart, Author, AuthorKind, Body, Comparison, Difference, DropFilter, Dropped, Event,
    Feature, Origin, Part, Signature, Thinking, Timestamp, ToolCall, ToolInput, Transcript,
    ValidationError, WebSearch, FREEFORM_MEMBER, SCHEMA,
};
