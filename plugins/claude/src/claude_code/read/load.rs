//! Loading: the file streamed line by line into chain nodes, each line decoded on the typed path
//! when it can be and on the general path otherwise.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use handoff_sdk::lines::LineReader;
use handoff_sdk::serde_json::{self, Value};
use handoff_sdk::spill::{spill_ids, SpillMap};
use handoff_sdk::{IdMap, IdSeeds, PluginError};

use super::decode::{index_node_of, node_of};
use super::errors::diagnose;
use super::index_record::IndexRecord;
use super::index_record::Spans;
use super::link::{link_to, resolve_later_parents, GroupMembers};
use super::node_store::NodeStore;
use super::nodes::{IndexKind, IndexNode, Kind, Node, ReadRecord, RecordBody, Records};
use super::record_id::RecordId;
use super::speculate::{left_file_order, Speculation};
use super::uuid_index::UuidIndex;
use crate::claude_code::records::{FastContent, Record};

/// Assistant records that share a message id (streamed parts of one turn), gathered while
/// loading: an id's first record, and its group once a second record shares it.
/// An id is kept as its 128-bit digest (never the id itself) beside its first record and group
/// packed in 8 bytes, in a [`SpillMap`]: past a threshold the older ones go to a temporary file.
/// A group's records are (group, record) pairs in one list, 8 bytes a record (a list a group
/// cost ~40 bytes a group more: its header and its own allocation).
#[derive(Default)]
pub(super) struct MessageGroups {
    /// Id digest → (first record << 32) | group (`u32::MAX`: none yet).
    pub(super) first: SpillMap<u64>,
    pub(super) members: GroupMembers,
    /// Groups made so far.
    count: u32,
    seeds: IdSeeds,
}

impl MessageGroups {
    /// Groups whose ids go to a temporary file past `threshold` messages.
    pub(super) fn spilling_past(threshold: usize) -> Self {
        MessageGroups {
            first: SpillMap::with_threshold(threshold),
            members: Vec::new(),
            count: 0,
            seeds: IdSeeds::default(),
        }
    }

    fn add(&mut self, id: &str, record: u32) {
        let key = self.seeds.digest(id);
        let Some(packed) = self.first.get(&key) else {
            self.first
                .insert(key, u64::from(record) << 32 | u64::from(u32::MAX));
            return;
        };
        let (first, mut group) = ((packed >> 32) as u32, packed as u32);
        if first == record {
            return;
        }
        if group == u32::MAX {
            group = self.count;
            self.count += 1;
            self.members.push((group, first));
            self.first
                .insert(key, u64::from(first) << 32 | u64::from(group));
        }
        self.members.push((group, record));
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
    /// With [`Passes::One`], what each record holds beyond its index node.
    pub(super) whole: Vec<Option<RecordBody>>,
    /// Where the events' pass reads the records again, when not from the file's path (a file
    /// read as its writer wrote it may have been renamed since).
    pub(super) reread: Option<File>,
}

/// How a file is read.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Passes {
    /// Each record decoded whole as it is loaded and kept till its events are made: one decoding
    /// per record, for a read that holds the whole transcript anyway.
    One,
    /// An index first, without content; then the conversation's records read again and decoded
    /// whole as their events are made: for a read that streams its events, so the session is
    /// never held whole.
    Two,
}

/// Streams the file into chain records (without their content, with [`Passes::Two`]); the
/// nodes go to a temporary file past `spill_after` records (see [`NodeStore`]).
pub(super) fn load(path: &Path, passes: Passes, spill_after: usize) -> Result<Loaded, PluginError> {
    let file = File::open(path).map_err(|e| PluginError::io(path, &e))?;
    let expected = expected_records(&file);
    load_from(path, file, expected, passes, spill_after, None)
}

