//! The serde types of pi's session lines.
//!
//! Reading: one record type per JSON object pi writes (an entry line, its `message`, a content
//! block). Every member the canonical model needs is typed; every other member is kept, in file
//! order, in `extra`, so nothing is lost and a pi → pi round trip can put it back. The records are
//! deserialised by hand-written map visitors (see `record!` below): no intermediate `Value`, keys
//! borrowed from the line, and a field path in every error (`message.content[2].data: …`).
//!
//! Writing: borrowed structs serialised in the member order pi itself uses.

use std::fmt;

use handoff_sdk::serde_json::value::RawValue;
use handoff_sdk::serde_json::{Map, Number, Value};
use handoff_sdk::{Author, Origin, Signature};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};

/// Members of a record that have no typed field, in file order.
pub type Extra = Vec<(String, Value)>;

/// The member that carries canonical fields pi has no place for (authors, …). pi ignores unknown
/// members of an entry and never sends them to a model.
pub const EVENT_MEMBER: &str = "x-handoff-event";

/// A record value turned back into JSON (for entries carried whole).
pub trait IntoValue {
    /// The JSON form.
    fn into_value(self) -> Value;
}

impl IntoValue for String {
    fn into_value(self) -> Value {
        Value::String(self)
    }
}

impl IntoValue for bool {
    fn into_value(self) -> Value {
        Value::Bool(self)
    }
}

impl IntoValue for Value {
    fn into_value(self) -> Value {
        self
    }
}

impl IntoValue for Number {
    fn into_value(self) -> Value {
        Value::Number(self)
    }
}

impl IntoValue for Box<RawValue> {
    fn into_value(self) -> Value {
        handoff_sdk::serde_json::from_str(self.get()).unwrap_or(Value::Null)
    }
}

impl<T: IntoValue> IntoValue for Option<T> {
    fn into_value(self) -> Value {
        self.map_or(Value::Null, IntoValue::into_value)
    }
}

