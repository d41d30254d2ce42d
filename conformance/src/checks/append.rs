use handoff_host::{Body, Transcript};

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

/// Where `whole` is split: before the last user turn (a continuation appends a new turn and what
/// follows it), else at the first point past the middle where no tool call is waiting for its
/// result. A prefix never ends on an unanswered call: no CLI resumes one as it stands (each
/// answers or drops the call, and its reader reads what it sends), so it would not read back as
/// written.
fn split_point(whole: &Transcript) -> usize {
    let events = &whole.events;
    let mut open = std::collections::HashSet::new();
    let mut closed_at = Vec::with_capacity(events.len() + 1);
    for event in events {
        closed_at.push(open.is_empty());
        match &event.body {
            Body::Assistant { content, .. } => {
                for part in content {
                    if let handoff_host::AssistantPart::ToolCall(call) = part {
                        open.insert(call.id.as_str());
                    }
                }
            }
            Body::ToolResult { call_id, .. } => {
                open.remove(call_id.as_str());
            }
            _ => {}
        }
    }
    let whole_exchange = |i: &usize| *i > 0 && closed_at[*i];
    events
        .iter()
        .rposition(|e| matches!(e.body, Body::User { .. }))
        .filter(whole_exchange)
        .or_else(|| (events.len() / 2..events.len()).find(whole_exchange))
        .unwrap_or(events.len() / 2)
}

fn append_one(ctx: &Ctx<'_>, name: &str, whole: &Transcript) -> Result<String, Vec<String>> {
    let split = split_point(whole);
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
