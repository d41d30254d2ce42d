//! Each wire rule that matters to these targets, on the store and on the resume body: parallel
//! calls and their pairing, tool errors, images, thinking (carried, set aside or refused as
//! declared), text after a call, ids the API refuses, and the strict resume.

mod common;

use common::*;
use handoff_host::{
    AssistantPart, Body, ById, Event, Origin, Part, Plugin, PluginError, ReadFrom, Thinking,
    Timestamp, ToolCall, ToolInput, Transcript, WebSearch,
};
use handoff_openai::OpenaiPlugin;
use serde_json::{json, Value};

fn read(root: &handoff_host::StoreRoot, session: &handoff_host::SessionRef) -> Transcript {
    OpenaiPlugin
        .reader()
        .read(ReadFrom::Session(root, session))
        .unwrap()
}

fn equal(target: &str, a: &Transcript, b: &Transcript) {
    let m = handoff_sdk::Plugin::manifest(&handoff_openai::OpenaiPlugin);
    m.target(target)
        .unwrap()
        .comparison()
        .diff(a, b)
        .unwrap_or_else(|d| panic!("{target}: {d}"));
}

fn history<'a>(file: &'a Value, target: &str) -> &'a [Value] {
    file[dialect_of(target).history_field()].as_array().unwrap()
}

/// Writes, reads back equal, plans; the plan validates, is the transcript plus the prompt, and
/// holds no extras. Returns the stored file and the plan body.
fn round_trip(target: &str, t: &Transcript) -> (Value, Value) {
    let (file, body) = stored(target, t);
    assert_body_is_transcript_plus_prompt(target, &body, t);
    (file, body)
}

/// [`round_trip`] without comparing the body with the transcript as the wire shows it (for the
/// cases core's wire view does not model: see each caller).
fn stored(target: &str, t: &Transcript) -> (Value, Value) {
    let (_dir, root) = root();
    let session = create(&root, target, t);
    equal(target, t, &read(&root, &session));
    let (dialect, body) = plan_body(&root, &session);
    assert_eq!(dialect, dialect_of(target));
    dialect
        .validate(&body)
        .unwrap_or_else(|v| panic!("{target}: {v}"));
    assert_no_extras(&body, t);
    (file(&session), body)
}

fn ev(id: &str, body: Body) -> Event {
    Event::new(id, Timestamp::from_millis(1_795_999_300_000), body)
}

fn user(id: &str, parts: Vec<Part>) -> Event {
    ev(id, Body::User { content: parts })
}

fn assistant(id: &str, parts: Vec<AssistantPart>, origin: Option<Origin>) -> Event {
    ev(
        id,
        Body::Assistant {
            content: parts,
            origin,
        },
    )
}

fn call(id: &str) -> AssistantPart {
    AssistantPart::ToolCall(ToolCall::new(
        id,
        "shell",
        json!({"command": ["ls", "-la"], "big": 12345678901234567890123u128}),
    ))
}

fn result(id: &str, call_id: &str, parts: Vec<Part>, is_error: bool) -> Event {
    ev(
        id,
        Body::ToolResult {
            call_id: call_id.into(),
            content: parts,
            is_error,
        },
    )
}

fn openai(model: &str) -> Option<Origin> {
    Some(Origin {
        provider: "openai".into(),
        model: Some(model.into()),
        api: Some("openai-responses".into()),
    })
}

fn png() -> Part {
    Part::Image {
        media_type: "image/png".into(),
        data: vec![0x89, b'P', b'N', b'G', 1, 2, 3],
    }
}

#[test]
fn parallel_calls_are_answered_right_after_their_turn() {
    let t = corpus("parallel-tool-calls");
    let (file, body) = round_trip("openai-chat", &t);
    let messages = history(&file, "openai-chat");
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "tool", "tool", "assistant"]);
    let calls = messages[1]["tool_calls"].as_array().unwrap();
    assert_eq!(calls.len(), 2);
    assert!(calls.iter().all(|c| c["function"]["arguments"].is_string()));
    assert_eq!(messages[2]["tool_call_id"], calls[0]["id"]);
    assert_eq!(messages[3]["tool_call_id"], calls[1]["id"]);
    assert_eq!(body["messages"].as_array().unwrap().len(), 6);

    let (file, body) = round_trip("openai-responses", &t);
    let kinds: Vec<&str> = history(&file, "openai-responses")
        .iter()
        .map(|i| i["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "message",
            "message",
            "function_call",
            "function_call",
            "function_call_output",
            "function_call_output",
            "message"
        ]
    );
    assert_eq!(body["store"], json!(false));
}

#[test]
fn tool_errors_are_kept_beside_the_wire_and_never_sent() {
    let t = corpus("tool-error");
    for target in TARGETS {
        let (file, body) = round_trip(target, &t);
        let failed: Vec<&Value> = file["handoff"]["events"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["is_error"] == json!(true))
            .collect();
        assert_eq!(failed.len(), 1, "{target}");
        assert!(!body.to_string().contains("is_error"), "{target}");
    }
}

