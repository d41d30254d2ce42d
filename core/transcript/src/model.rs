use std::borrow::Cow;
use std::collections::BTreeMap;

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

    /// The ids of this event's freeform tool calls (an assistant turn's; none for another event).
    pub fn freeform_call_ids(&self) -> impl Iterator<Item = &str> {
        let content: &[AssistantPart] = match &self.body {
            Body::Assistant { content, .. } => content,
            _ => &[],
        };
        content.iter().filter_map(|part| match part {
            AssistantPart::ToolCall(call) if matches!(call.input, ToolInput::Freeform(_)) => {
                Some(call.id.as_str())
            }
            _ => None,
        })
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

    /// A user turn of one text.
    pub fn user_text(text: impl Into<String>) -> Self {
        Body::User {
            content: vec![Part::text(text)],
        }
    }

    /// An assistant turn of `content`, of no known origin.
    pub fn assistant(content: Vec<AssistantPart>) -> Self {
        Body::Assistant {
            content,
            origin: None,
        }
    }

    /// The text a tool call `call_id` gave back.
    pub fn tool_output(call_id: impl Into<String>, text: impl Into<String>) -> Self {
        Body::ToolResult {
            call_id: call_id.into(),
            content: vec![Part::text(text)],
            is_error: false,
        }
    }

    /// A tool result's call id, content and error flag; `None` for another kind of event.
    pub fn as_tool_result(&self) -> Option<(&str, &[Part], bool)> {
        match self {
            Body::ToolResult {
                call_id,
                content,
                is_error,
            } => Some((call_id, content, *is_error)),
            _ => None,
        }
    }

    /// The text of the failure of tool call `call_id`.
    pub fn tool_error(call_id: impl Into<String>, text: impl Into<String>) -> Self {
        Body::ToolResult {
            call_id: call_id.into(),
            content: vec![Part::text(text)],
            is_error: true,
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

impl Origin {
    /// An origin whose provider, model and API are all known.
    pub fn new(provider: &str, model: &str, api: &str) -> Origin {
        Origin {
            provider: provider.to_owned(),
            model: Some(model.to_owned()),
            api: Some(api.to_owned()),
        }
    }
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
    /// A web search the provider ran itself (OpenAI's hosted `web_search` tool): the history
    /// holds the call and never its results.
    WebSearch(WebSearch),
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

/// A call of a tool, with its id and its input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolCall {
    /// The call id; tool results refer to it.
    pub id: String,
    /// The tool name.
    pub name: String,
    /// What the tool was called with: JSON arguments or freeform text.
    pub input: ToolInput,
}

impl ToolCall {
    /// A call with JSON arguments.
    pub fn new(id: impl Into<String>, name: impl Into<String>, arguments: Value) -> Self {
        ToolCall {
            id: id.into(),
            name: name.into(),
            input: ToolInput::Arguments(arguments),
        }
    }

    /// The JSON arguments, or `None` for a freeform call.
    pub fn arguments(&self) -> Option<&Value> {
        match &self.input {
            ToolInput::Arguments(arguments) => Some(arguments),
            ToolInput::Freeform(_) => None,
        }
    }

    /// The arguments as a target without freeform tools carries them: JSON arguments as they
    /// are, freeform text as `{"input": <text>}` ([`FREEFORM_MEMBER`]).
    pub fn structured_arguments(&self) -> Cow<'_, Value> {
        match &self.input {
            ToolInput::Arguments(arguments) => Cow::Borrowed(arguments),
            ToolInput::Freeform(text) => {
                let mut object = serde_json::Map::with_capacity(1);
                object.insert(FREEFORM_MEMBER.to_owned(), Value::String(text.clone()));
                Cow::Owned(Value::Object(object))
            }
        }
    }
}

/// The one member of the structured form of a freeform call (`{"input": <text>}`).
pub const FREEFORM_MEMBER: &str = "input";

/// What a tool was called with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToolInput {
    /// JSON arguments (a function tool), compared as JSON, never as text.
    Arguments(Value),
    /// Freeform text (a custom tool, e.g. Codex's `apply_patch` with its raw patch), byte for
    /// byte.
    Freeform(String),
}

impl ToolInput {
    /// The freeform input read back from a target's structured form: `arguments` must be
    /// exactly `{"input": <string>}` ([`ToolCall::structured_arguments`]); `None` otherwise.
    pub fn freeform_from_structured(arguments: &Value) -> Option<String> {
        match arguments {
            Value::Object(object) if object.len() == 1 => match object.get(FREEFORM_MEMBER) {
                Some(Value::String(text)) => Some(text.clone()),
                _ => None,
            },
            _ => None,
        }
    }
}

/// The canonical JSON of a tool call: `{id, name, arguments}` for JSON arguments, `{id, name,
/// input}` for freeform text.
#[derive(Serialize, Deserialize)]
struct ToolCallJson<'a> {
    #[serde(borrow)]
    id: Cow<'a, str>,
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present_value"
    )]
    arguments: Option<Cow<'a, Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none", borrow)]
    input: Option<Cow<'a, str>>,
}

/// A member that is present is `Some`, even when it is `null`.
fn present_value<'de, 'a, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Cow<'a, Value>>, D::Error> {
    Value::deserialize(deserializer).map(|v| Some(Cow::Owned(v)))
}

impl Serialize for ToolCall {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (arguments, input) = match &self.input {
            ToolInput::Arguments(arguments) => (Some(Cow::Borrowed(arguments)), None),
            ToolInput::Freeform(text) => (None, Some(Cow::Borrowed(text.as_str()))),
        };
        ToolCallJson {
            id: Cow::Borrowed(&self.id),
            name: Cow::Borrowed(&self.name),
            arguments,
            input,
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for ToolCall {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let json = ToolCallJson::deserialize(deserializer)?;
        let input = match (json.arguments, json.input) {
            (Some(arguments), None) => ToolInput::Arguments(arguments.into_owned()),
            (None, Some(text)) => ToolInput::Freeform(text.into_owned()),
            (Some(_), Some(_)) => return Err(serde::de::Error::custom(
                "a tool call has either `arguments` (JSON) or `input` (freeform text), not both",
            )),
            (None, None) => return Err(serde::de::Error::missing_field("arguments")),
        };
        Ok(ToolCall {
            id: json.id.into_owned(),
            name: json.name.into_owned(),
            input,
        })
    }
}

/// A web search the provider ran (OpenAI Responses `web_search_call`). The model is sent the
/// call again on every turn, never its results, so this is all there is of it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WebSearch {
    /// The provider's item id (`ws_…`), where the source had one; it is sent back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The call's status (`completed`, …), where the source had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// What the search did, exactly as the provider spelled it (`{"type": "search", "query":
    /// …, "queries": […]}`, `open_page`, `find_in_page`).
    pub action: Value,
}

mod base64_bytes {
    use super::*;

    pub fn serialize<S: Serializer>(bytes: &[u8], serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&crate::base64::encode(bytes))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<u8>, D::Error> {
        let text = Cow::<'de, str>::deserialize(deserializer)?;
        crate::base64::decode(text.as_bytes())
            .map_err(|e| serde::de::Error::custom(format!("image data is not base64: {e}")))
    }
}
