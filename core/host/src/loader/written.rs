//! The host's ends of the v5 ids' calls about a file being written ([`handoff_abi::growth`]): a
//! plugin writer's reports go to the host's tap, and a plugin reader's pulls wait on the host's
//! [`WrittenFile`].

use handoff_abi::binary_call::{HostEnd, Pull};
use handoff_abi::growth::{encode_growth, WriteReport};
use handoff_capability::{Growth, WrittenFile};
use handoff_store::tap::WriteTap;

/// Hands each report of a plugin's writer to the host's tap.
pub(super) fn report(tap: &mut dyn WriteTap, bytes: &[u8]) {
    match WriteReport::decode(bytes) {
        Some(WriteReport::Began(temp)) => tap.began(temp),
        Some(WriteReport::Written(len)) => tap.written(len),
        Some(WriteReport::Ended(whole)) => tap.ended(whole),
        // Not a report: the file cannot be followed, so it is not the session's read.
        None => tap.ended(false),
    }
}

/// The host's end of a `read_written_each`: batches go to `events`; each pull waits for the file
/// to grow past the largest length lent before (a reader's [`handoff_capability::GrowingRead`]
/// asks past the length it was last lent, so this is never later than it asked for by more than
/// that).
pub(super) struct WrittenReadEnd<'e> {
    pub(super) events: &'e mut dyn HostEnd,
    pub(super) file: &'e dyn WrittenFile,
    pub(super) lent: u64,
    pub(super) growth: [u8; 9],
}

impl HostEnd for WrittenReadEnd<'_> {
    fn on_batch(&mut self, batch: &[u8]) -> bool {
        self.events.on_batch(batch)
    }

    fn next_batch(&mut self) -> Pull<'_> {
        let growth = self.file.wait_past(self.lent);
        if let Growth::Grown(len) | Growth::Whole(len) = growth {
            self.lent = self.lent.max(len);
        }
        self.growth = encode_growth(growth);
        Pull::Batch(&self.growth)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Path, PathBuf};

    #[derive(Default)]
    struct Recorded(Vec<String>);

    impl WriteTap for Recorded {
        fn began(&mut self, temp: &Path) {
            self.0.push(format!("began {}", temp.display()));
        }
        fn written(&mut self, len: u64) {
            self.0.push(format!("written {len}"));
        }
        fn ended(&mut self, whole: bool) {
            self.0.push(format!("ended {whole}"));
        }
    }

    #[test]
    fn reports_reach_the_tap_and_garbage_ends_the_watch_unwhole() {
        let mut tap = Recorded::default();
        let mut bytes = Vec::new();
        for r in [
            WriteReport::Began(Path::new("/x/t")),
            WriteReport::Written(9),
            WriteReport::Ended(true),
        ] {
            r.encode(&mut bytes);
            report(&mut tap, &bytes);
        }
        report(&mut tap, b"junk");
        assert_eq!(
            tap.0,
            ["began /x/t", "written 9", "ended true", "ended false"]
        );
    }

    struct Steps(std::sync::Mutex<Vec<(u64, Growth)>>, PathBuf);

    impl WrittenFile for Steps {
        fn open(&self) -> std::io::Result<std::fs::File> {
            Err(std::io::Error::other("not opened here"))
        }
        fn name(&self) -> &Path {
            &self.1
        }
        fn wait_past(&self, len: u64) -> Growth {
            let (asked, growth) = self.0.lock().unwrap().remove(0);
            assert_eq!(len, asked, "asked past the largest length lent");
            growth
        }
    }

    struct NoEvents;

    impl HostEnd for NoEvents {
        fn on_batch(&mut self, _: &[u8]) -> bool {
            true
        }
        fn next_batch(&mut self) -> Pull<'_> {
            Pull::End
        }
    }

    #[test]
    fn pulls_lend_the_growth_past_what_was_lent() {
        let file = Steps(
            std::sync::Mutex::new(vec![
                (0, Growth::Grown(10)),
                (10, Growth::Grown(25)),
                (25, Growth::Whole(30)),
            ]),
            PathBuf::from("t"),
        );
        let mut events = NoEvents;
        let mut end = WrittenReadEnd {
            events: &mut events,
            file: &file,
            lent: 0,
            growth: [0; 9],
        };
        for expected in [Growth::Grown(10), Growth::Grown(25), Growth::Whole(30)] {
            let Pull::Batch(bytes) = end.next_batch() else {
                panic!("a growth is lent as a batch")
            };
            assert_eq!(handoff_abi::growth::decode_growth(bytes), Some(expected));
        }
    }
}
