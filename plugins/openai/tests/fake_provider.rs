//! What stands in for a live tier on the API targets (they have no CLI): each resume body is
//! posted, as a plain HTTP client would, to the loopback fake provider's `/v1/chat/completions`
//! or `/v1/responses`, which checks it with the provider's rules (strict, as the real API) and
//! answers 400 naming the rule when one is broken. The body must be accepted, and what the fake
//! recorded must parse with core's dialect back to the transcript plus the prompt.

mod common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use common::*;
use handoff_dialects::Dialect;
use handoff_host::Transcript;
use handoff_live::fake_provider::FakeProvider;
use serde_json::Value;

/// POSTs `body` as JSON to `path` over HTTP/1.1; returns the status and the response body.
fn post(addr: SocketAddr, path: &str, body: &Value) -> (u16, String) {
    let bytes = serde_json::to_vec(body).unwrap();
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    write!(
        stream,
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Authorization: Bearer dummy\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        bytes.len()
    )
    .unwrap();
    stream.write_all(&bytes).unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).unwrap();
    let response = String::from_utf8_lossy(&response).into_owned();
    let status = response
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP response: {response}"));
    let body = response
        .split_once("\r\n\r\n")
        .map_or(String::new(), |(_, b)| b.to_owned());
    (status, body)
}

fn endpoint(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::OpenaiChat => "/v1/chat/completions",
        Dialect::OpenaiResponses => "/v1/responses",
        other => panic!("not an OpenAI dialect: {other}"),
    }
}

/// Writes `t` to `target`, posts its resume body; it must be accepted and recorded as sent, and
/// parse back to the transcript plus the prompt.
fn accepted(fake: &FakeProvider, target: &str, what: &str, t: &Transcript) {
    let (_dir, root) = root();
    let session = create(&root, target, t);
    let (dialect, body) = plan_body(&root, &session);
    let (status, answer) = post(fake.addr(), endpoint(dialect), &body);
    assert_eq!(
        status, 200,
        "{what} into {target}: the fake provider refused the body: {answer}"
    );
    let recorded = fake
        .model_requests()
        .pop()
        .expect("the fake provider recorded the request");
    assert_eq!(recorded.path, endpoint(dialect));
    assert_eq!(
        recorded.body, body,
        "{what} into {target}: recorded body differs"
    );
    assert_body_is_transcript_plus_prompt(target, &recorded.body, t);
}

#[test]
fn every_resume_body_is_accepted_and_reads_back_as_transcript_plus_prompt() {
    let fake = FakeProvider::start().unwrap();
    let manifest = handoff_sdk::Plugin::manifest(&handoff_openai::OpenaiPlugin);
    let mut posted = 0;
    for target in TARGETS {
        let carries = &manifest.target(target).unwrap().carries;
        for entry in handoff_conformance::corpus::entries() {
            if entry.transcript.first_uncarried(carries).is_none() {
                accepted(&fake, target, entry.name, &entry.transcript);
                posted += 1;
            }
        }
        for (what, t) in samples() {
            accepted(&fake, target, &what, &t);
            posted += 1;
        }
    }
    assert_eq!(fake.model_requests().len(), posted);
}

#[test]
fn the_fake_provider_refuses_a_body_that_breaks_a_rule() {
    // Proves the check above can fail: the same bodies with one tool result taken out.
    let fake = FakeProvider::start().unwrap();
    let t = corpus("parallel-tool-calls");
    for (target, rule) in [("openai-chat", "C2"), ("openai-responses", "R1")] {
        let (_dir, root) = root();
        let session = create(&root, target, &t);
        let (dialect, mut body) = plan_body(&root, &session);
        let history = body[dialect.history_field()].as_array_mut().unwrap();
        let result = history
            .iter()
            .position(|m| m["role"] == "tool" || m["type"] == "function_call_output")
            .unwrap();
        history.remove(result);
        let (status, answer) = post(fake.addr(), endpoint(dialect), &body);
        assert_eq!(status, 400, "{target}: {answer}");
        assert!(answer.contains(rule), "{target}: {answer}");
    }
}
