//! `Writer::create_streamed`: the chat written record by record as its events arrive is the one
//! `create` writes, byte for byte but for the uuids drawn at random (the genuine sample read
//! back, the conformance corpus, a synthetic long session), never asks for the whole
//! transcript, and a refused event or a stream that fails midway leaves nothing behind.

use std::path::PathBuf;

use handoff_live::streamed::StreamedWrite;
use handoff_qwen::QwenPlugin;
use handoff_sdk::{AssistantPart, Body, Origin, Transcript};

const TARGET: &str = "qwen-code";

/// The chat's uuids (`uuid`, `parentUuid`, `sessionId`) are drawn at random.
fn write() -> StreamedWrite<'static> {
    StreamedWrite::new(&QwenPlugin, TARGET, &["/sessionId", "/uuid", "/parentUuid"])
}

/// Both writes refuse `t` alike, or write it alike, without the whole transcript.
fn same_as_create(name: &str, t: &Transcript) -> Option<String> {
    write().same_as_create_without_the_whole(name, t)
}

fn origin() -> Origin {
    Origin::new("anthropic", "claude-sonnet-4-5", "anthropic-messages")
}

#[test]
fn the_genuine_sample_read_back_is_written_alike() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/samples/7da3d710-5632-46df-bb43-bead8f22b422.jsonl");
    let t = write().read(&path).unwrap();
    assert!(t.events.len() >= 4);
    assert_eq!(same_as_create("genuine", &t), None);
}

#[test]
fn the_corpus_and_a_long_synthetic_session_are_written_alike() {
    write().assert_corpus_and_a_long_session_alike(5, &origin());
}

fn turns(n: usize) -> Transcript {
    handoff_live::streamed::call_turns(n, "run_shell_command", &origin())
}

#[test]
fn a_refused_event_or_a_failing_stream_leaves_nothing_behind() {
    let good = turns(4);
    write().assert_broken_streams_leave_nothing(&good, &[0, 1, 5, good.events.len()]);
    // An assistant turn of an empty text only, in the eighth event: nothing Qwen Code would
    // send, refused by both.
    let mut bad = good.clone();
    bad.events[7].body = Body::Assistant {
        content: vec![AssistantPart::text("")],
        origin: Some(origin()),
    };
    bad.events.remove(8);
    let refused = same_as_create("an empty turn", &bad).expect("refused");
    assert!(refused.contains("event a2 (assistant)"), "{refused}");
}
