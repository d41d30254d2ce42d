//! A transcript → the session file: `contents` rendered by core's Gemini dialect, and the
//! per-event facts the wire cannot hold.
//!
//! Refused before anything is written, naming the event: what the dialect would drop silently
//! (an empty text, rule G7) or reorder (text after an image in a tool result), what it refuses
//! (non-object arguments, G3), and a history that breaks G1–G7.

use handoff_sdk::dialect::gemini;
use handoff_sdk::dialect::RenderOptions;
use handoff_sdk::serde_json::{json, Value};
use handoff_sdk::{AssistantPart, Body, Event, Part, PluginError, Transcript};

use super::records::{EventMeta, Meta, SessionFile};
use crate::gemini_cli::PROVIDER;

fn refuse(index: usize, event: &Event, message: impl std::fmt::Display) -> PluginError {
    PluginError::InvalidTranscript(format!("event {index} ({}): {message}", event.id))
}

/// The render options of this target: Google thinking goes back, other thinking is display-only.
pub(crate) fn options() -> RenderOptions {
    RenderOptions {
        thinking_from: Some(vec![PROVIDER.to_owned()]),
        ..RenderOptions::default()
    }
}

/// Whether an assistant part reads back (thinking made by anyone but Google is display-only).
fn kept(part: &AssistantPart, turn_maker: Option<&str>) -> bool {
    match part {
        AssistantPart::Thinking(t) => crate::gemini_cli::is_google(t, turn_maker),
        _ => true,
    }
}

fn check_texts(index: usize, event: &Event) -> Result<(), PluginError> {
    let empty = |k: usize| {
        refuse(
            index,
            event,
            format!("body.content[{k}]: an empty text part (Gemini rule G7: it would not be sent)"),
        )
    };
    match &event.body {
        Body::User { content } => {
            for (k, p) in content.iter().enumerate() {
                if matches!(p, Part::Text { text } if text.is_empty()) {
                    return Err(empty(k));
                }
            }
        }
        Body::Assistant { content, .. } => {
            for (k, p) in content.iter().enumerate() {
                if matches!(p, AssistantPart::Text { text } if text.is_empty()) {
                    return Err(empty(k));
                }
            }
        }
        Body::ToolResult { content, .. } => {
            let mut image = false;
            for (k, p) in content.iter().enumerate() {
                // An empty text is no content (a tool that printed nothing), as Gemini CLI
                // itself sends it: `{"output": ""}`, read back as no text.
                match p {
                    Part::Text { text } if text.is_empty() => {}
                    Part::Text { .. } if image => {
                        return Err(refuse(index, event, format!("body.content[{k}]: text after an image in a tool result (a functionResponse holds its texts before its images)")));
                    }
                    Part::Text { .. } => {}
                    _ => image = true,
                }
            }
        }
        Body::Compaction { .. } => {}
    }
    Ok(())
}

/// The per-event facts of `event`, `None` when nothing of it reaches the wire.
fn meta(event: &Event) -> Option<EventMeta> {
    let mut m = EventMeta {
        id: event.id.clone(),
        timestamp: event.timestamp,
        kind: event.body.kind().to_owned(),
        parts: None,
        call_id: None,
        author: event.author.clone(),
        origin: None,
        signature_models: Vec::new(),
    };
    match &event.body {
        Body::User { content } => m.parts = Some(content.len()),
        Body::Assistant { content, origin } => {
            let maker = origin.as_ref().map(|o| o.provider.as_str());
            let kept: Vec<&AssistantPart> = content.iter().filter(|p| kept(p, maker)).collect();
            if kept.is_empty() {
                return None;
            }
            m.parts = Some(kept.len());
            m.origin = Some(origin.clone());
            m.signature_models = kept
                .iter()
                .filter_map(|p| match p {
                    AssistantPart::Thinking(t) => t.signature.as_ref().map(|s| s.model.clone()),
                    _ => None,
                })
                .collect();
        }
        Body::ToolResult { call_id, .. } => m.call_id = Some(call_id.clone()),
        Body::Compaction { .. } => {}
    }
    Some(m)
}

/// The session file for `transcript` (already validated and checked against what the target
/// carries).
pub(crate) fn session_file(
    transcript: &Transcript,
    marker: Option<Value>,
) -> Result<SessionFile, PluginError> {
    for (i, e) in transcript.events.iter().enumerate() {
        check_texts(i, e)?;
    }
    let contents = gemini::render(transcript, &options())
        .map_err(|e| PluginError::InvalidTranscript(e.to_string()))?;
    gemini::validate_history(&json!({ "contents": contents }))
        .map_err(|v| PluginError::InvalidTranscript(format!("the history breaks {v}")))?;
    Ok(SessionFile {
        marker,
        contents,
        handoff: Meta {
            cwd: transcript.cwd.clone(),
            events: transcript.events.iter().filter_map(meta).collect(),
        },
    })
}
