//! What the integration tests share: the plugin, scratch roots, transcripts, and the check that a
//! request body is the transcript plus the prompt as the wire shows it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use handoff_dialects::{parsed_view, wire_view, Dialect};
use handoff_host::{
    Body, CreateOptions, Event, Plugin, ReadFrom, ResumePlan, SessionRef, StoreRoot, Timestamp,
    Transcript,
};
use handoff_openai::OpenaiPlugin;
use serde_json::Value;

pub const TARGETS: [&str; 2] = ["openai-chat", "openai-responses"];
pub const PROMPT: &str = "Carry on, please.";

pub fn root() -> (tempfile::TempDir, StoreRoot) {
    let dir = tempfile::tempdir().unwrap();
    let root = StoreRoot::new(dir.path()).unwrap();
    (dir, root)
}

pub fn corpus(name: &str) -> Transcript {
    handoff_conformance::corpus::entry(name)
        .unwrap_or_else(|| panic!("no corpus entry {name}"))
        .transcript
        .clone()
}

pub fn create(root: &StoreRoot, target: &str, t: &Transcript) -> SessionRef {
    OpenaiPlugin
        .writer()
        .create(root, target, t, &CreateOptions::default())
        .unwrap_or_else(|e| panic!("{target}: create failed: {e}"))
}

/// The session file as JSON.
pub fn file(session: &SessionRef) -> Value {
    serde_json::from_slice(&std::fs::read(&session.path).unwrap()).unwrap()
}

pub fn plan_body(root: &StoreRoot, session: &SessionRef) -> (Dialect, Value) {
    match OpenaiPlugin.resumer().plan(root, session, PROMPT).unwrap() {
        ResumePlan::Request { dialect, body } => (dialect, body),
        other => panic!("an API target planned {other:?}"),
    }
}

pub fn dialect_of(target: &str) -> Dialect {
    handoff_sdk::Plugin::manifest(&handoff_openai::OpenaiPlugin)
        .target(target)
        .and_then(|t| t.dialect)
        .unwrap()
}

/// `transcript` followed by the prompt as a user turn.
pub fn with_prompt(transcript: &Transcript) -> Transcript {
    let mut whole = transcript.clone();
    whole.events.push(Event::new(
        "the-prompt",
        Timestamp::from_millis(0),
        Body::user_text(PROMPT),
    ));
    whole
}

/// Fails unless `body` parses with core's dialect back to `transcript` plus the prompt, as the
/// wire shows them, under the target's comparison.
pub fn assert_body_is_transcript_plus_prompt(target: &str, body: &Value, transcript: &Transcript) {
    let manifest = handoff_sdk::Plugin::manifest(&handoff_openai::OpenaiPlugin);
    let tm = manifest.target(target).unwrap();
    let dialect = tm.dialect.unwrap();
    let parsed = dialect
        .parse(body)
        .unwrap_or_else(|e| panic!("{target}: the body does not parse: {e}"));
    assert!(
        parsed.system.is_empty(),
        "{target}: the body has instructions"
    );
    let expected = wire_view(&with_prompt(transcript), dialect, &tm.thinking_from);
    let got = parsed_view(&parsed.transcript, dialect);
    tm.comparison().diff(&expected, &got).unwrap_or_else(|d| {
        panic!("{target}: the body is not the transcript plus the prompt: {d}")
    });
}

/// Every object key anywhere in `value`.
pub fn keys(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                out.push(k.clone());
                keys(v, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| keys(v, out)),
        _ => {}
    }
}

/// Fails if the body carries anything of the extras: the `handoff` / `x-handoff` members, or a
/// timestamp or event id of the transcript.
pub fn assert_no_extras(body: &Value, transcript: &Transcript) {
    let mut found = Vec::new();
    keys(body, &mut found);
    for k in [
        "handoff",
        "x-handoff",
        "timestamp",
        "author",
        "is_error",
        "origin",
    ] {
        assert!(!found.iter().any(|f| f == k), "the body has a {k:?} member");
    }
    let text = body.to_string();
    for e in &transcript.events {
        let stamp = e.timestamp.to_rfc3339();
        assert!(
            !text.contains(&stamp),
            "the body holds the timestamp {stamp}"
        );
    }
}

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
pub fn samples() -> Vec<(String, Transcript)> {
    let mut out = Vec::new();
    let claude = here().join("../claude/tests/samples");
    for dir in ["genuine-2.1.197", "claude-code-viewer"] {
        for path in jsonl_in(&claude.join(dir)) {
            let t = handoff_claude::ClaudePlugin
                .reader()
                .read(ReadFrom::File("claude-code", &path))
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            out.push((format!("claude-code/{dir}/{}", name(&path)), t));
        }
    }
    for path in jsonl_in(&here().join("../codex/tests/fixtures")) {
        let t = handoff_codex::CodexPlugin
            .reader()
            .read(ReadFrom::File("codex", &path))
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        out.push((format!("codex/{}", name(&path)), t));
    }
    out
}

fn name(path: &Path) -> String {
    path.file_stem().unwrap().to_string_lossy().into_owned()
}
