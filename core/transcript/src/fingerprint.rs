//! Fingerprints: a 128-bit hash of each event as a [`Comparison`] sees it, so a streamed
//! continuation can verify what it wrote without holding the transcript it wrote.
//!
//! Two events have the same fingerprint when the comparison finds them equal: the same timestamp,
//! author and body (thinking that is not portable set aside, a compaction by its summary and the
//! position of the event it replaces through). Different events have different fingerprints but
//! for a hash collision (two independently seeded 64-bit foldhash quality hashes, a long byte run
//! through its 128-bit XXH3 digest); a caller that
//! finds a difference confirms it field by field with the comparison itself, which also names it.

use std::hash::{BuildHasher, Hasher};

use serde_json::Value;

use super::equality::Comparison;
use super::{AssistantPart, Body, Event, Part};
use crate::spill::{spill_ids, RarelyAskedMap};
use crate::IdSeeds;

/// Fixed seeds: fingerprints are compared within one run only, but both sides of a comparison
/// must hash alike.
const SEEDS: [u64; 2] = [0x9e37_79b9_7f4a_7c15, 0xc2b2_ae3d_27d4_eb4f];

/// The fingerprints of a stream of events, one per compared event (set-aside events have none).
///
/// It remembers where each event id was last seen (its digest → its index, in a
/// [`RarelyAskedMap`]: past a threshold the older entries are appended to a temporary file, and
/// sorted into a `SpillMap` only when a compaction first asks past the table, ~1.3 bytes an
/// event resident then) and 4 bytes a set-aside event, so that a compaction hashes by the
/// position it replaces through.
pub struct Fingerprinter<'a> {
    comparison: &'a Comparison,
    /// Each event id's digest → the index of the latest event with it.
    index_of: RarelyAskedMap<u64>,
    seeds: IdSeeds,
    /// Events pushed.
    pushed: usize,
    /// The indexes of the events the comparison set aside, ascending.
    set_aside: Vec<u32>,
    compared: usize,
}

impl<'a> Fingerprinter<'a> {
    /// A fingerprinter for events compared by `comparison`.
    pub fn new(comparison: &'a Comparison) -> Self {
        Fingerprinter::spilling_past(comparison, spill_ids())
    }

    /// [`Fingerprinter::new`] whose positions go to a file past `threshold` events.
    pub fn spilling_past(comparison: &'a Comparison, threshold: usize) -> Self {
        Fingerprinter {
            comparison,
            index_of: RarelyAskedMap::with_threshold(threshold),
            seeds: IdSeeds::default(),
            pushed: 0,
            set_aside: Vec::new(),
            compared: 0,
        }
    }

    /// The position among compared events of the last compared event at or before the latest
    /// event with this id, if any.
    fn position_of(&mut self, id: &str) -> Option<usize> {
        let index = usize::try_from(self.index_of.get(&self.seeds.digest(id))?).ok()?;
        let aside = self.set_aside.partition_point(|&a| (a as usize) <= index);
        // Compared events at or before `index`, less one; none when every one was set aside.
        (index + 1 - aside).checked_sub(1)
    }

    /// The next event's fingerprint, or `None` when the comparison sets it aside.
    pub fn push(&mut self, event: &Event) -> Option<u128> {
        let index = self.pushed;
        self.pushed += 1;
        let id = self.seeds.digest(&event.id);
        let Some(body) = self.comparison.normalise_body(&event.body) else {
            self.index_of.insert(id, index as u64);
            self.set_aside
                .push(u32::try_from(index).unwrap_or(u32::MAX));
            return None;
        };
        // Looked up among the events before this one.
        let replaces = match body.as_ref() {
            Body::Compaction {
                replaces_through, ..
            } => Some(self.position_of(replaces_through)),
            _ => None,
        };
        self.index_of.insert(id, index as u64);
        self.compared += 1;
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

/// The fingerprints of a stream, in 16 bytes however long it is: an order-sensitive digest of
/// them all and their count, and the digest at every [`PrintChain::CHECKPOINT_EVERY`]th one, so
/// two chains that differ say from which stretch of events on (16 bytes per 4,096 events).
///
/// Each step is a bijection of the digest for a given fingerprint, so two streams that differ
/// in one fingerprint always end with different digests; streams that differ in several
/// collide with the likelihood of a 128-bit hash.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PrintChain {
    count: u64,
    digest: u128,
    checkpoints: Vec<u128>,
}

impl PrintChain {
    /// Events between two checkpoints.
    pub const CHECKPOINT_EVERY: u64 = 4096;

