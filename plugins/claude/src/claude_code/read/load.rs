//! Loading: the file streamed line by line into chain nodes, each line decoded on the typed path
//! when it can be and on the general path otherwise.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

use handoff_sdk::serde_json::{self, Value};
use handoff_sdk::{IdMap, PluginError};

use super::decode::node_of;
use super::errors::{diagnose, malformed};
use super::nodes::{ReadRecord, Records};
use super::record_id::RecordId;
use crate::claude_code::records::{FastContent, Record};

/// Assistant records that share a message id (streamed parts of one turn), gathered while
/// loading: an id's first record, and its group once a second record shares it.
#[derive(Default)]
pub(super) struct MessageGroups {
    pub(super) first: IdMap<Box<str>, (u32, u32)>,
    pub(super) groups: Vec<Vec<u32>>,
}

impl MessageGroups {
    fn add(&mut self, id: Box<str>, record: u32) {
        let (first, group) = self.first.entry(id).or_insert((record, u32::MAX));
        if *first == record {
            return;
        }
        if *group == u32::MAX {
            *group = self.groups.len() as u32;
            self.groups.push(vec![*first]);
        }
        self.groups[*group as usize].push(record);
    }
}

pub(super) struct Loaded {
    pub(super) records: Records,
    pub(super) messages: MessageGroups,
    pub(super) cwd: Option<String>,
    pub(super) session_id: Option<String>,
    /// The distinct `message.model`s of assistant records.
    pub(super) models: Vec<Box<str>>,
    pub(super) model_index: IdMap<Box<str>, u32>,
    /// The `leafUuid` of the last `last-prompt` record: where Claude Code resumes, when that
    /// record is still a leaf (see `assemble`).
    pub(super) last_prompt_leaf: Option<RecordId>,
}

/// Streams the file into chain records.
pub(super) fn load(path: &Path) -> Result<Loaded, PluginError> {
    let file = File::open(path).map_err(|e| PluginError::io(path, &e))?;
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let mut loaded = Loaded {
        records: Records {
            nodes: Vec::new(),
            parents: Vec::new(),
            groups: Vec::new(),
            index: IdMap::default(),
        },
        messages: MessageGroups::default(),
        cwd: None,
        session_id: None,
        models: Vec::new(),
        model_index: IdMap::default(),
        last_prompt_leaf: None,
    };
    let mut buf = Vec::new();
    let mut line_no = 0;
    loop {
        buf.clear();
        let n = reader
            .read_until(b'\n', &mut buf)
            .map_err(|e| PluginError::io(path, &e))?;
        if n == 0 {
            break;
        }
        line_no += 1;
        let complete = buf.last() == Some(&b'\n');
        let mut text = if complete {
            &buf[..buf.len() - 1]
        } else {
            &buf[..]
        };
        // A byte order mark before the first record, as Claude Code reads it (measured: it
        // resumes such a file whole).
        if line_no == 1 {
            text = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text);
        }
        // Blank lines carry nothing; Claude Code skips them (measured: it resumes the whole
        // conversation around one).
        if text.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let node = match typed_record(text) {
            Some(record) => node_of(path, line_no, record, &mut loaded)?,
            // Not a record the typed path decodes (or not one at all): the general path decides,
            // and names the field at fault.
            None => {
                let record: Record<'_, Value> = serde_json::from_slice(text).map_err(|e| {
                    let torn = if complete {
                        ""
                    } else {
                        " (the last line is torn: no final newline)"
                    };
                    malformed(
                        path,
                        line_no,
                        diagnose(text).as_deref(),
                        format!("{e}{torn}"),
                    )
                })?;
                node_of(path, line_no, record, &mut loaded)?
            }
        };
        if let Some(record) = node {
            keep(&mut loaded, record);
        }
    }
    if line_no == 0 {
        return Err(PluginError::Malformed {
            file: path.to_owned(),
            line: None,
            field: None,
            message: "the session file is empty".into(),
        });
    }
    // The message ids are done with: freed now, their memory is reused by the events.
    loaded.records.groups = std::mem::take(&mut loaded.messages).groups;
    Ok(loaded)
}

/// Adds a record. One whose uuid was seen replaces that record in place (Claude Code keeps its
/// records by uuid, the later one winning; it re-writes streamed assistant records, and
/// concurrent writers repeat lines): the chain is linked by uuid, so its place in the file does
/// not matter.
fn keep(loaded: &mut Loaded, record: ReadRecord) {
    let records = &mut loaded.records;
    let next = records.nodes.len() as u32;
    let at = *records
        .index
        .entry(record.node.uuid.clone())
        .or_insert(next);
    if at != next {
        records.parents[at as usize] = record.parent;
        records.nodes[at as usize] = record.node;
        return;
    }
    if let Some(id) = record.message_id {
        loaded.messages.add(id, next);
    }
    records.parents.push(record.parent);
    records.nodes.push(record.node);
}

/// The line decoded on the typed path, if it can be (see [`super::record_in`]).
pub(super) fn typed_record(text: &[u8]) -> Option<Record<'_, FastContent>> {
    // UTF-8 is checked once for the line, not once per string.
    let text = std::str::from_utf8(text).ok()?;
    serde_json::from_str(text).ok()
}

/// The index of `model` in `loaded.models`, added if new.
pub(super) fn intern(loaded: &mut Loaded, model: &str) -> u32 {
    if let Some(&i) = loaded.model_index.get(model) {
        return i;
    }
    let i = loaded.models.len() as u32;
    loaded.models.push(model.into());
    loaded.model_index.insert(model.into(), i);
    i
}
