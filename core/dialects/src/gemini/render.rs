//! Canonical transcript → Gemini `contents`.

use std::collections::HashMap;

use serde_json::{json, Map, Value};

use super::parts::{function_response, user_part};
use super::{PROVIDER, SKIP_SIGNATURE};
use crate::{visible, Dialect, RenderError, RenderOptions};
use handoff_transcript::{AssistantPart, Body, Event, Part, Signature, Thinking, Transcript};

/// Renders `transcript` as Gemini contents.
///
/// Consecutive turns of one role are one content (user turns and tool results are `user`); in a
/// user content the `functionResponse` parts come first (G2); empty texts are not sent (G7).
/// Thinking goes back as `{text, thought: true}` when the caller keeps its maker, with its
/// `thoughtSignature` only when Gemini made it (and, if `options.model` is set, that model). In
/// the current turn (after the last user message that is not only results), the first call of
/// each model content without a signature gets [`SKIP_SIGNATURE`] (G4). Fails on arguments that
/// are not an object (G3) and on a result whose call is unknown (Gemini needs the tool name).
pub fn render(transcript: &Transcript, options: &RenderOptions) -> Result<Vec<Value>, RenderError> {
    let mut contents: Vec<(bool, Vec<Value>)> = Vec::new();
    for (_, content) in render_each(transcript, options)? {
        let is_model = content["role"] == "model";
        let Value::Array(parts) = content["parts"].clone() else {
            unreachable!("render_each gives parts")
        };
        match contents.last_mut() {
            Some((last_is_model, last)) if *last_is_model == is_model => last.extend(parts),
            _ => contents.push((is_model, parts)),
        }
    }
    for (is_model, parts) in &mut contents {
        if !*is_model {
            // A stable sort keeps the order among responses and among the rest.
            parts.sort_by_key(|p| p.get("functionResponse").is_none());
        }
    }
    sign_current_turn(&mut contents);
    Ok(contents
        .into_iter()
        .map(|(is_model, parts)| {
            json!({"role": if is_model { "model" } else { "user" }, "parts": parts})
        })
        .collect())
}

/// Each visible event of `transcript` as a content of its own, `(event index, {role, parts})`,
/// in order and unmerged: what a store that keeps one Gemini content per record writes (Qwen
/// Code's chats). The parts are [`render`]'s (a compaction's summary is a user text); events
/// that render to no part are left out. No G4 signature is added: that is a request's, not a
/// store's.
pub fn render_each(
    transcript: &Transcript,
    options: &RenderOptions,
) -> Result<Vec<(usize, Value)>, RenderError> {
    let names = call_names(transcript);
    let mut contents = Vec::new();
    for (index, summary) in visible::checked(transcript)? {
        let event = &transcript.events[index];
        let content = match (summary, &event.body) {
            (Some(summary), _) => content(false, user_parts(&[Part::text(summary)])),
            (None, Body::ToolResult { call_id, .. }) => {
                render_event(event, index, names.get(call_id.as_str()).copied(), options)?
            }
            (None, _) => render_event(event, index, None, options)?,
        };
        contents.extend(content.map(|c| (index, c)));
    }
    Ok(contents)
}

/// One event as a content of its own, as [`render_each`] renders it when it is in view (`None`:
/// it renders to no part): for a store written event by event. `index` is its place in the
/// transcript (an error names it) and `call_name` the name of the call a tool result answers
/// (`None`: no earlier call, an error). A compaction is its summary; which events a compaction
/// leaves in view is the caller's to know (`visible::checked`).
pub fn render_event(
    event: &Event,
    index: usize,
    call_name: Option<&str>,
    options: &RenderOptions,
) -> Result<Option<Value>, RenderError> {
    let fail = |field: &str, message: String| RenderError {
        index,
        event_id: event.id.clone(),
        field: field.to_owned(),
        message,
    };
    Ok(match &event.body {
        Body::Compaction { summary, .. } => content(false, user_parts(&[Part::text(summary)])),
        Body::User { content: parts } => content(false, user_parts(parts)),
        Body::Assistant {
            content: parts,
            origin,
        } => {
            let maker = origin.as_ref().map(|o| o.provider.as_str());
            let keeps = options.thinking_from(Dialect::Gemini);
            let parts = model_parts(parts, maker, &keeps, options.model.as_deref())
                .map_err(|(field, m)| fail(&field, m))?;
            content(true, parts)
        }
        Body::ToolResult {
            call_id,
            content: parts,
            is_error,
        } => {
            let name = call_name.ok_or_else(|| {
                fail(
                    "body.call_id",
                    format!("{call_id:?} answers no earlier tool call; a functionResponse needs the tool's name"),
                )
            })?;
            content(
                false,
                vec![function_response(call_id, name, parts, *is_error)],
            )
        }
    })
}

