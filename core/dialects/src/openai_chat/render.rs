//! Canonical transcript → Chat Completions `messages`.

use serde_json::{json, Map, Value};

use super::MAX_TOOL_CALL_ID;
use crate::{image_url, result_text, visible, Dialect, RenderError, RenderOptions};
use handoff_transcript::{AssistantPart, Body, Part, Transcript};

type Visible<'a> = (usize, Option<&'a str>);

/// Renders `transcript` as Chat Completions messages (a first `system` message when
/// `options.system` is set).
///
/// Consecutive assistant turns become one assistant message; each run of user turns and tool
/// results becomes the `tool` messages first (C1, C2), then one user message with the images the
/// results held, then the user messages. Empty texts are not sent. Thinking the caller keeps
/// (`thinking_from`) is shown as text, as the wire has no reasoning field; other thinking is left
/// out. Fails on a tool-call id over [`MAX_TOOL_CALL_ID`] characters (C3).
pub fn render(transcript: &Transcript, options: &RenderOptions) -> Result<Vec<Value>, RenderError> {
    let visible = visible::checked(transcript)?;
    let keeps = options.thinking_from(Dialect::OpenaiChat);
    let mut messages = Vec::with_capacity(visible.len() + 1);
    if let Some(system) = &options.system {
        messages.push(json!({"role": "system", "content": system}));
    }
    let is_assistant = |(index, summary): Visible<'_>| {
        summary.is_none() && matches!(transcript.events[index].body, Body::Assistant { .. })
    };
    let mut i = 0;
    while i < visible.len() {
        let assistant = is_assistant(visible[i]);
        let end = visible[i..]
            .iter()
            .position(|v| is_assistant(*v) != assistant)
            .map_or(visible.len(), |n| i + n);
        if assistant {
            messages.extend(assistant_message(transcript, &visible[i..end], &keeps)?);
        } else {
            user_side(transcript, &visible[i..end], &mut messages);
        }
        i = end;
    }
    Ok(messages)
}

