//! The records of a chat made as its events arrive (`Writer::create_streamed`), the same bytes
//! [`write::records`] gives `create` for the whole transcript.
//!
//! Kept between events — the only look-ahead the format needs: the **open turn**, an assistant
//! event with the tool results that answer it so far. Gemini CLI keeps a turn's results inside
//! its `gemini` record (`toolCalls`), one line, so that line can be written only once the next
//! user or assistant event (or the end) closes the turn; a user event alone is a turn closed at
//! once. Besides it, the index of the turn's first event (errors name an event by its index)
//! and the number of records written. Each closed turn's records are made by
//! [`write::records`], as `create` makes them, and written at once.
//!
//! They are written to a **spool**, an anonymous temporary file (removed by the system when it
//! is closed), not to the chat itself: the chat's folder, `tmp/<short id>/chats/`, exists only
//! once the project is registered in `projects.json`, and an event refused halfway must leave
//! the store as `create`'s refusal leaves it, untouched (taking a registration back still
//! leaves the registry file, which the CLI's lock needs). Once the stream has ended with every
//! event accepted, the project is registered and the chat made: its metadata line, then the
//! spool copied in (see `create_streamed` in `mod.rs`).

use std::fs::File;
use std::io::{BufReader, BufWriter, Seek, SeekFrom, Write};

use handoff_sdk::{Body, Event, EventStream, PluginError};

use super::write;

/// The records of a whole stream, in a temporary file.
pub(super) struct Spool {
    file: File,
    /// Records in it (none: nothing Gemini CLI would resume).
    pub records: usize,
}

impl Spool {
    /// Copies the records into the chat being written.
    pub fn copy_to(mut self, out: &mut dyn Write) -> std::io::Result<()> {
        self.file.seek(SeekFrom::Start(0))?;
        std::io::copy(&mut BufReader::with_capacity(1 << 16, self.file), out)?;
        Ok(())
    }
}

/// The records of `first` and the events after it, each turn written as it closes. A refused
/// event or a failed stream is the error, and the spool is gone with it.
pub(super) fn spool(first: Event, events: &mut dyn EventStream) -> Result<Spool, PluginError> {
    let file = tempfile::tempfile().map_err(|e| spool_error(&e))?;
    let mut out = BufWriter::with_capacity(1 << 16, file);
    let mut turn = vec![first];
    let mut offset = 0;
    let mut records = 0;
    loop {
        let next = events.next_event()?;
        let closes_the_turn = next
            .as_ref()
            .is_none_or(|e| !matches!(e.body, Body::ToolResult { .. }));
        if closes_the_turn && !turn.is_empty() {
            for record in write::records(&turn, offset, None)? {
                super::write_line(&mut out, &record).map_err(|e| spool_error(&e))?;
                records += 1;
            }
            offset += turn.len();
            turn.clear();
        }
        match next {
            Some(event) => turn.push(event),
            None => break,
        }
    }
    let file = out.into_inner().map_err(|e| spool_error(e.error()))?;
    Ok(Spool { file, records })
}

fn spool_error(e: &std::io::Error) -> PluginError {
    PluginError::Other(format!(
        "cannot write the chat's records to a temporary file: {e}"
    ))
}
