//! `Writer::create_streamed`: the log written line by line as its events arrive is the one
//! `create` writes, byte for byte but for the uuids drawn at random (an image, thinking and a
//! failed call, the conformance corpus, a synthetic long session), never asks for the whole
//! transcript, and a refused event or a stream that fails midway leaves nothing behind.

use handoff_copilot::CopilotPlugin;
use handoff_copilot::TARGET;
use handoff_live::streamed::StreamedWrite;
use handoff_sdk::serde_json::json;
use handoff_sdk::{AssistantPart, Body, Origin, Part, ToolCall, Transcript};

/// The log's uuids (each line's `id` and `parentId`, the data's `sessionId` and `messageId`) are
/// drawn at random.
fn write() -> StreamedWrite<'static> {
    StreamedWrite::new(
        &CopilotPlugin,
        TARGET,
        &["/id", "/parentId", "/data/sessionId", "/data/messageId"],
    )
}

/// Both writes refuse `t` alike, or write it alike, without the whole transcript.
fn same_as_create(name: &str, t: &Transcript) -> Option<String> {
    write().same_as_create_without_the_whole(name, t)
}

fn origin() -> Origin {
    Origin::new("anthropic", "claude-sonnet-4-5", "anthropic-messages")
}

#[test]
fn an_image_thinking_and_a_failed_call_are_written_alike() {
    let mut t = turns(2);
    if let Body::User { content } = &mut t.events[0].body {
        content.push(Part::Image {
            media_type: "image/png".into(),
            data: vec![0x89, b'P', b'N', b'G', 0, 1, 2],
        });
    }
    if let Body::Assistant { content, .. } = &mut t.events[1].body {
        content.insert(0, AssistantPart::text("Let me look."));
        content.insert(
            0,
            AssistantPart::Thinking(handoff_sdk::Thinking {
                text: "A tiny picture.".into(),
                signature: None,
            }),
        );
    }
    assert_eq!(same_as_create("image, thinking, failed call", &t), None);
}

#[test]
fn the_corpus_and_a_long_synthetic_session_are_written_alike() {
    write().assert_corpus_and_a_long_session_alike(5, &origin());
}

fn turns(n: usize) -> Transcript {
    handoff_live::streamed::call_turns(n, "bash", &origin())
}

#[test]
fn a_refused_event_or_a_failing_stream_leaves_nothing_behind() {
    let good = turns(4);
    write().assert_broken_streams_leave_nothing(&good, &[0, 1, 5, good.events.len()]);
    // The eighth event calls twice and the later call is answered first: the CLI sends results
    // in the order of the calls, so the tenth event is refused by both.
    let mut bad = good.clone();
    if let Body::Assistant { content, .. } = &mut bad.events[7].body {
        content.push(AssistantPart::ToolCall(ToolCall::new(
            "call_2b",
            "bash",
            json!({"command": "pwd"}),
        )));
    }
    let mut first_answer = bad.events[8].clone();
    first_answer.id = "r2b".into();
    first_answer.body = Body::tool_output("call_2b", "/");
    bad.events.insert(8, first_answer);
    bad.validate().unwrap();
    let refused = same_as_create("results out of the calls' order", &bad).expect("refused");
    assert!(refused.contains("event 9 (r2)"), "{refused}");
}
