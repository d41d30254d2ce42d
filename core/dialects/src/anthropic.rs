//! The Anthropic Messages dialect (`POST /v1/messages`).
//!
//! - [`render`] turns a canonical transcript into a request body: same-role turns merged, the
//!   `tool_result` blocks of a user message first, no empty text blocks, thinking only back to the
//!   provider (and model) that signed it, tool-call ids the API would reject mapped reversibly
//!   ([`wire_tool_id`] / [`canonical_tool_id`]).
//! - [`parse`] reads a request body back into blocks and canonical bodies. It accepts what real
//!   clients send (Claude Code included): a top-level `system` as a string or text blocks, content
//!   as a string or blocks, `cache_control` members, `<system-reminder>` texts. Filtering what a
//!   client injected by itself is left to the caller.
//! - [`validate`] / [`validate_history`] check a body against the rules A1–A15 of
//!   `wire-rules.md` §1; a failure names the rule, the message and the block.
//!
//! The block shapes in [`blocks`] are shared with stores that hold Anthropic blocks verbatim
//! (Claude Code's project JSONL), so the two never drift apart.

pub mod blocks;
mod ids;
mod parse;
mod render;
mod validate;
mod wire;

pub use blocks::{parse_block, BlockError, ParsedBlock, ToolResultContent, WireBlock};
pub use ids::{canonical_tool_id, is_wire_tool_id, wire_tool_id, MAPPED_ID_PREFIX};
pub use parse::{parse, parse_message, ParseError, ParsedMessage, ParsedRequest};
pub use render::{
    assistant_blocks, render, render_with_placements, user_blocks, Placement, RenderError,
    RenderOptions, Rendered,
};
pub use validate::{validate, validate_history, RuleViolation};
pub(crate) use wire::Messages;

/// The dialect name used in resume plans and live recipes.
pub const DIALECT: &str = "anthropic-messages";

/// The provider name Anthropic thinking signatures carry.
pub const PROVIDER: &str = "anthropic";
