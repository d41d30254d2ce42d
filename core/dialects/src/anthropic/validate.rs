//! The rules the Messages API enforces (A1–A15 of `wire-rules.md` §1), checked on a body.
//!
//! Checks run from the most specific to the most general so a bad history is reported under the
//! rule that explains it (results split over two user messages are A4, not A10).

use std::collections::{HashMap, HashSet};
use std::fmt;

use serde_json::Value;

use super::ids::is_wire_tool_id;

/// A broken rule: its id (`A1`…`A15`, or `shape` for a body that is not a Messages body at all),
/// where, and what.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct RuleViolation {
    /// The rule, e.g. `A3`.
    pub rule: &'static str,
    /// The message index, if one is at fault.
    pub message: Option<usize>,
    /// The block index inside that message, if one is at fault.
    pub block: Option<usize>,
    /// What is wrong.
    pub detail: String,
}

impl fmt::Display for RuleViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "rule {}: ", self.rule)?;
        match (self.message, self.block) {
            (Some(m), Some(b)) => write!(f, "messages[{m}].content[{b}]: ")?,
            (Some(m), None) => write!(f, "messages[{m}]: ")?,
            _ => {}
        }
        f.write_str(&self.detail)
    }
}

/// Validates a request about to be sent: every rule, including the ones on the final message
/// (A1 for a trailing tool call, A11, A12).
pub fn validate(body: &Value) -> Result<(), RuleViolation> {
    check(body, true)
}

/// Validates a stored history that more will follow: the last assistant turn's tool calls may
/// still be waiting for (some of) their results, which the next user message will carry, and a
/// trailing assistant message is allowed; everything else is checked. [`validate`] the request
/// actually sent.
pub fn validate_history(body: &Value) -> Result<(), RuleViolation> {
    check(body, false)
}

fn violation(
    rule: &'static str,
    message: Option<usize>,
    block: Option<usize>,
    detail: impl Into<String>,
) -> RuleViolation {
    RuleViolation {
        rule,
        message,
        block,
        detail: detail.into(),
    }
}

struct Msg<'a> {
    assistant: bool,
    /// `None` for string content.
    blocks: Option<&'a [Value]>,
    text: Option<&'a str>,
}

impl Msg<'_> {
    fn blocks(&self) -> &[Value] {
        self.blocks.unwrap_or(&[])
    }
    fn is_empty(&self) -> bool {
        match (self.text, self.blocks) {
            (Some(t), _) => t.is_empty(),
            (_, Some(b)) => b.is_empty(),
            _ => true,
        }
    }
}

fn block_type(b: &Value) -> &str {
    b.get("type").and_then(Value::as_str).unwrap_or("")
}

fn is_blank(text: &str) -> bool {
    text.trim().is_empty()
}

fn check(body: &Value, final_request: bool) -> Result<(), RuleViolation> {
    let (raw, thinking_enabled) = messages_of(body)?;
    if raw.is_empty() {
        return Err(violation("A8", None, None, "there are no messages"));
    }
    let msgs = read_messages(raw)?;
    check_first_and_empty(&msgs, final_request)?;
    check_texts(&msgs)?;
    check_tool_uses(&msgs)?;
    check_thinking_blocks(&msgs)?;
    check_results(&msgs)?;
    let results_at = result_positions(&msgs);
    check_a4(&msgs, &results_at)?;
    check_a10(&msgs)?;
    check_a2(&msgs)?;
    check_a1(&msgs, &results_at, final_request)?;
    if thinking_enabled {
        check_a13(&msgs, final_request)?;
    }
    if final_request {
        check_final(&msgs)?;
    }
    Ok(())
}

fn shape(message: Option<usize>, block: Option<usize>, detail: impl Into<String>) -> RuleViolation {
    violation("shape", message, block, detail)
}

