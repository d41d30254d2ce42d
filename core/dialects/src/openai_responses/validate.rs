//! The Responses rules R1–R7 of `wire-rules.md` §3 that a request shows, checked on `input`.

use std::collections::HashMap;

use serde_json::Value;

use super::{RuleViolation, PROVIDER};
use crate::{Dialect, Violation};
use handoff_transcript::{AssistantPart, Body, Thinking, Transcript};

fn violation(
    rule: &'static str,
    index: usize,
    field: &str,
    detail: impl Into<String>,
) -> RuleViolation {
    Violation::new(
        Dialect::OpenaiResponses,
        rule,
        Some(index),
        (!field.is_empty()).then(|| field.to_owned()),
        detail,
    )
}

fn kind(item: &Value) -> Option<&str> {
    item.get("type").and_then(Value::as_str).or_else(|| {
        // EasyInputMessage may omit the type.
        item.get("role").map(|_| "message")
    })
}

fn is_assistant_side(item: &Value) -> bool {
    match kind(item) {
        Some("message") => item.get("role").and_then(Value::as_str) == Some("assistant"),
        Some(
            "reasoning" | "function_call" | "custom_tool_call" | "web_search_call"
            | "computer_call" | "local_shell_call" | "file_search_call",
        ) => true,
        _ => false,
    }
}

/// Checks `input` about to be sent against R1, R2, R3, R4 and R7 (the rules visible in `input`
/// alone, assuming `store: false` as a stateless client sends). The first violation is returned.
pub fn validate(input: &[Value]) -> Result<(), RuleViolation> {
    check_items(input, true)
}

/// Checks a request body (or a bare `input` array): the shape, R6 on the body, then the items as
/// [`validate`] does. With `final_request` false (a stored history that more will follow), the
/// function calls after the last user message may still wait for their outputs.
pub fn validate_input(body: &Value, final_request: bool) -> Result<(), RuleViolation> {
    let shape = |detail: &str| {
        Violation::new(
            Dialect::OpenaiResponses,
            "shape",
            None,
            Some("input".into()),
            detail,
        )
    };
    let input = match body {
        Value::Array(items) => items,
        Value::Object(map) => {
            check_r6(body)?;
            match map.get("input") {
                Some(Value::Array(items)) => items,
                Some(Value::String(_)) => return Ok(()),
                _ => return Err(shape("input must be a string or an array of items")),
            }
        }
        _ => return Err(shape("not a Responses body")),
    };
    check_items(input, final_request)
}

/// Checks a whole request body: R6 (`previous_response_id` cannot be combined with
/// `conversation`), then `input` by [`validate`].
pub fn validate_request(body: &Value) -> Result<(), RuleViolation> {
    validate_input(body, true)
}

fn check_r6(body: &Value) -> Result<(), RuleViolation> {
    let set = |key: &str| body.get(key).is_some_and(|v| !v.is_null());
    if set("previous_response_id") && set("conversation") {
        return Err(Violation::new(
            Dialect::OpenaiResponses,
            "R6",
            None,
            Some("previous_response_id".into()),
            "previous_response_id cannot be used together with conversation",
        ));
    }
    Ok(())
}

fn check_items(input: &[Value], final_request: bool) -> Result<(), RuleViolation> {
    for (index, item) in input.iter().enumerate() {
        if !item.is_object() || kind(item).is_none() {
            return Err(violation(
                "shape",
                index,
                "type",
                "an input item is an object with a type",
            ));
        }
    }
    check_call_ids(input)?;
    check_pairs(input, final_request)?;
    let uses_reasoning = input.iter().any(|i| kind(i) == Some("reasoning"));
    for (index, item) in input.iter().enumerate() {
        match kind(item) {
            Some("reasoning") => check_reasoning(input, index)?,
            Some("item_reference") => {
                return Err(violation(
                    "R4",
                    index,
                    "id",
                    "item_reference cannot be resolved with store=false",
                ))
            }
            _ => {}
        }
        if uses_reasoning {
            check_r3(input, index)?;
        }
    }
    Ok(())
}

