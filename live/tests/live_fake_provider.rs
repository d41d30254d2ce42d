//! The fake provider answers every endpoint in the real wire shape, streamed and not, and logs
//! every request. A plain HTTP/1.1 client over a TcpStream, so nothing here trusts a client crate.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};

use handoff_dialects::Dialect;
use handoff_live::fake_provider::{Endpoint, FakeProvider, FakeProviderOptions};
use serde_json::{json, Value};

struct HttpResponse {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl HttpResponse {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }

    /// The SSE events as (event name, data JSON or raw text).
    fn sse(&self) -> Vec<(Option<String>, String)> {
        assert_eq!(self.header("content-type"), Some("text/event-stream"));
        let mut events = Vec::new();
        for block in self.body.split("\n\n").filter(|b| !b.trim().is_empty()) {
            let mut name = None;
            let mut data = String::new();
            for line in block.lines() {
                if let Some(v) = line.strip_prefix("event: ") {
                    name = Some(v.to_owned());
                } else if let Some(v) = line.strip_prefix("data: ") {
                    data.push_str(v);
                } else {
                    panic!("unexpected SSE line {line:?}");
                }
            }
            events.push((name, data));
        }
        assert!(
            self.body.ends_with("\n\n"),
            "a stream ends with a blank line"
        );
        events
    }
}

fn post(addr: SocketAddr, path: &str, body: &str, extra_headers: &[(&str, &str)]) -> HttpResponse {
    let mut stream = TcpStream::connect(addr).unwrap();
    let mut request = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (name, value) in extra_headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).unwrap();
    read_response(stream)
}

fn read_response(stream: TcpStream) -> HttpResponse {
    let mut reader = BufReader::new(stream);
    let mut status_line = String::new();
    reader.read_line(&mut status_line).unwrap();
    let status: u16 = status_line.split(' ').nth(1).unwrap().parse().unwrap();
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (name, value) = line.split_once(": ").unwrap();
        headers.push((name.to_ascii_lowercase(), value.to_owned()));
    }
    let chunked = headers
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v == "chunked");
    let mut body = Vec::new();
    if chunked {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size).unwrap();
            let size = usize::from_str_radix(size.trim(), 16).unwrap();
            let mut chunk = vec![0; size + 2];
            reader.read_exact(&mut chunk).unwrap();
            if size == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..size]);
        }
    } else {
        reader.read_to_end(&mut body).unwrap();
    }
    HttpResponse {
        status,
        headers,
        body: String::from_utf8(body).unwrap(),
    }
}

fn data_json(event: &(Option<String>, String)) -> Value {
    serde_json::from_str(&event.1).unwrap_or_else(|e| panic!("data is not JSON ({e}): {}", event.1))
}

#[test]
fn anthropic_messages_plain_and_streamed() {
    let fake = FakeProvider::start().unwrap();
    let request = json!({"model": "claude-x", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]});
    let plain = post(
        fake.addr(),
        "/v1/messages",
        &request.to_string(),
        &[("x-api-key", "dummy")],
    );
    assert_eq!(plain.status, 200);
    let message = plain.json();
    assert_eq!(message["type"], "message");
    assert_eq!(message["model"], "claude-x");
    assert_eq!(message["content"], json!([{"type": "text", "text": "ok"}]));
    assert_eq!(message["stop_reason"], "end_turn");

    let mut streamed_request = request.clone();
    streamed_request["stream"] = json!(true);
    let streamed = post(
        fake.addr(),
        "/v1/messages?beta=true",
        &streamed_request.to_string(),
        &[],
    );
    assert_eq!(streamed.status, 200);
    let events = streamed.sse();
    let names: Vec<_> = events.iter().map(|e| e.0.clone().unwrap()).collect();
    assert_eq!(
        names,
        [
            "message_start",
            "content_block_start",
            "ping",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop"
        ]
    );
    for event in &events {
        assert_eq!(
            data_json(event)["type"],
            event.0.clone().unwrap(),
            "type matches event name"
        );
    }
    assert_eq!(data_json(&events[0])["message"]["content"], json!([]));
    assert_eq!(
        data_json(&events[3])["delta"],
        json!({"type": "text_delta", "text": "ok"})
    );
    assert_eq!(data_json(&events[5])["delta"]["stop_reason"], "end_turn");

    let count = post(
        fake.addr(),
        "/v1/messages/count_tokens",
        &request.to_string(),
        &[],
    );
    assert!(count.json()["input_tokens"].as_u64().unwrap() > 0);

    let log = fake.requests();
    assert_eq!(log.len(), 3);
    assert_eq!(
        log.iter().map(|r| r.endpoint).collect::<Vec<_>>(),
        [
            Endpoint::AnthropicMessages,
            Endpoint::AnthropicMessages,
            Endpoint::AnthropicCountTokens
        ]
    );
    assert_eq!(log[0].body, request);
    assert!(!log[0].streamed);
    assert!(log[1].streamed);
    assert_eq!(log[1].query.as_deref(), Some("beta=true"));
    assert_eq!(
        log[0].headers["x-api-key"], "<redacted>",
        "credentials are not logged"
    );
    assert_eq!(log.iter().map(|r| r.seq).collect::<Vec<_>>(), [0, 1, 2]);
    assert_eq!(
        fake.model_requests().len(),
        2,
        "count_tokens is not a model turn"
    );
}

