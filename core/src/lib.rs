//! handoff-core: the host core of handoff.
//!
//! A conversation with a coding agent is modelled once, as a canonical [`Transcript`]. Providers are
//! plugins that implement the capability traits of [`capability`] ([`Writer`], [`Reader`],
//! [`Resumer`]) against their real native store, always inside a [`StoreRoot`]. The [`dialect`]
//! module renders and parses the wire formats of the provider APIs, so the continuation engine and
//! the live checks can tell whether a request carries a transcript natively.
//!
//! This crate never names a concrete provider plugin: providers depend on it, never the reverse.
#![deny(missing_docs)]

#[cfg(feature = "abi")]
pub mod abi;
pub mod builtin;
pub mod capability;
pub mod continuation;
pub mod dialect;
pub mod ids;
pub mod live;
#[cfg(feature = "host")]
pub mod loader;
pub mod manifest;
#[cfg(feature = "host")]
pub mod registry;
pub mod store;
pub mod transcript;

pub use capability::{
    ById, CreateOptions, EventBatch, EventStream, HeldEvents, Manifest, Plugin, PluginError,
    Reader, ResumePlan, Resumer, SessionInfo, SessionRef, TargetKind, TargetManifest, Writer,
    PLUGIN_API_VERSION,
};
pub use store::StoreRoot;
pub use transcript::{
    AssistantPart, Author, AuthorKind, Body, Comparison, Difference, DropFilter, Dropped, Event,
    Feature, Origin, Part, Signature, Thinking, Timestamp, ToolCall, ToolInput, Transcript,
    ValidationError, WebSearch, FREEFORM_MEMBER, SCHEMA,
};
