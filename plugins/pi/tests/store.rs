//! The writer: the lines it writes, append from the leaf, ownership, refusals.

mod common;

use common::*;
use handoff_pi::{PiPlugin, HEADER_LIMIT, TARGET};
use handoff_sdk::serde_json::{json, Value};
use handoff_sdk::{
    AssistantPart, Author, AuthorKind, Body, ById, CreateOptions, Part, Plugin, PluginError,
    ReadFrom, SessionRef,
};

fn rich() -> handoff_sdk::Transcript {
    let mut u1 = user("e1", 0, "Look: ");
    if let Body::User { content } = &mut u1.body {
        content.push(Part::Image {
            media_type: "image/png".into(),
            data: vec![0x89, b'P', b'N', b'G', 0, 1, 2],
        });
    }
    u1.author = Some(Author {
        kind: AuthorKind::Human,
        name: "Alice".into(),
    });
    transcript(vec![
        u1,
        assistant(
            "e2",
            1,
            vec![
                thinking("Hmm.", "anthropic", "SIG1"),
                text("Two calls."),
                call("toolu_1", "Bash", json!({"command": "ls"})),
                call("toolu_2", "Bash", json!({"command": "false", "n": 1.5})),
            ],
            claude(),
        ),
        result("e3", 2, "toolu_1", vec![Part::text("a.txt")], false),
        result("e4", 3, "toolu_2", vec![], true),
        assistant("e5", 4, vec![text("One failed.")], claude()),
        compaction("e6", 5, "Listed files; one command failed.", "e5"),
        user("e7", 6, "Go on."),
        assistant("e8", 7, vec![text("Switching.")], gpt()),
    ])
}

#[test]
fn writes_the_lines_pi_writes() {
    let (_dir, root) = root();
    let t = rich();
    let session = create(&root, &t);
    let name = session.path.file_name().unwrap().to_str().unwrap();
    assert_eq!(
        session.path.parent().unwrap(),
        root.path().join("sessions/--home-dev-proj--")
    );
    assert_eq!(
        name,
        format!(
            "{}_{}.jsonl",
            at(0).to_rfc3339().replace([':', '.'], "-"),
            session.id
        )
    );
    let l = lines(&session.path);
    assert_eq!(
        l[0],
        json!({"type": "session", "version": 3, "id": session.id, "timestamp": at(0).to_rfc3339(),
               "cwd": CWD, "x-handoff": {"plugin": "pi"}})
    );
    let kinds: Vec<&str> = l[1..].iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "model_change",
            "message",
            "message",
            "message",
            "message",
            "message",
            "compaction",
            "message",
            "model_change",
            "message"
        ]
    );
    // One chain: each entry's parent is the entry before it; ids are 8 hex, unique.
    let mut parent = Value::Null;
    let mut ids = std::collections::HashSet::new();
    for e in &l[1..] {
        let id = e["id"].as_str().unwrap();
        assert!(
            id.len() == 8 && id.bytes().all(|b| b.is_ascii_hexdigit()),
            "{id}"
        );
        assert!(ids.insert(id.to_owned()));
        assert_eq!(e["parentId"], parent);
        parent = e["id"].clone();
    }
    assert_eq!(l[1]["provider"], "anthropic");
    assert_eq!(l[1]["modelId"], "claude-sonnet-4-5");
    let user = &l[2];
    assert_eq!(user["timestamp"], at(0).to_rfc3339());
    assert_eq!(user["message"]["timestamp"], at(0).millis());
    assert_eq!(
        user["message"]["content"],
        json!([{"type": "text", "text": "Look: "},
               {"type": "image", "data": "iVBORwABAg==", "mimeType": "image/png"}])
    );
    assert_eq!(
        user["x-handoff-event"],
        json!({"author": {"kind": "human", "name": "Alice"}})
    );
    let a = &l[3]["message"];
    assert_eq!(
        a["content"],
        json!([{"type": "thinking", "thinking": "Hmm.", "thinkingSignature": "SIG1"},
               {"type": "text", "text": "Two calls."},
               {"type": "toolCall", "id": "toolu_1", "name": "Bash", "arguments": {"command": "ls"}},
               {"type": "toolCall", "id": "toolu_2", "name": "Bash", "arguments": {"command": "false", "n": 1.5}}])
    );
    assert_eq!(
        (&a["api"], &a["provider"], &a["model"], &a["stopReason"]),
        (
            &json!("anthropic-messages"),
            &json!("anthropic"),
            &json!("claude-sonnet-4-5"),
            &json!("toolUse")
        )
    );
    assert_eq!(a["usage"]["cost"]["total"], 0);
    // The signature names no model (Claude Code's never do); pi's reading would say the turn's.
    assert_eq!(
        l[3]["x-handoff-event"],
        json!({"signature_models": [[0, null]]})
    );
    assert_eq!(
        l[5]["message"],
        json!({"role": "toolResult", "toolCallId": "toolu_2", "toolName": "Bash", "content": [],
               "isError": true, "timestamp": at(3).millis()})
    );
    assert_eq!(l[6]["message"]["stopReason"], "stop");
    // The compaction replaces everything before it: its first kept entry is itself.
    assert_eq!(l[7]["summary"], "Listed files; one command failed.");
    assert_eq!(l[7]["firstKeptEntryId"], l[7]["id"]);
    assert_eq!(l[7]["tokensBefore"], 0);
    // The model changes before the last turn.
    assert_eq!(l[9]["modelId"], "gpt-5");
    assert_eq!(l[10]["message"]["api"], "openai-responses");

    let back = PiPlugin
        .reader()
        .read(ReadFrom::Session(&root, &session))
        .unwrap();
    assert_eq!(back.cwd.as_deref(), Some(CWD));
    assert!(PiPlugin.manifest_comparison().diff(&t, &back).is_ok());
}