#[test]
fn openai_responses_plain_and_streamed() {
    let fake = FakeProvider::start().unwrap();
    let request = json!({"model": "fake-model", "input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}]});
    let plain = post(fake.addr(), "/v1/responses", &request.to_string(), &[]).json();
    assert_eq!(plain["object"], "response");
    assert_eq!(plain["status"], "completed");
    assert_eq!(plain["output"][0]["content"][0]["text"], "ok");

    let mut streamed_request = request.clone();
    streamed_request["stream"] = json!(true);
    let events = post(
        fake.addr(),
        "/v1/responses",
        &streamed_request.to_string(),
        &[],
    )
    .sse();
    let names: Vec<_> = events.iter().map(|e| e.0.clone().unwrap()).collect();
    assert_eq!(
        names,
        [
            "response.created",
            "response.in_progress",
            "response.output_item.added",
            "response.content_part.added",
            "response.output_text.delta",
            "response.output_text.done",
            "response.content_part.done",
            "response.output_item.done",
            "response.completed"
        ]
    );
    for (n, event) in events.iter().enumerate() {
        let data = data_json(event);
        assert_eq!(data["type"], event.0.clone().unwrap());
        assert_eq!(data["sequence_number"], n);
    }
    assert_eq!(data_json(&events[4])["delta"], "ok");
    let done = data_json(&events[7]);
    assert_eq!(done["item"]["content"][0]["text"], "ok");
    let completed = data_json(&events[8]);
    assert_eq!(completed["response"]["status"], "completed");
    assert!(
        completed["response"]["usage"]["total_tokens"]
            .as_u64()
            .unwrap()
            > 0
    );
    assert_eq!(fake.requests()[1].body, streamed_request);
}

#[test]
fn chat_completions_plain_and_streamed_with_done() {
    let fake = FakeProvider::start().unwrap();
    let request = json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]});
    let plain = post(
        fake.addr(),
        "/v1/chat/completions",
        &request.to_string(),
        &[],
    )
    .json();
    assert_eq!(plain["object"], "chat.completion");
    assert_eq!(plain["choices"][0]["message"]["content"], "ok");
    assert_eq!(plain["choices"][0]["finish_reason"], "stop");

    let mut streamed_request = request.clone();
    streamed_request["stream"] = json!(true);
    streamed_request["stream_options"] = json!({"include_usage": true});
    let events = post(
        fake.addr(),
        "/v1/chat/completions",
        &streamed_request.to_string(),
        &[],
    )
    .sse();
    assert!(
        events.iter().all(|e| e.0.is_none()),
        "chat chunks are unnamed"
    );
    assert_eq!(events.last().unwrap().1, "[DONE]");
    let chunks: Vec<Value> = events[..events.len() - 1].iter().map(data_json).collect();
    assert!(chunks
        .iter()
        .all(|c| c["object"] == "chat.completion.chunk"));
    let text: String = chunks
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(text, "ok");
    assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");
    assert_eq!(chunks[2]["choices"][0]["finish_reason"], "stop");
    assert_eq!(chunks[3]["choices"], json!([]));
    assert!(chunks[3]["usage"]["total_tokens"].as_u64().unwrap() > 0);
}

