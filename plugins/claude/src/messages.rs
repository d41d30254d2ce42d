//! The `anthropic-messages` target: the stateless Messages API, whose native store is its request
//! history, one JSON file per session at `<root>/anthropic-messages/<uuid>.json`:
//!
//! ```json
//! {"x-handoff": {...}, "model": "...", "max_tokens": 8192, "messages": [...],
//!  "handoff": {"cwd": "...", "events": [{"id", "timestamp", "kind", "message", "first", "blocks", ...}]}}
//! ```
//!
//! `messages` is exactly what is sent; what no message can hold (event ids, timestamps, authors,
//! origins, where merged turns begin and end) is in the separate `handoff` member. Resuming is the
//! next request: the history plus the new user message.

use std::fs::File;
use std::io::{BufReader, Write};
use std::path::{Path, PathBuf};

use handoff_sdk::atomic;
use handoff_sdk::dialect::anthropic::{
    self, parse_message, render_with_placements, validate, validate_history, ParsedBlock,
    RenderOptions,
};
use handoff_sdk::marker::{OwnershipMarker, MARKER_KEY};
use handoff_sdk::serde_json::{self, json, Map, Value};
use handoff_sdk::store::validate_component;
use handoff_sdk::{
    AssistantPart, Author, Body, CreateOptions, Event, Origin, Part, PluginError, ResumePlan,
    SessionInfo, SessionRef, StoreRoot, Timestamp, Transcript,
};
use serde::{Deserialize, Serialize};

use crate::manifest::{manifest, MESSAGES, PLUGIN_NAME};
use crate::record::{default_origin, EXTRAS_KEY};

const DIR: &str = "anthropic-messages";
/// The model a history names when no turn says which Claude model made it.
const DEFAULT_MODEL: &str = "claude-sonnet-4-5";
const MAX_TOKENS: u64 = 8192;

/// Where one event's blocks are, and what no block can say.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct EventMeta {
    id: String,
    timestamp: Timestamp,
    /// `user`, `assistant` or `tool_result`.
    kind: String,
    message: usize,
    first: usize,
    blocks: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    author: Option<Author>,
    /// The assistant turn's origin (`null` when unknown).
    #[serde(default, skip_serializing_if = "is_absent")]
    origin: Option<Option<Origin>>,
    /// The model on each written thinking signature, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    signature_models: Vec<Option<String>>,
}

