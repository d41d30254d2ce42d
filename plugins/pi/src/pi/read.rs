//! A session file → its header and entries (nothing interpreted yet).
//!
//! pi itself skips a line it cannot parse; this reader refuses it instead, naming the file, the
//! line and the field, because a skipped line is silently lost history. Blank lines are skipped
//! (pi skips them too and they hold nothing). The last line must end with a newline: pi always
//! writes one, so a missing one is a torn write.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use handoff_sdk::marker::OwnershipMarker;
use handoff_sdk::serde_json;
use handoff_sdk::PluginError;

use super::records::{split_field, Entry};

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

/// One entry line.
#[derive(Debug)]
pub struct Node {
    /// The 1-based line it is on.
    pub line: usize,
    /// Its id: the file's own (v2+), or `L<line>` for a v1 entry (pi assigns v1 entries random ids
    /// when it migrates them; these are stable instead).
    pub id: String,
    /// Its parent's id (`None` for a root).
    pub parent: Option<String>,
    /// The entry.
    pub entry: Entry,
}

impl Node {
    /// The entry type.
    pub fn kind(&self) -> &str {
        self.entry.kind.as_deref().unwrap_or_default()
    }
}

/// A whole session file.
#[derive(Debug)]
pub struct Parsed {
    /// The file.
    pub path: PathBuf,
    /// The header.
    pub header: Header,
    /// Every entry after the header, in file order (a further `session` line is kept, as pi
    /// keeps it, and ignored like pi ignores it).
    pub nodes: Vec<Node>,
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

/// Reads the lines of `path` one at a time, handing each non-blank one (with its 1-based number)
/// to `each` until it returns `false`.
fn each_line(
    path: &Path,
    mut each: impl FnMut(usize, &str) -> Result<bool, PluginError>,
) -> Result<(), PluginError> {
    let file = File::open(path).map_err(|e| PluginError::io(path, &e))?;
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let mut buffer = Vec::new();
    let mut number = 0;
    loop {
        buffer.clear();
        let read = reader
            .read_until(b'\n', &mut buffer)
            .map_err(|e| PluginError::io(path, &e))?;
        if read == 0 {
            return Ok(());
        }
        number += 1;
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
        if !each(number, text)? {
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
    each_line(path, |line, text| {
        header = Some(header_of(path, line, text)?);
        Ok(false)
    })?;
    header.ok_or_else(|| malformed(path, 1, None, "the file is empty: no session header"))
}

/// Parses the whole file.
pub fn parse_file(path: &Path) -> Result<Parsed, PluginError> {
    let mut header: Option<Header> = None;
    let mut nodes: Vec<Node> = Vec::new();
    each_line(path, |line, text| {
        let Some(h) = &header else {
            header = Some(header_of(path, line, text)?);
            return Ok(true);
        };
        let entry: Entry = serde_json::from_str(text).map_err(|e| json_error(path, line, &e))?;
        if entry.kind.is_none() {
            return Err(malformed(path, line, Some("type"), "the entry has no type"));
        }
        let node = if h.version < 2 {
            v1_node(line, entry, &nodes)
        } else {
            let mut entry = entry;
            let id = entry.id.take().filter(|id| !id.is_empty());
            let is_header = entry.kind.as_deref() == Some("session");
            let id = match id {
                Some(id) => id,
                None if is_header => format!("L{line}"),
                None => return Err(malformed(path, line, Some("id"), "the entry has no id")),
            };
            let parent = entry.parent_id.take().flatten().filter(|p| !p.is_empty());
            Node {
                line,
                id,
                parent,
                entry,
            }
        };
        nodes.push(node);
        Ok(true)
    })?;
    let header =
        header.ok_or_else(|| malformed(path, 1, None, "the file is empty: no session header"))?;
    if header.version < 2 {
        resolve_v1_compactions(&mut nodes);
    }
    Ok(Parsed {
        path: path.to_owned(),
        header,
        nodes,
    })
}

/// A v1 entry: linear (each entry's parent is the previous one), ids from line numbers; what
/// pi's migration to v2 does, with stable ids instead of random ones.
fn v1_node(line: usize, mut entry: Entry, nodes: &[Node]) -> Node {
    entry.id = None;
    entry.parent_id = None;
    let parent = nodes
        .iter()
        .rev()
        .find(|n| n.kind() != "session")
        .map(|n| n.id.clone());
    Node {
        line,
        id: format!("L{line}"),
        parent,
        entry,
    }
}

/// v1 compactions name the first kept entry by its index among the parsed lines (the header is
/// index 0); pi's migration turns it into that entry's id, or drops it when it names the header
/// or nothing.
fn resolve_v1_compactions(nodes: &mut [Node]) {
    for i in 0..nodes.len() {
        if nodes[i].kind() != "compaction" {
            continue;
        }
        let Some(index) = nodes[i].entry.first_kept_entry_index.take() else {
            continue;
        };
        let target = index
            .as_u64()
            .and_then(|k| usize::try_from(k).ok())
            .filter(|&k| k >= 1)
            .and_then(|k| nodes.get(k - 1))
            .filter(|n| n.kind() != "session")
            .map(|n| n.id.clone());
        nodes[i].entry.first_kept_entry_id = target;
    }
}
