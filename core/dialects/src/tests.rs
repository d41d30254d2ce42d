//! The common interface, for every dialect.

use serde_json::{json, Value};

use super::*;
use handoff_transcript::{AssistantPart, Comparison, Part, ToolCall};

/// An event at time zero: the dialects' tests compare histories, never times.
pub(crate) fn ev(id: &str, body: Body) -> Event {
    Event::new(id, Timestamp::from_millis(0), body)
}

/// A user event of one text.
pub(crate) fn user(id: &str, text: &str) -> Event {
    ev(id, Body::user_text(text))
}

fn tool_turn() -> Transcript {
    Transcript::new(vec![
        ev("u", Body::user_text("list")),
        ev(
            "a",
            Body::assistant(vec![
                AssistantPart::text("Listing."),
                AssistantPart::ToolCall(ToolCall::new("call_1", "ls", json!({"path": "."}))),
            ]),
        ),
        ev("r", Body::tool_error("call_1", "a.txt")),
        ev(
            "b",
            Body::assistant(vec![AssistantPart::text("It failed.")]),
        ),
    ])
}

#[test]
fn names_are_the_serde_names_and_parse_back() {
    for d in Dialect::ALL {
        assert_eq!(serde_json::to_value(d).unwrap(), Value::from(d.name()));
        assert_eq!(d.name().parse::<Dialect>().unwrap(), d);
        assert_eq!(d.to_string(), d.name());
        // Each dialect is tied to its own module: its renderer writes the history member the
        // dialect names.
        let body = d
            .render_body(&Transcript::new(Vec::new()), &RenderOptions::default())
            .unwrap();
        assert!(
            body.get(d.history_field()).is_some_and(Value::is_array),
            "{d}: {body}"
        );
    }
    assert_eq!(
        serde_json::to_value(Dialect::OpenaiChat).unwrap(),
        json!("openai-chat")
    );
    assert!("openai".parse::<Dialect>().is_err());
}

#[test]
fn every_dialect_renders_a_request_that_validates_and_parses_back() {
    let t = tool_turn();
    let options = RenderOptions {
        system: Some("be brief".into()),
        ..RenderOptions::default()
    };
    for d in Dialect::ALL {
        let body = d.render_request(&t, "m-1", "go on", &options).unwrap();
        d.validate(&body)
            .unwrap_or_else(|v| panic!("{d}: {v}\n{body:#}"));
        let parsed = d.parse(&body).unwrap();
        assert_eq!(parsed.system, ["be brief"], "{d}");
        let history = &parsed.transcript;
        assert!(
            matches!(&history.events.last().unwrap().body, Body::User { content } if content == &vec![Part::text("go on")]),
            "{d}: the prompt comes last"
        );
        // Equal as the wire shows it, the prompt aside.
        let mut expected = t.clone();
        expected.events.push(ev("p", Body::user_text("go on")));
        let thinking_from: Vec<String> = d
            .default_thinking_from()
            .iter()
            .map(|p| p.to_string())
            .collect();
        Comparison::exact()
            .diff(
                &wire_view(&expected, d, &thinking_from),
                &parsed_view(history, d),
            )
            .unwrap_or_else(|diff| panic!("{d}: {diff}"));
        let rendered = d.render_history(&t, &options).unwrap();
        assert_eq!(
            Value::Array(rendered.clone()),
            d.render_body(&t, &options).unwrap()[d.history_field()]
        );
        assert!(
            d.validate_history(&Value::Array(rendered)).is_ok(),
            "{d}: a stored history validates as one"
        );
    }
}

#[test]
fn the_error_flag_survives_where_the_wire_has_one() {
    let t = tool_turn();
    for d in Dialect::ALL {
        let history = d.render_history(&t, &RenderOptions::default()).unwrap();
        let parsed = d.parse(&Value::Array(history)).unwrap().transcript;
        let flag = parsed.events.iter().find_map(|e| match &e.body {
            Body::ToolResult { is_error, .. } => Some(*is_error),
            _ => None,
        });
        let flagless = d.limits().contains(&WireLimit::NoToolErrorFlag);
        assert_eq!(flag, Some(!flagless), "{d}");
        assert_eq!(
            d.limit_notes().iter().any(|n| n.contains("error flags")),
            flagless,
            "{d}: the limit is reported"
        );
    }
}

#[test]
fn a_request_body_names_the_model_where_the_dialect_carries_it() {
    let t = tool_turn();
    for d in Dialect::ALL {
        let body = d
            .render_request(&t, "m-1", "next", &RenderOptions::default())
            .unwrap();
        let expected = if d == Dialect::Gemini {
            None
        } else {
            Some("m-1")
        };
        assert_eq!(body.get("model").and_then(Value::as_str), expected, "{d}");
    }
    let anthropic = Dialect::AnthropicMessages
        .render_request(&t, "m", "next", &RenderOptions::default())
        .unwrap();
    assert_eq!(anthropic["max_tokens"], DEFAULT_MAX_TOKENS);
}

#[test]
fn violations_name_dialect_rule_index_and_field() {
    let cases = [
        (
            Dialect::AnthropicMessages,
            json!({"messages": [{"role": "user", "content": "hi"}, {"role": "user", "content": "again"}]}),
            "anthropic-messages rule A10: messages[1]: ",
        ),
        (
            Dialect::OpenaiResponses,
            json!({"input": [{"type": "function_call_output", "call_id": "c", "output": "x"}]}),
            "openai-responses rule R1: input[0].call_id: ",
        ),
        (
            Dialect::OpenaiChat,
            json!({"messages": [{"role": "tool", "tool_call_id": "c", "content": "x"}]}),
            "openai-chat rule C1: messages[0].tool_call_id: ",
        ),
        (
            Dialect::Gemini,
            json!({"contents": [{"role": "user", "parts": []}]}),
            "gemini rule G7: contents[0].parts: ",
        ),
    ];
    for (d, body, prefix) in cases {
        let v = d.validate(&body).unwrap_err();
        assert!(v.to_string().starts_with(prefix), "{v}");
    }
}

/// Every dialect shows a compaction's summary at its place: the user message it keeps (after
/// `replaces_through`, before it) first, as Codex sends its `replacement_history`.
#[test]
fn every_dialect_shows_the_summary_at_the_compactions_place() {
    let user = |id: &str, text: &str| ev(id, Body::user_text(text));
    let assistant = |id: &str, text: &str| ev(id, Body::assistant(vec![AssistantPart::text(text)]));
    let t = Transcript::new(vec![
        user("u1", "old"),
        assistant("a1", "older"),
        user("u2", "kept"),
        ev(
            "c",
            Body::Compaction {
                summary: "summary".into(),
                replaces_through: "a1".into(),
            },
        ),
        assistant("a2", "next"),
    ]);
    for d in Dialect::ALL {
        let body = d.render_body(&t, &RenderOptions::default()).unwrap();
        let parsed = d.parse(&body).unwrap().transcript;
        let texts: Vec<&str> = parsed
            .events
            .iter()
            .flat_map(|e| match &e.body {
                Body::User { content } => content
                    .iter()
                    .filter_map(|p| match p {
                        Part::Text { text } => Some(text.as_str()),
                        _ => None,
                    })
                    .collect::<Vec<_>>(),
                Body::Assistant { content, .. } => content
                    .iter()
                    .filter_map(|p| match p {
                        AssistantPart::Text { text } => Some(text.as_str()),
                        _ => None,
                    })
                    .collect(),
                _ => Vec::new(),
            })
            .collect();
        assert_eq!(texts, ["kept", "summary", "next"], "{d}");
    }
}
