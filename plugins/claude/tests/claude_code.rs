//! The `claude-code` target: records as the real CLI writes them, the chain, append, ownership,
//! strict resume and errors that name the line and field.

use handoff_sdk::ById;
use std::path::Path;

use handoff_claude::{ClaudePlugin, CLAUDE_CODE, CLAUDE_CODE_VERSION};
use handoff_conformance::corpus;
use handoff_sdk::serde_json::{self, json, Value};
use handoff_sdk::{
    AssistantPart, Author, AuthorKind, Body, CreateOptions, Event, Part, PluginError, Reader,
    ResumePlan, Resumer, Signature, StoreRoot, Thinking, Timestamp, ToolCall, ToolInput,
    Transcript, WebSearch, Writer,
};

const CWD: &str = "/home/dev/my.proj";

fn store() -> (tempfile::TempDir, StoreRoot) {
    let dir = tempfile::tempdir().unwrap();
    let root = StoreRoot::new(dir.path().join("claude")).unwrap();
    (dir, root)
}

fn options() -> CreateOptions {
    CreateOptions {
        cwd: Some(CWD.into()),
        locator: Some("conv-1".into()),
    }
}

fn records(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn ev(id: &str, ms: i64, body: Body) -> Event {
    Event::new(id, Timestamp::from_millis(1_764_000_000_000 + ms), body)
}

fn user(id: &str, text: &str) -> Event {
    ev(
        id,
        0,
        Body::User {
            content: vec![Part::text(text)],
        },
    )
}

fn call(id: &str) -> AssistantPart {
    AssistantPart::ToolCall(ToolCall::new(id, "Bash", json!({"command": "ls"})))
}

fn result(id: &str, call_id: &str) -> Event {
    ev(
        id,
        3,
        Body::ToolResult {
            call_id: call_id.into(),
            content: vec![Part::text("out")],
            is_error: false,
        },
    )
}

fn assistant(id: &str, content: Vec<AssistantPart>) -> Event {
    ev(
        id,
        2,
        Body::Assistant {
            content,
            origin: None,
        },
    )
}

fn round_trip(t: &Transcript) -> (tempfile::TempDir, StoreRoot, String, Transcript) {
    let (dir, root) = store();
    let session = ClaudePlugin
        .create(&root, CLAUDE_CODE, t, &options())
        .unwrap();
    let back = ClaudePlugin
        .read_id(&root, CLAUDE_CODE, &session.id)
        .unwrap();
    let target = handoff_claude::manifest();
    let cmp = target.target(CLAUDE_CODE).unwrap().comparison();
    cmp.diff(t, &back).unwrap_or_else(|d| panic!("{d}"));
    (dir, root, session.id, back)
}

#[test]
fn records_look_like_the_cli_wrote_them() {
    let t = corpus::entry("parallel-tool-calls")
        .unwrap()
        .transcript
        .clone();
    let (_dir, root) = store();
    let session = ClaudePlugin
        .create(&root, CLAUDE_CODE, &t, &options())
        .unwrap();
    assert_eq!(
        session.path,
        root.path()
            .join("projects/-home-dev-my-proj")
            .join(format!("{}.jsonl", session.id))
    );
    let recs = records(&session.path);
    let mut prev: Option<String> = None;
    for (i, r) in recs.iter().enumerate() {
        assert_eq!(r["sessionId"], session.id.as_str(), "record {i}");
        assert_eq!(r["cwd"], CWD);
        assert_eq!(r["version"], CLAUDE_CODE_VERSION);
        assert_eq!(r["isSidechain"], false);
        assert_eq!(r["userType"], "external");
        assert!(uuid::Uuid::parse_str(r["uuid"].as_str().unwrap()).is_ok());
        assert!(Timestamp::parse(r["timestamp"].as_str().unwrap()).is_ok());
        assert_eq!(
            r.get("x-handoff").is_some(),
            i == 0,
            "the marker is on the first record only"
        );
        if r["message"]["content"][0]["type"] != "tool_result" {
            assert_eq!(
                r["parentUuid"].as_str().map(str::to_owned),
                prev,
                "record {i} continues the chain"
            );
        }
        prev = r["uuid"].as_str().map(str::to_owned);
    }
    assert_eq!(recs[0]["parentUuid"], Value::Null);
    assert_eq!(recs[0]["x-handoff"]["plugin"], "claude");
    assert_eq!(recs[0]["x-handoff"]["locator"], "conv-1");
    // One record per assistant block, sharing message.id; each result hangs on its own call.
    let calls: Vec<&Value> = recs
        .iter()
        .filter(|r| r["message"]["content"][0]["type"] == "tool_use")
        .collect();
    assert!(calls.len() >= 2);
    assert!(calls
        .iter()
        .all(|c| c["message"]["id"] == calls[0]["message"]["id"]));
    for r in recs
        .iter()
        .filter(|r| r["message"]["content"][0]["type"] == "tool_result")
    {
        let answered = &r["message"]["content"][0]["tool_use_id"];
        let own = calls
            .iter()
            .find(|c| &c["message"]["content"][0]["id"] == answered)
            .unwrap();
        assert_eq!(r["parentUuid"], own["uuid"]);
        assert_eq!(r["sourceToolAssistantUUID"], own["uuid"]);
        assert!(r["message"]["content"][0]["is_error"].is_boolean());
    }
    let back = ClaudePlugin
        .read_id(&root, CLAUDE_CODE, &session.id)
        .unwrap();
    handoff_sdk::transcript::Comparison::exact()
        .diff(&t, &back)
        .unwrap();
}

#[test]
fn foreign_tool_ids_are_mapped_and_mapped_back() {
    let t = Transcript::new(vec![
        user("u", "hi"),
        assistant("a", vec![call("functions.read:3"), call("call_a|fc_b")]),
        result("r1", "functions.read:3"),
        result("r2", "call_a|fc_b"),
    ]);
    let (_dir, root, id, back) = round_trip(&t);
    let path = ClaudePlugin.resolve(&root, CLAUDE_CODE, &id).unwrap().path;
    let text = std::fs::read_to_string(path).unwrap();
    assert!(!text.contains("functions.read:3") && text.contains("\"hx_"));
    let Body::ToolResult { call_id, .. } = &back.events[3].body else {
        panic!()
    };
    assert_eq!(call_id, "call_a|fc_b");
}

#[test]
fn anthropic_thinking_keeps_its_signature_and_foreign_thinking_is_set_aside() {
    let signed = |provider: &str, model: &str| {
        AssistantPart::Thinking(Thinking {
            text: format!("{provider} thinks"),
            signature: Some(Signature {
                provider: provider.into(),
                model: Some(model.into()),
                value: "c2ln".into(),
                redacted: false,
            }),
        })
    };
    let t = Transcript::new(vec![
        user("u", "hi"),
        assistant(
            "a",
            vec![
                signed("anthropic", "claude-opus-4-8"),
                AssistantPart::text("x"),
            ],
        ),
        assistant("b", vec![signed("openai", "gpt-5")]),
        assistant(
            "c",
            vec![signed("openai", "gpt-5"), AssistantPart::text("y")],
        ),
    ]);
    let (_dir, root, id, back) = round_trip(&t);
    assert_eq!(
        back.events.len(),
        3,
        "the turn of foreign thinking only is not written"
    );
    let Body::Assistant { content, .. } = &back.events[1].body else {
        panic!()
    };
    let AssistantPart::Thinking(th) = &content[0] else {
        panic!()
    };
    assert_eq!(
        th.signature.as_ref().unwrap().model.as_deref(),
        Some("claude-opus-4-8")
    );
    let path = ClaudePlugin.resolve(&root, CLAUDE_CODE, &id).unwrap().path;
    assert!(!std::fs::read_to_string(path)
        .unwrap()
        .contains("openai thinks"));
}

#[test]
fn unsigned_anthropic_thinking_is_refused_before_anything_is_written() {
    let t = Transcript::new(vec![
        user("u", "hi"),
        ev(
            "a",
            1,
            Body::Assistant {
                content: vec![AssistantPart::Thinking(Thinking {
                    text: "hm".into(),
                    signature: None,
                })],
                origin: Some(handoff_sdk::Origin {
                    provider: "anthropic".into(),
                    model: None,
                    api: None,
                }),
            },
        ),
    ]);
    let (_dir, root) = store();
    let err = ClaudePlugin
        .create(&root, CLAUDE_CODE, &t, &options())
        .unwrap_err();
    assert!(err.to_string().contains("event 1 (a)"), "{err}");
    assert!(!root.path().exists(), "nothing may be left behind");
}

#[test]
fn uncarried_parts_are_refused_by_event() {
    let t = Transcript::new(vec![ev(
        "u",
        0,
        Body::User {
            content: vec![Part::ImageUrl {
                url: "https://x/y.png".into(),
            }],
        },
    )]);
    let (_dir, root) = store();
    let err = ClaudePlugin
        .create(&root, CLAUDE_CODE, &t, &options())
        .unwrap_err();
    assert!(
        matches!(err, PluginError::NotCarried { index: 0, .. }),
        "{err:?}"
    );
    assert!(!root.path().exists());
}

#[test]
fn authors_and_origins_ride_in_an_extra_member() {
    let mut t = Transcript::new(vec![
        user("u", "hi"),
        assistant("a", vec![AssistantPart::text("ok")]),
    ]);
    t.events[0].author = Some(Author {
        kind: AuthorKind::Human,
        name: "Ada".into(),
    });
    let (_dir, root, id, back) = round_trip(&t);
    assert_eq!(back.events[0].author.as_ref().unwrap().name, "Ada");
    let recs = records(&ClaudePlugin.resolve(&root, CLAUDE_CODE, &id).unwrap().path);
    assert_eq!(recs[0]["handoff"]["author"]["name"], "Ada");
    assert_eq!(
        recs[1]["handoff"]["origin"],
        Value::Null,
        "an unknown origin stays unknown"
    );
}

#[test]
fn compaction_is_a_boundary_and_a_summary_record() {
    let t = Transcript::new(vec![
        user("u", "old"),
        assistant("a", vec![AssistantPart::text("older")]),
        ev(
            "c",
            5,
            Body::Compaction {
                summary: "This session is being continued…".into(),
                replaces_through: "a".into(),
            },
        ),
        user("u2", "new"),
    ]);
    let (_dir, root, id, back) = round_trip(&t);
    let recs = records(&ClaudePlugin.resolve(&root, CLAUDE_CODE, &id).unwrap().path);
    assert_eq!(recs[2]["type"], "system");
    assert_eq!(recs[2]["subtype"], "compact_boundary");
    assert_eq!(recs[2]["parentUuid"], Value::Null);
    assert_eq!(recs[2]["logicalParentUuid"], recs[1]["uuid"]);
    assert_eq!(recs[3]["isCompactSummary"], true);
    assert_eq!(recs[3]["parentUuid"], recs[2]["uuid"]);
    assert!(
        matches!(&back.events[2].body, Body::Compaction { replaces_through, .. } if *replaces_through == back.events[1].id)
    );
    // A compaction that keeps events in view: its boundary goes after the event it replaces
    // through, then the kept events, then the summary (the order Claude Code sends them in).
    let partial = Transcript::new(vec![
        user("u", "old"),
        assistant("a", vec![AssistantPart::text("kept")]),
        ev(
            "c",
            5,
            Body::Compaction {
                summary: "s".into(),
                replaces_through: "u".into(),
            },
        ),
        user("u2", "new"),
    ]);
    let (_dir, root, id, back) = round_trip(&partial);
    let recs = records(&ClaudePlugin.resolve(&root, CLAUDE_CODE, &id).unwrap().path);
    let kinds: Vec<&str> = recs
        .iter()
        .map(|r| r["subtype"].as_str().unwrap_or(r["type"].as_str().unwrap()))
        .collect();
    assert_eq!(
        kinds,
        ["user", "compact_boundary", "assistant", "user", "user"]
    );
    assert_eq!(recs[1]["logicalParentUuid"], recs[0]["uuid"]);
    assert_eq!(recs[2]["parentUuid"], recs[1]["uuid"]);
    assert_eq!(recs[3]["isCompactSummary"], true);
    assert_eq!(recs[3]["parentUuid"], recs[2]["uuid"]);
    assert!(
        matches!(&back.events[2].body, Body::Compaction { replaces_through, .. } if *replaces_through == back.events[0].id)
    );
    // A kept result whose call the compaction replaces would go to Claude without its call.
    let orphan = Transcript::new(vec![
        user("u", "old"),
        assistant("a", vec![call("c1")]),
        result("r1", "c1"),
        ev(
            "c",
            5,
            Body::Compaction {
                summary: "s".into(),
                replaces_through: "a".into(),
            },
        ),
    ]);
    let err = ClaudePlugin
        .create(&root, CLAUDE_CODE, &orphan, &options())
        .unwrap_err()
        .to_string();
    assert!(err.contains("event 3 (c)") && err.contains("r1"), "{err}");
}

#[test]
fn append_carries_a_compaction_that_keeps_new_events_only() {
    let t = Transcript::new(vec![
        user("u", "hi"),
        assistant("a", vec![AssistantPart::text("x")]),
    ]);
    let (_dir, root) = store();
    let s = ClaudePlugin
        .create(&root, CLAUDE_CODE, &t, &options())
        .unwrap();
    let first = ClaudePlugin.read_id(&root, CLAUDE_CODE, &s.id).unwrap();
    let compaction = |through: &str| {
        ev(
            "c",
            9,
            Body::Compaction {
                summary: "s".into(),
                replaces_through: through.into(),
            },
        )
    };
    // Keeping `a`, which the file already holds, would need a boundary before it.
    let before = std::fs::read(&s.path).unwrap();
    let err = ClaudePlugin
        .append_id(
            &root,
            CLAUDE_CODE,
            &s.id,
            &[compaction(&first.events[0].id)],
        )
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("event 2 (c)") && err.contains("already holds"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(&s.path).unwrap(),
        before,
        "a refused append writes nothing"
    );
    // Replacing through `a` and keeping the appended `u2`: boundary, `u2`, summary.
    ClaudePlugin
        .append_id(
            &root,
            CLAUDE_CODE,
            &s.id,
            &[user("u2", "kept"), compaction(&first.events[1].id)],
        )
        .unwrap();
    let recs = records(&s.path);
    let n = recs.len();
    assert_eq!(recs[n - 3]["subtype"], "compact_boundary");
    assert_eq!(recs[n - 3]["logicalParentUuid"], recs[n - 4]["uuid"]);
    assert_eq!(recs[n - 2]["message"]["content"], "kept");
    assert_eq!(recs[n - 1]["isCompactSummary"], true);
    let back = ClaudePlugin.read_id(&root, CLAUDE_CODE, &s.id).unwrap();
    assert_eq!(back.events.len(), 4);
    assert!(
        matches!(&back.events[3].body, Body::Compaction { replaces_through, .. } if *replaces_through == first.events[1].id)
    );
}

#[test]
fn append_continues_the_chain() {
    let t = Transcript::new(vec![
        user("u", "hi"),
        assistant("a", vec![AssistantPart::text("x"), call("c1"), call("c2")]),
    ]);
    let (_dir, root) = store();
    let s = ClaudePlugin
        .create(&root, CLAUDE_CODE, &t, &options())
        .unwrap();
    let before = records(&s.path);
    let suffix = vec![
        result("r1", "c1"),
        result("r2", "c2"),
        assistant("b", vec![AssistantPart::text("done")]),
        user("u2", "more"),
    ];
    ClaudePlugin
        .append_id(&root, CLAUDE_CODE, &s.id, &suffix)
        .unwrap();
    let after = records(&s.path);
    assert_eq!(
        &after[..before.len()],
        &before[..],
        "existing records are untouched"
    );
    // Results hang on their calls; the next turn on the last result.
    assert_eq!(after[before.len()]["parentUuid"], before[2]["uuid"]);
    assert_eq!(after[before.len() + 1]["parentUuid"], before[3]["uuid"]);
    assert_eq!(
        after[before.len() + 2]["parentUuid"],
        after[before.len() + 1]["uuid"]
    );
    let back = ClaudePlugin.read_id(&root, CLAUDE_CODE, &s.id).unwrap();
    let mut whole = t.clone();
    whole.events.extend(suffix);
    handoff_sdk::transcript::Comparison::exact()
        .diff(&whole, &back)
        .unwrap();
    // An append that would break the transcript is refused and changes nothing.
    let bytes = std::fs::read(&s.path).unwrap();
    assert!(ClaudePlugin
        .append_id(&root, CLAUDE_CODE, &s.id, &[result("r9", "never")])
        .is_err());
    assert_eq!(std::fs::read(&s.path).unwrap(), bytes);
}

#[test]
fn unmarked_sessions_are_not_changed_or_removed() {
    let t = Transcript::new(vec![user("u", "hi")]);
    let (_dir, root) = store();
    let s = ClaudePlugin
        .create(&root, CLAUDE_CODE, &t, &options())
        .unwrap();
    let mut recs = records(&s.path);
    recs[0].as_object_mut().unwrap().shift_remove("x-handoff");
    let foreign: String = recs.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(&s.path, &foreign).unwrap();
    assert!(matches!(
        ClaudePlugin.remove_id(&root, CLAUDE_CODE, &s.id),
        Err(PluginError::NotOwned { .. })
    ));
    assert!(matches!(
        ClaudePlugin.append_id(&root, CLAUDE_CODE, &s.id, &[user("v", "x")]),
        Err(PluginError::NotOwned { .. })
    ));
    assert_eq!(std::fs::read_to_string(&s.path).unwrap(), foreign);
    let listed = ClaudePlugin.list(&root, CLAUDE_CODE).unwrap();
    assert_eq!(listed.len(), 1);
    assert!(!listed[0].owned);
}

#[test]
fn resume_names_exactly_the_id_in_its_cwd() {
    let t = Transcript::new(vec![user("u", "hi")]);
    let (_dir, root) = store();
    let s = ClaudePlugin
        .create(&root, CLAUDE_CODE, &t, &options())
        .unwrap();
    let _decoy = ClaudePlugin
        .create(&root, CLAUDE_CODE, &t, &options())
        .unwrap();
    let ResumePlan::Command {
        program,
        args,
        cwd,
        close_stdin,
        ..
    } = ClaudePlugin
        .plan_id(&root, CLAUDE_CODE, &s.id, "go on")
        .unwrap()
    else {
        panic!("a CLI target resumes by command")
    };
    assert_eq!(program, "claude");
    assert_eq!(args, ["-p", "--resume", s.id.as_str(), "go on"]);
    assert_eq!(cwd.as_deref(), Some(Path::new(CWD)));
    assert!(close_stdin);
    let ResumePlan::Command { args, .. } = ClaudePlugin
        .plan_id(&root, CLAUDE_CODE, &s.id, "-x is a prompt")
        .unwrap()
    else {
        panic!()
    };
    assert_eq!(
        args,
        ["-p", "--resume", s.id.as_str(), "--", "-x is a prompt"]
    );
    let missing = ClaudePlugin
        .resolve(&root, CLAUDE_CODE, "00000000-0000-4000-8000-000000000000")
        .unwrap_err();
    assert!(matches!(missing, PluginError::NotFound { .. }));
    assert!(ClaudePlugin
        .plan_id(&root, CLAUDE_CODE, "../etc", "x")
        .is_err());
}

#[test]
fn malformed_lines_name_file_line_and_field() {
    let (_dir, root) = store();
    let s = ClaudePlugin
        .create(
            &root,
            CLAUDE_CODE,
            &Transcript::new(vec![
                user("u", "hi"),
                assistant("a", vec![AssistantPart::text("ok")]),
            ]),
            &options(),
        )
        .unwrap();
    let good = std::fs::read_to_string(&s.path).unwrap();
    let cases: Vec<(String, usize, Option<&str>)> = vec![
        (
            good.replacen("\"isSidechain\":false", "\"isSidechain\":\"no\"", 1),
            1,
            Some("isSidechain"),
        ),
        (
            good.replacen("\"timestamp\":\"", "\"timestamp\":\"yesterday", 1),
            1,
            Some("timestamp"),
        ),
        (format!("{good}{{\"type\":\"user\",\"uuid\":\"x\""), 3, None),
        (
            good.replacen("\"text\":\"ok\"", "\"text\":1", 1),
            2,
            Some("message.content[0].text"),
        ),
        // (A blank line is no longer an error: Claude Code 2.1.197 skips it, issue 15.)
    ];
    for (text, line, field) in cases {
        std::fs::write(&s.path, &text).unwrap();
        match ClaudePlugin.read_id(&root, CLAUDE_CODE, &s.id) {
            Err(PluginError::Malformed {
                file,
                line: l,
                field: f,
                message,
            }) => {
                assert_eq!(file, s.path);
                assert_eq!(l, Some(line), "{message}");
                assert_eq!(f.as_deref(), field, "{message}");
            }
            other => panic!("expected Malformed for {text}, got {other:?}"),
        }
    }
}

#[test]
fn a_dangling_parent_is_an_error_not_a_shorter_conversation() {
    let (_dir, root) = store();
    let s = ClaudePlugin
        .create(
            &root,
            CLAUDE_CODE,
            &Transcript::new(vec![
                user("u", "hi"),
                assistant("a", vec![AssistantPart::text("ok")]),
            ]),
            &options(),
        )
        .unwrap();
    let mut recs = records(&s.path);
    recs[1]["parentUuid"] = json!("00000000-0000-4000-8000-000000000000");
    std::fs::write(
        &s.path,
        recs.iter().map(|r| format!("{r}\n")).collect::<String>(),
    )
    .unwrap();
    let err = ClaudePlugin.read_id(&root, CLAUDE_CODE, &s.id).unwrap_err();
    assert!(
        matches!(err, PluginError::Malformed { line: Some(2), ref field, .. } if field.as_deref() == Some("parentUuid")),
        "{err:?}"
    );
}

#[test]
fn unknown_target_is_named() {
    let (_dir, root) = store();
    let err = ClaudePlugin
        .read_id(&root, "claude-desktop", "x")
        .unwrap_err();
    assert!(matches!(err, PluginError::UnknownTarget { ref target } if target == "claude-desktop"));
}

#[test]
fn read_each_streams_the_same_events_and_can_stop() {
    let t = corpus::entry("parallel-tool-calls")
        .unwrap()
        .transcript
        .clone();
    let (_dir, root) = store();
    let s = ClaudePlugin
        .create(&root, CLAUDE_CODE, &t, &options())
        .unwrap();
    let whole = ClaudePlugin.read_id(&root, CLAUDE_CODE, &s.id).unwrap();
    let mut streamed = Vec::new();
    ClaudePlugin
        .read_each_id(&root, CLAUDE_CODE, &s.id, &mut |e| {
            streamed.push(e);
            true
        })
        .unwrap();
    assert_eq!(streamed, whole.events);
    let mut first_two = Vec::new();
    ClaudePlugin
        .read_each_id(&root, CLAUDE_CODE, &s.id, &mut |e| {
            first_two.push(e);
            first_two.len() < 2
        })
        .unwrap();
    assert_eq!(first_two, whole.events[..2]);
}

/// A freeform call (Codex's `apply_patch`) is a `tool_use` of its structured form, marked in the
/// record's `handoff` member, and reads back as the freeform call, whole or streamed.
#[test]
fn a_freeform_call_is_its_structured_form_marked_and_read_back() {
    let patch = "*** Begin Patch\n*** Add File: a.txt\n+{\"not\": json}\n*** End Patch\n";
    let freeform = AssistantPart::ToolCall(ToolCall {
        id: "call_P1".into(),
        name: "apply_patch".into(),
        input: ToolInput::Freeform(patch.into()),
    });
    let t = Transcript::new(vec![
        user("u", "patch it"),
        assistant("a", vec![freeform, call("toolu_2")]),
        result("r1", "call_P1"),
        result("r2", "toolu_2"),
    ]);
    let (_dir, root, id, back) = round_trip(&t);
    let path = ClaudePlugin.resolve(&root, CLAUDE_CODE, &id).unwrap().path;
    let recs = records(&path);
    let uses: Vec<&Value> = recs
        .iter()
        .filter(|r| r["message"]["content"][0]["type"] == "tool_use")
        .collect();
    assert_eq!(
        uses[0]["message"]["content"][0]["input"],
        json!({"input": patch})
    );
    assert_eq!(uses[0]["handoff"]["freeform"], true);
    assert!(
        uses[1].get("handoff").is_none(),
        "a JSON call is not marked"
    );
    let mut streamed = Vec::new();
    ClaudePlugin
        .read_each_id(&root, CLAUDE_CODE, &id, &mut |e| {
            streamed.push(e);
            true
        })
        .unwrap();
    assert_eq!(streamed, back.events);
    // A marked record whose input is not the structured form is named, not guessed.
    let text = std::fs::read_to_string(&path).unwrap();
    let line = text
        .lines()
        .position(|l| l.contains("\"freeform\":true"))
        .unwrap()
        + 1;
    std::fs::write(
        &path,
        text.replacen("{\"input\":\"*** Begin", "{\"patch\":\"*** Begin", 1),
    )
    .unwrap();
    match ClaudePlugin.read_id(&root, CLAUDE_CODE, &id) {
        Err(PluginError::Malformed {
            line: l, field: f, ..
        }) => {
            assert_eq!(l, Some(line));
            assert_eq!(f.as_deref(), Some("message.content[0].input"));
        }
        other => panic!("expected Malformed, got {other:?}"),
    }
}

#[test]
fn a_web_search_is_refused_naming_the_event() {
    let search = AssistantPart::WebSearch(WebSearch {
        id: Some("ws_1".into()),
        status: Some("completed".into()),
        action: json!({"type": "search", "query": "q"}),
    });
    let t = Transcript::new(vec![
        user("u", "search"),
        assistant("a", vec![search, AssistantPart::text("found")]),
    ]);
    let (_dir, root) = store();
    match ClaudePlugin.create(&root, CLAUDE_CODE, &t, &options()) {
        Err(PluginError::NotCarried { index, feature, .. }) => {
            assert_eq!((index, feature), (1, handoff_sdk::Feature::WebSearch))
        }
        other => panic!("expected NotCarried, got {other:?}"),
    }
}
