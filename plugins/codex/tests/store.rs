//! Write → read → compare, append, remove, resume and bad input, on a temporary CODEX_HOME.

use handoff_sdk::ById;
use std::path::Path;

use handoff_codex::{CodexPlugin, TARGET};
use handoff_sdk::{
    AssistantPart, Author, AuthorKind, Body, CreateOptions, Event, Origin, Part, Plugin,
    PluginError, ReadFrom, Signature, StoreRoot, Thinking, Timestamp, ToolCall, ToolInput,
    Transcript, WebSearch,
};
use serde_json::{json, Value};

fn at(ms: i64) -> Timestamp {
    Timestamp::from_millis(1_795_999_300_000 + ms)
}

fn ev(id: &str, ms: i64, body: Body) -> Event {
    Event::new(id, at(ms), body)
}

fn user(id: &str, ms: i64, text: &str) -> Event {
    ev(id, ms, Body::user_text(text))
}

fn origin(provider: &str, model: &str) -> Option<Origin> {
    Some(Origin {
        provider: provider.into(),
        model: Some(model.into()),
        api: Some("openai-responses".into()),
    })
}

fn call(id: &str, cmd: &str) -> AssistantPart {
    AssistantPart::ToolCall(ToolCall::new(
        id,
        "exec_command",
        json!({"cmd": cmd, "n": 12345678901234567890u64, "f": 1.5e-7}),
    ))
}

fn result(id: &str, ms: i64, call_id: &str, content: Vec<Part>, is_error: bool) -> Event {
    ev(
        id,
        ms,
        Body::ToolResult {
            call_id: call_id.into(),
            content,
            is_error,
        },
    )
}

fn png() -> Part {
    Part::Image {
        media_type: "image/png".into(),
        data: b"\x89PNG\r\n\x1a\n\0\x01\x02\xff".to_vec(),
    }
}

/// Everything the target carries, plus foreign thinking it sets aside.
fn rich() -> Transcript {
    let mut alice = user("u1", 0, "List the files, Ünïcödé ✓ עברית e\u{301}");
    alice.author = Some(Author {
        kind: AuthorKind::Human,
        name: "Alice".into(),
    });
    if let Body::User { content } = &mut alice.body {
        content.push(png());
        content.push(Part::ImageUrl {
            url: "https://example.com/a.png".into(),
        });
    }
    let mut t = Transcript::new(vec![
        alice,
        ev(
            "a1",
            1_001,
            Body::Assistant {
                content: vec![
                    AssistantPart::Thinking(Thinking {
                        text: "use two commands".into(),
                        signature: Some(Signature {
                            provider: "openai".into(),
                            model: Some("gpt-5".into()),
                            value: "gAAAAencrypted".into(),
                            redacted: false,
                        }),
                    }),
                    AssistantPart::text("Running both."),
                    AssistantPart::text("Second text part."),
                    call("call_1", "ls"),
                    call("call_2", "false"),
                    call("call_3", "screenshot"),
                    call("call_4", "touch x"),
                ],
                origin: origin("openai", "gpt-5"),
            },
        ),
        result(
            "r1",
            1_002,
            "call_1",
            vec![Part::text("a.txt\nb.txt")],
            false,
        ),
        result("r2", 1_003, "call_2", vec![Part::text("exit 1")], true),
        result(
            "r3",
            1_004,
            "call_3",
            vec![Part::text("shot"), png()],
            false,
        ),
        result("r4", 1_005, "call_4", vec![], false),
        ev(
            "a2",
            1_006,
            Body::Assistant {
                content: vec![
                    AssistantPart::Thinking(Thinking {
                        text: "claude thinks".into(),
                        signature: Some(Signature {
                            provider: "anthropic".into(),
                            model: None,
                            value: "sig".into(),
                            redacted: false,
                        }),
                    }),
                    AssistantPart::text("Done."),
                ],
                origin: origin("anthropic", "claude-sonnet-4-5"),
            },
        ),
        // Only foreign thinking: set aside entirely.
        ev(
            "a3",
            1_007,
            Body::Assistant {
                content: vec![AssistantPart::Thinking(Thinking {
                    text: "more".into(),
                    signature: None,
                })],
                origin: origin("anthropic", "claude-sonnet-4-5"),
            },
        ),
        user("u2", 2_000, "And now?"),
        ev(
            "a4",
            2_100,
            Body::assistant(vec![
                AssistantPart::text("before"),
                AssistantPart::Thinking(Thinking {
                    text: String::new(),
                    signature: Some(Signature {
                        provider: "openai".into(),
                        model: None,
                        value: "redacted-blob".into(),
                        redacted: true,
                    }),
                }),
                AssistantPart::text("after"),
            ]),
        ),
        ev(
            "c1",
            2_200,
            Body::Compaction {
                summary: "The user listed files.".into(),
                replaces_through: "a2".into(),
            },
        ),
        user(
            "u3",
            3_000,
            "<environment_context>typed by the user</environment_context>",
        ),
        ev("a5", 3_001, Body::assistant(vec![])),
    ]);
    t.cwd = Some("/home/dev/proj".into());
    t
}

