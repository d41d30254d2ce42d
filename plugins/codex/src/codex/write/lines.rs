//! The lines of a rollout, gathered in one large buffer and written in big writes.

use std::io::{self, Write};

use serde::Serialize;

use crate::codex::records::{EventTagOut, LineOut};

/// Whether JSON writes `text` as it is (no quote, backslash or control character in it).
fn needs_no_escape(text: &str) -> bool {
    text.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\')
}

/// Appends `text` as a JSON string, escaped exactly as serde_json escapes it (`\"`, `\\`, the
/// short escapes `\b \t \n \f \r`, other control characters as `\u00xx`; nothing else), but
/// scanning eight bytes at a time for the bytes that need it.
pub fn push_json_str(buf: &mut Vec<u8>, text: &str) {
    let bytes = text.as_bytes();
    buf.reserve(bytes.len() + 2);
    buf.push(b'"');
    // `bytes[start..i]` is the run not written yet.
    let mut start = 0;
    let mut i = 0;
    while i + 8 <= bytes.len() {
        let word = u64::from_le_bytes(bytes[i..i + 8].try_into().expect("eight bytes"));
        if needs_escape_in(word) {
            for _ in 0..8 {
                escape_at(buf, bytes, &mut start, i);
                i += 1;
            }
        } else {
            i += 8;
        }
    }
    while i < bytes.len() {
        escape_at(buf, bytes, &mut start, i);
        i += 1;
    }
    buf.extend_from_slice(&bytes[start..]);
    buf.push(b'"');
}

/// Writes the run before `bytes[i]` and its escape, if that byte needs one.
#[inline(always)]
fn escape_at(buf: &mut Vec<u8>, bytes: &[u8], start: &mut usize, i: usize) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let b = bytes[i];
    if b >= 0x20 && b != b'"' && b != b'\\' {
        return;
    }
    buf.extend_from_slice(&bytes[*start..i]);
    match b {
        b'"' => buf.extend_from_slice(b"\\\""),
        b'\\' => buf.extend_from_slice(b"\\\\"),
        b'\n' => buf.extend_from_slice(b"\\n"),
        b'\t' => buf.extend_from_slice(b"\\t"),
        b'\r' => buf.extend_from_slice(b"\\r"),
        0x08 => buf.extend_from_slice(b"\\b"),
        0x0c => buf.extend_from_slice(b"\\f"),
        _ => buf.extend_from_slice(&[
            b'\\',
            b'u',
            b'0',
            b'0',
            HEX[(b >> 4) as usize],
            HEX[(b & 0xf) as usize],
        ]),
    }
    *start = i + 1;
}

/// Whether any of the eight bytes of `word` is a control character, `"` or `\` (the classic
/// "has a zero byte / a byte below n" bit tricks; exact, since every test byte is below 0x80).
#[inline]
fn needs_escape_in(word: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let below_space = word.wrapping_sub(ONES * 0x20) & !word;
    let quote = word ^ (ONES * u64::from(b'"'));
    let backslash = word ^ (ONES * u64::from(b'\\'));
    let zero_in = |x: u64| x.wrapping_sub(ONES) & !x;
    (below_space | zero_in(quote) | zero_in(backslash)) & HIGH != 0
}

/// How many bytes of lines are gathered before they go to the file in one write.
const FLUSH_AT: usize = 1 << 20;

/// The lines being written: serialised into one large buffer (serde_json's many small writes
/// stay monomorphic and cheap) that goes to the file in writes of about [`FLUSH_AT`] bytes.
pub struct Lines<'o> {
    out: &'o mut dyn Write,
    buf: Vec<u8>,
    /// The next record's `ordinal`, in a rollout Codex rewrote for its paginated thread history:
    /// Codex 0.171 refuses to resume one whose last record has none ("final paginated rollout
    /// record … is missing an ordinal").
    ordinal: Option<u64>,
}

/// A record with its `ordinal`, as a paginated rollout's records are.
#[derive(Serialize)]
struct NumberedLineOut<'a, P> {
    timestamp: &'a str,
    ordinal: u64,
    #[serde(rename = "type")]
    kind: &'static str,
    payload: P,
}

impl<'o> Lines<'o> {
    /// Lines written to `out`; call [`Lines::finish`] at the end.
    pub fn new(out: &'o mut dyn Write) -> Self {
        Lines {
            out,
            buf: Vec::with_capacity(FLUSH_AT + (1 << 16)),
            ordinal: None,
        }
    }

    /// Lines that carry `ordinal`s from `next` on (appended to a paginated rollout).
    pub fn numbered_from(out: &'o mut dyn Write, next: u64) -> Self {
        let mut lines = Lines::new(out);
        lines.ordinal = Some(next);
        lines
    }

