//! The lines of a JSONL session, each lent where it lies in the read buffer: a reader parses a
//! line in place instead of copying it out first (a `BufReader`'s `read_until` copies every byte
//! of the file once more). Only the unfinished line at the buffer's end moves, to its front,
//! when more is read; a line longer than the buffer grows it.

use std::io::{self, Read};

/// `line` as text, if it is UTF-8: the check of a line that a reader then parses with
/// `serde_json::from_str` (which checks no string again), with SIMD where the CPU has it. `None`
/// says only that it is not: a reader then goes the way that names the fault.
pub fn text_of(line: &[u8]) -> Option<&str> {
    simdutf8::basic::from_utf8(line).ok()
}

/// Whether `line` holds a control character (below U+0020): in a JSONL line written compactly
/// there is none, since JSON escapes them in strings, so a reader that skips that check while
/// parsing a line's strings checks this once first. Written to be vectorised (a chunk's bytes
/// folded together, no early exit inside one).
pub fn has_control_byte(line: &[u8]) -> bool {
    let (chunks, rest) = line.as_chunks::<256>();
    let least = |bytes: &[u8]| bytes.iter().fold(u8::MAX, |least, &b| least.min(b));
    chunks.iter().any(|chunk| least(chunk) < 0x20) || least(rest) < 0x20
}

/// What the buffer starts at, and what it shrinks back to after a longer line.
const START: usize = 1 << 16;
/// A buffer grown past this for a long line is let go once that line is done.
const KEEP_AT_MOST: usize = 1 << 22;

/// The lines of `input`, one at a time ([`LineReader::next_line`]).
pub struct LineReader<R> {
    input: R,
    buf: Vec<u8>,
    /// The next line begins here; `buf[start..end]` is read and not handed out yet.
    start: usize,
    end: usize,
    /// Bytes after `start` known to hold no newline.
    searched: usize,
    eof: bool,
}

impl<R: Read> LineReader<R> {
    /// The lines of `input`, from its first byte.
    pub fn new(input: R) -> Self {
        LineReader {
            input,
            buf: vec![0; START],
            start: 0,
            end: 0,
            searched: 0,
            eof: false,
        }
    }

    /// The next line with its newline, or without one if it is the last and the input ends
    /// before one; `None` at the end of the input. The line is lent until the next call.
    pub fn next_line(&mut self) -> io::Result<Option<&[u8]>> {
        loop {
            let unread = &self.buf[self.start + self.searched..self.end];
            if let Some(i) = memchr::memchr(b'\n', unread) {
                let line = self.start..self.start + self.searched + i + 1;
                self.start = line.end;
                self.searched = 0;
                return Ok(Some(&self.buf[line]));
            }
            self.searched = self.end - self.start;
            if self.eof {
                if self.start == self.end {
                    return Ok(None);
                }
                let line = self.start..self.end;
                self.start = self.end;
                self.searched = 0;
                return Ok(Some(&self.buf[line]));
            }
            self.fill()?;
        }
    }