fn root() -> (tempfile::TempDir, StoreRoot) {
    let dir = tempfile::tempdir().unwrap();
    let root = StoreRoot::new(dir.path().join("codex")).unwrap();
    (dir, root)
}

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn comparison() -> handoff_sdk::Comparison {
    CodexPlugin::target_manifest().comparison()
}

#[test]
fn round_trip_of_everything_the_target_carries() {
    let (_dir, root) = root();
    let t = rich();
    let session = CodexPlugin
        .writer()
        .create(&root, TARGET, &t, &CreateOptions::default())
        .unwrap();
    let back = CodexPlugin.read_id(&root, TARGET, &session.id).unwrap();
    comparison()
        .diff(&t, &back)
        .unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(back.cwd.as_deref(), Some("/home/dev/proj"));
    // Ids ride along too.
    let ids: Vec<&str> = back.events.iter().map(|e| e.id.as_str()).collect();
    assert_eq!(
        ids,
        ["u1", "a1", "r1", "r2", "r3", "r4", "a2", "u2", "a4", "c1", "u3", "a5"]
    );
}

#[test]
fn the_file_has_the_shape_codex_lists_and_resumes() {
    let (_dir, root) = root();
    let t = rich();
    let options = CreateOptions {
        cwd: Some("/work/elsewhere".into()),
        locator: Some("conv-1".into()),
    };
    let session = CodexPlugin
        .writer()
        .create(&root, TARGET, &t, &options)
        .unwrap();
    let name = session
        .path
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .to_owned();
    assert!(name.starts_with("rollout-") && name.ends_with(&format!("-{}.jsonl", session.id)));
    let id = uuid::Uuid::parse_str(&session.id).unwrap();
    assert_eq!(id.get_version_num(), 7);
    let rel = session.path.strip_prefix(root.path()).unwrap();
    assert_eq!(
        rel.components().count(),
        5,
        "sessions/YYYY/MM/DD/file: {rel:?}"
    );

    let records = lines(&session.path);
    let meta = &records[0];
    assert_eq!(meta["type"], "session_meta");
    assert_eq!(meta["timestamp"], "2026-11-30T00:41:40.000Z");
    let payload = &meta["payload"];
    assert_eq!(payload["id"], session.id.as_str());
    assert_eq!(payload["cwd"], "/work/elsewhere");
    assert_eq!(payload["originator"], "codex_cli_rs");
    assert_eq!(payload["cli_version"], "0.171.0");
    assert_eq!(payload["source"], "cli");
    assert_eq!(payload["model_provider"], "openai");
    assert_eq!(
        payload["x-handoff"],
        json!({"plugin": "codex", "locator": "conv-1"})
    );

    let kinds: Vec<String> = records
        .iter()
        .map(|r| match r["type"].as_str().unwrap() {
            "response_item" | "event_msg" => {
                format!(
                    "{}:{}",
                    r["type"].as_str().unwrap(),
                    r["payload"]["type"].as_str().unwrap()
                )
            }
            other => other.to_owned(),
        })
        .collect();
    assert_eq!(
        kinds[..12],
        [
            "session_meta",
            "event_msg:task_started",
            "turn_context",
            "response_item:message",
            "event_msg:user_message",
            "response_item:reasoning",
            "response_item:message",
            "response_item:function_call",
            "response_item:function_call",
            "response_item:function_call",
            "response_item:function_call",
            "event_msg:agent_message",
        ]
    );
    // All calls, then all outputs, in call order.
    assert_eq!(kinds[12..16], ["response_item:function_call_output"; 4]);
    assert_eq!(kinds.iter().filter(|k| *k == "turn_context").count(), 3);
    assert_eq!(
        kinds
            .iter()
            .filter(|k| *k == "event_msg:task_complete")
            .count(),
        3
    );
    assert_eq!(kinds.iter().filter(|k| *k == "compacted").count(), 1);
    assert_eq!(kinds.last().unwrap(), "event_msg:task_complete");

    let call = &records[7]["payload"];
    assert_eq!(call["call_id"], "call_1");
    assert!(call["arguments"].is_string(), "arguments are a JSON string");
    assert_eq!(
        call["arguments"].as_str().unwrap(),
        r#"{"cmd":"ls","n":12345678901234567890,"f":1.5e-7}"#
    );
    let failed = &records[13]["payload"];
    assert_eq!(failed["output"], "exit 1");
    assert_eq!(failed["x-handoff-event"]["is_error"], true);
    let image_output = &records[14]["payload"]["output"];
    assert_eq!(image_output[1]["type"], "input_image");
    assert!(image_output[1]["image_url"]
        .as_str()
        .unwrap()
        .starts_with("data:image/png;base64,"));
    assert_eq!(records[15]["payload"]["output"], json!([]));
    assert_eq!(records[5]["payload"]["encrypted_content"], "gAAAAencrypted");
    assert_eq!(records[3]["timestamp"], "2026-11-30T00:41:40.000Z");
    assert_eq!(records[13]["timestamp"], "2026-11-30T00:41:41.003Z");
    let compacted = records.iter().find(|r| r["type"] == "compacted").unwrap();
    assert_eq!(compacted["payload"]["message"], "The user listed files.");
    let history = compacted["payload"]["replacement_history"]
        .as_array()
        .unwrap();
    // Codex's order: what the compaction keeps, then its summary (seen at its place).
    assert_eq!(
        history.last().unwrap()["content"][0]["text"],
        "The user listed files."
    );
    assert_eq!(
        history.len(),
        1 + 3 + 1,
        "u2, a4 (message, reasoning, message), then the summary"
    );
}

