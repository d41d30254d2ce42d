//! Gemini `contents` → canonical events.

use serde_json::{Map, Value};

use super::parts::{media_part, response_content};
use super::{DIALECT, PROVIDER, SENTINEL_SIGNATURES};
use crate::{history_of, kind_of, string_member, ParseError, Parsed};
use handoff_transcript::{
    AssistantPart, Body, Event, Origin, Part, Signature, Thinking, Timestamp, ToolCall, Transcript,
};

/// Parses a body with `contents` (or a bare array). `systemInstruction` texts become the system
/// prompt; a model content is one assistant event (`contents[c]`); in a user content each
/// `functionResponse` is a tool-result event and each run of other parts one user event.
pub fn parse(body: &Value) -> Result<Parsed, ParseError> {
    let contents = history_of(body, "contents")?;
    let model = body.get("model").and_then(Value::as_str).map(str::to_owned);
    let mut p = ContentParser::new(model.clone());
    let mut events = Vec::with_capacity(contents.len());
    for (c, content) in contents.iter().enumerate() {
        events.extend(p.parse_content(c, content)?);
    }
    Ok(Parsed {
        model,
        system: system_texts(body)?,
        transcript: Transcript::new(events),
    })
}

fn system_texts(body: &Value) -> Result<Vec<String>, ParseError> {
    let Some(instruction) = body
        .get("systemInstruction")
        .or_else(|| body.get("system_instruction"))
    else {
        return Ok(Vec::new());
    };
    if let Value::String(s) = instruction {
        return Ok(vec![s.clone()]);
    }
    let parts = instruction
        .get("parts")
        .and_then(Value::as_array)
        .ok_or_else(|| ParseError::new("systemInstruction.parts", "missing or not an array"))?;
    Ok(parts
        .iter()
        .filter_map(|p| p.get("text").and_then(Value::as_str))
        .map(str::to_owned)
        .collect())
}

/// Parses `contents` one at a time, as [`parse`] parses the whole list (a reader that streams a
/// history hands it each content as its turn comes): a `functionResponse` pairs with the open
/// calls of the model content before it, whichever call it was handed with.
pub struct ContentParser {
    model: Option<String>,
    /// The events of the content being parsed.
    events: Vec<Event>,
    /// Calls of the last model content not yet answered: (id, name).
    open_calls: Vec<(String, String)>,
}

impl ContentParser {
    /// A parser of the contents of a body whose `model` is `model`.
    pub fn new(model: Option<String>) -> Self {
        ContentParser {
            model,
            events: Vec::new(),
            open_calls: Vec::new(),
        }
    }

    /// The events of `content`, the `c`-th of the history (ids `contents[c]`, `contents[c]#1`,
    /// …); an error's path starts with `contents[c]`.
    pub fn parse_content(&mut self, c: usize, content: &Value) -> Result<Vec<Event>, ParseError> {
        self.events.clear();
        self.content(c, content)
            .map_err(|e| e.under(&format!("contents[{c}]")))?;
        Ok(std::mem::take(&mut self.events))
    }

    fn content(&mut self, c: usize, content: &Value) -> Result<(), ParseError> {
        let map = content
            .as_object()
            .ok_or_else(|| ParseError::new("", "a content must be an object"))?;
        let parts = match map.get("parts") {
            Some(Value::Array(parts)) => parts,
            Some(other) => {
                return Err(ParseError::new(
                    "parts",
                    format!("expected an array, found {}", kind_of(other)),
                ))
            }
            None => return Err(ParseError::new("parts", "missing")),
        };
        match map.get("role").and_then(Value::as_str).unwrap_or("user") {
            "model" => self.model_content(c, parts),
            "user" | "function" => self.user_content(c, parts),
            other => Err(ParseError::new(
                "role",
                format!("role {other:?} has no canonical form"),
            )),
        }
    }

    fn model_content(&mut self, c: usize, parts: &[Value]) -> Result<(), ParseError> {
        let mut content = Vec::with_capacity(parts.len());
        self.open_calls.clear();
        for (i, part) in parts.iter().enumerate() {
            let map = part.as_object().ok_or_else(|| {
                ParseError::new(format!("parts[{i}]"), "a part must be an object")
            })?;
            self.model_part(c, i, map, &mut content)
                .map_err(|e| e.under(&format!("parts[{i}]")))?;
        }
        let origin = Some(Origin {
            provider: PROVIDER.to_owned(),
            model: self.model.clone(),
            api: Some(DIALECT.to_owned()),
        });
        let start = self.events.len();
        self.push(c, start, Body::Assistant { content, origin });
        Ok(())
    }

