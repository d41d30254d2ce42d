//! A session file → its header and its entries, in two passes.
//!
//! The first pass (`scan`) reads every line but keeps only its place in the tree, in a few bytes
//! an entry ([`Scan`]: its kind, its parent's number, its id's digest in a map that spills to a
//! temporary file). pi's leaf is the *last* line, so which entries are the conversation is known
//! only at the end. The second pass ([`Lines`]) reads the file again and parses exactly the
//! lines on the path, one at a time, as the events are made, so a read never holds the whole
//! file, nor anything of an entry's content, nor the events at once.
//!
//! pi itself skips a line it cannot parse; this reader refuses it instead, naming the file, the
//! line and the field, because a skipped line is silently lost history. Blank lines are skipped
//! (pi skips them too and they hold nothing), and so is a BOM before the first line (pi trims
//! the text it reads, and JavaScript's `trim` takes a BOM). The last line must end with a
//! newline: pi always writes one, so a missing one is a torn write.

use std::borrow::Cow;
use std::fs::File;
use std::io::{BufRead, BufReader, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use foldhash::HashMap;
use handoff_sdk::lines::LineReader;
use handoff_sdk::marker::OwnershipMarker;
use handoff_sdk::serde_json;
use handoff_sdk::spill::{spill_ids, SpillMap};
use handoff_sdk::{IdDigest, IdSeeds, PluginError};

use super::context::{base_role, truthy, Role};
use super::records::{split_field, Entry, Envelope, Str};

/// The newest format version pi 0.73.1 writes (and the only one this writer writes).
pub const CURRENT_VERSION: u64 = 3;

/// The header line, interpreted.
#[derive(Debug)]
pub struct Header {
    /// The session id.
    pub id: String,
    /// The format version (1 when the header has none).
    pub version: u64,
    /// The working directory, if the header names one.
    pub cwd: Option<String>,
    /// The ownership marker, if any.
    pub marker: Option<OwnershipMarker>,
}

/// What an entry is, in one byte: its base role (`context::base_role`, two bits), whether it
/// is a further `session` line (kept by pi, and ignored) and whether it names a model (a
/// `model_change` or an assistant message with a provider and a model: so the model a session
/// resumes with is found by reading one line again, not every line of the path).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Kind(u8);

impl Kind {
    const HEADER: u8 = 1 << 2;
    const NAMES_MODEL: u8 = 1 << 3;

    fn new(role: Role, is_header: bool, names_model: bool) -> Self {
        let role = match role {
            Role::Message => 0,
            Role::AsUser => 1,
            Role::Compaction { .. } => 2,
            Role::Carried => 3,
        };
        let header = if is_header { Kind::HEADER } else { 0 };
        let model = if names_model { Kind::NAMES_MODEL } else { 0 };
        Kind(role | header | model)
    }

    /// The entry's role before compactions are looked at (a compaction's `through` is 0).
    pub fn role(self) -> Role {
        match self.0 & 3 {
            0 => Role::Message,
            1 => Role::AsUser,
            2 => Role::Compaction { through: 0 },
            _ => Role::Carried,
        }
    }

    /// A further `session` line.
    pub fn is_header(self) -> bool {
        self.0 & Kind::HEADER != 0
    }

    /// An entry that names a provider and a model ([`Facts::model`]).
    pub fn names_model(self) -> bool {
        self.0 & Kind::NAMES_MODEL != 0
    }
}

/// The entry a compaction keeps from, as the first pass finds it.
#[derive(Clone, Copy, Debug)]
pub enum FirstKept {
    /// v2+: the digest of its `firstKeptEntryId`, looked up in the id index once it is whole.
    Id(IdDigest),
    /// v1: the entry its `firstKeptEntryIndex` names (pi's migration).
    Entry(u32),
}

/// No parent: a root, or a `parentId` naming no entry (which ends pi's path).
const NO_PARENT: u32 = u32::MAX;

/// Entries between two places the second pass can seek to.
const CHECKPOINT_EVERY: u32 = 4096;

/// A whole session file, scanned: the tree of its entries in a compact form, a few bytes an
/// entry, and nothing of their content (the second pass, [`Lines`], reads the path's lines
/// again). Entries are numbered in file order from 0 (the header is not one; a further
/// `session` line is).
///
/// Kept per entry: its [`Kind`] (1 byte) and its parent's number (4 bytes; a v1 file also
/// keeps its line, 4 bytes, since a v1 id is its line). The ids themselves are only in
/// `ids`, a [`SpillMap`] of their digests (past [`spill_ids`] entries in a temporary file, ~1.3–
/// 2.5 bytes an entry on the heap). Rare things are in small tables: a compaction's first kept
/// entry, an entry whose id a later one took again, a parent named before it appears.
pub struct Scan {
    /// The file.
    pub path: PathBuf,
    /// The header.
    pub header: Header,
    /// Each entry's kind.
    kinds: Blocks<Kind>,
    /// Each entry's parent ([`NO_PARENT`]), as the id index said when the entry was read; see
    /// `superseded` for a parent whose id a later entry took.
    parents: Blocks<u32>,
    /// v1 only: each entry's line (its id is `L<line>`).
    v1_lines: Blocks<u32>,
    /// Each id's digest → its last entry (pi's by-id map keeps the last entry of an id).
    ids: SpillMap<u64>,
    seeds: IdSeeds,
    /// Entries a later entry of the same id replaced in `ids`: the id's digest (pi never
    /// writes an id twice; a file edited by hand may).
    superseded: HashMap<u32, IdDigest>,
    /// Each compaction's first kept entry (v1: each entry's that names one).
    first_kept: HashMap<u32, FirstKept>,
    /// The last entry that is not a further header (pi's leaf), and its id.
    leaf: Option<(u32, String)>,
    /// Every `CHECKPOINT_EVERY`th entry's line: where it starts, its number.
    checkpoints: Vec<(u64, usize)>,
    /// Every entry id, when asked for (an append checks new ids against them).
    pub all_ids: Vec<String>,
}

impl Scan {
    /// Entries in the file.
    pub fn len(&self) -> usize {
        self.kinds.len()
    }

    /// The kind of entry `entry`.
    pub fn kind(&self, entry: u32) -> Kind {
        self.kinds.get(entry)
    }

    /// pi's leaf (the last entry that is not a header) and its id.
    pub fn leaf(&self) -> Option<(u32, &str)> {
        self.leaf.as_ref().map(|(i, id)| (*i, id.as_str()))
    }

    /// The entry pi takes for `entry`'s `parentId`: the last entry with that id, if any.
    pub fn parent(&self, entry: u32) -> Option<u32> {
        let parent = self.parents.get(entry);
        if parent == NO_PARENT {
            return None;
        }
        match self.superseded.get(&parent) {
            Some(id) => self.ids.get(id).map(entry_of),
            None => Some(parent),
        }
    }

    /// The entry compaction `entry` keeps from, if it names one that exists.
    pub fn first_kept(&self, entry: u32) -> Option<u32> {
        match self.first_kept.get(&entry)? {
            FirstKept::Id(id) => self.ids.get(id).map(entry_of),
            FirstKept::Entry(e) => Some(*e),
        }
    }

    /// A v1 entry's line (its id is `L<line>`).
    pub fn v1_line(&self, entry: u32) -> usize {
        self.v1_lines.get(entry) as usize
    }

    /// The line and id of `entry`, read again (for an error that names it).
    pub fn locate(&self, entry: u32) -> Result<(usize, String), PluginError> {
        let mut lines = Lines::open(self)?;
        let (line, text) = lines.line(self, entry)?;
        if self.header.version < 2 {
            return Ok((line, format!("L{line}")));
        }
        let envelope: Envelope<'_> =
            serde_json::from_str(text).map_err(|e| json_error(&self.path, line, &e))?;
        let id = Facts::of_envelope(&envelope)
            .id
            .unwrap_or_default()
            .to_owned();
        Ok((line, id))
    }
}

/// A vector in blocks of `BLOCK_ENTRIES`: it grows a block at a time, never copying what it
/// holds nor leaving the freed halves of a doubling behind (a `Vec` of a million entries would
/// have touched twice its size, which an allocator keeps resident for a while).
struct Blocks<T> {
    blocks: Vec<Vec<T>>,
}

const BLOCK_ENTRIES: usize = 1 << 16;

impl<T> Default for Blocks<T> {
    fn default() -> Self {
        Blocks { blocks: Vec::new() }
    }
}

impl<T: Copy> Blocks<T> {
    fn len(&self) -> usize {
        self.blocks.last().map_or(0, |last| {
            (self.blocks.len() - 1) * BLOCK_ENTRIES + last.len()
        })
    }

    fn push(&mut self, value: T) {
        match self.blocks.last_mut() {
            Some(last) if last.len() < BLOCK_ENTRIES => last.push(value),
            _ => {
                let mut block = Vec::with_capacity(BLOCK_ENTRIES);
                block.push(value);
                self.blocks.push(block);
            }
        }
    }

    fn get(&self, at: u32) -> T {
        let at = at as usize;
        self.blocks[at / BLOCK_ENTRIES][at % BLOCK_ENTRIES]
    }

    fn set(&mut self, at: u32, value: T) {
        let at = at as usize;
        self.blocks[at / BLOCK_ENTRIES][at % BLOCK_ENTRIES] = value;
    }
}

/// The entry an `ids` value names.
fn entry_of(value: u64) -> u32 {
    u32::try_from(value).expect("an entry number fits 32 bits")
}
/// What the tree and `context::base_role` need of one line, from either parse of it.
#[derive(Default)]
pub struct Facts<'a> {
    /// The entry type.
    pub kind: Option<&'a str>,
    /// The entry id.
    pub id: Option<&'a str>,
    /// The parent id.
    pub parent: Option<&'a str>,
    /// The message's role.
    pub role: Option<&'a str>,
    /// The message's `stopReason`.
    pub stop_reason: Option<&'a str>,
    /// The message's `excludeFromContext` is truthy.
    pub exclude: bool,
    /// The entry's `summary` is a non-empty string.
    pub summary: bool,
    /// A compaction's `firstKeptEntryId`.
    pub first_kept_id: Option<&'a str>,
    /// A v1 compaction's `firstKeptEntryIndex`.
    pub first_kept_index: Option<u64>,
    /// The provider and model a `model_change` or an assistant message names.
    pub model: Option<(&'a str, &'a str)>,
}

