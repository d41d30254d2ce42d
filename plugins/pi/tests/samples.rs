//! Every sample session reads, one test per file, with what it must contain: the two sessions the
//! real pi 0.73.1 wrote (shared/samples/genuine), one the real pi 1.6.0 wrote, pi-mono's public
//! v1 session, and a session the real pi 0.73.1 auto-compacted twice (tests/samples/README.md
//! says how each was made).

use std::path::PathBuf;

use handoff_live::harness::{self, shape, text_of};
use handoff_pi::{PiPlugin, OPAQUE_KEY, TARGET};
use handoff_sdk::serde_json::Value;
use handoff_sdk::{AssistantPart, Body, Event, Origin, Part, Plugin, ReadFrom, Transcript};

fn sample(folder: &str, file: &str) -> PathBuf {
    harness::sample(env!("CARGO_MANIFEST_DIR"), folder, file)
}

fn read(folder: &str, file: &str) -> Transcript {
    let path = sample(folder, file);
    let before = std::fs::read(&path).unwrap();
    let t = PiPlugin
        .reader()
        .read(ReadFrom::File(TARGET, &path))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    t.validate().unwrap();
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "the reader never rewrites a file"
    );
    t
}

fn pi<'a>(e: &'a Event, key: &str) -> Option<&'a Value> {
    e.opaque.get(OPAQUE_KEY)?.get(key)
}

fn fake_origin() -> Option<Origin> {
    Some(Origin::new("fake", "fake-model", "openai-completions"))
}

#[test]
fn genuine_plain_turn_then_resume() {
    let t = read(
        "genuine-pi-0.73.1",
        "2026-11-30T00-41-45-653Z_01a229e6-8fb3-71bc-b7eb-e70473137487.jsonl",
    );
    assert_eq!(t.cwd.as_deref(), Some("/home/dev/proj"));
    assert_eq!(shape(&t), "UAUA");
    let texts: Vec<String> = t.events.iter().map(text_of).collect();
    assert_eq!(texts, ["hi", "ok", "continue", "ok"]);
    let ids: Vec<&str> = t.events.iter().map(|e| e.id.as_str()).collect();
    assert_eq!(ids, ["87bcc600", "383bc4e7", "0894bb29", "07f7f467"]);
    // The message's own time, not the entry's (which is 32 ms later).
    assert_eq!(t.events[0].timestamp.millis(), 1_795_999_305_825);
    assert_eq!(t.events[1].timestamp.millis(), 1_795_999_306_083);
    let Body::Assistant { origin, .. } = &t.events[1].body else {
        panic!()
    };
    assert_eq!(origin, &fake_origin());
    // pi's own model and thinking-level entries ride on the first event.
    let before = pi(&t.events[0], "before").unwrap().as_array().unwrap();
    let kinds: Vec<&str> = before.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["model_change", "thinking_level_change"]);
    assert_eq!(before[0]["modelId"], "fake-model");
    assert_eq!(
        pi(&t.events[1], "message").unwrap()["responseId"],
        "chatcmpl-fake1795999306168"
    );
    assert_eq!(
        pi(&t.events[0], "line").unwrap()["timestamp"],
        "2026-11-30T00:41:45.857Z"
    );
}

#[test]
fn genuine_tool_turn() {
    let t = read(
        "genuine-pi-0.73.1",
        "2026-11-30T00-41-56-911Z_01a229e6-bba6-74e0-b59d-5af60023ff26.jsonl",
    );
    assert_eq!(shape(&t), "UARA");
    assert_eq!(text_of(&t.events[0]), "TOOLME");
    let Body::Assistant { content, origin } = &t.events[1].body else {
        panic!()
    };
    assert_eq!(origin, &fake_origin());
    let [AssistantPart::ToolCall(call)] = content.as_slice() else {
        panic!("{content:?}")
    };
    assert_eq!(call.id, "call_chatcmpl-fake1795999317315");
    assert_eq!(call.name, "bash");
    assert_eq!(call.arguments().unwrap()["command"], "echo hi-from-tool");
    let Body::ToolResult {
        call_id,
        content,
        is_error,
    } = &t.events[2].body
    else {
        panic!()
    };
    assert_eq!(call_id, &call.id);
    assert_eq!(content, &vec![Part::text("hi-from-tool\n")]);
    assert!(!is_error);
    // stopReason toolUse is implied by the call; usage as pi counted it is kept.
    let message = pi(&t.events[1], "message").unwrap();
    assert!(message.get("stopReason").is_none(), "{message}");
    assert_eq!(message["usage"]["totalTokens"], 11);
    assert_eq!(text_of(&t.events[3]), "ok");
}

