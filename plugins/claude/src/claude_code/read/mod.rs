//! Claude Code records → canonical transcript.
//!
//! [`read_each`] reads in two passes, so a session is never held whole. The index pass streams the
//! file line by line and keeps small chain nodes (UUIDs as 128 bits, the kind, the flags, where the
//! line is, the link to the parent) but no content: of each line only what linking needs is decoded
//! ([`index_record`]), message content skipped unbuilt but for whether it holds a tool result. The
//! events' pass then reads again only the records the conversation needs, in its order (forward
//! through one buffer for a file written in order), decodes of each only what the index did not
//! judge — its uuid, timestamp, extras and message, from where the index pass found them
//! ([`index_record`], [`spanned`]) — typed and borrowed ([`super::records`]): content blocks become
//! canonical blocks as they are parsed. A line those members do not serve (one not found, a name
//! escaped or repeated, content the typed path does not cover, any error) is decoded whole, and one
//! the typed path does not cover is read again with `Value` content and `parse_block`, which
//! decides and names any fault. Its content moves into events that go out at once. `read` (the
//! tests' oracle) and [`read_session`], which hold the transcript anyway, decode each record whole
//! once, in one pass, and keep its content beside its node until its events are made; so does
//! [`read_written_each`], which hands the content on at once ([`speculate`]).
//!
//! The conversation is the chain from the leaf (the last main-thread record) back to the root
//! through `parentUuid` (and through a compact boundary's `logicalParentUuid`, so the compacted
//! events stay for display). Streamed assistant records that share `message.id` are one turn, in
//! Claude Code's order (the chain's, then off it by timestamp), and the results of its calls that
//! are off the chain are gathered from its records' children: with parallel calls each result
//! hangs on its own `tool_use` record, so a plain walk from the leaf would miss all but the last.
//! `isMeta` user records are conversation (Claude Code sends them), and so are a local command's
//! `system` records, read as user texts ([`decode`]); sidechain (subagent),
//! attachment, queue, snapshot and other bookkeeping records are not. A malformed record is an
//! error naming its line and field when the conversation needs it (but one whose `message` or
//! `message.content` is missing or of the wrong type, which Claude Code 2.1.332 passes over:
//! [`ReadRules`]); off the conversation it is
//! judged only as far as linking needs it (its content, timestamp and extras are not read, as
//! Claude Code does not send them), and a line Claude Code keeps no record of (JSON that is no
//! object with a uuid) is skipped (measured with 2.1.197: a queue-operation
//! whose timestamp is an object resumes; `live/tests/differential.rs`, `queue-timestamp-object`).
//!
//! A `tool_use` no result answers is dropped, as Claude Code drops it on resume
//! ([`unresolved`]); a call under a legacy tool name is read under the name Claude Code sends
//! ([`sent_tools`]).
//!
//! One step per file: [`load`] streams the lines into nodes ([`nodes`], [`record_id`]), kept by
//! [`node_store`] (on the heap, or in a temporary file once a session is large), each
//! record decoded by [`decode`] and joined to its parent by index ([`link`], [`uuid_index`],
//! which also finds the conversation's path); [`assemble`] walks it, takes each record whole
//! (kept by a one-pass read, else read again by [`reread`]) and makes the events ([`events`]);
//! [`errors`] names what is wrong. A session read as its writer writes it (the verify of a new
//! one) makes its events as its lines arrive, in file order ([`speculate`]), and counts only once
//! the index shows that [`assemble`]'s walk is that order.

mod assemble;
mod decode;
mod errors;
mod events;
mod index_record;
mod link;
mod load;
mod node_store;
mod nodes;
mod record_id;
mod reread;
mod rules;
mod sent_tools;
mod spanned;
mod speculate;
#[cfg(test)]
mod tests;
mod unresolved;
mod uuid_index;

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

use handoff_sdk::marker::OwnershipMarker;
use handoff_sdk::serde_json::{self, Value};
use handoff_sdk::{Event, GrowingRead, Growth, PluginError, Transcript, WrittenFile};

use super::records::Text;
use super::write::ChainState;
use assemble::assemble;
use load::{expected_records_in, load, load_from, Passes};
pub use rules::ReadRules;
use speculate::Speculation;
use unresolved::DropUnresolvedCalls;

/// A session read back, with what an append needs to continue its chain.
pub(crate) struct Session {
    pub transcript: Transcript,
    pub session_id: Option<String>,
    pub chain: ChainState,
}