impl IntoValue for HandoffEvent {
    fn into_value(self) -> Value {
        handoff_sdk::serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// Prefixes a nested deserialisation error with the member it happened in. Errors of these
/// records read `@<field path>: <message>`; [`split_field`] takes the path back out.
fn in_member<E: de::Error>(key: &str, error: impl fmt::Display) -> E {
    let inner = error.to_string();
    match inner.strip_prefix('@') {
        Some(rest) if rest.starts_with('[') => E::custom(format!("@{key}{rest}")),
        Some(rest) => E::custom(format!("@{key}.{rest}")),
        None => E::custom(format!("@{key}: {inner}")),
    }
}

/// The field path and the message of an error produced by these records, if it names one.
pub fn split_field(message: &str) -> (Option<String>, String) {
    if let Some(rest) = message.strip_prefix('@') {
        if let Some((path, text)) = rest.split_once(": ") {
            return (Some(path.to_owned()), text.to_owned());
        }
    }
    (None, message.to_owned())
}

/// A string (a member name or value), borrowed from the line where it has no escapes.
pub enum Str<'de> {
    /// Borrowed from the line.
    Borrowed(&'de str),
    /// Unescaped into its own string.
    Owned(String),
}

impl Str<'_> {
    /// The text.
    pub fn as_str(&self) -> &str {
        match self {
            Str::Borrowed(s) => s,
            Str::Owned(s) => s,
        }
    }

    /// The text as an owned string.
    pub fn into_owned(self) -> String {
        match self {
            Str::Borrowed(s) => s.to_owned(),
            Str::Owned(s) => s,
        }
    }
}

impl<'de> Deserialize<'de> for Str<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Str<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Str<'de>, E> {
                Ok(Str::Borrowed(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Str<'de>, E> {
                Ok(Str::Owned(v.to_owned()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Str<'de>, E> {
                Ok(Str::Owned(v))
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

/// Declares a record: a struct of optional typed members plus `extra`, its map visitor, and
/// `into_map` (typed members in declaration order, then the others).
macro_rules! record {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $( $(#[$fmeta:meta])* $field:ident : $ty:ty = $key:literal, )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Default)]
        pub struct $name {
            $( $(#[$fmeta])* pub $field: Option<$ty>, )*
            /// Every other member, in file order.
            pub extra: Extra,
        }

        impl $name {
            /// The record as a JSON object: typed members in declaration order, then the others.
            pub fn into_map(self) -> Map<String, Value> {
                let mut map = Map::new();
                $( if let Some(v) = self.$field { map.insert($key.to_owned(), v.into_value()); } )*
                for (k, v) in self.extra {
                    map.insert(k, v);
                }
                map
            }
        }

        impl IntoValue for $name {
            fn into_value(self) -> Value {
                Value::Object(self.into_map())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct RecordVisitor;
                impl<'de> Visitor<'de> for RecordVisitor {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str("a JSON object")
                    }
                    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<$name, A::Error> {
                        let mut record = $name::default();
                        while let Some(key) = map.next_key::<Str<'de>>()? {
                            match key.as_str() {
                                $( $key => {
                                    record.$field = Some(
                                        map.next_value().map_err(|e| in_member::<A::Error>($key, e))?,
                                    );
                                } )*
                                _ => {
                                    let value: Value = map
                                        .next_value()
                                        .map_err(|e| in_member::<A::Error>(key.as_str(), e))?;
                                    record.extra.push((key.into_owned(), value));
                                }
                            }
                        }
                        Ok(record)
                    }
                }
                d.deserialize_map(RecordVisitor)
            }
        }
    };
}

/// Declares a borrowed envelope: only the members named, borrowed from the line where they have
/// no escapes; every other member is skipped without being built.
macro_rules! envelope {
    (
        $(#[$meta:meta])*
        pub struct $name:ident<'de> {
            $( $(#[$fmeta:meta])* $field:ident : $ty:ty = $key:literal, )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Default)]
        pub struct $name<'de> {
            $( $(#[$fmeta])* pub $field: Option<$ty>, )*
            _line: std::marker::PhantomData<&'de str>,
        }

        impl<'de> Deserialize<'de> for $name<'de> {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct EnvelopeVisitor;
                impl<'de> Visitor<'de> for EnvelopeVisitor {
                    type Value = $name<'de>;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str("a JSON object")
                    }
                    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<$name<'de>, A::Error> {
                        let mut envelope = $name::default();
                        while let Some(key) = map.next_key::<Str<'de>>()? {
                            match key.as_str() {
                                $( $key => {
                                    envelope.$field = Some(
                                        map.next_value().map_err(|e| in_member::<A::Error>($key, e))?,
                                    );
                                } )*
                                _ => {
                                    map.next_value::<de::IgnoredAny>()
                                        .map_err(|e| in_member::<A::Error>(key.as_str(), e))?;
                                }
                            }
                        }
                        Ok(envelope)
                    }
                }
                d.deserialize_map(EnvelopeVisitor)
            }
        }
    };
}

envelope! {
    /// What the first pass over a file needs of a line: the tree and what decides whether pi
    /// sends the entry (`context::base_role`), nothing of the content.
    pub struct Envelope<'de> {
        /// The entry type.
        kind: Str<'de> = "type",
        /// The entry id.
        id: Str<'de> = "id",
        /// The parent id (`null`: none).
        parent_id: Option<Str<'de>> = "parentId",
        /// The message's role and flags.
        message: EnvelopeMessage<'de> = "message",
        /// `branch_summary`: the summary (sent when non-empty).
        summary: Str<'de> = "summary",
        /// `compaction`: the first entry kept in view.
        first_kept_entry_id: Str<'de> = "firstKeptEntryId",
        /// `compaction` (v1): its index.
        first_kept_entry_index: Number = "firstKeptEntryIndex",
        /// `model_change`: the provider.
        provider: Str<'de> = "provider",
        /// `model_change`: the model.
        model_id: Str<'de> = "modelId",
    }
}

envelope! {
    /// The members of a message the first pass needs.
    pub struct EnvelopeMessage<'de> {
        /// The role.
        role: Str<'de> = "role",
        /// Assistant: why it stopped (`error` / `aborted` are not sent).
        stop_reason: Str<'de> = "stopReason",
        /// bashExecution: not sent when truthy.
        exclude_from_context: Value = "excludeFromContext",
        /// Assistant: the provider.
        provider: Str<'de> = "provider",
        /// Assistant: the model.
        model: Str<'de> = "model",
    }
}

record! {
    /// One line of a session file: the header (`type: "session"`) or an entry.
    pub struct Entry {
        /// `session`, `message`, `compaction`, `model_change`, …
        kind: String = "type",
        /// The entry id (8 hex characters from pi 0.73; absent in v1 files).
        id: String = "id",
        /// The parent entry id; `null` for the first entry.
        parent_id: Option<String> = "parentId",
        /// ISO 8601 time the entry was written.
        timestamp: String = "timestamp",
        /// `message` entries: the agent message.
        message: Message = "message",
        /// Header: the format version (absent = 1).
        version: Number = "version",
        /// Header: the working directory.
        cwd: String = "cwd",
        /// `compaction` / `branch_summary`: the summary text.
        summary: String = "summary",
        /// `compaction` (v2+): the first entry kept in view.
        first_kept_entry_id: String = "firstKeptEntryId",
        /// `compaction` (v1): the index of the first entry kept in view.
        first_kept_entry_index: Number = "firstKeptEntryIndex",
        /// `custom_message` / `custom`: the extension's type.
        custom_type: String = "customType",
        /// `custom_message`: what the model sees.
        content: Content = "content",
        /// Canonical fields pi has no place for.
        handoff: HandoffEvent = "x-handoff-event",
        /// Header: the ownership marker.
        marker: Value = "x-handoff",
    }
}

record! {
    /// An agent message (`entry.message`): user, assistant, toolResult, bashExecution, custom, …
    pub struct Message {
        /// The role.
        role: String = "role",
        /// Text (a plain string for user messages) or content blocks.
        content: Content = "content",
        /// Unix milliseconds.
        timestamp: Number = "timestamp",
        /// Assistant: the wire API, e.g. `anthropic-messages`.
        api: String = "api",
        /// Assistant: the provider, e.g. `anthropic`.
        provider: String = "provider",
        /// Assistant: the model id.
        model: String = "model",
        /// Assistant: token usage and cost, kept as written.
        usage: Box<RawValue> = "usage",
        /// Assistant: `stop`, `length`, `toolUse`, `error`, `aborted`.
        stop_reason: String = "stopReason",
        /// Tool result: the call it answers.
        tool_call_id: String = "toolCallId",
        /// Tool result: the tool's name.
        tool_name: String = "toolName",
        /// Tool result: whether the tool failed.
        is_error: bool = "isError",
        /// bashExecution: the command the user ran.
        command: String = "command",
        /// bashExecution: its output.
        output: Option<String> = "output",
        /// bashExecution: its exit code (`null` when killed).
        exit_code: Value = "exitCode",
        /// bashExecution: whether it was cancelled.
        cancelled: Value = "cancelled",
        /// bashExecution: whether the output was truncated.
        truncated: Value = "truncated",
        /// bashExecution: where the full output went.
        full_output_path: Value = "fullOutputPath",
        /// bashExecution: run with `!!`, not shown to the model.
        exclude_from_context: Value = "excludeFromContext",
        /// branchSummary / compactionSummary roles: the summary.
        summary: String = "summary",
    }
}

record! {
    /// A content block: text, thinking, image or toolCall.
    pub struct Block {
        /// `text`, `thinking`, `image`, `toolCall`.
        kind: String = "type",
        /// Text blocks.
        text: String = "text",
        /// Thinking blocks: the visible reasoning.
        thinking: String = "thinking",
        /// Thinking blocks: the provider's signature (or the redacted payload).
        thinking_signature: String = "thinkingSignature",
        /// Thinking blocks: the reasoning is hidden and the signature carries it.
        redacted: bool = "redacted",
        /// Image blocks: base64 bytes.
        data: String = "data",
        /// Image blocks: the media type.
        mime_type: String = "mimeType",
        /// Tool calls: the call id.
        id: String = "id",
        /// Tool calls: the tool name.
        name: String = "name",
        /// Tool calls: the arguments, an object.
        arguments: Value = "arguments",
    }
}

/// The `content` of a message: a plain string (user messages may use one) or blocks.
#[derive(Debug)]
pub enum Content {
    /// A plain string.
    Text(String),
    /// Content blocks, in order.
    Blocks(Vec<Block>),
}

impl IntoValue for Content {
    fn into_value(self) -> Value {
        match self {
            Content::Text(text) => Value::String(text),
            Content::Blocks(blocks) => {
                Value::Array(blocks.into_iter().map(IntoValue::into_value).collect())
            }
        }
    }
}

impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct ContentVisitor;
        impl<'de> Visitor<'de> for ContentVisitor {
            type Value = Content;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or an array of content blocks")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Content, E> {
                Ok(Content::Text(v.to_owned()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Content, E> {
                Ok(Content::Text(v))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Content, A::Error> {
                let mut blocks = Vec::with_capacity(seq.size_hint().unwrap_or(2).min(64));
                while let Some(block) = seq.next_element_seed(Indexed(blocks.len()))? {
                    blocks.push(block);
                }
                Ok(Content::Blocks(blocks))
            }
        }
        d.deserialize_any(ContentVisitor)
    }
}

/// Deserialises the block at `index`, naming the index in its errors.
struct Indexed(usize);

impl<'de> DeserializeSeed<'de> for Indexed {
    type Value = Block;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Block, D::Error> {
        Block::deserialize(d).map_err(|e| {
            let inner = e.to_string();
            let index = self.0;
            match inner.strip_prefix('@') {
                Some(rest) => de::Error::custom(format!("@[{index}].{rest}")),
                None => de::Error::custom(format!("@[{index}]: {inner}")),
            }
        })
    }
}

/// Canonical fields pi has no place for, in the member [`EVENT_MEMBER`] of the entry.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HandoffEvent {
    /// Who said it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<Author>,
    /// The canonical origin of an assistant turn when pi's `api`/`provider`/`model` cannot say it
    /// (no origin at all: `null`; a member unknown: that member left out).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "handoff_sdk::present"
    )]
    pub origin: Option<Option<Value>>,
    /// Thinking parts whose signature's model differs from the turn's model: `[index, model]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub signature_models: Vec<(usize, Option<String>)>,
    /// Tool calls that are freeform (Codex's `apply_patch`): the indexes of their blocks, whose
    /// arguments are `{"input": <text>}` (pi's tool arguments are JSON objects only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub freeform_calls: Vec<usize>,
    /// Thinking parts whose signature another provider or model than the turn's made:
    /// `[index, signature]`. pi replays a `thinkingSignature` to the turn's own model, so such a
    /// signature is not written there; kept here, the thinking reads back as it was.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unreplayed_signatures: Vec<(usize, Signature)>,
}

impl HandoffEvent {
    /// What `event` carries before anything else is known: its author.
    pub fn authored(event: &handoff_sdk::Event) -> Self {
        HandoffEvent {
            author: event.author.clone(),
            ..HandoffEvent::default()
        }
    }

