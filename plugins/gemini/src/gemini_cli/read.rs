//! A session's live messages → the canonical transcript, event by event, with the CLI's own semantics
//! (`convertSessionToClientHistory`):
//!
//! - `info` / `error` / `warning` (and unknown) messages are not conversation;
//! - a `user` message the CLI skips (its text form starts with `/`, `?`, `<session_context>`,
//!   `<hook_context>`, or is blank) is not conversation;
//! - a `gemini` message is modern (its `content` has a call or a thought part: the content is the
//!   model turn, in order) or legacy (`content`, then one call per `toolCalls`);
//! - its `thoughts` and the thought parts of its `content` (`thought` truthy) are not conversation:
//!   the CLI turns `thoughts` into thought parts and strips every thought part, signature and all,
//!   before it sends the history (measured with 0.61.0), so they are kept verbatim in
//!   `opaque["gemini-cli"]` (`thoughts`, and `thoughtParts` = `[{at, part}]` with each part's
//!   index in `content`) for the gemini-cli writer, not as canonical thinking;
//! - tool results come from `toolCalls[].result`, in `toolCalls` order, each at its call record's
//!   timestamp; a `functionResponse` in a `user` message whose call already has its result there is
//!   the CLI's duplicate (its own tool turns and every resume checkpoint write one) and is dropped
//!   (Gemini CLI 0.61.0 sends both, a request the Gemini API refuses: we read the one result;
//!   docs/live.md, "Differential tests"); one whose call has no result yet is that result (a
//!   `functionResponse` before the message of its call, which the CLI never writes, answers no
//!   earlier call: the read fails there);
//! - call ids are the ones the CLI sends: without the `<tool name>__` prefix it keeps them under.
//!
//! Each message is read from its line as its turn comes ([`Chat::each_message`]) and consumed: its
//! strings move into the events, which go out one at a time.

use std::collections::HashMap;
use std::path::Path;

use handoff_sdk::serde_json::{json, Value};
use handoff_sdk::spill::SpillSet;
use handoff_sdk::{
    AssistantPart, Author, Body, CheckedSink, Event, IdSeeds, Origin, Part, PluginError, Thinking,
    Timestamp, ToolCall, ToolInput, Transcript,
};

use super::chat::Chat;
use super::parts::{self, ReadPart, PROVIDER};
use super::record_types::{ContentIn, MessageBody, PartIn, ToolCallIn};
use super::records::Message;
use super::{OPAQUE_KEY, THOUGHTS, THOUGHT_PARTS};

/// The wire API of Gemini turns (the dialect's name).
pub(crate) const API: &str = "gemini";

/// JavaScript's truthiness of a JSON value (the CLI tests `part.thought` so).
fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(_) | Value::Object(_) => true,
    }
}

/// Hands the events of the session file `path` (indexed as `chat`) to `sink`, in order, until it
/// returns `false`: each checked as [`Transcript::validate`] checks a whole transcript, and with
/// the call ids the CLI sends. What the read keeps besides the index: the ids of calls answered and
/// results given as digests (~1.3–2.5 bytes each past a threshold), and the calls still open.
pub(crate) fn each(
    path: &Path,
    chat: &Chat,
    sink: &mut dyn FnMut(Event) -> bool,
) -> Result<(), PluginError> {
    let mut reader = Reader {
        path,
        answered: SpillSet::default(),
        given: SpillSet::default(),
        seeds: IdSeeds::default(),
        pending: HashMap::new(),
        out: Out {
            call_names: HashMap::new(),
            checked: CheckedSink::new(sink, |e| PluginError::Malformed {
                file: path.to_owned(),
                line: None,
                field: None,
                message: format!("the session does not read as a valid transcript: {e}"),
            }),
        },
    };
    chat.each_message(path, &mut |message| {
        reader.message(message)?;
        Ok(reader.out.checked.is_open())
    })
}

/// The whole transcript of the session file `path` (indexed as `chat`).
pub(crate) fn transcript(
    path: &Path,
    chat: &Chat,
    cwd: Option<String>,
) -> Result<Transcript, PluginError> {
    let mut events = Vec::new();
    each(path, chat, &mut |event| {
        events.push(event);
        true
    })?;
    let mut t = Transcript::new(events);
    t.cwd = cwd;
    Ok(t)
}

