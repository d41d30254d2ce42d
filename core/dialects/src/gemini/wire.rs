//! The Gemini dialect behind the common interface ([`crate::Dialect`]).

use serde_json::{json, Map, Value};

use super::{parse, render, validate, validate_history};
use crate::{ParseError, Parsed, RenderError, RenderOptions, Violation};
use handoff_transcript::Transcript;

/// Gemini generateContent.
pub(crate) struct GenerateContent;

impl crate::Wire for GenerateContent {
    fn parse(&self, body: &Value) -> Result<Parsed, ParseError> {
        parse(body)
    }

    /// The model goes in the URL (`models/<model>:generateContent`), not in the body.
    fn render(
        &self,
        transcript: &Transcript,
        options: &RenderOptions,
    ) -> Result<Value, RenderError> {
        let contents = render(transcript, options)?;
        let mut body = Map::new();
        if let Some(system) = &options.system {
            body.insert(
                "systemInstruction".into(),
                json!({"parts": [{"text": system}]}),
            );
        }
        body.insert("contents".into(), Value::Array(contents));
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