    /// Whether there is nothing to carry.
    pub fn is_empty(&self) -> bool {
        self.author.is_none()
            && self.origin.is_none()
            && self.signature_models.is_empty()
            && self.freeform_calls.is_empty()
            && self.unreplayed_signatures.is_empty()
    }

    /// The origin override: `Some(None)` = no origin, `Some(Some(o))` = exactly `o`.
    pub fn origin_override(&self) -> Result<Option<Option<Origin>>, String> {
        match &self.origin {
            None => Ok(None),
            Some(None) => Ok(Some(None)),
            Some(Some(v)) => handoff_sdk::serde_json::from_value(v.clone())
                .map(|o| Some(Some(o)))
                .map_err(|e| e.to_string()),
        }
    }
}

// ----- writing ---------------------------------------------------------------------------------

/// The envelope of every line the writer produces.
#[derive(Serialize)]
pub struct OutEntry<'a, B: Serialize> {
    /// The entry type.
    #[serde(rename = "type")]
    pub kind: &'a str,
    /// The entry id.
    pub id: &'a str,
    /// The parent entry id.
    #[serde(rename = "parentId")]
    pub parent_id: Option<&'a str>,
    /// ISO 8601 time.
    pub timestamp: &'a str,
    /// The members of this entry type.
    #[serde(flatten)]
    pub body: B,
    /// Canonical fields pi has no place for.
    #[serde(rename = "x-handoff-event", skip_serializing_if = "Option::is_none")]
    pub handoff: Option<&'a HandoffEvent>,
    /// Members carried from a pi session.
    #[serde(flatten)]
    pub extra: ExtraRef<'a>,
}

