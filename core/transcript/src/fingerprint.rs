//! Fingerprints: a 128-bit hash of each event as a [`Comparison`] sees it, so a streamed
//! continuation can verify what it wrote without holding the transcript it wrote.
//!
//! Two events have the same fingerprint when the comparison finds them equal: the same timestamp,
//! author and body (thinking that is not portable set aside, a compaction by its summary and the
//! position of the event it replaces through). Different events have different fingerprints but
//! for a hash collision (two independently seeded 64-bit foldhash quality hashes); a caller that
//! finds a difference confirms it field by field with the comparison itself, which also names it.

use std::hash::{BuildHasher, Hasher};

use serde_json::Value;

use super::equality::Comparison;
use super::{AssistantPart, Body, Event, Part};
use crate::ids::{HashMapExt, IdMap};

/// Fixed seeds: fingerprints are compared within one run only, but both sides of a comparison
/// must hash alike.
const SEEDS: [u64; 2] = [0x9e37_79b9_7f4a_7c15, 0xc2b2_ae3d_27d4_eb4f];

/// The fingerprints of a stream of events, one per compared event (set-aside events have none).
pub struct Fingerprinter<'a> {
    comparison: &'a Comparison,
    /// Event id (hashed) → position among compared events of the last compared event at or
    /// before it, so a compaction hashes by the position it replaces through.
    positions: IdMap<u64, usize>,
    compared: usize,
}

impl<'a> Fingerprinter<'a> {
    /// A fingerprinter for events compared by `comparison`.
    pub fn new(comparison: &'a Comparison) -> Self {
        Fingerprinter {
            comparison,
            positions: IdMap::new(),
            compared: 0,
        }
    }

    /// The next event's fingerprint, or `None` when the comparison sets it aside.
    pub fn push(&mut self, event: &Event) -> Option<u128> {
        let id = id_key(&event.id);
        let Some(body) = self.comparison.normalise_body(&event.body) else {
            if let Some(last) = self.compared.checked_sub(1) {
                self.positions.insert(id, last);
            }
            return None;
        };
        let replaces = match body.as_ref() {
            Body::Compaction {
                replaces_through, ..
            } => Some(self.positions.get(&id_key(replaces_through)).copied()),
            _ => None,
        };
        let position = self.compared;
        self.compared += 1;
        self.positions.insert(id, position);
        let mut h = Fingerprint::new();
        h.write_i64(event.timestamp.millis());
        match &event.author {
            None => h.write_u8(0),
            Some(a) => {
                h.write_u8(1);
                h.write_u8(a.kind as u8);
                h.str(&a.name);
            }
        }
        if let Some(replaces) = replaces {
            h.write_u64(replaces.map_or(u64::MAX, |p| p as u64));
        }
        h.body(&body);
        Some(h.finish128())
    }
}

fn id_key(id: &str) -> u64 {
    foldhash::quality::FixedState::with_seed(SEEDS[0]).hash_one(id)
}

