//! Canonical transcript → `input` items.

use std::collections::HashSet;

use serde_json::{json, Value};

use super::content::{output, parts};
use super::PROVIDER;
use crate::{visible, Dialect, RenderError, RenderOptions};
use handoff_transcript::{AssistantPart, Body, Event, Signature, ToolInput, Transcript, WebSearch};

/// Renders `transcript` as the `input` items the model should see, for `model` (when known).
///
/// Compactions are applied (the summary, as a user message at the compaction's place, stands in
/// for the events it replaces; a compaction that replaces no known event shows its summary in
/// place). Thinking goes back only as encrypted reasoning to the provider and model that made it;
/// any other thinking is display-only and left out.
pub fn render(transcript: &Transcript, model: Option<&str>) -> Vec<Value> {
    let options = RenderOptions {
        model: model.map(str::to_owned),
        ..RenderOptions::default()
    };
    items(transcript, visible::events(transcript), &options)
}

/// Renders `transcript` as `input` items with `options` (its `model` and `thinking_from`); a
/// compaction that replaces no earlier event is an error naming it.
pub fn render_with(
    transcript: &Transcript,
    options: &RenderOptions,
) -> Result<Vec<Value>, RenderError> {
    Ok(items(transcript, visible::checked(transcript)?, options))
}

fn items(
    transcript: &Transcript,
    visible: Vec<(usize, Option<&str>)>,
    options: &RenderOptions,
) -> Vec<Value> {
    let thinking_from = options.thinking_from(Dialect::OpenaiResponses);
    let model = options.model.as_deref();
    let mut input = Vec::with_capacity(visible.len());
    // A result answers a custom (freeform) call with a `custom_tool_call_output`.
    let freeform_calls = freeform_call_ids(transcript);
    for (index, summary) in visible {
        if let Some(summary) = summary {
            input.push(json!({"type": "message", "role": "user",
                "content": [{"type": "input_text", "text": summary}]}));
            continue;
        }
        match &transcript.events[index].body {
            Body::User { content } => {
                input.push(json!({"type": "message", "role": "user", "content": parts(content)}))
            }
            Body::Assistant { content, .. } => {
                assistant_items(content, &thinking_from, model, &mut input)
            }
            Body::ToolResult {
                call_id, content, ..
            } => {
                let kind = if freeform_calls.contains(call_id.as_str()) {
                    "custom_tool_call_output"
                } else {
                    "function_call_output"
                };
                input.push(json!({"type": kind, "call_id": call_id, "output": output(content)}))
            }
            Body::Compaction { .. } => unreachable!("visible events show compactions as summaries"),
        }
    }
    input
}

/// The items of one assistant turn: runs of text become one assistant message; reasoning and
/// function calls are items of their own, in order.
fn assistant_items(
    content: &[AssistantPart],
    thinking_from: &[String],
    model: Option<&str>,
    items: &mut Vec<Value>,
) {
    let mut texts: Vec<Value> = Vec::new();
    let flush = |texts: &mut Vec<Value>, items: &mut Vec<Value>| {
        if !texts.is_empty() {
            items.push(
                json!({"type": "message", "role": "assistant", "content": std::mem::take(texts)}),
            );
        }
    };
    for part in content {
        match part {
            AssistantPart::Text { text } => {
                texts.push(json!({"type": "output_text", "text": text}))
            }
            AssistantPart::Thinking(thinking) => {
                let Some(signature) = &thinking.signature else {
                    continue;
                };
                if !replayable(signature, thinking_from, model) {
                    continue;
                }
                flush(&mut texts, items);
                let summary: Vec<Value> = if thinking.text.is_empty() {
                    Vec::new()
                } else {
                    vec![json!({"type": "summary_text", "text": thinking.text})]
                };
                items.push(json!({"type": "reasoning", "summary": summary,
                    "encrypted_content": signature.value}));
            }
            AssistantPart::ToolCall(call) => {
                flush(&mut texts, items);
                items.push(match &call.input {
                    ToolInput::Arguments(arguments) => {
                        json!({"type": "function_call", "call_id": call.id, "name": call.name,
                            "arguments": arguments.to_string()})
                    }
                    ToolInput::Freeform(text) => {
                        json!({"type": "custom_tool_call", "call_id": call.id, "name": call.name,
                            "input": text})
                    }
                });
            }
            AssistantPart::WebSearch(search) => {
                flush(&mut texts, items);
                items.push(web_search_item(search));
            }
        }
    }
    flush(&mut texts, items);
}

/// The ids of the transcript's freeform calls.
fn freeform_call_ids(transcript: &Transcript) -> HashSet<&str> {
    transcript
        .events
        .iter()
        .flat_map(Event::freeform_call_ids)
        .collect()
}

/// `{"type": "web_search_call", "id"?, "status"?, "action"}`, as Codex resends it.
pub(crate) fn web_search_item(search: &WebSearch) -> Value {
    let mut item = serde_json::Map::with_capacity(4);
    item.insert("type".into(), Value::from("web_search_call"));
    if let Some(id) = &search.id {
        item.insert("id".into(), Value::from(id.as_str()));
    }
    if let Some(status) = &search.status {
        item.insert("status".into(), Value::from(status.as_str()));
    }
    item.insert("action".into(), search.action.clone());
    Value::Object(item)
}

/// Encrypted reasoning goes back only to OpenAI (when the caller keeps its thinking) and to the
/// model that made it (rule R5).
fn replayable(signature: &Signature, thinking_from: &[String], model: Option<&str>) -> bool {
    signature.provider == PROVIDER
        && thinking_from.iter().any(|p| p == PROVIDER)
        && match (&signature.model, model) {
            (Some(made_by), Some(target)) => made_by == target,
            _ => true,
        }
}

#[cfg(test)]
mod tests {
    use super::super::tests::sample;
    use super::*;
    use crate::tests::ev;

    #[test]
    fn render_leaves_out_reasoning_made_by_another_model_or_not_kept() {
        let input = render(&sample(), Some("o3"));
        assert!(input.iter().all(|i| i["type"] != "reasoning"));
        let kept = render(&sample(), Some("gpt-5"));
        assert_eq!(kept[1]["type"], "reasoning");
        let none = render_with(
            &sample(),
            &RenderOptions {
                model: Some("gpt-5".into()),
                thinking_from: Some(vec![]),
                ..RenderOptions::default()
            },
        )
        .unwrap();
        assert!(none.iter().all(|i| i["type"] != "reasoning"));
    }

    #[test]
    fn render_applies_compaction() {
        let user = |id: &str, t: &str| ev(id, Body::user_text(t));
        let t = Transcript::new(vec![
            user("u1", "one"),
            ev("a1", Body::assistant(vec![AssistantPart::text("1")])),
            user("u2", "two"),
            ev(
                "c",
                Body::Compaction {
                    summary: "S".into(),
                    replaces_through: "a1".into(),
                },
            ),
            user("u3", "three"),
        ]);
        let input = render(&t, None);
        let texts: Vec<&str> = input
            .iter()
            .map(|i| i["content"][0]["text"].as_str().unwrap())
            .collect();
        // What the compaction keeps (u2) comes before its summary, as Codex sends it.
        assert_eq!(texts, ["two", "S", "three"]);
        let mut dangling = t.clone();
        dangling.events[3].body = Body::Compaction {
            summary: "S".into(),
            replaces_through: "nope".into(),
        };
        let e = render_with(&dangling, &RenderOptions::default()).unwrap_err();
        assert_eq!((e.index, e.field.as_str()), (3, "body.replaces_through"));
    }
}