/// Extra members to write after the typed ones (from a pi → pi round trip), leaving out the
/// ones the typed members already wrote.
#[derive(Clone, Copy, Default)]
pub struct ExtraRef<'a> {
    /// The members.
    pub members: Option<&'a Map<String, Value>>,
    /// Names not to write (the typed members of the record).
    pub skip: &'static [&'static str],
}

impl<'a> ExtraRef<'a> {
    /// `members` (if any) without `skip`.
    pub fn new(members: Option<&'a Map<String, Value>>, skip: &'static [&'static str]) -> Self {
        ExtraRef { members, skip }
    }
}

impl Serialize for ExtraRef<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(None)?;
        if let Some(members) = self.members {
            for (k, v) in members {
                if !self.skip.contains(&k.as_str()) {
                    map.serialize_entry(k, v)?;
                }
            }
        }
        map.end()
    }
}

/// `model_change` members.
#[derive(Serialize)]
pub struct ModelChange<'a> {
    /// The provider.
    pub provider: &'a str,
    /// The model id.
    #[serde(rename = "modelId")]
    pub model_id: &'a str,
}

/// `compaction` members.
#[derive(Serialize)]
pub struct Compaction<'a> {
    /// What the model sees instead of the replaced entries.
    pub summary: &'a str,
    /// The first entry kept in view (the compaction's own id when none is).
    #[serde(rename = "firstKeptEntryId")]
    pub first_kept_entry_id: &'a str,
    /// Context size before compaction (0 when unknown).
    #[serde(rename = "tokensBefore", skip_serializing_if = "Option::is_none")]
    pub tokens_before: Option<u64>,
}

