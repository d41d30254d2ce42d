//! Canonical events → rollout lines.
//!
//! A user event opens a turn (`task_started`, `turn_context`), then come its `response_item`s and
//! the `event_msg` copies Codex draws the session from (`user_message`, `agent_message`); the turn
//! ends with `task_complete`. Every line carries its event's timestamp, to the millisecond.
//!
//! [`lines`] gathers the lines and [`items`] makes the pieces of each; this module decides which
//! lines an event becomes.

mod items;
mod lines;

use std::borrow::Cow;
use std::io;

use handoff_sdk::{AssistantPart, Body, Event, IdSet, Part, PluginError, Transcript};
use serde_json::value::RawValue;

use crate::codex::records::*;
use items::{assistant_items, content_item, joined_text, raw, tag, OriginCache};
pub use lines::{Lines, ToolOutput};

/// The model named in `turn_context` when no assistant turn says which model it was.
const FALLBACK_MODEL: &str = "gpt-5";

/// Refuses what Codex cannot hold even though the target carries the feature, naming the event.
pub fn check_representable(transcript: &Transcript, first: usize) -> Result<(), PluginError> {
    for (index, event) in transcript.events.iter().enumerate().skip(first) {
        check_event(index, event)?;
    }
    Ok(())
}

/// [`check_representable`] for event `index`.
pub fn check_event(index: usize, event: &Event) -> Result<(), PluginError> {
    {
        let fail = |field: String, message: &str| {
            Err(PluginError::InvalidTranscript(format!(
                "event {index} ({}): {field}: {message}",
                event.id
            )))
        };
        let parts: &[Part] = match &event.body {
            Body::User { content } => content,
            Body::ToolResult {
                call_id, content, ..
            } => {
                if call_id.is_empty() || call_id.chars().count() > 64 {
                    return fail(
                        "body.call_id".into(),
                        "the Responses API takes call ids of 1 to 64 characters (rule R7)",
                    );
                }
                content
            }
            Body::Assistant { content, .. } => {
                for (i, part) in content.iter().enumerate() {
                    if let AssistantPart::ToolCall(call) = part {
                        if call.id.chars().count() > 64 {
                            return fail(
                                format!("body.content[{i}].id"),
                                "the Responses API takes call ids of 1 to 64 characters (rule R7)",
                            );
                        }
                    }
                }
                &[]
            }
            Body::Compaction { .. } => &[],
        };
        for (i, part) in parts.iter().enumerate() {
            if let Part::Image { data, .. } = part {
                if !is_decodable_image(data) {
                    return fail(
                        format!("body.content[{i}].data"),
                        "the bytes are no PNG, JPEG, GIF or WebP image; Codex 0.171 sends the \
                         text \"image content omitted because it could not be processed\" in \
                         their place (continue with --drop image to go on without it)",
                    );
                }
            }
            if let Part::ImageUrl { url } = part {
                if url.starts_with("data:") {
                    return fail(
                        format!("body.content[{i}].url"),
                        "an image URL that is a data: URL would read back as image bytes; \
                         give the image as bytes instead",
                    );
                }
            }
        }
    }
    Ok(())
}

/// Whether `data` starts as an image Codex can decode does: PNG, JPEG, GIF or WebP. Codex
/// decodes every image it sends (to fit its size limits) and sends a text of its own in place of
/// one it cannot decode; a signature is what tells bytes of no image from an image.
fn is_decodable_image(data: &[u8]) -> bool {
    data.starts_with(b"\x89PNG\r\n\x1a\n")
        || data.starts_with(&[0xff, 0xd8, 0xff])
        || data.starts_with(b"GIF87a")
        || data.starts_with(b"GIF89a")
        || (data.len() >= 12 && data.starts_with(b"RIFF") && &data[8..12] == b"WEBP")
}