/// Reads the transcript of the session file at `path` in one pass (the records held whole, as
/// [`read_session`] reads them for an append): the tests' oracle for [`read_each`]'s two passes.
#[cfg(test)]
pub(crate) fn read(path: &Path) -> Result<Transcript, PluginError> {
    let mut loaded = load(path, Passes::One, usize::MAX)?;
    let cwd = loaded.cwd.take();
    let mut events = Vec::with_capacity(loaded.records.nodes.len());
    hand_on(path, loaded, ReadRules::default(), &mut |e| {
        events.push(e);
        true
    })?;
    let mut transcript = Transcript::new(events);
    transcript.cwd = cwd;
    Ok(transcript)
}

/// Reads a session file and where its chain stands, for an append: calls no result answers yet
/// stay (the append may answer them).
pub(crate) fn read_session(path: &Path) -> Result<Session, PluginError> {
    // The transcript is held whole anyway: its index stays on the heap.
    let mut loaded = load(path, Passes::One, usize::MAX)?;
    let cwd = loaded.cwd.take();
    let session_id = loaded.session_id.take();
    let mut events = Vec::with_capacity(loaded.records.nodes.len());
    let chain = assemble(path, loaded, true, ReadRules::default(), &mut |mut e| {
        sent_tools::as_sent(&mut e, ReadRules::default());
        events.push(e);
        true
    })?;
    let mut transcript = Transcript::new(events);
    transcript.cwd = cwd;
    Ok(Session {
        transcript,
        session_id,
        chain,
    })
}

/// Reads a session file event by event, handing each to `sink` as soon as it is assembled (only
/// the index of the records is held, never their content); returns the session's cwd.
pub(crate) fn read_each(
    path: &Path,
    rules: ReadRules,
    sink: &mut dyn FnMut(Event) -> bool,
) -> Result<Option<String>, PluginError> {
    read_each_spilling_after(path, node_store::spill_after(), rules, sink)
}

/// [`read_each`], its index going to a temporary file past `spill_after` records.
fn read_each_spilling_after(
    path: &Path,
    spill_after: usize,
    rules: ReadRules,
    sink: &mut dyn FnMut(Event) -> bool,
) -> Result<Option<String>, PluginError> {
    let mut loaded = load(path, Passes::Two, spill_after)?;
    let cwd = loaded.cwd.take();
    hand_on(path, loaded, rules, sink)?;
    Ok(cwd)
}

/// [`read_each`] of a session file its writer is still writing (or a source read in one pass:
/// the host's continuation reads a source file so first): each record's events are made
/// as its line arrives, in file order ([`speculate`]), and once the file is whole the index
/// confirms that [`read_each`] would make them so; a file where it would not (or that leaves file
/// order before) is an error, and the caller reads it whole.
pub(crate) fn read_written_each(
    file: &dyn WrittenFile,
    rules: ReadRules,
    sink: &mut dyn FnMut(Event) -> bool,
) -> Result<(), PluginError> {
    let name = file.name();
    let io = |e: std::io::Error| PluginError::io(name, &e);
    let input = GrowingRead::open(file).map_err(io)?;
    as_resumed(rules, sink, |out| {
        let mut speculation = Speculation::new(out, rules);
        // A file already whole (a source read in one pass) sizes the index as `load` does; one
        // still written is of a size not known yet, and the index grows as it is read.
        let expected = match file.wait_past(0) {
            Growth::Whole(len) => expected_records_in(len),
            Growth::Grown(_) | Growth::Abandoned => 0,
        };
        let spill_after = node_store::spill_after();
        let speculating = Some(&mut speculation);
        let mut loaded = load_from(name, input, expected, Passes::Two, spill_after, speculating)?;
        let records = speculation.finish(name, &loaded)?;
        loaded.reread = Some(file.open().map_err(io)?);
        if !assemble::made_in_file_order(name, loaded, rules, records)? {
            return Err(PluginError::Other(format!(
                "{}: Claude Code's walk of the session is not its file order: {}",
                name.display(),
                speculate::NOT_AS_WRITTEN
            )));
        }
        Ok(())
    })
}

/// The conversation's events of what was loaded, to `sink`, as the Claude Code of `rules` sends
/// them on resume.
fn hand_on(
    path: &Path,
    loaded: load::Loaded,
    rules: ReadRules,
    sink: &mut dyn FnMut(Event) -> bool,
) -> Result<(), PluginError> {
    as_resumed(rules, sink, |out| {
        assemble(path, loaded, false, rules, out).map(drop)
    })
}