impl<'a> Facts<'a> {
    /// From the first pass's envelope.
    pub fn of_envelope(e: &'a Envelope<'a>) -> Self {
        let text = |s: &'a Option<Str<'a>>| s.as_ref().map(Str::as_str);
        let message = e.message.as_ref();
        let kind = text(&e.kind);
        let role = message.and_then(|m| text(&m.role));
        Facts {
            kind,
            id: text(&e.id),
            parent: e
                .parent_id
                .as_ref()
                .and_then(|p| p.as_ref())
                .map(Str::as_str),
            role,
            stop_reason: message.and_then(|m| text(&m.stop_reason)),
            exclude: message
                .and_then(|m| m.exclude_from_context.as_ref())
                .is_some_and(truthy),
            summary: text(&e.summary).is_some_and(|s| !s.is_empty()),
            first_kept_id: text(&e.first_kept_entry_id),
            first_kept_index: e.first_kept_entry_index.as_ref().and_then(|n| n.as_u64()),
            model: match (kind, role) {
                (Some("model_change"), _) => text(&e.provider).zip(text(&e.model_id)),
                (Some("message"), Some("assistant")) => {
                    message.and_then(|m| text(&m.provider).zip(text(&m.model)))
                }
                _ => None,
            },
        }
    }
}

/// A JSON error of a line, with the field path the records put in it.
fn json_error(path: &Path, line: usize, error: &serde_json::Error) -> PluginError {
    let (field, message) = split_field(&error.to_string());
    PluginError::malformed_line(path, line, field.as_deref(), message)
}

