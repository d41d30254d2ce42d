//! The lines of a rollout, gathered in one large buffer and written in big writes.

use std::io::{self, Write};
use std::ops::Range;

use handoff_sdk::Part;
use serde::Serialize;

use crate::codex::records::EventTagOut;

/// A tool output as [`Lines::tool_output`] writes it: one text, or content items.
pub enum ToolOutput<'a> {
    Text(&'a str),
    Parts(&'a [Part]),
}

/// Appends `text` as a JSON string, escaped exactly as serde_json escapes it (`\"`, `\\`, the
/// short escapes `\b \t \n \f \r`, other control characters as `\u00xx`; nothing else), but
/// scanning eight bytes at a time for the bytes that need it.
pub fn push_json_str(buf: &mut Vec<u8>, text: &str) {
    buf.reserve(text.len() + 2);
    buf.push(b'"');
    push_json_str_contents(buf, text);
    buf.push(b'"');
}

/// [`push_json_str`] without the quotes.
fn push_json_str_contents(buf: &mut Vec<u8>, text: &str) {
    let bytes = text.as_bytes();
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
        self.begin(timestamp, kind);
        serde_json::to_writer(&mut self.buf, &payload).map_err(io::Error::other)?;
        self.end()
    }

    /// Writes a `function_call_output` item (`custom_tool_call_output` when `custom`: the output
    /// of a freeform call), as serialising `ItemOut::FunctionCallOutput` (`CustomToolCallOutput`)
    /// would. Spelled out, for the strings to be escaped by [`push_json_str`] (the tool output
    /// is most of a rollout's text, and serde_json escapes byte by byte) and the images encoded
    /// straight into the line (see [`Lines::user_message`]).
    pub fn tool_output(
        &mut self,
        timestamp: &str,
        call_id: &str,
        output: ToolOutput<'_>,
        tag: &EventTagOut<'_>,
        custom: bool,
    ) -> io::Result<()> {
        self.begin(timestamp, "response_item");
        self.buf.extend_from_slice(if custom {
            &b"{\"type\":\"custom_tool_call_output\",\"call_id\":"[..]
        } else {
            &b"{\"type\":\"function_call_output\",\"call_id\":"[..]
        });
        push_json_str(&mut self.buf, call_id);
        self.buf.extend_from_slice(b",\"output\":");
        match output {
            ToolOutput::Text(text) => push_json_str(&mut self.buf, text),
            ToolOutput::Parts(parts) => {
                self.content_items(parts, &mut Vec::new());
            }
        }
        self.tag(tag)?;
        self.end()
    }

    /// A user event's two lines: its `response_item` message, then the `event_msg` copy the UI
    /// draws (`user_message`: `message` its texts joined, `images` its images again), as
    /// serialising `ItemOut::Message` and `EventMsgOut::UserMessage` would. Spelled out so that
    /// an image's data URL is encoded once, straight into the first line, and copied into the
    /// second: serialised, the URL was made apart and then checked as JSON, a scan of every
    /// byte of every image.
    pub fn user_message(
        &mut self,
        timestamp: &str,
        content: &[Part],
        tag: &EventTagOut<'_>,
        message: &str,
    ) -> io::Result<()> {
        self.begin(timestamp, "response_item");
        self.buf
            .extend_from_slice(b"{\"type\":\"message\",\"role\":\"user\",\"content\":");
        let mut images = Vec::new();
        self.content_items(content, &mut images);
        self.tag(tag)?;
        self.buf.extend_from_slice(b"}\n");
        self.begin(timestamp, "event_msg");
        self.buf
            .extend_from_slice(b"{\"type\":\"user_message\",\"message\":");
        push_json_str(&mut self.buf, message);
        self.buf.extend_from_slice(b",\"images\":[");
        for (i, image) in images.into_iter().enumerate() {
            if i > 0 {
                self.buf.push(b',');
            }
            self.buf.extend_from_within(image);
        }
        self.buf
            .extend_from_slice(b"],\"local_images\":[],\"text_elements\":[]}");
        self.end()
    }

    /// `{"timestamp":…,"type":…,"payload":`, with the `ordinal` after the timestamp in a paginated
    /// rollout: what serialising the envelope writes before its payload.
    fn begin(&mut self, timestamp: &str, kind: &str) {
        self.buf.extend_from_slice(b"{\"timestamp\":");
        push_json_str(&mut self.buf, timestamp);
        if let Some(ordinal) = self.ordinal {
            self.ordinal = Some(ordinal + 1);
            self.buf.extend_from_slice(b",\"ordinal\":");
            self.buf.extend_from_slice(ordinal.to_string().as_bytes());
        }
        self.buf.extend_from_slice(b",\"type\":");
        push_json_str(&mut self.buf, kind);
        self.buf.extend_from_slice(b",\"payload\":");
    }

    /// Closes the envelope [`Lines::begin`] opened, ends the line, and writes the buffer out
    /// once it is full.
    fn end(&mut self) -> io::Result<()> {
        self.buf.extend_from_slice(b"}\n");
        if self.buf.len() >= FLUSH_AT {
            self.out.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }

    /// `,"x-handoff-event":{…}}`: an item's tag, and the end of the item.
    fn tag(&mut self, tag: &EventTagOut<'_>) -> io::Result<()> {
        self.buf.extend_from_slice(b",\"x-handoff-event\":");
        serde_json::to_writer(&mut self.buf, tag).map_err(io::Error::other)?;
        self.buf.push(b'}');
        Ok(())
    }

    /// A content item list (`input_text` and `input_image` items) as serialising `ContentOut`s
    /// writes it; where each image's URL (the JSON string) is in the buffer goes to `images`.
    fn content_items(&mut self, parts: &[Part], images: &mut Vec<Range<usize>>) {
        self.buf.push(b'[');
        for (i, part) in parts.iter().enumerate() {
            if i > 0 {
                self.buf.push(b',');
            }
            match part {
                Part::Text { text } => {
                    self.buf
                        .extend_from_slice(b"{\"type\":\"input_text\",\"text\":");
                    push_json_str(&mut self.buf, text);
                }
                Part::Image { media_type, data } => {
                    self.buf
                        .extend_from_slice(b"{\"type\":\"input_image\",\"image_url\":");
                    let start = self.buf.len();
                    self.buf.extend_from_slice(b"\"data:");
                    push_json_str_contents(&mut self.buf, media_type);
                    self.buf.extend_from_slice(b";base64,");
                    handoff_sdk::base64::encode_into_bytes(data, &mut self.buf);
                    self.buf.push(b'"');
                    images.push(start..self.buf.len());
                }
                Part::ImageUrl { url } => {
                    self.buf
                        .extend_from_slice(b"{\"type\":\"input_image\",\"image_url\":");
                    let start = self.buf.len();
                    push_json_str(&mut self.buf, url);
                    images.push(start..self.buf.len());
                }
            }
            self.buf.push(b'}');
        }
        self.buf.push(b']');
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
    use crate::codex::records::{EventMsgOut, ImageUrlOut};
    use crate::codex::write::items::content_item;

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

    /// The envelope as serde writes it: `{"timestamp":…,"type":…,"payload":…}`, with the
    /// `ordinal` after the timestamp in a paginated rollout.
    #[derive(Serialize)]
    struct LineOut<'a, P> {
        timestamp: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        ordinal: Option<u64>,
        #[serde(rename = "type")]
        kind: &'static str,
        payload: P,
    }

    /// `event_msg` `user_message` as serde writes it.
    #[derive(Serialize)]
    #[serde(tag = "type", rename = "user_message")]
    struct UserMessageOut<'a> {
        message: &'a str,
        images: Vec<ImageUrlOut<'a>>,
        local_images: [(); 0],
        text_elements: [(); 0],
    }

    /// `payloads` as serde writes them, each in its envelope, from the ordinal `numbered` on.
    fn serialised<P: Serialize>(
        timestamp: &str,
        numbered: Option<u64>,
        payloads: &[(&'static str, P)],
    ) -> String {
        let mut out = String::new();
        for (i, (kind, payload)) in payloads.iter().enumerate() {
            let line = LineOut {
                timestamp,
                ordinal: numbered.map(|first| first + i as u64),
                kind,
                payload,
            };
            out.push_str(&serde_json::to_string(&line).unwrap());
            out.push('\n');
        }
        out
    }

    /// What `write` writes through [`Lines`] (plain, or numbered from `numbered`).
    fn spelled(numbered: Option<u64>, write: impl FnOnce(&mut Lines<'_>)) -> String {
        let mut out = Vec::new();
        let mut lines = match numbered {
            None => Lines::new(&mut out),
            Some(next) => Lines::numbered_from(&mut out, next),
        };
        write(&mut lines);
        lines.finish().unwrap();
        String::from_utf8(out).unwrap()
    }

    const TIMESTAMPS: [&str; 3] = [
        "2026-11-30T00:41:53.963Z",
        "+10000-01-01T00:00:00.000Z",
        "needs \"escaping\"\n",
    ];

    fn author() -> handoff_sdk::Author {
        handoff_sdk::Author {
            kind: handoff_sdk::AuthorKind::Human,
            name: "Ann \"A\"".into(),
        }
    }

    fn tag_of<'a>(id: &'a str, author: &'a handoff_sdk::Author, is_error: bool) -> EventTagOut<'a> {
        EventTagOut {
            id,
            author: Some(author),
            origin: None,
            is_error,
            replaces_through: None,
            signature_model: None,
            redacted: false,
        }
    }

    /// Content of every kind: none, texts that need escapes, images of every length modulo 3
    /// (a media type that must be escaped among them), URLs.
    fn contents() -> Vec<Vec<Part>> {
        let image = |media_type: &str, len: usize| Part::Image {
            media_type: media_type.into(),
            data: (0..len).map(|i| (i * 37 % 256) as u8).collect(),
        };
        vec![
            vec![],
            vec![Part::text("line\n\tTab \"q\" ✓\u{2}")],
            vec![
                Part::text("look"),
                image("image/png", 1000),
                Part::text("and"),
            ],
            vec![image("image/\"odd\"\u{7f}\n/é", 5), image("image/jpeg", 0)],
            vec![
                Part::ImageUrl {
                    url: "https://example.com/a \"b\".png".into(),
                },
                image("image/webp", 2),
                Part::text(""),
            ],
        ]
    }

    #[test]
    fn a_tool_output_is_written_as_serde_writes_it() {
        use crate::codex::records::OutputOut;
        let author = author();
        let mut outputs: Vec<Vec<Part>> = contents();
        outputs.push(vec![Part::text("Success.\n")]);
        for numbered in [None, Some(41)] {
            for (i, parts) in outputs.iter().enumerate() {
                let (timestamp, custom) = (TIMESTAMPS[i % 3], i % 2 == 1);
                let tag = tag_of("e\n3", &author, i % 3 == 0);
                let output = match parts.as_slice() {
                    [Part::Text { text }] => ToolOutput::Text(text),
                    parts => ToolOutput::Parts(parts),
                };
                let ours = spelled(numbered, |lines| {
                    lines
                        .tool_output(timestamp, "c\"2", output, &tag, custom)
                        .unwrap()
                });
                let output = match parts.as_slice() {
                    [Part::Text { text }] => OutputOut::Text(text),
                    parts => {
                        OutputOut::Items(parts.iter().map(|p| content_item(p).unwrap()).collect())
                    }
                };
                let tag = Some(tag_of("e\n3", &author, i % 3 == 0));
                let item = crate::codex::write::output_item(custom, "c\"2", output, tag);
                assert_eq!(
                    ours,
                    serialised(timestamp, numbered, &[("response_item", item)])
                );
            }
        }
    }

    #[test]
    fn a_user_message_and_its_copy_are_written_as_serde_writes_them() {
        use crate::codex::records::{ContentOut, ItemOut};
        let author = author();
        for numbered in [None, Some(7)] {
            for (i, content) in contents().iter().enumerate() {
                let timestamp = TIMESTAMPS[i % 3];
                let message = format!("typed {i} \"quoted\"\n");
                let ours = spelled(numbered, |lines| {
                    lines
                        .user_message(
                            timestamp,
                            content,
                            &tag_of("u\"1", &author, false),
                            &message,
                        )
                        .unwrap()
                });
                let items: Vec<ContentOut<'_>> =
                    content.iter().map(|p| content_item(p).unwrap()).collect();
                let images = content
                    .iter()
                    .filter_map(|p| match content_item(p).unwrap() {
                        ContentOut::InputImage { image_url } => Some(image_url),
                        _ => None,
                    })
                    .collect();
                let message_line = serialised(
                    timestamp,
                    numbered,
                    &[(
                        "response_item",
                        ItemOut::Message {
                            role: "user",
                            content: items,
                            tag: Some(tag_of("u\"1", &author, false)),
                        },
                    )],
                );
                let copy_line = serialised(
                    timestamp,
                    numbered.map(|n| n + 1),
                    &[(
                        "event_msg",
                        UserMessageOut {
                            message: &message,
                            images,
                            local_images: [],
                            text_elements: [],
                        },
                    )],
                );
                assert_eq!(ours, message_line + &copy_line);
            }
        }
    }

    #[test]
    fn the_spelled_out_envelope_is_what_serde_writes() {
        let payload = EventMsgOut::AgentMessage {
            message: Cow::Borrowed("a \"quoted\"\n\u{1} ✓"),
        };
        for numbered in [None, Some(0), Some(u64::MAX - 2)] {
            for timestamp in TIMESTAMPS {
                let ours = spelled(numbered, |lines| {
                    for _ in 0..2 {
                        lines.line(timestamp, "event_msg", &payload).unwrap();
                    }
                });
                let want = serialised(
                    timestamp,
                    numbered,
                    &[("event_msg", &payload), ("event_msg", &payload)],
                );
                assert_eq!(ours, want);
            }
        }
    }
}
