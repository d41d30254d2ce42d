//! The reader's unit tests: events of user records, record ids, the typed path agreeing with
//! the general one, and the events' pass's decoding from located members agreeing with the
//! whole line's.

use std::path::Path;

use handoff_live::session_files::session_files;
use handoff_sdk::serde_json::{self, Value};
use handoff_sdk::{Body, Event, IdMap, Part, PluginError};

use super::decode::{index_node_of, node_of};
use super::index_record::IndexRecord;
use super::load::{full_record, typed_record, Loaded, MessageGroups, Passes};
use super::nodes::{IndexNode, Node, ReadRecord, Records};
use super::read;
use super::record_id::RecordId;
use super::spanned::node_from_spans;
use crate::claude_code::records::Record;

fn empty() -> Loaded {
    Loaded {
        records: Records {
            nodes: Default::default(),
            up: Vec::new(),
            unresolved: Vec::new(),
            groups: Vec::new(),
            index: Default::default(),
        },
        messages: MessageGroups::default(),
        cwd: None,
        session_id: None,
        models: Vec::new(),
        model_index: IdMap::default(),
        last_prompt_leaf: None,
        whole: Vec::new(),
        reread: None,
    }
}

/// The genuine Claude Code 2.1.197 session with a tool call (4 events), its lines changed by
/// `change`, read.
fn genuine_changed(change: impl FnOnce(&mut Vec<String>)) -> Result<Vec<Body>, PluginError> {
    let (_dir, file, lines) = genuine_file_changed(change);
    let whole = read(&file).map(|t| t.events);
    assert_eq!(streamed(&file), whole, "{}", lines.join("\n"));
    whole.map(|events| events.into_iter().map(|e| e.body).collect())
}

/// The genuine 2.1.197 session, changed by `change`, in a temporary folder (kept while the
/// first member lives): the file and its lines.
fn genuine_file_changed(
    change: impl FnOnce(&mut Vec<String>),
) -> (tempfile::TempDir, std::path::PathBuf, Vec<String>) {
    let sample = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/samples/genuine-2.1.197/31c027dc-f6fd-435e-b40a-e98d9514124a.jsonl"
    );
    let mut lines: Vec<String> = std::fs::read_to_string(sample)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    change(&mut lines);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.jsonl");
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    (dir, file, lines)
}

/// [`genuine_changed`] as the oldest end of the range (2.1.197) reads it, in two passes.
fn genuine_changed_as_oldest(change: impl FnOnce(&mut Vec<String>)) -> Vec<Body> {
    let (_dir, file, _) = genuine_file_changed(change);
    let mut bodies = Vec::new();
    super::read_each(
        &file,
        super::ReadRules::for_version(crate::manifest::CLAUDE_CODE_VERSION),
        &mut |e| {
            bodies.push(e.body);
            true
        },
    )
    .unwrap();
    bodies
}

/// The events `read_each` hands on (two passes), or its error, as `read` (one pass) gives them.
fn streamed(path: &Path) -> Result<Vec<Event>, PluginError> {
    let mut events = Vec::new();
    super::read_each(path, super::ReadRules::default(), &mut |e| {
        events.push(e);
        true
    })
    .map(|_| events)
}

/// Both passes agree with the one-pass read on every sample (the genuine sessions, compactions,
/// sidechains, parallel calls, streamed turns).
#[test]
fn the_streamed_read_agrees_with_the_whole_read_on_every_sample() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/samples");
    let mut files = 0;
    for folder in std::fs::read_dir(root).unwrap() {
        for file in std::fs::read_dir(folder.unwrap().path()).unwrap() {
            let path = file.unwrap().path();
            let whole = read(&path).map(|t| t.events).map_err(|e| e.to_string());
            let streamed = streamed(&path).map_err(|e| e.to_string());
            assert_eq!(streamed, whole, "{}", path.display());
            files += 1;
        }
    }
    assert!(files >= 5, "{files} sample files");
}

/// With its index in a temporary file from the first record (`spill_after` 0) or a few records
/// in (`3`: the first nodes written from the heap, the rest after), the streamed read gives every
/// Claude Code session at hand (the samples, the live differential's bases, the corpus of real
/// users' files) as the one-pass read does, errors included.
#[test]
fn a_read_with_its_index_in_a_file_agrees_with_the_whole_read() {
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/samples");
    let files = session_files(&samples, "claude-code", |_| true);
    for path in &files {
        let whole = read(path).map(|t| t.events).map_err(|e| e.to_string());
        for spill_after in [0, 3] {
            let mut events = Vec::new();
            let spilled = super::read_each_spilling_after(
                path,
                spill_after,
                super::ReadRules::default(),
                &mut |e| {
                    events.push(e);
                    true
                },
            )
            .map(|_| events)
            .map_err(|e| e.to_string());
            assert_eq!(spilled, whole, "{} ({spill_after})", path.display());
        }
    }
    assert!(files.len() >= 15, "{} session files", files.len());
}

/// The index pass past its threshold keeps its nodes in the file, and within it on the heap.
#[test]
fn the_index_goes_to_a_file_past_its_threshold_only() {
    let sample = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/samples/genuine-2.1.197/31c027dc-f6fd-435e-b40a-e98d9514124a.jsonl"
    );
    let records = |spill_after| {
        let loaded = super::load::load(Path::new(sample), Passes::Two, spill_after).unwrap();
        (loaded.records.nodes.len(), loaded.records.nodes.spilled())
    };
    let (count, spilled) = records(usize::MAX);
    assert!(count > 3 && !spilled);
    assert_eq!(records(count), (count, false));
    assert_eq!(records(count - 1), (count, true));
}

