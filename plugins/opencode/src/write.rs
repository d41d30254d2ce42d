//! Writing canonical events as OpenCode 1.18.33's rows, in one transaction.
//!
//! An assistant event is one assistant message (`step-start`, its text and tool parts in order,
//! `step-finish`); each tool call is one `tool` part whose state the call's result completes, so
//! a result must follow its call's turn, in the order of the calls. A user event is one user
//! message (text parts, images as file parts with a data URL). What the rows cannot say exactly
//! (a timestamp OpenCode's order needs moved, the origin) rides in a `handoff` member of the
//! message's `data`, which OpenCode never sends.

use std::path::Path;

use base64::Engine as _;
use handoff_sdk::serde_json::{json, Value};
use handoff_sdk::{AssistantPart, Body, Event, Part, PluginError, ToolInput, EXTRAS_KEY};
use rusqlite::{params, Connection, Transaction, TransactionBehavior};

use crate::ids::{now_ms, Ids};
use crate::schema::db_error;

/// A tool part waiting for its result: its row and state.
struct OpenCall {
    part_id: String,
    call_id: String,
    data: Value,
}

/// Rows being written into one session.
pub struct Rows<'a> {
    path: &'a Path,
    session: String,
    cwd: String,
    ids: Ids,
    /// The last `time_created` written: OpenCode orders messages by it.
    last_time: i64,
    last_user: Option<String>,
    open: Vec<OpenCall>,
    /// Index of the event being written, for errors.
    index: usize,
}

fn refuse(index: usize, event: &Event, why: impl Into<String>) -> PluginError {
    PluginError::InvalidTranscript(format!(
        "event {index} ({}, {}): OpenCode cannot carry it: {}",
        event.id,
        event.body.kind(),
        why.into()
    ))
}

impl<'a> Rows<'a> {
    /// Rows of session `session` whose messages so far end at `last_time`.
    pub fn new(
        path: &'a Path,
        session: &str,
        cwd: &str,
        last_time: i64,
        last_user: Option<String>,
    ) -> Self {
        Rows {
            path,
            session: session.to_owned(),
            cwd: cwd.to_owned(),
            ids: Ids::new(),
            last_time,
            last_user,
            open: Vec::new(),
            index: 0,
        }
    }

    /// The `time_created` of an event's message, and its own timestamp when that differs:
    /// never before the previous message (OpenCode orders by it) and never in the future (the
    /// prompt OpenCode adds on resume must be its newest user message, or it answers nothing).
    fn time_for(&mut self, event: &Event) -> (i64, Option<i64>) {
        let ms = event.timestamp.millis();
        let at = ms.min(now_ms()).max(self.last_time);
        self.last_time = at;
        (at, (at != ms).then_some(ms))
    }

    /// Writes `events`, starting at index `first` of the whole transcript.
    pub fn write(
        &mut self,
        tx: &Transaction<'_>,
        events: &[Event],
        first: usize,
    ) -> Result<(), PluginError> {
        for (offset, event) in events.iter().enumerate() {
            self.push(tx, event, first + offset)?;
        }
        self.finish()
    }

    /// Writes `event`, at `index` of the whole transcript.
    pub fn push(
        &mut self,
        tx: &Transaction<'_>,
        event: &Event,
        index: usize,
    ) -> Result<(), PluginError> {
        self.index = index;
        match &event.body {
            Body::ToolResult { .. } => self.result(tx, event),
            _ => {
                self.require_answered(event)?;
                match &event.body {
                    Body::User { content } => self.user(tx, event, content),
                    Body::Assistant { content, origin } => {
                        self.assistant(tx, event, content, origin.as_ref())
                    }
                    _ => Err(refuse(self.index, event, "a compaction")),
                }
            }
        }
    }

    /// The end of the events: a call without its result is refused.
    pub fn finish(&self) -> Result<(), PluginError> {
        match self.open.first() {
            Some(call) => Err(PluginError::InvalidTranscript(format!(
                "tool call {} has no result: OpenCode keeps a call and its result in one part and \
                 would send a call without one as interrupted",
                call.call_id
            ))),
            None => Ok(()),
        }
    }

    fn require_answered(&self, event: &Event) -> Result<(), PluginError> {
        match self.open.first() {
            Some(call) => Err(refuse(
                self.index,
                event,
                format!(
                    "it comes before the result of tool call {}: OpenCode keeps a result with its call",
                    call.call_id
                ),
            )),
            None => Ok(()),
        }
    }

    fn insert_message(
        &mut self,
        tx: &Transaction<'_>,
        id: &str,
        time: i64,
        data: &Value,
    ) -> Result<(), PluginError> {
        tx.execute(
            "INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?1, ?2, ?3, ?3, ?4)",
            params![id, self.session, time, data.to_string()],
        )
        .map_err(|e| db_error(self.path, e))?;
        Ok(())
    }