/// One assistant message for a run of assistant turns: their texts as `content` (one string, or
/// text parts when there are several; `null` when there is none but there are calls; kept
/// thinking counts as text), their calls as `tool_calls`. `None` when nothing in the run can be
/// sent.
fn assistant_message(
    transcript: &Transcript,
    run: &[Visible<'_>],
    keeps: &[String],
) -> Result<Option<Value>, RenderError> {
    let mut texts: Vec<&str> = Vec::new();
    let mut calls: Vec<Value> = Vec::new();
    for &(index, _) in run {
        let Body::Assistant { content, origin } = &transcript.events[index].body else {
            unreachable!("a run of assistant turns")
        };
        let turn_maker = origin.as_ref().map(|o| o.provider.as_str());
        for (p, part) in content.iter().enumerate() {
            match part {
                AssistantPart::Text { text } if text.is_empty() => {}
                AssistantPart::Text { text } => texts.push(text),
                AssistantPart::Thinking(t) => {
                    // No reasoning field: thinking the caller keeps is shown as text, the rest
                    // is display-only.
                    let maker = t
                        .signature
                        .as_ref()
                        .map(|s| s.provider.as_str())
                        .or(turn_maker);
                    if maker.is_some_and(|m| keeps.iter().any(|k| k == m)) && !t.text.is_empty() {
                        texts.push(&t.text);
                    }
                }
                AssistantPart::ToolCall(call) => {
                    let len = call.id.chars().count();
                    if len > MAX_TOOL_CALL_ID {
                        return Err(RenderError::at(
                            transcript,
                            index,
                            format!("body.content[{p}].id"),
                            format!(
                                "tool-call id {:?} is {len} characters; the chat wire takes at \
                                 most {MAX_TOOL_CALL_ID} (rule C3)",
                                call.id
                            ),
                        ));
                    }
                    calls.push(json!({"id": call.id, "type": "function", "function": {
                        "name": call.name, "arguments": call.structured_arguments().to_string()}}));
                }
                AssistantPart::WebSearch(_) => {
                    return Err(RenderError::at(
                        transcript,
                        index,
                        format!("body.content[{p}]"),
                        "an OpenAI web search has no Chat Completions form",
                    ))
                }
            }
        }
    }
    if texts.is_empty() && calls.is_empty() {
        return Ok(None);
    }
    let mut message = Map::new();
    message.insert("role".into(), "assistant".into());
    let content = match texts.as_slice() {
        [] => Value::Null,
        [one] => Value::from(*one),
        several => Value::Array(several.iter().map(|t| text_part(t)).collect()),
    };
    message.insert("content".into(), content);
    if !calls.is_empty() {
        message.insert("tool_calls".into(), Value::Array(calls));
    }
    Ok(Some(Value::Object(message)))
}

/// The messages of a run of user turns, summaries and tool results: tool messages, then the
/// results' images as one user message, then the user messages, each in order.
fn user_side(transcript: &Transcript, run: &[Visible<'_>], messages: &mut Vec<Value>) {
    let mut users: Vec<Value> = Vec::new();
    let mut images: Vec<Value> = Vec::new();
    for &(index, summary) in run {
        if let Some(summary) = summary {
            users.extend(user_message(&[Part::text(summary)]));
            continue;
        }
        match &transcript.events[index].body {
            Body::User { content } => users.extend(user_message(content)),
            Body::ToolResult {
                call_id, content, ..
            } => {
                let text = result_text(content, |several| {
                    Value::Array(several.iter().map(|t| text_part(t)).collect())
                });
                messages.push(json!({"role": "tool", "tool_call_id": call_id, "content": text}));
                images.extend(content.iter().filter_map(|p| {
                    image_url(p).map(|url| json!({"type": "image_url", "image_url": {"url": url}}))
                }));
            }
            Body::Assistant { .. } | Body::Compaction { .. } => {
                unreachable!("assistant turns and compactions are not in a user-side run")
            }
        }
    }
    if !images.is_empty() {
        messages.push(json!({"role": "user", "content": images}));
    }
    messages.extend(users);
}

/// A user message: one text as a string, else an array of text and `image_url` parts; `None`
/// when nothing is left once empty texts are left out.
fn user_message(content: &[Part]) -> Option<Value> {
    let parts: Vec<&Part> = content
        .iter()
        .filter(|p| !matches!(p, Part::Text { text } if text.is_empty()))
        .collect();
    let content = match parts.as_slice() {
        [] => return None,
        [Part::Text { text }] => Value::from(text.as_str()),
        several => Value::Array(
            several
                .iter()
                .map(|p| match p {
                    Part::Text { text } => text_part(text),
                    image => json!({"type": "image_url", "image_url": {"url": image_url(image)}}),
                })
                .collect(),
        ),
    };
    Some(json!({"role": "user", "content": content}))
}

fn text_part(text: &str) -> Value {
    json!({"type": "text", "text": text})
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::openai_chat::{parse, validate};
    use crate::tests::{ev, user};
    use handoff_transcript::{Event, Origin, Signature, Thinking, ToolCall};

    fn call(id: &str) -> AssistantPart {
        AssistantPart::ToolCall(ToolCall::new(
            id,
            "bash",
            json!({"command": "ls", "big": 12345678901234567890u64}),
        ))
    }
    fn assistant(id: &str, content: Vec<AssistantPart>) -> Event {
        ev(id, Body::assistant(content))
    }
    fn result(id: &str, call: &str, content: Vec<Part>, is_error: bool) -> Event {
        ev(
            id,
            Body::ToolResult {
                call_id: call.into(),
                content,
                is_error,
            },
        )
    }
    fn image() -> Part {
        Part::Image {
            media_type: "image/png".into(),
            data: vec![1, 2, 3],
        }
    }

    #[test]
    fn tool_messages_come_first_and_result_images_follow_them() {
        let t = Transcript::new(vec![
            user("u", "hi"),
            assistant(
                "a",
                vec![
                    AssistantPart::text("x"),
                    call("c1"),
                    call("c2"),
                    AssistantPart::text("y"),
                ],
            ),
            result("r1", "c1", vec![Part::text("out"), image()], false),
            user("u2", "wait"),
            result("r2", "c2", vec![], true),
            user("u3", "go on"),
        ]);
        let m = render(&t, &RenderOptions::default()).unwrap();
        let roles: Vec<&str> = m.iter().map(|m| m["role"].as_str().unwrap()).collect();
        assert_eq!(
            roles,
            ["user", "assistant", "tool", "tool", "user", "user", "user"]
        );
        assert_eq!(
            m[1]["content"],
            json!([{"type": "text", "text": "x"}, {"type": "text", "text": "y"}])
        );
        assert_eq!(
            m[1]["tool_calls"][0]["function"]["arguments"],
            r#"{"command":"ls","big":12345678901234567890}"#
        );
        assert_eq!(
            m[2],
            json!({"role": "tool", "tool_call_id": "c1", "content": "out"})
        );
        assert_eq!(m[3]["content"], "");
        assert_eq!(
            m[4]["content"][0]["image_url"]["url"],
            "data:image/png;base64,AQID"
        );
        validate(&json!({ "messages": m })).unwrap();
        let back = parse(&json!(m)).unwrap().transcript;
        let Body::Assistant { content, .. } = &back.events[1].body else {
            panic!()
        };
        assert_eq!(content[2], call("c1"), "ids and arguments survive");
    }

    #[test]
    fn consecutive_assistant_turns_are_one_message() {
        let t = Transcript::new(vec![
            user("u", "hi"),
            assistant("a1", vec![call("c1")]),
            assistant("a2", vec![call("c2")]),
            result("r1", "c1", vec![Part::text("1")], false),
            result("r2", "c2", vec![Part::text("2")], false),
        ]);
        let m = render(&t, &RenderOptions::default()).unwrap();
        assert_eq!(m.len(), 4);
        assert_eq!(m[1]["content"], Value::Null);
        assert_eq!(m[1]["tool_calls"].as_array().unwrap().len(), 2);
        crate::openai_chat::validate_history(&json!(m)).unwrap();
    }

    #[test]
    fn thinking_is_left_out_unless_the_caller_keeps_it_then_it_is_text() {
        let thinking = AssistantPart::Thinking(Thinking {
            text: "hm. ".into(),
            signature: Some(Signature {
                provider: "anthropic".into(),
                model: None,
                value: "sig".into(),
                redacted: false,
            }),
        });
        let t = Transcript::new(vec![
            user("u", "hi"),
            ev(
                "a",
                Body::Assistant {
                    content: vec![thinking.clone(), AssistantPart::text("ok")],
                    origin: Some(Origin {
                        provider: "anthropic".into(),
                        model: None,
                        api: None,
                    }),
                },
            ),
            assistant("b", vec![thinking]),
            user("u2", "next"),
        ]);
        let m = render(&t, &RenderOptions::default()).unwrap();
        assert_eq!(m.len(), 3, "a turn of display-only thinking is not sent");
        assert_eq!(m[1]["content"], "ok");
        let keep = RenderOptions {
            thinking_from: Some(vec!["anthropic".into()]),
            ..RenderOptions::default()
        };
        let m = render(&t, &keep).unwrap();
        assert_eq!(
            m[1]["content"],
            json!([{"type": "text", "text": "hm. "}, {"type": "text", "text": "ok"}, {"type": "text", "text": "hm. "}]),
            "kept thinking is text, in order"
        );
        assert!(
            !json!(m).to_string().contains("sig"),
            "no signature travels"
        );
    }

    #[test]
    fn ids_over_forty_characters_are_refused_naming_the_call() {
        let long = "c".repeat(41);
        let t = Transcript::new(vec![user("u", "hi"), assistant("a", vec![call(&long)])]);
        let e = render(&t, &RenderOptions::default()).unwrap_err();
        assert_eq!((e.index, e.field.as_str()), (1, "body.content[0].id"));
        assert!(e.message.contains("C3"), "{e}");
    }

    #[test]
    fn a_system_prompt_is_the_first_message_and_parses_back_as_system() {
        let t = Transcript::new(vec![user("u", "hi")]);
        let options = RenderOptions {
            system: Some("be brief".into()),
            ..RenderOptions::default()
        };
        let m = render(&t, &options).unwrap();
        assert_eq!(m[0], json!({"role": "system", "content": "be brief"}));
        assert_eq!(parse(&json!(m)).unwrap().system, ["be brief"]);
    }
}