/// A UTF-8 byte order mark.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Reads the lines of `path` one at a time, handing each non-blank one (its 1-based number, its
/// offset, its text) to `each` until it returns `false`.
fn each_line(
    path: &Path,
    mut each: impl FnMut(usize, u64, &str) -> Result<bool, PluginError>,
) -> Result<(), PluginError> {
    let file = File::open(path).map_err(|e| PluginError::io(path, &e))?;
    // Each line parsed where it was read, not copied out first.
    let mut lines = LineReader::new(file);
    let mut number = 0;
    let mut offset = 0u64;
    while let Some(mut line) = lines.next_line().map_err(|e| PluginError::io(path, &e))? {
        number += 1;
        let mut start = offset;
        offset += line.len() as u64;
        // pi trims the file's text before splitting it, and JavaScript's trim takes a BOM.
        if number == 1 && line.starts_with(BOM) {
            line = &line[BOM.len()..];
            start += BOM.len() as u64;
        }
        let Some(body) = line.strip_suffix(b"\n") else {
            return Err(PluginError::malformed_line(
                path,
                number,
                None,
                "the last line does not end with a newline: a torn write (pi always ends a line)",
            ));
        };
        let text = std::str::from_utf8(body).map_err(|e| {
            PluginError::malformed_line(path, number, None, format!("the line is not UTF-8: {e}"))
        })?;
        if text.trim().is_empty() {
            continue;
        }
        if !each(number, start, text)? {
            return Ok(());
        }
    }
    Ok(())
}