fn is_absent(o: &Option<Option<Origin>>) -> bool {
    o.is_none()
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Meta {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cwd: Option<String>,
    events: Vec<EventMeta>,
}

fn session_path(root: &StoreRoot, id: &str) -> Result<PathBuf, PluginError> {
    validate_component("session id", id)?;
    Ok(root.join(&[DIR, &format!("{id}.json")])?)
}

fn invalid(event: Option<(usize, &Event)>, message: String) -> PluginError {
    match event {
        Some((i, e)) => PluginError::InvalidTranscript(format!("event {i} ({}): {message}", e.id)),
        None => PluginError::InvalidTranscript(message),
    }
}

fn thinking_portable(t: &handoff_sdk::Thinking, origin: Option<&Origin>) -> bool {
    t.signature
        .as_ref()
        .map(|s| s.provider.as_str())
        .or(origin.map(|o| o.provider.as_str()))
        == Some(anthropic::PROVIDER)
}

/// The body to store for `transcript`, refusing what would not read back or not be accepted.
fn render_store(transcript: &Transcript) -> Result<Value, PluginError> {
    transcript.validate()?;
    manifest()
        .target(MESSAGES)
        .expect("the manifest names its targets")
        .check_carried(transcript)?;
    // What the wire form would silently drop cannot be stored: refuse it by name.
    for (i, e) in transcript.events.iter().enumerate() {
        let blank = |field: String| {
            invalid(
                Some((i, e)),
                format!(
                    "{field}: empty or whitespace-only text cannot be sent to Anthropic (rule A7)"
                ),
            )
        };
        match &e.body {
            Body::User { content } => {
                for (k, p) in content.iter().enumerate() {
                    if matches!(p, Part::Text { text } if text.trim().is_empty()) {
                        return Err(blank(format!("body.content[{k}]")));
                    }
                }
            }
            Body::Assistant { content, origin } => {
                for (k, p) in content.iter().enumerate() {
                    match p {
                        AssistantPart::Text { text } if text.trim().is_empty() => return Err(blank(format!("body.content[{k}]"))),
                        AssistantPart::Thinking(t) if thinking_portable(t, origin.as_ref()) && t.signature.is_none() => {
                            return Err(invalid(Some((i, e)), format!("body.content[{k}]: Anthropic thinking without its signature cannot go back (the API requires it)")))
                        }
                        _ => {}
                    }
                }
            }
            Body::ToolResult { content, .. } => {
                for (k, p) in content.iter().enumerate() {
                    if matches!(p, Part::Text { text } if text.trim().is_empty())
                        && content.len() > 1
                    {
                        return Err(blank(format!("body.content[{k}]")));
                    }
                }
            }
            Body::Compaction { .. } => {}
        }
    }
    let options = RenderOptions::default();
    let rendered =
        render_with_placements(transcript, &options).map_err(|e| invalid(None, e.to_string()))?;
    let Value::Object(mut body) = rendered.body else {
        unreachable!("render makes an object")
    };
    validate_history(&Value::Object(body.clone())).map_err(|v| {
        invalid(
            None,
            format!("the Anthropic history would be rejected: {v}"),
        )
    })?;
    let mut events = Vec::with_capacity(rendered.placements.len());
    let mut model = None;
    for p in &rendered.placements {
        let e = &transcript.events[p.event_index];
        let (kind, origin, signature_models) = match &e.body {
            Body::User { .. } => ("user", None, Vec::new()),
            Body::ToolResult { .. } => ("tool_result", None, Vec::new()),
            Body::Assistant { content, origin } => {
                let msg_model = origin.as_ref().and_then(|o| o.model.as_deref());
                if origin
                    .as_ref()
                    .is_some_and(|o| o.provider == anthropic::PROVIDER)
                    && msg_model.is_some()
                {
                    model = msg_model;
                }
                let sigs = content
                    .iter()
                    .filter_map(|p| match p {
                        AssistantPart::Thinking(t) if thinking_portable(t, origin.as_ref()) => {
                            t.signature.as_ref().map(|s| s.model.clone())
                        }
                        _ => None,
                    })
                    .collect();
                ("assistant", Some(origin.clone()), sigs)
            }
            Body::Compaction { .. } => unreachable!("compaction is not carried"),
        };
        events.push(EventMeta {
            id: e.id.clone(),
            timestamp: e.timestamp,
            kind: kind.to_owned(),
            message: p.message,
            first: p.first_block,
            blocks: p.blocks,
            author: e.author.clone(),
            origin,
            signature_models,
        });
    }
    let messages = body
        .shift_remove("messages")
        .expect("render makes messages");
    let mut out = Map::new();
    out.insert("model".into(), Value::from(model.unwrap_or(DEFAULT_MODEL)));
    out.insert("max_tokens".into(), Value::from(MAX_TOKENS));
    out.insert("messages".into(), messages);
    let meta = Meta {
        cwd: transcript.cwd.clone(),
        events,
    };
    out.insert(
        EXTRAS_KEY.into(),
        serde_json::to_value(meta).map_err(|e| PluginError::Other(e.to_string()))?,
    );
    Ok(Value::Object(out))
}

fn write_body(out: &mut dyn Write, marker: &OwnershipMarker, body: &Value) -> std::io::Result<()> {
    let mut with_marker = Map::new();
    with_marker.insert(
        MARKER_KEY.into(),
        serde_json::to_value(marker).map_err(std::io::Error::other)?,
    );
    if let Value::Object(map) = body {
        for (k, v) in map {
            with_marker.insert(k.clone(), v.clone());
        }
    }
    serde_json::to_writer(&mut *out, &with_marker).map_err(std::io::Error::other)?;
    out.write_all(b"\n")
}

/// Creates a new history file holding `transcript`.
pub(crate) fn create(
    root: &StoreRoot,
    transcript: &Transcript,
    options: &CreateOptions,
) -> Result<SessionRef, PluginError> {
    let mut transcript = std::borrow::Cow::Borrowed(transcript);
    if let Some(cwd) = &options.cwd {
        transcript.to_mut().cwd = Some(cwd.clone());
    }
    let body = render_store(&transcript)?;
    let id = uuid::Uuid::new_v4().to_string();
    let path = session_path(root, &id)?;
    let marker = OwnershipMarker {
        plugin: PLUGIN_NAME.to_owned(),
        locator: options.locator.clone(),
    };
    root.create_file(&path, |out| write_body(out, &marker, &body))?;
    Ok(SessionRef {
        target: MESSAGES.to_owned(),
        id,
        path,
    })
}

fn load(path: &Path) -> Result<Map<String, Value>, PluginError> {
    let file = File::open(path).map_err(|e| PluginError::io(path, &e))?;
    let value: Value =
        serde_json::from_reader(BufReader::new(file)).map_err(|e| PluginError::Malformed {
            file: path.to_owned(),
            line: Some(e.line()),
            field: None,
            message: format!("not a JSON document: {e}"),
        })?;
    match value {
        Value::Object(map) => Ok(map),
        _ => Err(PluginError::Malformed {
            file: path.to_owned(),
            line: None,
            field: None,
            message: "expected a JSON object (a Messages request history)".into(),
        }),
    }
}

fn owned(
    root: &StoreRoot,
    session: &SessionRef,
) -> Result<(SessionRef, Map<String, Value>), PluginError> {
    session.check(root, MESSAGES)?;
    let session = session.clone();
    let map = load(&session.path)?;
    let mine = map
        .get(MARKER_KEY)
        .and_then(|m| serde_json::from_value::<OwnershipMarker>(m.clone()).ok())
        .is_some_and(|m| m.plugin == PLUGIN_NAME);
    if !mine {
        return Err(PluginError::NotOwned { path: session.path });
    }
    Ok((session, map))
}

/// Appends `events`: the whole history is rendered again and replaces the file atomically.
pub(crate) fn append(
    root: &StoreRoot,
    session: &SessionRef,
    events: &[Event],
) -> Result<SessionRef, PluginError> {
    let _lock = crate::lock_session(root, MESSAGES, &session.id)?;
    let (session, map) = owned(root, session)?;
    let marker: OwnershipMarker =
        serde_json::from_value(map[MARKER_KEY].clone()).expect("checked by owned");
    let mut whole = parse_store(&session.path, map)?;
    whole.events.extend_from_slice(events);
    let body = render_store(&whole)?;
    atomic::replace(&session.path, |out| write_body(out, &marker, &body))
        .map_err(|e| PluginError::io(&session.path, &e))?;
    Ok(session)
}

/// Removes a history this plugin made; refuses any other.
pub(crate) fn remove(root: &StoreRoot, session: &SessionRef) -> Result<(), PluginError> {
    let (session, _) = owned(root, session)?;
    std::fs::remove_file(&session.path).map_err(|e| PluginError::io(&session.path, &e))
}

/// The history file named exactly `id`.
pub(crate) fn resolve(root: &StoreRoot, id: &str) -> Result<SessionRef, PluginError> {
    let path = session_path(root, id)?;
    if !path.is_file() {
        return Err(PluginError::NotFound {
            target: MESSAGES.to_owned(),
            id: id.to_owned(),
            searched: root.path().join(DIR),
        });
    }
    Ok(SessionRef {
        target: MESSAGES.to_owned(),
        id: id.to_owned(),
        path,
    })
}

/// Reads a history file.
pub(crate) fn read(path: &Path) -> Result<Transcript, PluginError> {
    parse_store(path, load(path)?)
}

fn bad(path: &Path, field: String, message: impl Into<String>) -> PluginError {
    PluginError::Malformed {
        file: path.to_owned(),
        line: None,
        field: Some(field),
        message: message.into(),
    }
}

fn parse_store(path: &Path, mut map: Map<String, Value>) -> Result<Transcript, PluginError> {
    let model = map.get("model").and_then(Value::as_str).map(str::to_owned);
    let meta = match map.shift_remove(EXTRAS_KEY) {
        Some(v) => Some(
            serde_json::from_value::<Meta>(v)
                .map_err(|e| bad(path, EXTRAS_KEY.into(), e.to_string()))?,
        ),
        None => None,
    };
    let messages = match map.shift_remove("messages") {
        Some(Value::Array(m)) => m,
        _ => return Err(bad(path, "messages".into(), "missing or not an array")),
    };
    // Each message's blocks, as slots the events take from.
    let mut slots: Vec<Vec<Option<ParsedBlock>>> = Vec::with_capacity(messages.len());
    let mut roles = Vec::with_capacity(messages.len());
    for (i, m) in messages.into_iter().enumerate() {
        let parsed = parse_message(m, None).map_err(|e| {
            let field = if e.path.is_empty() {
                format!("messages[{i}]")
            } else {
                format!("messages[{i}].{}", e.path)
            };
            bad(path, field, e.message)
        })?;
        roles.push(parsed.role);
        slots.push(parsed.blocks.into_iter().map(Some).collect());
    }
    let Some(meta) = meta else {
        return without_meta(path, slots, roles, model.as_deref());
    };
    let mut events = Vec::with_capacity(meta.events.len());
    for (n, em) in meta.events.into_iter().enumerate() {
        let field = |f: &str| format!("{EXTRAS_KEY}.events[{n}].{f}");
        let Some(blocks) = slots.get_mut(em.message) else {
            return Err(bad(
                path,
                field("message"),
                format!("there is no message {}", em.message),
            ));
        };
        let role = roles[em.message].as_str();
        let mut taken = Vec::with_capacity(em.blocks);
        for k in em.first..em.first + em.blocks {
            match blocks.get_mut(k).and_then(Option::take) {
                Some(b) => taken.push(b),
                None => {
                    return Err(bad(
                        path,
                        field("first"),
                        format!(
                            "messages[{}].content[{k}] is missing or claimed twice",
                            em.message
                        ),
                    ))
                }
            }
        }
        let body = match (em.kind.as_str(), role) {
            ("user", "user") => Body::User {
                content: taken
                    .into_iter()
                    .map(|b| {
                        b.into_part().map_err(|_| {
                            bad(path, field("kind"), "a user event holds a non-user block")
                        })
                    })
                    .collect::<Result<_, _>>()?,
            },
            ("tool_result", "user") => match <[ParsedBlock; 1]>::try_from(taken) {
                Ok(
                    [ParsedBlock::ToolResult {
                        call_id,
                        content,
                        is_error,
                    }],
                ) => Body::ToolResult {
                    call_id,
                    content,
                    is_error,
                },
                _ => {
                    return Err(bad(
                        path,
                        field("blocks"),
                        "a tool_result event is exactly one tool_result block",
                    ))
                }
            },
            ("assistant", "assistant") => {
                let mut models = em.signature_models.into_iter();
                let mut content = Vec::with_capacity(taken.len());
                for b in taken {
                    let mut part = b.into_assistant_part().map_err(|_| {
                        bad(
                            path,
                            field("kind"),
                            "an assistant event holds a non-assistant block",
                        )
                    })?;
                    if let AssistantPart::Thinking(t) = &mut part {
                        if let Some(s) = &mut t.signature {
                            s.model = models.next().flatten();
                        }
                    }
                    content.push(part);
                }
                let origin = match em.origin {
                    Some(o) => o,
                    None => Some(default_origin(model.as_deref())),
                };
                Body::Assistant { content, origin }
            }
            (kind, role) => {
                return Err(bad(
                    path,
                    field("kind"),
                    format!("a {kind:?} event cannot be in a {role:?} message"),
                ))
            }
        };
        let mut event = Event::new(em.id, em.timestamp, body);
        event.author = em.author;
        events.push(event);
    }
    for (i, blocks) in slots.iter().enumerate() {
        if let Some(k) = blocks.iter().position(Option::is_some) {
            return Err(bad(
                path,
                format!("messages[{i}].content[{k}]"),
                format!("no event in {EXTRAS_KEY}.events claims this block"),
            ));
        }
    }
    let mut transcript = Transcript::new(events);
    transcript.cwd = meta.cwd;
    Ok(transcript)
}

/// A history written by someone else: each message read with the natural grouping; ids are the
/// message positions and timestamps are unknown (the epoch).
fn without_meta(
    path: &Path,
    slots: Vec<Vec<Option<ParsedBlock>>>,
    roles: Vec<String>,
    model: Option<&str>,
) -> Result<Transcript, PluginError> {
    let mut events = Vec::new();
    for (i, (blocks, role)) in slots.into_iter().zip(roles).enumerate() {
        let message = anthropic::ParsedMessage {
            role,
            blocks: blocks.into_iter().flatten().collect(),
        };
        if !matches!(message.role.as_str(), "user" | "assistant") {
            return Err(bad(
                path,
                format!("messages[{i}].role"),
                format!("{:?} is not a Messages role", message.role),
            ));
        }
        let bodies = message
            .bodies(model)
            .map_err(|(k, m)| bad(path, format!("messages[{i}].content[{k}]"), m))?;
        for (k, body) in bodies.into_iter().enumerate() {
            events.push(Event::new(
                format!("m{i}.{k}"),
                Timestamp::from_millis(0),
                body,
            ));
        }
    }
    Ok(Transcript::new(events))
}

/// Every history in the store, newest first.
pub(crate) fn list(root: &StoreRoot) -> Result<Vec<SessionInfo>, PluginError> {
    let dir = root.path().join(DIR);
    let entries = match std::fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(PluginError::io(&dir, &e)),
    };
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| PluginError::io(&dir, &e))?;
        let path = entry.path();
        let Some(id) = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".json"))
        else {
            continue;
        };
        let marker = load(&path)
            .ok()
            .and_then(|m| m.get(MARKER_KEY).cloned())
            .and_then(|m| serde_json::from_value::<OwnershipMarker>(m).ok())
            .filter(|m| m.plugin == PLUGIN_NAME);
        out.push(SessionInfo::of_file(MESSAGES, id, &path, marker));
    }
    SessionInfo::sort_newest_first(&mut out);
    Ok(out)
}

