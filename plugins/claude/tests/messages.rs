//! The `anthropic-messages` target: the stored history is a valid Messages history, metadata stays
//! out of `messages`, and resume is the next request body.

use handoff_claude::{ClaudePlugin, MESSAGES};
use handoff_conformance::corpus;
use handoff_sdk::dialect::anthropic::{parse, validate, validate_history};
use handoff_sdk::serde_json::{self, json, Value};
use handoff_sdk::ById;
use handoff_sdk::{
    AssistantPart, Body, CreateOptions, Event, Part, Plugin, PluginError, ResumePlan, StoreRoot,
    Timestamp, ToolCall, Transcript,
};

fn store() -> (tempfile::TempDir, StoreRoot) {
    let dir = tempfile::tempdir().unwrap();
    let root = StoreRoot::new(dir.path().join("api")).unwrap();
    (dir, root)
}

fn stored(root: &StoreRoot, id: &str) -> Value {
    let path = ClaudePlugin
        .resumer()
        .resolve(root, MESSAGES, id)
        .unwrap()
        .path;
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

fn ev(id: &str, body: Body) -> Event {
    Event::new(id, Timestamp::from_millis(1_764_000_000_000), body)
}

#[test]
fn every_corpus_history_is_valid_and_reads_back() {
    let target = handoff_sdk::Plugin::manifest(&handoff_claude::ClaudePlugin);
    let target = target.target(MESSAGES).unwrap();
    for entry in corpus::entries() {
        if target.check_carried(&entry.transcript).is_err() {
            continue;
        }
        let (_dir, root) = store();
        let s = ClaudePlugin
            .writer()
            .create(
                &root,
                MESSAGES,
                &entry.transcript,
                &CreateOptions::default(),
            )
            .unwrap();
        let file = stored(&root, &s.id);
        let messages = &file["messages"];
        validate_history(&json!({ "messages": messages }))
            .unwrap_or_else(|v| panic!("{}: {v}", entry.name));
        assert!(
            !messages.to_string().contains("x-handoff")
                && !messages.to_string().contains("\"handoff\"")
        );
        assert!(file["handoff"]["events"].is_array());
        let back = ClaudePlugin.read_id(&root, MESSAGES, &s.id).unwrap();
        target
            .comparison()
            .diff(&entry.transcript, &back)
            .unwrap_or_else(|d| panic!("{}: {d}", entry.name));
    }
}

#[test]
fn resume_is_the_next_request() {
    let t = corpus::entry("parallel-tool-calls")
        .unwrap()
        .transcript
        .clone();
    let (_dir, root) = store();
    let s = ClaudePlugin
        .writer()
        .create(&root, MESSAGES, &t, &CreateOptions::default())
        .unwrap();
    let ResumePlan::Request { dialect, body } = ClaudePlugin
        .plan_id(&root, MESSAGES, &s.id, "next?")
        .unwrap()
    else {
        panic!("an API target resumes by request")
    };
    assert_eq!(dialect, handoff_sdk::dialect::Dialect::AnthropicMessages);
    validate(&body).unwrap();
    assert!(body.get("x-handoff").is_none() && body.get("handoff").is_none());
    assert!(body["model"].is_string() && body["max_tokens"].is_u64());
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(
        messages.last().unwrap()["content"]
            .as_array()
            .unwrap()
            .last()
            .unwrap(),
        &json!({"type":"text","text":"next?"})
    );
    let parsed = parse(&body).unwrap();
    assert_eq!(parsed.messages.len(), messages.len());
}

#[test]
fn a_trailing_tool_result_message_takes_the_prompt_after_its_results() {
    let t = Transcript::new(vec![
        ev("u", Body::user_text("hi")),
        ev(
            "a",
            Body::assistant(vec![AssistantPart::ToolCall(ToolCall::new(
                "t1",
                "ls",
                json!({}),
            ))]),
        ),
        ev("r", Body::tool_error("t1", "a b")),
    ]);
    let (_dir, root) = store();
    let s = ClaudePlugin
        .writer()
        .create(&root, MESSAGES, &t, &CreateOptions::default())
        .unwrap();
    let ResumePlan::Request { body, .. } = ClaudePlugin
        .plan_id(&root, MESSAGES, &s.id, "why?")
        .unwrap()
    else {
        panic!()
    };
    let last = body["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["content"][0]["type"], "tool_result");
    assert_eq!(last["content"][0]["is_error"], true);
    assert_eq!(last["content"][1]["text"], "why?");
}

#[test]
fn what_the_api_rejects_is_refused_with_the_rule() {
    let (_dir, root) = store();
    let blank = Transcript::new(vec![ev("u", Body::user_text("  "))]);
    let err = ClaudePlugin
        .writer()
        .create(&root, MESSAGES, &blank, &CreateOptions::default())
        .unwrap_err();
    assert!(
        err.to_string().contains("A7") && err.to_string().contains("event 0 (u)"),
        "{err}"
    );
    let assistant_first = Transcript::new(vec![ev(
        "a",
        Body::assistant(vec![AssistantPart::text("hello")]),
    )]);
    let err = ClaudePlugin
        .writer()
        .create(&root, MESSAGES, &assistant_first, &CreateOptions::default())
        .unwrap_err();
    assert!(err.to_string().contains("rule A9"), "{err}");
    assert!(!root.path().exists(), "nothing may be left behind");
}

#[test]
fn image_urls_are_carried() {
    let t = Transcript::new(vec![ev(
        "u",
        Body::User {
            content: vec![
                Part::text("look"),
                Part::ImageUrl {
                    url: "https://example.invalid/a.png".into(),
                },
            ],
        },
    )]);
    let (_dir, root) = store();
    let s = ClaudePlugin
        .writer()
        .create(&root, MESSAGES, &t, &CreateOptions::default())
        .unwrap();
    assert_eq!(
        stored(&root, &s.id)["messages"][0]["content"][1]["source"]["type"],
        "url"
    );
    let back = ClaudePlugin.read_id(&root, MESSAGES, &s.id).unwrap();
    handoff_sdk::transcript::Comparison::exact()
        .diff(&t, &back)
        .unwrap();
}

#[test]
fn a_history_written_elsewhere_reads_with_the_natural_grouping() {
    let (_dir, root) = store();
    let path = root
        .path()
        .join("anthropic-messages/5f0c3a1e-0000-4000-8000-000000000001.json");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, json!({"model":"claude-x","messages":[
        {"role":"user","content":"hi"},
        {"role":"assistant","content":[{"type":"text","text":"ok"},{"type":"tool_use","id":"t","name":"ls","input":{}}]},
        {"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"x"},{"type":"text","text":"and"}]}
    ]}).to_string()).unwrap();
    let t = ClaudePlugin
        .read_id(&root, MESSAGES, "5f0c3a1e-0000-4000-8000-000000000001")
        .unwrap();
    let kinds: Vec<_> = t.events.iter().map(|e| e.body.kind()).collect();
    assert_eq!(kinds, ["user", "assistant", "tool_result", "user"]);
    assert!(matches!(
        ClaudePlugin.remove_id(&root, MESSAGES, "5f0c3a1e-0000-4000-8000-000000000001"),
        Err(PluginError::NotOwned { .. })
    ));
}

#[test]
fn metadata_that_does_not_fit_the_messages_is_malformed() {
    let t = corpus::entry("plain-chat").unwrap().transcript.clone();
    let (_dir, root) = store();
    let s = ClaudePlugin
        .writer()
        .create(&root, MESSAGES, &t, &CreateOptions::default())
        .unwrap();
    let mut file = stored(&root, &s.id);
    file["handoff"]["events"][0]["first"] = json!(7);
    std::fs::write(&s.path, file.to_string()).unwrap();
    let err = ClaudePlugin.read_id(&root, MESSAGES, &s.id).unwrap_err();
    assert!(
        matches!(err, PluginError::Malformed { ref field, .. } if field.as_deref() == Some("handoff.events[0].first")),
        "{err:?}"
    );
}