/// The output item of a call: `custom_tool_call_output` for a freeform call's, else
/// `function_call_output`.
fn output_item<'a>(
    custom: bool,
    call_id: &'a str,
    output: OutputOut<'a>,
    tag: Option<EventTagOut<'a>>,
) -> ItemOut<'a> {
    if custom {
        ItemOut::CustomToolCallOutput {
            call_id,
            output,
            tag,
        }
    } else {
        ItemOut::FunctionCallOutput {
            call_id,
            output,
            tag,
        }
    }
}

/// Writes events as lines, one at a time: those of a held transcript ([`Renderer::events`]) or
/// of a stream ([`Renderer::event`]). What it keeps between events is small: the open turn, the
/// model of the last turn, the previous event's id.
pub struct Renderer<'t> {
    cwd: &'t str,
    provider: &'t str,
    turn: Option<OpenTurn>,
    turn_ids: TurnIds,
    origins: OriginCache,
    model: String,
    /// The id of the event written last (a compaction replacing through it keeps no events).
    previous: String,
    /// The ids of the freeform calls so far: their results are `custom_tool_call_output`s.
    freeform_calls: IdSet<String>,
}

struct OpenTurn {
    id: String,
    last_timestamp: String,
    last_agent_message: Option<String>,
}

impl<'t> Renderer<'t> {
    /// A renderer for a session that runs in `cwd` against the model provider `provider` (the id
    /// in Codex's config).
    pub fn new(cwd: &'t str, provider: &'t str) -> Self {
        Renderer {
            cwd,
            provider,
            turn: None,
            turn_ids: TurnIds::new(),
            origins: OriginCache::default(),
            model: FALLBACK_MODEL.to_owned(),
            previous: String::new(),
            freeform_calls: IdSet::default(),
        }
    }

    /// Writes the `session_meta` line.
    pub fn session_meta(
        &self,
        out: &mut Lines<'_>,
        id: &str,
        timestamp: &str,
        marker: &handoff_sdk::marker::OwnershipMarker,
    ) -> io::Result<()> {
        out.line(
            timestamp,
            "session_meta",
            SessionMetaOut {
                id,
                timestamp,
                cwd: self.cwd,
                originator: ORIGINATOR,
                cli_version: CLI_VERSION,
                source: SOURCE,
                model_provider: self.provider,
                marker,
            },
        )
    }

    /// Writes every event of `transcript` from `first` on (the earlier ones are context:
    /// compactions refer back to them, and the model of the last turn carries over), then closes
    /// the last turn.
    pub fn events(
        &mut self,
        out: &mut Lines<'_>,
        transcript: &Transcript,
        first: usize,
    ) -> io::Result<()> {
        let events = &transcript.events;
        for event in &events[..first] {
            self.note_model(event);
            self.note_freeform_calls(event);
        }
        for (index, event) in events.iter().enumerate().skip(first) {
            self.event(out, event, Some(&events[..index]))?;
        }
        self.close_turn(out)
    }

    fn note_freeform_calls(&mut self, event: &Event) {
        self.freeform_calls
            .extend(event.freeform_call_ids().map(str::to_owned));
    }

    /// Whether the call `call_id` answers is a freeform one.
    fn is_freeform(&self, call_id: &str) -> bool {
        !self.freeform_calls.is_empty() && self.freeform_calls.contains(call_id)
    }

    fn note_model(&mut self, event: &Event) {
        if let Body::Assistant {
            origin: Some(origin),
            ..
        } = &event.body
        {
            if let Some(model) = &origin.model {
                if self.model != *model {
                    model.clone_into(&mut self.model);
                }
            }
        }
    }