/// `message` members.
#[derive(Serialize)]
pub struct MessageEntry<M: Serialize> {
    /// The message.
    pub message: M,
}

/// A user message.
#[derive(Serialize)]
pub struct UserMessage<'a> {
    /// Always `user`.
    pub role: &'a str,
    /// Content blocks, or a plain string.
    pub content: OutContent<'a>,
    /// Unix milliseconds.
    pub timestamp: TimeOut<'a>,
    /// Members carried from a pi session.
    #[serde(flatten)]
    pub extra: ExtraRef<'a>,
}

/// An assistant message.
#[derive(Serialize)]
pub struct AssistantMessage<'a> {
    /// Always `assistant`.
    pub role: &'a str,
    /// Content blocks.
    pub content: Vec<OutBlock<'a>>,
    /// The wire API.
    pub api: &'a str,
    /// The provider.
    pub provider: &'a str,
    /// The model id.
    pub model: &'a str,
    /// Usage (zero unless carried from a pi session).
    pub usage: UsageOut<'a>,
    /// Why the turn stopped.
    #[serde(rename = "stopReason")]
    pub stop_reason: &'a str,
    /// Unix milliseconds.
    pub timestamp: TimeOut<'a>,
    /// Members carried from a pi session.
    #[serde(flatten)]
    pub extra: ExtraRef<'a>,
}

/// A tool result message.
#[derive(Serialize)]
pub struct ToolResultMessage<'a> {
    /// Always `toolResult`.
    pub role: &'a str,
    /// The call answered.
    #[serde(rename = "toolCallId")]
    pub tool_call_id: &'a str,
    /// The tool's name.
    #[serde(rename = "toolName")]
    pub tool_name: &'a str,
    /// Text and image blocks.
    pub content: OutContent<'a>,
    /// Whether the tool failed.
    #[serde(rename = "isError")]
    pub is_error: bool,
    /// Unix milliseconds.
    pub timestamp: TimeOut<'a>,
    /// Members carried from a pi session.
    #[serde(flatten)]
    pub extra: ExtraRef<'a>,
}

/// A message's time: Unix milliseconds, or the value a pi session had instead.
pub enum TimeOut<'a> {
    /// Unix milliseconds.
    Millis(i64),
    /// As the pi session had it.
    Carried(&'a Value),
}

impl Serialize for TimeOut<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            TimeOut::Millis(ms) => s.serialize_i64(*ms),
            TimeOut::Carried(v) => v.serialize(s),
        }
    }
}

/// The usage pi's own sessions carry when nothing was counted.
pub const ZERO_USAGE: &str = r#"{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}"#;

/// Usage: the zero usage, or one carried from a pi session.
pub enum UsageOut<'a> {
    /// Nothing counted.
    Zero,
    /// As the pi session had it.
    Carried(&'a Value),
}

impl Serialize for UsageOut<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            UsageOut::Zero => {
                let raw: &RawValue = handoff_sdk::serde_json::from_str(ZERO_USAGE)
                    .map_err(serde::ser::Error::custom)?;
                raw.serialize(s)
            }
            UsageOut::Carried(v) => v.serialize(s),
        }
    }
}

/// Content as written: blocks, or one plain string (a user message that had one).
pub enum OutContent<'a> {
    /// A plain string.
    Text(&'a str),
    /// Blocks.
    Blocks(Vec<OutBlock<'a>>),
}

impl Serialize for OutContent<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            OutContent::Text(t) => s.serialize_str(t),
            OutContent::Blocks(b) => b.serialize(s),
        }
    }
}

