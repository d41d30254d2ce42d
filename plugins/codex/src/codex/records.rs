//! The rollout records this plugin writes and reads, as typed serde structs.
//!
//! Every line is `{"timestamp", "type", "payload"}`. Write-side structs borrow from the canonical
//! transcript so a large session is serialised without copying it; read-side structs are flat
//! (every field optional) so a missing field becomes an error that names it, not a serde message.

use std::borrow::Cow;

use handoff_sdk::marker::OwnershipMarker;
use handoff_sdk::{Author, Origin};
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// The Codex version whose format this plugin writes.
pub const CLI_VERSION: &str = "0.171.0";
/// The originator the interactive Codex CLI writes (`codex resume` lists it).
pub const ORIGINATOR: &str = "codex_cli_rs";
/// The session source of the interactive CLI; the picker shows only `cli` and `vscode`.
pub const SOURCE: &str = "cli";
/// The model provider Codex uses when its config names none.
pub const DEFAULT_MODEL_PROVIDER: &str = "openai";

/// The first line of every rollout.
#[derive(Serialize)]
pub struct SessionMetaOut<'a> {
    pub id: &'a str,
    pub timestamp: &'a str,
    pub cwd: &'a str,
    pub originator: &'static str,
    pub cli_version: &'static str,
    pub source: &'static str,
    pub model_provider: &'a str,
    /// The ownership marker (`x-handoff`); Codex ignores unknown members.
    #[serde(rename = "x-handoff")]
    pub marker: &'a OwnershipMarker,
}

/// The per-turn settings record Codex writes before a turn's items.
#[derive(Serialize)]
pub struct TurnContextOut<'a> {
    pub turn_id: &'a str,
    pub cwd: &'a str,
    pub approval_policy: &'static str,
    pub sandbox_policy: SandboxPolicyOut,
    pub model: &'a str,
    pub summary: &'static str,
}

/// `{"type":"read-only"}`.
#[derive(Serialize)]
pub struct SandboxPolicyOut {
    #[serde(rename = "type")]
    pub kind: &'static str,
}

/// The `event_msg` records this plugin writes (the ones Codex needs to list and draw a session);
/// `user_message`, the copy of each prompt, is spelled out by `Lines::user_message`.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EventMsgOut<'a> {
    /// A turn begins.
    TaskStarted {
        turn_id: &'a str,
        model_context_window: Option<u64>,
        collaboration_mode_kind: &'static str,
    },
    /// What the assistant said.
    AgentMessage { message: Cow<'a, str> },
    /// A turn ends.
    TaskComplete {
        turn_id: &'a str,
        last_agent_message: Option<Cow<'a, str>>,
    },
}

/// Canonical fields Codex has no place for, carried on each `response_item` / `compacted` payload
/// under the member `x-handoff-event`. Codex ignores the member and never sends it to the model.
#[derive(Serialize, Deserialize, Default, Debug, Clone, PartialEq)]
pub struct EventTag {
    /// The canonical event id; items with the same id form one event.
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<Author>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<Origin>,
    /// The tool result failed (Codex has no error flag on `function_call_output`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
    /// For `compacted`: the id of the last event the summary replaces.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replaces_through: Option<String>,
    /// For `reasoning`: the model that made the encrypted content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature_model: Option<String>,
    /// For `reasoning`: the reasoning is hidden and only the encrypted content carries it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub redacted: bool,
}

/// The write-side view of an [`EventTag`].
#[derive(Serialize)]
pub struct EventTagOut<'a> {
    pub id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub author: Option<&'a Author>,
    #[serde(skip_serializing_if = "Option::is_none")]
    /// The origin, serialised once per distinct origin (every assistant item carries it).
    pub origin: Option<&'a RawValue>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replaces_through: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signature_model: Option<&'a str>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub redacted: bool,
}

