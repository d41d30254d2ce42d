//! Canonical events → Claude Code records, as Claude Code 2.1.197 writes them.
//!
//! - a user turn is one `user` record (a lone text part as a plain string, like a typed prompt);
//! - an assistant turn is one `assistant` record per content block, all sharing `message.id`,
//!   chained by `parentUuid` (the CLI streams them so);
//! - a tool result is a `user` record of one `tool_result` block; while only results of the last
//!   assistant turn follow it, its parent is the record of its own `tool_use` (the CLI's layout for
//!   parallel calls), otherwise the previous record;
//! - a compaction is a `system` `compact_boundary` record (parent `null`, `logicalParentUuid` the
//!   previous record) followed by an `isCompactSummary` user record holding the summary.

use std::collections::{HashMap, HashSet};
use std::io::{self, Write};

use handoff_sdk::dialect::anthropic::{assistant_blocks, user_blocks, WireBlock};
use handoff_sdk::marker::OwnershipMarker;
use handoff_sdk::serde_json::{self, json, Value};
use handoff_sdk::{AssistantPart, Body, Event, Origin, Part, PluginError};
use serde::Serialize;

use crate::manifest::CLAUDE_CODE_VERSION;
use crate::record::{default_origin, Extras};

/// The only provider whose thinking goes back to Claude.
const THINKING_FROM: &[&str] = &["anthropic"];

/// Where the chain stands: what the next record hangs on.
#[derive(Clone, Debug, Default)]
pub(crate) struct ChainState {
    /// The uuid of the last record on the chain.
    pub prev: Option<String>,
    /// Canonical call id → uuid of the record holding its `tool_use`.
    pub call_records: HashMap<String, String>,
    /// The calls of the last assistant turn, while nothing but their results followed it.
    pub open_calls: HashSet<String>,
}

/// The session-wide members of every record.
pub(crate) struct Session<'a> {
    pub id: &'a str,
    pub cwd: &'a str,
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
            Body::Assistant { content, origin } => {
                for (i, part) in content.iter().enumerate() {
                    if let AssistantPart::Thinking(t) = part {
                        let maker = thinking_maker(t, origin.as_ref());
                        if portable(maker) && t.signature.is_none() {
                            return Err(invalid(index, event, &format!("body.content[{i}]"),
                                "Anthropic thinking without its signature cannot go back to Claude (the API requires it)"));
                        }
                    }
                }
                let thinking_from: Vec<String> =
                    THINKING_FROM.iter().map(|s| s.to_string()).collect();
                assistant_blocks(content, &thinking_from, None)
                    .map_err(|(field, message)| invalid(index, event, &field, &message))?;
            }
            Body::Compaction {
                replaces_through, ..
            } => {
                let Some(last) = last_written else {
                    return Err(invalid(
                        index,
                        event,
                        "body.replaces_through",
                        "Claude Code cannot write a compaction that replaces nothing",
                    ));
                };
                let through = events[..index]
                    .iter()
                    .position(|e| &e.id == replaces_through);
                if through.is_none_or(|t| t < last) {
                    return Err(invalid(index, event, "body.replaces_through",
                        "Claude Code's compaction replaces everything before it; this one keeps some events in view"));
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

#[derive(Serialize)]
#[serde(untagged)]
enum Content<'a> {
    Text(&'a str),
    Blocks(Vec<WireBlock<'a>>),
}

#[derive(Serialize)]
struct Message<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a str>,
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    kind: Option<&'static str>,
    role: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<&'a str>,
    content: Content<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stop_reason: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    usage: Option<Usage>,
}

/// The token counts the CLI records on an assistant message (none were spent here); typed, so
/// writing one builds no JSON value.
#[derive(Serialize)]
struct Usage {
    input_tokens: u32,
    output_tokens: u32,
}

#[derive(Serialize)]
struct Record<'a> {
    #[serde(rename = "parentUuid")]
    parent_uuid: Option<&'a str>,
    #[serde(rename = "logicalParentUuid", skip_serializing_if = "Option::is_none")]
    logical_parent_uuid: Option<&'a str>,
    #[serde(rename = "isSidechain")]
    is_sidechain: bool,
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    subtype: Option<&'static str>,
    #[serde(rename = "content", skip_serializing_if = "Option::is_none")]
    system_content: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    level: Option<&'static str>,
    #[serde(rename = "compactMetadata", skip_serializing_if = "Option::is_none")]
    compact_metadata: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<Message<'a>>,
    #[serde(
        rename = "isCompactSummary",
        skip_serializing_if = "std::ops::Not::not"
    )]
    is_compact_summary: bool,
    #[serde(
        rename = "isVisibleInTranscriptOnly",
        skip_serializing_if = "std::ops::Not::not"
    )]
    visible_in_transcript_only: bool,
    uuid: &'a str,
    timestamp: &'a str,
    #[serde(
        rename = "sourceToolAssistantUUID",
        skip_serializing_if = "Option::is_none"
    )]
    source_tool_assistant_uuid: Option<&'a str>,
    #[serde(rename = "userType")]
    user_type: &'static str,
    cwd: &'a str,
    #[serde(rename = "sessionId")]
    session_id: &'a str,
    version: &'static str,
    #[serde(rename = "x-handoff", skip_serializing_if = "Option::is_none")]
    marker: Option<&'a OwnershipMarker>,
    #[serde(rename = "handoff", skip_serializing_if = "Option::is_none")]
    extras: Option<&'a Extras>,
}