    fn model_part(
        &mut self,
        c: usize,
        i: usize,
        part: &Map<String, Value>,
        content: &mut Vec<AssistantPart>,
    ) -> Result<(), ParseError> {
        let signature = match part.get("thoughtSignature") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) if SENTINEL_SIGNATURES.contains(&s.as_str()) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(other) => {
                return Err(ParseError::new(
                    "thoughtSignature",
                    format!("expected a string, found {}", kind_of(other)),
                ))
            }
        };
        let thought = part.get("thought").and_then(Value::as_bool) == Some(true);
        let sign = |value: String, text: &str| Signature {
            provider: PROVIDER.to_owned(),
            model: self.model.clone(),
            value,
            redacted: text.is_empty(),
        };
        if let Some(Value::String(text)) = part.get("text") {
            if thought {
                let signature = signature.map(|s| sign(s, text));
                content.push(AssistantPart::Thinking(Thinking {
                    text: text.clone(),
                    signature,
                }));
                return Ok(());
            }
            if let Some(s) = signature {
                content.push(signature_only(sign(s, "")));
            }
            if !text.is_empty() {
                content.push(AssistantPart::text(text.clone()));
            }
            return Ok(());
        }
        if let Some(call) = part.get("functionCall") {
            if let Some(s) = signature {
                content.push(signature_only(sign(s, "")));
            }
            let call = self.call(c, i, call).map_err(|e| e.under("functionCall"))?;
            content.push(AssistantPart::ToolCall(call));
            return Ok(());
        }
        Err(ParseError::new(
            "",
            format!(
                "a model part with {:?} has no canonical form",
                part.keys().collect::<Vec<_>>()
            ),
        ))
    }

    fn call(&mut self, c: usize, i: usize, call: &Value) -> Result<ToolCall, ParseError> {
        let map = call
            .as_object()
            .ok_or_else(|| ParseError::new("", "expected an object"))?;
        let name = string_member(map, "name")?.to_owned();
        let id = match map.get("id").and_then(Value::as_str) {
            Some(id) if !id.is_empty() => id.to_owned(),
            _ => format!("contents[{c}].parts[{i}]"),
        };
        let arguments = map
            .get("args")
            .cloned()
            .unwrap_or_else(|| Value::Object(Map::new()));
        self.open_calls.push((id.clone(), name.clone()));
        Ok(ToolCall::new(id, name, arguments))
    }

    fn user_content(&mut self, c: usize, parts: &[Value]) -> Result<(), ParseError> {
        let start = self.events.len();
        let mut run: Vec<Part> = Vec::new();
        for (i, part) in parts.iter().enumerate() {
            let at = format!("parts[{i}]");
            let map = part
                .as_object()
                .ok_or_else(|| ParseError::new(&at, "a part must be an object"))?;
            if let Some(response) = map.get("functionResponse") {
                self.flush_user(c, start, &mut run);
                let body = self
                    .result(response)
                    .map_err(|e| e.under(&format!("{at}.functionResponse")))?;
                self.push(c, start, body);
                continue;
            }
            if let Some(Value::String(text)) = map.get("text") {
                run.push(Part::text(text.clone()));
                continue;
            }
            match media_part(map).map_err(|e| e.under(&at))? {
                Some(media) => run.push(media),
                None => {
                    return Err(ParseError::new(
                        at,
                        format!(
                            "a user part with {:?} has no canonical form",
                            map.keys().collect::<Vec<_>>()
                        ),
                    ))
                }
            }
        }
        self.flush_user(c, start, &mut run);
        Ok(())
    }

    fn flush_user(&mut self, c: usize, start: usize, run: &mut Vec<Part>) {
        if !run.is_empty() {
            let content = std::mem::take(run);
            self.push(c, start, Body::User { content });
        }
    }

    /// Pushes an event of content `c` (whose first event would be at `start`): the first is
    /// `contents[c]`, the next ones `contents[c]#1`, `#2`, …
    fn push(&mut self, c: usize, start: usize, body: Body) {
        let id = match self.events.len() - start {
            0 => format!("contents[{c}]"),
            k => format!("contents[{c}]#{k}"),
        };
        self.events
            .push(Event::new(id, Timestamp::from_millis(0), body));
    }

    /// A tool result: its call is the response's id, or else the earliest open call of its name.
    fn result(&mut self, response: &Value) -> Result<Body, ParseError> {
        let map = response
            .as_object()
            .ok_or_else(|| ParseError::new("", "expected an object"))?;
        let name = string_member(map, "name")?;
        let open = match map.get("id").and_then(Value::as_str) {
            Some(id) if !id.is_empty() => self.open_calls.iter().position(|(c, _)| c == id),
            _ => self.open_calls.iter().position(|(_, n)| n == name),
        };
        let call_id = match (open, map.get("id").and_then(Value::as_str)) {
            (Some(k), _) => self.open_calls.remove(k).0,
            (None, Some(id)) if !id.is_empty() => id.to_owned(),
            (None, _) => {
                return Err(ParseError::new(
                    "name",
                    format!("a response without an id answers no open call named {name:?}"),
                ))
            }
        };
        let (content, is_error) = response_content(map)?;
        Ok(Body::ToolResult {
            call_id,
            content,
            is_error,
        })
    }
}

