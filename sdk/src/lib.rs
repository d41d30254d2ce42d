//! handoff-sdk: everything a plugin author needs, and nothing else.
//!
//! A plugin depends on this crate only. It implements the plain Rust traits re-exported here
//! ([`Plugin`], [`Writer`], [`Reader`], [`Resumer`]) and exports itself with one macro line.
#![deny(missing_docs)]

pub use handoff_core::capability::*;
pub use handoff_core::store::{self, atomic, lock, marker, StoreRoot};
pub use handoff_core::transcript::{self, *};
pub use handoff_core::dialect;
pub use serde_json;
