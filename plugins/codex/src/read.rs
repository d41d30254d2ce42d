//! Rollout lines → canonical events.
//!
//! The model's history is the `response_item`s (and `compacted`), replayed in file order; the
//! `event_msg` copies are for drawing the UI and are not read as history. Developer and system
//! messages are the CLI's instructions, and user messages the CLI injected (environment context)
//! are recognised by the rule in [`is_injected`]; both are set aside. Every line must be a whole
//! JSON record: a bad line is an error naming the file and its 1-based line, never skipped.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::io::BufRead;
use std::path::Path;

use handoff_sdk::marker::OwnershipMarker;
use handoff_sdk::{
    AssistantPart, Body, Event, Origin, Part, PluginError, Signature, Thinking, Timestamp,
    ToolCall, Transcript, ValidationError,
};
use serde::Deserialize;

use crate::records::*;
use crate::THINKING_PROVIDER;

/// The reader's sets and maps of ids: one insert per event, so a fast seeded hash (SipHash
/// showed in profiles of long sessions).
type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::quality::RandomState>;
type HashSet<K> = std::collections::HashSet<K, foldhash::quality::RandomState>;

/// Rollout bytes per event, roughly, to size the id set up front (too small only costs growth).
const BYTES_PER_EVENT: u64 = 1024;

/// What the first line says about a session.
#[derive(Debug)]
pub struct Header {
    /// The session id.
    pub id: String,
    /// The working directory.
    pub cwd: String,
    /// The model provider the session was recorded with.
    pub model_provider: String,
    /// The ownership marker, if there is one.
    pub marker: Option<OwnershipMarker>,
}

/// Reads the `session_meta` line of `path` only.
pub fn read_header(path: &Path) -> Result<Header, PluginError> {
    let file = std::fs::File::open(path).map_err(|e| PluginError::io(path, &e))?;
    let mut reader = std::io::BufReader::new(file);
    let mut buf = Vec::new();
    reader
        .read_until(b'\n', &mut buf)
        .map_err(|e| PluginError::io(path, &e))?;
    if buf.is_empty() {
        return Err(PluginError::malformed_line(
            path,
            1,
            None,
            "the session file is empty",
        ));
    }
    if buf.last() != Some(&b'\n') {
        return Err(torn(path, 1));
    }
    let (_, meta) = parse_session_meta(path, 1, &buf)?;
    Ok(meta.0)
}

fn torn(path: &Path, line: usize) -> PluginError {
    PluginError::malformed_line(
        path,
        line,
        None,
        "the last line is torn (no final newline); a writer was interrupted",
    )
}

/// The header and the provider a session_meta line names (if it names one).
struct Meta(Header, Option<String>);

fn parse_session_meta(
    path: &Path,
    n: usize,
    bytes: &[u8],
) -> Result<(Timestamp, Meta), PluginError> {
    let (ts, kind, payload) = envelope(path, n, bytes)?;
    if kind != "session_meta" {
        return Err(PluginError::malformed_line(
            path,
            n,
            Some("type"),
            format!("the first line must be session_meta, found {kind:?}"),
        ));
    }
    let meta: SessionMetaIn = payload_as(path, n, payload)?;
    let id = meta.id.ok_or_else(|| missing(path, n, "payload.id"))?;
    let cwd = meta.cwd.ok_or_else(|| missing(path, n, "payload.cwd"))?;
    let marker = meta
        .marker
        .as_ref()
        .and_then(|m| serde_json::from_value(m.clone()).ok());
    let header = Header {
        id,
        cwd,
        marker,
        model_provider: meta
            .model_provider
            .clone()
            .unwrap_or_else(|| crate::records::DEFAULT_MODEL_PROVIDER.to_owned()),
    };
    Ok((ts, Meta(header, meta.model_provider)))
}

fn missing(path: &Path, n: usize, field: &str) -> PluginError {
    PluginError::malformed_line(path, n, Some(field), "required field is missing")
}

