//! Gemini CLI masks older tool outputs once a history's outputs pass its budget, and then writes
//! the history back into the session file as it sent it (masked, its `<session_context>` turn
//! merged with the first user turn, new ids and times). The live check judges such a read-back
//! by the real CLI's next resume of the rewritten file (docs/live.md, step 9). Skips when Gemini
//! CLI is absent, unless HANDOFF_LIVE_REQUIRED=1.

use handoff_conformance::corpus::Entry;
use handoff_conformance::report::Status;
use handoff_live::{run_live, skips_are_failures, LiveOptions};
use handoff_sdk::serde_json::json;
use handoff_sdk::Transcript;

/// A user turn, then `calls` rounds of a `read_file` call with an output of about `size`
/// characters and a short answer: enough for the CLI to mask the older outputs (it keeps
/// 50,000 tokens of outputs whole and masks when 30,000 more could go, by its own estimate).
fn large_outputs(calls: usize, size: usize) -> Transcript {
    let mut events = vec![json!({"id": "u0", "timestamp": "2026-11-30T00:00:00.000Z",
        "body": {"type": "user", "content": [{"type": "text", "text": "Read every part of the log."}]}})];
    for i in 0..calls {
        let line = format!("part {i}: entry with some detail about what happened\n");
        let output = line.repeat(size / line.len());
        let at = |s: usize| format!("2026-11-30T00:{:02}:{:02}.000Z", i / 10, (i % 10) * 6 + s);
        events.push(
            json!({"id": format!("a{i}"), "timestamp": at(1), "body": {"type": "assistant",
            "content": [{"type": "tool_call", "id": format!("call{i}"), "name": "read_file",
                         "arguments": {"file_path": format!("log/part-{i}.txt")}}],
            "origin": {"provider": "google", "model": "gemini-2.5-flash", "api": "gemini"}}}),
        );
        events.push(json!({"id": format!("r{i}"), "timestamp": at(2), "body": {"type": "tool_result",
            "call_id": format!("call{i}"), "content": [{"type": "text", "text": output}], "is_error": false}}));
        events.push(
            json!({"id": format!("t{i}"), "timestamp": at(3), "body": {"type": "assistant",
            "content": [{"type": "text", "text": format!("Part {i} read.")}],
            "origin": {"provider": "google", "model": "gemini-2.5-flash", "api": "gemini"}}}),
        );
    }
    let transcript = json!({"schema": "handoff.transcript/1", "events": events});
    Transcript::from_json(&transcript.to_string()).expect("a transcript")
}

#[test]
fn a_session_gemini_cli_masks_and_rewrites_reads_back_as_its_next_resume_sends_it() {
    let entry = Entry {
        name: "large-outputs",
        transcript: large_outputs(12, 40_000),
    };
    let results = run_live(
        &handoff_gemini::GeminiPlugin,
        "gemini-cli",
        &[entry],
        &LiveOptions::default(),
    );
    let check = results
        .iter()
        .find(|r| r.id == "live/gemini-cli/large-outputs")
        .expect("the check ran");
    let evidence = check.evidence.join("\n");
    if check.status == Status::Skip && !skips_are_failures() {
        eprintln!("SKIP: {evidence}");
        return;
    }
    assert_eq!(check.status, Status::Pass, "{evidence}");
    // The CLI did rewrite the file, and its second resume judged the read-back.
    assert!(
        evidence.contains("the CLI rewrote the session's history"),
        "{evidence}"
    );
    assert!(
        evidence.contains("its next resume sends exactly that"),
        "{evidence}"
    );
    assert!(
        evidence.contains("without its first user turn (1 events)"),
        "{evidence}"
    );
}
