//! Reading the history a real CLI sent, and the view of a transcript the wire can show.
//!
//! The wire carries no timestamps, authors, event ids or turn origins, and a CLI adds messages of
//! its own (system prompt, `<system-reminder>` blocks, environment context). So both sides are
//! brought to a *wire view* before the semantic comparison: what the CLI injected is set aside on
//! the request side, and on the transcript side thinking the target cannot carry is set aside,
//! compactions are applied (the summary stands in for the events it replaces), and consecutive
//! turns of the same role are merged (the APIs merge them too).

use handoff_core::dialect::{anthropic, openai_responses};
use handoff_core::{
    AssistantPart, Body, Event, Origin, Part, TargetManifest, Timestamp, Transcript,
};
use serde_json::Value;

/// What a dialect's wire cannot express at all, so a check can only set it aside (and says so).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WireLimits {
    /// The wire has no error flag on tool results (OpenAI Responses and Chat Completions).
    pub no_tool_error_flag: bool,
}

impl WireLimits {
    /// The limits of `dialect`.
    pub fn of(dialect: &str) -> WireLimits {
        WireLimits {
            no_tool_error_flag: matches!(dialect, "openai-responses" | "openai-chat"),
        }
    }

    /// One line per limit, for evidence.
    pub fn notes(&self, dialect: &str) -> Vec<String> {
        let mut notes = Vec::new();
        if self.no_tool_error_flag {
            notes.push(format!(
                "set aside: tool-result error flags (the {dialect} wire has none; the model sees \
                 only the output text)"
            ));
        }
        notes
    }

    /// Sets aside, in a wire view, what the wire cannot express.
    pub fn apply(&self, view: &mut Transcript) {
        for event in &mut view.events {
            if let Body::ToolResult { is_error, .. } = &mut event.body {
                if self.no_tool_error_flag {
                    *is_error = false;
                }
            }
        }
    }
}

/// The text prefixes of user content a CLI injects by itself, whatever the recipe says.
const ALWAYS_INJECTED: &[&str] = &["<system-reminder>", "<environment_context>"];

/// The `<tag>` prefixes a recipe's `injected` descriptions name (e.g. `<system-reminder>`), plus
/// the ones every CLI check sets aside.
pub fn injected_prefixes(descriptions: &[String]) -> Vec<String> {
    let mut prefixes: Vec<String> = ALWAYS_INJECTED.iter().map(|s| s.to_string()).collect();
    for description in descriptions {
        let mut rest = description.as_str();
        while let Some(start) = rest.find('<') {
            let after = &rest[start + 1..];
            let Some(end) = after.find('>') else { break };
            let tag = &after[..end];
            if !tag.is_empty()
                && !tag.starts_with('/')
                && tag
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == ' ')
            {
                let prefix = format!("<{tag}>");
                if !prefixes.contains(&prefix) {
                    prefixes.push(prefix);
                }
            }
            rest = &after[end..];
        }
    }
    prefixes
}

fn is_injected(text: &str, prefixes: &[String]) -> bool {
    let t = text.trim_start();
    prefixes.iter().any(|p| t.starts_with(p.as_str()))
}

/// The history of a model request in `dialect`, with what the CLI injected set aside: messages
/// of roles other than user and assistant (system, developer) and user text parts that start
/// with one of `injected`. Parsed events have timestamp 0 and no author.
pub fn history_from_request(
    dialect: &str,
    body: &Value,
    injected: &[String],
) -> Result<Transcript, String> {
    let parsed = match dialect {
        anthropic::DIALECT => anthropic_history(body)?,
        openai_responses::DIALECT => {
            let input = body
                .get("input")
                .and_then(Value::as_array)
                .ok_or("the request has no `input` array")?;
            openai_responses::parse(input).map_err(|e| format!("cannot parse the request: {e}"))?
        }
        other => {
            return Err(format!(
                "core has no parser for the {other:?} dialect yet, so the request cannot be read"
            ))
        }
    };
    Ok(set_aside_injected(parsed, injected))
}