/// Interprets line `line` as the header.
fn header_of(path: &Path, line: usize, text: &str) -> Result<Header, PluginError> {
    let entry: Entry = serde_json::from_str(text).map_err(|e| json_error(path, line, &e))?;
    if entry.kind.as_deref() != Some("session") {
        return Err(PluginError::malformed_line(
            path,
            line,
            Some("type"),
            format!(
                "the first line must be the session header (type \"session\"), not {:?}",
                entry.kind.as_deref().unwrap_or("(none)")
            ),
        ));
    }
    let id = entry.id.filter(|id| !id.is_empty()).ok_or_else(|| {
        PluginError::malformed_line(path, line, Some("id"), "the session header has no id")
    })?;
    let version = match &entry.version {
        None => 1,
        Some(v) => v
            .as_u64()
            .filter(|v| (1..=CURRENT_VERSION).contains(v))
            .ok_or_else(|| {
                PluginError::malformed_line(
                    path,
                    line,
                    Some("version"),
                    format!("session format version {v} is not one pi 0.73.1 reads (1 to 3)"),
                )
            })?,
    };
    let marker = entry
        .marker
        .and_then(|m| serde_json::from_value::<OwnershipMarker>(m).ok());
    Ok(Header {
        id,
        version,
        cwd: entry.cwd,
        marker,
    })
}

/// The header of a session file (its first non-blank line) without reading the rest.
pub fn read_header(path: &Path) -> Result<Header, PluginError> {
    let mut header = None;
    each_line(path, |line, _, text| {
        header = Some(header_of(path, line, text)?);
        Ok(false)
    })?;
    header.ok_or_else(|| {
        PluginError::malformed_line(path, 1, None, "the file is empty: no session header")
    })
}

/// The first pass: the header, and every entry's place in the tree (see [`Scan`]). `all_ids`:
/// keep every entry id as well (an append).
pub fn scan(path: &Path, all_ids: bool) -> Result<Scan, PluginError> {
    scan_with(path, all_ids, spill_ids())
}

