//! The compact binary form of events that crosses the boundary under the v3 capability ids.
//!
//! Why not JSON: a transcript as canonical JSON costs a timestamp formatted and parsed per event,
//! every string escaped and unescaped, and serde's buffering of internally tagged enums; crossing
//! a 100,000-event transcript that way cost more than reading it. Why not a serde binary format:
//! the model's internally tagged enums and `serde_json::Value` need `deserialize_any`, which rules
//! out bincode and postcard, and the self-describing ones (CBOR, MessagePack) still buffer every
//! tagged enum. Why not abi_stable mirror types: each string would be copied into an `RString`
//! and copied out again (an `RVec` made by another library is never adopted), with an allocation
//! and a free per string on each side. This form copies each string once into a reused buffer and
//! once out of it (`core/abi/benches/wire_encoding.rs` measures the four against a clone).
//!
//! Layout (little-endian): a batch is a `u32` event count then the events; a string or byte
//! string is a `u64` length and its bytes; an option is a `u8` 0/1 then the value; a list is a
//! `u64` count then the items; an enum is a `u8` tag then its fields. A `serde_json::Value` (tool
//! arguments, opaque fields) is a tag (null, false, true, number, string, array, object) and its
//! contents; a number travels as its exact digits. Timestamps are `i64` milliseconds. The form is fixed by the
//! capability id that carries it; a change is a new id. The one kind of growth that is not a
//! change: a new enum tag for a new part of the model that a [`Feature`](handoff_transcript::Feature)
//! guards (assistant part tags 3, a freeform tool call, and 4, a web search). A host never lends
//! such a part to a target whose manifest does not carry its feature (the engine and every writer
//! check the carried features first), and a plugin built before the feature cannot declare it, so
//! an older plugin never meets a tag it does not know.

use std::collections::BTreeMap;
use std::io::Write as _;

use serde_json::Value;

use handoff_transcript::{
    AssistantPart, Author, AuthorKind, Body, Event, Origin, Part, Signature, Thinking, Timestamp,
    ToolCall, ToolInput, WebSearch,
};

/// A batch is handed across once it holds this many bytes: large enough that the call per batch
/// costs nothing, small enough that it stays in cache and that a reader whose host stops early
/// stops soon after. Measured (docs/abi.md, the v4 ids): 16 KiB to 256 KiB cost the same, 1 MiB
/// more; 64 KiB is ~140 events of a continue-shaped session.
pub const BATCH_BYTES: usize = 64 * 1024;

/// Appends events to a batch in the binary form: the event count (`u32`), then the events.
pub struct Encoder {
    /// The count's slot (written when the batch is handed on), then the events.
    buffer: Vec<u8>,
    count: u32,
}

impl Default for Encoder {
    fn default() -> Self {
        Encoder {
            buffer: vec![0; 4],
            count: 0,
        }
    }
}

impl Encoder {
    /// An empty batch.
    pub fn new() -> Self {
        Encoder::default()
    }

    /// Appends one event.
    pub fn push(&mut self, event: &Event) {
        let out = &mut self.buffer;
        put_str(out, &event.id);
        out.extend_from_slice(&event.timestamp.millis().to_le_bytes());
        put_option(out, event.author.as_ref(), |out, author| {
            out.push(match author.kind {
                AuthorKind::Human => 0,
                AuthorKind::Agent => 1,
            });
            put_str(out, &author.name);
        });
        put_body(out, &event.body);
        put_len(out, event.opaque.len());
        for (key, value) in &event.opaque {
            put_str(out, key);
            put_json(out, value);
        }
        self.count += 1;
    }

    /// Bytes of events pushed since the batch began.
    pub fn len(&self) -> usize {
        self.buffer.len() - 4
    }

    /// Whether no event was pushed since the batch began.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The batch, for lending across the boundary; [`Encoder::clear`] starts the next one in the
    /// same allocation.
    pub fn batch(&mut self) -> &[u8] {
        self.buffer[..4].copy_from_slice(&self.count.to_le_bytes());
        &self.buffer
    }

