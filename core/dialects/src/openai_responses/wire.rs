//! The Responses dialect behind the common interface ([`crate::Dialect`]).

use serde_json::{Map, Value};

use super::{parse_input, render_with, validate_input};
use crate::{history_of, ParseError, Parsed, RenderError, RenderOptions, Violation};
use handoff_transcript::Transcript;

/// OpenAI Responses.
pub(crate) struct Responses;

impl crate::Wire for Responses {
    /// `instructions` and developer / system messages become the system prompt; a string
    /// `input` is one user message.
    fn parse(&self, body: &Value) -> Result<Parsed, ParseError> {
        let mut system = Vec::new();
        if let Some(Value::String(instructions)) = body.get("instructions") {
            system.push(instructions.clone());
        }
        let single;
        let input = match body.get("input") {
            Some(Value::String(text)) => {
                single = [serde_json::json!({"type": "message", "role": "user", "content": text})];
                &single[..]
            }
            _ => history_of(body, "input")?,
        };
        let parsed = parse_input(input)?;
        system.extend(parsed.system);
        Ok(Parsed {
            model: body.get("model").and_then(Value::as_str).map(str::to_owned),
            system,
            transcript: parsed.transcript,
        })
    }

    fn render(
        &self,
        transcript: &Transcript,
        options: &RenderOptions,
    ) -> Result<Value, RenderError> {
        let input = render_with(transcript, options)?;
        let mut body = Map::new();
        if let Some(model) = &options.model {
            body.insert("model".into(), Value::from(model.as_str()));
        }
        if let Some(system) = &options.system {
            body.insert("instructions".into(), Value::from(system.as_str()));
        }
        body.insert("input".into(), Value::Array(input));
        if options.model.is_some() {
            // A stateless request: nothing stored server-side, reasoning replayed encrypted.
            body.insert("store".into(), Value::Bool(false));
            body.insert(
                "include".into(),
                serde_json::json!(["reasoning.encrypted_content"]),
            );
        }
        Ok(Value::Object(body))
    }

    fn validate(&self, body: &Value, final_request: bool) -> Result<(), Violation> {
        validate_input(body, final_request)
    }
}
