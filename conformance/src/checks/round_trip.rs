use handoff_host::{ReadFrom, SessionRef};

use crate::corpus;

use super::{Ctx, Outcome};

/// write → read → semantically equal, for every corpus entry the target carries; also by path, and
/// every session written is listed as owned (one listing of them all at the end: listing after each
/// write would read the whole store again every time).
pub(crate) fn check(ctx: &Ctx<'_>) -> Outcome {
    let mut evidence = Vec::new();
    let mut failures = Vec::new();
    let mut written = Vec::new();
    let mut ran = 0;
    for entry in corpus::entries() {
        if let Some((index, _, feature)) = entry.transcript.first_uncarried(&ctx.target.carries) {
            evidence.push(format!(
                "not applicable: {} (event {index} has {feature}, not carried)",
                entry.name
            ));
            continue;
        }
        ran += 1;
        match round_trip_one(ctx, entry) {
            Ok(session) => {
                evidence.push(format!("equal: {}", entry.name));
                written.push((entry.name, session));
            }
            Err(mut e) => failures.append(&mut e),
        }
    }
    if ran == 0 {
        failures.push("no corpus entry is carried by this target".into());
    }
    match listed_as_owned(ctx, &written) {
        Ok(()) => evidence.push(format!("listed as owned: {} sessions", written.len())),
        Err(mut e) => failures.append(&mut e),
    }
    if failures.is_empty() {
        Ok(evidence)
    } else {
        Err(failures)
    }
}

fn round_trip_one(ctx: &Ctx<'_>, entry: &corpus::Entry) -> Result<SessionRef, Vec<String>> {
    let session = ctx.create(entry.name, &entry.transcript)?;
    ctx.read_back(entry.name, &session, &entry.transcript)?;
    let by_path = ctx
        .plugin
        .reader()
        .read(ReadFrom::File(ctx.name(), &session.path))
        .map_err(|e| vec![format!("{}: read_path failed: {e}", entry.name)])?;
    ctx.comparison()
        .diff(&entry.transcript, &by_path)
        .map_err(|d| vec![format!("{}: read_path differs: {d}", entry.name)])?;
    Ok(session)
}

/// One listing of the store shows every written session, as owned.
fn listed_as_owned(ctx: &Ctx<'_>, written: &[(&str, SessionRef)]) -> Result<(), Vec<String>> {
    let listed = ctx
        .plugin
        .reader()
        .list(ctx.root(), ctx.name())
        .map_err(|e| vec![format!("list failed: {e}")])?;
    let problems: Vec<String> = written
        .iter()
        .filter_map(
            |(name, session)| match listed.iter().find(|s| s.session.id == session.id) {
                Some(s) if s.owned => None,
                Some(_) => Some(format!("{name}: list shows {} as not owned", session.id)),
                None => Some(format!("{name}: list does not show {}", session.id)),
            },
        )
        .collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}