/// The next request: the stored history plus `prompt` as a user message (merged into a trailing
/// user message, after its tool results), validated against A1–A15.
pub(crate) fn plan(
    root: &StoreRoot,
    session: &SessionRef,
    prompt: &str,
) -> Result<ResumePlan, PluginError> {
    session.check(root, MESSAGES)?;
    let mut map = load(&session.path)?;
    // Reading first proves the history is whole and ours to interpret.
    parse_store(&session.path, map.clone())?;
    map.shift_remove(MARKER_KEY);
    map.shift_remove(EXTRAS_KEY);
    let Some(Value::Array(messages)) = map.get_mut("messages") else {
        return Err(bad(
            &session.path,
            "messages".into(),
            "missing or not an array",
        ));
    };
    let text = json!({"type": "text", "text": prompt});
    match messages.last_mut() {
        Some(last) if last["role"] == "user" => match last.get_mut("content") {
            Some(Value::Array(blocks)) => blocks.push(text),
            Some(content) => {
                let previous = std::mem::take(content);
                *content = json!([{"type": "text", "text": previous}, text]);
            }
            None => return Err(bad(&session.path, "messages[-1].content".into(), "missing")),
        },
        _ => messages.push(json!({"role": "user", "content": [text]})),
    }
    let body = Value::Object(map);
    validate(&body).map_err(|v| {
        PluginError::Other(format!(
            "{}: the next request would be rejected: {v}",
            session.path.display()
        ))
    })?;
    Ok(ResumePlan::Request {
        dialect: handoff_sdk::dialect::Dialect::AnthropicMessages,
        body,
    })
}
