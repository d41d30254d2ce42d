//! Semantic equality: the contract every check uses.
//!
//! Two transcripts are equal when they have the same events in the same order, with the same
//! authors, timestamps (to the millisecond) and bodies: roles, text byte for byte, tool names, ids
//! and arguments (as JSON values), results and error flags, images by bytes, and compactions by the
//! position of the event they replace. Event ids and opaque provider fields are not compared (each
//! native store has its own ids). Thinking that is not portable to a target (see
//! [`Comparison::for_target`]) is set aside on both sides.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;

use serde_json::{json, Value};

use super::{AssistantPart, Body, Event, Part, Transcript};

/// How two transcripts are compared.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Comparison {
    /// `None`: all thinking is compared. `Some(providers)`: thinking whose maker (its signature's
    /// provider, else the turn's origin provider) is not listed is set aside on both sides, and an
    /// assistant turn left empty by that is set aside too.
    pub portable_thinking: Option<Vec<String>>,
}

/// The first difference between two transcripts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Difference {
    /// Index of the differing event in the left transcript (after setting aside what is not
    /// compared); equal to the left length when the left side ran out.
    pub index: usize,
    /// Id of the left event, if there is one.
    pub left_id: Option<String>,
    /// Id of the right event, if there is one.
    pub right_id: Option<String>,
    /// The field path, e.g. `body.content[1].arguments.path`.
    pub field: String,
    /// The left value, as compact JSON (cut to a readable length).
    pub left: String,
    /// The right value, likewise.
    pub right: String,
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let id = |id: &Option<String>| id.clone().unwrap_or_else(|| "-".into());
        write!(
            f,
            "event {} (left {}, right {}): {}: left {} but right {}",
            self.index,
            id(&self.left_id),
            id(&self.right_id),
            self.field,
            self.left,
            self.right
        )
    }
}

impl Comparison {
    /// Compare everything.
    pub fn exact() -> Self {
        Comparison::default()
    }

    /// Compare as a target sees it: only thinking made by one of `providers` is portable to it.
    pub fn for_target(providers: &[String]) -> Self {
        Comparison {
            portable_thinking: Some(providers.to_vec()),
        }
    }

    /// `Ok` when equal, else the first difference.
    pub fn diff(&self, left: &Transcript, right: &Transcript) -> Result<(), Box<Difference>> {
        let l = self.normalise(left);
        let r = self.normalise(right);
        for i in 0..l.len().max(r.len()) {
            match (l.get(i), r.get(i)) {
                (Some(a), Some(b)) => {
                    if a != b {
                        return Err(Box::new(first_difference(i, a, b)));
                    }
                }
                (a, b) => return Err(Box::new(missing(i, a, b))),
            }
        }
        Ok(())
    }

    /// Whether `left` and `right` are semantically equal.
    pub fn equal(&self, left: &Transcript, right: &Transcript) -> bool {
        self.diff(left, right).is_ok()
    }

    /// If `prefix` is a prefix of `whole`, the number of `whole`'s events it covers (so
    /// `whole.events[n..]` is the suffix to append); else the first difference.
    pub fn prefix_of(
        &self,
        prefix: &Transcript,
        whole: &Transcript,
    ) -> Result<usize, Box<Difference>> {
        let p = self.normalise(prefix);
        let w = self.normalise(whole);
        for (i, a) in p.iter().enumerate() {
            match w.get(i) {
                Some(b) if a == b => {}
                Some(b) => return Err(Box::new(first_difference(i, a, b))),
                None => return Err(Box::new(missing(i, Some(a), None))),
            }
        }
        Ok(match p.len() {
            0 => 0,
            n => w[n - 1].original_index + 1,
        })
    }

    fn keeps(&self, maker: Option<&str>) -> bool {
        match &self.portable_thinking {
            None => true,
            Some(providers) => maker.is_some_and(|m| providers.iter().any(|p| p == m)),
        }
    }