impl<'a> Record<'a> {
    fn new(
        session: &'a Session<'a>,
        kind: &'static str,
        uuid: &'a str,
        timestamp: &'a str,
    ) -> Self {
        Record {
            parent_uuid: None,
            logical_parent_uuid: None,
            is_sidechain: false,
            kind,
            subtype: None,
            system_content: None,
            level: None,
            compact_metadata: None,
            message: None,
            is_compact_summary: false,
            visible_in_transcript_only: false,
            uuid,
            timestamp,
            source_tool_assistant_uuid: None,
            user_type: "external",
            cwd: session.cwd,
            session_id: session.id,
            version: CLAUDE_CODE_VERSION,
            marker: None,
            extras: None,
        }
    }
}

fn user_message(content: Content<'_>) -> Message<'_> {
    Message {
        id: None,
        kind: None,
        role: "user",
        model: None,
        content,
        stop_reason: None,
        usage: None,
    }
}

fn new_uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}

fn emit(out: &mut dyn Write, record: &Record<'_>) -> io::Result<()> {
    serde_json::to_writer(&mut *out, record).map_err(io::Error::other)?;
    out.write_all(b"\n")
}

fn extras_of(e: &Extras) -> Option<&Extras> {
    (!e.is_empty()).then_some(e)
}

