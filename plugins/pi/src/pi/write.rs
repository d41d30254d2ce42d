//! Canonical events → pi entry lines, chained by `id`/`parentId` from the current leaf.
//!
//! - user → `message` role `user` (text and image blocks); assistant → role `assistant` (text,
//!   thinking, `toolCall` blocks in order, `api`/`provider`/`model` from the origin, zero usage,
//!   `stopReason` `toolUse` when it calls a tool, else `stop`); tool result → role `toolResult`
//!   (`toolName` from its call); compaction → a `compaction` entry whose `firstKeptEntryId` is the
//!   entry after the last replaced event (its own id when it replaces everything before it).
//! - A `model_change` goes first and wherever an assistant turn's model differs from the one pi
//!   would resume with at that point, so the path always names the model of the turns on it
//!   (turns read from a pi session bring pi's own `model_change` entries instead).
//! - A thinking signature is written only when the turn's own provider (and model, when the
//!   signature names one) made it: pi replays a signature only to the model it belongs to.
//! - What a pi session had beyond the canonical form (`opaque["pi"]`, see `convert`) is put back.
//! - Event ids that are already pi entry ids (8 hex digits) are kept; others get fresh ones.

use std::io::{self, Write};

use foldhash::{HashMap, HashMapExt};
use handoff_sdk::serde_json::{self, Map, Value};
use handoff_sdk::spill::SpillSet;
use handoff_sdk::{AssistantPart, Body, Event, IdSeeds, Origin, Part, PluginError, Timestamp};
use serde::Serialize;

use super::convert::OPAQUE_KEY;
use super::llm;
use super::records::{
    AssistantMessage, Base64, Compaction, Entry, ExtraRef, HandoffEvent, MessageEntry, ModelChange,
    OutBlock, OutContent, OutEntry, TimeOut, ToolResultMessage, UsageOut, UserMessage,
    EVENT_MEMBER,
};
use super::time;

/// Members of an entry line the writer writes itself.
const LINE_TYPED: &[&str] = &[
    "type",
    "id",
    "parentId",
    "timestamp",
    "message",
    EVENT_MEMBER,
];
/// Members of a compaction line the writer writes itself.
const COMPACTION_TYPED: &[&str] = &[
    "type",
    "id",
    "parentId",
    "timestamp",
    "summary",
    "firstKeptEntryId",
    "tokensBefore",
    EVENT_MEMBER,
];
/// Members of a message the writer writes itself.
const MESSAGE_TYPED: &[&str] = &[
    "role",
    "content",
    "timestamp",
    "api",
    "provider",
    "model",
    "usage",
    "stopReason",
    "toolCallId",
    "toolName",
    "isError",
];
/// Members of a block the writer writes itself.
const BLOCK_TYPED: &[&str] = &[
    "type",
    "text",
    "thinking",
    "thinkingSignature",
    "redacted",
    "data",
    "mimeType",
    "id",
    "name",
    "arguments",
];
/// The model and API written when a turn has no origin (the real one rides in the event member).
pub const UNKNOWN: &str = "unknown";

/// Entry ids: 8 lowercase hex digits, unique in the file (kept as the digests of their values in
/// a [`SpillSet`]: past its threshold the older ones go to a temporary file, so a session of a
/// million entries keeps ~1.3–2.5 bytes an id resident; an id of any other shape cannot collide
/// with one of these).
pub struct Ids {
    used: SpillSet,
    seeds: IdSeeds,
    state: u64,
}

impl Ids {
    /// Ids not colliding with `existing`.
    pub fn new(existing: impl IntoIterator<Item = String>) -> Self {
        let seed = uuid::Uuid::new_v4().as_u64_pair();
        let mut ids = Ids {
            used: SpillSet::default(),
            seeds: IdSeeds::default(),
            state: seed.0 ^ seed.1.rotate_left(17),
        };
        for value in existing.into_iter().filter_map(|id| entry_id_value(&id)) {
            ids.take(value);
        }
        ids
    }

    /// Takes `value`; whether it was free.
    fn take(&mut self, value: u32) -> bool {
        let digest = self.seeds.digest_words([u64::from(value), 0]);
        self.used.insert_new(digest)
    }

