//! The Messages dialect behind the common interface ([`crate::Dialect`]).

use serde_json::Value;

use super::{parse, render, validate, validate_history, RenderOptions as MessagesOptions};
use crate::{
    Dialect, ParseError, Parsed, RenderError, RenderOptions, Violation, DEFAULT_MAX_TOKENS,
};
use handoff_transcript::{Event, Timestamp, Transcript};

/// Anthropic Messages.
pub(crate) struct Messages;

impl crate::Wire for Messages {
    /// Messages of roles other than user and assistant (Claude Code sends a `role: "system"`
    /// agent listing) join the system prompt.
    fn parse(&self, body: &Value) -> Result<Parsed, ParseError> {
        let request = parse(body)?;
        let mut system = request.system;
        let mut events = Vec::new();
        for (m, message) in request.messages.iter().enumerate() {
            if message.role != "user" && message.role != "assistant" {
                system.extend(message.blocks.iter().filter_map(|b| match b {
                    super::ParsedBlock::Text(t) => Some(t.clone()),
                    _ => None,
                }));
                continue;
            }
            let bodies = message
                .bodies(request.model.as_deref())
                .map_err(|(block, why)| {
                    ParseError::new(format!("messages[{m}].content[{block}]"), why)
                })?;
            let several = bodies.len() > 1;
            for (k, body) in bodies.into_iter().enumerate() {
                let id = if several {
                    format!("messages[{m}]#{k}")
                } else {
                    format!("messages[{m}]")
                };
                events.push(Event::new(id, Timestamp::from_millis(0), body));
            }
        }
        Ok(Parsed {
            model: request.model,
            system,
            transcript: Transcript::new(events),
        })
    }

    fn render(
        &self,
        transcript: &Transcript,
        options: &RenderOptions,
    ) -> Result<Value, RenderError> {
        let messages_options = MessagesOptions {
            model: options.model.clone(),
            max_tokens: options
                .max_tokens
                .or(options.model.as_ref().map(|_| DEFAULT_MAX_TOKENS)),
            thinking_from: options
                .thinking_from(Dialect::AnthropicMessages)
                .into_owned(),
        };
        let mut body = render(transcript, &messages_options)?;
        if let (Some(system), Value::Object(map)) = (&options.system, &mut body) {
            // `system` goes before `messages`, as clients write it.
            let messages = map.shift_remove("messages");
            map.insert("system".into(), Value::String(system.clone()));
            if let Some(messages) = messages {
                map.insert("messages".into(), messages);
            }
        }
        Ok(body)
    }

    fn validate(&self, body: &Value, final_request: bool) -> Result<(), Violation> {
        let checked = if final_request {
            validate(body)
        } else {
            validate_history(body)
        };
        checked.map_err(|v| {
            Violation::new(
                Dialect::AnthropicMessages,
                v.rule,
                v.message,
                v.block.map(|b| format!("content[{b}]")),
                v.detail,
            )
        })
    }
}