/// A content block as written.
#[derive(Serialize)]
#[serde(tag = "type")]
pub enum OutBlock<'a> {
    /// Text.
    #[serde(rename = "text")]
    Text {
        /// The text.
        text: &'a str,
        /// Members carried from a pi session.
        #[serde(flatten)]
        extra: ExtraRef<'a>,
    },
    /// Reasoning.
    #[serde(rename = "thinking")]
    Thinking {
        /// The visible reasoning.
        thinking: &'a str,
        /// The signature, when the turn's own provider and model made it.
        #[serde(rename = "thinkingSignature", skip_serializing_if = "Option::is_none")]
        thinking_signature: Option<&'a str>,
        /// The reasoning is hidden; the signature carries it.
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        redacted: bool,
        /// Members carried from a pi session.
        #[serde(flatten)]
        extra: ExtraRef<'a>,
    },
    /// An image by its bytes.
    #[serde(rename = "image")]
    Image {
        /// Base64 bytes.
        data: Base64<'a>,
        /// The media type.
        #[serde(rename = "mimeType")]
        mime_type: &'a str,
        /// Members carried from a pi session.
        #[serde(flatten)]
        extra: ExtraRef<'a>,
    },
    /// A tool call.
    #[serde(rename = "toolCall")]
    ToolCall {
        /// The call id.
        id: &'a str,
        /// The tool name.
        name: &'a str,
        /// The arguments (a freeform call's structured form, `{"input": <text>}`).
        arguments: std::borrow::Cow<'a, Value>,
        /// Members carried from a pi session.
        #[serde(flatten)]
        extra: ExtraRef<'a>,
    },
}

/// Bytes serialised as standard base64 without an intermediate string.
pub struct Base64<'a>(pub &'a [u8]);

impl Serialize for Base64<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use base64::display::Base64Display;
        use base64::engine::general_purpose::STANDARD;
        s.collect_str(&Base64Display::new(self.0, &STANDARD))
    }
}

/// The header line.
#[derive(Serialize)]
pub struct OutHeader<'a> {
    /// Always `session`.
    #[serde(rename = "type")]
    pub kind: &'a str,
    /// Always 3.
    pub version: u32,
    /// The session id.
    pub id: &'a str,
    /// ISO 8601 creation time.
    pub timestamp: &'a str,
    /// The working directory.
    pub cwd: &'a str,
    /// The ownership marker.
    #[serde(rename = "x-handoff")]
    pub marker: &'a handoff_sdk::marker::OwnershipMarker,
}

#[cfg(test)]
mod tests {
    use super::*;
    use handoff_sdk::serde_json;

    #[test]
    fn unknown_members_are_kept_in_order() {
        let e: Entry = serde_json::from_str(
            r#"{"type":"message","z":1,"id":"abcd0123","a":{"b":[1.50]},"parentId":null}"#,
        )
        .unwrap();
        assert_eq!(e.kind.as_deref(), Some("message"));
        assert_eq!(e.parent_id, Some(None));
        let keys: Vec<&str> = e.extra.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["z", "a"]);
        assert_eq!(e.extra[1].1.to_string(), r#"{"b":[1.50]}"#);
    }

    #[test]
    fn errors_name_the_field_path() {
        let err = serde_json::from_str::<Entry>(
            r#"{"type":"message","message":{"role":"user","content":[{"type":"text","text":"a"},{"type":"image","data":7}]}}"#,
        )
        .unwrap_err();
        let (field, message) = split_field(&err.to_string());
        assert_eq!(field.as_deref(), Some("message.content[1].data"), "{err}");
        assert!(message.contains("invalid type"), "{message}");
    }

    #[test]
    fn content_is_a_string_or_blocks() {
        let m: Message = serde_json::from_str(r#"{"role":"user","content":"hi"}"#).unwrap();
        assert!(matches!(m.content, Some(Content::Text(ref t)) if t == "hi"));
        let m: Message =
            serde_json::from_str(r#"{"role":"user","content":[{"type":"text","text":"x"}]}"#)
                .unwrap();
        assert!(matches!(m.content, Some(Content::Blocks(ref b)) if b.len() == 1));
    }

    #[test]
    fn a_carried_record_turns_back_into_the_same_json() {
        let line = r#"{"type":"custom","customType":"ext","data":{"x":[1,2.0]},"id":"0badf00d","parentId":"12345678","timestamp":"2026-11-30T00:00:00.000Z"}"#;
        let e: Entry = serde_json::from_str(line).unwrap();
        let back = e.into_value();
        let original: Value = serde_json::from_str(line).unwrap();
        assert_eq!(back, original);
    }

    #[test]
    fn zero_usage_is_valid_json() {
        let v: Value = serde_json::from_str(ZERO_USAGE).unwrap();
        assert_eq!(v["cost"]["total"], 0);
    }
}
