//! A sample transcript shared by the module's tests, round trips, and real Codex requests.

use serde_json::{json, Value};

use super::*;
use crate::tests::ev;
use handoff_transcript::{
    AssistantPart, Body, Comparison, Part, Signature, Thinking, ToolCall, ToolInput, Transcript,
    WebSearch,
};

pub(super) fn sample() -> Transcript {
    let call = |id: &str, cmd: &str| {
        AssistantPart::ToolCall(ToolCall::new(id, "exec_command", json!({ "cmd": cmd })))
    };
    Transcript::new(vec![
        ev("u1", Body::user_text("list files")),
        ev(
            "a1",
            Body::assistant(vec![
                AssistantPart::Thinking(Thinking {
                    text: "use ls".into(),
                    signature: Some(Signature {
                        provider: "openai".into(),
                        model: Some("gpt-5".into()),
                        value: "enc".into(),
                        redacted: false,
                    }),
                }),
                AssistantPart::text("Listing."),
                call("call_1", "ls"),
                call("call_2", "date"),
            ]),
        ),
        ev("r1", Body::tool_output("call_1", "a.txt")),
        ev(
            "r2",
            Body::ToolResult {
                call_id: "call_2".into(),
                content: vec![
                    Part::text("now"),
                    Part::Image {
                        media_type: "image/png".into(),
                        data: vec![1, 2, 3],
                    },
                ],
                is_error: false,
            },
        ),
        ev("a2", Body::assistant(vec![AssistantPart::text("Done.")])),
    ])
}

#[test]
fn render_then_parse_round_trips_and_validates() {
    let t = sample();
    let input = render(&t, Some("gpt-5"));
    validate(&input).unwrap();
    assert_eq!(input[1]["type"], "reasoning");
    assert_eq!(input[3]["arguments"], "{\"cmd\":\"ls\"}");
    let mut parsed = parse(&input).unwrap();
    // The wire does not say which model made the reasoning.
    if let Body::Assistant { content, .. } = &mut parsed.events[1].body {
        if let AssistantPart::Thinking(th) = &mut content[0] {
            th.signature.as_mut().unwrap().model = Some("gpt-5".into());
        }
    }
    Comparison::exact().diff(&t, &parsed).unwrap();
}

fn captured(text: &str) -> Vec<Value> {
    let request: Value = serde_json::from_str(text).unwrap();
    request["input"].as_array().unwrap().clone()
}

#[test]
fn parses_and_validates_a_real_codex_request_with_images() {
    let input = captured(include_str!("codex-0.171.0-resume-images.json"));
    validate(&input).unwrap();
    let parsed = parse_input(&input).unwrap();
    assert!(!parsed.system.is_empty(), "the developer messages");
    let t = parsed.transcript;
    let kinds: Vec<&str> = t.events.iter().map(|e| e.body.kind()).collect();
    // Developer messages are set apart; the environment context is kept (the caller's to drop).
    assert_eq!(
        kinds,
        [
            "user",
            "assistant",
            "tool_result",
            "assistant",
            "user",
            "user"
        ]
    );
    assert!(
        matches!(&t.events[4].body, Body::User { content } if matches!(&content[..], [Part::Text { text }] if text.trim_start().starts_with("<environment_context>")))
    );
    match &t.events[2].body {
        Body::ToolResult {
            call_id, content, ..
        } => {
            assert_eq!(call_id, "toolu_img1");
            assert!(
                matches!(&content[1], Part::Image { media_type, .. } if media_type == "image/png")
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(
        matches!(&t.events[5].body, Body::User { content } if content == &vec![Part::text("continue")])
    );
    assert!(
        t.events[5].id.starts_with("msg_"),
        "item ids become event ids"
    );
}

#[test]
fn parses_and_validates_a_real_codex_request_with_reasoning() {
    let input = captured(include_str!(
        "codex-0.171.0-resume-thinking-signed-openai.json"
    ));
    validate(&input).unwrap();
    let t = parse(&input).unwrap();
    match &t.events[1].body {
        Body::Assistant { content, .. } => {
            assert!(
                matches!(&content[0], AssistantPart::Thinking(Thinking { signature: Some(s), .. })
                if s.value == "gAAAAABfakeEncryptedReasoningForConformanceOnly")
            );
            assert_eq!(content[1], AssistantPart::text("Yes, 1013 is prime."));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn parses_a_real_codex_request_with_a_custom_tool_call_and_a_web_search() {
    let input = captured(include_str!(
        "codex-0.171.0-resume-custom-tool-web-search.json"
    ));
    validate(&input).unwrap();
    let t = parse(&input).unwrap();
    let Body::Assistant { content, .. } = &t.events[1].body else {
        panic!("{:?}", t.events[1]);
    };
    assert_eq!(
        content[0],
        AssistantPart::ToolCall(ToolCall {
            id: "call_P1".into(),
            name: "apply_patch".into(),
            input: ToolInput::Freeform(
                "*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch\n".into()
            ),
        })
    );
    assert!(matches!(&t.events[2].body, Body::ToolResult { call_id, .. } if call_id == "call_P1"));
    let Body::Assistant { content, .. } = &t.events[3].body else {
        panic!("{:?}", t.events[3]);
    };
    assert_eq!(
        content[0],
        AssistantPart::WebSearch(WebSearch {
            id: Some("ws_1".into()),
            status: Some("completed".into()),
            action: json!({"type": "search", "query": "rust serde",
                "queries": ["rust serde", "serde flatten"]}),
        })
    );
    // Rendered again, the items are the ones Codex sent (custom call, its output, the search),
    // but for a call's status, which the canonical model does not keep (for function calls
    // neither).
    let again = render(&t, None);
    let mut sent_call = input[2].clone();
    sent_call.as_object_mut().unwrap().remove("status");
    assert_eq!(again[1], sent_call);
    assert_eq!(again[2], input[3]);
    assert_eq!(again[3], input[4]);
}