/// R7: every `call_id` (of calls and of outputs) is 1–64 characters.
fn check_call_ids(input: &[Value]) -> Result<(), RuleViolation> {
    for (index, item) in input.iter().enumerate() {
        if !matches!(
            kind(item),
            Some(
                "function_call"
                    | "function_call_output"
                    | "custom_tool_call"
                    | "custom_tool_call_output"
            )
        ) {
            continue;
        }
        let Some(id) = item.get("call_id").and_then(Value::as_str) else {
            return Err(violation(
                "R7",
                index,
                "call_id",
                "a function call or output needs a string call_id",
            ));
        };
        let len = id.chars().count();
        if !(1..=64).contains(&len) {
            return Err(violation(
                "R7",
                index,
                "call_id",
                format!("call_id is {len} characters; the API takes 1 to 64"),
            ));
        }
    }
    Ok(())
}

/// R1: every call has its output, every output answers one earlier call of its kind (a
/// `custom_tool_call_output` a `custom_tool_call`), once.
fn check_pairs(input: &[Value], final_request: bool) -> Result<(), RuleViolation> {
    // call id → (index, answered, custom)
    let mut calls: HashMap<&str, (usize, bool, bool)> = HashMap::new();
    for (index, item) in input.iter().enumerate() {
        let id = item.get("call_id").and_then(Value::as_str).unwrap_or("");
        match kind(item) {
            Some(call @ ("function_call" | "custom_tool_call"))
                if calls
                    .insert(id, (index, false, call == "custom_tool_call"))
                    .is_some() =>
            {
                return Err(violation(
                    "R1",
                    index,
                    "call_id",
                    format!("call_id {id:?} is used by two calls"),
                ));
            }
            Some(output @ ("function_call_output" | "custom_tool_call_output")) => match calls
                .get_mut(id)
            {
                Some((_, _, custom)) if *custom != (output == "custom_tool_call_output") => {
                    return Err(violation(
                        "R1",
                        index,
                        "type",
                        format!("a {output} cannot answer the call {id:?} of the other kind"),
                    ))
                }
                Some((_, answered, _)) if !*answered => *answered = true,
                Some(_) => {
                    return Err(violation(
                        "R1",
                        index,
                        "call_id",
                        format!("a second output for call {id:?}"),
                    ))
                }
                None => {
                    return Err(violation(
                        "R1",
                        index,
                        "call_id",
                        format!("no tool call found for function call output with call_id {id:?}"),
                    ))
                }
            },
            _ => {}
        }
    }
    // In a stored history, calls after the last user message may still be waiting.
    let last_user = input.iter().rposition(|i| {
        kind(i) == Some("message") && i.get("role").and_then(Value::as_str) == Some("user")
    });
    let waiting_ok = |index: usize| !final_request && last_user.is_none_or(|u| index > u);
    match calls
        .iter()
        .filter(|(_, (index, answered, _))| !answered && !waiting_ok(*index))
        .min_by_key(|(_, (index, _, _))| *index)
    {
        Some((id, (index, _, _))) => Err(violation(
            "R1",
            *index,
            "call_id",
            format!("no tool output found for function call {id}"),
        )),
        None => Ok(()),
    }
}

