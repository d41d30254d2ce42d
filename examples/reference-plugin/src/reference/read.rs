//! A session file → its header and transcript.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

use handoff_sdk::{Event, PluginError, Transcript};

use super::records::{Header, HEADER};

/// Reads a session file: the header, then one event per line. Any bad line is an error naming the
/// file, the line and (where serde knows it) the field; a torn last line is an error too.
pub(super) fn file(path: &Path) -> Result<(Header, Transcript), PluginError> {
    let file = File::open(path).map_err(|e| PluginError::io(path, &e))?;
    let torn = ends_torn(&file).map_err(|e| PluginError::io(path, &e))?;
    parse(path, BufReader::new(file), torn)
}

/// [`file`] of a session file's bytes, named `path` in errors.
pub(super) fn bytes(path: &Path, bytes: &[u8]) -> Result<(Header, Transcript), PluginError> {
    let torn = bytes.last().is_some_and(|&b| b != b'\n');
    parse(path, bytes, torn)
}

fn parse(
    path: &Path,
    input: impl BufRead,
    torn: bool,
) -> Result<(Header, Transcript), PluginError> {
    let bad = |line: usize, message: String| PluginError::malformed_line(path, line, None, message);
    let mut lines = input.split(b'\n').peekable();
    let mut header: Option<Header> = None;
    let mut events = Vec::new();
    let mut number = 0;
    while let Some(line) = lines.next() {
        number += 1;
        let line = line.map_err(|e| PluginError::io(path, &e))?;
        if torn && lines.peek().is_none() {
            return Err(bad(
                number,
                "the last line is torn (no final newline)".into(),
            ));
        }
        let text =
            std::str::from_utf8(&line).map_err(|e| bad(number, format!("not UTF-8: {e}")))?;
        if number == 1 {
            let h: Header = serde_json::from_str(text).map_err(|e| bad(number, e.to_string()))?;
            if h.kind != HEADER {
                return Err(bad(number, "the first line is not a header".into()));
            }
            header = Some(h);
        } else {
            events
                .push(serde_json::from_str::<Event>(text).map_err(|e| bad(number, e.to_string()))?);
        }
    }
    let header = header.ok_or_else(|| PluginError::Malformed {
        file: path.to_owned(),
        line: None,
        field: None,
        message: "the file is empty".into(),
    })?;
    let mut transcript = Transcript::new(events);
    transcript.cwd = header.cwd.clone();
    transcript.validate().map_err(|e| PluginError::Malformed {
        file: path.to_owned(),
        line: None,
        field: Some(e.field.clone()),
        message: e.to_string(),
    })?;
    Ok((header, transcript))
}

/// Whether a non-empty file lacks its final newline (a torn write).
fn ends_torn(mut file: &File) -> std::io::Result<bool> {
    use std::io::{Read, Seek, SeekFrom};
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(false);
    }
    file.seek(SeekFrom::Start(len - 1))?;
    let mut last = [0u8];
    file.read_exact(&mut last)?;
    file.seek(SeekFrom::Start(0))?;
    Ok(last[0] != b'\n')
}