    /// Starts the next batch, keeping the allocation.
    pub fn clear(&mut self) {
        self.buffer.truncate(4);
        self.count = 0;
    }

    /// The batch, by value.
    pub fn into_batch(mut self) -> Vec<u8> {
        self.batch();
        self.buffer
    }
}

/// Encodes a whole list of events as one batch.
pub fn encode_events(events: &[Event]) -> Vec<u8> {
    let mut encoder = Encoder::new();
    for event in events {
        encoder.push(event);
    }
    encoder.into_batch()
}

/// Decodes a batch, handing each event to `sink` until it returns `false`. Returns whether the
/// sink wanted more. An error names the event's index in the batch, the field and the byte offset.
pub fn decode_events(batch: &[u8], sink: &mut dyn FnMut(Event) -> bool) -> Result<bool, String> {
    let mut input = Input {
        bytes: batch,
        at: 0,
    };
    let count = input.u32("count")?;
    for index in 0..count {
        let event = input
            .event()
            .map_err(|e| format!("event {index} of the batch: {e}"))?;
        if !sink(event) {
            return Ok(false);
        }
    }
    if input.at != batch.len() {
        return Err(format!(
            "{} bytes left over after {count} events",
            batch.len() - input.at
        ));
    }
    Ok(true)
}

/// Decodes a whole batch into a list.
pub fn decode_all(batch: &[u8]) -> Result<Vec<Event>, String> {
    let mut events = Vec::new();
    decode_events(batch, &mut |event| {
        events.push(event);
        true
    })?;
    Ok(events)
}

/// The events of one batch, decoded one at a time as they are asked for, so a writer that takes
/// its events one by one holds one decoded event at a time, not a batch of them. It keeps a copy
/// of the batch, in an allocation reused from batch to batch, so the lender's bytes need not
/// outlive the pull.
#[derive(Debug, Default)]
pub struct BatchCursor {
    bytes: Vec<u8>,
    at: usize,
    index: u32,
    count: u32,
}

impl BatchCursor {
    /// Starts on `batch`: copies it and reads its event count.
    pub fn load(&mut self, batch: &[u8]) -> Result<(), String> {
        self.bytes.clear();
        self.bytes.extend_from_slice(batch);
        let mut input = Input {
            bytes: &self.bytes,
            at: 0,
        };
        // A batch whose count cannot be read yields nothing and is not read exactly.
        (self.at, self.index, self.count) = (0, 0, 0);
        self.count = input.u32("count")?;
        self.at = input.at;
        Ok(())
    }

    /// The batch's next event; none after its last (which must end the batch exactly).
    pub fn next_event(&mut self) -> Result<Option<Event>, String> {
        if self.index == self.count {
            if self.at != self.bytes.len() {
                return Err(format!(
                    "{} bytes left over after {} events",
                    self.bytes.len() - self.at,
                    self.count
                ));
            }
            return Ok(None);
        }
        let mut input = Input {
            bytes: &self.bytes,
            at: self.at,
        };
        let event = input
            .event()
            .map_err(|e| format!("event {} of the batch: {e}", self.index))?;
        self.at = input.at;
        self.index += 1;
        Ok(Some(event))
    }
}

fn put_len(out: &mut Vec<u8>, len: usize) {
    out.extend_from_slice(&(len as u64).to_le_bytes());
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    put_bytes(out, s.as_bytes());
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put_len(out, bytes.len());
    out.extend_from_slice(bytes);
}

fn put_option<T>(out: &mut Vec<u8>, value: Option<T>, put: impl FnOnce(&mut Vec<u8>, T)) {
    match value {
        None => out.push(0),
        Some(value) => {
            out.push(1);
            put(out, value);
        }
    }
}