    /// Folds in the next fingerprint.
    pub fn push(&mut self, fingerprint: u128) {
        // An odd multiplier and a rotation: both invertible modulo 2^128.
        const MULTIPLIER: u128 = 0x2360_ed05_1fc6_5da4_4385_df64_9fcc_f645;
        self.digest = ((self.digest ^ fingerprint).wrapping_mul(MULTIPLIER)).rotate_left(41);
        self.count += 1;
        if self.count.is_multiple_of(Self::CHECKPOINT_EVERY) {
            self.checkpoints.push(self.digest);
        }
    }

    /// How many fingerprints were folded in.
    pub fn len(&self) -> u64 {
        self.count
    }

    /// Whether none was.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// `None` when both chains hold the same fingerprints; else the index of the first event of
    /// the stretch where they begin to differ (its first difference is at or after it).
    pub fn first_difference(&self, other: &PrintChain) -> Option<u64> {
        if self == other {
            return None;
        }
        let same_stretches = self
            .checkpoints
            .iter()
            .zip(&other.checkpoints)
            .take_while(|(a, b)| a == b)
            .count() as u64;
        Some(same_stretches * Self::CHECKPOINT_EVERY)
    }
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

/// Byte runs at least this long (an image, a long output) are hashed once, at 128 bits, and the
/// digest goes to both hashers: two 64-bit passes over every image were most of fingerprinting
/// a session with images. Every run is written after its length, so which way a run goes is
/// the same on both sides of a comparison.
const LONG_RUN: usize = 256;

impl Hasher for Fingerprint {
    fn finish(&self) -> u64 {
        self.0[0].finish()
    }

    fn write(&mut self, bytes: &[u8]) {
        if bytes.len() >= LONG_RUN {
            let digest = xxhash_rust::xxh3::xxh3_128(bytes);
            self.0[0].write_u128(digest);
            self.0[1].write_u128(digest);
        } else {
            self.0[0].write(bytes);
            self.0[1].write(bytes);
        }
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
        Event::new(id, Timestamp::from_millis(5), Body::user_text(text))
    }

