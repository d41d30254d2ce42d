//! A loaded session → the canonical transcript, with the CLI's own semantics
//! (`convertSessionToClientHistory`):
//!
//! - `info` / `error` / `warning` (and unknown) messages are not conversation;
//! - a `user` message the CLI skips (its text form starts with `/`, `?`, `<session_context>`,
//!   `<hook_context>`, or is blank) is not conversation;
//! - a `gemini` message is modern (its `content` has a call or a thought part: the content is the
//!   model turn, in order) or legacy (`thoughts`, then `content`, then one call per `toolCalls`);
//! - tool results come from `toolCalls[].result`, in `toolCalls` order, each at its call record's
//!   timestamp; a `functionResponse` in a `user` message whose call already has its result there is
//!   the CLI's duplicate (its own tool turns and every resume checkpoint write one) and is dropped;
//!   one whose call has no result yet is that result.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use handoff_sdk::serde_json::{self, Value};
use handoff_sdk::{
    AssistantPart, Author, Body, Event, Origin, Part, PluginError, Timestamp, Transcript,
};

use super::parts::{self, ReadPart, PROVIDER};
use super::records::{Loaded, Message, EVENT_KEY};

/// The wire API of Gemini turns (the dialect's name).
pub(crate) const API: &str = "gemini";

/// The canonical transcript of a loaded session at `path`.
pub(crate) fn transcript(
    path: &Path,
    loaded: &Loaded,
    cwd: Option<String>,
) -> Result<Transcript, PluginError> {
    let answered = answered_calls(&loaded.messages);
    let mut reader = Reader {
        path,
        answered: &answered,
        given: HashSet::new(),
        pending: HashMap::new(),
        events: Vec::with_capacity(loaded.messages.len() + loaded.messages.len() / 2),
    };
    for message in &loaded.messages {
        reader.message(message)?;
    }
    let mut t = Transcript::new(reader.events);
    t.cwd = cwd;
    t.validate().map_err(|e| PluginError::Malformed {
        file: path.to_owned(),
        line: None,
        field: None,
        message: format!("the session does not read as a valid transcript: {e}"),
    })?;
    Ok(t)
}

/// The ids of calls whose `toolCalls` record holds a result (JavaScript-truthy).
fn answered_calls(messages: &[Message]) -> HashSet<String> {
    let mut ids = HashSet::new();
    for m in messages.iter().filter(|m| m.kind() == Some("gemini")) {
        for tc in m
            .record
            .get("toolCalls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if truthy(tc.get("result")) {
                if let Some(id) = tc.get("id").and_then(Value::as_str) {
                    ids.insert(id.to_owned());
                }
            }
        }
    }
    ids
}

fn truthy(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => false,
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Bool(b)) => *b,
        Some(_) => true,
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
    answered: &'a HashSet<String>,
    /// Calls whose results were handed out.
    given: HashSet<String>,
    /// Calls seen without a result in `toolCalls`: id → name.
    pending: HashMap<String, String>,
    events: Vec<Event>,
}

