//! Cross-provider replay: every transcript of the canonical corpus (`conformance/corpus/*.json`)
//! rendered as a request in every dialect, validated against the provider's rules, and parsed
//! back. Tool calls keep their ids and arguments, results stay paired with their calls, an error
//! stays an error where the wire has a flag (and is reported as a wire limit where it has none),
//! and the whole history equals the transcript as the wire shows it.

use std::collections::HashMap;
use std::path::PathBuf;

use handoff_dialects::{parsed_view, wire_view, Dialect, RenderOptions, WireLimit};
use handoff_transcript::{AssistantPart, Body, Comparison, Event, Timestamp, ToolCall, Transcript};

const PROMPT: &str = "handoff replay: go on";

fn corpus() -> Vec<(String, Transcript)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../conformance/corpus");
    let mut entries: Vec<(String, Transcript)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|f| f.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            let name = p.file_stem().unwrap().to_string_lossy().into_owned();
            let t = Transcript::from_json(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
            (name, t)
        })
        .collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    assert!(entries.len() >= 13, "the corpus is there");
    entries
}

/// The model a request goes to: the one that made the transcript's turns when the dialect's
/// provider made them (so its signed thinking goes back), else a stranger.
fn model_for(t: &Transcript, dialect: Dialect) -> String {
    t.events
        .iter()
        .find_map(|e| match &e.body {
            Body::Assistant {
                origin: Some(o), ..
            } if o.provider == dialect.provider() => o.model.clone(),
            _ => None,
        })
        .unwrap_or_else(|| "replay-model".into())
}

