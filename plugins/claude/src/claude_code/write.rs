//! Canonical events → Claude Code records, as Claude Code 2.1.197 writes them.
//!
//! - a user turn is one `user` record (a lone text part as a plain string, like a typed prompt);
//! - an assistant turn is one `assistant` record per content block, all sharing `message.id`,
//!   chained by `parentUuid` (the CLI streams them so);
//! - a tool result is a `user` record of one `tool_result` block; while only results of the last
//!   assistant turn follow it, its parent is the record of its own `tool_use` (the CLI's layout for
//!   parallel calls), otherwise the previous record;
//! - a compaction is a `system` `compact_boundary` record (parent `null`, `logicalParentUuid` the
//!   record of the event it replaces through), then the events it keeps (those between that
//!   event and the compaction), then an `isCompactSummary` user record holding the summary:
//!   Claude Code 2.1.197 sends that as the kept messages, then the summary (docs/formats/claude.md).

use std::io::{self, Write};

use handoff_sdk::dialect::anthropic::{assistant_blocks, user_blocks, WireBlock};
use handoff_sdk::marker::OwnershipMarker;
use handoff_sdk::serde_json::{self, json};
use handoff_sdk::{AssistantPart, Body, Event, IdMap, IdSet, Origin, Part, PluginError, Timestamp};

use super::records::{user_message, ContentOut, MessageOut, RecordOut, SessionMembers, UsageOut};
use crate::extras::{default_origin, is_meta, Extras};

/// The only provider whose thinking goes back to Claude.
const THINKING_FROM: &[&str] = &["anthropic"];

/// Where the chain stands: what the next record hangs on.
#[derive(Clone, Debug, Default)]
pub(crate) struct ChainState {
    /// The uuid of the last record on the chain.
    pub prev: Option<String>,
    /// Canonical call id → uuid of the record holding its `tool_use`, until its result is
    /// written (so it holds the calls still unanswered, not every call of the session).
    pub call_records: IdMap<String, String>,
    /// The calls of the last assistant turn, while nothing but their results followed it.
    pub open_calls: IdSet<String>,
    /// When the last result since the last assistant turn happened (see `Records::result`).
    pub last_result_at: Option<Timestamp>,
}

/// Whether thinking made by `maker` goes back to Claude.
fn portable(maker: Option<&str>) -> bool {
    maker.is_some_and(|m| THINKING_FROM.contains(&m))
}

fn thinking_maker<'a>(t: &'a handoff_sdk::Thinking, origin: Option<&'a Origin>) -> Option<&'a str> {
    t.signature
        .as_ref()
        .map(|s| s.provider.as_str())
        .or(origin.map(|o| o.provider.as_str()))
}

/// Whether an assistant turn is written at all: not when everything in it is display-only
/// thinking (the comparison sets such a turn aside too).
pub(crate) fn is_written(event: &Event) -> bool {
    match &event.body {
        Body::Assistant { content, origin } => {
            content.is_empty()
                || content.iter().any(|p| match p {
                    AssistantPart::Thinking(t) => portable(thinking_maker(t, origin.as_ref())),
                    _ => true,
                })
        }
        _ => true,
    }
}

/// Whether an assistant turn's blocks (true = a tool call) end in its calls, with nothing else
/// after the first one. Only then do results hang on their own call records, as Claude Code writes
/// them: a block after a call would otherwise be off the chain Claude Code walks on resume, and it
/// would send the turn's blocks out of order (measured: text, call, text came back as text, text,
/// call). Otherwise results follow the turn's last record, one after another.
pub(crate) fn calls_are_the_tail(is_call: impl Iterator<Item = bool>) -> bool {
    let mut seen_call = false;
    for call in is_call {
        if seen_call && !call {
            return false;
        }
        seen_call |= call;
    }
    true
}

fn invalid(index: usize, event: &Event, field: &str, message: &str) -> PluginError {
    PluginError::InvalidTranscript(format!("event {index} ({}): {field}: {message}", event.id))
}

