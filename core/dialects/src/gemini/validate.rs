//! The Gemini rules G1–G7 of `wire-rules.md` §4, checked on a body.

use serde_json::{Map, Value};

use super::parts::DATA_FIELDS;
use crate::{Dialect, Violation};

fn violation(
    rule: &'static str,
    index: usize,
    field: Option<String>,
    detail: impl Into<String>,
) -> Violation {
    Violation::new(Dialect::Gemini, rule, Some(index), field, detail)
}

/// A content as the checks see it.
struct Content<'a> {
    model: bool,
    parts: &'a [Value],
}

impl Content<'_> {
    fn with(&self, field: &str) -> impl Iterator<Item = (usize, &Value)> + '_ {
        let field = field.to_owned();
        self.parts
            .iter()
            .enumerate()
            .filter(move |(_, p)| p.get(&field).is_some())
    }
    fn calls(&self) -> usize {
        self.with("functionCall").count()
    }
    fn responses(&self) -> usize {
        self.with("functionResponse").count()
    }
}

/// Checks a request about to be sent (a body with `contents`, or a bare array).
pub fn validate(body: &Value) -> Result<(), Violation> {
    check(body, true)
}

/// Checks a stored history that more will follow: a trailing function-call turn may still wait
/// for its responses.
pub fn validate_history(body: &Value) -> Result<(), Violation> {
    check(body, false)
}

fn check(body: &Value, final_request: bool) -> Result<(), Violation> {
    let shape = |detail: &str| {
        Violation::new(
            Dialect::Gemini,
            "shape",
            None,
            Some("contents".into()),
            detail,
        )
    };
    let raw = match body {
        Value::Array(c) => c,
        Value::Object(map) => match map.get("contents") {
            Some(Value::Array(c)) => c,
            _ => return Err(shape("contents is missing or not an array")),
        },
        _ => return Err(shape("not a generateContent body")),
    };
    if raw.is_empty() {
        return Err(shape("contents is empty"));
    }
    let mut contents = Vec::with_capacity(raw.len());
    for (i, c) in raw.iter().enumerate() {
        contents.push(content(i, c, raw.len())?);
    }
    for (i, c) in contents.iter().enumerate() {
        for (j, part) in c.parts.iter().enumerate() {
            check_part(i, j, c.model, part)?;
        }
    }
    check_turns(&contents, final_request)?;
    check_signatures(&contents)
}

/// G6 (roles user and model; a lone content may leave it out) and G7 (parts non-empty).
fn content(i: usize, c: &Value, total: usize) -> Result<Content<'_>, Violation> {
    let model = match c.get("role").and_then(Value::as_str) {
        Some("model") => true,
        Some("user") => false,
        None if total == 1 && c.get("role").is_none() => false,
        other => {
            return Err(violation(
                "G6",
                i,
                Some("role".into()),
                format!("role must be user or model, found {other:?}"),
            ))
        }
    };
    match c.get("parts") {
        Some(Value::Array(parts)) if !parts.is_empty() => Ok(Content { model, parts }),
        Some(Value::Array(_)) => Err(violation(
            "G7",
            i,
            Some("parts".into()),
            "a content needs at least one part",
        )),
        _ => Err(violation(
            "shape",
            i,
            Some("parts".into()),
            "parts is missing or not an array",
        )),
    }
}

/// G7 (one data field, no empty text outside thoughts), G3 (args and response are objects) and
/// which side each kind of part belongs to.
fn check_part(i: usize, j: usize, model: bool, part: &Value) -> Result<(), Violation> {
    let at = |f: &str| Some(format!("parts[{j}]{f}"));
    let Some(map) = part.as_object() else {
        return Err(violation("shape", i, at(""), "a part must be an object"));
    };
    let fields: Vec<&str> = DATA_FIELDS
        .iter()
        .copied()
        .filter(|f| map.contains_key(*f))
        .collect();
    if fields.len() != 1 {
        return Err(violation(
            "G7",
            i,
            at(""),
            format!("a part holds exactly one of {DATA_FIELDS:?}, found {fields:?}"),
        ));
    }
    match fields[0] {
        "text" => check_text(map).map_err(|d| violation("G7", i, at(".text"), d)),
        "functionCall" if !model => Err(violation(
            "shape",
            i,
            at(".functionCall"),
            "a functionCall part belongs in a model content",
        )),
        "functionResponse" if model => Err(violation(
            "shape",
            i,
            at(".functionResponse"),
            "a functionResponse part belongs in a user content",
        )),
        "functionCall" => check_object(&map["functionCall"], "args", false)
            .map_err(|(f, d)| violation("G3", i, at(&format!(".functionCall{f}")), d)),
        "functionResponse" => check_object(&map["functionResponse"], "response", true)
            .map_err(|(f, d)| violation("G3", i, at(&format!(".functionResponse{f}")), d)),
        _ => Ok(()),
    }
}