    fn insert_part(
        &mut self,
        tx: &Transaction<'_>,
        message: &str,
        time: i64,
        data: &Value,
    ) -> Result<String, PluginError> {
        let id = self.ids.ascending("prt");
        tx.execute(
            "INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES (?1, ?2, ?3, ?4, ?4, ?5)",
            params![id, message, self.session, time, data.to_string()],
        )
        .map_err(|e| db_error(self.path, e))?;
        Ok(id)
    }

    fn user(
        &mut self,
        tx: &Transaction<'_>,
        event: &Event,
        content: &[Part],
    ) -> Result<(), PluginError> {
        let mut parts = Vec::new();
        for part in content {
            match part {
                // OpenCode sends no empty text part.
                Part::Text { text } if text.is_empty() => {
                    return Err(refuse(
                        self.index,
                        event,
                        "an empty text part (OpenCode leaves it out)",
                    ))
                }
                Part::Text { text } => parts.push(json!({"type": "text", "text": text})),
                Part::Image { media_type, data } => parts.push(json!({
                    "type": "file",
                    "mime": media_type,
                    "filename": "image",
                    "url": format!(
                        "data:{media_type};base64,{}",
                        base64::engine::general_purpose::STANDARD.encode(data)
                    ),
                })),
                Part::ImageUrl { .. } => return Err(refuse(self.index, event, "an image by URL")),
            }
        }
        if parts.is_empty() {
            return Err(refuse(
                self.index,
                event,
                "a user turn with no part (OpenCode leaves it out)",
            ));
        }
        let (time, moved) = self.time_for(event);
        let id = self.ids.ascending("msg");
        let mut data = json!({"role": "user", "time": {"created": time}, "agent": "build"});
        if let Some(ms) = moved {
            data[EXTRAS_KEY] = json!({"timestamp": ms});
        }
        self.insert_message(tx, &id, time, &data)?;
        for part in parts {
            self.insert_part(tx, &id, time, &part)?;
        }
        self.last_user = Some(id);
        Ok(())
    }

    fn assistant(
        &mut self,
        tx: &Transaction<'_>,
        event: &Event,
        content: &[AssistantPart],
        origin: Option<&handoff_sdk::Origin>,
    ) -> Result<(), PluginError> {
        let (time, moved) = self.time_for(event);
        let id = self.ids.ascending("msg");
        let calls = content
            .iter()
            .any(|p| matches!(p, AssistantPart::ToolCall(_)));
        let mut extras = json!({"origin": origin});
        if let Some(ms) = moved {
            extras["timestamp"] = json!(ms);
        }
        let mut data = json!({
            "role": "assistant",
            "mode": "build",
            "agent": "build",
            "path": {"cwd": self.cwd, "root": "/"},
            "cost": 0,
            "tokens": {"input": 0, "output": 0, "reasoning": 0, "cache": {"read": 0, "write": 0}},
            "modelID": origin.and_then(|o| o.model.clone()).unwrap_or_else(|| "unknown".into()),
            "providerID": origin.map_or_else(|| "unknown".to_owned(), |o| o.provider.clone()),
            "time": {"created": time, "completed": time},
            "finish": if calls { "tool-calls" } else { "stop" },
        });
        if let Some(parent) = &self.last_user {
            data["parentID"] = json!(parent);
        }
        data[EXTRAS_KEY] = extras;
        self.insert_message(tx, &id, time, &data)?;
        self.insert_part(tx, &id, time, &json!({"type": "step-start"}))?;
        for part in content {
            match part {
                AssistantPart::Text { text } => {
                    self.insert_part(tx, &id, time, &json!({"type": "text", "text": text, "time": {"start": time, "end": time}}))?;
                }
                AssistantPart::ToolCall(call) => {
                    let input = call.structured_arguments().into_owned();
                    if !input.is_object() {
                        return Err(refuse(self.index, event, format!(
                            "tool call {} has arguments that are not a JSON object (OpenCode's tool input is one)",
                            call.id
                        )));
                    }
                    let mut data = json!({
                        "type": "tool",
                        "callID": call.id,
                        "tool": call.name,
                        "state": {"status": "running", "input": input, "time": {"start": time}},
                    });
                    // A freeform call goes as its structured form, `{"input": <text>}` (what
                    // OpenCode sends), marked so it reads back as the freeform call.
                    if matches!(call.input, ToolInput::Freeform(_)) {
                        data[EXTRAS_KEY] = json!({"freeform": true});
                    }
                    let part_id = self.insert_part(tx, &id, time, &data)?;
                    self.open.push(OpenCall {
                        part_id,
                        call_id: call.id.clone(),
                        data,
                    });
                }
                AssistantPart::Thinking(thinking) => {
                    let mut part = json!({"type": "reasoning", "text": thinking.text, "time": {"start": time, "end": time}});
                    if let Some(signature) = &thinking.signature {
                        let Some(metadata) = signature_metadata(signature) else {
                            return Err(refuse(self.index, event, format!(
                                "a thinking signature of {} (OpenCode keeps Anthropic's, OpenAI's and Google's)",
                                signature.provider
                            )));
                        };
                        part["metadata"] = metadata;
                        part[EXTRAS_KEY] = json!({"signature_model": signature.model, "redacted": signature.redacted});
                    }
                    self.insert_part(tx, &id, time, &part)?;
                }
                AssistantPart::WebSearch(_) => {
                    return Err(refuse(self.index, event, "a web search"))
                }
            }
        }
        self.insert_part(
            tx,
            &id,
            time,
            &json!({
                "type": "step-finish",
                "reason": if calls { "tool-calls" } else { "stop" },
                "cost": 0,
                "tokens": {"input": 0, "output": 0, "reasoning": 0, "cache": {"read": 0, "write": 0}},
            }),
        )?;
        Ok(())
    }