/// [`load`] of the bytes of `input`, named `path` in errors; `expected` records size the index.
/// With a `speculation`, each record new to the index is handed to it with its line as well.
pub(super) fn load_from(
    path: &Path,
    input: impl Read,
    expected: usize,
    passes: Passes,
    spill_after: usize,
    mut speculation: Option<&mut Speculation<'_>>,
) -> Result<Loaded, PluginError> {
    // Each line parsed where it was read, not copied out first.
    let mut lines = LineReader::new(input);
    let mut loaded = Loaded {
        records: Records {
            nodes: NodeStore::new(expected, spill_after),
            up: Vec::with_capacity(expected),
            unresolved: Vec::new(),
            groups: Vec::new(),
            // Its recent uuids in a small table, the older ones in a temporary file.
            index: UuidIndex::spilling_past(spill_after.min(spill_ids())),
        },
        messages: MessageGroups::spilling_past(spill_after.min(spill_ids())),
        cwd: None,
        session_id: None,
        models: Vec::new(),
        model_index: IdMap::default(),
        last_prompt_leaf: None,
        whole: Vec::new(),
        reread: None,
    };
    // A speculation makes each record's events from its line at once: decoded whole as it is
    // loaded, a line is parsed once, not indexed and then decoded again.
    let whole_now = passes == Passes::One || speculation.is_some();
    let mut line_no = 0;
    let mut offset = 0u64;
    while let Some(line) = lines.next_line().map_err(|e| PluginError::io(path, &e))? {
        let n = line.len();
        line_no += 1;
        let line_start = offset;
        offset += n as u64;
        let (text, complete) = record_text(line, line_start == 0);
        // Blank lines carry nothing; Claude Code skips them (measured: it resumes the whole
        // conversation around one).
        if text.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let read = if whole_now {
            match full_record(path, line_no, text, complete, &mut loaded) {
                Ok(record) => Ok((record, true)),
                // A record that does not decode whole may still be off the conversation, which
                // Claude Code never sends (measured, 2.1.197: it resumes a file with a malformed
                // record on an abandoned branch): indexed as the two-pass read indexes it, and
                // decoded again (naming the fault) only if the conversation needs it.
                Err(whole_error) => index_record(path, line_no, text, complete, &mut loaded)
                    .map(|record| (record, false))
                    .map_err(|_| whole_error),
            }
        } else {
            index_record(path, line_no, text, complete, &mut loaded).map(|r| (r, false))
        };
        let (record, whole) = match read {
            Ok(read) => read,
            Err(error) => (keyed_record(text, line_no).ok_or(error)?, false),
        };
        if let Some(record) = record {
            let message_id = match speculation {
                Some(_) => record.message_id.clone(),
                None => None,
            };
            let kept = keep(&mut loaded, record, (line_start, n), passes, whole).map_err(|e| {
                let spill = format!("writing the reader's index to a temporary file: {e}");
                PluginError::io(path, &std::io::Error::new(e.kind(), spill))
            })?;
            if let Some(speculation) = speculation.as_deref_mut() {
                let node = loaded.records.nodes.get(kept.index);
                if !kept.new {
                    return Err(left_file_order(path, &node, "a uuid written again"));
                }
                let line = (text, complete, kept.decoded);
                let record = (kept.index, &node);
                speculation.record(path, record, line, message_id.as_deref(), &mut loaded)?;
            }
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
    resolve_later_parents(&mut loaded.records);
    // The message ids are done with: freed now, their memory is reused by the events.
    loaded.records.groups = std::mem::take(&mut loaded.messages).members;
    Ok(loaded)
}

/// What Claude Code keeps of a line that does not decode as a record: nothing when it is JSON but
/// no object with a string `uuid` (its loader keys records by uuid; measured, 2.1.197 resumes
/// claude-code-log's `edge_cases.jsonl`, whose lines include `"massive error"`, `42`, `[1]` and
/// an assistant record without a uuid), else a record known by its uuid, parent and thread only
/// ([`Kind::Malformed`]), which a later record with its uuid replaces, and which is an error
/// (decoded again, naming the field) only if the conversation needs it. A line that is not JSON
/// (a torn line) is no such record: `None`, and its error stands.
fn keyed_record(text: &[u8], line: usize) -> Option<Option<ReadRecord>> {
    let value: Value = serde_json::from_slice(text).ok()?;
    let Some(uuid) = value.get("uuid").and_then(Value::as_str) else {
        return Some(None);
    };
    let sidechain = value.get("isSidechain").and_then(Value::as_bool);
    Some(Some(ReadRecord {
        node: Node {
            uuid: RecordId::new(uuid),
            line,
            sidechain: sidechain.unwrap_or(false),
            kind: Kind::Malformed,
            timestamp: None,
            extras: None,
        },
        parent: value
            .get("parentUuid")
            .and_then(Value::as_str)
            .map(RecordId::new),
        message_id: None,
        // Decoded again from the whole line.
        spans: Spans {
            uuid: Spans::UNKNOWN,
            timestamp: Spans::UNKNOWN,
            message: Spans::UNKNOWN,
            handoff: Spans::UNKNOWN,
        },
    }))
}

/// About how many records a session file of this size holds, so the index is sized once instead
/// of growing by doubling (each growth rehashes every uuid). Claude Code's records average a few
/// KiB; one per 512 bytes overestimates, and pages of the reserve that no record reaches are
/// never touched.
fn expected_records(file: &File) -> usize {
    expected_records_in(file.metadata().map_or(0, |m| m.len()))
}

/// The records a file of `len` bytes is expected to hold, to size the index.
pub(super) fn expected_records_in(len: u64) -> usize {
    const BYTES_PER_RECORD: u64 = 512;
    const MOST: usize = 1 << 22;
    usize::try_from(len / BYTES_PER_RECORD).map_or(MOST, |n| n.min(MOST))
}

/// A line's record: the line without its newline (and, on the first line, without a byte order
/// mark, as Claude Code reads it: measured, it resumes such a file whole), and whether the newline
/// was there.
pub(super) fn record_text(line: &[u8], first: bool) -> (&[u8], bool) {
    let complete = line.last() == Some(&b'\n');
    let text = if complete {
        &line[..line.len() - 1]
    } else {
        line
    };
    let text = if first {
        text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text)
    } else {
        text
    };
    (text, complete)
}

/// Adds a record. One whose uuid was seen replaces that record in place (Claude Code keeps its
/// records by uuid, the later one winning; it re-writes streamed assistant records, and
/// concurrent writers repeat lines): the chain is linked by uuid, so its place in the file does
/// not matter.
///
/// With [`Passes::One`] the record's body is kept beside it when it was `decoded_whole`; when not,
/// its slot stays empty and the events' pass reads its line again (see [`load_from`]). With
/// [`Passes::Two`] a record decoded whole (a speculation's) is handed back in [`Kept`].
fn keep(
    loaded: &mut Loaded,
    record: ReadRecord,
    line: (u64, usize),
    passes: Passes,
    decoded_whole: bool,
) -> std::io::Result<Kept> {
    let records = &mut loaded.records;
    let (node, parent) = IndexNode::of(&record.node, record.parent, record.spans, line);
    let logical = node.kind == (IndexKind::CompactBoundary { logical: true });
    let up = link_to(records, parent, logical).into();
    let (whole, decoded) = match passes {
        Passes::One => (
            Some(decoded_whole.then(|| RecordBody::of(record.node))),
            None,
        ),
        Passes::Two => (None, decoded_whole.then_some(record.node)),
    };
    let next = records.nodes.len() as u32;
    let at = records.index.get_or_insert(&node.uuid, next);
    if at != next {
        records.up[at as usize] = up;
        records.nodes.set(at as usize, node)?;
        if let Some(whole) = whole {
            loaded.whole[at as usize] = whole;
        }
        return Ok(Kept {
            index: at as usize,
            new: false,
            decoded,
        });
    }
    if let Some(id) = record.message_id {
        loaded.messages.add(&id, next);
    }
    records.up.push(up);
    records.nodes.push(node)?;
    if let Some(whole) = whole {
        loaded.whole.push(whole);
    }
    Ok(Kept {
        index: next as usize,
        new: true,
        decoded,
    })
}

/// Where [`keep`] kept a record: its node, and whether that is new (not a record replaced); with
/// [`Passes::Two`], the record as it was decoded whole, if it was.
struct Kept {
    index: usize,
    new: bool,
    decoded: Option<Node>,
}

/// A line as the index takes it: only what linking needs (see [`IndexRecord`]) when that
/// decodes; otherwise on the general path, which judges the whole record and names any fault.
fn index_record(
    path: &Path,
    line_no: usize,
    text: &[u8],
    complete: bool,
    loaded: &mut Loaded,
) -> Result<Option<ReadRecord>, PluginError> {
    // UTF-8 is checked once for the line, not once per member name and string.
    let index = handoff_sdk::lines::text_of(text).and_then(|text| IndexRecord::parse(text).ok());
    match index {
        Some(record) => index_node_of(path, line_no, record, loaded),
        None => general_record(path, line_no, text, complete, loaded),
    }
}

/// A line decoded whole, content and all: on the typed path when it can be, else on the general
/// path.
pub(super) fn full_record(
    path: &Path,
    line_no: usize,
    text: &[u8],
    complete: bool,
    loaded: &mut Loaded,
) -> Result<Option<ReadRecord>, PluginError> {
    match typed_record(text) {
        Some(record) => node_of(path, line_no, record, loaded),
        None => general_record(path, line_no, text, complete, loaded),
    }
}

/// A line the typed paths do not decode (or not a record at all): the general path decides, and
/// names the field at fault.
fn general_record(
    path: &Path,
    line_no: usize,
    text: &[u8],
    complete: bool,
    loaded: &mut Loaded,
) -> Result<Option<ReadRecord>, PluginError> {
    let record: Record<'_, Value> = serde_json::from_slice(text).map_err(|e| {
        let torn = if complete {
            ""
        } else {
            " (the last line is torn: no final newline)"
        };
        PluginError::malformed_line(
            path,
            line_no,
            diagnose(text).as_deref(),
            format!("{e}{torn}"),
        )
    })?;
    node_of(path, line_no, record, loaded)
}

/// The line decoded on the typed path, if it can be (see [`super::decode`]).
pub(super) fn typed_record(text: &[u8]) -> Option<Record<'_, FastContent>> {
    // UTF-8 is checked once for the line, not once per string.
    let text = handoff_sdk::lines::text_of(text)?;
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
