//! The gemini-cli store: layout, registry, round trips, append, CLI semantics, refusals, bad input,
//! strict resolve and the resume plan.

use std::path::{Path, PathBuf};

use handoff_gemini::GeminiPlugin;
use handoff_sdk::serde_json::{self, json, Value};
use handoff_sdk::{
    AssistantPart, Author, AuthorKind, Body, CreateOptions, Event, Part, Plugin, PluginError,
    ReadFrom, SessionRef, Signature, StoreRoot, Thinking, Timestamp, ToolCall, Transcript,
};

const TARGET: &str = "gemini-cli";

struct Store {
    _dir: tempfile::TempDir,
    home: PathBuf,
    root: StoreRoot,
    cwd: String,
}

fn store() -> Store {
    let dir = tempfile::tempdir().unwrap();
    let home = std::fs::canonicalize(dir.path()).unwrap();
    let cwd = home.join("proj");
    std::fs::create_dir_all(&cwd).unwrap();
    let root = StoreRoot::new(home.join(".gemini")).unwrap();
    Store {
        _dir: dir,
        cwd: cwd.to_str().unwrap().to_owned(),
        home,
        root,
    }
}

fn ts(ms: i64) -> Timestamp {
    Timestamp::from_millis(1_790_000_000_000 + ms)
}

fn user(id: &str, ms: i64, text: &str) -> Event {
    Event::new(id, ts(ms), Body::user_text(text))
}

fn assistant(id: &str, ms: i64, content: Vec<AssistantPart>) -> Event {
    Event::new(id, ts(ms), Body::assistant(content))
}

fn call(id: &str, args: Value) -> AssistantPart {
    AssistantPart::ToolCall(ToolCall::new(id, "run_shell_command", args))
}

fn result(id: &str, ms: i64, call_id: &str, content: Vec<Part>, is_error: bool) -> Event {
    Event::new(
        id,
        ts(ms),
        Body::ToolResult {
            call_id: call_id.into(),
            content,
            is_error,
        },
    )
}

/// A conversation with every carried feature.
fn rich() -> Transcript {
    let png = vec![0x89, b'P', b'N', b'G', 1, 2, 3];
    let sig = |v: &str| Signature {
        provider: "google".into(),
        model: Some("gemini-3-pro".into()),
        value: v.into(),
        redacted: false,
    };
    let mut first = Event::new(
        "u1",
        ts(0),
        Body::User {
            content: vec![
                Part::text("Look: ✓ עברית e\u{301}"),
                Part::Image {
                    media_type: "image/png".into(),
                    data: png.clone(),
                },
            ],
        },
    );
    first.author = Some(Author {
        kind: AuthorKind::Human,
        name: "Ada".into(),
    });
    let mut a1 = Event::new(
        "a1",
        ts(1_000),
        Body::Assistant {
            content: vec![
                AssistantPart::Thinking(Thinking {
                    text: "plan".into(),
                    signature: Some(sig("SIG1")),
                }),
                AssistantPart::text("Running two."),
                AssistantPart::Thinking(Thinking {
                    text: String::new(),
                    signature: Some(Signature {
                        redacted: true,
                        ..sig("SIG2")
                    }),
                }),
                call("c1", json!({"command": "ls", "n": [1, 2.5, null]})),
                call("c2", json!({"command": "date"})),
                AssistantPart::text("then more"),
                AssistantPart::Thinking(Thinking {
                    text: "claude thought".into(),
                    signature: Some(Signature {
                        provider: "anthropic".into(),
                        model: None,
                        value: "X".into(),
                        redacted: false,
                    }),
                }),
            ],
            origin: Some(handoff_sdk::Origin::new("google", "gemini-3-pro", "gemini")),
        },
    );
    a1.author = Some(Author {
        kind: AuthorKind::Agent,
        name: "bot".into(),
    });
    Transcript {
        cwd: None,
        ..Transcript::new(vec![
            first,
            a1,
            result("r2", 2_000, "c2", vec![Part::text("Mon")], false),
            result(
                "r1",
                2_500,
                "c1",
                vec![
                    Part::text("a.txt"),
                    Part::text("b.txt"),
                    Part::Image {
                        media_type: "image/png".into(),
                        data: png,
                    },
                ],
                false,
            ),
            assistant("a2", 3_000, vec![call("c3", json!({}))]),
            result("r3", 3_500, "c3", vec![], false),
            assistant("a3", 4_000, vec![call("c4", json!({"x": 1}))]),
            result("r4", 4_500, "c4", vec![Part::text("boom")], true),
            Event::new(
                "a4",
                ts(5_000),
                Body::Assistant {
                    content: vec![AssistantPart::text("Done.")],
                    origin: Some(handoff_sdk::Origin {
                        provider: "anthropic".into(),
                        model: Some("claude-x".into()),
                        api: None,
                    }),
                },
            ),
        ])
    }
}

fn create(s: &Store, t: &Transcript) -> Result<SessionRef, PluginError> {
    let options = CreateOptions {
        cwd: Some(s.cwd.clone()),
        locator: Some("loc-1".into()),
    };
    GeminiPlugin.writer().create(&s.root, TARGET, t, &options)
}

