use std::path::Path;

use handoff_host::{
    CreateOptions, Event, EventBatch, EventStream, HeldEvents, PluginError, ReadFrom, ReadOutcome,
    Transcript,
};

use crate::{corpus, LentInSteps};

use super::{Ctx, Outcome, SUITE_CWD};

/// What the continuation engine streams through, for every corpus entry the target carries:
/// `create_streamed` writes what `create` writes (read back equal), `read_each` of the file yields
/// exactly a whole read's events and stops when told, `read_batches` of the file and of the
/// session the same events, `read_each` and `read_batches` of the file lent as it grows too (or
/// they decline), and an error when its writer abandons it; and `cwd` is a whole read's cwd.
pub(crate) fn check(ctx: &Ctx<'_>) -> Outcome {
    let mut evidence = Vec::new();
    let mut failures = Vec::new();
    for entry in corpus::entries() {
        if !ctx.carries(&entry.transcript) {
            continue;
        }
        match streamed_one(ctx, entry.name, &entry.transcript) {
            Ok(()) => evidence.push(format!("streamed alike: {}", entry.name)),
            Err(mut e) => failures.append(&mut e),
        }
    }
    if evidence.is_empty() && failures.is_empty() {
        failures.push("no corpus entry is carried by this target".into());
    }
    if failures.is_empty() {
        Ok(evidence)
    } else {
        Err(failures)
    }
}

/// A held transcript streamed as the engine streams a source: every event taken is counted, so
/// a writer that stops early is caught.
struct Counted<'a> {
    held: HeldEvents<'a>,
    taken: usize,
    whole: bool,
}

impl EventStream for Counted<'_> {
    fn next_event(&mut self) -> Result<Option<Event>, PluginError> {
        let event = self.held.next_event()?;
        self.taken += usize::from(event.is_some());
        Ok(event)
    }

    fn whole(&mut self) -> Result<&Transcript, PluginError> {
        self.whole = true;
        self.held.whole()
    }
}

/// The events `read` hands in batches, each decoded as it is taken.
fn batched(
    read: impl FnOnce(&mut dyn FnMut(EventBatch) -> bool) -> Result<(), PluginError>,
) -> Result<Vec<Event>, PluginError> {
    let mut events = Vec::new();
    let mut failed = None;
    read(&mut |batch| match batch.into_events() {
        Ok(batch) => {
            events.extend(batch);
            true
        }
        Err(e) => {
            failed = Some(e);
            false
        }
    })?;
    failed.map_or(Ok(events), Err)
}