/// A `response_item` payload.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ItemOut<'a> {
    Message {
        role: &'static str,
        content: Vec<ContentOut<'a>>,
        #[serde(rename = "x-handoff-event", skip_serializing_if = "Option::is_none")]
        tag: Option<EventTagOut<'a>>,
    },
    Reasoning {
        summary: Vec<SummaryOut<'a>>,
        encrypted_content: Option<&'a str>,
        #[serde(rename = "x-handoff-event", skip_serializing_if = "Option::is_none")]
        tag: Option<EventTagOut<'a>>,
    },
    FunctionCall {
        name: &'a str,
        /// The arguments as a JSON-encoded string, as the Responses API has them.
        arguments: String,
        call_id: &'a str,
        #[serde(rename = "x-handoff-event", skip_serializing_if = "Option::is_none")]
        tag: Option<EventTagOut<'a>>,
    },
    FunctionCallOutput {
        call_id: &'a str,
        output: OutputOut<'a>,
        #[serde(rename = "x-handoff-event", skip_serializing_if = "Option::is_none")]
        tag: Option<EventTagOut<'a>>,
    },
    /// A call of a freeform (custom) tool: its raw input, as Codex records `apply_patch`.
    CustomToolCall {
        name: &'a str,
        input: &'a str,
        call_id: &'a str,
        #[serde(rename = "x-handoff-event", skip_serializing_if = "Option::is_none")]
        tag: Option<EventTagOut<'a>>,
    },
    CustomToolCallOutput {
        call_id: &'a str,
        output: OutputOut<'a>,
        #[serde(rename = "x-handoff-event", skip_serializing_if = "Option::is_none")]
        tag: Option<EventTagOut<'a>>,
    },
    /// A web search the provider ran: no output item follows.
    WebSearchCall {
        #[serde(skip_serializing_if = "Option::is_none")]
        id: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        status: Option<&'a str>,
        action: &'a serde_json::Value,
        #[serde(rename = "x-handoff-event", skip_serializing_if = "Option::is_none")]
        tag: Option<EventTagOut<'a>>,
    },
}

/// A content item of a message or a tool output.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentOut<'a> {
    InputText { text: &'a str },
    OutputText { text: &'a str },
    InputImage { image_url: ImageUrlOut<'a> },
}

/// An image's URL as written: a URL as it is, or a `data:` URL made of an image's bytes, held
/// already in its JSON form. A data URL is base64 (nothing to escape but in its media type), and
/// serde_json escapes a string byte by byte: for a 64 KiB image that scan was most of writing
/// the line, where a string already spelled out is copied.
pub enum ImageUrlOut<'a> {
    Url(&'a str),
    Data(Box<serde_json::value::RawValue>),
}

impl ImageUrlOut<'_> {
    /// `data:<media type>;base64,<data>` as a JSON string.
    pub fn data(media_type: &str, data: &[u8]) -> serde_json::Result<Self> {
        let mut json = serde_json::to_string(&format_args!("data:{media_type};base64,"))?;
        json.pop(); // the closing quote; the base64 (never escaped) and the quote follow
        json.reserve(data.len().div_ceil(3) * 4 + 1);
        handoff_sdk::base64::encode_into(data, &mut json);
        json.push('"');
        serde_json::value::RawValue::from_string(json).map(ImageUrlOut::Data)
    }
}

impl Serialize for ImageUrlOut<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ImageUrlOut::Url(url) => s.serialize_str(url),
            ImageUrlOut::Data(json) => json.serialize(s),
        }
    }
}

/// `{"type":"summary_text","text":…}`.
#[derive(Serialize)]
pub struct SummaryOut<'a> {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub text: &'a str,
}

/// A tool output: a plain string, or content items (several parts, images, or none).
#[derive(Serialize)]
#[serde(untagged)]
pub enum OutputOut<'a> {
    Text(&'a str),
    Items(Vec<ContentOut<'a>>),
}

/// A `compacted` payload.
#[derive(Serialize)]
pub struct CompactedOut<'a> {
    pub message: &'a str,
    pub replacement_history: Vec<Box<RawValue>>,
    #[serde(rename = "x-handoff-event")]
    pub tag: EventTagOut<'a>,
}

// ---------------------------------------------------------------------------------------------
// Read side.
//
// Strings borrow from the line where they have no escapes (`Cow`), so a string is copied at most
// once on its way into the canonical event.

/// A line with its payload left raw until its type is known (the careful path, which names the
/// field of any error; see [`FastLine`] for the one-pass path).
#[derive(Deserialize)]
pub struct LineIn<'a> {
    #[serde(borrow)]
    pub timestamp: Option<Cow<'a, str>>,
    #[serde(rename = "type", borrow)]
    pub kind: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub payload: Option<&'a RawValue>,
}