    /// The body as compared: `None` when the whole event is set aside. An empty text in a tool
    /// result is no content (a tool that printed nothing: no CLI, wire or model tells `""` from
    /// no text at all, and Gemini sends `{"output": ""}` for both), so it is not compared.
    pub(super) fn normalise_body<'a>(&self, body: &'a Body) -> Option<Cow<'a, Body>> {
        if let Body::ToolResult {
            call_id,
            content,
            is_error,
        } = body
        {
            let empty = |p: &Part| matches!(p, Part::Text { text } if text.is_empty());
            if !content.iter().any(empty) {
                return Some(Cow::Borrowed(body));
            }
            return Some(Cow::Owned(Body::ToolResult {
                call_id: call_id.clone(),
                content: content.iter().filter(|p| !empty(p)).cloned().collect(),
                is_error: *is_error,
            }));
        }
        let Body::Assistant { content, origin } = body else {
            return Some(Cow::Borrowed(body));
        };
        if self.portable_thinking.is_none() {
            return Some(Cow::Borrowed(body));
        }
        let turn_maker = origin.as_ref().map(|o| o.provider.as_str());
        let portable = |p: &AssistantPart| match p {
            AssistantPart::Thinking(t) => self.keeps(
                t.signature
                    .as_ref()
                    .map(|s| s.provider.as_str())
                    .or(turn_maker),
            ),
            _ => true,
        };
        if content.iter().all(portable) {
            return Some(Cow::Borrowed(body));
        }
        let content: Vec<_> = content.iter().filter(|p| portable(p)).cloned().collect();
        (!content.is_empty()).then(|| {
            Cow::Owned(Body::Assistant {
                content,
                origin: origin.clone(),
            })
        })
    }

    fn normalise<'a>(&self, t: &'a Transcript) -> Vec<Normalised<'a>> {
        let mut expected = Expected::of(t);
        let mut out = Vec::with_capacity(t.events.len());
        out.extend(std::iter::from_fn(|| expected.next(self)));
        out
    }

    /// A verifier that compares `expected` with events handed to it one at a time, so the other
    /// side never has to be held whole (the continuation engine reads back with it). The
    /// expected side is normalised as the events arrive, so nothing per event is held either.
    pub fn verifier<'a>(&'a self, expected: &'a Transcript) -> Verifier<'a> {
        Verifier {
            comparison: self,
            expected: Expected::of(expected),
            next: 0,
            seen: 0,
            positions: Positions::for_transcript(expected),
            difference: None,
        }
    }
}

/// Maps event ids to the position (among compared events) of the last compared event at or before
/// them, so compactions compare by position. Holds ids only, and only when a compaction can need
/// them: with none on the expected side, any compaction is a difference by its kind alone.
struct Positions {
    track: bool,
    last: Option<usize>,
    by_id: HashMap<String, usize>,
}

impl Positions {
    fn for_transcript(t: &Transcript) -> Positions {
        Positions {
            track: t
                .events
                .iter()
                .any(|e| matches!(e.body, Body::Compaction { .. })),
            last: None,
            by_id: HashMap::new(),
        }
    }

    fn replaces(&self, body: &Body) -> Option<usize> {
        match body {
            Body::Compaction {
                replaces_through, ..
            } => self.by_id.get(replaces_through).copied(),
            _ => None,
        }
    }

    fn kept(&mut self, id: &str) {
        let n = self.last.map_or(0, |n| n + 1);
        self.last = Some(n);
        if self.track {
            self.by_id.insert(id.to_owned(), n);
        }
    }

    fn set_aside(&mut self, id: &str) {
        if let (true, Some(n)) = (self.track, self.last) {
            self.by_id.insert(id.to_owned(), n);
        }
    }
}

/// Compares a transcript with a stream of events (see [`Comparison::verifier`]).
pub struct Verifier<'a> {
    comparison: &'a Comparison,
    expected: Expected<'a>,
    /// How many compared events were taken from each side.
    next: usize,
    seen: usize,
    positions: Positions,
    difference: Option<Box<Difference>>,
}

impl Verifier<'_> {
    /// Compares the next event; after the first difference, further events are ignored.
    /// Returns whether the events so far are equal.
    pub fn push(&mut self, event: &Event) -> bool {
        if self.difference.is_some() {
            return false;
        }
        let original_index = self.seen;
        self.seen += 1;
        let Some(body) = self.comparison.normalise_body(&event.body) else {
            self.positions.set_aside(&event.id);
            return true;
        };
        let replaces = self.positions.replaces(&body);
        self.positions.kept(&event.id);
        let got = Normalised {
            original_index,
            event,
            body,
            replaces,
        };
        let i = self.next;
        self.next += 1;
        match self.expected.next(self.comparison) {
            Some(want) if want == got => true,
            Some(want) => {
                self.difference = Some(Box::new(first_difference(i, &want, &got)));
                false
            }
            None => {
                self.difference = Some(Box::new(missing(i, None, Some(&got))));
                false
            }
        }
    }

    /// `Ok` when every expected event arrived, equal, and nothing more.
    pub fn finish(mut self) -> Result<(), Box<Difference>> {
        if let Some(d) = self.difference {
            return Err(d);
        }
        match self.expected.next(self.comparison) {
            Some(want) => Err(Box::new(missing(self.next, Some(&want), None))),
            None => Ok(()),
        }
    }
}