    /// A fresh id.
    pub fn fresh(&mut self) -> String {
        loop {
            // splitmix64
            self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^= z >> 31;
            let value = (z >> 32) as u32;
            if self.take(value) {
                return format!("{value:08x}");
            }
        }
    }

    /// `wanted` when it is a pi entry id not used yet, else a fresh one.
    pub fn claim(&mut self, wanted: Option<&str>) -> String {
        match wanted.and_then(|w| entry_id_value(w).map(|v| (w, v))) {
            Some((w, value)) if self.take(value) => w.to_owned(),
            _ => self.fresh(),
        }
    }
}

/// The value of an id of pi's entry-id shape.
fn entry_id_value(id: &str) -> Option<u32> {
    is_entry_id(id)
        .then(|| u32::from_str_radix(id, 16).ok())
        .flatten()
}

/// Whether `id` has the shape of pi's entry ids (8 lowercase hex digits).
pub fn is_entry_id(id: &str) -> bool {
    id.len() == 8 && id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Where a write continues from.
pub struct Chain {
    /// The last entry in file order (the parent of the next one).
    pub leaf: Option<String>,
    /// The model pi would resume with so far.
    pub model: Option<(String, String)>,
    /// Entry ids.
    pub ids: Ids,
}

/// Refuses, before anything is written, what pi cannot hold: tool arguments that are not an object
/// (pi's `toolCall.arguments` is one), a web search, a compaction that a later one keeps in view
/// (pi shows only the last compaction's summary), and a last compaction with events between what it
/// replaces and itself (pi shows its summary before the entries it keeps, not after).
pub fn check_representable(events: &[Event], first: usize) -> Result<(), PluginError> {
    for (index, event) in events.iter().enumerate().skip(first) {
        check_event(index, event)?;
    }
    let invalid = |index: usize, field: String, message: &str| {
        PluginError::InvalidTranscript(format!(
            "event {index} ({}): {field}: {message}",
            events[index].id
        ))
    };
    let compactions: Vec<usize> = (0..events.len())
        .filter(|&i| matches!(events[i].body, Body::Compaction { .. }))
        .collect();
    if let Some((&last, earlier)) = compactions.split_last() {
        let Body::Compaction {
            replaces_through, ..
        } = &events[last].body
        else {
            unreachable!()
        };
        let through = events[..last]
            .iter()
            .rposition(|e| &e.id == replaces_through);
        if let Some(&visible) = earlier.iter().find(|&&k| through.is_none_or(|t| k > t)) {
            return Err(invalid(
                visible,
                "body".into(),
                "a later compaction keeps this compaction in view, but pi shows only the last \
                 compaction's summary",
            ));
        }
        if through.is_some_and(|t| t + 1 < last) {
            return Err(invalid(
                last,
                "body.replaces_through".into(),
                "this compaction keeps events before it, so its summary is seen after them; pi \
                 shows a compaction's summary before the entries it keeps",
            ));
        }
    }
    Ok(())
}

/// The checks of [`check_representable`] that look at one event alone (event `index`): tool
/// arguments that are not an object, and a web search.
pub fn check_event(index: usize, event: &Event) -> Result<(), PluginError> {
    let Body::Assistant { content, .. } = &event.body else {
        return Ok(());
    };
    let invalid = |field: String, message: &str| {
        PluginError::InvalidTranscript(format!("event {index} ({}): {field}: {message}", event.id))
    };
    for (i, part) in content.iter().enumerate() {
        match part {
            AssistantPart::ToolCall(call) if call.arguments().is_some_and(|a| !a.is_object()) => {
                return Err(invalid(
                    format!("body.content[{i}].arguments"),
                    "pi keeps tool arguments as a JSON object; these are not one",
                ));
            }
            // The manifest does not carry it either; the writer below relies on this.
            AssistantPart::WebSearch(_) => {
                return Err(invalid(
                    format!("body.content[{i}]"),
                    "pi has no form of a provider's web search",
                ));
            }
            _ => {}
        }
    }
    Ok(())
}

/// What writing one event needs to know of other events.
#[derive(Clone, Copy, Default)]
pub struct Known<'k> {
    /// For a tool result: the name of the call it answers (used when its residue names none).
    pub tool_name: Option<&'k str>,
    /// For a compaction that keeps entries: the entry id of the first one it keeps (`None`: it
    /// keeps nothing, and names itself).
    pub first_kept: Option<&'k str>,
}