fn read(s: &Store, session: &SessionRef) -> Transcript {
    GeminiPlugin
        .reader()
        .read(ReadFrom::Session(&s.root, session))
        .unwrap()
}

fn assert_same(expected: &Transcript, got: &Transcript) {
    let cmp = GeminiPlugin.manifest().target(TARGET).unwrap().comparison();
    if let Err(d) = cmp.diff(expected, got) {
        panic!("differs: {d}\n{}", got.to_json_pretty());
    }
}

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn every_file(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(every_file(&p));
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn every_carried_feature_round_trips() {
    let s = store();
    let t = rich();
    let session = create(&s, &t).unwrap();
    let got = read(&s, &session);
    assert_same(&t, &got);
    assert_eq!(got.cwd.as_deref(), Some(s.cwd.as_str()));
    // Foreign thinking is not written. Google thinking text is a thought part, which Gemini CLI
    // never sends: read back as the session's native field, not as canonical thinking. The
    // signature on the call (which the CLI sends) stays canonical, with its model.
    let Body::Assistant { content, .. } = &got.events[1].body else {
        panic!()
    };
    assert!(matches!(&content[0], AssistantPart::Text { text } if text == "Running two."));
    assert!(
        matches!(&content[1], AssistantPart::Thinking(t) if t.text.is_empty() && t.signature.as_ref().unwrap().value == "SIG2" && t.signature.as_ref().unwrap().model.as_deref() == Some("gemini-3-pro"))
    );
    assert_eq!(
        got.events[1].opaque["gemini-cli"]["thoughtParts"],
        json!([{"at": 0, "part": {"text": "plan", "thought": true, "thoughtSignature": "SIG1"}}])
    );
    assert!(!content
        .iter()
        .any(|p| matches!(p, AssistantPart::Thinking(t) if !t.text.is_empty())));
    // Written again to Gemini CLI, the thought part goes back to its place.
    let again = create(&s, &got).unwrap();
    let rec = lines(&again.path)
        .into_iter()
        .find(|r| r["id"] == "a1")
        .unwrap();
    assert_eq!(
        rec["content"][0],
        json!({"text": "plan", "thought": true, "thoughtSignature": "SIG1"})
    );
    assert_eq!(read(&s, &again).events[1].body, got.events[1].body);
}

#[test]
fn the_file_is_what_the_cli_writes_and_lists() {
    let s = store();
    let before = Timestamp::now();
    let session = create(&s, &rich()).unwrap();
    let name = session
        .path
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        session.path.parent().unwrap(),
        s.root.path().join("tmp/proj/chats")
    );
    // `session-<minute of the write>-<id>-<last 8 of the id>.jsonl`: never ending with the id's
    // first 8, which the CLI's resume stub and its retention cleanup use.
    let named = Timestamp::parse(&format!("{}:{}:00Z", &name[8..21], &name[22..24])).unwrap();
    assert!(
        (0..=60_000).contains(&(before.millis() - named.millis() + 1)),
        "{name}"
    );
    assert_eq!(
        &name[24..],
        format!("-{}-{}.jsonl", session.id, &session.id[28..])
    );
    let recs = lines(&session.path);
    let meta = &recs[0];
    assert_eq!(meta["sessionId"], session.id);
    assert_eq!(meta["kind"], "main");
    assert_eq!(
        meta["x-handoff"],
        json!({"plugin": "gemini", "locator": "loc-1"})
    );
    let hash = {
        use std::fmt::Write;
        let digest = <sha2::Sha256 as sha2::Digest>::digest(s.cwd.as_bytes());
        digest.iter().fold(String::new(), |mut o, b| {
            let _ = write!(o, "{b:02x}");
            o
        })
    };
    assert_eq!(meta["projectHash"], hash);
    // Written now, not at the transcript's time: retention (30 days by default) keeps it.
    let updated = Timestamp::parse(meta["lastUpdated"].as_str().unwrap()).unwrap();
    assert!(updated.millis() >= before.millis(), "{updated}");
    // Modern gemini records: calls in content, results in toolCalls (result order), no separate
    // functionResponse user message.
    let a1 = &recs[2];
    assert_eq!(a1["type"], "gemini");
    assert_eq!(
        a1["content"][0],
        json!({"text": "plan", "thought": true, "thoughtSignature": "SIG1"})
    );
    assert_eq!(a1["content"][2]["thoughtSignature"], "SIG2");
    assert_eq!(a1["toolCalls"][0]["id"], "c2");
    assert_eq!(
        a1["toolCalls"][1]["result"][0]["functionResponse"]["parts"][0]["inlineData"]["mimeType"],
        "image/png"
    );
    assert!(recs
        .iter()
        .all(|r| r["type"] != "user" || r["content"][0].get("functionResponse").is_none()));
    let err = recs.iter().find(|r| r["id"] == "a3").unwrap();
    assert_eq!(err["toolCalls"][0]["status"], "error");
    assert_eq!(
        err["toolCalls"][0]["result"][0]["functionResponse"]["response"],
        json!({"error": "boom"})
    );
    // The registry and both markers, as the CLI writes them.
    let reg = std::fs::read_to_string(s.root.path().join("projects.json")).unwrap();
    assert_eq!(
        reg,
        format!(
            "{{\n  \"projects\": {{\n    \"{}\": \"proj\"\n  }}\n}}",
            s.cwd
        )
    );
    for base in ["tmp", "history"] {
        assert_eq!(
            std::fs::read_to_string(s.root.path().join(base).join("proj/.project_root")).unwrap(),
            s.cwd
        );
    }
    let listed = GeminiPlugin.reader().list(&s.root, TARGET).unwrap();
    assert_eq!(listed.len(), 1);
    assert!(listed[0].owned && listed[0].locator.as_deref() == Some("loc-1"));
}

