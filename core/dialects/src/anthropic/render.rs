//! Canonical transcript → Messages request body.

use serde_json::{Map, Value};

use super::blocks::WireBlock;
use handoff_transcript::{AssistantPart, Body, Part, Thinking, Transcript};

/// How to render.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RenderOptions {
    /// The `model` member of the body; when set, signed thinking made by another model is left out
    /// too (a signature goes back only to the model that made it).
    pub model: Option<String>,
    /// The `max_tokens` member of the body, if any.
    pub max_tokens: Option<u64>,
    /// Providers whose signed thinking goes back (normally just `anthropic`); other thinking is
    /// display-only and left out.
    pub thinking_from: Vec<String>,
}

impl Default for RenderOptions {
    fn default() -> Self {
        RenderOptions {
            model: None,
            max_tokens: None,
            thinking_from: vec![super::PROVIDER.to_owned()],
        }
    }
}

pub use crate::RenderError;

/// Where one rendered event landed: `messages[message].content[first_block..first_block+blocks]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement {
    /// Index of the event in the transcript.
    pub event_index: usize,
    /// Index of the message.
    pub message: usize,
    /// Index of its first block in that message.
    pub first_block: usize,
    /// How many blocks it has there (0 for an event whose parts were all left out).
    pub blocks: usize,
}

/// A rendered body and where each rendered event went (events left out entirely have none).
#[derive(Clone, Debug, PartialEq)]
pub struct Rendered {
    /// `{"model"?, "max_tokens"?, "messages": [...]}`.
    pub body: Value,
    /// One per rendered event, in transcript order.
    pub placements: Vec<Placement>,
}

/// The blocks of a user turn or tool-result content, one per part (nothing left out).
pub fn user_blocks(parts: &[Part]) -> Vec<WireBlock<'_>> {
    parts.iter().map(WireBlock::from_part).collect()
}

/// The blocks of an assistant turn, in order. Thinking goes back only when it is signed by one of
/// `thinking_from` (and, if `model` is set, by that model); other thinking is left out. Fails on a
/// part the API cannot take at all, naming the part's field.
pub fn assistant_blocks<'a>(
    content: &'a [AssistantPart],
    thinking_from: &[String],
    model: Option<&str>,
) -> Result<Vec<WireBlock<'a>>, (String, String)> {
    let mut blocks = Vec::with_capacity(content.len());
    for (i, part) in content.iter().enumerate() {
        match part {
            AssistantPart::Text { text } => blocks.push(WireBlock::Text(text)),
            AssistantPart::Thinking(t) => {
                if let Some(block) = thinking_block(t, thinking_from, model)
                    .map_err(|m| (format!("body.content[{i}]"), m))?
                {
                    blocks.push(block);
                }
            }
            AssistantPart::ToolCall(call) => {
                if call.arguments().is_some_and(|a| !a.is_object()) {
                    return Err((
                        format!("body.content[{i}].arguments"),
                        "tool_use.input must be a JSON object".into(),
                    ));
                }
                blocks.push(WireBlock::tool_use(call));
            }
            AssistantPart::WebSearch(_) => {
                return Err((
                    format!("body.content[{i}]"),
                    "an OpenAI web search has no Messages form".into(),
                ))
            }
        }
    }
    Ok(blocks)
}

/// Whether this thinking goes back to Anthropic (signed by a listed provider, and by `model` if
/// set).
pub(crate) fn thinking_goes_back(
    t: &Thinking,
    thinking_from: &[String],
    model: Option<&str>,
) -> bool {
    match &t.signature {
        None => false,
        Some(s) => {
            thinking_from.contains(&s.provider)
                && match (model, s.model.as_deref()) {
                    (Some(want), Some(made)) => want == made,
                    _ => true,
                }
        }
    }
}

fn thinking_block<'a>(
    t: &'a Thinking,
    thinking_from: &[String],
    model: Option<&str>,
) -> Result<Option<WireBlock<'a>>, String> {
    if !thinking_goes_back(t, thinking_from, model) {
        return Ok(None);
    }
    let s = t.signature.as_ref().expect("checked above");
    if s.redacted {
        if !t.text.is_empty() {
            return Err("redacted thinking with visible text cannot be sent back".into());
        }
        Ok(Some(WireBlock::RedactedThinking(&s.value)))
    } else {
        Ok(Some(WireBlock::Thinking {
            thinking: &t.text,
            signature: &s.value,
        }))
    }
}