fn anthropic_history(body: &Value) -> Result<Transcript, String> {
    let request = anthropic::parse(body).map_err(|e| format!("cannot parse the request: {e}"))?;
    let mut events = Vec::new();
    for (m, message) in request.messages.iter().enumerate() {
        if message.role != "user" && message.role != "assistant" {
            continue; // e.g. Claude Code's role:"system" agent listing
        }
        let bodies = message
            .bodies(request.model.as_deref())
            .map_err(|(block, why)| format!("messages[{m}].content[{block}]: {why}"))?;
        for body in bodies {
            events.push(Event::new(
                format!("wire-{}", events.len()),
                Timestamp::from_millis(0),
                body,
            ));
        }
    }
    Ok(Transcript::new(events))
}

/// Drops user text parts that start with an injected prefix, and user events left empty.
fn set_aside_injected(mut transcript: Transcript, injected: &[String]) -> Transcript {
    transcript.events.retain_mut(|event| match &mut event.body {
        Body::User { content } => {
            content.retain(|p| !matches!(p, Part::Text { text } if is_injected(text, injected)));
            !content.is_empty()
        }
        _ => true,
    });
    transcript
}

/// The wire view of a transcript as `target` carries it (see the module docs). `origin_provider`
/// becomes the origin of every assistant turn, since the wire cannot say who made one.
pub fn wire_view(transcript: &Transcript, target: &TargetManifest) -> Transcript {
    let keeps_thinking =
        |maker: Option<&str>| maker.is_some_and(|m| target.thinking_from.iter().any(|p| p == m));
    // Apply compactions first: the model sees the summary instead of the events it replaces.
    let mut visible: Vec<Event> = Vec::with_capacity(transcript.events.len());
    for event in &transcript.events {
        match &event.body {
            Body::Compaction {
                summary,
                replaces_through,
            } => {
                if let Some(pos) = visible.iter().position(|e| &e.id == replaces_through) {
                    visible.drain(..=pos);
                }
                visible.push(Event::new(
                    event.id.clone(),
                    event.timestamp,
                    Body::User {
                        content: vec![Part::text(summary.clone())],
                    },
                ));
            }
            _ => visible.push(event.clone()),
        }
    }
    let mut out: Vec<Event> = Vec::with_capacity(visible.len());
    for event in visible {
        let mut event = strip_event(event);
        if let Body::Assistant { content, origin } = &mut event.body {
            let turn_maker = origin.as_ref().map(|o| o.provider.clone());
            content.retain(|part| match part {
                AssistantPart::Thinking(t) => keeps_thinking(
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
            *origin = Some(Origin {
                provider: target.provider.clone(),
                model: None,
                api: None,
            });
        }
        push_merged(&mut out, event);
    }
    Transcript::new(out)
}

/// The wire view of a parsed request history: the same normalisation, nothing set aside.
pub fn request_view(history: &Transcript, target: &TargetManifest) -> Transcript {
    let mut out: Vec<Event> = Vec::with_capacity(history.events.len());
    for event in history.events.iter().cloned() {
        let mut event = strip_event(event);
        if let Body::Assistant { origin, .. } = &mut event.body {
            *origin = Some(Origin {
                provider: target.provider.clone(),
                model: None,
                api: None,
            });
        }
        push_merged(&mut out, event);
    }
    Transcript::new(out)
}

/// No timestamp, author, opaque fields or signature model: the wire has none of them.
fn strip_event(mut event: Event) -> Event {
    event.timestamp = Timestamp::from_millis(0);
    event.author = None;
    event.opaque.clear();
    if let Body::Assistant { content, .. } = &mut event.body {
        for part in content.iter_mut() {
            if let AssistantPart::Thinking(t) = part {
                if let Some(s) = &mut t.signature {
                    s.model = None;
                }
            }
        }
    }
    event
}

/// Appends `event`, merging it into the previous event when both are user turns or both are
/// assistant turns (the APIs merge consecutive same-role turns; CLIs often do it themselves).
fn push_merged(out: &mut Vec<Event>, event: Event) {
    match (out.last_mut().map(|e| &mut e.body), &event.body) {
        (Some(Body::User { content: a }), Body::User { content: b }) => a.extend(b.iter().cloned()),
        (Some(Body::Assistant { content: a, .. }), Body::Assistant { content: b, .. }) => {
            a.extend(b.iter().cloned())
        }
        _ => out.push(event),
    }
}

/// The compaction summaries of a transcript: the texts its wire view shows in their place.
pub fn compaction_summaries(transcript: &Transcript) -> Vec<String> {
    transcript
        .events
        .iter()
        .filter_map(|e| match &e.body {
            Body::Compaction { summary, .. } => Some(summary.clone()),
            _ => None,
        })
        .collect()
}

/// A CLI may wrap a compaction summary in a preamble of its own: a request's user text that
/// contains one of `summaries` (and is not exactly it) is replaced by that summary.
pub fn align_compaction_summaries(summaries: &[String], actual: &mut Transcript) {
    for event in &mut actual.events {
        let Body::User { content } = &mut event.body else {
            continue;
        };
        for part in content.iter_mut() {
            let Part::Text { text } = part else { continue };
            if let Some(summary) = summaries
                .iter()
                .find(|s| !s.is_empty() && text != *s && text.contains(s.as_str()))
            {
                *text = summary.clone();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use handoff_core::{Feature, Signature, Thinking, ToolCall};
    use serde_json::json;

    use super::*;

    fn target() -> TargetManifest {
        TargetManifest {
            name: "claude-code".into(),
            kind: handoff_core::TargetKind::Cli,
            provider: "anthropic".into(),
            carries: vec![Feature::Text],
            thinking_from: vec!["anthropic".into()],
            notes: vec![],
            live: None,
        }
    }

    fn ev(id: &str, ms: i64, body: Body) -> Event {
        Event::new(id, Timestamp::from_millis(ms), body)
    }

    fn user(text: &str) -> Body {
        Body::User {
            content: vec![Part::text(text)],
        }
    }

    #[test]
    fn injected_prefixes_come_from_the_recipe_descriptions() {
        let p = injected_prefixes(&[
            "user text blocks wrapped in <system-reminder> (context)".into(),
            "a user message holding only <environment_context>…</environment_context>".into(),
            "<user_instructions> from AGENTS.md".into(),
        ]);
        assert_eq!(
            p,
            [
                "<system-reminder>",
                "<environment_context>",
                "<user_instructions>"
            ]
        );
    }

    #[test]
    fn an_anthropic_request_loses_what_claude_code_injects() {
        let body = json!({
            "model": "claude-sonnet-4-5",
            "system": [{"type": "text", "text": "You are Claude Code"}],
            "messages": [
                {"role": "user", "content": [
                    {"type": "text", "text": "<system-reminder>\nagents\n</system-reminder>"},
                    {"type": "text", "text": "hello", "cache_control": {"type": "ephemeral"}}
                ]},
                {"role": "system", "content": "agent listing"},
                {"role": "assistant", "content": [
                    {"type": "text", "text": "calling"},
                    {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.txt"},
                    {"type": "text", "text": "<system-reminder>late</system-reminder>"}
                ]},
                {"role": "user", "content": "continue"}
            ]
        });
        let history =
            history_from_request("anthropic-messages", &body, &injected_prefixes(&[])).unwrap();
        let kinds: Vec<_> = history.events.iter().map(|e| e.body.kind()).collect();
        assert_eq!(kinds, ["user", "assistant", "tool_result", "user"]);
        assert_eq!(history.events[0].body, user("hello"));
        assert_eq!(history.events[3].body, user("continue"));
    }

    #[test]
    fn a_responses_request_loses_instructions_and_environment_context() {
        let body = json!({"input": [
            {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "rules"}]},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "<environment_context>\n  <cwd>/x</cwd>\n</environment_context>"}]},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "next"}]}
        ]});
        let history =
            history_from_request("openai-responses", &body, &injected_prefixes(&[])).unwrap();
        let kinds: Vec<_> = history.events.iter().map(|e| e.body.kind()).collect();
        assert_eq!(kinds, ["user", "assistant", "user"]);
    }

    #[test]
    fn only_flagless_dialects_set_tool_errors_aside() {
        let mut view = Transcript::new(vec![ev(
            "r",
            0,
            Body::ToolResult {
                call_id: "c".into(),
                content: vec![],
                is_error: true,
            },
        )]);
        let mut kept = view.clone();
        WireLimits::of("anthropic-messages").apply(&mut kept);
        assert_eq!(kept, view);
        assert!(WireLimits::of("anthropic-messages")
            .notes("anthropic-messages")
            .is_empty());
        let limits = WireLimits::of("openai-responses");
        limits.apply(&mut view);
        assert!(matches!(
            view.events[0].body,
            Body::ToolResult {
                is_error: false,
                ..
            }
        ));
        assert_eq!(limits.notes("openai-responses").len(), 1);
    }

    #[test]
    fn an_unknown_dialect_is_an_error_not_a_pass() {
        let err = history_from_request("gemini", &json!({}), &[]).unwrap_err();
        assert!(err.contains("no parser"), "{err}");
    }

    #[test]
    fn the_wire_view_drops_what_the_wire_cannot_show_and_merges_same_role_turns() {
        let mut alice = ev("a", 5, user("one"));
        alice.author = Some(handoff_core::Author {
            kind: handoff_core::AuthorKind::Human,
            name: "alice".into(),
        });
        let foreign = AssistantPart::Thinking(Thinking {
            text: "hm".into(),
            signature: Some(Signature {
                provider: "openai".into(),
                model: Some("o3".into()),
                value: "enc".into(),
                redacted: false,
            }),
        });
        let transcript = Transcript::new(vec![
            alice,
            ev("b", 6, user("two")),
            ev(
                "c",
                7,
                Body::Assistant {
                    content: vec![foreign.clone(), AssistantPart::text("hi")],
                    origin: Some(Origin {
                        provider: "openai".into(),
                        model: Some("o3".into()),
                        api: None,
                    }),
                },
            ),
            ev(
                "d",
                8,
                Body::Assistant {
                    content: vec![foreign],
                    origin: None,
                },
            ),
        ]);
        let view = wire_view(&transcript, &target());
        assert_eq!(view.events.len(), 2);
        assert_eq!(
            view.events[0].body,
            Body::User {
                content: vec![Part::text("one"), Part::text("two")]
            }
        );
        assert_eq!(view.events[0].author, None);
        assert_eq!(view.events[0].timestamp, Timestamp::from_millis(0));
        let Body::Assistant { content, origin } = &view.events[1].body else {
            panic!()
        };
        assert_eq!(content, &vec![AssistantPart::text("hi")]);
        assert_eq!(origin.as_ref().unwrap().provider, "anthropic");
    }

    #[test]
    fn compactions_are_applied_and_a_wrapped_summary_is_accepted() {
        let transcript = Transcript::new(vec![
            ev("a", 1, user("old")),
            ev(
                "b",
                2,
                Body::Assistant {
                    content: vec![AssistantPart::ToolCall(ToolCall {
                        id: "c1".into(),
                        name: "ls".into(),
                        arguments: json!({}),
                    })],
                    origin: None,
                },
            ),
            ev(
                "c",
                3,
                Body::Compaction {
                    summary: "we listed files".into(),
                    replaces_through: "b".into(),
                },
            ),
            ev("d", 4, user("new")),
        ]);
        let expected = wire_view(&transcript, &target());
        assert_eq!(
            expected.events,
            vec![ev(
                "c",
                0,
                Body::User {
                    content: vec![Part::text("we listed files"), Part::text("new")]
                }
            )]
        );
        let request = Transcript::new(vec![
            ev("x", 0, user("Previously: we listed files. Go on.")),
            ev("y", 0, user("new")),
        ]);
        let mut actual = request_view(&request, &target());
        let exact = handoff_core::Comparison::exact();
        assert!(exact.diff(&expected, &actual).is_err());
        align_compaction_summaries(&compaction_summaries(&transcript), &mut actual);
        exact.diff(&expected, &actual).unwrap();
        let mut other = request_view(&request, &target());
        align_compaction_summaries(&["something else".into()], &mut other);
        assert!(exact.diff(&expected, &other).is_err());
    }
}