#[test]
fn gemini_generate_stream_and_count() {
    let fake = FakeProvider::start().unwrap();
    let request = json!({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]});
    let base = "/v1beta/models/gemini-2.5-flash";
    let plain = post(
        fake.addr(),
        &format!("{base}:generateContent"),
        &request.to_string(),
        &[],
    )
    .json();
    assert_eq!(
        plain["candidates"][0]["content"],
        json!({"parts": [{"text": "ok"}], "role": "model"})
    );
    assert_eq!(plain["candidates"][0]["finishReason"], "STOP");
    assert_eq!(plain["modelVersion"], "gemini-2.5-flash");

    let sse = post(
        fake.addr(),
        &format!("{base}:streamGenerateContent?alt=sse"),
        &request.to_string(),
        &[],
    );
    let events = sse.sse();
    assert_eq!(events.len(), 1);
    assert_eq!(
        data_json(&events[0])["candidates"][0]["content"]["parts"][0]["text"],
        "ok"
    );

    let array = post(
        fake.addr(),
        &format!("{base}:streamGenerateContent"),
        &request.to_string(),
        &[],
    )
    .json();
    assert_eq!(
        array[0]["candidates"][0]["content"]["parts"][0]["text"],
        "ok"
    );

    let json_mode = json!({
        "contents": [{"role": "user", "parts": [{"text": "who speaks next?"}]}],
        "generationConfig": {"responseMimeType": "application/json", "responseJsonSchema": {
            "type": "object", "properties": {"reasoning": {"type": "string"}, "next_speaker": {"type": "string", "enum": ["user", "model"]}}}}
    });
    let answer = post(
        fake.addr(),
        &format!("{base}:generateContent"),
        &json_mode.to_string(),
        &[],
    )
    .json();
    let text = answer["candidates"][0]["content"]["parts"][0]["text"]
        .as_str()
        .unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(text).unwrap()["next_speaker"],
        "user"
    );

    let count = post(
        fake.addr(),
        &format!("{base}:countTokens"),
        &request.to_string(),
        &[],
    )
    .json();
    assert!(count["totalTokens"].as_u64().unwrap() > 0);

    let endpoints: Vec<_> = fake.requests().iter().map(|r| r.endpoint).collect();
    assert_eq!(
        endpoints,
        [
            Endpoint::GeminiGenerateContent,
            Endpoint::GeminiStreamGenerateContent,
            Endpoint::GeminiStreamGenerateContent,
            Endpoint::GeminiGenerateContent,
            Endpoint::GeminiCountTokens
        ]
    );
}

#[test]
fn bad_bodies_and_unknown_paths_are_answered_and_logged() {
    let fake = FakeProvider::start().unwrap();
    let bad = post(fake.addr(), "/v1/messages", "{not json", &[]);
    assert_eq!(bad.status, 400);
    assert_eq!(bad.json()["error"]["type"], "invalid_request_error");
    let unknown = post(fake.addr(), "/v1/nothing", "{}", &[]);
    assert_eq!(unknown.status, 404);
    let log = fake.requests();
    assert!(log[0].body_error.as_deref().unwrap().contains("not JSON"));
    assert_eq!(log[0].status, 400);
    assert_eq!(log[1].endpoint, Endpoint::Unknown);
    assert!(fake.model_requests().is_empty() || fake.model_requests()[0].status == 400);
}

#[test]
fn requests_are_also_appended_to_a_jsonl_file_and_shutdown_frees_the_port() {
    let dir = tempfile::tempdir().unwrap();
    let log_file = dir.path().join("requests.jsonl");
    let fake = FakeProvider::start_with(FakeProviderOptions {
        reply_text: "fine".into(),
        log_file: Some(log_file.clone()),
        ..FakeProviderOptions::default()
    })
    .unwrap();
    let addr = fake.addr();
    assert_eq!(fake.base_url(), format!("http://{addr}"));
    let chat = r#"{"messages":[{"role":"user","content":"hi"}]}"#;
    let reply = post(addr, "/v1/chat/completions", chat, &[]).json();
    assert_eq!(reply["choices"][0]["message"]["content"], "fine");
    post(addr, "/v1/responses", r#"{"input":[]}"#, &[]);
    let lines: Vec<Value> = std::fs::read_to_string(&log_file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[1]["path"], "/v1/responses");
    assert_eq!(lines[1]["body"], json!({"input": []}));
    fake.clear();
    assert!(fake.requests().is_empty());
    fake.shutdown();
    assert!(
        TcpStream::connect(addr).is_err(),
        "nothing listens after shutdown"
    );
}

/// One body per dialect that breaks a rule, the rule, and the error shape's message pointer.
fn broken_requests() -> Vec<(&'static str, Value, &'static str, &'static str)> {
    vec![
        (
            "/v1/messages",
            json!({"model": "m", "max_tokens": 5, "messages": [
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {}}]},
                {"role": "user", "content": [{"type": "text", "text": "no result"}]}]}),
            "rule A1: messages[1].content[0]",
            "/error/message",
        ),
        (
            "/v1/responses",
            json!({"model": "m", "input": [
                {"type": "message", "role": "user", "content": "hi"},
                {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
                {"type": "message", "role": "user", "content": "next"}]}),
            "rule R1: input[1].call_id",
            "/error/message",
        ),
        (
            "/v1/chat/completions",
            json!({"model": "m", "messages": [
                {"role": "user", "content": "hi"},
                {"role": "tool", "tool_call_id": "c1", "content": "orphan"}]}),
            "rule C1: messages[1].tool_call_id",
            "/error/message",
        ),
        (
            "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
            json!({"contents": [{"role": "user", "parts": [{"text": ""}]}]}),
            "rule G7: contents[0].parts[0].text",
            "/error/message",
        ),
    ]
}