#[test]
fn other_projects_entries_are_left_as_they_are() {
    let s = store();
    std::fs::create_dir_all(s.root.path()).unwrap();
    let registry = s.root.path().join("projects.json");
    let other = "{\n  \"projects\": {\n    \"/z/other\": \"proj\",\n    \"/a/ünï\": \"n\"\n  }\n}";
    std::fs::write(&registry, other).unwrap();
    let session = create(&s, &rich()).unwrap();
    let data: Value = serde_json::from_str(&std::fs::read_to_string(&registry).unwrap()).unwrap();
    let keys: Vec<&String> = data["projects"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["/z/other", "/a/ünï", s.cwd.as_str()]);
    assert_eq!(data["projects"]["/z/other"], "proj");
    // "proj" belongs to /z/other in the registry, so this project takes the next slug.
    assert_eq!(data["projects"][s.cwd.as_str()], "proj-1");
    assert!(session
        .path
        .starts_with(s.root.path().join("tmp/proj-1/chats")));
    // A second session of the same project: the registry is not written again.
    let bytes = std::fs::read(&registry).unwrap();
    create(&s, &rich()).unwrap();
    assert_eq!(std::fs::read(&registry).unwrap(), bytes);
}

#[test]
fn a_marker_of_another_root_is_never_taken() {
    let s = store();
    std::fs::create_dir_all(s.root.path().join("tmp/proj")).unwrap();
    std::fs::write(
        s.root.path().join("tmp/proj/.project_root"),
        "/somewhere/else/proj",
    )
    .unwrap();
    let session = create(&s, &rich()).unwrap();
    assert!(session
        .path
        .starts_with(s.root.path().join("tmp/proj-1/chats")));
    assert_eq!(
        std::fs::read_to_string(s.root.path().join("tmp/proj/.project_root")).unwrap(),
        "/somewhere/else/proj"
    );
}

#[test]
fn an_invalid_registry_is_refused_and_kept() {
    let s = store();
    std::fs::create_dir_all(s.root.path()).unwrap();
    let registry = s.root.path().join("projects.json");
    std::fs::write(&registry, "{\"projects\": {\"/x\": \"Not A Slug\"}}").unwrap();
    let e = create(&s, &rich()).unwrap_err();
    assert!(e.to_string().contains("projects.json"), "{e}");
    assert_eq!(
        std::fs::read_to_string(&registry).unwrap(),
        "{\"projects\": {\"/x\": \"Not A Slug\"}}"
    );
    assert!(!s.root.path().join("tmp").exists());
}

/// Every file under `dir` with its bytes.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    every_file(dir)
        .into_iter()
        .map(|f| {
            let bytes = std::fs::read(&f).unwrap();
            (f, bytes)
        })
        .collect()
}

/// A create that fails after the project is registered (its `chats` folder is a file, so no
/// session can be made there) takes back what it registered, and only that: the registry is
/// byte for byte what it was, with another project's entry and markers untouched.
#[test]
fn a_create_that_fails_after_registering_takes_back_only_its_registration() {
    let s = store();
    let root = s.root.path();
    std::fs::create_dir_all(root.join("tmp/other")).unwrap();
    std::fs::create_dir_all(root.join("history/other")).unwrap();
    std::fs::write(root.join("tmp/other/.project_root"), "/z/other").unwrap();
    std::fs::write(root.join("history/other/.project_root"), "/z/other").unwrap();
    let other = "{\n  \"projects\": {\n    \"/z/other\": \"other\"\n  }\n}";
    std::fs::write(root.join("projects.json"), other).unwrap();
    std::fs::create_dir_all(root.join("tmp/proj")).unwrap();
    std::fs::write(root.join("tmp/proj/chats"), "not a folder").unwrap();
    let before = snapshot(root);
    let e = create(&s, &rich()).unwrap_err();
    assert!(e.to_string().contains("tmp/proj/chats"), "{e}");
    assert_eq!(snapshot(root), before);
    assert!(!root.join("history/proj").exists());

    // A store with no registry yet: the empty registry this run created stays (the CLI creates
    // it outside its lock: docs/formats/gemini.md), and nothing else does.
    let s = store();
    let root = s.root.path();
    std::fs::create_dir_all(root.join("tmp/proj")).unwrap();
    std::fs::write(root.join("tmp/proj/chats"), "not a folder").unwrap();
    create(&s, &rich()).unwrap_err();
    let mut expected = vec![(
        root.join("projects.json"),
        b"{\n  \"projects\": {}\n}".to_vec(),
    )];
    expected.push((root.join("tmp/proj/chats"), b"not a folder".to_vec()));
    assert_eq!(snapshot(root), expected);
    assert!(!root.join("history").exists());
}

