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
    // One terminal UI at a time: each is slow to take keys on a loaded machine.
    let _one_at_a_time = ONE_UI
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let started = Instant::now();
    let (status, evidence) = match interactive_check(&live, entry) {
        Ok(evidence) => (Status::Pass, evidence),
        // The UI lost or garbled typed keys (the prompt was typed more than once), which says
        // nothing of the session: the whole check once more, in a fresh HOME, the first run's
        // evidence kept (Copilot CLI sent `hhandoff …` twice in CI rehearsals).
        Err(Failed {
            evidence: first,
            retyped: true,
        }) => match interactive_check(&live, entry) {
            Ok(mut evidence) => {
                evidence.insert(
                    0,
                    format!(
                        "a first run, whose UI took the typed prompt badly, failed; this is the \
                         second: {}",
                        first.join(" / ")
                    ),
                );
                (Status::Pass, evidence)
            }
            Err(again) => (Status::Fail, [first, again.evidence].concat()),
        },
        Err(failed) => (Status::Fail, failed.evidence),
    };
    CheckResult {
        id,
        status,
        duration_ms: started.elapsed().as_secs_f64() * 1e3,
        evidence,
    }
}

/// The terminal UIs the checks of this process open, one at a time.
static ONE_UI: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A failed interactive check: its evidence, and whether the prompt had to be typed more than
/// once (the UI lost or garbled keys).
struct Failed {
    evidence: Evidence,
    retyped: bool,
}

impl From<Evidence> for Failed {
    fn from(evidence: Evidence) -> Self {
        Failed {
            evidence,
            retyped: false,
        }
    }
}

fn interactive_check(live: &Live<'_>, entry: &Entry) -> Result<Evidence, Failed> {
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
    let mut attempts = 0;
    let typed = type_until_sent_counted(
        &mut terminal,
        &scene.fake,
        &live.options.prompt,
        live.options.timeout,
        &|requests| live.first_turn(requests).is_ok(),
        &mut attempts,
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
        Err(Failed {
            evidence,
            retyped: attempts > 1,
        })
    } else {
        Ok(evidence)
    }
}

/// Waits for the UI to be drawn, types `prompt` until the UI shows it whole
/// ([`type_until_shown`]), presses Enter, and waits for the model request that carries it
/// (`carries_prompt` of the requests since the call); a UI that shows a question first (trust
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
    let mut attempts = 0;
    type_until_sent_counted(
        terminal,
        fake,
        prompt,
        timeout,
        carries_prompt,
        &mut attempts,
    )
}