/// R2 and R4 for a reasoning item sent with its id.
fn check_reasoning(input: &[Value], index: usize) -> Result<(), RuleViolation> {
    let item = &input[index];
    if item.get("id").and_then(Value::as_str).is_none() {
        return Ok(());
    }
    // R2: a reasoning item sent with its id needs the item it produced right after it.
    let followed = input
        .get(index + 1)
        .is_some_and(|next| is_assistant_side(next) && kind(next) != Some("reasoning"));
    if !followed {
        return Err(violation(
            "R2",
            index,
            "id",
            "a reasoning item with an id was provided without its required following item",
        ));
    }
    // R4: with store=false an id cannot be looked up; the reasoning must travel encrypted.
    if item
        .get("encrypted_content")
        .and_then(Value::as_str)
        .is_none()
    {
        return Err(violation(
            "R4",
            index,
            "encrypted_content",
            "a reasoning item referenced by id without encrypted_content; items are not \
             persisted with store=false",
        ));
    }
    Ok(())
}

/// R3: an output item sent with its server id needs its reasoning item (reasoning models: the
/// history contains reasoning).
fn check_r3(input: &[Value], index: usize) -> Result<(), RuleViolation> {
    let item = &input[index];
    if !is_assistant_side(item)
        || kind(item) == Some("reasoning")
        || item.get("id").and_then(Value::as_str).is_none()
    {
        return Ok(());
    }
    let mut back = index;
    while back > 0 && is_assistant_side(&input[back - 1]) {
        back -= 1;
        if kind(&input[back]) == Some("reasoning") {
            return Ok(());
        }
    }
    Err(violation(
        "R3",
        index,
        "id",
        "an item sent with its id was provided without its required reasoning item",
    ))
}