/// [`scan`] with the id index written to a file past `threshold` ids (the tests' 0).
pub fn scan_with(path: &Path, all_ids: bool, threshold: usize) -> Result<Scan, PluginError> {
    let mut header: Option<Header> = None;
    let mut scan = Scan {
        path: path.to_owned(),
        header: Header {
            id: String::new(),
            version: 1,
            cwd: None,
            marker: None,
        },
        kinds: Blocks::default(),
        parents: Blocks::default(),
        v1_lines: Blocks::default(),
        ids: SpillMap::with_threshold(threshold),
        seeds: IdSeeds::default(),
        superseded: HashMap::default(),
        first_kept: HashMap::default(),
        leaf: None,
        checkpoints: Vec::new(),
        all_ids: Vec::new(),
    };
    // Parents named before their entry: resolved once every id is known.
    let mut forward: Vec<(u32, IdDigest)> = Vec::new();
    each_line(path, |line, offset, text| {
        let Some(h) = &header else {
            header = Some(header_of(path, line, text)?);
            return Ok(true);
        };
        let envelope: Envelope<'_> =
            serde_json::from_str(text).map_err(|e| json_error(path, line, &e))?;
        let facts = Facts::of_envelope(&envelope);
        scan.add(path, line, offset, &facts, h.version, all_ids, &mut forward)?;
        Ok(true)
    })?;
    scan.header = header.ok_or_else(|| {
        PluginError::malformed_line(path, 1, None, "the file is empty: no session header")
    })?;
    for (entry, parent) in forward {
        if let Some(found) = scan.ids.get(&parent) {
            scan.parents.set(entry, entry_of(found));
        }
    }
    Ok(scan)
}

impl Scan {
    /// Adds the entry of line `line`. v1 entries get pi's migration: ids from line numbers, each
    /// the child of the previous entry, and a compaction's `firstKeptEntryIndex` (an index among
    /// the parsed lines, the header being 0) naming that entry (none when it names the header or
    /// nothing).
    #[allow(clippy::too_many_arguments)]
    fn add(
        &mut self,
        path: &Path,
        line: usize,
        offset: u64,
        facts: &Facts<'_>,
        version: u64,
        all_ids: bool,
        forward: &mut Vec<(u32, IdDigest)>,
    ) -> Result<(), PluginError> {
        let Some(kind) = facts.kind else {
            return Err(PluginError::malformed_line(
                path,
                line,
                Some("type"),
                "the entry has no type",
            ));
        };
        let entry = u32::try_from(self.kinds.len())
            .ok()
            .filter(|&e| e != NO_PARENT)
            .ok_or_else(|| {
                PluginError::malformed_line(path, line, None, "more than 2^32 - 1 entries")
            })?;
        if entry % CHECKPOINT_EVERY == 0 {
            self.checkpoints.push((offset, line));
        }
        let is_header = kind == "session";
        let role = base_role(kind, facts, version);
        let v1_id = || format!("L{line}");
        let id: Cow<'_, str> = if version < 2 {
            let line32 = u32::try_from(line).map_err(|_| {
                PluginError::malformed_line(path, line, None, "more than 2^32 lines")
            })?;
            self.v1_lines.push(line32);
            let parent = self.leaf.as_ref().map_or(NO_PARENT, |(p, _)| *p);
            self.parents.push(parent);
            let kept = facts
                .first_kept_index
                .and_then(|k| u32::try_from(k).ok())
                .filter(|&k| k >= 1 && k - 1 < entry)
                .map(|k| k - 1)
                .filter(|&k| !self.kinds.get(k).is_header());
            // Any entry (tidy gives every v1 entry with an index the id it names).
            if let Some(kept) = kept {
                self.first_kept.insert(entry, FirstKept::Entry(kept));
            }
            Cow::Owned(v1_id())
        } else {
            let id = match facts.id.filter(|i| !i.is_empty()) {
                Some(id) => Cow::Borrowed(id),
                None if is_header => Cow::Owned(v1_id()),
                None => {
                    return Err(PluginError::malformed_line(
                        path,
                        line,
                        Some("id"),
                        "the entry has no id",
                    ))
                }
            };
            let parent = match facts.parent.filter(|p| !p.is_empty()) {
                None => NO_PARENT,
                Some(parent) => {
                    let digest = self.seeds.digest(parent);
                    match self.ids.get(&digest) {
                        Some(found) => entry_of(found),
                        None => {
                            forward.push((entry, digest));
                            NO_PARENT
                        }
                    }
                }
            };
            self.parents.push(parent);
            if let (Some(kept), Role::Compaction { .. }) = (facts.first_kept_id, role) {
                let kept = FirstKept::Id(self.seeds.digest(kept));
                self.first_kept.insert(entry, kept);
            }
            if !is_header {
                let digest = self.seeds.digest(&id);
                if let Some(earlier) = self.ids.get(&digest) {
                    self.superseded.insert(entry_of(earlier), digest);
                }
                self.ids.insert(digest, u64::from(entry));
            }
            id
        };
        if all_ids {
            self.all_ids.push(id.to_string());
        }
        if !is_header {
            match &mut self.leaf {
                Some((at, leaf)) => {
                    *at = entry;
                    leaf.clear();
                    leaf.push_str(&id);
                }
                None => self.leaf = Some((entry, id.into_owned())),
            }
        }
        self.kinds
            .push(Kind::new(role, is_header, facts.model.is_some()));
        Ok(())
    }
}