/// Writes `events[first..]` as entry lines (the events before `first` are already in the file,
/// with their event ids as entry ids), after a new session's first entry when `start` says so.
/// The whole-transcript write: [`super::streamed`] is the one that takes events as they come.
pub fn write_held(
    out: &mut dyn Write,
    events: &[Event],
    first: usize,
    chain: Chain,
    start: bool,
) -> io::Result<()> {
    let mut calls = HashMap::with_capacity(events.len() / 2);
    for event in events {
        for (id, name) in tool_calls(event) {
            calls.insert(id, name);
        }
    }
    let mut entry_ids = Vec::with_capacity(events.len());
    entry_ids.extend(events[..first].iter().map(|e| e.id.clone()));
    let mut writer = EntryWriter::new(out, chain);
    if start {
        if let Some(first_event) = events.first() {
            writer.start(first_event, first_model(events))?;
        }
    }
    for (index, event) in events.iter().enumerate().skip(first) {
        let known = match &event.body {
            Body::ToolResult { call_id, .. } => Known {
                tool_name: calls.get(call_id.as_str()).copied(),
                first_kept: None,
            },
            Body::Compaction {
                replaces_through, ..
            } => {
                let through = events[..index]
                    .iter()
                    .rposition(|e| &e.id == replaces_through)
                    .ok_or_else(|| io::Error::other("a compaction refers to no earlier event"))?;
                Known {
                    tool_name: None,
                    first_kept: (through + 1 < index).then(|| entry_ids[through + 1].as_str()),
                }
            }
            _ => Known::default(),
        };
        let id = writer.event(event, known)?;
        entry_ids.push(id);
    }
    writer.after(events.last().and_then(carried_after))
}

/// The entries a pi session had after `event` (when it was the session's last), carried in it.
pub fn carried_after(event: &Event) -> Option<&Value> {
    pi_member(event, "after")
}

/// The `(id, name)` of each tool call of an assistant turn.
pub fn tool_calls(event: &Event) -> impl Iterator<Item = (&str, &str)> {
    let content = match &event.body {
        Body::Assistant { content, .. } => content.as_slice(),
        _ => &[],
    };
    content.iter().filter_map(|part| match part {
        AssistantPart::ToolCall(call) => Some((call.id.as_str(), call.name.as_str())),
        _ => None,
    })
}

/// The origin of the first assistant turn that names its model: what a new session's first
/// `model_change` names (see [`EntryWriter::start`]).
pub fn first_model<'e>(events: impl IntoIterator<Item = &'e Event>) -> Option<&'e Origin> {
    events.into_iter().find_map(modelled_origin)
}

/// The origin of an assistant turn, when it names its model.
pub fn modelled_origin(event: &Event) -> Option<&Origin> {
    match &event.body {
        Body::Assistant {
            origin: Some(origin),
            ..
        } if origin.model.is_some() => Some(origin),
        _ => None,
    }
}

/// Whether `event` came from a pi session (it carries pi's own `model_change` entries, so a new
/// session starting with it needs no first one).
pub fn from_pi(event: &Event) -> bool {
    event.opaque.contains_key(OPAQUE_KEY)
}

/// Writes events as entry lines, one at a time; what an event needs of the others comes in
/// [`Known`].
pub struct EntryWriter<'a> {
    out: &'a mut dyn Write,
    chain: Chain,
}

impl<'a> EntryWriter<'a> {
    /// A writer continuing `chain`.
    pub fn new(out: &'a mut dyn Write, chain: Chain) -> Self {
        EntryWriter { out, chain }
    }

