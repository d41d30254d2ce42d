//! A chat file's records and the chain Qwen Code 0.24.4 resumes of them
//! (`prepareTranscriptRecords`: which records count, the chain from the last conversation record
//! back through `parentUuid`, records of one uuid joined), found in one pass over the file that
//! keeps where each record is, never the record ([`Index`]); the chain's records are then read
//! again one at a time ([`Lines`]).

use std::fs::File;
use std::io::{BufRead as _, BufReader};
use std::path::Path;

use handoff_sdk::marker::{OwnershipMarker, MARKER_KEY};
use handoff_sdk::serde_json::{self, Map, Value};
use handoff_sdk::spill::SpillMap;
use handoff_sdk::{IdDigest, IdSeeds, PluginError};

/// The record types Qwen Code knows (`RECORD_TYPES`); a record of another type is skipped.
const RECORD_TYPES: &[&str] = &["user", "assistant", "tool_result", "system"];
/// System subtypes that are no part of the conversation chain (`NON_CONVERSATION_RECORD_SUBTYPES`
/// and the artifact records): never a leaf, never a link.
const OFF_CHAIN_SUBTYPES: &[&str] = &[
    "session_sources_snapshot",
    "managed_session_header_v1",
    "managed_session_event_v1",
    "managed_session_commit_v1",
    "session_artifact_event",
    "session_artifact_snapshot",
];

/// One record of a chat file that Qwen Code accepts (`validateTranscriptRecord`): an object with
/// a non-empty `uuid`, a `parentUuid` (string or null), a non-empty `sessionId` and a known `type`.
pub(crate) struct Record {
    /// Its line in the file (1-based).
    pub line: usize,
    /// The record.
    pub value: Map<String, Value>,
}

impl Record {
    pub fn str(&self, key: &str) -> Option<&str> {
        self.value.get(key).and_then(Value::as_str)
    }

    pub fn uuid(&self) -> &str {
        self.str("uuid").unwrap_or_default()
    }

    fn parent(&self) -> Option<&str> {
        self.str("parentUuid").filter(|p| !p.is_empty())
    }

    pub fn subtype(&self) -> Option<&str> {
        self.str("subtype")
    }

    fn on_chain(&self) -> bool {
        !(self.str("type") == Some("system")
            && self
                .subtype()
                .is_some_and(|s| OFF_CHAIN_SUBTYPES.contains(&s)))
    }

    /// A `chat_compression` whose `compressedHistory` is a list: the history starts over there.
    fn starts_over(&self) -> bool {
        self.str("type") == Some("system")
            && self.subtype() == Some("chat_compression")
            && self
                .value
                .get("systemPayload")
                .and_then(|p| p.get("compressedHistory"))
                .is_some_and(Value::is_array)
    }

    /// The ownership marker on this record.
    fn marker(&self) -> Option<OwnershipMarker> {
        OwnershipMarker::find(&Value::Object(self.value.clone()))
    }
}

/// The line `text` (line `line_no` of the file) as a record Qwen Code accepts; `None` for one it
/// skips (not an object, no identity, an unknown type). A line that is not JSON is an error
/// naming it.
fn accepted(path: &Path, line_no: usize, text: &str) -> Result<Option<Record>, PluginError> {
    // A byte order mark before the first record: the CLI's reader reads past it.
    let text = match line_no {
        1 => text.strip_prefix('\u{feff}').unwrap_or(text),
        _ => text,
    };
    if text.trim().is_empty() {
        return Ok(None);
    }
    let value: Value = serde_json::from_str(text).map_err(|e| {
        PluginError::malformed_line(path, line_no, None, format!("not a JSON record: {e}"))
    })?;
    let Value::Object(value) = value else {
        return Ok(None);
    };
    let record = Record {
        line: line_no,
        value,
    };
    let identity = record.str("uuid").is_some_and(|u| !u.is_empty())
        && matches!(
            record.value.get("parentUuid"),
            Some(Value::String(_) | Value::Null)
        )
        && record.str("sessionId").is_some_and(|s| !s.is_empty());
    let known = record
        .str("type")
        .is_some_and(|t| RECORD_TYPES.contains(&t));
    Ok((identity && known).then_some(record))
}

/// The first accepted record of a chat file, kept whole: its session id, working directory and
/// marker are the session's.
pub(crate) struct Head {
    first: Option<Record>,
}

impl Head {
    /// The session id every record names.
    pub fn session_id(&self) -> Option<&str> {
        self.first.as_ref().and_then(|r| r.str("sessionId"))
    }

    /// The working directory of the first record (what the CLI checks a resume against).
    pub fn cwd(&self) -> Option<&str> {
        self.first.as_ref().and_then(|r| r.str("cwd"))
    }

    /// The first record's line.
    pub fn line(&self) -> Option<usize> {
        self.first.as_ref().map(|r| r.line)
    }

    /// The ownership marker on the first record.
    pub fn marker(&self) -> Option<OwnershipMarker> {
        self.first.as_ref().and_then(Record::marker)
    }
}

