//! A stored history → transcript: the messages parsed by `dialect::anthropic`, each event's
//! blocks taken from where the `handoff` member says they are.

use std::path::Path;

use handoff_sdk::dialect::anthropic::{self, parse_message, ParsedBlock};
use handoff_sdk::marker::{OwnershipMarker, MARKER_KEY};
use handoff_sdk::serde_json::{self, Map, Value};
use handoff_sdk::{AssistantPart, Body, Event, PluginError, Timestamp, Transcript};

use super::records::{EventMeta, Meta};
use crate::extras::{default_origin, EXTRAS_KEY};

/// A history file as its JSON object; a file that is not one is `Malformed`, naming it and what
/// is wrong (`handoff_sdk::parse_document`).
pub(super) fn load(path: &Path) -> Result<Map<String, Value>, PluginError> {
    // One read and a parse of the bytes: serde_json's reader path goes byte by byte through
    // `io::Read`, several times slower on a history of megabytes.
    let bytes = std::fs::read(path).map_err(|e| PluginError::io(path, &e))?;
    handoff_sdk::parse_document(path, &bytes)
}

/// The ownership marker of a loaded history, if it has one.
pub(super) fn marker(map: &Map<String, Value>) -> Option<OwnershipMarker> {
    map.get(MARKER_KEY)
        .and_then(|m| serde_json::from_value::<OwnershipMarker>(m.clone()).ok())
}

pub(super) fn bad(path: &Path, field: String, message: impl Into<String>) -> PluginError {
    PluginError::Malformed {
        file: path.to_owned(),
        line: None,
        field: Some(field),
        message: message.into(),
    }
}

/// Each message's blocks, as slots the events take from, and its role.
type Slots = (Vec<Vec<Option<ParsedBlock>>>, Vec<String>);

/// The transcript of a loaded history.
pub(super) fn parse_store(
    path: &Path,
    mut map: Map<String, Value>,
) -> Result<Transcript, PluginError> {
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
    let (mut slots, roles) = slots(path, messages)?;
    let Some(meta) = meta else {
        return without_meta(path, slots, roles, model.as_deref());
    };
    let mut events = Vec::with_capacity(meta.events.len());
    for (n, em) in meta.events.into_iter().enumerate() {
        events.push(event(path, n, em, &mut slots, &roles, model.as_deref())?);
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

/// The messages parsed into slots.
fn slots(path: &Path, messages: Vec<Value>) -> Result<Slots, PluginError> {
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
    Ok((slots, roles))
}

/// Event `n` of the `handoff` member, its blocks taken out of their slots.
fn event(
    path: &Path,
    n: usize,
    em: EventMeta,
    slots: &mut [Vec<Option<ParsedBlock>>],
    roles: &[String],
    model: Option<&str>,
) -> Result<Event, PluginError> {
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
                None => Some(default_origin(model)),
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
    Ok(event)
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