#[test]
fn images_go_as_image_parts_and_result_images_where_each_wire_takes_them() {
    let t = corpus("images");
    let (file, _) = round_trip("openai-chat", &t);
    let messages = history(&file, "openai-chat");
    assert_eq!(messages[0]["content"][1]["type"], "image_url");
    assert!(messages[0]["content"][1]["image_url"]["url"]
        .as_str()
        .unwrap()
        .starts_with("data:image/"));
    // The tool message holds text only; its image follows in a user message.
    let tool = messages.iter().position(|m| m["role"] == "tool").unwrap();
    assert!(messages[tool]["content"].is_string());
    assert_eq!(messages[tool + 1]["role"], "user");
    assert_eq!(messages[tool + 1]["content"][0]["type"], "image_url");

    let (file, _) = round_trip("openai-responses", &t);
    let input = history(&file, "openai-responses");
    assert_eq!(input[0]["content"][1]["type"], "input_image");
    let output = input
        .iter()
        .find(|i| i["type"] == "function_call_output")
        .unwrap();
    assert_eq!(output["output"][1]["type"], "input_image");
}

#[test]
fn a_result_image_before_its_text_and_a_user_turn_between_read_back_in_place() {
    let t = Transcript::new(vec![
        user("u1", vec![Part::text("look"), png()]),
        assistant("a1", vec![call("c1"), call("c2")], openai("gpt-5")),
        result("r1", "c1", vec![png(), Part::text("the screenshot")], false),
        user("u2", vec![png()]),
        result("r2", "c2", vec![Part::text("two"), png()], true),
        assistant("a2", vec![AssistantPart::text("done")], openai("gpt-5")),
    ]);
    round_trip("openai-responses", &t);
    // Chat sends both results' tool messages before u2 (C1, C2); core's wire view keeps u2
    // between them, so only the store and the rules are checked here.
    let (file, body) = stored("openai-chat", &t);
    let roles: Vec<&str> = history(&file, "openai-chat")
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        [
            "user",
            "assistant",
            "tool",
            "tool",
            "user",
            "user",
            "assistant"
        ]
    );
    assert_eq!(body["messages"][4]["content"].as_array().unwrap().len(), 2);
}

#[test]
fn openai_reasoning_goes_back_encrypted_and_only_to_the_model_that_made_it() {
    let t = corpus("thinking-signed-openai");
    let (file, body) = round_trip("openai-responses", &t);
    let reasoning = history(&file, "openai-responses")
        .iter()
        .find(|i| i["type"] == "reasoning")
        .expect("a reasoning item");
    assert!(reasoning["encrypted_content"].is_string());
    assert_eq!(body["model"], "gpt-5");
    assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
    assert!(body["input"]
        .as_array()
        .unwrap()
        .iter()
        .any(|i| i["type"] == "reasoning"));

    // A later turn by another model: the session's model changes, the older blob stays stored
    // but is not sent to the new model (R5).
    let mut switched = t.clone();
    switched.events.push(user("u9", vec![Part::text("again")]));
    switched.events.push(assistant(
        "a9",
        vec![AssistantPart::text("hi from o3")],
        openai("o3"),
    ));
    // Core's wire view does not know the model, so it would keep the gpt-5 blob.
    let (file, body) = stored("openai-responses", &switched);
    assert_eq!(file["model"], "o3");
    assert!(history(&file, "openai-responses")
        .iter()
        .any(|i| i["type"] == "reasoning"));
    assert_eq!(body["model"], "o3");
    assert!(!body["input"]
        .as_array()
        .unwrap()
        .iter()
        .any(|i| i["type"] == "reasoning"));
}

#[test]
fn chat_sets_every_thinking_aside_and_responses_sets_foreign_thinking_aside() {
    for name in ["thinking-signed-openai", "thinking-signed-anthropic"] {
        let t = corpus(name);
        let (file, body) = round_trip("openai-chat", &t);
        assert!(!file.to_string().contains("\"thinking\""), "{name}");
        let signature = match &t.events[1].body {
            Body::Assistant { content, .. } => match &content[0] {
                AssistantPart::Thinking(th) => th.signature.clone().unwrap().value,
                _ => panic!(),
            },
            _ => panic!(),
        };
        assert!(
            !body.to_string().contains(&signature),
            "{name}: signature sent to Chat"
        );
    }
    let t = corpus("thinking-signed-anthropic");
    let (file, _) = round_trip("openai-responses", &t);
    assert!(!history(&file, "openai-responses")
        .iter()
        .any(|i| i["type"] == "reasoning"));
    // A turn of nothing but foreign thinking is not written at all.
    let only = Transcript::new(vec![
        t.events[0].clone(),
        assistant(
            "a1",
            vec![AssistantPart::Thinking(Thinking {
                text: "hmm".into(),
                signature: None,
            })],
            t.events[1].body.clone().origin(),
        ),
    ]);
    for target in TARGETS {
        let (file, _) = round_trip(target, &only);
        assert_eq!(
            file["handoff"]["events"].as_array().unwrap().len(),
            1,
            "{target}"
        );
    }
}

