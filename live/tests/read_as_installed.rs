//! Issue 27, judged by the real CLI: `continue` reads a Claude Code source as the Claude Code
//! installed. With the pinned 2.1.197 (`.live-cache`) as the installed one, a session that ends
//! on a call is read as 2.1.197 sends it (the call dropped), continued into Claude Code by the
//! engine, and the real 2.1.197 resumes the new session by its id: its first request is the
//! session as read plus the prompt.
//!
//! Skips (printing why) when Claude Code 2.1.197 is absent, unless HANDOFF_LIVE_REQUIRED=1.

use std::path::{Path, PathBuf};
use std::time::Duration;

use handoff_claude::{ClaudePlugin, ClaudePluginReadingAs, CLAUDE_CODE_VERSION};
use handoff_host::continuation::{continue_conversation, ContinueRequest, Source, SourceFile};
use handoff_host::installed::{ReadAs, ReadAsBasis};
use handoff_host::{Body, Plugin, ReadFrom};
use handoff_live::hop::{AgentError, SharedHome};
use handoff_live::{skips_are_failures, CliEnd, LiveOptions};

/// A Claude Code session whose first turn calls tools in parallel; its first four lines end on
/// the first call.
const SAMPLE: &str = "examples/sessions/claude-code/4f6c2a8e-1b7d-4c3a-9e55-2d0f8a6b7c11.jsonl";
const SAMPLE_CWD: &str = "/home/dev/proj";

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

/// The sample cut after its first call, in `cwd`, written under `dir`.
fn session_ending_on_a_call(dir: &Path, cwd: &Path) -> PathBuf {
    let sample = std::fs::read_to_string(repo().join(SAMPLE)).unwrap();
    let lines: Vec<String> = sample
        .lines()
        .take(4)
        .map(|line| line.replace(SAMPLE_CWD, &cwd.display().to_string()))
        .collect();
    assert!(lines[3].contains("tool_use"), "the fourth line is the call");
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join(Path::new(SAMPLE).file_name().unwrap());
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

#[test]
fn a_source_read_as_the_installed_claude_code_resumes_in_it() {
    let options = LiveOptions {
        end: CliEnd::Oldest,
        ..LiveOptions::default()
    };
    let home = SharedHome::new(options).unwrap();
    // The judge reads the new session as the CLI that resumes it sends it.
    let as_pinned = ClaudePluginReadingAs::version(CLAUDE_CODE_VERSION);
    let agent = match home.agent(&as_pinned, "claude-code") {
        Ok(agent) => agent,
        Err(AgentError::NotInstalled(why)) if !skips_are_failures() => {
            eprintln!("SKIP: {why}");
            return;
        }
        Err(e) => panic!("{e:?}"),
    };

    // The pinned Claude Code's folder stands for PATH: the host reads the source as it.
    let manifest = ClaudePlugin.manifest();
    let recipe = manifest
        .target("claude-code")
        .unwrap()
        .live
        .clone()
        .unwrap();
    let pinned = handoff_live::cli::find_cli(&recipe.program, &recipe.npm_package, None).unwrap();
    let read_as = ReadAs::installed(&recipe, [pinned.path.parent().unwrap().to_owned()]);
    assert_eq!(
        (read_as.version.as_str(), read_as.basis),
        (CLAUDE_CODE_VERSION, ReadAsBasis::Installed),
        "{}",
        read_as.why
    );

    let source = session_ending_on_a_call(&home.path().join("source"), home.cwd());
    let continued = continue_conversation(
        &ClaudePlugin,
        &ContinueRequest {
            source: Source::File(SourceFile {
                reader: ClaudePlugin.reader(),
                target: "claude-code",
                path: &source,
                cli_version: Some(&read_as.version),
            }),
            locator: None,
            target: "claude-code",
            root: agent.root(),
            seal: handoff_host::seal::Seal::of_this_process(),
            cwd: Some(home.cwd().display().to_string()),
            prompt: "go on",
            drop: &[],
            lock_wait: Duration::from_secs(10),
            into: None,
        },
    )
    .unwrap_or_else(|e| panic!("continue: {e}"));
    assert_eq!(continued.read_as.as_deref(), Some(CLAUDE_CODE_VERSION));
    // 2.1.197 drops the call: the prompt and the text said before it.
    let written = ClaudePlugin
        .reader()
        .read(ReadFrom::Session(agent.root(), &continued.session))
        .unwrap();
    let calls = written
        .events
        .iter()
        .filter(|e| matches!(&e.body, Body::Assistant { content, .. } if content.iter().any(|p| matches!(p, handoff_host::AssistantPart::ToolCall(_)))))
        .count();
    assert_eq!((written.events.len(), calls), (2, 0), "{written:?}");

    match home.turn(&agent, &continued.session) {
        Ok(evidence) => eprintln!("{}", evidence.join("\n  ")),
        Err(evidence) => panic!(
            "Claude Code {} resuming {}:\n  {}",
            agent.version(),
            continued.session.id,
            evidence.join("\n  ")
        ),
    }
}