/// An entry as the converter takes it: without `id` and `parentId` (the caller has them), and a
/// v1 compaction's index turned into the id it names (pi's migration).
fn tidy(entry: &mut Entry, scan: &Scan, number: u32) {
    entry.id = None;
    entry.parent_id = None;
    if scan.header.version < 2 && entry.first_kept_entry_index.is_some() {
        entry.first_kept_entry_index = None;
        entry.first_kept_entry_id = scan
            .first_kept(number)
            .map(|kept| format!("L{}", scan.v1_line(kept)));
    }
}

/// One entry read again by the second pass.
pub struct Read {
    /// Its 1-based line.
    pub line: usize,
    /// Its id (a v1 entry's stand-in `L<line>`).
    pub id: String,
    /// Its parent's id, as the line names it (v1: the previous entry's).
    pub parent: Option<String>,
    /// The entry, without `id` and `parentId`.
    pub entry: Entry,
}

/// The second pass: the lines of chosen entries, read again. Forward through the file when the
/// entries come in file order, as pi's paths do; back to the nearest checkpoint (every
/// `CHECKPOINT_EVERY` entries) when one comes before the last.
pub struct Lines {
    path: PathBuf,
    reader: BufReader<File>,
    buffer: Vec<u8>,
    /// The entry the next entry line read is, and the number of the last line read.
    next: u32,
    line: usize,
    /// The entry whose line `buffer` holds (read twice: for its model, then whole).
    held: Option<u32>,
}

impl Lines {
    /// The file of `scan`, opened again.
    pub fn open(scan: &Scan) -> Result<Self, PluginError> {
        let path = &scan.path;
        let file = File::open(path).map_err(|e| PluginError::io(path, &e))?;
        let mut lines = Lines {
            path: path.clone(),
            reader: BufReader::with_capacity(1 << 16, file),
            buffer: Vec::new(),
            next: 0,
            line: 0,
            held: None,
        };
        lines.seek_to(scan, 0)?;
        Ok(lines)
    }

    /// Moves to the checkpoint at or before `entry`.
    fn seek_to(&mut self, scan: &Scan, entry: u32) -> Result<(), PluginError> {
        let at = entry / CHECKPOINT_EVERY;
        let Some(&(offset, line)) = scan.checkpoints.get(at as usize) else {
            return Ok(()); // no entries
        };
        self.reader
            .seek(SeekFrom::Start(offset))
            .map_err(|e| PluginError::io(&self.path, &e))?;
        self.next = at * CHECKPOINT_EVERY;
        self.line = line - 1;
        Ok(())
    }