/// [`type_until_sent`], counting in `attempts` how often the prompt was typed.
fn type_until_sent_counted(
    terminal: &mut PtySession,
    fake: &FakeProvider,
    prompt: &str,
    timeout: Duration,
    carries_prompt: &dyn Fn(&[LoggedRequest]) -> bool,
    attempts: &mut usize,
) -> Result<String, String> {
    let started = Instant::now();
    let before = fake.requests().len();
    let since = || {
        let mut all = fake.requests();
        all.split_off(before.min(all.len()))
    };
    terminal.settle(QUIET, START_LIMIT);
    let mut echoes = Vec::new();
    let mut side_requests_seen = 0;
    while started.elapsed() < timeout {
        let requests = since();
        if carries_prompt(&requests) {
            return Ok(format!(
                "the typed prompt was sent after {:.1} s ({attempts} attempt(s), the text {})",
                started.elapsed().as_secs_f64(),
                echoes.join(", then ")
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
        if *attempts < 4 && !new_side_request {
            *attempts += 1;
            if *attempts > 1 {
                // Whatever question the UI asked instead: its default.
                terminal.type_keys("\r").map_err(|e| e.to_string())?;
                terminal.settle(QUIET, START_LIMIT);
                // Keys of an earlier attempt the UI took late stay in its input: erased, so the
                // prompt is not sent twice in one message (seen with Copilot CLI on a loaded
                // machine).
                let erase = "\u{7f}".repeat(prompt.chars().count() + 2);
                terminal.type_keys(&erase).map_err(|e| e.to_string())?;
            }
            let shown = type_until_shown(terminal, prompt).map_err(|e| e.to_string())?;
            echoes.push(match shown {
                Shown::Whole => "shown",
                Shown::Part => "shown in part",
                Shown::Nothing => "not shown",
            });
            terminal.type_keys("\r").map_err(|e| e.to_string())?;
        }
        // The UI sends a request once it has read the keys; give it time before looking again.
        let waited = Instant::now();
        while waited.elapsed() < Duration::from_secs(15) && since().len() == requests.len() {
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    Err(format!(
        "no model request carried the prompt {:.0} s after typing it ({attempts} attempt(s), the \
         text {})",
        started.elapsed().as_secs_f64(),
        echoes.join(", then ")
    ))
}

/// How long a UI that has shown part of a typed text has to show it whole before it is erased
/// and typed again.
const SHOWN_LIMIT: Duration = Duration::from_secs(5);
/// How long a UI that has shown nothing of a typed text is waited for.
const NOTHING_LIMIT: Duration = Duration::from_secs(1);
/// How often a text the UI showed only a part of is typed again.
const SHOWN_TRIES: usize = 3;

/// What a UI drew of a typed text.
#[derive(Debug, PartialEq)]
enum Shown {
    Whole,
    /// Its end but not the whole: the first keys were lost (typed before the input box was
    /// ready, on a loaded machine), and Enter would send what is left of the prompt; or the
    /// whole after a stray letter (a key of an earlier attempt taken late).
    Part,
    /// None of it: the UI has not read the keys yet (they wait in the terminal), or read them
    /// before it was ready and dropped them; Enter goes as it would have, and a request that
    /// does not come makes [`type_until_sent`] type the prompt again.
    Nothing,
}

/// Types `text` (no Enter) and waits for the UI to show it whole. A text shown only in part is
/// erased and typed again, at most [`SHOWN_TRIES`] times; a text of which nothing is shown
/// within [`NOTHING_LIMIT`] is left as typed. Says what the UI showed last.
fn type_until_shown(terminal: &mut PtySession, text: &str) -> std::io::Result<Shown> {
    let mut tries = 0;
    loop {
        tries += 1;
        let before = terminal.shown();
        terminal.type_keys(text)?;
        let waited = Instant::now();
        let mut shown = shows(&before, &terminal.shown(), text);
        while shown != Shown::Whole
            && waited.elapsed()
                < if shown == Shown::Part {
                    SHOWN_LIMIT
                } else {
                    NOTHING_LIMIT
                }
        {
            std::thread::sleep(Duration::from_millis(100));
            shown = shows(&before, &terminal.shown(), text);
        }
        if shown != Shown::Part || tries == SHOWN_TRIES {
            return Ok(shown);
        }
        // Backspace over whatever the UI took of it, and a little more.
        terminal.type_keys(&"\u{7f}".repeat(text.chars().count() + 2))?;
        terminal.settle(Duration::from_millis(500), SHOWN_LIMIT);
    }
}

/// What the terminal shows of `text` (white space aside: a line may wrap) now that it did not
/// `before` the keys were typed: the history a UI draws may hold the same text already.
fn shows(before: &str, now: &str, text: &str) -> Shown {
    let squeezed = |s: &str| {
        s.chars()
            .filter(|c| !c.is_whitespace())
            .collect::<Vec<char>>()
    };
    let (before, now, text) = (squeezed(before), squeezed(now), squeezed(text));
    // Occurrences of `part`; `alone`: only those not right after a letter or digit, which is a
    // key of an earlier attempt the UI took late (Copilot CLI sent `hhandoff …` once).
    let more = |part: &[char], alone: bool| {
        let count = |screen: &[char]| {
            let width = part.len().max(1);
            screen
                .windows(width)
                .enumerate()
                .filter(|(at, w)| {
                    *w == part
                        && !(alone
                            && at
                                .checked_sub(1)
                                .is_some_and(|p| screen[p].is_alphanumeric()))
                })
                .count()
        };
        count(&now) > count(&before)
    };
    if more(&text, true) {
        Shown::Whole
    } else if more(&text, false) || more(&text[text.len().saturating_sub(6)..], false) {
        Shown::Part
    } else {
        Shown::Nothing
    }
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
    fn a_typed_text_is_shown_whole_in_part_or_not_at_all() {
        let prompt = "reply with ok";
        let history = "│ > reply with ok │\r\n│ ok │\r\n";
        let size = |n| std::num::NonZeroU16::new(n).unwrap();
        let drawn = |bytes: &str| crate::pty::drawn(bytes.as_bytes(), size(10), size(40));
        // Drawn whole, below a history that holds it already.
        let whole = format!("{history}│ > reply with ok");
        assert_eq!(shows(&drawn(history), &drawn(&whole), prompt), Shown::Whole);
        // Drawn a cell at a time, the spaces as cursor moves, a footer drawn in between.
        let cells = format!(
            "{history}│ > r\u{1b}[9;1Hfooter\u{1b}[3;6Hep\u{1b}[1Cly\u{1b}[1Cwith\u{1b}[1Cok"
        );
        assert_eq!(shows(&drawn(history), &drawn(&cells), prompt), Shown::Whole);
        // The first keys were lost.
        let part = format!("{history}│ > ply with ok");
        assert_eq!(shows(&drawn(history), &drawn(&part), prompt), Shown::Part);
        // A stray key of an earlier attempt before it (Copilot CLI sent `hhandoff …` once).
        let stray = format!("{history}│ > rreply with ok");
        assert_eq!(shows(&drawn(history), &drawn(&stray), prompt), Shown::Part);
        // Nothing drawn but the history.
        assert_eq!(
            shows(&drawn(history), &drawn(history), prompt),
            Shown::Nothing
        );
    }

    #[test]
    fn escape_sequences_are_left_out_of_the_evidence() {
        assert_eq!(
            plain("\u{1b}[1;31mred\u{1b}[0m \u{1b}]0;title\u{7}text\r\n\u{1b}]11;?\u{1b}\\end"),
            "red text\nend"
        );
    }
}
