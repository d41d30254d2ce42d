//! Which endpoint a request hit, and the answer each endpoint gives, in the exact wire shape
//! (plain JSON or the SSE event sequence) the real API uses.

use bytes::Bytes;
use handoff_dialects::{Dialect, Violation};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// The endpoints the fake provider knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Endpoint {
    /// Anthropic `POST /v1/messages`.
    AnthropicMessages,
    /// Anthropic `POST /v1/messages/count_tokens`.
    AnthropicCountTokens,
    /// OpenAI `POST /v1/responses`.
    OpenaiResponses,
    /// OpenAI `POST /v1/chat/completions`.
    OpenaiChatCompletions,
    /// Gemini `POST …/models/<model>:generateContent`.
    GeminiGenerateContent,
    /// Gemini `POST …/models/<model>:streamGenerateContent`.
    GeminiStreamGenerateContent,
    /// Gemini `POST …/models/<model>:countTokens`.
    GeminiCountTokens,
    /// Anything else (answered 404).
    Unknown,
}

impl Endpoint {
    /// Classifies a request by method and path (the query is not part of `path`).
    pub fn classify(method: &str, path: &str) -> Endpoint {
        if method != "POST" {
            return Endpoint::Unknown;
        }
        let path = path.trim_end_matches('/');
        if path.ends_with("/messages/count_tokens") {
            Endpoint::AnthropicCountTokens
        } else if path.ends_with("/messages") {
            Endpoint::AnthropicMessages
        } else if path.ends_with("/responses") {
            Endpoint::OpenaiResponses
        } else if path.ends_with("/chat/completions") {
            Endpoint::OpenaiChatCompletions
        } else if path.contains("/models/") && path.ends_with(":streamGenerateContent") {
            Endpoint::GeminiStreamGenerateContent
        } else if path.contains("/models/") && path.ends_with(":generateContent") {
            Endpoint::GeminiGenerateContent
        } else if path.contains("/models/") && path.ends_with(":countTokens") {
            Endpoint::GeminiCountTokens
        } else {
            Endpoint::Unknown
        }
    }

    /// Whether a request to this endpoint asks a model for a turn.
    pub fn is_model_turn(self) -> bool {
        matches!(
            self,
            Endpoint::AnthropicMessages
                | Endpoint::OpenaiResponses
                | Endpoint::OpenaiChatCompletions
                | Endpoint::GeminiGenerateContent
                | Endpoint::GeminiStreamGenerateContent
        )
    }

    /// The wire dialect this endpoint speaks (`None` for an unknown path).
    pub fn dialect(self) -> Option<Dialect> {
        match self {
            Endpoint::AnthropicMessages | Endpoint::AnthropicCountTokens => {
                Some(Dialect::AnthropicMessages)
            }
            Endpoint::OpenaiResponses => Some(Dialect::OpenaiResponses),
            Endpoint::OpenaiChatCompletions => Some(Dialect::OpenaiChat),
            Endpoint::GeminiGenerateContent
            | Endpoint::GeminiStreamGenerateContent
            | Endpoint::GeminiCountTokens => Some(Dialect::Gemini),
            Endpoint::Unknown => None,
        }
    }
}

/// An answer: status, content type and the body in the chunks it is sent in.
#[derive(Debug)]
pub(crate) struct Reply {
    pub status: u16,
    pub content_type: &'static str,
    pub chunks: Vec<Bytes>,
    pub streamed: bool,
}

impl Reply {
    fn json(status: u16, value: &Value) -> Reply {
        Reply {
            status,
            content_type: "application/json",
            chunks: vec![Bytes::from(value.to_string())],
            streamed: false,
        }
    }

    fn sse(events: Vec<String>) -> Reply {
        Reply {
            status: 200,
            content_type: "text/event-stream",
            chunks: events.into_iter().map(Bytes::from).collect(),
            streamed: true,
        }
    }
}

