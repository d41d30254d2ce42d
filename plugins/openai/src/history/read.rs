//! Session file → canonical transcript: the history parsed with core's dialect, its parts handed
//! to the events `handoff.events` lists, every part claimed exactly once.

use std::path::Path;

use handoff_sdk::serde_json::{self, Map, Value};
use handoff_sdk::{AssistantPart, Body, Event, Part, PluginError, Transcript};

use super::entries::{parse_entries, Piece, Side, WireEntry};
use super::layout::load;
use super::records::{EventMeta, Kind, Meta, EXTRAS_KEY};
use super::ApiTarget;

/// Reads a session file.
pub(crate) fn read(target: &ApiTarget, path: &Path) -> Result<Transcript, PluginError> {
    from_map(target, path, load(path)?)
}

/// Reads a loaded session file.
pub(crate) fn from_map(
    target: &ApiTarget,
    path: &Path,
    mut map: Map<String, Value>,
) -> Result<Transcript, PluginError> {
    let bad = |field: String, message: String| PluginError::Malformed {
        file: path.to_owned(),
        line: None,
        field: Some(field),
        message,
    };
    let field = target.dialect.history_field();
    let meta = match map.shift_remove(EXTRAS_KEY) {
        Some(v) => Some(
            serde_json::from_value::<Meta>(v).map_err(|e| bad(EXTRAS_KEY.into(), e.to_string()))?,
        ),
        None => None,
    };
    let history = match map.shift_remove(field) {
        Some(Value::Array(history)) => history,
        _ => return Err(bad(field.into(), "missing or not an array".into())),
    };
    let Some(meta) = meta else {
        return foreign(target, history, map.shift_remove("model")).map_err(|(f, m)| bad(f, m));
    };
    let entries = parse_entries(target.dialect, history).map_err(|(f, m)| bad(f, m))?;
    let cwd = meta.cwd.clone();
    let mut transcript = assemble(target, entries, meta).map_err(|(f, m)| bad(f, m))?;
    transcript.cwd = cwd;
    Ok(transcript)
}

/// A history with no `handoff` member (saved by someone else): read as the dialect reads a
/// request; ids say where each event came from and timestamps are unknown (the epoch).
fn foreign(
    target: &ApiTarget,
    history: Vec<Value>,
    model: Option<Value>,
) -> Result<Transcript, (String, String)> {
    let mut body = Map::new();
    body.insert(target.dialect.history_field().into(), Value::Array(history));
    if let Some(model) = model {
        body.insert("model".into(), model);
    }
    target
        .dialect
        .parse(&Value::Object(body))
        .map(|p| p.transcript)
        .map_err(|e| (e.path, e.message))
}

