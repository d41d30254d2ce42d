//! A session file → its header and its entries, in two passes.
//!
//! The first pass (`scan`) reads every line but keeps only its place in the tree: id, parent,
//! whether pi sends it, and where the line is. pi's leaf is the *last* line, so which entries are
//! the conversation is known only at the end. The second pass (`Lines::entry`) parses exactly the
//! lines on the path, one at a time, as the events are made, so a read never holds the whole file
//! and the events at once.
//!
//! pi itself skips a line it cannot parse; this reader refuses it instead, naming the file, the
//! line and the field, because a skipped line is silently lost history. Blank lines are skipped
//! (pi skips them too and they hold nothing), and so is a BOM before the first line (pi trims
//! the text it reads, and JavaScript's `trim` takes a BOM). The last line must end with a
//! newline: pi always writes one, so a missing one is a torn write.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use handoff_sdk::marker::OwnershipMarker;
use handoff_sdk::serde_json;
use handoff_sdk::PluginError;

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

/// One entry line as the first pass keeps it.
#[derive(Debug)]
pub struct Slot {
    /// The 1-based line.
    pub line: usize,
    /// Where the line starts in the file, and its length without the newline.
    pub span: (u64, usize),
    /// Its id: the file's own (v2+), or `L<line>` for a v1 entry (pi assigns v1 entries random
    /// ids when it migrates them; these are stable instead). Boxed, as the other texts of a
    /// slot: a scan holds one slot per entry of the file, so each byte counts a million times.
    pub id: Box<str>,
    /// Its parent's id (`None` for a root).
    pub parent: Option<Box<str>>,
    /// A further `session` line: kept (pi keeps it) and ignored (pi ignores it).
    pub is_header: bool,
    /// What it is before compactions are looked at (`context::base_role`).
    pub role: Role,
    /// A compaction's first kept entry (v1: the entry its index names).
    pub first_kept: Option<Box<str>>,
    /// The model it names (a `model_change`, or an assistant message's provider and model), as
    /// its place in [`Scan::models`].
    pub model: Option<u32>,
}

