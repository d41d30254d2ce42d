//! The OpenAI Chat Completions dialect: a transcript as the `messages` of
//! `POST /v1/chat/completions`.
//!
//! - [`render`] turns a canonical transcript into messages: consecutive assistant turns become one
//!   assistant message (its texts as `content`, then `tool_calls` with the arguments as JSON
//!   text); after it, one `tool` message per call id, then the images the
//!   results held (tool messages take text only) as one user message, then the user's own
//!   messages.
//! - [`parse`] reads a body (or a bare `messages` array) back: system and developer messages
//!   become the system prompt, `data:` image URLs become image bytes.
//! - [`validate`] checks a body against the rules C1–C5 of `wire-rules.md` §2.
//!
//! What the wire cannot carry ([`crate::WireLimit`]): tool-result error flags, thinking
//! as such, images inside tool results, text after a tool call inside one turn, the boundaries
//! between an assistant turn's texts (clients such as pi send one string), empty texts. Thinking: [`render`] leaves out thinking whose
//! maker the caller's comparison sets aside (`thinking_from`; by default all of it) and sends the
//! thinking it keeps as plain text, without its signature, as pi does for another model.

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
