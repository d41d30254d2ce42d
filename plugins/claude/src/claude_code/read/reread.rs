//! The events' pass: the records the conversation needs, read again from where their lines start
//! and decoded whole. A file written in order is read forward through one buffer; the reader
//! seeks only when the chain goes back.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use handoff_sdk::PluginError;

use super::load::{full_record, record_text, Loaded};
use super::nodes::{IndexNode, Node};
use super::spanned::node_from_spans;

pub(super) struct RecordLines {
    reader: BufReader<File>,
    /// The file position the reader stands at.
    at: u64,
    line: Vec<u8>,
}

impl RecordLines {
    pub(super) fn open(path: &Path) -> Result<Self, PluginError> {
        let file = File::open(path).map_err(|e| PluginError::io(path, &e))?;
        Ok(RecordLines::of(file))
    }

    /// The lines of `file`, opened at its start.
    pub(super) fn of(file: File) -> Self {
        RecordLines {
            reader: BufReader::with_capacity(1 << 16, file),
            at: 0,
            line: Vec::new(),
        }
    }

    /// The record `node` indexes, decoded whole (its content and extras); an error naming the
    /// line if it does not decode, or if the line holds another record now (the file changed
    /// between the passes).
    pub(super) fn record(
        &mut self,
        path: &Path,
        node: &IndexNode,
        loaded: &mut Loaded,
    ) -> Result<Node, PluginError> {
        let io = |e: std::io::Error| PluginError::io(path, &e);
        if node.offset != self.at {
            // Within the buffer this moves in it; otherwise it seeks.
            let by = i64::try_from(node.offset).unwrap_or(i64::MAX) - self.at as i64;
            self.reader.seek_relative(by).map_err(io)?;
            self.at = node.offset;
        }
        self.line.clear();
        if node.len == u32::MAX {
            self.reader.read_until(b'\n', &mut self.line).map_err(io)?;
        } else {
            // The length the index measured: no search for the newline.
            self.line.resize(node.len as usize, 0);
            self.reader.read_exact(&mut self.line).map_err(io)?;
        }
        self.at += self.line.len() as u64;
        let (text, complete) = record_text(&self.line, node.offset == 0);
        decode_line(path, node, text, complete, loaded)
    }
}

/// The record `node` indexes, decoded whole from `text`, its line: from the members the index
/// located when they serve, else the whole line; an error naming the line if it does not decode,
/// or if the line holds another record (the file changed between the passes).
pub(super) fn decode_line(
    path: &Path,
    node: &IndexNode,
    text: &[u8],
    complete: bool,
    loaded: &mut Loaded,
) -> Result<Node, PluginError> {
    if let Some(node) = node_from_spans(path, node, text, loaded) {
        return Ok(node);
    }
    match full_record(path, node.line(), text, complete, loaded)? {
        Some(full) if full.node.uuid == node.uuid => Ok(full.node),
        _ => Err(PluginError::malformed_line(
            path,
            node.line(),
            None,
            "the file changed while it was read (this line held another record)",
        )),
    }
}
