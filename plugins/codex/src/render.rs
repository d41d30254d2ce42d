//! Canonical events → rollout lines.
//!
//! A user event opens a turn (`task_started`, `turn_context`), then come its `response_item`s and
//! the `event_msg` copies Codex draws the session from (`user_message`, `agent_message`); the turn
//! ends with `task_complete`. Every line carries its event's timestamp, to the millisecond.

use std::borrow::Cow;
use std::io::{self, Write};
use std::rc::Rc;

use base64::Engine as _;
use handoff_sdk::{AssistantPart, Body, Event, Origin, Part, PluginError, Transcript};
use serde::Serialize;
use serde_json::value::RawValue;

use crate::records::*;
use crate::THINKING_PROVIDER;

/// The model named in `turn_context` when no assistant turn says which model it was.
const FALLBACK_MODEL: &str = "gpt-5";

/// Refuses what Codex cannot hold even though the target carries the feature, naming the event.
pub fn check_representable(transcript: &Transcript, first: usize) -> Result<(), PluginError> {
    for (index, event) in transcript.events.iter().enumerate().skip(first) {
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

/// Writes the lines of `transcript.events[first..]`; earlier events are context (compactions
/// refer back to them, and the model of the last turn carries over).
pub struct Renderer<'t> {
    transcript: &'t Transcript,
    cwd: &'t str,
    provider: &'t str,
    turn: Option<OpenTurn<'t>>,
    turn_ids: TurnIds,
    origins: OriginCache,
    model: Cow<'t, str>,
}

struct OpenTurn<'t> {
    id: String,
    last_timestamp: String,
    last_agent_message: Option<Cow<'t, str>>,
}

