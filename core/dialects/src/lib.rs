//! handoff-dialects, the second layer (on handoff-transcript).
//!
//! Wire dialects: render a canonical transcript as a provider's request history, parse one back,
//! and validate it against the provider's rules (rules A1–A15, R1–R7, C1–C5, G1–G7 of
//! `wire-rules.md`; see `docs/formats/wire-dialects.md`).
//!
//! One interface, [`Dialect`]: [`Dialect::parse`] a body into a canonical transcript (and the
//! system prompt), [`Dialect::render_history`] / [`Dialect::render_request`] a transcript into
//! the history or a whole request body, [`Dialect::validate`] a body against the provider's
//! rules, and [`Dialect::limits`]: what the wire cannot carry. Each dialect lives in its own
//! module ([`anthropic`], [`openai_responses`], [`openai_chat`], [`gemini`]), whose own functions
//! stay available for callers that need more (block-level placements, native item shapes).
//!
//! The continuation engine uses them for API targets, the live checks to read the history a real
//! CLI sent to the fake provider, and the fake provider to refuse what the real API would refuse.
//!
//! All of that is the `wire` feature (on by default). Without it the crate is only the
//! [`Dialect`] names a manifest, a live recipe or a resume plan carries, so a plugin that writes
//! no request history compiles none of the wire code (the SDK's `dialects` feature turns it on).
#![deny(missing_docs)]

use serde::{Deserialize, Serialize};
#[cfg(feature = "wire")]
use serde_json::Value;

#[cfg(feature = "wire")]
use handoff_transcript::{Body, Event, Timestamp, Transcript};

#[cfg(feature = "wire")]
pub mod anthropic;
#[cfg(feature = "wire")]
mod data_url;
#[cfg(feature = "wire")]
pub mod gemini;
#[cfg(feature = "wire")]
mod interface;
#[cfg(feature = "wire")]
mod limits;
#[cfg(feature = "wire")]
pub mod openai_chat;
#[cfg(feature = "wire")]
pub mod openai_responses;
#[cfg(all(test, feature = "wire"))]
mod tests;
#[cfg(feature = "wire")]
mod view;
#[cfg(feature = "wire")]
mod visible;

#[cfg(feature = "wire")]
pub use data_url::{data_url, image_part, image_url};
#[cfg(feature = "wire")]
pub(crate) use interface::{history_of, result_text, string_member, Wire};
#[cfg(feature = "wire")]
pub use interface::{kind_of, ParseError, Parsed, RenderError, RenderOptions, Violation};
#[cfg(feature = "wire")]
pub use limits::WireLimit;
#[cfg(feature = "wire")]
pub use view::{parsed_view, push_merged, wire_view};

/// The `max_tokens` of a Messages request body with a model, when the options set none (the
/// Messages API requires one).
#[cfg(feature = "wire")]
pub const DEFAULT_MAX_TOKENS: u64 = 4096;

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

    /// The member of a request body that holds the history: `messages`, `input` or `contents`.
    pub fn history_field(self) -> &'static str {
        match self {
            Dialect::AnthropicMessages | Dialect::OpenaiChat => "messages",
            Dialect::OpenaiResponses => "input",
            Dialect::Gemini => "contents",
        }
    }
}

