use std::path::Path;

use handoff_host::{ById, ReadFrom, Transcript};

use crate::corpus;

use super::copies::copy_with_new_id;
use super::{Ctx, Outcome};

type Corruption = (&'static str, fn(Vec<u8>) -> Vec<u8>);

const CORRUPTIONS: [Corruption; 6] = [
    ("truncated last line", truncate_last_line),
    ("malformed line", insert_malformed_line),
    ("invalid UTF-8", insert_invalid_utf8),
    ("a 4 MiB line", insert_huge_line),
    ("deep nesting", insert_deep_nesting),
    ("empty file", |_| Vec::new()),
];

/// Truncated, malformed, invalid UTF-8, a 4 MiB line, deep nesting, empty: an error that names the
/// file, never a panic and never a silently shorter transcript.
pub(crate) fn check(ctx: &Ctx<'_>) -> Outcome {
    let transcript = &corpus::entry("parallel-tool-calls")
        .expect("in corpus")
        .transcript;
    let transcript = if ctx.carries(transcript) {
        transcript
    } else {
        &corpus::entry("plain-chat").expect("in corpus").transcript
    };
    let session = ctx.create("session to corrupt", transcript)?;
    let mut evidence = Vec::new();
    let mut failures = Vec::new();
    for (what, corrupt) in CORRUPTIONS {
        let copy = copy_with_new_id(&session, corrupt).map_err(|e| vec![e])?;
        let by_path = ctx
            .plugin
            .reader()
            .read(ReadFrom::File(ctx.name(), &copy.path));
        judge(
            what,
            "read_path",
            &copy.path,
            by_path,
            &mut evidence,
            &mut failures,
        );
        let by_id = ctx.plugin.read_id(ctx.root(), ctx.name(), &copy.id);
        if let Ok(t) = by_id {
            failures.push(format!(
                "{what}: read by id returned a transcript of {} events instead of an error",
                t.events.len()
            ));
        }
        let _ = std::fs::remove_file(&copy.path);
    }
    if failures.is_empty() {
        Ok(evidence)
    } else {
        Err(failures)
    }
}

fn judge(
    what: &str,
    how: &str,
    path: &Path,
    outcome: Result<Transcript, handoff_host::PluginError>,
    evidence: &mut Vec<String>,
    failures: &mut Vec<String>,
) {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    match outcome {
        Ok(t) => failures.push(format!(
            "{what}: {how} returned a transcript of {} events instead of an error",
            t.events.len()
        )),
        Err(e) => {
            let mut message = e.to_string();
            if message.len() > 300 {
                let mut cut = 300;
                while !message.is_char_boundary(cut) {
                    cut -= 1;
                }
                message.truncate(cut);
            }
            if message.contains(name) {
                evidence.push(format!("{what}: {message}"));
            } else {
                failures.push(format!(
                    "{what}: the error does not name the file {name}: {message}"
                ));
            }
        }
    }
}

/// Cuts the last line in half and drops its newline: what a crash mid-write leaves.
fn truncate_last_line(mut bytes: Vec<u8>) -> Vec<u8> {
    while bytes.last() == Some(&b'\n') {
        bytes.pop();
    }
    let start = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let keep = start + (bytes.len() - start) / 2;
    bytes.truncate(keep.max(1));
    bytes
}

/// Inserts `line` after the first line.
fn insert_after_first_line(bytes: Vec<u8>, line: &[u8]) -> Vec<u8> {
    let at = bytes.iter().position(|&b| b == b'\n').map_or(0, |i| i + 1);
    let mut out = Vec::with_capacity(bytes.len() + line.len() + 1);
    out.extend_from_slice(&bytes[..at]);
    out.extend_from_slice(line);
    out.push(b'\n');
    out.extend_from_slice(&bytes[at..]);
    out
}

fn insert_malformed_line(bytes: Vec<u8>) -> Vec<u8> {
    insert_after_first_line(
        bytes,
        br#"{"type": "user", "message": {"role": "user", "content": "#,
    )
}

/// Puts bytes that are not UTF-8 inside a JSON string in the middle of the file.
fn insert_invalid_utf8(mut bytes: Vec<u8>) -> Vec<u8> {
    let middle = bytes.len() / 2;
    let at = bytes[middle..]
        .iter()
        .position(|&b| b == b'"')
        .map_or(bytes.len() / 2, |i| middle + i + 1);
    bytes.splice(at..at, [0xff, 0xfe, 0xc3]);
    bytes
}

/// The length of the huge line: longer than any buffer a reader keeps (the built-ins read through
/// 64 KiB buffers and keep a line buffer of up to 1 MiB; the corpus already has a 1 MB line), so a
/// reader that cuts a line at its buffer's end, or gives up on it silently, shows. Larger proves
/// nothing more and costs disk I/O on every first run.
const HUGE_LINE: usize = 4 << 20;

/// An unterminated string `HUGE_LINE` bytes long, after the first line.
fn insert_huge_line(bytes: Vec<u8>) -> Vec<u8> {
    let mut line = Vec::with_capacity(HUGE_LINE);
    line.extend_from_slice(br#"{"type":"user","text":""#);
    line.resize(HUGE_LINE, b'a');
    insert_after_first_line(bytes, &line)
}

fn insert_deep_nesting(bytes: Vec<u8>) -> Vec<u8> {
    let depth = 100_000;
    let mut line = vec![b'['; depth];
    line.extend(std::iter::repeat_n(b']', depth));
    insert_after_first_line(bytes, &line)
}