/// A transcript normalised one event at a time: the expected side of a [`Verifier`], and each
/// side of [`Comparison::normalise`].
struct Expected<'a> {
    events: &'a [Event],
    /// The next event to look at.
    cursor: usize,
    positions: Positions,
}

impl<'a> Expected<'a> {
    fn of(t: &'a Transcript) -> Self {
        Expected {
            events: &t.events,
            cursor: 0,
            positions: Positions::for_transcript(t),
        }
    }

    /// The next compared event, setting aside what is not compared.
    fn next(&mut self, comparison: &Comparison) -> Option<Normalised<'a>> {
        while let Some(event) = self.events.get(self.cursor) {
            let original_index = self.cursor;
            self.cursor += 1;
            match comparison.normalise_body(&event.body) {
                Some(body) => {
                    let replaces = self.positions.replaces(&body);
                    self.positions.kept(&event.id);
                    return Some(Normalised {
                        original_index,
                        event,
                        body,
                        replaces,
                    });
                }
                None => self.positions.set_aside(&event.id),
            }
        }
        None
    }
}

struct Normalised<'a> {
    original_index: usize,
    event: &'a Event,
    body: Cow<'a, Body>,
    /// For compactions: the normalised position of the replaced event.
    replaces: Option<usize>,
}

impl PartialEq for Normalised<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.event.timestamp == other.event.timestamp
            && self.event.author == other.event.author
            && self.replaces == other.replaces
            && bodies_equal(&self.body, &other.body)
    }
}

fn bodies_equal(a: &Body, b: &Body) -> bool {
    match (a, b) {
        (Body::Compaction { summary: s1, .. }, Body::Compaction { summary: s2, .. }) => s1 == s2,
        _ => a == b,
    }
}

impl Normalised<'_> {
    /// The compared projection as JSON, for locating a difference.
    fn projection(&self) -> Value {
        let mut body = serde_json::to_value(self.body.as_ref()).unwrap_or(Value::Null);
        if let (Some(n), Some(obj)) = (self.replaces, body.as_object_mut()) {
            obj.insert("replaces_through".into(), json!(format!("#{n}")));
        }
        json!({
            "timestamp": self.event.timestamp,
            "author": self.event.author,
            "body": body,
        })
    }
}

fn first_difference(index: usize, a: &Normalised<'_>, b: &Normalised<'_>) -> Difference {
    let (field, left, right) = locate(&a.projection(), &b.projection(), String::new());
    Difference {
        index,
        left_id: Some(a.event.id.clone()),
        right_id: Some(b.event.id.clone()),
        field,
        left: show(&left),
        right: show(&right),
    }
}

fn missing(index: usize, a: Option<&Normalised<'_>>, b: Option<&Normalised<'_>>) -> Difference {
    let kind = |n: Option<&Normalised<'_>>| match n {
        Some(n) => format!("a {} event", n.body.kind()),
        None => "no event".into(),
    };
    Difference {
        index,
        left_id: a.map(|n| n.event.id.clone()),
        right_id: b.map(|n| n.event.id.clone()),
        field: "(event)".into(),
        left: kind(a),
        right: kind(b),
    }
}

/// Walks two JSON values to the first place they differ.
fn locate(a: &Value, b: &Value, path: String) -> (String, Value, Value) {
    let join = |key: &str| {
        if path.is_empty() {
            key.to_owned()
        } else {
            format!("{path}.{key}")
        }
    };
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (key, va) in x {
                match y.get(key) {
                    Some(vb) if va == vb => {}
                    Some(vb) => return locate(va, vb, join(key)),
                    None => return (join(key), va.clone(), Value::Null),
                }
            }
            for (key, vb) in y {
                if !x.contains_key(key) {
                    return (join(key), Value::Null, vb.clone());
                }
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            for i in 0..x.len().max(y.len()) {
                match (x.get(i), y.get(i)) {
                    (Some(va), Some(vb)) if va == vb => {}
                    (Some(va), Some(vb)) => return locate(va, vb, format!("{path}[{i}]")),
                    (va, vb) => {
                        return (
                            format!("{path}[{i}]"),
                            va.cloned().unwrap_or(Value::Null),
                            vb.cloned().unwrap_or(Value::Null),
                        )
                    }
                }
            }
        }
        _ => {}
    }
    (path, a.clone(), b.clone())
}

