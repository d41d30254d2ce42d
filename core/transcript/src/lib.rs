//! handoff-transcript, the lowest layer: the canonical transcript, the one model of a conversation
//! every plugin reads and writes. It depends on no other handoff crate.
//!
//! The JSON form is a versioned contract (`"schema": "handoff.transcript/1"`), documented in
//! `docs/transcript.md`. Provider fields with no canonical home ride in [`Event::opaque`], keyed by
//! provider, so a same-provider round trip loses nothing; semantic equality ignores them.
#![deny(missing_docs)]

pub mod base64;
pub mod ids;
pub mod spill;

mod drop;
mod equality;
mod features;
mod fingerprint;
mod model;
pub mod synthetic;
mod timestamp;
mod validate;

pub use drop::{DropFilter, Dropped, NotDroppable};
pub use equality::{Comparison, Difference, Verifier};
pub use features::Feature;
pub use fingerprint::{Fingerprinter, PrintChain};
pub use model::{
    AssistantPart, Author, AuthorKind, Body, Event, Origin, Part, Signature, Thinking, ToolCall,
    ToolInput, Transcript, WebSearch, FREEFORM_MEMBER, SCHEMA,
};
pub use timestamp::{Timestamp, RFC3339_MILLIS_LEN};
pub use validate::{IdDigest, IdSeeds, SeenId, SeenKey, SeenSet, ValidationError, Validator};