#[test]
fn append_adds_the_suffix_natively() {
    let (_dir, root) = root();
    let whole = rich();
    for cut in [1, 2, 4, 8, 10] {
        let mut prefix = whole.clone();
        let suffix = prefix.events.split_off(cut);
        let session = CodexPlugin
            .writer()
            .create(&root, TARGET, &prefix, &CreateOptions::default())
            .unwrap();
        let before = std::fs::read(&session.path).unwrap();
        CodexPlugin
            .append_id(&root, TARGET, &session.id, &suffix)
            .unwrap();
        let after = std::fs::read(&session.path).unwrap();
        assert_eq!(&after[..before.len()], &before[..], "append never rewrites");
        let back = CodexPlugin.read_id(&root, TARGET, &session.id).unwrap();
        comparison()
            .diff(&whole, &back)
            .unwrap_or_else(|d| panic!("cut {cut}: {d}"));
    }
}

/// A freeform (custom) call with its output, a web search, and a compaction that keeps the
/// call's output: Codex's own items, read back to the same events.
fn custom_and_search() -> Transcript {
    let patch = "*** Begin Patch\n*** Add File: a.txt\n+hi \"there\"\n*** End Patch\n";
    let mut t = Transcript::new(vec![
        user("u1", 0, "patch it"),
        ev(
            "a1",
            1,
            Body::Assistant {
                content: vec![
                    AssistantPart::WebSearch(WebSearch {
                        id: Some("ws_1".into()),
                        status: Some("completed".into()),
                        action: json!({"type": "search", "query": "q", "queries": ["q", "r"]}),
                    }),
                    AssistantPart::ToolCall(ToolCall {
                        id: "call_P1".into(),
                        name: "apply_patch".into(),
                        input: ToolInput::Freeform(patch.into()),
                    }),
                ],
                origin: origin("openai", "gpt-5"),
            },
        ),
        ev(
            "a2",
            2,
            Body::Assistant {
                content: vec![AssistantPart::WebSearch(WebSearch {
                    id: None,
                    status: None,
                    action: json!({"type": "open_page", "url": "https://example.com/"}),
                })],
                origin: origin("openai", "gpt-5"),
            },
        ),
        result("r1", 3, "call_P1", vec![Part::text("Success.")], false),
        call_event("a3", 4, "call_2"),
        result("r2", 5, "call_2", vec![Part::text("x"), png()], false),
        ev(
            "c1",
            6,
            Body::Compaction {
                summary: "patched".into(),
                replaces_through: "a1".into(),
            },
        ),
        user("u2", 7, "more"),
    ]);
    t.cwd = Some("/home/dev/proj".into());
    t
}

fn call_event(id: &str, ms: i64, call_id: &str) -> Event {
    ev(
        id,
        ms,
        Body::Assistant {
            content: vec![call(call_id, "ls")],
            origin: origin("openai", "gpt-5"),
        },
    )
}

