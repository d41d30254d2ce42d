//! How the v5 ids tell of a file being written, in both directions of a binary call.
//!
//! A writer's `create_streamed` under `transcript.writer.v5` reports its file through the call's
//! `on_batch` (a write streams no events back, so v4 left it unused): a [`WriteReport`] per
//! [`handoff_store::tap::WriteTap`] call. A reader's `read_written_each` under
//! `transcript.reader.v5` asks for the file's growth through the call's `pull` (a read pulls no
//! events, so v4 left it unused): each pull waits and lends an encoded [`Growth`], past the
//! largest length lent before.

use std::path::Path;

use handoff_capability::Growth;

/// One report of a writer's file.
#[derive(Debug, PartialEq, Eq)]
pub enum WriteReport<'a> {
    /// [`handoff_store::tap::WriteTap::began`]: the temp file.
    Began(&'a Path),
    /// [`handoff_store::tap::WriteTap::written`]: its length.
    Written(u64),
    /// [`handoff_store::tap::WriteTap::ended`]: whole or not.
    Ended(bool),
}

const BEGAN: u8 = b'b';
const WRITTEN: u8 = b'w';
const ENDED: u8 = b'e';
const GROWN: u8 = b'g';
const WHOLE: u8 = b'W';
const ABANDONED: u8 = b'a';

impl WriteReport<'_> {
    /// The report's bytes: a kind byte, then the path's bytes, a little-endian length, or 0/1.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.clear();
        match self {
            WriteReport::Began(path) => {
                out.push(BEGAN);
                out.extend_from_slice(path_bytes(path));
            }
            WriteReport::Written(len) => {
                out.push(WRITTEN);
                out.extend_from_slice(&len.to_le_bytes());
            }
            WriteReport::Ended(whole) => out.extend_from_slice(&[ENDED, u8::from(*whole)]),
        }
    }

    /// The report in `bytes`, if they are one.
    pub fn decode(bytes: &[u8]) -> Option<WriteReport<'_>> {
        let (&kind, rest) = bytes.split_first()?;
        match kind {
            BEGAN => Some(WriteReport::Began(path_of(rest)?)),
            WRITTEN => Some(WriteReport::Written(u64::from_le_bytes(
                rest.try_into().ok()?,
            ))),
            ENDED => match rest {
                [whole @ (0 | 1)] => Some(WriteReport::Ended(*whole == 1)),
                _ => None,
            },
            _ => None,
        }
    }
}

/// A [`Growth`] as a pull lends it: a kind byte and a little-endian length.
pub fn encode_growth(growth: Growth) -> [u8; 9] {
    let (kind, len) = match growth {
        Growth::Grown(len) => (GROWN, len),
        Growth::Whole(len) => (WHOLE, len),
        Growth::Abandoned => (ABANDONED, 0),
    };
    let mut out = [kind; 9];
    out[1..].copy_from_slice(&len.to_le_bytes());
    out
}

/// The [`Growth`] a pull lent, if `bytes` are one.
pub fn decode_growth(bytes: &[u8]) -> Option<Growth> {
    let (&kind, len) = bytes.split_first()?;
    let len = u64::from_le_bytes(len.try_into().ok()?);
    match kind {
        GROWN => Some(Growth::Grown(len)),
        WHOLE => Some(Growth::Whole(len)),
        ABANDONED => Some(Growth::Abandoned),
        _ => None,
    }
}

#[cfg(unix)]
fn path_bytes(path: &Path) -> &[u8] {
    use std::os::unix::ffi::OsStrExt;
    path.as_os_str().as_bytes()
}

#[cfg(unix)]
fn path_of(bytes: &[u8]) -> Option<&Path> {
    use std::os::unix::ffi::OsStrExt;
    Some(Path::new(std::ffi::OsStr::from_bytes(bytes)))
}

#[cfg(not(unix))]
fn path_bytes(path: &Path) -> &[u8] {
    path.to_str().unwrap_or_default().as_bytes()
}

#[cfg(not(unix))]
fn path_of(bytes: &[u8]) -> Option<&Path> {
    std::str::from_utf8(bytes).ok().map(Path::new)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_and_growth_round_trip_and_garbage_is_refused() {
        let mut out = Vec::new();
        for report in [
            WriteReport::Began(Path::new("/r/.handoff-tmp-1-x")),
            WriteReport::Written(1 << 40),
            WriteReport::Ended(true),
            WriteReport::Ended(false),
        ] {
            report.encode(&mut out);
            assert_eq!(WriteReport::decode(&out), Some(report));
        }
        for growth in [Growth::Grown(7), Growth::Whole(1 << 33), Growth::Abandoned] {
            assert_eq!(decode_growth(&encode_growth(growth)), Some(growth));
        }
        assert_eq!(WriteReport::decode(b"w123"), None);
        assert_eq!(WriteReport::decode(b"e\x02"), None);
        assert_eq!(WriteReport::decode(b""), None);
        assert_eq!(decode_growth(b"g1"), None);
        assert_eq!(decode_growth(b"x12345678"), None);
    }
}