fn envelope<'a>(
    path: &Path,
    n: usize,
    bytes: &'a [u8],
) -> Result<
    (
        Timestamp,
        std::borrow::Cow<'a, str>,
        &'a serde_json::value::RawValue,
    ),
    PluginError,
> {
    let text = std::str::from_utf8(bytes)
        .map_err(|e| PluginError::malformed_line(path, n, None, format!("not valid UTF-8: {e}")))?;
    let line: LineIn<'a> = serde_json::from_str(text).map_err(|e| {
        PluginError::malformed_line(path, n, None, format!("not a JSON record: {e}"))
    })?;
    let ts = line
        .timestamp
        .ok_or_else(|| missing(path, n, "timestamp"))?;
    let ts = Timestamp::parse(&ts)
        .map_err(|e| PluginError::malformed_line(path, n, Some("timestamp"), e))?;
    let kind = line.kind.ok_or_else(|| missing(path, n, "type"))?;
    let payload = line.payload.ok_or_else(|| missing(path, n, "payload"))?;
    Ok((ts, kind, payload))
}

fn payload_as<'a, T: Deserialize<'a>>(
    path: &Path,
    n: usize,
    payload: &'a serde_json::value::RawValue,
) -> Result<T, PluginError> {
    serde_json::from_str(payload.get()).map_err(|e| {
        PluginError::malformed_line(path, n, Some("payload"), format!("unexpected shape: {e}"))
    })
}

/// Reads a whole rollout into a transcript.
pub fn read_rollout(path: &Path) -> Result<Transcript, PluginError> {
    let mut events = Vec::new();
    let header = read_each(path, &mut |event| {
        events.push(event);
        true
    })?;
    let mut transcript = Transcript::new(events);
    transcript.cwd = Some(header.cwd);
    Ok(transcript)
}

/// Reads a rollout line by line and hands each event to `sink` as soon as it is complete (until
/// `sink` returns `false`). Only what later lines can still change is held: the event being built
/// (more items of it may follow) and, until its turn ends, a tool result (an `item_completed`
/// record may still mark it failed), with the events after it. Every event is checked against
/// the structural rules of [`Transcript::validate`] before it is handed out.
pub fn read_each(path: &Path, sink: &mut dyn FnMut(Event) -> bool) -> Result<Header, PluginError> {
    let file = std::fs::File::open(path).map_err(|e| PluginError::io(path, &e))?;
    let expected_events = file
        .metadata()
        .map_or(0, |m| (m.len() / BYTES_PER_EVENT).min(1 << 20)) as usize;
    let mut reader = std::io::BufReader::with_capacity(1 << 16, file);
    let mut state = ReadState::new(path, sink, expected_events);
    let mut buf = Vec::with_capacity(1 << 12);
    let mut n = 0usize;
    loop {
        buf.clear();
        let read = reader
            .read_until(b'\n', &mut buf)
            .map_err(|e| PluginError::io(path, &e))?;
        if read == 0 {
            break;
        }
        n += 1;
        if buf.last() != Some(&b'\n') {
            return Err(torn(path, n));
        }
        let body = &buf[..buf.len() - 1];
        let body = body.strip_suffix(b"\r").unwrap_or(body);
        if body.iter().all(u8::is_ascii_whitespace) {
            return Err(PluginError::malformed_line(path, n, None, "empty line"));
        }
        state.line(n, body)?;
        if state.stopped {
            break;
        }
        // Do not keep the memory of one huge line for the rest of the file.
        if buf.capacity() > 1 << 20 {
            buf = Vec::with_capacity(1 << 12);
        }
    }
    if n == 0 {
        return Err(PluginError::Malformed {
            file: path.to_owned(),
            line: None,
            field: None,
            message: "the session file is empty".into(),
        });
    }
    state.finish()
}