#[test]
fn freeform_calls_and_web_searches_are_codex_items() {
    let (_dir, root) = root();
    let t = custom_and_search();
    let session = CodexPlugin
        .writer()
        .create(&root, TARGET, &t, &CreateOptions::default())
        .unwrap();
    let items: Vec<Value> = lines(&session.path)
        .into_iter()
        .filter(|r| r["type"] == "response_item" || r["type"] == "compacted")
        .map(|r| r["payload"].clone())
        .collect();
    let kinds: Vec<&str> = items
        .iter()
        .map(|p| p["type"].as_str().unwrap_or("compacted"))
        .collect();
    assert_eq!(
        kinds,
        [
            "message",
            "web_search_call",
            "custom_tool_call",
            "web_search_call",
            "custom_tool_call_output",
            "function_call",
            "function_call_output",
            "compacted",
            "message"
        ]
    );
    assert_eq!(items[1]["id"], "ws_1");
    assert_eq!(items[1]["status"], "completed");
    assert_eq!(items[1]["action"]["queries"], json!(["q", "r"]));
    assert!(items[3].get("id").is_none() && items[3].get("status").is_none());
    assert_eq!(items[2]["name"], "apply_patch");
    assert!(items[2]["input"]
        .as_str()
        .unwrap()
        .starts_with("*** Begin Patch\n"));
    assert!(items[2].get("arguments").is_none());
    // The compaction keeps the custom call's output as Codex would record it.
    let history = items[7]["replacement_history"].as_array().unwrap();
    let kept: Vec<&str> = history
        .iter()
        .map(|i| i["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kept,
        [
            "web_search_call",
            "custom_tool_call_output",
            "function_call",
            "function_call_output",
            "message"
        ]
    );
    let back = CodexPlugin.read_id(&root, TARGET, &session.id).unwrap();
    comparison()
        .diff(&t, &back)
        .unwrap_or_else(|d| panic!("{d}"));
    // Appended alone, an output still knows its call was freeform (the call is in the file).
    let mut prefix = t.clone();
    let suffix = prefix.events.split_off(3);
    let appended = CodexPlugin
        .writer()
        .create(&root, TARGET, &prefix, &CreateOptions::default())
        .unwrap();
    CodexPlugin
        .append_id(&root, TARGET, &appended.id, &suffix)
        .unwrap();
    let output = lines(&appended.path)
        .into_iter()
        .find(|r| r["payload"]["call_id"] == "call_P1" && r["payload"]["output"].is_string())
        .unwrap();
    assert_eq!(output["payload"]["type"], "custom_tool_call_output");
    let back = CodexPlugin.read_id(&root, TARGET, &appended.id).unwrap();
    comparison()
        .diff(&t, &back)
        .unwrap_or_else(|d| panic!("{d}"));
}

#[test]
fn append_refuses_a_suffix_that_breaks_the_history() {
    let (_dir, root) = root();
    let t = rich();
    let session = CodexPlugin
        .writer()
        .create(&root, TARGET, &t, &CreateOptions::default())
        .unwrap();
    let before = std::fs::read(&session.path).unwrap();
    let orphan = result("r9", 9_000, "call_nope", vec![Part::text("x")], false);
    let err = CodexPlugin
        .append_id(&root, TARGET, &session.id, &[orphan])
        .unwrap_err();
    assert!(matches!(err, PluginError::InvalidTranscript(_)), "{err}");
    let dup = user("u1", 9_000, "same id again");
    assert!(CodexPlugin
        .append_id(&root, TARGET, &session.id, &[dup])
        .is_err());
    assert_eq!(std::fs::read(&session.path).unwrap(), before);
}

#[test]
fn refusals_leave_nothing_behind() {
    let (dir, root) = root();
    let mut long_id = rich();
    if let Body::Assistant { content, .. } = &mut long_id.events[1].body {
        content.push(call(&"x".repeat(65), "ls"));
    }
    let mut data_url = rich();
    data_url.events[0].body = Body::User {
        content: vec![Part::ImageUrl {
            url: "data:image/png;base64,AAAA".into(),
        }],
    };
    let mut no_cwd = rich();
    no_cwd.cwd = None;
    // An image of bytes that are no image: Codex would send its own text in its place.
    let mut no_image = rich();
    no_image.events[0].body = Body::User {
        content: vec![
            Part::text("look"),
            Part::Image {
                media_type: "image/png".into(),
                data: b"synthetic".to_vec(),
            },
        ],
    };
    let err = CodexPlugin
        .writer()
        .create(&root, TARGET, &no_image, &CreateOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("event 0 (u1): body.content[1].data")
            && err.contains("could not be processed"),
        "{err}"
    );
    for (name, t) in [
        ("long call id", long_id),
        ("data url", data_url),
        ("no cwd", no_cwd),
        ("no image", no_image),
    ] {
        let err = CodexPlugin
            .writer()
            .create(&root, TARGET, &t, &CreateOptions::default())
            .unwrap_err();
        assert!(
            matches!(err, PluginError::InvalidTranscript(_)),
            "{name}: {err}"
        );
    }
    assert!(!dir.path().join("codex").exists(), "nothing was created");
    let err = CodexPlugin
        .writer()
        .create(&root, "claude-code", &rich(), &CreateOptions::default())
        .unwrap_err();
    assert!(matches!(err, PluginError::UnknownTarget { .. }));
}

#[test]
fn remove_deletes_only_its_own_sessions() {
    let (_dir, root) = root();
    let t = rich();
    let ours = CodexPlugin
        .writer()
        .create(&root, TARGET, &t, &CreateOptions::default())
        .unwrap();
    let foreign = CodexPlugin
        .writer()
        .create(&root, TARGET, &t, &CreateOptions::default())
        .unwrap();
    // Make the second one foreign: strip the marker, as the conformance suite does.
    let text = std::fs::read_to_string(&foreign.path).unwrap();
    let mut out = String::new();
    for (i, line) in text.lines().enumerate() {
        let mut v: Value = serde_json::from_str(line).unwrap();
        if i == 0 {
            assert!(handoff_sdk::marker::strip(&mut v));
        }
        out.push_str(&v.to_string());
        out.push('\n');
    }
    std::fs::write(&foreign.path, &out).unwrap();
    let err = CodexPlugin
        .remove_id(&root, TARGET, &foreign.id)
        .unwrap_err();
    assert!(matches!(err, PluginError::NotOwned { .. }), "{err}");
    let err = CodexPlugin
        .append_id(&root, TARGET, &foreign.id, &[user("z", 9_999, "hi")])
        .unwrap_err();
    assert!(matches!(err, PluginError::NotOwned { .. }), "{err}");
    assert_eq!(std::fs::read_to_string(&foreign.path).unwrap(), out);

    let listed = CodexPlugin.reader().list(&root, TARGET).unwrap();
    assert_eq!(listed.len(), 2);
    assert_eq!(listed.iter().filter(|s| s.owned).count(), 1);

    CodexPlugin.remove_id(&root, TARGET, &ours.id).unwrap();
    assert!(!ours.path.exists());
    assert!(foreign.path.exists());
    assert!(matches!(
        CodexPlugin.remove_id(&root, TARGET, &ours.id),
        Err(PluginError::NotFound { .. })
    ));
}

#[test]
fn resume_plan_names_exactly_the_session() {
    let (_dir, root) = root();
    let session = CodexPlugin
        .writer()
        .create(&root, TARGET, &rich(), &CreateOptions::default())
        .unwrap();
    // A decoy: newer, same cwd.
    let decoy = CodexPlugin
        .writer()
        .create(&root, TARGET, &rich(), &CreateOptions::default())
        .unwrap();
    assert_ne!(decoy.id, session.id);
    let plan = CodexPlugin
        .plan_id(&root, TARGET, &session.id, "continue")
        .unwrap();
    let command = plan.command().expect("a command");
    assert_eq!(command.program, "codex");
    assert_eq!(
        command.interactive_args.as_deref(),
        Some(&["resume".to_owned(), session.id.clone()][..])
    );
    assert_eq!(
        command.args,
        [
            "exec",
            "--skip-git-repo-check",
            "resume",
            session.id.as_str(),
            "continue"
        ]
    );
    assert_eq!(
        command.env,
        [("CODEX_HOME".to_owned(), root.path().display().to_string())]
    );
    assert_eq!(command.cwd.as_deref(), Some(Path::new("/home/dev/proj")));
    assert!(command.close_stdin);
    // A prompt that looks like an option goes after `--` (checked with the real CLI).
    let plan = CodexPlugin
        .plan_id(&root, TARGET, &session.id, "-x")
        .unwrap();
    assert_eq!(plan.command().expect("a command").args[4..], ["--", "-x"]);
    let missing = uuid::Uuid::now_v7().to_string();
    assert!(matches!(
        CodexPlugin.resumer().resolve(&root, TARGET, &missing),
        Err(PluginError::NotFound { .. })
    ));
    assert!(matches!(
        CodexPlugin.plan_id(&root, TARGET, &missing, "x"),
        Err(PluginError::NotFound { .. })
    ));
}

fn write_session(root: &StoreRoot) -> std::path::PathBuf {
    CodexPlugin
        .writer()
        .create(root, TARGET, &rich(), &CreateOptions::default())
        .unwrap()
        .path
}

fn read_err(path: &Path) -> PluginError {
    CodexPlugin
        .reader()
        .read(ReadFrom::File(TARGET, path))
        .unwrap_err()
}

#[test]
fn bad_lines_are_errors_naming_file_and_line() {
    let (_dir, root) = root();
    let path = write_session(&root);
    let good = std::fs::read(&path).unwrap();
    let text = String::from_utf8(good.clone()).unwrap();
    let line_starts: Vec<usize> = std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .collect();

    // Torn last line.
    std::fs::write(&path, &good[..good.len() - 5]).unwrap();
    match read_err(&path) {
        PluginError::Malformed { file, line, .. } => {
            assert_eq!(file, path);
            assert_eq!(line, Some(line_starts.len() - 1));
        }
        other => panic!("{other}"),
    }
    // A garbage line in the middle (line 4).
    let mut bad = good.clone();
    bad.splice(
        line_starts[3]..line_starts[3],
        b"{not json\n".iter().copied(),
    );
    std::fs::write(&path, &bad).unwrap();
    let err = read_err(&path);
    assert!(
        matches!(err, PluginError::Malformed { line: Some(4), .. }),
        "{err}"
    );
    assert!(err.to_string().contains(":4:"), "{err}");
    // Invalid UTF-8.
    let mut bad = good.clone();
    bad.splice(
        line_starts[2]..line_starts[2],
        b"{\"x\":\"\xff\"}\n".iter().copied(),
    );
    std::fs::write(&path, &bad).unwrap();
    assert!(matches!(
        read_err(&path),
        PluginError::Malformed { line: Some(3), .. }
    ));
    // A blank line is skipped, as Codex 0.171.0 skips it (issue 15, live/tests/differential.rs).
    let mut blank = good.clone();
    blank.splice(line_starts[2]..line_starts[2], b"\n".iter().copied());
    std::fs::write(&path, &blank).unwrap();
    let with_blank = CodexPlugin
        .reader()
        .read(ReadFrom::File(TARGET, &path))
        .unwrap();
    std::fs::write(&path, &good).unwrap();
    let plain = CodexPlugin
        .reader()
        .read(ReadFrom::File(TARGET, &path))
        .unwrap();
    assert_eq!(with_blank.events, plain.events);
    // A record without its required field.
    let broken = text.replacen("\"call_id\":\"call_1\",", "", 1);
    std::fs::write(&path, broken).unwrap();
    let err = read_err(&path);
    assert!(err.to_string().contains("payload.call_id"), "{err}");
    // No session_meta first.
    let headless: String = text.lines().skip(1).map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, headless).unwrap();
    assert!(matches!(
        read_err(&path),
        PluginError::Malformed { line: Some(1), .. }
    ));
    // Empty file, and a huge line of garbage.
    std::fs::write(&path, b"").unwrap();
    assert!(matches!(read_err(&path), PluginError::Malformed { .. }));
    let mut huge = good.clone();
    huge.extend(std::iter::repeat_n(b'x', 8 << 20));
    huge.push(b'\n');
    std::fs::write(&path, &huge).unwrap();
    assert!(matches!(read_err(&path), PluginError::Malformed { .. }));
    // An item type with no canonical form is refused, not dropped.
    let unknown = format!(
        "{}{{\"timestamp\":\"2026-11-30T00:41:43.000Z\",\"type\":\"response_item\",\"payload\":{{\"type\":\"local_shell_call\",\"status\":\"completed\"}}}}\n",
        text
    );
    std::fs::write(&path, unknown).unwrap();
    let err = read_err(&path);
    assert!(err.to_string().contains("local_shell_call"), "{err}");
    // A web search without its action is named by line and field.
    let no_action = format!(
        "{}{{\"timestamp\":\"2026-11-30T00:41:43.000Z\",\"type\":\"response_item\",\"payload\":{{\"type\":\"web_search_call\",\"status\":\"completed\"}}}}\n",
        text
    );
    std::fs::write(&path, no_action).unwrap();
    let err = read_err(&path).to_string();
    assert!(err.contains("payload.action"), "{err}");
}