fn put_json(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::Null => out.push(0),
        Value::Bool(false) => out.push(1),
        Value::Bool(true) => out.push(2),
        Value::Number(number) => {
            // Its exact digits (serde_json keeps them with `arbitrary_precision`).
            out.push(3);
            let at = out.len();
            out.extend_from_slice(&[0; 8]);
            write!(out, "{number}").expect("writing to a Vec never fails");
            let len = (out.len() - at - 8) as u64;
            out[at..at + 8].copy_from_slice(&len.to_le_bytes());
        }
        Value::String(text) => {
            out.push(4);
            put_str(out, text);
        }
        Value::Array(items) => {
            out.push(5);
            put_len(out, items.len());
            for item in items {
                put_json(out, item);
            }
        }
        Value::Object(map) => {
            out.push(6);
            put_len(out, map.len());
            for (key, item) in map {
                put_str(out, key);
                put_json(out, item);
            }
        }
    }
}

fn put_parts(out: &mut Vec<u8>, parts: &[Part]) {
    put_len(out, parts.len());
    for part in parts {
        match part {
            Part::Text { text } => {
                out.push(0);
                put_str(out, text);
            }
            Part::Image { media_type, data } => {
                out.push(1);
                put_str(out, media_type);
                put_bytes(out, data);
            }
            Part::ImageUrl { url } => {
                out.push(2);
                put_str(out, url);
            }
        }
    }
}

fn put_body(out: &mut Vec<u8>, body: &Body) {
    match body {
        Body::User { content } => {
            out.push(0);
            put_parts(out, content);
        }
        Body::Assistant { content, origin } => {
            out.push(1);
            put_len(out, content.len());
            for part in content {
                put_assistant_part(out, part);
            }
            put_option(out, origin.as_ref(), |out, origin| {
                put_str(out, &origin.provider);
                put_option(out, origin.model.as_deref(), put_str);
                put_option(out, origin.api.as_deref(), put_str);
            });
        }
        Body::ToolResult {
            call_id,
            content,
            is_error,
        } => {
            out.push(2);
            put_str(out, call_id);
            put_parts(out, content);
            out.push(u8::from(*is_error));
        }
        Body::Compaction {
            summary,
            replaces_through,
        } => {
            out.push(3);
            put_str(out, summary);
            put_str(out, replaces_through);
        }
    }
}

fn put_assistant_part(out: &mut Vec<u8>, part: &AssistantPart) {
    match part {
        AssistantPart::Text { text } => {
            out.push(0);
            put_str(out, text);
        }
        AssistantPart::Thinking(thinking) => {
            out.push(1);
            put_str(out, &thinking.text);
            put_option(out, thinking.signature.as_ref(), |out, signature| {
                put_str(out, &signature.provider);
                put_option(out, signature.model.as_deref(), put_str);
                put_str(out, &signature.value);
                out.push(u8::from(signature.redacted));
            });
        }
        AssistantPart::ToolCall(call) => match &call.input {
            ToolInput::Arguments(arguments) => {
                out.push(2);
                put_str(out, &call.id);
                put_str(out, &call.name);
                put_json(out, arguments);
            }
            // Tags 3 and 4 came with freeform calls and web searches; a host sends them only
            // to a target whose manifest carries those features, which no plugin built before
            // them can declare.
            ToolInput::Freeform(text) => {
                out.push(3);
                put_str(out, &call.id);
                put_str(out, &call.name);
                put_str(out, text);
            }
        },
        AssistantPart::WebSearch(search) => {
            out.push(4);
            put_option(out, search.id.as_deref(), put_str);
            put_option(out, search.status.as_deref(), put_str);
            put_json(out, &search.action);
        }
    }
}