    fn result(&mut self, tx: &Transaction<'_>, event: &Event) -> Result<(), PluginError> {
        let Body::ToolResult {
            call_id,
            content,
            is_error,
        } = &event.body
        else {
            unreachable!("only tool results come here")
        };
        let Some(at) = self.open.iter().position(|c| &c.call_id == call_id) else {
            return Err(refuse(
                self.index,
                event,
                format!(
                    "it answers tool call {call_id}, which is not a call of the turn just before"
                ),
            ));
        };
        if at != 0 {
            return Err(refuse(self.index, event, format!(
                "it answers tool call {call_id} before tool call {} of the same turn (OpenCode sends results in the calls' order)",
                self.open[0].call_id
            )));
        }
        let text =
            match content.as_slice() {
                [] => String::new(),
                [Part::Text { text }] => text.clone(),
                _ => return Err(refuse(
                    self.index,
                    event,
                    "a result of more than one text part (OpenCode's tool output is one string)",
                )),
            };
        let mut call = self.open.remove(0);
        let start = call
            .data
            .pointer("/state/time/start")
            .cloned()
            .unwrap_or(json!(0));
        let input = call
            .data
            .pointer("/state/input")
            .cloned()
            .unwrap_or(json!({}));
        let end = event.timestamp.millis();
        call.data["state"] = if *is_error {
            json!({"status": "error", "input": input, "error": text, "time": {"start": start, "end": end}})
        } else {
            json!({"status": "completed", "input": input, "output": text, "title": "", "metadata": {}, "time": {"start": start, "end": end}})
        };
        if text.is_empty() && !content.is_empty() {
            if !call.data[EXTRAS_KEY].is_object() {
                call.data[EXTRAS_KEY] = json!({});
            }
            call.data[EXTRAS_KEY]["empty_text"] = json!(true);
        }
        let updated = tx
            .execute(
                "UPDATE part SET data = ?1, time_updated = ?2 WHERE id = ?3 AND session_id = ?4",
                params![call.data.to_string(), now_ms(), call.part_id, self.session],
            )
            .map_err(|e| db_error(self.path, e))?;
        if updated != 1 {
            return Err(PluginError::Other(format!(
                "{}: tool part {} of session {} is gone",
                self.path.display(),
                call.part_id,
                self.session
            )));
        }
        Ok(())
    }
}

/// A signature where OpenCode's provider of its maker keeps it in a reasoning part's
/// `metadata` (and sends it back from): Anthropic's `signature` (`redactedData` for redacted
/// thinking), OpenAI's `reasoningEncryptedContent`, Google's `thoughtSignature`.
fn signature_metadata(signature: &handoff_sdk::Signature) -> Option<Value> {
    let member = match (signature.provider.as_str(), signature.redacted) {
        ("anthropic", false) => "signature",
        ("anthropic", true) => "redactedData",
        ("openai", _) => "reasoningEncryptedContent",
        ("google", _) => "thoughtSignature",
        _ => return None,
    };
    Some(json!({ signature.provider.clone(): { member: signature.value } }))
}

/// Begins the write transaction: `IMMEDIATE` takes the write lock at once (waiting up to the
/// busy timeout for a running OpenCode), so nothing read under it changes before the commit.
pub fn begin<'c>(
    path: &Path,
    connection: &'c mut Connection,
) -> Result<Transaction<'c>, PluginError> {
    connection
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(|e| db_error(path, e))
}

/// The session row of a new session.
pub fn insert_session(
    path: &Path,
    tx: &Transaction<'_>,
    id: &str,
    directory: &str,
    title: &str,
    created: i64,
) -> Result<(), PluginError> {
    let now = now_ms();
    // OpenCode's project of a folder outside any git repository.
    tx.execute(
        "INSERT OR IGNORE INTO project (id, worktree, time_created, time_updated, sandboxes) VALUES ('global', '/', ?1, ?1, '[]')",
        params![now],
    )
    .map_err(|e| db_error(path, e))?;
    let slug = format!("handoff-{}", &id[id.len() - 6..]);
    tx.execute(
        "INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated) \
         VALUES (?1, 'global', ?2, ?3, ?4, ?5, ?6, ?7)",
        params![id, slug, directory, title, crate::OPENCODE_VERSION, created, now],
    )
    .map_err(|e| db_error(path, e))?;
    Ok(())
}
