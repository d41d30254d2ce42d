//! Real sessions continued into both targets through the continuation engine: the genuine Claude
//! Code 2.1.197 and Codex 0.171.0 samples (read with their own plugins), the public Claude Code
//! samples, and every corpus transcript a target carries. Each resume body must validate, be the
//! transcript plus the prompt as the wire shows it, and hold none of the extras; continuing again
//! changes nothing, and continuing a longer conversation appends to the same session.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::*;
use handoff_core::continuation::{continue_conversation, Action, ContinueRequest, Continued};
use handoff_core::{
    AssistantPart, Body, Event, Origin, Part, Plugin, ResumePlan, StoreRoot, Timestamp, Transcript,
};
use handoff_openai::OpenaiPlugin;

fn here() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn jsonl_in(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no samples in {}", dir.display());
    files
}

/// The samples, read by the plugin of the CLI that wrote them. The genuine ones are byte-for-byte
/// copies of `shared/samples/genuine/{claude-code-2.1.197,codex-0.171.0}` kept in those plugins.
fn samples() -> Vec<(String, Transcript)> {
    let mut out = Vec::new();
    let claude = here().join("../claude/tests/samples");
    for dir in ["genuine-2.1.197", "claude-code-viewer"] {
        for path in jsonl_in(&claude.join(dir)) {
            let t = handoff_claude::ClaudePlugin
                .reader()
                .read_path("claude-code", &path)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            out.push((format!("claude-code/{dir}/{}", name(&path)), t));
        }
    }
    for path in jsonl_in(&here().join("../codex/tests/fixtures")) {
        let t = handoff_codex::CodexPlugin
            .reader()
            .read_path("codex", &path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        out.push((format!("codex/{}", name(&path)), t));
    }
    out
}

fn name(path: &Path) -> String {
    path.file_stem().unwrap().to_string_lossy().into_owned()
}

fn continued(root: &StoreRoot, target: &str, locator: &str, t: &Transcript) -> Continued {
    continue_conversation(
        &OpenaiPlugin,
        &ContinueRequest {
            transcript: t,
            locator,
            target,
            root,
            cwd: None,
            prompt: PROMPT,
            lock_wait: Duration::from_secs(5),
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
        Body::User {
            content: vec![Part::text("And then?")],
        },
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
    let manifest = handoff_openai::manifest();
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
