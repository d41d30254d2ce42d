//! Transcript → the stored document: `dialect::anthropic` renders the messages (and where each
//! event's blocks land); what the wire would drop or reject is refused by name first.

use std::io::Write;

use handoff_sdk::dialect::anthropic::{
    self, render_with_placements, validate_history, Placement, RenderOptions,
};
use handoff_sdk::marker::{OwnershipMarker, MARKER_KEY};
use handoff_sdk::serde_json::{self, Map, Value};
use handoff_sdk::{AssistantPart, Body, Event, Origin, Part, PluginError, Transcript};

use super::records::{EventMeta, Meta, DEFAULT_MODEL, MAX_TOKENS};
use crate::extras::EXTRAS_KEY;

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

/// Refuses, by name, what the wire form would silently drop: blank text (rule A7) and Anthropic
/// thinking without its signature.
fn refuse_unsendable(transcript: &Transcript) -> Result<(), PluginError> {
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
    Ok(())
}

/// The `handoff` member's events for the rendered placements, and the model the history names
/// (the last Anthropic turn's).
fn event_metas<'t>(
    transcript: &'t Transcript,
    placements: &[Placement],
) -> (Vec<EventMeta>, Option<&'t str>) {
    let mut events = Vec::with_capacity(placements.len());
    let mut model = None;
    for p in placements {
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
    (events, model)
}

/// The body to store for `transcript`, refusing what would not read back or not be accepted.
pub(super) fn render_store(transcript: &Transcript) -> Result<Value, PluginError> {
    refuse_unsendable(transcript)?;
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
    let (events, model) = event_metas(transcript, &rendered.placements);
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

/// The stored document: the marker first, then `body`.
pub(super) fn write_body(
    out: &mut dyn Write,
    marker: &OwnershipMarker,
    body: &Value,
) -> std::io::Result<()> {
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
