//! The Anthropic Messages dialect (work in progress).
