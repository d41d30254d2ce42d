//! Real sessions continued into both targets through the continuation engine: the genuine Claude
//! Code 2.1.197 and Codex 0.171.0 samples (read with their own plugins), the public Claude Code
//! samples, and every corpus transcript a target carries. Each resume body must validate, be the
//! transcript plus the prompt as the wire shows it, and hold none of the extras; continuing again
//! changes nothing, and continuing a longer conversation appends to the same session.

mod common;

use std::time::Duration;

use common::*;
use handoff_host::continuation::{continue_conversation, Action, ContinueRequest, Continued};
use handoff_host::{
    AssistantPart, Body, Event, Origin, ResumePlan, StoreRoot, Timestamp, Transcript,
};
use handoff_openai::OpenaiPlugin;

fn continued(root: &StoreRoot, target: &str, locator: &str, t: &Transcript) -> Continued {
    continue_conversation(
        &OpenaiPlugin,
        &ContinueRequest {
            source: t.into(),
            locator: Some(locator),
            target,
            root,
            seal: handoff_host::seal::Seal::of_this_process(),
            cwd: None,
            prompt: PROMPT,
            drop: &[],
            lock_wait: Duration::from_secs(5),
            into: None,
        },
    )
    .unwrap_or_else(|e| panic!("{locator} into {target}: {e}"))
}

/// Continues `t`, checks the body, continues again (unchanged) and once more with two new turns
/// (appended to the same session).
fn check_continuation(target: &str, what: &str, t: &Transcript) {
    let (_dir, root) = root();
    let first = continued(&root, target, what, t);
    assert_eq!(first.action, Action::Created, "{what} into {target}");
    let ResumePlan::Request { dialect, body } = &first.plan else {
        panic!("{what} into {target}: not a request plan")
    };
    dialect
        .validate(body)
        .unwrap_or_else(|v| panic!("{what} into {target}: {v}"));
    assert_body_is_transcript_plus_prompt(target, body, t);
    assert_no_extras(body, t);

    let again = continued(&root, target, what, t);
    assert_eq!(
        (again.action, &again.session.id),
        (Action::Unchanged, &first.session.id)
    );
    let mut longer = t.clone();
    let last = t.events.last().map_or(0, |e| e.timestamp.millis());
    longer.events.push(Event::new(
        "next-user",
        Timestamp::from_millis(last + 1000),
        Body::user_text("And then?"),
    ));
    longer.events.push(Event::new(
        "next-assistant",
        Timestamp::from_millis(last + 2000),
        Body::Assistant {
            content: vec![AssistantPart::text("Then this.")],
            origin: Some(Origin {
                provider: "openai".into(),
                model: Some("gpt-5".into()),
                api: Some(target.into()),
            }),
        },
    ));
    let appended = continued(&root, target, what, &longer);
    assert_eq!(
        (appended.action, &appended.session.id),
        (Action::Appended { events: 2 }, &first.session.id),
        "{what} into {target}"
    );
    let ResumePlan::Request { body, .. } = &appended.plan else {
        unreachable!()
    };
    assert_body_is_transcript_plus_prompt(target, body, &longer);
    assert_eq!(body["model"], "gpt-5");
}

#[test]
fn the_genuine_and_public_samples_continue_into_both_targets() {
    let samples = samples();
    assert!(samples.len() >= 7);
    for (what, t) in &samples {
        assert!(!t.events.is_empty(), "{what} read as nothing");
        for target in TARGETS {
            check_continuation(target, what, t);
        }
    }
}

#[test]
fn every_corpus_transcript_a_target_carries_continues_into_it() {
    let manifest = handoff_sdk::Plugin::manifest(&handoff_openai::OpenaiPlugin);
    for target in TARGETS {
        let carries = &manifest.target(target).unwrap().carries;
        let mut ran = 0;
        for entry in handoff_conformance::corpus::entries() {
            if entry.transcript.first_uncarried(carries).is_some() {
                continue;
            }
            check_continuation(target, entry.name, &entry.transcript);
            ran += 1;
        }
        assert!(ran >= 10, "{target}: only {ran} corpus transcripts ran");
    }
}
