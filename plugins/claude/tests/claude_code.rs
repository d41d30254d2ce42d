//! The `claude-code` target: records as the real CLI writes them, the chain, append, ownership,
//! strict resume and errors that name the line and field.

use handoff_sdk::ById;
use std::path::Path;

use handoff_claude::{ClaudePlugin, CLAUDE_CODE, CLAUDE_CODE_VERSION};
use handoff_conformance::corpus;
use handoff_sdk::serde_json::{self, json, Value};
use handoff_sdk::{
    AssistantPart, Author, AuthorKind, Body, CreateOptions, Event, Part, Plugin, PluginError,
    ReadFrom, Signature, StoreRoot, Thinking, Timestamp, ToolCall, ToolInput, Transcript,
    WebSearch,
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

/// Writes `records` as the file at `path`, one JSON line each.
fn write_records(path: &Path, records: &[Value]) {
    std::fs::write(
        path,
        records.iter().map(|r| format!("{r}\n")).collect::<String>(),
    )
    .unwrap();
}

/// The records of session `id` of `root`'s Claude Code store.
fn records_of(root: &StoreRoot, id: &str) -> Vec<Value> {
    records(
        &ClaudePlugin
            .resumer()
            .resolve(root, CLAUDE_CODE, id)
            .unwrap()
            .path,
    )
}

fn ev(id: &str, ms: i64, body: Body) -> Event {
    Event::new(id, Timestamp::from_millis(1_764_000_000_000 + ms), body)
}

fn user(id: &str, text: &str) -> Event {
    ev(id, 0, Body::user_text(text))
}

fn call(id: &str) -> AssistantPart {
    AssistantPart::ToolCall(ToolCall::new(id, "Bash", json!({"command": "ls"})))
}

fn result(id: &str, call_id: &str) -> Event {
    ev(id, 3, Body::tool_output(call_id, "out"))
}

fn assistant(id: &str, content: Vec<AssistantPart>) -> Event {
    ev(id, 2, Body::assistant(content))
}

fn round_trip(t: &Transcript) -> (tempfile::TempDir, StoreRoot, String, Transcript) {
    let (dir, root) = store();
    let session = ClaudePlugin
        .writer()
        .create(&root, CLAUDE_CODE, t, &options())
        .unwrap();
    let back = ClaudePlugin
        .read_id(&root, CLAUDE_CODE, &session.id)
        .unwrap();
    let target = handoff_sdk::Plugin::manifest(&handoff_claude::ClaudePlugin);
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
        .writer()
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
    let path = ClaudePlugin
        .resumer()
        .resolve(&root, CLAUDE_CODE, &id)
        .unwrap()
        .path;
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
    let path = ClaudePlugin
        .resumer()
        .resolve(&root, CLAUDE_CODE, &id)
        .unwrap()
        .path;
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
        .writer()
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
        .writer()
        .create(&root, CLAUDE_CODE, &t, &options())
        .unwrap_err();
    assert!(
        matches!(err, PluginError::NotCarried { index: 0, .. }),
        "{err:?}"
    );
    assert!(!root.path().exists());
}

/// Assistant events in a row (a Gemini CLI chat's model turns, pi's split turns) are one message
/// for Claude Code, which sends consecutive records as one message only when they share
/// `message.id` (else two assistant messages in a row, which the API's alternation rule A10
/// forbids): the writer gives them one id, marks where each event after the first starts, and
/// the reader takes them apart there. A turn that calls a tool is never joined.
#[test]
fn assistant_events_in_a_row_are_one_message_and_read_back_apart() {
    let mut later = assistant("a2", vec![AssistantPart::text("second"), call("c1")]);
    later.timestamp = Timestamp::from_millis(1_764_000_000_005);
    let t = Transcript::new(vec![
        user("u", "hi"),
        assistant("a1", vec![AssistantPart::text("first")]),
        later,
        result("r", "c1"),
        assistant("a3", vec![AssistantPart::text("after the call")]),
        assistant("a4", vec![AssistantPart::text("and more")]),
    ]);
    let (_dir, root, id, back) = round_trip(&t);
    assert_eq!(back.events.len(), 6, "every event reads back apart");
    let recs = records_of(&root, &id);
    let answers: Vec<&Value> = recs.iter().filter(|r| r["type"] == "assistant").collect();
    let ids: Vec<&Value> = answers.iter().map(|r| &r["message"]["id"]).collect();
    let joined: Vec<bool> = answers
        .iter()
        .map(|r| r["handoff"]["joined"] == true)
        .collect();
    // a1 | a2 (text, call) | a3 | a4: a1 and a2 share an id; a2's call ends the run, so a3 opens
    // a message of its own, which a4 joins.
    assert_eq!(ids[0], ids[1]);
    assert_eq!(ids[1], ids[2]);
    assert_ne!(ids[2], ids[3]);
    assert_eq!(ids[3], ids[4]);
    assert_eq!(joined, [false, true, false, false, true]);
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
    let recs = records_of(&root, &id);
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
    let recs = records_of(&root, &id);
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
    let recs = records_of(&root, &id);
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
        .writer()
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
        .writer()
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
        .writer()
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
        .writer()
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
    let listed = ClaudePlugin.reader().list(&root, CLAUDE_CODE).unwrap();
    assert_eq!(listed.len(), 1);
    assert!(!listed[0].owned);
}

#[test]
fn resume_names_exactly_the_id_in_its_cwd() {
    let t = Transcript::new(vec![user("u", "hi")]);
    let (_dir, root) = store();
    let s = ClaudePlugin
        .writer()
        .create(&root, CLAUDE_CODE, &t, &options())
        .unwrap();
    let _decoy = ClaudePlugin
        .writer()
        .create(&root, CLAUDE_CODE, &t, &options())
        .unwrap();
    let plan = ClaudePlugin
        .plan_id(&root, CLAUDE_CODE, &s.id, "go on")
        .unwrap();
    let command = plan.command().expect("a CLI target resumes by command");
    assert_eq!(command.program, "claude");
    assert_eq!(
        command.interactive_args.as_deref(),
        Some(&["--resume".to_owned(), s.id.clone()][..])
    );
    assert_eq!(command.args, ["-p", "--resume", s.id.as_str(), "go on"]);
    assert_eq!(command.cwd.as_deref(), Some(Path::new(CWD)));
    assert!(command.close_stdin);
    let plan = ClaudePlugin
        .plan_id(&root, CLAUDE_CODE, &s.id, "-x is a prompt")
        .unwrap();
    assert_eq!(
        plan.command().expect("a command").args,
        ["-p", "--resume", s.id.as_str(), "--", "-x is a prompt"]
    );
    let missing = ClaudePlugin
        .resumer()
        .resolve(&root, CLAUDE_CODE, "00000000-0000-4000-8000-000000000000")
        .unwrap_err();
    assert!(matches!(missing, PluginError::NotFound { .. }));
    assert!(ClaudePlugin
        .plan_id(&root, CLAUDE_CODE, "../etc", "x")
        .is_err());
}

/// A subagent's thread (sidechain records only, as claude-code-viewer's 2.0.28
/// `agent-test-hash-123.jsonl`) reads as that thread, but no resume is planned: Claude Code
/// 2.1.197 and 2.1.332 find no conversation in it ("No conversation found with session ID").
#[test]
fn a_subagent_thread_reads_but_is_not_planned_for_resume() {
    let (_dir, root) = store();
    let s = ClaudePlugin
        .writer()
        .create(
            &root,
            CLAUDE_CODE,
            &Transcript::new(vec![
                user("u", "Run the test suite"),
                assistant("a", vec![AssistantPart::text("I'll run it.")]),
            ]),
            &options(),
        )
        .unwrap();
    let mut recs = records(&s.path);
    for r in &mut recs {
        if r.get("isSidechain").is_some() {
            r["isSidechain"] = json!(true);
        }
    }
    write_records(&s.path, &recs);
    let t = ClaudePlugin.read_id(&root, CLAUDE_CODE, &s.id).unwrap();
    assert_eq!(t.events.len(), 2);
    let err = ClaudePlugin
        .plan_id(&root, CLAUDE_CODE, &s.id, "go on")
        .unwrap_err()
        .to_string();
    assert!(err.contains("subagent's thread"), "{err}");
    assert!(err.contains(&s.path.display().to_string()), "{err}");
}

#[test]
fn malformed_lines_name_file_line_and_field() {
    let (_dir, root) = store();
    let s = ClaudePlugin
        .writer()
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

/// A parent that is not in the file: Claude Code (2.1.197, 2.1.332) goes on to the record of the
/// thread written at most 5 s before, closest in time; with none, handoff names the line rather
/// than read a conversation without its beginning.
#[test]
fn a_dangling_parent_goes_on_by_time_or_is_an_error_not_a_shorter_conversation() {
    let (_dir, root) = store();
    let s = ClaudePlugin
        .writer()
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
    let write = |recs: &[Value]| write_records(&s.path, recs);
    write(&recs);
    let t = ClaudePlugin.read_id(&root, CLAUDE_CODE, &s.id).unwrap();
    assert_eq!(
        t.events.len(),
        2,
        "the answer goes on to the prompt before it"
    );
    // Written more than 5 s after anything else: nothing to go on to.
    let asked = Timestamp::parse(recs[0]["timestamp"].as_str().unwrap()).unwrap();
    recs[1]["timestamp"] = json!(Timestamp::from_millis(asked.millis() + 5001).to_rfc3339());
    write(&recs);
    let err = ClaudePlugin.read_id(&root, CLAUDE_CODE, &s.id).unwrap_err();
    assert!(
        matches!(err, PluginError::Malformed { line: Some(2), ref field, .. } if field.as_deref() == Some("parentUuid")),
        "{err:?}"
    );
}

/// A record of a kind Claude Code does not keep among its messages (VibeCodingTracker's
/// `file-history-delta`) is no link of the chain: its child goes on by time, here to the first of
/// two records written at the same millisecond, as Claude Code does (the second, a local
/// command's output, is then off the conversation).
#[test]
fn a_record_of_an_unkept_kind_is_no_link_its_child_goes_on_by_time() {
    let (_dir, root) = store();
    let s = ClaudePlugin
        .writer()
        .create(
            &root,
            CLAUDE_CODE,
            &Transcript::new(vec![
                user("u", "hi"),
                assistant("a", vec![AssistantPart::text("ok")]),
                user("u2", "/exit"),
                assistant("a2", vec![AssistantPart::text("bye")]),
            ]),
            &options(),
        )
        .unwrap();
    let mut recs = records(&s.path);
    let at = |recs: &[Value], kind: &str, n: usize| {
        recs.iter()
            .enumerate()
            .filter(|(_, r)| r["type"] == kind)
            .nth(n)
            .unwrap()
            .0
    };
    let (command, answer) = (at(&recs, "user", 1), at(&recs, "assistant", 1));
    // The first turn a few seconds earlier, so the only ties are the two records below.
    let then = Timestamp::parse(recs[command]["timestamp"].as_str().unwrap()).unwrap();
    for (n, i) in [at(&recs, "user", 0), at(&recs, "assistant", 0)]
        .into_iter()
        .enumerate()
    {
        let earlier = then.millis() - 3000 + 1000 * n as i64;
        recs[i]["timestamp"] = json!(Timestamp::from_millis(earlier).to_rfc3339());
    }
    let mut output = recs[command].clone();
    output["uuid"] = json!("00000000-0000-4000-8000-0000000000a1");
    output["parentUuid"] = recs[command]["uuid"].clone();
    output["message"]["content"] =
        json!("<local-command-stdout>(no content)</local-command-stdout>");
    let mut delta = output.clone();
    delta["type"] = json!("file-history-delta");
    delta.as_object_mut().unwrap().remove("message");
    delta["uuid"] = json!("00000000-0000-4000-8000-0000000000a2");
    delta["parentUuid"] = output["uuid"].clone();
    recs[answer]["parentUuid"] = delta["uuid"].clone();
    recs[answer]["timestamp"] = recs[command]["timestamp"].clone();
    recs.insert(answer, delta);
    recs.insert(answer, output);
    write_records(&s.path, &recs);
    let t = ClaudePlugin.read_id(&root, CLAUDE_CODE, &s.id).unwrap();
    let texts: Vec<String> = t
        .events
        .iter()
        .map(|e| match &e.body {
            Body::User { content } => format!("{content:?}"),
            Body::Assistant { content, .. } => format!("{content:?}"),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(t.events.len(), 4, "{texts:#?}");
    assert!(
        !texts.iter().any(|t| t.contains("local-command-stdout")),
        "{texts:#?}"
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
        .writer()
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

/// A hand-made session file's records (one JSON object each) at `projects/<slug>/<id>.jsonl`.
fn session_file(dir: &Path, records: &[Value]) -> std::path::PathBuf {
    let path = dir.join("00000000-0000-4000-8000-0000000000aa.jsonl");
    write_records(&path, records);
    path
}

/// A message record as Claude Code writes one (`uuid` and `parentUuid` shortened to tags).
fn record(kind: &str, uuid: &str, parent: Option<&str>, second: u32, message: Value) -> Value {
    let id = |tag: &str| format!("00000000-0000-4000-8000-{tag:0>12}");
    json!({"parentUuid": parent.map(id), "isSidechain": false, "type": kind,
        "message": message, "uuid": id(uuid),
        "timestamp": format!("2026-11-30T00:41:{second:02}.000Z"),
        "cwd": CWD, "sessionId": "00000000-0000-4000-8000-0000000000aa"})
}

fn assistant_message(id: &str, block: Value) -> Value {
    json!({"id": id, "type": "message", "role": "assistant", "model": "claude-opus-4-8",
        "content": [block], "stop_reason": null, "usage": {"input_tokens": 1, "output_tokens": 1}})
}

fn tool_use(id: &str) -> Value {
    json!({"type": "tool_use", "id": id, "name": "Bash", "input": {"command": "ls"}})
}

fn tool_result(id: &str) -> Value {
    json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id,
        "content": format!("out of {id}"), "is_error": false}]})
}

/// `read_path`, checked to give the same events as `read_path_each` (the two-pass read).
fn read_both(path: &Path) -> Result<Transcript, PluginError> {
    read_both_with(ClaudePlugin.reader(), path)
}

/// [`read_both`] as Claude Code 2.1.197 sends the file (it fails where 2.1.332 passes over a
/// record whose message is malformed).
fn read_both_as_oldest(path: &Path) -> Result<Transcript, PluginError> {
    read_both_with(
        &handoff_claude::ClaudePluginReadingAs::version(CLAUDE_CODE_VERSION),
        path,
    )
}

fn read_both_with(
    reader: &dyn handoff_sdk::Reader,
    path: &Path,
) -> Result<Transcript, PluginError> {
    let whole = reader.read(ReadFrom::File(CLAUDE_CODE, path));
    let mut streamed = Vec::new();
    let each = reader.read_each(ReadFrom::File(CLAUDE_CODE, path), &mut |e| {
        streamed.push(e);
        true
    });
    match (&whole, each) {
        (Ok(t), Ok(_)) => assert_eq!(t.events, streamed),
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
        (a, b) => panic!("read_path {a:?} but read_path_each {b:?}"),
    }
    whole
}

fn texts_and_calls(t: &Transcript) -> Vec<String> {
    t.events
        .iter()
        .flat_map(|e| match &e.body {
            Body::User { content } => content
                .iter()
                .map(|p| match p {
                    Part::Text { text } => format!("user {text}"),
                    _ => "user image".into(),
                })
                .collect(),
            Body::Assistant { content, .. } => content
                .iter()
                .map(|p| match p {
                    AssistantPart::Text { text } => format!("text {text}"),
                    AssistantPart::ToolCall(c) => format!("call {}", c.id),
                    AssistantPart::Thinking(_) => "thinking".into(),
                    AssistantPart::WebSearch(_) => "web search".into(),
                })
                .collect(),
            Body::ToolResult { call_id, .. } => vec![format!("result {call_id}")],
            Body::Compaction { .. } => vec!["compaction".into()],
        })
        .collect()
}

#[test]
fn meta_user_records_are_read_in_their_place_and_written_back_as_meta() {
    let dir = tempfile::tempdir().unwrap();
    let mut caveat = record(
        "user",
        "2",
        Some("1"),
        2,
        json!({"role": "user", "content": "Caveat: The messages below were generated by the user \
            while running local commands."}),
    );
    caveat["isMeta"] = json!(true);
    let path = session_file(
        dir.path(),
        &[
            record(
                "user",
                "1",
                None,
                1,
                json!({"role": "user", "content": "/init"}),
            ),
            caveat,
            record(
                "assistant",
                "3",
                Some("2"),
                3,
                assistant_message("msg_1", json!({"type": "text", "text": "ok"})),
            ),
        ],
    );
    let t = read_both(&path).unwrap();
    assert_eq!(
        texts_and_calls(&t),
        [
            "user /init",
            "user Caveat: The messages below were generated by the user while running local \
             commands.",
            "text ok"
        ]
    );
    assert_eq!(t.events[1].opaque["claude"], json!({"isMeta": true}));
    assert!(t.events[0].opaque.is_empty() && t.events[2].opaque.is_empty());
    // Claude Code → Claude Code: the record is written back as meta, and reads back the same.
    let (_dir, root, id, back) = round_trip(&t);
    let path = ClaudePlugin
        .resumer()
        .resolve(&root, CLAUDE_CODE, &id)
        .unwrap()
        .path;
    let metas: Vec<bool> = records(&path)
        .iter()
        .map(|r| r.get("isMeta") == Some(&json!(true)))
        .collect();
    assert_eq!(metas, [false, true, false]);
    assert_eq!(back.events[1].opaque, t.events[1].opaque);
}

#[test]
fn a_turn_of_no_known_model_is_written_with_claude_codes_synthetic_model() {
    use handoff_sdk::Origin;
    let origins = [
        None,
        Some(Origin {
            provider: "openai".into(),
            model: None,
            api: Some("openai-responses".into()),
        }),
        Some(Origin {
            provider: "anthropic".into(),
            model: None,
            api: Some("anthropic-messages".into()),
        }),
    ];
    for origin in origins {
        let mut answer = assistant("a", vec![AssistantPart::text("ok")]);
        answer.body = Body::Assistant {
            content: vec![AssistantPart::text("ok")],
            origin: origin.clone(),
        };
        let t = Transcript::new(vec![user("u", "hi"), answer]);
        let (_dir, root, id, back) = round_trip(&t);
        let path = ClaudePlugin
            .resumer()
            .resolve(&root, CLAUDE_CODE, &id)
            .unwrap()
            .path;
        assert_eq!(records(&path)[1]["message"]["model"], "<synthetic>");
        let Body::Assistant { origin: read, .. } = &back.events[1].body else {
            panic!()
        };
        assert_eq!(read, &origin, "the origin reads back as it was");
    }
}

/// A streamed turn (text, then two parallel calls) in Claude Code 2.1.197's layout: the records
/// chained text → call 1 → call 2, each result on its own call, the answer on the last result.
fn streamed_turn() -> Vec<Value> {
    vec![
        record(
            "user",
            "1",
            None,
            1,
            json!({"role": "user", "content": "go"}),
        ),
        record(
            "assistant",
            "2",
            Some("1"),
            2,
            assistant_message("msg_1", json!({"type": "text", "text": "I will run two"})),
        ),
        record(
            "assistant",
            "3",
            Some("2"),
            3,
            assistant_message("msg_1", tool_use("toolu_a")),
        ),
        record(
            "assistant",
            "4",
            Some("3"),
            4,
            assistant_message("msg_1", tool_use("toolu_b")),
        ),
        record("user", "5", Some("3"), 5, tool_result("toolu_a")),
        record("user", "6", Some("4"), 6, tool_result("toolu_b")),
        record(
            "assistant",
            "7",
            Some("6"),
            7,
            assistant_message("msg_2", json!({"type": "text", "text": "done"})),
        ),
    ]
}

#[test]
fn a_turns_records_are_read_in_chain_order_whatever_their_order_in_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let expected = [
        "user go",
        "text I will run two",
        "call toolu_a",
        "call toolu_b",
        "result toolu_a",
        "result toolu_b",
        "text done",
    ];
    let mut genuine = streamed_turn();
    // Claude Code names the leaf after each turn (without it, it resumes from the last message
    // in file order, which a reversed file would change).
    genuine.push(json!({"type": "last-prompt", "lastPrompt": "go",
        "leafUuid": "00000000-0000-4000-8000-000000000007",
        "sessionId": "00000000-0000-4000-8000-0000000000aa"}));
    let t = read_both(&session_file(dir.path(), &genuine)).unwrap();
    assert_eq!(texts_and_calls(&t), expected);
    // Every pair of adjacent lines swapped, and the whole file reversed: the chain decides.
    let mut swapped = genuine.clone();
    for pair in swapped.chunks_mut(2) {
        pair.reverse();
    }
    let t = read_both(&session_file(dir.path(), &swapped)).unwrap();
    assert_eq!(texts_and_calls(&t), expected);
    let mut reversed = genuine.clone();
    reversed.reverse();
    let t = read_both(&session_file(dir.path(), &reversed)).unwrap();
    assert_eq!(texts_and_calls(&t), expected);
}

#[test]
fn results_off_the_chain_follow_the_turn_by_timestamp() {
    let dir = tempfile::tempdir().unwrap();
    // Three parallel calls; the results of the first two are off the chain (the answer hangs on
    // the third's). Written in the file b's result first, but a's is earlier: Claude Code sends
    // them by timestamp, then the one on the chain.
    let mut records = streamed_turn();
    records.insert(
        4,
        record(
            "assistant",
            "8",
            Some("4"),
            4,
            assistant_message("msg_1", tool_use("toolu_c")),
        ),
    );
    let result_a = records.remove(5);
    records.insert(6, result_a);
    // b's result hangs on its call; c's (on the chain) on c's call, and the answer on it.
    records[5]["parentUuid"] = json!("00000000-0000-4000-8000-000000000004");
    records.push(record("user", "9", Some("8"), 9, tool_result("toolu_c")));
    let answer = records.remove(7);
    let mut answer = answer;
    answer["parentUuid"] = json!("00000000-0000-4000-8000-000000000009");
    answer["timestamp"] = json!("2026-11-30T00:41:10.000Z");
    records.push(answer);
    let t = read_both(&session_file(dir.path(), &records)).unwrap();
    assert_eq!(
        texts_and_calls(&t),
        [
            "user go",
            "text I will run two",
            "call toolu_a",
            "call toolu_b",
            "call toolu_c",
            "result toolu_a",
            "result toolu_b",
            "result toolu_c",
            "text done",
        ]
    );
}

#[test]
fn a_malformed_record_off_the_conversation_does_not_stop_the_read() {
    let dir = tempfile::tempdir().unwrap();
    let mut records = vec![
        record(
            "user",
            "1",
            None,
            1,
            json!({"role": "user", "content": "hi"}),
        ),
        record(
            "assistant",
            "2",
            Some("1"),
            2,
            assistant_message("msg_1", json!({"type": "text", "text": "ok"})),
        ),
        // An abandoned branch with claude-code-log's misspelt content and timestamp.
        record(
            "user",
            "3",
            Some("2"),
            3,
            json!({"role": "user", "contenst": [{"type": "text", "text": "lost"}]}),
        ),
        record(
            "user",
            "4",
            Some("2"),
            4,
            json!({"role": "user", "content": "again"}),
        ),
        record(
            "assistant",
            "5",
            Some("4"),
            5,
            assistant_message("msg_2", json!({"type": "text", "text": "fine"})),
        ),
    ];
    let t = read_both(&session_file(dir.path(), &records)).unwrap();
    assert_eq!(
        texts_and_calls(&t),
        ["user hi", "text ok", "user again", "text fine"]
    );
    // The same fault on the conversation is, as 2.1.197 reads, an error naming the file, the line
    // and the field; 2.1.332 passes over the record (`read_rules.rs`).
    records[2]["message"] = json!({"role": "user", "content": "lost"});
    records[3]["message"] = json!({"role": "user", "contenst": "again"});
    let path = session_file(dir.path(), &records);
    assert_eq!(
        texts_and_calls(&read_both(&path).unwrap()),
        ["user hi", "text ok", "text fine"]
    );
    let err = read_both_as_oldest(&path).unwrap_err();
    assert!(
        matches!(&err, PluginError::Malformed { file, line: Some(4), field, .. }
            if file == &path && field.as_deref() == Some("message.content")),
        "{err:?}"
    );
    // A timestamp misspelt on the conversation is none: Claude Code 2.1.197 and 2.1.332 keep
    // such a record, and its event takes the time of the one before it.
    records[3]["message"] = json!({"role": "user", "content": "again"});
    let ts = records[4]
        .as_object_mut()
        .unwrap()
        .remove("timestamp")
        .unwrap();
    records[4]["timesstamp"] = ts.clone();
    let t = read_both(&session_file(dir.path(), &records)).unwrap();
    assert_eq!(
        texts_and_calls(&t),
        ["user hi", "text ok", "user again", "text fine"]
    );
    assert_eq!(t.events[3].timestamp, t.events[2].timestamp);
    // One that does not parse is an error naming the field.
    records[4]["timestamp"] = json!("yesterday");
    let path = session_file(dir.path(), &records);
    let err = read_both(&path).unwrap_err();
    assert!(
        matches!(&err, PluginError::Malformed { line: Some(5), field, .. }
            if field.as_deref() == Some("timestamp")),
        "{err:?}"
    );
}

#[test]
fn lines_claude_code_keeps_no_record_of_are_skipped_and_a_broken_record_only_matters_on_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let hi = record(
        "user",
        "1",
        None,
        1,
        json!({"role": "user", "content": "hi"}),
    );
    let ok = record(
        "assistant",
        "2",
        Some("1"),
        2,
        assistant_message("msg_1", json!({"type": "text", "text": "ok"})),
    );
    // The answer first written with a message that is no object (claude-code-log's edge cases),
    // then again, whole, under its uuid: the later record wins.
    let mut broken_ok = ok.clone();
    broken_ok["message"] = json!("error");
    let mut no_uuid = ok.clone();
    no_uuid.as_object_mut().unwrap().remove("uuid");
    let lines = [
        hi.to_string(),
        broken_ok.to_string(),
        "\"massive error\"".into(),
        "42".into(),
        "[1]".into(),
        "{\"silly\": \"this\"}".into(),
        no_uuid.to_string(),
        ok.to_string(),
    ];
    let path = dir
        .path()
        .join("00000000-0000-4000-8000-0000000000bb.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let t = read_both(&path).unwrap();
    assert_eq!(texts_and_calls(&t), ["user hi", "text ok"]);
    // Without the whole copy the broken record is the conversation's leaf: as 2.1.197 reads, an
    // error naming its line and field; 2.1.332 passes over it.
    let whole_ok = ok.to_string();
    let lines: Vec<&String> = lines.iter().filter(|l| **l != whole_ok).collect();
    std::fs::write(
        &path,
        lines.iter().map(|l| format!("{l}\n")).collect::<String>(),
    )
    .unwrap();
    assert_eq!(texts_and_calls(&read_both(&path).unwrap()), ["user hi"]);
    let err = read_both_as_oldest(&path).unwrap_err();
    assert!(
        matches!(&err, PluginError::Malformed { file, line: Some(2), field, .. }
            if file == &path && field.as_deref() == Some("message")),
        "{err:?}"
    );
    // A line that is not JSON is still an error, wherever it is.
    std::fs::write(&path, format!("{hi}\n{{\"type\":\n{ok}\n")).unwrap();
    let err = read_both(&path).unwrap_err();
    assert!(
        matches!(&err, PluginError::Malformed { line: Some(2), .. }),
        "{err:?}"
    );
}

#[test]
fn results_out_of_timestamp_order_are_chained_so_they_read_back_as_written() {
    let at = |ms: i64, e: Event| Event {
        timestamp: Timestamp::from_millis(1_764_000_000_000 + ms),
        ..e
    };
    let t = Transcript::new(vec![
        user("u", "go"),
        assistant("a", vec![call("c1"), call("c2"), call("c3")]),
        // The second result is earlier than the first (as Claude Code 1.0.x wrote them).
        at(30, result("r1", "c1")),
        at(10, result("r2", "c2")),
        at(20, result("r3", "c3")),
        at(40, assistant("b", vec![AssistantPart::text("done")])),
    ]);
    let (_dir, root, id, back) = round_trip(&t);
    let ids: Vec<&str> = back
        .events
        .iter()
        .filter_map(|e| match &e.body {
            Body::ToolResult { call_id, .. } => Some(call_id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(ids, ["c1", "c2", "c3"]);
    let path = ClaudePlugin
        .resumer()
        .resolve(&root, CLAUDE_CODE, &id)
        .unwrap()
        .path;
    let recs = records(&path);
    // user, three call records, three results, the answer.
    assert_eq!(recs.len(), 8);
    assert_eq!(
        recs[4]["parentUuid"], recs[1]["uuid"],
        "the first on its call"
    );
    assert_eq!(
        recs[5]["parentUuid"], recs[4]["uuid"],
        "an earlier one chained"
    );
    assert_eq!(
        recs[6]["parentUuid"], recs[5]["uuid"],
        "and every one after it"
    );
    assert_eq!(recs[7]["parentUuid"], recs[6]["uuid"]);
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
    let path = ClaudePlugin
        .resumer()
        .resolve(&root, CLAUDE_CODE, &id)
        .unwrap()
        .path;
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
    match ClaudePlugin
        .writer()
        .create(&root, CLAUDE_CODE, &t, &options())
    {
        Err(PluginError::NotCarried { index, feature, .. }) => {
            assert_eq!((index, feature), (1, handoff_sdk::Feature::WebSearch))
        }
        other => panic!("expected NotCarried, got {other:?}"),
    }
}