    /// The line number and text of `entry`.
    fn line(&mut self, scan: &Scan, entry: u32) -> Result<(usize, &str), PluginError> {
        if self.held != Some(entry) {
            self.read_line(scan, entry)?;
        }
        let line = self.line;
        let text = std::str::from_utf8(&self.buffer).map_err(|e| {
            PluginError::malformed_line(
                &self.path,
                line,
                None,
                format!("the line is not UTF-8: {e}"),
            )
        })?;
        Ok((line, text))
    }

    /// Reads the line of `entry` into `buffer`.
    fn read_line(&mut self, scan: &Scan, entry: u32) -> Result<(), PluginError> {
        self.held = None;
        if entry < self.next || entry - self.next > CHECKPOINT_EVERY {
            self.seek_to(scan, entry)?;
        }
        loop {
            self.buffer.clear();
            let read = self
                .reader
                .read_until(b'\n', &mut self.buffer)
                .map_err(|e| PluginError::io(&self.path, &e))?;
            if read == 0 || self.buffer.last() != Some(&b'\n') {
                return Err(PluginError::malformed_line(
                    &self.path,
                    self.line + 1,
                    None,
                    "the file changed while it was read",
                ));
            }
            self.line += 1;
            self.buffer.pop();
            if is_blank(&self.buffer) {
                continue;
            }
            let number = self.next;
            self.next += 1;
            if number == entry {
                self.held = Some(entry);
                return Ok(());
            }
        }
    }

    /// Entry `number` of `scan`, read and parsed.
    pub fn entry(&mut self, scan: &Scan, number: u32) -> Result<Read, PluginError> {
        let (line, text) = self.line(scan, number)?;
        let path = &scan.path;
        let mut entry: Entry =
            serde_json::from_str(text).map_err(|e| json_error(path, line, &e))?;
        let (id, parent) = if scan.header.version < 2 {
            let parent = scan.parent(number).map(|p| format!("L{}", scan.v1_line(p)));
            (format!("L{line}"), parent)
        } else {
            let parent = entry.parent_id.take().flatten().filter(|p| !p.is_empty());
            (entry.id.take().unwrap_or_default(), parent)
        };
        tidy(&mut entry, scan, number);
        Ok(Read {
            line,
            id,
            parent,
            entry,
        })
    }

    /// The provider and model entry `number` names ([`Facts::model`]), its line read again.
    pub fn model(
        &mut self,
        scan: &Scan,
        number: u32,
    ) -> Result<Option<(String, String)>, PluginError> {
        let (line, text) = self.line(scan, number)?;
        let envelope: Envelope<'_> =
            serde_json::from_str(text).map_err(|e| json_error(&scan.path, line, &e))?;
        let facts = Facts::of_envelope(&envelope);
        Ok(facts.model.map(|(p, m)| (p.to_owned(), m.to_owned())))
    }
}

/// Whether a line is blank as the first pass judges it (`trim` of its UTF-8 text); a line that
/// is not UTF-8 is not blank (the first pass refused it). An entry line starts with `{`, so
/// nearly every line is settled by its first byte.
fn is_blank(line: &[u8]) -> bool {
    line.first() != Some(&b'{') && std::str::from_utf8(line).is_ok_and(|t| t.trim().is_empty())
}

/// Every entry of a file in order, parsed whole one at a time (for pi's session list).
pub fn each_entry(
    path: &Path,
    mut each: impl FnMut(&Header, Entry),
) -> Result<Header, PluginError> {
    let mut header: Option<Header> = None;
    each_line(path, |line, _, text| {
        let Some(h) = &header else {
            header = Some(header_of(path, line, text)?);
            return Ok(true);
        };
        let entry: Entry = serde_json::from_str(text).map_err(|e| json_error(path, line, &e))?;
        each(h, entry);
        Ok(true)
    })?;
    header.ok_or_else(|| {
        PluginError::malformed_line(path, 1, None, "the file is empty: no session header")
    })
}
