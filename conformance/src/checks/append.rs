use handoff_core::{Body, Transcript};

use crate::corpus;

use super::{Ctx, Outcome};

/// The entries append is proven on: turns, parallel calls, an error, a compaction, two authors.
const ENTRIES: [&str; 5] = [
    "plain-chat",
    "parallel-tool-calls",
    "tool-error",
    "compaction",
    "two-authors",
];

/// Write a prefix, append the suffix to the same id, read → equal to the whole.
pub(crate) fn check(ctx: &Ctx<'_>) -> Outcome {
    let mut evidence = Vec::new();
    let mut failures = Vec::new();
    for name in ENTRIES {
        let entry = corpus::entry(name).expect("append entries are in the corpus");
        if !ctx.carries(&entry.transcript) {
            evidence.push(format!("not applicable: {name}"));
            continue;
        }
        match append_one(ctx, name, &entry.transcript) {
            Ok(line) => evidence.push(line),
            Err(mut e) => failures.append(&mut e),
        }
    }
    if evidence.iter().all(|e| e.starts_with("not applicable")) && failures.is_empty() {
        failures.push("no append entry is carried by this target".into());
    }
    if failures.is_empty() {
        Ok(evidence)
    } else {
        Err(failures)
    }
}

fn append_one(ctx: &Ctx<'_>, name: &str, whole: &Transcript) -> Result<String, Vec<String>> {
    // Split before the last user turn: a continuation appends a new turn and what follows it.
    let split = whole
        .events
        .iter()
        .rposition(|e| matches!(e.body, Body::User { .. }))
        .filter(|&i| i > 0)
        .unwrap_or(whole.events.len() / 2);
    let mut prefix = whole.clone();
    let suffix = prefix.events.split_off(split);
    let session = ctx.create(name, &prefix)?;
    ctx.read_back(&format!("{name} (prefix)"), &session, &prefix)?;
    let appended = ctx
        .plugin
        .writer()
        .append(ctx.root(), &session, &suffix)
        .map_err(|e| vec![format!("{name}: append failed: {e}")])?;
    if appended.id != session.id {
        return Err(vec![format!(
            "{name}: append moved the session from id {} to {}",
            session.id, appended.id
        )]);
    }
    ctx.read_back(&format!("{name} (after append)"), &session, whole)?;
    Ok(format!(
        "{name}: {} + {} events, same id {}",
        prefix.events.len(),
        suffix.len(),
        session.id
    ))
}
