//! A line as the index pass reads it: what linking and the chain walk need, borrowed from the
//! line; every other member (the content but for its blocks' types, the extras, the timestamp)
//! skipped unbuilt and judged when the record is read whole for its events. On the way it notes
//! where the members the events' pass decodes begin ([`Spans`]), so that pass decodes those and
//! not the rest of the line again (measured: a record's message alone decodes in 55 % of the
//! time of the whole record on a long session).

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

use crate::claude_code::records::Text;

/// Where a line's members begin, for the events' pass: the byte just after the member name's
/// closing quote. [`Spans::ABSENT`] when the line has no such member; [`Spans::UNKNOWN`] when it
/// has one that a decoding of the whole line may not read as one decoding of that member would
/// (its name escaped, or the member repeated): the whole line is decoded then.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct Spans {
    pub(super) uuid: u32,
    pub(super) timestamp: u32,
    pub(super) message: u32,
    pub(super) handoff: u32,
}

impl Spans {
    pub(super) const ABSENT: u32 = 0;
    pub(super) const UNKNOWN: u32 = u32::MAX;
}

/// A record as the index pass reads it (the members `Record` decodes, but for the content, the
/// model, the timestamp and the extras), with its [`Spans`].
#[derive(Default)]
pub(super) struct IndexRecord<'a> {
    pub(super) kind: Option<Text<'a>>,
    pub(super) uuid: Option<Text<'a>>,
    pub(super) parent_uuid: Option<Text<'a>>,
    pub(super) logical_parent_uuid: Option<Text<'a>>,
    pub(super) is_sidechain: Option<bool>,
    pub(super) is_meta: Option<bool>,
    pub(super) is_compact_summary: Option<bool>,
    pub(super) subtype: Option<Text<'a>>,
    pub(super) message: Option<IndexMessage<'a>>,
    pub(super) cwd: Option<Text<'a>>,
    pub(super) session_id: Option<Text<'a>>,
    pub(super) leaf_uuid: Option<Text<'a>>,
    pub(super) spans: Spans,
}

#[derive(Deserialize)]
pub(super) struct IndexMessage<'a> {
    #[serde(borrow)]
    pub(super) id: Option<Text<'a>>,
    pub(super) content: Option<ContentShape>,
}

/// What the index pass keeps of message content: whether it holds a `tool_result` block (the
/// chain walk needs that to find a turn's results), and whether it is an array of bare strings
/// only, one at least (nothing Claude Code 2.1.332 sends; see
/// `ReadRules::bare_string_prompt_no_leaf`).
pub(super) struct ContentShape {
    pub(super) holds_results: bool,
    pub(super) bare_strings_only: bool,
}

impl<'a> IndexRecord<'a> {
    /// The line decoded as the index takes it; an error where a derived decoding of these
    /// members would fail (a member of the wrong type, one of them repeated, not an object).
    pub(super) fn parse(line: &'a str) -> Result<Self, serde_json::Error> {
        let mut de = serde_json::Deserializer::from_str(line);
        let record = LineSeed(line).deserialize(&mut de)?;
        de.end()?;
        Ok(record)
    }
}

struct LineSeed<'a>(&'a str);

impl<'a> DeserializeSeed<'a> for LineSeed<'a> {
    type Value = IndexRecord<'a>;

    fn deserialize<D: Deserializer<'a>>(self, d: D) -> Result<IndexRecord<'a>, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'a> LineSeed<'a> {
    /// Where the member named `name` begins: after its closing quote, when the name is the
    /// line's own text (not unescaped into a copy).
    fn after(&self, name: &Text<'a>) -> u32 {
        let std::borrow::Cow::Borrowed(name) = name.0 else {
            return Spans::UNKNOWN;
        };
        let start = (name.as_ptr() as usize).wrapping_sub(self.0.as_ptr() as usize);
        if start >= self.0.len() {
            return Spans::UNKNOWN;
        }
        // Within the line: the name is, and its closing quote follows it.
        let end = start + name.len() + 1;
        u32::try_from(end)
            .ok()
            .filter(|&end| end != Spans::UNKNOWN)
            .unwrap_or(Spans::UNKNOWN)
    }
}

/// A member read once; a second is an error (as a derived decoding's `duplicate field`).
fn once<'a, A: MapAccess<'a>, T: Deserialize<'a>>(
    map: &mut A,
    seen: &mut u16,
    bit: u16,
    name: &'static str,
) -> Result<T, A::Error> {
    if *seen & bit != 0 {
        return Err(de::Error::duplicate_field(name));
    }
    *seen |= bit;
    map.next_value()
}

