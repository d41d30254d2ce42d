//! The store: where a plugin may write, and how it writes without ever leaving a torn file.
//!
//! Every real CLI silently drops a torn last line of a session, so a torn write is invisible data
//! loss. Writes here are therefore whole or nothing: [`atomic::create_new`] writes a temp file,
//! syncs it and renames it into place; [`atomic::append`] writes whole lines and cuts the file
//! back to its previous length on any failure.

pub mod atomic;
pub mod lock;
pub mod marker;
mod root;

pub use root::{validate_component, PathError, StoreRoot};
