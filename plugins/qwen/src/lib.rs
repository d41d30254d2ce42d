//! handoff-qwen: the `qwen-code` target, Qwen Code 0.24.4's JSONL chats,
//! `<root>/projects/<cwd slug>/chats/<session id>.jsonl`, written so the CLI resumes them
//! (`qwen --resume <id> -p PROMPT`), read as the CLI builds the history it sends: the chain of
//! `parentUuid`s from the last conversation record, records of one uuid joined, a compression's
//! history in place of what it replaced.
//!
//! A record's `message` is a Gemini `Content` (Qwen Code is a Gemini CLI fork): its parts are
//! rendered and parsed by core's Gemini dialect (`render_event`, `ContentParser`), shared with every
//! Gemini target. The facts behind every choice are in `docs/formats/qwen-code.md`.

#![deny(missing_docs)]

mod chain;
mod history;
mod layout;
pub mod manifest;
mod read;
mod target;
mod write;

use manifest::PLUGIN_NAME;

/// The qwen plugin: its one target, dispatched, checked, locked and owner-checked by the SDK.
#[derive(Clone, Copy, Debug, Default)]
pub struct QwenPlugin;

handoff_sdk::targets!(QwenPlugin, PLUGIN_NAME, [target::QwenCode]);

handoff_sdk::register_builtin!(QwenPlugin);