/// A cursor over a batch; every read is bounds-checked and names its field.
struct Input<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Input<'a> {
    #[inline]
    fn take(&mut self, n: usize, field: &str) -> Result<&'a [u8], String> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&end| end <= self.bytes.len());
        let Some(end) = end else {
            return Err(format!(
                "{field}: needs {n} bytes at byte {}, the batch has {}",
                self.at,
                self.bytes.len()
            ));
        };
        let slice = &self.bytes[self.at..end];
        self.at = end;
        Ok(slice)
    }

    #[inline]
    fn u8(&mut self, field: &str) -> Result<u8, String> {
        Ok(self.take(1, field)?[0])
    }

    #[inline]
    fn u32(&mut self, field: &str) -> Result<u32, String> {
        let bytes = self.take(4, field)?;
        Ok(u32::from_le_bytes(bytes.try_into().expect("4 bytes")))
    }

    #[inline]
    fn len(&mut self, field: &str) -> Result<usize, String> {
        let bytes = self.take(8, field)?;
        let len = u64::from_le_bytes(bytes.try_into().expect("8 bytes"));
        usize::try_from(len).map_err(|_| format!("{field}: a length of {len} bytes"))
    }

    #[inline]
    fn i64(&mut self, field: &str) -> Result<i64, String> {
        let bytes = self.take(8, field)?;
        Ok(i64::from_le_bytes(bytes.try_into().expect("8 bytes")))
    }

    #[inline]
    fn bool(&mut self, field: &str) -> Result<bool, String> {
        match self.u8(field)? {
            0 => Ok(false),
            1 => Ok(true),
            other => Err(format!("{field}: {other} is not a boolean")),
        }
    }

    #[inline]
    fn bytes(&mut self, field: &str) -> Result<&'a [u8], String> {
        let len = self.len(field)?;
        self.take(len, field)
    }

    #[inline]
    fn str(&mut self, field: &str) -> Result<&'a str, String> {
        let at = self.at;
        let bytes = self.bytes(field)?;
        if bytes.is_ascii() {
            // SAFETY: ASCII is UTF-8. (`is_ascii` runs a word at a time; most text is ASCII, and
            // `from_utf8` costs several times more per byte.)
            return Ok(unsafe { std::str::from_utf8_unchecked(bytes) });
        }
        std::str::from_utf8(bytes).map_err(|e| format!("{field}: not UTF-8 at byte {at}: {e}"))
    }

    #[inline]
    fn string(&mut self, field: &str) -> Result<String, String> {
        self.str(field).map(str::to_owned)
    }

    fn json(&mut self, field: &str) -> Result<Value, String> {
        self.json_at_depth(field, 0)
    }

    /// A JSON value, nested at most as deep as serde_json itself reads (128).
    fn json_at_depth(&mut self, field: &str, depth: usize) -> Result<Value, String> {
        if depth > 128 {
            return Err(format!("{field}: nested more than 128 deep"));
        }
        Ok(match self.u8(field)? {
            0 => Value::Null,
            1 => Value::Bool(false),
            2 => Value::Bool(true),
            3 => {
                let digits = self.str(field)?;
                Value::Number(
                    digits
                        .parse()
                        .map_err(|e| format!("{field}: {digits:?} is not a number: {e}"))?,
                )
            }
            4 => Value::String(self.string(field)?),
            5 => {
                let count = self.count(field)?;
                let mut items = Vec::with_capacity(count);
                for _ in 0..count {
                    items.push(self.json_at_depth(field, depth + 1)?);
                }
                Value::Array(items)
            }
            6 => {
                let count = self.count(field)?;
                let mut map = serde_json::Map::with_capacity(count);
                for _ in 0..count {
                    let key = self.string(field)?;
                    map.insert(key, self.json_at_depth(field, depth + 1)?);
                }
                Value::Object(map)
            }
            other => return Err(format!("{field}: unknown JSON tag {other}")),
        })
    }

    #[inline]
    fn option<T>(
        &mut self,
        field: &str,
        read: impl FnOnce(&mut Self) -> Result<T, String>,
    ) -> Result<Option<T>, String> {
        if self.bool(field)? {
            read(self).map(Some)
        } else {
            Ok(None)
        }
    }

    /// A count of items that each take at least one byte: a corrupt count fails here instead of
    /// reserving gigabytes.
    #[inline]
    fn count(&mut self, field: &str) -> Result<usize, String> {
        let count = self.len(field)?;
        if count > self.bytes.len() - self.at {
            return Err(format!(
                "{field}: {count} items cannot fit in the {} bytes left",
                self.bytes.len() - self.at
            ));
        }
        Ok(count)
    }

    fn event(&mut self) -> Result<Event, String> {
        let id = self.string("id")?;
        let timestamp = Timestamp::from_millis(self.i64("timestamp")?);
        let author = self.option("author", |input| {
            let kind = match input.u8("author.kind")? {
                0 => AuthorKind::Human,
                1 => AuthorKind::Agent,
                other => return Err(format!("author.kind: unknown tag {other}")),
            };
            Ok(Author {
                kind,
                name: input.string("author.name")?,
            })
        })?;
        let body = self.body()?;
        let mut opaque = BTreeMap::new();
        for _ in 0..self.count("opaque")? {
            let key = self.string("opaque key")?;
            let value = self.json("opaque value")?;
            opaque.insert(key, value);
        }
        Ok(Event {
            id,
            timestamp,
            author,
            body,
            opaque,
        })
    }

    fn parts(&mut self, field: &str) -> Result<Vec<Part>, String> {
        let count = self.count(field)?;
        let mut parts = Vec::with_capacity(count);
        for _ in 0..count {
            parts.push(match self.u8(field)? {
                0 => Part::text(self.string("text")?),
                1 => Part::Image {
                    media_type: self.string("media_type")?,
                    data: self.bytes("data")?.to_vec(),
                },
                2 => Part::ImageUrl {
                    url: self.string("url")?,
                },
                other => return Err(format!("{field}: unknown part tag {other}")),
            });
        }
        Ok(parts)
    }

    fn body(&mut self) -> Result<Body, String> {
        Ok(match self.u8("body")? {
            0 => Body::User {
                content: self.parts("body.content")?,
            },
            1 => {
                let count = self.count("body.content")?;
                let mut content = Vec::with_capacity(count);
                for _ in 0..count {
                    content.push(self.assistant_part()?);
                }
                let origin = self.option("body.origin", |input| {
                    Ok(Origin {
                        provider: input.string("origin.provider")?,
                        model: input.option("origin.model", |i| i.string("origin.model"))?,
                        api: input.option("origin.api", |i| i.string("origin.api"))?,
                    })
                })?;
                Body::Assistant { content, origin }
            }
            2 => Body::ToolResult {
                call_id: self.string("body.call_id")?,
                content: self.parts("body.content")?,
                is_error: self.bool("body.is_error")?,
            },
            3 => Body::Compaction {
                summary: self.string("body.summary")?,
                replaces_through: self.string("body.replaces_through")?,
            },
            other => return Err(format!("body: unknown tag {other}")),
        })
    }

    fn assistant_part(&mut self) -> Result<AssistantPart, String> {
        Ok(match self.u8("body.content")? {
            0 => AssistantPart::text(self.string("text")?),
            1 => AssistantPart::Thinking(Thinking {
                text: self.string("thinking.text")?,
                signature: self.option("thinking.signature", |input| {
                    Ok(Signature {
                        provider: input.string("signature.provider")?,
                        model: input.option("signature.model", |i| i.string("signature.model"))?,
                        value: input.string("signature.value")?,
                        redacted: input.bool("signature.redacted")?,
                    })
                })?,
            }),
            2 => AssistantPart::ToolCall(ToolCall::new(
                self.string("tool_call.id")?,
                self.string("tool_call.name")?,
                self.json("tool_call.arguments")?,
            )),
            3 => AssistantPart::ToolCall(ToolCall {
                id: self.string("tool_call.id")?,
                name: self.string("tool_call.name")?,
                input: ToolInput::Freeform(self.string("tool_call.input")?),
            }),
            4 => AssistantPart::WebSearch(WebSearch {
                id: self.option("web_search.id", |i| i.string("web_search.id"))?,
                status: self.option("web_search.status", |i| i.string("web_search.status"))?,
                action: self.json("web_search.action")?,
            }),
            other => return Err(format!("body.content: unknown assistant part tag {other}")),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn every_shape() -> Vec<Event> {
        let mut with_opaque = Event::new(
            "u1",
            Timestamp::from_millis(1_700_000_000_123),
            Body::User {
                content: vec![
                    Part::text("héllo \u{1F600}\n\"quoted\""),
                    Part::Image {
                        media_type: "image/png".into(),
                        data: vec![0, 1, 2, 255],
                    },
                    Part::ImageUrl {
                        url: "https://example.invalid/a.png".into(),
                    },
                ],
            },
        );
        with_opaque.author = Some(Author {
            kind: AuthorKind::Human,
            name: "dev".into(),
        });
        with_opaque.opaque.insert(
            "anthropic".into(),
            json!({"z": 1, "a": [1.5e300, 123456789012345678901234567890u128.to_string()]}),
        );
        let big: Value =
            serde_json::from_str(r#"{"n": 123456789012345678901234567890, "y": 0.1, "z": null}"#)
                .unwrap();
        vec![
            with_opaque,
            Event::new(
                "a1",
                Timestamp::from_millis(-5),
                Body::Assistant {
                    content: vec![
                        AssistantPart::Thinking(Thinking {
                            text: String::new(),
                            signature: Some(Signature {
                                provider: "anthropic".into(),
                                model: None,
                                value: "sig".into(),
                                redacted: true,
                            }),
                        }),
                        AssistantPart::text("text"),
                        AssistantPart::ToolCall(ToolCall::new("c1", "f", big)),
                        AssistantPart::ToolCall(ToolCall {
                            id: "c2".into(),
                            name: "apply_patch".into(),
                            input: ToolInput::Freeform("*** Begin Patch\n+é\n".into()),
                        }),
                        AssistantPart::WebSearch(WebSearch {
                            id: Some("ws_1".into()),
                            status: None,
                            action: json!({"type": "search", "query": "q", "queries": ["q", "r"]}),
                        }),
                    ],
                    origin: Some(Origin {
                        provider: "openai".into(),
                        model: Some("m".into()),
                        api: None,
                    }),
                },
            ),
            Event::new(
                "r1",
                Timestamp::from_millis(0),
                Body::ToolResult {
                    call_id: "c1".into(),
                    content: vec![],
                    is_error: true,
                },
            ),
            Event::new(
                "k1",
                Timestamp::from_millis(1),
                Body::Compaction {
                    summary: "s".into(),
                    replaces_through: "a1".into(),
                },
            ),
        ]
    }

    #[test]
    fn every_shape_round_trips_exactly() {
        let events = every_shape();
        let back = decode_all(&encode_events(&events)).unwrap();
        assert_eq!(back, events);
        // Exact digits, not just equal values: the JSON text of the arguments is unchanged.
        let Body::Assistant { content, .. } = &back[1].body else {
            panic!()
        };
        let AssistantPart::ToolCall(call) = &content[2] else {
            panic!()
        };
        assert_eq!(
            call.arguments().unwrap().to_string(),
            r#"{"n":123456789012345678901234567890,"y":0.1,"z":null}"#
        );
    }

    /// Any JSON value (numbers as digits, any text) and any text crosses unchanged.
    mod round_trip {
        use super::*;
        use proptest::prelude::*;

        fn json() -> impl Strategy<Value = Value> {
            let leaf = prop_oneof![
                Just(Value::Null),
                any::<bool>().prop_map(Value::Bool),
                any::<i64>().prop_map(|n| json!(n)),
                any::<f64>()
                    .prop_filter("finite", |f| f.is_finite())
                    .prop_map(|f| json!(f)),
                ".*".prop_map(Value::String),
            ];
            leaf.prop_recursive(4, 32, 4, |inner| {
                prop_oneof![
                    proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                    proptest::collection::vec((".*", inner), 0..4)
                        .prop_map(|entries| Value::Object(entries.into_iter().collect())),
                ]
            })
        }

        proptest! {
            #[test]
            fn any_text_and_json_cross_unchanged(text in ".*", key in ".*", arguments in json(), extra in json()) {
                let mut event = Event::new(
                    text.clone(),
                    Timestamp::from_millis(7),
                    Body::assistant(vec![
                            AssistantPart::text(text.clone()),
                            AssistantPart::ToolCall(ToolCall::new(key.clone(), text, arguments)),
                        ]),
                );
                event.opaque.insert(key, extra);
                let events = vec![event];
                let back = decode_all(&encode_events(&events)).unwrap();
                prop_assert_eq!(back, events);
            }
        }
    }

    /// One event at a time gives exactly what the whole batch gives, and a batch with bytes
    /// after its last event is refused, as `decode_events` refuses it.
    #[test]
    fn a_cursor_decodes_what_the_whole_batch_decodes() {
        let events = every_shape();
        let mut cursor = BatchCursor::default();
        for _ in 0..2 {
            cursor.load(&encode_events(&events)).unwrap();
            let mut back = Vec::new();
            while let Some(event) = cursor.next_event().unwrap() {
                back.push(event);
            }
            assert_eq!(back, events);
        }
        let mut long = encode_events(&events[..1]);
        long.push(0);
        cursor.load(&long).unwrap();
        assert_eq!(cursor.next_event().unwrap().as_ref(), Some(&events[0]));
        let error = cursor.next_event().unwrap_err();
        assert!(error.contains("1 bytes left over"), "{error}");
        assert!(cursor.load(&[1, 0]).is_err());
        assert_eq!(
            cursor.next_event().unwrap_err(),
            "2 bytes left over after 0 events"
        );
    }

    #[test]
    fn json_nested_deeper_than_serde_json_reads_is_refused() {
        let mut deep = Value::Null;
        for _ in 0..200 {
            deep = Value::Array(vec![deep]);
        }
        let mut event = every_shape().remove(2);
        event.opaque.insert("p".into(), deep);
        let err = decode_all(&encode_events(&[event])).unwrap_err();
        assert!(err.contains("nested more than 128 deep"), "{err}");
    }

    #[test]
    fn a_sink_that_stops_stops_the_decoding() {
        let batch = encode_events(&every_shape());
        let mut seen = 0;
        let more = decode_events(&batch, &mut |_| {
            seen += 1;
            seen < 2
        })
        .unwrap();
        assert!(!more);
        assert_eq!(seen, 2);
    }

    #[test]
    fn an_encoder_is_reused_batch_after_batch() {
        let events = every_shape();
        let mut encoder = Encoder::new();
        for event in &events {
            encoder.push(event);
        }
        assert_eq!(encoder.batch(), &encode_events(&events)[..]);
        encoder.clear();
        assert!(encoder.is_empty());
        assert_eq!(encoder.len(), 0);
        encoder.push(&events[0]);
        assert_eq!(
            decode_all(encoder.batch()).unwrap(),
            vec![events[0].clone()]
        );
    }

    #[test]
    fn every_truncation_is_an_error_naming_a_field_never_a_panic() {
        let batch = encode_events(&every_shape());
        for cut in 0..batch.len() {
            let err = decode_all(&batch[..cut]).unwrap_err();
            assert!(err.contains("bytes") || err.contains(':'), "{cut}: {err}");
        }
        let mut extra = batch.clone();
        extra.push(0);
        assert!(decode_all(&extra).unwrap_err().contains("left over"));
    }

    #[test]
    fn corrupt_tags_and_text_are_named() {
        let event = Event::new(
            "x",
            Timestamp::from_millis(0),
            Body::User {
                content: vec![Part::text("ab")],
            },
        );
        let batch = encode_events(&[event]);
        // count(4) id(8+1) timestamp(8) author(1), then the body's tag at 22.
        let mut bad_tag = batch.clone();
        bad_tag[22] = 9;
        let err = decode_all(&bad_tag).unwrap_err();
        assert!(err.contains("event 0") && err.contains("body"), "{err}");
        let mut bad_utf8 = batch.clone();
        let last = bad_utf8.len() - 10; // the text's first byte (then 1 more, then the opaque count)
        bad_utf8[last] = 0xFF;
        let err = decode_all(&bad_utf8).unwrap_err();
        assert!(err.contains("not UTF-8"), "{err}");
        let mut huge_count = batch;
        huge_count[23..31].copy_from_slice(&u64::MAX.to_le_bytes());
        let err = decode_all(&huge_count).unwrap_err();
        assert!(err.contains("cannot fit"), "{err}");
    }
}