#[cfg(feature = "wire")]
impl Dialect {
    /// The one place a dialect is tied to its module.
    fn wire(self) -> &'static dyn Wire {
        match self {
            Dialect::AnthropicMessages => &anthropic::Messages,
            Dialect::OpenaiResponses => &openai_responses::Responses,
            Dialect::OpenaiChat => &openai_chat::Chat,
            Dialect::Gemini => &gemini::GenerateContent,
        }
    }

    /// The provider whose signed thinking this wire replays, and the origin of the assistant
    /// turns it parses: `anthropic`, `openai` or `google`.
    pub fn provider(self) -> &'static str {
        match self {
            Dialect::AnthropicMessages => anthropic::PROVIDER,
            Dialect::OpenaiResponses => openai_responses::PROVIDER,
            Dialect::OpenaiChat => openai_chat::PROVIDER,
            Dialect::Gemini => gemini::PROVIDER,
        }
    }

    /// The providers whose thinking goes back when [`RenderOptions::thinking_from`] is `None`:
    /// the dialect's own provider, or nobody for Chat Completions (it carries no thinking).
    pub fn default_thinking_from(self) -> &'static [&'static str] {
        match self {
            Dialect::AnthropicMessages => &[anthropic::PROVIDER],
            Dialect::OpenaiResponses => &[openai_responses::PROVIDER],
            Dialect::OpenaiChat => &[],
            Dialect::Gemini => &[gemini::PROVIDER],
        }
    }

    /// What this wire cannot carry, in the order the renderer works around it.
    pub fn limits(self) -> &'static [WireLimit] {
        match self {
            Dialect::AnthropicMessages => &[WireLimit::NoBlankText],
            Dialect::OpenaiResponses => &[WireLimit::NoToolErrorFlag],
            // Thinking becomes text, empty texts go, then texts move before the calls and join
            // into one string.
            Dialect::OpenaiChat => &[
                WireLimit::NoToolErrorFlag,
                WireLimit::ThinkingAsText,
                WireLimit::NoEmptyText,
                WireLimit::ToolResultImagesInUserTurn,
                WireLimit::TextBeforeToolCalls,
                WireLimit::AssistantTextJoined,
            ],
            Dialect::Gemini => &[WireLimit::ToolResultTextsFirst, WireLimit::NoEmptyText],
        }
    }

    /// One line per limit, for evidence.
    pub fn limit_notes(self) -> Vec<String> {
        self.limits().iter().map(|l| l.note(self)).collect()
    }

    /// Parses a request body, or a bare history array, into canonical form: the history as a
    /// transcript, the system prompt set apart. Nothing a client injected is filtered here; that
    /// is the caller's (see `live::Injected`).
    pub fn parse(self, body: &Value) -> Result<Parsed, ParseError> {
        self.wire().parse(body)
    }

    /// Renders `transcript` as a body: the history, plus `model`, `system` (and the like) where
    /// `options` set them. Compactions are applied; thinking goes back only as
    /// [`RenderOptions::thinking_from`] says.
    pub fn render_body(
        self,
        transcript: &Transcript,
        options: &RenderOptions,
    ) -> Result<Value, RenderError> {
        self.wire().render(transcript, options)
    }

    /// Renders `transcript` as the history array alone (`messages`, `input` or `contents`).
    pub fn render_history(
        self,
        transcript: &Transcript,
        options: &RenderOptions,
    ) -> Result<Vec<Value>, RenderError> {
        let mut body = self.render_body(transcript, options)?;
        match body
            .get_mut(self.history_field())
            .map(serde_json::Value::take)
        {
            Some(Value::Array(items)) => Ok(items),
            _ => unreachable!("every renderer writes its history array"),
        }
    }

    /// A whole request body for `model`: the history of `transcript` followed by the user
    /// prompt `prompt` (merged into a trailing user message where the wire merges turns).
    pub fn render_request(
        self,
        transcript: &Transcript,
        model: &str,
        prompt: &str,
        options: &RenderOptions,
    ) -> Result<Value, RenderError> {
        let mut whole = transcript.clone();
        whole.events.push(Event::new(
            unique_id(transcript, "prompt"),
            Timestamp::from_millis(0),
            Body::user_text(prompt),
        ));
        let options = RenderOptions {
            model: Some(model.to_owned()),
            ..options.clone()
        };
        self.render_body(&whole, &options)
    }

    /// Checks a request about to be sent against the provider's rules; the first violation
    /// names the rule, the history index and the field.
    pub fn validate(self, body: &Value) -> Result<(), Violation> {
        self.wire().validate(body, true)
    }

    /// Checks a stored history that more will follow: the last assistant turn's tool calls may
    /// still wait for their results (and Anthropic allows a trailing assistant message); every
    /// other rule is checked.
    pub fn validate_history(self, body: &Value) -> Result<(), Violation> {
        self.wire().validate(body, false)
    }
}

/// An event id not used in `transcript`: `base`, else `base-2`, `base-3`, …
#[cfg(feature = "wire")]
fn unique_id(transcript: &Transcript, base: &str) -> String {
    let taken = |id: &str| transcript.events.iter().any(|e| e.id == id);
    if !taken(base) {
        return base.to_owned();
    }
    (2..)
        .map(|n| format!("{base}-{n}"))
        .find(|id| !taken(id))
        .expect("some suffix is free")
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
