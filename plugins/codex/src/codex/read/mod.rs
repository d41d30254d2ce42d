//! Rollout lines → canonical events.
//!
//! The model's history is the `response_item`s (and `compacted`), replayed in file order; the
//! `event_msg` copies are for drawing the UI and are not read as history. Developer and system
//! messages are the CLI's instructions, and user messages the CLI injected (environment context)
//! are recognised by the rule in [`items::is_injected`]; both are set aside. Every line must be a
//! whole JSON record: a bad line is an error naming the file and its 1-based line, never skipped.
//!
//! One step per file: [`line`] parses a line (its envelope and payload), [`state`] holds the
//! events being built and hands them out, [`items`] turns each record into events, and
//! [`structure`] checks each event handed out as [`Transcript::validate`] would.

mod items;
mod line;
mod replacement;
mod state;
mod structure;
mod unanswered;

use std::io::BufRead;
use std::path::Path;

use handoff_sdk::lines::LineReader;
use handoff_sdk::marker::OwnershipMarker;
use handoff_sdk::spill::spill_ids;
use handoff_sdk::{Event, GrowingRead, PluginError, Transcript, WrittenFile};

pub use handoff_sdk::dialect::openai_responses::image_part;

use line::{parse_session_meta, torn};
use state::ReadState;
use unanswered::AnswerOpenCalls;

/// What the first line says about a session.
#[derive(Debug)]
pub struct Header {
    /// The session id.
    pub id: String,
    /// The working directory.
    pub cwd: String,
    /// The model provider the session was recorded with.
    pub model_provider: String,
    /// The ownership marker, if there is one.
    pub marker: Option<OwnershipMarker>,
    /// Codex rewrote the rollout for its paginated thread history (`codex migrate-rollouts
    /// --apply`), which drops every member it does not know: the marker is gone.
    pub rewritten_by_codex: bool,
}

impl Header {
    /// The marker in the file; for a rollout Codex rewrote (the marker gone), the copy this
    /// plugin kept beside the store when it created it (`owned`).
    pub fn marker_or_kept(self, root: &handoff_sdk::StoreRoot) -> Option<OwnershipMarker> {
        match self.marker {
            Some(marker) => Some(marker),
            None if self.rewritten_by_codex => crate::codex::owned::find(root, &self.id),
            None => None,
        }
    }
}

/// Reads the `session_meta` line of `path` only.
pub fn read_header(path: &Path) -> Result<Header, PluginError> {
    let file = std::fs::File::open(path).map_err(|e| PluginError::io(path, &e))?;
    let mut reader = std::io::BufReader::new(file);
    let mut buf = Vec::new();
    reader
        .read_until(b'\n', &mut buf)
        .map_err(|e| PluginError::io(path, &e))?;
    if buf.is_empty() {
        return Err(PluginError::malformed_line(
            path,
            1,
            None,
            "the session file is empty",
        ));
    }
    if buf.last() != Some(&b'\n') {
        return Err(torn(path, 1));
    }
    let (_, meta) = parse_session_meta(path, 1, &buf)?;
    Ok(meta.0)
}

/// The `ordinal` of the last record that has one (a rollout Codex rewrote for its paginated
/// thread history numbers every record).
pub fn last_ordinal(path: &Path) -> Result<Option<u64>, PluginError> {
    #[derive(serde::Deserialize)]
    struct Numbered {
        ordinal: Option<u64>,
    }
    let file = std::fs::File::open(path).map_err(|e| PluginError::io(path, &e))?;
    let mut reader = std::io::BufReader::new(file);
    let mut line = Vec::new();
    let mut last = None;
    let mut n = 0;
    loop {
        line.clear();
        let read = reader
            .read_until(b'\n', &mut line)
            .map_err(|e| PluginError::io(path, &e))?;
        if read == 0 {
            return Ok(last);
        }
        n += 1;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let numbered: Numbered = serde_json::from_slice(&line)
            .map_err(|e| PluginError::malformed_line(path, n, Some("ordinal"), e.to_string()))?;
        if let Some(ordinal) = numbered.ordinal {
            last = Some(ordinal);
        }
    }
}

/// Reads a whole rollout as written, a call without output left open (an append may answer
/// it).
pub fn read_rollout_as_written(path: &Path) -> Result<Transcript, PluginError> {
    let mut events = Vec::new();
    let header = read_each(path, &mut |event| {
        events.push(event);
        true
    })?;
    let mut transcript = Transcript::new(events);
    transcript.cwd = Some(header.cwd);
    Ok(transcript)
}

