//! What a wire cannot carry: each limit says it for people ([`WireLimit::note`]) and sets it aside
//! in a wire view ([`WireLimit::apply`]), so a comparison of a transcript with what came back
//! from the wire ignores exactly what the wire could not say, and says so.

use handoff_transcript::{AssistantPart, Body, Part, Transcript};

/// One thing a dialect's wire cannot express.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WireLimit {
    /// Tool results have no error flag (OpenAI Responses and Chat Completions): a failed tool
    /// reads as its output text.
    NoToolErrorFlag,
    /// No reasoning field (Chat Completions): thinking the caller keeps travels as plain text in
    /// the assistant message, without its signature.
    ThinkingAsText,
    /// Tool results hold text only (Chat Completions `tool` messages): their images travel in a
    /// user message right after the run of tool messages.
    ToolResultImagesInUserTurn,
    /// An assistant message holds its text before its tool calls (Chat Completions `content` and
    /// `tool_calls` are separate members): text after a tool call moves before the calls.
    TextBeforeToolCalls,
    /// The boundaries between an assistant message's texts (Chat Completions clients such as pi
    /// and the Vercel AI SDK send one string, the texts joined with nothing between).
    AssistantTextJoined,
    /// A tool result's texts come before its images (Gemini: `response.output`, then
    /// `functionResponse.parts`).
    ToolResultTextsFirst,
    /// Whitespace-only text parts are not sent (Anthropic rule A7).
    NoBlankText,
    /// Empty text parts are not sent (Gemini rule G7; an empty Chat string is no content).
    NoEmptyText,
}

impl WireLimit {
    /// One line for evidence and docs, naming the dialect.
    pub fn note(self, dialect: super::Dialect) -> String {
        let what = match self {
            WireLimit::NoToolErrorFlag => {
                "tool-result error flags (the wire has none; the model sees only the output text)"
            }
            WireLimit::ThinkingAsText => {
                "thinking as such (the wire has no reasoning field; kept thinking travels as plain \
                 text, without its signature)"
            }
            WireLimit::ToolResultImagesInUserTurn => {
                "images inside tool results (tool messages take text only; the images travel in \
                 a user message after the results)"
            }
            WireLimit::AssistantTextJoined => {
                "the boundaries between the texts of one assistant turn (clients send one string)"
            }
            WireLimit::TextBeforeToolCalls => {
                "the order of text and tool calls inside one assistant turn (text goes before \
                 the calls)"
            }
            WireLimit::ToolResultTextsFirst => {
                "the order of texts and images inside a tool result (texts go first)"
            }
            WireLimit::NoBlankText => "whitespace-only text parts (not sent)",
            WireLimit::NoEmptyText => "empty text parts (not sent)",
        };
        format!("set aside: {what}, which the {dialect} wire cannot carry")
    }

    /// Sets this limit aside in a wire view (a transcript already stripped of what no wire has).
    pub fn apply(self, view: &mut Transcript) {
        match self {
            WireLimit::NoToolErrorFlag => {
                for event in &mut view.events {
                    if let Body::ToolResult { is_error, .. } = &mut event.body {
                        *is_error = false;
                    }
                }
            }
            WireLimit::ThinkingAsText => {
                for event in &mut view.events {
                    if let Body::Assistant { content, .. } = &mut event.body {
                        content.retain_mut(|p| match p {
                            AssistantPart::Thinking(t) if t.text.is_empty() => false,
                            AssistantPart::Thinking(t) => {
                                *p = AssistantPart::text(std::mem::take(&mut t.text));
                                true
                            }
                            _ => true,
                        });
                    }
                }
                drop_empty_turns(view);
            }
            WireLimit::AssistantTextJoined => {
                for event in &mut view.events {
                    if let Body::Assistant { content, .. } = &mut event.body {
                        join_texts(content);
                    }
                }
            }
            WireLimit::ToolResultImagesInUserTurn => move_result_images(view),
            WireLimit::TextBeforeToolCalls => {
                for event in &mut view.events {
                    if let Body::Assistant { content, .. } = &mut event.body {
                        // A stable sort keeps the order among texts and among calls.
                        content.sort_by_key(|p| matches!(p, AssistantPart::ToolCall(_)));
                    }
                }
            }
            WireLimit::ToolResultTextsFirst => {
                for event in &mut view.events {
                    if let Body::ToolResult { content, .. } = &mut event.body {
                        content.sort_by_key(|p| !matches!(p, Part::Text { .. }));
                    }
                }
            }
            WireLimit::NoBlankText => drop_texts(view, |t| t.trim().is_empty(), false),
            WireLimit::NoEmptyText => drop_texts(view, str::is_empty, true),
        }
    }
}

