//! The gemini-api target: the stored history is valid Gemini `contents` (G1–G7), reads back
//! exactly, resumes as the next request, and what would break a rule is refused by name.

use handoff_gemini::GeminiPlugin;
use handoff_sdk::dialect::gemini;
use handoff_sdk::serde_json::{self, json, Value};
use handoff_sdk::{
    AssistantPart, Body, CreateOptions, Event, Part, Plugin, PluginError, ReadFrom, ResumePlan,
    Signature, StoreRoot, Thinking, Timestamp, ToolCall, Transcript,
};

const TARGET: &str = "gemini-api";

fn root() -> (tempfile::TempDir, StoreRoot) {
    let dir = tempfile::tempdir().unwrap();
    let root = StoreRoot::new(dir.path().join("gemini-api")).unwrap();
    (dir, root)
}

fn ts(ms: i64) -> Timestamp {
    Timestamp::from_millis(1_790_000_000_000 + ms)
}

fn user(id: &str, text: &str) -> Event {
    Event::new(id, ts(0), Body::user_text(text))
}

fn call(id: &str, args: Value) -> AssistantPart {
    AssistantPart::ToolCall(ToolCall::new(id, "ls", args))
}

fn assistant(id: &str, content: Vec<AssistantPart>) -> Event {
    Event::new(id, ts(1), Body::assistant(content))
}

fn result(id: &str, call_id: &str, content: Vec<Part>, is_error: bool) -> Event {
    Event::new(
        id,
        ts(2),
        Body::ToolResult {
            call_id: call_id.into(),
            content,
            is_error,
        },
    )
}

fn google(value: &str) -> Option<Signature> {
    Some(Signature {
        provider: "google".into(),
        model: Some("gemini-3-pro".into()),
        value: value.into(),
        redacted: false,
    })
}

fn conversation() -> Transcript {
    let png = vec![0x89, b'P', b'N', b'G'];
    Transcript::new(vec![
        Event::new(
            "u1",
            ts(0),
            Body::User {
                content: vec![
                    Part::text("look"),
                    Part::Image {
                        media_type: "image/png".into(),
                        data: png.clone(),
                    },
                    Part::ImageUrl {
                        url: "gs://b/x.png".into(),
                    },
                ],
            },
        ),
        assistant(
            "a1",
            vec![
                AssistantPart::Thinking(Thinking {
                    text: "plan".into(),
                    signature: google("S1"),
                }),
                AssistantPart::text("two calls"),
                AssistantPart::Thinking(Thinking {
                    text: String::new(),
                    signature: google("S2").map(|s| Signature {
                        redacted: true,
                        ..s
                    }),
                }),
                call("c1", json!({"n": 12345678901234567890u64})),
                call("c2", json!({})),
                AssistantPart::text("after"),
            ],
        ),
        result(
            "r1",
            "c1",
            vec![
                Part::text("a"),
                Part::text("b"),
                Part::Image {
                    media_type: "image/png".into(),
                    data: png,
                },
            ],
            false,
        ),
        result("r2", "c2", vec![], true),
        user("u2", "next"),
        user("u3", "and more"),
        assistant("a2", vec![AssistantPart::text("done")]),
        assistant("a3", vec![AssistantPart::text("really")]),
    ])
}

fn create(root: &StoreRoot, t: &Transcript) -> Result<handoff_sdk::SessionRef, PluginError> {
    GeminiPlugin.writer().create(
        root,
        TARGET,
        t,
        &CreateOptions {
            cwd: Some("/p".into()),
            locator: None,
        },
    )
}

#[test]
fn the_history_round_trips_and_is_valid_contents() {
    let (_d, root) = root();
    let t = conversation();
    let session = create(&root, &t).unwrap();
    let got = GeminiPlugin
        .reader()
        .read(ReadFrom::Session(&root, &session))
        .unwrap();
    let cmp = GeminiPlugin.manifest().target(TARGET).unwrap().comparison();
    cmp.diff(&t, &got).unwrap();
    let file: Value = serde_json::from_slice(&std::fs::read(&session.path).unwrap()).unwrap();
    let contents = &file["contents"];
    gemini::validate_history(&json!({ "contents": contents })).unwrap();
    // G6 roles, G7 no empty part, merged turns, responses first in a user content, signatures on
    // the part they came on.
    let roles: Vec<&str> = contents
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "model", "user", "model"]);
    assert_eq!(contents[1]["parts"][2]["thoughtSignature"], "S2");
    assert!(contents[1]["parts"][2].get("functionCall").is_some());
    assert_eq!(
        contents[2]["parts"][0]["functionResponse"]["response"],
        json!({"output": ["a", "b"]})
    );
    assert_eq!(
        contents[2]["parts"][1]["functionResponse"]["response"],
        json!({"error": ""})
    );
    assert_eq!(contents[2]["parts"][2], json!({"text": "next"}));
    assert_eq!(file["handoff"]["events"].as_array().unwrap().len(), 8);
}