/// What an answer depends on besides the request.
pub(crate) struct Context<'a> {
    /// A number unique to this request, for response ids.
    pub seq: usize,
    /// Seconds since the epoch, for `created` fields.
    pub now_secs: i64,
    /// The text to answer with.
    pub text: &'a str,
    /// Tool calls to answer a Chat Completions user turn with (see
    /// [`super::FakeProviderOptions::tool_calls`]).
    pub tool_calls: &'a [(String, Value)],
}

/// The answer to a request that hit `endpoint` with this body and query.
pub(crate) fn answer(
    endpoint: Endpoint,
    path: &str,
    query: Option<&str>,
    body: &Value,
    cx: &Context<'_>,
) -> Reply {
    let streamed = body.get("stream").and_then(Value::as_bool) == Some(true);
    match endpoint {
        Endpoint::AnthropicMessages if streamed => Reply::sse(anthropic_stream(body, cx)),
        Endpoint::AnthropicMessages => Reply::json(200, &anthropic_message(body, cx)),
        Endpoint::AnthropicCountTokens => {
            Reply::json(200, &json!({ "input_tokens": estimate_tokens(body) }))
        }
        Endpoint::OpenaiResponses if streamed => Reply::sse(responses_stream(body, cx)),
        Endpoint::OpenaiResponses => Reply::json(200, &responses_object(body, cx, "completed")),
        Endpoint::OpenaiChatCompletions if streamed && calls_tools(body, cx) => {
            Reply::sse(chat_tool_call_stream(body, cx))
        }
        Endpoint::OpenaiChatCompletions if streamed => Reply::sse(chat_stream(body, cx)),
        Endpoint::OpenaiChatCompletions => Reply::json(200, &chat_completion(body, cx)),
        Endpoint::GeminiGenerateContent => Reply::json(200, &gemini_response(path, body, cx)),
        Endpoint::GeminiStreamGenerateContent => {
            let chunk = gemini_response(path, body, cx);
            if query.is_some_and(|q| q.split('&').any(|kv| kv == "alt=sse")) {
                Reply::sse(vec![sse_data(&chunk)])
            } else {
                // Without alt=sse the REST API streams one JSON array of response chunks.
                let mut reply = Reply::json(200, &json!([chunk]));
                reply.streamed = true;
                reply
            }
        }
        Endpoint::GeminiCountTokens => {
            Reply::json(200, &json!({ "totalTokens": estimate_tokens(body) }))
        }
        Endpoint::Unknown => Reply::json(
            404,
            &json!({"error": {"code": 404, "message": format!("fake provider: no endpoint at {path}"), "status": "NOT_FOUND"}}),
        ),
    }
}

/// The answer to a request whose body is not JSON: a 400 in the shape the endpoint's API uses.
pub(crate) fn bad_request(endpoint: Endpoint, why: &str) -> Reply {
    error_reply(endpoint, why, None)
}

/// The answer to a model request that breaks a provider rule: a 400 in the endpoint's error
/// shape whose message names the rule, the history index and the field, as the real API's
/// message does (and, for OpenAI, the rule as `code`).
pub(crate) fn rule_broken(endpoint: Endpoint, violation: &Violation) -> Reply {
    error_reply(
        endpoint,
        &format!("fake provider: {violation}"),
        Some(violation.rule),
    )
}

fn error_reply(endpoint: Endpoint, why: &str, code: Option<&str>) -> Reply {
    let body = match endpoint.dialect() {
        Some(Dialect::AnthropicMessages) => json!({
            "type": "error",
            "error": {"type": "invalid_request_error", "message": why},
        }),
        Some(Dialect::OpenaiResponses | Dialect::OpenaiChat) => json!({
            "error": {"message": why, "type": "invalid_request_error", "param": null, "code": code},
        }),
        Some(Dialect::Gemini) | None => {
            json!({"error": {"code": 400, "message": why, "status": "INVALID_ARGUMENT"}})
        }
    };
    Reply::json(400, &body)
}

