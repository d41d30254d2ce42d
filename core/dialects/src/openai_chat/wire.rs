//! The Chat Completions dialect behind the common interface ([`crate::Dialect`]).

use serde_json::{Map, Value};

use super::{parse, render, validate, validate_history, PROVIDER};
use crate::{Dialect, ParseError, Parsed, RenderError, RenderOptions, Violation, WireLimit};
use handoff_transcript::Transcript;

/// OpenAI Chat Completions.
pub(crate) struct Chat;

impl crate::Wire for Chat {
    fn dialect(&self) -> Dialect {
        Dialect::OpenaiChat
    }

    fn history_field(&self) -> &'static str {
        "messages"
    }

    fn provider(&self) -> &'static str {
        PROVIDER
    }

    fn default_thinking_from(&self) -> &'static [&'static str] {
        &[]
    }

    fn limits(&self) -> &'static [WireLimit] {
        // In this order: thinking becomes text, empty texts go, then texts move before the
        // calls and join into one string.
        &[
            WireLimit::NoToolErrorFlag,
            WireLimit::ThinkingAsText,
            WireLimit::NoEmptyText,
            WireLimit::ToolResultImagesInUserTurn,
            WireLimit::TextBeforeToolCalls,
            WireLimit::AssistantTextJoined,
        ]
    }

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
