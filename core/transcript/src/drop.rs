//! `--drop KIND`: an explicit way through a target's refusal. A continuation asked to drop some
//! [`Feature`]s takes those parts (or events) out of the source as its events pass, records each
//! item it took out, and verifies the written session against the source minus what it dropped.
//! Nothing is dropped unless asked for by name.
//!
//! What dropping does, by kind (see `docs/continuation.md`):
//! - a part (an image, an image URL, thinking, an image in a tool result) is removed from its
//!   event; a user or assistant turn left with no content is dropped whole, a tool result is kept
//!   (its call still needs an answer), with no content;
//! - `thinking_signature` keeps the thinking text and removes its signature;
//! - `author` removes the event's author, keeping the event;
//! - `compaction` drops the compaction event;
//! - `tool_call` drops the call and, later, the tool result that answers it; `freeform_tool_call`
//!   does so for freeform calls only;
//! - `web_search` drops a search the provider ran (it has no result event).
//!
//! A compaction whose `replaces_through` names an event that was dropped whole is pointed at the
//! nearest earlier event that was kept (recorded too).

use std::collections::{HashMap, HashSet};

use serde::Serialize;

use super::{AssistantPart, Body, Event, Feature, Part, Transcript};

impl Feature {
    /// Whether a continuation can drop this feature (`--drop KIND`), and so continue without it.
    /// Text, tool results, their error flag, the order of a turn's parts and the digits of a
    /// number cannot be taken out without changing what is left.
    pub fn droppable(self) -> bool {
        match self {
            Feature::Image
            | Feature::ImageUrl
            | Feature::Thinking
            | Feature::ThinkingSignature
            | Feature::ToolCall
            | Feature::ToolResultImage
            | Feature::Compaction
            | Feature::Author
            | Feature::FreeformToolCall
            | Feature::WebSearch => true,
            Feature::Text
            | Feature::ToolResult
            | Feature::ToolError
            | Feature::TextAfterToolCall
            | Feature::PreciseNumbers => false,
        }
    }

    /// The feature of this snake_case name (as in manifests and messages).
    pub fn from_name(name: &str) -> Option<Feature> {
        Feature::ALL.into_iter().find(|f| f.name() == name)
    }

    /// Every feature a continuation can drop, in [`Feature::ALL`] order.
    pub fn droppable_kinds() -> Vec<Feature> {
        Feature::ALL.into_iter().filter(|f| f.droppable()).collect()
    }
}

/// One item a continuation dropped from its source.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Dropped {
    /// The event's index in the source.
    pub index: usize,
    /// The event's id.
    pub event_id: String,
    /// The kind asked for that dropped it.
    pub kind: Feature,
    /// How many parts of that kind were removed (0 for an event-level kind: author, compaction,
    /// the result of a dropped call).
    pub parts: usize,
    /// Whether the whole event was dropped (a compaction, a turn left empty, the result of a
    /// dropped call).
    pub whole_event: bool,
    /// What was dropped, for people.
    pub what: String,
}

/// The kind named is not one a continuation can drop.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind} cannot be dropped (droppable: {})", droppable_list())]
pub struct NotDroppable {
    /// The kind asked for.
    pub kind: Feature,
}