/// A project already registered (its entry and both markers there before) whose create fails
/// keeps its registration whole: this run made none of it.
#[test]
fn a_failed_create_in_a_registered_project_leaves_its_registration() {
    let s = store();
    let root = s.root.path();
    create(&s, &rich()).unwrap();
    let slug_dir = root.join("tmp/proj");
    let chats = slug_dir.join("chats");
    std::fs::remove_dir_all(&chats).unwrap();
    std::fs::write(&chats, "not a folder").unwrap();
    let before = snapshot(root);
    assert!(before
        .iter()
        .any(|(f, _)| f.ends_with("history/proj/.project_root")));
    create(&s, &rich()).unwrap_err();
    assert_eq!(snapshot(root), before);
}

/// A CLI holding the registry lock (proper-lockfile's `projects.json.lock` directory) and adding
/// its own project meanwhile: we wait for it and keep its entry.
#[test]
fn a_concurrent_cli_registration_is_not_lost() {
    let s = store();
    std::fs::create_dir_all(s.root.path()).unwrap();
    let registry = s.root.path().join("projects.json");
    std::fs::write(&registry, "{\n  \"projects\": {}\n}").unwrap();
    let lock = s.root.path().join("projects.json.lock");
    std::fs::create_dir(&lock).unwrap();
    let (reg, lk) = (registry.clone(), lock.clone());
    let cli = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(400));
        std::fs::write(
            &reg,
            "{\n  \"projects\": {\n    \"/cli/project\": \"project\"\n  }\n}",
        )
        .unwrap();
        std::fs::remove_dir(&lk).unwrap();
    });
    create(&s, &rich()).unwrap();
    cli.join().unwrap();
    let data: Value = serde_json::from_str(&std::fs::read_to_string(&registry).unwrap()).unwrap();
    assert_eq!(data["projects"]["/cli/project"], "project");
    assert_eq!(data["projects"][s.cwd.as_str()], "proj");
    assert!(!lock.exists(), "our lock is released");
}

#[test]
fn a_stale_registry_lock_is_broken() {
    let s = store();
    std::fs::create_dir_all(s.root.path().join("projects.json.lock")).unwrap();
    std::fs::write(s.root.path().join("projects.json"), "{\"projects\": {}}").unwrap();
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    std::fs::File::open(s.root.path().join("projects.json.lock"))
        .unwrap()
        .set_modified(old)
        .unwrap();
    create(&s, &rich()).unwrap();
}

#[test]
fn append_adds_results_to_the_open_message_and_new_turns() {
    let s = store();
    let whole = rich();
    for cut in [1, 2, 3, 4, 5, 8] {
        let mut prefix = whole.clone();
        let suffix = prefix.events.split_off(cut);
        let session = create(&s, &prefix).unwrap();
        assert_same(&prefix, &read(&s, &session));
        let again = GeminiPlugin
            .writer()
            .append(&s.root, &session, &suffix)
            .unwrap();
        assert_eq!(again, session);
        assert_same(&whole, &read(&s, &session));
        let last = lines(&session.path).pop().unwrap();
        assert!(
            last["$set"]["lastUpdated"].is_string(),
            "append refreshes lastUpdated"
        );
    }
}

#[test]
fn append_refuses_and_leaves_the_file() {
    let s = store();
    let session = create(&s, &rich()).unwrap();
    let bytes = std::fs::read(&session.path).unwrap();
    for (events, what) in [
        (vec![user("u1", 9_000, "again")], "duplicate id"),
        (
            vec![result("x", 9_000, "c1", vec![Part::text("late")], false)],
            "answers an earlier call again",
        ),
        (vec![user("n1", 9_000, "/help")], "a command the CLI drops"),
    ] {
        assert!(
            GeminiPlugin
                .writer()
                .append(&s.root, &session, &events)
                .is_err(),
            "{what}"
        );
        assert_eq!(std::fs::read(&session.path).unwrap(), bytes, "{what}");
    }
    // Someone else's session is not ours to change.
    let mut foreign = std::fs::read_to_string(&session.path).unwrap();
    foreign = foreign.replacen(
        ",\"x-handoff\":{\"plugin\":\"gemini\",\"locator\":\"loc-1\"}",
        "",
        1,
    );
    std::fs::write(&session.path, &foreign).unwrap();
    let e = GeminiPlugin
        .writer()
        .append(&s.root, &session, &[user("n2", 9_000, "hi")])
        .unwrap_err();
    assert!(matches!(e, PluginError::NotOwned { .. }), "{e}");
    assert!(matches!(
        GeminiPlugin.writer().remove(&s.root, &session),
        Err(PluginError::NotOwned { .. })
    ));
}

