//! Wire dialects: render a canonical transcript as a provider's request history, parse one back,
//! and validate it against the provider's rules (see `docs/formats/wire-rules.md`).
//!
//! The continuation engine uses them for API targets, and the live checks use them to read the
//! history a real CLI sent to the fake provider.

use serde::{Deserialize, Serialize};

pub mod anthropic;
pub mod openai_responses;

/// A provider wire format. Its serialised name (`anthropic-messages`, …) is what resume plans,
/// live recipes and manifests carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Dialect {
    /// Anthropic Messages (`POST /v1/messages`).
    AnthropicMessages,
    /// OpenAI Responses (`POST /v1/responses`).
    OpenaiResponses,
    /// OpenAI Chat Completions (`POST /v1/chat/completions`).
    OpenaiChat,
    /// Gemini generateContent (`POST /v1beta/models/{model}:generateContent`).
    Gemini,
}

impl Dialect {
    /// Every dialect, listed once.
    pub const ALL: [Dialect; 4] = [
        Dialect::AnthropicMessages,
        Dialect::OpenaiResponses,
        Dialect::OpenaiChat,
        Dialect::Gemini,
    ];

    /// The serialised name, e.g. `anthropic-messages`.
    pub fn name(self) -> &'static str {
        match self {
            Dialect::AnthropicMessages => "anthropic-messages",
            Dialect::OpenaiResponses => "openai-responses",
            Dialect::OpenaiChat => "openai-chat",
            Dialect::Gemini => "gemini",
        }
    }
}

impl std::fmt::Display for Dialect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Dialect {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Dialect::ALL
            .into_iter()
            .find(|d| d.name() == s)
            .ok_or_else(|| format!("unknown dialect {s:?}"))
    }
}
