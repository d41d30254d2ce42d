//! The records of a Claude Code session: as read (typed, borrowing from the line) and as written.
//!
//! **Read.** A record is decoded in one pass straight into what the reader keeps: session-wide
//! members (`cwd`, `sessionId`) and ids stay borrowed from the line, members nobody reads
//! (`usage`, `version`, `gitBranch`, …) are skipped without being built, and content blocks become
//! canonical blocks directly, never a `serde_json::Value` (numbers are slow and large under the
//! workspace's `arbitrary_precision`). Only a tool call's `input` is a `Value`, since it must stay
//! exact.
//!
//! The typed decoding ([`FastContent`]) covers what sessions hold: text, images, thinking,
//! redacted thinking, tool calls and tool results of text and images. Anything else — unknown
//! block types, a member of an unexpected type, a repeated member, data that is not base64 —
//! makes it fail, and the reader then reads the line again with [`Value`] content and
//! `parse_block` (the general path), so results and errors are those of the general path.
//! (Images are typed because they are most of a long session's bytes: handed over, each was
//! scanned once more and built as a `Value`.)
//!
//! **Written.** [`RecordOut`] and its parts borrow from the transcript, so writing a record builds
//! no JSON value (but for the compact boundary's metadata).

use std::borrow::Cow;
use std::fmt;

use handoff_sdk::dialect::anthropic::{canonical_tool_id, ParsedBlock, WireBlock, PROVIDER};
use handoff_sdk::marker::OwnershipMarker;
use handoff_sdk::serde_json::Value;
use handoff_sdk::{Part, Signature, Thinking, ToolCall};
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};

use crate::extras::Extras;
use crate::manifest::CLAUDE_CODE_VERSION;

/// A string borrowed from the line when it holds no escapes.
#[derive(Debug)]
pub(super) struct Text<'a>(pub Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct TextVisitor;
        impl<'de> Visitor<'de> for TextVisitor {
            type Value = Cow<'de, str>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                // What serde says for a `String`, so errors read as before.
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Cow::Borrowed(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Cow::Owned(v.to_owned()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(Cow::Owned(v))
            }
        }
        d.deserialize_str(TextVisitor).map(Text)
    }
}

impl Text<'_> {
    pub(super) fn as_str(&self) -> &str {
        &self.0
    }
}

/// Base64 text, as the bytes between its quotes (JSON's escapes undone): serde_json finds the
/// end of a string read as bytes with `memchr`, where a `str` is scanned eight bytes at a time
/// for control characters too, and an image's base64 is most of a session's bytes. Neither
/// UTF-8 nor control characters are checked, so it is only for text decoded as base64 next:
/// base64 refuses every byte a string could not hold (any control character, anything not
/// ASCII), and the record then goes to the general path, which reads it as a string and names
/// the fault. What decodes is what the string would have decoded to.
struct Base64Text<'a>(Cow<'a, [u8]>);

impl<'de: 'a, 'a> Deserialize<'de> for Base64Text<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct BytesVisitor;
        impl<'de> Visitor<'de> for BytesVisitor {
            type Value = Cow<'de, [u8]>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            // No `visit_seq`: serde_json reads an array of numbers as bytes too, which a string
            // is not.
            fn visit_borrowed_bytes<E: de::Error>(self, v: &'de [u8]) -> Result<Self::Value, E> {
                Ok(Cow::Borrowed(v))
            }
            fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Self::Value, E> {
                Ok(Cow::Owned(v.to_owned()))
            }
            fn visit_byte_buf<E: de::Error>(self, v: Vec<u8>) -> Result<Self::Value, E> {
                Ok(Cow::Owned(v))
            }
        }
        d.deserialize_bytes(BytesVisitor).map(Base64Text)
    }
}

