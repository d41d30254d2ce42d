//! `Writer::create_streamed` of the `gemini-cli` target: the chat written turn by turn as its
//! events arrive is the one `create` writes, byte for byte but for the session id and the
//! times of the write drawn at that moment (the genuine samples read back, the conformance
//! corpus, a synthetic long session), never asks for the whole transcript, and a refused event
//! or a stream that fails midway leaves nothing behind (not even the project's registration).

use std::path::PathBuf;

use handoff_gemini::GeminiPlugin;
use handoff_live::streamed::StreamedWrite;
use handoff_sdk::{AssistantPart, Body, Origin, Part, Thinking, Transcript};

const TARGET: &str = "gemini-cli";

/// The metadata line's session id and times are drawn when the chat is made.
fn write() -> StreamedWrite<'static> {
    StreamedWrite::new(
        &GeminiPlugin,
        TARGET,
        &["/sessionId", "/startTime", "/lastUpdated"],
    )
}

/// Both writes refuse `t` alike, or write it alike, without the whole transcript.
fn same_as_create(name: &str, t: &Transcript) -> Option<String> {
    write().same_as_create_without_the_whole(name, t)
}

fn origin() -> Origin {
    Origin::new("google", "gemini-2.5-pro", "google-generative-ai")
}

#[test]
fn the_genuine_samples_read_back_are_written_alike() {
    let samples = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/samples");
    let mut written = 0;
    for folder in [samples.clone(), samples.join("resumed-by-cli")] {
        for file in std::fs::read_dir(folder).unwrap() {
            let path = file.unwrap().path();
            if path.extension().is_none_or(|e| e != "jsonl") {
                continue;
            }
            let t = write().read(&path).unwrap();
            if t.events.is_empty() {
                continue; // a resume stub the CLI wrote before its first turn
            }
            assert_eq!(same_as_create(&path.display().to_string(), &t), None);
            written += 1;
        }
    }
    assert!(written >= 4, "{written} samples");
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
    // Between two turns, in the middle of one (the call written, its result not yet), at the end.
    write().assert_broken_streams_leave_nothing(&good, &[0, 1, 2, 5, good.events.len()]);
    // A user prompt Gemini CLI would skip on resume, in the seventh event: refused by both,
    // after three turns were written to the spool.
    let mut bad = good.clone();
    bad.events[6].body = Body::User {
        content: vec![Part::text("/help")],
    };
    let refused = same_as_create("a slash command", &bad).expect("refused");
    assert!(refused.contains("event 6 (u2)"), "{refused}");
    // A tool result that does not follow its call's turn: the second turn's result after the
    // third prompt, the seventh event.
    let mut misplaced = good.clone();
    let late = misplaced.events.remove(5);
    misplaced.events.insert(6, late);
    let refused = same_as_create("a result out of its turn", &misplaced).expect("refused");
    assert!(
        refused.contains("event 6 (r1)") && refused.contains("must directly follow"),
        "{refused}"
    );
}

/// A session of one turn of another model's thinking: Gemini CLI has no place for it, so
/// nothing would be written, and a chat without conversation the CLI hides (and deletes).
#[test]
fn a_stream_with_nothing_gemini_cli_would_resume_is_refused_alike() {
    let mut t = turns(1);
    t.events.truncate(2);
    t.events.remove(0);
    t.events[0].body = Body::Assistant {
        content: vec![AssistantPart::Thinking(Thinking {
            text: "hm".into(),
            signature: None,
        })],
        origin: Some(Origin::new(
            "anthropic",
            "claude-opus-4-8",
            "anthropic-messages",
        )),
    };
    let refused = same_as_create("foreign thinking only", &t).expect("refused");
    assert!(
        refused.contains("nothing Gemini CLI would resume"),
        "{refused}"
    );
}