/// The comparison the target declares.
trait ManifestComparison {
    fn manifest_comparison(&self) -> handoff_sdk::Comparison;
}

impl ManifestComparison for PiPlugin {
    fn manifest_comparison(&self) -> handoff_sdk::Comparison {
        handoff_pi::target_manifest().comparison()
    }
}

/// A compaction with events between what it replaces and itself has its summary seen after
/// them (Codex's order); pi shows a summary before the entries it keeps, so the write is refused
/// naming the compaction. Right after what it replaces, the events it keeps follow it.
#[test]
fn a_compaction_keeping_events_before_it_is_refused_and_after_it_is_written() {
    let (_dir, root) = root();
    let kept_before = transcript(vec![
        user("e1", 0, "a"),
        assistant("e2", 1, vec![text("b")], claude()),
        user("e3", 2, "c"),
        assistant("e4", 3, vec![text("d")], claude()),
        compaction("e5", 4, "a and b", "e2"),
        user("e6", 5, "e"),
    ]);
    let e = PiPlugin
        .writer()
        .create(&root, TARGET, &kept_before, &CreateOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("event 4 (e5): body.replaces_through"), "{e}");
    let summary_first = transcript(vec![
        user("e1", 0, "a"),
        assistant("e2", 1, vec![text("b")], claude()),
        compaction("e5", 2, "a and b", "e2"),
        user("e3", 3, "c"),
        assistant("e4", 4, vec![text("d")], claude()),
        user("e6", 5, "e"),
    ]);
    let session = create(&root, &summary_first);
    let l = lines(&session.path);
    let c = l.iter().find(|e| e["type"] == "compaction").unwrap();
    assert_eq!(c["firstKeptEntryId"], c["id"]);
    let back = PiPlugin
        .reader()
        .read(ReadFrom::Session(&root, &session))
        .unwrap();
    assert_eq!(shape(&back), "UACUAU");
    let Body::Compaction {
        replaces_through, ..
    } = &back.events[2].body
    else {
        panic!()
    };
    assert_eq!(replaces_through, &back.events[1].id);
}

