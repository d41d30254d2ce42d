//! Rollout lines → canonical events.
//!
//! The model's history is the `response_item`s (and `compacted`), replayed in file order; the
//! `event_msg` copies are for drawing the UI and are not read as history. Developer and system
//! messages are the CLI's instructions, and user messages the CLI injected (environment context)
//! are recognised by the rule in [`is_injected`]; both are set aside. Every line must be a whole
//! JSON record: a bad line is an error naming the file and its 1-based line, never skipped.

use std::collections::{HashMap, HashSet};
use std::io::BufRead;
use std::path::Path;

use base64::Engine as _;
use handoff_sdk::marker::OwnershipMarker;
use handoff_sdk::{
    AssistantPart, Body, Event, Origin, Part, PluginError, Signature, Thinking, Timestamp,
    ToolCall, Transcript,
};
use serde::Deserialize;

use crate::records::*;
use crate::THINKING_PROVIDER;

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

/// Reads a whole rollout into a transcript, streaming it line by line.
pub fn read_rollout(path: &Path) -> Result<Transcript, PluginError> {
    let file = std::fs::File::open(path).map_err(|e| PluginError::io(path, &e))?;
    let mut reader = std::io::BufReader::with_capacity(1 << 16, file);
    let mut state = ReadState::new(path);
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

/// How the events being built are grouped.
#[derive(PartialEq)]
enum Group {
    /// Items tagged with this canonical event id.
    Tagged(String),
    /// Untagged assistant-side items (message, reasoning, call) of one model response.
    UntaggedAssistant,
    /// An event that takes no more items.
    Closed,
}

struct ReadState<'p> {
    path: &'p Path,
    header: Option<Header>,
    provider: String,
    model: Option<String>,
    events: Vec<Event>,
    group: Group,
    ids: HashSet<String>,
    failed_calls: HashSet<String>,
    call_results: HashMap<String, usize>,
}