#[test]
fn registers_the_thread_when_codex_has_a_state_database() {
    let (_dir, root) = root();
    std::fs::create_dir_all(root.path()).unwrap();
    let db = rusqlite::Connection::open(root.path().join("state_5.sqlite")).unwrap();
    db.execute_batch(include_str!("state_5_threads.sql"))
        .unwrap();
    let session = CodexPlugin
        .writer()
        .create(&root, TARGET, &rich(), &CreateOptions::default())
        .unwrap();
    let (path, source, preview): (String, String, String) = db
        .query_row(
            "SELECT rollout_path, source, preview FROM threads WHERE id = ?1",
            [&session.id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert_eq!(Path::new(&path), session.path);
    assert_eq!(source, "cli");
    assert!(preview.starts_with("List the files"));
    CodexPlugin.remove_id(&root, TARGET, &session.id).unwrap();
    let n: i64 = db
        .query_row("SELECT count(*) FROM threads", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 0);
}

#[test]
fn the_manifest_declares_the_target_and_its_live_recipe() {
    let manifest = CodexPlugin.manifest();
    let target = manifest.target(TARGET).unwrap();
    assert_eq!(target.thinking_from, ["openai"]);
    let live = target
        .live
        .as_ref()
        .expect("the live recipe parses as core's LiveRecipe");
    assert_eq!(live.version, "0.171.0");
    assert_eq!(live.store_root, "codex");
    assert!(live.files[0].1.contains("base_url = \"{base_url}/v1\""));
    assert!(live
        .env
        .contains(&("CODEX_HOME".into(), "{home}/codex".into())));
}

#[test]
fn find_owned_agrees_with_the_listing_and_ignores_foreign_and_other_locators() {
    let (_dir, root) = root();
    let with = |locator: Option<&str>| CreateOptions {
        cwd: Some("/tmp".into()),
        locator: locator.map(str::to_owned),
    };
    let mine = CodexPlugin
        .writer()
        .create(&root, TARGET, &rich(), &with(Some("conversation-a")))
        .unwrap();
    let other = CodexPlugin
        .writer()
        .create(&root, TARGET, &rich(), &with(Some("conversation-b")))
        .unwrap();
    CodexPlugin
        .writer()
        .create(&root, TARGET, &rich(), &with(None))
        .unwrap();
    let reader = CodexPlugin.reader();
    for (locator, expected) in [
        ("conversation-a", Some(&mine)),
        ("conversation-b", Some(&other)),
        ("conversation-c", None),
    ] {
        let listed = reader
            .list(&root, TARGET)
            .unwrap()
            .into_iter()
            .find(|s| s.owned && s.locator.as_deref() == Some(locator))
            .map(|s| s.session);
        let found = reader.find_owned(&root, TARGET, locator).unwrap();
        assert_eq!(found.as_ref(), expected, "{locator}");
        assert_eq!(
            found, listed,
            "{locator}: find_owned and the listing disagree"
        );
    }
}

/// A rollout of the early format (a bare `{id, timestamp}` header, bare response items): Codex
/// 0.171.0 does not resume it ("rollout … is empty"); the reader refuses it at line 1, saying so.
#[test]
fn an_early_format_rollout_is_refused_as_codex_refuses_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir
        .path()
        .join("rollout-2026-01-04T05-06-07-44444444-4444-4444-8444-444444444444.jsonl");
    std::fs::write(
        &path,
        concat!(
            "{\"id\":\"44444444-4444-4444-8444-444444444444\",\"timestamp\":\"2026-01-04T05:06:07.000Z\"}\n",
            "{\"type\":\"message\",\"role\":\"user\",\"content\":[{\"type\":\"input_text\",\"text\":\"hi\"}]}\n",
        ),
    )
    .unwrap();
    let err = read_err(&path);
    assert!(
        matches!(&err, PluginError::Malformed { file, line: Some(1), field: Some(f), .. } if *file == path && f == "type"),
        "{err}"
    );
    assert!(err.to_string().contains("early format"), "{err}");
    // A modern first line that lacks its type is still the plain missing field.
    std::fs::write(
        &path,
        "{\"timestamp\":\"2026-01-04T05:06:07.000Z\",\"payload\":{}}\n",
    )
    .unwrap();
    let err = read_err(&path);
    assert!(
        err.to_string().contains("required field is missing"),
        "{err}"
    );
}

/// A spawned agent's thread whose `session_meta.source.subagent.thread_spawn` has no `depth`:
/// Codex 0.171.0 reads no session metadata from it and resumes nothing; the reader refuses it,
/// naming the field. With the depth, both read it.
#[test]
fn a_spawned_thread_without_its_depth_is_refused_as_codex_refuses_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir
        .path()
        .join("rollout-2026-01-03T04-05-10-33333333-3333-4333-8333-333333333333.jsonl");
    let meta = |spawn: Value| {
        json!({"timestamp": "2026-01-03T04:05:10.000Z", "type": "session_meta", "payload": {
            "id": "33333333-3333-4333-8333-333333333333", "timestamp": "2026-01-03T04:05:10.000Z",
            "cwd": "/w", "originator": "codex_cli_rs", "cli_version": "0.171.0",
            "source": {"subagent": {"thread_spawn": spawn}}}})
    };
    let message = json!({"timestamp": "2026-01-03T04:05:11.000Z", "type": "response_item",
        "payload": {"type": "message", "role": "user",
                    "content": [{"type": "input_text", "text": "Inspect fixtures."}]}});
    let spawn = json!({"parent_thread_id": "22222222-2222-4222-8222-222222222222"});
    std::fs::write(&path, format!("{}\n{message}\n", meta(spawn.clone()))).unwrap();
    let err = read_err(&path);
    assert!(
        matches!(&err, PluginError::Malformed { line: Some(1), field: Some(f), .. } if f == "payload.source.subagent.thread_spawn.depth"),
        "{err}"
    );
    let mut with_depth = spawn;
    with_depth["depth"] = json!(1);
    std::fs::write(&path, format!("{}\n{message}\n", meta(with_depth))).unwrap();
    let read = CodexPlugin
        .reader()
        .read(ReadFrom::File(TARGET, &path))
        .unwrap();
    assert_eq!(read.events.len(), 1);
}

