//! The Claude plugin of handoff, with two targets:
//!
//! - `claude-code`: Claude Code's project JSONL (`<root>/projects/<cwd slug>/<uuid>.jsonl`),
//!   written the way Claude Code 2.1.197 writes it and resumed with
//!   `claude -p --resume <uuid> PROMPT` in the session's cwd;
//! - `anthropic-messages`: the stateless Anthropic Messages API; the store is the request history
//!   as one JSON file per session (`<root>/anthropic-messages/<uuid>.json`), resumed by the next
//!   request body.
//!
//! Both render and parse Anthropic content blocks with core's dialect module
//! (`handoff_sdk::dialect::anthropic`), so the store, the wire and the live checks agree.
//!
//! The crate has the shape every plugin crate has (`docs/plugin-authoring.md`): this file is the
//! plugin, its targets handed to the SDK's `targets!`: a module per target (`claude_code/`, `anthropic_messages/`, each
//! `mod.rs` over `layout`, `records`, `read` and `write`); `manifest.rs` is what it declares;
//! `extras.rs` is the `handoff` member both targets keep beside the native data.

#![deny(missing_docs)]

mod anthropic_messages;
mod claude_code;
mod extras;
mod manifest;

pub use manifest::{CLAUDE_CODE, CLAUDE_CODE_VERSION, MESSAGES, PLUGIN_NAME};

/// The Claude plugin: both targets, dispatched, checked, locked and owner-checked by the SDK.
#[derive(Clone, Copy, Debug, Default)]
pub struct ClaudePlugin;

handoff_sdk::targets!(
    ClaudePlugin,
    PLUGIN_NAME,
    [
        claude_code::ClaudeCode,
        anthropic_messages::AnthropicMessages
    ]
);

// Makes the plugin a built-in of any host that links this crate; `so/` exports it as a shared
// library.
handoff_sdk::register_builtin!(ClaudePlugin);