    /// Writes one event's lines. `before` is every event before it, where the caller holds them;
    /// without them, a compaction that keeps events fails (check [`Renderer::keeps_nothing`] first).
    pub fn event(
        &mut self,
        out: &mut Lines<'_>,
        event: &Event,
        before: Option<&[Event]>,
    ) -> io::Result<()> {
        let ts = event.timestamp.to_rfc3339();
        if matches!(event.body, Body::User { .. }) {
            self.close_turn(out)?;
        }
        self.note_model(event);
        self.note_freeform_calls(event);
        if self.turn.is_none() {
            self.open_turn(out, &ts)?;
        }
        match &event.body {
            Body::User { content } => self.user(out, &ts, event, content)?,
            Body::Assistant { content, origin } => {
                let origin = self.origins.raw(origin.as_ref())?;
                self.assistant(out, &ts, event, content, origin.as_deref())?;
            }
            Body::ToolResult {
                call_id,
                content,
                is_error,
            } => {
                let mut tag = tag(event, None);
                tag.is_error = *is_error;
                let custom = self.is_freeform(call_id);
                let output = match content.as_slice() {
                    [Part::Text { text }] => ToolOutput::Text(text),
                    parts => ToolOutput::Parts(parts),
                };
                out.tool_output(&ts, call_id, output, &tag, custom)?;
            }
            Body::Compaction {
                summary,
                replaces_through,
            } => {
                let mut tag = tag(event, None);
                tag.replaces_through = Some(replaces_through);
                let payload = CompactedOut {
                    message: summary,
                    replacement_history: self.replacement_history(
                        before,
                        summary,
                        replaces_through,
                    )?,
                    tag,
                };
                out.line(&ts, "compacted", payload)?;
            }
        }
        if let Some(turn) = &mut self.turn {
            turn.last_timestamp = ts;
        }
        event.id.clone_into(&mut self.previous);
        Ok(())
    }

    /// Whether a compaction replacing through `replaces_through` keeps no event: it replaces
    /// through the event written last. One that keeps events needs them held
    /// ([`Renderer::event`]'s `before`).
    pub fn keeps_nothing(&self, replaces_through: &str) -> bool {
        self.previous == replaces_through
    }

    /// Closes the last turn: the end of a write.
    pub fn finish(&mut self, out: &mut Lines<'_>) -> io::Result<()> {
        self.close_turn(out)
    }

    /// A user event: its `response_item` message and the `user_message` copy the UI draws.
    fn user(
        &mut self,
        out: &mut Lines<'_>,
        ts: &str,
        event: &Event,
        content: &[Part],
    ) -> io::Result<()> {
        let message = joined_text(content.iter().filter_map(|p| match p {
            Part::Text { text } => Some(text.as_str()),
            _ => None,
        }));
        out.user_message(ts, content, &tag(event, None), &message)
    }

    /// An assistant event: its items, and the `agent_message` copy of its text.
    fn assistant(
        &mut self,
        out: &mut Lines<'_>,
        ts: &str,
        event: &Event,
        content: &[AssistantPart],
        origin: Option<&RawValue>,
    ) -> io::Result<()> {
        for item in assistant_items(event, content, true, origin) {
            out.line(ts, "response_item", item)?;
        }
        let texts = content.iter().filter_map(|p| match p {
            AssistantPart::Text { text } => Some(text.as_str()),
            _ => None,
        });
        let message = joined_text(texts);
        if content
            .iter()
            .any(|p| matches!(p, AssistantPart::Text { .. }))
        {
            out.line(
                ts,
                "event_msg",
                EventMsgOut::AgentMessage {
                    message: message.clone(),
                },
            )?;
            if let Some(turn) = &mut self.turn {
                match &mut turn.last_agent_message {
                    Some(last) => message.as_ref().clone_into(last),
                    None => turn.last_agent_message = Some(message.into_owned()),
                }
            }
        }
        Ok(())
    }

