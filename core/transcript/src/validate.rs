use std::fmt;
use std::hash::Hash;

use crate::ids::{HashSetExt, IdSet};
use crate::spill::SpillSet;

use super::{AssistantPart, Body, Event, Transcript};

/// Why a transcript is not valid, naming the event index, its id and the field.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("event {index} ({event_id}): {field}: {message}")]
pub struct ValidationError {
    /// The index of the offending event.
    pub index: usize,
    /// Its id.
    pub event_id: String,
    /// The field, as a path (`body.call_id`, `body.content[2].id`).
    pub field: String,
    /// What is wrong.
    pub message: String,
}

impl Transcript {
    /// Checks the structural rules every plugin may rely on: event ids are unique and non-empty,
    /// tool call ids are unique, every tool result answers an earlier call (once), and a
    /// compaction refers to an earlier event.
    pub fn validate(&self) -> Result<(), ValidationError> {
        let mut validator = Validator::<&str>::with_capacity(self.events.len());
        self.events.iter().try_for_each(|e| validator.push(e))
    }
}

/// The rules of [`Transcript::validate`], checked one event at a time, for a transcript that is
/// streamed rather than held: `Validator<&str>` borrows the ids of a held transcript,
/// `Validator<IdDigest>` keeps a 128-bit digest of each (16 bytes an event id and 16 a call id),
/// never the id itself, in [`SpillSet`]s: past a threshold of ids the older digests go to a
/// temporary file, so a streamed session of any length keeps a bounded table and ~1.3 bytes an
/// id resident.
pub struct Validator<K: SeenKey> {
    index: usize,
    event_ids: K::Set,
    /// The calls made, and those answered.
    calls: K::Set,
    answered: K::Set,
    seeds: IdSeeds,
}

/// A key a [`Validator`] remembers ids by, and the set that holds them.
pub trait SeenKey: Eq + Hash + Sized {
    /// The set of keys.
    type Set: SeenSet<Self>;
}

/// The set a [`Validator`] keeps its keys in.
pub trait SeenSet<K> {
    /// A set for about `n` keys.
    fn with_capacity(n: usize) -> Self;
    /// Whether `key` is in it.
    fn contains(&self, key: &K) -> bool;
    /// Adds `key`.
    fn insert(&mut self, key: K);
}

impl<K: Eq + Hash> SeenSet<K> for IdSet<K> {
    fn with_capacity(n: usize) -> Self {
        HashSetExt::with_capacity(n)
    }
    fn contains(&self, key: &K) -> bool {
        IdSet::contains(self, key)
    }
    fn insert(&mut self, key: K) {
        IdSet::insert(self, key);
    }
}

impl SeenSet<IdDigest> for SpillSet {
    /// The capacity is not reserved: the table grows to the spill threshold at most.
    fn with_capacity(_: usize) -> Self {
        SpillSet::default()
    }
    fn contains(&self, key: &IdDigest) -> bool {
        SpillSet::contains(self, key)
    }
    fn insert(&mut self, key: IdDigest) {
        SpillSet::insert(self, key, ());
    }
}

impl SeenKey for &str {
    type Set = IdSet<Self>;
}

impl SeenKey for IdDigest {
    type Set = SpillSet;
}

/// The random seeds of one validator's id digests: a file cannot choose ids whose digests
/// collide, since it cannot know them.
#[derive(Default)]
pub struct IdSeeds([foldhash::quality::RandomState; 2]);

impl IdSeeds {
    /// The digest of `id` under these seeds.
    pub fn digest(&self, id: &str) -> IdDigest {
        use std::hash::BuildHasher as _;
        IdDigest([self.0[0].hash_one(id), self.0[1].hash_one(id)])
    }

    /// The digest of an id given as two words (a UUID's 128 bits), under these seeds.
    pub fn digest_words(&self, words: [u64; 2]) -> IdDigest {
        use std::hash::BuildHasher as _;
        IdDigest([self.0[0].hash_one(words), self.0[1].hash_one(words)])
    }
}

