//! The interactive resume of every CLI target, judged by the real CLI: the plan's interactive
//! command (what `handoff continue --exec` runs) opens the session we wrote in the CLI's own
//! terminal UI on a pseudo-terminal, a prompt is typed, and the request the CLI sends must carry
//! the whole session plus the prompt. One corpus entry each: parallel tool calls with their
//! results, the shape most sessions have.

use handoff_capability::Plugin;
use handoff_live::harness::judge_live;
use handoff_live::interactive::run_interactive;
use handoff_live::LiveOptions;

fn interactive(plugin: &dyn Plugin, target: &str) {
    let entry = handoff_conformance::corpus::entry("parallel-tool-calls").expect("corpus entry");
    judge_live(&[run_interactive(
        plugin,
        target,
        entry,
        &LiveOptions::default(),
    )]);
}

#[test]
fn claude_code_opens_the_session_in_its_terminal_ui() {
    interactive(&handoff_claude::ClaudePlugin, "claude-code");
}

#[test]
fn codex_opens_the_session_in_its_terminal_ui() {
    interactive(&handoff_codex::CodexPlugin, "codex");
}

#[test]
fn pi_opens_the_session_in_its_terminal_ui() {
    interactive(&handoff_pi::PiPlugin, "pi");
}

#[test]
fn gemini_cli_opens_the_session_in_its_terminal_ui() {
    interactive(&handoff_gemini::GeminiPlugin, "gemini-cli");
}

#[test]
fn qwen_code_opens_the_session_in_its_terminal_ui() {
    interactive(&handoff_qwen::QwenPlugin, "qwen-code");
}

#[test]
fn opencode_opens_the_session_in_its_terminal_ui() {
    interactive(&handoff_opencode::OpencodePlugin, "opencode");
}

#[test]
fn copilot_cli_opens_the_session_in_its_terminal_ui() {
    interactive(&handoff_copilot::CopilotPlugin, "copilot-cli");
}