    /// What the model sees after the compaction: the items of the events after `replaces_through`
    /// (up to this compaction), then the summary as a user message, as Codex replays them (a
    /// canonical compaction's summary is seen at its place).
    fn replacement_history(
        &self,
        before: Option<&[Event]>,
        summary: &str,
        replaces_through: &str,
    ) -> io::Result<Vec<Box<RawValue>>> {
        let kept = match before {
            Some(events) => {
                let start = events
                    .iter()
                    .position(|e| e.id == replaces_through)
                    .map_or(events.len(), |i| i + 1);
                &events[start..]
            }
            None if self.keeps_nothing(replaces_through) => &[],
            None => return Err(io::Error::other(
                "a compaction that keeps earlier events needs them (see Renderer::keeps_nothing)",
            )),
        };
        let mut items = Vec::new();
        for event in kept {
            match &event.body {
                Body::User { content } => items.push(raw(&ItemOut::Message {
                    role: "user",
                    content: content
                        .iter()
                        .map(content_item)
                        .collect::<io::Result<_>>()?,
                    tag: None,
                })?),
                Body::Assistant { content, .. } => {
                    for item in assistant_items(event, content, false, None) {
                        items.push(raw(&item)?);
                    }
                }
                Body::ToolResult {
                    call_id, content, ..
                } => {
                    let output = match content.as_slice() {
                        [Part::Text { text }] => OutputOut::Text(text),
                        parts => OutputOut::Items(
                            parts.iter().map(content_item).collect::<io::Result<_>>()?,
                        ),
                    };
                    let custom = self.is_freeform(call_id);
                    items.push(raw(&output_item(custom, call_id, output, None))?)
                }
                Body::Compaction { .. } => {}
            }
        }
        items.push(raw(&ItemOut::Message {
            role: "user",
            content: vec![ContentOut::InputText { text: summary }],
            tag: None,
        })?);
        Ok(items)
    }

    fn open_turn(&mut self, out: &mut Lines<'_>, ts: &str) -> io::Result<()> {
        let id = self.turn_ids.next();
        out.line(
            ts,
            "event_msg",
            EventMsgOut::TaskStarted {
                turn_id: &id,
                model_context_window: None,
                collaboration_mode_kind: "default",
            },
        )?;
        out.line(
            ts,
            "turn_context",
            TurnContextOut {
                turn_id: &id,
                cwd: self.cwd,
                approval_policy: "on-request",
                sandbox_policy: SandboxPolicyOut { kind: "read-only" },
                model: &self.model,
                summary: "auto",
            },
        )?;
        self.turn = Some(OpenTurn {
            id,
            last_timestamp: ts.to_owned(),
            last_agent_message: None,
        });
        Ok(())
    }

    fn close_turn(&mut self, out: &mut Lines<'_>) -> io::Result<()> {
        if let Some(turn) = self.turn.take() {
            out.line(
                &turn.last_timestamp,
                "event_msg",
                EventMsgOut::TaskComplete {
                    turn_id: &turn.id,
                    last_agent_message: turn.last_agent_message.map(Cow::Owned),
                },
            )?;
        }
        Ok(())
    }
}

/// Turn ids: UUIDv7s of the current time, as Codex makes them. The random bits are drawn once per
/// writer and a counter is folded into 56 of them, so ids stay unique within a session and a long
/// session costs no random-number syscall per turn.
struct TurnIds {
    random: [u8; 10],
    count: u64,
}

impl TurnIds {
    fn new() -> Self {
        let mut random = [0u8; 10];
        random.copy_from_slice(&uuid::Uuid::new_v4().as_bytes()[..10]);
        TurnIds { random, count: 0 }
    }

    fn next(&mut self) -> String {
        let millis = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let mut bits = self.random;
        // Bytes 3..10 are kept whole by the v7 layout (the rest lose version/variant bits).
        for (b, c) in bits[3..].iter_mut().zip(&self.count.to_be_bytes()[1..]) {
            *b ^= c;
        }
        self.count += 1;
        uuid::Builder::from_unix_timestamp_millis(millis, &bits)
            .into_uuid()
            .to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn turn_ids_are_distinct_v7_uuids() {
        let mut ids = TurnIds::new();
        let all: std::collections::HashSet<String> = (0..100_000).map(|_| ids.next()).collect();
        assert_eq!(all.len(), 100_000);
        for id in all.iter().take(10) {
            let uuid = uuid::Uuid::parse_str(id).unwrap();
            assert_eq!(uuid.get_version_num(), 7, "{id}");
        }
    }
}