/// A 128-bit digest of an id: two independently, randomly seeded 64-bit hashes. Two different
/// ids of one session share one with a likelihood of about n² / 2¹²⁹.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct IdDigest([u64; 2]);

impl IdDigest {
    /// Its two words (how a spilled set writes it).
    pub(crate) fn words(self) -> [u64; 2] {
        self.0
    }

    /// The digest of these two words.
    pub(crate) fn from_words(words: [u64; 2]) -> Self {
        IdDigest(words)
    }
}

/// How a [`Validator`] remembers an id it has seen.
pub trait SeenId<'e>: SeenKey {
    /// The key of `id`.
    fn of(id: &'e str, seeds: &IdSeeds) -> Self;
}

impl<'e> SeenId<'e> for &'e str {
    fn of(id: &'e str, _: &IdSeeds) -> Self {
        id
    }
}

impl SeenId<'_> for IdDigest {
    fn of(id: &str, seeds: &IdSeeds) -> Self {
        seeds.digest(id)
    }
}

impl Validator<IdDigest> {
    /// A digest validator whose sets go to files past `threshold` ids each (the default:
    /// [`crate::spill::spill_ids`]).
    pub fn spilling_past(threshold: usize) -> Self {
        Validator {
            index: 0,
            event_ids: SpillSet::with_threshold(threshold),
            calls: SpillSet::with_threshold(threshold),
            answered: SpillSet::with_threshold(threshold),
            seeds: IdSeeds::default(),
        }
    }
}

impl<K: SeenKey> Validator<K> {
    /// A validator expecting about `events` events.
    pub fn with_capacity(events: usize) -> Self {
        Validator {
            index: 0,
            event_ids: K::Set::with_capacity(events),
            calls: K::Set::with_capacity(0),
            answered: K::Set::with_capacity(0),
            seeds: IdSeeds::default(),
        }
    }

    /// How many events have been checked (the index the next one gets).
    pub fn checked(&self) -> usize {
        self.index
    }

