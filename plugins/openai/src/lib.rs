//! The OpenAI plugin of handoff, with two stateless API targets:
//!
//! - `openai-chat`: Chat Completions; the store is the request's `messages`;
//! - `openai-responses`: Responses; the store is the request's `input` items.
//!
//! A session is one JSON file, `<root>/<target>/<uuid>.json`, holding the provider's own request
//! history and, in a `handoff` member the API never sees, what the wire has no room for. Both
//! render, parse and validate through core's dialects (`handoff_sdk::dialect`), so the store, the
//! resume body and the checks agree. Resuming is the exact next request body: the history plus
//! the new user message, for the model the session used. Every mapping choice is in
//! `docs/formats/openai.md`.

#![deny(missing_docs)]

mod history;
mod manifest;
pub mod openai_chat;
pub mod openai_responses;

pub use history::DEFAULT_MODEL;
pub use manifest::PLUGIN_NAME;

/// The OpenAI plugin: both targets (one store, two dialects), dispatched, checked, locked and
/// owner-checked by the SDK.
#[derive(Clone, Copy, Debug, Default)]
pub struct OpenaiPlugin;

handoff_sdk::targets!(
    OpenaiPlugin,
    PLUGIN_NAME,
    [openai_chat::TARGET, openai_responses::TARGET]
);

// Registers the plugin with a host that links this crate; `so/` exports it as a shared library.
handoff_sdk::register_builtin!(OpenaiPlugin);
