//! What every dialect offers, in one shape: the options of a render, a parsed request, the errors,
//! and the crate-internal [`Wire`] trait each dialect module implements once.

use std::borrow::Cow;
use std::fmt;

use serde_json::Value;

use super::Dialect;
use handoff_transcript::{Part, Transcript};

/// How to render a transcript for a dialect.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RenderOptions {
    /// The model the body is for. Set, it becomes the body's `model` member (Gemini names the
    /// model in the URL instead), and signed thinking made by another model is left out (a
    /// signature goes back only to the model that made it).
    pub model: Option<String>,
    /// A system prompt to put where the dialect carries one (Anthropic `system`, Responses
    /// `instructions`, a first Chat `system` message, Gemini `systemInstruction`).
    pub system: Option<String>,
    /// Providers whose thinking the caller's comparison keeps (a target's `thinking_from`).
    /// `None`: the dialect's default ([`Dialect::default_thinking_from`]). Thinking made by
    /// anyone else is display-only and left out; thinking that is kept but that the wire cannot
    /// carry at all is a [`RenderError`], never dropped silently.
    pub thinking_from: Option<Vec<String>>,
    /// Anthropic's `max_tokens`; a Messages body with a model gets
    /// [`DEFAULT_MAX_TOKENS`](super::DEFAULT_MAX_TOKENS) when this is `None`.
    pub max_tokens: Option<u64>,
}

impl RenderOptions {
    /// Options for a request to `model`.
    pub fn for_model(model: impl Into<String>) -> Self {
        RenderOptions {
            model: Some(model.into()),
            ..RenderOptions::default()
        }
    }

    /// The providers whose thinking goes back, for `dialect`.
    pub fn thinking_from(&self, dialect: Dialect) -> Cow<'_, [String]> {
        match &self.thinking_from {
            Some(providers) => Cow::Borrowed(providers),
            None => Cow::Owned(
                dialect
                    .default_thinking_from()
                    .iter()
                    .map(|p| (*p).to_owned())
                    .collect(),
            ),
        }
    }
}

/// A request body (or a bare history) read back into canonical form.
#[derive(Clone, Debug, PartialEq)]
pub struct Parsed {
    /// The body's `model`, where it has one.
    pub model: Option<String>,
    /// The system prompt, in order: the top-level one (`system`, `instructions`,
    /// `systemInstruction`) and the texts of history messages of roles other than user and
    /// assistant (`system`, `developer`). The canonical model has no place for them.
    pub system: Vec<String>,
    /// The history. The wire has no timestamps, authors or event ids: events have timestamp 0,
    /// no author, and ids that say where they came from (`messages[3]`, or the item's own id).
    pub transcript: Transcript,
}

/// Why a body could not be parsed: the JSON path and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct ParseError {
    /// The path, e.g. `messages[3].content[1].source.data`.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

impl ParseError {
    /// An error at `path`.
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        ParseError {
            path: path.into(),
            message: message.into(),
        }
    }

    /// The same error under `prefix` (`messages[2]` + `content[0]` = `messages[2].content[0]`).
    pub fn under(self, prefix: &str) -> Self {
        let path = match (prefix.is_empty(), self.path.is_empty()) {
            (true, _) => self.path,
            (false, true) => prefix.to_owned(),
            (false, false) if self.path.starts_with('[') => format!("{prefix}{}", self.path),
            (false, false) => format!("{prefix}.{}", self.path),
        };
        ParseError { path, ..self }
    }
}

/// Why a transcript cannot be rendered: the event and field at fault.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("event {index} ({event_id}): {field}: {message}")]
pub struct RenderError {
    /// Index of the event.
    pub index: usize,
    /// Its id.
    pub event_id: String,
    /// The field, e.g. `body.content[2].arguments`.
    pub field: String,
    /// What is wrong.
    pub message: String,
}

impl RenderError {
    /// An error about event `index` of `transcript`.
    pub fn at(
        transcript: &Transcript,
        index: usize,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        RenderError {
            index,
            event_id: transcript
                .events
                .get(index)
                .map(|e| e.id.clone())
                .unwrap_or_default(),
            field: field.into(),
            message: message.into(),
        }
    }
}