    /// Checks the next event against the events before it.
    pub fn push<'e>(&mut self, event: &'e Event) -> Result<(), ValidationError>
    where
        K: SeenId<'e>,
    {
        let index = self.index;
        self.index += 1;
        let fail = |field: &str, message: fmt::Arguments<'_>| ValidationError {
            index,
            event_id: event.id.clone(),
            field: field.to_owned(),
            message: message.to_string(),
        };
        if event.id.is_empty() {
            return Err(fail("id", format_args!("event id is empty")));
        }
        let key = K::of(event.id.as_str(), &self.seeds);
        if self.event_ids.contains(&key) {
            return Err(fail(
                "id",
                format_args!("event id {:?} is used twice", event.id),
            ));
        }
        match &event.body {
            Body::Assistant { content, .. } => {
                for (i, part) in content.iter().enumerate() {
                    if let AssistantPart::WebSearch(search) = part {
                        let kind = search.action.get("type").and_then(|t| t.as_str());
                        if kind.is_none_or(str::is_empty) {
                            return Err(fail(
                                &format!("body.content[{i}].action.type"),
                                format_args!("a web search's action names its type"),
                            ));
                        }
                    }
                    if let AssistantPart::ToolCall(call) = part {
                        let field = || format!("body.content[{i}].id");
                        if call.id.is_empty() {
                            return Err(fail(&field(), format_args!("tool call id is empty")));
                        }
                        if call.name.is_empty() {
                            return Err(fail(
                                &format!("body.content[{i}].name"),
                                format_args!("tool name is empty"),
                            ));
                        }
                        let call_key = K::of(call.id.as_str(), &self.seeds);
                        if self.calls.contains(&call_key) {
                            return Err(fail(
                                &field(),
                                format_args!("tool call id {:?} is used twice", call.id),
                            ));
                        }
                        self.calls.insert(call_key);
                    }
                }
            }
            Body::ToolResult { call_id, .. } => {
                let call_key = K::of(call_id.as_str(), &self.seeds);
                if !self.calls.contains(&call_key) {
                    return Err(fail(
                        "body.call_id",
                        format_args!("{call_id:?} answers no earlier tool call"),
                    ));
                }
                if self.answered.contains(&call_key) {
                    return Err(fail(
                        "body.call_id",
                        format_args!("tool call {call_id:?} already has a result"),
                    ));
                }
                self.answered.insert(call_key);
            }
            Body::Compaction {
                replaces_through, ..
            } => {
                if !self
                    .event_ids
                    .contains(&K::of(replaces_through.as_str(), &self.seeds))
                {
                    return Err(fail(
                        "body.replaces_through",
                        format_args!("{replaces_through:?} is not an earlier event"),
                    ));
                }
            }
            Body::User { .. } => {}
        }
        self.event_ids.insert(key);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::{Event, Timestamp, ToolCall};

    fn ev(id: &str, body: Body) -> Event {
        Event::new(id, Timestamp::from_millis(0), body)
    }

    fn call(id: &str) -> Body {
        Body::assistant(vec![AssistantPart::ToolCall(ToolCall::new(
            id,
            "ls",
            json!({}),
        ))])
    }

    fn result(id: &str) -> Body {
        Body::tool_output(id, "ok")
    }

    #[test]
    fn accepts_a_call_and_its_result() {
        let t = Transcript::new(vec![ev("a", call("c1")), ev("b", result("c1"))]);
        t.validate().unwrap();
    }

    #[test]
    fn orphan_result_names_index_and_field() {
        let t = Transcript::new(vec![ev("a", call("c1")), ev("b", result("c2"))]);
        let err = t.validate().unwrap_err();
        assert_eq!((err.index, err.field.as_str()), (1, "body.call_id"));
        assert!(err.to_string().contains("event 1 (b)"), "{err}");
    }

    #[test]
    fn result_before_its_call_is_refused() {
        let t = Transcript::new(vec![ev("b", result("c1")), ev("a", call("c1"))]);
        assert_eq!(t.validate().unwrap_err().index, 0);
    }

    #[test]
    fn duplicate_call_ids_and_event_ids_are_refused() {
        let t = Transcript::new(vec![ev("a", call("c1")), ev("b", call("c1"))]);
        assert_eq!(t.validate().unwrap_err().field, "body.content[0].id");
        let t = Transcript::new(vec![ev("a", call("c1")), ev("a", call("c2"))]);
        assert_eq!(t.validate().unwrap_err().field, "id");
    }

    #[test]
    fn second_result_for_one_call_is_refused() {
        let t = Transcript::new(vec![
            ev("a", call("c1")),
            ev("b", result("c1")),
            ev("c", result("c1")),
        ]);
        assert_eq!(t.validate().unwrap_err().index, 2);
    }

    #[test]
    fn compaction_must_point_back() {
        let compaction = |through: &str| Body::Compaction {
            summary: "s".into(),
            replaces_through: through.into(),
        };
        let ok = Transcript::new(vec![ev("a", call("c1")), ev("b", compaction("a"))]);
        ok.validate().unwrap();
        let forward = Transcript::new(vec![ev("b", compaction("c")), ev("c", call("c1"))]);
        assert_eq!(
            forward.validate().unwrap_err().field,
            "body.replaces_through"
        );
    }

    #[test]
    fn a_web_search_names_its_action_type() {
        let search = |action: serde_json::Value| Body::Assistant {
            content: vec![
                AssistantPart::text("x"),
                AssistantPart::WebSearch(crate::WebSearch {
                    id: None,
                    status: None,
                    action,
                }),
            ],
            origin: None,
        };
        let ok = Transcript::new(vec![ev("a", search(json!({"type": "search"})))]);
        ok.validate().unwrap();
        for bad in [json!({"query": "q"}), json!("search"), json!({"type": ""})] {
            let t = Transcript::new(vec![ev("a", search(bad))]);
            assert_eq!(
                t.validate().unwrap_err().field,
                "body.content[1].action.type"
            );
        }
    }

    #[test]
    fn the_json_form_tells_a_freeform_call_from_json_arguments() {
        let freeform = ToolCall {
            id: "c1".into(),
            name: "apply_patch".into(),
            input: crate::ToolInput::Freeform("*** Begin Patch\n".into()),
        };
        let text = serde_json::to_value(AssistantPart::ToolCall(freeform.clone())).unwrap();
        assert_eq!(
            text,
            json!({"type": "tool_call", "id": "c1", "name": "apply_patch", "input": "*** Begin Patch\n"})
        );
        let back: AssistantPart = serde_json::from_value(text).unwrap();
        assert_eq!(back, AssistantPart::ToolCall(freeform));
        // A JSON string as arguments stays JSON arguments; null arguments are arguments too.
        for arguments in [json!("*** Begin Patch\n"), json!(null)] {
            let json_call = ToolCall::new("c1", "f", arguments.clone());
            let text = serde_json::to_value(AssistantPart::ToolCall(json_call.clone())).unwrap();
            assert_eq!(text["arguments"], arguments);
            let back: AssistantPart = serde_json::from_value(text).unwrap();
            assert_eq!(back, AssistantPart::ToolCall(json_call));
        }
        let both =
            json!({"type": "tool_call", "id": "c", "name": "f", "arguments": {}, "input": "x"});
        assert!(serde_json::from_value::<AssistantPart>(both).is_err());
        let neither = json!({"type": "tool_call", "id": "c", "name": "f"});
        assert!(serde_json::from_value::<AssistantPart>(neither).is_err());
    }

    #[test]
    fn the_digest_validator_judges_as_the_borrowing_one() {
        let compaction = |id: &str, through: &str| {
            ev(
                id,
                Body::Compaction {
                    summary: "s".into(),
                    replaces_through: through.into(),
                },
            )
        };
        let cases = [
            vec![ev("a", call("c1")), ev("b", result("c1"))],
            vec![ev("a", call("c1")), ev("b", result("c2"))],
            vec![ev("b", result("c1")), ev("a", call("c1"))],
            vec![ev("a", call("c1")), ev("b", call("c1"))],
            vec![ev("a", call("c1")), ev("a", call("c2"))],
            vec![
                ev("a", call("c1")),
                ev("b", result("c1")),
                ev("c", result("c1")),
            ],
            vec![ev("a", call("c1")), compaction("b", "a")],
            vec![ev("a", call("c1")), compaction("b", "z")],
        ];
        for events in cases {
            let t = Transcript::new(events);
            // In memory, every digest in a file, and a few in memory with the rest in files.
            for threshold in [usize::MAX, 0, 1] {
                let mut streamed = Validator::spilling_past(threshold);
                let by_digest = t.events.iter().try_for_each(|e| streamed.push(e));
                assert_eq!(by_digest, t.validate(), "spilling past {threshold}");
            }
        }
    }

    #[test]
    fn a_long_stream_refuses_the_same_event_with_its_ids_in_files() {
        // 3,000 calls and results, then the faults: a reused event id far back, a result to a
        // call answered long ago, a compaction through the first event, a call id reused.
        let mut events = Vec::new();
        for i in 0..3000 {
            events.push(ev(&format!("a{i}"), call(&format!("c{i}"))));
            events.push(ev(&format!("r{i}"), result(&format!("c{i}"))));
        }
        let faults = [
            ev("a5", call("fresh")),
            ev("late", result("c7")),
            ev("late", result("never")),
            ev("late", call("c2999")),
        ];
        for fault in faults {
            let mut t = Transcript::new(events.clone());
            t.events.push(ev(
                "k",
                Body::Compaction {
                    summary: "s".into(),
                    replaces_through: "a0".into(),
                },
            ));
            t.events.push(fault);
            let whole = t.validate();
            assert!(whole.is_err());
            for threshold in [usize::MAX, 0, 7, 1000] {
                let mut streamed = Validator::spilling_past(threshold);
                let by_digest = t.events.iter().try_for_each(|e| streamed.push(e));
                assert_eq!(by_digest, whole, "spilling past {threshold}");
            }
        }
    }
}