/// Parses one line after the first: in one pass when it can, else the careful way, which names
/// the field at fault.
fn parse_line<'a>(
    path: &Path,
    n: usize,
    bytes: &'a [u8],
) -> Result<(Timestamp, PayloadIn<'a>), PluginError> {
    // from_slice checks UTF-8 as it goes (inside strings, the only place non-ASCII may be).
    if let Ok(FastLine {
        timestamp: Some(ts),
        kind: Some(kind),
        payload: Some(payload),
    }) = serde_json::from_slice::<FastLine<'a>>(bytes)
    {
        let payload = match payload {
            FastPayload::Typed(payload) => Some(payload),
            FastPayload::Raw(raw) => PayloadIn::from_raw(&kind, raw).ok(),
        };
        if let Some(payload) = payload {
            let ts = crate::time::parse(&ts)
                .map_err(|e| PluginError::malformed_line(path, n, Some("timestamp"), e))?;
            return Ok((ts, payload));
        }
    }
    let (ts, kind, raw) = envelope(path, n, bytes)?;
    let payload = PayloadIn::from_raw(&kind, raw).map_err(|e| {
        PluginError::malformed_line(path, n, Some("payload"), format!("unexpected shape: {e}"))
    })?;
    Ok((ts, payload))
}

/// How the events being built are grouped.
#[derive(PartialEq)]
enum Group {
    /// Items tagged with the id of the open event (the last one held).
    Tagged,
    /// Untagged assistant-side items (message, reasoning, call) of one model response.
    UntaggedAssistant,
    /// An event that takes no more items.
    Closed,
}

/// An event not handed out yet, with the line it started on.
struct Held {
    line: usize,
    event: Event,
}

struct ReadState<'p, 's> {
    path: &'p Path,
    sink: &'s mut dyn FnMut(Event) -> bool,
    /// The sink asked for no more events.
    stopped: bool,
    header: Option<Header>,
    provider: String,
    model: Option<String>,
    /// Events not handed out yet. The last is kept until the end: it may still take items, and
    /// an untagged compaction replaces through it.
    held: VecDeque<Held>,
    /// How many events were handed out (the index of `held[0]`).
    emitted: usize,
    /// The index of the first tool result of the current turn that a later `item_completed`
    /// may still mark failed; nothing from it on is handed out before the turn ends.
    hold_from: Option<usize>,
    group: Group,
    ids: HashSet<String>,
    /// Calls an `item_completed` said failed.
    failed_calls: HashSet<String>,
    /// Results of this turn by call id (their index), while they may still be marked failed.
    open_results: HashMap<String, usize>,
    rules: StructureCheck,
}

impl<'p, 's> ReadState<'p, 's> {
    fn new(path: &'p Path, sink: &'s mut dyn FnMut(Event) -> bool, expected_events: usize) -> Self {
        ReadState {
            path,
            sink,
            stopped: false,
            header: None,
            provider: THINKING_PROVIDER.to_owned(),
            model: None,
            held: VecDeque::new(),
            emitted: 0,
            hold_from: None,
            group: Group::Closed,
            ids: HashSet::with_capacity_and_hasher(expected_events, Default::default()),
            failed_calls: HashSet::default(),
            open_results: HashMap::default(),
            rules: StructureCheck::default(),
        }
    }

    fn line(&mut self, n: usize, bytes: &[u8]) -> Result<(), PluginError> {
        let path = self.path;
        if self.header.is_none() {
            let (_, Meta(header, provider)) = parse_session_meta(path, n, bytes)?;
            if let Some(p) = provider {
                self.provider = p;
            }
            self.header = Some(header);
            return Ok(());
        }
        let (ts, payload) = parse_line(path, n, bytes)?;
        match payload {
            PayloadIn::ResponseItem(item) => self.item(n, ts, item)?,
            PayloadIn::Compacted(compacted) => self.compacted(n, ts, compacted)?,
            PayloadIn::TurnContext(context) => {
                if let Some(model) = context.model {
                    self.model = Some(model.into_owned());
                }
            }
            PayloadIn::EventMsg(event) => match event.kind.as_deref() {
                Some("item_completed") => {
                    if let Some(EventItemIn {
                        id: Some(id),
                        status: Some(status),
                    }) = event.item
                    {
                        if status == "failed" {
                            self.call_failed(id.into_owned());
                        }
                    }
                }
                // A turn ends: its results can no longer change.
                Some("task_started" | "task_complete" | "turn_aborted") => {
                    self.open_results.clear();
                    self.hold_from = None;
                }
                _ => {}
            },
            // A second session_meta (a forked history's parent) is not history, nor are
            // world_state, token_usage_record and record types of later Codex versions. Their
            // envelope was checked above.
            PayloadIn::Other => {}
        }
        self.release(false)
    }