/// Writes `events` as records continuing `state`. The first record written carries `marker`.
/// Call [`precheck`] first: this only fails on I/O.
pub(crate) fn write_events(
    out: &mut dyn Write,
    session: &Session<'_>,
    state: &mut ChainState,
    events: &[Event],
    mut marker: Option<&OwnershipMarker>,
) -> io::Result<()> {
    let thinking_from: Vec<String> = THINKING_FROM.iter().map(|s| s.to_string()).collect();
    for event in events {
        if !is_written(event) {
            continue;
        }
        let timestamp = event.timestamp.to_rfc3339();
        let author_extras = Extras {
            author: event.author.clone(),
            ..Extras::default()
        };
        match &event.body {
            Body::User { content } => {
                let uuid = new_uuid();
                let mut r = Record::new(session, "user", &uuid, &timestamp);
                r.parent_uuid = state.prev.as_deref();
                r.message = Some(user_message(match &content[..] {
                    [Part::Text { text }] => Content::Text(text),
                    parts => Content::Blocks(user_blocks(parts)),
                }));
                r.marker = marker.take();
                r.extras = extras_of(&author_extras);
                emit(out, &r)?;
                state.prev = Some(uuid);
                state.open_calls.clear();
            }
            Body::Assistant { content, origin } => {
                let blocks = assistant_blocks(content, &thinking_from, None).map_err(
                    |(field, message)| {
                        io::Error::other(format!("event {}: {field}: {message}", event.id))
                    },
                )?;
                let model = origin.as_ref().and_then(|o| o.model.as_deref());
                let mut first = Extras {
                    author: event.author.clone(),
                    ..Extras::default()
                };
                if origin.as_ref() != Some(&default_origin(model)) {
                    first.origin = Some(origin.clone());
                }
                let message_id = format!("msg_{}", uuid::Uuid::new_v4().simple());
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
                    AssistantPart::Thinking(t) if portable(thinking_maker(t, origin.as_ref())) => {
                        t.signature.as_ref()
                    }
                    _ => None,
                });
                let mut calls = content.iter().filter_map(|p| match p {
                    AssistantPart::ToolCall(c) => Some(c.id.as_str()),
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
                state.open_calls.clear();
                for (n, block) in records.into_iter().enumerate() {
                    let uuid = new_uuid();
                    let mut extras = if n == 0 {
                        first.clone()
                    } else {
                        Extras::default()
                    };
                    match &block {
                        Some(WireBlock::Thinking { .. } | WireBlock::RedactedThinking(_)) => {
                            if let Some(sig) = signed.next() {
                                if sig.model.as_deref() != model {
                                    extras.signature_model = Some(sig.model.clone());
                                }
                            }
                        }
                        Some(WireBlock::ToolUse { .. }) => {
                            if let Some(id) = calls.next() {
                                state.open_calls.insert(id.to_owned());
                                state.call_records.insert(id.to_owned(), uuid.clone());
                            }
                        }
                        _ => {}
                    }
                    let mut r = Record::new(session, "assistant", &uuid, &timestamp);
                    r.parent_uuid = state.prev.as_deref();
                    r.message = Some(Message {
                        id: Some(&message_id),
                        kind: Some("message"),
                        role: "assistant",
                        model,
                        content: Content::Blocks(block.into_iter().collect()),
                        stop_reason: Some(stop_reason),
                        usage: Some(Usage {
                            input_tokens: 0,
                            output_tokens: 0,
                        }),
                    });
                    r.marker = marker.take();
                    r.extras = extras_of(&extras);
                    emit(out, &r)?;
                    state.prev = Some(uuid);
                }
                if !results_on_calls {
                    state.open_calls.clear();
                }
            }
            Body::ToolResult {
                call_id,
                content,
                is_error,
            } => {
                let uuid = new_uuid();
                let call_record = state.call_records.get(call_id).cloned();
                let parent = if state.open_calls.contains(call_id) {
                    call_record.clone()
                } else {
                    state.prev.clone()
                };
                let mut r = Record::new(session, "user", &uuid, &timestamp);
                r.parent_uuid = parent.as_deref();
                r.message = Some(user_message(Content::Blocks(vec![WireBlock::tool_result(
                    call_id, content, *is_error, true,
                )])));
                r.source_tool_assistant_uuid = call_record.as_deref();
                r.marker = marker.take();
                r.extras = extras_of(&author_extras);
                emit(out, &r)?;
                state.prev = Some(uuid);
            }
            Body::Compaction { summary, .. } => {
                let boundary = new_uuid();
                let mut r = Record::new(session, "system", &boundary, &timestamp);
                r.logical_parent_uuid = state.prev.as_deref();
                r.subtype = Some("compact_boundary");
                r.system_content = Some("Conversation compacted");
                r.level = Some("info");
                r.compact_metadata = Some(json!({"trigger": "manual", "preTokens": 0}));
                r.marker = marker.take();
                emit(out, &r)?;
                let uuid = new_uuid();
                let mut r = Record::new(session, "user", &uuid, &timestamp);
                r.parent_uuid = Some(&boundary);
                r.message = Some(user_message(Content::Text(summary)));
                r.is_compact_summary = true;
                r.visible_in_transcript_only = true;
                r.extras = extras_of(&author_extras);
                emit(out, &r)?;
                state.prev = Some(uuid);
                state.open_calls.clear();
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::calls_are_the_tail;

    #[test]
    fn results_hang_on_calls_only_when_the_calls_end_the_turn() {
        assert!(calls_are_the_tail([false, true, true].into_iter()));
        assert!(calls_are_the_tail([false, false].into_iter()));
        assert!(!calls_are_the_tail([false, true, false].into_iter()));
        assert!(!calls_are_the_tail([true, false, true].into_iter()));
    }
}
