//! Wire dialects: render a canonical transcript as a provider's request history, parse one back,
//! and validate it against the provider's rules (see `docs/formats/wire-rules.md`).
//!
//! The continuation engine uses them for API targets, and the live checks use them to read the
//! history a real CLI sent to the fake provider.

pub mod anthropic;
pub mod openai_responses;