fn calls(t: &Transcript) -> Vec<ToolCall> {
    t.events
        .iter()
        .flat_map(|e| match &e.body {
            Body::Assistant { content, .. } => content
                .iter()
                .filter_map(|p| match p {
                    AssistantPart::ToolCall(c) => Some(c.clone()),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        })
        .collect()
}

fn has_web_search(t: &Transcript) -> bool {
    t.events.iter().any(|e| {
        matches!(&e.body, Body::Assistant { content, .. }
            if content.iter().any(|p| matches!(p, AssistantPart::WebSearch(_))))
    })
}

fn error_flags(t: &Transcript) -> HashMap<String, bool> {
    t.events
        .iter()
        .filter_map(|e| e.body.as_tool_result())
        .map(|(call_id, _, is_error)| (call_id.to_owned(), is_error))
        .collect()
}

/// Every result answers a call made before it, once.
fn assert_paired(name: &str, dialect: Dialect, t: &Transcript) {
    let mut open: Vec<&str> = Vec::new();
    for e in &t.events {
        match &e.body {
            Body::Assistant { content, .. } => {
                open.extend(content.iter().filter_map(|p| match p {
                    AssistantPart::ToolCall(c) => Some(c.id.as_str()),
                    _ => None,
                }))
            }
            Body::ToolResult { call_id, .. } => {
                let k = open
                    .iter()
                    .position(|o| o == call_id)
                    .unwrap_or_else(|| panic!("{name} in {dialect}: result {call_id} is unpaired"));
                open.remove(k);
            }
            _ => {}
        }
    }
    assert!(open.is_empty(), "{name} in {dialect}: unanswered {open:?}");
}

fn with_prompt(t: &Transcript) -> Transcript {
    let mut whole = t.clone();
    whole.events.push(Event::new(
        "replay-prompt",
        Timestamp::from_millis(0),
        Body::user_text(PROMPT),
    ));
    whole
}

#[test]
fn every_corpus_transcript_replays_in_every_dialect() {
    let (mut checked, mut refused) = (0, 0);
    for (name, t) in corpus() {
        for dialect in Dialect::ALL {
            let model = model_for(&t, dialect);
            let options = RenderOptions::default();
            if dialect != Dialect::OpenaiResponses && has_web_search(&t) {
                // Only the Responses wire has OpenAI's web search; the others refuse it by name.
                let error = dialect.render_history(&t, &options).unwrap_err();
                assert!(
                    error.to_string().contains("web search"),
                    "{name} in {dialect}: {error}"
                );
                refused += 1;
                continue;
            }
            let history = dialect
                .render_history(&t, &options)
                .unwrap_or_else(|e| panic!("{name} in {dialect}: cannot render: {e}"));
            dialect
                .validate_history(&serde_json::Value::Array(history))
                .unwrap_or_else(|v| panic!("{name} in {dialect}: the history breaks {v}"));
            let body = dialect
                .render_request(&t, &model, PROMPT, &options)
                .unwrap();
            dialect
                .validate(&body)
                .unwrap_or_else(|v| panic!("{name} in {dialect}: the request breaks {v}"));
            let parsed = dialect
                .parse(&body)
                .unwrap_or_else(|e| panic!("{name} in {dialect}: cannot parse back: {e}"))
                .transcript;

            // Tool calls keep ids and arguments (compacted ones are not shown at all).
            let expected_view = wire_view(&with_prompt(&t), dialect, &thinking_from(dialect));
            assert_eq!(
                calls(&parsed),
                calls(&expected_view),
                "{name} in {dialect}: tool calls"
            );
            assert_paired(&name, dialect, &parsed);

            // An error stays an error where the wire has a flag; where not, it is a limit.
            let flagless = dialect.limits().contains(&WireLimit::NoToolErrorFlag);
            for (call, was_error) in error_flags(&expected_view) {
                let now = error_flags(&parsed)[&call];
                if flagless {
                    assert!(!now, "{name} in {dialect}: no flag to carry");
                    if was_error {
                        assert!(
                            dialect
                                .limit_notes()
                                .iter()
                                .any(|n| n.contains("error flags")),
                            "{name} in {dialect}: the lost flag is reported"
                        );
                    }
                } else {
                    assert_eq!(now, was_error, "{name} in {dialect}: error flag of {call}");
                }
            }

            // The whole history, as the wire shows it.
            Comparison::for_target(&thinking_from(dialect))
                .diff(&expected_view, &parsed_view(&parsed, dialect))
                .unwrap_or_else(|d| panic!("{name} in {dialect}: {d}"));
            checked += 1;
        }
    }
    assert_eq!((checked + refused) % Dialect::ALL.len(), 0);
    assert_eq!(
        refused,
        Dialect::ALL.len() - 1,
        "only the Responses wire has a web search"
    );
}

fn thinking_from(dialect: Dialect) -> Vec<String> {
    dialect
        .default_thinking_from()
        .iter()
        .map(|p| p.to_string())
        .collect()
}

#[test]
fn signed_thinking_goes_back_only_to_its_maker() {
    for (name, t) in corpus()
        .into_iter()
        .filter(|(n, _)| n.starts_with("thinking-signed-"))
    {
        for dialect in Dialect::ALL {
            let body = dialect
                .render_request(
                    &t,
                    &model_for(&t, dialect),
                    PROMPT,
                    &RenderOptions::default(),
                )
                .unwrap();
            let parsed = dialect.parse(&body).unwrap().transcript;
            let signed_by: Vec<String> = parsed
                .events
                .iter()
                .flat_map(|e| match &e.body {
                    Body::Assistant { content, .. } => content
                        .iter()
                        .filter_map(|p| match p {
                            AssistantPart::Thinking(th) => {
                                th.signature.as_ref().map(|s| s.provider.clone())
                            }
                            _ => None,
                        })
                        .collect(),
                    _ => Vec::new(),
                })
                .collect();
            let maker = name.trim_start_matches("thinking-signed-");
            let goes_back = dialect.provider() == maker && dialect != Dialect::OpenaiChat;
            assert_eq!(
                signed_by,
                if goes_back {
                    vec![maker.to_owned()]
                } else {
                    vec![]
                },
                "{name} in {dialect}"
            );
        }
    }
}
