//! handoff-gemini: the Gemini targets.
//!
//! - `gemini-cli`: Gemini CLI 0.61.0's JSONL chats, `<root>/tmp/<short id>/chats/session-….jsonl`,
//!   written so the CLI lists, keeps and resumes them (`gemini --resume <uuid>`), read with the
//!   CLI's own semantics (replacement by id, `$set`, `$rewindTo`, legacy `.json`).
//!
//! - `gemini-api`: the stateless generateContent history, one JSON file per session holding its
//!   `contents` (rendered and read by core's Gemini dialect); resuming is the next request body.
//!
//! The facts behind every choice are in `docs/formats/gemini.md`.

#![deny(missing_docs)]

pub mod gemini_api;
pub mod gemini_cli;
pub mod manifest;

use manifest::PLUGIN_NAME;

/// The gemini plugin: its two targets, dispatched, checked, locked and owner-checked by the SDK.
#[derive(Clone, Copy, Debug, Default)]
pub struct GeminiPlugin;

handoff_sdk::targets!(
    GeminiPlugin,
    PLUGIN_NAME,
    [gemini_cli::GeminiCli, gemini_api::GeminiApi]
);

handoff_sdk::register_builtin!(GeminiPlugin);