/// The provider rule a model request breaks, checked with core's validator of its dialect;
/// `None` when it passes or is not a model turn.
///
/// The validators are as strict as the rules our renderers must keep. The real Messages API is
/// laxer in one place a real client relies on: Claude Code 2.1.197 adds a `role: "system"` message
/// (its agent listing) after the first user turn, and the API takes it. Such messages are set
/// aside before an Anthropic request is checked, so the fake provider refuses only what the real
/// API would.
pub(crate) fn check(endpoint: Endpoint, body: &Value) -> Option<Violation> {
    if !endpoint.is_model_turn() {
        return None;
    }
    let dialect = endpoint.dialect()?;
    if dialect == Dialect::AnthropicMessages {
        return dialect.validate(&without_system_messages(body)).err();
    }
    dialect.validate(body).err()
}

/// An Anthropic body without its `role: "system"` messages.
fn without_system_messages(body: &Value) -> Value {
    let mut body = body.clone();
    if let Some(Value::Array(messages)) = body.get_mut("messages") {
        messages.retain(|m| m.get("role").and_then(Value::as_str) != Some("system"));
    }
    body
}

/// A rough token count (4 bytes a token), enough for clients that budget their context.
fn estimate_tokens(body: &Value) -> u64 {
    (body.to_string().len() as u64).div_ceil(4).max(1)
}

fn output_tokens(text: &str) -> u64 {
    (text.len() as u64).div_ceil(4).max(1)
}

fn model_of(body: &Value, fallback: &str) -> String {
    body.get("model")
        .and_then(Value::as_str)
        .unwrap_or(fallback)
        .to_owned()
}

/// One SSE event with a name (`event:` + `data:` lines and the blank line that ends it).
fn sse_event(name: &str, data: &Value) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

/// One unnamed SSE event.
fn sse_data(data: &Value) -> String {
    format!("data: {data}\n\n")
}

// ---- Anthropic Messages ----------------------------------------------------------------------

fn anthropic_usage(body: &Value, text: &str) -> Value {
    json!({
        "input_tokens": estimate_tokens(body),
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": output_tokens(text),
    })
}

fn anthropic_message(body: &Value, cx: &Context<'_>) -> Value {
    json!({
        "id": format!("msg_fake{:06}", cx.seq),
        "type": "message",
        "role": "assistant",
        "model": model_of(body, "claude-fake"),
        "content": [{"type": "text", "text": cx.text}],
        "stop_reason": "end_turn",
        "stop_sequence": null,
        "usage": anthropic_usage(body, cx.text),
    })
}

/// message_start, content_block_start, ping, content_block_delta, content_block_stop,
/// message_delta, message_stop: the sequence the Messages API streams for one text block.
fn anthropic_stream(body: &Value, cx: &Context<'_>) -> Vec<String> {
    let mut start = anthropic_message(body, cx);
    start["content"] = json!([]);
    start["stop_reason"] = Value::Null;
    start["usage"]["output_tokens"] = json!(1);
    vec![
        sse_event(
            "message_start",
            &json!({"type": "message_start", "message": start}),
        ),
        sse_event(
            "content_block_start",
            &json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ),
        sse_event("ping", &json!({"type": "ping"})),
        sse_event(
            "content_block_delta",
            &json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": cx.text}}),
        ),
        sse_event(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": 0}),
        ),
        sse_event(
            "message_delta",
            &json!({
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": null},
                "usage": {"output_tokens": output_tokens(cx.text)},
            }),
        ),
        sse_event("message_stop", &json!({"type": "message_stop"})),
    ]
}

// ---- OpenAI Responses ------------------------------------------------------------------------

fn responses_message_item(cx: &Context<'_>, status: &str, text: Option<&str>) -> Value {
    let content = match text {
        Some(t) => json!([{"type": "output_text", "text": t, "annotations": []}]),
        None => json!([]),
    };
    json!({
        "id": format!("msg_fake{:06}", cx.seq),
        "type": "message",
        "status": status,
        "role": "assistant",
        "content": content,
    })
}