/// Codex 0.171.0's own compaction marks its summary item as the harness's (measured: an
/// automatic compaction, `live/tests/hops.rs`): it is still the summary, and the rollout reads as
/// it did without the mark.
#[test]
fn a_summary_marked_as_the_harness_s_is_the_summary() {
    let (_dir, root) = root();
    let session = CodexPlugin
        .writer()
        .create(&root, TARGET, &rich(), &CreateOptions::default())
        .unwrap();
    let before = CodexPlugin
        .reader()
        .read(ReadFrom::Session(&root, &session))
        .unwrap();
    let text = std::fs::read_to_string(&session.path).unwrap();
    let mut marked = 0;
    let lines: Vec<String> = text
        .lines()
        .map(|line| {
            let mut record: Value = serde_json::from_str(line).unwrap();
            if record["type"] == "compacted" {
                let history = record["payload"]["replacement_history"]
                    .as_array_mut()
                    .unwrap();
                history.last_mut().unwrap()["internal_chat_message_metadata_passthrough"] = json!({
                    "content_item_kinds": ["compaction.summary"],
                    "content_item_metadata": [{"provenance": {"type": "harness", "hook": false}}]
                });
                marked += 1;
            }
            record.to_string()
        })
        .collect();
    assert_eq!(marked, 1);
    std::fs::write(&session.path, lines.join("\n") + "\n").unwrap();
    let after = CodexPlugin
        .reader()
        .read(ReadFrom::Session(&root, &session))
        .unwrap();
    assert_eq!(after, before);
}