    /// The CLI marks a failed tool only in an `item_completed` event: mark the result of the
    /// call, whether it came before (by call id, for the rest of the file) or earlier in the
    /// same turn.
    fn call_failed(&mut self, call_id: String) {
        if let Some(index) = self.open_results.get(&call_id) {
            if let Some(Held {
                event:
                    Event {
                        body: Body::ToolResult { is_error, .. },
                        ..
                    },
                ..
            }) = index
                .checked_sub(self.emitted)
                .and_then(|i| self.held.get_mut(i))
            {
                *is_error = true;
            }
        }
        self.failed_calls.insert(call_id);
    }

    /// Hands out the events no later line can change (all of them when `all`).
    fn release(&mut self, all: bool) -> Result<(), PluginError> {
        let keep = if all { 0 } else { 1 };
        while self.held.len() > keep && !self.stopped {
            if self.hold_from.is_some_and(|from| self.emitted >= from) && !all {
                break;
            }
            let Some(Held { line, event }) = self.held.pop_front() else {
                break;
            };
            self.rules
                .check(self.emitted, &event)
                .map_err(|e| PluginError::Malformed {
                    file: self.path.to_owned(),
                    line: Some(line),
                    field: Some(e.field.clone()),
                    message: format!("the history is not a valid transcript: {e}"),
                })?;
            self.emitted += 1;
            if !(self.sink)(event) {
                self.stopped = true;
            }
        }
        Ok(())
    }