fn responses_object(body: &Value, cx: &Context<'_>, status: &str) -> Value {
    let done = status == "completed";
    let input = estimate_tokens(body);
    let output = output_tokens(cx.text);
    json!({
        "id": format!("resp_fake{:06}", cx.seq),
        "object": "response",
        "created_at": cx.now_secs,
        "status": status,
        "error": null,
        "incomplete_details": null,
        "model": model_of(body, "gpt-fake"),
        "output": if done { json!([responses_message_item(cx, "completed", Some(cx.text))]) } else { json!([]) },
        "parallel_tool_calls": true,
        "previous_response_id": null,
        "store": false,
        "usage": if done {
            json!({
                "input_tokens": input,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": output,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": input + output,
            })
        } else {
            Value::Null
        },
    })
}

/// response.created, response.in_progress, output_item.added, content_part.added,
/// output_text.delta, output_text.done, content_part.done, output_item.done, response.completed.
fn responses_stream(body: &Value, cx: &Context<'_>) -> Vec<String> {
    let item_id = format!("msg_fake{:06}", cx.seq);
    let part_empty = json!({"type": "output_text", "text": "", "annotations": []});
    let part_full = json!({"type": "output_text", "text": cx.text, "annotations": []});
    let events: Vec<(&str, Value)> = vec![
        (
            "response.created",
            json!({"response": responses_object(body, cx, "in_progress")}),
        ),
        (
            "response.in_progress",
            json!({"response": responses_object(body, cx, "in_progress")}),
        ),
        (
            "response.output_item.added",
            json!({"output_index": 0, "item": responses_message_item(cx, "in_progress", None)}),
        ),
        (
            "response.content_part.added",
            json!({"item_id": item_id, "output_index": 0, "content_index": 0, "part": part_empty}),
        ),
        (
            "response.output_text.delta",
            json!({"item_id": item_id, "output_index": 0, "content_index": 0, "delta": cx.text, "logprobs": []}),
        ),
        (
            "response.output_text.done",
            json!({"item_id": item_id, "output_index": 0, "content_index": 0, "text": cx.text, "logprobs": []}),
        ),
        (
            "response.content_part.done",
            json!({"item_id": item_id, "output_index": 0, "content_index": 0, "part": part_full}),
        ),
        (
            "response.output_item.done",
            json!({"output_index": 0, "item": responses_message_item(cx, "completed", Some(cx.text))}),
        ),
        (
            "response.completed",
            json!({"response": responses_object(body, cx, "completed")}),
        ),
    ];
    events
        .into_iter()
        .enumerate()
        .map(|(n, (name, mut data))| {
            // The real stream puts `type` first and numbers every event.
            let mut event = serde_json::Map::new();
            event.insert("type".into(), json!(name));
            event.insert("sequence_number".into(), json!(n));
            if let Some(fields) = data.as_object_mut() {
                event.append(fields);
            }
            sse_event(name, &Value::Object(event))
        })
        .collect()
}

// ---- OpenAI Chat Completions -----------------------------------------------------------------

fn chat_usage(body: &Value, text: &str) -> Value {
    let input = estimate_tokens(body);
    let output = output_tokens(text);
    json!({"prompt_tokens": input, "completion_tokens": output, "total_tokens": input + output})
}

fn chat_completion(body: &Value, cx: &Context<'_>) -> Value {
    json!({
        "id": format!("chatcmpl-fake{:06}", cx.seq),
        "object": "chat.completion",
        "created": cx.now_secs,
        "model": model_of(body, "gpt-fake"),
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": cx.text, "refusal": null},
            "logprobs": null,
            "finish_reason": "stop",
        }],
        "usage": chat_usage(body, cx.text),
    })
}

