//! The interactive resume, judged by the real CLI: write a session, open it with the plan's
//! interactive command on a pseudo-terminal (what `handoff continue --exec` hands a person),
//! type the prompt as a person would, and require the first model request to carry the whole
//! session plus the prompt.

use std::time::{Duration, Instant};

use handoff_capability::Plugin;
use handoff_conformance::corpus::Entry;
use handoff_conformance::{CheckResult, Status};

use crate::fake_provider::{FakeProvider, LoggedRequest};
use crate::pty::PtySession;
use crate::run::{installed, live_target, recipe_at, Evidence, Live};
use crate::LiveOptions;

/// How long a terminal UI may take to start and draw before keys are typed.
const START_LIMIT: Duration = Duration::from_secs(40);
/// Output that stops for this long means the UI is drawn and waiting for keys.
const QUIET: Duration = Duration::from_millis(2500);

/// Opens `entry`, written as a session of `target`, in the CLI's interactive session and checks
/// the request it sends for a typed prompt. The CLI absent or at another version: a skip.
pub fn run_interactive(
    plugin: &dyn Plugin,
    target: &str,
    entry: &Entry,
    options: &LiveOptions,
) -> CheckResult {
    let id = format!("live/{target}/interactive/{}", entry.name);
    let (target_manifest, recipe) = match live_target(plugin, target) {
        Ok(found) => found,
        Err(failed) => return CheckResult { id, ..failed },
    };
    let cli = match installed(&recipe, options) {
        Ok(cli) => cli,
        Err(reason) => {
            return CheckResult {
                id,
                status: Status::Skip,
                duration_ms: 0.0,
                evidence: vec![reason],
            }
        }
    };
    let recipe = recipe_at(&recipe, &cli);
    let live = Live {
        plugin,
        target: &target_manifest,
        recipe: &recipe,
        cli: &cli,
        options,
    };
    let started = Instant::now();
    let (status, evidence) = match interactive_check(&live, entry) {
        Ok(evidence) => (Status::Pass, evidence),
        Err(evidence) => (Status::Fail, evidence),
    };
    CheckResult {
        id,
        status,
        duration_ms: started.elapsed().as_secs_f64() * 1e3,
        evidence,
    }
}

fn interactive_check(live: &Live<'_>, entry: &Entry) -> Result<Evidence, Evidence> {
    let scene = live.scene()?;
    let session = live.write(&scene, &entry.transcript)?;
    let plan = live.plan(&scene, &session)?;
    let invocation = live.invocation(&scene.place(), plan, true)?;
    let mut evidence = vec![format!(
        "{} {} opened {} ({} events) with {:?} on a terminal",
        live.recipe.program,
        live.cli_version(),
        session.id,
        entry.transcript.events.len(),
        invocation.args
    )];
    let mut terminal = PtySession::start(&invocation)
        .map_err(|e| vec![format!("cannot start {:?}: {e}", invocation.program)])?;
    let prompt = format!("{}\r", live.options.prompt);
    let typed = type_until_sent(
        &mut terminal,
        &scene.fake,
        &prompt,
        live.options.timeout,
        &|requests| live.first_turn(requests).is_ok(),
    );
    let requests = scene.fake.requests();
    let running = terminal.running();
    let screen = terminal.end();
    let left = crate::pty::kill_processes_under(scene.home.path());
    if left > 0 {
        evidence.push(format!(
            "{left} process(es) the CLI left running from its HOME were ended"
        ));
    }
    let mut failed = match typed {
        Ok(line) => {
            evidence.push(line);
            false
        }
        Err(line) => {
            evidence.push(line);
            true
        }
    };
    if !running {
        failed = true;
        evidence.push("the interactive session ended by itself".into());
    }
    if !live.judge_request(&requests, &entry.transcript, &mut evidence) {
        failed = true;
    }
    if failed {
        evidence.push(format!(
            "the terminal showed: {}",
            crate::cli::tail(&plain(&screen), 1500)
        ));
    }
    scene.finish(live.options.keep_homes || failed, &mut evidence);
    if failed {
        Err(evidence)
    } else {
        Ok(evidence)
    }
}

/// Waits for the UI to be drawn, types `prompt`, and waits for the model request that carries
/// it (`carries_prompt` of the requests since the call); a UI that shows a question first (trust
/// this folder?) gets Enter, its default, and the prompt again. A side request (a title, a
/// summary) shows the keys were read: then it waits a round for the prompt's own request before
/// typing again (a loaded machine delays it).
pub(crate) fn type_until_sent(
    terminal: &mut PtySession,
    fake: &FakeProvider,
    prompt: &str,
    timeout: Duration,
    carries_prompt: &dyn Fn(&[LoggedRequest]) -> bool,
) -> Result<String, String> {
    let started = Instant::now();
    let before = fake.requests().len();
    let since = || {
        let mut all = fake.requests();
        all.split_off(before.min(all.len()))
    };
    terminal.settle(QUIET, START_LIMIT);
    let mut attempts = 0;
    let mut side_requests_seen = 0;
    while started.elapsed() < timeout {
        let requests = since();
        if carries_prompt(&requests) {
            return Ok(format!(
                "the typed prompt was sent after {:.1} s ({attempts} attempt(s))",
                started.elapsed().as_secs_f64()
            ));
        }
        if !terminal.running() {
            return Err("the CLI ended before it sent the prompt".into());
        }
        // A new side request: the keys were read; wait one more round for the prompt's own
        // request before typing again (Gemini CLI sends one for a prompt it then drops).
        let side_requests = requests.iter().filter(|r| r.is_model_turn()).count();
        let new_side_request = side_requests > side_requests_seen;
        side_requests_seen = side_requests;
        if attempts < 4 && !new_side_request {
            attempts += 1;
            if attempts > 1 {
                // Whatever question the UI asked instead: its default.
                terminal.type_keys("\r").map_err(|e| e.to_string())?;
                terminal.settle(QUIET, START_LIMIT);
            }
            terminal.type_keys(prompt).map_err(|e| e.to_string())?;
        }
        // The UI sends a request once it has read the keys; give it time before looking again.
        let waited = Instant::now();
        while waited.elapsed() < Duration::from_secs(15) && since().len() == requests.len() {
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    Err(format!(
        "no model request carried the prompt {:.0} s after typing it ({attempts} attempt(s))",
        started.elapsed().as_secs_f64()
    ))
}

/// `screen` without its escape sequences, for evidence a person can read.
fn plain(screen: &str) -> String {
    let mut out = String::with_capacity(screen.len());
    let mut chars = screen.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => {
                // CSI: ESC [ params final; OSC: ESC ] … BEL or ESC \; others: one more char.
                match chars.next() {
                    Some('[') => {
                        for c in chars.by_ref() {
                            if ('@'..='~').contains(&c) {
                                break;
                            }
                        }
                    }
                    Some(']') => {
                        while let Some(c) = chars.next() {
                            if c == '\u{7}' || (c == '\u{1b}' && chars.next_if_eq(&'\\').is_some())
                            {
                                break;
                            }
                        }
                    }
                    _ => {}
                }
            }
            '\r' => {}
            c if c.is_control() && c != '\n' => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_are_left_out_of_the_evidence() {
        assert_eq!(
            plain("\u{1b}[1;31mred\u{1b}[0m \u{1b}]0;title\u{7}text\r\n\u{1b}]11;?\u{1b}\\end"),
            "red text\nend"
        );
    }
}