impl<'t> Renderer<'t> {
    /// A renderer over `transcript`, whose sessions run in `cwd` against the model provider
    /// `provider` (the id in Codex's config).
    pub fn new(transcript: &'t Transcript, cwd: &'t str, provider: &'t str) -> Self {
        Renderer {
            transcript,
            cwd,
            provider,
            turn: None,
            turn_ids: TurnIds::new(),
            origins: OriginCache::default(),
            model: Cow::Borrowed(FALLBACK_MODEL),
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

    /// Writes every event from `first` on, then closes the last turn.
    pub fn events(&mut self, out: &mut Lines<'_>, first: usize) -> io::Result<()> {
        for event in &self.transcript.events[..first] {
            self.note_model(event);
        }
        for event in &self.transcript.events[first..] {
            self.event(out, event)?;
        }
        self.close_turn(out)
    }

    fn note_model(&mut self, event: &'t Event) {
        if let Body::Assistant {
            origin: Some(origin),
            ..
        } = &event.body
        {
            if let Some(model) = &origin.model {
                self.model = Cow::Borrowed(model);
            }
        }
    }

    fn event(&mut self, out: &mut Lines<'_>, event: &'t Event) -> io::Result<()> {
        let ts = crate::time::format(event.timestamp);
        if matches!(event.body, Body::User { .. }) {
            self.close_turn(out)?;
        }
        self.note_model(event);
        if self.turn.is_none() {
            self.open_turn(out, &ts)?;
        }
        match &event.body {
            Body::User { content } => {
                let item = ItemOut::Message {
                    role: "user",
                    content: content.iter().map(content_item).collect(),
                    tag: Some(tag(event, None)),
                };
                out.line(&ts, "response_item", &item)?;
                let ItemOut::Message { content: items, .. } = item else {
                    unreachable!("built as a message just above")
                };
                // The data URLs were made once, for the item; the copy takes them over.
                let images = items
                    .into_iter()
                    .filter_map(|c| match c {
                        ContentOut::InputImage { image_url } => Some(image_url),
                        _ => None,
                    })
                    .collect();
                let message = joined_text(content.iter().filter_map(|p| match p {
                    Part::Text { text } => Some(text.as_str()),
                    _ => None,
                }));
                out.line(
                    &ts,
                    "event_msg",
                    EventMsgOut::UserMessage {
                        message,
                        images,
                        local_images: [],
                        text_elements: [],
                    },
                )?;
            }
            Body::Assistant { content, origin } => {
                let origin = self.origins.raw(origin.as_ref())?;
                for item in assistant_items(event, content, true, origin.as_deref()) {
                    out.line(&ts, "response_item", item)?;
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
                        &ts,
                        "event_msg",
                        EventMsgOut::AgentMessage {
                            message: message.clone(),
                        },
                    )?;
                    if let Some(turn) = &mut self.turn {
                        turn.last_agent_message = Some(message);
                    }
                }
            }
            Body::ToolResult {
                call_id,
                content,
                is_error,
            } => {
                let output = match content.as_slice() {
                    [Part::Text { text }] => OutputOut::Text(text),
                    parts => OutputOut::Items(parts.iter().map(content_item).collect()),
                };
                let mut tag = tag(event, None);
                tag.is_error = *is_error;
                let item = ItemOut::FunctionCallOutput {
                    call_id,
                    output,
                    tag: Some(tag),
                };
                out.line(&ts, "response_item", item)?;
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
                        event,
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
        Ok(())
    }

    /// What the model sees after the compaction: the summary as a user message, then the items of
    /// the events after `replaces_through` (up to this compaction), as Codex replays them.
    fn replacement_history(
        &self,
        compaction: &Event,
        summary: &str,
        replaces_through: &str,
    ) -> io::Result<Vec<Box<RawValue>>> {
        let events = &self.transcript.events;
        let start = events
            .iter()
            .position(|e| e.id == replaces_through)
            .map_or(events.len(), |i| i + 1);
        let end = events
            .iter()
            .position(|e| std::ptr::eq(e, compaction))
            .unwrap_or(events.len());
        let mut items = vec![raw(&ItemOut::Message {
            role: "user",
            content: vec![ContentOut::InputText { text: summary }],
            tag: None,
        })?];
        for event in events.get(start..end).unwrap_or_default() {
            match &event.body {
                Body::User { content } => items.push(raw(&ItemOut::Message {
                    role: "user",
                    content: content.iter().map(content_item).collect(),
                    tag: None,
                })?),
                Body::Assistant { content, .. } => {
                    for item in assistant_items(event, content, false, None) {
                        items.push(raw(&item)?);
                    }
                }
                Body::ToolResult {
                    call_id, content, ..
                } => items.push(raw(&ItemOut::FunctionCallOutput {
                    call_id,
                    output: match content.as_slice() {
                        [Part::Text { text }] => OutputOut::Text(text),
                        parts => OutputOut::Items(parts.iter().map(content_item).collect()),
                    },
                    tag: None,
                })?),
                Body::Compaction { .. } => {}
            }
        }
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
                    last_agent_message: turn.last_agent_message,
                },
            )?;
        }
        Ok(())
    }
}

/// Assistant origins as JSON, serialised once per run of equal origins: every item of an
/// assistant event carries its origin, and a session's turns mostly share one. The bytes are what
/// serialising the origin in place writes.
#[derive(Default)]
struct OriginCache {
    last: Option<(Origin, Rc<RawValue>)>,
}