    /// Writes one record as one line.
    #[inline]
    pub fn line<P: Serialize>(
        &mut self,
        timestamp: &str,
        kind: &'static str,
        payload: P,
    ) -> io::Result<()> {
        if let Some(ordinal) = self.ordinal {
            self.ordinal = Some(ordinal + 1);
            let line = NumberedLineOut {
                timestamp,
                ordinal,
                kind,
                payload,
            };
            serde_json::to_writer(&mut self.buf, &line).map_err(io::Error::other)?;
        } else if needs_no_escape(timestamp) && needs_no_escape(kind) {
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

    /// Writes a `function_call_output` item (`custom_tool_call_output` when `custom`: the output
    /// of a freeform call) whose output is one text, as serialising
    /// `ItemOut::FunctionCallOutput` (`CustomToolCallOutput`) would, with the strings escaped by [`push_json_str`]: the tool
    /// output is most of a rollout's text, and serde_json escapes byte by byte.
    pub fn function_call_output_text(
        &mut self,
        timestamp: &str,
        call_id: &str,
        output: &str,
        tag: &EventTagOut<'_>,
        custom: bool,
    ) -> io::Result<()> {
        self.buf.extend_from_slice(b"{\"timestamp\":");
        push_json_str(&mut self.buf, timestamp);
        // A paginated rollout numbers every record, this one too (`NumberedLineOut`'s order).
        if let Some(ordinal) = self.ordinal {
            self.ordinal = Some(ordinal + 1);
            self.buf.extend_from_slice(b",\"ordinal\":");
            self.buf.extend_from_slice(ordinal.to_string().as_bytes());
        }
        self.buf.extend_from_slice(if custom {
            &b",\"type\":\"response_item\",\"payload\":{\"type\":\"custom_tool_call_output\",\"call_id\":"[..]
        } else {
            &b",\"type\":\"response_item\",\"payload\":{\"type\":\"function_call_output\",\"call_id\":"[..]
        });
        push_json_str(&mut self.buf, call_id);
        self.buf.extend_from_slice(b",\"output\":");
        push_json_str(&mut self.buf, output);
        self.buf.extend_from_slice(b",\"x-handoff-event\":");
        serde_json::to_writer(&mut self.buf, tag).map_err(io::Error::other)?;
        self.buf.extend_from_slice(b"}}\n");
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

    /// Every ASCII byte alone and inside longer text (so both the byte and the eight-byte scan
    /// meet it, at every offset), non-ASCII text, and pseudo-random mixes.
    #[test]
    fn strings_are_escaped_as_serde_escapes_them() {
        let mut cases: Vec<String> = vec![String::new(), "ü€😀 plain".into()];
        for b in 0u8..0x80 {
            let c = char::from(b);
            cases.push(c.to_string());
            for at in 0..17 {
                let mut s: String = "abcdefghijklmnopq".into();
                s.insert(at, c);
                s.push_str("rstuvwxyz0123456789");
                cases.push(s);
            }
        }
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..2_000 {
            let len = (seed % 40) as usize;
            let s: String = (0..len)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    [
                        'a', '"', '\\', '\n', '\u{1}', '\u{1f}', ' ', '\u{7f}', 'é', '😀',
                    ][(seed % 10) as usize]
                })
                .collect();
            cases.push(s);
        }
        for text in &cases {
            let mut ours = Vec::new();
            push_json_str(&mut ours, text);
            assert_eq!(
                String::from_utf8(ours).unwrap(),
                serde_json::to_string(text).unwrap()
            );
        }
    }

    #[test]
    fn a_text_tool_output_is_written_as_serde_writes_it() {
        let author = handoff_sdk::Author {
            kind: handoff_sdk::AuthorKind::Human,
            name: "Ann \"A\"".into(),
        };
        for (timestamp, call_id, output, is_error, custom) in [
            (
                "2026-11-30T00:41:53.963Z",
                "call_1",
                "line\n\tTab \"q\" ✓\u{2}",
                false,
                false,
            ),
            ("+10000-01-01T00:00:00.000Z", "c\"2", "", true, false),
            (
                "2026-11-30T00:41:53.963Z",
                "call_3",
                "Success.\n",
                false,
                true,
            ),
        ] {
            let tag = EventTagOut {
                id: "e\n3",
                author: Some(&author),
                origin: None,
                is_error,
                replaces_through: None,
                signature_model: None,
                redacted: false,
            };
            // Plain, and numbered as in a paginated rollout (the second record of one: an
            // ordinal on each, counted on).
            for numbered in [None, Some(41)] {
                let mut fast = Vec::new();
                let mut lines = lines_into(&mut fast, numbered);
                for _ in 0..2 {
                    lines
                        .function_call_output_text(timestamp, call_id, output, &tag, custom)
                        .unwrap();
                }
                lines.finish().unwrap();
                let mut want = Vec::new();
                let mut lines = lines_into(&mut want, numbered);
                for _ in 0..2 {
                    lines
                        .line(
                            timestamp,
                            "response_item",
                            serde_item(call_id, output, &tag, custom),
                        )
                        .unwrap();
                }
                lines.finish().unwrap();
                assert_eq!(
                    String::from_utf8(fast).unwrap(),
                    String::from_utf8(want).unwrap()
                );
            }
        }
    }

    fn lines_into(out: &mut Vec<u8>, numbered: Option<u64>) -> Lines<'_> {
        match numbered {
            None => Lines::new(out),
            Some(next) => Lines::numbered_from(out, next),
        }
    }

    /// The item [`Lines::function_call_output_text`] spells out, for serde to write.
    fn serde_item<'a>(
        call_id: &'a str,
        output: &'a str,
        tag: &EventTagOut<'a>,
        custom: bool,
    ) -> crate::codex::records::ItemOut<'a> {
        use crate::codex::records::{ItemOut, OutputOut};
        let (output, tag) = (OutputOut::Text(output), Some(EventTagOut { ..*tag }));
        if custom {
            ItemOut::CustomToolCallOutput {
                call_id,
                output,
                tag,
            }
        } else {
            ItemOut::FunctionCallOutput {
                call_id,
                output,
                tag,
            }
        }
    }

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