/// Renders `transcript` as a Messages request body (`{"model"?, "max_tokens"?, "messages"}`).
pub fn render(transcript: &Transcript, options: &RenderOptions) -> Result<Value, RenderError> {
    render_with_placements(transcript, options).map(|r| r.body)
}

struct Item<'a> {
    event_index: usize,
    assistant: bool,
    result: bool,
    blocks: Vec<WireBlock<'a>>,
}

/// Renders `transcript` and says where each event went.
///
/// Same-role turns are merged into one message (A4, A10); in a user message the `tool_result`
/// blocks come first (A3); empty and whitespace-only text blocks are left out (A7); thinking goes
/// back only to its maker. The last compaction governs: the events it replaces are left out and
/// its summary is a user text at its own place (as in `dialect::visible`).
pub fn render_with_placements(
    transcript: &Transcript,
    options: &RenderOptions,
) -> Result<Rendered, RenderError> {
    let events = &transcript.events;
    let fail = |index: usize, field: String, message: String| RenderError {
        index,
        event_id: events[index].id.clone(),
        field,
        message,
    };
    // The governing compaction: everything up to what it replaces is out of view.
    let mut start = 0;
    if let Some(c) = events
        .iter()
        .rposition(|e| matches!(e.body, Body::Compaction { .. }))
    {
        let Body::Compaction {
            replaces_through, ..
        } = &events[c].body
        else {
            unreachable!()
        };
        let r = events[..c]
            .iter()
            .position(|e| &e.id == replaces_through)
            .ok_or_else(|| {
                fail(
                    c,
                    "body.replaces_through".into(),
                    format!("{replaces_through:?} is not an earlier event"),
                )
            })?;
        start = r + 1;
    }

    let mut items: Vec<Item<'_>> = Vec::with_capacity(events.len());
    for (index, event) in events.iter().enumerate().skip(start) {
        match &event.body {
            Body::User { content } => items.push(Item {
                event_index: index,
                assistant: false,
                result: false,
                blocks: user_blocks(content)
                    .into_iter()
                    .filter(|b| !is_blank_text(b))
                    .collect(),
            }),
            Body::Assistant { content, .. } => {
                let blocks =
                    assistant_blocks(content, &options.thinking_from, options.model.as_deref())
                        .map_err(|(field, message)| fail(index, field, message))?;
                let blocks: Vec<_> = blocks.into_iter().filter(|b| !is_blank_text(b)).collect();
                if blocks.is_empty() && !content.is_empty() {
                    // Everything in it was display-only: the turn is not sent at all.
                    continue;
                }
                items.push(Item {
                    event_index: index,
                    assistant: true,
                    result: false,
                    blocks,
                })
            }
            Body::ToolResult {
                call_id,
                content,
                is_error,
            } => items.push(Item {
                event_index: index,
                assistant: false,
                result: true,
                blocks: vec![WireBlock::tool_result(call_id, content, *is_error, false)],
            }),
            Body::Compaction { .. } => items.extend(summary_item(events, index)),
        }
    }

    // Merge runs of the same role; in a user run, results first.
    let mut messages: Vec<Value> = Vec::new();
    let mut placements: Vec<Placement> = Vec::with_capacity(items.len());
    let mut i = 0;
    while i < items.len() {
        let assistant = items[i].assistant;
        let mut j = i;
        while j < items.len() && items[j].assistant == assistant {
            j += 1;
        }
        let run = &mut items[i..j];
        if !assistant {
            // A stable sort keeps the order within results and within the rest.
            run.sort_by_key(|item| !item.result);
        }
        let mut content = Vec::new();
        for item in run.iter() {
            placements.push(Placement {
                event_index: item.event_index,
                message: messages.len(),
                first_block: content.len(),
                blocks: item.blocks.len(),
            });
            for block in &item.blocks {
                content.push(serde_json::to_value(block).map_err(|e| {
                    fail(
                        item.event_index,
                        "body".into(),
                        format!("cannot serialise: {e}"),
                    )
                })?);
            }
        }
        let mut message = Map::new();
        message.insert(
            "role".into(),
            Value::from(if assistant { "assistant" } else { "user" }),
        );
        message.insert("content".into(), Value::Array(content));
        messages.push(Value::Object(message));
        i = j;
    }
    placements.sort_by_key(|p| p.event_index);

    let mut body = Map::new();
    if let Some(model) = &options.model {
        body.insert("model".into(), Value::from(model.as_str()));
    }
    if let Some(max) = options.max_tokens {
        body.insert("max_tokens".into(), Value::from(max));
    }
    body.insert("messages".into(), Value::Array(messages));
    Ok(Rendered {
        body: Value::Object(body),
        placements,
    })
}