impl OriginCache {
    fn raw(&mut self, origin: Option<&Origin>) -> io::Result<Option<Rc<RawValue>>> {
        let Some(origin) = origin else {
            return Ok(None);
        };
        match &self.last {
            Some((last, raw)) if last == origin => Ok(Some(Rc::clone(raw))),
            _ => {
                let raw: Rc<RawValue> = Rc::from(raw(origin)?);
                self.last = Some((origin.clone(), Rc::clone(&raw)));
                Ok(Some(raw))
            }
        }
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

/// Whether a thinking part goes to Codex: only OpenAI's own reasoning is portable to it.
pub fn thinking_is_portable(thinking: &handoff_sdk::Thinking, event: &Event) -> bool {
    let maker = thinking
        .signature
        .as_ref()
        .map(|s| s.provider.as_str())
        .or(match &event.body {
            Body::Assistant { origin, .. } => origin.as_ref().map(|o| o.provider.as_str()),
            _ => None,
        });
    maker == Some(THINKING_PROVIDER)
}

/// The items of one assistant event: runs of text become one message, then reasoning and calls
/// in order. Foreign thinking is set aside (display-only across providers).
fn assistant_items<'a>(
    event: &'a Event,
    content: &'a [AssistantPart],
    tagged: bool,
    origin: Option<&'a RawValue>,
) -> Vec<ItemOut<'a>> {
    let mut items = Vec::with_capacity(content.len());
    let mut texts: Vec<ContentOut<'a>> = Vec::new();
    let tag_for = |tagged: bool| tagged.then(|| tag(event, origin));
    let flush = |texts: &mut Vec<ContentOut<'a>>, items: &mut Vec<ItemOut<'a>>| {
        if !texts.is_empty() {
            items.push(ItemOut::Message {
                role: "assistant",
                content: std::mem::take(texts),
                tag: tag_for(tagged),
            });
        }
    };
    for part in content {
        match part {
            AssistantPart::Text { text } => texts.push(ContentOut::OutputText { text }),
            AssistantPart::Thinking(thinking) => {
                if !thinking_is_portable(thinking, event) {
                    continue;
                }
                flush(&mut texts, &mut items);
                let mut tag = tag_for(tagged);
                if let (Some(tag), Some(sig)) = (&mut tag, &thinking.signature) {
                    tag.signature_model = sig.model.as_deref();
                    tag.redacted = sig.redacted;
                }
                items.push(ItemOut::Reasoning {
                    summary: if thinking.text.is_empty() {
                        Vec::new()
                    } else {
                        vec![SummaryOut {
                            kind: "summary_text",
                            text: &thinking.text,
                        }]
                    },
                    encrypted_content: thinking.signature.as_ref().map(|s| s.value.as_str()),
                    tag,
                });
            }
            AssistantPart::ToolCall(call) => {
                flush(&mut texts, &mut items);
                items.push(ItemOut::FunctionCall {
                    name: &call.name,
                    arguments: call.arguments.to_string(),
                    call_id: &call.id,
                    tag: tag_for(tagged),
                });
            }
        }
    }
    flush(&mut texts, &mut items);
    // An assistant turn with no content at all still exists in the transcript.
    if content.is_empty() {
        items.push(ItemOut::Message {
            role: "assistant",
            content: Vec::new(),
            tag: tag_for(tagged),
        });
    }
    items
}

/// The `x-handoff-event` member of an item of `event`; `origin` is the assistant event's origin
/// as JSON (see [`OriginCache`]).
fn tag<'a>(event: &'a Event, origin: Option<&'a RawValue>) -> EventTagOut<'a> {
    EventTagOut {
        id: &event.id,
        author: event.author.as_ref(),
        origin,
        is_error: false,
        replaces_through: None,
        signature_model: None,
        redacted: false,
    }
}

fn content_item(part: &Part) -> ContentOut<'_> {
    match part {
        Part::Text { text } => ContentOut::InputText { text },
        Part::Image { media_type, data } => ContentOut::InputImage {
            image_url: Cow::Owned(format!(
                "data:{media_type};base64,{}",
                base64::engine::general_purpose::STANDARD.encode(data)
            )),
        },
        Part::ImageUrl { url } => ContentOut::InputImage {
            image_url: Cow::Borrowed(url),
        },
    }
}

fn joined_text<'a>(mut texts: impl Iterator<Item = &'a str>) -> Cow<'a, str> {
    let Some(first) = texts.next() else {
        return Cow::Borrowed("");
    };
    match texts.next() {
        None => Cow::Borrowed(first),
        Some(second) => {
            let mut all = format!("{first}\n{second}");
            for t in texts {
                all.push('\n');
                all.push_str(t);
            }
            Cow::Owned(all)
        }
    }
}