/// The events `meta` lists, made of the parts of `entries` it places. Errors are `(field,
/// message)`; every part and every tool result of the history must belong to exactly one event.
pub(crate) fn assemble(
    target: &ApiTarget,
    mut entries: Vec<WireEntry>,
    meta: Meta,
) -> Result<Transcript, (String, String)> {
    let field = target.dialect.history_field();
    let mut answered = vec![false; entries.len()];
    let mut events = Vec::with_capacity(meta.events.len());
    for (n, em) in meta.events.into_iter().enumerate() {
        let at = |f: &str| format!("{EXTRAS_KEY}.events[{n}].{f}");
        let mut pieces = take_pieces(&mut entries, &em, field).map_err(|m| (at("parts"), m))?;
        for &k in &em.empty {
            if k > pieces.len() {
                return Err((
                    at("empty"),
                    format!("position {k} is past the event's parts"),
                ));
            }
            pieces.insert(
                k,
                match em.kind {
                    Kind::Assistant => Piece::Assistant(AssistantPart::text("")),
                    _ => Piece::Part(Part::text("")),
                },
            );
        }
        let body = match em.kind {
            Kind::User => Body::User {
                content: parts(pieces).map_err(|m| (at("parts"), m))?,
            },
            Kind::ToolResult => {
                let e = em
                    .at
                    .ok_or_else(|| (at("at"), "a tool result needs `at`".into()))?;
                let call_id = match entries.get(e) {
                    Some(WireEntry {
                        side: Side::Result,
                        call_id: Some(id),
                        ..
                    }) if !answered[e] => id.clone(),
                    _ => {
                        return Err((
                            at("at"),
                            format!("{field}[{e}] is not a tool result, or another event is it"),
                        ))
                    }
                };
                answered[e] = true;
                Body::ToolResult {
                    call_id,
                    content: parts(pieces).map_err(|m| (at("parts"), m))?,
                    is_error: em.is_error,
                }
            }
            Kind::Assistant => assistant(pieces, &em).map_err(|m| (at("signatures"), m))?,
        };
        let mut event = Event::new(em.id, em.timestamp, body);
        event.author = em.author;
        events.push(event);
    }
    for (e, entry) in entries.iter().enumerate() {
        if let Some(k) = entry.pieces.iter().position(Option::is_some) {
            return Err((
                format!("{field}[{e}]"),
                format!("its part {k} belongs to no event in {EXTRAS_KEY}.events"),
            ));
        }
        if entry.side == Side::Result && !answered[e] {
            return Err((
                format!("{field}[{e}]"),
                format!("this tool result is no event in {EXTRAS_KEY}.events"),
            ));
        }
    }
    Ok(Transcript::new(events))
}

/// The parts `em.parts` points at, claimed; each from an entry on the side its kind allows.
fn take_pieces(
    entries: &mut [WireEntry],
    em: &EventMeta,
    field: &str,
) -> Result<Vec<Piece>, String> {
    let mut out = Vec::new();
    for &[e, first, count] in &em.parts {
        let entry = entries
            .get_mut(e)
            .ok_or_else(|| format!("the history has no entry {e}"))?;
        let allowed = match em.kind {
            Kind::User => entry.side == Side::User,
            Kind::Assistant => entry.side == Side::Assistant,
            Kind::ToolResult => entry.side == Side::User || em.at == Some(e),
        };
        if !allowed {
            return Err(format!(
                "{field}[{e}] is a {:?} entry, which a {:?} event cannot take parts from",
                entry.side, em.kind
            ));
        }
        for k in first..first.saturating_add(count) {
            let piece = entry
                .pieces
                .get_mut(k)
                .and_then(Option::take)
                .ok_or_else(|| format!("{field}[{e}] part {k} is missing or claimed twice"))?;
            out.push(piece);
        }
    }
    Ok(out)
}

fn parts(pieces: Vec<Piece>) -> Result<Vec<Part>, String> {
    pieces
        .into_iter()
        .map(|p| match p {
            Piece::Part(p) => Ok(p),
            Piece::Assistant(_) => Err("an assistant part in a user-side event".to_owned()),
        })
        .collect()
}

/// An assistant turn: its parts, the models and redaction of its signatures, its origin.
fn assistant(pieces: Vec<Piece>, em: &EventMeta) -> Result<Body, String> {
    let mut signatures = em.signatures.iter();
    let mut content = Vec::with_capacity(pieces.len());
    for piece in pieces {
        let Piece::Assistant(mut part) = piece else {
            return Err("a user-side part in an assistant event".to_owned());
        };
        if let AssistantPart::Thinking(t) = &mut part {
            if let (Some(s), false) = (&mut t.signature, em.signatures.is_empty()) {
                let m = signatures
                    .next()
                    .ok_or("fewer entries than the event has signatures")?;
                s.model = m.model.clone();
                s.redacted = m.redacted;
            }
        }
        content.push(part);
    }
    if signatures.next().is_some() {
        return Err("more entries than the event has signatures".to_owned());
    }
    Ok(Body::Assistant {
        content,
        origin: em.origin.clone().flatten(),
    })
}