/// Checks that every event can be written, before anything touches the disk. `events` is the whole
/// transcript (for an append: what the file holds followed by the new events); `from` is the index
/// of the first event to be written.
pub(crate) fn precheck(events: &[Event], from: usize) -> Result<(), PluginError> {
    let mut last_written: Option<usize> = events[..from].iter().rposition(is_written);
    for (index, event) in events.iter().enumerate().skip(from) {
        match &event.body {
            Body::Assistant { .. } => {
                checked_blocks(index, event)?;
            }
            Body::Compaction {
                replaces_through, ..
            } => {
                let Some(last) = last_written else {
                    return Err(replaces_nothing(index, event));
                };
                let Some(through) = events[..index]
                    .iter()
                    .position(|e| &e.id == replaces_through)
                else {
                    return Err(invalid(
                        index,
                        event,
                        "body.replaces_through",
                        "names no earlier event",
                    ));
                };
                if through < last {
                    check_kept(events, from, index, through)?;
                }
            }
            Body::User { .. } | Body::ToolResult { .. } => {}
        }
        if is_written(event) {
            last_written = Some(index);
        }
    }
    Ok(())
}

/// The refusal of a compaction with nothing written before it.
pub(crate) fn replaces_nothing(index: usize, event: &Event) -> PluginError {
    invalid(
        index,
        event,
        "body.replaces_through",
        "Claude Code cannot write a compaction that replaces nothing",
    )
}

/// The wire blocks of the assistant turn `event` (the `index`th), or why it cannot be written:
/// Anthropic thinking without its signature, or a part the dialect refuses. Empty for any other
/// event.
pub(crate) fn checked_blocks(
    index: usize,
    event: &Event,
) -> Result<Vec<WireBlock<'_>>, PluginError> {
    let Body::Assistant { content, origin } = &event.body else {
        return Ok(Vec::new());
    };
    for (i, part) in content.iter().enumerate() {
        if let AssistantPart::Thinking(t) = part {
            let maker = thinking_maker(t, origin.as_ref());
            if portable(maker) && t.signature.is_none() {
                return Err(invalid(index, event, &format!("body.content[{i}]"),
                    "Anthropic thinking without its signature cannot go back to Claude (the API requires it)"));
            }
        }
    }
    assistant_blocks(content, thinking_from(), None)
        .map_err(|(field, message)| invalid(index, event, &field, &message))
}

/// [`THINKING_FROM`] as the dialect takes it, made once (it is asked for every assistant turn).
fn thinking_from() -> &'static [String] {
    static OWNED: std::sync::LazyLock<Vec<String>> =
        std::sync::LazyLock::new(|| THINKING_FROM.iter().map(|s| s.to_string()).collect());
    &OWNED
}

/// Checks the events a compaction at `index` keeps (those after `through`, the event it replaces
/// through): they are written between its boundary and its summary, so they must be new in this
/// write, hold no other compaction, and answer no call the compaction replaces (Claude Code
/// would send such a result without its call).
fn check_kept(
    events: &[Event],
    from: usize,
    index: usize,
    through: usize,
) -> Result<(), PluginError> {
    let compaction = &events[index];
    let kept = (through + 1..index).filter(|&k| is_written(&events[k]));
    let mut kept_calls = IdSet::default();
    for k in kept {
        let event = &events[k];
        if k < from {
            return Err(invalid(index, compaction, "body.replaces_through",
                &format!("keeps event {k} ({}), which the file already holds: Claude Code needs the compaction's boundary before the events it keeps", event.id)));
        }
        match &event.body {
            Body::Compaction { .. } => {
                return Err(invalid(index, compaction, "body.replaces_through",
                    &format!("keeps event {k} ({}), another compaction: Claude Code cannot keep a compaction in view", event.id)));
            }
            Body::Assistant { content, .. } => {
                kept_calls.extend(content.iter().filter_map(|p| match p {
                    AssistantPart::ToolCall(c) => Some(c.id.clone()),
                    _ => None,
                }));
            }
            Body::ToolResult { call_id, .. } if !kept_calls.contains(call_id) => {
                return Err(invalid(index, compaction, "body.replaces_through",
                    &format!("keeps event {k} ({}), the result of call {call_id}, which it replaces: Claude Code would send the result without its call", event.id)));
            }
            Body::User { .. } | Body::ToolResult { .. } => {}
        }
    }
    Ok(())
}

/// Where each compaction's boundary goes: `at[k]` is the compaction whose boundary is written
/// right before `events[k]` (at or before the compaction itself), i.e. after the event it replaces
/// through, so the events it keeps follow the boundary. A compaction whose `replaces_through` is
/// not in `events` (an append continuing a file) has its boundary first. [`precheck`] has made
/// sure two compactions' kept events do not overlap.
fn boundary_places(events: &[Event]) -> Vec<Option<usize>> {
    let mut at = vec![None; events.len()];
    for (index, event) in events.iter().enumerate() {
        if let Body::Compaction {
            replaces_through, ..
        } = &event.body
        {
            let place = events[..index]
                .iter()
                .position(|e| &e.id == replaces_through)
                .map_or(0, |t| t + 1);
            at[place] = Some(index);
        }
    }
    at
}