impl Reader<'_> {
    fn err(&self, m: &Message, field: &str, message: impl Into<String>) -> PluginError {
        PluginError::malformed_line(
            self.path,
            m.line,
            Some(&format!("{}.{field}", m.id())),
            message,
        )
    }

    fn timestamp(
        &self,
        m: &Message,
        v: Option<&Value>,
        field: &str,
    ) -> Result<Timestamp, PluginError> {
        let text = v
            .and_then(Value::as_str)
            .ok_or_else(|| self.err(m, field, "missing timestamp"))?;
        Timestamp::parse(text).map_err(|e| self.err(m, field, e))
    }

    fn message(&mut self, m: &Message) -> Result<(), PluginError> {
        match m.kind() {
            Some("user") => self.user(m),
            Some("gemini") => self.gemini(m),
            Some(_) => Ok(()),
            None => Err(self.err(m, "type", "missing message type")),
        }
    }

    fn read_parts(&self, m: &Message, model: Option<&str>) -> Result<Vec<ReadPart>, PluginError> {
        let list = parts::content_list(m.record.get("content"));
        let mut out = Vec::with_capacity(list.len());
        for (i, p) in list.iter().enumerate() {
            parts::read_part(p, &format!("content[{i}]"), model, &mut out)
                .map_err(|(f, e)| self.err(m, &f, e))?;
        }
        Ok(out)
    }

    fn user(&mut self, m: &Message) -> Result<(), PluginError> {
        let list = parts::content_list(m.record.get("content"));
        if parts::skipped_user_text(&parts::text_form(&list)) {
            return Ok(());
        }
        let ts = self.timestamp(m, m.record.get("timestamp"), "timestamp")?;
        let extras = extras(m.record.get(EVENT_KEY));
        let mut content = Vec::new();
        for part in self.read_parts(m, None)? {
            match part {
                ReadPart::User(p) => content.push(p),
                ReadPart::Response {
                    id,
                    name,
                    content: rc,
                    is_error,
                } => {
                    let id = id.unwrap_or_default();
                    if self.answered.contains(&id) || self.given.contains(&id) {
                        continue; // the CLI's duplicate of a result already read
                    }
                    if self.pending.remove(&id).as_deref() != Some(name.as_str()) {
                        return Err(self.err(
                            m,
                            "content",
                            format!(
                                "a functionResponse for {id:?} ({name}) answers no earlier call"
                            ),
                        ));
                    }
                    self.given.insert(id.clone());
                    self.events.push(Event::new(
                        format!("{}/{id}", m.id()),
                        ts,
                        Body::ToolResult {
                            call_id: id,
                            content: rc,
                            is_error,
                        },
                    ));
                }
                ReadPart::Model(_) => {
                    return Err(self.err(m, "content", "a model part in a user message"))
                }
            }
        }
        if !content.is_empty() {
            let mut event = Event::new(
                extras.id.unwrap_or_else(|| m.id().to_owned()),
                ts,
                Body::User { content },
            );
            event.author = extras.author;
            self.events.push(event);
        }
        Ok(())
    }

    fn gemini(&mut self, m: &Message) -> Result<(), PluginError> {
        let ts = self.timestamp(m, m.record.get("timestamp"), "timestamp")?;
        let model = m.record.get("model").and_then(Value::as_str);
        let extras = extras(m.record.get(EVENT_KEY));
        let read = self.read_parts(m, model)?;
        // The CLI's test: a call part, or a part whose `thought` is truthy.
        let modern = parts::content_list(m.record.get("content"))
            .iter()
            .any(|p| p.get("functionCall").is_some() || truthy(p.get("thought")));
        let tool_calls = m
            .record
            .get("toolCalls")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let mut content = Vec::new();
        if !modern {
            for (i, th) in m
                .record
                .get("thoughts")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
            {
                let subject = th
                    .get("subject")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let description = th
                    .get("description")
                    .and_then(Value::as_str)
                    .ok_or_else(|| self.err(m, &format!("thoughts[{i}].description"), "missing"))?;
                let text = if subject.is_empty() {
                    description.to_owned()
                } else {
                    format!("**{subject}** {description}")
                };
                content.push(AssistantPart::Thinking(handoff_sdk::Thinking {
                    text,
                    signature: None,
                }));
            }
        }
        for p in read {
            match p {
                ReadPart::User(Part::Text { text }) if text.is_empty() => {}
                ReadPart::User(Part::Text { text }) => content.push(AssistantPart::Text { text }),
                ReadPart::Model(part) => content.push(part),
                _ => return Err(self.err(m, "content", "a user part in a gemini message")),
            }
        }
        if !modern {
            for (i, tc) in tool_calls.iter().enumerate() {
                let call = serde_json::json!({"id": tc.get("id"), "name": tc.get("name"), "args": tc.get("args")});
                let mut out = Vec::new();
                parts::read_part(
                    &serde_json::json!({ "functionCall": call }),
                    &format!("toolCalls[{i}]"),
                    model,
                    &mut out,
                )
                .map_err(|(f, e)| self.err(m, &f, e))?;
                content.extend(out.into_iter().filter_map(|p| match p {
                    ReadPart::Model(part) => Some(part),
                    _ => None,
                }));
            }
        }
        if content.is_empty() {
            return Ok(()); // the CLI skips a model turn with no parts, and its results
        }
        self.fill_call_ids(m, &mut content, &tool_calls);
        if !extras.signature_models.is_empty() {
            let mut it = extras.signature_models.iter();
            for part in &mut content {
                if let AssistantPart::Thinking(handoff_sdk::Thinking {
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
            extras.id.unwrap_or_else(|| m.id().to_owned()),
            ts,
            Body::Assistant { content, origin },
        );
        event.author = extras.author;
        self.events.push(event);
        for (id, name) in &calls {
            if !self.answered.contains(id) {
                self.pending.insert(id.clone(), name.clone());
            }
        }
        self.results(m, &tool_calls, &calls)
    }

    /// A call part without an id takes the id of the `toolCalls` record at its position.
    fn fill_call_ids(&self, m: &Message, content: &mut [AssistantPart], tool_calls: &[Value]) {
        let mut k = 0;
        for part in content.iter_mut() {
            if let AssistantPart::ToolCall(c) = part {
                if c.id.is_empty() {
                    c.id = tool_calls
                        .get(k)
                        .filter(|tc| {
                            tc.get("name").and_then(Value::as_str) == Some(c.name.as_str())
                        })
                        .and_then(|tc| tc.get("id").and_then(Value::as_str))
                        .map_or_else(|| format!("{}#{k}", m.id()), str::to_owned);
                }
                k += 1;
            }
        }
    }

    fn results(
        &mut self,
        m: &Message,
        tool_calls: &[Value],
        calls: &[(String, String)],
    ) -> Result<(), PluginError> {
        for (i, tc) in tool_calls.iter().enumerate() {
            if !truthy(tc.get("result")) {
                continue;
            }
            let field = format!("toolCalls[{i}]");
            let id = tc
                .get("id")
                .and_then(Value::as_str)
                .ok_or_else(|| self.err(m, &format!("{field}.id"), "missing"))?;
            let name = tc.get("name").and_then(Value::as_str).unwrap_or_default();
            if !calls.iter().any(|(c, _)| c == id) {
                return Err(self.err(
                    m,
                    &format!("{field}.id"),
                    format!("a result for {id:?}, which this message does not call"),
                ));
            }
            let ts = self.timestamp(
                m,
                tc.get("timestamp").or(m.record.get("timestamp")),
                &format!("{field}.timestamp"),
            )?;
            let (content, mut is_error) =
                self.result_content(m, tc.get("result"), &field, id, name)?;
            is_error |= matches!(
                tc.get("status").and_then(Value::as_str),
                Some("error" | "cancelled")
            );
            let extras = extras(tc.get(EVENT_KEY));
            let mut event = Event::new(
                extras.id.unwrap_or_else(|| format!("{}/{id}", m.id())),
                ts,
                Body::ToolResult {
                    call_id: id.to_owned(),
                    content,
                    is_error,
                },
            );
            event.author = extras.author;
            self.given.insert(id.to_owned());
            self.events.push(event);
        }
        Ok(())
    }

    /// The content of one call's result. The array is cut into segments, each a
    /// `functionResponse` and the parts after it (the CLI's `[response, ...siblings]`); the
    /// segment of this call is the result. The CLI's resume checkpoint copies the whole response
    /// turn into every call of a parallel turn, so the other segments are its siblings' results.
    fn result_content(
        &self,
        m: &Message,
        result: Option<&Value>,
        field: &str,
        id: &str,
        name: &str,
    ) -> Result<(Vec<Part>, bool), PluginError> {
        if let Some(Value::String(s)) = result {
            return Ok((vec![Part::text(s.clone())], false));
        }
        let list = parts::content_list(result);
        let mut segments: Vec<(Option<String>, Vec<Part>, bool)> = Vec::new();
        let mut loose = Vec::new();
        for (k, p) in list.iter().enumerate() {
            let mut out = Vec::new();
            parts::read_part(p, &format!("{field}.result[{k}]"), None, &mut out)
                .map_err(|(f, e)| self.err(m, &f, e))?;
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
                            m,
                            &format!("{field}.result[{k}]"),
                            "a model part in a tool result",
                        ))
                    }
                }
            }
        }
        let mine: Vec<usize> = (0..segments.len())
            .filter(|&i| segments[i].0.as_deref().is_none_or(|r| r == id))
            .collect();
        let (content, is_error) = match (mine.as_slice(), segments.len()) {
            ([], 0) => (Vec::new(), false),
            ([i], _) => {
                let (_, c, e) = segments.swap_remove(*i);
                (c, e)
            }
            ([], _) => {
                return Err(self.err(
                    m,
                    &format!("{field}.result"),
                    format!("no functionResponse for {id:?} ({name})"),
                ))
            }
            _ => {
                return Err(self.err(
                    m,
                    &format!("{field}.result"),
                    format!("more than one functionResponse for {id:?} ({name})"),
                ))
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
