//! The Gemini dialect: a transcript as the `contents` of `generateContent` /
//! `streamGenerateContent` (`POST …/models/<model>:generateContent`).
//!
//! - [`render`] turns a canonical transcript into contents of roles `user` and `model`,
//!   consecutive turns of one role merged into one content, the `functionResponse` parts of a
//!   user content first. Parts: `text`, `inlineData` (image bytes), `fileData` (image URLs),
//!   `functionCall {id, name, args}`, `functionResponse {id, name, response, parts}` (the
//!   result's texts under `response.output`, or `response.error` for a failed tool; its images
//!   as `parts`), thought summaries as `{text, thought: true}`. A `thoughtSignature` goes back
//!   only to Gemini (and to the model that made it): on the part it came on.
//! - [`render_each`] gives each event's content unmerged (a store of one content per record);
//!   [`render_event`] one event's, for a store written as its events arrive.
//! - [`parse`] reads a body (or a bare `contents` array) back; `systemInstruction` becomes the
//!   system prompt. A call without an id gets the id `contents[c].parts[p]`, and a response
//!   without one answers the earliest open call of its name.
//! - [`validate`] checks a body against the rules G1–G7 of `wire-rules.md` §4.
//!
//! Canonical thinking and signatures: a `{text, thought: true, thoughtSignature}` part is one
//! thinking part; a signature on any other part (a function call, a text) is a thinking part
//! with no text and that signature, placed right before the part it rode on, and it goes back
//! on that part.

mod parse;
mod parts;
mod render;
mod validate;
mod wire;

pub use parse::{parse, ContentParser};
pub use render::{render, render_each, render_event};
pub use validate::{validate, validate_history};
pub(crate) use wire::GenerateContent;

/// The dialect name used in resume plans and live recipes.
pub const DIALECT: &str = "gemini";
/// The provider whose thought signatures this dialect replays.
pub const PROVIDER: &str = "google";
/// The signature value Gemini accepts in place of a missing one on a function call of the
/// current turn (for history it did not sign itself; rule G4).
pub const SKIP_SIGNATURE: &str = "skip_thought_signature_validator";
/// Signature values that are not signatures: accepted by validation, dropped by parsing.
pub const SENTINEL_SIGNATURES: &[&str] = &[SKIP_SIGNATURE, "context_engineering_is_the_way_to_go"];