/// The payload of a line, typed by the line's `type`.
// One lives on the stack per line; boxing the large variant would cost an allocation per line.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum PayloadIn<'a> {
    /// `response_item`.
    ResponseItem(ItemIn<'a>),
    /// `compacted`.
    Compacted(CompactedIn<'a>),
    /// `turn_context`.
    TurnContext(TurnContextIn<'a>),
    /// `event_msg`.
    EventMsg(EventMsgIn<'a>),
    /// Any other record type (not history; its payload is only checked to be JSON).
    Other,
}

impl<'a> PayloadIn<'a> {
    /// Parses a payload of record type `kind` from its own JSON text.
    pub fn from_raw(kind: &str, raw: &'a RawValue) -> serde_json::Result<Self> {
        let mut de = serde_json::Deserializer::from_str(raw.get());
        let payload = PayloadSeed {
            kind,
            one_pass: false,
        }
        .deserialize(&mut de)?;
        de.end()?;
        Ok(payload)
    }
}

/// Deserialises the payload of a record of the given type: in the one pass ([`FastLine`]) or
/// the careful way.
struct PayloadSeed<'k> {
    kind: &'k str,
    one_pass: bool,
}

impl<'de> DeserializeSeed<'de> for PayloadSeed<'_> {
    type Value = PayloadIn<'de>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        Ok(match self.kind {
            "response_item" => PayloadIn::ResponseItem(ItemIn::deserialize(d)?),
            "compacted" => PayloadIn::Compacted(CompactedIn::deserialize(d)?),
            "turn_context" => PayloadIn::TurnContext(TurnContextIn::deserialize(d)?),
            "event_msg" if self.one_pass => {
                let EventMsgOnePass { kind, item, .. } = EventMsgOnePass::deserialize(d)?;
                PayloadIn::EventMsg(EventMsgIn { kind, item })
            }
            "event_msg" => PayloadIn::EventMsg(EventMsgIn::deserialize(d)?),
            _ => {
                IgnoredAny::deserialize(d)?;
                PayloadIn::Other
            }
        })
    }
}

/// A whole line parsed in one pass: when `type` comes before `payload` (as every writer puts
/// it) the payload is parsed straight into its typed form. A line this cannot parse is parsed
/// again the careful way ([`LineIn`]) to name the field at fault.
///
/// Only for a line that holds no control character (`parse_line` checks): some of its strings
/// are read as bytes ([`url_text`], [`PassedOver`]), which serde_json does not check for them.
pub struct FastLine<'a> {
    pub timestamp: Option<Cow<'a, str>>,
    pub kind: Option<Cow<'a, str>>,
    pub payload: Option<FastPayload<'a>>,
}

/// A payload parsed in the one pass, or left raw because `type` came after it.
#[allow(clippy::large_enum_variant)]
pub enum FastPayload<'a> {
    Typed(PayloadIn<'a>),
    Raw(&'a RawValue),
}

enum LineField {
    Timestamp,
    Type,
    Payload,
    Other,
}

impl<'de> Deserialize<'de> for LineField {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct FieldVisitor;
        impl Visitor<'_> for FieldVisitor {
            type Value = LineField;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a field name")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<LineField, E> {
                Ok(match v {
                    "timestamp" => LineField::Timestamp,
                    "type" => LineField::Type,
                    "payload" => LineField::Payload,
                    _ => LineField::Other,
                })
            }
        }
        d.deserialize_identifier(FieldVisitor)
    }
}