fn droppable_list() -> String {
    Feature::droppable_kinds()
        .iter()
        .map(|f| f.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Takes the asked-for kinds out of events as they pass, in source order (see the module docs).
#[derive(Clone, Debug, Default)]
pub struct DropFilter {
    kinds: Vec<Feature>,
    /// Ids of the tool calls dropped, so their results go too.
    dropped_calls: HashSet<String>,
    /// Ids of the events dropped whole, with the nearest earlier kept event.
    dropped_events: HashMap<String, Option<String>>,
    last_kept: Option<String>,
    dropped: Vec<Dropped>,
}

impl DropFilter {
    /// A filter of `kinds`; refuses a kind that cannot be dropped.
    pub fn new(kinds: &[Feature]) -> Result<Self, NotDroppable> {
        if let Some(&kind) = kinds.iter().find(|k| !k.droppable()) {
            return Err(NotDroppable { kind });
        }
        let mut kinds = kinds.to_vec();
        kinds.sort();
        kinds.dedup();
        Ok(DropFilter {
            kinds,
            ..DropFilter::default()
        })
    }

    /// Whether it drops anything at all.
    pub fn is_empty(&self) -> bool {
        self.kinds.is_empty()
    }

    /// The kinds it drops.
    pub fn kinds(&self) -> &[Feature] {
        &self.kinds
    }

    /// The same kinds, with nothing seen yet (for reading the source again).
    pub fn fresh(&self) -> Self {
        DropFilter {
            kinds: self.kinds.clone(),
            ..DropFilter::default()
        }
    }

    /// What was dropped so far, in source order.
    pub fn dropped(&self) -> &[Dropped] {
        &self.dropped
    }

    /// Takes what was dropped so far.
    pub fn take_dropped(&mut self) -> Vec<Dropped> {
        std::mem::take(&mut self.dropped)
    }

    fn drops(&self, kind: Feature) -> bool {
        self.kinds.contains(&kind)
    }

    /// Event `index` of the source without the dropped kinds; `None` when it is dropped whole.
    pub fn apply(&mut self, index: usize, mut event: Event) -> Option<Event> {
        if self.kinds.is_empty() {
            return Some(event);
        }
        let mut records: Vec<(Feature, usize, String)> = Vec::new();
        if self.drops(Feature::Author) && event.author.take().is_some() {
            records.push((Feature::Author, 0, "its author".into()));
        }
        let whole: bool = match &mut event.body {
            Body::User { content } => {
                let before = content.len();
                self.drop_parts(content, false, &mut records);
                content.is_empty() && before > 0
            }
            Body::Assistant { content, .. } => {
                let before = content.len();
                let mut thinking = 0;
                let mut signatures = 0;
                let mut calls = 0;
                let mut freeform = 0;
                let mut searches = 0;
                content.retain_mut(|part| match part {
                    AssistantPart::Thinking(_) if self.drops(Feature::Thinking) => {
                        thinking += 1;
                        false
                    }
                    AssistantPart::Thinking(t) if self.drops(Feature::ThinkingSignature) => {
                        if t.signature.take().is_some() {
                            signatures += 1;
                        }
                        true
                    }
                    AssistantPart::ToolCall(call) if self.drops(Feature::ToolCall) => {
                        self.dropped_calls.insert(call.id.clone());
                        calls += 1;
                        false
                    }
                    AssistantPart::ToolCall(call)
                        if self.drops(Feature::FreeformToolCall)
                            && matches!(call.input, super::ToolInput::Freeform(_)) =>
                    {
                        self.dropped_calls.insert(call.id.clone());
                        freeform += 1;
                        false
                    }
                    AssistantPart::WebSearch(_) if self.drops(Feature::WebSearch) => {
                        searches += 1;
                        false
                    }
                    _ => true,
                });
                if thinking > 0 {
                    records.push((
                        Feature::Thinking,
                        thinking,
                        plural(thinking, "thinking part"),
                    ));
                }
                if signatures > 0 {
                    records.push((
                        Feature::ThinkingSignature,
                        signatures,
                        plural(signatures, "thinking signature"),
                    ));
                }
                if calls > 0 {
                    records.push((
                        Feature::ToolCall,
                        calls,
                        format!("{} (their results go too)", plural(calls, "tool call")),
                    ));
                }
                if freeform > 0 {
                    records.push((
                        Feature::FreeformToolCall,
                        freeform,
                        format!(
                            "{} (their results go too)",
                            plural(freeform, "freeform tool call")
                        ),
                    ));
                }
                if searches > 0 {
                    records.push((Feature::WebSearch, searches, plural(searches, "web search")));
                }
                content.is_empty() && before > 0
            }
            Body::ToolResult {
                call_id, content, ..
            } => {
                if self.dropped_calls.remove(call_id.as_str()) {
                    records.push((
                        Feature::ToolCall,
                        0,
                        format!("the result of dropped tool call {call_id}"),
                    ));
                    true
                } else {
                    // A result keeps its place (its call needs an answer), even with no content.
                    self.drop_parts(content, true, &mut records);
                    false
                }
            }
            Body::Compaction {
                replaces_through, ..
            } => {
                if self.drops(Feature::Compaction) {
                    records.push((Feature::Compaction, 0, "the compaction".into()));
                    true
                } else {
                    if let Some(Some(kept)) = self.dropped_events.get(replaces_through.as_str()) {
                        records.push((
                            Feature::Compaction,
                            0,
                            format!(
                                "its replaces_through {replaces_through} (dropped) became {kept}"
                            ),
                        ));
                        *replaces_through = kept.clone();
                    }
                    false
                }
            }
        };
        let whole_event = whole;
        let last = records.len().saturating_sub(1);
        for (i, (kind, parts, mut what)) in records.into_iter().enumerate() {
            if whole_event && i == last && parts > 0 {
                what.push_str("; the event, left empty, was dropped whole");
            }
            self.dropped.push(Dropped {
                index,
                event_id: event.id.clone(),
                kind,
                parts,
                whole_event,
                what,
            });
        }
        if whole_event {
            self.dropped_events
                .insert(event.id.clone(), self.last_kept.clone());
            None
        } else {
            self.last_kept = Some(event.id.clone());
            Some(event)
        }
    }

    /// Removes the dropped kinds of image from a user turn's or tool result's parts.
    fn drop_parts(
        &self,
        content: &mut Vec<Part>,
        in_tool_result: bool,
        records: &mut Vec<(Feature, usize, String)>,
    ) {
        let image_kind = if in_tool_result {
            Feature::ToolResultImage
        } else {
            Feature::Image
        };
        let (mut images, mut urls) = (0, 0);
        content.retain(|part| match part {
            Part::Image { .. } if self.drops(image_kind) => {
                images += 1;
                false
            }
            Part::ImageUrl { .. } if self.drops(Feature::ImageUrl) => {
                urls += 1;
                false
            }
            _ => true,
        });
        if images > 0 {
            records.push((image_kind, images, plural(images, "image")));
        }
        if urls > 0 {
            records.push((Feature::ImageUrl, urls, plural(urls, "image URL")));
        }
    }

    /// A whole transcript without the dropped kinds, and what was dropped from it.
    pub fn apply_all(&mut self, transcript: Transcript) -> Transcript {
        let Transcript {
            events,
            cwd,
            schema,
        } = transcript;
        let events = events
            .into_iter()
            .enumerate()
            .filter_map(|(index, event)| self.apply(index, event))
            .collect();
        Transcript {
            events,
            cwd,
            schema,
        }
    }
}

fn plural(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Author, AuthorKind, Signature, Thinking, Timestamp, ToolCall};

    fn event(id: &str, body: Body) -> Event {
        Event::new(id, Timestamp::from_millis(0), body)
    }

    fn user(id: &str, content: Vec<Part>) -> Event {
        event(id, Body::User { content })
    }

    fn assistant(id: &str, content: Vec<AssistantPart>) -> Event {
        event(id, Body::assistant(content))
    }

    fn image() -> Part {
        Part::Image {
            media_type: "image/png".into(),
            data: vec![1, 2, 3],
        }
    }

    fn thinking(signed: bool) -> AssistantPart {
        AssistantPart::Thinking(Thinking {
            text: "hm".into(),
            signature: signed.then(|| Signature {
                provider: "anthropic".into(),
                model: None,
                value: "sig".into(),
                redacted: false,
            }),
        })
    }

    fn call(id: &str) -> AssistantPart {
        AssistantPart::ToolCall(ToolCall::new(id, "shell", serde_json::json!({"cmd": "ls"})))
    }

    fn result(id: &str, call_id: &str, content: Vec<Part>) -> Event {
        event(
            id,
            Body::ToolResult {
                call_id: call_id.into(),
                content,
                is_error: false,
            },
        )
    }

    fn ids(t: &Transcript) -> Vec<&str> {
        t.events.iter().map(|e| e.id.as_str()).collect()
    }

    fn sample() -> Transcript {
        Transcript::new(vec![
            user("u1", vec![Part::text("look"), image()]),
            user("u2", vec![image()]),
            assistant("a1", vec![thinking(true), AssistantPart::text("a cat")]),
            assistant("a2", vec![thinking(false)]),
            assistant("a3", vec![AssistantPart::text("listing"), call("c1")]),
            result("r1", "c1", vec![Part::text("x"), image()]),
            event(
                "k1",
                Body::Compaction {
                    summary: "so far".into(),
                    replaces_through: "a2".into(),
                },
            ),
        ])
    }

    #[test]
    fn nothing_asked_nothing_dropped() {
        let mut filter = DropFilter::new(&[]).unwrap();
        assert!(filter.is_empty());
        assert_eq!(filter.apply_all(sample()), sample());
        assert!(filter.dropped().is_empty());
    }

    #[test]
    fn only_what_can_be_dropped_is_accepted() {
        for kind in Feature::ALL {
            assert_eq!(DropFilter::new(&[kind]).is_ok(), kind.droppable(), "{kind}");
            assert_eq!(Feature::from_name(kind.name()), Some(kind));
        }
        let refused = DropFilter::new(&[Feature::Text]).unwrap_err();
        assert!(refused.to_string().contains("text cannot be dropped"));
        assert_eq!(Feature::from_name("pictures"), None);
    }

    #[test]
    fn images_go_and_a_turn_left_empty_goes_whole_but_a_tool_result_stays() {
        let mut filter = DropFilter::new(&[Feature::Image]).unwrap();
        let t = filter.apply_all(sample());
        assert_eq!(ids(&t), ["u1", "a1", "a2", "a3", "r1", "k1"]);
        assert_eq!(t.events[0].body, Body::user_text("look"));
        // An image in a tool result is another kind: it stays.
        assert!(t.features().contains(&Feature::ToolResultImage));
        assert!(!t.features().contains(&Feature::Image));
        let dropped = filter.dropped();
        assert_eq!(dropped.len(), 2);
        assert_eq!(
            (dropped[0].index, dropped[0].parts, dropped[0].whole_event),
            (0, 1, false)
        );
        assert_eq!((dropped[1].index, dropped[1].event_id.as_str()), (1, "u2"));
        assert!(dropped[1].whole_event && dropped[1].what.contains("dropped whole"));

        let mut filter = DropFilter::new(&[Feature::ToolResultImage]).unwrap();
        let t = filter.apply_all(sample());
        assert_eq!(t.events[5].body, Body::tool_output("c1", "x"));
        let only_image = Transcript::new(vec![
            assistant("a", vec![call("c")]),
            result("r", "c", vec![image()]),
        ]);
        let kept = DropFilter::new(&[Feature::ToolResultImage])
            .unwrap()
            .apply_all(only_image);
        assert_eq!(
            ids(&kept),
            ["a", "r"],
            "a result answers its call, even empty"
        );
    }

    #[test]
    fn thinking_goes_and_a_compaction_through_a_dropped_turn_is_pointed_earlier() {
        let mut filter = DropFilter::new(&[Feature::Thinking]).unwrap();
        let t = filter.apply_all(sample());
        assert_eq!(ids(&t), ["u1", "u2", "a1", "a3", "r1", "k1"]);
        assert!(!t.features().contains(&Feature::Thinking));
        match &t.events[5].body {
            Body::Compaction {
                replaces_through, ..
            } => assert_eq!(replaces_through, "a1"),
            other => panic!("{other:?}"),
        }
        let kinds: Vec<_> = filter.dropped().iter().map(|d| (d.index, d.kind)).collect();
        assert_eq!(
            kinds,
            [
                (2, Feature::Thinking),
                (3, Feature::Thinking),
                (6, Feature::Compaction)
            ]
        );
        t.validate().expect("what is left is a valid transcript");
    }

    #[test]
    fn a_signature_alone_can_go() {
        let mut filter = DropFilter::new(&[Feature::ThinkingSignature]).unwrap();
        let t = filter.apply_all(sample());
        assert_eq!(t.events.len(), 7);
        assert!(t.features().contains(&Feature::Thinking));
        assert!(!t.features().contains(&Feature::ThinkingSignature));
        assert_eq!(filter.dropped().len(), 1);
    }

    #[test]
    fn a_dropped_tool_call_takes_its_result_with_it() {
        let mut filter = DropFilter::new(&[Feature::ToolCall]).unwrap();
        let t = filter.apply_all(sample());
        assert_eq!(ids(&t), ["u1", "u2", "a1", "a2", "a3", "k1"]);
        assert_eq!(
            t.events[4].body,
            Body::assistant(vec![AssistantPart::text("listing")])
        );
        let dropped = filter.dropped();
        assert_eq!(dropped.len(), 2);
        assert!(dropped[0].what.contains("their results go too"));
        assert!(dropped[1].whole_event && dropped[1].event_id == "r1");
        assert!(dropped[1].what.contains("c1"));
        t.validate().unwrap();
    }

    #[test]
    fn compactions_and_authors_go_by_name() {
        let mut source = sample();
        source.events[0].author = Some(Author {
            kind: AuthorKind::Human,
            name: "ann".into(),
        });
        let mut filter = DropFilter::new(&[Feature::Compaction, Feature::Author]).unwrap();
        let t = filter.apply_all(source);
        assert_eq!(t.events.len(), 6);
        assert!(!t.features().contains(&Feature::Compaction));
        assert!(!t.features().contains(&Feature::Author));
        let kinds: Vec<_> = filter.dropped().iter().map(|d| (d.index, d.kind)).collect();
        assert_eq!(kinds, [(0, Feature::Author), (6, Feature::Compaction)]);
        assert!(!filter.dropped()[0].whole_event);
    }

    #[test]
    fn every_droppable_kind_leaves_no_trace_of_itself() {
        let mut source = sample();
        source.events.insert(
            1,
            user(
                "u-url",
                vec![Part::ImageUrl {
                    url: "https://x/y.png".into(),
                }],
            ),
        );
        for kind in Feature::droppable_kinds() {
            let t = DropFilter::new(&[kind]).unwrap().apply_all(source.clone());
            assert!(!t.features().contains(&kind), "{kind} is still there");
            t.validate().unwrap_or_else(|e| panic!("{kind}: {e}"));
        }
    }
}