/// chat.completion.chunk events (role, content, finish_reason; a usage chunk when
/// `stream_options.include_usage`), then `data: [DONE]`.
fn chat_stream(body: &Value, cx: &Context<'_>) -> Vec<String> {
    let chunk = |choices: Value, usage: Value| {
        let mut c = json!({
            "id": format!("chatcmpl-fake{:06}", cx.seq),
            "object": "chat.completion.chunk",
            "created": cx.now_secs,
            "model": model_of(body, "gpt-fake"),
            "choices": choices,
        });
        if !usage.is_null() {
            c["usage"] = usage;
        }
        sse_data(&c)
    };
    let mut events = vec![
        chunk(
            json!([{"index": 0, "delta": {"role": "assistant", "content": ""}, "logprobs": null, "finish_reason": null}]),
            Value::Null,
        ),
        chunk(
            json!([{"index": 0, "delta": {"content": cx.text}, "logprobs": null, "finish_reason": null}]),
            Value::Null,
        ),
        chunk(
            json!([{"index": 0, "delta": {}, "logprobs": null, "finish_reason": "stop"}]),
            Value::Null,
        ),
    ];
    let include_usage = body
        .pointer("/stream_options/include_usage")
        .and_then(Value::as_bool)
        == Some(true);
    if include_usage {
        events.push(chunk(json!([]), chat_usage(body, cx.text)));
    }
    events.push("data: [DONE]\n\n".into());
    events
}

/// Whether a Chat Completions request is answered with the configured tool calls: it offers
/// tools and its last message is the user's.
fn calls_tools(body: &Value, cx: &Context<'_>) -> bool {
    let offers_tools = body
        .get("tools")
        .and_then(Value::as_array)
        .is_some_and(|t| !t.is_empty());
    let last_is_user = body
        .get("messages")
        .and_then(Value::as_array)
        .and_then(|m| m.last())
        .and_then(|m| m.get("role"))
        .and_then(Value::as_str)
        == Some("user");
    !cx.tool_calls.is_empty() && offers_tools && last_is_user
}

/// chat.completion.chunk events calling every configured tool at once (one delta per call,
/// its arguments whole), `finish_reason: "tool_calls"`, then `data: [DONE]`.
fn chat_tool_call_stream(body: &Value, cx: &Context<'_>) -> Vec<String> {
    let chunk = |choices: Value| {
        sse_data(&json!({
            "id": format!("chatcmpl-fake{:06}", cx.seq),
            "object": "chat.completion.chunk",
            "created": cx.now_secs,
            "model": model_of(body, "gpt-fake"),
            "choices": choices,
        }))
    };
    let mut events = vec![chunk(
        json!([{"index": 0, "delta": {"role": "assistant", "content": null}, "logprobs": null, "finish_reason": null}]),
    )];
    for (index, (name, arguments)) in cx.tool_calls.iter().enumerate() {
        events.push(chunk(json!([{"index": 0, "delta": {"tool_calls": [{
            "index": index,
            "id": format!("call_fake{:06}_{index}", cx.seq),
            "type": "function",
            "function": {"name": name, "arguments": arguments.to_string()},
        }]}, "logprobs": null, "finish_reason": null}])));
    }
    events.push(chunk(
        json!([{"index": 0, "delta": {}, "logprobs": null, "finish_reason": "tool_calls"}]),
    ));
    events.push("data: [DONE]\n\n".into());
    events
}

// ---- Gemini ----------------------------------------------------------------------------------

/// The model named in a Gemini path: `…/models/<model>:<method>`.
fn gemini_model(path: &str) -> &str {
    path.rsplit_once("/models/")
        .map(|(_, rest)| rest.split(':').next().unwrap_or(rest))
        .unwrap_or("gemini-fake")
}