/// A compaction's summary as a user turn.
fn summary_item(events: &[handoff_transcript::Event], index: usize) -> Option<Item<'_>> {
    let Body::Compaction { summary, .. } = &events[index].body else {
        return None;
    };
    let blocks = if summary.trim().is_empty() {
        Vec::new()
    } else {
        vec![WireBlock::Text(summary)]
    };
    Some(Item {
        event_index: index,
        assistant: false,
        result: false,
        blocks,
    })
}

fn is_blank_text(block: &WireBlock<'_>) -> bool {
    matches!(block, WireBlock::Text(t) if t.trim().is_empty())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::tests::{ev, user};
    use handoff_transcript::{Event, Origin, Signature, ToolCall};

    fn call(id: &str) -> AssistantPart {
        AssistantPart::ToolCall(ToolCall::new(id, "ls", json!({})))
    }
    fn assistant(id: &str, content: Vec<AssistantPart>) -> Event {
        ev(id, Body::assistant(content))
    }
    fn result(id: &str, call: &str) -> Event {
        ev(id, Body::tool_output(call, "out"))
    }
    fn thinking(provider: &str) -> AssistantPart {
        AssistantPart::Thinking(Thinking {
            text: "hm".into(),
            signature: Some(Signature {
                provider: provider.into(),
                model: Some("m1".into()),
                value: "sig".into(),
                redacted: false,
            }),
        })
    }

    #[test]
    fn merges_turns_and_puts_results_first() {
        let t = Transcript::new(vec![
            user("u", "hi"),
            assistant("a", vec![AssistantPart::text("x"), call("c1"), call("c2")]),
            result("r1", "c1"),
            user("u2", "wait"),
            result("r2", "c2"),
            assistant("b", vec![AssistantPart::text("done")]),
            assistant("b2", vec![AssistantPart::text("more")]),
        ]);
        let r = render_with_placements(&t, &RenderOptions::default()).unwrap();
        let m = &r.body["messages"];
        assert_eq!(m.as_array().unwrap().len(), 4);
        let kinds: Vec<_> = m[2]["content"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["type"].as_str().unwrap())
            .collect();
        assert_eq!(kinds, ["tool_result", "tool_result", "text"]);
        assert_eq!(m[3]["content"].as_array().unwrap().len(), 2);
        assert_eq!(
            r.placements[3],
            Placement {
                event_index: 3,
                message: 2,
                first_block: 2,
                blocks: 1
            }
        );
        assert_eq!(
            r.placements[4],
            Placement {
                event_index: 4,
                message: 2,
                first_block: 1,
                blocks: 1
            }
        );
        super::super::validate(&json!({"messages": m.as_array().unwrap().iter().cloned().chain([json!({"role":"user","content":"go"})]).collect::<Vec<_>>()})).unwrap();
    }

    #[test]
    fn thinking_only_back_to_its_maker_and_model() {
        let t = Transcript::new(vec![
            user("u", "hi"),
            assistant("a", vec![thinking("openai"), AssistantPart::text("x")]),
            assistant("b", vec![thinking("openai")]),
            user("u2", "again"),
            ev(
                "c",
                Body::Assistant {
                    content: vec![thinking("anthropic"), AssistantPart::text("y")],
                    origin: Some(Origin {
                        provider: "anthropic".into(),
                        model: None,
                        api: None,
                    }),
                },
            ),
        ]);
        let body = render(&t, &RenderOptions::default()).unwrap();
        let m = body["messages"].as_array().unwrap();
        assert_eq!(m.len(), 4, "{body}");
        assert_eq!(m[1]["content"], json!([{"type":"text","text":"x"}]));
        assert_eq!(m[3]["content"][0]["type"], "thinking");
        let other_model = RenderOptions {
            model: Some("m2".into()),
            ..RenderOptions::default()
        };
        let body = render(&t, &other_model).unwrap();
        assert_eq!(
            body["messages"][3]["content"],
            json!([{"type":"text","text":"y"}])
        );
    }

    #[test]
    fn no_empty_text_blocks() {
        let t = Transcript::new(vec![
            ev(
                "u",
                Body::User {
                    content: vec![Part::text(""), Part::text("hi"), Part::text("  ")],
                },
            ),
            assistant(
                "a",
                vec![AssistantPart::text(""), AssistantPart::text("ok")],
            ),
        ]);
        let body = render(&t, &RenderOptions::default()).unwrap();
        assert_eq!(
            body["messages"][0]["content"],
            json!([{"type":"text","text":"hi"}])
        );
        assert_eq!(
            body["messages"][1]["content"],
            json!([{"type":"text","text":"ok"}])
        );
    }

    #[test]
    fn compaction_replaces_what_it_summarises() {
        let t = Transcript::new(vec![
            user("u", "old"),
            assistant("a", vec![AssistantPart::text("older")]),
            ev(
                "c",
                Body::Compaction {
                    summary: "summary".into(),
                    replaces_through: "a".into(),
                },
            ),
            user("u2", "new"),
        ]);
        let body = render(&t, &RenderOptions::default()).unwrap();
        assert_eq!(
            body["messages"],
            json!([{"role":"user","content":[{"type":"text","text":"summary"},{"type":"text","text":"new"}]}])
        );
    }

    /// Codex's order: the user message a compaction keeps, then its summary.
    #[test]
    fn a_kept_event_before_its_compaction_comes_before_the_summary() {
        let t = Transcript::new(vec![
            user("u", "old"),
            assistant("a", vec![AssistantPart::text("older")]),
            user("kept", "kept"),
            ev(
                "c",
                Body::Compaction {
                    summary: "summary".into(),
                    replaces_through: "a".into(),
                },
            ),
            assistant("a2", vec![AssistantPart::text("next")]),
        ]);
        let body = render(&t, &RenderOptions::default()).unwrap();
        assert_eq!(
            body["messages"],
            json!([
                {"role":"user","content":[{"type":"text","text":"kept"},{"type":"text","text":"summary"}]},
                {"role":"assistant","content":[{"type":"text","text":"next"}]}
            ])
        );
    }

    #[test]
    fn non_object_arguments_are_refused_by_field() {
        let t = Transcript::new(vec![
            user("u", "hi"),
            ev(
                "a",
                Body::assistant(vec![AssistantPart::ToolCall(ToolCall::new(
                    "c",
                    "n",
                    json!([1]),
                ))]),
            ),
        ]);
        let e = render(&t, &RenderOptions::default()).unwrap_err();
        assert_eq!(
            (e.index, e.field.as_str()),
            (1, "body.content[0].arguments")
        );
    }

    #[test]
    fn parse_reads_back_what_render_wrote_by_placement() {
        let image = Part::Image {
            media_type: "image/png".into(),
            data: vec![1, 2, 3],
        };
        let t = Transcript::new(vec![
            ev(
                "u",
                Body::User {
                    content: vec![Part::text("look"), image.clone()],
                },
            ),
            ev(
                "a",
                Body::Assistant {
                    content: vec![
                        thinking("anthropic"),
                        AssistantPart::text("x"),
                        call("functions.ls:1"),
                    ],
                    origin: Some(Origin {
                        provider: "anthropic".into(),
                        model: Some("m1".into()),
                        api: None,
                    }),
                },
            ),
            ev(
                "r",
                Body::ToolResult {
                    call_id: "functions.ls:1".into(),
                    content: vec![image, Part::text("out")],
                    is_error: true,
                },
            ),
            user("u2", "next"),
        ]);
        let r = render_with_placements(&t, &RenderOptions::default()).unwrap();
        let parsed = super::super::parse(&r.body).unwrap();
        for p in &r.placements {
            let blocks =
                &parsed.messages[p.message].blocks[p.first_block..p.first_block + p.blocks];
            let original = &t.events[p.event_index].body;
            let back = match original {
                Body::User { .. } => Body::User {
                    content: blocks
                        .iter()
                        .map(|b| b.clone().into_part().unwrap())
                        .collect(),
                },
                Body::Assistant { origin, .. } => Body::Assistant {
                    content: blocks
                        .iter()
                        .map(|b| b.clone().into_assistant_part().unwrap())
                        .collect(),
                    origin: origin.clone(),
                },
                _ => match &blocks[0] {
                    crate::anthropic::ParsedBlock::ToolResult {
                        call_id,
                        content,
                        is_error,
                    } => Body::ToolResult {
                        call_id: call_id.clone(),
                        content: content.clone(),
                        is_error: *is_error,
                    },
                    other => panic!("{other:?}"),
                },
            };
            // The signature's model is the message's (unknown here), so compare with it cleared.
            let clear = |b: &Body| {
                let mut b = b.clone();
                if let Body::Assistant { content, .. } = &mut b {
                    for part in content {
                        if let AssistantPart::Thinking(Thinking {
                            signature: Some(s), ..
                        }) = part
                        {
                            s.model = None;
                        }
                    }
                }
                b
            };
            assert_eq!(clear(&back), clear(original), "event {}", p.event_index);
        }
        assert_eq!(r.placements.len(), 4);
    }
}