/// `{role, parts}`, or `None` without parts.
fn content(is_model: bool, parts: Vec<Value>) -> Option<Value> {
    let role = if is_model { "model" } else { "user" };
    (!parts.is_empty()).then(|| json!({"role": role, "parts": parts}))
}

/// The name of every tool call, by id.
fn call_names(transcript: &Transcript) -> HashMap<&str, &str> {
    let mut names = HashMap::new();
    for event in &transcript.events {
        if let Body::Assistant { content, .. } = &event.body {
            for part in content {
                if let AssistantPart::ToolCall(call) = part {
                    names.insert(call.id.as_str(), call.name.as_str());
                }
            }
        }
    }
    names
}

fn user_parts(content: &[Part]) -> Vec<Value> {
    content.iter().filter_map(user_part).collect()
}

/// The parts of an assistant turn. A signature with no thinking text rides on the next part (it
/// came on that part); at the end of the turn it is an empty thought part. Errors are
/// `(field, message)`.
fn model_parts(
    content: &[AssistantPart],
    turn_maker: Option<&str>,
    keeps: &[String],
    model: Option<&str>,
) -> Result<Vec<Value>, (String, String)> {
    let mut parts: Vec<Value> = Vec::with_capacity(content.len());
    let mut pending: Option<&str> = None;
    for (i, part) in content.iter().enumerate() {
        let mut wire = match part {
            AssistantPart::Thinking(t) => {
                let maker = t
                    .signature
                    .as_ref()
                    .map(|s| s.provider.as_str())
                    .or(turn_maker);
                if !maker.is_some_and(|m| keeps.iter().any(|k| k == m)) {
                    continue; // display-only
                }
                let signature = t
                    .signature
                    .as_ref()
                    .filter(|s| goes_back(s, model))
                    .map(|s| s.value.as_str());
                match thought_part(t, signature, &mut pending, &mut parts) {
                    Some(part) => part,
                    None => continue,
                }
            }
            AssistantPart::Text { text } if text.is_empty() => continue,
            AssistantPart::Text { text } => json!({ "text": text }),
            AssistantPart::ToolCall(call) => {
                if call.arguments().is_some_and(|a| !a.is_object()) {
                    return Err((
                        format!("body.content[{i}].arguments"),
                        "functionCall.args must be a JSON object (rule G3)".into(),
                    ));
                }
                json!({"functionCall": {"id": call.id, "name": call.name, "args": call.structured_arguments()}})
            }
            AssistantPart::WebSearch(_) => {
                return Err((
                    format!("body.content[{i}]"),
                    "an OpenAI web search has no Gemini form".into(),
                ))
            }
        };
        if let Some(signature) = pending.take() {
            wire["thoughtSignature"] = Value::from(signature);
        }
        parts.push(wire);
    }
    if let Some(signature) = pending {
        parts.push(json!({"text": "", "thought": true, "thoughtSignature": signature}));
    }
    Ok(parts)
}

/// The part of a kept thinking: `{text, thought: true}` (with its signature when it goes back).
/// A signature without text waits in `pending` for the next part; `None` when there is nothing
/// to send now.
fn thought_part<'a>(
    t: &Thinking,
    signature: Option<&'a str>,
    pending: &mut Option<&'a str>,
    parts: &mut Vec<Value>,
) -> Option<Value> {
    if t.text.is_empty() {
        if let Some(earlier) = pending.replace(signature?) {
            parts.push(json!({"text": "", "thought": true, "thoughtSignature": earlier}));
        }
        return None;
    }
    if let Some(earlier) = pending.take() {
        parts.push(json!({"text": "", "thought": true, "thoughtSignature": earlier}));
    }
    let mut part = Map::new();
    part.insert("text".into(), Value::from(t.text.as_str()));
    part.insert("thought".into(), Value::Bool(true));
    if let Some(signature) = signature {
        part.insert("thoughtSignature".into(), Value::from(signature));
    }
    Some(Value::Object(part))
}