fn streamed_one(ctx: &Ctx<'_>, name: &str, transcript: &Transcript) -> Result<(), Vec<String>> {
    let fail = |what: String| vec![format!("{name}: {what}")];
    let options = CreateOptions {
        cwd: Some(SUITE_CWD.to_owned()),
        locator: Some(format!("conformance:streamed:{name}")),
    };
    let mut stream = Counted {
        held: HeldEvents::new(transcript),
        taken: 0,
        whole: false,
    };
    let session = ctx
        .plugin
        .writer()
        .create_streamed(ctx.root(), ctx.name(), &mut stream, &options)
        .map_err(|e| fail(format!("create_streamed failed: {e}")))?;
    if !stream.whole && stream.taken != transcript.events.len() {
        return Err(fail(format!(
            "create_streamed took {} of {} events and asked for no whole transcript",
            stream.taken,
            transcript.events.len()
        )));
    }
    ctx.root()
        .check_inside(&session.path)
        .map_err(|e| fail(e.to_string()))?;
    ctx.read_back(name, &session, transcript)?;

    let reader = ctx.plugin.reader();
    let file = ReadFrom::File(ctx.name(), &session.path);
    let whole = reader
        .read(file)
        .map_err(|e| fail(format!("read of the file failed: {e}")))?;
    let mut each = Vec::new();
    reader
        .read_each(file, &mut |e| {
            each.push(e);
            true
        })
        .map_err(|e| fail(format!("read_each of the file failed: {e}")))?;
    // What the engine's threads take: the same events in batches, decoded where they are taken.
    let batched_path = batched(|sink| reader.read_batches(file, sink).map(drop));
    let stored = ReadFrom::Session(ctx.root(), &session);
    let batched_each = batched(|sink| reader.read_batches(stored, sink).map(drop));
    for (method, events) in [
        ("read_each of the file", Ok(each)),
        ("read_batches of the file", batched_path),
        ("read_batches of the session", batched_each),
    ] {
        let events = events.map_err(|e| fail(format!("{method} failed: {e}")))?;
        if events != whole.events {
            let at = events
                .iter()
                .zip(&whole.events)
                .position(|(a, b)| a != b)
                .unwrap_or(events.len().min(whole.events.len()));
            return Err(fail(format!(
                "{method} yields {} events, a whole read {}; they first differ at event {at}",
                events.len(),
                whole.events.len()
            )));
        }
    }
    read_as_written(ctx, &session.path, &whole.events).map_err(fail)?;
    let mut handed = 0;
    reader
        .read_each(file, &mut |_| {
            handed += 1;
            false
        })
        .map_err(|e| fail(format!("read_each failed when told to stop: {e}")))?;
    if handed > 1 {
        return Err(fail(format!(
            "read_each handed {handed} events after its sink said stop at the first"
        )));
    }
    let cwd = reader
        .cwd(file)
        .map_err(|e| fail(format!("cwd failed: {e}")))?;
    if cwd != whole.cwd {
        return Err(fail(format!(
            "cwd says {cwd:?}, a whole read's cwd is {:?}",
            whole.cwd
        )));
    }
    Ok(())
}

/// The session file lent as it grows, in small steps and in large: a reader that reads files as
/// they are written yields a whole read's events both ways, in one piece or in batches; one that
/// declines reads nothing. A file abandoned halfway is an error, never a short read.
fn read_as_written(ctx: &Ctx<'_>, path: &Path, whole: &[Event]) -> Result<(), String> {
    let reader = ctx.plugin.reader();
    let lent = |step| LentInSteps::new(path, step).map_err(|e| format!("{}: {e}", path.display()));
    let len = std::fs::metadata(path).map_or(0, |m| m.len());
    let mut events = Vec::new();
    let file = lent(512)?;
    let outcome = reader
        .read_each(ReadFrom::Written(ctx.name(), &file), &mut |e| {
            events.push(e);
            true
        })
        .map_err(|e| format!("read_each of the written file failed: {e}"))?;
    if outcome == ReadOutcome::NotSupported {
        if !events.is_empty() {
            return Err(format!(
                "read_each declined the written file but handed {} events",
                events.len()
            ));
        }
        return Ok(());
    }
    let mut read_batched = ReadOutcome::NotSupported;
    let file_batched = lent(1 << 16)?;
    let batched = batched(|sink| {
        read_batched = reader.read_batches(ReadFrom::Written(ctx.name(), &file_batched), sink)?;
        Ok(())
    })
    .map_err(|e| format!("read_batches of the written file failed: {e}"))?;
    for (method, events) in [
        ("read_each of the written file", &events),
        ("read_batches of the written file", &batched),
    ] {
        if events != whole {
            return Err(format!(
                "{method} yields {} events of the file lent as it grows, a whole read {}",
                events.len(),
                whole.len()
            ));
        }
    }
    if read_batched == ReadOutcome::NotSupported {
        return Err("read_batches declined a written file read_each reads".into());
    }
    if len >= 2 {
        let abandoned = lent(len / 4 + 1)?.abandoned_at(len / 2);
        let mut handed = 0;
        if reader
            .read_each(ReadFrom::Written(ctx.name(), &abandoned), &mut |_| {
                handed += 1;
                true
            })
            .is_ok()
        {
            return Err(format!(
                "read_each read a written file its writer abandoned halfway as whole ({handed} events)"
            ));
        }
    }
    Ok(())
}