impl<'de> Deserialize<'de> for FastLine<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct LineVisitor;
        impl<'de> Visitor<'de> for LineVisitor {
            type Value = FastLine<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a rollout record")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<FastLine<'de>, A::Error> {
                use serde::de::Error;
                let mut line = FastLine {
                    timestamp: None,
                    kind: None,
                    payload: None,
                };
                while let Some(field) = map.next_key::<LineField>()? {
                    match field {
                        LineField::Timestamp if line.timestamp.is_none() => {
                            line.timestamp = Some(map.next_value::<BorrowedCow<'de>>()?.0)
                        }
                        LineField::Type if line.kind.is_none() => {
                            line.kind = Some(map.next_value::<BorrowedCow<'de>>()?.0)
                        }
                        LineField::Payload if line.payload.is_none() => {
                            line.payload = Some(match &line.kind {
                                Some(kind) => {
                                    FastPayload::Typed(map.next_value_seed(PayloadSeed {
                                        kind: kind.as_ref(),
                                        one_pass: true,
                                    })?)
                                }
                                None => FastPayload::Raw(map.next_value()?),
                            })
                        }
                        LineField::Other => {
                            map.next_value::<IgnoredAny>()?;
                        }
                        _ => return Err(A::Error::custom("duplicate field")),
                    }
                }
                Ok(line)
            }
        }
        d.deserialize_map(LineVisitor)
    }
}

/// A `Cow<str>` that borrows whenever the text has no escapes.
struct BorrowedCow<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for BorrowedCow<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(BorrowedCow(Cow::deserialize_borrowed(d)?))
    }
}

/// Deserialising a `Cow<str>` that borrows when it can (serde's own `Cow` impl always copies).
trait CowStr<'de>: Sized {
    fn deserialize_borrowed<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error>;
}

impl<'de> CowStr<'de> for Cow<'de, str> {
    fn deserialize_borrowed<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct CowVisitor;
        impl<'de> Visitor<'de> for CowVisitor {
            type Value = Cow<'de, str>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Cow::Borrowed(v))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Cow::Owned(v.to_owned()))
            }
            fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                Ok(Cow::Owned(v))
            }
        }
        d.deserialize_str(CowVisitor)
    }
}

/// An optional string that borrows from the line when it has no escapes. (`#[serde(borrow)]`
/// alone borrows only a bare `Cow`, never one inside an `Option`.)
fn opt_cow<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Cow<'de, str>>, D::Error> {
    Ok(Option::<BorrowedCow<'de>>::deserialize(d)?.map(|b| b.0))
}

/// A string's bytes, JSON's escapes undone: serde_json finds the end of a string read as bytes
/// with `memchr`, where it scans a `str` eight bytes at a time for control characters too, and
/// an image's data URL is most of a rollout's bytes. Only for JSON text known to hold no control
/// character in a string: a payload already parsed whole as a `RawValue` (the careful way,
/// which refuses one) or a line checked for them (the one pass). What is left to check, UTF-8,
/// is checked here; a list of numbers (which serde_json reads as bytes too) is refused, as it
/// is for a string.
struct StringBytes<'a>(Cow<'a, [u8]>);

impl<'de> Deserialize<'de> for StringBytes<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct BytesVisitor;
        impl<'de> Visitor<'de> for BytesVisitor {
            type Value = StringBytes<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_bytes<E>(self, v: &'de [u8]) -> Result<Self::Value, E> {
                Ok(StringBytes(Cow::Borrowed(v)))
            }
            fn visit_bytes<E>(self, v: &[u8]) -> Result<Self::Value, E> {
                Ok(StringBytes(Cow::Owned(v.to_owned())))
            }
            fn visit_byte_buf<E>(self, v: Vec<u8>) -> Result<Self::Value, E> {
                Ok(StringBytes(Cow::Owned(v)))
            }
        }
        d.deserialize_bytes(BytesVisitor)
    }
}

/// An optional string read as [`StringBytes`], then checked to be UTF-8: what the string is,
/// where a `str` would be it.
fn url_text<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Cow<'de, str>>, D::Error> {
    use serde::de::Error;
    let not_utf8 = || D::Error::custom("a string that is not UTF-8 (an escaped lone surrogate)");
    Ok(match Option::<StringBytes<'de>>::deserialize(d)? {
        None => None,
        Some(StringBytes(Cow::Borrowed(bytes))) => Some(Cow::Borrowed(
            handoff_sdk::lines::text_of(bytes).ok_or_else(not_utf8)?,
        )),
        Some(StringBytes(Cow::Owned(bytes))) => Some(Cow::Owned(
            String::from_utf8(bytes).map_err(|_| not_utf8())?,
        )),
    })
}

/// A string passed over, read as [`StringBytes`] (its UTF-8 unchecked: nothing reads it).
struct PassedOver;