fn show(v: &Value) -> String {
    const LIMIT: usize = 160;
    let text = v.to_string();
    if text.len() <= LIMIT {
        return text;
    }
    let mut cut = LIMIT;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}… ({} bytes)", &text[..cut], text.len())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::{Origin, Signature, Thinking, Timestamp, ToolCall};

    fn user(id: &str, text: &str) -> Event {
        Event::new(id, Timestamp::from_millis(1_000), Body::user_text(text))
    }

    fn assistant(id: &str, parts: Vec<AssistantPart>, provider: &str) -> Event {
        Event::new(
            id,
            Timestamp::from_millis(2_000),
            Body::Assistant {
                content: parts,
                origin: Some(Origin {
                    provider: provider.into(),
                    model: None,
                    api: None,
                }),
            },
        )
    }

    #[test]
    fn ids_and_opaque_fields_are_not_compared() {
        let a = Transcript::new(vec![user("a", "hi")]);
        let mut b = Transcript::new(vec![user("zzz", "hi")]);
        b.events[0].opaque.insert("claude".into(), json!({"x": 1}));
        Comparison::exact().diff(&a, &b).unwrap();
    }

    #[test]
    fn difference_names_event_field_and_both_values() {
        let call = |path: &str| {
            AssistantPart::ToolCall(ToolCall::new("c1", "read", json!({"path": path})))
        };
        let a = Transcript::new(vec![
            user("u", "hi"),
            assistant("a", vec![call("x")], "openai"),
        ]);
        let b = Transcript::new(vec![
            user("u", "hi"),
            assistant("a", vec![call("y")], "openai"),
        ]);
        let d = Comparison::exact().diff(&a, &b).unwrap_err();
        assert_eq!(d.index, 1);
        assert_eq!(d.field, "body.content[0].arguments.path");
        assert_eq!((d.left.as_str(), d.right.as_str()), ("\"x\"", "\"y\""));
    }

    #[test]
    fn missing_events_are_reported() {
        let a = Transcript::new(vec![user("u", "hi")]);
        let b = Transcript::new(vec![user("u", "hi"), user("v", "again")]);
        let d = Comparison::exact().diff(&a, &b).unwrap_err();
        assert_eq!((d.index, d.field.as_str()), (1, "(event)"));
    }

    #[test]
    fn foreign_thinking_is_set_aside_for_a_target() {
        let thinking = AssistantPart::Thinking(Thinking {
            text: "secret".into(),
            signature: Some(Signature {
                provider: "openai".into(),
                model: None,
                value: "enc".into(),
                redacted: false,
            }),
        });
        let with = Transcript::new(vec![
            user("u", "hi"),
            assistant("a", vec![thinking.clone()], "openai"),
            assistant("b", vec![thinking, AssistantPart::text("ok")], "openai"),
        ]);
        let without = Transcript::new(vec![
            user("u", "hi"),
            assistant("b", vec![AssistantPart::text("ok")], "openai"),
        ]);
        assert!(Comparison::exact().diff(&with, &without).is_err());
        let claude = Comparison::for_target(&["anthropic".into()]);
        claude.diff(&with, &without).unwrap();
        assert_eq!(claude.prefix_of(&without, &with).unwrap(), 3);
    }

    #[test]
    fn prefix_reports_how_much_it_covers() {
        let whole = Transcript::new(vec![user("a", "1"), user("b", "2"), user("c", "3")]);
        let prefix = Transcript::new(vec![user("x", "1"), user("y", "2")]);
        assert_eq!(Comparison::exact().prefix_of(&prefix, &whole).unwrap(), 2);
        let diverged = Transcript::new(vec![user("x", "1"), user("y", "other")]);
        let d = Comparison::exact()
            .prefix_of(&diverged, &whole)
            .unwrap_err();
        assert_eq!(d.index, 1);
        let empty = Transcript::new(vec![]);
        assert_eq!(Comparison::exact().prefix_of(&empty, &whole).unwrap(), 0);
    }

    #[test]
    fn the_verifier_agrees_with_diff() {
        let compact = Event::new(
            "c",
            Timestamp::from_millis(3_000),
            Body::Compaction {
                summary: "s".into(),
                replaces_through: "b".into(),
            },
        );
        let a = Transcript::new(vec![user("a", "1"), user("b", "2"), compact]);
        let cases = [
            a.clone(),
            Transcript::new(a.events[..2].to_vec()),
            Transcript::new(vec![user("x", "1"), user("y", "other")]),
            {
                let mut longer = a.clone();
                longer.events.push(user("d", "4"));
                longer
            },
        ];
        for other in &cases {
            let cmp = Comparison::exact();
            let mut v = cmp.verifier(&a);
            for e in &other.events {
                v.push(e);
            }
            assert_eq!(v.finish().err(), cmp.diff(&a, other).err());
        }
    }

    /// The verifier normalises the expected side as events arrive; with events set aside on
    /// either side and a compaction replacing through a set-aside one, it still says what `diff`
    /// says.
    #[test]
    fn the_verifier_sets_aside_as_diff_does() {
        let foreign = || {
            AssistantPart::Thinking(Thinking {
                text: "t".into(),
                signature: Some(Signature {
                    provider: "openai".into(),
                    model: None,
                    value: "enc".into(),
                    redacted: false,
                }),
            })
        };
        let compact = |through: &str| {
            Event::new(
                "c",
                Timestamp::from_millis(3_000),
                Body::Compaction {
                    summary: "s".into(),
                    replaces_through: through.into(),
                },
            )
        };
        let expected = Transcript::new(vec![
            user("u", "hi"),
            assistant("a", vec![foreign()], "openai"),
            compact("a"),
            assistant("b", vec![foreign(), AssistantPart::text("ok")], "openai"),
        ]);
        let ok = Transcript::new(vec![user("u", "hi"), compact("u"), {
            assistant("b", vec![AssistantPart::text("ok")], "openai")
        }]);
        let cases = [
            expected.clone(),
            ok.clone(),
            Transcript::new(vec![user("u", "hi"), compact("u")]),
            Transcript::new(vec![user("x", "0"), user("u", "hi"), compact("u")]),
            Transcript::new(ok.events.iter().chain(&ok.events).cloned().collect()),
        ];
        let claude = Comparison::for_target(&["anthropic".into()]);
        claude.diff(&expected, &ok).unwrap();
        for other in &cases {
            let mut v = claude.verifier(&expected);
            for e in &other.events {
                v.push(e);
            }
            assert_eq!(v.finish().err(), claude.diff(&expected, other).err());
        }
    }

    #[test]
    fn an_empty_text_in_a_tool_result_is_no_content() {
        let result = |content: Vec<Part>| {
            Event::new(
                "r",
                Timestamp::parse("2026-11-30T00:00:00.000Z").unwrap(),
                Body::ToolResult {
                    call_id: "c".into(),
                    content,
                    is_error: false,
                },
            )
        };
        let t = |content: Vec<Part>| Transcript::new(vec![result(content)]);
        let c = Comparison::exact();
        assert!(c.equal(&t(vec![Part::text("")]), &t(vec![])));
        assert!(c.equal(
            &t(vec![Part::text(""), Part::text("a")]),
            &t(vec![Part::text("a")])
        ));
        assert!(!c.equal(&t(vec![Part::text(" ")]), &t(vec![])));
        assert!(c.verifier(&t(vec![Part::text("")])).push(&result(vec![])));
        let mut with = crate::Fingerprinter::new(&c);
        let mut without = crate::Fingerprinter::new(&c);
        assert_eq!(
            with.push(&result(vec![Part::text("")])),
            without.push(&result(vec![]))
        );
    }

    #[test]
    fn compactions_compare_by_position_not_id() {
        let compact = |id: &str, through: &str| {
            Event::new(
                id,
                Timestamp::from_millis(3_000),
                Body::Compaction {
                    summary: "s".into(),
                    replaces_through: through.into(),
                },
            )
        };
        let a = Transcript::new(vec![user("a", "1"), user("b", "2"), compact("c", "b")]);
        let b = Transcript::new(vec![user("x", "1"), user("y", "2"), compact("z", "y")]);
        Comparison::exact().diff(&a, &b).unwrap();
        let c = Transcript::new(vec![user("x", "1"), user("y", "2"), compact("z", "x")]);
        let d = Comparison::exact().diff(&a, &c).unwrap_err();
        assert_eq!(d.field, "body.replaces_through");
    }
}