/// The messages of a body (or a bare array), and whether thinking is enabled.
fn messages_of(body: &Value) -> Result<(&[Value], bool), RuleViolation> {
    match body {
        Value::Array(m) => Ok((m, false)),
        Value::Object(map) => match map.get("messages") {
            Some(Value::Array(m)) => {
                let thinking = map
                    .get("thinking")
                    .and_then(|t| t.get("type"))
                    .and_then(Value::as_str);
                Ok((m, matches!(thinking, Some("enabled" | "adaptive"))))
            }
            _ => Err(shape(None, None, "messages is missing or not an array")),
        },
        _ => Err(shape(None, None, "not a Messages body")),
    }
}

/// Roles, content shapes, and the block types each side takes.
fn read_messages(raw: &[Value]) -> Result<Vec<Msg<'_>>, RuleViolation> {
    let mut msgs = Vec::with_capacity(raw.len());
    for (i, m) in raw.iter().enumerate() {
        let assistant = match m.get("role").and_then(Value::as_str) {
            Some("user") => false,
            Some("assistant") => true,
            other => {
                return Err(shape(
                    Some(i),
                    None,
                    format!("role must be user or assistant, found {other:?}"),
                ))
            }
        };
        let (blocks, text) = match m.get("content") {
            Some(Value::String(s)) => (None, Some(s.as_str())),
            Some(Value::Array(b)) => (Some(b.as_slice()), None),
            _ => return Err(shape(Some(i), None, "content must be a string or an array")),
        };
        for (j, b) in blocks.unwrap_or(&[]).iter().enumerate() {
            let kind = block_type(b);
            let allowed = if assistant {
                matches!(kind, "text" | "thinking" | "redacted_thinking" | "tool_use")
                    || kind.starts_with("server_tool_use")
                    || kind.ends_with("_tool_result")
                    || kind == "mcp_tool_use"
            } else {
                matches!(kind, "text" | "image" | "document" | "tool_result")
            };
            if !allowed {
                let side = if assistant { "assistant" } else { "user" };
                return Err(shape(
                    Some(i),
                    Some(j),
                    format!("a {kind:?} block cannot be in a {side} message"),
                ));
            }
        }
        msgs.push(Msg {
            assistant,
            blocks,
            text,
        });
    }
    Ok(msgs)
}

