//! The reference plugin (work in progress).