/// Drops text parts `blank` says are not sent (in tool results too when `in_results`), then the
/// user and assistant turns left empty.
fn drop_texts(view: &mut Transcript, blank: impl Fn(&str) -> bool, in_results: bool) {
    for event in &mut view.events {
        match &mut event.body {
            Body::User { content } => {
                content.retain(|p| !matches!(p, Part::Text { text } if blank(text)))
            }
            Body::ToolResult { content, .. } if in_results => {
                content.retain(|p| !matches!(p, Part::Text { text } if blank(text)))
            }
            Body::Assistant { content, .. } => {
                content.retain(|p| !matches!(p, AssistantPart::Text { text } if blank(text)))
            }
            _ => {}
        }
    }
    drop_empty_turns(view);
}

/// Joins each run of consecutive text parts into one.
fn join_texts(content: &mut Vec<AssistantPart>) {
    let mut out: Vec<AssistantPart> = Vec::with_capacity(content.len());
    for part in content.drain(..) {
        match (out.last_mut(), part) {
            (Some(AssistantPart::Text { text: a }), AssistantPart::Text { text: b }) => {
                a.push_str(&b)
            }
            (_, part) => out.push(part),
        }
    }
    *content = out;
}

/// User and assistant turns with nothing left in them are not sent.
fn drop_empty_turns(view: &mut Transcript) {
    view.events.retain(|e| match &e.body {
        Body::User { content } => !content.is_empty(),
        Body::Assistant { content, .. } => !content.is_empty(),
        _ => true,
    });
}

/// The images of each run of tool results leave the results and follow the run as one user turn.
fn move_result_images(view: &mut Transcript) {
    let events = std::mem::take(&mut view.events);
    let mut images: Vec<Part> = Vec::new();
    let mut out = Vec::with_capacity(events.len());
    for mut event in events {
        let is_result = matches!(event.body, Body::ToolResult { .. });
        if !is_result && !images.is_empty() {
            out.push(image_turn(&event.id, std::mem::take(&mut images)));
        }
        if let Body::ToolResult { content, .. } = &mut event.body {
            let (texts, moved): (Vec<Part>, Vec<Part>) = std::mem::take(content)
                .into_iter()
                .partition(|p| matches!(p, Part::Text { .. }));
            *content = texts;
            images.extend(moved);
        }
        out.push(event);
    }
    if !images.is_empty() {
        out.push(image_turn("tool-result-images", images));
    }
    view.events = out;
}

fn image_turn(next_id: &str, images: Vec<Part>) -> handoff_transcript::Event {
    handoff_transcript::Event::new(
        format!("{next_id}-images"),
        handoff_transcript::Timestamp::from_millis(0),
        Body::User { content: images },
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::tests::ev;
    use crate::Dialect;
    use handoff_transcript::{Thinking, ToolCall};

    fn image() -> Part {
        Part::Image {
            media_type: "image/png".into(),
            data: vec![1],
        }
    }
    fn sample() -> Transcript {
        let call = AssistantPart::ToolCall(ToolCall::new("c", "ls", json!({})));
        Transcript::new(vec![
            ev(
                "a",
                Body::assistant(vec![
                    AssistantPart::Thinking(Thinking {
                        text: "think ".into(),
                        signature: None,
                    }),
                    AssistantPart::text("one "),
                    call,
                    AssistantPart::text("two"),
                    AssistantPart::text(""),
                ]),
            ),
            ev(
                "r",
                Body::ToolResult {
                    call_id: "c".into(),
                    content: vec![image(), Part::text(" "), Part::text("")],
                    is_error: true,
                },
            ),
        ])
    }
    fn applied(limits: &[WireLimit]) -> Transcript {
        let mut view = sample();
        for l in limits {
            l.apply(&mut view);
        }
        view
    }

    #[test]
    fn chat_limits_in_order_turn_thinking_into_one_text_before_the_calls() {
        let view = applied(Dialect::OpenaiChat.limits());
        let Body::Assistant { content, .. } = &view.events[0].body else {
            panic!()
        };
        assert_eq!(content[0], AssistantPart::text("think one two"));
        assert!(matches!(content[1], AssistantPart::ToolCall(_)));
        assert_eq!(view.events[1].body, Body::tool_output("c", " "));
        assert_eq!(
            view.events[2].body,
            Body::User {
                content: vec![image()]
            },
            "the images follow the results as a user turn"
        );
    }

    #[test]
    fn each_other_limit_does_its_one_thing() {
        let view = applied(&[WireLimit::ToolResultTextsFirst]);
        let Body::ToolResult { content, .. } = &view.events[1].body else {
            panic!()
        };
        assert_eq!(content[2], image());
        let view = applied(&[WireLimit::NoBlankText]);
        let Body::Assistant { content, .. } = &view.events[0].body else {
            panic!()
        };
        assert_eq!(content.len(), 4, "the empty text goes");
        assert_eq!(
            view.events[1],
            sample().events[1],
            "results keep blank text"
        );
        assert!(WireLimit::NoToolErrorFlag
            .note(Dialect::OpenaiResponses)
            .contains("openai-responses"));
    }
}