#[test]
fn public_v1_session_from_pi_mono() {
    let t = read("public-pi-mono", "before-compaction.jsonl");
    assert_eq!(t.cwd.as_deref(), Some("/Users/badlogic/workspaces/pi-mono"));
    // v1 entries have no ids: each event is named by its line.
    assert_eq!(t.events[0].id, "L2");
    let s = shape(&t);
    assert_eq!(s.matches('C').count(), 2, "{s}");
    // The 19 assistant messages that stopped with error/aborted are not sent by pi: not events,
    // but carried on the next event.
    let assistants = s.matches('A').count();
    assert_eq!(assistants, 484 - 19);
    let carried_aborted = t
        .events
        .iter()
        .filter_map(|e| pi(e, "before").or_else(|| pi(e, "after")))
        .flat_map(|v| v.as_array().unwrap().iter())
        .filter(|e| {
            matches!(
                e["message"]["stopReason"].as_str(),
                Some("aborted" | "error")
            )
        })
        .count();
    assert_eq!(carried_aborted, 19);
    // Compactions: firstKeptEntryIndex 293 is line 294, 551 is line 552; each replaces through
    // the last event before that line.
    let compactions: Vec<(&str, &str)> = t
        .events
        .iter()
        .filter_map(|e| match &e.body {
            Body::Compaction {
                replaces_through, ..
            } => Some((e.id.as_str(), replaces_through.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(compactions, [("L360", "L293"), ("L629", "L551")]);
    // The user's `!ls` runs are sent as pi's bash text.
    let bash = t
        .events
        .iter()
        .find(|e| e.id == "L640")
        .expect("the bash run on line 640");
    assert!(
        text_of(bash).starts_with("Ran `ls`\n```\nAGENTS.md\n"),
        "{}",
        text_of(bash)
    );
    assert_eq!(
        pi(bash, "entry").unwrap()["message"]["role"],
        "bashExecution"
    );
    // Anthropic thinking keeps its signature, made by the turn's provider and model.
    let signed = t
        .events
        .iter()
        .find_map(|e| match &e.body {
            Body::Assistant { content, .. } => content.iter().find_map(|p| match p {
                AssistantPart::Thinking(th) => th.signature.as_ref(),
                _ => None,
            }),
            _ => None,
        })
        .expect("signed thinking");
    assert_eq!(signed.provider, "anthropic");
    assert_eq!(signed.model.as_deref(), Some("claude-opus-4-5"));
}

#[test]
fn session_the_real_pi_compacted_twice() {
    let t = read(
        "pi-0.73.1-compaction",
        "2026-12-01T04-01-57-278Z_01a22fc4-341d-7318-bf23-0b1169f2379b.jsonl",
    );
    // The governing (second) compaction comes right after what it replaces, before turn 5 it
    // keeps: pi sends its summary first.
    assert_eq!(shape(&t), "UAUAUACUACUA");
    let compactions: Vec<(&str, &str)> = t
        .events
        .iter()
        .filter_map(|e| match &e.body {
            Body::Compaction {
                replaces_through, ..
            } => Some((e.id.as_str(), replaces_through.as_str())),
            _ => None,
        })
        .collect();
    // firstKeptEntryId 7accf519 (turn 3) and 01876d60 (turn 5): each replaces through the
    // answer before it.
    assert_eq!(
        compactions,
        [("7a7f6851", "aab9ed91"), ("88839c5f", "479f41ac")]
    );
    assert_eq!(text_of(&t.events[6]), "ok");
    assert_eq!(
        pi(&t.events[6], "line").unwrap()["tokensBefore"].as_u64(),
        Some(4478)
    );
}

#[test]
fn genuine_pi_1_6_0_tool_turns_then_continue() {
    // Written by the real pi 1.6.0 (tests/samples/README.md): three parallel calls (one fails),
    // then `pi -c` with one more prompt; pi 1.6.0 records its system prompt as a `system`
    // message, which it never sends from the file (it sends its own instructions of the run).
    let t = read(
        "genuine-pi-1.6.0",
        "2026-12-02T09-44-44-052Z_01a23624-6314-742d-90c2-6b714c37d16f.jsonl",
    );
    assert_eq!(t.cwd.as_deref(), Some("/home/dev/proj"));
    assert_eq!(shape(&t), "UARREAUARREA");
    assert_eq!(text_of(&t.events[0]), "run the tools please");
    assert_eq!(text_of(&t.events[2]), "hi\nünïcode ✓\n");
    assert_eq!(text_of(&t.events[3]), "line one\nline two\n");
    assert!(
        text_of(&t.events[4]).contains("exited with code 3"),
        "{}",
        text_of(&t.events[4])
    );
    assert_eq!(text_of(&t.events[6]), "and once more");
    let Body::Assistant { content, origin } = &t.events[1].body else {
        panic!()
    };
    assert_eq!(origin, &fake_origin());
    let names: Vec<&str> = content
        .iter()
        .filter_map(|p| match p {
            AssistantPart::ToolCall(call) => Some(call.name.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(names, ["bash", "read", "bash"]);
    // The system message rides with pi's model and thinking-level entries before the first event.
    let before = pi(&t.events[0], "before").unwrap().as_array().unwrap();
    let kinds: Vec<&str> = before
        .iter()
        .map(|e| {
            e["message"]["role"]
                .as_str()
                .unwrap_or(e["type"].as_str().unwrap())
        })
        .collect();
    assert_eq!(kinds, ["model_change", "thinking_level_change", "system"]);
}