    /// Reads more after the unfinished line, moved to the buffer's front first; the buffer
    /// doubles when that line fills it, and shrinks back when a long line is done.
    fn fill(&mut self) -> io::Result<()> {
        let pending = self.end - self.start;
        if self.buf.len() > KEEP_AT_MOST && pending < START {
            let mut smaller = vec![0; START];
            smaller[..pending].copy_from_slice(&self.buf[self.start..self.end]);
            self.buf = smaller;
        } else if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
        }
        self.start = 0;
        self.end = pending;
        if self.end == self.buf.len() {
            self.buf.resize(self.buf.len() * 2, 0);
        }
        let n = loop {
            match self.input.read(&mut self.buf[self.end..]) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                read => break read?,
            }
        };
        self.end += n;
        self.eof = n == 0;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every byte value at every offset of lines of lengths around the 256-byte chunks: a control
    /// character is found wherever it is, and nothing else is taken for one.
    #[test]
    fn a_control_byte_is_found_wherever_it_is() {
        for len in [1, 2, 31, 64, 255, 256, 257, 600] {
            let plain = vec![b'a'; len];
            assert!(!has_control_byte(&plain));
            for at in 0..len {
                for byte in 0..=255u8 {
                    let mut line = plain.clone();
                    line[at] = byte;
                    assert_eq!(has_control_byte(&line), byte < 0x20, "{len} {at} {byte}");
                }
            }
        }
        assert!(!has_control_byte(b""));
    }

    #[test]
    fn text_of_takes_utf8_only() {
        assert_eq!(text_of("é {\"a\":1} 😀".as_bytes()), Some("é {\"a\":1} 😀"));
        assert_eq!(text_of(b""), Some(""));
        for bad in [&b"\xff"[..], b"a\xc3", b"\xed\xa0\x80", b"\xc0\xaf"] {
            assert_eq!(text_of(bad), None, "{bad:?}");
            assert!(std::str::from_utf8(bad).is_err());
        }
    }

    /// A reader that hands out its bytes in chunks of the sizes given, in turn.
    struct Chunked<'a> {
        bytes: &'a [u8],
        sizes: &'a [usize],
        next: usize,
    }

    impl Read for Chunked<'_> {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            let size = self.sizes[self.next % self.sizes.len()].max(1);
            self.next += 1;
            let n = size.min(out.len()).min(self.bytes.len());
            out[..n].copy_from_slice(&self.bytes[..n]);
            self.bytes = &self.bytes[n..];
            Ok(n)
        }
    }

    fn lines_of(bytes: &[u8], sizes: &[usize]) -> Vec<Vec<u8>> {
        let mut reader = LineReader::new(Chunked {
            bytes,
            sizes,
            next: 0,
        });
        let mut lines = Vec::new();
        while let Some(line) = reader.next_line().unwrap() {
            lines.push(line.to_vec());
        }
        lines
    }

    #[test]
    fn every_line_is_handed_out_whole_however_the_input_arrives() {
        let long = "x".repeat(3 * START + 17);
        let huge = "y".repeat(2 * KEEP_AT_MOST + 5);
        let texts = [
            String::new(),
            "\n".into(),
            "one".into(),
            "one\ntwo\n".into(),
            "one\n\n\nfour".into(),
            format!("a\n{long}\nb\n{long}"),
            format!("{huge}\nafter the huge line\n{long}\nend\n"),
        ];
        let chunkings: [&[usize]; 5] =
            [&[1], &[3, 1, 7], &[START - 1], &[START + 3, 5], &[1 << 24]];
        for text in &texts {
            let want: Vec<Vec<u8>> = text
                .as_bytes()
                .split_inclusive(|b| *b == b'\n')
                .map(<[u8]>::to_vec)
                .collect();
            for sizes in chunkings {
                let got = lines_of(text.as_bytes(), sizes);
                assert!(got == want, "{} bytes in chunks of {sizes:?}", text.len());
            }
        }
    }

    #[test]
    fn the_buffer_shrinks_back_after_a_huge_line() {
        let text = format!("{}\nshort\nshort again\n", "z".repeat(KEEP_AT_MOST + 1));
        let mut reader = LineReader::new(text.as_bytes());
        assert_eq!(reader.next_line().unwrap().unwrap().len(), KEEP_AT_MOST + 2);
        assert_eq!(reader.next_line().unwrap().unwrap(), b"short\n");
        assert_eq!(reader.next_line().unwrap().unwrap(), b"short again\n");
        assert!(reader.next_line().unwrap().is_none());
        assert!(reader.buf.len() <= START, "{}", reader.buf.len());
    }

    #[test]
    fn a_read_error_is_handed_on() {
        struct Failing;
        impl Read for Failing {
            fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
                Err(io::Error::other("disk gone"))
            }
        }
        let err = LineReader::new(Failing).next_line().unwrap_err();
        assert_eq!(err.to_string(), "disk gone");
    }
}
