use std::path::Path;

use handoff_host::{
    CreateOptions, Event, EventBatch, EventStream, HeldEvents, PluginError, Transcript,
};

use crate::{corpus, LentInSteps};

use super::{Ctx, Outcome, SUITE_CWD};

/// What the continuation engine streams through, for every corpus entry the target carries:
/// `create_streamed` writes what `create` writes (read back equal), `read_path_each` yields
/// exactly `read_path`'s events and stops when told, `read_path_batches` and `read_each_batches`
/// the same events, `read_written_each` and `read_written_batches` too (or they decline) when the
/// file is lent as it grows, and an error when its writer abandons it; and `read_path_cwd` is
/// `read_path`'s cwd.
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
    let whole = reader
        .read_path(ctx.name(), &session.path)
        .map_err(|e| fail(format!("read_path failed: {e}")))?;
    let mut each = Vec::new();
    reader
        .read_path_each(ctx.name(), &session.path, &mut |e| {
            each.push(e);
            true
        })
        .map_err(|e| fail(format!("read_path_each failed: {e}")))?;
    // What the engine's threads take: the same events in batches, decoded where they are taken.
    let batched_path = batched(|sink| reader.read_path_batches(ctx.name(), &session.path, sink));
    let batched_each = batched(|sink| reader.read_each_batches(ctx.root(), &session, sink));
    for (method, events) in [
        ("read_path_each", Ok(each)),
        ("read_path_batches", batched_path),
        ("read_each_batches", batched_each),
    ] {
        let events = events.map_err(|e| fail(format!("{method} failed: {e}")))?;
        if events != whole.events {
            let at = events
                .iter()
                .zip(&whole.events)
                .position(|(a, b)| a != b)
                .unwrap_or(events.len().min(whole.events.len()));
            return Err(fail(format!(
                "{method} yields {} events, read_path {}; they first differ at event {at}",
                events.len(),
                whole.events.len()
            )));
        }
    }
    read_as_written(ctx, &session.path, &whole.events).map_err(fail)?;
    let mut handed = 0;
    reader
        .read_path_each(ctx.name(), &session.path, &mut |_| {
            handed += 1;
            false
        })
        .map_err(|e| fail(format!("read_path_each failed when told to stop: {e}")))?;
    if handed > 1 {
        return Err(fail(format!(
            "read_path_each handed {handed} events after its sink said stop at the first"
        )));
    }
    let cwd = reader
        .read_path_cwd(ctx.name(), &session.path)
        .map_err(|e| fail(format!("read_path_cwd failed: {e}")))?;
    if cwd != whole.cwd {
        return Err(fail(format!(
            "read_path_cwd says {cwd:?}, read_path's cwd is {:?}",
            whole.cwd
        )));
    }
    Ok(())
}

/// The session file lent as it grows, in small steps and in large: a reader that reads files as
/// they are written yields `read_path`'s events both ways, in one piece or in batches; one that
/// declines reads nothing. A file abandoned halfway is an error, never a short read.
fn read_as_written(ctx: &Ctx<'_>, path: &Path, whole: &[Event]) -> Result<(), String> {
    let reader = ctx.plugin.reader();
    let lent = |step| LentInSteps::new(path, step).map_err(|e| format!("{}: {e}", path.display()));
    let len = std::fs::metadata(path).map_or(0, |m| m.len());
    let mut events = Vec::new();
    let file = lent(512)?;
    let read = reader
        .read_written_each(ctx.name(), &file, &mut |e| {
            events.push(e);
            true
        })
        .map_err(|e| format!("read_written_each failed: {e}"))?;
    if !read {
        if !events.is_empty() {
            return Err(format!(
                "read_written_each declined the file but handed {} events",
                events.len()
            ));
        }
        return Ok(());
    }
    let mut read_batched = false;
    let file_batched = lent(1 << 16)?;
    let batched = batched(|sink| {
        read_batched = reader.read_written_batches(ctx.name(), &file_batched, sink)?;
        Ok(())
    })
    .map_err(|e| format!("read_written_batches failed: {e}"))?;
    for (method, events) in [
        ("read_written_each", &events),
        ("read_written_batches", &batched),
    ] {
        if events != whole {
            return Err(format!(
                "{method} yields {} events of the file lent as it grows, read_path {}",
                events.len(),
                whole.len()
            ));
        }
    }
    if !read_batched {
        return Err("read_written_batches declined a file read_written_each reads".into());
    }
    if len >= 2 {
        let abandoned = lent(len / 4 + 1)?.abandoned_at(len / 2);
        let mut handed = 0;
        if reader
            .read_written_each(ctx.name(), &abandoned, &mut |_| {
                handed += 1;
                true
            })
            .is_ok()
        {
            return Err(format!(
                "read_written_each read a file its writer abandoned halfway as whole ({handed} events)"
            ));
        }
    }
    Ok(())
}