/// Record uuids and message ids: version-4 UUIDs whose random bits are drawn once per write, with
/// a counter folded into 56 of them, so ids stay unique within the write (and, by the random
/// rest, across sessions) and a long session costs no random-number syscall per record (one
/// each was 84 % of a Codex → Claude Code continue's system calls).
struct RecordIds {
    random: [u8; 16],
    count: u64,
}

impl RecordIds {
    fn new() -> Self {
        RecordIds {
            random: *uuid::Uuid::new_v4().as_bytes(),
            count: 0,
        }
    }

    fn next_uuid(&mut self) -> uuid::Uuid {
        let mut bits = self.random;
        // Bytes 9..16 are kept whole by the v4 layout (bytes 6 and 8 lose version/variant bits).
        for (b, c) in bits[9..].iter_mut().zip(&self.count.to_be_bytes()[1..]) {
            *b ^= c;
        }
        self.count += 1;
        uuid::Builder::from_random_bytes(bits).into_uuid()
    }

    /// A record uuid, hyphenated.
    fn record(&mut self) -> String {
        self.next_uuid().to_string()
    }

    /// A `message.id`: `msg_` and 32 hex digits.
    fn message(&mut self) -> String {
        format!("msg_{}", self.next_uuid().simple())
    }
}

/// How many bytes of records are gathered before they go out in one write.
const FLUSH_AT: usize = 1 << 20;

fn extras_of(e: &Extras) -> Option<&Extras> {
    (!e.is_empty()).then_some(e)
}

/// Writes `events` as records continuing `state`. The first record written carries `marker`.
/// Call [`precheck`] first: this only fails on I/O.
pub(crate) fn write_events(
    out: &mut dyn Write,
    session: &SessionMembers<'_>,
    state: &mut ChainState,
    events: &[Event],
    marker: Option<&OwnershipMarker>,
) -> io::Result<()> {
    let mut writer = RecordWriter::new(out, session, state, marker);
    let boundaries = boundary_places(events);
    for (index, event) in events.iter().enumerate() {
        if let Some(c) = boundaries[index] {
            writer.boundary(&events[c])?;
        }
        if !is_written(event) {
            continue;
        }
        let blocks = match &event.body {
            Body::Assistant { content, .. } => assistant_blocks(content, thinking_from(), None)
                .map_err(|(field, message)| {
                    io::Error::other(format!("event {}: {field}: {message}", event.id))
                })?,
            _ => Vec::new(),
        };
        writer.event(event, blocks)?;
    }
    writer.finish()
}

/// The `message.model` Claude Code writes on assistant messages no model made (its
/// "No response requested.", API errors): 2.1.197's bundle names it `<synthetic>`.
pub(crate) const SYNTHETIC_MODEL: &str = "<synthetic>";

/// Writes records one event at a time: what [`write_events`] does for a held slice, and what a
/// streamed create does as events arrive (it places boundaries itself, see `streamed`).
pub(crate) struct RecordWriter<'w, 's> {
    records: Records<'w, 's>,
}

impl<'w, 's> RecordWriter<'w, 's> {
    /// A writer continuing `state`; the first record it writes carries `marker`.
    pub(crate) fn new(
        out: &'w mut dyn Write,
        session: &'w SessionMembers<'s>,
        state: &'w mut ChainState,
        marker: Option<&'w OwnershipMarker>,
    ) -> Self {
        RecordWriter {
            records: Records {
                sink: Sink {
                    out,
                    buf: Vec::with_capacity(FLUSH_AT + (1 << 16)),
                },
                ids: RecordIds::new(),
                session,
                state,
                marker,
                open_message: None,
            },
        }
    }

    /// The boundary record of `compaction`, written where its kept events (if any) follow it.
    pub(crate) fn boundary(&mut self, compaction: &Event) -> io::Result<()> {
        self.records.open_message = None;
        self.records.boundary(&compaction.timestamp.to_rfc3339())
    }