/// R5: encrypted reasoning is bound to the model (and provider) that made it. Returns the first
/// thinking part of `transcript` whose signature would be replayed to `model` although another
/// model or provider made it (the index is the event's). [`super::render`] leaves those out.
pub fn check_reasoning_portable(transcript: &Transcript, model: &str) -> Result<(), RuleViolation> {
    for (index, event) in transcript.events.iter().enumerate() {
        let Body::Assistant { content, .. } = &event.body else {
            continue;
        };
        for (i, part) in content.iter().enumerate() {
            let AssistantPart::Thinking(Thinking {
                signature: Some(signature),
                ..
            }) = part
            else {
                continue;
            };
            let same_model = signature.model.as_deref().is_none_or(|m| m == model);
            if signature.provider != PROVIDER || !same_model {
                return Err(Violation::new(
                    Dialect::OpenaiResponses,
                    "R5",
                    Some(index),
                    Some(format!("body.content[{i}].signature")),
                    format!(
                        "event {}: reasoning encrypted by {}/{} cannot be decrypted for model \
                         {model}",
                        event.id,
                        signature.provider,
                        signature.model.as_deref().unwrap_or("?")
                    ),
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::tests::sample;
    use super::*;

    fn call(id: &str) -> Value {
        json!({"type": "function_call", "call_id": id, "name": "f", "arguments": "{}"})
    }

    fn out(id: &str) -> Value {
        json!({"type": "function_call_output", "call_id": id, "output": "x"})
    }

    fn user() -> Value {
        json!({"type": "message", "role": "user", "content": "hi"})
    }

    #[test]
    fn r1_custom_calls_pair_with_custom_outputs() {
        let custom = |id: &str| json!({"type": "custom_tool_call", "call_id": id, "name": "apply_patch", "input": "x"});
        let custom_out =
            |id: &str| json!({"type": "custom_tool_call_output", "call_id": id, "output": "ok"});
        validate(&[user(), custom("c1"), custom_out("c1")]).unwrap();
        let err = validate(&[user(), custom("c1"), user()]).unwrap_err();
        assert_eq!((err.rule, err.index), ("R1", Some(1)));
        let err = validate(&[user(), custom("c1"), out("c1")]).unwrap_err();
        assert_eq!((err.rule, err.index), ("R1", Some(2)));
        let err = validate(&[user(), call("c1"), custom_out("c1")]).unwrap_err();
        assert_eq!((err.rule, err.index), ("R1", Some(2)));
        let long = "c".repeat(65);
        let err = validate(&[user(), custom(&long), custom_out(&long)]).unwrap_err();
        assert_eq!(err.rule, "R7");
    }

    #[test]
    fn r1_a_call_without_its_output_fails() {
        let err = validate(&[call("c1"), call("c2"), out("c1")]).unwrap_err();
        assert_eq!((err.rule, err.index), ("R1", Some(1)));
        assert_eq!(err.field.as_deref(), Some("call_id"));
        let err = validate(&[out("c9")]).unwrap_err();
        assert_eq!(err.rule, "R1");
        // A stored history may end while calls still wait, but not before a user message.
        let waiting = json!([user(), call("c1"), call("c2"), out("c1")]);
        validate_input(&waiting, false).unwrap();
        assert_eq!(validate_input(&waiting, true).unwrap_err().rule, "R1");
        let unanswered = json!([user(), call("c1"), user()]);
        assert_eq!(validate_input(&unanswered, false).unwrap_err().rule, "R1");
    }

    #[test]
    fn r2_reasoning_with_id_needs_its_following_item() {
        let reasoning =
            json!({"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "e"});
        let err = validate(&[reasoning.clone(), user()]).unwrap_err();
        assert_eq!((err.rule, err.index), ("R2", Some(0)));
        validate(&[reasoning, call("c1"), out("c1")]).unwrap();
    }

    #[test]
    fn r3_item_with_server_id_needs_its_reasoning() {
        let reasoning = json!({"type": "reasoning", "summary": [], "encrypted_content": "e"});
        let fc = json!({"type": "function_call", "id": "fc_1", "call_id": "c1", "name": "f", "arguments": "{}"});
        let err = validate(&[reasoning.clone(), user(), fc.clone(), out("c1")]).unwrap_err();
        assert_eq!((err.rule, err.index), ("R3", Some(2)));
        validate(&[user(), reasoning, fc, out("c1")]).unwrap();
    }

    #[test]
    fn r4_references_by_id_fail_without_storage() {
        let err = validate(&[json!({"type": "item_reference", "id": "rs_1"})]).unwrap_err();
        assert_eq!(err.rule, "R4");
        let bare = json!({"type": "reasoning", "id": "rs_1", "summary": []});
        let err = validate(&[bare, call("c1"), out("c1")]).unwrap_err();
        assert_eq!(err.rule, "R4");
    }

    #[test]
    fn r5_reasoning_goes_back_only_to_its_model() {
        let t = sample();
        check_reasoning_portable(&t, "gpt-5").unwrap();
        let err = check_reasoning_portable(&t, "o3").unwrap_err();
        assert_eq!((err.rule, err.index), ("R5", Some(1)));
        let mut foreign = sample();
        if let Body::Assistant { content, .. } = &mut foreign.events[1].body {
            if let AssistantPart::Thinking(th) = &mut content[0] {
                th.signature.as_mut().unwrap().provider = "anthropic".into();
            }
        }
        assert_eq!(
            check_reasoning_portable(&foreign, "gpt-5")
                .unwrap_err()
                .rule,
            "R5"
        );
    }

    #[test]
    fn r6_previous_response_id_excludes_conversation() {
        let body = json!({"previous_response_id": "resp_1", "conversation": "conv_1", "input": []});
        assert_eq!(validate_request(&body).unwrap_err().rule, "R6");
        validate_request(&json!({"previous_response_id": "resp_1", "input": []})).unwrap();
    }

    #[test]
    fn r7_call_ids_are_one_to_sixty_four_characters() {
        let long = "c".repeat(65);
        let err = validate(&[call(&long), out(&long)]).unwrap_err();
        assert_eq!(err.rule, "R7");
        let err = validate(&[call(""), out("")]).unwrap_err();
        assert_eq!(err.rule, "R7");
    }

    #[test]
    fn a_violation_names_dialect_rule_index_and_field() {
        let err = validate(&[user(), call("c1"), user()]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "openai-responses rule R1: input[1].call_id: no tool output found for function call c1"
        );
    }
}