/// [`read_each`], with a call that has no output anywhere answered as Codex answers it when it
/// resumes the rollout ([`unanswered`]).
pub fn read_each_as_sent(
    path: &Path,
    sink: &mut dyn FnMut(Event) -> bool,
) -> Result<Header, PluginError> {
    as_sent(sink, |each| read_each(path, each))
}

/// `read`'s events to `sink`, a call that has no output anywhere answered as Codex answers it.
fn as_sent<T>(
    sink: &mut dyn FnMut(Event) -> bool,
    read: impl FnOnce(&mut dyn FnMut(Event) -> bool) -> Result<T, PluginError>,
) -> Result<T, PluginError> {
    let mut answer = AnswerOpenCalls::new(sink);
    let read = read(&mut |event| answer.push(event))?;
    answer.finish();
    Ok(read)
}

/// Reads a rollout line by line and hands each event to `sink` as soon as it is complete (until
/// `sink` returns `false`). Only what later lines can still change is held: the event being built
/// (more items of it may follow) and, until its turn ends, a tool result (an `item_completed`
/// record may still mark it failed), with the events after it. Every event is checked against
/// the structural rules of [`Transcript::validate`] before it is handed out.
pub fn read_each(path: &Path, sink: &mut dyn FnMut(Event) -> bool) -> Result<Header, PluginError> {
    read_each_spilling_past(path, spill_ids(), sink)
}

/// [`read_each`] whose id sets go to temporary files past `threshold` ids each (the tests set 0
/// to read every sample so; see `transcript::spill`).
fn read_each_spilling_past(
    path: &Path,
    threshold: usize,
    sink: &mut dyn FnMut(Event) -> bool,
) -> Result<Header, PluginError> {
    let file = std::fs::File::open(path).map_err(|e| PluginError::io(path, &e))?;
    read_each_from(path, file, threshold, sink)
}

/// [`read_each_as_sent`] of a rollout its writer is still writing.
pub fn read_written_as_sent(
    file: &dyn WrittenFile,
    sink: &mut dyn FnMut(Event) -> bool,
) -> Result<(), PluginError> {
    let name = file.name();
    let input = GrowingRead::open(file).map_err(|e| PluginError::io(name, &e))?;
    as_sent(sink, |each| read_each_from(name, input, spill_ids(), each)).map(drop)
}

/// [`read_each`] of the bytes of `input`, named `path` in errors; its id sets spill past
/// `threshold` ids.
fn read_each_from(
    path: &Path,
    input: impl std::io::Read,
    threshold: usize,
    sink: &mut dyn FnMut(Event) -> bool,
) -> Result<Header, PluginError> {
    // Each line parsed where it was read, not copied out first.
    let mut lines = LineReader::new(input);
    let mut state = ReadState::new(path, sink, threshold);
    let mut n = 0usize;
    while let Some(line) = lines.next_line().map_err(|e| PluginError::io(path, &e))? {
        n += 1;
        let Some(body) = line.strip_suffix(b"\n") else {
            return Err(torn(path, n));
        };
        let body = body.strip_suffix(b"\r").unwrap_or(body);
        // Codex 0.171.0 skips a blank line and resumes the rest (measured, issue 15:
        // live/tests/differential.rs).
        if body.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        state.line(n, body)?;
        if state.stopped {
            break;
        }
    }
    if n == 0 {
        return Err(PluginError::Malformed {
            file: path.to_owned(),
            line: None,
            field: None,
            message: "the session file is empty".into(),
        });
    }
    state.finish()
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use handoff_live::session_files::{assert_alike_spilled_or_not, has_extension, session_files};

    /// With every id digest in a temporary file, each rollout the tests, the live tier and the
    /// corpus hold (written by Codex and by other tools) reads as it does with them in memory.
    #[test]
    fn a_read_with_its_ids_in_files_agrees_with_one_in_memory() {
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let files = session_files(&fixtures, "codex", |p| has_extension(p, "jsonl"));
        let read = |path: &Path, threshold: usize| {
            let mut events = Vec::new();
            super::read_each_spilling_past(path, threshold, &mut |e| {
                events.push(e);
                true
            })
            .map(|_| events)
            .map_err(|e| e.to_string())
        };
        assert_alike_spilled_or_not(&files, &[0, 3], read);
        assert!(files.len() >= 10, "{} rollouts", files.len());
    }
}