/// A tool that printed nothing (`content: ""` in Claude Code): written as Gemini CLI writes it,
/// `{"output": ""}`, and read back as no text, which compares equal (an empty text is no content).
#[test]
fn an_empty_tool_output_is_carried_as_gemini_cli_writes_it() {
    let s = store();
    let t = Transcript::new(vec![
        user("u", 0, "hi"),
        assistant("a", 1, vec![call("c", json!({"command": "true"}))]),
        result("r", 2, "c", vec![Part::text("")], false),
        assistant("a2", 3, vec![AssistantPart::text("done")]),
    ]);
    let session = create(&s, &t).unwrap();
    let written = std::fs::read_to_string(&session.path).unwrap();
    assert!(written.contains(r#""response":{"output":""}"#), "{written}");
    assert_same(&t, &read(&s, &session));
}

#[test]
fn refusals_name_the_event_and_write_nothing() {
    let cases: Vec<(Transcript, &str)> = vec![
        (Transcript::new(vec![user("u", 0, "/compress")]), "'/'"),
        (Transcript::new(vec![user("u", 0, "  ")]), "blank"),
        (
            Transcript::new(vec![user("u", 0, "<session_context>x")]),
            "session_context",
        ),
        (
            Transcript::new(vec![
                user("u", 0, "hi"),
                assistant("a", 1, vec![call("c", json!([1]))]),
            ]),
            "G3",
        ),
        (
            Transcript::new(vec![
                user("u", 0, "hi"),
                assistant("a", 1, vec![AssistantPart::text("")]),
            ]),
            "G7",
        ),
        (
            Transcript::new(vec![
                user("u", 0, "hi"),
                assistant("a", 1, vec![call("c", json!({}))]),
                user("u2", 2, "wait"),
                result("r", 3, "c", vec![], false),
            ]),
            "directly follow",
        ),
        (Transcript::new(vec![]), "nothing Gemini CLI would resume"),
    ];
    for (t, what) in cases {
        let s = store();
        let e = create(&s, &t).unwrap_err().to_string();
        assert!(e.contains(what), "{what}: {e}");
        assert!(
            every_file(s.root.path()).is_empty(),
            "{what}: wrote {:?}",
            every_file(s.root.path())
        );
    }
}

/// Later records with the same id replace earlier ones in place, `$set` checkpoints and metadata,
/// `$rewindTo` cuts, info/error/warning are not conversation.
#[test]
fn the_cli_record_semantics() {
    let s = store();
    let session = create(&s, &Transcript::new(vec![user("u1", 0, "first")])).unwrap();
    let more = [
        json!({"id": "g1", "timestamp": "2026-10-01T00:00:01.000Z", "type": "gemini", "content": "draft", "model": "m"}),
        json!({"id": "i1", "timestamp": "2026-10-01T00:00:02.000Z", "type": "info", "content": "note"}),
        json!({"id": "w1", "timestamp": "2026-10-01T00:00:02.000Z", "type": "warning", "content": "careful"}),
        json!({"id": "u2", "timestamp": "2026-10-01T00:00:03.000Z", "type": "user", "content": [{"text": "second"}]}),
        json!({"id": "g1", "timestamp": "2026-10-01T00:00:01.500Z", "type": "gemini", "content": "final", "model": "m"}),
        json!({"$set": {"summary": "s", "lastUpdated": "2026-10-01T00:00:04.000Z"}}),
        json!({"id": "u3", "timestamp": "2026-10-01T00:00:05.000Z", "type": "user", "content": "third"}),
        json!({"id": "g3", "timestamp": "2026-10-01T00:00:06.000Z", "type": "gemini", "content": "gone"}),
        json!({"$rewindTo": "g3"}),
    ];
    let mut text = std::fs::read_to_string(&session.path).unwrap();
    for r in &more {
        text.push_str(&format!("{r}\n"));
    }
    std::fs::write(&session.path, text).unwrap();
    let t = read(&s, &session);
    let got: Vec<String> = t
        .events
        .iter()
        .map(|e| match &e.body {
            Body::User { content } => format!(
                "user {}",
                match &content[0] {
                    Part::Text { text } => text.as_str(),
                    _ => "",
                }
            ),
            Body::Assistant { content, .. } => format!(
                "assistant {}",
                match &content[0] {
                    AssistantPart::Text { text } => text.as_str(),
                    _ => "",
                }
            ),
            _ => "other".into(),
        })
        .collect();
    assert_eq!(
        got,
        ["user first", "assistant final", "user second", "user third"]
    );
    assert_eq!(
        t.events[1].timestamp.to_rfc3339(),
        "2026-10-01T00:00:01.500Z"
    );
}

#[test]
fn a_legacy_json_session_reads() {
    let s = store();
    let chats = s.root.path().join("tmp/0123abcd/chats");
    std::fs::create_dir_all(&chats).unwrap();
    let record = json!({
        "sessionId": "5e551011-0000-4000-8000-000000000001", "projectHash": "abc",
        "startTime": "2025-06-01T00:00:00.000Z", "lastUpdated": "2025-06-01T00:00:09.000Z",
        "messages": [
            {"id": "m1", "timestamp": "2025-06-01T00:00:01.000Z", "type": "user", "content": "list it"},
            {"id": "m2", "timestamp": "2025-06-01T00:00:02.000Z", "type": "gemini", "content": "Listing.",
             "thoughts": [{"subject": "Plan", "description": "use ls", "timestamp": "2025-06-01T00:00:02.000Z"}],
             "toolCalls": [{"id": "t1", "name": "ls", "args": {"path": "."}, "status": "success",
                            "timestamp": "2025-06-01T00:00:03.000Z", "result": "a.txt"}]}
        ]
    });
    let path = chats.join("session-2025-06-01T00-00-5e551011.json");
    std::fs::write(&path, serde_json::to_string_pretty(&record).unwrap()).unwrap();
    let t = GeminiPlugin
        .reader()
        .read(ReadFrom::File(TARGET, &path))
        .unwrap();
    assert_eq!(t.events.len(), 3);
    let Body::Assistant { content, .. } = &t.events[1].body else {
        panic!()
    };
    // The thought summary is not sent by the CLI: no canonical thinking, kept opaquely.
    assert_eq!(content.len(), 2, "{content:?}");
    assert!(matches!(&content[0], AssistantPart::Text { text } if text == "Listing."));
    assert!(matches!(&content[1], AssistantPart::ToolCall(c) if c.id == "t1"));
    assert_eq!(
        t.events[1].opaque["gemini-cli"]["thoughts"][0]["subject"],
        json!("Plan")
    );
    assert!(
        matches!(&t.events[2].body, Body::ToolResult { call_id, content, .. } if call_id == "t1" && content == &vec![Part::text("a.txt")])
    );
    let found = GeminiPlugin
        .resumer()
        .resolve(&s.root, TARGET, "5e551011-0000-4000-8000-000000000001")
        .unwrap();
    assert_eq!(found.path, path);
}

/// Gemini CLI never sends thought summaries (`thoughts`) to the model, so they are no canonical
/// thinking; written back to Gemini CLI they are its `thoughts` again, and read back the same.
#[test]
fn thought_summaries_are_not_thinking_and_go_back_to_gemini_cli() {
    let s = store();
    let chats = s.root.path().join("tmp/0123abcd/chats");
    std::fs::create_dir_all(&chats).unwrap();
    let thoughts = json!([
        {"subject": "Plan", "description": "use ls", "timestamp": "2025-06-01T00:00:02.000Z"},
        {"subject": "", "description": "then answer", "timestamp": "2025-06-01T00:00:02.500Z"}
    ]);
    let record = json!({
        "sessionId": "5e551011-0000-4000-8000-000000000002", "projectHash": "abc",
        "startTime": "2025-06-01T00:00:00.000Z", "lastUpdated": "2025-06-01T00:00:09.000Z",
        "messages": [
            {"id": "m1", "timestamp": "2025-06-01T00:00:01.000Z", "type": "user", "content": "list it"},
            {"id": "m2", "timestamp": "2025-06-01T00:00:02.000Z", "type": "gemini", "content": "",
             "model": "gemini-2.5-pro", "thoughts": thoughts.clone(),
             "toolCalls": [{"id": "t1", "name": "ls", "args": {"path": "."}, "status": "success",
                            "timestamp": "2025-06-01T00:00:03.000Z", "result": "a.txt"}]},
            {"id": "m3", "timestamp": "2025-06-01T00:00:04.000Z", "type": "gemini", "content": "One file.",
             "model": "gemini-2.5-pro", "thoughts": [{"subject": "Done", "description": "say it"}]}
        ]
    });
    let path = chats.join("session-2025-06-01T00-00-5e551011.json");
    std::fs::write(&path, serde_json::to_string_pretty(&record).unwrap()).unwrap();
    let read = GeminiPlugin
        .reader()
        .read(ReadFrom::File(TARGET, &path))
        .unwrap();
    let thinking = read.events.iter().any(|e| {
        matches!(&e.body, Body::Assistant { content, .. }
            if content.iter().any(|p| matches!(p, AssistantPart::Thinking(_))))
    });
    assert!(!thinking, "{read:#?}");
    let Body::Assistant { content, .. } = &read.events[1].body else {
        panic!("{read:#?}")
    };
    assert!(matches!(&content[..], [AssistantPart::ToolCall(c)] if c.id == "t1"));
    assert_eq!(read.events[1].opaque["gemini-cli"]["thoughts"], thoughts);

    let written = create(&s, &read).unwrap();
    let text = std::fs::read_to_string(&written.path).unwrap();
    let records: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let native = |id: &str| {
        records
            .iter()
            .rev()
            .find(|r| r["type"] == "gemini" && r["content"].to_string().contains(id))
            .unwrap_or_else(|| panic!("no gemini record with {id}: {text}"))["thoughts"]
            .clone()
    };
    assert_eq!(native("t1"), thoughts);
    assert_eq!(
        native("One file."),
        json!([{"subject": "Done", "description": "say it"}])
    );
    let back = GeminiPlugin
        .reader()
        .read(ReadFrom::Session(&s.root, &written))
        .unwrap();
    assert_eq!(back.events.len(), read.events.len());
    for (a, b) in read.events.iter().zip(&back.events) {
        assert_eq!(a.body, b.body);
        assert_eq!(a.opaque.get("gemini-cli"), b.opaque.get("gemini-cli"));
    }
}

#[test]
fn malformed_input_names_file_line_and_field() {
    let s = store();
    let session = create(&s, &rich()).unwrap();
    let good = std::fs::read_to_string(&session.path).unwrap();
    let name = session
        .path
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .to_owned();
    let bad_ts = good.replacen("\"timestamp\":\"", "\"timestamp\":\"yesterday ", 1);
    let n = good.lines().count();
    let (next, last) = (format!(":{}", n + 1), format!(":{n}"));
    let cases = [
        (bad_ts, ":2".to_owned(), "u1.timestamp"),
        (format!("{good}\"x\"\n"), next.clone(), "not a Gemini CLI record"),
        (good.trim_end().to_owned(), last, "newline"),
        (format!("{good}{{\"id\":\"z\",\"timestamp\":\"2026-01-01T00:00:00Z\",\"type\":\"user\",\"content\":[{{\"inlineData\":{{\"mimeType\":\"application/pdf\",\"data\":\"AA==\"}}}}]}}\n"), next, "z.content[0].inlineData.mimeType"),
    ];
    for (text, line, what) in cases {
        std::fs::write(&session.path, &text).unwrap();
        let e = GeminiPlugin
            .reader()
            .read(ReadFrom::Session(&s.root, &session))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(&format!("{name}{line}")) && e.contains(what),
            "{what}: {e}"
        );
    }
    // A blank line and a record of no kind the CLI knows are skipped, as the CLI skips them.
    for text in [format!("{good}\n"), format!("{good}{{\"id\": 1}}\n")] {
        std::fs::write(&session.path, &text).unwrap();
        let t = GeminiPlugin
            .reader()
            .read(ReadFrom::Session(&s.root, &session))
            .unwrap();
        assert_eq!(t.events.len(), rich().events.len());
    }
    std::fs::write(&session.path, b"\xff\xfe\n").unwrap();
    assert!(GeminiPlugin
        .reader()
        .read(ReadFrom::Session(&s.root, &session))
        .unwrap_err()
        .to_string()
        .contains(&name));
}

#[test]
fn resolve_is_strict_and_picks_what_the_cli_resumes() {
    let s = store();
    let session = create(&s, &rich()).unwrap();
    let r = GeminiPlugin.resumer();
    assert_eq!(r.resolve(&s.root, TARGET, &session.id).unwrap(), session);
    for missing in [
        "00000000-0000-4000-8000-00000000dead",
        &session.id[..12],
        "",
    ] {
        assert!(
            matches!(
                r.resolve(&s.root, TARGET, missing),
                Err(PluginError::NotFound { .. })
            ),
            "{missing:?}"
        );
    }
    // The CLI's resume stub (same id, later minute, no conversation) is not the session.
    let chats = session.path.parent().unwrap();
    let stub = chats.join(format!(
        "session-2099-01-01T00-00-{}.jsonl",
        &session.id[..8]
    ));
    std::fs::write(&stub, format!("{}\n{}\n",
        json!({"sessionId": session.id, "projectHash": "h", "startTime": "2099-01-01T00:00:00.000Z", "lastUpdated": "2099-01-01T00:00:00.000Z", "kind": "main"}),
        json!({"$set": {"messages": [{"id": "ctx", "timestamp": "2099-01-01T00:00:00.000Z", "type": "user", "content": [{"text": "<session_context>\n</session_context>"}]}]}}))).unwrap();
    assert_eq!(
        r.resolve(&s.root, TARGET, &session.id).unwrap().path,
        session.path
    );
    assert_eq!(
        GeminiPlugin.reader().list(&s.root, TARGET).unwrap().len(),
        1
    );
    // The same id in another project: refused rather than guessed.
    let other = s.root.path().join("tmp/other/chats");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::copy(&session.path, other.join(session.path.file_name().unwrap())).unwrap();
    assert!(r
        .resolve(&s.root, TARGET, &session.id)
        .unwrap_err()
        .to_string()
        .contains("more than one project"));
}

#[test]
fn the_plan_resumes_by_full_id_in_the_project_root() {
    let s = store();
    let session = create(&s, &rich()).unwrap();
    let plan = GeminiPlugin
        .resumer()
        .plan(&s.root, &session, "-go on")
        .unwrap();
    let command = plan.command().expect("a command");
    assert_eq!(command.program, "gemini");
    assert_eq!(
        command.args,
        ["--resume", session.id.as_str(), "--prompt=-go on"]
    );
    assert_eq!(
        command.interactive_args.as_deref(),
        Some(&["--resume".to_owned(), session.id.clone()][..])
    );
    assert_eq!(
        command.env,
        [(
            "GEMINI_CLI_HOME".to_owned(),
            s.home.to_str().unwrap().to_owned()
        )]
    );
    assert_eq!(command.cwd.as_deref(), Some(Path::new(&s.cwd)));
    assert!(command.close_stdin);
    let ghost = SessionRef {
        path: session.path.with_file_name("session-x-00000000.jsonl"),
        ..session.clone()
    };
    assert!(GeminiPlugin.resumer().plan(&s.root, &ghost, "p").is_err());
}

/// Sessions the real CLI resumed (its checkpoint with `_response` duplicates, its stub, its own
/// turn appended) read as what we wrote plus the new turn.
#[test]
fn sessions_the_cli_resumed_read_back() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/samples/resumed-by-cli");
    let t = GeminiPlugin
        .reader()
        .read(ReadFrom::File(
            TARGET,
            &dir.join("session-2026-12-01T03-49-1c08fe94.jsonl"),
        ))
        .unwrap();
    let kinds: Vec<&str> = t.events.iter().map(|e| e.body.kind()).collect();
    assert_eq!(
        kinds,
        [
            "user",
            "assistant",
            "tool_result",
            "tool_result",
            "assistant",
            "user",
            "assistant"
        ]
    );
    assert!(
        matches!(&t.events[5].body, Body::User { content } if content == &vec![Part::text("continue")])
    );
    let stub = GeminiPlugin
        .reader()
        .read(ReadFrom::File(
            TARGET,
            &dir.join("session-2026-12-01T03-50-1c08fe94.jsonl"),
        ))
        .unwrap();
    assert!(stub.events.is_empty());
    // Resumed in the minute its file was named for, under the CLI's own naming (written before the
    // writer named files `…-<id>-<last 8>.jsonl`): the CLI's startup checkpoint cleared the
    // messages, and its resume checkpoint rebuilt them from memory with the resume's time as their
    // timestamps and without their toolCalls (the result now sits in an `e2_response` user
    // message). It still reads, as the CLI now sees it.
    let images = GeminiPlugin
        .reader()
        .read(ReadFrom::File(
            TARGET,
            &dir.join("session-2026-12-01T03-49-e5a8fb64.jsonl"),
        ))
        .unwrap();
    let kinds: Vec<&str> = images.events.iter().map(|e| e.body.kind()).collect();
    assert_eq!(
        kinds,
        [
            "user",
            "assistant",
            "tool_result",
            "assistant",
            "user",
            "assistant"
        ]
    );
    assert_eq!(
        images.events[0].timestamp.to_rfc3339(),
        "2026-12-01T03:49:41.757Z"
    );
    assert_eq!(images.events[2].id, "e2_response/toolu_img1");
}