    /// A new session's first entry: the model of its first assistant turn that names one
    /// (`first_model`, as pi writes one first), unless the events come from a pi session
    /// (`first`, the first event, says it), which carries its own.
    pub fn start(&mut self, first: &Event, first_model: Option<&Origin>) -> io::Result<()> {
        if from_pi(first) {
            return Ok(());
        }
        if let Some(origin) = first_model {
            self.model_change(origin, first.timestamp)?;
        }
        Ok(())
    }

    /// What pi carried after the last event of a session ([`carried_after`] of it), written
    /// after it.
    pub fn after(&mut self, after: Option<&Value>) -> io::Result<()> {
        for raw in after.and_then(Value::as_array).into_iter().flatten() {
            self.raw(raw)?;
        }
        Ok(())
    }

    /// Writes `event`'s entries; returns the entry id it was written as.
    pub fn event(&mut self, event: &Event, known: Known<'_>) -> io::Result<String> {
        if let Some(before) = pi_member(event, "before").and_then(Value::as_array) {
            for raw in before {
                self.raw(raw)?;
            }
        }
        if let Body::Assistant {
            origin: Some(origin),
            ..
        } = &event.body
        {
            // A turn read from a pi session brings pi's own model_change entries with it.
            if !from_pi(event) {
                self.model_change(origin, event.timestamp)?;
            }
        }
        let id = self.chain.ids.claim(Some(&event.id));
        match &event.body {
            Body::User { content } => match raw_user_entry(event, content) {
                Some(raw) => self.raw_event(raw, &id, event)?,
                None => self.user(&id, event, content)?,
            },
            Body::Assistant { content, origin } => {
                self.assistant(&id, event, content, origin.as_ref())?
            }
            Body::ToolResult {
                call_id,
                content,
                is_error,
            } => self.tool_result(&id, event, call_id, content, *is_error, known.tool_name)?,
            Body::Compaction { summary, .. } => {
                let first_kept = known.first_kept.unwrap_or(&id).to_owned();
                self.compaction(&id, event, summary, &first_kept)?
            }
        }
        self.chain.leaf = Some(id.clone());
        Ok(id)
    }

    /// Writes one entry line.
    fn line<B: Serialize>(
        &mut self,
        kind: &str,
        id: &str,
        timestamp: &str,
        body: B,
        handoff: Option<&HandoffEvent>,
        extra: ExtraRef<'_>,
    ) -> io::Result<()> {
        let entry = OutEntry {
            kind,
            id,
            parent_id: self.chain.leaf.as_deref(),
            timestamp,
            body,
            handoff: handoff.filter(|h| !h.is_empty()),
            extra,
        };
        serde_json::to_writer(&mut *self.out, &entry).map_err(io::Error::other)?;
        self.out.write_all(b"\n")
    }

    /// Writes one `message` entry holding `message`, at the event's entry time.
    fn message_line<M: Serialize>(
        &mut self,
        id: &str,
        event: &Event,
        residue: &Residue<'_>,
        message: M,
        handoff: &HandoffEvent,
    ) -> io::Result<()> {
        self.line(
            "message",
            id,
            residue.entry_time(event.timestamp).as_str(),
            MessageEntry { message },
            Some(handoff),
            residue.line_extra(LINE_TYPED),
        )
    }

    fn model_change(&mut self, origin: &Origin, at: Timestamp) -> io::Result<()> {
        let Some(model) = origin.model.as_deref() else {
            return Ok(());
        };
        if self
            .chain
            .model
            .as_ref()
            .is_some_and(|(p, m)| p == &origin.provider && m == model)
        {
            return Ok(());
        }
        let id = self.chain.ids.fresh();
        let body = ModelChange {
            provider: &origin.provider,
            model_id: model,
        };
        self.line(
            "model_change",
            &id,
            time::iso_text(at).as_str(),
            body,
            None,
            ExtraRef::default(),
        )?;
        self.chain.model = Some((origin.provider.clone(), model.to_owned()));
        self.chain.leaf = Some(id);
        Ok(())
    }