fn raw<T: Serialize>(value: &T) -> io::Result<Box<RawValue>> {
    serde_json::value::to_raw_value(value).map_err(io::Error::other)
}

/// Whether JSON writes `text` as it is (no quote, backslash or control character in it).
fn needs_no_escape(text: &str) -> bool {
    text.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\')
}

/// How many bytes of lines are gathered before they go to the file in one write.
const FLUSH_AT: usize = 1 << 20;

/// The lines being written: serialised into one large buffer (serde_json's many small writes
/// stay monomorphic and cheap) that goes to the file in writes of about [`FLUSH_AT`] bytes.
pub struct Lines<'o> {
    out: &'o mut dyn Write,
    buf: Vec<u8>,
}

impl<'o> Lines<'o> {
    /// Lines written to `out`; call [`Lines::finish`] at the end.
    pub fn new(out: &'o mut dyn Write) -> Self {
        Lines {
            out,
            buf: Vec::with_capacity(FLUSH_AT + (1 << 16)),
        }
    }

    /// Writes one record as one line.
    pub fn line<P: Serialize>(
        &mut self,
        timestamp: &str,
        kind: &'static str,
        payload: P,
    ) -> io::Result<()> {
        if needs_no_escape(timestamp) && needs_no_escape(kind) {
            // What serialising a `LineOut` writes, with the envelope's fixed keys spelled out:
            // every line has one, so this saves three key and two value escapes per line.
            self.buf.extend_from_slice(b"{\"timestamp\":\"");
            self.buf.extend_from_slice(timestamp.as_bytes());
            self.buf.extend_from_slice(b"\",\"type\":\"");
            self.buf.extend_from_slice(kind.as_bytes());
            self.buf.extend_from_slice(b"\",\"payload\":");
            serde_json::to_writer(&mut self.buf, &payload).map_err(io::Error::other)?;
            self.buf.push(b'}');
        } else {
            let line = LineOut {
                timestamp,
                kind,
                payload,
            };
            serde_json::to_writer(&mut self.buf, &line).map_err(io::Error::other)?;
        }
        self.buf.push(b'\n');
        if self.buf.len() >= FLUSH_AT {
            self.out.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }

    /// Writes what is left.
    pub fn finish(self) -> io::Result<()> {
        self.out.write_all(&self.buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spelled_out_envelope_is_what_serde_writes() {
        let payload = EventMsgOut::AgentMessage {
            message: Cow::Borrowed("a \"quoted\"\n\u{1} ✓"),
        };
        for (timestamp, kind) in [
            ("2026-11-30T00:41:53.963Z", "event_msg"),
            ("+10000-01-01T00:00:00.000Z", "event_msg"),
            ("needs \"escaping\"\n", "event_msg"),
        ] {
            let mut out = Vec::new();
            let mut lines = Lines::new(&mut out);
            lines.line(timestamp, kind, &payload).unwrap();
            lines.finish().unwrap();
            let mut want = serde_json::to_vec(&LineOut {
                timestamp,
                kind,
                payload: &payload,
            })
            .unwrap();
            want.push(b'\n');
            assert_eq!(
                String::from_utf8(out).unwrap(),
                String::from_utf8(want).unwrap()
            );
        }
    }

    #[test]
    fn a_cached_origin_is_written_as_in_place() {
        let origin = Origin {
            provider: "anthropic".into(),
            model: Some("claude \"opus\"".into()),
            api: None,
        };
        let mut cache = OriginCache::default();
        let first = cache.raw(Some(&origin)).unwrap().unwrap();
        let again = cache.raw(Some(&origin)).unwrap().unwrap();
        assert!(Rc::ptr_eq(&first, &again));
        assert_eq!(first.get(), serde_json::to_string(&origin).unwrap());
        let other = Origin {
            model: None,
            ..origin.clone()
        };
        assert_eq!(
            cache.raw(Some(&other)).unwrap().unwrap().get(),
            serde_json::to_string(&other).unwrap()
        );
        assert!(cache.raw(None).unwrap().is_none());
    }

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