fn check_text(part: &Map<String, Value>) -> Result<(), String> {
    let Some(text) = part["text"].as_str() else {
        return Err("text must be a string".into());
    };
    let thought = part.get("thought").and_then(Value::as_bool) == Some(true);
    if text.is_empty() && !thought && !part.contains_key("thoughtSignature") {
        return Err("a text part must not be empty".into());
    }
    Ok(())
}

/// A call or response: a non-empty `name`, and `member` a JSON object (required when
/// `required`). Errors are `(field, detail)`.
fn check_object(v: &Value, member: &str, required: bool) -> Result<(), (String, String)> {
    if v.get("name")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        return Err((".name".into(), "name must be a non-empty string".into()));
    }
    match v.get(member) {
        Some(Value::Object(_)) => Ok(()),
        None if !required => Ok(()),
        _ => Err((
            format!(".{member}"),
            format!("{member} must be a JSON object (a protobuf Struct)"),
        )),
    }
}

/// G1 (a call turn follows a user turn) and G2 (the next content answers every call, in one
/// content; responses answer the call turn right before them).
fn check_turns(contents: &[Content<'_>], final_request: bool) -> Result<(), Violation> {
    for (i, c) in contents.iter().enumerate() {
        if c.model && c.calls() > 0 && (i == 0 || contents[i - 1].model) {
            return Err(violation(
                "G1",
                i,
                None,
                "a function call turn must come immediately after a user turn or after a \
                 function response turn",
            ));
        }
        if !c.model && c.responses() > 0 {
            let before = i.checked_sub(1).map(|b| &contents[b]);
            if !before.is_some_and(|b| b.model && b.calls() > 0) {
                let (j, _) = c.with("functionResponse").next().expect("counted");
                return Err(violation(
                    "G2",
                    i,
                    Some(format!("parts[{j}]")),
                    "function response parts must answer the function call turn right before them",
                ));
            }
        }
        if !c.model || c.calls() == 0 {
            continue;
        }
        let answered = match contents.get(i + 1) {
            None if !final_request => continue,
            Some(next) if !next.model => next.responses(),
            _ => 0,
        };
        if answered != c.calls() {
            return Err(violation(
                "G2",
                i,
                None,
                format!(
                    "the number of function response parts ({answered}) must equal the number \
                     of function call parts ({}) of the function call turn",
                    c.calls()
                ),
            ));
        }
        check_ids(contents, i)?;
    }
    Ok(())
}

/// Where a call and a response both carry ids, every response id is one of the calls'.
fn check_ids(contents: &[Content<'_>], i: usize) -> Result<(), Violation> {
    let ids = |c: &Content<'_>, field: &str| -> Vec<(usize, Option<String>)> {
        c.with(field)
            .map(|(j, p)| {
                let id = p[field]
                    .get("id")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                (j, id)
            })
            .collect()
    };
    let calls = ids(&contents[i], "functionCall");
    for (j, id) in ids(&contents[i + 1], "functionResponse") {
        if let Some(id) = id {
            let known = calls
                .iter()
                .any(|(_, c)| c.as_deref().is_none_or(|c| c == id));
            if !known {
                return Err(violation(
                    "G2",
                    i + 1,
                    Some(format!("parts[{j}].functionResponse.id")),
                    format!("response id {id:?} matches no function call of the turn before"),
                ));
            }
        }
    }
    Ok(())
}

/// G4: in the current turn (after the last user content that is not only function responses),
/// the first function call of each model content carries a `thoughtSignature` (Gemini 3 and
/// later reject the request otherwise; a sentinel value is accepted).
fn check_signatures(contents: &[Content<'_>]) -> Result<(), Violation> {
    let start = contents
        .iter()
        .rposition(|c| !c.model && c.responses() < c.parts.len())
        .map_or(0, |u| u + 1);
    for (i, c) in contents.iter().enumerate().skip(start) {
        if !c.model {
            continue;
        }
        if let Some((j, first)) = c.with("functionCall").next() {
            if first
                .get("thoughtSignature")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty)
            {
                return Err(violation(
                    "G4",
                    i,
                    Some(format!("parts[{j}].thoughtSignature")),
                    "function call is missing a thought_signature in functionCall parts (the \
                     first call of each step of the current turn carries one)",
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn user(text: &str) -> Value {
        json!({"role": "user", "parts": [{"text": text}]})
    }
    fn calling(names: &[&str]) -> Value {
        let parts: Vec<Value> = names
            .iter()
            .enumerate()
            .map(|(k, n)| {
                let mut p =
                    json!({"functionCall": {"id": format!("id_{n}"), "name": n, "args": {}}});
                if k == 0 {
                    p["thoughtSignature"] = json!("sig");
                }
                p
            })
            .collect();
        json!({"role": "model", "parts": parts})
    }
    fn responses(names: &[&str]) -> Value {
        let parts: Vec<Value> = names
            .iter()
            .map(|n| json!({"functionResponse": {"id": format!("id_{n}"), "name": n, "response": {"output": "x"}}}))
            .collect();
        json!({"role": "user", "parts": parts})
    }
    fn model(text: &str) -> Value {
        json!({"role": "model", "parts": [{"text": text}]})
    }
    fn rule(contents: Vec<Value>) -> (&'static str, Option<usize>, Option<String>) {
        let v = validate(&json!({ "contents": contents })).unwrap_err();
        (v.rule, v.index, v.field)
    }

    #[test]
    fn a_good_history_passes() {
        validate(&json!({"contents": [
            user("hi"),
            calling(&["ls", "date"]),
            responses(&["ls", "date"]),
            {"role": "model", "parts": [{"text": "sum", "thought": true, "thoughtSignature": "s"}, {"text": "done"}]},
            user("next"),
        ]}))
        .unwrap();
        validate_history(&json!([user("hi"), calling(&["ls"])])).unwrap();
        validate(&json!([{"parts": [{"text": "one shot"}]}])).unwrap();
    }

    #[test]
    fn g1_a_call_turn_follows_a_user_turn() {
        assert_eq!(
            rule(vec![
                user("hi"),
                model("thinking"),
                calling(&["ls"]),
                responses(&["ls"])
            ]),
            ("G1", Some(2), None)
        );
    }

    #[test]
    fn g2_one_response_per_call_in_the_next_content() {
        assert_eq!(
            rule(vec![
                user("hi"),
                calling(&["ls", "date"]),
                responses(&["ls"]),
                user("x")
            ]),
            ("G2", Some(1), None)
        );
        assert_eq!(rule(vec![user("hi"), calling(&["ls"]), user("x")]).0, "G2");
        assert_eq!(
            rule(vec![user("hi"), model("ok"), responses(&["ls"])]),
            ("G2", Some(2), Some("parts[0]".into()))
        );
        let mut wrong_id = responses(&["ls"]);
        wrong_id["parts"][0]["functionResponse"]["id"] = json!("other");
        assert_eq!(
            rule(vec![user("hi"), calling(&["ls"]), wrong_id])
                .2
                .as_deref(),
            Some("parts[0].functionResponse.id")
        );
        assert_eq!(rule(vec![user("hi"), calling(&["ls"])]).0, "G2");
    }

    #[test]
    fn g3_args_and_response_are_objects() {
        let mut call = calling(&["ls"]);
        call["parts"][0]["functionCall"]["args"] = json!([1]);
        assert_eq!(
            rule(vec![user("hi"), call, responses(&["ls"])]),
            ("G3", Some(1), Some("parts[0].functionCall.args".into()))
        );
        let mut resp = responses(&["ls"]);
        resp["parts"][0]["functionResponse"]["response"] = json!("x");
        assert_eq!(
            rule(vec![user("hi"), calling(&["ls"]), resp]).2.as_deref(),
            Some("parts[0].functionResponse.response")
        );
    }

    #[test]
    fn g4_the_current_turn_carries_signatures() {
        let mut unsigned = calling(&["ls"]);
        unsigned["parts"][0]
            .as_object_mut()
            .unwrap()
            .remove("thoughtSignature");
        assert_eq!(
            rule(vec![user("hi"), unsigned.clone(), responses(&["ls"])]),
            ("G4", Some(1), Some("parts[0].thoughtSignature".into()))
        );
        // Before the last user message it is history: no signature needed.
        validate(&json!([
            user("hi"),
            unsigned.clone(),
            responses(&["ls"]),
            model("ok"),
            user("go")
        ]))
        .unwrap();
        let mut sentinel = unsigned;
        sentinel["parts"][0]["thoughtSignature"] = json!(super::super::SKIP_SIGNATURE);
        validate(&json!([user("hi"), sentinel, responses(&["ls"])])).unwrap();
    }

    #[test]
    fn g6_roles_are_user_and_model() {
        assert_eq!(
            rule(vec![
                user("hi"),
                json!({"role": "function", "parts": [{"text": "x"}]})
            ]),
            ("G6", Some(1), Some("role".into()))
        );
        assert_eq!(
            rule(vec![json!({"parts": [{"text": "a"}]}), user("b")]).0,
            "G6"
        );
    }

    #[test]
    fn g7_no_empty_contents_or_parts() {
        assert_eq!(
            rule(vec![json!({"role": "user", "parts": []})]),
            ("G7", Some(0), Some("parts".into()))
        );
        assert_eq!(rule(vec![json!({"role": "user", "parts": [{}]})]).0, "G7");
        assert_eq!(
            rule(vec![user("")]),
            ("G7", Some(0), Some("parts[0].text".into()))
        );
        validate(&json!([user("hi"), {"role": "model", "parts": [{"text": "", "thought": true, "thoughtSignature": "s"}]}, user("x")]))
            .unwrap();
    }

    #[test]
    fn a_violation_says_where() {
        let v = validate(&json!([
            user("hi"),
            model("a"),
            calling(&["ls"]),
            responses(&["ls"])
        ]))
        .unwrap_err();
        assert!(
            v.to_string().starts_with("gemini rule G1: contents[2]: "),
            "{v}"
        );
    }
}
