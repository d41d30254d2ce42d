//! handoff-store, the second layer (on nothing of handoff's): a plugin's file writes.
//!
//! The store: where a plugin may write, and how it writes without ever leaving a torn file.
//!
//! Every real CLI silently drops a torn last line of a session, so a torn write is invisible data
//! loss. Writes here are therefore whole or nothing: [`atomic::create_new`] writes a temp file,
//! syncs it and renames it into place; [`atomic::append`] writes whole lines and cuts the file
//! back to its previous length on any failure. A process killed in the middle is covered by the
//! host's journal (`handoff-host`), which rolls its write back the next time it writes there.
#![deny(missing_docs)]

pub mod atomic;
pub mod lock;
pub mod marker;
mod root;
pub mod scratch;
pub mod tap;

pub use root::{validate_component, validate_cwd, CreateError, PathError, StoreRoot};