trait OriginOf {
    fn origin(self) -> Option<Origin>;
}
impl OriginOf for Body {
    fn origin(self) -> Option<Origin> {
        match self {
            Body::Assistant { origin, .. } => origin,
            _ => None,
        }
    }
}

#[test]
fn openai_reasoning_without_its_encrypted_content_is_refused_naming_the_event() {
    let t = Transcript::new(vec![
        user("u1", vec![Part::text("hi")]),
        assistant(
            "a1",
            vec![
                AssistantPart::Thinking(Thinking {
                    text: "a summary".into(),
                    signature: None,
                }),
                AssistantPart::text("hello"),
            ],
            openai("gpt-5"),
        ),
    ]);
    let (dir, root) = root();
    let e = OpenaiPlugin
        .writer()
        .create(&root, "openai-responses", &t, &Default::default())
        .unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("event 1 (a1)")
            && text.contains("body.content[0]")
            && text.contains("encrypted"),
        "{text}"
    );
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "left something behind"
    );
    // Chat has no reasoning at all: the same turn goes, its thinking set aside.
    round_trip("openai-chat", &t);
}

#[test]
fn freeform_calls_and_web_searches_are_native_items_of_responses_and_refused_by_chat() {
    let search = AssistantPart::WebSearch(WebSearch {
        id: Some("ws_1".into()),
        status: Some("completed".into()),
        action: json!({"type": "search", "query": "q", "queries": ["q"]}),
    });
    let patch = AssistantPart::ToolCall(ToolCall {
        id: "call_P1".into(),
        name: "apply_patch".into(),
        input: ToolInput::Freeform("*** Begin Patch\n*** End Patch\n".into()),
    });
    let t = Transcript::new(vec![
        user("u1", vec![Part::text("patch it")]),
        assistant("a1", vec![search, patch, call("call_2")], openai("gpt-5")),
        result("r1", "call_P1", vec![Part::text("Success.")], false),
        result("r2", "call_2", vec![Part::text("ok")], false),
        assistant("a2", vec![AssistantPart::text("done")], openai("gpt-5")),
    ]);
    let (file, body) = round_trip("openai-responses", &t);
    let items = history(&file, "openai-responses");
    let kinds: Vec<&str> = items.iter().map(|i| i["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "message",
            "web_search_call",
            "custom_tool_call",
            "function_call",
            "custom_tool_call_output",
            "function_call_output",
            "message"
        ]
    );
    assert_eq!(items[2]["input"], "*** Begin Patch\n*** End Patch\n");
    assert_eq!(items[1]["id"], "ws_1");
    assert_eq!(body["input"][2]["type"], "custom_tool_call");
    let (_dir, root) = root();
    for (event, feature) in [(1, "freeform_tool_call"), (1, "web_search")] {
        let mut only = t.clone();
        if let Body::Assistant { content, .. } = &mut only.events[1].body {
            content.retain(|p| match feature {
                "web_search" => matches!(p, AssistantPart::WebSearch(_)),
                _ => matches!(p, AssistantPart::ToolCall(c) if c.arguments().is_none()),
            });
        }
        only.events.retain(
            |e| !matches!(&e.body, Body::ToolResult { call_id, .. } if call_id == "call_2"),
        );
        if feature == "web_search" {
            only.events
                .retain(|e| !matches!(e.body, Body::ToolResult { .. }));
        }
        match OpenaiPlugin
            .writer()
            .create(&root, "openai-chat", &only, &Default::default())
        {
            Err(PluginError::NotCarried {
                index, feature: f, ..
            }) => assert_eq!((index, f.name()), (event, feature)),
            other => panic!("expected NotCarried, got {other:?}"),
        }
    }
}