impl<'de> Deserialize<'de> for PassedOver {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        StringBytes::deserialize(d).map(|_| PassedOver)
    }
}

/// An `event_msg` payload in the one pass: [`EventMsgIn`], and `user_message`'s `images` (the
/// copies of the prompt's images, as long as the `response_item`'s) passed over as bytes.
/// Anything else there (not a list of strings, a field twice) fails the one pass, and the
/// careful way passes it over as any value.
#[derive(Deserialize)]
struct EventMsgOnePass<'a> {
    #[serde(rename = "type", borrow, default, deserialize_with = "opt_cow")]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow)]
    item: Option<EventItemIn<'a>>,
    #[serde(rename = "images", default)]
    _images: Option<Vec<PassedOver>>,
}

/// The fields of `session_meta` this plugin reads.
#[derive(Deserialize, Debug)]
pub struct SessionMetaIn {
    pub id: Option<String>,
    pub cwd: Option<String>,
    pub model_provider: Option<String>,
    #[serde(rename = "x-handoff")]
    pub marker: Option<serde_json::Value>,
    /// Where the session came from (`"cli"`, `{"subagent": …}`, …); only checked.
    pub source: Option<serde_json::Value>,
    /// `"paginated"` once `codex migrate-rollouts --apply` rewrote the rollout (Codex 0.171).
    #[serde(default)]
    pub history_mode: Option<String>,
}

/// The fields of `turn_context` this plugin reads.
#[derive(Deserialize, Debug)]
pub struct TurnContextIn<'a> {
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    pub model: Option<Cow<'a, str>>,
}

/// A `response_item` payload, flat: which fields must be present depends on `type`.
#[derive(Deserialize, Debug)]
pub struct ItemIn<'a> {
    #[serde(rename = "type", borrow, default, deserialize_with = "opt_cow")]
    pub kind: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    pub id: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    pub role: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub content: Option<Vec<ContentIn<'a>>>,
    #[serde(borrow)]
    pub summary: Option<Vec<ContentIn<'a>>>,
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    pub encrypted_content: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    pub name: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    pub arguments: Option<Cow<'a, str>>,
    /// `custom_tool_call` input (a freeform string).
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    pub input: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    pub call_id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub output: Option<OutputIn<'a>>,
    /// `web_search_call` status.
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    pub status: Option<Cow<'a, str>>,
    /// `web_search_call` action, kept as written.
    pub action: Option<serde_json::Value>,
    /// Present on items the CLI wrote itself; tells harness-injected context from user text.
    pub internal_chat_message_metadata_passthrough: Option<PassthroughIn>,
    #[serde(rename = "x-handoff-event")]
    pub tag: Option<Box<EventTag>>,
}

/// A content item as read.
#[derive(Deserialize, Debug)]
pub struct ContentIn<'a> {
    #[serde(rename = "type", borrow, default, deserialize_with = "opt_cow")]
    pub kind: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    pub text: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "url_text")]
    pub image_url: Option<Cow<'a, str>>,
}

/// A tool output as read: a string, or content items. (Hand-written rather than
/// `#[serde(untagged)]`, which would buffer every output before parsing it.)
#[derive(Debug)]
pub enum OutputIn<'a> {
    Text(Cow<'a, str>),
    Items(Vec<ContentIn<'a>>),
}

impl<'de: 'a, 'a> Deserialize<'de> for OutputIn<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct OutputVisitor<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for OutputVisitor<'a> {
            type Value = OutputIn<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or an array of content items")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(OutputIn::Text(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(OutputIn::Text(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                Ok(OutputIn::Text(Cow::Owned(v)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
                while let Some(item) = seq.next_element()? {
                    items.push(item);
                }
                Ok(OutputIn::Items(items))
            }
        }
        d.deserialize_any(OutputVisitor(std::marker::PhantomData))
    }
}

/// The CLI's own metadata on an item.
#[derive(Deserialize, Debug)]
pub struct PassthroughIn {
    #[serde(default)]
    pub content_item_kinds: Vec<String>,
    #[serde(default)]
    pub content_item_metadata: Vec<ContentItemMetadataIn>,
}

/// Per content item metadata.
#[derive(Deserialize, Debug)]
pub struct ContentItemMetadataIn {
    pub provenance: Option<ProvenanceIn>,
}