    fn item(&mut self, n: usize, ts: Timestamp, item: ItemIn<'_>) -> Result<(), PluginError> {
        let path = self.path;
        let field_missing = |field: &str| missing(path, n, &format!("payload.{field}"));
        let kind = item.kind.as_deref().ok_or_else(|| field_missing("type"))?;
        match kind {
            "message" => {
                let role = item.role.as_deref().ok_or_else(|| field_missing("role"))?;
                match role {
                    "developer" | "system" => Ok(()),
                    "user" => {
                        if item.tag.is_none() && is_injected(&item) {
                            return Ok(());
                        }
                        let content = item.content.ok_or_else(|| field_missing("content"))?;
                        let parts = user_parts(path, n, content)?;
                        self.push(n, ts, item.tag, item.id, Body::User { content: parts })
                    }
                    "assistant" => {
                        let content = item.content.ok_or_else(|| field_missing("content"))?;
                        let empty = content.is_empty();
                        let mut parts = Vec::with_capacity(content.len());
                        for (i, c) in content.into_iter().enumerate() {
                            match (c.kind.as_deref(), &c.text) {
                                (Some("output_text" | "input_text"), Some(_)) => {
                                    let text = c.text.map(Cow::into_owned).unwrap_or_default();
                                    parts.push(AssistantPart::Text { text })
                                }
                                (Some("refusal"), _) => {
                                    return Err(PluginError::malformed_line(
                                        path,
                                        n,
                                        Some(&format!("payload.content[{i}]")),
                                        "a refusal has no canonical form",
                                    ))
                                }
                                _ => return Err(bad_content(path, n, i, &c)),
                            }
                        }
                        self.push_assistant(n, ts, item.tag, item.id, parts, empty)
                    }
                    other => Err(PluginError::malformed_line(
                        path,
                        n,
                        Some("payload.role"),
                        format!("unknown message role {other:?}"),
                    )),
                }
            }
            "reasoning" => {
                let summary = item.summary.unwrap_or_default();
                let mut texts = summary.into_iter().filter_map(|s| s.text);
                let text = match (texts.next(), texts.next()) {
                    (None, _) => String::new(),
                    (Some(only), None) => only.into_owned(),
                    (Some(first), Some(second)) => {
                        let mut all = format!("{first}\n\n{second}");
                        for t in texts {
                            all.push_str("\n\n");
                            all.push_str(&t);
                        }
                        all
                    }
                };
                let (signature_model, redacted) = match &item.tag {
                    Some(tag) => (tag.signature_model.clone(), tag.redacted),
                    None => (self.model.clone(), text.is_empty()),
                };
                let signature = item.encrypted_content.map(|value| Signature {
                    provider: THINKING_PROVIDER.to_owned(),
                    model: signature_model,
                    value: value.into_owned(),
                    redacted,
                });
                let part = AssistantPart::Thinking(Thinking { text, signature });
                self.push_assistant(n, ts, item.tag, item.id, vec![part], false)
            }
            "function_call" | "custom_tool_call" => {
                let name = item.name.ok_or_else(|| field_missing("name"))?;
                let call_id = item.call_id.ok_or_else(|| field_missing("call_id"))?;
                let arguments = if kind == "function_call" {
                    let text = item
                        .arguments
                        .as_deref()
                        .ok_or_else(|| field_missing("arguments"))?;
                    serde_json::from_str(text).map_err(|e| {
                        PluginError::malformed_line(
                            path,
                            n,
                            Some("payload.arguments"),
                            format!("the arguments are not a JSON document: {e}"),
                        )
                    })?
                } else {
                    serde_json::Value::String(
                        item.input
                            .ok_or_else(|| field_missing("input"))?
                            .into_owned(),
                    )
                };
                let part = AssistantPart::ToolCall(ToolCall {
                    id: call_id.into_owned(),
                    name: name.into_owned(),
                    arguments,
                });
                self.push_assistant(n, ts, item.tag, item.id, vec![part], false)
            }
            "function_call_output" | "custom_tool_call_output" => {
                let call_id = item
                    .call_id
                    .ok_or_else(|| field_missing("call_id"))?
                    .into_owned();
                let content = match item.output {
                    None => return Err(field_missing("output")),
                    Some(OutputIn::Text(text)) => vec![Part::Text {
                        text: text.into_owned(),
                    }],
                    Some(OutputIn::Items(items)) => user_parts(path, n, items)?,
                };
                let is_error = item.tag.as_ref().is_some_and(|t| t.is_error)
                    || self.failed_calls.contains(&call_id);
                let index = self.emitted + self.held.len();
                self.hold_from.get_or_insert(index);
                self.open_results.insert(call_id.clone(), index);
                self.push(
                    n,
                    ts,
                    item.tag,
                    item.id,
                    Body::ToolResult {
                        call_id,
                        content,
                        is_error,
                    },
                )
            }
            // A snapshot of the work tree for undo; never shown to the model.
            "ghost_snapshot" => Ok(()),
            other => Err(PluginError::malformed_line(
                path,
                n,
                Some("payload.type"),
                format!("response item type {other:?} has no canonical form; refusing to drop it"),
            )),
        }
    }

    fn compacted(
        &mut self,
        n: usize,
        ts: Timestamp,
        compacted: CompactedIn<'_>,
    ) -> Result<(), PluginError> {
        let path = self.path;
        let summary = compacted
            .message
            .ok_or_else(|| missing(path, n, "payload.message"))?
            .into_owned();
        let replaces_through = match compacted
            .tag
            .as_ref()
            .and_then(|t| t.replaces_through.clone())
        {
            Some(id) if self.ids.contains(&id) => id,
            Some(id) => {
                return Err(PluginError::malformed_line(
                    path,
                    n,
                    Some("payload.x-handoff-event.replaces_through"),
                    format!("{id:?} is not an earlier event"),
                ))
            }
            // Codex's own compaction replaces everything before it.
            None => match self.held.back() {
                Some(last) => last.event.id.clone(),
                None => {
                    return Err(PluginError::malformed_line(
                        path,
                        n,
                        None,
                        "a compaction with nothing before it to replace",
                    ))
                }
            },
        };
        self.push(
            n,
            ts,
            compacted.tag,
            None,
            Body::Compaction {
                summary,
                replaces_through,
            },
        )
    }