fn signature_only(signature: Signature) -> AssistantPart {
    AssistantPart::Thinking(Thinking {
        text: String::new(),
        signature: Some(signature),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn reads_what_gemini_cli_sends() {
        let body = json!({
            "systemInstruction": {"role": "user", "parts": [{"text": "You are Gemini CLI."}]},
            "contents": [
                {"role": "user", "parts": [{"text": "<session_context>x</session_context>"}, {"text": "list"}]},
                {"role": "model", "parts": [{"text": "Listing."}, {"functionCall": {"id": "hand_call_1", "name": "list_directory", "args": {"dir_path": "."}}, "thoughtSignature": "sig1"}]},
                {"role": "user", "parts": [{"functionResponse": {"id": "hand_call_1", "name": "list_directory", "response": {"output": "a.txt"}}}]},
                {"role": "model", "parts": [{"text": "thinking…", "thought": true}, {"text": "One file."}]},
                {"role": "user", "parts": [{"text": "continue"}]}
            ]
        });
        let p = parse(&body).unwrap();
        assert_eq!(p.system, ["You are Gemini CLI."]);
        let kinds: Vec<_> = p.transcript.events.iter().map(|e| e.body.kind()).collect();
        assert_eq!(
            kinds,
            ["user", "assistant", "tool_result", "assistant", "user"]
        );
        let Body::Assistant { content, .. } = &p.transcript.events[1].body else {
            panic!()
        };
        assert!(
            matches!(&content[1], AssistantPart::Thinking(Thinking { text, signature: Some(s) }) if text.is_empty() && s.value == "sig1" && s.provider == "google")
        );
        assert!(matches!(&content[2], AssistantPart::ToolCall(c) if c.id == "hand_call_1"));
        assert!(matches!(&p.transcript.events[2].body,
            Body::ToolResult { call_id, content, is_error: false } if call_id == "hand_call_1" && content == &vec![Part::text("a.txt")]));
        assert!(matches!(&p.transcript.events[3].body,
            Body::Assistant { content, .. } if matches!(&content[0], AssistantPart::Thinking(Thinking { signature: None, .. }))));
    }

    #[test]
    fn calls_without_ids_get_one_and_responses_pair_by_name() {
        let body = json!([
            {"role": "user", "parts": [{"text": "go"}]},
            {"role": "model", "parts": [
                {"functionCall": {"name": "ls", "args": {}}, "thoughtSignature": "skip_thought_signature_validator"},
                {"functionCall": {"name": "date"}}]},
            {"role": "user", "parts": [
                {"functionResponse": {"name": "date", "response": {"output": "now"}}},
                {"functionResponse": {"name": "ls", "response": {"error": "denied"}}},
                {"text": "and?"}]}
        ]);
        let t = parse(&body).unwrap().transcript;
        let Body::Assistant { content, .. } = &t.events[1].body else {
            panic!()
        };
        assert_eq!(content.len(), 2, "the sentinel signature is no thinking");
        assert!(
            matches!(&content[1], AssistantPart::ToolCall(c) if c.id == "contents[1].parts[1]" && c.arguments() == Some(&json!({})))
        );
        assert!(
            matches!(&t.events[2].body, Body::ToolResult { call_id, .. } if call_id == "contents[1].parts[1]")
        );
        assert!(
            matches!(&t.events[3].body, Body::ToolResult { call_id, is_error: true, .. } if call_id == "contents[1].parts[0]")
        );
        assert_eq!(t.events[4].id, "contents[2]#2");
    }

    #[test]
    fn errors_name_the_path() {
        let orphan = json!([{"role": "user", "parts": [{"functionResponse": {"name": "ls", "response": {}}}]}]);
        assert_eq!(
            parse(&orphan).unwrap_err().path,
            "contents[0].parts[0].functionResponse.name"
        );
        let code = json!([{"role": "model", "parts": [{"executableCode": {"code": "1"}}]}]);
        assert_eq!(parse(&code).unwrap_err().path, "contents[0].parts[0]");
        let bad = json!([{"role": "user", "parts": [{"inlineData": {"mimeType": "image/png", "data": "!!"}}]}]);
        assert_eq!(
            parse(&bad).unwrap_err().path,
            "contents[0].parts[0].inlineData.data"
        );
    }
}