#[test]
fn resume_is_the_next_request_and_passes_g1_to_g7() {
    let (_d, root) = root();
    let session = create(&root, &conversation()).unwrap();
    let found = GeminiPlugin
        .resumer()
        .resolve(&root, TARGET, &session.id)
        .unwrap();
    assert_eq!(found, session);
    let ResumePlan::Request { dialect, body } = GeminiPlugin
        .resumer()
        .plan(&root, &session, "go on")
        .unwrap()
    else {
        panic!()
    };
    assert_eq!(dialect.name(), "gemini");
    gemini::validate(&body).unwrap();
    let contents = body["contents"].as_array().unwrap();
    assert_eq!(
        contents.last().unwrap(),
        &json!({"role": "user", "parts": [{"text": "go on"}]})
    );
    assert!(matches!(
        GeminiPlugin
            .resumer()
            .resolve(&root, TARGET, "00000000-0000-4000-8000-000000000000"),
        Err(PluginError::NotFound { .. })
    ));
}

#[test]
fn append_renders_the_whole_history_again() {
    let (_d, root) = root();
    let whole = conversation();
    for cut in [1, 2, 4, 6] {
        let mut prefix = whole.clone();
        let suffix = prefix.events.split_off(cut);
        let session = create(&root, &prefix).unwrap();
        GeminiPlugin
            .writer()
            .append(&root, &session, &suffix)
            .unwrap();
        let got = GeminiPlugin
            .reader()
            .read(ReadFrom::Session(&root, &session))
            .unwrap();
        GeminiPlugin
            .manifest()
            .target(TARGET)
            .unwrap()
            .comparison()
            .diff(&whole, &got)
            .unwrap();
    }
}

/// Each rule the writer enforces fails a transcript that breaks it, naming the event, and writes
/// nothing.
#[test]
fn what_breaks_a_rule_is_refused() {
    let cases = [
        (
            Transcript::new(vec![
                user("u", "hi"),
                assistant("a", vec![call("c", json!("x"))]),
            ]),
            "G3",
        ),
        (Transcript::new(vec![user("u", "")]), "G7"),
        (
            Transcript::new(vec![
                user("u", "hi"),
                assistant("a", vec![AssistantPart::text("")]),
            ]),
            "G7",
        ),
        (
            // Two calls, one answer, then the user speaks: the response turn is short (G2).
            Transcript::new(vec![
                user("u", "hi"),
                assistant("a", vec![call("c1", json!({})), call("c2", json!({}))]),
                result("r", "c1", vec![Part::text("x")], false),
                user("u2", "well?"),
            ]),
            "G2",
        ),
        (
            Transcript::new(vec![
                user("u", "hi"),
                assistant("a", vec![call("c", json!({}))]),
                result(
                    "r",
                    "c",
                    vec![
                        Part::Image {
                            media_type: "image/png".into(),
                            data: vec![1],
                        },
                        Part::text("late"),
                    ],
                    false,
                ),
            ]),
            "text after an image",
        ),
    ];
    for (t, rule) in cases {
        let (_d, root) = root();
        let e = create(&root, &t).unwrap_err().to_string();
        assert!(e.contains(rule), "{rule}: {e}");
        assert!(
            !root.path().exists() || std::fs::read_dir(root.path()).unwrap().next().is_none(),
            "{rule}: wrote something"
        );
    }
}

#[test]
fn a_file_whose_parts_disagree_with_its_events_is_an_error() {
    let (_d, root) = root();
    let session = create(&root, &conversation()).unwrap();
    let mut file: Value = serde_json::from_slice(&std::fs::read(&session.path).unwrap()).unwrap();
    file["contents"].as_array_mut().unwrap().pop();
    std::fs::write(&session.path, serde_json::to_vec(&file).unwrap()).unwrap();
    let e = GeminiPlugin
        .reader()
        .read(ReadFrom::Session(&root, &session))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(&session.id) && e.contains("handoff.events"),
        "{e}"
    );
    std::fs::write(&session.path, b"{\"contents\": [\n").unwrap();
    let e = GeminiPlugin
        .reader()
        .read(ReadFrom::Session(&root, &session))
        .unwrap_err()
        .to_string();
    assert!(e.contains(&format!("{}.json:2", session.id)), "{e}");
}

/// gemini-api's `owner` (which the SDK asks before an append or a remove) refuses a session whose
/// file is not the one its id names: `NotFound`, and the file is left as it was.
#[test]
fn a_session_handed_in_with_another_sessions_file_is_not_changed() {
    let (_d, root) = root();
    let first = create(&root, &conversation()).unwrap();
    let second = create(&root, &conversation()).unwrap();
    let crossed = handoff_sdk::SessionRef {
        path: second.path.clone(),
        ..first.clone()
    };
    let before = std::fs::read(&second.path).unwrap();
    let more = [user("more", "again")];
    for outcome in [
        GeminiPlugin
            .writer()
            .append(&root, &crossed, &more)
            .map(drop),
        GeminiPlugin.writer().remove(&root, &crossed),
    ] {
        assert!(
            matches!(outcome, Err(PluginError::NotFound { ref id, .. }) if *id == first.id),
            "{outcome:?}"
        );
    }
    assert_eq!(std::fs::read(&second.path).unwrap(), before);
}