/// A member the index only locates: where it begins, or [`Spans::UNKNOWN`] if it repeats.
fn locate<'a, A: MapAccess<'a>>(
    map: &mut A,
    span: &mut u32,
    seen: &mut u16,
    bit: u16,
    at: u32,
) -> Result<(), A::Error> {
    *span = if *seen & bit != 0 { Spans::UNKNOWN } else { at };
    *seen |= bit;
    map.next_value::<IgnoredAny>().map(drop)
}

impl<'a> Visitor<'a> for LineSeed<'a> {
    type Value = IndexRecord<'a>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a record")
    }

    fn visit_map<A: MapAccess<'a>>(self, mut map: A) -> Result<IndexRecord<'a>, A::Error> {
        let mut r = IndexRecord::default();
        let mut seen = 0u16;
        while let Some(name) = map.next_key::<Text<'a>>()? {
            let s = &mut seen;
            match name.as_str() {
                "type" => r.kind = once(&mut map, s, 1, "type")?,
                "uuid" => {
                    r.spans.uuid = self.after(&name);
                    r.uuid = once(&mut map, s, 1 << 1, "uuid")?;
                }
                "parentUuid" => r.parent_uuid = once(&mut map, s, 1 << 2, "parentUuid")?,
                "logicalParentUuid" => {
                    r.logical_parent_uuid = once(&mut map, s, 1 << 3, "logicalParentUuid")?;
                }
                "isSidechain" => r.is_sidechain = once(&mut map, s, 1 << 4, "isSidechain")?,
                "isMeta" => r.is_meta = once(&mut map, s, 1 << 5, "isMeta")?,
                "isCompactSummary" => {
                    r.is_compact_summary = once(&mut map, s, 1 << 6, "isCompactSummary")?;
                }
                "subtype" => r.subtype = once(&mut map, s, 1 << 7, "subtype")?,
                "message" => {
                    r.spans.message = self.after(&name);
                    r.message = once(&mut map, s, 1 << 8, "message")?;
                }
                "cwd" => r.cwd = once(&mut map, s, 1 << 9, "cwd")?,
                "sessionId" => r.session_id = once(&mut map, s, 1 << 10, "sessionId")?,
                "leafUuid" => r.leaf_uuid = once(&mut map, s, 1 << 11, "leafUuid")?,
                "timestamp" => {
                    let at = self.after(&name);
                    locate(&mut map, &mut r.spans.timestamp, s, 1 << 12, at)?;
                }
                "handoff" => {
                    let at = self.after(&name);
                    locate(&mut map, &mut r.spans.handoff, s, 1 << 13, at)?;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(r)
    }
}

impl<'de> Deserialize<'de> for ContentShape {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct ShapeVisitor;
        impl<'de> Visitor<'de> for ShapeVisitor {
            type Value = ContentShape;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or an array of blocks")
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<ContentShape, E> {
                Ok(ContentShape {
                    holds_results: false,
                    bare_strings_only: false,
                })
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ContentShape, A::Error> {
                let (mut holds_results, mut objects, mut strings) = (false, false, false);
                while let Some(block) = seq.next_element::<BlockShape>()? {
                    holds_results |= block.is_result;
                    objects |= block.is_object;
                    strings |= !block.is_object;
                }
                Ok(ContentShape {
                    holds_results,
                    bare_strings_only: strings && !objects,
                })
            }
        }
        d.deserialize_any(ShapeVisitor)
    }
}

/// One content block as the index pass sees it: whether it is a `tool_result`, and whether it is
/// an object at all (a bare string is none).
struct BlockShape {
    is_result: bool,
    is_object: bool,
}

impl<'de> Deserialize<'de> for BlockShape {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct BlockType<'a> {
            #[serde(rename = "type", borrow)]
            kind: Option<Text<'a>>,
        }
        struct ShapeVisitor;
        impl<'de> Visitor<'de> for ShapeVisitor {
            type Value = BlockShape;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a content block")
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<BlockShape, E> {
                Ok(BlockShape {
                    is_result: false,
                    is_object: false,
                })
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<BlockShape, A::Error> {
                let block = BlockType::deserialize(de::value::MapAccessDeserializer::new(map))?;
                Ok(BlockShape {
                    is_result: block.kind.is_some_and(|k| k.as_str() == "tool_result"),
                    is_object: true,
                })
            }
        }
        d.deserialize_any(ShapeVisitor)
    }
}