/// A signature goes back only to Gemini, and to the model that made it when both are known.
fn goes_back(signature: &Signature, model: Option<&str>) -> bool {
    signature.provider == PROVIDER
        && match (signature.model.as_deref(), model) {
            (Some(made), Some(want)) => made == want,
            _ => true,
        }
}

/// G4: in the current turn, the first call of each model content carries a signature.
fn sign_current_turn(contents: &mut [(bool, Vec<Value>)]) {
    let start = contents
        .iter()
        .rposition(|(is_model, parts)| {
            !is_model && parts.iter().any(|p| p.get("functionResponse").is_none())
        })
        .map_or(0, |u| u + 1);
    for (is_model, parts) in &mut contents[start..] {
        if !*is_model {
            continue;
        }
        if let Some(first_call) = parts.iter_mut().find(|p| p.get("functionCall").is_some()) {
            if first_call.get("thoughtSignature").is_none() {
                first_call["thoughtSignature"] = Value::from(SKIP_SIGNATURE);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::gemini::{parse, validate, validate_history};
    use crate::tests::{ev, user};
    use handoff_transcript::{Comparison, Event, Origin, ToolCall};

    fn call(id: &str) -> AssistantPart {
        AssistantPart::ToolCall(ToolCall::new(
            id,
            "list_directory",
            json!({"dir_path": "."}),
        ))
    }
    fn google(text: &str, sig: &str) -> AssistantPart {
        AssistantPart::Thinking(Thinking {
            text: text.into(),
            signature: Some(Signature {
                provider: "google".into(),
                model: None,
                value: sig.into(),
                redacted: text.is_empty(),
            }),
        })
    }
    fn model(id: &str, content: Vec<AssistantPart>) -> Event {
        ev(
            id,
            Body::Assistant {
                content,
                origin: Some(Origin {
                    provider: "google".into(),
                    model: None,
                    api: Some("gemini".into()),
                }),
            },
        )
    }
    fn result(id: &str, call: &str, is_error: bool) -> Event {
        ev(
            id,
            Body::ToolResult {
                call_id: call.into(),
                content: vec![Part::text("a.txt")],
                is_error,
            },
        )
    }

    fn sample() -> Transcript {
        Transcript::new(vec![
            user("u", "list"),
            model(
                "a",
                vec![
                    google("plan", "s0"),
                    AssistantPart::text("Listing."),
                    google("", "s1"),
                    call("c1"),
                ],
            ),
            result("r", "c1", true),
            model("b", vec![AssistantPart::text("Denied."), google("", "s2")]),
            user("u2", "continue"),
        ])
    }

    #[test]
    fn signatures_go_back_on_the_part_they_came_on_and_parse_back_exactly() {
        let t = sample();
        let contents = render(&t, &RenderOptions::default()).unwrap();
        assert_eq!(
            contents[1]["parts"],
            json!([
                {"text": "plan", "thought": true, "thoughtSignature": "s0"},
                {"text": "Listing."},
                {"functionCall": {"id": "c1", "name": "list_directory", "args": {"dir_path": "."}}, "thoughtSignature": "s1"}
            ])
        );
        assert_eq!(
            contents[2]["parts"][0]["functionResponse"]["response"],
            json!({"error": "a.txt"}),
            "a failed tool reads as response.error"
        );
        assert_eq!(
            contents[3]["parts"][1],
            json!({"text": "", "thought": true, "thoughtSignature": "s2"})
        );
        validate(&json!({ "contents": contents })).unwrap();
        let back = parse(&json!(contents)).unwrap().transcript;
        Comparison::exact().diff(&t, &back).unwrap();
    }

    #[test]
    fn render_each_gives_every_event_its_own_content_and_render_merges_them() {
        let mut t = sample();
        // Two user turns in a row: one content each here, one merged content in `render`.
        t.events.push(user("u3", "and then"));
        let each = render_each(&t, &RenderOptions::default()).unwrap();
        assert_eq!(
            each.iter().map(|(i, _)| *i).collect::<Vec<_>>(),
            [0, 1, 2, 3, 4, 5]
        );
        assert_eq!(
            each[4].1,
            json!({"role": "user", "parts": [{"text": "continue"}]})
        );
        assert_eq!(
            each[5].1,
            json!({"role": "user", "parts": [{"text": "and then"}]})
        );
        assert!(
            each.iter()
                .all(|(_, c)| !c.to_string().contains(SKIP_SIGNATURE)),
            "a store's contents carry no G4 placeholder"
        );
        let merged = render(&t, &RenderOptions::default()).unwrap();
        assert_eq!(merged.len(), 5);
        assert_eq!(
            merged[4]["parts"],
            json!([{"text": "continue"}, {"text": "and then"}])
        );
    }

    #[test]
    fn foreign_thinking_and_other_models_signatures_stay_home() {
        let t = sample();
        let other = RenderOptions {
            thinking_from: Some(vec!["anthropic".into()]),
            ..RenderOptions::default()
        };
        let contents = render(&t, &other).unwrap();
        let text = json!(contents).to_string();
        assert!(!text.contains("thought"), "{text}");
        let mut signed_by_m1 = t.clone();
        for event in &mut signed_by_m1.events {
            if let Body::Assistant { content, .. } = &mut event.body {
                for part in content {
                    if let AssistantPart::Thinking(Thinking {
                        signature: Some(s), ..
                    }) = part
                    {
                        s.model = Some("gemini-m1".into());
                    }
                }
            }
        }
        let contents = render(&signed_by_m1, &RenderOptions::for_model("gemini-m2")).unwrap();
        assert_eq!(
            contents[1]["parts"][0],
            json!({"text": "plan", "thought": true})
        );
        assert!(!json!(contents).to_string().contains("\"s1\""));
    }

    #[test]
    fn the_current_turn_gets_the_skip_sentinel_where_unsigned() {
        let t = Transcript::new(vec![
            user("u", "list"),
            ev("a", Body::assistant(vec![call("c1"), call("c2")])),
            result("r1", "c1", false),
            result("r2", "c2", false),
        ]);
        let contents = render(&t, &RenderOptions::default()).unwrap();
        assert_eq!(contents[1]["parts"][0]["thoughtSignature"], SKIP_SIGNATURE);
        assert!(contents[1]["parts"][1].get("thoughtSignature").is_none());
        validate(&json!(contents)).unwrap();
        let back = parse(&json!(contents)).unwrap().transcript;
        let Body::Assistant { content, .. } = &back.events[1].body else {
            panic!()
        };
        assert_eq!(content.len(), 2, "the sentinel is no thinking");
        // Once a new user message follows, that turn is history and keeps no sentinel.
        let mut later = t.clone();
        later.events.push(user("u2", "next"));
        let contents = render(&later, &RenderOptions::default()).unwrap();
        assert!(contents[1]["parts"][0].get("thoughtSignature").is_none());
    }

    #[test]
    fn results_go_first_in_one_user_content() {
        let t = Transcript::new(vec![
            user("u", "list"),
            model("a", vec![call("c1"), call("c2")]),
            user("u2", "also"),
            result("r1", "c1", false),
            result("r2", "c2", false),
        ]);
        let contents = render(&t, &RenderOptions::default()).unwrap();
        assert_eq!(contents.len(), 3);
        let kinds: Vec<bool> = contents[2]["parts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.get("functionResponse").is_some())
            .collect();
        assert_eq!(kinds, [true, true, false]);
        validate_history(&json!(contents)).unwrap();
    }

    #[test]
    fn non_object_arguments_and_unknown_calls_are_refused_by_field() {
        let mut t = Transcript::new(vec![user("u", "x"), model("a", vec![call("c1")])]);
        if let Body::Assistant { content, .. } = &mut t.events[1].body {
            content[0] = AssistantPart::ToolCall(ToolCall::new("c1", "f", json!("text")));
        }
        let e = render(&t, &RenderOptions::default()).unwrap_err();
        assert_eq!(
            (e.index, e.field.as_str()),
            (1, "body.content[0].arguments")
        );
        let orphan = Transcript::new(vec![user("u", "x"), result("r", "zz", false)]);
        let e = render(&orphan, &RenderOptions::default()).unwrap_err();
        assert_eq!((e.index, e.field.as_str()), (1, "body.call_id"));
    }
}