/// The events `emit` makes, to `sink` as the Claude Code of `rules` sends them on resume: its
/// tools' inputs as it sends them, and the calls no result answers dropped once `emit` is done.
fn as_resumed(
    rules: ReadRules,
    sink: &mut dyn FnMut(Event) -> bool,
    emit: impl FnOnce(&mut dyn FnMut(Event) -> bool) -> Result<(), PluginError>,
) -> Result<(), PluginError> {
    let mut calls = DropUnresolvedCalls::new(sink, rules);
    emit(&mut |mut e| {
        sent_tools::as_sent(&mut e, rules);
        calls.push(e)
    })?;
    calls.finish();
    Ok(())
}

/// The session's cwd as [`read_each`] gives it (that of the first main-thread conversation record
/// that names one), found by decoding records only until it appears: a resume plan needs no more
/// than that, and the session was verified whole when it was written. A line that does not decode
/// sends the question to [`read_session`], which names the line and field at fault.
pub(crate) fn session_cwd(path: &Path) -> Result<Option<String>, PluginError> {
    #[derive(serde::Deserialize)]
    struct CwdProbe<'a> {
        #[serde(rename = "type", borrow)]
        kind: Option<Text<'a>>,
        #[serde(borrow)]
        uuid: Option<Text<'a>>,
        #[serde(rename = "isSidechain")]
        is_sidechain: Option<bool>,
        #[serde(borrow)]
        cwd: Option<Text<'a>>,
    }
    let file = File::open(path).map_err(|e| PluginError::io(path, &e))?;
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let mut buf = Vec::new();
    let mut line_no = 0;
    loop {
        buf.clear();
        let n = reader
            .read_until(b'\n', &mut buf)
            .map_err(|e| PluginError::io(path, &e))?;
        if n == 0 {
            return Ok(None);
        }
        line_no += 1;
        let mut text = buf.strip_suffix(b"\n").unwrap_or(&buf);
        if line_no == 1 {
            text = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text);
        }
        if text.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let Ok(probe) = serde_json::from_slice::<CwdProbe<'_>>(text) else {
            return Ok(read_session(path)?.transcript.cwd);
        };
        let conversational = matches!(
            probe.kind.as_ref().map(Text::as_str),
            Some("user" | "assistant" | "system")
        );
        if conversational && probe.uuid.is_some() && !probe.is_sidechain.unwrap_or(false) {
            if let Some(cwd) = probe.cwd {
                return Ok(Some(cwd.0.into_owned()));
            }
        }
    }
}

/// Whether the file's conversation records are all sidechain records (a subagent's thread, as
/// Claude Code writes it to `agent-*.jsonl`), and there is one: Claude Code resumes no such file
/// by id (measured, 2.1.197 and 2.1.332: "No conversation found with session ID", placed under
/// its records' session id in their cwd's project folder). Lines that are not records are passed
/// over.
pub(crate) fn only_sidechain_records(path: &Path) -> Result<bool, PluginError> {
    #[derive(serde::Deserialize)]
    struct ThreadProbe<'a> {
        #[serde(rename = "type", borrow)]
        kind: Option<Text<'a>>,
        #[serde(borrow)]
        uuid: Option<Text<'a>>,
        #[serde(rename = "isSidechain")]
        is_sidechain: Option<bool>,
    }
    let file = File::open(path).map_err(|e| PluginError::io(path, &e))?;
    let mut seen = false;
    for line in BufReader::new(file).split(b'\n') {
        let line = line.map_err(|e| PluginError::io(path, &e))?;
        let Ok(probe) = serde_json::from_slice::<ThreadProbe<'_>>(&line) else {
            continue;
        };
        let conversational = matches!(
            probe.kind.as_ref().map(Text::as_str),
            Some("user" | "assistant" | "system")
        );
        if conversational && probe.uuid.is_some() {
            if !probe.is_sidechain.unwrap_or(false) {
                return Ok(false);
            }
            seen = true;
        }
    }
    Ok(seen)
}

/// The first line of a session file, parsed (where the ownership marker is).
fn first_record(path: &Path) -> Result<Option<Value>, PluginError> {
    let file = File::open(path).map_err(|e| PluginError::io(path, &e))?;
    let mut line = Vec::new();
    BufReader::new(file)
        .read_until(b'\n', &mut line)
        .map_err(|e| PluginError::io(path, &e))?;
    if line.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    serde_json::from_slice(&line)
        .map(Some)
        .map_err(|e| PluginError::malformed_line(path, 1, None, format!("not JSON: {e}")))
}

/// The ownership marker on a session's first record, if it has one and the line reads.
pub(crate) fn marker(path: &Path) -> Option<OwnershipMarker> {
    first_record(path)
        .ok()
        .flatten()
        .and_then(|r| OwnershipMarker::find(&r))
}
