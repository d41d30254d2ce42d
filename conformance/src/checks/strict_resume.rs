use handoff_host::{Body, Event, PluginError, ResumeCommand, ResumePlan, SessionRef, Timestamp};

use crate::corpus;

use super::copies::{copy_with_id, sibling_id, strip_markers};
use super::{Ctx, Outcome};

const PROMPT: &str = "Continue from the conformance suite.";
const DECOY_TEXT: &str = "This is decoy session B; resuming it would be wrong.";

/// The plan names exactly the written id; with newer decoys in the same cwd it still resolves to
/// that one; a missing id (or a prefix of a real one) is an error.
pub(crate) fn check(ctx: &Ctx<'_>) -> Outcome {
    let base = &corpus::entry("plain-chat").expect("in corpus").transcript;
    let chosen = ctx.create("chosen session", base)?;
    let mut decoy = base.clone();
    let last = decoy.events.last().map_or(0, |e| e.timestamp.millis());
    decoy.events.push(Event::new(
        "decoy",
        Timestamp::from_millis(last + 60_000),
        Body::user_text(DECOY_TEXT),
    ));
    // Newer, in the same cwd: a resolver that picks "the latest" picks one of these.
    let mut decoys = vec![
        ctx.create("decoy 1", &decoy)?,
        ctx.create("decoy 2", &decoy)?,
    ];
    // Newer still, and its id shares all but the last character with ours: a resolver (or a
    // CLI, like pi's `--session`) that matches ids by prefix can take it for ours.
    // (A foreign copy: without our marker, so it is not ours to find either.)
    let prefix_decoy = copy_with_id(&chosen, &sibling_id(&chosen.id), strip_markers)
        .map_err(|e| vec![format!("cannot make the prefix decoy: {e}")])?;
    decoys.push(prefix_decoy);
    let mut evidence = Vec::new();
    let mut failures = Vec::new();

    match ctx
        .plugin
        .resumer()
        .resolve(ctx.root(), ctx.name(), &chosen.id)
    {
        Ok(s) if s.id == chosen.id && s.path == chosen.path => {
            evidence.push(format!("resolve({}) is that session", chosen.id))
        }
        Ok(s) => failures.push(format!(
            "resolve({}) returned {} at {}, not the written session at {}",
            chosen.id,
            s.id,
            s.path.display(),
            chosen.path.display()
        )),
        Err(e) => failures.push(format!("resolve({}) failed: {e}", chosen.id)),
    }
    // The engine's lookup: the newest session of ours marked with the conversation's locator.
    for (locator, expected) in [
        ("conformance:chosen session", Some(&chosen)),
        ("conformance:no such conversation", None),
    ] {
        match ctx
            .plugin
            .reader()
            .find_owned(ctx.root(), ctx.name(), locator)
        {
            Ok(found) if found.as_ref() == expected => evidence.push(format!(
                "find_owned({locator}) is {:?}",
                found.map(|s| s.id)
            )),
            Ok(found) => failures.push(format!(
                "find_owned({locator}) is {:?}, expected {:?}",
                found.map(|s| s.id),
                expected.map(|s| &s.id)
            )),
            Err(e) => failures.push(format!("find_owned({locator}) failed: {e}")),
        }
    }
    match ctx.plugin.resumer().plan(ctx.root(), &chosen, PROMPT) {
        Ok(plan) => match plan_problems(&plan, &chosen, &decoys) {
            problems if problems.is_empty() => evidence.push(format!("plan: {}", describe(&plan))),
            mut problems => failures.append(&mut problems),
        },
        Err(e) => failures.push(format!("plan({}) failed: {e}", chosen.id)),
    }
    let missing = "00000000-0000-4000-8000-00000000dead";
    for (what, id) in [
        ("a missing id", missing.to_owned()),
        ("a prefix of a real id", prefix_of(&chosen.id)),
    ] {
        if id.is_empty() {
            continue;
        }
        match ctx.plugin.resumer().resolve(ctx.root(), ctx.name(), &id) {
            Err(PluginError::NotFound { .. }) => {
                evidence.push(format!("resolve of {what} ({id}) is NotFound"))
            }
            Err(e) => evidence.push(format!("resolve of {what} ({id}) is an error: {e}")),
            Ok(s) => failures.push(format!(
                "resolve of {what} ({id}) returned session {} instead of an error",
                s.id
            )),
        }
        // A session that was never resolved (no such file) must not be planned either.
        let unresolved = SessionRef {
            target: ctx.name().to_owned(),
            id: id.clone(),
            path: ctx.root().path().join(format!("no-such-session-{id}")),
        };
        if let Ok(plan) = ctx.plugin.resumer().plan(ctx.root(), &unresolved, PROMPT) {
            failures.push(format!(
                "plan of {what} ({id}) gave a plan instead of an error: {}",
                describe(&plan)
            ));
        }
    }
    if failures.is_empty() {
        Ok(evidence)
    } else {
        Err(failures)
    }
}

fn prefix_of(id: &str) -> String {
    let cut = id.len().saturating_sub(4).min(12);
    if cut < 4 || !id.is_char_boundary(cut) {
        String::new()
    } else {
        id[..cut].to_owned()
    }
}

fn plan_problems(plan: &ResumePlan, chosen: &SessionRef, decoys: &[SessionRef]) -> Vec<String> {
    let mut problems = Vec::new();
    match plan {
        ResumePlan::Command(ResumeCommand { args, .. }) => {
            let names_it = args
                .iter()
                .any(|a| a == &chosen.id || std::path::Path::new(a) == chosen.path.as_path());
            if !names_it {
                problems.push(format!(
                    "the command {args:?} does not name session {} (or its file) exactly",
                    chosen.id
                ));
            }
            for vague in ["--last", "--continue", "-c", "latest", "--fork-session"] {
                if args.iter().any(|a| a == vague) {
                    problems.push(format!("the command uses {vague:?}, which is not strict"));
                }
            }
            for d in decoys {
                if args.iter().any(|a| a.contains(&d.id)) {
                    problems.push(format!("the command names decoy session {}", d.id));
                }
            }
            // A CLI that joins its message arguments (quoting any that holds a space) is handed the
            // prompt in words; the joined arguments carry it all the same.
            if !args.iter().any(|a| a.contains(PROMPT)) && !args.join(" ").contains(PROMPT) {
                problems.push("the command does not carry the new prompt".into());
            }
        }
        ResumePlan::Request { body, .. } => {
            let text = body.to_string();
            if text.contains(DECOY_TEXT) {
                problems.push("the request carries the decoy session's history".into());
            }
            if !text.contains(PROMPT) {
                problems.push("the request does not carry the new prompt".into());
            }
            let first_user = "Hello! How can I help?";
            if !text.contains(first_user) {
                problems.push("the request does not carry the session's history".into());
            }
        }
    }
    problems
}

fn describe(plan: &ResumePlan) -> String {
    match plan {
        ResumePlan::Command(ResumeCommand {
            program, args, cwd, ..
        }) => format!(
            "{program} {} (in {})",
            args.join(" "),
            cwd.as_ref()
                .map_or_else(|| "any directory".into(), |c| c.display().to_string())
        ),
        ResumePlan::Request { dialect, body } => {
            format!("{dialect} request of {} bytes", body.to_string().len())
        }
    }
}
