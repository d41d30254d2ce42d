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

pub use claude_code::ReadRules;
pub use manifest::{CLAUDE_CODE, CLAUDE_CODE_NEWEST, CLAUDE_CODE_VERSION, MESSAGES, PLUGIN_NAME};

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

/// The Claude plugin reading `claude-code` sessions as one Claude Code version sends them
/// ([`ReadRules::for_version`]); [`ClaudePlugin`] reads as the newest end of the verified range
/// does. Everything else (writing, resuming, listing, `anthropic-messages`) is [`ClaudePlugin`]'s.
/// The live tier's differential reads with the version of the CLI it runs.
#[derive(Clone, Copy, Debug)]
pub struct ClaudePluginReadingAs(pub ReadRules);

impl ClaudePluginReadingAs {
    /// Reading as Claude Code `version` sends a session.
    pub fn version(version: &str) -> Self {
        ClaudePluginReadingAs(ReadRules::for_version(version))
    }
}

impl handoff_sdk::Plugin for ClaudePluginReadingAs {
    fn manifest(&self) -> handoff_sdk::Manifest {
        handoff_sdk::Plugin::manifest(&ClaudePlugin)
    }
    fn writer(&self) -> &dyn handoff_sdk::Writer {
        handoff_sdk::Plugin::writer(&ClaudePlugin)
    }
    fn reader(&self) -> &dyn handoff_sdk::Reader {
        self
    }
    fn resumer(&self) -> &dyn handoff_sdk::Resumer {
        handoff_sdk::Plugin::resumer(&ClaudePlugin)
    }
}

impl handoff_sdk::Reader for ClaudePluginReadingAs {
    fn read_each(
        &self,
        from: handoff_sdk::ReadFrom<'_>,
        sink: &mut dyn FnMut(handoff_sdk::Event) -> bool,
    ) -> Result<handoff_sdk::ReadOutcome, handoff_sdk::PluginError> {
        if from.target() == CLAUDE_CODE {
            claude_code::read_each_as(from, self.0, sink)?;
            return Ok(handoff_sdk::ReadOutcome::Read);
        }
        handoff_sdk::Plugin::reader(&ClaudePlugin).read_each(from, sink)
    }

    fn cwd(
        &self,
        from: handoff_sdk::ReadFrom<'_>,
    ) -> Result<Option<String>, handoff_sdk::PluginError> {
        handoff_sdk::Plugin::reader(&ClaudePlugin).cwd(from)
    }

    fn list(
        &self,
        root: &handoff_sdk::StoreRoot,
        target: &str,
    ) -> Result<Vec<handoff_sdk::SessionInfo>, handoff_sdk::PluginError> {
        handoff_sdk::Plugin::reader(&ClaudePlugin).list(root, target)
    }

    fn find_owned(
        &self,
        root: &handoff_sdk::StoreRoot,
        target: &str,
        locator: &str,
    ) -> Result<Option<handoff_sdk::SessionRef>, handoff_sdk::PluginError> {
        handoff_sdk::Plugin::reader(&ClaudePlugin).find_owned(root, target, locator)
    }
}

// Makes the plugin a built-in of any host that links this crate; `so/` exports it as a shared
// library.
handoff_sdk::register_builtin!(ClaudePlugin);