/// Where the events go: each with the call ids the CLI sends, validated, to the sink.
struct Out<'s> {
    /// The calls not answered yet: id as stored → tool name.
    call_names: HashMap<String, String>,
    checked: CheckedSink<'s>,
}

impl Out<'_> {
    fn push(&mut self, mut event: Event) -> Result<(), PluginError> {
        if !self.checked.is_open() {
            return Ok(());
        }
        strip_call_id_prefixes(&mut event, &mut self.call_names);
        self.checked.push(event)
    }
}

/// The CLI keeps a call's id as `<tool name>__<id>` and sends `<id>` (`stripToolCallIdPrefixes`,
/// on calls and on the results that answer them, a blank name counting as `generic_tool`): the
/// ids are made the ones the model sees. `names` holds the calls not answered yet.
fn strip_call_id_prefixes(event: &mut Event, names: &mut HashMap<String, String>) {
    let stripped = |id: &str, name: &str| -> Option<String> {
        let name = match name.trim() {
            "" => "generic_tool",
            trimmed => trimmed,
        };
        id.strip_prefix(name)?.strip_prefix("__").map(str::to_owned)
    };
    match &mut event.body {
        Body::Assistant { content, .. } => {
            for part in content {
                if let AssistantPart::ToolCall(call) = part {
                    names.insert(call.id.clone(), call.name.clone());
                    if let Some(id) = stripped(&call.id, &call.name) {
                        call.id = id;
                    }
                }
            }
        }
        Body::ToolResult { call_id, .. } => {
            if let Some(id) = names
                .remove(call_id.as_str())
                .and_then(|n| stripped(call_id, &n))
            {
                *call_id = id;
            }
        }
        _ => {}
    }
}

/// Whether the CLI sends a result for this call: a truthy `result` that yields parts.
fn has_result(tc: &ToolCallIn) -> bool {
    match &tc.result {
        ContentIn::Parts(p) => !p.is_empty(),
        other => other.truthy(),
    }
}

/// What `x-handoff-event` holds.
#[derive(Default, serde::Deserialize)]
struct Extras {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    author: Option<Author>,
    /// `Some(None)`: the event had no origin.
    #[serde(default, deserialize_with = "some")]
    origin: Option<Option<Origin>>,
    #[serde(default)]
    signature_models: Vec<Option<String>>,
    /// Which of the message's calls (in order, from 0) are freeform.
    #[serde(default)]
    freeform_calls: Vec<usize>,
}

fn some<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Option<Origin>>, D::Error> {
    use serde::Deserialize;
    Option::<Origin>::deserialize(d).map(Some)
}

fn extras(v: Option<&Value>) -> Extras {
    use serde::Deserialize;
    v.and_then(|v| Extras::deserialize(v).ok())
        .unwrap_or_default()
}

struct Reader<'a> {
    path: &'a Path,
    /// Calls whose `toolCalls` record holds a result (one the CLI sends), as digests: a
    /// `functionResponse` in a later `user` message answering one is the CLI's duplicate.
    answered: SpillSet,
    /// Calls whose results were handed out, as digests.
    given: SpillSet,
    seeds: IdSeeds,
    /// Calls seen without a result in `toolCalls`: id → name.
    pending: HashMap<String, String>,
    out: Out<'a>,
}

/// Where a message is, for errors.
struct At<'m> {
    line: usize,
    id: &'m str,
}