    /// An entry carried whole from a pi session, chained here.
    fn raw(&mut self, raw: &Value) -> io::Result<()> {
        let Some(map) = raw.as_object() else {
            return Ok(());
        };
        let id = self.chain.ids.claim(map.get("id").and_then(Value::as_str));
        let mut out = Map::with_capacity(map.len() + 2);
        out.insert(
            "type".into(),
            map.get("type").cloned().unwrap_or(Value::Null),
        );
        out.insert("id".into(), Value::String(id.clone()));
        out.insert(
            "parentId".into(),
            self.chain.leaf.clone().map_or(Value::Null, Value::String),
        );
        for (k, v) in map {
            if !matches!(k.as_str(), "type" | "id" | "parentId") {
                out.insert(k.clone(), v.clone());
            }
        }
        self.track_model(&out);
        serde_json::to_writer(&mut *self.out, &out).map_err(io::Error::other)?;
        self.out.write_all(b"\n")?;
        self.chain.leaf = Some(id);
        Ok(())
    }

    /// Follows pi's model through carried entries.
    fn track_model(&mut self, entry: &Map<String, Value>) {
        let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_owned);
        match entry.get("type").and_then(Value::as_str) {
            Some("model_change") => {
                if let (Some(p), Some(m)) =
                    (text(entry.get("provider")), text(entry.get("modelId")))
                {
                    self.chain.model = Some((p, m));
                }
            }
            Some("message") => {
                let Some(message) = entry.get("message") else {
                    return;
                };
                if message.get("role").and_then(Value::as_str) == Some("assistant") {
                    if let (Some(p), Some(m)) =
                        (text(message.get("provider")), text(message.get("model")))
                    {
                        self.chain.model = Some((p, m));
                    }
                }
            }
            _ => {}
        }
    }

    /// An event that came from an entry pi sends as user text: that entry, chained here.
    fn raw_event(&mut self, raw: &Map<String, Value>, id: &str, event: &Event) -> io::Result<()> {
        let mut out = Map::with_capacity(raw.len() + 3);
        out.insert(
            "type".into(),
            raw.get("type").cloned().unwrap_or(Value::Null),
        );
        out.insert("id".into(), Value::String(id.to_owned()));
        out.insert(
            "parentId".into(),
            self.chain.leaf.clone().map_or(Value::Null, Value::String),
        );
        for (k, v) in raw {
            if !matches!(k.as_str(), "type" | "id" | "parentId") && k != EVENT_MEMBER {
                out.insert(k.clone(), v.clone());
            }
        }
        if let Some(author) = &event.author {
            let handoff = HandoffEvent {
                author: Some(author.clone()),
                ..HandoffEvent::default()
            };
            out.insert(EVENT_MEMBER.into(), serde_json::to_value(handoff)?);
        }
        serde_json::to_writer(&mut *self.out, &out).map_err(io::Error::other)?;
        self.out.write_all(b"\n")
    }

    fn user(&mut self, id: &str, event: &Event, content: &[Part]) -> io::Result<()> {
        let residue = Residue::of(event);
        let message = UserMessage {
            role: "user",
            content: out_content(content, &residue),
            timestamp: residue.time(event.timestamp),
            extra: residue.message_extra(),
        };
        self.message_line(id, event, &residue, message, &HandoffEvent::authored(event))
    }

    fn assistant(
        &mut self,
        id: &str,
        event: &Event,
        content: &[AssistantPart],
        origin: Option<&Origin>,
    ) -> io::Result<()> {
        let residue = Residue::of(event);
        let mut handoff = HandoffEvent::authored(event);
        let complete = origin.filter(|o| o.model.is_some() && o.api.is_some());
        if complete.is_none() {
            handoff.origin = Some(origin.map(serde_json::to_value).transpose()?);
        }
        let mut blocks = Vec::with_capacity(content.len());
        for (i, part) in content.iter().enumerate() {
            let extra = residue.block_extra(i);
            blocks.push(match part {
                AssistantPart::Text { text } => OutBlock::Text { text, extra },
                AssistantPart::Thinking(thinking) => {
                    let kept = thinking.signature.as_ref().filter(|s| {
                        origin.is_some_and(|o| {
                            s.provider == o.provider && (s.model.is_none() || s.model == o.model)
                        })
                    });
                    if let Some(s) = kept {
                        if s.model != origin.and_then(|o| o.model.clone()) {
                            handoff.signature_models.push((i, s.model.clone()));
                        }
                    } else if let Some(s) = &thinking.signature {
                        handoff.unreplayed_signatures.push((i, s.clone()));
                    }
                    OutBlock::Thinking {
                        thinking: &thinking.text,
                        thinking_signature: kept.map(|s| s.value.as_str()),
                        redacted: kept.is_some_and(|s| s.redacted),
                        extra,
                    }
                }
                AssistantPart::ToolCall(call) => {
                    if call.arguments().is_none() {
                        handoff.freeform_calls.push(i);
                    }
                    OutBlock::ToolCall {
                        id: &call.id,
                        name: &call.name,
                        arguments: call.structured_arguments(),
                        extra,
                    }
                }
                AssistantPart::WebSearch(_) => {
                    unreachable!("check_representable refuses web searches before any write")
                }
            });
        }
        let calls = content
            .iter()
            .any(|p| matches!(p, AssistantPart::ToolCall(_)));
        let provider = origin.map_or(UNKNOWN, |o| o.provider.as_str());
        let model = origin.and_then(|o| o.model.as_deref()).unwrap_or(UNKNOWN);
        let message = AssistantMessage {
            role: "assistant",
            content: blocks,
            api: origin.and_then(|o| o.api.as_deref()).unwrap_or(UNKNOWN),
            provider,
            model,
            usage: residue
                .message_member("usage")
                .map_or(UsageOut::Zero, UsageOut::Carried),
            stop_reason: residue
                .message_member("stopReason")
                .and_then(Value::as_str)
                .unwrap_or(if calls { "toolUse" } else { "stop" }),
            timestamp: residue.time(event.timestamp),
            extra: residue.message_extra(),
        };
        self.message_line(id, event, &residue, message, &handoff)?;
        self.chain.model = Some((provider.to_owned(), model.to_owned()));
        Ok(())
    }

    fn tool_result(
        &mut self,
        id: &str,
        event: &Event,
        call_id: &str,
        content: &[Part],
        is_error: bool,
        call_name: Option<&str>,
    ) -> io::Result<()> {
        let residue = Residue::of(event);
        let tool_name = residue
            .message_member("toolName")
            .and_then(Value::as_str)
            .or(call_name)
            .unwrap_or_default();
        let message = ToolResultMessage {
            role: "toolResult",
            tool_call_id: call_id,
            tool_name,
            content: out_content(content, &residue),
            is_error,
            timestamp: residue.time(event.timestamp),
            extra: residue.message_extra(),
        };
        self.message_line(id, event, &residue, message, &HandoffEvent::authored(event))
    }

    fn compaction(
        &mut self,
        id: &str,
        event: &Event,
        summary: &str,
        first_kept: &str,
    ) -> io::Result<()> {
        let residue = Residue::of(event);
        let body = Compaction {
            summary,
            first_kept_entry_id: first_kept,
            tokens_before: residue.line_member("tokensBefore").is_none().then_some(0),
        };
        let handoff = HandoffEvent {
            author: event.author.clone(),
            ..HandoffEvent::default()
        };
        self.line(
            "compaction",
            id,
            residue.entry_time(event.timestamp).as_str(),
            body,
            Some(&handoff),
            residue.line_extra(COMPACTION_TYPED),
        )
    }
}