/// Two seeded 64-bit hashers fed the same bytes.
struct Fingerprint([foldhash::quality::FoldHasher<'static>; 2]);

impl Fingerprint {
    fn new() -> Self {
        Fingerprint(SEEDS.map(|s| foldhash::quality::FixedState::with_seed(s).build_hasher()))
    }

    fn finish128(&self) -> u128 {
        (u128::from(self.0[0].finish()) << 64) | u128::from(self.0[1].finish())
    }

    /// A string, length first, so `("ab", "c")` and `("a", "bc")` differ.
    fn str(&mut self, s: &str) {
        self.write_usize(s.len());
        self.write(s.as_bytes());
    }

    fn opt(&mut self, s: Option<&str>) {
        match s {
            None => self.write_u8(0),
            Some(s) => {
                self.write_u8(1);
                self.str(s);
            }
        }
    }

    // Every variant is destructured whole (no `..`), so a field added to the model does not
    // compile until it is hashed here too.
    fn body(&mut self, body: &Body) {
        match body {
            Body::User { content } => {
                self.write_u8(0);
                self.parts(content);
            }
            Body::Assistant { content, origin } => {
                self.write_u8(1);
                match origin {
                    None => self.write_u8(0),
                    Some(super::Origin {
                        provider,
                        model,
                        api,
                    }) => {
                        self.write_u8(1);
                        self.str(provider);
                        self.opt(model.as_deref());
                        self.opt(api.as_deref());
                    }
                }
                self.write_usize(content.len());
                for part in content {
                    self.assistant_part(part);
                }
            }
            Body::ToolResult {
                call_id,
                content,
                is_error,
            } => {
                self.write_u8(2);
                self.str(call_id);
                self.parts(content);
                self.write_u8(u8::from(*is_error));
            }
            // Compared by summary and position only (the replaced event's id differs by store).
            Body::Compaction {
                summary,
                replaces_through: _,
            } => {
                self.write_u8(3);
                self.str(summary);
            }
        }
    }

    fn parts(&mut self, parts: &[Part]) {
        self.write_usize(parts.len());
        for part in parts {
            match part {
                Part::Text { text } => {
                    self.write_u8(0);
                    self.str(text);
                }
                Part::Image { media_type, data } => {
                    self.write_u8(1);
                    self.str(media_type);
                    self.write_usize(data.len());
                    self.write(data);
                }
                Part::ImageUrl { url } => {
                    self.write_u8(2);
                    self.str(url);
                }
            }
        }
    }

    fn assistant_part(&mut self, part: &AssistantPart) {
        match part {
            AssistantPart::Text { text } => {
                self.write_u8(0);
                self.str(text);
            }
            AssistantPart::Thinking(super::Thinking { text, signature }) => {
                self.write_u8(1);
                self.str(text);
                match signature {
                    None => self.write_u8(0),
                    Some(super::Signature {
                        provider,
                        model,
                        value,
                        redacted,
                    }) => {
                        self.write_u8(1);
                        self.str(provider);
                        self.opt(model.as_deref());
                        self.str(value);
                        self.write_u8(u8::from(*redacted));
                    }
                }
            }
            AssistantPart::ToolCall(super::ToolCall { id, name, input }) => match input {
                super::ToolInput::Arguments(arguments) => {
                    self.write_u8(2);
                    self.str(id);
                    self.str(name);
                    self.value(arguments);
                }
                super::ToolInput::Freeform(text) => {
                    self.write_u8(4);
                    self.str(id);
                    self.str(name);
                    self.str(text);
                }
            },
            AssistantPart::WebSearch(super::WebSearch { id, status, action }) => {
                self.write_u8(3);
                self.opt(id.as_deref());
                self.opt(status.as_deref());
                self.value(action);
            }
        }
    }

    /// A JSON value as `serde_json` compares it: numbers by their text (arbitrary precision),
    /// objects whatever their key order (each entry hashed apart, the hashes summed).
    fn value(&mut self, value: &Value) {
        match value {
            Value::Null => self.write_u8(0),
            Value::Bool(b) => {
                self.write_u8(1);
                self.write_u8(u8::from(*b));
            }
            Value::Number(n) => {
                self.write_u8(2);
                self.str(n.as_str());
            }
            Value::String(s) => {
                self.write_u8(3);
                self.str(s);
            }
            Value::Array(items) => {
                self.write_u8(4);
                self.write_usize(items.len());
                for item in items {
                    self.value(item);
                }
            }
            Value::Object(map) => {
                self.write_u8(5);
                self.write_usize(map.len());
                let mut sum = 0u128;
                for (key, item) in map {
                    let mut entry = Fingerprint::new();
                    entry.str(key);
                    entry.value(item);
                    sum = sum.wrapping_add(entry.finish128());
                }
                self.write_u128(sum);
            }
        }
    }
}

impl Hasher for Fingerprint {
    fn finish(&self) -> u64 {
        self.0[0].finish()
    }

    fn write(&mut self, bytes: &[u8]) {
        self.0[0].write(bytes);
        self.0[1].write(bytes);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::{Origin, Thinking, Timestamp, ToolCall, ToolInput, Transcript, WebSearch};

    fn all(comparison: &Comparison, t: &Transcript) -> Vec<u128> {
        let mut f = Fingerprinter::new(comparison);
        t.events.iter().filter_map(|e| f.push(e)).collect()
    }

    fn user(id: &str, text: &str) -> Event {
        Event::new(
            id,
            Timestamp::from_millis(5),
            Body::User {
                content: vec![Part::text(text)],
            },
        )
    }

    fn with_parts(content: Vec<AssistantPart>) -> Event {
        Event::new(
            "a1",
            Timestamp::from_millis(6),
            Body::Assistant {
                content,
                origin: None,
            },
        )
    }

    fn search(status: Option<&str>, query: &str) -> Event {
        with_parts(vec![AssistantPart::WebSearch(WebSearch {
            id: Some("ws_1".into()),
            status: status.map(Into::into),
            action: json!({"type": "search", "query": query}),
        })])
    }

    fn call(id: &str, arguments: Value) -> Event {
        Event::new(
            id,
            Timestamp::from_millis(6),
            Body::Assistant {
                content: vec![AssistantPart::ToolCall(ToolCall::new(
                    "c1", "ls", arguments,
                ))],
                origin: Some(Origin {
                    provider: "openai".into(),
                    model: None,
                    api: None,
                }),
            },
        )
    }

    /// Fingerprints agree exactly where the comparison does, on pairs that differ in one field
    /// each (and on pairs the comparison calls equal although their ids or key order differ).
    #[test]
    fn fingerprints_agree_with_the_comparison() {
        let base = Transcript::new(vec![
            user("u1", "hi"),
            call("a1", json!({"path": "/a", "n": 1})),
        ]);
        let variants: Vec<Transcript> = vec![
            // Equal: other event ids, other key order.
            Transcript::new(vec![
                user("x", "hi"),
                call("y", json!({"n": 1, "path": "/a"})),
            ]),
            Transcript::new(vec![user("u1", "hi!"), base.events[1].clone()]),
            Transcript::new(vec![
                base.events[0].clone(),
                call("a1", json!({"path": "/a", "n": 1.0})),
            ]),
            Transcript::new(vec![
                base.events[0].clone(),
                call("a1", json!({"path": "/b", "n": 1})),
            ]),
            Transcript::new(vec![base.events[0].clone()]),
            Transcript::new(vec![
                Event {
                    timestamp: Timestamp::from_millis(7),
                    ..base.events[0].clone()
                },
                base.events[1].clone(),
            ]),
            // A freeform call whose text is the JSON string arguments of another.
            Transcript::new(vec![
                base.events[0].clone(),
                with_parts(vec![AssistantPart::ToolCall(ToolCall {
                    id: "c1".into(),
                    name: "ls".into(),
                    input: ToolInput::Freeform("/a".into()),
                })]),
            ]),
            Transcript::new(vec![base.events[0].clone(), call("a1", json!("/a"))]),
            // Web searches that differ in their action or status.
            Transcript::new(vec![base.events[0].clone(), search(Some("completed"), "q")]),
            Transcript::new(vec![base.events[0].clone(), search(None, "q")]),
            Transcript::new(vec![base.events[0].clone(), search(Some("completed"), "r")]),
            // Text split differently across parts.
            Transcript::new(vec![
                Event::new(
                    "u1",
                    Timestamp::from_millis(5),
                    Body::User {
                        content: vec![Part::text("h"), Part::text("i")],
                    },
                ),
                base.events[1].clone(),
            ]),
        ];
        let comparison = Comparison::exact();
        for v in &variants {
            assert_eq!(
                all(&comparison, &base) == all(&comparison, v),
                comparison.equal(&base, v),
                "{v:?}"
            );
        }
        assert!(comparison.equal(&base, &variants[0]));
    }

    /// Thinking set aside by the comparison is set aside by the fingerprints, and a compaction is
    /// fingerprinted by the position it replaces through, not by the replaced event's id.
    #[test]
    fn set_aside_thinking_and_compactions_by_position() {
        let thinking = |id: &str| {
            Event::new(
                id,
                Timestamp::from_millis(6),
                Body::Assistant {
                    content: vec![AssistantPart::Thinking(Thinking {
                        text: "hmm".into(),
                        signature: None,
                    })],
                    origin: Some(Origin {
                        provider: "openai".into(),
                        model: None,
                        api: None,
                    }),
                },
            )
        };
        let compaction = |id: &str, through: &str| {
            Event::new(
                id,
                Timestamp::from_millis(8),
                Body::Compaction {
                    summary: "s".into(),
                    replaces_through: through.into(),
                },
            )
        };
        let comparison = Comparison::for_target(&["anthropic".into()]);
        let left = Transcript::new(vec![
            user("u1", "a"),
            thinking("t1"),
            user("u2", "b"),
            compaction("c1", "t1"),
        ]);
        let right = Transcript::new(vec![
            user("x1", "a"),
            user("x2", "b"),
            compaction("x3", "x1"),
        ]);
        assert!(comparison.equal(&left, &right));
        assert_eq!(all(&comparison, &left), all(&comparison, &right));
        let elsewhere = Transcript::new(vec![
            user("x1", "a"),
            user("x2", "b"),
            compaction("x3", "x2"),
        ]);
        assert!(!comparison.equal(&left, &elsewhere));
        assert_ne!(all(&comparison, &left), all(&comparison, &elsewhere));
        assert_eq!(all(&comparison, &left).len(), 3);
    }
}
