//! The events of a streamed create, kept in an anonymous temporary file until the stream ends.
//!
//! OpenCode's rows go in in one transaction, which holds its database's write lock: a running
//! OpenCode waits at most its busy timeout (5 s) for it. So the stream (as long as reading the
//! source takes) is spooled first, one event a JSON line, and the transaction then writes the
//! rows from the spool as `create` writes them from a held transcript: the lock is held as long
//! as it is today, and memory holds one event at a time.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Seek, SeekFrom, Write};

use handoff_sdk::serde_json;
use handoff_sdk::{Body, Event, EventStream, Part, PluginError};

/// A whole stream's events, spooled.
pub(crate) struct Spool {
    file: File,
    /// The session's title: the first text of its first user event with one.
    pub title: Option<String>,
    /// The first event's time, in milliseconds.
    pub first_ms: i64,
}

/// The first text of `event`, a user event: what OpenCode's title is made of.
pub(crate) fn user_text(event: &Event) -> Option<String> {
    match &event.body {
        Body::User { content } => content.iter().find_map(|p| match p {
            Part::Text { text } => Some(text.clone()),
            _ => None,
        }),
        _ => None,
    }
}

/// Spools every event of `events` (the one already taken, `first`, and the rest).
pub(crate) fn spool(first: Event, events: &mut dyn EventStream) -> Result<Spool, PluginError> {
    let file = tempfile::tempfile().map_err(|e| spool_error(&e))?;
    let mut out = BufWriter::with_capacity(1 << 16, file);
    let (mut title, first_ms) = (None, first.timestamp.millis());
    let mut next = Some(first);
    while let Some(event) = next {
        if title.is_none() {
            title = user_text(&event);
        }
        serde_json::to_writer(&mut out, &event)
            .map_err(std::io::Error::other)
            .and_then(|()| out.write_all(b"\n"))
            .map_err(|e| spool_error(&e))?;
        next = events.next_event()?;
    }
    let file = out.into_inner().map_err(|e| spool_error(e.error()))?;
    Ok(Spool {
        file,
        title,
        first_ms,
    })
}

impl Spool {
    /// Hands each spooled event, in order, with its index, to `each`.
    pub fn each(
        mut self,
        mut each: impl FnMut(usize, &Event) -> Result<(), PluginError>,
    ) -> Result<(), PluginError> {
        self.file
            .seek(SeekFrom::Start(0))
            .map_err(|e| spool_error(&e))?;
        let mut lines = BufReader::with_capacity(1 << 16, self.file);
        let mut line = String::new();
        for index in 0.. {
            line.clear();
            if lines.read_line(&mut line).map_err(|e| spool_error(&e))? == 0 {
                return Ok(());
            }
            let event: Event =
                serde_json::from_str(&line).map_err(|e| spool_error(&std::io::Error::other(e)))?;
            each(index, &event)?;
        }
        Ok(())
    }
}

fn spool_error(e: &std::io::Error) -> PluginError {
    PluginError::Other(format!(
        "cannot keep the session's events in a temporary file: {e}"
    ))
}