/// A whole session file, scanned.
#[derive(Debug)]
pub struct Scan {
    /// The file.
    pub path: PathBuf,
    /// The header.
    pub header: Header,
    /// Every entry after the header, in file order.
    pub slots: Vec<Slot>,
    /// Each model the entries name (provider, model), once: what [`Slot::model`] points into.
    pub models: Vec<(String, String)>,
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

/// A malformed-line error.
pub fn malformed(
    path: &Path,
    line: usize,
    field: Option<&str>,
    message: impl Into<String>,
) -> PluginError {
    PluginError::malformed_line(path, line, field, message)
}

/// A JSON error of a line, with the field path the records put in it.
fn json_error(path: &Path, line: usize, error: &serde_json::Error) -> PluginError {
    let (field, message) = split_field(&error.to_string());
    malformed(path, line, field.as_deref(), message)
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
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let mut buffer = Vec::new();
    let mut number = 0;
    let mut offset = 0u64;
    loop {
        buffer.clear();
        let read = reader
            .read_until(b'\n', &mut buffer)
            .map_err(|e| PluginError::io(path, &e))?;
        if read == 0 {
            return Ok(());
        }
        number += 1;
        let mut start = offset;
        offset += read as u64;
        // pi trims the file's text before splitting it, and JavaScript's trim takes a BOM.
        if number == 1 && buffer.starts_with(BOM) {
            buffer.drain(..BOM.len());
            start += BOM.len() as u64;
        }
        if buffer.last() != Some(&b'\n') {
            return Err(malformed(
                path,
                number,
                None,
                "the last line does not end with a newline: a torn write (pi always ends a line)",
            ));
        }
        buffer.pop();
        let text = std::str::from_utf8(&buffer)
            .map_err(|e| malformed(path, number, None, format!("the line is not UTF-8: {e}")))?;
        if text.trim().is_empty() {
            continue;
        }
        if !each(number, start, text)? {
            return Ok(());
        }
    }
}

/// Interprets line `line` as the header.
fn header_of(path: &Path, line: usize, text: &str) -> Result<Header, PluginError> {
    let entry: Entry = serde_json::from_str(text).map_err(|e| json_error(path, line, &e))?;
    if entry.kind.as_deref() != Some("session") {
        return Err(malformed(
            path,
            line,
            Some("type"),
            format!(
                "the first line must be the session header (type \"session\"), not {:?}",
                entry.kind.as_deref().unwrap_or("(none)")
            ),
        ));
    }
    let id = entry
        .id
        .filter(|id| !id.is_empty())
        .ok_or_else(|| malformed(path, line, Some("id"), "the session header has no id"))?;
    let version = match &entry.version {
        None => 1,
        Some(v) => v
            .as_u64()
            .filter(|v| (1..=CURRENT_VERSION).contains(v))
            .ok_or_else(|| {
                malformed(
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
    header.ok_or_else(|| malformed(path, 1, None, "the file is empty: no session header"))
}

/// The first pass: the header, and every entry's place in the tree.
pub fn scan(path: &Path) -> Result<Scan, PluginError> {
    let mut header: Option<Header> = None;
    let mut slots: Vec<Slot> = Vec::new();
    let mut models: Vec<(String, String)> = Vec::new();
    each_line(path, |line, offset, text| {
        let Some(h) = &header else {
            header = Some(header_of(path, line, text)?);
            return Ok(true);
        };
        let envelope: Envelope<'_> =
            serde_json::from_str(text).map_err(|e| json_error(path, line, &e))?;
        let facts = Facts::of_envelope(&envelope);
        let model = facts.model.map(|named| model_index(&mut models, named));
        slots.push(slot(
            path,
            line,
            (offset, text.len()),
            (&facts, model),
            h.version,
            &slots,
        )?);
        Ok(true)
    })?;
    let header =
        header.ok_or_else(|| malformed(path, 1, None, "the file is empty: no session header"))?;
    slots.shrink_to_fit();
    Ok(Scan {
        path: path.to_owned(),
        header,
        slots,
        models,
    })
}

/// The place of `(provider, model)` in `models`, added if it is new. A session names few
/// models, mostly the one it named last: searched from the end.
fn model_index(models: &mut Vec<(String, String)>, (provider, model): (&str, &str)) -> u32 {
    let found = models
        .iter()
        .rposition(|(p, m)| p == provider && m == model);
    let at = found.unwrap_or_else(|| {
        models.push((provider.to_owned(), model.to_owned()));
        models.len() - 1
    });
    u32::try_from(at).expect("fewer than 2^32 models")
}

/// One line's slot. v1 entries get pi's migration: ids from line numbers, each the child of the
/// previous entry, and a compaction's `firstKeptEntryIndex` (an index among the parsed lines,
/// the header being 0) turned into that entry's id (none when it names the header or nothing).
fn slot(
    path: &Path,
    line: usize,
    span: (u64, usize),
    (facts, model): (&Facts<'_>, Option<u32>),
    version: u64,
    earlier: &[Slot],
) -> Result<Slot, PluginError> {
    let Some(kind) = facts.kind else {
        return Err(malformed(path, line, Some("type"), "the entry has no type"));
    };
    let is_header = kind == "session";
    let (id, parent, first_kept) = if version < 2 {
        let parent = earlier
            .iter()
            .rev()
            .find(|s| !s.is_header)
            .map(|s| s.id.clone());
        let first_kept = facts
            .first_kept_index
            .and_then(|k| usize::try_from(k).ok())
            .filter(|&k| k >= 1)
            .and_then(|k| earlier.get(k - 1))
            .filter(|s| !s.is_header)
            .map(|s| s.id.clone());
        (format!("L{line}").into(), parent, first_kept)
    } else {
        let id = match facts.id.filter(|i| !i.is_empty()) {
            Some(id) => id.into(),
            None if is_header => format!("L{line}").into(),
            None => return Err(malformed(path, line, Some("id"), "the entry has no id")),
        };
        let parent = facts.parent.filter(|p| !p.is_empty()).map(Box::from);
        (id, parent, facts.first_kept_id.map(Box::from))
    };
    Ok(Slot {
        line,
        span,
        id,
        parent,
        is_header,
        role: base_role(kind, facts, version),
        first_kept,
        model,
    })
}

/// An entry as the converter takes it: without `id` and `parentId` (the slot has them), and a
/// v1 compaction's index turned into the id it names (pi's migration).
fn tidy(entry: &mut Entry, slot: &Slot, version: u64) {
    entry.id = None;
    entry.parent_id = None;
    if version < 2 && entry.first_kept_entry_index.is_some() {
        entry.first_kept_entry_index = None;
        entry.first_kept_entry_id = slot.first_kept.as_deref().map(str::to_owned);
    }
}

/// The second pass: the entry of one slot, read and parsed on demand.
pub struct Lines {
    path: PathBuf,
    version: u64,
    reader: BufReader<File>,
    at: u64,
    buffer: Vec<u8>,
}

impl Lines {
    /// The file (of format `version`), opened again.
    pub fn open(path: &Path, version: u64) -> Result<Self, PluginError> {
        let file = File::open(path).map_err(|e| PluginError::io(path, &e))?;
        Ok(Lines {
            path: path.to_owned(),
            version,
            reader: BufReader::with_capacity(1 << 16, file),
            at: 0,
            buffer: Vec::new(),
        })
    }

    /// The whole entry of `slot` (moving forward through the file when the slots come in file
    /// order, as pi's paths do).
    pub fn entry(&mut self, slot: &Slot) -> Result<Entry, PluginError> {
        let (offset, len) = slot.span;
        let io = |e: std::io::Error| PluginError::io(&self.path, &e);
        if offset >= self.at {
            let skip = i64::try_from(offset - self.at)
                .map_err(std::io::Error::other)
                .map_err(io)?;
            self.reader.seek_relative(skip).map_err(io)?;
        } else {
            self.reader.seek(SeekFrom::Start(offset)).map_err(io)?;
        }
        self.buffer.clear();
        let read = (&mut self.reader)
            .take(len as u64)
            .read_to_end(&mut self.buffer)
            .map_err(io)?;
        if read != len {
            return Err(malformed(
                &self.path,
                slot.line,
                None,
                "the file changed while it was read",
            ));
        }
        self.at = offset + len as u64;
        let text = std::str::from_utf8(&self.buffer).map_err(|e| {
            malformed(
                &self.path,
                slot.line,
                None,
                format!("the line is not UTF-8: {e}"),
            )
        })?;
        let mut entry: Entry =
            serde_json::from_str(text).map_err(|e| json_error(&self.path, slot.line, &e))?;
        tidy(&mut entry, slot, self.version);
        Ok(entry)
    }
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
    header.ok_or_else(|| malformed(path, 1, None, "the file is empty: no session header"))
}
