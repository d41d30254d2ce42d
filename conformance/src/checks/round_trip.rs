use crate::corpus;

use super::{Ctx, Outcome};

/// write → read → semantically equal, for every corpus entry the target carries; also by path, and
/// the session is listed as owned.
pub(crate) fn check(ctx: &Ctx<'_>) -> Outcome {
    let mut evidence = Vec::new();
    let mut failures = Vec::new();
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
            Ok(()) => evidence.push(format!("equal: {}", entry.name)),
            Err(mut e) => failures.append(&mut e),
        }
    }
    if ran == 0 {
        failures.push("no corpus entry is carried by this target".into());
    }
    if failures.is_empty() {
        Ok(evidence)
    } else {
        Err(failures)
    }
}

fn round_trip_one(ctx: &Ctx<'_>, entry: &corpus::Entry) -> Result<(), Vec<String>> {
    let session = ctx.create(entry.name, &entry.transcript)?;
    ctx.read_back(entry.name, &session, &entry.transcript)?;
    let by_path = ctx
        .plugin
        .reader()
        .read_path(ctx.name(), &session.path)
        .map_err(|e| vec![format!("{}: read_path failed: {e}", entry.name)])?;
    ctx.comparison()
        .diff(&entry.transcript, &by_path)
        .map_err(|d| vec![format!("{}: read_path differs: {d}", entry.name)])?;
    let listed = ctx
        .plugin
        .reader()
        .list(ctx.root(), ctx.name())
        .map_err(|e| vec![format!("{}: list failed: {e}", entry.name)])?;
    match listed.iter().find(|s| s.session.id == session.id) {
        Some(s) if s.owned => Ok(()),
        Some(_) => Err(vec![format!(
            "{}: list shows {} as not owned",
            entry.name, session.id
        )]),
        None => Err(vec![format!(
            "{}: list does not show {}",
            entry.name, session.id
        )]),
    }
}