/// A freeform call (Codex's `apply_patch`) is a functionCall of its structured form, counted in
/// the message's `x-handoff-event.freeform_calls`, and reads back as the freeform call; a web
/// search is refused naming the event.
#[test]
fn a_freeform_call_is_its_structured_form_marked_and_read_back() {
    let s = store();
    let patch = "*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch\n";
    let freeform = AssistantPart::ToolCall(ToolCall {
        id: "call_P1".into(),
        name: "apply_patch".into(),
        input: handoff_sdk::ToolInput::Freeform(patch.into()),
    });
    let t = Transcript::new(vec![
        user("u1", 0, "patch it"),
        assistant(
            "a1",
            1,
            vec![call("c1", json!({"dir_path": "."})), freeform],
        ),
        result("r1", 2, "c1", vec![Part::text("a.txt")], false),
        result("r2", 3, "call_P1", vec![Part::text("Success.")], false),
    ]);
    let session = create(&s, &t).unwrap();
    let records = lines(&session.path);
    let message = records.iter().find(|r| r["type"] == "gemini").unwrap();
    assert_eq!(
        message["content"][1]["functionCall"]["args"],
        json!({"input": patch})
    );
    assert_eq!(message["x-handoff-event"]["freeform_calls"], json!([1]));
    assert_eq!(message["toolCalls"][1]["args"], json!({"input": patch}));
    assert_same(&t, &read(&s, &session));
    // A marked call whose args are not the structured form is named, not guessed.
    let text = std::fs::read_to_string(&session.path).unwrap();
    std::fs::write(
        &session.path,
        text.replace("{\"input\":\"*** Begin", "{\"patch\":\"*** Begin"),
    )
    .unwrap();
    let err = GeminiPlugin
        .reader()
        .read(ReadFrom::Session(&s.root, &session))
        .unwrap_err()
        .to_string();
    assert!(err.contains("x-handoff-event.freeform_calls"), "{err}");

    let search = AssistantPart::WebSearch(handoff_sdk::WebSearch {
        id: None,
        status: None,
        action: json!({"type": "search", "query": "q"}),
    });
    let t = Transcript::new(vec![
        user("u1", 0, "search"),
        assistant("a1", 1, vec![search, AssistantPart::text("found")]),
    ]);
    match create(&s, &t) {
        Err(PluginError::NotCarried { index, feature, .. }) => {
            assert_eq!((index, feature), (1, handoff_sdk::Feature::WebSearch))
        }
        other => panic!("expected NotCarried, got {other:?}"),
    }
}

/// The SDK asks the target for the owner of a session before it appends or removes; gemini-cli's
/// `owner` refuses a file whose first line names another session, so a session handed in with
/// another's file is `NotFound` and that file is left as it was.
#[test]
fn a_session_handed_in_with_another_sessions_file_is_not_changed() {
    let s = store();
    let first = create(&s, &rich()).unwrap();
    let second = create(&s, &rich()).unwrap();
    let crossed = SessionRef {
        path: second.path.clone(),
        ..first.clone()
    };
    let before = std::fs::read(&second.path).unwrap();
    let more = [user("more", 9_000_000, "again")];
    for outcome in [
        GeminiPlugin
            .writer()
            .append(&s.root, &crossed, &more)
            .map(drop),
        GeminiPlugin.writer().remove(&s.root, &crossed),
    ] {
        match outcome {
            Err(PluginError::NotFound { id, searched, .. }) => {
                assert_eq!((id, searched), (first.id.clone(), second.path.clone()))
            }
            other => panic!("expected NotFound, got {other:?}"),
        }
    }
    assert_eq!(std::fs::read(&second.path).unwrap(), before);
}