/// A9 (the first message is the user's) and A8 (no empty message except an optional final
/// assistant message).
fn check_first_and_empty(msgs: &[Msg<'_>], final_request: bool) -> Result<(), RuleViolation> {
    if msgs[0].assistant {
        return Err(violation(
            "A9",
            Some(0),
            None,
            "the first message must use the user role",
        ));
    }
    let last = msgs.len() - 1;
    for (i, m) in msgs.iter().enumerate() {
        if m.is_empty() && !(final_request && i == last && m.assistant) {
            return Err(violation("A8", Some(i), None, "message content is empty"));
        }
    }
    Ok(())
}

/// A7: no empty or whitespace-only text, in messages and inside tool results.
fn check_texts(msgs: &[Msg<'_>]) -> Result<(), RuleViolation> {
    for (i, m) in msgs.iter().enumerate() {
        if let Some(t) = m.text {
            if !t.is_empty() && is_blank(t) {
                return Err(violation(
                    "A7",
                    Some(i),
                    None,
                    "text content must contain non-whitespace text",
                ));
            }
        }
        for (j, b) in m.blocks().iter().enumerate() {
            let texts: Vec<&Value> = match block_type(b) {
                "text" => vec![b],
                "tool_result" => match b.get("content") {
                    Some(Value::Array(items)) => {
                        items.iter().filter(|x| block_type(x) == "text").collect()
                    }
                    _ => vec![],
                },
                _ => vec![],
            };
            for t in texts {
                match t.get("text").and_then(Value::as_str) {
                    Some(s) if !is_blank(s) => {}
                    Some(_) => {
                        return Err(violation(
                            "A7",
                            Some(i),
                            Some(j),
                            "text content blocks must be non-empty and not whitespace only",
                        ))
                    }
                    None => {
                        return Err(shape(Some(i), Some(j), "a text block needs a string text"))
                    }
                }
            }
        }
    }
    Ok(())
}

/// A6 and A5: tool_use ids match the pattern and are unique; input is an object, name set.
fn check_tool_uses(msgs: &[Msg<'_>]) -> Result<(), RuleViolation> {
    let mut seen = HashSet::new();
    for (i, m) in msgs.iter().enumerate() {
        for (j, b) in m.blocks().iter().enumerate() {
            if block_type(b) != "tool_use" {
                continue;
            }
            let id = b.get("id").and_then(Value::as_str).unwrap_or("");
            if !is_wire_tool_id(id) {
                return Err(violation(
                    "A6",
                    Some(i),
                    Some(j),
                    format!("tool_use.id {id:?} should match ^[a-zA-Z0-9_-]+$"),
                ));
            }
            if !seen.insert(id) {
                return Err(violation(
                    "A5",
                    Some(i),
                    Some(j),
                    format!("tool_use ids must be unique ({id:?} repeats)"),
                ));
            }
            if !b.get("input").is_some_and(Value::is_object) {
                return Err(shape(
                    Some(i),
                    Some(j),
                    "tool_use.input must be a JSON object",
                ));
            }
            if b.get("name")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty)
            {
                return Err(shape(
                    Some(i),
                    Some(j),
                    "tool_use.name must be a non-empty string",
                ));
            }
        }
    }
    Ok(())
}

/// A14: thinking carries its signature (redacted thinking its data), byte for byte.
fn check_thinking_blocks(msgs: &[Msg<'_>]) -> Result<(), RuleViolation> {
    for (i, m) in msgs.iter().enumerate() {
        for (j, b) in m.blocks().iter().enumerate() {
            let (field, kind) = match block_type(b) {
                "thinking" => ("signature", "thinking"),
                "redacted_thinking" => ("data", "redacted_thinking"),
                _ => continue,
            };
            if b.get(field)
                .and_then(Value::as_str)
                .is_none_or(str::is_empty)
            {
                return Err(violation(
                    "A14",
                    Some(i),
                    Some(j),
                    format!("{kind}.{field}: field required"),
                ));
            }
            if kind == "thinking" && b.get("thinking").and_then(Value::as_str).is_none() {
                return Err(violation(
                    "A14",
                    Some(i),
                    Some(j),
                    "thinking.thinking: field required",
                ));
            }
        }
    }
    Ok(())
}

/// A15 (`is_error`, when present, is a boolean; `tool_use_id` a string) and A3 (in a user
/// message every tool_result comes before any other block).
fn check_results(msgs: &[Msg<'_>]) -> Result<(), RuleViolation> {
    for (i, m) in msgs.iter().enumerate() {
        let mut other_seen = false;
        for (j, b) in m.blocks().iter().enumerate() {
            if block_type(b) != "tool_result" {
                other_seen = true;
                continue;
            }
            if b.get("is_error").is_some_and(|e| !e.is_boolean()) {
                return Err(violation(
                    "A15",
                    Some(i),
                    Some(j),
                    "tool_result.is_error must be a boolean",
                ));
            }
            if b.get("tool_use_id").and_then(Value::as_str).is_none() {
                return Err(shape(
                    Some(i),
                    Some(j),
                    "tool_result.tool_use_id must be a string",
                ));
            }
            if other_seen {
                return Err(violation(
                    "A3",
                    Some(i),
                    Some(j),
                    "tool_result blocks must come first in the content array",
                ));
            }
        }
    }
    Ok(())
}

/// Where each result id appears (message indices).
fn result_positions<'a>(msgs: &[Msg<'a>]) -> HashMap<&'a str, Vec<usize>> {
    let mut results_at: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, m) in msgs.iter().enumerate() {
        for b in m.blocks.unwrap_or(&[]) {
            if block_type(b) == "tool_result" {
                if let Some(id) = b.get("tool_use_id").and_then(Value::as_str) {
                    results_at.entry(id).or_default().push(i);
                }
            }
        }
    }
    results_at
}

