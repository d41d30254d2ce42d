//! The interrupted turn handed to a writer (issue 15): a transcript whose tool call has no result
//! (what the Gemini CLI reader reads from an interrupted Gemini turn, for instance). Each writer
//! writes it as it stands; its reader reads back what its CLI would send, so the continuation
//! engine's verify does not agree silently: it names the event where the CLI's conversation
//! differs. No CLI runs here.

use handoff_host::{
    AssistantPart, Body, CreateOptions, Event, Part, Plugin, ReadFrom, StoreRoot, Timestamp,
    ToolCall, Transcript,
};
use handoff_transcript::Comparison;
use serde_json::json;

fn interrupted() -> Transcript {
    let user = Event::new(
        "u1",
        Timestamp::from_millis(1_795_999_300_000),
        Body::User {
            content: vec![Part::text("list the folder")],
        },
    );
    let call = Event::new(
        "a1",
        Timestamp::from_millis(1_795_999_301_000),
        Body::assistant(vec![AssistantPart::ToolCall(ToolCall::new(
            "call_1",
            "shell",
            json!({"command": "ls"}),
        ))]),
    );
    let mut t = Transcript::new(vec![user, call]);
    t.cwd = Some("/home/dev/proj".into());
    t
}

/// Writes the interrupted transcript as `target` and reads it back.
fn round_trip(plugin: &dyn Plugin, target: &str) -> Transcript {
    let dir = tempfile::tempdir().unwrap();
    let root = StoreRoot::new(dir.path()).unwrap();
    let options = CreateOptions {
        cwd: Some("/home/dev/proj".into()),
        locator: None,
    };
    let session = plugin
        .writer()
        .create(&root, target, &interrupted(), &options)
        .unwrap_or_else(|e| panic!("{target}: {e}"));
    plugin
        .reader()
        .read(ReadFrom::Session(&root, &session))
        .unwrap_or_else(|e| panic!("{target}: {e}"))
}

fn result_of(t: &Transcript) -> Option<(&str, String, bool)> {
    let (call_id, content, is_error) = t.events.iter().find_map(|e| e.body.as_tool_result())?;
    Some((call_id, format!("{content:?}"), is_error))
}

fn verify_names_the_difference(target: &str, back: &Transcript) -> String {
    let diff = Comparison::exact()
        .diff(&interrupted(), back)
        .expect_err("the read-back is what the CLI sends, not the transcript written")
        .to_string();
    assert!(diff.contains("event "), "{target}: {diff}");
    diff
}

#[test]
fn codex_reads_back_its_aborted_output() {
    let back = round_trip(&handoff_codex::CodexPlugin, "codex");
    let (call, content, is_error) = result_of(&back).expect("Codex's output");
    assert_eq!(call, "call_1");
    assert!(content.contains("aborted") && !is_error, "{content}");
    verify_names_the_difference("codex", &back);
}

#[test]
fn pi_reads_back_its_no_result_error() {
    let back = round_trip(&handoff_pi::PiPlugin, "pi");
    let (call, content, is_error) = result_of(&back).expect("pi's result");
    assert_eq!(call, "call_1");
    assert!(
        content.contains("No result provided") && is_error,
        "{content}"
    );
    verify_names_the_difference("pi", &back);
}

#[test]
fn copilot_cli_reads_back_its_interrupted_result() {
    let back = round_trip(&handoff_copilot::CopilotPlugin, "copilot-cli");
    let (call, content, is_error) = result_of(&back).expect("Copilot CLI's result");
    assert_eq!(call, "call_1");
    assert!(
        content.contains("Tool execution was interrupted before a result was recorded.")
            && is_error,
        "{content}"
    );
    verify_names_the_difference("copilot-cli", &back);
}

/// Read as Claude Code 2.1.197 sends it: without the call.
#[test]
fn claude_code_reads_back_without_the_call() {
    let at_2_1_197 =
        handoff_claude::ClaudePluginReadingAs::version(handoff_claude::CLAUDE_CODE_VERSION);
    let back = round_trip(&at_2_1_197, "claude-code");
    assert_eq!(back.events.len(), 1, "{:?}", back.events);
    assert!(matches!(back.events[0].body, Body::User { .. }));
    let diff = verify_names_the_difference("claude-code", &back);
    assert!(diff.contains("a1"), "{diff}");
}

/// Read as Claude Code 2.1.332, the newest end and the default, sends it: the call answered by
/// its own error result.
#[test]
fn claude_code_reads_back_its_interrupted_result_at_the_newest_end() {
    let back = round_trip(&handoff_claude::ClaudePlugin, "claude-code");
    let (call, content, is_error) = result_of(&back).expect("Claude Code's result");
    assert_eq!(call, "call_1");
    assert!(
        content.contains("[Tool call interrupted: the session ended before") && is_error,
        "{content}"
    );
    verify_names_the_difference("claude-code", &back);
}

#[test]
fn gemini_cli_reads_back_the_call_as_it_stands() {
    let back = round_trip(&handoff_gemini::GeminiPlugin, "gemini-cli");
    assert!(result_of(&back).is_none());
    Comparison::exact()
        .diff(&interrupted(), &back)
        .unwrap_or_else(|d| panic!("gemini-cli sends the call as it is: {d}"));
}

#[test]
fn qwen_code_reads_back_its_unrecorded_result_error() {
    let back = round_trip(&handoff_qwen::QwenPlugin, "qwen-code");
    let (call, content, is_error) = result_of(&back).expect("Qwen Code's result");
    assert_eq!(call, "call_1");
    assert!(
        content.contains("Tool execution result was not recorded") && is_error,
        "{content}"
    );
    verify_names_the_difference("qwen-code", &back);
}