/// Reads every accepted record of a chat file once, in file order, handing each to `each` with
/// its byte offset. Records of two sessions are an error, as the CLI refuses the file.
pub(crate) fn scan(path: &Path, mut each: impl FnMut(u64, &Record)) -> Result<Head, PluginError> {
    let file = File::open(path).map_err(|e| PluginError::io(path, &e))?;
    let mut reader = BufReader::new(file);
    let mut head = Head { first: None };
    let mut text = String::new();
    let (mut offset, mut line_no) = (0u64, 0usize);
    loop {
        text.clear();
        let read = reader
            .read_line(&mut text)
            .map_err(|e| PluginError::io(path, &e))?;
        if read == 0 {
            return Ok(head);
        }
        line_no += 1;
        let at = offset;
        offset += read as u64;
        let Some(record) = accepted(path, line_no, trim_newline(&text))? else {
            continue;
        };
        match head.session_id() {
            Some(first) if record.str("sessionId") != Some(first) => {
                return Err(PluginError::malformed_line(
                    path,
                    line_no,
                    Some("sessionId"),
                    format!(
                        "records of two sessions ({first} and {}); Qwen Code refuses the file",
                        record.str("sessionId").unwrap_or_default()
                    ),
                ));
            }
            Some(_) => {}
            None => {
                head.first = Some(Record {
                    line: line_no,
                    value: record.value.clone(),
                })
            }
        }
        each(at, &record);
    }
}

/// A line without its end (`\n` or `\r\n`), as `BufRead::lines` gives it.
fn trim_newline(text: &str) -> &str {
    let text = text.strip_suffix('\n').unwrap_or(text);
    text.strip_suffix('\r').unwrap_or(text)
}

/// Where a conversation record is, and what the chain needs of it: 16 bytes a record.
struct Slot {
    /// Its byte offset, with [`STARTS_OVER`] set when it starts the history over.
    at: u64,
    line: u32,
    /// The first record of its `parentUuid`'s uuid; [`NO_PARENT`] when it has none or no record
    /// has that uuid (either way the chain ends there).
    parent: u32,
}

const _: () = assert!(std::mem::size_of::<Slot>() == 16);

/// The bit of [`Slot::at`] that says the record starts the history over (an offset never
/// reaches it).
const STARTS_OVER: u64 = 1 << 63;
/// [`Slot::parent`] of a record whose chain ends with it.
const NO_PARENT: u32 = u32::MAX;

impl Slot {
    fn offset(&self) -> u64 {
        self.at & !STARTS_OVER
    }

    fn starts_over(&self) -> bool {
        self.at & STARTS_OVER != 0
    }

    fn parent(&self) -> Option<usize> {
        (self.parent != NO_PARENT).then_some(self.parent as usize)
    }
}

/// The conversation records of a chat file, where each is, and the chain the CLI resumes.
///
/// What it keeps: a [`Slot`] a conversation record (16 bytes), each uuid's digest → its first
/// record (in a [`SpillMap`]: ~1.3–2.5 bytes resident past its threshold), the later records of
/// a uuid taken twice (8 bytes each), a record whose parent comes later in the file until the
/// pass ends (20 bytes each), and 4 bytes a link of the chain once it is walked.
pub(crate) struct Index {
    pub head: Head,
    slots: Vec<Slot>,
    /// The records of a uuid seen before: (its first record, this record), in file order.
    more: Vec<(u32, u32)>,
    /// The chain, first link first: each link's first record.
    chain: Vec<u32>,
    /// The uuid of the last conversation record.
    leaf: Option<String>,
}

impl Index {
    /// Reads the chat file `path` once and walks its chain.
    pub fn of(path: &Path) -> Result<Index, PluginError> {
        let seeds = IdSeeds::default();
        let mut slots: Vec<Slot> = Vec::new();
        let mut first_of: SpillMap<u64> = SpillMap::default();
        let mut more = Vec::new();
        // Records whose parent's uuid had no record yet: (the record, the parent's digest).
        let mut parent_later: Vec<(u32, IdDigest)> = Vec::new();
        let mut leaf: Option<String> = None;
        // The first record of the last record's uuid: where the walk starts.
        let mut leaf_first = None;
        let mut too_long = None;
        let head = scan(path, |offset, record| {
            if !record.on_chain() {
                return;
            }
            let n = match u32::try_from(slots.len()) {
                Ok(n) if n != NO_PARENT => n,
                _ => {
                    too_long.get_or_insert(record.line);
                    return;
                }
            };
            let uuid = seeds.digest(record.uuid());
            let first = match first_of.get(&uuid) {
                Some(first) => {
                    more.push((first as u32, n));
                    first as u32
                }
                None => {
                    first_of.insert(uuid, u64::from(n));
                    n
                }
            };
            leaf_first = Some(first);
            // A parent's first record is its link whenever it was seen: known now, or once the
            // pass has seen every record.
            let parent = match record.parent().map(|parent| seeds.digest(parent)) {
                None => NO_PARENT,
                Some(digest) => match first_of.get(&digest) {
                    Some(first) => first as u32,
                    None => {
                        parent_later.push((n, digest));
                        NO_PARENT
                    }
                },
            };
            let starts_over = if record.starts_over() { STARTS_OVER } else { 0 };
            slots.push(Slot {
                at: offset | starts_over,
                line: u32::try_from(record.line).unwrap_or(u32::MAX),
                parent,
            });
            let last = leaf.get_or_insert_with(String::new);
            last.clear();
            last.push_str(record.uuid());
        })?;
        if let Some(line) = too_long {
            return Err(PluginError::malformed_line(
                path,
                line,
                None,
                "more than 2^32 - 1 conversation records",
            ));
        }
        for (n, digest) in parent_later {
            if let Some(first) = first_of.get(&digest) {
                slots[n as usize].parent = first as u32;
            }
        }
        // Later records of a uuid, grouped by their first (file order kept within a group).
        more.sort_by_key(|&(first, _)| first);
        let mut index = Index {
            head,
            slots,
            more,
            chain: Vec::new(),
            leaf,
        };
        index.walk(leaf_first);
        Ok(index)
    }