/// A member of an event's `opaque["pi"]`.
fn pi_member<'e>(event: &'e Event, key: &str) -> Option<&'e Value> {
    event.opaque.get(OPAQUE_KEY)?.get(key)
}

/// The whole entry an event came from, when it still says exactly what the event says.
fn raw_user_entry<'e>(event: &'e Event, content: &[Part]) -> Option<&'e Map<String, Value>> {
    let raw = pi_member(event, "entry")?.as_object()?;
    let entry: Entry = serde_json::from_value(Value::Object(raw.clone())).ok()?;
    let (timestamp, parts) = llm::as_user(&entry).ok()?;
    (timestamp == event.timestamp && parts == content).then_some(raw)
}

fn out_content<'e>(content: &'e [Part], residue: &Residue<'e>) -> OutContent<'e> {
    if residue.flag("string") {
        if let [Part::Text { text }] = content {
            return OutContent::Text(text);
        }
    }
    OutContent::Blocks(
        content
            .iter()
            .enumerate()
            .map(|(i, part)| {
                let extra = residue.block_extra(i);
                match part {
                    Part::Text { text } => OutBlock::Text { text, extra },
                    Part::Image { media_type, data } => OutBlock::Image {
                        data: Base64(data),
                        mime_type: media_type,
                        extra,
                    },
                    // Refused by the manifest (pi has no image URLs); never reached.
                    Part::ImageUrl { url } => OutBlock::Text { text: url, extra },
                }
            })
            .collect(),
    )
}

