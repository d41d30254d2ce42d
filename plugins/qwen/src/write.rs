//! Canonical events → Qwen Code records: one record per event, its message the event's Gemini
//! content as core's Gemini dialect renders it (`render_event`), chained by `parentUuid`; from a
//! held transcript ([`records`]) or as the events arrive ([`write_stream`]).

use std::collections::HashMap;
use std::io::{self, Write};

use handoff_sdk::dialect::{gemini, RenderOptions};
use handoff_sdk::marker::OwnershipMarker;
use handoff_sdk::serde_json::{self, json, Map, Value};
use handoff_sdk::stream_stop::Stop;
use handoff_sdk::{AssistantPart, Body, Event, EventStream, Origin, PluginError, EXTRAS_KEY};

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

/// The records of `events`, the first of them event `first_index` of its session; `names` are
/// the tool names of the session's calls before them that no result answers yet (what a result
/// among `events` may answer besides their own calls). An event Qwen Code would send nothing of
/// makes the write fail, naming it.
pub(crate) fn records(
    events: &[Event],
    first_index: usize,
    mut names: HashMap<String, String>,
    session: Session<'_>,
) -> Result<Vec<Value>, PluginError> {
    for event in events {
        names.extend(tool_calls(event).map(|(id, name)| (id.to_owned(), name.to_owned())));
    }
    let mut writer = RecordWriter::new(session);
    let mut out = Vec::with_capacity(events.len());
    for (k, event) in events.iter().enumerate() {
        let call_name = match &event.body {
            Body::ToolResult { call_id, .. } => names.get(call_id.as_str()).map(String::as_str),
            _ => None,
        };
        out.push(writer.record(first_index + k, event, call_name)?);
    }
    Ok(out)
}

/// Writes the records of `first` and every event after it in `events` as they arrive, one line
/// each. Besides the parent's uuid it keeps the names of the calls not answered yet (a result's
/// `functionResponse` names its tool), each dropped once its result is written.
pub(crate) fn write_stream(
    out: &mut dyn Write,
    first: Event,
    events: &mut dyn EventStream,
    session: Session<'_>,
) -> Result<(), Stop> {
    let mut writer = RecordWriter::new(session);
    let mut open_calls: HashMap<String, String> = HashMap::new();
    let mut next = Some(first);
    let mut index = 0;
    while let Some(event) = next {
        let call_name = match &event.body {
            Body::ToolResult { call_id, .. } => open_calls.remove(call_id),
            _ => None,
        };
        let record = writer
            .record(index, &event, call_name.as_deref())
            .map_err(Stop::Refused)?;
        write_line(out, &record)?;
        open_calls.extend(tool_calls(&event).map(|(id, name)| (id.to_owned(), name.to_owned())));
        index += 1;
        next = events.next_event().map_err(Stop::Refused)?;
    }
    Ok(())
}

/// Writes one record as a JSONL line.
pub(crate) fn write_line(w: &mut dyn Write, value: &Value) -> io::Result<()> {
    serde_json::to_writer(&mut *w, value)?;
    w.write_all(b"\n")
}

/// The `(id, name)` of each tool call of an assistant turn.
pub(crate) fn tool_calls(event: &Event) -> impl Iterator<Item = (&str, &str)> {
    content_of(&event.body)
        .iter()
        .filter_map(|part| match part {
            AssistantPart::ToolCall(call) => Some((call.id.as_str(), call.name.as_str())),
            _ => None,
        })
}

/// Makes the records of a session one event at a time, each the child of the one before.
struct RecordWriter<'a> {
    session: Session<'a>,
    /// The uuid of the record made last (the session's leaf before the first).
    parent: Option<String>,
    /// Whether a record was made (the first carries a create's marker).
    any: bool,
}

impl<'a> RecordWriter<'a> {
    fn new(session: Session<'a>) -> Self {
        RecordWriter {
            parent: session.parent.clone(),
            session,
            any: false,
        }
    }

    /// The record of `event`, event `index` of its transcript; `call_name` is the name of the
    /// call a tool result answers. Every thinking goes into the file as the thought part Qwen
    /// Code keeps for its own (it sends them as `reasoning_content`); its exact form rides in
    /// the record's `handoff` member.
    fn record(
        &mut self,
        index: usize,
        event: &Event,
        call_name: Option<&str>,
    ) -> Result<Value, PluginError> {
        let options = RenderOptions {
            thinking_from: Some(makers(event)),
            ..RenderOptions::default()
        };
        let content = gemini::render_event(event, index, call_name, &options)
            .map_err(|e| PluginError::InvalidTranscript(e.to_string()))?
            .ok_or_else(|| {
                PluginError::InvalidTranscript(format!(
                    "event {} ({}): Qwen Code would send nothing of it (no text, call or result it keeps)",
                    event.id,
                    event.body.kind()
                ))
            })?;
        let uuid = uuid::Uuid::new_v4().to_string();
        let mut record = record(event, content, &uuid, self.parent.as_deref(), &self.session);
        if !self.any {
            if let (Some(marker), Value::Object(map)) = (self.session.marker, &mut record) {
                let (key, value) = marker_member(marker);
                map.insert(key, value);
            }
        }
        self.any = true;
        self.parent = Some(uuid);
        Ok(record)
    }
}

/// The providers that made `event`'s turn or one of its thinking parts: every thinking of it
/// whose maker is known is kept (a thinking's maker is its signature's provider, else its turn's).
fn makers(event: &Event) -> Vec<String> {
    let mut makers: Vec<String> = Vec::new();
    let Body::Assistant { content, origin } = &event.body else {
        return makers;
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