/// A record, with its message content as `C`: [`FastContent`] on the typed path, [`Value`] on
/// the general one.
#[derive(Deserialize)]
#[serde(bound(deserialize = "C: Deserialize<'de>"))]
pub(super) struct Record<'a, C> {
    #[serde(rename = "type", borrow)]
    pub kind: Option<Text<'a>>,
    #[serde(borrow)]
    pub uuid: Option<Text<'a>>,
    #[serde(rename = "parentUuid", borrow)]
    pub parent_uuid: Option<Text<'a>>,
    #[serde(rename = "logicalParentUuid", borrow)]
    pub logical_parent_uuid: Option<Text<'a>>,
    #[serde(rename = "isSidechain")]
    pub is_sidechain: Option<bool>,
    #[serde(rename = "isMeta")]
    pub is_meta: Option<bool>,
    #[serde(rename = "isCompactSummary")]
    pub is_compact_summary: Option<bool>,
    #[serde(borrow)]
    pub subtype: Option<Text<'a>>,
    #[serde(borrow)]
    pub timestamp: Option<Text<'a>>,
    #[serde(borrow)]
    pub message: Option<Message<'a, C>>,
    #[serde(borrow)]
    pub cwd: Option<Text<'a>>,
    #[serde(rename = "sessionId", borrow)]
    pub session_id: Option<Text<'a>>,
    /// A `last-prompt` record's leaf: the record Claude Code resumes from (when it is a leaf).
    #[serde(rename = "leafUuid", borrow)]
    pub leaf_uuid: Option<Text<'a>>,
    pub handoff: Option<Extras>,
    /// A `system` record's `content` (a `local_command` record's text, which Claude Code sends
    /// as the user's).
    pub content: Option<Value>,
}

/// A record's `message`.
#[derive(Deserialize)]
#[serde(bound(deserialize = "C: Deserialize<'de>"))]
pub(super) struct Message<'a, C> {
    #[serde(borrow)]
    pub id: Option<Text<'a>>,
    #[serde(borrow)]
    pub model: Option<Text<'a>>,
    pub content: Option<C>,
}

/// Message content decoded straight into canonical blocks. Thinking signatures carry no model
/// yet: the record's `handoff.signatureModel` may come after its `message`, so the reader sets it.
pub(super) struct FastContent(pub Vec<ParsedBlock>);

impl<'de> Deserialize<'de> for FastContent {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct ContentVisitor;
        impl<'de> Visitor<'de> for ContentVisitor {
            type Value = Vec<ParsedBlock>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or an array of blocks")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(vec![ParsedBlock::Text(v.to_owned())])
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(vec![ParsedBlock::Text(v)])
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                // Sized to the blocks (the parser gives no length up front, and a `Vec` grows
                // to four): most records hold one or two, and an assistant record's vector
                // becomes its event's parts in place, so slack here would stay in the transcript.
                let Some(FastBlock(first)) = seq.next_element()? else {
                    return Ok(Vec::new());
                };
                let Some(FastBlock(second)) = seq.next_element()? else {
                    return Ok(vec![first]);
                };
                let mut blocks = vec![first, second];
                while let Some(FastBlock(block)) = seq.next_element()? {
                    blocks.push(block);
                }
                Ok(blocks)
            }
        }
        d.deserialize_any(ContentVisitor).map(FastContent)
    }
}

/// A bare string among a message's content blocks, kept apart (as this kind of
/// [`ParsedBlock::Other`], the string its block) until the reader knows which Claude Code it reads
/// for: 2.1.197 sends it as it is (the reader reads it as text), 2.1.332 leaves it out.
pub(super) const BARE_STRING_BLOCK: &str = "(a bare string)";

/// A bare string block, as [`BARE_STRING_BLOCK`] keeps it.
pub(super) fn bare_string_block(text: String) -> ParsedBlock {
    ParsedBlock::Other {
        kind: BARE_STRING_BLOCK.to_owned(),
        block: Value::String(text),
    }
}

/// Whether `block` is a bare string block ([`bare_string_block`]).
pub(super) fn is_bare_string_block(block: &ParsedBlock) -> bool {
    matches!(block, ParsedBlock::Other { kind, .. } if kind == BARE_STRING_BLOCK)
}

/// One content block: a bare string (Claude Code's schema allows them in user content) or a
/// block object of a kind the typed path knows.
struct FastBlock(ParsedBlock);

impl<'de> Deserialize<'de> for FastBlock {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct BlockVisitor;
        impl<'de> Visitor<'de> for BlockVisitor {
            type Value = ParsedBlock;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a content block")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(bare_string_block(v.to_owned()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(bare_string_block(v))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                let fields = BlockFields::deserialize(de::value::MapAccessDeserializer::new(map))?;
                fields
                    .into_block()
                    .ok_or_else(|| de::Error::custom("a block the typed path does not decode"))
            }
        }
        d.deserialize_any(BlockVisitor).map(FastBlock)
    }
}