/// An event's `opaque["pi"]`, read for the writer.
struct Residue<'e> {
    map: Option<&'e Map<String, Value>>,
}

impl<'e> Residue<'e> {
    fn of(event: &'e Event) -> Self {
        Residue {
            map: event.opaque.get(OPAQUE_KEY).and_then(Value::as_object),
        }
    }

    fn member(&self, key: &str) -> Option<&'e Map<String, Value>> {
        self.map?.get(key)?.as_object()
    }

    fn flag(&self, key: &str) -> bool {
        self.map
            .and_then(|m| m.get(key))
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }

    fn message_member(&self, key: &str) -> Option<&'e Value> {
        self.member("message")?.get(key)
    }

    fn line_member(&self, key: &str) -> Option<&'e Value> {
        self.member("line")?.get(key)
    }

    fn message_extra(&self) -> ExtraRef<'e> {
        ExtraRef::new(self.member("message"), MESSAGE_TYPED)
    }

    fn line_extra(&self, typed: &'static [&'static str]) -> ExtraRef<'e> {
        ExtraRef::new(self.member("line"), typed)
    }

    fn block_extra(&self, index: usize) -> ExtraRef<'e> {
        let found = self
            .map
            .and_then(|m| m.get("blocks"))
            .and_then(Value::as_array)
            .and_then(|blocks| {
                blocks.iter().find_map(|b| {
                    let pair = b.as_array()?;
                    (pair.first()?.as_u64()? == index as u64).then(|| pair.get(1)?.as_object())?
                })
            });
        ExtraRef::new(found, BLOCK_TYPED)
    }

    /// The message's time: Unix ms, or the value a pi session had instead.
    fn time(&self, at: Timestamp) -> TimeOut<'e> {
        self.message_member("timestamp")
            .map_or(TimeOut::Millis(at.millis()), TimeOut::Carried)
    }

    /// The entry line's time: as a pi session spelled it, else as pi writes `at`.
    fn entry_time(&self, at: Timestamp) -> time::IsoText<'e> {
        match self.line_member("timestamp").and_then(Value::as_str) {
            Some(text) => time::IsoText::Borrowed(text),
            None => time::iso_text(at),
        }
    }
}

#[cfg(test)]
mod ids_tests {
    use super::{is_entry_id, Ids};

    /// Past the id set's threshold (7,168 by default: most of these are in its temporary file),
    /// no id in use is given again, fresh or wanted, and a wanted id not in use is kept.
    #[test]
    fn an_id_in_use_is_never_given_again() {
        let existing: Vec<String> = (0..20_000u32).map(|v| format!("{:08x}", v * 7)).collect();
        let mut ids = Ids::new(existing.clone());
        let mut seen: std::collections::HashSet<String> = existing.iter().cloned().collect();
        for wanted in existing.iter().step_by(97) {
            let got = ids.claim(Some(wanted));
            assert!(is_entry_id(&got), "{got}");
            assert!(seen.insert(got), "{wanted} was given again");
        }
        for _ in 0..20_000 {
            let fresh = ids.fresh();
            assert!(seen.insert(fresh.clone()), "{fresh} was given twice");
        }
        let free = (0..)
            .map(|v: u32| format!("{:08x}", u32::MAX - v))
            .find(|id| !seen.contains(id))
            .unwrap();
        assert_eq!(ids.claim(Some(&free)), free);
        assert_ne!(ids.claim(Some(&free)), free, "taken now");
    }
}