/// A rollout as `codex migrate-rollouts --apply` (Codex 0.171.0) leaves it: rewritten in place,
/// every record numbered (`ordinal`), `history_mode: "paginated"`, every member Codex does not
/// know dropped (the marker, the event extras). It is still this plugin's (the copy of its marker
/// kept at its create), listed as owned with its locator, and an append numbers its records on
/// from the last; the same rollout without its marker but not rewritten stays foreign.
#[test]
fn a_rollout_codex_rewrote_is_still_ours_and_appends_number_their_records() {
    let (_dir, root) = root();
    let options = CreateOptions {
        locator: Some("conv-1".into()),
        ..CreateOptions::default()
    };
    // A conversation whose every event reads without handoff's extras (a richer one loses what
    // only the extras held: that is the migration's doing, and the episode ledger's to restore).
    let mut transcript = Transcript::new(vec![
        user("u1", 1_000, "list the files"),
        ev(
            "a1",
            2_000,
            Body::Assistant {
                content: vec![AssistantPart::text("Listing."), call("call_1", "ls")],
                origin: origin("openai", "gpt-5"),
            },
        ),
        result("r1", 3_000, "call_1", vec![Part::text("exit 1")], true),
        ev(
            "a2",
            4_000,
            Body::Assistant {
                content: vec![AssistantPart::text("It failed.")],
                origin: origin("openai", "gpt-5"),
            },
        ),
    ]);
    transcript.cwd = rich().cwd;
    let session = CodexPlugin
        .writer()
        .create(&root, TARGET, &transcript, &options)
        .unwrap();
    let migrate = |paginated: bool| {
        let text = std::fs::read_to_string(&session.path).unwrap();
        let lines: Vec<String> = text
            .lines()
            .enumerate()
            .map(|(i, line)| {
                let mut record: Value = serde_json::from_str(line).unwrap();
                handoff_sdk::marker::strip(&mut record);
                if let Some(payload) = record["payload"].as_object_mut() {
                    payload.shift_remove("x-handoff-event");
                }
                if paginated {
                    record["ordinal"] = json!(i);
                    if i == 0 {
                        record["payload"]["history_mode"] = json!("paginated");
                    }
                }
                record.to_string()
            })
            .collect();
        std::fs::write(&session.path, lines.join("\n") + "\n").unwrap();
        lines.len()
    };
    let original = std::fs::read(&session.path).unwrap();

    // Stripped but not rewritten by Codex: foreign, as before.
    migrate(false);
    let err = CodexPlugin
        .append_id(&root, TARGET, &session.id, &[user("z", 9_999, "hi")])
        .unwrap_err();
    assert!(matches!(err, PluginError::NotOwned { .. }), "{err}");

    std::fs::write(&session.path, &original).unwrap();
    let records = migrate(true);
    let listed = CodexPlugin.reader().list(&root, TARGET).unwrap();
    assert!(listed[0].owned);
    assert_eq!(listed[0].locator.as_deref(), Some("conv-1"));
    let found = CodexPlugin
        .reader()
        .find_owned(&root, TARGET, "conv-1")
        .unwrap();
    assert_eq!(found.map(|s| s.id), Some(session.id.clone()));
    let before = CodexPlugin
        .reader()
        .read(ReadFrom::Session(&root, &session))
        .unwrap();
    // A prompt, a call and its text result (written by a path of its own), then an answer.
    let more = vec![
        user("more-1", 9_999_000, "and then?"),
        ev(
            "more-2",
            9_999_001,
            Body::Assistant {
                content: vec![call("call_2", "ls -a")],
                origin: origin("openai", "gpt-5"),
            },
        ),
        result(
            "more-3",
            9_999_002,
            "call_2",
            vec![Part::text("a b")],
            false,
        ),
        ev(
            "more-4",
            9_999_003,
            Body::Assistant {
                content: vec![AssistantPart::text("Two files.")],
                origin: origin("openai", "gpt-5"),
            },
        ),
    ];
    CodexPlugin
        .append_id(&root, TARGET, &session.id, &more)
        .unwrap();
    let text = std::fs::read_to_string(&session.path).unwrap();
    let ordinals: Vec<u64> = text
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["ordinal"]
                .as_u64()
                .unwrap()
        })
        .collect();
    let expected: Vec<u64> = (0..ordinals.len() as u64).collect();
    assert_eq!(ordinals, expected, "numbered on from the last");
    assert!(ordinals.len() > records);
    let after = CodexPlugin
        .reader()
        .read(ReadFrom::Session(&root, &session))
        .unwrap();
    assert_eq!(after.events.len(), before.events.len() + more.len());

    // Removed with its rollout.
    CodexPlugin.remove_id(&root, TARGET, &session.id).unwrap();
    assert!(!root
        .path()
        .join(".handoff/owned/codex")
        .join(format!("{}.json", session.id))
        .exists());
}

