//! The genuine OpenCode 1.18.33 session (the differential harness's sample, a SQL dump of the
//! database the CLI wrote: two turns of two parallel `bash` calls each) read offline: what the
//! reader makes of OpenCode's own rows.

use handoff_opencode::{OpencodePlugin, TARGET};
use handoff_sdk::{AssistantPart, Body, Part, Plugin, ReadFrom};

const SAMPLE: &str = "../../live/tests/differential/opencode/ses_dca8eb152ffee0Ft97U5ceGAFI.sql";

#[test]
fn the_genuine_session_reads_as_opencode_sends_it() {
    let dump =
        std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(SAMPLE))
            .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("opencode.db");
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute_batch(&dump)
        .unwrap();
    let transcript = OpencodePlugin
        .reader()
        .read(ReadFrom::File(TARGET, &db))
        .unwrap();
    assert_eq!(transcript.cwd.as_deref(), Some("/home/dev/proj"));
    let kinds: Vec<&str> = transcript.events.iter().map(|e| e.body.kind()).collect();
    let turn = [
        "user",
        "assistant",
        "tool_result",
        "tool_result",
        "assistant",
    ];
    assert_eq!(kinds, [turn, turn].concat());
    // `opencode run` quoted the prompt that holds a space; that is what it stored and sends.
    let Body::User { content } = &transcript.events[0].body else {
        unreachable!()
    };
    assert_eq!(content, &[Part::text("\"run two commands\"")]);
    let Body::Assistant { content, origin } = &transcript.events[1].body else {
        unreachable!()
    };
    let calls: Vec<&str> = content
        .iter()
        .filter_map(|p| match p {
            AssistantPart::ToolCall(call) => Some(call.id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(calls, ["call_fake000001_0", "call_fake000001_1"]);
    assert_eq!(origin.as_ref().map(|o| o.provider.as_str()), Some("fake"));
    // A command that failed is a completed bash call (its exit code is in the output's
    // metadata), not a tool error.
    let Body::ToolResult {
        content, is_error, ..
    } = &transcript.events[3].body
    else {
        unreachable!()
    };
    assert!(!is_error);
    assert!(
        matches!(&content[..], [Part::Text { text }] if text.contains("No such file or directory"))
    );
}
