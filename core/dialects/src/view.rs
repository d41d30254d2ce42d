//! The wire view: what a request body of a dialect can show of a transcript.
//!
//! The wire carries no timestamps, authors, event ids, opaque fields, signature models or turn
//! origins; the APIs merge consecutive turns of the same role; only the Responses wire has
//! freeform (custom) tool calls, the others show one in its structured form (`{"input": …}`); the model sees a compaction's
//! summary instead of the events it replaces; and each dialect has its own [`WireLimit`]s. A
//! transcript and a history parsed from the wire are equal *as the wire shows them* when their
//! views are equal under the target's comparison.

use super::{visible, Dialect};
use handoff_transcript::{AssistantPart, Body, Event, Origin, Timestamp, ToolInput, Transcript};

/// The view of `transcript` as a `dialect` body shows it, keeping only thinking made by
/// `thinking_from` (the target's comparison sets the rest aside anyway).
pub fn wire_view(
    transcript: &Transcript,
    dialect: Dialect,
    thinking_from: &[String],
) -> Transcript {
    let keeps = |maker: Option<&str>| maker.is_some_and(|m| thinking_from.iter().any(|p| p == m));
    let mut out: Vec<Event> = Vec::with_capacity(transcript.events.len());
    for (index, summary) in visible::events(transcript) {
        let mut event = match summary {
            Some(summary) => Event::new(
                transcript.events[index].id.clone(),
                Timestamp::from_millis(0),
                Body::user_text(summary),
            ),
            None => transcript.events[index].clone(),
        };
        if let Body::Assistant { content, origin } = &mut event.body {
            let turn_maker = origin.as_ref().map(|o| o.provider.clone());
            content.retain(|part| match part {
                AssistantPart::Thinking(t) => keeps(
                    t.signature
                        .as_ref()
                        .map(|s| s.provider.as_str())
                        .or(turn_maker.as_deref()),
                ),
                _ => true,
            });
            if content.is_empty() {
                continue;
            }
        }
        out.push(event);
    }
    finish(out, dialect)
}

/// The view of a history parsed from a `dialect` body: the same normalisation.
pub fn parsed_view(history: &Transcript, dialect: Dialect) -> Transcript {
    finish(history.events.clone(), dialect)
}

fn finish(events: Vec<Event>, dialect: Dialect) -> Transcript {
    let mut view = Transcript::new(events.into_iter().map(|e| strip(e, dialect)).collect());
    for limit in dialect.limits() {
        limit.apply(&mut view);
    }
    let mut merged: Vec<Event> = Vec::with_capacity(view.events.len());
    for event in view.events {
        push_merged(&mut merged, event);
    }
    Transcript::new(merged)
}

/// No timestamp, author, opaque fields or signature model; the origin is the dialect's provider
/// (the wire cannot say who made a turn).
fn strip(mut event: Event, dialect: Dialect) -> Event {
    event.timestamp = Timestamp::from_millis(0);
    event.author = None;
    event.opaque.clear();
    if let Body::Assistant { content, origin } = &mut event.body {
        for part in content.iter_mut() {
            match part {
                AssistantPart::Thinking(t) => {
                    if let Some(s) = &mut t.signature {
                        s.model = None;
                    }
                }
                // Only the Responses wire has freeform (custom) tools; the others are sent the
                // call's structured form.
                AssistantPart::ToolCall(call)
                    if dialect != Dialect::OpenaiResponses
                        && matches!(call.input, ToolInput::Freeform(_)) =>
                {
                    call.input = ToolInput::Arguments(call.structured_arguments().into_owned());
                }
                _ => {}
            }
        }
        *origin = Some(Origin {
            provider: dialect.provider().to_owned(),
            model: None,
            api: None,
        });
    }
    event
}

/// Appends `event`, merging it into the previous one when both are user turns or both are
/// assistant turns.
pub fn push_merged(out: &mut Vec<Event>, event: Event) {
    match (out.last_mut().map(|e| &mut e.body), event.body) {
        (Some(Body::User { content: a }), Body::User { content: b }) => a.extend(b),
        (Some(Body::Assistant { content: a, .. }), Body::Assistant { content: b, .. }) => {
            a.extend(b)
        }
        (_, body) => out.push(Event { body, ..event }),
    }
}