#[test]
fn thinking_keeps_its_signature_only_with_its_maker() {
    let (_dir, root) = root();
    let mut foreign = thinking("Theirs.", "openai", "ENC");
    if let AssistantPart::Thinking(t) = &mut foreign {
        t.signature.as_mut().unwrap().model = Some("gpt-5".into());
    }
    let mut other_model = thinking("Older.", "anthropic", "SIG0");
    if let AssistantPart::Thinking(t) = &mut other_model {
        t.signature.as_mut().unwrap().model = Some("claude-opus-4".into());
    }
    let t = transcript(vec![
        user("e1", 0, "q"),
        assistant(
            "e2",
            1,
            vec![
                foreign,
                other_model,
                thinking("Mine.", "anthropic", "SIG1"),
                text("A."),
            ],
            claude(),
        ),
    ]);
    let session = create(&root, &t);
    let l = lines(&session.path);
    let content = &l
        .iter()
        .find(|e| e["message"]["role"] == "assistant")
        .unwrap()["message"]["content"];
    assert_eq!(
        content,
        &json!([{"type": "thinking", "thinking": "Theirs."},
                {"type": "thinking", "thinking": "Older."},
                {"type": "thinking", "thinking": "Mine.", "thinkingSignature": "SIG1"},
                {"type": "text", "text": "A."}])
    );
    // The signatures pi would not replay ride in the extras, so the thinking reads back whole
    // (a Codex rollout's reasoning in a turn of another provider was read back unsigned, and
    // the comparison then set it aside on one side only: the continuation into pi was refused).
    let extras = &l
        .iter()
        .find(|e| e["message"]["role"] == "assistant")
        .unwrap()["x-handoff-event"]["unreplayed_signatures"];
    assert_eq!(extras[0][0], 0);
    assert_eq!(extras[0][1]["value"], "ENC");
    assert_eq!(extras[1][0], 1);
    let back = PiPlugin
        .reader()
        .read(ReadFrom::Session(&root, &session))
        .unwrap();
    handoff_sdk::Comparison::exact().diff(&t, &back).unwrap();
}