#[test]
fn a_request_that_breaks_a_provider_rule_is_refused_naming_it() {
    let fake = FakeProvider::start().unwrap();
    for (path, body, rule, pointer) in broken_requests() {
        let reply = post(fake.addr(), path, &body.to_string(), &[]);
        assert_eq!(reply.status, 400, "{path}: {}", reply.body);
        let message = reply
            .json()
            .pointer(pointer)
            .unwrap()
            .as_str()
            .unwrap()
            .to_owned();
        assert!(message.contains(rule), "{path}: {message}");
    }
    let log = fake.requests();
    assert_eq!(log.len(), 4);
    for request in &log {
        assert_eq!(request.status, 400);
        assert!(request.refusal.as_deref().unwrap().contains("rule "));
    }
    // Each API's own error shape.
    let anthropic = post(
        fake.addr(),
        broken_requests()[0].0,
        &broken_requests()[0].1.to_string(),
        &[],
    );
    assert_eq!(anthropic.json()["error"]["type"], "invalid_request_error");
    let chat = post(
        fake.addr(),
        broken_requests()[2].0,
        &broken_requests()[2].1.to_string(),
        &[],
    );
    assert_eq!(chat.json()["error"]["code"], "C1");
    let gemini = post(
        fake.addr(),
        broken_requests()[3].0,
        &broken_requests()[3].1.to_string(),
        &[],
    );
    assert_eq!(gemini.json()["error"]["status"], "INVALID_ARGUMENT");
}

#[test]
fn validation_can_be_turned_off_and_token_counts_are_not_validated() {
    let fake = FakeProvider::start_with(FakeProviderOptions {
        validate: false,
        ..FakeProviderOptions::default()
    })
    .unwrap();
    for (path, body, _, _) in broken_requests() {
        let reply = post(fake.addr(), path, &body.to_string(), &[]);
        assert_eq!(reply.status, 200, "{path}");
    }
    assert!(fake.requests().iter().all(|r| r.refusal.is_none()));
    let strict = FakeProvider::start().unwrap();
    let count = post(
        strict.addr(),
        "/v1/messages/count_tokens",
        &broken_requests()[0].1.to_string(),
        &[],
    );
    assert_eq!(count.status, 200, "a token count is no model turn");
}

#[test]
fn every_endpoint_speaks_a_dialect() {
    let cases = [
        (
            Endpoint::AnthropicMessages,
            Some(Dialect::AnthropicMessages),
        ),
        (
            Endpoint::AnthropicCountTokens,
            Some(Dialect::AnthropicMessages),
        ),
        (Endpoint::OpenaiResponses, Some(Dialect::OpenaiResponses)),
        (Endpoint::OpenaiChatCompletions, Some(Dialect::OpenaiChat)),
        (Endpoint::GeminiGenerateContent, Some(Dialect::Gemini)),
        (Endpoint::GeminiStreamGenerateContent, Some(Dialect::Gemini)),
        (Endpoint::GeminiCountTokens, Some(Dialect::Gemini)),
        (Endpoint::Unknown, None),
    ];
    for (endpoint, dialect) in cases {
        assert_eq!(endpoint.dialect(), dialect, "{endpoint:?}");
    }
}

/// Claude Code 2.1.197 adds a `role: "system"` message (its agent listing) after the first user
/// turn and the real Messages API takes it: the fake provider must too, and still refuse the same
/// body once it breaks a real rule.
#[test]
fn a_system_role_message_from_claude_code_is_accepted_as_the_real_api_does() {
    let fake = FakeProvider::start().unwrap();
    let body = |second_user: serde_json::Value| {
        serde_json::json!({
            "model": "claude-sonnet-4-5",
            "max_tokens": 1024,
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "hi"}]},
                {"role": "system", "content": "agents: general-purpose"},
                {"role": "assistant", "content": [{"type": "text", "text": "hello"}]},
                {"role": "user", "content": second_user},
            ]
        })
    };
    let ok = post(
        fake.addr(),
        "/v1/messages",
        &body(serde_json::json!([{"type": "text", "text": "go on"}])).to_string(),
        &[],
    );
    assert_eq!(ok.status, 200, "{}", ok.body);
    let empty_text = post(
        fake.addr(),
        "/v1/messages",
        &body(serde_json::json!([{"type": "text", "text": ""}])).to_string(),
        &[],
    );
    assert_eq!(empty_text.status, 400, "{}", empty_text.body);
}
