//! The OpenAI Responses dialect: a transcript as the `input` items of `POST /v1/responses`.
//!
//! - [`render`] / [`render_with`] turn a canonical transcript into the `input` items a stateless
//!   client sends (`store: false`, no item ids, encrypted reasoning replayed only to the model
//!   that made it).
//! - [`parse`] reads a real request's `input` back into canonical events; [`parse_input`] also
//!   returns the developer and system messages (the instructions) it set aside. It accepts what
//!   the Codex CLI sends: item `id`s and members it does not know. What a client injected by
//!   itself (a CLI's environment message, say) is kept: setting it aside is the caller's choice
//!   (a live recipe declares it).
//! - [`validate`] checks `input` items against the rules R1–R7 of `wire-rules.md` §3 that can be
//!   checked on the wire; [`check_reasoning_portable`] checks R5, which needs the canonical maker
//!   of each reasoning blob; [`validate_request`] adds the request-level rule R6.
//!
//! The wire carries no timestamps, authors or model origins: parsed events have timestamp 0, no
//! author and no origin, and ids taken from the item `id` where there is one. Tool results have no
//! error flag ([`crate::WireLimit::NoToolErrorFlag`]).

mod content;
mod parse;
mod render;
#[cfg(test)]
mod tests;
mod validate;
mod wire;

pub use crate::image_part;
pub use crate::{ParseError, Violation as RuleViolation};
pub use parse::{parse, parse_input, ParsedInput};
pub use render::{render, render_with};
pub use validate::{check_reasoning_portable, validate, validate_input, validate_request};
pub(crate) use wire::Responses;

/// The dialect name used in resume plans and live recipes.
pub const DIALECT: &str = "openai-responses";
/// The provider whose reasoning this dialect replays.
pub const PROVIDER: &str = "openai";
