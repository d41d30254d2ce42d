//! The session file → the canonical transcript. The content comes from `contents` alone, parsed
//! by core's Gemini dialect; `handoff.events` only says where each event begins and ends and
//! what the wire cannot hold (ids, timestamps, authors, origins, signature models).

use std::collections::VecDeque;
use std::path::Path;

use handoff_sdk::dialect::gemini;
use handoff_sdk::serde_json::json;
use handoff_sdk::{AssistantPart, Body, Event, Part, PluginError, Transcript};

use super::records::{EventMeta, SessionFile};

fn malformed(path: &Path, field: impl Into<String>, message: impl Into<String>) -> PluginError {
    PluginError::Malformed {
        file: path.to_owned(),
        line: None,
        field: Some(field.into()),
        message: message.into(),
    }
}

/// Parses the bytes of a session file.
pub(crate) fn parse_file(path: &Path, bytes: &[u8]) -> Result<SessionFile, PluginError> {
    // serde_json's recursion limit stands: deep nesting is an error, never a stack overflow.
    // Bytes that are no JSON document are named as such; a document of the wrong shape is no
    // gemini-api session.
    handoff_sdk::serde_json::from_slice(bytes).map_err(|e| {
        handoff_sdk::document_error(path, bytes, &e).unwrap_or_else(|| PluginError::Malformed {
            file: path.to_owned(),
            line: Some(e.line()),
            field: None,
            message: format!("not a gemini-api session ({e})"),
        })
    })
}

struct Queues {
    user: VecDeque<Part>,
    model: VecDeque<AssistantPart>,
    results: VecDeque<Event>,
}

/// The transcript the file holds.
pub(crate) fn transcript(path: &Path, file: &SessionFile) -> Result<Transcript, PluginError> {
    let parsed = gemini::parse(&json!({ "contents": file.contents }))
        .map_err(|e| malformed(path, e.path.clone(), e.message.clone()))?;
    let mut q = Queues {
        user: VecDeque::new(),
        model: VecDeque::new(),
        results: VecDeque::new(),
    };
    for e in parsed.transcript.events {
        match e.body {
            Body::User { content } => q.user.extend(content),
            Body::Assistant { content, .. } => q.model.extend(content),
            Body::ToolResult { .. } => q.results.push_back(e),
            Body::Compaction { .. } => {}
        }
    }
    let mut events = Vec::with_capacity(file.handoff.events.len());
    for (i, meta) in file.handoff.events.iter().enumerate() {
        events.push(event(path, i, meta, &mut q)?);
    }
    if !(q.user.is_empty() && q.model.is_empty() && q.results.is_empty()) {
        return Err(malformed(
            path,
            "handoff.events",
            "contents hold more than handoff.events accounts for",
        ));
    }
    let mut t = Transcript::new(events);
    t.cwd = file.handoff.cwd.clone();
    t.validate()
        .map_err(|e| malformed(path, "handoff.events", e.to_string()))?;
    Ok(t)
}

fn event(path: &Path, i: usize, meta: &EventMeta, q: &mut Queues) -> Result<Event, PluginError> {
    let field = format!("handoff.events[{i}]");
    let short = |what: &str| {
        malformed(
            path,
            field.clone(),
            format!("contents hold fewer {what} than this event needs"),
        )
    };
    let body = match meta.kind.as_str() {
        "user" => {
            let n = meta.parts.unwrap_or(0);
            if q.user.len() < n {
                return Err(short("user parts"));
            }
            Body::User {
                content: q.user.drain(..n).collect(),
            }
        }
        "assistant" => {
            let n = meta.parts.unwrap_or(0);
            if q.model.len() < n {
                return Err(short("model parts"));
            }
            let mut content: Vec<AssistantPart> = q.model.drain(..n).collect();
            let mut models = meta.signature_models.iter();
            for p in &mut content {
                if let AssistantPart::Thinking(handoff_sdk::Thinking {
                    signature: Some(s), ..
                }) = p
                {
                    s.model = models.next().cloned().flatten();
                }
            }
            Body::Assistant {
                content,
                origin: meta.origin.clone().flatten(),
            }
        }
        "tool_result" => {
            let r = q
                .results
                .pop_front()
                .ok_or_else(|| short("function responses"))?;
            if let Body::ToolResult { call_id, .. } = &r.body {
                if meta.call_id.as_deref() != Some(call_id.as_str()) {
                    return Err(malformed(
                        path,
                        format!("{field}.call_id"),
                        format!("the next functionResponse answers {call_id:?}"),
                    ));
                }
            }
            r.body
        }
        other => {
            return Err(malformed(
                path,
                format!("{field}.kind"),
                format!("unknown event kind {other:?}"),
            ))
        }
    };
    let mut e = Event::new(meta.id.clone(), meta.timestamp, body);
    e.author = meta.author.clone();
    Ok(e)
}