#[test]
fn text_after_a_call_is_refused_by_chat_and_kept_in_order_by_responses() {
    let t = corpus("interleaved-text-tool-text");
    let (_dir, root) = root();
    match OpenaiPlugin
        .writer()
        .create(&root, "openai-chat", &t, &Default::default())
    {
        Err(PluginError::NotCarried {
            index, event_id, ..
        }) => assert_eq!((index, event_id.as_str()), (1, "e2")),
        other => panic!("expected NotCarried, got {other:?}"),
    }
    let (file, _) = round_trip("openai-responses", &t);
    let kinds: Vec<&str> = history(&file, "openai-responses")[1..4]
        .iter()
        .map(|i| i["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["message", "function_call", "message"]);
}

#[test]
fn ids_the_api_refuses_are_refused_with_the_rule_named() {
    let long = "c".repeat(41);
    let t = Transcript::new(vec![
        user("u1", vec![Part::text("hi")]),
        assistant("a1", vec![call(&long)], openai("gpt-5")),
        result("r1", &long, vec![Part::text("ok")], false),
    ]);
    let (_dir, root) = root();
    let e = OpenaiPlugin
        .writer()
        .create(&root, "openai-chat", &t, &Default::default())
        .unwrap_err();
    assert!(
        e.to_string().contains("C3") || e.to_string().contains("40"),
        "{e}"
    );
    round_trip("openai-responses", &t);
    let longer = "c".repeat(65);
    let mut t = t;
    t.events[1] = assistant("a1", vec![call(&longer)], openai("gpt-5"));
    t.events[2] = result("r1", &longer, vec![Part::text("ok")], false);
    let e = OpenaiPlugin
        .writer()
        .create(&root, "openai-responses", &t, &Default::default())
        .unwrap_err();
    assert!(e.to_string().contains("R7"), "{e}");
}

#[test]
fn empty_texts_chat_does_not_send_read_back_in_place() {
    let t = Transcript::new(vec![
        user("u1", vec![Part::text("hi"), Part::text("")]),
        assistant(
            "a1",
            vec![AssistantPart::text(""), call("c1")],
            openai("gpt-5"),
        ),
        result("r1", "c1", vec![Part::text("")], false),
        user("u2", vec![Part::text("")]),
        assistant("a2", vec![AssistantPart::text("done")], openai("gpt-5")),
    ]);
    for target in TARGETS {
        let (file, body) = round_trip(target, &t);
        if target == "openai-chat" {
            assert!(!body.to_string().contains(r#""text":"""#), "{body}");
            let empty: Vec<&Value> = file["handoff"]["events"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|e| e.get("empty"))
                .collect();
            assert_eq!(empty, [&json!([1]), &json!([0]), &json!([0]), &json!([0])]);
        }
    }
}

#[test]
fn resolve_of_a_missing_id_is_not_found_and_append_keeps_the_id() {
    for target in TARGETS {
        let (_dir, root) = root();
        match OpenaiPlugin
            .resumer()
            .resolve(&root, target, "00000000-0000-4000-8000-00000000dead")
        {
            Err(PluginError::NotFound { target: t, .. }) => assert_eq!(t, target),
            other => panic!("{target}: expected NotFound, got {other:?}"),
        }
        let t = corpus("tool-error");
        let head = Transcript {
            events: t.events[..2].to_vec(),
            ..t.clone()
        };
        let session = create(&root, target, &head);
        OpenaiPlugin
            .append_id(&root, target, &session.id, &t.events[2..])
            .unwrap();
        equal(
            target,
            &t,
            &OpenaiPlugin.read_id(&root, target, &session.id).unwrap(),
        );
        let listed = OpenaiPlugin.reader().list(&root, target).unwrap();
        assert_eq!(listed.len(), 1);
        assert!(listed[0].owned);
    }
}

#[test]
fn a_file_whose_extras_disagree_with_its_history_is_malformed_naming_the_field() {
    let (_dir, root) = root();
    let session = create(&root, "openai-chat", &corpus("plain-chat"));
    let mut f = file(&session);
    f["handoff"]["events"][0]["parts"] = json!([[0, 0, 2]]);
    std::fs::write(&session.path, f.to_string()).unwrap();
    match OpenaiPlugin
        .reader()
        .read(ReadFrom::Session(&root, &session))
    {
        Err(PluginError::Malformed { field, .. }) => {
            assert_eq!(field.as_deref(), Some("handoff.events[0].parts"))
        }
        other => panic!("expected Malformed, got {other:?}"),
    }
}

#[test]
fn a_history_saved_without_extras_reads_as_the_dialect_reads_it() {
    let (dir, root) = root();
    let path = dir.path().join("openai-responses");
    std::fs::create_dir_all(&path).unwrap();
    let id = "11111111-1111-4111-8111-111111111111";
    std::fs::write(
        path.join(format!("{id}.json")),
        json!({"model": "gpt-5", "input": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "hello"}]}
        ]})
        .to_string(),
    )
    .unwrap();
    let t = OpenaiPlugin.read_id(&root, "openai-responses", id).unwrap();
    assert_eq!(t.events.len(), 2);
    assert!(
        !OpenaiPlugin
            .reader()
            .list(&root, "openai-responses")
            .unwrap()[0]
            .owned
    );
    let session = OpenaiPlugin
        .resumer()
        .resolve(&root, "openai-responses", id)
        .unwrap();
    assert!(OpenaiPlugin.writer().remove(&root, &session).is_err());
}