#[test]
fn an_origin_pi_cannot_spell_rides_in_the_event_member() {
    let (_dir, root) = root();
    let partial = Some(handoff_sdk::Origin {
        provider: "anthropic".into(),
        model: None,
        api: None,
    });
    let t = transcript(vec![
        user("e1", 0, "q"),
        assistant("e2", 1, vec![text("none")], None),
        user("e3", 2, "q"),
        assistant("e4", 3, vec![text("partial")], partial.clone()),
    ]);
    let session = create(&root, &t);
    let l = lines(&session.path);
    let answers: Vec<&Value> = l
        .iter()
        .filter(|e| e["message"]["role"] == "assistant")
        .collect();
    assert_eq!(answers[0]["message"]["provider"], "unknown");
    assert_eq!(answers[0]["x-handoff-event"], json!({"origin": null}));
    assert_eq!(answers[1]["message"]["model"], "unknown");
    assert_eq!(
        answers[1]["x-handoff-event"],
        json!({"origin": {"provider": "anthropic"}})
    );
    assert!(
        l.iter().all(|e| e["type"] != "model_change"),
        "no model to name"
    );
    let back = PiPlugin
        .reader()
        .read(ReadFrom::Session(&root, &session))
        .unwrap();
    let origins: Vec<Option<handoff_sdk::Origin>> = back
        .events
        .iter()
        .filter_map(|e| match &e.body {
            Body::Assistant { origin, .. } => Some(origin.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(origins, [None, partial]);
    assert!(PiPlugin.manifest_comparison().diff(&t, &back).is_ok());
}

/// A freeform call (Codex's `apply_patch`) is a toolCall of its structured form, listed in the
/// entry's `x-handoff-event`, and reads back as the freeform call, whole or streamed; a web
/// search is refused naming the event.
#[test]
fn a_freeform_call_is_its_structured_form_marked_and_read_back() {
    let (_dir, root) = root();
    let patch = "*** Begin Patch\n*** Add File: a.txt\n+1.0\n*** End Patch\n";
    let freeform = AssistantPart::ToolCall(handoff_sdk::ToolCall {
        id: "call_P1".into(),
        name: "apply_patch".into(),
        input: handoff_sdk::ToolInput::Freeform(patch.into()),
    });
    let t = transcript(vec![
        user("e1", 0, "patch it"),
        assistant(
            "e2",
            1,
            vec![
                text("patching"),
                call("call_2", "bash", json!({"command": "ls"})),
                freeform,
            ],
            gpt(),
        ),
        result("e3", 2, "call_2", vec![Part::text("a")], false),
        result("e4", 3, "call_P1", vec![Part::text("Success.")], false),
    ]);
    let session = create(&root, &t);
    let l = lines(&session.path);
    let answer = l
        .iter()
        .find(|e| e["message"]["role"] == "assistant")
        .unwrap();
    assert_eq!(
        answer["message"]["content"][2]["arguments"],
        json!({"input": patch})
    );
    assert_eq!(answer["x-handoff-event"], json!({"freeform_calls": [2]}));
    let back = PiPlugin
        .reader()
        .read(ReadFrom::Session(&root, &session))
        .unwrap();
    PiPlugin
        .manifest_comparison()
        .diff(&t, &back)
        .unwrap_or_else(|d| panic!("{d}"));
    let mut streamed = Vec::new();
    PiPlugin
        .reader()
        .read_each(ReadFrom::Session(&root, &session), &mut |e| {
            streamed.push(e);
            true
        })
        .unwrap();
    assert_eq!(streamed, back.events);
    // A listed block whose arguments are not the structured form is named, not guessed.
    let text = std::fs::read_to_string(&session.path).unwrap();
    std::fs::write(
        &session.path,
        text.replacen("{\"input\":\"*** Begin", "{\"patch\":\"*** Begin", 1),
    )
    .unwrap();
    let err = PiPlugin
        .reader()
        .read(ReadFrom::Session(&root, &session))
        .unwrap_err()
        .to_string();
    assert!(err.contains("message.content[2].arguments"), "{err}");

    let search = AssistantPart::WebSearch(handoff_sdk::WebSearch {
        id: None,
        status: None,
        action: json!({"type": "search", "query": "q"}),
    });
    let t = transcript(vec![
        user("e1", 0, "search"),
        assistant("e2", 1, vec![search], gpt()),
    ]);
    match PiPlugin
        .writer()
        .create(&root, TARGET, &t, &CreateOptions::default())
    {
        Err(PluginError::NotCarried { index, feature, .. }) => {
            assert_eq!((index, feature), (1, handoff_sdk::Feature::WebSearch))
        }
        other => panic!("expected NotCarried, got {other:?}"),
    }
}

#[test]
fn append_continues_from_the_leaf_whoever_wrote_it() {
    let (_dir, root) = root();
    let t = transcript(vec![
        user("e1", 0, "one"),
        assistant("e2", 1, vec![text("two")], claude()),
    ]);
    let session = create(&root, &t);
    // pi resumes it: a thinking-level entry, then its own turn (as pi 0.73.1 appends).
    let mut l = lines(&session.path);
    let leaf = l.last().unwrap()["id"].as_str().unwrap().to_owned();
    let mut file = std::fs::read_to_string(&session.path).unwrap();
    for e in [
        json!({"type": "thinking_level_change", "id": "0000aaaa", "parentId": leaf, "timestamp": ts(10), "thinkingLevel": "off"}),
        user_entry("0000bbbb", Some("0000aaaa"), 11, "three"),
        assistant_entry(
            "0000cccc",
            Some("0000bbbb"),
            12,
            json!([{"type": "text", "text": "four"}]),
            "stop",
        ),
    ] {
        file.push_str(&e.to_string());
        file.push('\n');
    }
    std::fs::write(&session.path, file).unwrap();
    let more = vec![
        user("n1", 20, "five"),
        assistant("n2", 21, vec![text("six")], claude()),
    ];
    let appended = PiPlugin.writer().append(&root, &session, &more).unwrap();
    assert_eq!(appended, session);
    let after = lines(&session.path);
    assert_eq!(
        after.len(),
        l.len() + 3 + 3,
        "user, model_change, assistant"
    );
    l = after;
    let first_new = &l[l.len() - 3];
    assert_eq!(first_new["parentId"], "0000cccc");
    assert_eq!(first_new["message"]["content"][0]["text"], "five");
    // pi's fake model turn was last: the anthropic turn names its model again.
    assert_eq!(l[l.len() - 2]["type"], "model_change");
    let back = PiPlugin
        .reader()
        .read(ReadFrom::Session(&root, &session))
        .unwrap();
    let texts: Vec<String> = back.events.iter().map(text_of).collect();
    assert_eq!(texts, ["one", "two", "three", "four", "five", "six"]);
}

#[test]
fn append_after_a_branch_continues_the_branch() {
    let (_dir, root) = root();
    let id = "01a22fc4-0000-7000-8000-00000000b4a1";
    let mut h = header(id);
    h["x-handoff"] = json!({"plugin": "pi"});
    let path = write_session(
        &root,
        id,
        &[
            h,
            user_entry("a0000001", None, 1, "root"),
            assistant_entry(
                "a0000002",
                Some("a0000001"),
                2,
                json!([{"type": "text", "text": "first try"}]),
                "stop",
            ),
            // The user went back to the root and asked again: the leaf is this branch.
            user_entry("a0000003", Some("a0000001"), 3, "again"),
        ],
    );
    let session = PiPlugin.resumer().resolve(&root, TARGET, id).unwrap();
    assert_eq!(session.path, path);
    PiPlugin
        .writer()
        .append(
            &root,
            &session,
            &[assistant("n1", 9, vec![text("second try")], claude())],
        )
        .unwrap();
    let l = lines(&path);
    assert_eq!(l.last().unwrap()["parentId"], l[l.len() - 2]["id"]);
    assert_eq!(l[l.len() - 2]["type"], "model_change");
    assert_eq!(l[l.len() - 2]["parentId"], "a0000003");
    let back = PiPlugin
        .reader()
        .read(ReadFrom::Session(&root, &session))
        .unwrap();
    let texts: Vec<String> = back.events.iter().map(text_of).collect();
    assert_eq!(texts, ["root", "again", "second try"]);
}

#[test]
fn append_refuses_what_would_break_the_history_and_leaves_the_file() {
    let (_dir, root) = root();
    let session = create(
        &root,
        &transcript(vec![
            user("e1", 0, "q"),
            assistant("e2", 1, vec![text("a")], claude()),
        ]),
    );
    let before = std::fs::read(&session.path).unwrap();
    let orphan = result("n1", 5, "nobody", vec![Part::text("x")], false);
    assert!(matches!(
        PiPlugin.writer().append(&root, &session, &[orphan]),
        Err(PluginError::InvalidTranscript(_))
    ));
    let url = handoff_sdk::Event::new(
        "n2",
        at(6),
        Body::User {
            content: vec![Part::ImageUrl {
                url: "https://example.com/a.png".into(),
            }],
        },
    );
    assert!(matches!(
        PiPlugin.writer().append(&root, &session, &[url]),
        Err(PluginError::NotCarried { .. })
    ));
    assert_eq!(std::fs::read(&session.path).unwrap(), before);
}

#[test]
fn refusals_write_nothing() {
    let (_dir, root) = root();
    let long_cwd = format!("/{}", "d".repeat(HEADER_LIMIT));
    let mut t = transcript(vec![user("e1", 0, "q")]);
    t.cwd = Some(long_cwd);
    let err = PiPlugin
        .writer()
        .create(&root, TARGET, &t, &CreateOptions::default())
        .unwrap_err();
    assert!(err.to_string().contains("512"), "{err}");
    let strings = transcript(vec![
        user("e1", 0, "q"),
        assistant(
            "e2",
            1,
            vec![call("c1", "apply_patch", json!("*** Begin Patch"))],
            gpt(),
        ),
    ]);
    let err = PiPlugin
        .writer()
        .create(&root, TARGET, &strings, &CreateOptions::default())
        .unwrap_err();
    assert!(
        err.to_string().contains("body.content[0].arguments"),
        "{err}"
    );
    let hidden = transcript(vec![
        user("e1", 0, "a"),
        assistant("e2", 1, vec![text("b")], claude()),
        compaction("e3", 2, "first", "e2"),
        user("e4", 3, "c"),
        assistant("e5", 4, vec![text("d")], claude()),
        // Keeps e3 in view: pi would not show the first summary.
        compaction("e6", 5, "second", "e2"),
    ]);
    let err = PiPlugin
        .writer()
        .create(&root, TARGET, &hidden, &CreateOptions::default())
        .unwrap_err();
    assert!(err.to_string().contains("event 2 (e3)"), "{err}");
    let big = serde_json_number("12345678901234567890123");
    let precise = transcript(vec![
        user("e1", 0, "a"),
        assistant("e2", 1, vec![call("c1", "f", json!({"n": big}))], claude()),
    ]);
    assert!(matches!(
        PiPlugin
            .writer()
            .create(&root, TARGET, &precise, &CreateOptions::default()),
        Err(PluginError::NotCarried { .. })
    ));
    assert!(
        !root.path().join("sessions").exists(),
        "nothing left behind"
    );
}

fn serde_json_number(text: &str) -> Value {
    handoff_sdk::serde_json::from_str(text).unwrap()
}

#[test]
fn remove_refuses_a_session_it_did_not_mark() {
    let (_dir, root) = root();
    let id = "01a22fc4-0000-7000-8000-0000000f0e16";
    let path = write_session(
        &root,
        id,
        &[header(id), user_entry("a0000001", None, 1, "theirs")],
    );
    let err = PiPlugin.remove_id(&root, TARGET, id).unwrap_err();
    assert!(matches!(err, PluginError::NotOwned { .. }), "{err}");
    assert!(path.exists());
    let ours = create(&root, &transcript(vec![user("e1", 0, "ours")]));
    PiPlugin.writer().remove(&root, &ours).unwrap();
    assert!(!ours.path.exists());
    assert!(path.exists(), "the folder keeps the other session");
}

#[test]
fn lists_every_folder_with_names_and_titles() {
    let (_dir, root) = root();
    let ours = create(&root, &transcript(vec![user("e1", 0, "first question")]));
    let other = root.path().join("sessions/--srv-app--");
    std::fs::create_dir_all(&other).unwrap();
    let id = "01a22fc4-0000-7000-8000-00000000a11e";
    let mut text = String::new();
    for l in [
        json!({"type": "session", "version": 3, "id": id, "timestamp": ts(0), "cwd": "/srv/app"}),
        json!({"type": "message", "id": "a0000001", "parentId": null, "timestamp": ts(1),
               "message": {"role": "user", "content": [{"type": "image", "data": "AA==", "mimeType": "image/png"},
                                                        {"type": "text", "text": "what"}, {"type": "text", "text": "is this"}], "timestamp": 1}}),
        json!({"type": "session_info", "id": "a0000002", "parentId": "a0000001", "timestamp": ts(2), "name": " Old "}),
        json!({"type": "session_info", "id": "a0000003", "parentId": "a0000002", "timestamp": ts(3), "name": "Triage"}),
    ] {
        text.push_str(&l.to_string());
        text.push('\n');
    }
    std::fs::write(
        other.join(format!("2026-11-30T00-00-00-000Z_{id}.jsonl")),
        text,
    )
    .unwrap();
    std::fs::write(other.join("garbage.jsonl"), "not json\n").unwrap();
    let listed = PiPlugin.reader().list(&root, TARGET).unwrap();
    let mut ids: Vec<(&str, bool)> = listed
        .iter()
        .map(|s| (s.session.id.as_str(), s.owned))
        .collect();
    ids.sort();
    let mut want = vec![(ours.id.as_str(), true), (id, false)];
    want.sort();
    assert_eq!(ids, want);
    let summary =
        handoff_pi::summary(&other.join(format!("2026-11-30T00-00-00-000Z_{id}.jsonl"))).unwrap();
    assert_eq!(summary.name.as_deref(), Some("Triage"));
    assert_eq!(summary.title.as_deref(), Some("what is this"));
    assert_eq!(summary.cwd.as_deref(), Some("/srv/app"));
    let mine = handoff_pi::summary(&ours.path).unwrap();
    assert_eq!(
        (mine.name, mine.title.as_deref()),
        (None, Some("first question"))
    );
    // The listing itself carries what pi's list shows: the name, else the first user text.
    let titled: Vec<(&str, Option<&str>, Option<&str>)> = {
        let mut t: Vec<_> = listed
            .iter()
            .map(|s| (s.session.id.as_str(), s.title.as_deref(), s.cwd.as_deref()))
            .collect();
        t.sort();
        t
    };
    assert!(
        titled.contains(&(id, Some("Triage"), Some("/srv/app"))),
        "{titled:?}"
    );
    assert!(
        titled
            .iter()
            .any(|(i, title, _)| *i == ours.id && *title == Some("first question")),
        "{titled:?}"
    );
}

/// pi's `owner` (which the SDK asks, under the session's lock, before an append or a remove)
/// refuses a file whose header names another session, naming the header's `id`; the file stays.
#[test]
fn a_session_handed_in_with_another_sessions_file_is_not_changed() {
    let (_dir, root) = root();
    let first = create(&root, &transcript(vec![user("e1", 0, "first")]));
    let second = create(&root, &transcript(vec![user("e1", 0, "second")]));
    let crossed = SessionRef {
        path: second.path.clone(),
        ..first.clone()
    };
    let before = std::fs::read(&second.path).unwrap();
    let more = [user("e2", 1, "again")];
    for outcome in [
        PiPlugin.writer().append(&root, &crossed, &more).map(drop),
        PiPlugin.writer().remove(&root, &crossed),
    ] {
        match outcome {
            Err(PluginError::Malformed { file, field, .. }) => {
                assert_eq!((file, field.as_deref()), (second.path.clone(), Some("id")))
            }
            other => panic!("expected Malformed naming the header's id, got {other:?}"),
        }
    }
    assert_eq!(std::fs::read(&second.path).unwrap(), before);
}