/// A provider rule a body breaks: the rule id of `wire-rules.md` (`A3`, `R1`, `C2`, `G4`, or
/// `shape` for a body that is not of the dialect's shape at all), where, and what.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct Violation {
    /// The dialect whose rule it is.
    pub dialect: Dialect,
    /// The rule, e.g. `C2`.
    pub rule: &'static str,
    /// The index of the message / item / content in the history, if one is at fault.
    pub index: Option<usize>,
    /// The field inside it, e.g. `tool_calls[0].id` or `parts[2].functionResponse.response`.
    pub field: Option<String>,
    /// What is wrong.
    pub detail: String,
}

impl Violation {
    /// A violation of `rule` at history entry `index`, field `field`.
    pub fn new(
        dialect: Dialect,
        rule: &'static str,
        index: Option<usize>,
        field: Option<String>,
        detail: impl Into<String>,
    ) -> Self {
        Violation {
            dialect,
            rule,
            index,
            field,
            detail: detail.into(),
        }
    }

    /// Where, as a JSON path: `messages[2].tool_calls[0].id`.
    pub fn location(&self) -> String {
        let mut at = String::new();
        if let Some(i) = self.index {
            at = format!("{}[{i}]", self.dialect.history_field());
        }
        if let Some(field) = &self.field {
            if !at.is_empty() && !field.starts_with('[') {
                at.push('.');
            }
            at.push_str(field);
        }
        at
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} rule {}: ", self.dialect, self.rule)?;
        let at = self.location();
        if !at.is_empty() {
            write!(f, "{at}: ")?;
        }
        f.write_str(&self.detail)
    }
}

/// One dialect's implementation; [`Dialect`]'s methods dispatch to it (its facts, such as the
/// history member and the limits, are matches on [`Dialect`] in the crate root).
pub(crate) trait Wire: Sync {
    /// A body (or bare history array) into canonical form.
    fn parse(&self, body: &Value) -> Result<Parsed, ParseError>;
    /// A transcript as a body: the history plus `model`, `system` and the like where set.
    fn render(
        &self,
        transcript: &Transcript,
        options: &RenderOptions,
    ) -> Result<Value, RenderError>;
    /// The provider's rules; `final_request` when the body is about to be sent (else a stored
    /// history that more will follow: the last tool calls may still wait for their results).
    fn validate(&self, body: &Value, final_request: bool) -> Result<(), Violation>;
}

/// The history array of `body`: the body itself when it is an array, else its `field` member.
pub(crate) fn history_of<'a>(body: &'a Value, field: &str) -> Result<&'a [Value], ParseError> {
    match body {
        Value::Array(items) => Ok(items),
        Value::Object(map) => match map.get(field) {
            Some(Value::Array(items)) => Ok(items),
            Some(other) => Err(ParseError::new(
                field,
                format!("expected an array, found {}", kind_of(other)),
            )),
            None => Err(ParseError::new(field, "missing")),
        },
        other => Err(ParseError::new(
            "",
            format!("expected an object or an array, found {}", kind_of(other)),
        )),
    }
}

/// A tool result's non-empty texts as one JSON value: `""` for none, the text for one, and
/// `several` of them otherwise (each dialect has its own form of a list).
pub(crate) fn result_text(content: &[Part], several: impl FnOnce(&[&str]) -> Value) -> Value {
    let texts: Vec<&str> = content
        .iter()
        .filter_map(|p| match p {
            Part::Text { text } if !text.is_empty() => Some(text.as_str()),
            _ => None,
        })
        .collect();
    match texts.as_slice() {
        [] => Value::from(""),
        [one] => Value::from(*one),
        texts => several(texts),
    }
}

/// A short name of a JSON value's type, for messages ("a string", "null").
pub fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The string member `key` of `map`, or an error naming `path.key`.
pub(crate) fn string_member<'a>(
    map: &'a serde_json::Map<String, Value>,
    key: &str,
) -> Result<&'a str, ParseError> {
    match map.get(key) {
        Some(Value::String(s)) => Ok(s),
        Some(other) => Err(ParseError::new(
            key,
            format!("expected a string, found {}", kind_of(other)),
        )),
        None => Err(ParseError::new(key, "missing")),
    }
}