    /// The chain from `leaf` (the first record of the last record's uuid) back through
    /// `parentUuid` (the first record of a uuid is the link), first link first: it ends at a
    /// record without a parent, a parent that is missing or a uuid seen already (a cycle), as the
    /// CLI's walk does.
    fn walk(&mut self, leaf: Option<u32>) {
        let mut seen = vec![0u64; self.slots.len().div_ceil(64)];
        let mut at = leaf.map(|n| n as usize);
        while let Some(n) = at {
            if seen[n / 64] & (1 << (n % 64)) != 0 {
                break;
            }
            seen[n / 64] |= 1 << (n % 64);
            self.chain.push(n as u32);
            at = self.slots[n].parent();
        }
        self.chain.reverse();
    }

    /// The uuid of the last conversation record: where the CLI's chain starts, and what a
    /// record appended after it names as its parent.
    pub fn leaf(&self) -> Option<&str> {
        self.leaf.as_deref()
    }

    /// The links of the chain, first first, each its records in file order (the first of its
    /// uuid first).
    pub fn links(&self) -> impl Iterator<Item = Link<'_>> + '_ {
        self.chain.iter().map(move |&first| {
            let from = self.more.partition_point(|&(f, _)| f < first);
            let to = self.more.partition_point(|&(f, _)| f <= first);
            Link {
                index: self,
                first,
                more: &self.more[from..to],
            }
        })
    }

    /// The position in the chain of the last link whose first record starts the history over
    /// (a compression with a history): what comes before it is replaced.
    pub fn start_over_at(&self) -> Option<usize> {
        self.chain
            .iter()
            .rposition(|&n| self.slots[n as usize].starts_over())
    }
}

/// One link of the chain: the records of one uuid.
pub(crate) struct Link<'i> {
    index: &'i Index,
    first: u32,
    more: &'i [(u32, u32)],
}

impl Link<'_> {
    /// Reads the link's records from the file, the first of its uuid first.
    pub fn read(&self, lines: &mut Lines) -> Result<Vec<Record>, PluginError> {
        std::iter::once(self.first)
            .chain(self.more.iter().map(|&(_, n)| n))
            .map(|n| lines.record(&self.index.slots[n as usize]))
            .collect()
    }
}

/// The chat file again, for the records of the chain one at a time (they mostly come in file
/// order, so a read usually goes on where the last one ended).
pub(crate) struct Lines<'p> {
    path: &'p Path,
    reader: BufReader<File>,
    at: u64,
    text: String,
}

impl<'p> Lines<'p> {
    pub fn open(path: &'p Path) -> Result<Self, PluginError> {
        let file = File::open(path).map_err(|e| PluginError::io(path, &e))?;
        Ok(Lines {
            path,
            reader: BufReader::new(file),
            at: 0,
            text: String::new(),
        })
    }

    fn record(&mut self, slot: &Slot) -> Result<Record, PluginError> {
        let io = |e: std::io::Error| PluginError::io(self.path, &e);
        let offset = slot.offset();
        if offset != self.at {
            let by = i64::try_from(offset).unwrap_or(i64::MAX)
                - i64::try_from(self.at).unwrap_or(i64::MAX);
            self.reader.seek_relative(by).map_err(io)?;
        }
        self.text.clear();
        let read = self.reader.read_line(&mut self.text).map_err(io)?;
        self.at = offset + read as u64;
        let line = slot.line as usize;
        accepted(self.path, line, trim_newline(&self.text))?.ok_or_else(|| {
            // The file changed under the read: the record indexed is no longer there.
            PluginError::malformed_line(self.path, line, None, "changed while it was read")
        })
    }
}

/// The ownership marker of a record, as written.
pub(crate) fn marker_member(marker: &OwnershipMarker) -> (String, Value) {
    (
        MARKER_KEY.to_owned(),
        serde_json::to_value(marker).unwrap_or(Value::Null),
    )
}