/// The members of the block kinds the typed path decodes; which ones matter depends on `type`.
#[derive(Deserialize)]
struct BlockFields<'a> {
    #[serde(rename = "type", borrow)]
    kind: Text<'a>,
    text: Option<String>,
    thinking: Option<String>,
    signature: Option<String>,
    data: Option<String>,
    #[serde(borrow)]
    id: Option<Text<'a>>,
    name: Option<String>,
    input: Option<Value>,
    #[serde(borrow)]
    tool_use_id: Option<Text<'a>>,
    content: Option<ResultContent>,
    is_error: Option<bool>,
    #[serde(borrow)]
    source: Option<ImageSource<'a>>,
}

impl BlockFields<'_> {
    /// The canonical block, as `parse_block` makes it; `None` when a member it needs is missing
    /// (or `null`) or the kind is not one the typed path decodes.
    fn into_block(self) -> Option<ParsedBlock> {
        let signature = |value: String, redacted: bool| Signature {
            provider: PROVIDER.to_owned(),
            model: None,
            value,
            redacted,
        };
        Some(match self.kind.as_str() {
            "text" => ParsedBlock::Text(self.text?),
            "image" => ParsedBlock::Image(self.source?.into_part()?),
            "thinking" => ParsedBlock::Thinking(Thinking {
                text: self.thinking?,
                signature: self
                    .signature
                    .filter(|s| !s.is_empty())
                    .map(|s| signature(s, false)),
            }),
            "redacted_thinking" => ParsedBlock::Thinking(Thinking {
                text: String::new(),
                signature: Some(signature(self.data?, true)),
            }),
            "tool_use" => ParsedBlock::ToolCall(ToolCall::new(
                canonical_tool_id(self.id?.as_str()).into_owned(),
                self.name?,
                self.input?,
            )),
            "tool_result" => ParsedBlock::ToolResult {
                call_id: canonical_tool_id(self.tool_use_id?.as_str()).into_owned(),
                content: self.content.map_or_else(Vec::new, |c| c.0),
                is_error: self.is_error.unwrap_or(false),
            },
            _ => return None,
        })
    }
}

/// A tool result's content: a string, or text items.
struct ResultContent(Vec<Part>);

impl<'de> Deserialize<'de> for ResultContent {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct ResultVisitor;
        impl<'de> Visitor<'de> for ResultVisitor {
            type Value = Vec<Part>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or an array of text items")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(vec![Part::Text { text: v.to_owned() }])
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(vec![Part::Text { text: v }])
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut parts = Vec::with_capacity(seq.size_hint().unwrap_or(1));
                while let Some(item) = seq.next_element::<ResultItem<'de>>()? {
                    let part = match (item.kind.as_str(), item.text, item.source) {
                        ("text", Some(text), _) => Some(Part::Text { text }),
                        ("image", _, Some(source)) => source.into_part(),
                        _ => None,
                    };
                    parts.push(part.ok_or_else(|| de::Error::custom("not a text or image item"))?);
                }
                Ok(parts)
            }
        }
        d.deserialize_any(ResultVisitor).map(ResultContent)
    }
}

/// An item of a tool result's content.
#[derive(Deserialize)]
struct ResultItem<'a> {
    #[serde(rename = "type", borrow)]
    kind: Text<'a>,
    text: Option<String>,
    #[serde(borrow)]
    source: Option<ImageSource<'a>>,
}

/// An image block's `source`: base64 data and its media type, or a URL.
#[derive(Deserialize)]
struct ImageSource<'a> {
    #[serde(rename = "type", borrow)]
    kind: Text<'a>,
    #[serde(borrow)]
    media_type: Option<Text<'a>>,
    #[serde(borrow)]
    data: Option<Base64Text<'a>>,
    url: Option<String>,
}

impl ImageSource<'_> {
    /// The canonical part, as `parse_block` makes it; `None` when a member it needs is missing
    /// (or `null`), the data is not base64, or the source is of another kind.
    fn into_part(self) -> Option<Part> {
        match self.kind.as_str() {
            "base64" => Some(Part::Image {
                media_type: self.media_type?.0.into_owned(),
                data: handoff_sdk::base64::decode(&self.data?.0).ok()?,
            }),
            "url" => Some(Part::ImageUrl { url: self.url? }),
            _ => None,
        }
    }
}

