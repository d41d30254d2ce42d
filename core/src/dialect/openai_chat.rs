//! The OpenAI Chat Completions dialect: a transcript as the `messages` of
//! `POST /v1/chat/completions`.
//!
//! - [`render`] turns a canonical transcript into messages: consecutive assistant turns become one
//!   assistant message (`content` then `tool_calls`, arguments as JSON strings); after it, one
//!   `tool` message per call id, then the images the results held (tool messages take text only)
//!   as one user message, then the user's own messages.
//! - [`parse`] reads a body (or a bare `messages` array) back: system and developer messages
//!   become the system prompt, `data:` image URLs become image bytes.
//! - [`validate`] checks a body against the rules C1–C5 of `wire-rules.md` §2.
//!
//! What the wire cannot carry ([`crate::dialect::WireLimit`]): tool-result error flags, thinking,
//! images inside tool results, text after a tool call inside one turn, empty texts. Thinking is
//! display-only here: [`render`] leaves out thinking whose maker the caller's comparison sets
//! aside (by default all of it) and refuses thinking the caller says it keeps, since the wire
//! would lose it.

mod parse;
mod render;
mod validate;
mod wire;

pub use parse::parse;
pub use render::render;
pub use validate::{validate, validate_history, MAX_TOOL_CALL_ID};
pub(crate) use wire::Chat;

/// The dialect name used in resume plans and live recipes.
pub const DIALECT: &str = "openai-chat";
/// The provider of the models behind this wire (the origin of parsed assistant turns).
pub const PROVIDER: &str = "openai";
