//! The Chat Completions rules C1–C5 of `wire-rules.md` §2, checked on a body.

use std::collections::HashSet;

use serde_json::Value;

use crate::{Dialect, Violation};

/// The longest tool-call id the API takes (rule C3).
pub const MAX_TOOL_CALL_ID: usize = 40;

const ROLES: &[&str] = &["system", "developer", "user", "assistant", "tool"];

fn violation(
    rule: &'static str,
    index: usize,
    field: impl Into<Option<String>>,
    detail: impl Into<String>,
) -> Violation {
    Violation::new(Dialect::OpenaiChat, rule, Some(index), field.into(), detail)
}

fn role(m: &Value) -> &str {
    m.get("role").and_then(Value::as_str).unwrap_or("")
}

fn calls(m: &Value) -> &[Value] {
    m.get("tool_calls")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn call_id(call: &Value) -> &str {
    call.get("id").and_then(Value::as_str).unwrap_or("")
}

/// Checks a request about to be sent (a body with `messages`, or a bare array).
pub fn validate(body: &Value) -> Result<(), Violation> {
    check(body, true)
}

/// Checks a stored history that more will follow: the tool calls of a trailing assistant message
/// may still wait for (some of) their tool messages.
pub fn validate_history(body: &Value) -> Result<(), Violation> {
    check(body, false)
}

fn check(body: &Value, final_request: bool) -> Result<(), Violation> {
    let messages = match body {
        Value::Array(m) => m,
        Value::Object(map) => match map.get("messages") {
            Some(Value::Array(m)) => m,
            _ => {
                return Err(Violation::new(
                    Dialect::OpenaiChat,
                    "shape",
                    None,
                    Some("messages".into()),
                    "messages is missing or not an array",
                ))
            }
        },
        _ => {
            return Err(Violation::new(
                Dialect::OpenaiChat,
                "shape",
                None,
                None,
                "not a Chat Completions body",
            ))
        }
    };
    if messages.is_empty() {
        return Err(Violation::new(
            Dialect::OpenaiChat,
            "shape",
            None,
            Some("messages".into()),
            "messages must hold at least one message",
        ));
    }
    for (i, m) in messages.iter().enumerate() {
        if !ROLES.contains(&role(m)) {
            return Err(violation(
                "shape",
                i,
                Some("role".to_owned()),
                format!("role must be one of {ROLES:?}, found {:?}", m.get("role")),
            ));
        }
        check_content(i, m)?;
        check_calls(i, m)?;
    }
    check_pairs(messages, final_request)
}

/// C5 (content arrays non-empty, assistant content absent only with tool calls) and the part
/// types each role takes (tool messages text only).
fn check_content(i: usize, m: &Value) -> Result<(), Violation> {
    let content = m.get("content").filter(|c| !c.is_null());
    let allowed: &[&str] = match role(m) {
        "user" => &["text", "image_url", "input_audio", "file"],
        "assistant" => &["text", "refusal"],
        _ => &["text"],
    };
    match content {
        None if role(m) == "assistant" && !calls(m).is_empty() => Ok(()),
        None => Err(violation(
            "C5",
            i,
            Some("content".to_owned()),
            format!(
                "a {} message needs content{}",
                role(m),
                if role(m) == "assistant" {
                    " unless it has tool_calls"
                } else {
                    ""
                }
            ),
        )),
        Some(Value::String(_)) => Ok(()),
        Some(Value::Array(parts)) if parts.is_empty() => Err(violation(
            "C5",
            i,
            Some("content".to_owned()),
            "a content array needs at least one part",
        )),
        Some(Value::Array(parts)) => {
            for (j, part) in parts.iter().enumerate() {
                let kind = part.get("type").and_then(Value::as_str).unwrap_or("");
                if !allowed.contains(&kind) {
                    return Err(violation(
                        "shape",
                        i,
                        Some(format!("content[{j}].type")),
                        format!(
                            "a {} message takes {allowed:?} parts, not {kind:?}",
                            role(m)
                        ),
                    ));
                }
                if kind == "image_url"
                    && part
                        .pointer("/image_url/url")
                        .and_then(Value::as_str)
                        .is_none()
                {
                    return Err(violation(
                        "shape",
                        i,
                        Some(format!("content[{j}].image_url.url")),
                        "an image_url part needs a url (http(s) or data:)",
                    ));
                }
            }
            Ok(())
        }
        Some(_) => Err(violation(
            "shape",
            i,
            Some("content".to_owned()),
            "content must be a string or an array of parts",
        )),
    }
}

/// C3 (ids at most 40 characters) and C4 (arguments a JSON string) on an assistant's calls, and
/// the tool message's `tool_call_id`.
fn check_calls(i: usize, m: &Value) -> Result<(), Violation> {
    if role(m) == "tool" {
        let id = m.get("tool_call_id").and_then(Value::as_str);
        return match id {
            None => Err(violation(
                "C1",
                i,
                Some("tool_call_id".to_owned()),
                "a tool message needs a string tool_call_id",
            )),
            Some(id) if id.chars().count() > MAX_TOOL_CALL_ID => Err(violation(
                "C3",
                i,
                Some("tool_call_id".to_owned()),
                format!(
                    "string too long: expected a string with maximum length {MAX_TOOL_CALL_ID}"
                ),
            )),
            Some(_) => Ok(()),
        };
    }
    if m.get("tool_calls")
        .is_some_and(|c| !c.is_null() && !c.is_array())
        || (role(m) != "assistant" && !calls(m).is_empty())
    {
        return Err(violation(
            "shape",
            i,
            Some("tool_calls".to_owned()),
            "tool_calls is an array, on assistant messages only",
        ));
    }
    if m.get("tool_calls")
        .is_some_and(|c| c.as_array().is_some_and(Vec::is_empty))
    {
        return Err(violation(
            "C5",
            i,
            Some("tool_calls".to_owned()),
            "tool_calls, when present, holds at least one call",
        ));
    }
    for (j, call) in calls(m).iter().enumerate() {
        let at = |f: &str| Some(format!("tool_calls[{j}]{f}"));
        let len = call_id(call).chars().count();
        if len == 0 || len > MAX_TOOL_CALL_ID {
            return Err(violation(
                "C3",
                i,
                at(".id"),
                format!("the id is {len} characters; the API takes 1 to {MAX_TOOL_CALL_ID}"),
            ));
        }
        if !call
            .pointer("/function/arguments")
            .is_some_and(Value::is_string)
        {
            return Err(violation(
                "C4",
                i,
                at(".function.arguments"),
                "function.arguments must be a string (the JSON-encoded arguments)",
            ));
        }
        if call
            .pointer("/function/name")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
            || call.get("type").and_then(Value::as_str) != Some("function")
        {
            return Err(violation(
                "shape",
                i,
                at(""),
                "a tool call is {id, type: \"function\", function: {name, arguments}}",
            ));
        }
    }
    Ok(())
}

/// C1 (a tool message answers a call of the assistant message its run of tool messages follows)
/// and C2 (every call is answered before the next message that is not a tool message).
fn check_pairs(messages: &[Value], final_request: bool) -> Result<(), Violation> {
    // The calls of the last assistant message with calls, still open while tool messages follow.
    let mut open: Option<(usize, Vec<&str>)> = None;
    for (i, m) in messages.iter().enumerate() {
        if role(m) == "tool" {
            let id = m.get("tool_call_id").and_then(Value::as_str).unwrap_or("");
            let Some((_, waiting)) = open.as_mut() else {
                return Err(violation(
                    "C1",
                    i,
                    Some("tool_call_id".to_owned()),
                    "messages with role 'tool' must be a response to a preceding message with \
                     'tool_calls'",
                ));
            };
            match waiting.iter().position(|w| *w == id) {
                Some(k) => {
                    waiting.remove(k);
                }
                None => {
                    return Err(violation(
                        "C1",
                        i,
                        Some("tool_call_id".to_owned()),
                        format!(
                            "tool_call_id {id:?} answers no unanswered call of the assistant \
                             message before it"
                        ),
                    ))
                }
            }
            continue;
        }
        unanswered(&open)?;
        open = None;
        if role(m) == "assistant" && !calls(m).is_empty() {
            let mut seen = HashSet::new();
            let ids: Vec<&str> = calls(m).iter().map(call_id).collect();
            if let Some(j) = ids.iter().position(|id| !seen.insert(*id)) {
                return Err(violation(
                    "C2",
                    i,
                    Some(format!("tool_calls[{j}].id")),
                    format!("tool call id {:?} appears twice in one message", ids[j]),
                ));
            }
            open = Some((i, ids));
        }
    }
    if final_request {
        unanswered(&open)?;
    }
    Ok(())
}

fn unanswered(open: &Option<(usize, Vec<&str>)>) -> Result<(), Violation> {
    match open {
        Some((at, waiting)) if !waiting.is_empty() => Err(violation(
            "C2",
            *at,
            Some("tool_calls".to_owned()),
            format!(
                "an assistant message with 'tool_calls' must be followed by tool messages \
                 responding to each 'tool_call_id'; these did not have response messages: {}",
                waiting.join(", ")
            ),
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn user(text: &str) -> Value {
        json!({"role": "user", "content": text})
    }
    fn calling(ids: &[&str]) -> Value {
        let calls: Vec<Value> = ids
            .iter()
            .map(|id| json!({"id": id, "type": "function", "function": {"name": "bash", "arguments": "{}"}}))
            .collect();
        json!({"role": "assistant", "content": null, "tool_calls": calls})
    }
    fn tool(id: &str) -> Value {
        json!({"role": "tool", "tool_call_id": id, "content": "out"})
    }
    fn rule(messages: Vec<Value>) -> (&'static str, Option<usize>, Option<String>) {
        let v = validate(&json!({ "messages": messages })).unwrap_err();
        (v.rule, v.index, v.field)
    }

    #[test]
    fn a_good_history_passes() {
        validate(&json!({"messages": [
            {"role": "system", "content": "s"},
            user("hi"),
            {"role": "assistant", "content": "Listing.", "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{\"command\":\"ls\"}"}},
                {"id": "c2", "type": "function", "function": {"name": "bash", "arguments": "{}"}}]},
            tool("c2"),
            {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "a"}]},
            {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:image/png;base64,AA=="}}]},
            {"role": "assistant", "content": "done"},
            user("next"),
        ]}))
        .unwrap();
        validate_history(&json!([user("hi"), calling(&["c1", "c2"]), tool("c1")])).unwrap();
    }

    #[test]
    fn c1_a_tool_message_answers_the_calls_right_before_it() {
        assert_eq!(rule(vec![user("hi"), tool("c1")]).0, "C1");
        assert_eq!(
            rule(vec![user("hi"), calling(&["c1"]), tool("c1"), tool("c9")]),
            ("C1", Some(3), Some("tool_call_id".into()))
        );
        assert_eq!(
            rule(vec![
                user("hi"),
                calling(&["c1"]),
                tool("c1"),
                user("x"),
                tool("c1")
            ])
            .0,
            "C1"
        );
    }

    #[test]
    fn c2_every_call_is_answered_before_the_next_message() {
        assert_eq!(
            rule(vec![
                user("hi"),
                calling(&["c1", "c2"]),
                tool("c1"),
                user("x")
            ]),
            ("C2", Some(1), Some("tool_calls".into()))
        );
        assert_eq!(rule(vec![user("hi"), calling(&["c1"])]).0, "C2");
        assert_eq!(
            rule(vec![
                user("hi"),
                calling(&["c1", "c1"]),
                tool("c1"),
                tool("c1")
            ])
            .0,
            "C2"
        );
    }

    #[test]
    fn c3_ids_are_at_most_forty_characters() {
        let long = "c".repeat(41);
        assert_eq!(
            rule(vec![user("hi"), calling(&[&long]), tool(&long)]),
            ("C3", Some(1), Some("tool_calls[0].id".into()))
        );
        let ok = "c".repeat(40);
        validate(&json!([user("hi"), calling(&[&ok]), tool(&ok), user("x")])).unwrap();
    }

    #[test]
    fn c4_arguments_are_a_json_string() {
        let mut m = calling(&["c1"]);
        m["tool_calls"][0]["function"]["arguments"] = json!({"command": "ls"});
        assert_eq!(
            rule(vec![user("hi"), m, tool("c1")]),
            (
                "C4",
                Some(1),
                Some("tool_calls[0].function.arguments".into())
            )
        );
    }

    #[test]
    fn c5_content_arrays_are_not_empty_and_assistant_content_needs_calls_to_be_null() {
        assert_eq!(
            rule(vec![json!({"role": "user", "content": []})]),
            ("C5", Some(0), Some("content".into()))
        );
        assert_eq!(
            rule(vec![
                user("hi"),
                json!({"role": "assistant", "content": null})
            ])
            .0,
            "C5"
        );
        assert_eq!(rule(vec![json!({"role": "user"})]).0, "C5");
    }

    #[test]
    fn tool_messages_take_text_only_and_roles_are_known() {
        let image_result = json!({"role": "tool", "tool_call_id": "c1", "content": [
            {"type": "image_url", "image_url": {"url": "https://x/y.png"}}]});
        assert_eq!(
            rule(vec![user("hi"), calling(&["c1"]), image_result]),
            ("shape", Some(2), Some("content[0].type".into()))
        );
        assert_eq!(
            rule(vec![json!({"role": "model", "content": "x"})]).0,
            "shape"
        );
    }

    #[test]
    fn a_violation_says_where() {
        let v = validate(&json!([user("hi"), calling(&["c1"]), user("x")])).unwrap_err();
        assert!(
            v.to_string()
                .starts_with("openai-chat rule C2: messages[1].tool_calls: "),
            "{v}"
        );
    }
}
