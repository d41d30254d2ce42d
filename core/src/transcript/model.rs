use std::collections::BTreeMap;

use base64::Engine as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::Timestamp;

/// The schema name and version of the canonical JSON form.
pub const SCHEMA: &str = "handoff.transcript/1";

/// A whole conversation: an ordered list of events.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Transcript {
    /// Always [`SCHEMA`]; a reader refuses any other value.
    #[serde(deserialize_with = "deserialize_schema", default = "schema_name")]
    pub schema: String,
    /// The working directory the conversation ran in, where the source knew it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// The events, in the order they happened.
    pub events: Vec<Event>,
}

fn schema_name() -> String {
    SCHEMA.to_owned()
}

fn deserialize_schema<'de, D: Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    let schema = String::deserialize(deserializer)?;
    if schema != SCHEMA {
        return Err(serde::de::Error::custom(format!(
            "unsupported transcript schema {schema:?}; this build reads {SCHEMA:?}"
        )));
    }
    Ok(schema)
}

impl Transcript {
    /// A transcript of these events.
    pub fn new(events: Vec<Event>) -> Self {
        Transcript {
            schema: SCHEMA.to_owned(),
            cwd: None,
            events,
        }
    }

    /// Parses the canonical JSON form.
    pub fn from_json(text: &str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(text)
    }

    /// The canonical JSON form, pretty-printed.
    pub fn to_json_pretty(&self) -> String {
        serde_json::to_string_pretty(self).expect("a transcript always serialises")
    }

    /// The index of the event with this id.
    pub fn position(&self, event_id: &str) -> Option<usize> {
        self.events.iter().position(|e| e.id == event_id)
    }
}

/// One thing that happened in a conversation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// Stable within the transcript; native readers derive it from the native record id.
    pub id: String,
    /// When it happened, to the millisecond.
    pub timestamp: Timestamp,
    /// Who said it, where the source knows (a shared conversation can have several people).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<Author>,
    /// What happened.
    pub body: Body,
    /// Provider fields with no canonical home, keyed by provider; never compared.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub opaque: BTreeMap<String, Value>,
}

impl Event {
    /// An event with no author and no opaque fields.
    pub fn new(id: impl Into<String>, timestamp: Timestamp, body: Body) -> Self {
        Event {
            id: id.into(),
            timestamp,
            author: None,
            body,
            opaque: BTreeMap::new(),
        }
    }
}

/// A person or agent that authored an event.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Author {
    /// Human or agent.
    pub kind: AuthorKind,
    /// A display name.
    pub name: String,
}

/// Whether an author is a person or a program.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AuthorKind {
    /// A person.
    Human,
    /// An agent or other program.
    Agent,
}

/// What an event is.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Body {
    /// A user turn.
    User {
        /// Text and images, in order.
        content: Vec<Part>,
    },
    /// An assistant turn: parts in the order they happened.
    Assistant {
        /// Text, thinking and tool calls, in order (text → tool call → text stays so).
        content: Vec<AssistantPart>,
        /// Which provider, model and API produced it, where known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        origin: Option<Origin>,
    },
    /// The result of one tool call.
    ToolResult {
        /// The id of the [`ToolCall`] this answers.
        call_id: String,
        /// Text and images, in order; may be empty.
        content: Vec<Part>,
        /// Whether the tool failed.
        is_error: bool,
    },
    /// From here on the model sees `summary` instead of the events up to `replaces_through`.
    Compaction {
        /// The summary the model sees.
        summary: String,
        /// The id of the last event the summary replaces (those events stay for display).
        replaces_through: String,
    },
}

impl Body {
    /// A short name for messages: `user`, `assistant`, `tool_result`, `compaction`.
    pub fn kind(&self) -> &'static str {
        match self {
            Body::User { .. } => "user",
            Body::Assistant { .. } => "assistant",
            Body::ToolResult { .. } => "tool_result",
            Body::Compaction { .. } => "compaction",
        }
    }
}

/// Which provider, model and API produced an assistant turn.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Origin {
    /// The provider, e.g. `anthropic`, `openai`, `google`.
    pub provider: String,
    /// The model id, where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The API, e.g. `anthropic-messages`, `openai-responses`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api: Option<String>,
}

/// A part of a user turn or a tool result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Part {
    /// Plain text.
    Text {
        /// The text, byte for byte (never normalised).
        text: String,
    },
    /// An image carried by its bytes.
    Image {
        /// The media type, e.g. `image/png`.
        media_type: String,
        /// The image bytes (base64 in JSON).
        #[serde(with = "base64_bytes")]
        data: Vec<u8>,
    },
    /// An image referenced by URL, kept as a URL.
    ImageUrl {
        /// The URL.
        url: String,
    },
}

impl Part {
    /// A text part.
    pub fn text(text: impl Into<String>) -> Self {
        Part::Text { text: text.into() }
    }
}

/// A part of an assistant turn.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AssistantPart {
    /// Plain text.
    Text {
        /// The text, byte for byte.
        text: String,
    },
    /// Reasoning the model showed.
    Thinking(Thinking),
    /// A call of a tool.
    ToolCall(ToolCall),
}

impl AssistantPart {
    /// A text part.
    pub fn text(text: impl Into<String>) -> Self {
        AssistantPart::Text { text: text.into() }
    }
}

/// Reasoning text with its optional provider signature.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Thinking {
    /// The visible reasoning text (may be empty for redacted reasoning).
    pub text: String,
    /// The provider's signature or encrypted blob; it goes back only to the provider and model
    /// that made it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<Signature>,
}

/// An opaque provider signature or encrypted reasoning blob, tagged with its maker.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Signature {
    /// The provider that made it, e.g. `anthropic`.
    pub provider: String,
    /// The model that made it, where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The opaque value, exactly as the provider sent it.
    pub value: String,
    /// True when the reasoning itself is hidden and `value` carries it (Anthropic
    /// `redacted_thinking`, OpenAI encrypted reasoning without a summary).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub redacted: bool,
}

/// A call of a tool, with its id and JSON arguments.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The call id; tool results refer to it.
    pub id: String,
    /// The tool name.
    pub name: String,
    /// The arguments as a JSON value (compared as JSON, never as text).
    pub arguments: Value,
}

mod base64_bytes {
    use super::*;

    pub fn serialize<S: Serializer>(bytes: &[u8], serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&base64::engine::general_purpose::STANDARD.encode(bytes))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<u8>, D::Error> {
        let text = std::borrow::Cow::<'de, str>::deserialize(deserializer)?;
        base64::engine::general_purpose::STANDARD
            .decode(text.as_bytes())
            .map_err(|e| serde::de::Error::custom(format!("image data is not base64: {e}")))
    }
}