    /// Adds assistant-side parts: to the open event of the same group, or as a new event.
    fn push_assistant(
        &mut self,
        n: usize,
        ts: Timestamp,
        tag: Option<EventTag>,
        item_id: Option<Cow<'_, str>>,
        parts: Vec<AssistantPart>,
        empty_message: bool,
    ) -> Result<(), PluginError> {
        let same_group = match (&tag, &self.group) {
            (Some(t), Group::Tagged) => self.held.back().is_some_and(|open| open.event.id == t.id),
            (None, Group::UntaggedAssistant) => true,
            _ => false,
        };
        if same_group {
            // The open event is never handed out before the next one starts.
            if let Some(Held {
                event:
                    Event {
                        body: Body::Assistant { content, .. },
                        ..
                    },
                ..
            }) = self.held.back_mut()
            {
                if empty_message {
                    return Err(PluginError::malformed_line(
                        self.path,
                        n,
                        Some("payload.content"),
                        "an empty assistant message inside a longer assistant turn",
                    ));
                }
                content.extend(parts);
                return Ok(());
            }
            return Err(PluginError::malformed_line(
                self.path,
                n,
                Some("payload.x-handoff-event.id"),
                "an assistant item tagged with the id of a non-assistant event",
            ));
        }
        let untagged = tag.is_none();
        let origin = match &tag {
            Some(t) => t.origin.clone(),
            None => Some(Origin {
                provider: self.provider.clone(),
                model: self.model.clone(),
                api: Some("openai-responses".to_owned()),
            }),
        };
        self.push(
            n,
            ts,
            tag,
            item_id,
            Body::Assistant {
                content: parts,
                origin,
            },
        )?;
        if untagged {
            self.group = Group::UntaggedAssistant;
        }
        Ok(())
    }

    /// Starts a new event.
    fn push(
        &mut self,
        n: usize,
        ts: Timestamp,
        tag: Option<EventTag>,
        item_id: Option<Cow<'_, str>>,
        body: Body,
    ) -> Result<(), PluginError> {
        let (id, author, group) = match tag {
            Some(tag) => {
                if !self.ids.insert(tag.id.clone()) {
                    return Err(PluginError::malformed_line(
                        self.path,
                        n,
                        Some("payload.x-handoff-event.id"),
                        format!(
                            "event id {:?} is used by an earlier, separate event",
                            tag.id
                        ),
                    ));
                }
                (tag.id, tag.author, Group::Tagged)
            }
            None => {
                let id = match item_id {
                    Some(id) if !self.ids.contains(id.as_ref()) => id.into_owned(),
                    _ => format!("line-{n}"),
                };
                self.ids.insert(id.clone());
                (id, None, Group::Closed)
            }
        };
        let mut event = Event::new(id, ts, body);
        event.author = author;
        self.held.push_back(Held { line: n, event });
        self.group = group;
        Ok(())
    }

    fn finish(mut self) -> Result<Header, PluginError> {
        let header = self.header.take().ok_or_else(|| PluginError::Malformed {
            file: self.path.to_owned(),
            line: None,
            field: None,
            message: "no session_meta line".into(),
        })?;
        self.release(true)?;
        Ok(header)
    }
}

/// The structural rules of [`Transcript::validate`], checked one event at a time, so a streamed
/// read refuses exactly what a whole read refuses. (Event ids are unique by construction here:
/// the reader refuses a reused tagged id and gives untagged items unused ones.)
#[derive(Default)]
struct StructureCheck {
    /// Call id → answered yet?
    calls: HashMap<String, bool>,
}