/// One GenerateContentResponse. A JSON-mode request (responseMimeType application/json) gets a
/// JSON object that fits its response schema, since the CLI parses it.
fn gemini_response(path: &str, body: &Value, cx: &Context<'_>) -> Value {
    let config = body
        .get("generationConfig")
        .or_else(|| body.get("generation_config"));
    let json_mode = config
        .and_then(|c| c.get("responseMimeType"))
        .and_then(Value::as_str)
        == Some("application/json");
    let text = if json_mode {
        let schema = config
            .and_then(|c| {
                c.get("responseJsonSchema")
                    .or_else(|| c.get("responseSchema"))
            })
            .cloned()
            .unwrap_or(Value::Null);
        value_for_schema(&schema, 0).to_string()
    } else {
        cx.text.to_owned()
    };
    let input = estimate_tokens(body);
    let output = output_tokens(&text);
    json!({
        "candidates": [{
            "content": {"parts": [{"text": text}], "role": "model"},
            "finishReason": "STOP",
            "index": 0,
        }],
        "usageMetadata": {
            "promptTokenCount": input,
            "candidatesTokenCount": output,
            "totalTokenCount": input + output,
        },
        "modelVersion": gemini_model(path),
        "responseId": format!("fake{:06}", cx.seq),
    })
}

/// A value that satisfies a (JSON or OpenAPI-style) schema: the first enum value, an object
/// with every property, an empty string or array, zero, false.
fn value_for_schema(schema: &Value, depth: usize) -> Value {
    if depth > 16 {
        return Value::Null;
    }
    if let Some(first) = schema
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return first.clone();
    }
    let kind = schema
        .get("type")
        .and_then(Value::as_str)
        .map(str::to_ascii_lowercase);
    match kind.as_deref() {
        Some("string") => json!(""),
        Some("integer") | Some("number") => json!(0),
        Some("boolean") => json!(false),
        Some("array") => json!([]),
        Some("object") | None => {
            let mut out = serde_json::Map::new();
            if let Some(props) = schema.get("properties").and_then(Value::as_object) {
                for (name, sub) in props {
                    out.insert(name.clone(), value_for_schema(sub, depth + 1));
                }
            }
            Value::Object(out)
        }
        Some(_) => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_every_endpoint_and_nothing_else() {
        use Endpoint::*;
        let cases = [
            ("POST", "/v1/messages", AnthropicMessages),
            ("POST", "/v1/messages/count_tokens", AnthropicCountTokens),
            ("POST", "/v1/responses", OpenaiResponses),
            ("POST", "/api/v1/responses/", OpenaiResponses),
            ("POST", "/v1/chat/completions", OpenaiChatCompletions),
            (
                "POST",
                "/v1beta/models/gemini-2.5-flash:generateContent",
                GeminiGenerateContent,
            ),
            (
                "POST",
                "/v1beta/models/gemini-2.5-flash:streamGenerateContent",
                GeminiStreamGenerateContent,
            ),
            (
                "POST",
                "/v1beta/models/gemini-2.5-flash:countTokens",
                GeminiCountTokens,
            ),
            ("GET", "/v1/messages", Unknown),
            ("POST", "/v1/models", Unknown),
            ("POST", "/generateContent", Unknown),
        ];
        for (method, path, want) in cases {
            assert_eq!(Endpoint::classify(method, path), want, "{method} {path}");
        }
    }

    #[test]
    fn schema_values_take_the_first_enum_and_fill_objects() {
        let schema = json!({
            "type": "object",
            "properties": {
                "reasoning": {"type": "string"},
                "next_speaker": {"type": "string", "enum": ["user", "model"]},
                "n": {"type": "INTEGER"},
            }
        });
        assert_eq!(
            value_for_schema(&schema, 0),
            json!({"reasoning": "", "next_speaker": "user", "n": 0})
        );
    }

    #[test]
    fn gemini_model_is_read_from_the_path() {
        assert_eq!(
            gemini_model("/v1beta/models/gemini-2.5-pro:countTokens"),
            "gemini-2.5-pro"
        );
        assert_eq!(gemini_model("/x"), "gemini-fake");
    }
}