/// Who put a content item there.
#[derive(Deserialize, Debug)]
pub struct ProvenanceIn {
    #[serde(rename = "type")]
    pub kind: Option<String>,
}

/// The fields of an `event_msg` this plugin reads (turn boundaries and failed items).
#[derive(Deserialize, Debug)]
pub struct EventMsgIn<'a> {
    #[serde(rename = "type", borrow, default, deserialize_with = "opt_cow")]
    pub kind: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub item: Option<EventItemIn<'a>>,
}

/// `item_completed.item`.
#[derive(Deserialize, Debug)]
pub struct EventItemIn<'a> {
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    pub id: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    pub status: Option<Cow<'a, str>>,
}

/// A `compacted` payload as read.
#[derive(Deserialize, Debug)]
pub struct CompactedIn<'a> {
    #[serde(borrow, default, deserialize_with = "opt_cow")]
    pub message: Option<Cow<'a, str>>,
    /// Codex's own compaction: the history from this record on.
    #[serde(borrow, default)]
    pub replacement_history: Option<Vec<ItemIn<'a>>>,
    #[serde(rename = "x-handoff-event")]
    pub tag: Option<EventTag>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_pass_parse_types_the_payload_and_borrows_plain_strings() {
        let line = br#"{"timestamp":"2026-11-30T00:41:47.198Z","type":"response_item","payload":{"type":"function_call_output","call_id":"call_1","output":"a\nb","x-handoff-event":{"id":"e3"}}}"#;
        let parsed: FastLine<'_> = serde_json::from_slice(line).unwrap();
        assert!(matches!(parsed.timestamp, Some(Cow::Borrowed(_))));
        assert!(matches!(parsed.kind.as_deref(), Some("response_item")));
        let Some(FastPayload::Typed(PayloadIn::ResponseItem(item))) = parsed.payload else {
            panic!("the payload was not typed in the one pass");
        };
        assert!(matches!(item.call_id, Some(Cow::Borrowed("call_1"))));
        // An escaped string cannot borrow; it is unescaped once.
        assert!(matches!(&item.output, Some(OutputIn::Text(Cow::Owned(t))) if t == "a\nb"));
        assert_eq!(item.tag.map(|t| t.id).as_deref(), Some("e3"));
    }

    #[test]
    fn a_payload_before_its_type_is_kept_raw_and_a_duplicate_field_fails() {
        let line = br#"{"payload":{"model":"gpt-5"},"type":"turn_context","timestamp":"2026-11-30T00:41:47.198Z"}"#;
        let parsed: FastLine<'_> = serde_json::from_slice(line).unwrap();
        let Some(FastPayload::Raw(raw)) = parsed.payload else {
            panic!("expected a raw payload");
        };
        let Ok(PayloadIn::TurnContext(context)) = PayloadIn::from_raw("turn_context", raw) else {
            panic!("expected a turn_context");
        };
        assert_eq!(context.model.as_deref(), Some("gpt-5"));
        let twice = br#"{"type":"event_msg","type":"compacted","payload":{}}"#;
        assert!(serde_json::from_slice::<FastLine<'_>>(twice).is_err());
    }

    /// A data URL spelled out in its JSON form is what serialising the URL as a string writes,
    /// for a media type that must be escaped too, and for bytes of every length modulo 3.
    #[test]
    fn a_data_url_is_written_as_its_string_would_be() {
        use base64::Engine as _;
        for media_type in ["image/png", "image/\"odd\"\u{7f}\n/é"] {
            for len in [0, 1, 2, 3, 4, 5, 1000] {
                let data: Vec<u8> = (0..len).map(|i| (i * 37 % 256) as u8).collect();
                let url = format!(
                    "data:{media_type};base64,{}",
                    base64::engine::general_purpose::STANDARD.encode(&data)
                );
                let written = ContentOut::InputImage {
                    image_url: ImageUrlOut::data(media_type, &data).unwrap(),
                };
                let want = ContentOut::InputImage {
                    image_url: ImageUrlOut::Url(&url),
                };
                assert_eq!(
                    serde_json::to_string(&written).unwrap(),
                    serde_json::to_string(&want).unwrap()
                );
            }
        }
    }
}