    /// The records of `event`, which [`is_written`]; `blocks` are its wire blocks if it is an
    /// assistant turn (from [`checked_blocks`]), else empty.
    pub(crate) fn event(&mut self, event: &Event, blocks: Vec<WireBlock<'_>>) -> io::Result<()> {
        let records = &mut self.records;
        let timestamp = event.timestamp.to_rfc3339();
        let author_extras = Extras {
            author: event.author.clone(),
            ..Extras::default()
        };
        let meta = is_meta(event);
        if !matches!(event.body, Body::Assistant { .. }) {
            records.open_message = None;
        }
        match &event.body {
            Body::User { content } => records.user(content, &timestamp, &author_extras, meta),
            Body::Assistant { content, origin } => {
                records.assistant(event, content, origin.as_ref(), &timestamp, blocks)
            }
            Body::ToolResult {
                call_id,
                content,
                is_error,
            } => records.result(
                call_id,
                content,
                *is_error,
                (&timestamp, event.timestamp),
                &author_extras,
                meta,
            ),
            Body::Compaction { summary, .. } => {
                records.summary(summary, &timestamp, &author_extras)
            }
        }
    }

    /// Writes out what is gathered.
    pub(crate) fn finish(self) -> io::Result<()> {
        self.records.sink.finish()
    }
}

/// The records of one write: where they go, the chain they continue, and the marker the first
/// one carries.
struct Records<'w, 's> {
    sink: Sink<'w>,
    ids: RecordIds,
    session: &'w SessionMembers<'s>,
    state: &'w mut ChainState,
    marker: Option<&'w OwnershipMarker>,
    /// The `message.id` of the assistant event written last, while nothing else followed it: an
    /// assistant event right after it goes on the same message.
    open_message: Option<String>,
}

/// Where records go: serialised into `buf` (serde_json's many small writes stay monomorphic and
/// cheap), which goes to `out` in writes of about [`FLUSH_AT`] bytes.
struct Sink<'w> {
    out: &'w mut dyn Write,
    buf: Vec<u8>,
}

impl Sink<'_> {
    fn emit(&mut self, record: &RecordOut<'_>) -> io::Result<()> {
        serde_json::to_writer(&mut self.buf, record).map_err(io::Error::other)?;
        self.buf.push(b'\n');
        if self.buf.len() >= FLUSH_AT {
            self.out.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }

    fn finish(self) -> io::Result<()> {
        self.out.write_all(&self.buf)
    }
}

impl Records<'_, '_> {
    /// A user turn: one `user` record (`isMeta` when it was read from one: see
    /// [`crate::extras::is_meta`]).
    fn user(
        &mut self,
        content: &[Part],
        timestamp: &str,
        extras: &Extras,
        meta: bool,
    ) -> io::Result<()> {
        let uuid = self.ids.record();
        let mut r = RecordOut::new(self.session, "user", &uuid, timestamp);
        r.parent_uuid = self.state.prev.as_deref();
        r.message = Some(user_message(match content {
            [Part::Text { text }] => ContentOut::Text(text),
            parts => ContentOut::Blocks(user_blocks(parts)),
        }));
        r.is_meta = meta;
        r.marker = self.marker.take();
        r.extras = extras_of(extras);
        self.sink.emit(&r)?;
        self.state.prev = Some(uuid);
        self.state.open_calls.clear();
        Ok(())
    }

