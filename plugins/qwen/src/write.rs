//! Canonical events → Qwen Code records: one record per event, its message the event's Gemini
//! content as core's Gemini dialect renders it (`render_each`), chained by `parentUuid`.

use handoff_sdk::dialect::{gemini, RenderOptions};
use handoff_sdk::marker::OwnershipMarker;
use handoff_sdk::serde_json::{json, Map, Value};
use handoff_sdk::{AssistantPart, Body, Event, Origin, PluginError, Transcript, EXTRAS_KEY};

use crate::chain::marker_member;
use crate::manifest::{API, CLI_VERSION, PROVIDER};
use crate::read::{AUTHOR, ORIGIN, THINKING};

/// What every record of a session says about where it belongs.
pub(crate) struct Session<'a> {
    /// The session id.
    pub id: &'a str,
    /// The working directory.
    pub cwd: &'a str,
    /// The uuid the first new record follows (`None`: it starts the session).
    pub parent: Option<String>,
    /// The marker to put on the first new record (a create's).
    pub marker: Option<&'a OwnershipMarker>,
}

/// The records of `transcript.events[from..]` (the events before `from` are the session's
/// already, and name the calls its results answer). An event Qwen Code would send nothing of
/// makes the write fail, naming it.
pub(crate) fn records(
    transcript: &Transcript,
    from: usize,
    session: Session<'_>,
) -> Result<Vec<Value>, PluginError> {
    // Every thinking goes into the file as the thought part Qwen Code keeps for its own (it sends
    // them as `reasoning_content`); its exact form rides in the record's `handoff` member.
    let options = RenderOptions {
        thinking_from: Some(makers(transcript)),
        ..RenderOptions::default()
    };
    let rendered = gemini::render_each(transcript, &options)
        .map_err(|e| PluginError::InvalidTranscript(e.to_string()))?;
    let mut contents = rendered.into_iter().filter(|(i, _)| *i >= from).peekable();
    let mut parent = session.parent.clone();
    let mut out = Vec::with_capacity(transcript.events.len() - from);
    for (index, event) in transcript.events.iter().enumerate().skip(from) {
        let content = match contents.peek() {
            Some((i, _)) if *i == index => contents.next().map(|(_, c)| c),
            _ => None,
        }
        .ok_or_else(|| {
            PluginError::InvalidTranscript(format!(
                "event {} ({}): Qwen Code would send nothing of it (no text, call or result it keeps)",
                event.id,
                event.body.kind()
            ))
        })?;
        let uuid = uuid::Uuid::new_v4().to_string();
        let mut record = record(event, content, &uuid, parent.as_deref(), &session);
        if out.is_empty() {
            if let (Some(marker), Value::Object(map)) = (session.marker, &mut record) {
                let (key, value) = marker_member(marker);
                map.insert(key, value);
            }
        }
        out.push(record);
        parent = Some(uuid);
    }
    Ok(out)
}

/// Every provider that made a thinking or an assistant turn of `transcript`.
fn makers(transcript: &Transcript) -> Vec<String> {
    let mut makers: Vec<String> = Vec::new();
    for event in &transcript.events {
        let Body::Assistant { content, origin } = &event.body else {
            continue;
        };
        let signed = content.iter().filter_map(|p| match p {
            AssistantPart::Thinking(t) => t.signature.as_ref().map(|s| s.provider.clone()),
            _ => None,
        });
        for maker in origin.iter().map(|o| o.provider.clone()).chain(signed) {
            if !makers.contains(&maker) {
                makers.push(maker);
            }
        }
    }
    makers
}

/// The record of one event.
fn record(
    event: &Event,
    message: Value,
    uuid: &str,
    parent: Option<&str>,
    session: &Session<'_>,
) -> Value {
    let (kind, provenance) = match &event.body {
        Body::User { .. } | Body::Compaction { .. } => ("user", "real_user"),
        Body::Assistant { .. } => ("assistant", "assistant_output"),
        Body::ToolResult { .. } => ("tool_result", "tool_result"),
    };
    let mut record = Map::new();
    record.insert("uuid".into(), uuid.into());
    record.insert("parentUuid".into(), parent.map_or(Value::Null, Value::from));
    record.insert("sessionId".into(), session.id.into());
    record.insert("timestamp".into(), event.timestamp.to_rfc3339().into());
    record.insert("type".into(), kind.into());
    record.insert("provenance".into(), provenance.into());
    record.insert("cwd".into(), session.cwd.into());
    record.insert("version".into(), CLI_VERSION.into());
    let mut extras = Map::new();
    if let Body::Assistant { origin, .. } = &event.body {
        let model = origin.as_ref().and_then(|o| o.model.as_deref());
        if let Some(model) = model {
            record.insert("model".into(), model.into());
        }
        let read_as = Origin {
            provider: PROVIDER.to_owned(),
            model: model.map(str::to_owned),
            api: Some(API.to_owned()),
        };
        if origin.as_ref() != Some(&read_as) {
            extras.insert(ORIGIN.into(), json!(origin));
        }
        let thinking: Vec<Value> = content_of(&event.body)
            .iter()
            .enumerate()
            .filter_map(|(at, p)| match p {
                AssistantPart::Thinking(t) => Some(json!({"at": at, "part": t})),
                _ => None,
            })
            .collect();
        if !thinking.is_empty() {
            extras.insert(THINKING.into(), Value::Array(thinking));
        }
    }
    record.insert("message".into(), message);
    if let Body::ToolResult {
        call_id, is_error, ..
    } = &event.body
    {
        let status = if *is_error { "error" } else { "success" };
        record.insert(
            "toolCallResult".into(),
            json!({"callId": call_id, "status": status}),
        );
        record.insert("executionStatus".into(), status.into());
    }
    if let Some(author) = &event.author {
        extras.insert(AUTHOR.into(), json!(author));
    }
    if !extras.is_empty() {
        record.insert(EXTRAS_KEY.into(), Value::Object(extras));
    }
    Value::Object(record)
}

/// An assistant turn's parts (none for another event).
fn content_of(body: &Body) -> &[AssistantPart] {
    match body {
        Body::Assistant { content, .. } => content,
        _ => &[],
    }
}
