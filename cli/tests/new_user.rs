//! Issue 28's "tried as a new user would", judged by the real CLIs: a HOME with a Claude Code
//! session and a Codex session of one project folder (both written by the real CLIs, not by
//! handoff), `handoff` alone on a terminal in that folder, no configuration. It lists both; the
//! Claude Code one is picked and continued on Codex; handoff becomes the real Codex's terminal UI
//! on the new session, and the prompt typed there reaches the model with the whole Claude Code
//! conversation before it.
//!
//! Skips (printing why) when Claude Code or Codex is absent, unless HANDOFF_LIVE_REQUIRED=1.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use handoff_host::{Plugin as _, ReadFrom};
use handoff_live::hop::{AgentError, SharedHome};
use handoff_live::pty::PtySession;
use handoff_live::{skips_are_failures, LiveOptions};

/// Sessions the real CLIs wrote in `/home/dev/proj`.
const CLAUDE_SESSION: &str =
    "plugins/claude/tests/samples/genuine-2.1.197/7ab6d42f-f51c-4eb0-8cba-032f2fa35adf.jsonl";
const CODEX_ROLLOUT: &str =
    "plugins/codex/tests/fixtures/rollout-2026-11-30T00-41-43-01a229e6-854b-7501-91aa-ee582218765e.jsonl";
const THEIR_CWD: &str = "/home/dev/proj";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

/// `sample`, its project folder moved to `cwd`, written at `to`.
fn place(sample: &str, cwd: &Path, to: &Path) {
    let text = std::fs::read_to_string(repo().join(sample))
        .unwrap()
        .replace(THEIR_CWD, &cwd.display().to_string());
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    std::fs::write(to, text).unwrap();
}

/// Waits until the terminal shows `what` (or fails the test, showing the screen).
fn wait_for(terminal: &PtySession, what: &str) {
    let started = Instant::now();
    while !terminal.screen().contains(what) && started.elapsed() < Duration::from_secs(120) {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        terminal.screen().contains(what),
        "no {what:?} on the terminal: {:?}",
        terminal.screen()
    );
    terminal.settle(Duration::from_millis(400), Duration::from_secs(5));
}

#[test]
fn handoff_alone_picks_a_claude_code_session_and_opens_it_in_the_real_codex() {
    let home = SharedHome::new(LiveOptions::default()).unwrap();
    let (claude_plugin, codex_plugin) = (handoff_claude::ClaudePlugin, handoff_codex::CodexPlugin);
    let agents = [
        home.agent(&claude_plugin, "claude-code"),
        home.agent(&codex_plugin, "codex"),
    ];
    let [claude, codex] = match agents {
        [Ok(claude), Ok(codex)] => [claude, codex],
        [Err(AgentError::NotInstalled(why)), _] | [_, Err(AgentError::NotInstalled(why))]
            if !skips_are_failures() =>
        {
            eprintln!("SKIP: {why}");
            return;
        }
        [claude, codex] => panic!("{:?} {:?}", claude.err(), codex.err()),
    };
    let cwd = std::fs::canonicalize(home.cwd()).unwrap();
    let slug: String = cwd
        .display()
        .to_string()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let claude_file = claude
        .root()
        .path()
        .join("projects")
        .join(slug)
        .join(Path::new(CLAUDE_SESSION).file_name().unwrap());
    place(CLAUDE_SESSION, &cwd, &claude_file);
    place(
        CODEX_ROLLOUT,
        &cwd,
        &codex
            .root()
            .path()
            .join("sessions/2026/11/30")
            .join(Path::new(CODEX_ROLLOUT).file_name().unwrap()),
    );
    let conversation = claude_plugin
        .reader()
        .read(ReadFrom::File("claude-code", &claude_file))
        .unwrap();

    let invocation = home
        .invocation_for(
            Path::new(env!("CARGO_BIN_EXE_handoff")),
            &[],
            &[&claude, &codex],
        )
        .unwrap();
    let mut terminal = PtySession::start(&invocation).unwrap();
    wait_for(&terminal, "Continue which session");
    let listed = terminal.screen();
    let rows: Vec<&str> = listed
        .split(['\r', '\n'])
        .filter(|line| line.contains(" events"))
        .collect();
    let claude_row = rows.iter().position(|row| row.contains("claude-code "));
    let codex_row = rows.iter().position(|row| row.contains("codex "));
    let (Some(claude_row), Some(_)) = (claude_row, codex_row) else {
        panic!("both sessions should be listed: {listed:?}");
    };
    for _ in 0..claude_row {
        terminal.send(b"\x1b[B").unwrap();
    }
    terminal.send(b"\r").unwrap();
    // Codex is the first agent offered for a Claude Code session (the catalog's order).
    wait_for(&terminal, "Continue it on which agent?");
    terminal.send(b"\r").unwrap();

    let judged = home.judge_typed_turn(&codex, &mut terminal, &conversation);
    let running = terminal.running();
    let screen = terminal.end();
    handoff_live::pty::kill_processes_under(home.path());
    match judged {
        Ok(evidence) => {
            eprintln!("{}", evidence.join("\n"));
            assert!(running, "Codex ended by itself: {evidence:#?}")
        }
        Err(evidence) => panic!("{evidence:#?}\nthe terminal showed: {screen:?}"),
    }
}