    /// An assistant turn: one `assistant` record per block, sharing one message id.
    fn assistant(
        &mut self,
        event: &Event,
        content: &[AssistantPart],
        origin: Option<&Origin>,
        timestamp: &str,
        blocks: Vec<WireBlock<'_>>,
    ) -> io::Result<()> {
        // Claude Code needs a model on every assistant message: on resume it reads the last
        // one's to restore the session's model, and without one 2.1.197 hangs before sending
        // anything. A turn of no known model gets the name Claude Code gives its own messages
        // that no model wrote (which that restore skips); the origin rides in the extras.
        let model = origin
            .and_then(|o| o.model.as_deref())
            .unwrap_or(SYNTHETIC_MODEL);
        let mut first = Extras {
            author: event.author.clone(),
            ..Extras::default()
        };
        if origin != Some(&default_origin(Some(model))) {
            first.origin = Some(origin.cloned());
        }
        // A run of assistant events is one message, as Claude Code writes a turn of several
        // records; the first record of each event after the first says where it starts.
        let message_id = match self.open_message.take() {
            Some(id) => {
                first.joined = true;
                id
            }
            None => self.ids.message(),
        };
        let stop_reason = if blocks
            .iter()
            .any(|b| matches!(b, WireBlock::ToolUse { .. }))
        {
            "tool_use"
        } else {
            "end_turn"
        };
        // The thinking parts that are written, in order, for their signature models.
        let mut signed = content.iter().filter_map(|p| match p {
            AssistantPart::Thinking(t) if portable(thinking_maker(t, origin)) => {
                t.signature.as_ref()
            }
            _ => None,
        });
        let mut calls = content.iter().filter_map(|p| match p {
            AssistantPart::ToolCall(c) => Some(c),
            _ => None,
        });
        let results_on_calls = calls_are_the_tail(
            blocks
                .iter()
                .map(|b| matches!(b, WireBlock::ToolUse { .. })),
        );
        // An empty turn is still one record (with empty content), so it reads back.
        let records: Vec<Option<WireBlock<'_>>> = if blocks.is_empty() {
            vec![None]
        } else {
            blocks.into_iter().map(Some).collect()
        };
        self.state.open_calls.clear();
        self.state.last_result_at = None;
        for (n, block) in records.into_iter().enumerate() {
            let uuid = self.ids.record();
            let mut extras = if n == 0 {
                first.clone()
            } else {
                Extras::default()
            };
            match &block {
                Some(WireBlock::Thinking { .. } | WireBlock::RedactedThinking(_)) => {
                    if let Some(sig) = signed.next() {
                        if sig.model.as_deref() != Some(model) {
                            extras.signature_model = Some(sig.model.clone());
                        }
                    }
                }
                Some(WireBlock::ToolUse { .. }) => {
                    if let Some(call) = calls.next() {
                        self.state.open_calls.insert(call.id.clone());
                        self.state
                            .call_records
                            .insert(call.id.clone(), uuid.clone());
                        extras.freeform = call.arguments().is_none();
                    }
                }
                _ => {}
            }
            let mut r = RecordOut::new(self.session, "assistant", &uuid, timestamp);
            r.parent_uuid = self.state.prev.as_deref();
            r.message = Some(MessageOut {
                id: Some(&message_id),
                kind: Some("message"),
                role: "assistant",
                model: Some(model),
                content: ContentOut::Blocks(block.into_iter().collect()),
                stop_reason: Some(stop_reason),
                usage: Some(UsageOut {
                    input_tokens: 0,
                    output_tokens: 0,
                }),
            });
            r.marker = self.marker.take();
            r.extras = extras_of(&extras);
            self.sink.emit(&r)?;
            self.state.prev = Some(uuid);
        }
        if !results_on_calls {
            self.state.open_calls.clear();
        }
        // A turn that calls a tool is not joined: Claude Code sends a message's tool calls after
        // all its texts, so a text of the next event would come before them.
        self.open_message = (stop_reason == "end_turn").then_some(message_id);
        Ok(())
    }

    /// A tool result: one `user` record of one `tool_result` block.
    fn result(
        &mut self,
        call_id: &str,
        content: &[Part],
        is_error: bool,
        (timestamp, at): (&str, Timestamp),
        extras: &Extras,
        meta: bool,
    ) -> io::Result<()> {
        let uuid = self.ids.record();
        // A call has one result: once it is written, the call's record is not needed again.
        let call_record = self.state.call_records.remove(call_id);
        // Claude Code 2.1.197 sends the results off its chain (all but the last, on their calls)
        // by timestamp, before the ones on it: a result earlier than the one before it, and every
        // result after it, are chained instead, so they are sent in the order written.
        let in_order = self.state.last_result_at.is_none_or(|last| at >= last);
        if !in_order {
            self.state.open_calls.clear();
        }
        self.state.last_result_at = Some(at);
        let parent = if self.state.open_calls.contains(call_id) {
            call_record.clone()
        } else {
            self.state.prev.clone()
        };
        let mut r = RecordOut::new(self.session, "user", &uuid, timestamp);
        r.parent_uuid = parent.as_deref();
        r.message = Some(user_message(ContentOut::Blocks(vec![
            WireBlock::tool_result(call_id, content, is_error, true),
        ])));
        r.source_tool_assistant_uuid = call_record.as_deref();
        r.is_meta = meta;
        r.marker = self.marker.take();
        r.extras = extras_of(extras);
        self.sink.emit(&r)?;
        self.state.prev = Some(uuid);
        Ok(())
    }

    /// A compaction's `compact_boundary` record: it restarts the chain (no parent) and names the
    /// previous record as its logical parent.
    fn boundary(&mut self, timestamp: &str) -> io::Result<()> {
        let boundary = self.ids.record();
        let mut r = RecordOut::new(self.session, "system", &boundary, timestamp);
        r.logical_parent_uuid = self.state.prev.as_deref();
        r.subtype = Some("compact_boundary");
        r.system_content = Some("Conversation compacted");
        r.level = Some("info");
        r.compact_metadata = Some(json!({"trigger": "manual", "preTokens": 0}));
        r.marker = self.marker.take();
        self.sink.emit(&r)?;
        self.state.prev = Some(boundary);
        // A result after the boundary hangs on it, never on its call before the boundary.
        self.state.open_calls.clear();
        Ok(())
    }

    /// A compaction's summary: an `isCompactSummary` user record after its boundary and the
    /// events it keeps.
    fn summary(&mut self, summary: &str, timestamp: &str, extras: &Extras) -> io::Result<()> {
        let uuid = self.ids.record();
        let mut r = RecordOut::new(self.session, "user", &uuid, timestamp);
        r.parent_uuid = self.state.prev.as_deref();
        r.message = Some(user_message(ContentOut::Text(summary)));
        r.is_compact_summary = true;
        r.visible_in_transcript_only = true;
        r.extras = extras_of(extras);
        self.sink.emit(&r)?;
        self.state.prev = Some(uuid);
        self.state.open_calls.clear();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::{boundary_places, calls_are_the_tail, precheck, RecordIds};
    use handoff_sdk::{Body, Event, Timestamp};

    fn user(id: &str) -> Event {
        let body = Body::user_text(id);
        Event::new(id, Timestamp::from_millis(0), body)
    }

    fn compaction(id: &str, through: &str) -> Event {
        let body = Body::Compaction {
            summary: "s".into(),
            replaces_through: through.into(),
        };
        Event::new(id, Timestamp::from_millis(0), body)
    }

    #[test]
    fn a_boundary_goes_after_the_event_its_compaction_replaces_through() {
        let events = [
            user("a"),
            user("b"),
            compaction("c1", "a"),
            compaction("c2", "c1"),
        ];
        precheck(&events, 0).unwrap();
        assert_eq!(boundary_places(&events), [None, Some(2), None, Some(3)]);
        // Appending `b` and `c1` after a file holding `a`: the boundary comes first.
        precheck(&events[..3], 1).unwrap();
        assert_eq!(boundary_places(&events[1..3]), [Some(1), None]);
    }

    #[test]
    fn kept_events_that_cannot_follow_the_boundary_are_refused_naming_them() {
        let nested = [
            user("a"),
            compaction("c1", "a"),
            user("b"),
            compaction("c2", "a"),
        ];
        let err = precheck(&nested, 0).unwrap_err().to_string();
        assert!(
            err.contains("event 3 (c2)") && err.contains("event 1 (c1)"),
            "{err}"
        );
        let in_file = [user("a"), user("b"), compaction("c", "a")];
        let err = precheck(&in_file, 2).unwrap_err().to_string();
        assert!(
            err.contains("event 1 (b)") && err.contains("already holds"),
            "{err}"
        );
        let unknown = [user("a"), compaction("c", "nowhere")];
        let err = precheck(&unknown, 0).unwrap_err().to_string();
        assert!(err.contains("names no earlier event"), "{err}");
    }

    #[test]
    fn record_ids_are_distinct_v4_uuids_and_differ_between_writes() {
        let mut ids = RecordIds::new();
        let all: std::collections::HashSet<String> = (0..100_000).map(|_| ids.record()).collect();
        assert_eq!(all.len(), 100_000);
        for id in all.iter().take(10) {
            let uuid = uuid::Uuid::parse_str(id).unwrap();
            assert_eq!(uuid.get_version_num(), 4, "{id}");
            assert_eq!(uuid.get_variant(), uuid::Variant::RFC4122, "{id}");
        }
        let message = ids.message();
        assert!(
            message.starts_with("msg_") && message.len() == 36,
            "{message}"
        );
        assert!(!all.contains(&RecordIds::new().record()));
    }

    #[test]
    fn results_hang_on_calls_only_when_the_calls_end_the_turn() {
        assert!(calls_are_the_tail([false, true, true].into_iter()));
        assert!(calls_are_the_tail([false, false].into_iter()));
        assert!(!calls_are_the_tail([false, true, false].into_iter()));
        assert!(!calls_are_the_tail([true, false, true].into_iter()));
    }
}
