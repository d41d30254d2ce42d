//! The events of a session read while its writer writes it, made as its lines arrive: a record's
//! events in file order, from the record as its line was decoded whole when it was loaded (its
//! index node taken from that decoding, as a whole read's is), so no line is read or parsed twice
//! and the events' pass runs beside the writer instead of after it.
//!
//! File order is a bet: it is [`assemble`](super::assemble)'s order for a session handoff's
//! writer writes (a linear chain; parallel results on their calls, in time order; a compaction's
//! boundary, kept events and summary in turn), not for every file Claude Code reads. So the bet
//! is checked before the read counts: once the file is whole, the walk [`assemble`] would take is
//! taken on the index alone ([`made_in_file_order`](super::assemble::made_in_file_order)), and it
//! must hand on the same records in the same order and group. A file that leaves the bet (a uuid
//! written again, a sidechain record, a record that does not decode, another walk) is an error,
//! and the verify reads the session whole instead (a source read in one pass, the continuation
//! runs again on the whole read). A prompt that does not hang on the last record turned into
//! events (a rewind's) is such an error at its line, so a file with a branch is declined before
//! it is read to its end: only a hint, the walk at the end decides.

use std::path::Path;

use handoff_sdk::{Event, PluginError};

use super::assemble::{
    bare_strings_as_sent, boundary_at, compaction, emit_assistant_turn, user_record, Emitter,
};
use super::link::Link;
use super::load::Loaded;
use super::nodes::{IndexKind, IndexNode, Node};
use super::reread::decode_line;
use super::rules::ReadRules;

/// The events made so far in file order, and the assistant turn and compact boundary still open.
pub(super) struct Speculation<'s> {
    out: Emitter<'s>,
    /// The records of the assistant turn being read, and its message id.
    turn: Vec<Node>,
    turn_id: Option<Box<str>>,
    boundary: Option<(Node, Option<String>)>,
    /// Records turned into events (user, assistant and compact boundary records).
    records: usize,
    /// The index of the last record turned into events, if any.
    last_conversation: Option<usize>,
    drops_empty_user_content: bool,
    drops_bare_string_blocks: bool,
}

impl<'s> Speculation<'s> {
    /// Events for the Claude Code of `rules`, to `sink`.
    pub(super) fn new(sink: &'s mut dyn FnMut(Event) -> bool, rules: ReadRules) -> Self {
        Speculation {
            out: Emitter::new(sink, false, rules),
            turn: Vec::new(),
            turn_id: None,
            boundary: None,
            records: 0,
            last_conversation: None,
            drops_empty_user_content: rules.empty_user_content_dropped,
            drops_bare_string_blocks: rules.bare_string_blocks_dropped,
        }
    }

    /// The record just indexed as `node` (new to the index, at `index`), from `text`, its line
    /// (`decoded`: the record as the line decoded whole, when it did); its message id if it is an
    /// assistant record with one. An error when the file leaves the bet.
    pub(super) fn record(
        &mut self,
        path: &Path,
        (index, node): (usize, &IndexNode),
        (text, complete, decoded): (&[u8], bool, Option<Node>),
        message_id: Option<&str>,
        loaded: &mut Loaded,
    ) -> Result<(), PluginError> {
        if node.sidechain {
            return Err(left_file_order(path, node, "a sidechain record"));
        }
        match node.kind {
            IndexKind::Other => return Ok(()),
            IndexKind::Malformed => {
                return Err(left_file_order(path, node, "a record that does not decode"))
            }
            IndexKind::User { .. } | IndexKind::Assistant | IndexKind::CompactBoundary { .. } => {}
        }
        if self.branches_off(node, loaded.records.up[index].get()) {
            return Err(left_file_order(
                path,
                node,
                "a prompt off the records before it",
            ));
        }
        self.last_conversation = Some(index);
        let decoded = decoded.map_or_else(|| decode_line(path, node, text, complete, loaded), Ok);
        let mut record = decoded.map_err(|e| {
            // The whole read decides whether Claude Code passes the record over or fails on it.
            PluginError::Other(format!("{e}: {NOT_AS_WRITTEN}"))
        })?;
        bare_strings_as_sent(&mut record, self.drops_bare_string_blocks);
        self.records += 1;
        if node.kind == IndexKind::Assistant {
            let same_turn = message_id.is_some() && self.turn_id.as_deref() == message_id;
            if !same_turn {
                self.end_turn(path, loaded)?;
                self.turn_id = message_id.map(Box::from);
            }
            self.turn.push(record);
            return Ok(());
        }
        self.end_turn(path, loaded)?;
        let out = &mut self.out;
        match node.kind {
            IndexKind::User {
                compact_summary: true,
                ..
            } => compaction(path, self.boundary.take(), record, out),
            IndexKind::User { .. } => user_record(path, record, self.drops_empty_user_content, out),
            _ => {
                self.boundary = Some(boundary_at(record, out));
                Ok(())
            }
        }
    }

    /// Whether `node`, a prompt linked by `up`, starts a branch: it does not follow the last
    /// record turned into events (a rewind's prompt hangs on an earlier record), so Claude Code's
    /// walk would leave records already handed on. Only a hint that the bet is lost, seen at the
    /// line instead of at the end (a lost bet costs a second read of the whole file): the walk
    /// checked at the end decides, so a prompt let through here costs nothing.
    fn branches_off(&self, node: &IndexNode, up: Link) -> bool {
        let prompt = matches!(
            node.kind,
            IndexKind::User {
                meta: false,
                compact_summary: false,
                has_results: false,
                bare_strings_only: false,
            }
        );
        let Some(last) = self.last_conversation else {
            return false;
        };
        prompt
            && match up {
                Link::To(parent) => (parent as usize) < last,
                Link::Root | Link::Missing(_) => true,
            }
    }

    /// The assistant turn read so far, handed on.
    fn end_turn(&mut self, path: &Path, loaded: &Loaded) -> Result<(), PluginError> {
        self.turn_id = None;
        if self.turn.is_empty() {
            return Ok(());
        }
        let records = std::mem::take(&mut self.turn);
        emit_assistant_turn(path, records, &loaded.models, None, &mut self.out)
    }

    /// The end of the file: the last turn handed on; how many records were turned into events.
    pub(super) fn finish(mut self, path: &Path, loaded: &Loaded) -> Result<usize, PluginError> {
        self.end_turn(path, loaded)?;
        Ok(self.records)
    }
}

/// What a file that leaves the bet is told.
pub(super) const NOT_AS_WRITTEN: &str =
    "the session is not read as it is written (in file order), but whole";

/// The error of a file that leaves the bet at `node`'s line (the verify then reads it whole).
pub(super) fn left_file_order(path: &Path, node: &IndexNode, what: &str) -> PluginError {
    PluginError::Other(format!(
        "{}:{}: {what}: {NOT_AS_WRITTEN}",
        path.display(),
        node.line()
    ))
}