/// A bad line on the conversation is named (line and field) by both reads; a record off it is
/// judged by the index pass only as far as linking needs it.
#[test]
fn the_streamed_read_names_a_bad_record_of_the_conversation() {
    let bad_content = |l: &mut Vec<String>| {
        l[7] = l[7].replacen(r#""text":"ok""#, r#""text":5"#, 1);
    };
    let err = genuine_changed(bad_content).unwrap_err().to_string();
    assert!(
        err.contains("s.jsonl:8") && err.contains("message.content[0]"),
        "{err}"
    );
    let bad_timestamp = |l: &mut Vec<String>| {
        let at = l[7].find(r#""timestamp":""#).unwrap() + r#""timestamp":""#.len();
        l[7].replace_range(at..at + 4, "x026");
    };
    let err = genuine_changed(bad_timestamp).unwrap_err().to_string();
    assert!(
        err.contains("s.jsonl:8") && err.contains("timestamp"),
        "{err}"
    );
}

/// A record without a `timestamp` is read, as Claude Code 2.1.197 and 2.1.332 send it
/// (measured: differential case `records-without-timestamp`): its event takes the time of the
/// event before it, and the first one the epoch; every read agrees.
#[test]
fn a_record_without_a_timestamp_takes_the_time_of_the_event_before_it() {
    let sample = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/samples/genuine-2.1.197/31c027dc-f6fd-435e-b40a-e98d9514124a.jsonl"
    );
    let read_without_timestamps = |lines_at: &[usize]| {
        let mut lines: Vec<Value> = std::fs::read_to_string(sample)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        for &i in lines_at {
            assert!(lines[i]
                .as_object_mut()
                .unwrap()
                .remove("timestamp")
                .is_some());
        }
        let text: Vec<String> = lines.iter().map(Value::to_string).collect();
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("s.jsonl");
        std::fs::write(&file, text.join("\n") + "\n").unwrap();
        let whole = read(&file).unwrap().events;
        assert_eq!(streamed(&file).unwrap(), whole);
        let session = super::read_session(&file).unwrap();
        assert_eq!(
            session.transcript.events, whole,
            "the read an append starts from"
        );
        whole
    };
    let genuine = read_without_timestamps(&[]);
    // The final answer (line 8) and the first prompt (line 3).
    let changed = read_without_timestamps(&[7, 2]);
    assert_eq!(changed.len(), genuine.len());
    for (k, (c, g)) in changed.iter().zip(&genuine).enumerate() {
        assert_eq!((&c.id, &c.body), (&g.id, &g.body), "event {k}");
    }
    assert_eq!(changed[0].timestamp.millis(), 0, "the first: the epoch");
    assert_eq!(changed[1].timestamp, genuine[1].timestamp);
    assert_eq!(
        changed[3].timestamp, genuine[2].timestamp,
        "the answer: the result's time"
    );
}

/// A record off the conversation with a member of the wrong type (a queue-operation whose
/// timestamp is an object) is passed over by every read, as Claude Code 2.1.197 passes it over
/// (measured: `live/tests/differential.rs`, `queue-timestamp-object`); the same fault on a
/// conversation record is named by every read (above).
#[test]
fn a_record_off_the_conversation_with_a_bad_member_is_passed_over_by_every_read() {
    let genuine = genuine_changed(|_| {}).unwrap();
    let object_timestamp = |l: &mut Vec<String>| {
        assert!(l[0].contains(r#""type":"queue-operation""#), "{}", l[0]);
        let at = l[0].find(r#""timestamp":""#).unwrap() + r#""timestamp":"#.len();
        l[0].replace_range(at..at + 26, r#"{"seconds":1796000000}"#);
    };
    assert_eq!(genuine_changed(object_timestamp).unwrap(), genuine);
    // And the read an append starts from.
    let sample = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/samples/genuine-2.1.197/31c027dc-f6fd-435e-b40a-e98d9514124a.jsonl"
    );
    let mut lines: Vec<String> = std::fs::read_to_string(sample)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    object_timestamp(&mut lines);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.jsonl");
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let session = super::read_session(&file).unwrap();
    let bodies: Vec<Body> = session
        .transcript
        .events
        .into_iter()
        .map(|e| e.body)
        .collect();
    assert_eq!(bodies, genuine);
}

// Issue 15, measured with the real Claude Code 2.1.197 (live/tests/differential.rs): it resumes
// all 4 events of these files.
#[test]
fn a_child_record_before_its_parent_keeps_the_final_turn() {
    let genuine = genuine_changed(|_| {}).unwrap();
    assert_eq!(genuine.len(), 4);
    // The final answer (line 8) written before the tool result it answers (line 7).
    let swapped = genuine_changed(|l| l.swap(6, 7)).unwrap();
    assert_eq!(swapped, genuine);
    let reversed = genuine_changed(|l| l.reverse()).unwrap();
    assert_eq!(reversed, genuine);
}

#[test]
fn a_repeated_record_a_blank_line_and_a_bom_change_nothing() {
    let genuine = genuine_changed(|_| {}).unwrap();
    let repeated = genuine_changed(|l| {
        let answer = l[7].clone();
        l.insert(8, answer);
    })
    .unwrap();
    assert_eq!(repeated, genuine);
    assert_eq!(
        genuine_changed(|l| l.insert(4, String::new())).unwrap(),
        genuine
    );
    assert_eq!(
        genuine_changed(|l| l[0].insert(0, '\u{feff}')).unwrap(),
        genuine
    );
}

#[test]
fn a_torn_last_line_is_named() {
    let torn = genuine_changed(|l| {
        let last = l.len() - 1;
        l[last].truncate(10);
    });
    let err = torn.unwrap_err().to_string();
    assert!(err.contains("s.jsonl:9"), "{err}");
}

/// A node with what `node_of` kept beside it, or the error, as text.
type Outcome = Result<
    (
        Option<ReadRecord>,
        Option<String>,
        Option<String>,
        Vec<Box<str>>,
    ),
    String,
>;

fn finish(loaded: Loaded, node: Result<Option<ReadRecord>, PluginError>) -> Outcome {
    node.map(|n| (n, loaded.cwd, loaded.session_id, loaded.models))
        .map_err(|e| e.to_string())
}

/// The typed path's outcome (`None` when it hands the line to the general path) and the
/// general path's.
fn both(line: &[u8]) -> (Option<Outcome>, Outcome) {
    let path = Path::new("s.jsonl");
    let typed = typed_record(line).map(|r| {
        let mut loaded = empty();
        let node = node_of(path, 1, r, &mut loaded);
        finish(loaded, node)
    });
    let mut loaded = empty();
    let general = match serde_json::from_slice::<Record<'_, Value>>(line) {
        Ok(r) => {
            let node = node_of(path, 1, r, &mut loaded);
            finish(loaded, node)
        }
        Err(e) => Err(e.to_string()),
    };
    (typed, general)
}

/// Where the typed path decodes a line, it decodes it as the general path does.
fn agrees(line: &[u8]) -> bool {
    let (typed, general) = both(line);
    if let Some(typed) = &typed {
        assert_eq!(typed, &general, "{}", String::from_utf8_lossy(line));
    }
    typed.is_some()
}

#[test]
fn a_user_record_gives_an_event_per_result_and_per_run_of_other_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.jsonl");
    let head = r#""type":"user","isSidechain":false,"timestamp":"2026-01-01T00:00:00.000Z""#;
    let text = format!(
        "{{{head},\"uuid\":\"a\",\"parentUuid\":null,\"message\":{{\"role\":\"user\",\"content\":[\
         {{\"type\":\"text\",\"text\":\"hi\"}},\"there\",\
         {{\"type\":\"tool_result\",\"tool_use_id\":\"t1\",\"content\":\"r1\"}},\
         {{\"type\":\"tool_result\",\"tool_use_id\":\"t2\",\"content\":[],\"is_error\":true}},\
         {{\"type\":\"text\",\"text\":\"bye\"}}]}}}}\n\
         {{{head},\"uuid\":\"b\",\"parentUuid\":\"a\",\"message\":{{\"role\":\"user\",\"content\":[]}}}}\n"
    );
    std::fs::write(&file, text).unwrap();
    let t = read(&file).unwrap();
    let ids: Vec<&str> = t.events.iter().map(|e| e.id.as_str()).collect();
    // `b`, of an empty array, is no event as the newest end reads (`empty_user_content_dropped`).
    assert_eq!(ids, ["a", "a:1", "a:2", "a:3"]);
    let user = |texts: &[&str]| Body::User {
        content: texts.iter().map(|&t| Part::text(t)).collect(),
    };
    // The bare string "there" is left out as the newest end reads (`bare_string_blocks_dropped`).
    assert_eq!(t.events[0].body, user(&["hi"]));
    assert_eq!(
        t.events[1].body,
        Body::ToolResult {
            call_id: "t1".into(),
            content: vec![Part::text("r1")],
            is_error: false
        }
    );
    assert_eq!(
        t.events[2].body,
        Body::ToolResult {
            call_id: "t2".into(),
            content: vec![],
            is_error: true
        }
    );
    assert_eq!(t.events[3].body, user(&["bye"]));
}

#[test]
fn record_ids_keep_their_text() {
    for text in [
        "31c027dc-f6fd-435e-b40a-e98d9514124a",
        "00000000-0000-0000-0000-000000000000",
        "ffffffff-ffff-ffff-ffff-ffffffffffff",
    ] {
        assert!(matches!(RecordId::new(text), RecordId::Uuid(_)), "{text}");
        assert_eq!(RecordId::new(text).to_text(), text);
    }
    // Anything but the lowercase hyphenated form is kept as text, so it reads back as written.
    for text in [
        "31C027DC-F6FD-435E-B40A-E98D9514124A",
        "31c027dcf6fd435eb40ae98d9514124a",
        "31c027dc-f6fd-435e-b40a-e98d9514124g",
        "31c027dc-f6fd-435e-b40ae-98d9514124a",
        "msg-1",
        "",
    ] {
        assert!(matches!(RecordId::new(text), RecordId::Text(_)), "{text}");
        assert_eq!(RecordId::new(text).to_text(), text);
    }
}

/// Every non-empty line of every sample session.
fn sample_lines() -> Vec<Vec<u8>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/samples");
    let mut lines = Vec::new();
    for folder in std::fs::read_dir(root).unwrap() {
        for file in std::fs::read_dir(folder.unwrap().path()).unwrap() {
            let text = std::fs::read(file.unwrap().path()).unwrap();
            let file_lines = text.split(|&b| b == b'\n').filter(|l| !l.is_empty());
            lines.extend(file_lines.map(<[u8]>::to_vec));
        }
    }
    lines
}

#[test]
fn the_typed_path_agrees_with_the_general_one_on_every_sample_line() {
    let (mut lines, mut typed) = (0, 0);
    for line in sample_lines() {
        lines += 1;
        typed += usize::from(agrees(&line));
    }
    // Most lines are plain text, thinking, calls and results: the typed path's.
    assert!(typed * 10 >= lines * 8, "{typed} of {lines} lines typed");
}

#[test]
fn the_typed_path_agrees_on_edge_cases_or_hands_them_over() {
    let head = r#""type":"assistant","uuid":"u1","parentUuid":null,"timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p","sessionId":"s""#;
    let typed = [
        r#"{"message":{"id":"m","model":"claude-x","content":"plain"}}"#,
        r#"{"message":{"model":"claude-x","content":[{"type":"thinking","thinking":"t","signature":"sig"}]},"handoff":{"signatureModel":"other"}}"#,
        r#"{"handoff":{"signatureModel":null},"message":{"model":"claude-x","content":[{"type":"thinking","thinking":"t","signature":"sig"}]}}"#,
        r#"{"message":{"model":"claude-x","content":[{"type":"thinking","thinking":"t","signature":""},{"type":"thinking","thinking":"u","signature":null}]}}"#,
        r#"{"message":{"model":"claude-x","content":[{"type":"redacted_thinking","data":"d"}]}}"#,
        r#"{"message":{"content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"n":1.50,"big":123456789012345678901234567890}}]}}"#,
        r#"{"message":{"content":[{"type":"text","text":"a\n\"b\" \u00e9","cache_control":{"type":"ephemeral"}},"bare"]}}"#,
        r#"{"message":{"content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"x"}],"is_error":true}]}}"#,
        r#"{"message":{"content":[{"type":"tool_result","tool_use_id":"toolu_1","content":null,"is_error":null}]}}"#,
        r#"{"message":{"content":[{"type":"tool_result","tool_use_id":"toolu_1"}]}}"#,
        r#"{"message":{"content":[]},"usage":{"input_tokens":12,"x":[1,2.5e3]},"version":"2.1.197"}"#,
        // Errors of the record, not of its decoding, are the same on both paths.
        r#"{"message":{"content":null}}"#,
        r#"{"message":{}}"#,
        r#"{"message":{"content":"x"},"handoff":{"author":{"kind":"human","name":"Ann"},"origin":null}}"#,
        r#"{"message":{"id":"m\u0041\n","model":"c\"x","content":"x"},"subtype":"\u0041"}"#,
        // Images, of a prompt and of a tool result, with members the general path passes over.
        r#"{"message":{"content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"aGk="}}]}}"#,
        r#"{"message":{"content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"a\/k=","x":1},"cache_control":{}}]}}"#,
        r#"{"message":{"content":[{"type":"image","source":{"type":"url","url":"https://x/y.png"}}]}}"#,
        r#"{"message":{"content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"see"},{"type":"image","source":{"type":"base64","media_type":"image/jpeg","data":""}}]}]}}"#,
        r#"{"message":{"content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"image","source":{"type":"url","url":"u"}}]}]}}"#,
        // Base64 spelled with escapes (read as bytes, the escapes undone as a string's are).
        r#"{"message":{"content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"\u0061Gk\u003d"}}]}}"#,
    ];
    for rest in typed {
        let line = format!("{{{head},{}", &rest[1..]);
        assert!(agrees(line.as_bytes()), "{line}");
    }
    let handed_over = [
        r#"{"message":{"content":[{"type":"text","text":"a","text":"b"}]}}"#,
        r#"{"message":{"content":[{"type":"text","text":null}]}}"#,
        r#"{"message":{"content":[{"type":"text"}]}}"#,
        r#"{"message":{"content":[{"type":"text","text":"a","id":5}]}}"#,
        r#"{"message":{"content":[{"type":"tool_use","id":"t","name":"n","input":null}]}}"#,
        r#"{"message":{"content":[{"type":"tool_use","id":"t","name":"n"}]}}"#,
        r#"{"message":{"content":[{"type":"thinking","thinking":"t","signature":5}]}}"#,
        // Not base64, no data, no media type, a source of another kind, an image item without
        // a source: the general path judges them.
        r#"{"message":{"content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"!!"}}]}}"#,
        r#"{"message":{"content":[{"type":"image","source":{"type":"base64","media_type":"image/png"}}]}}"#,
        r#"{"message":{"content":[{"type":"image","source":{"type":"base64","media_type":null,"data":"aGk="}}]}}"#,
        r#"{"message":{"content":[{"type":"image","source":{"type":"file","file_id":"f"}}]}}"#,
        r#"{"message":{"content":[{"type":"image","source":"aGk="}]}}"#,
        r#"{"message":{"content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"image"}]}]}}"#,
        // Data a string could not hold, or that is not a string: an escaped control character,
        // text that is not ASCII, an array of the numbers of `aGk=`, a number.
        r#"{"message":{"content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"aG\u0001k="}}]}}"#,
        r#"{"message":{"content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"aGé="}}]}}"#,
        r#"{"message":{"content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":[97,71,107,61]}}]}}"#,
        r#"{"message":{"content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":5}}]}}"#,
        r#"{"message":{"content":[{"type":"document","source":{}}]}}"#,
        r#"{"message":{"content":[{"type":"tool_result","tool_use_id":"t","content":5}]}}"#,
        r#"{"message":{"content":[5]}}"#,
        r#"{"message":{"content":{"type":"text"}}}"#,
        r#"{"message":"x"}"#,
        r#"{"message":{"content":"x"},"uuid":"again"}"#,
        r#"{"message":{"content":"x"},"isSidechain":"no"}"#,
    ];
    for rest in handed_over {
        let line = format!("{{{head},{}", &rest[1..]);
        assert!(!agrees(line.as_bytes()), "{line}");
    }
    // Not UTF-8: the general path reports it.
    let mut line = format!("{{{head},\"message\":{{\"content\":\"").into_bytes();
    line.extend_from_slice(b"\xff\"}}");
    assert!(!agrees(&line));
    // A raw control character in an image's base64 (no JSON string holds one): handed over,
    // and the general path refuses the line.
    let line = format!(
        "{{{head},\"message\":{{\"content\":[{{\"type\":\"image\",\"source\":{{\"type\":\
         \"base64\",\"media_type\":\"image/png\",\"data\":\"aG\u{1}k=\"}}}}]}}}}"
    );
    let (typed, general) = both(line.as_bytes());
    assert!(typed.is_none() && general.is_err(), "{line}: {general:?}");
}

/// The resume plan's cwd scan gives what the whole read gives: on every sample, and when the
/// first records are bookkeeping, sidechain or cwd-less (the scan must skip them as the loader
/// does), and a bad line before the cwd is an error naming it, as the whole read's is.
#[test]
fn the_cwd_scan_agrees_with_the_whole_read() {
    let samples = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/samples");
    for folder in std::fs::read_dir(samples).unwrap() {
        for file in std::fs::read_dir(folder.unwrap().path()).unwrap() {
            let path = file.unwrap().path();
            let whole = read(&path).map(|t| t.cwd);
            match super::session_cwd(&path) {
                Ok(cwd) => assert_eq!(Some(cwd), whole.ok(), "{}", path.display()),
                Err(e) => assert!(whole.is_err(), "{}: {e}", path.display()),
            }
        }
    }
    let record = |extra: &str| {
        format!(
            r#"{{"type":"user","uuid":"00000000-0000-4000-8000-000000000001","parentUuid":null,"timestamp":"2026-11-30T00:41:41.000Z","message":{{"role":"user","content":"hi"}}{extra}}}"#
        )
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.jsonl");
    let lines = [
        r#"{"type":"queue-operation","cwd":"/not/this"}"#.to_owned(),
        record(r#","isSidechain":true,"cwd":"/nor/this""#).replace("0001", "0002"),
        record("").replace("0001", "0003"),
        record(r#","cwd":"/this""#).replace(
            "0001\",\"parentUuid\":null",
            "0001\",\"parentUuid\":\"00000000-0000-4000-8000-000000000003\"",
        ),
    ];
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    assert_eq!(read(&file).unwrap().cwd.as_deref(), Some("/this"));
    assert_eq!(super::session_cwd(&file).unwrap().as_deref(), Some("/this"));
    std::fs::write(
        &file,
        // Not JSON (a record with a uuid that is no string is skipped, as Claude Code keys
        // records by uuid: the scan and the read then agree on the next line's parent).
        "{\"type\":\"user\",\"uuid\":5\n".to_owned() + &lines[3] + "\n",
    )
    .unwrap();
    let err = super::session_cwd(&file).unwrap_err().to_string();
    assert!(err.contains("line 1"), "{err}");
    assert_eq!(read(&file).unwrap_err().to_string(), err);
}

/// A compaction that keeps records (the writer's layout for Codex's order): a boundary after the
/// first prompt, the rest of the turn hanging on it, and the summary after the answer. The
/// compaction comes after the kept events and replaces through the record before its boundary.
#[test]
fn a_compaction_keeps_the_records_between_its_boundary_and_its_summary() {
    let prompt = "f6cc5a97-0bd4-499f-93a5-ed36d47451ef";
    let keep_turn = |l: &mut Vec<String>| {
        let record = |i: usize| serde_json::from_str::<Value>(&l[i]).unwrap();
        let mut boundary = record(4);
        boundary["type"] = "system".into();
        boundary["subtype"] = "compact_boundary".into();
        boundary["content"] = "Conversation compacted".into();
        boundary["parentUuid"] = Value::Null;
        boundary["logicalParentUuid"] = record(4)["uuid"].clone();
        boundary["uuid"] = "00000000-0000-4000-8000-0000000000b1".into();
        let mut first_kept = record(5);
        first_kept["parentUuid"] = boundary["uuid"].clone();
        let mut summary = record(2);
        summary["uuid"] = "00000000-0000-4000-8000-0000000000b2".into();
        summary["parentUuid"] = record(7)["uuid"].clone();
        summary["isCompactSummary"] = true.into();
        summary["message"]["content"] = "The user asked for a tool.".into();
        l[5] = first_kept.to_string();
        l.insert(8, summary.to_string());
        l.insert(5, boundary.to_string());
    };
    let bodies = genuine_changed(keep_turn).unwrap();
    let kinds: Vec<&str> = bodies
        .iter()
        .map(|b| match b {
            Body::User { .. } => "user",
            Body::Assistant { .. } => "assistant",
            Body::ToolResult { .. } => "result",
            Body::Compaction { .. } => "compaction",
        })
        .collect();
    assert_eq!(
        kinds,
        ["user", "assistant", "result", "assistant", "compaction"]
    );
    let Body::Compaction {
        replaces_through,
        summary,
    } = &bodies[4]
    else {
        unreachable!()
    };
    assert_eq!(
        (replaces_through.as_str(), summary.as_str()),
        (prompt, "The user asked for a tool.")
    );
}

/// The events' pass's decoding of `line` from the members its index pass located (`None`: it
/// hands the line to the whole-line decoding), and the whole-line decoding's node or error.
fn spanned_and_whole(line: &[u8]) -> (Option<Node>, Result<Option<Node>, String>) {
    let path = Path::new("s.jsonl");
    let mut loaded = empty();
    let index = std::str::from_utf8(line)
        .ok()
        .and_then(|text| IndexRecord::parse(text).ok())
        .and_then(|record| index_node_of(path, 1, record, &mut loaded).ok().flatten())
        .map(|r| IndexNode::of(&r.node, r.parent, r.spans, (0, line.len())).0);
    let spanned = index.and_then(|index| node_from_spans(path, &index, line, &mut loaded));
    let whole = full_record(path, 1, line, true, &mut empty())
        .map(|r| r.map(|r| r.node))
        .map_err(|e| e.to_string());
    (spanned, whole)
}

/// Where the spans serve, they decode the line as the whole-line decoding does.
fn spans_agree(line: &[u8]) -> bool {
    let (spanned, whole) = spanned_and_whole(line);
    if let Some(spanned) = &spanned {
        assert_eq!(
            Ok(Some(spanned)),
            whole.as_ref().map(Option::as_ref),
            "{}",
            String::from_utf8_lossy(line)
        );
    }
    spanned.is_some()
}

#[test]
fn the_spans_decode_every_sample_line_as_the_whole_line() {
    let (mut conversational, mut spanned) = (0, 0);
    for line in sample_lines() {
        let user_or_assistant = [&b"\"type\":\"user\""[..], b"\"type\":\"assistant\""]
            .iter()
            .any(|t| line.windows(t.len()).any(|w| w == *t));
        conversational += usize::from(user_or_assistant);
        spanned += usize::from(spans_agree(&line));
    }
    assert!(
        spanned * 10 >= conversational * 7,
        "{spanned} of {conversational} spanned"
    );
}

#[test]
fn the_spans_agree_on_edge_cases_or_hand_them_over() {
    let head = r#""type":"assistant","uuid":"u1","parentUuid":null,"cwd":"/p","sessionId":"s""#;
    let ts = r#""timestamp":"2026-01-01T00:00:00.000Z""#;
    let spanned = [
        format!(r#"{{{head},{ts},"message":{{"id":"m","model":"claude-x","content":"plain"}}}}"#),
        format!(r#"{{{head},{ts},"message" :	{{"model":"claude-x","content":[{{"type":"thinking","thinking":"t","signature":"sig"}}]}} , "handoff" : {{"signatureModel":"other"}}}}"#),
        format!(r#"{{"handoff":{{"origin":null,"author":{{"kind":"human","name":"Ann"}}}},{head},"message":{{"content":"x"}},{ts}}}"#),
        format!(r#"{{{head},{ts},"handoff":null,"message":{{"content":[]}},"usage":{{"n":1}}}}"#),
        format!(r#"{{{head},{ts},"message":{{"content":[{{"type":"tool_result","tool_use_id":"t","content":"r"}}]}}}}"#).replace("assistant", "user"),
        format!(r#"{{{head},{ts},"isMeta":true,"isCompactSummary":true,"message":{{"content":"sum"}}}}"#).replace("assistant", "user"),
        // No timestamp: a record Claude Code keeps.
        format!(r#"{{{head},"message":{{"content":"x"}}}}"#),
        format!(r#"{{{head},{ts},"message":{{"content":[{{"type":"image","source":{{"type":"base64","media_type":"image/png","data":"aGk="}}}}]}}}}"#),
    ];
    for line in &spanned {
        assert!(spans_agree(line.as_bytes()), "{line}");
    }
    let handed_over = [
        // Names escaped or repeated: a decoding of the line may read another member.
        format!(r#"{{{head},{ts},"mess\u0061ge":{{"content":"x"}}}}"#),
        format!(
            r#"{{{head},"time\u0073tamp":"2026-01-01T00:00:00.000Z","message":{{"content":"x"}}}}"#
        ),
        format!(r#"{{{head},{ts},{ts},"message":{{"content":"x"}}}}"#),
        format!(
            r#"{{{head},{ts},"handoff":{{}},"handoff":{{"origin":null}},"message":{{"content":"x"}}}}"#
        ),
        // What the whole line decides, and names.
        format!(r#"{{{head},"timestamp":null,"message":{{"content":"x"}}}}"#),
        format!(r#"{{{head},"timestamp":"yesterday","message":{{"content":"x"}}}}"#),
        format!(r#"{{{head},{ts},"message":null}}"#),
        format!(r#"{{{head},{ts},"message":{{"content":null}}}}"#),
        format!(r#"{{{head},{ts}}}"#),
        format!(r#"{{{head},{ts},"handoff":5,"message":{{"content":"x"}}}}"#),
        format!(
            r#"{{{head},{ts},"message":{{"content":[{{"type":"image","source":{{"type":"base64","media_type":"image/png","data":"!!"}}}}]}}}}"#
        ),
        format!(r#"{{{head},{ts},"message":{{"content":5}}}}"#),
        // Not a user or assistant record.
        format!(r#"{{{head},{ts},"message":{{"content":"x"}}}}"#).replace("assistant", "system"),
    ];
    for line in &handed_over {
        assert!(!spans_agree(line.as_bytes()), "{line}");
    }
}

#[test]
fn a_line_that_holds_another_record_now_is_decoded_whole() {
    let line = |uuid: &str| {
        format!(
            r#"{{"type":"user","uuid":"{uuid}","parentUuid":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{{"content":"x"}}}}"#
        )
    };
    let path = Path::new("s.jsonl");
    let mut loaded = empty();
    let first = line("a");
    let record = IndexRecord::parse(&first).unwrap();
    let record = index_node_of(path, 1, record, &mut loaded)
        .unwrap()
        .unwrap();
    let index = IndexNode::of(&record.node, record.parent, record.spans, (0, first.len())).0;
    assert!(node_from_spans(path, &index, first.as_bytes(), &mut loaded).is_some());
    assert!(node_from_spans(path, &index, line("b").as_bytes(), &mut loaded).is_none());
}

/// A `system` record of subtype `local_command`, as Claude Code writes one, hanging on `parent`.
fn local_command_line(uuid: &str, parent: &str, content: &str) -> String {
    serde_json::json!({"parentUuid": parent, "isSidechain": false, "userType": "external",
        "cwd": "/home/dev/proj", "sessionId": "31c027dc-f6fd-435e-b40a-e98d9514124a",
        "type": "system", "subtype": "local_command", "content": content, "level": "info",
        "timestamp": "2026-11-30T00:41:59.000Z", "uuid": uuid, "isMeta": false})
    .to_string()
}

/// A local command's records (the command, its output) are user texts, their content as is, as
/// Claude Code 2.1.197 and 2.1.332 send them (measured: differential cases `local-command`,
/// `local-command-at-end`); one whose content is no string is named.
#[test]
fn a_local_command_record_reads_as_a_user_text() {
    const ANSWER: &str = "7401c41e-aff8-4dea-b4d2-5b0aaf195ed3";
    const COMMAND: &str = "<command-name>/model</command-name>";
    const OUTPUT: &str = "<local-command-stdout>Kept model as Opus</local-command-stdout>";
    let genuine = genuine_changed(|_| {}).unwrap();
    let with_command = genuine_changed(|l| {
        assert!(l[7].contains(ANSWER), "{}", l[7]);
        l.push(local_command_line("c-1", ANSWER, COMMAND));
        l.push(local_command_line("c-2", "c-1", OUTPUT));
    })
    .unwrap();
    let text = |text: &str| Body::User {
        content: vec![Part::Text { text: text.into() }],
    };
    let mut expected = genuine.clone();
    expected.extend([text(COMMAND), text(OUTPUT)]);
    assert_eq!(with_command, expected);
    // Off the conversation (another subtype, or on no chain the leaf reaches) nothing changes.
    let informational = genuine_changed(|l| {
        let line = local_command_line("c-1", ANSWER, COMMAND);
        l.push(line.replace("local_command", "informational"));
    })
    .unwrap();
    assert_eq!(informational, genuine);
    let not_text = genuine_changed(|l| {
        let line = local_command_line("c-1", ANSWER, COMMAND);
        l.push(line.replace(&format!("\"{COMMAND}\""), "[1]"));
    })
    .unwrap_err()
    .to_string();
    assert!(
        not_text.contains("s.jsonl:10") && not_text.contains("content"),
        "{not_text}"
    );
}

/// What Claude Code 2.1.197 and 2.1.332 send as it is but the transcript cannot hold is refused,
/// naming the file, line and field and why (measured: differential cases
/// `tool-use-without-input`, `unknown-block-type`, `document-block`): a call without `input`
/// (which the API refuses), and a block of a kind the transcript has no form for.
#[test]
fn what_claude_code_sends_and_the_transcript_cannot_hold_is_refused_saying_why() {
    let without_input = genuine_changed(|l| {
        let input = r#","input":{"command":"echo hi-from-tool","description":"echo"}"#;
        assert!(l[5].contains(input), "{}", l[5]);
        l[5] = l[5].replacen(input, "", 1);
    })
    .unwrap_err()
    .to_string();
    assert!(
        without_input.contains("s.jsonl:6")
            && without_input.contains("message.content[0].input")
            && without_input.contains("the API refuses"),
        "{without_input}"
    );
    let document = r#"[{"type":"document","source":{"type":"text","media_type":"text/plain","data":"notes"}},{"type":"text","text":"TOOLME"}]"#;
    let with_document = genuine_changed(|l| {
        l[2] = l[2].replacen(
            r#""content":"TOOLME""#,
            &format!(r#""content":{document}"#),
            1,
        );
    })
    .unwrap_err()
    .to_string();
    assert!(
        with_document.contains("s.jsonl:3")
            && with_document.contains("message.content[0]")
            && with_document.contains("\"document\" block has no canonical form")
            && with_document.contains("no target could carry it"),
        "{with_document}"
    );
}

/// A user record whose content is an empty array: Claude Code 2.1.332 does not send it (its link
/// holds), 2.1.197 sends it empty (measured: differential case `empty-user-content`); the reader
/// reads as the version it reads for.
#[test]
fn an_empty_user_record_is_dropped_as_the_newest_end_reads() {
    let genuine = genuine_changed(|_| {}).unwrap();
    let empty = |l: &mut Vec<String>| {
        assert!(l[2].contains(r#""content":"TOOLME""#), "{}", l[2]);
        l[2] = l[2].replacen(r#""content":"TOOLME""#, r#""content":[]"#, 1);
    };
    assert_eq!(genuine_changed(empty).unwrap(), genuine[1..]);
    let oldest = genuine_changed_as_oldest(empty);
    assert_eq!(oldest[0], Body::User { content: vec![] });
    assert_eq!(oldest[1..], genuine[1..]);
}

/// A bare string among a prompt's blocks: Claude Code 2.1.332 leaves it out, 2.1.197 sends it as
/// it is (measured: differential case `bare-string-block`); the reader reads it out or as text,
/// as the version it reads for, on the typed and the general path alike.
#[test]
fn a_bare_string_block_is_dropped_as_the_newest_end_reads_and_text_as_the_oldest() {
    let genuine = genuine_changed(|_| {}).unwrap();
    for (blocks, general) in [
        (
            r#"["a bare string",{"type":"text","text":"TOOLME"}]"#,
            false,
        ),
        // A member of another type than the typed path's (a text block's `id`) sends the line
        // to the general path, which passes it over.
        (
            r#"["a bare string",{"type":"text","text":"TOOLME"},{"type":"text","text":"x","id":5}]"#,
            true,
        ),
    ] {
        let change = |l: &mut Vec<String>| {
            assert!(l[2].contains(r#""content":"TOOLME""#), "{}", l[2]);
            l[2] = l[2].replacen(
                r#""content":"TOOLME""#,
                &format!(r#""content":{blocks}"#),
                1,
            );
        };
        let newest = genuine_changed(change).unwrap();
        let Body::User { content } = &newest[0] else {
            panic!("{newest:?}")
        };
        assert_eq!(content[0], Part::text("TOOLME"));
        assert_eq!(content.len(), 1 + usize::from(general));
        assert_eq!(newest[1..], genuine[1..]);
        let oldest = genuine_changed_as_oldest(change);
        let Body::User { content } = &oldest[0] else {
            panic!("{oldest:?}")
        };
        assert_eq!(
            content[..2],
            [Part::text("a bare string"), Part::text("TOOLME")]
        );
        assert_eq!(oldest[1..], genuine[1..]);
    }
}

/// A prompt of bare strings only, with no parent, written last and no `last-prompt` naming a
/// leaf: Claude Code 2.1.332 resumes the conversation before it (it is no leaf: nothing of it is
/// sent), 2.1.197 resumes from it, the string as text (measured: differential case
/// `bare-string-root-prompt-at-end`).
#[test]
fn a_prompt_of_bare_strings_only_is_no_leaf_as_the_newest_end_reads() {
    let genuine = genuine_changed(|_| {}).unwrap();
    for blocks in [
        serde_json::json!(["wow error"]),
        serde_json::json!(["wow", "error"]),
    ] {
        let change = |l: &mut Vec<String>| {
            l.retain(|line| !line.contains(r#""type":"last-prompt""#));
            let mut prompt: serde_json::Value = serde_json::from_str(&l[2]).unwrap();
            assert_eq!(prompt["message"]["content"], "TOOLME", "{}", l[2]);
            prompt["parentUuid"] = serde_json::Value::Null;
            prompt["uuid"] = "22222222-3333-4444-8555-666666666666".into();
            prompt["message"]["content"] = blocks.clone();
            l.push(prompt.to_string());
        };
        assert_eq!(genuine_changed(change).unwrap(), genuine);
        let oldest = genuine_changed_as_oldest(change);
        let texts: Vec<Part> = blocks
            .as_array()
            .unwrap()
            .iter()
            .map(|s| Part::text(s.as_str().unwrap()))
            .collect();
        assert_eq!(oldest, [Body::User { content: texts }]);
    }
    // One block object among them: a leaf at every version.
    let with_text = genuine_changed(|l| {
        l.retain(|line| !line.contains(r#""type":"last-prompt""#));
        let mut prompt: serde_json::Value = serde_json::from_str(&l[2]).unwrap();
        prompt["parentUuid"] = serde_json::Value::Null;
        prompt["uuid"] = "22222222-3333-4444-8555-666666666666".into();
        prompt["message"]["content"] = serde_json::json!(["wow", {"type": "text", "text": "hi"}]);
        l.push(prompt.to_string());
    })
    .unwrap();
    assert_eq!(
        with_text,
        [Body::User {
            content: vec![Part::text("hi")]
        }]
    );
}