    fn with_parts(content: Vec<AssistantPart>) -> Event {
        Event::new("a1", Timestamp::from_millis(6), Body::assistant(content))
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

    /// Long runs (hashed through one 128-bit digest) and runs just short of that: equal when
    /// equal, different when one byte or the length differs, or the bytes move between parts.
    #[test]
    fn long_runs_are_told_apart_as_short_ones_are() {
        let prompt = |parts: Vec<Part>| {
            Transcript::new(vec![Event::new(
                "u1",
                Timestamp::from_millis(5),
                Body::User { content: parts },
            )])
        };
        let image = |data: Vec<u8>| Part::Image {
            media_type: "image/png".into(),
            data,
        };
        let bytes = |len: usize| -> Vec<u8> { (0..len).map(|i| (i * 31 % 251) as u8).collect() };
        let comparison = Comparison::exact();
        for len in [LONG_RUN - 1, LONG_RUN, LONG_RUN + 1, 70_000] {
            let mut flipped = bytes(len);
            flipped[len / 2] ^= 1;
            let text: String = bytes(len)
                .iter()
                .map(|b| char::from(b'a' + b % 26))
                .collect();
            let base = prompt(vec![image(bytes(len)), Part::text(text.clone())]);
            let variants = [
                prompt(vec![image(bytes(len)), Part::text(text.clone())]),
                prompt(vec![image(flipped), Part::text(text.clone())]),
                prompt(vec![image(bytes(len - 1)), Part::text(text.clone())]),
                prompt(vec![image(bytes(len)), Part::text(text[1..].to_owned())]),
                prompt(vec![
                    image(bytes(len)),
                    Part::text(&text[..len / 2]),
                    Part::text(&text[len / 2..]),
                ]),
            ];
            for (i, v) in variants.iter().enumerate() {
                assert_eq!(
                    all(&comparison, &base) == all(&comparison, v),
                    i == 0,
                    "length {len}, variant {i}"
                );
            }
        }
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

    fn chain(prints: impl IntoIterator<Item = u128>) -> PrintChain {
        let mut chain = PrintChain::default();
        prints.into_iter().for_each(|p| chain.push(p));
        chain
    }

    #[test]
    fn a_chain_finds_any_one_difference_and_its_stretch() {
        let n = 3 * PrintChain::CHECKPOINT_EVERY + 5;
        let prints: Vec<u128> = (0..n).map(|i| u128::from(i) * 0x9e37_79b9).collect();
        let whole = chain(prints.iter().copied());
        assert_eq!(whole.first_difference(&chain(prints.iter().copied())), None);
        assert_eq!(whole.len(), n);
        for at in [0, 1, PrintChain::CHECKPOINT_EVERY + 7, n - 1] {
            let mut changed = prints.clone();
            changed[at as usize] ^= 1;
            let other = chain(changed);
            let from = whole.first_difference(&other).expect("a difference");
            assert!(
                from <= at && at < from + PrintChain::CHECKPOINT_EVERY,
                "{at}: {from}"
            );
        }
        // Two swapped, one missing, one more: all differ.
        let mut swapped = prints.clone();
        swapped.swap(10, 11);
        assert!(whole.first_difference(&chain(swapped)).is_some());
        assert!(whole
            .first_difference(&chain(prints[..prints.len() - 1].iter().copied()))
            .is_some());
        assert!(whole
            .first_difference(&chain(prints.iter().copied().chain([7])))
            .is_some());
    }

    #[test]
    fn a_compaction_hashes_by_the_position_it_replaces_through_past_set_aside_events() {
        // Ids differ between the two sides; positions (among compared events) do not.
        let compaction = |id: &str, through: &str| {
            Event::new(
                id,
                Timestamp::from_millis(9),
                Body::Compaction {
                    summary: "s".into(),
                    replaces_through: through.into(),
                },
            )
        };
        let comparison = Comparison::default();
        let left = Transcript::new(vec![user("a", "1"), user("b", "2"), compaction("c", "b")]);
        let right = Transcript::new(vec![user("x", "1"), user("y", "2"), compaction("z", "y")]);
        let wrong = Transcript::new(vec![user("x", "1"), user("y", "2"), compaction("z", "x")]);
        assert_eq!(all(&comparison, &left), all(&comparison, &right));
        assert_ne!(all(&comparison, &left), all(&comparison, &wrong));
    }

    #[test]
    fn positions_in_a_file_give_the_fingerprints_of_positions_in_memory() {
        // Compactions through events far back, some set aside (a compaction is set aside by
        // none of these comparisons; thinking-only turns are by the default one), and an id
        // used again (the latest is the one a compaction names).
        let mut events = Vec::new();
        for i in 0..2000 {
            events.push(user(&format!("u{i}"), &format!("{i}")));
            if i % 97 == 0 {
                events.push(user("again", &format!("again {i}")));
            }
            if i % 300 == 299 {
                events.push(Event::new(
                    format!("k{i}"),
                    Timestamp::from_millis(9),
                    Body::Compaction {
                        summary: "s".into(),
                        replaces_through: format!("u{}", i / 3),
                    },
                ));
                events.push(Event::new(
                    format!("j{i}"),
                    Timestamp::from_millis(9),
                    Body::Compaction {
                        summary: "s".into(),
                        replaces_through: "again".into(),
                    },
                ));
            }
        }
        let comparison = Comparison::default();
        let prints = |threshold: usize| {
            let mut f = Fingerprinter::spilling_past(&comparison, threshold);
            events.iter().filter_map(|e| f.push(e)).collect::<Vec<_>>()
        };
        let in_memory = prints(usize::MAX);
        assert_eq!(in_memory, prints(0));
        assert_eq!(in_memory, prints(5));
        assert_eq!(in_memory, prints(1000));
    }
}