/// A call output of items of a message's kind (`output_text`): Codex reads a call output's
/// items as `input_text` and `input_image` only, passes the line over and answers the call
/// "aborted" (differential cases `*-output-of-output-text`); the reader reads the same.
#[test]
fn a_call_output_codex_cannot_parse_is_passed_over_and_the_call_answered_aborted() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir
        .path()
        .join("rollout-2026-01-02T03-04-05-11111111-1111-4111-8111-111111111111.jsonl");
    let line = |ts: &str, kind: &str, payload: Value| {
        json!({"timestamp": ts, "type": kind, "payload": payload}).to_string()
    };
    let lines = [
        line(
            "2026-01-02T03:04:05.000Z",
            "session_meta",
            json!({
            "id": "11111111-1111-4111-8111-111111111111", "timestamp": "2026-01-02T03:04:05.000Z",
            "cwd": "/w", "originator": "codex_cli_rs", "cli_version": "0.171.0"}),
        ),
        line(
            "2026-01-02T03:04:06.000Z",
            "response_item",
            json!({"type": "message",
            "role": "user", "content": [{"type": "input_text", "text": "patch it"}]}),
        ),
        line(
            "2026-01-02T03:04:07.000Z",
            "response_item",
            json!({"type": "custom_tool_call",
            "name": "apply_patch", "input": "*** Begin Patch\n*** End Patch", "call_id": "c1"}),
        ),
        line(
            "2026-01-02T03:04:08.000Z",
            "response_item",
            json!({
            "type": "custom_tool_call_output", "call_id": "c1",
            "output": [{"type": "output_text", "text": "Done!"}]}),
        ),
        line(
            "2026-01-02T03:04:09.000Z",
            "response_item",
            json!({"type": "message",
            "role": "assistant", "content": [{"type": "output_text", "text": "patched"}]}),
        ),
    ];
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let events = CodexPlugin
        .reader()
        .read(ReadFrom::File(TARGET, &path))
        .unwrap()
        .events;
    let result = events
        .iter()
        .find_map(|e| e.body.as_tool_result())
        .map(|(call_id, content, _)| (call_id, content.to_vec()))
        .expect("the call is answered");
    assert_eq!(result, ("c1", vec![Part::text("aborted")]));
    assert!(
        !format!("{events:?}").contains("Done!"),
        "the output Codex cannot parse is not read: {events:?}"
    );
}