/// The tool_use blocks of a message: (block index, id).
fn tool_uses<'a>(m: &Msg<'a>) -> Vec<(usize, &'a str)> {
    m.blocks
        .unwrap_or(&[])
        .iter()
        .enumerate()
        .filter(|(_, b)| block_type(b) == "tool_use")
        .filter_map(|(j, b)| b.get("id").and_then(Value::as_str).map(|id| (j, id)))
        .collect()
}

/// A4: all results of one assistant turn are in the one user message right after it.
fn check_a4(msgs: &[Msg<'_>], results_at: &HashMap<&str, Vec<usize>>) -> Result<(), RuleViolation> {
    for (i, m) in msgs.iter().enumerate().filter(|(_, m)| m.assistant) {
        let ids = tool_uses(m);
        let at = |id: &str| results_at.get(id).map_or(&[][..], Vec::as_slice);
        let in_next = ids
            .iter()
            .filter(|(_, id)| at(id).contains(&(i + 1)))
            .count();
        for (j, id) in &ids {
            let elsewhere = at(id).iter().any(|&k| k != i + 1);
            if elsewhere && in_next > 0 {
                return Err(violation(
                    "A4",
                    Some(i),
                    Some(*j),
                    format!(
                        "the results of this turn are split over several messages ({id:?} is                          not in the next one)"
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// A10: roles alternate.
fn check_a10(msgs: &[Msg<'_>]) -> Result<(), RuleViolation> {
    for i in 1..msgs.len() {
        if msgs[i].assistant == msgs[i - 1].assistant {
            let role = if msgs[i].assistant {
                "assistant"
            } else {
                "user"
            };
            return Err(violation(
                "A10",
                Some(i),
                None,
                format!("roles must alternate, but found two {role} messages in a row"),
            ));
        }
    }
    Ok(())
}

/// A2: every tool_result answers a tool_use of the previous (assistant) message.
fn check_a2(msgs: &[Msg<'_>]) -> Result<(), RuleViolation> {
    for (i, m) in msgs.iter().enumerate() {
        for (j, b) in m.blocks().iter().enumerate() {
            if block_type(b) != "tool_result" {
                continue;
            }
            let id = b.get("tool_use_id").and_then(Value::as_str).unwrap_or("");
            let answered = i > 0
                && msgs[i - 1].assistant
                && tool_uses(&msgs[i - 1]).iter().any(|(_, u)| *u == id);
            if !answered {
                return Err(violation(
                    "A2",
                    Some(i),
                    Some(j),
                    format!(
                        "unexpected tool_use_id {id:?}: each tool_result must have a                          corresponding tool_use in the previous message"
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// A1: every tool_use has its result in the next message (in a stored history, the last turn's
/// results can still come).
fn check_a1(
    msgs: &[Msg<'_>],
    results_at: &HashMap<&str, Vec<usize>>,
    final_request: bool,
) -> Result<(), RuleViolation> {
    let last = msgs.len() - 1;
    for (i, m) in msgs.iter().enumerate().filter(|(_, m)| m.assistant) {
        let tail = i == last || (i + 1 == last && !msgs[last].assistant);
        if tail && !final_request {
            continue; // the missing results can still come, merged into the next user message
        }
        for (j, id) in tool_uses(m) {
            let next_has = results_at.get(id).is_some_and(|at| at.contains(&(i + 1)));
            if !next_has {
                return Err(violation(
                    "A1",
                    Some(i),
                    Some(j),
                    format!(
                        "tool_use id {id:?} was found without a tool_result block immediately                          after"
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// A13: with thinking on, the assistant turn before the last set of results starts with
/// thinking.
fn check_a13(msgs: &[Msg<'_>], final_request: bool) -> Result<(), RuleViolation> {
    let last = msgs.len() - 1;
    let open_loop = if msgs[last].assistant && !final_request {
        (!tool_uses(&msgs[last]).is_empty()).then_some(last)
    } else if !msgs[last].assistant
        && msgs[last]
            .blocks()
            .iter()
            .any(|b| block_type(b) == "tool_result")
    {
        Some(last - 1)
    } else {
        None
    };
    if let Some(a) = open_loop {
        let first = msgs[a].blocks().first().map(block_type).unwrap_or("");
        if !matches!(first, "thinking" | "redacted_thinking") {
            return Err(violation(
                "A13",
                Some(a),
                Some(0),
                format!(
                    "expected thinking or redacted_thinking, but found {first:?}: with thinking                      enabled the final assistant message must start with a thinking block"
                ),
            ));
        }
    }
    Ok(())
}

/// A11 (a final assistant message does not end in whitespace) and A12 (newer models take no
/// prefill at all).
fn check_final(msgs: &[Msg<'_>]) -> Result<(), RuleViolation> {
    let last = msgs.len() - 1;
    if !msgs[last].assistant {
        return Ok(());
    }
    let ends_blank = match (msgs[last].text, msgs[last].blocks().last()) {
        (Some(t), _) => t.ends_with(char::is_whitespace),
        (_, Some(b)) if block_type(b) == "text" => b
            .get("text")
            .and_then(Value::as_str)
            .is_some_and(|t| t.ends_with(char::is_whitespace)),
        _ => false,
    };
    if ends_blank {
        return Err(violation(
            "A11",
            Some(last),
            None,
            "final assistant content cannot end with trailing whitespace",
        ));
    }
    Err(violation(
        "A12",
        Some(last),
        None,
        "the request ends with an assistant message (prefill), which newer models reject",
    ))
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::*;

    fn u(content: Value) -> Value {
        json!({"role":"user","content":content})
    }
    fn a(content: Value) -> Value {
        json!({"role":"assistant","content":content})
    }
    fn text(t: &str) -> Value {
        json!({"type":"text","text":t})
    }
    fn call(id: &str) -> Value {
        json!({"type":"tool_use","id":id,"name":"Bash","input":{"command":"ls"}})
    }
    fn res(id: &str) -> Value {
        json!({"type":"tool_result","tool_use_id":id,"content":"out"})
    }
    fn rule(messages: Vec<Value>) -> &'static str {
        validate(&json!({ "messages": messages })).unwrap_err().rule
    }

    #[test]
    fn a_good_history_passes() {
        let m = json!({"thinking":{"type":"enabled"},"messages":[
            u(json!("hi")),
            a(json!([{"type":"thinking","thinking":"t","signature":"s"}, text("x"), call("t1"), call("t2")])),
            u(json!([res("t1"), {"type":"tool_result","tool_use_id":"t2","content":[text("y")],"is_error":true}, text("more")])),
            a(json!([text("done")])),
            u(json!("next")),
        ]});
        validate(&m).unwrap();
        validate_history(&json!([u(json!("hi")), a(json!([call("t1")]))])).unwrap();
        let partial = json!([
            u(json!("hi")),
            a(json!([call("t1"), call("t2")])),
            u(json!([res("t1")]))
        ]);
        validate_history(&partial).unwrap();
        assert_eq!(
            validate(&json!({ "messages": partial })).unwrap_err().rule,
            "A1"
        );
    }

    #[test]
    fn a1_tool_use_without_result() {
        assert_eq!(
            rule(vec![
                u(json!("hi")),
                a(json!([call("t1")])),
                u(json!("next"))
            ]),
            "A1"
        );
        assert_eq!(rule(vec![u(json!("hi")), a(json!([call("t1")]))]), "A1");
    }

    #[test]
    fn a2_orphan_result() {
        assert_eq!(
            rule(vec![
                u(json!("hi")),
                a(json!([call("t1")])),
                u(json!([res("t1"), res("zz")]))
            ]),
            "A2"
        );
        assert_eq!(rule(vec![u(json!([res("t1")]))]), "A2");
    }

    #[test]
    fn a3_results_first() {
        assert_eq!(
            rule(vec![
                u(json!("hi")),
                a(json!([call("t1")])),
                u(json!([text("first"), res("t1")]))
            ]),
            "A3"
        );
    }

    #[test]
    fn a4_results_in_one_message() {
        assert_eq!(
            rule(vec![
                u(json!("hi")),
                a(json!([call("t1"), call("t2")])),
                u(json!([res("t1")])),
                u(json!([res("t2")]))
            ]),
            "A4"
        );
    }

    #[test]
    fn a5_unique_ids() {
        assert_eq!(
            rule(vec![
                u(json!("hi")),
                a(json!([call("t1")])),
                u(json!([res("t1")])),
                a(json!([call("t1")])),
                u(json!([res("t1")]))
            ]),
            "A5"
        );
    }

    #[test]
    fn a6_id_pattern() {
        assert_eq!(
            rule(vec![
                u(json!("hi")),
                a(json!([call("functions.ls:3")])),
                u(json!([res("functions.ls:3")]))
            ]),
            "A6"
        );
    }

    #[test]
    fn a7_no_empty_text() {
        assert_eq!(rule(vec![u(json!([text("")]))]), "A7");
        assert_eq!(rule(vec![u(json!([text("  \n")]))]), "A7");
        assert_eq!(
            rule(vec![
                u(json!("hi")),
                a(json!([call("t")])),
                u(json!([{"type":"tool_result","tool_use_id":"t","content":[text("")]}]))
            ]),
            "A7"
        );
    }

    #[test]
    fn a8_no_empty_message() {
        assert_eq!(rule(vec![u(json!([]))]), "A8");
        assert_eq!(
            rule(vec![u(json!("hi")), a(json!("")), u(json!("x"))]),
            "A8"
        );
    }

    #[test]
    fn a9_user_first() {
        assert_eq!(rule(vec![a(json!("hello")), u(json!("hi"))]), "A9");
    }

    #[test]
    fn a10_roles_alternate() {
        assert_eq!(rule(vec![u(json!("hi")), u(json!("again"))]), "A10");
    }

    #[test]
    fn a11_final_assistant_no_trailing_whitespace() {
        assert_eq!(rule(vec![u(json!("hi")), a(json!([text("ok ")]))]), "A11");
    }

    #[test]
    fn a12_no_prefill() {
        assert_eq!(rule(vec![u(json!("hi")), a(json!([text("ok")]))]), "A12");
    }

    #[test]
    fn a13_thinking_starts_the_tool_turn() {
        let body = json!({"thinking":{"type":"enabled","budget_tokens":1024},"messages":[
            u(json!("hi")), a(json!([call("t1")])), u(json!([res("t1")]))]});
        assert_eq!(validate(&body).unwrap_err().rule, "A13");
    }

    #[test]
    fn a14_thinking_needs_its_signature() {
        assert_eq!(
            rule(vec![
                u(json!("hi")),
                a(json!([{"type":"thinking","thinking":"t"}, text("x")])),
                u(json!("y"))
            ]),
            "A14"
        );
        assert_eq!(
            rule(vec![
                u(json!("hi")),
                a(json!([{"type":"redacted_thinking"}, text("x")])),
                u(json!("y"))
            ]),
            "A14"
        );
    }

    #[test]
    fn a15_error_flag_is_boolean() {
        assert_eq!(
            rule(vec![
                u(json!("hi")),
                a(json!([call("t1")])),
                u(
                    json!([{"type":"tool_result","tool_use_id":"t1","content":"x","is_error":"yes"}])
                )
            ]),
            "A15"
        );
    }

    #[test]
    fn violation_names_message_and_block() {
        let v = validate(&json!({"messages":[u(json!("hi")), a(json!([call("t1")])), u(json!([text("first"), res("t1")]))]})).unwrap_err();
        assert_eq!((v.message, v.block), (Some(2), Some(1)));
        assert_eq!(v.to_string(), "rule A3: messages[2].content[1]: tool_result blocks must come first in the content array");
    }
}
