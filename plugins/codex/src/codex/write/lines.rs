//! The lines of a rollout, gathered in one large buffer and written in big writes.

use std::io::{self, Write};

use serde::Serialize;

use crate::codex::records::LineOut;

/// Whether JSON writes `text` as it is (no quote, backslash or control character in it).
fn needs_no_escape(text: &str) -> bool {
    text.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\')
}

/// How many bytes of lines are gathered before they go to the file in one write.
const FLUSH_AT: usize = 1 << 20;

/// The lines being written: serialised into one large buffer (serde_json's many small writes
/// stay monomorphic and cheap) that goes to the file in writes of about [`FLUSH_AT`] bytes.
pub struct Lines<'o> {
    out: &'o mut dyn Write,
    buf: Vec<u8>,
}

impl<'o> Lines<'o> {
    /// Lines written to `out`; call [`Lines::finish`] at the end.
    pub fn new(out: &'o mut dyn Write) -> Self {
        Lines {
            out,
            buf: Vec::with_capacity(FLUSH_AT + (1 << 16)),
        }
    }

    /// Writes one record as one line.
    #[inline]
    pub fn line<P: Serialize>(
        &mut self,
        timestamp: &str,
        kind: &'static str,
        payload: P,
    ) -> io::Result<()> {
        if needs_no_escape(timestamp) && needs_no_escape(kind) {
            // What serialising a `LineOut` writes, with the envelope's fixed keys spelled out:
            // every line has one, so this saves three key and two value escapes per line.
            self.buf.extend_from_slice(b"{\"timestamp\":\"");
            self.buf.extend_from_slice(timestamp.as_bytes());
            self.buf.extend_from_slice(b"\",\"type\":\"");
            self.buf.extend_from_slice(kind.as_bytes());
            self.buf.extend_from_slice(b"\",\"payload\":");
            serde_json::to_writer(&mut self.buf, &payload).map_err(io::Error::other)?;
            self.buf.push(b'}');
        } else {
            let line = LineOut {
                timestamp,
                kind,
                payload,
            };
            serde_json::to_writer(&mut self.buf, &line).map_err(io::Error::other)?;
        }
        self.buf.push(b'\n');
        if self.buf.len() >= FLUSH_AT {
            self.out.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }

    /// Writes what is left.
    pub fn finish(self) -> io::Result<()> {
        self.out.write_all(&self.buf)
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::*;
    use crate::codex::records::EventMsgOut;

    #[test]
    fn the_spelled_out_envelope_is_what_serde_writes() {
        let payload = EventMsgOut::AgentMessage {
            message: Cow::Borrowed("a \"quoted\"\n\u{1} ✓"),
        };
        for (timestamp, kind) in [
            ("2026-11-30T00:41:53.963Z", "event_msg"),
            ("+10000-01-01T00:00:00.000Z", "event_msg"),
            ("needs \"escaping\"\n", "event_msg"),
        ] {
            let mut out = Vec::new();
            let mut lines = Lines::new(&mut out);
            lines.line(timestamp, kind, &payload).unwrap();
            lines.finish().unwrap();
            let mut want = serde_json::to_vec(&LineOut {
                timestamp,
                kind,
                payload: &payload,
            })
            .unwrap();
            want.push(b'\n');
            assert_eq!(
                String::from_utf8(out).unwrap(),
                String::from_utf8(want).unwrap()
            );
        }
    }
}