impl StructureCheck {
    fn check(&mut self, index: usize, event: &Event) -> Result<(), ValidationError> {
        let fail = |field: String, message: String| ValidationError {
            index,
            event_id: event.id.clone(),
            field,
            message,
        };
        if event.id.is_empty() {
            return Err(fail("id".into(), "event id is empty".into()));
        }
        match &event.body {
            Body::Assistant { content, .. } => {
                for (i, part) in content.iter().enumerate() {
                    if let AssistantPart::ToolCall(call) = part {
                        if call.id.is_empty() {
                            return Err(fail(
                                format!("body.content[{i}].id"),
                                "tool call id is empty".into(),
                            ));
                        }
                        if call.name.is_empty() {
                            return Err(fail(
                                format!("body.content[{i}].name"),
                                "tool name is empty".into(),
                            ));
                        }
                        if self.calls.insert(call.id.clone(), false).is_some() {
                            return Err(fail(
                                format!("body.content[{i}].id"),
                                format!("tool call id {:?} is used twice", call.id),
                            ));
                        }
                    }
                }
            }
            Body::ToolResult { call_id, .. } => match self.calls.get_mut(call_id.as_str()) {
                None => {
                    return Err(fail(
                        "body.call_id".into(),
                        format!("{call_id:?} answers no earlier tool call"),
                    ))
                }
                Some(true) => {
                    return Err(fail(
                        "body.call_id".into(),
                        format!("tool call {call_id:?} already has a result"),
                    ))
                }
                Some(answered) => *answered = true,
            },
            Body::User { .. } | Body::Compaction { .. } => {}
        }
        Ok(())
    }
}

/// The rule for user messages the CLI injected (not typed by the user), for untagged items only:
/// the CLI's own metadata says a harness put every content item there (`provenance.type` is
/// `harness`, or the item kind is `environments.*`); or, for files without that metadata, the
/// message is exactly one `<environment_context>…</environment_context>` text.
pub fn is_injected(item: &ItemIn<'_>) -> bool {
    if let Some(meta) = &item.internal_chat_message_metadata_passthrough {
        let by_kind = !meta.content_item_kinds.is_empty()
            && meta
                .content_item_kinds
                .iter()
                .all(|k| k.starts_with("environments."));
        let by_provenance = !meta.content_item_metadata.is_empty()
            && meta
                .content_item_metadata
                .iter()
                .all(|m| m.provenance.as_ref().and_then(|p| p.kind.as_deref()) == Some("harness"));
        return by_kind || by_provenance;
    }
    match item.content.as_deref() {
        Some([only]) => {
            only.kind.as_deref() == Some("input_text")
                && only
                    .text
                    .as_deref()
                    .is_some_and(handoff_sdk::dialect::openai_responses::is_environment_context)
        }
        _ => false,
    }
}

fn bad_content(path: &Path, n: usize, i: usize, c: &ContentIn<'_>) -> PluginError {
    PluginError::malformed_line(
        path,
        n,
        Some(&format!("payload.content[{i}]")),
        format!(
            "unexpected content item (type {:?}, text {}, image_url {})",
            c.kind,
            if c.text.is_some() {
                "present"
            } else {
                "missing"
            },
            if c.image_url.is_some() {
                "present"
            } else {
                "missing"
            },
        ),
    )
}

fn user_parts(
    path: &Path,
    n: usize,
    content: Vec<ContentIn<'_>>,
) -> Result<Vec<Part>, PluginError> {
    let mut parts = Vec::with_capacity(content.len());
    for (i, c) in content.into_iter().enumerate() {
        match (c.kind.as_deref(), &c.text, &c.image_url) {
            (Some("input_text" | "output_text"), Some(_), _) => parts.push(Part::Text {
                text: c.text.map(Cow::into_owned).unwrap_or_default(),
            }),
            (Some("input_image"), _, Some(url)) => parts.push(image_part(url).map_err(|m| {
                PluginError::malformed_line(
                    path,
                    n,
                    Some(&format!("payload.content[{i}].image_url")),
                    m,
                )
            })?),
            _ => return Err(bad_content(path, n, i, &c)),
        }
    }
    Ok(parts)
}

pub use handoff_sdk::dialect::openai_responses::image_part;