impl Reader<'_> {
    fn err(
        &self,
        at: &At<'_>,
        field: impl std::fmt::Display,
        message: impl Into<String>,
    ) -> PluginError {
        PluginError::malformed_line(
            self.path,
            at.line,
            Some(&format!("{}.{field}", at.id)),
            message,
        )
    }

    fn timestamp(
        &self,
        at: &At<'_>,
        v: Option<&str>,
        field: &str,
    ) -> Result<Timestamp, PluginError> {
        let text = v.ok_or_else(|| self.err(at, field, "missing timestamp"))?;
        Timestamp::parse(text).map_err(|e| self.err(at, field, e))
    }

    fn message(&mut self, m: Message) -> Result<(), PluginError> {
        let Message { line, id, body } = m;
        let at = At { line, id: &id };
        match body.kind.as_deref() {
            Some("user") => self.user(&at, body),
            Some("gemini") => self.gemini(&at, body),
            Some(_) => Ok(()),
            None => Err(self.err(&at, "type", "missing message type")),
        }
    }

    /// Reads the parts, each with its index in the message's `content` (for errors).
    fn read_parts(
        &self,
        at: &At<'_>,
        list: Vec<(usize, PartIn)>,
        model: Option<&str>,
    ) -> Result<Vec<ReadPart>, PluginError> {
        let mut out = Vec::with_capacity(list.len());
        for (i, p) in list {
            parts::read_part(p, &format_args!("content[{i}]"), model, &mut out)
                .map_err(|(f, e)| self.err(at, f, e))?;
        }
        Ok(out)
    }

    fn user(&mut self, at: &At<'_>, body: MessageBody) -> Result<(), PluginError> {
        let list = body.content.into_parts();
        if parts::skipped_user_text(&parts::text_form(&list)) {
            return Ok(());
        }
        let ts = self.timestamp(at, body.timestamp.as_deref(), "timestamp")?;
        let extras = extras(body.extras.as_ref());
        let mut content = Vec::new();
        for part in self.read_parts(at, list.into_iter().enumerate().collect(), None)? {
            match part {
                ReadPart::User(p) => content.push(p),
                ReadPart::Response {
                    id,
                    name,
                    content: rc,
                    is_error,
                } => {
                    let id = id.unwrap_or_default();
                    let digest = self.seeds.digest(&id);
                    if self.answered.contains(&digest) || self.given.contains(&digest) {
                        continue; // the CLI's duplicate of a result already read
                    }
                    if self.pending.remove(&id).as_deref() != Some(name.as_str()) {
                        return Err(self.err(
                            at,
                            "content",
                            format!(
                                "a functionResponse for {id:?} ({name}) answers no earlier call"
                            ),
                        ));
                    }
                    self.given.insert(digest, ());
                    let event_id = format!("{}/{id}", at.id);
                    self.out.push(Event::new(
                        event_id,
                        ts,
                        Body::ToolResult {
                            call_id: id,
                            content: rc,
                            is_error,
                        },
                    ))?;
                }
                ReadPart::Model(_) => {
                    return Err(self.err(at, "content", "a model part in a user message"));
                }
            }
        }
        if !content.is_empty() {
            let mut event = Event::new(
                extras.id.unwrap_or_else(|| at.id.to_owned()),
                ts,
                Body::User { content },
            );
            event.author = extras.author;
            self.out.push(event)?;
        }
        Ok(())
    }

    fn gemini(&mut self, at: &At<'_>, mut body: MessageBody) -> Result<(), PluginError> {
        // Known before the message is read (even one read as no turn): a later `user` message's
        // result for one of these calls is the CLI's duplicate.
        for tc in body.tool_calls.iter().filter(|tc| has_result(tc)) {
            if let Some(id) = &tc.id {
                self.answered.insert(self.seeds.digest(id), ());
            }
        }
        let ts = self.timestamp(at, body.timestamp.as_deref(), "timestamp")?;
        let model = body.model.as_deref();
        let extras = extras(body.extras.as_ref());
        let list = body.content.into_parts();
        // The CLI's test: a call part, or a part whose `thought` is truthy.
        let modern = list
            .iter()
            .any(|p| p.call.is_some() || p.thought.as_ref().is_some_and(truthy));
        // Gemini CLI never sends a thought summary to the model (it builds thought parts from
        // `thoughts` and strips every thought part at request time): they are not canonical
        // thinking, which another target would send. Kept verbatim for the gemini-cli writer.
        let thoughts = std::mem::take(&mut body.thoughts);
        // Thought parts likewise (the CLI strips them, their signature with them), kept with
        // their place in `content`.
        let mut thought_parts = Vec::new();
        let mut sent = Vec::with_capacity(list.len());
        for (i, part) in list.into_iter().enumerate() {
            if part.thought.as_ref().is_some_and(truthy) {
                thought_parts.push(json!({ "at": i, "part": part.thought_part() }));
            } else {
                sent.push((i, part));
            }
        }
        let mut content = Vec::with_capacity(sent.len() + body.tool_calls.len());
        for p in self.read_parts(at, sent, model)? {
            match p {
                ReadPart::User(Part::Text { text }) if text.is_empty() => {}
                ReadPart::User(Part::Text { text }) => content.push(AssistantPart::Text { text }),
                ReadPart::Model(part) => content.push(part),
                _ => return Err(self.err(at, "content", "a user part in a gemini message")),
            }
        }
        if !modern {
            for (i, tc) in body.tool_calls.iter().enumerate() {
                let name = tc
                    .name
                    .clone()
                    .ok_or_else(|| self.err(at, format_args!("toolCalls[{i}].name"), "missing"))?;
                content.push(AssistantPart::ToolCall(ToolCall::new(
                    tc.id.clone().unwrap_or_default(),
                    name,
                    tc.args
                        .clone()
                        .unwrap_or_else(|| Value::Object(Default::default())),
                )));
            }
        }
        if content.is_empty() {
            return Ok(()); // the CLI skips a model turn with no parts, and its results
        }
        fill_call_ids(at, &mut content, &body.tool_calls);
        if !extras.freeform_calls.is_empty() {
            let calls = content.iter_mut().filter_map(|p| match p {
                AssistantPart::ToolCall(call) => Some(call),
                _ => None,
            });
            for (n, call) in calls.enumerate() {
                if !extras.freeform_calls.contains(&n) {
                    continue;
                }
                let text = call
                    .arguments()
                    .and_then(ToolInput::freeform_from_structured)
                    .ok_or_else(|| {
                        self.err(
                            at,
                            "x-handoff-event.freeform_calls",
                            format!(
                                "call {n} ({:?}) is marked freeform but its args are not \
                                 {{\"input\": <text>}}",
                                call.id
                            ),
                        )
                    })?;
                call.input = ToolInput::Freeform(text);
            }
        }
        if !extras.signature_models.is_empty() {
            let mut it = extras.signature_models.iter();
            for part in &mut content {
                if let AssistantPart::Thinking(Thinking {
                    signature: Some(s), ..
                }) = part
                {
                    if let Some(model) = it.next() {
                        s.model = model.clone();
                    }
                }
            }
        }
        let origin = extras.origin.unwrap_or_else(|| {
            Some(Origin {
                provider: PROVIDER.to_owned(),
                model: model.map(str::to_owned),
                api: Some(API.to_owned()),
            })
        });
        let calls: Vec<(String, String)> = content
            .iter()
            .filter_map(|p| match p {
                AssistantPart::ToolCall(c) => Some((c.id.clone(), c.name.clone())),
                _ => None,
            })
            .collect();
        let mut event = Event::new(
            extras.id.unwrap_or_else(|| at.id.to_owned()),
            ts,
            Body::Assistant { content, origin },
        );
        event.author = extras.author;
        let mut native = handoff_sdk::serde_json::Map::new();
        if !thoughts.is_empty() {
            native.insert(THOUGHTS.to_owned(), Value::Array(thoughts));
        }
        if !thought_parts.is_empty() {
            native.insert(THOUGHT_PARTS.to_owned(), Value::Array(thought_parts));
        }
        if !native.is_empty() {
            event
                .opaque
                .insert(OPAQUE_KEY.to_owned(), Value::Object(native));
        }
        self.out.push(event)?;
        for (id, name) in &calls {
            if !self.answered.contains(&self.seeds.digest(id)) {
                self.pending.insert(id.clone(), name.clone());
            }
        }
        self.results(at, body.timestamp.as_deref(), body.tool_calls, &calls)
    }

    fn results(
        &mut self,
        at: &At<'_>,
        message_time: Option<&str>,
        tool_calls: Vec<ToolCallIn>,
        calls: &[(String, String)],
    ) -> Result<(), PluginError> {
        for (i, tc) in tool_calls.into_iter().enumerate() {
            if !has_result(&tc) {
                continue;
            }
            let id = tc
                .id
                .clone()
                .ok_or_else(|| self.err(at, format_args!("toolCalls[{i}].id"), "missing"))?;
            if !calls.iter().any(|(c, _)| *c == id) {
                return Err(self.err(
                    at,
                    format_args!("toolCalls[{i}].id"),
                    format!("a result for {id:?}, which this message does not call"),
                ));
            }
            let ts = self.timestamp(
                at,
                tc.timestamp.as_deref().or(message_time),
                &format!("toolCalls[{i}].timestamp"),
            )?;
            let failed = matches!(tc.status.as_deref(), Some("error" | "cancelled"));
            let extras = extras(tc.extras.as_ref());
            let name = tc.name.clone().unwrap_or_default();
            let (content, is_error) = self.result_content(at, tc.result, i, &id, &name)?;
            let event_id = extras.id.unwrap_or_else(|| format!("{}/{id}", at.id));
            let mut event = Event::new(
                event_id,
                ts,
                Body::ToolResult {
                    call_id: id.clone(),
                    content,
                    is_error: is_error || failed,
                },
            );
            event.author = extras.author;
            self.given.insert(self.seeds.digest(&id), ());
            self.out.push(event)?;
        }
        Ok(())
    }

    /// The content of one call's result. The list is cut into segments, each a
    /// `functionResponse` and the parts after it (the CLI's `[response, ...siblings]`); the
    /// segment of this call is the result. The CLI's resume checkpoint copies the whole response
    /// turn into every call of a parallel turn, so the other segments are its siblings' results.
    fn result_content(
        &self,
        at: &At<'_>,
        result: ContentIn,
        i: usize,
        id: &str,
        name: &str,
    ) -> Result<(Vec<Part>, bool), PluginError> {
        if let ContentIn::Text(s) = result {
            return Ok((vec![Part::Text { text: s }], false));
        }
        let mut segments: Vec<(Option<String>, Vec<Part>, bool)> = Vec::new();
        let mut loose = Vec::new();
        for (k, p) in result.into_parts().into_iter().enumerate() {
            let mut out = Vec::new();
            parts::read_part(
                p,
                &format_args!("toolCalls[{i}].result[{k}]"),
                None,
                &mut out,
            )
            .map_err(|(f, e)| self.err(at, f, e))?;
            for part in out {
                match part {
                    ReadPart::Response {
                        id: rid,
                        content,
                        is_error,
                        ..
                    } => segments.push((rid, content, is_error)),
                    ReadPart::User(p) => match segments.last_mut() {
                        Some((_, content, _)) => content.push(p),
                        None => loose.push(p),
                    },
                    ReadPart::Model(_) => {
                        return Err(self.err(
                            at,
                            format_args!("toolCalls[{i}].result[{k}]"),
                            "a model part in a tool result",
                        ));
                    }
                }
            }
        }
        let mine: Vec<usize> = (0..segments.len())
            .filter(|&s| segments[s].0.as_deref().is_none_or(|r| r == id))
            .collect();
        let (content, is_error) = match (mine.as_slice(), segments.len()) {
            ([], 0) => (Vec::new(), false),
            ([s], _) => {
                let (_, c, e) = segments.swap_remove(*s);
                (c, e)
            }
            ([], _) => {
                return Err(self.err(
                    at,
                    format_args!("toolCalls[{i}].result"),
                    format!("no functionResponse for {id:?} ({name})"),
                ));
            }
            _ => {
                return Err(self.err(
                    at,
                    format_args!("toolCalls[{i}].result"),
                    format!("more than one functionResponse for {id:?} ({name})"),
                ));
            }
        };
        let mut all = loose;
        all.extend(content);
        // Texts first, then images: how a function response holds them.
        let (mut texts, images): (Vec<Part>, Vec<Part>) = all
            .into_iter()
            .partition(|p| matches!(p, Part::Text { .. }));
        texts.extend(images);
        Ok((texts, is_error))
    }
}

/// A call part without an id takes the id of the `toolCalls` record at its position.
fn fill_call_ids(at: &At<'_>, content: &mut [AssistantPart], tool_calls: &[ToolCallIn]) {
    let mut k = 0;
    for part in content.iter_mut() {
        if let AssistantPart::ToolCall(c) = part {
            if c.id.is_empty() {
                c.id = tool_calls
                    .get(k)
                    .filter(|tc| tc.name.as_deref() == Some(c.name.as_str()))
                    .and_then(|tc| tc.id.clone())
                    .unwrap_or_else(|| format!("{}#{k}", at.id));
            }
            k += 1;
        }
    }
}
