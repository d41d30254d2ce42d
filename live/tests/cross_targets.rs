//! Across providers, through the engine, judged by the real CLIs: a genuine session of one CLI is
//! read by its plugin, continued into another CLI's store by the continuation engine (written, read
//! back, verified), and the same transcript is then resumed by the real target CLI in the live
//! tier, whose first model request must carry the whole history (the live check's comparison).
//!
//! Every CLI target is a target here, and every CLI's genuine samples are a source: pi and Gemini
//! CLI both ways, Claude Code and Codex into them.

use std::path::PathBuf;
use std::time::Duration;

use handoff_conformance::corpus::Entry;
use handoff_core::continuation::{continue_conversation, Action, ContinueRequest};
use handoff_core::{Plugin, StoreRoot, Transcript};
use handoff_live::harness::judge_live;
use handoff_live::{run_live, LiveOptions};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

struct Source {
    name: &'static str,
    target: &'static str,
    file: &'static str,
}

const CLAUDE: Source = Source {
    name: "claude-code-genuine",
    target: "claude-code",
    file: "plugins/claude/tests/samples/genuine-2.1.197/7ab6d42f-f51c-4eb0-8cba-032f2fa35adf.jsonl",
};
const CODEX: Source = Source {
    name: "codex-genuine",
    target: "codex",
    file: "plugins/codex/tests/fixtures/rollout-2026-11-30T00-41-46-01a229e6-93f2-7540-95e0-5ee20bf368fe.jsonl",
};
const PI: Source = Source {
    name: "pi-genuine",
    target: "pi",
    file: "plugins/pi/tests/samples/genuine-pi-0.73.1/2026-11-30T00-41-56-911Z_01a229e6-bba6-74e0-b59d-5af60023ff26.jsonl",
};
const GEMINI: Source = Source {
    name: "gemini-cli-genuine",
    target: "gemini-cli",
    file: "plugins/gemini/tests/samples/session-2026-11-30T00-42-d0a744dc.jsonl",
};

fn plugin_of(target: &str) -> Box<dyn Plugin> {
    match target {
        "claude-code" => Box::new(handoff_claude::ClaudePlugin),
        "codex" => Box::new(handoff_codex::CodexPlugin),
        "pi" => Box::new(handoff_pi::PiPlugin),
        "gemini-cli" => Box::new(handoff_gemini::GeminiPlugin),
        other => panic!("no plugin for {other}"),
    }
}

fn read(source: &Source) -> Transcript {
    let path = repo().join(source.file);
    plugin_of(source.target)
        .reader()
        .read_path(source.target, &path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The engine continues `source` into `target` (created, verified), then again (unchanged); then
/// the real CLI of `target` resumes the transcript in the live tier.
fn across(source: &Source, target: &str) {
    let mut transcript = read(source);
    let plugin = plugin_of(target);
    let scratch = tempfile::tempdir().unwrap();
    let cwd = scratch.path().join("proj");
    std::fs::create_dir(&cwd).unwrap();
    let root = StoreRoot::new(scratch.path().join("store")).unwrap();
    for expected in [Action::Created, Action::Unchanged] {
        let continued = continue_conversation(
            plugin.as_ref(),
            &ContinueRequest {
                transcript: &transcript,
                locator: source.name,
                target,
                root: &root,
                cwd: Some(cwd.display().to_string()),
                prompt: "go on",
                lock_wait: Duration::from_secs(10),
            },
        )
        .unwrap_or_else(|e| panic!("{} -> {target}: {e}", source.name));
        assert_eq!(continued.action, expected, "{} -> {target}", source.name);
    }
    // The live tier writes into its own scratch HOME, in its own project folder.
    transcript.cwd = None;
    let entry = Entry {
        name: source.name,
        transcript,
    };
    let results = run_live(plugin.as_ref(), target, &[entry], &LiveOptions::default());
    let mine: Vec<_> = results
        .into_iter()
        .filter(|r| !r.id.ends_with("/missing-id"))
        .collect();
    judge_live(&mine);
}

#[test]
fn claude_code_and_codex_sessions_continue_in_pi() {
    across(&CLAUDE, "pi");
    across(&CODEX, "pi");
}

#[test]
fn a_pi_session_continues_in_claude_code_and_codex() {
    across(&PI, "claude-code");
    across(&PI, "codex");
}

#[test]
fn claude_code_and_codex_sessions_continue_in_gemini_cli() {
    across(&CLAUDE, "gemini-cli");
    across(&CODEX, "gemini-cli");
}

#[test]
fn a_gemini_cli_session_continues_in_claude_code_and_codex() {
    across(&GEMINI, "claude-code");
    across(&GEMINI, "codex");
}
