//! Property tests: any conversation of user turns, assistant turns with parallel calls (odd ids
//! included), results in any order and failed tools writes and reads back equal on both targets,
//! also when written event by event (`create_streamed`), and an append of any suffix reads back as
//! the whole.

use handoff_claude::{ClaudePlugin, CLAUDE_CODE, MESSAGES};
use handoff_sdk::serde_json::json;
use handoff_sdk::ById;
use handoff_sdk::{
    AssistantPart, Author, AuthorKind, Body, CreateOptions, Event, HeldEvents, Origin, Part,
    Plugin, StoreRoot, Timestamp, ToolCall, Transcript,
};
use proptest::prelude::*;

/// One exchange: a user turn, then an assistant turn (text and calls), then the results in the
/// given order.
#[derive(Clone, Debug)]
struct Exchange {
    prompt: String,
    author: Option<String>,
    reply: String,
    calls: Vec<String>,
    order: Vec<usize>,
    failed: Vec<bool>,
}

fn text() -> impl Strategy<Value = String> {
    // Non-blank (the Messages API refuses blank text), any script.
    "[a-zA-Z0-9ü😀 ].{0,40}".prop_filter("not blank", |s| !s.trim().is_empty())
}

fn exchange() -> impl Strategy<Value = Exchange> {
    (
        text(),
        proptest::option::of("[A-Z][a-z]{2,8}"),
        text(),
        proptest::collection::vec("[a-zA-Z0-9_|:.-]{1,24}", 0..4),
    )
        .prop_flat_map(|(prompt, author, reply, calls)| {
            let n = calls.len();
            (
                Just((prompt, author, reply, calls)),
                Just((0..n).collect::<Vec<_>>()).prop_shuffle(),
                proptest::collection::vec(any::<bool>(), n),
            )
        })
        .prop_map(|((prompt, author, reply, calls), order, failed)| Exchange {
            prompt,
            author,
            reply,
            calls,
            order,
            failed,
        })
}

fn transcript(exchanges: &[Exchange]) -> Transcript {
    let mut events = Vec::new();
    let mut ms = 1_764_000_000_000i64;
    let mut next = |events: &mut Vec<Event>, body: Body, author: Option<Author>| {
        ms += 1_001;
        let mut e = Event::new(
            format!("e{}", events.len()),
            Timestamp::from_millis(ms),
            body,
        );
        e.author = author;
        events.push(e);
    };
    for (x, ex) in exchanges.iter().enumerate() {
        let author = ex.author.as_ref().map(|name| Author {
            kind: AuthorKind::Human,
            name: name.clone(),
        });
        next(&mut events, Body::user_text(&ex.prompt), author);
        // Ids unique across the conversation: the exchange number makes them so.
        let ids: Vec<String> = ex
            .calls
            .iter()
            .enumerate()
            .map(|(i, c)| format!("{c}#{x}.{i}"))
            .collect();
        let mut content = vec![AssistantPart::text(&ex.reply)];
        content.extend(ids.iter().map(|id| {
            AssistantPart::ToolCall(ToolCall::new(
                id.clone(),
                "Bash",
                json!({"command": id, "n": 7}),
            ))
        }));
        let origin = Some(Origin::new(
            "anthropic",
            "claude-opus-4-8",
            "anthropic-messages",
        ));
        next(&mut events, Body::Assistant { content, origin }, None);
        for &i in &ex.order {
            next(
                &mut events,
                Body::ToolResult {
                    call_id: ids[i].clone(),
                    content: vec![Part::text(format!("out {i}"))],
                    is_error: ex.failed[i],
                },
                None,
            );
        }
    }
    let mut t = Transcript::new(events);
    t.cwd = Some("/home/dev/prop".into());
    t
}

fn check(target: &str, t: &Transcript, split: usize) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().unwrap();
    let root = StoreRoot::new(dir.path().join("store")).unwrap();
    let m = handoff_sdk::Plugin::manifest(&handoff_claude::ClaudePlugin);
    let cmp = m.target(target).unwrap().comparison();
    let s = ClaudePlugin
        .writer()
        .create(&root, target, t, &CreateOptions::default())
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let back = ClaudePlugin
        .read_id(&root, target, &s.id)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    if let Err(d) = cmp.diff(t, &back) {
        return Err(TestCaseError::fail(format!("{target} round trip: {d}")));
    }
    // The same, fed event by event.
    let s = ClaudePlugin
        .writer()
        .create_streamed(
            &root,
            target,
            &mut HeldEvents::new(t),
            &CreateOptions {
                cwd: t.cwd.clone(),
                locator: None,
            },
        )
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let back = ClaudePlugin
        .read_id(&root, target, &s.id)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    if let Err(d) = cmp.diff(t, &back) {
        return Err(TestCaseError::fail(format!("{target} streamed: {d}")));
    }
    // Write a prefix, append the rest.
    let split = split.clamp(1, t.events.len());
    let mut prefix = t.clone();
    let suffix = prefix.events.split_off(split);
    let s = ClaudePlugin
        .writer()
        .create(&root, target, &prefix, &CreateOptions::default())
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    ClaudePlugin
        .append_id(&root, target, &s.id, &suffix)
        .map_err(|e| TestCaseError::fail(format!("{target} append: {e}")))?;
    let back = ClaudePlugin
        .read_id(&root, target, &s.id)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    if let Err(d) = cmp.diff(t, &back) {
        return Err(TestCaseError::fail(format!(
            "{target} append at {split}: {d}"
        )));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn claude_code_round_trips_and_appends(exchanges in proptest::collection::vec(exchange(), 1..5), split in 1usize..30) {
        check(CLAUDE_CODE, &transcript(&exchanges), split)?;
    }

    #[test]
    fn anthropic_messages_round_trips_and_appends(exchanges in proptest::collection::vec(exchange(), 1..5), split in 1usize..30) {
        check(MESSAGES, &transcript(&exchanges), split)?;
    }
}
