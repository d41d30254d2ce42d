//! The Chat Completions dialect behind the common interface ([`crate::Dialect`]).

use serde_json::{Map, Value};

use super::{parse, render, validate, validate_history};
use crate::{ParseError, Parsed, RenderError, RenderOptions, Violation};
use handoff_transcript::Transcript;

/// OpenAI Chat Completions.
pub(crate) struct Chat;

impl crate::Wire for Chat {
    fn parse(&self, body: &Value) -> Result<Parsed, ParseError> {
        parse(body)
    }

    fn render(
        &self,
        transcript: &Transcript,
        options: &RenderOptions,
    ) -> Result<Value, RenderError> {
        let messages = render(transcript, options)?;
        let mut body = Map::new();
        if let Some(model) = &options.model {
            body.insert("model".into(), Value::from(model.as_str()));
        }
        body.insert("messages".into(), Value::Array(messages));
        Ok(Value::Object(body))
    }

    fn validate(&self, body: &Value, final_request: bool) -> Result<(), Violation> {
        if final_request {
            validate(body)
        } else {
            validate_history(body)
        }
    }
}