impl<'p> ReadState<'p> {
    fn new(path: &'p Path) -> Self {
        ReadState {
            path,
            header: None,
            provider: THINKING_PROVIDER.to_owned(),
            model: None,
            events: Vec::new(),
            group: Group::Closed,
            ids: HashSet::new(),
            failed_calls: HashSet::new(),
            call_results: HashMap::new(),
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
        let (ts, kind, payload) = envelope(path, n, bytes)?;
        match kind.as_ref() {
            "response_item" => {
                let item: ItemIn<'_> = payload_as(path, n, payload)?;
                self.item(n, ts, item)
            }
            "compacted" => {
                let compacted: CompactedIn = payload_as(path, n, payload)?;
                self.compacted(n, ts, compacted)
            }
            "turn_context" => {
                let context: TurnContextIn = payload_as(path, n, payload)?;
                if context.model.is_some() {
                    self.model = context.model;
                }
                Ok(())
            }
            "event_msg" => {
                let event: EventMsgIn<'_> = payload_as(path, n, payload)?;
                if event.kind.as_deref() == Some("item_completed") {
                    if let Some(EventItemIn {
                        id: Some(id),
                        status: Some(status),
                    }) = event.item
                    {
                        if status == "failed" {
                            self.failed_calls.insert(id);
                        }
                    }
                }
                Ok(())
            }
            // A second session_meta (a forked history's parent) is not history.
            "session_meta" => Ok(()),
            // Records that are not model history: world_state, token_usage_record, and record
            // types of later Codex versions. Their envelope was checked above.
            _ => Ok(()),
        }
    }

    fn item(&mut self, n: usize, ts: Timestamp, item: ItemIn<'_>) -> Result<(), PluginError> {
        let path = self.path;
        let kind = item
            .kind
            .as_deref()
            .ok_or_else(|| missing(path, n, "payload.type"))?;
        let field_missing = |field: &str| missing(path, n, &format!("payload.{field}"));
        match kind {
            "message" => {
                let role = item.role.as_deref().ok_or_else(|| field_missing("role"))?;
                match role {
                    "developer" | "system" => Ok(()),
                    "user" => {
                        if item.tag.is_none() && is_injected(&item) {
                            return Ok(());
                        }
                        let content = item
                            .content
                            .as_deref()
                            .ok_or_else(|| field_missing("content"))?;
                        let parts = user_parts(path, n, content)?;
                        self.push(n, ts, item.tag, item.id, Body::User { content: parts })
                    }
                    "assistant" => {
                        let content = item
                            .content
                            .as_deref()
                            .ok_or_else(|| field_missing("content"))?;
                        let mut parts = Vec::with_capacity(content.len());
                        for (i, c) in content.iter().enumerate() {
                            match (c.kind.as_deref(), &c.text) {
                                (Some("output_text" | "input_text"), Some(text)) => {
                                    parts.push(AssistantPart::Text { text: text.clone() })
                                }
                                (Some("refusal"), _) => {
                                    return Err(PluginError::malformed_line(
                                        path,
                                        n,
                                        Some(&format!("payload.content[{i}]")),
                                        "a refusal has no canonical form",
                                    ))
                                }
                                _ => return Err(bad_content(path, n, i, c)),
                            }
                        }
                        self.push_assistant(n, ts, item.tag, item.id, parts, content.is_empty())
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
                let summary = item.summary.as_deref().unwrap_or_default();
                let text = summary
                    .iter()
                    .filter_map(|s| s.text.as_deref())
                    .collect::<Vec<_>>()
                    .join("\n\n");
                let (signature_model, redacted) = match &item.tag {
                    Some(tag) => (tag.signature_model.clone(), tag.redacted),
                    None => (self.model.clone(), text.is_empty()),
                };
                let signature = item.encrypted_content.clone().map(|value| Signature {
                    provider: THINKING_PROVIDER.to_owned(),
                    model: signature_model,
                    value,
                    redacted,
                });
                let part = AssistantPart::Thinking(Thinking { text, signature });
                self.push_assistant(n, ts, item.tag, item.id, vec![part], false)
            }
            "function_call" | "custom_tool_call" => {
                let name = item.name.clone().ok_or_else(|| field_missing("name"))?;
                let call_id = item
                    .call_id
                    .clone()
                    .ok_or_else(|| field_missing("call_id"))?;
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
                        item.input.clone().ok_or_else(|| field_missing("input"))?,
                    )
                };
                let part = AssistantPart::ToolCall(ToolCall {
                    id: call_id,
                    name,
                    arguments,
                });
                self.push_assistant(n, ts, item.tag, item.id, vec![part], false)
            }
            "function_call_output" | "custom_tool_call_output" => {
                let call_id = item
                    .call_id
                    .clone()
                    .ok_or_else(|| field_missing("call_id"))?;
                let content = match &item.output {
                    None => return Err(field_missing("output")),
                    Some(OutputIn::Text(text)) => vec![Part::Text { text: text.clone() }],
                    Some(OutputIn::Items(items)) => user_parts(path, n, items)?,
                };
                let is_error = item.tag.as_ref().is_some_and(|t| t.is_error);
                let index = self.events.len();
                self.call_results.insert(call_id.clone(), index);
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
        compacted: CompactedIn,
    ) -> Result<(), PluginError> {
        let path = self.path;
        let summary = compacted
            .message
            .ok_or_else(|| missing(path, n, "payload.message"))?;
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
            None => match self.events.last() {
                Some(last) => last.id.clone(),
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
        item_id: Option<String>,
        parts: Vec<AssistantPart>,
        empty_message: bool,
    ) -> Result<(), PluginError> {
        let group = match &tag {
            Some(t) => Group::Tagged(t.id.clone()),
            None => Group::UntaggedAssistant,
        };
        if group == self.group {
            if let Some(Event {
                body: Body::Assistant { content, .. },
                ..
            }) = self.events.last_mut()
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
        self.group = group;
        Ok(())
    }

    /// Starts a new event.
    fn push(
        &mut self,
        n: usize,
        ts: Timestamp,
        tag: Option<EventTag>,
        item_id: Option<String>,
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
                (tag.id.clone(), tag.author, Group::Tagged(tag.id))
            }
            None => {
                let id = match item_id {
                    Some(id) if !self.ids.contains(&id) => id,
                    _ => format!("line-{n}"),
                };
                self.ids.insert(id.clone());
                (id, None, Group::Closed)
            }
        };
        let mut event = Event::new(id, ts, body);
        event.author = author;
        self.events.push(event);
        self.group = group;
        Ok(())
    }

    fn finish(mut self) -> Result<Transcript, PluginError> {
        let header = self.header.ok_or_else(|| PluginError::Malformed {
            file: self.path.to_owned(),
            line: None,
            field: None,
            message: "no session_meta line".into(),
        })?;
        // The CLI marks a failed tool only in an item_completed event; map it onto the result.
        for call in &self.failed_calls {
            if let Some(&i) = self.call_results.get(call) {
                if let Body::ToolResult { is_error, .. } = &mut self.events[i].body {
                    *is_error = true;
                }
            }
        }
        let mut transcript = Transcript::new(self.events);
        transcript.cwd = Some(header.cwd);
        transcript.validate().map_err(|e| PluginError::Malformed {
            file: self.path.to_owned(),
            line: None,
            field: Some(e.field.clone()),
            message: format!("the history is not a valid transcript: {e}"),
        })?;
        Ok(transcript)
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

fn bad_content(path: &Path, n: usize, i: usize, c: &ContentIn) -> PluginError {
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

fn user_parts(path: &Path, n: usize, content: &[ContentIn]) -> Result<Vec<Part>, PluginError> {
    let mut parts = Vec::with_capacity(content.len());
    for (i, c) in content.iter().enumerate() {
        match (c.kind.as_deref(), &c.text, &c.image_url) {
            (Some("input_text" | "output_text"), Some(text), _) => {
                parts.push(Part::Text { text: text.clone() })
            }
            (Some("input_image"), _, Some(url)) => parts.push(image_part(url).map_err(|m| {
                PluginError::malformed_line(
                    path,
                    n,
                    Some(&format!("payload.content[{i}].image_url")),
                    m,
                )
            })?),
            _ => return Err(bad_content(path, n, i, c)),
        }
    }
    Ok(parts)
}

/// A `data:<type>;base64,<bytes>` URL becomes image bytes; any other URL stays a URL.
pub fn image_part(url: &str) -> Result<Part, String> {
    let Some(rest) = url.strip_prefix("data:") else {
        return Ok(Part::ImageUrl {
            url: url.to_owned(),
        });
    };
    let (media_type, data) = rest.split_once(";base64,").ok_or_else(|| {
        "a data: URL that is not base64 (expected data:<type>;base64,…)".to_owned()
    })?;
    let data = base64::engine::general_purpose::STANDARD
        .decode(data)
        .map_err(|e| format!("the image data is not base64: {e}"))?;
    Ok(Part::Image {
        media_type: media_type.to_owned(),
        data,
    })
}