/// The session-wide members of every written record.
pub(super) struct SessionMembers<'a> {
    /// `sessionId`.
    pub(super) id: &'a str,
    /// `cwd`.
    pub(super) cwd: &'a str,
}

/// A written message's content: a plain string (a typed prompt) or blocks.
#[derive(Serialize)]
#[serde(untagged)]
pub(super) enum ContentOut<'a> {
    Text(&'a str),
    Blocks(Vec<WireBlock<'a>>),
}

/// A written record's `message`.
#[derive(Serialize)]
pub(super) struct MessageOut<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) id: Option<&'a str>,
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub(super) kind: Option<&'static str>,
    pub(super) role: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) model: Option<&'a str>,
    pub(super) content: ContentOut<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) stop_reason: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) usage: Option<UsageOut>,
}

/// The token counts the CLI records on an assistant message (none were spent here); typed, so
/// writing one builds no JSON value.
#[derive(Serialize)]
pub(super) struct UsageOut {
    pub(super) input_tokens: u32,
    pub(super) output_tokens: u32,
}

/// A record as Claude Code 2.1.197 writes it (member order as the CLI's).
#[derive(Serialize)]
pub(super) struct RecordOut<'a> {
    #[serde(rename = "parentUuid")]
    pub(super) parent_uuid: Option<&'a str>,
    #[serde(rename = "logicalParentUuid", skip_serializing_if = "Option::is_none")]
    pub(super) logical_parent_uuid: Option<&'a str>,
    #[serde(rename = "isSidechain")]
    pub(super) is_sidechain: bool,
    #[serde(rename = "type")]
    pub(super) kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) subtype: Option<&'static str>,
    #[serde(rename = "content", skip_serializing_if = "Option::is_none")]
    pub(super) system_content: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) level: Option<&'static str>,
    #[serde(rename = "compactMetadata", skip_serializing_if = "Option::is_none")]
    pub(super) compact_metadata: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) message: Option<MessageOut<'a>>,
    #[serde(
        rename = "isCompactSummary",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub(super) is_compact_summary: bool,
    #[serde(
        rename = "isVisibleInTranscriptOnly",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub(super) visible_in_transcript_only: bool,
    #[serde(rename = "isMeta", skip_serializing_if = "std::ops::Not::not")]
    pub(super) is_meta: bool,
    pub(super) uuid: &'a str,
    pub(super) timestamp: &'a str,
    #[serde(
        rename = "sourceToolAssistantUUID",
        skip_serializing_if = "Option::is_none"
    )]
    pub(super) source_tool_assistant_uuid: Option<&'a str>,
    #[serde(rename = "userType")]
    pub(super) user_type: &'static str,
    pub(super) cwd: &'a str,
    #[serde(rename = "sessionId")]
    pub(super) session_id: &'a str,
    pub(super) version: &'static str,
    #[serde(rename = "x-handoff", skip_serializing_if = "Option::is_none")]
    pub(super) marker: Option<&'a OwnershipMarker>,
    #[serde(rename = "handoff", skip_serializing_if = "Option::is_none")]
    pub(super) extras: Option<&'a Extras>,
}

impl<'a> RecordOut<'a> {
    /// A record of `kind` with every member at its default.
    pub(super) fn new(
        session: &'a SessionMembers<'a>,
        kind: &'static str,
        uuid: &'a str,
        timestamp: &'a str,
    ) -> Self {
        RecordOut {
            parent_uuid: None,
            logical_parent_uuid: None,
            is_sidechain: false,
            kind,
            subtype: None,
            system_content: None,
            level: None,
            compact_metadata: None,
            message: None,
            is_compact_summary: false,
            visible_in_transcript_only: false,
            is_meta: false,
            uuid,
            timestamp,
            source_tool_assistant_uuid: None,
            user_type: "external",
            cwd: session.cwd,
            session_id: session.id,
            version: CLAUDE_CODE_VERSION,
            marker: None,
            extras: None,
        }
    }
}

/// A user record's `message`.
pub(super) fn user_message(content: ContentOut<'_>) -> MessageOut<'_> {
    MessageOut {
        id: None,
        kind: None,
        role: "user",
        model: None,
        content,
        stop_reason: None,
        usage: None,
    }
}
